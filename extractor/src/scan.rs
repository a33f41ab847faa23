//! The one streaming pass over the HTML (`lol_html`): it keeps a compact record per element
//! ([`Node`]), the visible text once ([`Page::text`]), and an event log ([`Event`]) that says
//! where each element opens and closes relative to the text, so that any subtree can be read
//! back in order without a DOM. Head metadata (`<title>`, `<meta>`, JSON-LD, `<base>`,
//! `<html lang>`) is collected on the way.
//!
//! `lol_html` does not build a tree and does not report elements that are closed implicitly
//! (`<p>a<p>b`, `<li>a<li>b`), so the pass keeps its own stack of open elements and applies
//! the common implied-end-tag rules of the HTML parsing algorithm.

use std::cell::RefCell;
use std::rc::Rc;

use lol_html::html_content::Element;
use lol_html::{element, HtmlRewriter, Settings};

use crate::entities;
use crate::hints;

/// "No index" in the `u32` links between records.
pub const NONE: u32 = u32::MAX;

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

/// The element kinds the scoring looks at; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    /// The synthetic root that holds everything.
    Root,
    Html,
    Head,
    Body,
    Title,
    Meta,
    Base,
    Script,
    Style,
    Noscript,
    Template,
    Iframe,
    Svg,
    Math,
    Canvas,
    Object,
    Select,
    Option,
    Textarea,
    Button,
    Input,
    Nav,
    Header,
    Footer,
    Aside,
    Form,
    Menu,
    A,
    Img,
    Picture,
    Figure,
    Figcaption,
    P,
    Div,
    Span,
    Br,
    Hr,
    H1,
    H2,
    H3,
    H4,
    H5,
    H6,
    Ul,
    Ol,
    Li,
    Dl,
    Dt,
    Dd,
    Table,
    Thead,
    Tbody,
    Tfoot,
    Tr,
    Td,
    Th,
    Caption,
    Blockquote,
    Pre,
    Code,
    Article,
    Section,
    Main,
    Time,
    Address,
    Center,
    Details,
    Summary,
    Dialog,
    Font,
    Label,
    Other,
}

impl Tag {
    /// The kind of a lowercased tag name.
    fn from_name(name: &[u8]) -> Tag {
        match name {
            b"html" => Tag::Html,
            b"head" => Tag::Head,
            b"body" => Tag::Body,
            b"title" => Tag::Title,
            b"meta" => Tag::Meta,
            b"base" => Tag::Base,
            b"script" => Tag::Script,
            b"style" => Tag::Style,
            b"noscript" => Tag::Noscript,
            b"template" => Tag::Template,
            b"iframe" | b"frame" | b"frameset" | b"noframes" | b"noembed" => Tag::Iframe,
            b"svg" => Tag::Svg,
            b"math" => Tag::Math,
            b"canvas" => Tag::Canvas,
            b"object" | b"embed" | b"applet" | b"audio" | b"video" | b"map" => Tag::Object,
            b"select" | b"datalist" => Tag::Select,
            b"option" | b"optgroup" => Tag::Option,
            b"textarea" => Tag::Textarea,
            b"button" => Tag::Button,
            b"input" => Tag::Input,
            b"nav" => Tag::Nav,
            b"header" => Tag::Header,
            b"footer" => Tag::Footer,
            b"aside" => Tag::Aside,
            b"form" => Tag::Form,
            b"menu" => Tag::Menu,
            b"a" => Tag::A,
            b"img" => Tag::Img,
            b"picture" => Tag::Picture,
            b"figure" => Tag::Figure,
            b"figcaption" => Tag::Figcaption,
            b"p" => Tag::P,
            b"div" => Tag::Div,
            b"span" => Tag::Span,
            b"br" => Tag::Br,
            b"hr" => Tag::Hr,
            b"h1" => Tag::H1,
            b"h2" => Tag::H2,
            b"h3" => Tag::H3,
            b"h4" => Tag::H4,
            b"h5" => Tag::H5,
            b"h6" => Tag::H6,
            b"ul" => Tag::Ul,
            b"ol" => Tag::Ol,
            b"li" => Tag::Li,
            b"dl" => Tag::Dl,
            b"dt" => Tag::Dt,
            b"dd" => Tag::Dd,
            b"table" => Tag::Table,
            b"thead" => Tag::Thead,
            b"tbody" => Tag::Tbody,
            b"tfoot" => Tag::Tfoot,
            b"tr" => Tag::Tr,
            b"td" => Tag::Td,
            b"th" => Tag::Th,
            b"caption" => Tag::Caption,
            b"blockquote" => Tag::Blockquote,
            b"pre" => Tag::Pre,
            b"code" => Tag::Code,
            b"article" => Tag::Article,
            b"section" => Tag::Section,
            b"main" => Tag::Main,
            b"time" => Tag::Time,
            b"address" => Tag::Address,
            b"center" => Tag::Center,
            b"details" => Tag::Details,
            b"summary" => Tag::Summary,
            b"dialog" => Tag::Dialog,
            b"font" => Tag::Font,
            b"label" => Tag::Label,
            _ => Tag::Other,
        }
    }

    /// Elements whose content is never body text.
    pub fn is_skipped(self) -> bool {
        matches!(
            self,
            Tag::Head
                | Tag::Title
                | Tag::Script
                | Tag::Style
                | Tag::Noscript
                | Tag::Template
                | Tag::Iframe
                | Tag::Svg
                | Tag::Math
                | Tag::Canvas
                | Tag::Object
                | Tag::Select
                | Tag::Option
                | Tag::Textarea
                | Tag::Button
                | Tag::Input
                | Tag::Dialog
        )
    }

    /// Elements that start a new line in the text.
    pub fn is_block(self) -> bool {
        matches!(
            self,
            Tag::Root
                | Tag::Html
                | Tag::Body
                | Tag::Nav
                | Tag::Header
                | Tag::Footer
                | Tag::Aside
                | Tag::Form
                | Tag::Menu
                | Tag::Figure
                | Tag::Figcaption
                | Tag::P
                | Tag::Div
                | Tag::Br
                | Tag::Hr
                | Tag::H1
                | Tag::H2
                | Tag::H3
                | Tag::H4
                | Tag::H5
                | Tag::H6
                | Tag::Ul
                | Tag::Ol
                | Tag::Li
                | Tag::Dl
                | Tag::Dt
                | Tag::Dd
                | Tag::Table
                | Tag::Thead
                | Tag::Tbody
                | Tag::Tfoot
                | Tag::Tr
                | Tag::Td
                | Tag::Th
                | Tag::Caption
                | Tag::Blockquote
                | Tag::Pre
                | Tag::Article
                | Tag::Section
                | Tag::Main
                | Tag::Address
                | Tag::Center
                | Tag::Details
                | Tag::Summary
        )
    }

