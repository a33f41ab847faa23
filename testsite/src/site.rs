//! The generated site: configuration, page metadata and stored responses.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;

use crate::bodies::GzipBomb;

mod builder;

use builder::SiteBuilder;

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

/// The hostile endpoints, always served.
pub const HOSTILE_PATHS: &[(&str, HostileKind)] = &[
    ("/hostile/drip", HostileKind::Drip),
    ("/hostile/slow-headers", HostileKind::SlowHeaders),
    ("/hostile/bomb", HostileKind::GzipBomb),
    ("/hostile/huge", HostileKind::Huge),
    ("/hostile/endless", HostileKind::Endless),
];

#[cfg(test)]
mod tests;
