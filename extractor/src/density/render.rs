//! The chosen subtree written out: lines of text and their HTML (paragraphs, headings,
//! list items, images and links kept), the boilerplate lines dropped ([`super::lines`]), then
//! the [`Body`]'s text and HTML.

use url::Url;

use super::Body;
use crate::links;
use crate::scan::{flag, Event, Page, Tag};

/// One line of the body as rendered, before the line filters.
pub(super) struct Line {
    pub(super) text: String,
    /// Its HTML, without the enclosing block tag.
    pub(super) html: String,
    pub(super) tag: &'static str,
    /// Non-space characters, and those inside links.
    pub(super) chars: u32,
    pub(super) link_chars: u32,
}

/// Builds text lines and their HTML while walking a subtree.
#[derive(Default)]
pub(super) struct Renderer<'a> {
    base: Option<&'a Url>,
    /// Whether the HTML is written ([`Body::html`]), or only the text.
    html: bool,
    pub(super) body: Body,
    /// Finished lines, filtered and written into `body` by `finish`.
    pub(super) lines: Vec<Line>,
    line: String,
    line_html: String,
    /// Whether the current line holds an image.
    line_img: bool,
    /// Non-space characters of the current line, and those inside links.
    line_chars: u32,
    line_link_chars: u32,
    /// The innermost block element of the current line (its HTML tag).
    line_tag: Option<&'static str>,
    in_link: bool,
    in_list: bool,
}

impl<'a> Renderer<'a> {
    /// A renderer that resolves links and images against `base`, and writes the HTML
    /// too when `html`.
    pub(super) fn new(base: &'a Url, html: bool) -> Self {
        Renderer {
            base: Some(base),
            html,
            ..Renderer::default()
        }
    }

    /// Adds the subtree of `root`, leaving out the subtrees of nodes `keep` refuses.
    pub(super) fn subtree(&mut self, page: &Page, root: u32, keep: &impl Fn(u32) -> bool) {
        let Some(r) = page.nodes.get(root as usize) else {
            return;
        };
        let mut i = r.open as usize;
        let end = r.close as usize;
        while i <= end {
            match page.events[i] {
                Event::Open(n) => {
                    let node = &page.nodes[n as usize];
                    if n != root && !keep(n) {
                        i = node.close as usize + 1;
                        continue;
                    }
                    self.open(page, n);
                }
                Event::Close(n) => self.close(page, n),
                Event::Text(a, b) => {
                    if !page.text[a as usize..b as usize].trim().is_empty() {
                        let (lo, hi) = self.body.span.unwrap_or((a, b));
                        self.body.span = Some((lo.min(a), hi.max(b)));
                    }
                    self.text(&page.text[a as usize..b as usize])
                }
            }
            i += 1;
        }
        self.flush_line();
    }

    pub(super) fn finish(mut self) -> Body {
        self.flush_line();
        let lines = super::lines::filter(std::mem::take(&mut self.lines));
        // The body's text and HTML sized once for every line written (a newline before each
        // text; each line's tags, and room for a list tag before it), not grown line by line.
        let text_len: usize = lines.iter().map(|l| l.text.len() + 1).sum();
        self.body.text.reserve(text_len);
        if self.html {
            let html_len: usize = lines
                .iter()
                .map(|l| l.html.len() + 2 * l.tag.len() + "<></>".len() + "</ul>".len())
                .sum();
            self.body.html.reserve(html_len + "</ul>".len());
        }
        for line in lines {
            self.write(line);
        }
        if self.in_list {
            self.body.html.push_str("</ul>");
        }
        self.body
    }

    fn write(&mut self, line: Line) {
        if !line.text.is_empty() {
            if !self.body.text.is_empty() {
                self.body.text.push('\n');
            }
            self.body.text.push_str(&line.text);
        }
        if !self.html {
            return;
        }
        let tag = line.tag;
        if tag == "li" && !self.in_list {
            self.body.html.push_str("<ul>");
            self.in_list = true;
        } else if tag != "li" && self.in_list {
            self.body.html.push_str("</ul>");
            self.in_list = false;
        }
        self.body.html.push('<');
        self.body.html.push_str(tag);
        self.body.html.push('>');
        self.body.html.push_str(&line.html);
        self.body.html.push_str("</");
        self.body.html.push_str(tag);
        self.body.html.push('>');
    }

    fn open(&mut self, page: &Page, n: u32) {
        let node = &page.nodes[n as usize];
        if node.tag.is_block() {
            self.flush_line();
            self.line_tag = Some(html_tag(node.tag));
        }
        match node.tag {
            Tag::A if node.flags & flag::LINK != 0 && !self.in_link => {
                if let Some(u) = self.resolve(page, node.url) {
                    self.url_tag("<a href=\"", &u);
                    self.in_link = true;
                }
            }
            Tag::Img => {
                if let Some(u) = self.resolve(page, node.url) {
                    self.url_tag("<img src=\"", &u);
                    self.line_img = true;
                    if !self.body.images.contains(&u) {
                        self.body.images.push(u);
                    }
                }
            }
            _ => {}
        }
    }

    /// Writes a tag whose one attribute is the URL `u` (`open` up to its opening quote)
    /// into the line's HTML, when the HTML is written.
    fn url_tag(&mut self, open: &str, u: &str) {
        if self.html {
            self.line_html.push_str(open);
            escape_into(&mut self.line_html, u);
            self.line_html.push_str("\">");
        }
    }

    fn close(&mut self, page: &Page, n: u32) {
        let node = &page.nodes[n as usize];
        if node.tag == Tag::A && node.flags & flag::LINK != 0 {
            self.end_link();
        }
        if node.tag.is_block() {
            self.flush_line();
        }
    }

