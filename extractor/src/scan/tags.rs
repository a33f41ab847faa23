//! The element kinds the pass tells apart ([`Tag`]), what each kind is to the text (skipped,
//! block, heading) and to the implied-end-tag rules, and tag names read from the source.

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

    /// Elements that start a new line in the text: the blocks that close a
    /// `<p>`, and the document and table structure.
    pub fn is_block(self) -> bool {
        self.is_p_closing_block()
            || matches!(
                self,
                Tag::Root
                    | Tag::Html
                    | Tag::Body
                    | Tag::Br
                    | Tag::Thead
                    | Tag::Tbody
                    | Tag::Tfoot
                    | Tag::Tr
                    | Tag::Td
                    | Tag::Th
                    | Tag::Caption
            )
    }

    pub fn is_heading(self) -> bool {
        matches!(
            self,
            Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6
        )
    }

    /// The elements the HTML tree builder keeps in an open `<head>` (a `<link>` is
    /// [`Tag::Other`]): any other start tag is body content, and closes the head ("in
    /// head" insertion mode, a page that never writes `</head>` nor `<body>`).
    pub(super) fn stays_in_head(self) -> bool {
        matches!(
            self,
            Tag::Head
                | Tag::Title
                | Tag::Meta
                | Tag::Base
                | Tag::Script
                | Tag::Style
                | Tag::Noscript
                | Tag::Template
                | Tag::Other
        )
    }

    /// Elements that close an open `<p>` when they start (HTML "close a p element").
    pub(super) fn closes_p(self) -> bool {
        self.is_p_closing_block() || self == Tag::Dialog
    }

    /// The block elements that close an open `<p>` (all but `<dialog>`,
    /// which is no block in the text: its content is skipped).
    fn is_p_closing_block(self) -> bool {
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
        ) || self.is_heading()
    }

    /// Boundaries of the scopes the implied-end-tag rules search in (the HTML "default
    /// scope"). Not `<button>`: it bounds only the search for an open `<p>` ("button
    /// scope"), and an end tag of an element around it closes it (`<div><button>x</div>`:
    /// a button left open in a header must not swallow the page that follows, its content
    /// being skipped).
    pub(super) fn is_scope_boundary(self) -> bool {
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
                | Tag::Svg
                | Tag::Math
        )
    }
}

/// The number of [`Tag`] kinds.
pub(super) const TAG_KINDS: usize = Tag::Other as usize + 1;

/// The kind, name hash and raw-text name of the start tag at byte `at` of `html`.
pub(super) fn tag_at(html: &str, at: usize) -> (Tag, u32, Option<&'static str>) {
    tag_named(html.get(at + 1..).unwrap_or(""))
}

/// The name hash [`tag_named`] gives the (lowercase) tag name `name`: FNV-1a.
pub(super) const fn fnv_name(name: &[u8]) -> u32 {
    let mut hash = FNV_START;
    let mut i = 0;
    while i < name.len() {
        hash = fnv_step(hash, name[i]);
        i += 1;
    }
    hash
}

const FNV_START: u32 = 0x811c_9dc5;

const fn fnv_step(hash: u32, b: u8) -> u32 {
    (hash ^ b as u32).wrapping_mul(0x0100_0193)
}

/// The kind, name hash and raw-text name (for `script`, `style`, `title`, `textarea`, ...)
/// of the tag name `s` starts with, read without allocating (`DIV class=x>` is a `Div`).
pub(super) fn tag_named(s: &str) -> (Tag, u32, Option<&'static str>) {
    // The longest name with a kind of its own is 10 bytes (`figcaption`).
    let mut lower = [0u8; 12];
    let mut len = 0;
    let mut hash = FNV_START;
    for &b in s.as_bytes() {
        if b.is_ascii_whitespace() || b == b'/' || b == b'>' {
            break;
        }
        let b = b.to_ascii_lowercase();
        hash = fnv_step(hash, b);
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(fnv_name(b"text"), fnv("text"));
    }
}
