//! What the pass keeps of a page ([`Page`]): a record per element ([`Node`], its [`flag`]
//! bits), the event log ([`Event`]) and the head metadata; and the recycling of a read
//! page's buffers for the next page on the same thread ([`recycle`]).

use std::cell::RefCell;

use super::{Tag, MAX_NODES};

/// "No index" in the `u32` links between records.
pub const NONE: u32 = u32::MAX;

/// Bits of [`Node::flags`].
pub mod flag {
    /// Its content is never body text (script, style, hidden, ...), itself or by an ancestor.
    pub const SKIPPED: u16 = 1;
    /// An `<a>` with an `href`.
    pub const LINK: u16 = 1 << 1;
    /// Inside an `<a href>` (or one itself).
    pub const IN_LINK: u16 = 1 << 2;
    /// `<script type="application/ld+json">`.
    pub const JSON_LD: u16 = 1 << 3;
    /// Marked as the article body by markup (`itemprop=articleBody`).
    pub const ARTICLE_BODY: u16 = 1 << 4;
    /// Marked as an author (`itemprop=author`, `rel=author`, class `author`/`byline`).
    pub const AUTHOR: u16 = 1 << 5;
    /// Marked as a date (`itemprop=datePublished`, class `date`/`time`/`pubtime`).
    pub const DATE: u16 = 1 << 6;
    /// `rel=nofollow` on a link.
    pub const NOFOLLOW: u16 = 1 << 7;
    /// Inside `<pre>`: whitespace is kept.
    pub const PRE: u16 = 1 << 8;
    /// Structural boilerplate by tag or role (nav, header, footer, aside, menus).
    pub const CHROME: u16 = 1 << 9;
    /// Inside a `<head>` or `<title>`.
    pub const HEAD: u16 = 1 << 10;
    /// Named as readers' comments or a consent notice (class or id `comment`, `disqus`,
    /// `replies`, `cookie`, `consent`, `gdpr`) and not as content: never the article's
    /// text, however much of the body it holds (Readability's unlikely candidates).
    pub const DISCUSSION: u16 = 1 << 11;
    /// A headline's kicker or roofline (`class=kicker`, `roofline`, `topline`), or text
    /// for screen readers only (`visually-hidden`): inside a heading, not the headline.
    pub const KICKER: u16 = 1 << 12;
    /// Named as the article's lead, standfirst or summary (`class=lead`, `intro`,
    /// `standfirst`, `chapo`, `entradilla`): the sentences above the body's container.
    pub const LEAD: u16 = 1 << 13;
    /// Inside an `<svg>` (or one itself) that nothing else skips: its drawing is no text,
    /// but the words it draws are ([`SVG_WORDS`]).
    pub const IN_SVG: u16 = 1 << 14;
    /// Inside an `<svg>`'s `<text>` (or one itself): words it draws, such as a syntax
    /// diagram's keywords, visible text.
    pub const SVG_WORDS: u16 = 1 << 15;
    /// The bits a node takes from its parent.
    pub const INHERITED: u16 = SKIPPED | IN_LINK | PRE | HEAD | IN_SVG | SVG_WORDS;
}

/// One element of the page.
#[derive(Debug, Clone)]
pub struct Node {
    pub tag: Tag,
    /// Index of the parent record ([`NONE`] for the root).
    pub parent: u32,
    /// Depth below the root.
    pub depth: u16,
    /// [`flag`] bits, some inherited from ancestors (SKIPPED, IN_LINK, PRE, HEAD).
    pub flags: u16,
    /// What its `id` and `class` say about it (positive: content, negative: boilerplate).
    pub hint: i16,
    /// Number (for [`Page::url`]) of its `href` (links) or `src` (images), or [`NONE`].
    pub url: u32,
    /// Index in [`Page::events`] of its `Open` event.
    pub open: u32,
    /// Index in [`Page::events`] of its `Close` event.
    pub close: u32,
    /// Characters (not whitespace) of its own text, not its descendants'.
    pub chars: u32,
    /// Punctuation characters (ASCII and CJK) of its own text.
    pub punct: u32,
    /// A hash of the tag name: tells apart the end tags of elements that are all `Other`.
    pub name: u32,
    /// A hash of its `class` attribute (0 without one): the posts of a blog page repeat
    /// one template, and their blocks share tag, depth and class.
    pub class: u32,
}

/// The page read as a sequence: element opens and closes, and text between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Open(u32),
    Close(u32),
    /// A byte range of [`Page::text`], whitespace collapsed, owned by the innermost open element.
    Text(u32, u32),
}

