//! Article extraction from a decoded (UTF-8) HTML page, and the extractor stage.
//!
//! This crate owns the extraction logic of the extractor stage: [`extract`] reads the page
//! once with `lol_html` and returns an [`Article`]: title, publish time, author, body text
//! (and HTML, when asked: [`extract_with`]), images, outlinks ([`Link`], from the `link` leaf crate), language and site name.
//! Everything but [`stage`] is pure: it knows nothing about queues, Redis or HTTP, and the
//! compiler holds it to that: without the default `worker` feature
//! (`--no-default-features`) the crate depends on no broker, store, HTTP client or runtime,
//! only on the `link` and `script` leaf crates, `lol_html`, `url`, a few text crates and
//! `thiserror`.
//! `crawler extract`, the fuzz target and the extraction bench use it so.
//!
//! The stage ([`stage`], feature `worker`, run by `main.rs` or by `crawler run`) consumes a
//! `pipeline::Page` from the `extract` queue, and produces a `pipeline::Document` on the
//! `contentseen` queue and, below the crawl's depth limit, one `pipeline::UrlBatch` of the
//! page's outlinks (depth + 1) on the `frontier` queue. The page's raw HTTP exchange, when
//! the fetcher kept one for WARC output (`pipeline::Page::raw`), goes on in the document
//! unchanged. Redis keys it touches, through `pipeline::once`: the page's URL record
//! `{ns}:url:{u<T>}:<S>` (its section of message ids, so a redelivered page is counted
//! once) and the `extracted` counter of the stats shard in that slot; it reads
//! `{ns}:crawlctl` (`pipeline::crawls`: a cancelled crawl's pages are dropped).
//!
//! Not here: decoding the page's bytes (the fetcher does, by the `charset` crate's vote),
//! deciding whether the text was seen before (contentseen), the evaluation sets and metric
//! (the `evaluation` crate, which production code never depends on).
//!
//! The map:
//! - [`scan`]: the single streaming pass. A compact record per element (tag, id/class hint,
//!   depth, parent, text and punctuation counts), the visible text once, and an event log that
//!   places each element's open and close in the text. Caps ([`scan::MAX_NODES`],
//!   [`scan::MAX_TEXT_BYTES`], ...) bound memory on pathological pages.
//!   [`extract`] hands the page's buffers back ([`scan::recycle`]) for the next page read on
//!   the same thread.
//! - [`hints`]: what `id` and `class` say (content, boilerplate, byline, date line).
//! - [`density`]: body scoring over the records (text and symbol density, link density,
//!   class hints) and the paragraphs of the winning subtree.
//! - [`title`], [`published`], [`author`]: metadata from meta tags, JSON-LD and text.
//! - [`signature`]: the issuer and signing date that close an official document.
//! - [`links`]: outlinks and URL resolution.
//! - [`entities`]: HTML character references (`lol_html` leaves them in the text), decoded
//!   by `htmlize` by the WHATWG rules for text and for attribute values.
//! - `words`: the word lists of the rules above, kept as data (`src/words/*.txt`).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod author;
pub mod density;
pub mod entities;
pub mod hints;
pub mod links;
pub mod published;
pub mod scan;
pub mod signature;
/// The worker stage (I/O glue): a `Page` in, a `Document` and the page's outlinks out.
#[cfg(feature = "worker")]
pub mod stage;
#[cfg(test)]
mod test_rng;
pub mod title;
mod words;

pub use link::Link;
use url::Url;