    pub fn is_heading(self) -> bool {
        matches!(
            self,
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6
        )
    }

    /// Elements that close an open `<p>` when they start (HTML "close a p element").
    fn closes_p(self) -> bool {
        matches!(
            self,
            Tag::P
                | Tag::Div
                | Tag::Nav
                | Tag::Header
                | Tag::Footer
                | Tag::Aside
                | Tag::Form
                | Tag::Menu
                | Tag::Figure
                | Tag::Figcaption
                | Tag::Hr
                | Tag::Ul
                | Tag::Ol
                | Tag::Li
                | Tag::Dl
                | Tag::Dt
                | Tag::Dd
                | Tag::Table
                | Tag::Blockquote
                | Tag::Pre
                | Tag::Article
                | Tag::Section
                | Tag::Main
                | Tag::Address
                | Tag::Center
                | Tag::Details
                | Tag::Summary
                | Tag::Dialog
        ) || self.is_heading()
    }

    /// Boundaries of the scopes the implied-end-tag rules search in.
    fn is_scope_boundary(self) -> bool {
        matches!(
            self,
            Tag::Root
                | Tag::Html
                | Tag::Body
                | Tag::Table
                | Tag::Td
                | Tag::Th
                | Tag::Caption
                | Tag::Template
                | Tag::Object
                | Tag::Button
                | Tag::Svg
                | Tag::Math
        )
    }
}

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
    /// `datetime` of `<time>` elements with their node.
    pub times: Vec<(u32, String)>,
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

/// [`hints::classify`] remembered for recent strings: a slot per hash of the string (the
/// last string of that hash wins), the strings themselves kept in one buffer.
#[derive(Default)]
struct HintCache {
    /// [`HINT_CACHE_SLOTS`] slots once used.
    slots: Vec<HintSlot>,
    /// The strings of the slots, one after the other (and strings slots no longer hold).
    strings: String,
}

/// One string of [`HintCache`]: `strings[start..start + len]`, and its hint.
#[derive(Debug, Default, Clone, Copy)]
struct HintSlot {
    start: u32,
    /// 0 for an empty slot (no string classified is empty).
    len: u32,
    hint: hints::Hint,
}

/// Bytes of [`HintCache::strings`] before it is emptied with all slots (a page with
/// endless distinct classes).
const HINT_CACHE_BYTES: usize = 256 << 10;

impl HintCache {
    /// The hint of the non-empty string `id_class`, classified unless the slot of its hash
    /// holds it.
    fn hint(&mut self, id_class: &str) -> hints::Hint {
        if self.slots.is_empty() {
            self.slots = vec![HintSlot::default(); HINT_CACHE_SLOTS];
        }
        let index = word_hash(id_class.as_bytes()) as usize % HINT_CACHE_SLOTS;
        let slot = self.slots[index];
        let held = self
            .strings
            .get(slot.start as usize..(slot.start + slot.len) as usize);
        if slot.len > 0 && held == Some(id_class) {
            return slot.hint;
        }
        if self.strings.len() + id_class.len() > HINT_CACHE_BYTES {
            self.strings.clear();
            self.slots.fill(HintSlot::default());
        }
        let hint = hints::classify(id_class);
        self.slots[index] = HintSlot {
            start: self.strings.len() as u32,
            len: id_class.len() as u32,
            hint,
        };
        self.strings.push_str(id_class);
        hint
    }
}

/// A count per [`Tag`] (indexed by the tag's value).
struct OpenKinds([u32; TAG_KINDS]);

/// The number of [`Tag`] kinds.
const TAG_KINDS: usize = Tag::Other as usize + 1;

