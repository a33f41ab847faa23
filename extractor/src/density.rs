//! The body: which subtree holds the article, and its paragraphs in order.

use url::Url;

use crate::links;
use crate::scan::{flag, Event, Page, Tag};

/// The article body as text, HTML and images.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Body {
    pub text: String,
    pub html: String,
    pub images: Vec<String>,
}

/// Finds and renders the body of `page`.
pub fn body(page: &Page, base: &Url) -> Body {
    let root = page
        .nodes
        .iter()
        .position(|n| n.tag == Tag::Body)
        .unwrap_or(0) as u32;
    render(page, root, base, |n| {
        page.nodes[n as usize].flags & (flag::SKIPPED | flag::CHROME) == 0
    })
}

/// Renders the subtree of `root`, leaving out the subtrees of nodes `keep` refuses.
pub fn render(page: &Page, root: u32, base: &Url, keep: impl Fn(u32) -> bool) -> Body {
    let mut out = Renderer {
        base: Some(base),
        ..Renderer::default()
    };
    let Some(r) = page.nodes.get(root as usize) else {
        return Body::default();
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
                out.open(page, n);
            }
            Event::Close(n) => out.close(page, n),
            Event::Text(a, b) => out.text(&page.text[a as usize..b as usize]),
        }
        i += 1;
    }
    out.flush_line();
    if out.in_list {
        out.body.html.push_str("</ul>");
    }
    out.body
}

/// Builds text lines and their HTML while walking a subtree.
#[derive(Default)]
struct Renderer<'a> {
    base: Option<&'a Url>,
    body: Body,
    line: String,
    line_html: String,
    /// The innermost block element of the current line (its HTML tag).
    line_tag: Option<&'static str>,
    in_link: bool,
    in_list: bool,
}

impl<'a> Renderer<'a> {
    fn open(&mut self, page: &Page, n: u32) {
        let node = &page.nodes[n as usize];
        if node.tag.is_block() {
            self.flush_line();
            self.line_tag = Some(html_tag(node.tag));
        }
        match node.tag {
            Tag::A if node.flags & flag::LINK != 0 && !self.in_link => {
                if let Some(u) = self.resolve(page, node.url) {
                    self.line_html.push_str("<a href=\"");
                    escape_into(&mut self.line_html, &u);
                    self.line_html.push_str("\">");
                    self.in_link = true;
                }
            }
            Tag::Img => {
                if let Some(u) = self.resolve(page, node.url) {
                    self.line_html.push_str("<img src=\"");
                    escape_into(&mut self.line_html, &u);
                    self.line_html.push_str("\">");
                    if !self.body.images.contains(&u) {
                        self.body.images.push(u);
                    }
                }
            }
            _ => {}
        }
    }

    fn close(&mut self, page: &Page, n: u32) {
        let node = &page.nodes[n as usize];
        if node.tag == Tag::A && self.in_link && node.flags & flag::LINK != 0 {
            self.line_html.push_str("</a>");
            self.in_link = false;
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
        escape_into(&mut self.line_html, t);
    }

    fn resolve(&self, page: &Page, url: u32) -> Option<String> {
        let raw = page.urls.get(url as usize)?;
        links::resolve(self.base?, raw).map(String::from)
    }

    fn flush_line(&mut self) {
        if self.in_link {
            self.line_html.push_str("</a>");
            self.in_link = false;
        }
        let text = self.line.trim();
        let has_img = self.line_html.contains("<img");
        if !text.is_empty() || has_img {
            let tag = self.line_tag.unwrap_or("p");
            if tag == "li" && !self.in_list {
                self.body.html.push_str("<ul>");
                self.in_list = true;
            } else if tag != "li" && self.in_list {
                self.body.html.push_str("</ul>");
                self.in_list = false;
            }
            if !text.is_empty() {
                if !self.body.text.is_empty() {
                    self.body.text.push('\n');
                }
                self.body.text.push_str(text);
            }
            self.body.html.push('<');
            self.body.html.push_str(tag);
            self.body.html.push('>');
            self.body.html.push_str(self.line_html.trim());
            self.body.html.push_str("</");
            self.body.html.push_str(tag);
            self.body.html.push('>');
        }
        self.line.clear();
        self.line_html.clear();
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

fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}
