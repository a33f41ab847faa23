//! The one streaming pass over the HTML: it keeps a compact record per element ([`Node`]),
//! the visible text once ([`Page::text`]), and an event log ([`Event`]) that says where each
//! element opens and closes relative to the text, so that any subtree can be read back in
//! order without a DOM. Head metadata (`<title>`, `<meta>`, JSON-LD, `<base>`,
//! `<html lang>`) is collected on the way.
//!
//! `lol_html` reports the start tags, with their place in the source; everything between two
//! start tags (text, end tags, comments, the content of raw-text elements) is read from the
//! source bytes by a second, small tokenizer (`source`), and attributes from the tag's own
//! bytes (`attributes`). `lol_html` 3 could report all of that itself (an end-tag handler
//! registered per element, text handlers, `Element::attributes`): the reason for the second
//! tokenizer is speed, not a missing feature. A boxed end-tag handler per element, text
//! chunks handed over one by one and a vector of attributes per element cost more than
//! reading the bytes between tags once: over the AEB pages `lol_html` with an end-tag
//! handler per element and a text handler, both doing nothing, took 2.52 ms/page, and this
//! whole pass, records kept, 2.57 ms/page (median of 7 rounds each, in turns, on a busy
//! 2-core machine, by a throwaway example since removed). The
//! handlers alone cost what the whole pass costs; the work done in them would come on top.
//! Either way `lol_html` builds no tree and does not report elements that are closed
//! implicitly (`<p>a<p>b`, `<li>a<li>b`), so the pass keeps its own stack of open elements
//! and applies the implied-end-tag rules of the HTML parsing algorithm that matter for text
//! (`tree`).
//!
//! The files, one concern each:
//! - this one: the caps, the pass's state (`Scan`) and the steps of a start tag;
//! - `tags`: the element kinds ([`Tag`]) and tag names read from the source;
//! - `page`: what the pass keeps ([`Page`], [`Node`], [`Event`], [`flag`]) and the
//!   recycling of a page's buffers ([`recycle`]);
//! - `source`: the second tokenizer, between start tags;
//! - `attributes`: a start tag's attributes, read from its source;
//! - `tree`: the stack of open elements and the implied end tags;
//! - `text`: the visible text, collapsed and counted;
//! - `hint_cache`: [`hints::classify`] remembered for repeated `id class` strings.

mod attributes;
mod hint_cache;
mod page;
mod source;
mod tags;
mod text;
mod tree;

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use lol_html::html_content::Element;
use lol_html::{element, HtmlRewriter, Settings};

pub use page::{flag, recycle, Event, Node, Page, Time, NONE};
pub use tags::Tag;
pub use text::is_punct;

use crate::entities;
use crate::hints;
use attributes::{has_hiding_style, Attr, RawAttributes};
use hint_cache::HintCache;
use page::spare_page;
use tags::tag_at;
use tree::OpenKinds;

/// Elements recorded per page. Real pages have a few thousand; past this the rest of the
/// page is read as text of the deepest open element, so memory stays bounded on generated
/// pages with millions of elements.
pub const MAX_NODES: usize = 100_000;
/// Nesting depth recorded. Deeper elements are read as part of their ancestor.
pub const MAX_DEPTH: usize = 512;
/// Visible text kept per page (bytes). The body of any article is far below this.
pub const MAX_TEXT_BYTES: usize = 4 << 20;
/// Bytes kept of one text node, so one giant text node cannot take the whole budget.
pub const MAX_TEXT_NODE_BYTES: usize = 512 << 10;
/// `<a href>` kept per page.
pub const MAX_LINKS: usize = 20_000;
/// `<meta>` tags kept per page.
pub const MAX_METAS: usize = 1_000;
/// JSON-LD bytes kept per page.
pub const MAX_JSON_LD_BYTES: usize = 512 << 10;
/// Bytes kept of a `<title>` and of one attribute value we store.
pub const MAX_SHORT_BYTES: usize = 4 << 10;
/// The name hash ([`tags::tag_named`]) of `text`: inside an `<svg>`, the element whose
/// content is drawn as words.
const SVG_TEXT_NAME: u32 = tags::fnv_name(b"text");