impl Default for OpenKinds {
    fn default() -> Self {
        OpenKinds([0; TAG_KINDS])
    }
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

/// Slots of [`HintCache`].
const HINT_CACHE_SLOTS: usize = 256;

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

/// Hands the buffers of `page`, read and no longer needed, back for the next [`scan`] on
/// this thread.
pub fn recycle(mut page: Page) {
    if page.text.capacity() > SPARE_MAX_TEXT_BYTES || page.nodes.capacity() > MAX_NODES / 4 {
        return;
    }
    page.clear();
    SPARE.with(|spare| *spare.borrow_mut() = Some(page));
}

/// An empty page: the one [`recycle`] kept, or a new one.
fn spare_page() -> Page {
    SPARE
        .with(|spare| spare.borrow_mut().take())
        .unwrap_or_default()
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
    /// Records an element start; returns the node to close on its end tag, if it has one.
    ///
    /// Names and values are read as slices of `html` (by their source locations), so an
    /// element costs no allocation unless a value is kept.
    fn start_element(&mut self, el: &Element, html: &str) {
        let at = el.source_location().bytes();
        self.text_until(html, at.start);
        self.last_end = self.last_end.max(at.end);
        let (tag, name, raw) = tag_at(html, at.start);
        self.close_implied(tag);

        let mut id_class = std::mem::take(&mut self.id_class);
        id_class.clear();
        let mut flags = 0u16;
        let mut url: Option<&str> = None;
        let mut meta_key: Option<String> = None;
        let mut meta_content: Option<&str> = None;
        let mut hidden = false;
        let mut class = 0u32;
        // The attributes are read from the tag's source: `Element::attributes` would build
        // (and the rewriter drop) a vector of them for every element.
        for (name, value) in RawAttributes::of(html, at.clone()) {
            let Some(kind) = Attr::named(name) else {
                continue;
            };
            match kind {
                Attr::Id | Attr::Class if id_class.len() < MAX_SHORT_BYTES => {
                    if kind == Attr::Class && !value.trim().is_empty() {
                        class = word_hash(value.as_bytes()) as u32 | 1;
                    }
                    id_class.push_str(value);
                    id_class.push(' ');
                }
                Attr::Style if has_hiding_style(value) => hidden = true,
                Attr::Hidden => hidden = true,
                // Icons (img, span) are hidden decoratively; a hidden block is usually a menu.
                Attr::AriaHidden
                    if !matches!(tag, Tag::Img | Tag::Span)
                        && value.eq_ignore_ascii_case("true") =>
                {
                    hidden = true;
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
                        flags |= flag::CHROME;
                    }
                }
                Attr::Itemprop => {
                    let v = value.to_ascii_lowercase();
                    if v.contains("articlebody") || v == "text" {
                        flags |= flag::ARTICLE_BODY;
                    }
                    if v.contains("author") || v == "creator" {
                        flags |= flag::AUTHOR;
                    }
                    if v.contains("datepublished") || v == "datecreated" {
                        flags |= flag::DATE;
                    }
                    if tag == Tag::Meta {
                        meta_key.get_or_insert(v);
                    }
                }
                Attr::Rel => {
                    for r in value.split_ascii_whitespace() {
                        if ["nofollow", "ugc", "sponsored"]
                            .iter()
                            .any(|x| r.eq_ignore_ascii_case(x))
                        {
                            flags |= flag::NOFOLLOW;
                        }
                        if r.eq_ignore_ascii_case("author") {
                            flags |= flag::AUTHOR;
                        }
                    }
                }
                Attr::Href if matches!(tag, Tag::A | Tag::Base) => url = Some(value),
                Attr::ImageSource if tag == Tag::Img => {
                    // Lazy loaders put a placeholder in `src` and the image in `data-*`.
                    let placeholder =
                        url.is_none_or(|u: &str| u.trim().is_empty() || u.starts_with("data:"));
                    if placeholder && !value.trim().is_empty() {
                        url = Some(value);
                    }
                }
                Attr::MetaKey if tag == Tag::Meta => {
                    meta_key = Some(value.to_ascii_lowercase());
                }
                Attr::Content if tag == Tag::Meta || meta_content.is_none() => {
                    meta_content = Some(value)
                }
                Attr::Type
                    if tag == Tag::Script && value.to_ascii_lowercase().contains("ld+json") =>
                {
                    flags |= flag::JSON_LD;
                }
                Attr::Lang if tag == Tag::Html && self.page.lang.is_none() => {
                    let v = value.trim();
                    if !v.is_empty() {
                        self.page.lang = Some(truncate(v, 64).to_string());
                    }
                }
                Attr::Datetime if tag == Tag::Time => {
                    meta_content = Some(value);
                }
                _ => {}
            }
        }

        match tag {
            Tag::Meta => {
                if let (Some(k), Some(c)) = (meta_key, meta_content.take()) {
                    if self.page.metas.len() < MAX_METAS {
                        let c = entities::decode(truncate(c.trim(), MAX_SHORT_BYTES)).into_owned();
                        self.page.metas.push((k, c));
                    }
                }
            }
            Tag::Base if self.page.base_href.is_none() => {
                if let Some(h) = url.take() {
                    self.page.base_href = Some(entities::decode(h.trim()).into_owned());
                }
            }
            _ => {}
        }

        id_class.make_ascii_lowercase();
        let hint = self.classify_cached(&id_class);
        self.id_class = id_class;
        flags |= hint.flags;
        if tag == Tag::A && url.is_some() {
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
        if tag == Tag::Title {
            self.in_title = true;
        }

        let parent = *self.stack.last().unwrap_or(&0);
        let parent_node = &self.page.nodes[parent as usize];
        flags |= parent_node.flags & (flag::SKIPPED | flag::IN_LINK | flag::PRE | flag::HEAD);
        let depth = parent_node.depth.saturating_add(1);

        let url_index = match url {
            Some(u) if self.page.url_ends.len() < MAX_LINKS * 2 => {
                let page = &mut self.page;
                page.url_text
                    .push_str(&entities::decode(truncate(u.trim(), MAX_SHORT_BYTES)));
                page.url_ends.push(page.url_text.len() as u32);
                (page.url_ends.len() - 1) as u32
            }
            _ => NONE,
        };

        if self.page.nodes.len() >= MAX_NODES || self.stack.len() >= MAX_DEPTH {
            if tag == Tag::A && url_index != NONE && self.page.links.len() < MAX_LINKS {
                self.page.links.push((NONE, url_index));
            }
            return;
        }
        let index = self.page.nodes.len() as u32;
        if tag == Tag::A && url_index != NONE && self.page.links.len() < MAX_LINKS {
            self.page.links.push((index, url_index));
        }
        // `<time datetime>`, and `content` of an element marked as the date (microdata).
        if tag == Tag::Time || flags & flag::DATE != 0 {
            if let Some(dt) = meta_content {
                self.page
                    .times
                    .push((index, truncate(dt.trim(), 128).to_string()));
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
            url: url_index,
            open,
            close: open,
            chars: 0,
            punct: 0,
            name,
            class,
        });
        self.page.events.push(Event::Open(index));
        if el.can_have_content() {
            self.push(index);
            self.raw_open = raw;
        } else {
            self.close_node(index);
        }
    }

    /// [`hints::classify`], remembered for repeated strings.
    fn classify_cached(&mut self, id_class: &str) -> hints::Hint {
        if id_class.is_empty() {
            return hints::Hint::default();
        }
        self.hint_cache.hint(id_class)
    }

    /// An end tag read between the reported start tags: closes the innermost open element
    /// of that name and those left open inside it, as the HTML tree builder does. End tags
    /// of blocks search up to a scope boundary (table, cell), those of inline elements stop
    /// at any block; an end tag that finds no element is ignored, and so are `</body>` and
    /// `</html>` (content after them still belongs to the body).
    fn end_tag(&mut self, tag: Tag, name: u32) {
        if matches!(tag, Tag::Body | Tag::Html | Tag::Br | Tag::Root) || !self.is_open(tag) {
            return;
        }
        let block = tag.is_block() || tag.is_scope_boundary();
        for pos in (1..self.stack.len()).rev() {
            let node = &self.page.nodes[self.stack[pos] as usize];
            if node.tag == tag && node.name == name {
                while self.stack.len() > pos {
                    self.pop();
                }
                return;
            }
            if node.tag.is_scope_boundary() || (!block && node.tag.is_block()) {
                return;
            }
        }
    }

    /// The implied end tags of the HTML parsing algorithm that matter for text structure.
    fn close_implied(&mut self, tag: Tag) {
        if tag.closes_p() && self.is_open(Tag::P) {
            self.close_in_scope(|t| t == Tag::P, |_| false);
        }
        match tag {
            Tag::Li => self.close_in_scope(
                |t| t == Tag::Li,
                |t| matches!(t, Tag::Ul | Tag::Ol | Tag::Menu),
            ),
            Tag::Dt | Tag::Dd => {
                self.close_in_scope(|t| matches!(t, Tag::Dt | Tag::Dd), |t| t == Tag::Dl)
            }
            Tag::Tr => self.close_in_scope(
                |t| t == Tag::Tr,
                |t| matches!(t, Tag::Thead | Tag::Tbody | Tag::Tfoot),
            ),
            Tag::Td | Tag::Th => {
                // `close_in_scope` stops at td/th themselves, so look at the innermost cell directly.
                if let Some(pos) = self.stack.iter().rposition(|&n| {
                    let t = self.page.nodes[n as usize].tag;
                    matches!(t, Tag::Td | Tag::Th | Tag::Tr | Tag::Table)
                }) {
                    let t = self.page.nodes[self.stack[pos] as usize].tag;
                    if matches!(t, Tag::Td | Tag::Th) && pos > 0 {
                        while self.stack.len() > pos {
                            self.pop();
                        }
                    }
                }
            }
            Tag::Thead | Tag::Tbody | Tag::Tfoot => self.close_in_scope(
                |t| matches!(t, Tag::Thead | Tag::Tbody | Tag::Tfoot),
                |_| false,
            ),
            Tag::Option => self.close_in_scope(|t| t == Tag::Option, |t| t == Tag::Select),
            Tag::A if self.is_open(Tag::A) => self.close_in_scope(|t| t == Tag::A, |_| false),
            _ if tag.is_heading() => {
                if let Some(&top) = self.stack.last() {
                    if self.page.nodes[top as usize].tag.is_heading() && self.stack.len() > 1 {
                        self.pop();
                    }
                }
            }
            _ => {}
        }
    }

    /// Closes the innermost open element that `target` accepts, unless a scope boundary
    /// (or an element `stop` accepts) comes first.
    fn close_in_scope(&mut self, target: impl Fn(Tag) -> bool, stop: impl Fn(Tag) -> bool) {
        let mut found = None;
        for (pos, &n) in self.stack.iter().enumerate().rev().take(64) {
            let t = self.page.nodes[n as usize].tag;
            if target(t) {
                found = Some(pos);
                break;
            }
            if t.is_scope_boundary() || stop(t) {
                break;
            }
        }
        if let Some(pos) = found {
            if pos > 0 {
                while self.stack.len() > pos {
                    self.pop();
                }
            }
        }
    }

    /// Separates the text of blocks in [`Page::text`] (no event refers to the separator).
    /// A block whose text ends in spaces (`吉林省人民政府　　</div>`) has its collapsed space
    /// turned into the line break, in place, so the next block still starts a line.
    fn block_boundary(&mut self, tag: Tag) {
        if !tag.is_block() || self.page.text.is_empty() {
            return;
        }
        if !self.space_before && self.page.text.len() < MAX_TEXT_BYTES {
            self.page.text.push('\n');
            self.space_before = true;
        } else if self.space_before && self.page.text.ends_with(' ') {
            self.page.text.pop();
            self.page.text.push('\n');
        }
    }

    /// Opens node `n` (on top of the stack).
    fn push(&mut self, n: u32) {
        self.stack.push(n);
        self.open_kinds.0[self.page.nodes[n as usize].tag as usize] += 1;
    }

    /// Closes the innermost open node.
    fn pop(&mut self) {
        if let Some(n) = self.stack.pop() {
            let count = &mut self.open_kinds.0[self.page.nodes[n as usize].tag as usize];
            *count = count.saturating_sub(1);
            self.close_node(n);
            self.raw_open = None;
        }
    }

    /// Some element of kind `tag` is open.
    fn is_open(&self, tag: Tag) -> bool {
        self.open_kinds.0[tag as usize] > 0
    }

    fn close_node(&mut self, n: u32) {
        self.block_boundary(self.page.nodes[n as usize].tag);
        self.page.nodes[n as usize].close = self.page.events.len() as u32;
        self.page.events.push(Event::Close(n));
        if self.page.nodes[n as usize].tag == Tag::Title {
            self.in_title = false;
        }
    }

    /// Reads the source between the last start tag seen and byte `end` of `html`: text,
    /// and the end tags, comments and doctypes among it (`lol_html` reports start tags only,
    /// so the pass reads end tags itself, by the tokenizer's rules: in a raw-text element
    /// only its own end tag counts).
    fn text_until(&mut self, html: &str, end: usize) {
        let mut pos = self.last_end;
        if end <= pos {
            return;
        }
        self.last_end = end;
        if html.get(pos..end).is_none() {
            return;
        }
        let bytes = html.as_bytes();
        // Positions are of `html`; every one the loop moves to is just past an ASCII byte.
        while let Some(rest) = html.get(pos..end).filter(|r| !r.is_empty()) {
            if let Some(raw) = self.raw_open {
                match find_end_tag(rest, raw) {
                    Some((at, after)) => {
                        self.text_piece(&rest[..at]);
                        self.pop();
                        pos += after;
                    }
                    None => {
                        self.text_piece(rest);
                        return;
                    }
                }
                continue;
            }
            let Some(at) = next_markup(bytes, pos, end) else {
                self.text_piece(rest);
                return;
            };
            self.text_piece(&rest[..at - pos]);
            let markup = &html[at..end];
            pos = if let Some(comment) = markup.strip_prefix("<!--") {
                comment.find("-->").map_or(end, |e| at + e + 7)
            } else {
                if let Some(name) = markup.strip_prefix("</") {
                    let (tag, hash, _) = tag_named(name);
                    self.end_tag(tag, hash);
                }
                find_before(b'>', bytes, at, end).map_or(end, |e| e + 1)
            };
        }
    }

    /// Text of the innermost open element: kept as visible text, as the title, as JSON-LD,
    /// or dropped.
    fn text_piece(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let text = truncate(text, MAX_TEXT_NODE_BYTES);
        let top = *self.stack.last().unwrap_or(&0);
        let flags = self.page.nodes[top as usize].flags;
        if flags & flag::JSON_LD != 0 {
            let total: usize = self.page.json_ld.iter().map(String::len).sum();
            if total + text.len() <= MAX_JSON_LD_BYTES {
                self.page.json_ld.push(text.to_string());
            }
        } else if self.in_title && self.page.nodes[top as usize].tag == Tag::Title {
            if self.page.title.len() < MAX_SHORT_BYTES {
                self.page.title.push_str(&entities::decode(text));
            }
        } else if flags & flag::SKIPPED == 0 && self.raw_open.is_none() {
            self.push_visible(text, top, flags & flag::PRE != 0);
        }
    }

    fn push_visible(&mut self, raw: &str, node: u32, pre: bool) {
        if self.page.text.len() >= MAX_TEXT_BYTES {
            return;
        }
        if !pre && raw.bytes().all(|b| BYTE_CLASS[b as usize] == SPACE) {
            // Whitespace between tags (the commonest text): the one space it collapses to.
            if !self.space_before {
                let start = self.page.text.len() as u32;
                self.page.text.push(' ');
                self.space_before = true;
                self.page.events.push(Event::Text(start, start + 1));
            }
            return;
        }
        let decoded = entities::decode(raw);
        let start = self.page.text.len();
        let mut chars = 0u32;
        let mut punct = 0u32;
        // Runs of text are copied whole; other whitespace collapses to one space.
        let mut run = 0;
        let bytes = decoded.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let (class, len) = if b < 0x80 {
                (BYTE_CLASS[b as usize], 1)
            } else {
                let c = decoded[i..].chars().next().unwrap_or(' ');
                let class = if c.is_whitespace() {
                    SPACE
                } else if is_punct(c) {
                    PUNCT
                } else {
                    WORD
                };
                (class, c.len_utf8())
            };
            if class != SPACE {
                chars += 1;
                punct += u32::from(class == PUNCT);
                // The ASCII letters and punctuation that follow, by the table alone.
                i += len;
                while let Some(&next) = bytes.get(i) {
                    let class = BYTE_CLASS[next as usize];
                    if class > PUNCT {
                        break;
                    }
                    chars += 1;
                    punct += u32::from(class);
                    i += 1;
                }
                continue;
            } else if b == b' '
                && i > run
                && bytes
                    .get(i + 1)
                    .is_some_and(|&next| BYTE_CLASS[next as usize] <= PUNCT)
            {
                // One space between two words is what collapsing writes: it stays in the run.
            } else {
                if run < i {
                    self.page.text.push_str(&decoded[run..i]);
                    self.space_before = false;
                }
                run = i + len;
                if pre && b == b'\n' {
                    self.page.text.push('\n');
                    self.space_before = true;
                } else if !self.space_before {
                    self.page.text.push(' ');
                    self.space_before = true;
                }
                if !pre {
                    // The ASCII whitespace that follows collapses into this space.
                    while bytes
                        .get(run)
                        .is_some_and(|&next| BYTE_CLASS[next as usize] == SPACE)
                    {
                        run += 1;
                    }
                    i = run;
                    continue;
                }
            }
            i += len;
        }
        if run < decoded.len() {
            self.page.text.push_str(&decoded[run..]);
            self.space_before = false;
        }
        let end = self.page.text.len();
        if end > start {
            self.page.events.push(Event::Text(start as u32, end as u32));
            let n = &mut self.page.nodes[node as usize];
            n.chars = n.chars.saturating_add(chars);
            n.punct = n.punct.saturating_add(punct);
        }
    }
}

