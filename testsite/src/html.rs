//! HTML templates of the site. Every template records the hrefs it writes,
//! so the generated `PageSpec::links` are exactly the links in the page.
//!
//! Two article templates exist on purpose: the "Daily Ledger" news template
//! (articles, copies, edits) and the "Morning Courier" template (mirrors), so
//! a mirror carries the same body in different boilerplate.

use crate::site::PORT_PLACEHOLDER;

/// An `<a>` to write: where it points and its text.
#[derive(Debug, Clone)]
pub struct LinkItem {
    pub href: String,
    pub text: String,
}

impl LinkItem {
    pub fn new(href: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            href: href.into(),
            text: text.into(),
        }
    }
}

/// Builds an HTML document and remembers every href written into it.
#[derive(Debug, Default)]
pub struct HtmlWriter {
    html: String,
    links: Vec<String>,
}

impl HtmlWriter {
    pub fn raw(&mut self, markup: &str) -> &mut Self {
        self.html.push_str(markup);
        self
    }

    pub fn text(&mut self, text: &str) -> &mut Self {
        self.html.push_str(&escape_html(text));
        self
    }

    /// `<tag class="...">text</tag>` with the text escaped.
    pub fn element(&mut self, tag: &str, class: &str, text: &str) -> &mut Self {
        if class.is_empty() {
            self.html.push_str(&format!("<{tag}>"));
        } else {
            self.html.push_str(&format!("<{tag} class=\"{class}\">"));
        }
        self.text(text);
        self.html.push_str(&format!("</{tag}>"));
        self
    }

    pub fn link(&mut self, href: &str, text: &str) -> &mut Self {
        self.html.push_str(&format!(
            "<a href=\"{}\">{}</a>",
            escape_html(href),
            escape_html(text)
        ));
        self.links.push(href.to_string());
        self
    }

    /// `<p>text</p>` and a line break for every paragraph.
    pub fn paragraphs(&mut self, paragraphs: &[String]) -> &mut Self {
        for paragraph in paragraphs {
            self.element("p", "", paragraph).raw("\n");
        }
        self
    }

    /// `<li><a href=...>text</a></li>` for every item.
    pub fn link_list(&mut self, list_tag: &str, class: &str, items: &[LinkItem]) -> &mut Self {
        self.raw(&format!("<{list_tag} class=\"{class}\">\n"));
        for item in items {
            self.raw("<li>").link(&item.href, &item.text).raw("</li>\n");
        }
        self.raw(&format!("</{list_tag}>\n"))
    }

    pub fn finish(self) -> (String, Vec<String>) {
        (self.html, self.links)
    }
}

/// Escapes text for element content and double-quoted attributes.
pub fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// What an article template needs to know.
#[derive(Debug, Clone)]
pub struct ArticleView<'a> {
    /// The article's own path, used in share links.
    pub path: &'a str,
    pub title: &'a str,
    pub author: &'a str,
    pub date_display: &'a str,
    pub date_iso: &'a str,
    pub paragraphs: &'a [String],
    /// Sidebar "Related" links (various href forms: relative, query, fragment, other host).
    pub related: &'a [LinkItem],
    /// Sidebar "Most read" links.
    pub most_read: &'a [LinkItem],
}

/// Navigation sections of the Daily Ledger: (list page, section name).
fn ledger_sections(list_pages: usize) -> Vec<LinkItem> {
    let names = [
        "World", "Business", "Science", "Culture", "Sport", "Opinion",
    ];
    let mut items = vec![LinkItem::new("/", "Home")];
    for (number, name) in (1..list_pages).zip(names) {
        items.push(LinkItem::new(format!("/list/{number}"), name));
    }
    items
}

