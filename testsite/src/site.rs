//! The generated site: configuration, page metadata and stored responses.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;

use crate::bodies::GzipBomb;
use crate::html::{self, ArticleView, ChineseArticleView, IndexView, LinkItem};
use crate::prng::SplitMix64;
use crate::text::{edit_words, ChineseStory, EnglishStory, StoryTopic};

/// Written in links and headers that must name the server's own port, which
/// is unknown until `serve` binds; `serve` replaces it everywhere
/// (see [`Site::bind_port`]). Links under `localhost:{{port}}` reach this very
/// server under another host name, so a scope violation shows in the log.
pub const PORT_PLACEHOLDER: &str = "{{port}}";

/// The host the site's absolute links to itself name, unless renamed: the
/// server listens on loopback.
pub const LOOPBACK_HOST: &str = "127.0.0.1";

/// The robots.txt served by default.
pub const DEFAULT_ROBOTS_TXT: &str = "User-agent: *\nDisallow: /private/\n";

/// The default robots.txt plus a `Crawl-delay` line.
pub fn robots_txt_with_crawl_delay(seconds: f64) -> String {
    format!("{DEFAULT_ROBOTS_TXT}Crawl-delay: {seconds}\n")
}

/// How the hostile endpoints misbehave; tests can shrink them.
#[derive(Debug, Clone, Serialize)]
pub struct HostileSettings {
    /// `/hostile/drip` sends one byte per interval.
    pub drip_interval: Duration,
    /// `/hostile/slow-headers` waits this long before answering at all.
    pub slow_headers_delay: Duration,
    /// Size of the `/hostile/huge` body.
    pub huge_bytes: u64,
    /// Inflated size of the `/hostile/bomb` gzip body.
    pub bomb_inflated_bytes: u64,
}

impl Default for HostileSettings {
    fn default() -> Self {
        Self {
            drip_interval: Duration::from_secs(1),
            slow_headers_delay: Duration::from_secs(3600),
            huge_bytes: 1 << 30,
            bomb_inflated_bytes: 1 << 30,
        }
    }
}

/// What to generate. Every count is clamped to what the articles allow
/// (a mirror needs an article to mirror).
#[derive(Debug, Clone, Serialize)]
pub struct SiteConfig {
    /// English articles `/article/0..N`.
    pub articles: usize,
    /// Chinese GBK articles `/zh/0..N`.
    pub zh_articles: usize,
    /// Seeds all generated text; the same seed gives a byte-identical site.
    pub seed: u64,
    /// The robots.txt body; `None` serves 404 for `/robots.txt`.
    pub robots_txt: Option<String>,
    /// Whether the front page links the `/hostile/...` endpoints (they are
    /// always served).
    pub link_hostile: bool,
    /// Articles also served under `/mirror/N` in another template.
    pub mirrors: usize,
    /// Articles also served byte-identical under `/copy/N`.
    pub copies: usize,
    /// Articles also served under `/edit/N` with one or two words changed.
    pub edits: usize,
    /// Pairs of distinct articles sharing a topic (title words) but not a body.
    pub same_topic_pairs: usize,
    /// `/private/N` pages, linked but disallowed by the default robots.txt.
    pub private_pages: usize,
    /// `/r/N` permanent redirects to articles.
    pub redirects: usize,
    /// Headline links on each index page.
    pub links_per_index: usize,
    /// Wait before answering every request (simulates a slow server).
    pub response_delay: Duration,
    pub hostile: HostileSettings,
}

impl Default for SiteConfig {
    fn default() -> Self {
        Self {
            articles: 200,
            zh_articles: 20,
            seed: 42,
            robots_txt: Some(DEFAULT_ROBOTS_TXT.to_string()),
            link_hostile: false,
            mirrors: 10,
            copies: 10,
            edits: 10,
            same_topic_pairs: 5,
            private_pages: 5,
            redirects: 5,
            links_per_index: 20,
            response_delay: Duration::ZERO,
            hostile: HostileSettings::default(),
        }
    }
}

/// What a page is, for tests to choose expectations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PageKind {
    /// `/` and `/list/N`.
    Index,
    /// `/article/N`, English, UTF-8.
    Article,
    /// `/zh/N`, Chinese, GBK.
    ZhArticle,
    /// `/mirror/N`: an article's body in another template.
    Mirror,
    /// `/copy/N`: byte-identical to an article.
    Copy,
    /// `/edit/N`: an article with one or two words of the body changed.
    Edit,
    /// `/lie/...`: the declared charset(s) differ from the true encoding.
    Lie,
    /// `/private/N`: disallowed by robots.txt.
    Private,
    /// `/about`.
    About,
    /// `/r/...` and `/loop/...`.
    Redirect,
    /// `/error/NNN`.
    Error,
    /// `/file.pdf`.
    NonHtml,
    /// `/robots.txt`.
    Robots,
    /// `/hostile/...`.
    Hostile(HostileKind),
}

/// The misbehaving endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum HostileKind {
    /// `/hostile/drip`: headers, then one byte per interval forever.
    Drip,
    /// `/hostile/slow-headers`: no response for a long time.
    SlowHeaders,
    /// `/hostile/bomb`: gzip body inflating to ≥ 1 GB.
    GzipBomb,
    /// `/hostile/huge`: a 1 GB HTML body with Content-Length.
    Huge,
    /// `/hostile/endless`: a chunked HTML body that never ends.
    Endless,
}