/// Where the next markup starts in `bytes[from..limit]`: a `<` before a letter, `/`, `!`
/// or `?`. A `<` that starts no markup (`a < b`) is text, and so is one at `limit - 1`.
fn next_markup(bytes: &[u8], mut from: usize, limit: usize) -> Option<usize> {
    while let Some(at) = find_before(b'<', bytes, from, limit) {
        let next = if at + 1 < limit { bytes[at + 1] } else { b' ' };
        if next.is_ascii_alphabetic() || matches!(next, b'/' | b'!' | b'?') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The end tag `</name>` of a raw-text element in `s` (any case): where it starts and
/// where it ends.
fn find_end_tag(s: &str, name: &str) -> Option<(usize, usize)> {
    // Scripts run to hundreds of kilobytes: a vectorised search for `</` (the automaton's
    // prefilter), not `str::find`'s two-way search.
    static END_TAG_OPEN: std::sync::OnceLock<aho_corasick::AhoCorasick> =
        std::sync::OnceLock::new();
    let opener = END_TAG_OPEN
        .get_or_init(|| aho_corasick::AhoCorasick::new(["</"]).expect("static pattern"));
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = opener.find(&bytes[from..]).map(|m| m.start()) {
        let at = from + i;
        let after_name = at + 2 + name.len();
        let matches = bytes
            .get(at + 2..after_name)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
            && bytes
                .get(after_name)
                .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'));
        if matches {
            let end = s[after_name..]
                .find('>')
                .map_or(s.len(), |e| after_name + e + 1);
            return Some((at, end));
        }
        from = at + 2;
    }
    None
}

/// The kind, name hash and raw-text name of the start tag at byte `at` of `html`.
fn tag_at(html: &str, at: usize) -> (Tag, u32, Option<&'static str>) {
    tag_named(html.get(at + 1..).unwrap_or(""))
}

/// The kind, name hash and raw-text name (for `script`, `style`, `title`, `textarea`, ...)
/// of the tag name `s` starts with, read without allocating (`DIV class=x>` is a `Div`).
fn tag_named(s: &str) -> (Tag, u32, Option<&'static str>) {
    // The longest name with a kind of its own is 10 bytes (`figcaption`).
    let mut lower = [0u8; 12];
    let mut len = 0;
    let mut hash = 0x811c_9dc5u32;
    for &b in s.as_bytes() {
        if b.is_ascii_whitespace() || b == b'/' || b == b'>' {
            break;
        }
        let b = b.to_ascii_lowercase();
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
        if let Some(slot) = lower.get_mut(len) {
            *slot = b;
        }
        len += 1;
    }
    let Some(name) = lower.get(..len) else {
        return (Tag::Other, hash, None);
    };
    let tag = Tag::from_name(name);
    let raw = match tag {
        Tag::Script => Some("script"),
        Tag::Style => Some("style"),
        Tag::Title => Some("title"),
        Tag::Textarea => Some("textarea"),
        Tag::Noscript => Some("noscript"),
        Tag::Iframe => match name {
            b"iframe" => Some("iframe"),
            b"noembed" => Some("noembed"),
            b"noframes" => Some("noframes"),
            _ => None,
        },
        Tag::Other => match name {
            b"xmp" => Some("xmp"),
            b"plaintext" => Some("plaintext"),
            _ => None,
        },
        _ => None,
    };
    (tag, hash, raw)
}

/// The attributes of a start tag, read from its source (`<name attr=value ...>`) by the
/// HTML tokenizer's rules: names end at whitespace, `/`, `>` or `=`; values are quoted
/// (with `"` or `'`) or end at whitespace or `>`; a `/` between attributes is skipped. Yields
/// each attribute's name (as written) and raw value (character references not decoded).
struct RawAttributes<'a> {
    html: &'a str,
    /// Where to read on (in `html`): just past the previous attribute.
    pos: usize,
    /// Just past the tag's `>`.
    end: usize,
}

/// [`TAG_BYTE`] bit: whitespace (the tokenizer's: tab, LF, FF, CR, space).
const T_SPACE: u8 = 1;
/// [`TAG_BYTE`] bit: `/`.
const T_SLASH: u8 = 2;
/// [`TAG_BYTE`] bit: `>`.
const T_GT: u8 = 4;
/// [`TAG_BYTE`] bit: `=`.
const T_EQ: u8 = 8;

/// What each byte is to the attribute reader: the loops test one table entry per byte.
const TAG_BYTE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'\t' as usize] = T_SPACE;
    table[b'\n' as usize] = T_SPACE;
    table[0x0c] = T_SPACE;
    table[b'\r' as usize] = T_SPACE;
    table[b' ' as usize] = T_SPACE;
    table[b'/' as usize] = T_SLASH;
    table[b'>' as usize] = T_GT;
    table[b'=' as usize] = T_EQ;
    table
};