/// The Daily Ledger article page (`/article/N`, `/copy/N`, `/edit/N`).
pub fn news_article(view: &ArticleView, list_pages: usize) -> (String, Vec<String>) {
    let mut page = HtmlWriter::default();
    page.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
        .text(view.title)
        .raw(" | The Daily Ledger</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .raw("<meta name=\"description\" content=\"")
        .text(view.paragraphs.first().map(String::as_str).unwrap_or(""))
        .raw("\">\n<style>body{font-family:Georgia,serif}.sidebar{float:right;width:30%}</style>\n")
        .raw("<script>window.dataLayer = window.dataLayer || []; function track(e){ dataLayer.push(e); }</script>\n")
        .raw("</head>\n<body>\n<header class=\"site-header\">\n<div class=\"logo\">")
        .link("/", "The Daily Ledger")
        .raw("</div>\n<nav class=\"main-nav\">\n")
        .link_list("ul", "nav-links", &ledger_sections(list_pages))
        .raw("</nav>\n<form class=\"search\" action=\"/search\"><input name=\"q\" placeholder=\"Search\"></form>\n</header>\n")
        .raw("<div class=\"share-bar\">Share this story: ")
        .link(&format!("http://outside.invalid/share?u={}", view.path), "Share")
        .raw(" ")
        .link("mailto:tips@outside.invalid", "Email")
        .raw(" ")
        .link("javascript:window.print()", "Print")
        .raw("</div>\n<main class=\"layout\">\n<article class=\"story\">\n")
        .element("h1", "headline", view.title)
        .raw("\n<p class=\"byline\">By <span class=\"author\">")
        .text(view.author)
        .raw("</span> &middot; <time datetime=\"")
        .raw(view.date_iso)
        .raw("\">")
        .text(view.date_display)
        .raw("</time></p>\n<div class=\"content\">\n")
        .paragraphs(view.paragraphs)
        .raw("</div>\n<div class=\"tags\">Filed under: ")
        .link("/list/1", "News")
        .raw(" ")
        .link("/#top", "Top stories")
        .raw("</div>\n</article>\n<aside class=\"sidebar\">\n<h2>Related</h2>\n")
        .link_list("ul", "related", view.related)
        .raw("<h2>Most read</h2>\n")
        .link_list("ol", "most-read", view.most_read)
        .raw("<div class=\"ad\">Advertisement</div>\n<div class=\"newsletter\">Get the morning briefing in your inbox. Sign up now.</div>\n</aside>\n</main>\n")
        .raw("<footer class=\"site-footer\">\n<p>&copy; 2024 The Daily Ledger. All rights reserved.</p>\n<p>")
        .link("/about", "About us")
        .raw(" | ")
        .link("http://outside.invalid/careers", "Careers")
        .raw(" | ")
        .link(&format!("http://localhost:{PORT_PLACEHOLDER}/about"), "Contact")
        .raw("</p>\n</footer>\n</body>\n</html>\n");
    page.finish()
}

/// The Morning Courier article page (`/mirror/N`): same title, byline and
/// body as the original, entirely different boilerplate and class names.
pub fn mirror_article(view: &ArticleView) -> (String, Vec<String>) {
    let mut page = HtmlWriter::default();
    page.raw("<!doctype html>\n<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n<title>")
        .text(view.title)
        .raw(" - Morning Courier</title>\n<link rel=\"stylesheet\" href=\"/assets/courier.css\">\n</head>\n<body class=\"courier\">\n<div id=\"wrapper\">\n<div class=\"masthead\">\n<span class=\"brand\">Morning Courier</span>\n")
        .link_list(
            "ul",
            "menu",
            &[
                LinkItem::new("/", "Front page"),
                LinkItem::new("/about", "Who we are"),
                LinkItem::new("http://outside.invalid/subscribe", "Subscribe"),
            ],
        )
        .raw("</div>\n<div class=\"columns\">\n<section class=\"story\">\n")
        .element("h2", "story-title", view.title)
        .raw("\n<div class=\"meta\">Written by ")
        .text(view.author)
        .raw(" on ")
        .text(view.date_display)
        .raw("</div>\n<div class=\"story-body\">\n")
        .paragraphs(view.paragraphs)
        .raw("</div>\n</section>\n<aside class=\"more-stories\">\n<h3>More stories</h3>\n")
        .link_list("ol", "more", view.most_read)
        .raw("<p class=\"promo\">Support independent journalism: become a member today.</p>\n</aside>\n</div>\n<div class=\"site-info\">Copyright 2024 Morning Courier Media Group &middot; ")
        .link("http://outside.invalid/privacy", "Privacy")
        .raw(" &middot; ")
        .link("http://outside.invalid/terms", "Terms")
        .raw("</div>\n</div>\n</body>\n</html>\n");
    page.finish()
}

/// What the Chinese article template needs to know.
#[derive(Debug, Clone)]
pub struct ChineseArticleView<'a> {
    pub title: &'a str,
    pub author: &'a str,
    pub date_display: &'a str,
    pub paragraphs: &'a [String],
    pub related: &'a [LinkItem],
    /// The charset written in `<meta charset>`; `None` writes no declaration.
    pub meta_charset: Option<&'a str>,
}