/// One served path and what a test should expect of it.
#[derive(Debug, Clone, Serialize)]
pub struct PageSpec {
    pub path: String,
    pub kind: PageKind,
    pub status: u16,
    /// The Content-Type header, exactly as sent.
    pub content_type: String,
    /// Every href in the page, as written (after HTML entity decoding).
    pub links: Vec<String>,
    /// For Mirror/Copy/Edit: the path of the original article.
    pub duplicate_of: Option<String>,
    /// For an article in a same-topic pair: the other article (not a duplicate).
    pub same_topic_as: Option<String>,
    pub title: Option<String>,
    pub author: Option<String>,
    /// The date as printed in the page.
    pub published: Option<String>,
    /// The article body as Unicode text, paragraphs joined by "\n".
    pub body_text: Option<String>,
    /// The encoding the bytes are really in (encoding_rs name: "UTF-8", "GBK").
    pub true_encoding: Option<String>,
    /// The charset the Content-Type header declares, if any.
    pub header_charset: Option<String>,
    /// The charset the `<meta>` declares, if any.
    pub meta_charset: Option<String>,
    /// For redirects: the Location header.
    pub redirect_to: Option<String>,
    /// For 429/503: the Retry-After header in seconds.
    pub retry_after_secs: Option<u64>,
}

impl PageSpec {
    fn new(path: impl Into<String>, kind: PageKind, status: u16, content_type: &str) -> Self {
        Self {
            path: path.into(),
            kind,
            status,
            content_type: content_type.to_string(),
            links: Vec::new(),
            duplicate_of: None,
            same_topic_as: None,
            title: None,
            author: None,
            published: None,
            body_text: None,
            true_encoding: None,
            header_charset: None,
            meta_charset: None,
            redirect_to: None,
            retry_after_secs: None,
        }
    }

    /// True for the pages holding a real article body (articles and their
    /// near-duplicates, Chinese articles, lying-charset pages).
    pub fn has_article_body(&self) -> bool {
        self.body_text.is_some()
            && matches!(
                self.kind,
                PageKind::Article
                    | PageKind::ZhArticle
                    | PageKind::Mirror
                    | PageKind::Copy
                    | PageKind::Edit
                    | PageKind::Lie
            )
    }
}

/// A response the server sends for a path.
#[derive(Debug, Clone)]
pub(crate) struct StoredResponse {
    /// Headers besides Content-Length (hyper adds it).
    pub headers: Vec<(&'static str, String)>,
    pub body: StoredBody,
}

#[derive(Debug, Clone)]
pub(crate) enum StoredBody {
    Bytes(Bytes),
    Hostile(HostileKind),
}

/// The generated pages, ready to be served.
#[derive(Debug)]
pub struct Site {
    config: SiteConfig,
    pages: Vec<PageSpec>,
    responses: Vec<StoredResponse>,
    /// Path → index into `pages` and `responses`.
    by_path: HashMap<String, usize>,
    /// The port written in place of [`PORT_PLACEHOLDER`], once bound.
    port: Option<u16>,
    /// The host of the site's absolute links to itself: [`LOOPBACK_HOST`]
    /// unless renamed ([`Site::rename_host`]).
    host: String,
    /// Built on the first `/hostile/bomb` request (a few ms of compression).
    gzip_bomb: OnceLock<GzipBomb>,
}

const HTML_UTF8: &str = "text/html; charset=utf-8";

/// The fixed set of lying-charset pages: (path, true encoding, header charset, meta charset).
const LIES: &[(&str, &str, Option<&str>, Option<&str>)] = &[
    ("/lie/gbk-declared-utf8", "GBK", Some("utf-8"), Some("gbk")),
    ("/lie/gbk-declared-latin1", "GBK", Some("iso-8859-1"), None),
    (
        "/lie/gbk-both-say-utf8",
        "GBK",
        Some("utf-8"),
        Some("utf-8"),
    ),
    ("/lie/gbk-undeclared", "GBK", None, None),
    ("/lie/utf8-meta-gb2312", "UTF-8", None, Some("gb2312")),
    (
        "/lie/utf8-both-say-windows1252",
        "UTF-8",
        Some("windows-1252"),
        Some("windows-1252"),
    ),
    ("/lie/utf8-undeclared", "UTF-8", None, None),
];

/// Error pages: (status, Retry-After seconds).
const ERRORS: &[(u16, Option<u64>)] = &[(404, None), (500, None), (503, Some(2)), (429, Some(1))];

impl Site {
    pub fn generate(config: &SiteConfig) -> Site {
        SiteBuilder::new(config).build()
    }

    pub fn config(&self) -> &SiteConfig {
        &self.config
    }

    /// Every served path with its metadata (unknown paths get a plain 404).
    pub fn pages(&self) -> &[PageSpec] {
        &self.pages
    }

    /// The page at `path` (exact path, no query).
    pub fn page(&self, path: &str) -> Option<&PageSpec> {
        self.by_path.get(path).map(|index| &self.pages[*index])
    }

    /// The page a request target (`/article/3?ref=related`) is answered
    /// with: the exact target if registered, else its path without the query
    /// (the server ignores unknown queries). Use it to map the keys of
    /// [`Site::reachable`] to their specs.
    pub fn page_for_target(&self, path_and_query: &str) -> Option<&PageSpec> {
        self.lookup(path_and_query).map(|(page, _)| page)
    }

    /// Pages of one kind.
    pub fn pages_of_kind(&self, kind: PageKind) -> impl Iterator<Item = &PageSpec> {
        self.pages.iter().filter(move |page| page.kind == kind)
    }