/// The pass's working state, shared by the `lol_html` handlers.
#[derive(Default)]
struct Scan {
    page: Page,
    /// Open elements, innermost last.
    stack: Vec<u32>,
    /// How many elements of each kind [`Scan::stack`] holds: the implied-end-tag rules and
    /// end tags skip their search of the stack when no element of the kind is open.
    open_kinds: OpenKinds,
    /// Byte offset in the HTML just past the last tag seen: the text between tags is read
    /// from the source by offsets, not from `lol_html` text chunks (which it would decode).
    last_end: usize,
    /// The raw-text element open on top of the stack (`script`, `style`, `title`, ...): its
    /// content is text up to its own end tag, whatever markup it holds.
    raw_open: Option<&'static str>,
    /// The last byte pushed to `page.text` was whitespace (collapsing across text nodes).
    space_before: bool,
    /// Inside `<title>`: its text goes to [`Page::title`].
    in_title: bool,
    /// The `id` and `class` of the element being read (a buffer kept between elements).
    id_class: String,
    /// Recent `id class` strings and their hints: pages repeat the same classes on hundreds
    /// of elements.
    hint_cache: HintCache,
}

/// What the attributes of one start tag say, as [`Scan::read_attributes`] reads them (the
/// `id` and `class` go to [`Scan::id_class`]).
#[derive(Default)]
struct StartTag<'a> {
    /// The [`flag`] bits set by `role`, `itemprop`, `rel` and the JSON-LD `type`.
    flags: u16,
    /// The `href` of a link or `<base>`, or the image's source.
    url: Option<&'a str>,
    /// The `<meta>` key (`name`, `property` or `itemprop`), lowercased.
    meta_key: Option<String>,
    /// `content` of a `<meta>` (or of the first element that has one), `datetime` of a
    /// `<time>`.
    content: Option<&'a str>,
    /// Hidden by `style`, `hidden` or `aria-hidden`.
    hidden: bool,
    /// [`Node::class`].
    class: u32,
    /// Its `class` or `itemprop` names a modification (`updated`, `modified`,
    /// `dateModified`) and not the publication (`published`): a `<time>` of the last edit.
    modified: bool,
    /// Its `class` or `itemprop` names the publication (`published`, `datePublished`).
    published: bool,
}

impl StartTag<'_> {
    /// Notes what a `class` or `itemprop` value says of a date: the last edit
    /// (`updated`, `modified`, `dateModified`) or the publication (`published`,
    /// `datePublished`). WordPress marks one `<time>` `entry-date published updated` when
    /// the two are the same. `lower` is the value in lowercase.
    fn note_date_kind(&mut self, lower: &str) {
        self.modified |= lower.contains("updated") || lower.contains("modified");
        self.published |= lower.contains("published");
    }
}

/// Reads `html` in one pass. Never fails: on a parser error the page read so far is returned.
pub fn scan(html: &str) -> Page {
    let state = Rc::new(RefCell::new(Scan {
        page: spare_page(),
        ..Scan::default()
    }));
    {
        let mut s = state.borrow_mut();
        // Room for what pages hold per byte of HTML (about one element per 240 bytes and
        // one byte of visible text per 11), so the vectors rarely grow during the pass.
        s.page.nodes.reserve((html.len() / 256).min(MAX_NODES));
        s.page.events.reserve((html.len() / 64).min(4 * MAX_NODES));
        s.page.text.reserve((html.len() / 16).min(MAX_TEXT_BYTES));
        s.page.nodes.push(Node {
            tag: Tag::Root,
            parent: NONE,
            depth: 0,
            flags: 0,
            hint: 0,
            url: NONE,
            open: 0,
            close: 0,
            chars: 0,
            punct: 0,
            name: 0,
            class: 0,
        });
        s.page.events.push(Event::Open(0));
        s.push(0);
    }
    let on_element = state.clone();
    let settings = Settings::new()
        .with_strict(false)
        .append_element_content_handler(element!("*", move |el: &mut Element| {
            on_element.borrow_mut().start_element(el, html);
            Ok(())
        }));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    if rewriter.write(html.as_bytes()).is_ok() {
        let _ = rewriter.end();
    }
    let mut s = state.borrow_mut();
    s.text_until(html, html.len());
    while !s.stack.is_empty() {
        s.pop();
    }
    std::mem::take(&mut s.page)
}