/// The first index from `i` on whose byte has none of the `stop` bits of [`TAG_BYTE`]
/// (`skip`), or has one of them (`!skip`); `bytes.len()` if none.
#[inline(always)]
fn tag_scan(bytes: &[u8], mut i: usize, stop: u8, skip: bool) -> usize {
    while i < bytes.len() && ((TAG_BYTE[bytes[i] as usize] & stop != 0) == skip) {
        i += 1;
    }
    i
}

impl<'a> RawAttributes<'a> {
    /// The attributes of the start tag at `tag` of `html` (from its `<` to its `>`).
    fn of(html: &'a str, tag: std::ops::Range<usize>) -> Self {
        let end = tag.end.min(html.len());
        let bytes = html.as_bytes().get(..end).unwrap_or_default();
        // The tag name runs from after `<` to whitespace, `/` or `>`.
        let pos = tag_scan(bytes, tag.start + 1, T_SPACE | T_SLASH | T_GT, false);
        RawAttributes { html, pos, end }
    }
}

impl<'a> Iterator for RawAttributes<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let all = self.html.as_bytes();
        let bytes = all.get(..self.end).unwrap_or_default();
        let mut i = tag_scan(bytes, self.pos, T_SPACE | T_SLASH, true);
        if i >= bytes.len() || bytes[i] == b'>' {
            self.pos = bytes.len();
            return None;
        }
        // A name may start with `=` (a parse error the tokenizer keeps in the name).
        let name_start = i;
        i = tag_scan(bytes, i + 1, T_SPACE | T_SLASH | T_GT | T_EQ, false);
        let name = self.html.get(name_start..i).unwrap_or("");
        i = tag_scan(bytes, i, T_SPACE, true);
        let mut value = "";
        if i < bytes.len() && bytes[i] == b'=' {
            i = tag_scan(bytes, i + 1, T_SPACE, true);
            match bytes.get(i) {
                Some(&quote) if quote == b'"' || quote == b'\'' => {
                    let start = i + 1;
                    let end = find_before(quote, all, start, self.end).unwrap_or(self.end);
                    value = self.html.get(start..end).unwrap_or("");
                    i = end + 1;
                }
                Some(&b) if b != b'>' => {
                    let start = i;
                    i = tag_scan(bytes, i, T_SPACE | T_GT, false);
                    value = self.html.get(start..i).unwrap_or("");
                }
                _ => {}
            }
        }
        self.pos = i;
        Some((name, value))
    }
}