/// What the pass keeps of a page.
#[derive(Debug, Default)]
pub struct Page {
    pub nodes: Vec<Node>,
    pub events: Vec<Event>,
    /// The visible text (entities decoded, whitespace collapsed), in document order.
    pub text: String,
    /// `href` and `src` values (entities decoded, not resolved yet), one after the other:
    /// read one with [`Page::url`]. One buffer rather than a `String` each: a page has
    /// hundreds of them.
    pub url_text: String,
    /// Where each value of [`Page::url_text`] ends.
    pub url_ends: Vec<u32>,
    /// Every `<a href>`: the link's node (or [`NONE`] past the caps) and its url index.
    pub links: Vec<(u32, u32)>,
    /// `<meta>` as (lowercased name, property or itemprop, content).
    pub metas: Vec<(String, String)>,
    /// The content of each `<script type="application/ld+json">`.
    pub json_ld: Vec<String>,
    /// The `<title>` text.
    pub title: String,
    pub base_href: Option<String>,
    /// `<html lang>`.
    pub lang: Option<String>,
    /// `datetime` of `<time>` elements (and `content` of elements marked as the date).
    pub times: Vec<Time>,
}

/// A `<time datetime>` of the page (or the `content` of an element marked as the date).
#[derive(Debug, Clone)]
pub struct Time {
    /// Its element.
    pub node: u32,
    /// The `datetime` (or `content`) as written.
    pub datetime: String,
    /// Its `class` or `itemprop` says it is the last edit, not the publication
    /// (`class=updated`, `itemprop=dateModified`).
    pub modified: bool,
}

impl Page {
    /// Empties the page, keeping the room its vectors have.
    fn clear(&mut self) {
        let Page {
            nodes,
            events,
            text,
            url_text,
            url_ends,
            links,
            metas,
            json_ld,
            title,
            base_href,
            lang,
            times,
        } = self;
        nodes.clear();
        events.clear();
        text.clear();
        url_text.clear();
        url_ends.clear();
        links.clear();
        metas.clear();
        json_ld.clear();
        title.clear();
        *base_href = None;
        *lang = None;
        times.clear();
    }

    /// The `href` or `src` value number `index` (see [`Node::url`]).
    pub fn url(&self, index: u32) -> Option<&str> {
        let index = index as usize;
        let end = *self.url_ends.get(index)? as usize;
        let start = match index.checked_sub(1) {
            Some(before) => *self.url_ends.get(before)? as usize,
            None => 0,
        };
        self.url_text.get(start..end)
    }

    /// Each text range of [`Page::text`] with the element that holds it, in document order.
    pub fn text_owners(&self) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        for ev in &self.events {
            match *ev {
                Event::Open(n) => stack.push(n),
                Event::Close(_) => {
                    stack.pop();
                }
                Event::Text(a, b) => out.push((a, b, stack.last().copied().unwrap_or(0))),
            }
        }
        out
    }

    /// The node's text (all descendants, in order), paragraph breaks at block boundaries as "\n".
    pub fn node_text(&self, node: u32) -> String {
        let mut out = String::new();
        let Some(n) = self.nodes.get(node as usize) else {
            return out;
        };
        for ev in &self.events[n.open as usize..=n.close as usize] {
            match *ev {
                Event::Text(a, b) => out.push_str(&self.text[a as usize..b as usize]),
                Event::Open(i) | Event::Close(i) => {
                    if self.nodes[i as usize].tag.is_block() && !out.ends_with('\n') {
                        out.push('\n');
                    }
                }
            }
        }
        out
    }
}

thread_local! {
    /// The buffers of the last [`Page`] handed back by [`recycle`] on this thread: a worker
    /// reads page after page, and its next page then fills vectors that already have room
    /// instead of asking the allocator for a dozen large blocks (and the kernel for fresh
    /// memory pages) again.
    static SPARE: RefCell<Option<Page>> = const { RefCell::new(None) };
}

/// A page kept for reuse holds at most this many bytes of text (and room for at most a
/// quarter of [`MAX_NODES`] elements): the buffers of a pathological page are not kept for
/// the life of the thread.
const SPARE_MAX_TEXT_BYTES: usize = 1 << 20;

/// Hands the buffers of `page`, read and no longer needed, back for the next [`scan`](super::scan()) on
/// this thread.
pub fn recycle(mut page: Page) {
    if page.text.capacity() > SPARE_MAX_TEXT_BYTES || page.nodes.capacity() > MAX_NODES / 4 {
        return;
    }
    page.clear();
    SPARE.with(|spare| *spare.borrow_mut() = Some(page));
}

/// An empty page: the one [`recycle`] kept, or a new one.
pub(super) fn spare_page() -> Page {
    SPARE
        .with(|spare| spare.borrow_mut().take())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    #[test]
    fn urls_read_back_by_number() {
        let p = scan(
            r#"<a href=" /one?a=1&amp;b=2 ">x</a><img src="data:," data-src="/two.jpg"><a href="">y</a><a>z</a>"#,
        );
        let urls: Vec<Option<&str>> = p
            .nodes
            .iter()
            .filter(|n| n.url != NONE)
            .map(|n| p.url(n.url))
            .collect();
        assert_eq!(urls, [Some("/one?a=1&b=2"), Some("/two.jpg"), Some("")]);
        assert_eq!(p.url(3), None);
        assert_eq!(p.url(NONE), None);
    }
}