    /// The bytes served for `path`, for pages held in memory (not hostile ones).
    pub fn response_bytes(&self, path: &str) -> Option<&[u8]> {
        let index = *self.by_path.get(path)?;
        match &self.responses[index].body {
            StoredBody::Bytes(bytes) => Some(bytes),
            StoredBody::Hostile(_) => None,
        }
    }

    /// The port the links were written for, once bound by `serve`.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// Writes `port` in place of [`PORT_PLACEHOLDER`] in every link, header
    /// and body. Called by `serve`; does nothing if already bound.
    pub fn bind_port(&mut self, port: u16) {
        if self.port.is_some() {
            return;
        }
        self.port = Some(port);
        self.replace_everywhere(PORT_PLACEHOLDER, &port.to_string());
    }

    /// The host of the site's absolute links to itself (`127.0.0.1` unless
    /// renamed).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Names the site's own server `host` in its absolute links, redirects,
    /// headers and bodies (`http://127.0.0.1:PORT/...` becomes
    /// `http://HOST:PORT/...`), for a server reached by another name (the
    /// `testsite` service of deploy/docker-compose.yml). `localhost` links
    /// stay: they name the same server under another host.
    pub fn rename_host(&mut self, host: &str) {
        let from = format!("http://{}:", self.host);
        let to = format!("http://{host}:");
        if from == to {
            return;
        }
        self.host = host.to_string();
        self.replace_everywhere(&from, &to);
    }

    /// `from` replaced by `to` in every link, redirect, header and body.
    fn replace_everywhere(&mut self, from: &str, to: &str) {
        let replace = |text: &mut String| {
            if text.contains(from) {
                *text = text.replace(from, to);
            }
        };
        for page in &mut self.pages {
            page.links.iter_mut().for_each(replace);
            if let Some(location) = &mut page.redirect_to {
                replace(location);
            }
        }
        for response in &mut self.responses {
            for (_, value) in &mut response.headers {
                replace(value);
            }
            if let StoredBody::Bytes(bytes) = &mut response.body {
                if let Some(replaced) = replace_bytes(bytes, from.as_bytes(), to.as_bytes()) {
                    *bytes = replaced.into();
                }
            }
        }
    }

    /// The page and response for a request target (`/a?b`): the exact target
    /// if registered, else its path without the query.
    pub(crate) fn lookup(&self, path_and_query: &str) -> Option<(&PageSpec, &StoredResponse)> {
        let index = self.by_path.get(path_and_query).or_else(|| {
            let path = path_and_query.split('?').next().unwrap_or(path_and_query);
            self.by_path.get(path)
        })?;
        Some((&self.pages[*index], &self.responses[*index]))
    }

    pub(crate) fn gzip_bomb(&self) -> &GzipBomb {
        self.gzip_bomb
            .get_or_init(|| GzipBomb::new(self.config.hostile.bomb_inflated_bytes))
    }
}

/// `haystack` with every `needle` replaced, or `None` if there is none.
fn replace_bytes(haystack: &[u8], needle: &[u8], replacement: &[u8]) -> Option<Vec<u8>> {
    let mut found = haystack
        .windows(needle.len())
        .position(|window| window == needle)?;
    let mut result = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    loop {
        result.extend_from_slice(&rest[..found]);
        result.extend_from_slice(replacement);
        rest = &rest[found + needle.len()..];
        match rest
            .windows(needle.len())
            .position(|window| window == needle)
        {
            Some(next) => found = next,
            None => break,
        }
    }
    result.extend_from_slice(rest);
    Some(result)
}

/// Which articles play which extra role; roles never overlap.
struct ArticleRoles {
    mirrors: Vec<usize>,
    copies: Vec<usize>,
    edits: Vec<usize>,
    same_topic_pairs: Vec<(usize, usize)>,
}

impl ArticleRoles {
    fn choose(config: &SiteConfig) -> Self {
        let mut order: Vec<usize> = (0..config.articles).collect();
        SplitMix64::for_part(config.seed, "roles", 0).shuffle(&mut order);
        let mut remaining = order.into_iter();
        let mut take = |count: usize| -> Vec<usize> {
            let mut taken: Vec<usize> = remaining.by_ref().take(count).collect();
            taken.sort_unstable();
            taken
        };
        let mirrors = take(config.mirrors);
        let copies = take(config.copies);
        let edits = take(config.edits);
        let pair_members = take(config.same_topic_pairs * 2);
        let same_topic_pairs = pair_members
            .chunks_exact(2)
            .map(|pair| (pair[0], pair[1]))
            .collect();
        Self {
            mirrors,
            copies,
            edits,
            same_topic_pairs,
        }
    }
}

/// Accumulates pages, then lays out the index tree over them.
struct SiteBuilder<'a> {
    config: &'a SiteConfig,
    pages: Vec<PageSpec>,
    responses: Vec<StoredResponse>,
    /// Links the index pages list, with their text.
    headlines: Vec<LinkItem>,
    /// Number of index pages, needed by the navigation of every page.
    index_pages: usize,
}

impl<'a> SiteBuilder<'a> {
    fn new(config: &'a SiteConfig) -> Self {
        let mut builder = Self {
            config,
            pages: Vec::new(),
            responses: Vec::new(),
            headlines: Vec::new(),
            index_pages: 1,
        };
        builder.index_pages = builder
            .listed_page_count()
            .div_ceil(builder.links_per_index())
            .max(1);
        builder
    }

    fn links_per_index(&self) -> usize {
        self.config.links_per_index.max(1)
    }