impl Scan {
    /// Records an element start: the text and end tags before it, the implied ends it
    /// causes, its attributes, and its [`Node`] (opened, or closed at once when it can have
    /// no content).
    ///
    /// Names and values are read as slices of `html` (by their source locations), so an
    /// element costs no allocation unless a value is kept.
    fn start_element(&mut self, el: &Element, html: &str) {
        let at = el.source_location().bytes();
        self.text_until(html, at.start);
        self.last_end = self.last_end.max(at.end);
        let (tag, name, raw) = tag_at(html, at.start);
        self.close_implied(tag);

        let mut start = self.read_attributes(html, at, tag);
        self.keep_head_metadata(tag, &mut start);
        let hint = self.classify_id_class();
        let mut flags =
            start.flags | hint.flags | tag_flags(tag, start.url.is_some(), start.hidden);
        if tag == Tag::Title {
            self.in_title = true;
        }
        let parent = *self.stack.last().unwrap_or(&0);
        let parent_node = &self.page.nodes[parent as usize];
        if tag == Tag::Svg && !start.hidden && parent_node.flags & flag::SKIPPED == 0 {
            // Read for the words it draws ([`Scan::text_piece`] reads nothing else of it).
            flags = (flags & !flag::SKIPPED) | flag::IN_SVG;
        }
        let svg_text = parent_node.flags & flag::IN_SVG != 0 && name == SVG_TEXT_NAME;
        if svg_text {
            flags |= flag::SVG_WORDS;
        }
        flags |= parent_node.flags & flag::INHERITED;
        let svg_text = svg_text && flags & flag::SKIPPED == 0;
        let depth = parent_node.depth.saturating_add(1);
        let url = self.keep_url(start.url);

        if self.page.nodes.len() >= MAX_NODES || self.stack.len() >= MAX_DEPTH {
            // Past the caps the element is read as part of its ancestor; its link still counts.
            self.keep_link(tag, NONE, url);
            return;
        }
        let index = self.page.nodes.len() as u32;
        self.keep_link(tag, index, url);
        // `<time datetime>`, and `content` of an element marked as the date (microdata).
        if tag == Tag::Time || flags & flag::DATE != 0 {
            if let Some(dt) = start.content {
                self.page.times.push(Time {
                    node: index,
                    datetime: truncate(dt.trim(), 128).to_string(),
                    modified: start.modified && !start.published,
                });
            }
        }
        self.block_boundary(tag);
        let open = self.page.events.len() as u32;
        self.page.nodes.push(Node {
            tag,
            parent,
            depth,
            flags,
            hint: hint.weight,
            url,
            open,
            close: open,
            chars: 0,
            punct: 0,
            name,
            class: start.class,
        });
        self.page.events.push(Event::Open(index));
        if svg_text {
            // Each `<text>` a word apart from the last (the whitespace between them is the
            // drawing's, skipped).
            self.push_visible(" ", index, false);
        }
        if el.can_have_content() {
            self.push(index);
            self.raw_open = raw;
        } else {
            self.close_node(index);
        }
    }