/// The first `needle` in `bytes[from..limit]`, as an index of `bytes`. The search reads
/// past `limit`, up to 64 bytes from `from`, where `bytes` has them: most searches of the
/// pass end within a few bytes (the text between two tags, an attribute value), and
/// `memchr` takes its vectorised path only on a haystack of 32 bytes or more (on a shorter
/// one it is several times slower).
#[inline]
fn find_before(needle: u8, bytes: &[u8], from: usize, limit: usize) -> Option<usize> {
    let stop = limit.max(from + 64).min(bytes.len());
    let found = from + memchr::memchr(needle, bytes.get(from..stop)?)?;
    (found < limit).then_some(found)
}

/// The attributes the pass reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attr {
    Id,
    Class,
    Style,
    Hidden,
    AriaHidden,
    Role,
    Itemprop,
    Rel,
    Href,
    /// `src`, or where lazy loaders put the image (`data-src`, `data-original`, ...).
    ImageSource,
    /// `name` or `property` (of `<meta>`).
    MetaKey,
    Content,
    Type,
    Lang,
    Datetime,
}

impl Attr {
    /// The attribute an attribute name (any case) stands for, if the pass reads it.
    fn named(name: &str) -> Option<Attr> {
        let bytes = name.as_bytes();
        // Names are nearly always written in lowercase: copied only when they are not.
        let mut buffer = [0u8; 16];
        let lower = if bytes.iter().any(u8::is_ascii_uppercase) {
            // Longer names are none of those below.
            let lower = buffer.get_mut(..bytes.len())?;
            lower.copy_from_slice(bytes);
            lower.make_ascii_lowercase();
            &*lower
        } else {
            bytes
        };
        Some(match lower {
            b"id" => Attr::Id,
            b"class" => Attr::Class,
            b"style" => Attr::Style,
            b"hidden" => Attr::Hidden,
            b"aria-hidden" => Attr::AriaHidden,
            b"role" => Attr::Role,
            b"itemprop" => Attr::Itemprop,
            b"rel" => Attr::Rel,
            b"href" => Attr::Href,
            b"src" | b"data-src" | b"data-original" | b"data-lazy-src" | b"data-url" => {
                Attr::ImageSource
            }
            b"name" | b"property" => Attr::MetaKey,
            b"content" => Attr::Content,
            b"type" => Attr::Type,
            b"lang" => Attr::Lang,
            b"datetime" => Attr::Datetime,
            _ => return None,
        })
    }
}

/// `display:none` or `visibility:hidden` in a `style` value (any case and spacing), read
/// without allocating.
fn has_hiding_style(style: &str) -> bool {
    let bytes = style.as_bytes();
    let declares = |property: &[u8], value: &[u8]| {
        let mut from = 0;
        while let Some(i) = bytes[from..]
            .windows(property.len())
            .position(|w| w.eq_ignore_ascii_case(property))
        {
            let mut k = from + i + property.len();
            let skip_space = |k: &mut usize| {
                while bytes.get(*k).is_some_and(u8::is_ascii_whitespace) {
                    *k += 1;
                }
            };
            skip_space(&mut k);
            if bytes.get(k) == Some(&b':') {
                k += 1;
                skip_space(&mut k);
                if bytes
                    .get(k..k + value.len())
                    .is_some_and(|v| v.eq_ignore_ascii_case(value))
                {
                    return true;
                }
            }
            from = from + i + 1;
        }
        false
    };
    style.contains(':') && (declares(b"display", b"none") || declares(b"visibility", b"hidden"))
}