/// A Chinese news page (`/zh/N` and the `/lie/...` pages). Returned as a
/// Rust string; the caller encodes it in the page's true encoding.
pub fn chinese_article(view: &ChineseArticleView) -> (String, Vec<String>) {
    let mut page = HtmlWriter::default();
    page.raw("<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n");
    if let Some(charset) = view.meta_charset {
        page.raw(&format!("<meta charset=\"{charset}\">\n"));
    }
    page.raw("<title>")
        .text(view.title)
        .raw("_新闻中心_环球日报</title>\n</head>\n<body>\n<div class=\"header\">\n<div class=\"logo\">")
        .link("/", "环球日报")
        .raw("</div>\n")
        .link_list(
            "ul",
            "nav",
            &[
                LinkItem::new("/", "首页"),
                LinkItem::new("/list/1", "国内"),
                LinkItem::new("/list/2", "国际"),
                LinkItem::new("http://outside.invalid/app", "客户端"),
            ],
        )
        .raw("</div>\n<div class=\"main\">\n<div class=\"article\">\n")
        .element("h1", "title", view.title)
        .raw("\n<div class=\"info\"><span class=\"author\">作者：")
        .text(view.author)
        .raw("</span> <span class=\"time\">")
        .text(view.date_display)
        .raw("</span> <span class=\"source\">来源：环球日报</span></div>\n<div class=\"content\">\n")
        .paragraphs(view.paragraphs)
        .raw("</div>\n<div class=\"editor\">（责任编辑：")
        .text(view.author)
        .raw("）</div>\n</div>\n<div class=\"side\">\n<h3>相关新闻</h3>\n")
        .link_list("ul", "related", view.related)
        .raw(
            "</div>\n</div>\n<div class=\"footer\">\n<p>版权所有 环球日报社 未经授权禁止转载</p>\n",
        )
        .link("mailto:editor@outside.invalid", "联系我们")
        .raw("\n</div>\n</body>\n</html>\n");
    page.finish()
}

/// What an index page (`/`, `/list/N`) needs to know.
#[derive(Debug, Clone)]
pub struct IndexView<'a> {
    pub title: &'a str,
    pub list_pages: usize,
    /// The headline links: articles and all other kinds of pages.
    pub headlines: &'a [LinkItem],
    /// Links to the next level of list pages.
    pub sections: &'a [LinkItem],
    pub previous: Option<LinkItem>,
    pub next: Option<LinkItem>,
    /// Links only the root shows (hostile endpoints when asked for).
    pub extra: &'a [LinkItem],
}

/// The Daily Ledger front page and list pages.
pub fn index_page(view: &IndexView) -> (String, Vec<String>) {
    let mut page = HtmlWriter::default();
    page.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
        .text(view.title)
        .raw(" | The Daily Ledger</title>\n</head>\n<body>\n<a id=\"top\"></a>\n<header class=\"site-header\">\n<div class=\"logo\">")
        .link("/", "The Daily Ledger")
        .raw("</div>\n<nav class=\"main-nav\">\n")
        .link_list("ul", "nav-links", &ledger_sections(view.list_pages))
        .raw("</nav>\n</header>\n<main>\n")
        .element("h1", "", view.title)
        .raw("\n<p class=\"sort\">Sort: ")
        .link("?sort=latest", "Latest")
        .raw(" ")
        .link("#headlines", "Jump to headlines")
        .raw("</p>\n<section id=\"headlines\">\n")
        .link_list("ul", "headlines", view.headlines)
        .raw("</section>\n");
    if !view.sections.is_empty() {
        page.raw("<section class=\"sections\">\n<h2>More sections</h2>\n")
            .link_list("ul", "section-links", view.sections)
            .raw("</section>\n");
    }
    if !view.extra.is_empty() {
        page.raw("<section class=\"lab\">\n<h2>Experimental</h2>\n")
            .link_list("ul", "lab-links", view.extra)
            .raw("</section>\n");
    }
    page.raw("<div class=\"pagination\">");
    if let Some(previous) = &view.previous {
        page.link(&previous.href, &previous.text).raw(" ");
    }
    if let Some(next) = &view.next {
        page.link(&next.href, &next.text);
    }
    page.raw("</div>\n</main>\n<footer class=\"site-footer\">\n<p>&copy; 2024 The Daily Ledger.</p>\n<p>")
        .link("/about", "About us")
        .raw(" | ")
        .link(&format!("http://localhost:{PORT_PLACEHOLDER}/"), "Mirror site")
        .raw(" | ")
        .link("http://outside.invalid/", "Partner network")
        .raw(" | ")
        .link("mailto:news@outside.invalid", "Send us news")
        .raw(" | ")
        .link("javascript:void(0)", "Cookie settings")
        .raw("</p>\n</footer>\n</body>\n</html>\n");
    page.finish()
}

/// A small page with a heading, some paragraphs and links (about, private,
/// error pages).
pub fn simple_page(
    title: &str,
    paragraphs: &[String],
    links: &[LinkItem],
) -> (String, Vec<String>) {
    let mut page = HtmlWriter::default();
    page.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
        .text(title)
        .raw("</title>\n</head>\n<body>\n")
        .element("h1", "", title)
        .raw("\n<div class=\"content\">\n")
        .paragraphs(paragraphs)
        .raw("</div>\n");
    if !links.is_empty() {
        page.link_list("ul", "links", links);
    }
    page.raw("</body>\n</html>\n");
    page.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_records_links_and_escapes_text() {
        let mut page = HtmlWriter::default();
        page.element("p", "", "a < b & \"c\"").link("/x?y=1", "X");
        let (html, links) = page.finish();
        assert_eq!(
            html,
            "<p>a &lt; b &amp; &quot;c&quot;</p><a href=\"/x?y=1\">X</a>"
        );
        assert_eq!(links, vec!["/x?y=1"]);
    }
}