/// What extraction finds on a page.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Article {
    /// The headline, without the site name suffix.
    pub title: Option<String>,
    /// RFC 3339; an offset only when the page gives one (else e.g. "2019-02-20T02:26:00").
    /// When the page gives only a year and month, `YYYY-MM` (RFC 3339 cannot say that, and
    /// a made-up day would be wrong).
    pub published: Option<String>,
    /// The author as one value: the names of [`Article::authors`], Han names joined by
    /// spaces, others by `", "`.
    pub author: Option<String>,
    /// Each author's name, in the page's order (empty when no candidate passed the checks).
    pub authors: Vec<String>,
    /// The body text, paragraphs separated by "\n".
    pub text: String,
    /// The body's HTML with paragraphs, images and links kept, when asked for
    /// ([`Parts::body_html`]): `crawler extract` shows it, the stage has no use for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_html: Option<String>,
    /// Images of the body, absolute URLs.
    pub images: Vec<String>,
    /// Every `<a href>` on the page (http/https, resolved, deduplicated by URL), as the
    /// [`Link`]s the outlink `pipeline::UrlBatch` carries.
    pub outlinks: Vec<Link>,
    /// `<html lang>`.
    pub lang: Option<String>,
    /// `og:site_name`.
    pub site_name: Option<String>,
    /// Whether the page has an article: false for an empty extraction, a listing (the body
    /// mostly link text) or text found only in page chrome and boilerplate blocks.
    pub is_article: bool,
}

/// What [`extract_with`] builds beyond the text and the metadata.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Parts {
    /// The body's HTML ([`Article::body_html`]).
    pub body_html: bool,
}

/// Extracts the article of `html`, a page fetched from `page_url`: its text and
/// metadata, without the body's HTML. Never panics.
pub fn extract(html: &str, page_url: &Url) -> Article {
    extract_with(html, page_url, Parts::default())
}

/// [`extract`], with the `parts` asked for. Never panics.
pub fn extract_with(html: &str, page_url: &Url, parts: Parts) -> Article {
    let page = scan::scan(html);
    let base = links::base_url(&page, page_url);
    let body = density::body(&page, &base, parts.body_html);
    let published = published::published(&page, body.span);
    let signed = signature::signature(&page, body.span);
    let site_name = meta(&page, &["og:site_name", "application-name"]).map(str::to_string);
    let date_pos = published.as_ref().and_then(|p| p.pos);
    let is_article = body.article;
    let author = author::author(
        &page,
        body.span,
        &body.text,
        date_pos,
        signed.as_ref().map(|s| s.issuer.clone()),
    );
    let article = Article {
        title: title::title(&page, site_name.as_deref(), page_url.host_str()),
        // A signed document is dated by its signature, not by the day the site posted it.
        published: signed
            .as_ref()
            .map(|s| s.date.clone())
            .or_else(|| published.map(|p| p.value)),
        authors: author
            .as_deref()
            .map(author::split_names)
            .unwrap_or_default(),
        author,
        text: body.text,
        body_html: parts.body_html.then_some(body.html),
        images: body.images,
        outlinks: links::outlinks(&page, &base),
        lang: page.lang.clone(),
        site_name,
        is_article,
    };
    scan::recycle(page);
    article
}