/// [`BYTE_CLASS`] of a character that is neither whitespace nor punctuation.
const WORD: u8 = 0;
/// [`BYTE_CLASS`] of punctuation ([`is_punct`]). Its value is 1: a run of `WORD` and `PUNCT`
/// bytes counts its punctuation by adding the classes up.
const PUNCT: u8 = 1;
/// [`BYTE_CLASS`] of whitespace (`char::is_whitespace`).
const SPACE: u8 = 2;
/// [`BYTE_CLASS`] of the bytes of non-ASCII characters: the character is decoded to be read.
const NON_ASCII: u8 = 3;

/// [`WORD`], [`PUNCT`], [`SPACE`] or [`NON_ASCII`] of each byte: the text loop's table.
const BYTE_CLASS: [u8; 256] = {
    let mut table = [NON_ASCII; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8 as char;
        table[b] = if c.is_whitespace() {
            SPACE
        } else if is_punct(c) {
            PUNCT
        } else {
            WORD
        };
        b += 1;
    }
    table
};

/// Sentence punctuation, ASCII and CJK: the "symbols" of text-and-symbol density.
pub const fn is_punct(c: char) -> bool {
    matches!(
        c,
        '.' | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | '"'
            | '\''
            | '('
            | ')'
            | '，'
            | '。'
            | '、'
            | '；'
            | '：'
            | '！'
            | '？'
            | '“'
            | '”'
            | '‘'
            | '’'
            | '（'
            | '）'
            | '《'
            | '》'
            | '「'
            | '」'
            | '…'
            | '—'
    )
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

    fn texts(p: &Page, tag: Tag) -> Vec<String> {
        p.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.tag == tag)
            .map(|(i, _)| p.node_text(i as u32).trim().to_string())
            .collect()
    }

    #[test]
    fn implied_paragraph_and_list_ends() {
        let p = scan("<body><p>one<p>two<div>three</div><ul><li>a<li>b</ul>");
        assert_eq!(texts(&p, Tag::P), ["one", "two"]);
        assert_eq!(texts(&p, Tag::Li), ["a", "b"]);
        assert_eq!(texts(&p, Tag::Div), ["three"]);
    }

    #[test]
    fn implied_link_ends_and_stray_end_tags() {
        let p =
            scan("<body><p>one <a href=a>x <a href=b>y</a> z</p><p>two</a> 2</p><div>3</p></div>");
        assert_eq!(texts(&p, Tag::A), ["x", "y"]);
        assert_eq!(texts(&p, Tag::P), ["one x y z", "two 2"]);
        assert_eq!(texts(&p, Tag::Div), ["3"]);
    }

    #[test]
    fn skipped_text_and_head() {
        let p = scan(
            "<html lang=en><head><title>T &amp; U</title><meta property='og:title' content='OG'>\
             <script type='application/ld+json'>{\"a\":1}</script><style>x{}</style></head>\
             <body>hello <script>var x;</script>world</body></html>",
        );
        assert_eq!(p.title, "T & U");
        assert_eq!(p.lang.as_deref(), Some("en"));
        assert_eq!(p.metas, [("og:title".to_string(), "OG".to_string())]);
        assert_eq!(p.json_ld, ["{\"a\":1}"]);
        assert_eq!(p.text.trim(), "hello world");
    }

    #[test]
    fn text_between_tags_skips_comments_and_stray_end_tags() {
        let p = scan("<!doctype html><body><p>a &amp; b<!-- <p>hidden</p> --> c</span> 1 < 2</p>");
        assert_eq!(texts(&p, Tag::P), ["a & b c 1 < 2"]);
        let p = scan(
            "<div>x<!--y-->z</q>w<?pi?>v<script>if (a</b) document.write('</div>')</script>u</div>",
        );
        assert_eq!(texts(&p, Tag::Div), ["xzwvu"]);
        // End tags close what they name; a stray inline end tag stops at a block.
        let p = scan("<div><b>bold</B> <i>it<p>para</i> more</p></span>after</div>");
        assert_eq!(texts(&p, Tag::P), ["para more"]);
        assert_eq!(texts(&p, Tag::Div), ["bold it\npara more\nafter"]);
    }

    #[test]
    fn blocks_ending_in_spaces_still_end_their_line() {
        let p = scan(
            "<body><div>　　吉林省人民政府　　　　</div><div>　　2022年1月27日　　</div><p>x</p>",
        );
        assert_eq!(p.text.trim(), "吉林省人民政府\n2022年1月27日\nx");
        // Text events keep their offsets: each block's text reads back whole.
        assert_eq!(texts(&p, Tag::Div), ["吉林省人民政府", "2022年1月27日"]);
    }

    /// Visible text as first written, a char at a time: what `push_visible` must write.
    /// Returns the non-space and punctuation characters of `raw`.
    fn push_visible_reference(
        text: &mut String,
        space_before: &mut bool,
        raw: &str,
        pre: bool,
    ) -> (u32, u32) {
        let decoded = entities::decode(raw);
        let (mut chars, mut punct, mut run) = (0, 0, 0);
        for (i, c) in decoded.char_indices() {
            if c.is_whitespace() {
                if run < i {
                    text.push_str(&decoded[run..i]);
                    *space_before = false;
                }
                run = i + c.len_utf8();
                if pre && c == '\n' {
                    text.push('\n');
                    *space_before = true;
                } else if !*space_before {
                    text.push(' ');
                    *space_before = true;
                }
            } else {
                chars += 1;
                punct += u32::from(is_punct(c));
            }
        }
        if run < decoded.len() {
            text.push_str(&decoded[run..]);
            *space_before = false;
        }
        (chars, punct)
    }

    #[test]
    fn visible_text_collapses_as_char_by_char() {
        const PIECES: &[&str] = &[
            "word", "a", " ", "  ", "\n", "\t", "\r\n  ", "\u{a0}", "\u{3000}", "中文", "，", "。",
            ".", ",", "!", "\"", "'", "(", "&amp;", "&nbsp;", "&#x20;", "é", "\u{b}", "\u{1c}",
        ];
        let mut next = crate::test_rng::xorshift();
        for _ in 0..2_000 {
            let mut s = Scan::default();
            s.page.nodes.push(scan("").nodes[0].clone());
            let (mut text, mut space_before) = (String::new(), false);
            let (mut chars, mut punct) = (0, 0);
            for _ in 0..next() % 6 + 1 {
                let raw: String = (0..next() % 8)
                    .map(|_| crate::test_rng::pick(&mut next, PIECES))
                    .collect();
                if raw.is_empty() {
                    continue;
                }
                let pre = next().is_multiple_of(4);
                let before = text.len();
                let (c, p) = push_visible_reference(&mut text, &mut space_before, &raw, pre);
                chars += c;
                punct += p;
                let events = s.page.events.len();
                s.push_visible(&raw, 0, pre);
                assert_eq!(s.page.text, text, "{raw:?} pre {pre}");
                assert_eq!(s.space_before, space_before, "{raw:?} pre {pre}");
                let event =
                    (text.len() > before).then_some(Event::Text(before as u32, text.len() as u32));
                assert_eq!(s.page.events.get(events).copied(), event, "{raw:?}");
            }
            assert_eq!(
                (s.page.nodes[0].chars, s.page.nodes[0].punct),
                (chars, punct)
            );
        }
    }

    /// The attributes `lol_html` itself reads from each start tag of `html`, by their
    /// source: what [`RawAttributes`] must agree with.
    fn lol_html_attributes(html: &str) -> Vec<Vec<(String, String)>> {
        let out = Rc::new(RefCell::new(Vec::new()));
        let sink = out.clone();
        let settings = Settings::new()
            .with_strict(false)
            .append_element_content_handler(element!("*", move |el: &mut Element| {
                let source = |l: Option<lol_html::html_content::SourceLocation>| {
                    l.and_then(|l| html.get(l.bytes()))
                        .unwrap_or("")
                        .to_string()
                };
                sink.borrow_mut().push(
                    el.attributes()
                        .iter()
                        .map(|a| {
                            (
                                source(a.name_source_location()),
                                source(a.value_source_location()),
                            )
                        })
                        .collect::<Vec<_>>(),
                );
                Ok(())
            }));
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        if rewriter.write(html.as_bytes()).is_ok() {
            let _ = rewriter.end();
        }
        let found = out.borrow().clone();
        found
    }

    #[test]
    fn attributes_read_as_lol_html_reads_them() {
        let names = [
            "class", "ID", "data-src", "=x", "a\"b", "x'", "hidden", "/", "href",
        ];
        let values = [
            "",
            "v",
            "two words",
            "a>b",
            "it's",
            "say \"hi\"",
            "/path/",
            "x=y",
            "&amp;",
        ];
        let spaces = ["", " ", "  ", "\n", "\t", "/", " / "];
        let mut next = crate::test_rng::xorshift();
        let mut pick = |n: usize| (next() % n as u64) as usize;
        for _ in 0..3_000 {
            let mut tag = String::from(["<div", "<IMG", "<a", "<p"][pick(4)]);
            for _ in 0..pick(4) {
                tag.push_str([" ", "\n", "  ", "/"][pick(4)]);
                tag.push_str(names[pick(names.len())]);
                let value = values[pick(values.len())];
                match pick(5) {
                    0 => {}
                    1 => tag.push_str(&format!(
                        "{}={}",
                        spaces[pick(2)],
                        value.replace(['"', '\'', '>', ' ', '\n'], "")
                    )),
                    2 => tag.push_str(&format!(
                        "={}\"{}\"",
                        spaces[pick(spaces.len() - 2)],
                        value.replace('"', "")
                    )),
                    3 => tag.push_str(&format!(" = '{}'", value.replace('\'', ""))),
                    _ => tag.push_str(&format!("=\"{}\"", value.replace('"', ""))),
                }
            }
            tag.push_str(spaces[pick(spaces.len())]);
            tag.push('>');
            let html = format!("{tag}text");
            let theirs = lol_html_attributes(&html);
            let theirs = theirs.first().expect("every generated tag is an element");
            let end = html.find("text").unwrap_or(html.len());
            let ours: Vec<(String, String)> = RawAttributes::of(&html, 0..end)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            assert_eq!(&ours, theirs, "{html:?}");
        }
    }

    #[test]
    fn tag_names_any_case() {
        let fnv = |s: &str| {
            s.bytes().fold(0x811c_9dc5u32, |h, b| {
                (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
            })
        };
        assert_eq!(
            tag_named("SCRIPT type=x>"),
            (Tag::Script, fnv("script"), Some("script"))
        );
        assert_eq!(tag_named("Div/>"), (Tag::Div, fnv("div"), None));
        assert_eq!(tag_named("xmp>"), (Tag::Other, fnv("xmp"), Some("xmp")));
        assert_eq!(
            tag_named("noembed\n"),
            (Tag::Iframe, fnv("noembed"), Some("noembed"))
        );
        assert_eq!(tag_named("frame>"), (Tag::Iframe, fnv("frame"), None));
        assert_eq!(tag_named("figcaption>").0, Tag::Figcaption);
        let long = "a-custom-element-name";
        assert_eq!(tag_named(long), (Tag::Other, fnv(long), None));
        assert_eq!(tag_named(""), (Tag::Other, fnv(""), None));
    }

    #[test]
    fn hint_cache_answers_as_classify() {
        let mut cache = HintCache::default();
        let strings: Vec<String> = (0..20_000)
            .map(|i| match i % 4 {
                0 => format!("post-{i} article-body "),
                1 => "sidebar widget ".to_string(),
                2 => format!("x{} ", "y".repeat(i % 300)),
                _ => format!("byline c{} ", i % 7),
            })
            .collect();
        for s in &strings {
            assert_eq!(cache.hint(s), hints::classify(s), "{s}");
        }
        // The string buffer was emptied on the way, and stays bounded.
        assert!(cache.strings.len() <= HINT_CACHE_BYTES);
    }

    #[test]
    fn attribute_names_any_case() {
        assert_eq!(Attr::named("class"), Some(Attr::Class));
        assert_eq!(Attr::named("CLASS"), Some(Attr::Class));
        assert_eq!(Attr::named("Data-Lazy-Src"), Some(Attr::ImageSource));
        assert_eq!(Attr::named("property"), Some(Attr::MetaKey));
        assert_eq!(Attr::named("data-analytics-TRACKING-ID"), None);
        assert_eq!(Attr::named("classes"), None);
        assert_eq!(Attr::named(""), None);
    }

    #[test]
    fn hiding_styles() {
        assert!(has_hiding_style("color:red; DISPLAY : None"));
        assert!(has_hiding_style("visibility:hidden"));
        assert!(!has_hiding_style("display:block; visibility: visible"));
        assert!(!has_hiding_style("displaynone"));
    }

    #[test]
    fn caps_hold_on_deep_pages() {
        let html = "<div>".repeat(MAX_DEPTH * 3) + "deep";
        let p = scan(&html);
        assert!(p.nodes.len() <= MAX_DEPTH + 1);
        assert!(p.text.contains("deep"));
    }
}