    fn text(&mut self, t: &str) {
        if self.line.is_empty() && t.trim().is_empty() {
            return;
        }
        self.line.push_str(t);
        if self.html {
            escape_into(&mut self.line_html, t);
        }
        let chars = non_space_chars(t);
        self.line_chars += chars;
        if self.in_link {
            self.line_link_chars += chars;
        }
    }

    fn resolve(&self, page: &Page, url: u32) -> Option<String> {
        let raw = page.url(url)?;
        links::resolve_to_string(self.base?, raw)
    }

    /// Closes the link the line is in, if it is in one.
    fn end_link(&mut self) {
        if self.in_link {
            if self.html {
                self.line_html.push_str("</a>");
            }
            self.in_link = false;
        }
    }

    fn flush_line(&mut self) {
        self.end_link();
        let text = self.line.trim();
        if !text.is_empty() || self.line_img {
            self.lines.push(Line {
                text: text.to_string(),
                html: self.line_html.trim().to_string(),
                tag: self.line_tag.unwrap_or("p"),
                chars: self.line_chars,
                link_chars: self.line_link_chars,
            });
        }
        self.line_chars = 0;
        self.line_link_chars = 0;
        self.line.clear();
        self.line_html.clear();
        self.line_img = false;
    }
}

/// The tag a block element is written as in `body_html`.
fn html_tag(tag: Tag) -> &'static str {
    match tag {
        Tag::H1 | Tag::H2 => "h2",
        Tag::H3 => "h3",
        Tag::H4 | Tag::H5 | Tag::H6 => "h4",
        Tag::Li => "li",
        Tag::Blockquote => "blockquote",
        Tag::Pre => "pre",
        _ => "p",
    }
}

/// Appends `s` HTML-escaped (`&`, `<`, `>`, `"`): the runs between those copied whole.
pub(super) fn escape_into(out: &mut String, s: &str) {
    // Most text has nothing to escape: two vectorised searches say so.
    let bytes = s.as_bytes();
    if memchr::memchr3(b'&', b'<', b'>', bytes).is_none() && memchr::memchr(b'"', bytes).is_none() {
        out.push_str(s);
        return;
    }
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let escaped = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        out.push_str(escaped);
        from = i + 1;
    }
    out.push_str(&s[from..]);
}

/// Characters of `s` that are not whitespace (`char::is_whitespace`), without decoding
/// them: the bytes that start a character (all but the continuation bytes 0x80..=0xBF) and
/// are no ASCII whitespace, less the few whitespace characters beyond ASCII. The bytes are
/// counted as sums of 0s and 1s in a byte per block of 255 (it cannot overflow), which the
/// compiler vectorises 16 or 32 bytes at a time.
fn non_space_chars(s: &str) -> u32 {
    let starts: usize = s
        .as_bytes()
        .chunks(255)
        .map(|block| {
            let n = block.iter().fold(0u8, |n, &b| {
                let starts_char = (b as i8) >= -0x40;
                let ascii_space = b == b' ' || b.wrapping_sub(b'\t') <= b'\r' - b'\t';
                n + u8::from(starts_char && !ascii_space)
            });
            usize::from(n)
        })
        .sum();
    (starts - wide_spaces(s)) as u32
}

/// Whitespace characters of `s` beyond ASCII. All of them (U+0085, U+00A0, U+1680,
/// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) start with one of the lead bytes
/// 0xC2, 0xE1, 0xE2 or 0xE3: only the characters at those bytes are decoded.
fn wide_spaces(s: &str) -> usize {
    let bytes = s.as_bytes();
    let is_space_at = |i: usize| {
        s.get(i..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(char::is_whitespace)
    };
    let common = memchr::memchr3_iter(0xC2, 0xE2, 0xE3, bytes)
        .filter(|&i| is_space_at(i))
        .count();
    let ogham = memchr::memchr_iter(0xE1, bytes)
        .filter(|&i| is_space_at(i))
        .count();
    common + ogham
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_counting() {
        let mut out = String::from("x");
        escape_into(&mut out, "a<b> & \"c\" é&&");
        assert_eq!(out, "xa&lt;b&gt; &amp; &quot;c&quot; é&amp;&amp;");
        for s in [
            "",
            " a\tb\x0b\x0c\r\n c ",
            "\u{3000}中 文\u{a0}x",
            "\x1c\x1f",
        ] {
            let want = s.chars().filter(|c| !c.is_whitespace()).count() as u32;
            assert_eq!(non_space_chars(s), want, "{s:?}");
        }
    }

    #[test]
    fn non_space_chars_agrees_with_char_is_whitespace() {
        // Every whitespace character, its neighbours, ASCII, CJK and 4-byte characters.
        let alphabet: Vec<char> =
            "\t\n\x0b\x0c\r \x1c\x1f\u{84}\u{85}\u{86}\u{a0}\u{a1}\u{167f}\u{1680}\
             \u{1681}\u{1fff}\u{2000}\u{2005}\u{200a}\u{200b}\u{2027}\u{2028}\u{2029}\u{202a}\
             \u{202f}\u{205f}\u{2060}\u{2fff}\u{3000}\u{3001}a.é中“”\u{1f600}"
                .chars()
                .collect();
        let mut next = crate::test_rng::sequence();
        for _ in 0..2000 {
            let s = crate::test_rng::string(&mut next, &alphabet, 600);
            let want = s.chars().filter(|c| !c.is_whitespace()).count() as u32;
            assert_eq!(non_space_chars(&s), want, "{s:?}");
        }
    }
}