/// The first non-empty `<meta>` content among `keys` (in the order of `keys`).
pub(crate) fn meta<'a>(page: &'a scan::Page, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| {
        page.metas
            .iter()
            .find(|(name, content)| name == k && !content.trim().is_empty())
            .map(|(_, c)| c.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://news.example.com/2019/02/story.html").unwrap()
    }

    #[test]
    fn title_body_and_outlinks() {
        let html = r#"<!doctype html><html lang="en"><head><title>Rain in Spain | Example News</title>
            <meta property="og:title" content="Rain in Spain">
            <meta property="og:site_name" content="Example News"></head>
            <body><nav><a href="/">Home</a> <a href="/world">World</a></nav>
            <header>Example News header</header>
            <article><h1>Rain in Spain</h1>
            <p>The rain in Spain falls mainly on the plain, forecasters said on Tuesday.</p>
            <p>Farmers welcomed it. <a href="https://other.org/farm#x" rel="nofollow"> Read  about farms </a></p>
            <script>var tracking = 1;</script><style>p { color: red }</style></article>
            <footer>Copyright 2019</footer></body></html>"#;
        let a = extract(html, &url());
        assert_eq!(a.title.as_deref(), Some("Rain in Spain"));
        assert_eq!(a.site_name.as_deref(), Some("Example News"));
        assert_eq!(a.lang.as_deref(), Some("en"));
        assert!(a
            .text
            .contains("The rain in Spain falls mainly on the plain"));
        assert!(a.text.contains("Farmers welcomed it."));
        assert!(!a.text.contains("tracking"));
        assert!(!a.text.contains("color"));
        assert!(!a.text.contains("Home"));
        assert!(!a.text.contains("Copyright"));
        assert_eq!(a.outlinks.len(), 3);
        assert_eq!(a.outlinks[0].url, "https://news.example.com/");
        assert_eq!(a.outlinks[2].url, "https://other.org/farm");
        assert!(a.outlinks[2].nofollow);
        assert_eq!(a.outlinks[2].anchor, "Read about farms");
    }

    #[test]
    fn a_recycled_page_keeps_nothing_of_the_last() {
        let first = r#"<html lang="fr"><head><title>Premier</title><base href="https://a.example/x/">
            <meta property="og:site_name" content="A"><meta name="author" content="Jean">
            <script type="application/ld+json">{"datePublished":"2019-01-02"}</script></head>
            <body><article><p>Un texte assez long pour être le corps de la page, avec des mots.</p>
            <a href="/lien">lien</a><img src="/i.png"><time datetime="2018-05-06">mai</time></article></body></html>"#;
        let second = "<p>Plain text, no head at all, and one <a href='b'>link</a>.</p>";
        // Each page read on a thread of its own: nothing recycled before it.
        let fresh = |html: &'static str| {
            std::thread::spawn(move || extract(html, &url()))
                .join()
                .unwrap()
        };
        let (first_fresh, second_fresh) = (fresh(first), fresh(second));
        assert_eq!(first_fresh.lang.as_deref(), Some("fr"));
        // On this thread, the second page reads the buffers the first page handed back.
        assert_eq!(extract(first, &url()), first_fresh);
        assert_eq!(extract(second, &url()), second_fresh);
        assert_eq!(extract(first, &url()), first_fresh);
    }

    #[test]
    fn a_head_never_closed_ends_at_the_content() {
        // No `</head>`, no `<body>`: the first element of the content closes the head, as
        // a browser's parser does; a tracking pixel in the head's `<noscript>` does not.
        let html = "<!DOCTYPE html><html><head><title>Gute Löhne</title>\
            <meta property='og:title' content='Gute Löhne'><link rel=icon href=/f.ico>\
            <noscript><div><img src=/pixel.gif></div></noscript><meta name=author content='Jane Roe'><br>\
            <div class=article><h1>Gute Löhne</h1><p>Das Zentrum lud zur Gesprächsrunde ein, und die Teilnehmenden \
            sprachen darüber, wie Arbeitgeber in Zeiten des Fachkräftemangels genügend Personal finden.</p>\
            <p>Mit dabei war der Personalchef des beliebtesten Unternehmens, der von seinen Erfahrungen erzählte.</p></div></html>";
        let a = extract(html, &url());
        assert!(a.text.contains("Gesprächsrunde"), "{:?}", a.text);
        assert_eq!(a.title.as_deref(), Some("Gute Löhne"));
        assert_eq!(a.author.as_deref(), Some("Jane Roe"));
        assert!(!a.text.contains("pixel"));
    }

    #[test]
    fn a_section_named_after_its_subject_is_no_boilerplate() {
        // Documentation generators give a section its heading's anchor as `id`: a page on
        // "HEADER_SETS" or "CMAKE_EXTRA_GENERATOR" is not a header nor an extra block.
        for id in [
            "header-sets",
            "cmake-extra-generator",
            "link-depends-no-shared",
        ] {
            for open in [
                format!("<section id=\"{id}\">"),
                format!("<div class=\"section\" id=\"{id}\">"),
            ] {
                let close = if open.starts_with("<section") {
                    "</section>"
                } else {
                    "</div>"
                };
                let html = format!(
                    "<html><body><div class=related><a href=/>Home</a></div>\
                     <div class=document><div class=body role=main>{open}<h1>HEADER_SETS</h1>\
                     <p>Read-only list of the target's private and public header sets. Files \
                     listed in these file sets are treated as source files for the purpose of \
                     IDE integration.</p><p>Header sets may be defined using the \
                     <a href=t.html>target_sources()</a> command.</p>{close}</div></div>\
                     <div class=footer>Copyright</div></body></html>"
                );
                let a = extract(&html, &url());
                assert!(a.is_article, "{open}: {a:?}");
                assert!(a.text.contains("Read-only list"), "{open}: {:?}", a.text);
            }
        }
    }

    #[test]
    fn a_section_index_with_an_introduction_is_an_article_and_a_bare_one_is_not() {
        // A manual's section index: a heading and a paragraph above the links of its
        // pages. Mostly links, but with text of its own.
        let toc: String = (0..12)
            .map(|i| {
                format!("<li><a href=/p{i}.html>Writing a custom storage backend {i}</a></li>")
            })
            .collect();
        let html = format!(
            "<html><body><div class=document><h1>How-to guides</h1>\
            <p>Here you will find short answers to the questions people ask most often.</p>\
            <ul>{toc}</ul></div></body></html>"
        );
        let a = extract(&html, &url());
        assert!(a.is_article, "{a:?}");
        // A table of contents of one entry over a generator's footer: the footer's
        // words are no article.
        let html = "<html><body><div class=chapter><h2>Resources</h2><div class=toc><dl><dt>\
            <a href=r.html>GResource</a> — Resource framework</dt></dl></div></div>\
            <div class=footer><hr>Generated by GTK-Doc V1.33.1 on the build machine</div>\
            </body></html>";
        let a = extract(html, &url());
        assert!(!a.is_article, "{a:?}");
    }

    #[test]
    fn a_syntax_diagram_under_a_tagline_is_the_article() {
        // The best block is the site's tagline; the page's text is the words its diagram
        // draws and a line of links, about 150 characters.
        let html = "<html><body><div class=nosearch><a href=/><img src=logo.gif></a>\
            <div class=tagline>Small. Fast. Reliable.<br>Choose any three.</div>\
            <div class='menu mainmenu'><ul><li><a href=/>Home</a><li><a href=/d>Docs</a></ul>\
            </div></div><h1>alter-table-stmt</h1><div class=imgcontainer><div>\
            <svg viewBox='0 0 9 9'><title>diagram</title><path d='M9,32L31,32'/>\
            <text x=1>ALTER</text><text x=2>TABLE</text><text x=3>schema-name</text>\
            <text>.</text><text>table-name</text><text>RENAME</text><text>TO</text>\
            <text>new-table-name</text><text>RENAME</text><text>COLUMN</text>\
            <text>column-name</text><text>ADD</text><text>COLUMN</text><text>column-def</text>\
            </svg></div><br>Used by: <a href=s.html>sql-stmt</a><br>\
            See also: <a href=l.html>lang_altertable.html</a></div></body></html>";
        let a = extract(html, &url());
        assert!(a.is_article, "{a:?}");
        assert!(
            a.text
                .contains("ALTER TABLE schema-name . table-name RENAME TO"),
            "{:?}",
            a.text
        );
        assert!(!a.text.contains("diagram"), "{:?}", a.text);
        assert!(!a.text.contains("Small. Fast."), "{:?}", a.text);
    }

    #[test]
    fn never_panics_on_garbage() {
        let inputs = [
            "",
            "<",
            "</p></p></div>",
            "<a href='\u{0}'>x</a><img src='http://[::1'>",
            "<table><td><p>x<li>y</table></td></tr>",
            "<svg><p>text</svg><math><mi>x</math>",
            "&#xFFFFFFFF; &#0; &",
            "<title>a</title><title>b",
            "<script>",
            "<html><body><p>",
            // A Kelvin sign lower-cases to a one-byte `k`: a byline label matched on the
            // lower-cased text must not cut the original inside a character.
            "<span class=author>Arti\u{212A}el von Jane Roe</span>",
        ];
        for html in inputs {
            let _ = extract(html, &url());
        }
        let deep = "<div><span>".repeat(200_000) + "x";
        let a = extract(&deep, &url());
        assert!(a.text.contains('x'));
    }
}