    /// The attributes of the start tag at `at` of `html` that the pass reads: `id` and
    /// `class` into [`Scan::id_class`], `<html lang>` into the page, the others into a
    /// [`StartTag`].
    fn read_attributes<'a>(&mut self, html: &'a str, at: Range<usize>, tag: Tag) -> StartTag<'a> {
        self.id_class.clear();
        let mut start = StartTag::default();
        let mut id = None;
        // A section of a document (`<section>`, `<div class=section>`): its `id` is the
        // anchor of its heading (`id=header-sets`, `id=cmake-extra-generator`), named
        // after its subject, not its role on the page.
        let mut section = tag == Tag::Section;
        // The attributes are read from the tag's source: `Element::attributes` would build
        // (and the rewriter drop) a vector of them for every element.
        for (name, value) in RawAttributes::of(html, at) {
            let Some(kind) = Attr::named(name) else {
                continue;
            };
            match kind {
                Attr::Id => id = Some(value),
                Attr::Class if self.id_class.len() < MAX_SHORT_BYTES => {
                    if !value.trim().is_empty() {
                        start.class = word_hash(value.as_bytes()) as u32 | 1;
                    }
                    section |= value
                        .split_ascii_whitespace()
                        .any(|c| c.eq_ignore_ascii_case("section"));
                    if tag == Tag::Time {
                        start.note_date_kind(&value.to_ascii_lowercase());
                    }
                    self.id_class.push_str(value);
                    self.id_class.push(' ');
                }
                Attr::Style if has_hiding_style(value) => start.hidden = true,
                Attr::Hidden => start.hidden = true,
                // Icons (img, span) are hidden decoratively; a hidden block is usually a menu.
                Attr::AriaHidden
                    if !matches!(tag, Tag::Img | Tag::Span)
                        && value.eq_ignore_ascii_case("true") =>
                {
                    start.hidden = true;
                }
                Attr::Role => {
                    let v = value.trim();
                    if [
                        "navigation",
                        "menu",
                        "menubar",
                        "banner",
                        "contentinfo",
                        "complementary",
                        "dialog",
                        "alert",
                    ]
                    .iter()
                    .any(|r| v.eq_ignore_ascii_case(r))
                    {
                        start.flags |= flag::CHROME;
                    }
                }
                Attr::Itemprop => {
                    let v = value.to_ascii_lowercase();
                    if v.contains("articlebody") || v == "text" {
                        start.flags |= flag::ARTICLE_BODY;
                    }
                    if v.contains("author") || v == "creator" {
                        start.flags |= flag::AUTHOR;
                    }
                    if v.contains("datepublished") || v == "datecreated" {
                        start.flags |= flag::DATE;
                    }
                    start.note_date_kind(&v);
                    if tag == Tag::Meta {
                        start.meta_key.get_or_insert(v);
                    }
                }
                Attr::Rel => {
                    for r in value.split_ascii_whitespace() {
                        if ["nofollow", "ugc", "sponsored"]
                            .iter()
                            .any(|x| r.eq_ignore_ascii_case(x))
                        {
                            start.flags |= flag::NOFOLLOW;
                        }
                        if r.eq_ignore_ascii_case("author") {
                            start.flags |= flag::AUTHOR;
                        }
                    }
                }
                Attr::Href if matches!(tag, Tag::A | Tag::Base) => start.url = Some(value),
                Attr::ImageSource if tag == Tag::Img => {
                    // Lazy loaders put a placeholder in `src` and the image in `data-*`.
                    let placeholder = start
                        .url
                        .is_none_or(|u: &str| u.trim().is_empty() || u.starts_with("data:"));
                    if placeholder && !value.trim().is_empty() {
                        start.url = Some(value);
                    }
                }
                Attr::MetaKey if tag == Tag::Meta => {
                    start.meta_key = Some(value.to_ascii_lowercase());
                }
                Attr::Content if tag == Tag::Meta || start.content.is_none() => {
                    start.content = Some(value)
                }
                Attr::Type
                    if tag == Tag::Script && value.to_ascii_lowercase().contains("ld+json") =>
                {
                    start.flags |= flag::JSON_LD;
                }
                Attr::Lang if tag == Tag::Html && self.page.lang.is_none() => {
                    let v = value.trim();
                    if !v.is_empty() {
                        self.page.lang = Some(truncate(v, 64).to_string());
                    }
                }
                Attr::Datetime if tag == Tag::Time => {
                    start.content = Some(value);
                }
                _ => {}
            }
        }
        if let Some(id) = id.filter(|_| !section && self.id_class.len() < MAX_SHORT_BYTES) {
            self.id_class.push_str(id);
            self.id_class.push(' ');
        }
        start
    }

    /// A `<meta>`'s key and content into [`Page::metas`] (its content is used up either
    /// way), the first `<base href>` into [`Page::base_href`].
    fn keep_head_metadata(&mut self, tag: Tag, start: &mut StartTag) {
        match tag {
            Tag::Meta => {
                if let (Some(k), Some(c)) = (start.meta_key.take(), start.content.take()) {
                    if self.page.metas.len() < MAX_METAS {
                        let c = entities::decode_attribute(truncate(c.trim(), MAX_SHORT_BYTES))
                            .into_owned();
                        self.page.metas.push((k, c));
                    }
                }
            }
            Tag::Base if self.page.base_href.is_none() => {
                if let Some(h) = start.url.take() {
                    self.page.base_href = Some(entities::decode_attribute(h.trim()).into_owned());
                }
            }
            _ => {}
        }
    }

    /// What the element's `id` and `class` ([`Scan::id_class`]) say, remembered for
    /// repeated strings.
    fn classify_id_class(&mut self) -> hints::Hint {
        self.id_class.make_ascii_lowercase();
        if self.id_class.is_empty() {
            return hints::Hint::default();
        }
        self.hint_cache.hint(&self.id_class)
    }

    /// Keeps an `href` or `src` value (trimmed, entities decoded) in [`Page::url_text`]:
    /// its number for [`Page::url`], or [`NONE`] without one or past the cap.
    fn keep_url(&mut self, url: Option<&str>) -> u32 {
        match url {
            Some(u) if self.page.url_ends.len() < MAX_LINKS * 2 => {
                let page = &mut self.page;
                page.url_text.push_str(&entities::decode_attribute(truncate(
                    u.trim(),
                    MAX_SHORT_BYTES,
                )));
                page.url_ends.push(page.url_text.len() as u32);
                (page.url_ends.len() - 1) as u32
            }
            _ => NONE,
        }
    }

    /// Lists an `<a>` with a kept `href` in [`Page::links`], as `node` ([`NONE`] past the
    /// caps).
    fn keep_link(&mut self, tag: Tag, node: u32, url: u32) {
        if tag == Tag::A && url != NONE && self.page.links.len() < MAX_LINKS {
            self.page.links.push((node, url));
        }
    }
}