    /// How many pages the index tree will list; must match what `build` adds.
    fn listed_page_count(&self) -> usize {
        let roles = ArticleRoles::choose(self.config);
        self.config.articles
            + self.config.zh_articles
            + roles.mirrors.len()
            + roles.copies.len()
            + roles.edits.len()
            + LIES.len()
            + self.config.private_pages
            + self.redirect_count()
            + 2 // /r/outside, /r/absolute
            + 1 // /loop/a
            + ERRORS.len()
            + 1 // /file.pdf
    }

    fn redirect_count(&self) -> usize {
        if self.config.articles == 0 {
            0
        } else {
            self.config.redirects
        }
    }

    fn add(
        &mut self,
        spec: PageSpec,
        headers: Vec<(&'static str, String)>,
        body: StoredBody,
        headline: Option<&str>,
    ) {
        if let Some(text) = headline {
            self.headlines.push(LinkItem::new(spec.path.clone(), text));
        }
        let mut headers = headers;
        headers.insert(0, ("content-type", spec.content_type.clone()));
        self.pages.push(spec);
        self.responses.push(StoredResponse { headers, body });
    }

    fn add_html(&mut self, spec: PageSpec, body: impl Into<Bytes>, headline: Option<&str>) {
        self.add(spec, Vec::new(), StoredBody::Bytes(body.into()), headline);
    }

    fn build(mut self) -> Site {
        let roles = ArticleRoles::choose(self.config);
        self.add_articles(&roles);
        self.add_chinese_articles();
        self.add_lies();
        self.add_private_pages();
        self.add_redirects();
        self.add_errors_and_files();
        debug_assert_eq!(self.headlines.len(), self.listed_page_count());
        self.add_index_pages();
        self.add_robots_and_hostile();
        self.add_sitemaps();

        let by_path = self
            .pages
            .iter()
            .enumerate()
            .map(|(index, page)| (page.path.clone(), index))
            .collect();
        Site {
            config: self.config.clone(),
            pages: self.pages,
            responses: self.responses,
            by_path,
            port: None,
            host: LOOPBACK_HOST.to_string(),
            gzip_bomb: OnceLock::new(),
        }
    }

    fn add_articles(&mut self, roles: &ArticleRoles) {
        let config = self.config;
        let count = config.articles;
        let mut topics: Vec<StoryTopic> = (0..count)
            .map(|number| {
                StoryTopic::generate(&mut SplitMix64::for_part(
                    config.seed,
                    "topic",
                    number as u64,
                ))
            })
            .collect();
        let mut same_topic_as: Vec<Option<usize>> = vec![None; count];
        for &(first, second) in &roles.same_topic_pairs {
            topics[second] = topics[first].clone();
            same_topic_as[first] = Some(second);
            same_topic_as[second] = Some(first);
        }
        let stories: Vec<EnglishStory> = (0..count)
            .map(|number| {
                let mut rng = SplitMix64::for_part(config.seed, "article", number as u64);
                EnglishStory::generate(&mut rng, Some(&topics[number]))
            })
            .collect();

        for (number, story) in stories.iter().enumerate() {
            let path = format!("/article/{number}");
            let mut rng = SplitMix64::for_part(config.seed, "related", number as u64);
            let mut other = || rng.below(count);
            let mut related = vec![
                LinkItem::new(format!("../article/{}", other()), "Background"),
                LinkItem::new(format!("/article/{}?ref=related", other()), "Analysis"),
                LinkItem::new(format!("/article/{}#comments", other()), "Readers respond"),
                LinkItem::new(
                    format!("http://localhost:{PORT_PLACEHOLDER}/article/{}", other()),
                    "Earlier coverage",
                ),
                LinkItem::new(
                    format!("http://127.0.0.1:{PORT_PLACEHOLDER}/article/{}", other()),
                    "Timeline",
                ),
                LinkItem::new(
                    format!("http://outside.invalid/news/{}", other()),
                    "Partner report",
                ),
            ];
            if let Some(partner) = same_topic_as[number] {
                related.insert(
                    0,
                    LinkItem::new(
                        format!("/article/{partner}"),
                        stories[partner].title.clone(),
                    ),
                );
            }
            let most_read: Vec<LinkItem> = (0..4)
                .map(|_| {
                    let target = other();
                    LinkItem::new(format!("/article/{target}"), stories[target].title.clone())
                })
                .collect();
            let view = ArticleView {
                path: &path,
                title: &story.title,
                author: &story.author,
                date_display: &story.date_display,
                date_iso: &story.date_iso,
                paragraphs: &story.paragraphs,
                related: &related,
                most_read: &most_read,
            };
            let (html, links) = html::news_article(&view, self.index_pages);
            let body = Bytes::from(html);
            let spec = PageSpec {
                links,
                same_topic_as: same_topic_as[number].map(|partner| format!("/article/{partner}")),
                ..english_spec(&path, PageKind::Article, story, story.body_text())
            };
            self.add_html(spec, body.clone(), Some(&story.title));

            if roles.copies.contains(&number) {
                let copy_path = format!("/copy/{number}");
                let spec = PageSpec {
                    links: self
                        .pages
                        .last()
                        .map(|page| page.links.clone())
                        .unwrap_or_default(),
                    duplicate_of: Some(path.clone()),
                    ..english_spec(&copy_path, PageKind::Copy, story, story.body_text())
                };
                self.add_html(spec, body.clone(), Some(&story.title));
            }
            if roles.mirrors.contains(&number) {
                let mirror_path = format!("/mirror/{number}");
                let (html, links) = html::mirror_article(&ArticleView {
                    path: &mirror_path,
                    ..view.clone()
                });
                let spec = PageSpec {
                    links,
                    duplicate_of: Some(path.clone()),
                    ..english_spec(&mirror_path, PageKind::Mirror, story, story.body_text())
                };
                self.add_html(spec, html, Some(&format!("{} (syndicated)", story.title)));
            }
            if roles.edits.contains(&number) {
                let edit_path = format!("/edit/{number}");
                let mut rng = SplitMix64::for_part(config.seed, "edit", number as u64);
                let changed_words = rng.between(1, 2);
                let (paragraphs, _) = edit_words(&mut rng, &story.paragraphs, changed_words);
                let (html, links) = html::news_article(
                    &ArticleView {
                        paragraphs: &paragraphs,
                        ..view.clone()
                    },
                    self.index_pages,
                );
                let spec = PageSpec {
                    links,
                    duplicate_of: Some(path.clone()),
                    ..english_spec(&edit_path, PageKind::Edit, story, paragraphs.join("\n"))
                };
                self.add_html(spec, html, Some(&format!("{} (updated)", story.title)));
            }
        }
    }

    fn add_chinese_articles(&mut self) {
        let config = self.config;
        let count = config.zh_articles;
        for number in 0..count {
            let path = format!("/zh/{number}");
            let mut rng = SplitMix64::for_part(config.seed, "zh", number as u64);
            let story = ChineseStory::generate(&mut rng);
            let related: Vec<LinkItem> = (0..4)
                .map(|slot| {
                    let target = rng.below(count);
                    let href = if slot % 2 == 0 {
                        format!("/zh/{target}")
                    } else {
                        format!("../zh/{target}")
                    };
                    LinkItem::new(href, format!("相关报道{}", slot + 1))
                })
                .collect();
            let (html, links) = html::chinese_article(&ChineseArticleView {
                title: &story.title,
                author: &story.author,
                date_display: &story.date_display,
                paragraphs: &story.paragraphs,
                related: &related,
                meta_charset: Some("gbk"),
            });
            let (bytes, _, _) = encoding_rs::GBK.encode(&html);
            let spec = PageSpec {
                links,
                header_charset: Some("gbk".to_string()),
                meta_charset: Some("gbk".to_string()),
                ..chinese_spec(
                    &path,
                    PageKind::ZhArticle,
                    "text/html; charset=gbk",
                    &story,
                    "GBK",
                )
            };
            self.add_html(spec, bytes.into_owned(), Some(&story.title));
        }
    }

    fn add_lies(&mut self) {
        for (number, &(path, true_encoding, header_charset, meta_charset)) in
            LIES.iter().enumerate()
        {
            let mut rng = SplitMix64::for_part(self.config.seed, "lie", number as u64);
            let story = ChineseStory::generate(&mut rng);
            let (html, links) = html::chinese_article(&ChineseArticleView {
                title: &story.title,
                author: &story.author,
                date_display: &story.date_display,
                paragraphs: &story.paragraphs,
                related: &[LinkItem::new("/", "返回首页")],
                meta_charset,
            });
            let bytes: Vec<u8> = if true_encoding == "GBK" {
                encoding_rs::GBK.encode(&html).0.into_owned()
            } else {
                html.into_bytes()
            };
            let content_type = match header_charset {
                Some(charset) => format!("text/html; charset={charset}"),
                None => "text/html".to_string(),
            };
            let spec = PageSpec {
                links,
                header_charset: header_charset.map(str::to_string),
                meta_charset: meta_charset.map(str::to_string),
                ..chinese_spec(path, PageKind::Lie, &content_type, &story, true_encoding)
            };
            self.add_html(spec, bytes, Some(&story.title));
        }
    }

    fn add_private_pages(&mut self) {
        for number in 0..self.config.private_pages {
            let path = format!("/private/{number}");
            let title = format!("Staff notes {number}");
            let paragraphs = vec![format!(
                "Internal page {number}. A polite crawler never fetches this page because robots.txt disallows /private/."
            )];
            let (html, links) =
                html::simple_page(&title, &paragraphs, &[LinkItem::new("/", "Home")]);
            let spec = PageSpec {
                links,
                title: Some(title.clone()),
                body_text: Some(paragraphs.join("\n")),
                true_encoding: Some("UTF-8".to_string()),
                header_charset: Some("utf-8".to_string()),
                ..PageSpec::new(&path, PageKind::Private, 200, HTML_UTF8)
            };
            self.add_html(spec, html, Some(&title));
        }
    }

    fn add_redirect(&mut self, path: &str, status: u16, location: &str, headline: Option<&str>) {
        let (html, links) = html::simple_page("Moved", &[], &[LinkItem::new(location, "Continue")]);
        let spec = PageSpec {
            links,
            redirect_to: Some(location.to_string()),
            ..PageSpec::new(path, PageKind::Redirect, status, HTML_UTF8)
        };
        self.add(
            spec,
            vec![("location", location.to_string())],
            StoredBody::Bytes(html.into()),
            headline,
        );
    }

    fn add_redirects(&mut self) {
        let articles = self.config.articles;
        for number in 0..self.redirect_count() {
            let target = (number * 7919 + 3) % articles;
            self.add_redirect(
                &format!("/r/{number}"),
                301,
                &format!("/article/{target}"),
                Some(&format!("Short link {number}")),
            );
        }
        self.add_redirect(
            "/r/outside",
            302,
            "http://outside.invalid/landing",
            Some("Partner offer"),
        );
        self.add_redirect(
            "/r/absolute",
            302,
            &format!("http://127.0.0.1:{PORT_PLACEHOLDER}/about"),
            Some("About the newsroom"),
        );
        self.add_redirect("/loop/a", 302, "/loop/b", Some("Archive"));
        self.add_redirect("/loop/b", 302, "/loop/a", None);
    }

    fn add_errors_and_files(&mut self) {
        for &(status, retry_after) in ERRORS {
            let path = format!("/error/{status}");
            let title = format!("Error {status}");
            let (html, links) =
                html::simple_page(&title, &[format!("The server answered {status}.")], &[]);
            let spec = PageSpec {
                links,
                retry_after_secs: retry_after,
                ..PageSpec::new(&path, PageKind::Error, status, HTML_UTF8)
            };
            let headers = retry_after
                .map(|seconds| vec![("retry-after", seconds.to_string())])
                .unwrap_or_default();
            self.add(
                spec,
                headers,
                StoredBody::Bytes(html.into()),
                Some(&format!("Service notice {status}")),
            );
        }

        let pdf: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
        let spec = PageSpec {
            title: Some("Annual report (PDF)".to_string()),
            ..PageSpec::new("/file.pdf", PageKind::NonHtml, 200, "application/pdf")
        };
        self.add(
            spec,
            Vec::new(),
            StoredBody::Bytes(Bytes::from_static(pdf)),
            Some("Annual report (PDF)"),
        );

        let about_text = vec![
            "The Daily Ledger is a generated newspaper served for crawler tests.".to_string(),
            "Every article on this site is written by a pseudo-random generator from a seed."
                .to_string(),
        ];
        let (html, links) =
            html::simple_page("About us", &about_text, &[LinkItem::new("/", "Front page")]);
        let spec = PageSpec {
            links,
            title: Some("About us".to_string()),
            body_text: Some(about_text.join("\n")),
            true_encoding: Some("UTF-8".to_string()),
            header_charset: Some("utf-8".to_string()),
            ..PageSpec::new("/about", PageKind::About, 200, HTML_UTF8)
        };
        self.add_html(spec, html, None);
    }

    /// Lays the headlines out over a tree of index pages: page `i` lists
    /// headlines `i*L..(i+1)*L` and links its children `b*i+1..=b*i+b`, with
    /// the branching `b` chosen so that every headline is within depth 3 of
    /// `/` (pages at depth ≤ 2 hold all headlines).
    fn add_index_pages(&mut self) {
        let per_page = self.links_per_index();
        let index_pages = self.index_pages;
        let mut branching = 2;
        while 1 + branching + branching * branching < index_pages {
            branching += 1;
        }
        let mut headlines = std::mem::take(&mut self.headlines);
        let mut rng = SplitMix64::for_part(self.config.seed, "index", 0);
        rng.shuffle(&mut headlines);
        for headline in &mut headlines {
            if rng.chance(25) {
                headline.href = format!("..{}", headline.href);
            }
        }
        let index_path = |number: usize| {
            if number == 0 {
                "/".to_string()
            } else {
                format!("/list/{number}")
            }
        };
        let hostile_links: Vec<LinkItem> = if self.config.link_hostile {
            HOSTILE_PATHS
                .iter()
                .map(|(path, _)| {
                    LinkItem::new(
                        *path,
                        format!("Live feed {}", path.trim_start_matches("/hostile/")),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        for number in 0..index_pages {
            let start = (number * per_page).min(headlines.len());
            let end = ((number + 1) * per_page).min(headlines.len());
            let sections: Vec<LinkItem> = (branching * number + 1..=branching * number + branching)
                .filter(|child| *child < index_pages)
                .map(|child| LinkItem::new(index_path(child), format!("Section {child}")))
                .collect();
            let title = if number == 0 {
                "Front page".to_string()
            } else {
                format!("Section {number}")
            };
            let (html, links) = html::index_page(&IndexView {
                title: &title,
                list_pages: index_pages,
                headlines: &headlines[start..end],
                sections: &sections,
                previous: (number > 0)
                    .then(|| LinkItem::new(index_path(number - 1), "Previous page")),
                next: (number + 1 < index_pages)
                    .then(|| LinkItem::new(index_path(number + 1), "Next page")),
                extra: if number == 0 { &hostile_links } else { &[] },
            });
            let spec = PageSpec {
                links,
                title: Some(title),
                true_encoding: Some("UTF-8".to_string()),
                header_charset: Some("utf-8".to_string()),
                ..PageSpec::new(index_path(number), PageKind::Index, 200, HTML_UTF8)
            };
            self.add_html(spec, html, None);
        }
    }

    /// `/sitemap.xml`, a sitemap index of `/sitemap-articles.xml` (every
    /// English article) and `/sitemap-zh.xml` (every Chinese one), with
    /// absolute URLs. Not linked from any page.
    fn add_sitemaps(&mut self) {
        let origin = format!("http://127.0.0.1:{PORT_PLACEHOLDER}");
        let urlset = |paths: Vec<String>| {
            let mut xml = String::from(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
            );
            for p in paths {
                xml.push_str(&format!("  <url><loc>{origin}{p}</loc></url>\n"));
            }
            xml.push_str("</urlset>\n");
            xml
        };
        let articles: Vec<String> = self
            .pages
            .iter()
            .filter(|p| p.kind == PageKind::Article)
            .map(|p| p.path.clone())
            .collect();
        let zh: Vec<String> = self
            .pages
            .iter()
            .filter(|p| p.kind == PageKind::ZhArticle)
            .map(|p| p.path.clone())
            .collect();
        let index = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n  <sitemap><loc>{origin}/sitemap-articles.xml</loc></sitemap>\n  <sitemap><loc>{origin}/sitemap-zh.xml</loc></sitemap>\n</sitemapindex>\n"
        );
        for (path, body) in [
            ("/sitemap.xml", index),
            ("/sitemap-articles.xml", urlset(articles)),
            ("/sitemap-zh.xml", urlset(zh)),
        ] {
            let spec = PageSpec::new(path, PageKind::NonHtml, 200, "application/xml");
            self.add(spec, Vec::new(), StoredBody::Bytes(body.into()), None);
        }
    }

    fn add_robots_and_hostile(&mut self) {
        let (status, body) = match &self.config.robots_txt {
            Some(text) => (200, text.clone()),
            None => (404, "not found\n".to_string()),
        };
        let spec = PageSpec::new(
            "/robots.txt",
            PageKind::Robots,
            status,
            "text/plain; charset=utf-8",
        );
        self.add(spec, Vec::new(), StoredBody::Bytes(body.into()), None);

        for &(path, kind) in HOSTILE_PATHS {
            let (content_type, headers) = match kind {
                HostileKind::GzipBomb => {
                    (HTML_UTF8, vec![("content-encoding", "gzip".to_string())])
                }
                _ => (HTML_UTF8, Vec::new()),
            };
            let spec = PageSpec::new(path, PageKind::Hostile(kind), 200, content_type);
            self.add(spec, headers, StoredBody::Hostile(kind), None);
        }
    }
}

/// The hostile endpoints, always served.
pub const HOSTILE_PATHS: &[(&str, HostileKind)] = &[
    ("/hostile/drip", HostileKind::Drip),
    ("/hostile/slow-headers", HostileKind::SlowHeaders),
    ("/hostile/bomb", HostileKind::GzipBomb),
    ("/hostile/huge", HostileKind::Huge),
    ("/hostile/endless", HostileKind::Endless),
];

fn english_spec(path: &str, kind: PageKind, story: &EnglishStory, body_text: String) -> PageSpec {
    PageSpec {
        title: Some(story.title.clone()),
        author: Some(story.author.clone()),
        published: Some(story.date_display.clone()),
        body_text: Some(body_text),
        true_encoding: Some("UTF-8".to_string()),
        header_charset: Some("utf-8".to_string()),
        meta_charset: Some("utf-8".to_string()),
        ..PageSpec::new(path, kind, 200, HTML_UTF8)
    }
}

fn chinese_spec(
    path: &str,
    kind: PageKind,
    content_type: &str,
    story: &ChineseStory,
    true_encoding: &str,
) -> PageSpec {
    PageSpec {
        title: Some(story.title.clone()),
        author: Some(story.author.clone()),
        published: Some(story.date_display.clone()),
        body_text: Some(story.body_text()),
        true_encoding: Some(true_encoding.to_string()),
        ..PageSpec::new(path, kind, 200, content_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{Hash, Hasher};

    /// A plain 64-bit SimHash over lower-cased word unigrams and word
    /// 3-shingles, term-frequency weighted: a stand-in for the crawler's.
    fn simhash(text: &str) -> u64 {
        let words: Vec<String> = text
            .split(|character: char| !character.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut features: HashMap<String, i64> = HashMap::new();
        for word in &words {
            *features.entry(word.clone()).or_default() += 1;
        }
        for shingle in words.windows(3) {
            *features.entry(shingle.join(" ")).or_default() += 1;
        }
        let mut weights = [0i64; 64];
        for (feature, weight) in features {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            feature.hash(&mut hasher);
            let hash = hasher.finish();
            for (bit, total) in weights.iter_mut().enumerate() {
                *total += if hash >> bit & 1 == 1 {
                    weight
                } else {
                    -weight
                };
            }
        }
        weights
            .iter()
            .enumerate()
            .fold(0, |fingerprint, (bit, total)| {
                if *total > 0 {
                    fingerprint | 1 << bit
                } else {
                    fingerprint
                }
            })
    }

    fn distance(first: &str, second: &str) -> u32 {
        (simhash(first) ^ simhash(second)).count_ones()
    }

    fn body<'a>(site: &'a Site, path: &str) -> &'a str {
        site.page(path)
            .and_then(|page| page.body_text.as_deref())
            .expect(path)
    }

    #[test]
    fn generation_is_deterministic_and_depends_on_the_seed() {
        let config = SiteConfig::default();
        let first = Site::generate(&config);
        let second = Site::generate(&config);
        assert_eq!(
            serde_json::to_string(first.pages()).unwrap(),
            serde_json::to_string(second.pages()).unwrap()
        );
        for page in first.pages() {
            assert_eq!(
                first.response_bytes(&page.path),
                second.response_bytes(&page.path),
                "{}",
                page.path
            );
        }
        let other = Site::generate(&SiteConfig { seed: 43, ..config });
        assert_ne!(body(&first, "/article/0"), body(&other, "/article/0"));
    }

    #[test]
    fn distinct_articles_are_far_apart_as_simhash_fingerprints() {
        let site = Site::generate(&SiteConfig::default());
        let fingerprints: Vec<u64> = site
            .pages_of_kind(PageKind::Article)
            .filter_map(|page| page.body_text.as_deref())
            .map(simhash)
            .collect();
        let mut histogram = [0u32; 65];
        for (index, first) in fingerprints.iter().enumerate() {
            for second in &fingerprints[index + 1..] {
                histogram[(first ^ second).count_ones() as usize] += 1;
            }
        }
        let pairs: u32 = histogram.iter().sum();
        let mean = histogram
            .iter()
            .enumerate()
            .map(|(distance, count)| distance as f64 * f64::from(*count))
            .sum::<f64>()
            / f64::from(pairs);
        let closest = histogram.iter().position(|count| *count > 0).unwrap_or(64);
        eprintln!("mean {mean:.1}, closest {closest}, histogram {histogram:?}");
        assert!(mean > 24.0, "mean Hamming distance {mean}");
        assert!(
            closest > 8,
            "two distinct articles at Hamming distance {closest}"
        );
    }

    #[test]
    fn same_topic_pairs_share_title_words_but_not_bodies() {
        let site = Site::generate(&SiteConfig::default());
        let pairs: Vec<&PageSpec> = site
            .pages_of_kind(PageKind::Article)
            .filter(|page| page.same_topic_as.is_some())
            .collect();
        assert_eq!(pairs.len(), 10);
        for page in pairs {
            let partner = site.page(page.same_topic_as.as_deref().unwrap()).unwrap();
            let title_start = |page: &PageSpec| {
                page.title
                    .as_deref()
                    .unwrap()
                    .split(' ')
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            assert_eq!(title_start(page), title_start(partner));
            let hamming = distance(body(&site, &page.path), body(&site, &partner.path));
            assert!(
                hamming > 10,
                "{} and {} at distance {hamming}",
                page.path,
                partner.path
            );
        }
    }

    #[test]
    fn near_duplicates_match_their_originals() {
        for seed in [1, 2, 3, 42] {
            near_duplicates_match_their_originals_for_seed(seed);
        }
    }

    fn near_duplicates_match_their_originals_for_seed(seed: u64) {
        let site = Site::generate(&SiteConfig {
            seed,
            ..SiteConfig::default()
        });
        let mut seen = HashMap::new();
        for page in site
            .pages()
            .iter()
            .filter(|page| page.duplicate_of.is_some())
        {
            let original_path = page.duplicate_of.as_deref().unwrap();
            let original = body(&site, original_path);
            let copy = page.body_text.as_deref().unwrap();
            *seen.entry(page.kind).or_insert(0) += 1;
            match page.kind {
                PageKind::Copy => assert_eq!(
                    site.response_bytes(&page.path),
                    site.response_bytes(original_path)
                ),
                PageKind::Mirror => {
                    assert_eq!(copy, original);
                    assert_ne!(
                        site.response_bytes(&page.path),
                        site.response_bytes(original_path)
                    );
                }
                PageKind::Edit => {
                    let before: Vec<&str> = original.split_whitespace().collect();
                    let after: Vec<&str> = copy.split_whitespace().collect();
                    assert_eq!(before.len(), after.len());
                    let changed = before
                        .iter()
                        .zip(&after)
                        .filter(|(old, new)| old != new)
                        .count();
                    assert!(
                        (1..=2).contains(&changed),
                        "{} changes {changed} words",
                        page.path
                    );
                    let hamming = distance(original, copy);
                    eprintln!("{} at distance {hamming}", page.path);
                    assert!(
                        hamming <= 3,
                        "{} at distance {hamming} from its original",
                        page.path
                    );
                }
                other => panic!("unexpected duplicate kind {other:?}"),
            }
        }
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn article_bodies_have_the_promised_length_and_appear_in_the_page() {
        let site = Site::generate(&SiteConfig::default());
        for page in site.pages_of_kind(PageKind::Article) {
            let words = page
                .body_text
                .as_deref()
                .unwrap()
                .split_whitespace()
                .count();
            assert!((300..=800).contains(&words), "{}: {words} words", page.path);
            let html = std::str::from_utf8(site.response_bytes(&page.path).unwrap()).unwrap();
            for paragraph in page.body_text.as_deref().unwrap().split('\n') {
                assert!(html.contains(&format!("<p>{}</p>", html::escape_html(paragraph))));
            }
        }
    }

    #[test]
    fn chinese_and_lying_pages_decode_to_their_text_in_the_true_encoding() {
        let site = Site::generate(&SiteConfig::default());
        let pages = site
            .pages_of_kind(PageKind::ZhArticle)
            .chain(site.pages_of_kind(PageKind::Lie));
        let mut count = 0;
        for page in pages {
            count += 1;
            let encoding =
                encoding_rs::Encoding::for_label(page.true_encoding.as_deref().unwrap().as_bytes())
                    .unwrap();
            let bytes = site.response_bytes(&page.path).unwrap();
            let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
            assert!(!had_errors, "{}", page.path);
            for paragraph in page.body_text.as_deref().unwrap().split('\n') {
                assert!(text.contains(paragraph), "{}", page.path);
            }
            assert!(text.contains("作者："));
            if page.true_encoding.as_deref() == Some("GBK") {
                assert!(
                    std::str::from_utf8(bytes).is_err(),
                    "{} must not be valid UTF-8",
                    page.path
                );
            }
        }
        assert_eq!(count, 20 + LIES.len());
    }

    #[test]
    fn binding_the_port_rewrites_links_headers_and_bodies() {
        let mut site = Site::generate(&SiteConfig::default());
        site.bind_port(4321);
        assert!(site.pages().iter().all(|page| !page
            .links
            .iter()
            .any(|link| link.contains(PORT_PLACEHOLDER))));
        assert!(site
            .page("/article/0")
            .unwrap()
            .links
            .contains(&"http://localhost:4321/about".to_string()));
        assert_eq!(
            site.page("/r/absolute").unwrap().redirect_to.as_deref(),
            Some("http://127.0.0.1:4321/about")
        );
        let html = site.response_bytes("/").unwrap();
        assert!(html
            .windows(21)
            .any(|window| window == b"http://localhost:4321"));
        assert!(!html
            .windows(PORT_PLACEHOLDER.len())
            .any(|window| window == PORT_PLACEHOLDER.as_bytes()));
    }
}