/// The [`flag`] bits an element has by its kind: a link (`<a>` with an `href`), chrome
/// (nav, header, footer, aside, menu), skipped (by kind, or hidden), head, `<pre>`.
fn tag_flags(tag: Tag, has_url: bool, hidden: bool) -> u16 {
    let mut flags = 0;
    if tag == Tag::A && has_url {
        flags |= flag::LINK | flag::IN_LINK;
    }
    if matches!(
        tag,
        Tag::Nav | Tag::Header | Tag::Footer | Tag::Aside | Tag::Menu
    ) {
        flags |= flag::CHROME;
    }
    if tag.is_skipped() || hidden {
        flags |= flag::SKIPPED;
    }
    if matches!(tag, Tag::Head | Tag::Title) {
        flags |= flag::HEAD;
    }
    if tag == Tag::Pre {
        flags |= flag::PRE;
    }
    flags
}

/// A hash read eight bytes at a time (the rustc "Fx" step), for strings that are only
/// compared by it (class names), spread by it (the hint cache's slots) or grouped by its
/// high half before being compared (outlinks): a byte-at-a-time hash chains one multiply
/// per byte, and these strings run to dozens of bytes. The high 32 bits are those of the
/// last step; the low ones have the high ones folded in.
pub(crate) fn word_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(K);
    // The low bits pick the slot: fold the high bits, where the multiply mixes best, in.
    h ^ (h >> 32)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trimmed text of each element of kind `tag`.
    pub(super) fn texts(p: &Page, tag: Tag) -> Vec<String> {
        p.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.tag == tag)
            .map(|(i, _)| p.node_text(i as u32).trim().to_string())
            .collect()
    }

    #[test]
    fn caps_hold_on_deep_pages() {
        let html = "<div>".repeat(MAX_DEPTH * 3) + "deep";
        let p = scan(&html);
        assert!(p.nodes.len() <= MAX_DEPTH + 1);
        assert!(p.text.contains("deep"));
    }

    #[test]
    fn an_svg_draws_its_words_and_nothing_else() {
        let html = "<div><svg viewBox='0 0 9 9'><title>tip</title><path d='M0,0'/>\
            <text x=1>ALTER</text>\n<polygon points='1'/><text x=2>TABLE</text><text x=3>\
            <tspan>schema</tspan></text><style>.a{}</style></svg>\
            <svg hidden><text>gone</text></svg><span hidden><svg><text>gone</text></svg></span> \
            <text>plain</text> <svg><g><text>words</text></g></svg></div>";
        let p = scan(html);
        let div = texts(&p, Tag::Div);
        assert_eq!(div, ["ALTER TABLE schema plain words"], "{:?}", p.text);
    }
}
