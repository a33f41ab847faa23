//! The messages between stages: the contract of the pipeline.
//!
//! Every message carries `v` (the [`VERSION`] it was written with) and is
//! encoded as MessagePack with named fields ([`encode`]/[`decode`]), so a
//! newer reader accepts older messages that lack new optional fields, and
//! page bodies travel as raw bytes, not escaped text.
//!
//! | queue         | message      | written by            | read by     |
//! |---------------|--------------|-----------------------|-------------|
//! | `frontier`    | [`UrlBatch`] | `crawler seed`, extractor | frontier |
//! | `fetch`       | [`FetchTask`]| frontier              | fetcher     |
//! | `extract`     | [`Page`]     | fetcher               | extractor   |
//! | `contentseen` | [`Document`] | extractor             | contentseen |
//!
//! What contentseen stores is a [`StoredDocument`] (JSON in the store, and the
//! line format of `crawler export`).
//!
//! A message names its crawl by a [`CrawlRef`] (the crawl's name and the hash
//! of its settings), not by the settings themselves: those are stored once
//! per crawl when it is seeded ([`crate::crawls::register`]) and read
//! through a cache ([`crate::crawls::Specs`]). A fetch task is then about
//! 130 bytes instead of 1.4 KB with 100 seed hosts in its allowed domains,
//! and the tasks waiting in the hosts' queues (most of a large crawl) are
//! that much smaller in Redis and on disk. Messages of version 1 carried
//! the settings inline; they still decode ([`CrawlRef::inline`]).

use std::sync::Arc;

use serde::{de::DeserializeOwned, Deserialize, Deserializer, Serialize};

/// The message format version written by this build (2: crawls by
/// reference; 1: the settings inline, still read).
pub const VERSION: u16 = 2;

/// A message could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("cannot decode message: {0}")]
    Decode(#[from] rmp_serde::decode::Error),
    #[error("cannot encode message: {0}")]
    Encode(#[from] rmp_serde::encode::Error),
    #[error("message version {found} is newer than this build understands ({VERSION})")]
    Version { found: u16 },
    #[error("page body does not decompress within {max} bytes: {reason}")]
    Body { max: usize, reason: String },
}

/// Every message type has a version field; the codec checks it.
pub trait Versioned {
    fn version(&self) -> u16;
}

pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, CodecError> {
    Ok(rmp_serde::to_vec_named(msg)?)
}

pub fn decode<T: DeserializeOwned + Versioned>(bytes: &[u8]) -> Result<T, CodecError> {
    let msg: T = rmp_serde::from_slice(bytes)?;
    if msg.version() > VERSION {
        return Err(CodecError::Version {
            found: msg.version(),
        });
    }
    Ok(msg)
}

fn version() -> u16 {
    VERSION
}

/// The settings of one crawl, stored once when it is seeded
/// ([`crate::crawls::register`]) and named by every message of the crawl
/// through a [`CrawlRef`], so several crawls with different settings (or one
/// crawl seeded again with new ones) share one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlSpec {
    /// The crawl's name; also tags every stored document.
    pub name: String,
    /// Hosts (and their subdomains) the crawl may follow links into. Empty:
    /// the hosts of the seeds.
    #[serde(default)]
    pub allow_domains: Vec<String>,
    /// Links deeper than this many hops from a seed are not followed.
    pub max_depth: u32,
    /// At most this many URLs are released for fetching in this crawl.
    #[serde(default)]
    pub max_pages: Option<u64>,
    /// The least time between two requests to one host (origin), for the
    /// whole cluster; robots.txt's Crawl-delay wins when larger.
    #[serde(default = "default_delay_ms")]
    pub delay_ms: u64,
    /// Only URLs matching one of these regular expressions (if any) are followed.
    #[serde(default)]
    pub include: Vec<String>,
    /// URLs matching any of these regular expressions are never followed.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// At most this many URLs released per host (origin) in this crawl.
    #[serde(default)]
    pub max_pages_per_host: Option<u64>,
    /// More query parameters to strip when normalizing (a trailing `*`
    /// matches a prefix); `utm_*`, `fbclid` and the like always are.
    #[serde(default)]
    pub strip_params: Vec<String>,
    /// Sort query parameters when normalizing.
    #[serde(default)]
    pub sort_query: bool,
    /// Fetch every stored page again after this many seconds; the interval
    /// doubles while a page does not change and halves when it does.
    #[serde(default)]
    pub recrawl_secs: Option<u64>,
    /// Per-site charset overrides, `HOST=ENCODING` or `*.DOMAIN=ENCODING`
    /// (canonical form, checked by `crawler seed`/`run`): for sites that lie
    /// about their encoding in ways the fetcher's vote cannot see through.
    #[serde(default)]
    pub charset_overrides: Vec<String>,
}

/// The default politeness delay: one request per second per host.
pub const DEFAULT_DELAY_MS: u64 = 1000;

fn default_delay_ms() -> u64 {
    DEFAULT_DELAY_MS
}

impl Default for CrawlSpec {
    fn default() -> Self {
        CrawlSpec {
            name: "default".into(),
            allow_domains: Vec::new(),
            max_depth: 3,
            max_pages: None,
            delay_ms: DEFAULT_DELAY_MS,
            include: Vec::new(),
            exclude: Vec::new(),
            max_pages_per_host: None,
            strip_params: Vec::new(),
            sort_query: false,
            recrawl_secs: None,
            charset_overrides: Vec::new(),
        }
    }
}

impl CrawlSpec {
    /// The hash that names these settings in messages: of their encoding
    /// (MessagePack, named fields), so equal settings give equal hashes
    /// within a build. A build that adds a field hashes the same settings
    /// differently; that only stores them a second time.
    pub fn hash(&self) -> u64 {
        // Encoding a struct of strings and numbers into a Vec cannot fail.
        let bytes = rmp_serde::to_vec_named(self).unwrap_or_default();
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }

    /// How messages name this crawl (store the settings first:
    /// [`crate::crawls::register`]).
    pub fn reference(&self) -> CrawlRef {
        CrawlRef {
            name: self.name.clone(),
            spec: self.hash(),
            inline: None,
        }
    }
}

/// A crawl as a message names it: its name (for crawl control and counters,
/// which need nothing else) and the [`CrawlSpec::hash`] of its settings,
/// which a stage reads through [`crate::crawls::Specs`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrawlRef {
    pub name: String,
    pub spec: u64,
    /// The settings themselves, when the message was written by a build
    /// that carried them inline (version 1): [`crate::crawls::Specs`] uses
    /// them and stores them under [`CrawlRef::spec`] for the messages this
    /// one leads to. Never written.
    #[serde(skip)]
    pub inline: Option<Arc<CrawlSpec>>,
}

impl<'de> Deserialize<'de> for CrawlRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A reference is {name, spec}; a version 1 message has the whole
        // spec there, which has no `spec` field (and a reference has no
        // `max_depth`), so exactly one of the two reads.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Ref { name: String, spec: u64 },
            Inline(CrawlSpec),
        }
        Ok(match Wire::deserialize(d)? {
            Wire::Ref { name, spec } => CrawlRef {
                name,
                spec,
                inline: None,
            },
            Wire::Inline(settings) => CrawlRef {
                spec: settings.hash(),
                name: settings.name.clone(),
                inline: Some(Arc::new(settings)),
            },
        })
    }
}

/// One link found on a page (or one seed), in its own leaf crate so the
/// extractor's pure core can make it without depending on this crate.
pub use link::Link;

/// URLs for the frontier: a batch of seeds, or the outlinks of one page
/// (one message per page, not one per link).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlBatch {
    #[serde(default = "version")]
    pub v: u16,
    /// Unique per published batch: the frontier records which URLs this batch
    /// claimed, so a redelivery of the same batch re-releases them instead of
    /// dropping them as already seen.
    pub id: String,
    pub crawl: CrawlRef,
    /// Depth of these URLs (0 for seeds).
    pub depth: u32,
    /// True for seeds: seeds define the crawl's scope when it has no allowed domains.
    #[serde(default)]
    pub seeds: bool,
    /// The page the links were found on (for logs of invalid URLs).
    #[serde(default)]
    pub source: Option<String>,
    /// For the target of a redirect: how many redirects led here.
    #[serde(default)]
    pub redirects: u32,
    /// 0 for new links. A fetcher that failed transiently sends the URL back
    /// with the attempt number it failed on + 1: the frontier then skips the
    /// seen check and schedules it again after a backoff, politely.
    #[serde(default)]
    pub attempt: u32,
    /// A URL already admitted, handed back to be scheduled again (its host
    /// was not due): skips the seen check without counting as an attempt.
    #[serde(default)]
    pub rescheduled: bool,
    /// For a URL handed back ([`UrlBatch::rescheduled`]): the identity of
    /// the task it came from, which the task it becomes keeps. A task that
    /// was fetched, lost its ack in a broker restart and was then handed
    /// back on its redelivery is the same task, counted once
    /// ([`crate::once`]); with a new identity it was fetched
    /// and counted twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub links: Vec<Link>,
}

impl UrlBatch {
    /// A batch (with a fresh id) of new links of `crawl` at `depth`: no
    /// seeds, found on no page, neither redirected nor retried. Callers
    /// adjust what differs.
    pub fn new(crawl: &CrawlRef, depth: u32, links: Vec<Link>) -> UrlBatch {
        UrlBatch {
            v: VERSION,
            id: new_id(),
            crawl: crawl.clone(),
            depth,
            seeds: false,
            source: None,
            redirects: 0,
            attempt: 0,
            rescheduled: false,
            task: None,
            links,
        }
    }

    /// One URL that a fetch of `task` sends back to the frontier (a retry, a
    /// redirect target, a task whose host was not due): same crawl, depth,
    /// redirect count and attempt as the task, found on the task's URL.
    /// Callers adjust what differs.
    ///
    /// Its id is derived from the task, `why` (`"retry"`, `"redirect"`,
    /// `"later"`) and `url`, not fresh: a task delivered again after its
    /// worker died between the publish and the ack sends the same batch,
    /// which the frontier counts once and whose task the fetcher counts
    /// once. (A fresh id made a redelivered retry a second retry, fetched
    /// and counted again.)
    pub fn follow_up(task: &FetchTask, why: &str, url: &str) -> UrlBatch {
        UrlBatch {
            id: FetchTask::derive_id(&[why, &task.url, &task.identity(), url]),
            source: Some(task.url.clone()),
            redirects: task.redirects,
            attempt: task.attempt,
            ..UrlBatch::new(&task.crawl, task.depth, vec![Link::new(url)])
        }
    }
}

/// One URL to fetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FetchTask {
    #[serde(default = "version")]
    pub v: u16,
    pub crawl: CrawlRef,
    /// The normalized URL.
    pub url: String,
    pub depth: u32,
    /// How many redirects led to this URL (the fetcher stops at its limit).
    #[serde(default)]
    pub redirects: u32,
    /// 0 on the first try; see [`UrlBatch::attempt`].
    #[serde(default)]
    pub attempt: u32,
    /// A scheduled refetch of a stored page (see [`CrawlSpec::recrawl_secs`]).
    #[serde(default)]
    pub recrawl: bool,
    /// This task's identity, derived from what created it (the frontier's
    /// batch and the URL, or the stored page a refetch is for), so a
    /// redelivered or re-released task keeps it: the fetcher counts a task
    /// once ([`crate::once`]). Empty in tasks written before it
    /// existed ([`FetchTask::identity`] stands in).
    #[serde(default)]
    pub id: String,
}

impl FetchTask {
    /// A task id from the parts that make it unique (hashed, 32 hex digits).
    pub fn derive_id(parts: &[&str]) -> String {
        let joined = parts.join("\u{1f}");
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(joined.as_bytes()))
    }

    /// [`FetchTask::id`], or for a task without one its URL's attempt.
    pub fn identity(&self) -> String {
        if self.id.is_empty() {
            format!("{}/{}/{}", self.attempt, self.redirects, self.recrawl as u8)
        } else {
            self.id.clone()
        }
    }
}

/// The crawl name of an encoded [`FetchTask`], without decoding the rest
/// (the twin of the Lua `cmsgpack.unpack(task).crawl.name` in the
/// politeness scripts); `None` when the bytes are no such task.
pub fn task_crawl(task: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Name {
        name: String,
    }
    #[derive(Deserialize)]
    struct Task {
        crawl: Name,
    }
    rmp_serde::from_slice::<Task>(task)
        .ok()
        .map(|t| t.crawl.name)
}

/// A fetched HTML page, decoded to UTF-8 by the fetcher's charset vote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    #[serde(default = "version")]
    pub v: u16,
    pub crawl: CrawlRef,
    /// The URL the frontier released.
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    pub depth: u32,
    pub status: u16,
    pub content_type: Option<String>,
    /// The encoding the charset vote chose (WHATWG name).
    pub encoding: String,
    /// The per-site override rule (of [`CrawlSpec::charset_overrides`]) that
    /// decided the encoding, when one did.
    #[serde(default)]
    pub charset_override: Option<String>,
    /// RFC 3339, UTC.
    pub fetched_at: String,
    /// A scheduled refetch of a stored page.
    #[serde(default)]
    pub recrawl: bool,
    /// The page as UTF-8 bytes.
    #[serde(with = "serde_bytes")]
    pub html: Vec<u8>,
    /// The [`FetchTask::identity`] of the task that fetched it: the
    /// extractor counts a task's page once, however many times a
    /// redelivered task was fetched. Empty in pages written before it
    /// existed.
    #[serde(default)]
    pub task: String,
    /// `html` holds the page compressed with zstd ([`Page::compressed`]):
    /// a news page shrinks about fivefold, and the broker's cost grows with
    /// message size. Read it with [`Page::html`].
    #[serde(default)]
    pub zstd: bool,
    /// The HTTP exchange as it went over the wire, kept only when the crawl
    /// writes WARC files (the fetcher's `CRAWLER_WARC_DIR`); absent, and
    /// not written, otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawExchange>,
}

/// One HTTP exchange as the fetcher sent and received it, for the WARC
/// `request` and `response` records (the `warc` crate): the request head,
/// the response head, and the body bytes before any charset decoding.
///
/// The body is what the HTTP layer gave: de-chunked and, when the server
/// sent it compressed, decompressed (reqwest then drops `Content-Encoding`
/// and `Content-Length` from the headers); so the response head has no
/// `Transfer-Encoding` and its `Content-Length` is the body's length, and
/// the head and body read together as one valid HTTP message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawExchange {
    /// The request line and headers, CRLF line ends, ending with the empty
    /// line (a GET has no body).
    #[serde(with = "serde_bytes")]
    pub request: Vec<u8>,
    /// The status line and headers, CRLF line ends, ending with the empty line.
    #[serde(with = "serde_bytes")]
    pub response: Vec<u8>,
    /// The body, zstd-compressed when `zstd` (as [`Page::html`]).
    #[serde(with = "serde_bytes")]
    pub body: Vec<u8>,
    #[serde(default)]
    pub zstd: bool,
}

impl RawExchange {
    /// This exchange with its body compressed (zstd level 1), unless that
    /// does not make it smaller.
    pub fn compressed(mut self) -> RawExchange {
        compress_in_place(&mut self.body, &mut self.zstd);
        self
    }

    /// The body, decompressed if it travels compressed; a body over
    /// [`MAX_PAGE_HTML_BYTES`] is an error.
    pub fn body(&self) -> Result<std::borrow::Cow<'_, [u8]>, CodecError> {
        inflated(&self.body, self.zstd)
    }
}

/// `bytes` compressed in place (and `zstd` set) unless they already are or
/// compression does not make them smaller.
fn compress_in_place(bytes: &mut Vec<u8>, zstd: &mut bool) {
    if !*zstd {
        if let Some(c) = compress(bytes) {
            *bytes = c;
            *zstd = true;
        }
    }
}

/// `bytes` as they read: decompressed when `zstd` (within
/// [`MAX_PAGE_HTML_BYTES`]), else as they are.
fn inflated(bytes: &[u8], zstd: bool) -> Result<std::borrow::Cow<'_, [u8]>, CodecError> {
    if zstd {
        decompress(bytes).map(std::borrow::Cow::Owned)
    } else {
        Ok(std::borrow::Cow::Borrowed(bytes))
    }
}

/// `bytes` compressed with zstd level 1, when that makes them smaller.
fn compress(bytes: &[u8]) -> Option<Vec<u8>> {
    crate::zstd_contexts::compress(bytes, 1)
        .ok()
        .filter(|c| c.len() < bytes.len())
}

/// zstd-compressed `bytes` inflated, within [`MAX_PAGE_HTML_BYTES`].
fn decompress(bytes: &[u8]) -> Result<Vec<u8>, CodecError> {
    // Streamed with a byte limit: memory grows with the page, not
    // with the cap.
    use std::io::Read;
    let err = |reason: String| CodecError::Body {
        max: MAX_PAGE_HTML_BYTES,
        reason,
    };
    let mut out = Vec::with_capacity(bytes.len() * 4);
    crate::zstd_contexts::with_decoder(bytes, |decoder| {
        decoder
            .take(MAX_PAGE_HTML_BYTES as u64 + 1)
            .read_to_end(&mut out)
    })
    .map_err(|e| err(e.to_string()))?;
    if out.len() > MAX_PAGE_HTML_BYTES {
        return Err(err("too large".into()));
    }
    Ok(out)
}

/// The longest URL, in bytes, any stage accepts: the frontier refuses longer
/// links and the fetcher longer task URLs (the old Internet Explorer limit,
/// which most servers honour).
pub const MAX_URL_BYTES: usize = 2083;

/// The most bytes a page's HTML may decompress to: the fetcher's body cap
/// (10 MiB) decoded to UTF-8 grows at most threefold.
pub const MAX_PAGE_HTML_BYTES: usize = 32 << 20;

impl Page {
    /// This page with its HTML compressed (zstd level 1, about 3–5× on
    /// news pages), unless compression does not make it smaller.
    pub fn compressed(mut self) -> Page {
        compress_in_place(&mut self.html, &mut self.zstd);
        self.raw = self.raw.map(RawExchange::compressed);
        self
    }

    /// The page's HTML as UTF-8 bytes, decompressed if it travels
    /// compressed; a body that would exceed [`MAX_PAGE_HTML_BYTES`] is an
    /// error (bounded memory for any message).
    pub fn html(&self) -> Result<std::borrow::Cow<'_, [u8]>, CodecError> {
        inflated(&self.html, self.zstd)
    }
}

/// An extracted article, on its way to near-duplicate detection and storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    #[serde(default = "version")]
    pub v: u16,
    pub crawl: String,
    pub url: String,
    pub final_url: String,
    pub status: u16,
    pub encoding: String,
    pub title: Option<String>,
    pub published: Option<String>,
    /// The author as one value (Han names joined by spaces, others by `", "`).
    pub author: Option<String>,
    /// Each author's name (the extractor's checked candidates); empty when none.
    #[serde(default)]
    pub authors: Vec<String>,
    pub text: String,
    pub fetched_at: String,
    #[serde(default)]
    pub depth: u32,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub site_name: Option<String>,
    #[serde(default)]
    pub images: Vec<String>,
    /// A scheduled refetch of a stored page: compared with what is stored.
    #[serde(default)]
    pub recrawl: bool,
    /// The crawl's settings (contentseen reads `recrawl_secs` there, to
    /// schedule the next fetch). Version 1 documents carried them only for
    /// crawls that recrawl; absent, the page is not refetched.
    #[serde(default)]
    pub spec: Option<CrawlRef>,
    /// Whether the extractor found an article on the page; a listing,
    /// navigation or empty page is stored without one and is never a
    /// near-duplicate.
    #[serde(default = "yes")]
    pub article: bool,
    /// The per-site charset override rule that decided the page's encoding,
    /// when one did (the fetcher's [`Page::charset_override`]).
    #[serde(default)]
    pub charset_override: Option<String>,
    /// The page's HTTP exchange ([`Page::raw`]), passed on unchanged for
    /// contentseen's WARC records; absent when the crawl writes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawExchange>,
}

fn yes() -> bool {
    true
}

impl Document {
    /// A document of `crawl` with this URL and body, the other fields empty
    /// (HTTP 200, UTF-8, fetched now).
    pub fn new(crawl: &str, url: &str, text: &str) -> Document {
        Document {
            v: VERSION,
            crawl: crawl.into(),
            url: url.into(),
            final_url: url.into(),
            status: 200,
            encoding: "UTF-8".into(),
            title: None,
            published: None,
            author: None,
            authors: Vec::new(),
            text: text.into(),
            fetched_at: now_rfc3339(),
            depth: 0,
            lang: None,
            site_name: None,
            images: Vec::new(),
            recrawl: false,
            spec: None,
            article: true,
            charset_override: None,
            raw: None,
        }
    }
}

/// A document as stored and exported: the [`Document`] plus what contentseen
/// decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredDocument {
    pub url: String,
    pub final_url: String,
    pub status: u16,
    pub encoding: String,
    pub title: Option<String>,
    pub published: Option<String>,
    pub author: Option<String>,
    /// Each author's name; empty (and not written) when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authors: Vec<String>,
    pub text: String,
    /// The 64-bit SimHash of `text`, 16 hex digits.
    pub simhash: String,
    /// The URL of the earlier stored document this one nearly duplicates.
    pub duplicate_of: Option<String>,
    /// Hamming distance to `duplicate_of`'s fingerprint.
    pub distance: Option<u32>,
    pub fetched_at: String,
    pub crawl: String,
    #[serde(default)]
    pub depth: u32,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub site_name: Option<String>,
    #[serde(default)]
    pub images: Vec<String>,
    /// When a refetch last found the text changed (RFC 3339), if ever.
    #[serde(default)]
    pub changed_at: Option<String>,
    /// How many refetches found it unchanged in a row.
    #[serde(default)]
    pub unchanged: u32,
    /// False for a page without an article (a listing, a navigation page,
    /// an empty extraction): stored, never a near-duplicate.
    #[serde(default = "yes")]
    pub article: bool,
    /// Tokens of the body (words; CJK, Thai and similar scripts by
    /// character), as the fingerprint counts them.
    #[serde(default)]
    pub tokens: u32,
    /// For a near-duplicate: the SimHash radius that applied to the pair
    /// (the smaller of the two bodies' radii).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius: Option<u32>,
    /// For a near-duplicate: the MinHash estimate of the Jaccard
    /// similarity of the two bodies' shingles (the second signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jaccard: Option<f32>,
    /// The per-site charset override rule that decided the encoding, when
    /// one did (the document's charset evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset_override: Option<String>,
    /// The `WARC-Record-ID` of the page's `response` record, when the crawl
    /// writes WARC files: a near-duplicate's `revisit` record names it in
    /// `WARC-Refers-To` (its `WARC-Refers-To-Date` is `fetched_at`, its
    /// `WARC-Refers-To-Target-URI` `final_url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc_record_id: Option<String>,
}

macro_rules! versioned {
    ($($t:ty),*) => {$(
        impl Versioned for $t {
            fn version(&self) -> u16 { self.v }
        }
    )*};
}
versioned!(UrlBatch, FetchTask, Page, Document);

/// Every message belongs to one crawl.
pub trait OfCrawl {
    /// The name of the crawl the message belongs to.
    fn crawl_name(&self) -> &str;
}

macro_rules! of_crawl {
    ($($t:ty => $($field:ident).+),*) => {$(
        impl OfCrawl for $t {
            fn crawl_name(&self) -> &str { &self.$($field).+ }
        }
    )*};
}
of_crawl!(
    UrlBatch => crawl.name,
    FetchTask => crawl.name,
    Page => crawl.name,
    Document => crawl
);

/// A fresh unique id for a published [`UrlBatch`].
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Now, as RFC 3339 UTC with seconds.
pub fn now_rfc3339() -> String {
    rfc3339_from_unix(jiff::Timestamp::now().as_second())
}

/// Formats Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_from_unix(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_string()
}

/// Unix seconds of an RFC 3339 time whose [`rfc3339_from_unix`] form is
/// exactly `text` (a UTC time to the second), else `None`.
pub fn unix_of_rfc3339(text: &str) -> Option<i64> {
    let secs = text.parse::<jiff::Timestamp>().ok()?.as_second();
    (rfc3339_from_unix(secs) == text).then_some(secs)
}

/// The last fetch of a URL: what `crawler query` shows (as JSON, with the
/// URL) for a page not stored, and what the fetcher keeps in the URL's
/// record ([`crate::once::FETCH_RECORD`], [`FetchRecord::compact`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchRecord {
    pub url: String,
    /// How it ended: `ok`, `redirect`, `http_error`, `timeout`, ...
    pub outcome: String,
    pub http_status: Option<u16>,
    /// Where a redirect pointed.
    pub final_url: Option<String>,
    pub reason: Option<String>,
    pub encoding: Option<String>,
    pub fetched_at: String,
    /// 0 for the first try (see [`FetchTask::attempt`]).
    pub attempt: u32,
    /// The body's size as received (before decoding), for a page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The failure is transient and the URL went back to the frontier for
    /// another attempt; the outcome is not final yet.
    pub will_retry: bool,
}

/// The compact form of a [`FetchRecord`] (MessagePack, by position; the
/// URL is the record's key; the time in Unix seconds when it is one).
#[derive(Serialize, Deserialize)]
struct CompactFetch(
    String,
    Option<u16>,
    Option<String>,
    Option<String>,
    Option<String>,
    FetchTime,
    u32,
    Option<u64>,
    bool,
);

/// A time kept as Unix seconds when [`rfc3339_from_unix`] gives it back,
/// else as written.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum FetchTime {
    Unix(i64),
    Text(String),
}

/// A failure's reason is kept to this many bytes in the URL record.
pub const MAX_REASON_BYTES: usize = 200;

impl FetchRecord {
    /// Its compact bytes (the reason cut at [`MAX_REASON_BYTES`]).
    pub fn compact(&self) -> Vec<u8> {
        let reason = self.reason.as_ref().map(|r| {
            let mut end = r.len().min(MAX_REASON_BYTES);
            while !r.is_char_boundary(end) {
                end -= 1;
            }
            r[..end].to_string()
        });
        let time = match unix_of_rfc3339(&self.fetched_at) {
            Some(secs) => FetchTime::Unix(secs),
            None => FetchTime::Text(self.fetched_at.clone()),
        };
        rmp_serde::to_vec(&CompactFetch(
            self.outcome.clone(),
            self.http_status,
            self.final_url.clone(),
            reason,
            self.encoding.clone(),
            time,
            self.attempt,
            self.bytes,
            self.will_retry,
        ))
        .unwrap_or_default()
    }

    /// The record of `url` from its compact bytes.
    pub fn from_compact(url: &str, bytes: &[u8]) -> Result<FetchRecord, CodecError> {
        let c: CompactFetch = rmp_serde::from_slice(bytes)?;
        Ok(FetchRecord {
            url: url.to_string(),
            outcome: c.0,
            http_status: c.1,
            final_url: c.2,
            reason: c.3,
            encoding: c.4,
            fetched_at: match c.5 {
                FetchTime::Unix(secs) => rfc3339_from_unix(secs),
                FetchTime::Text(t) => t,
            },
            attempt: c.6,
            bytes: c.7,
            will_retry: c.8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of `http://a/` with this HTML, uncompressed, no raw exchange.
    fn page(html: &[u8]) -> Page {
        Page {
            v: VERSION,
            crawl: CrawlSpec::default().reference(),
            url: "http://a/".into(),
            final_url: "http://a/".into(),
            depth: 0,
            status: 200,
            content_type: None,
            encoding: "UTF-8".into(),
            charset_override: None,
            fetched_at: now_rfc3339(),
            recrawl: false,
            html: html.to_vec(),
            task: String::new(),
            zstd: false,
            raw: None,
        }
    }

    #[test]
    fn a_compressed_page_reads_back_and_a_bomb_is_refused() {
        let html = "<p>\u{4e2d} the same words again and again</p>".repeat(500);
        let page = page(html.as_bytes());
        let small = page.clone().compressed();
        assert!(small.zstd && small.html.len() * 5 < html.len());
        let back: Page = decode(&encode(&small).unwrap()).unwrap();
        assert_eq!(back.html().unwrap().as_ref(), html.as_bytes());
        // Not compressed: read as it is.
        assert_eq!(page.html().unwrap().as_ref(), html.as_bytes());
        // Garbage, and a body that would inflate past the cap.
        let garbage = Page {
            html: b"not zstd".to_vec(),
            zstd: true,
            ..page.clone()
        };
        assert!(garbage.html().is_err());
        let bomb = Page {
            html: zstd::bulk::compress(&vec![b'a'; MAX_PAGE_HTML_BYTES + 1], 1).unwrap(),
            zstd: true,
            ..page
        };
        assert!(matches!(bomb.html(), Err(CodecError::Body { .. })));
    }

    /// Pages written by a build that still had `charset_votes` (always nil)
    /// read: messages are maps by field name, and an unknown name is skipped.
    #[test]
    fn a_page_with_the_old_charset_votes_field_still_reads() {
        #[derive(Serialize)]
        struct Old<'a> {
            #[serde(flatten)]
            page: &'a Page,
            charset_votes: Option<String>,
        }
        let page = page(b"<p>x</p>");
        let old = encode(&Old {
            page: &page,
            charset_votes: None,
        })
        .unwrap();
        let needle = b"charset_votes";
        assert!(old.windows(needle.len()).any(|w| w == needle));
        assert_eq!(decode::<Page>(&old).unwrap(), page);
    }

    #[test]
    fn page_round_trips_with_raw_body() {
        let page = Page {
            depth: 1,
            content_type: Some("text/html".into()),
            ..page("<p>\u{4e2d}\"quoted\"</p>".as_bytes())
        };
        let bytes = encode(&page).unwrap();
        // The body is stored raw: its bytes appear verbatim in the encoding.
        let needle = "<p>\u{4e2d}\"quoted\"</p>".as_bytes();
        assert!(bytes.windows(needle.len()).any(|w| w == needle));
        let back: Page = decode(&bytes).unwrap();
        assert_eq!(back, page);
    }

    #[test]
    fn the_raw_exchange_travels_compressed_and_only_when_kept() {
        let page = page(b"<p>x</p>");
        // Off: no field in the message, and a message without it reads.
        let bytes = encode(&page).unwrap();
        // (The key as MessagePack writes it: "raw" is also in "recrawl".)
        let key = b"\xa3raw";
        assert!(!bytes.windows(4).any(|w| w == key));
        assert_eq!(decode::<Page>(&bytes).unwrap().raw, None);
        let body = "<p>\u{4e2d} raw bytes, not decoded</p>"
            .repeat(200)
            .into_bytes();
        let raw = RawExchange {
            request: b"GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
            response: b"HTTP/1.1 200 OK\r\n\r\n".to_vec(),
            body: body.clone(),
            zstd: false,
        };
        let kept = Page {
            raw: Some(raw),
            ..page
        }
        .compressed();
        let bytes = encode(&kept).unwrap();
        assert!(bytes.windows(4).any(|w| w == key));
        let back: Page = decode(&bytes).unwrap();
        let raw = back.raw.expect("the raw exchange");
        assert!(raw.zstd && raw.body.len() * 5 < body.len());
        assert_eq!(raw.body().unwrap().as_ref(), &body[..]);
    }

    #[test]
    fn newer_versions_and_garbage_are_refused() {
        let mut task = FetchTask {
            v: VERSION + 1,
            crawl: CrawlSpec::default().reference(),
            url: "http://a/".into(),
            depth: 0,
            redirects: 0,
            attempt: 0,
            recrawl: false,
            id: String::new(),
        };
        let bytes = encode(&task).unwrap();
        assert!(matches!(
            decode::<FetchTask>(&bytes),
            Err(CodecError::Version { .. })
        ));
        task.v = VERSION;
        assert!(decode::<FetchTask>(&encode(&task).unwrap()).is_ok());
        assert!(decode::<FetchTask>(b"\xff\x00garbage").is_err());
    }

    #[test]
    fn a_task_names_its_crawl_and_a_version_1_task_with_the_settings_still_reads() {
        let spec = CrawlSpec {
            name: "news".into(),
            allow_domains: (0..100).map(|i| format!("site-{i}.example.com")).collect(),
            ..CrawlSpec::default()
        };
        let task = FetchTask {
            v: VERSION,
            crawl: spec.reference(),
            url: "http://site-7.example.com/a/page.html".into(),
            depth: 2,
            redirects: 0,
            attempt: 0,
            recrawl: false,
            id: FetchTask::derive_id(&["x"]),
        };
        let bytes = encode(&task).unwrap();
        assert!(bytes.len() < 160, "{} bytes", bytes.len());
        let back: FetchTask = decode(&bytes).unwrap();
        assert_eq!(back, task);
        assert_eq!(task_crawl(&bytes).as_deref(), Some("news"));
        // Version 1: the whole spec in `crawl`.
        #[derive(Serialize)]
        struct V1<'a> {
            v: u16,
            crawl: &'a CrawlSpec,
            url: &'a str,
            depth: u32,
        }
        let old = encode(&V1 {
            v: 1,
            crawl: &spec,
            url: "http://site-7.example.com/",
            depth: 1,
        })
        .unwrap();
        assert!(old.len() > 1000);
        let back: FetchTask = decode(&old).unwrap();
        assert_eq!(back.crawl.name, "news");
        assert_eq!(back.crawl.spec, spec.hash());
        assert_eq!(back.crawl.inline.as_deref(), Some(&spec));
        assert_eq!(task_crawl(&old).as_deref(), Some("news"));
        // Other settings, another hash; the same settings, the same.
        let other = CrawlSpec {
            max_depth: 4,
            ..spec.clone()
        };
        assert_ne!(other.hash(), spec.hash());
        assert_eq!(spec.clone().hash(), spec.hash());
    }

    #[test]
    fn fetch_records_round_trip_compactly() {
        let r = FetchRecord {
            url: "http://a/".into(),
            outcome: "ok".into(),
            http_status: Some(200),
            final_url: None,
            reason: None,
            encoding: Some("UTF-8".into()),
            fetched_at: "2026-11-27T10:00:00Z".into(),
            attempt: 0,
            bytes: Some(31_337),
            will_retry: false,
        };
        let c = r.compact();
        assert!(c.len() < 30, "{} bytes", c.len());
        assert_eq!(FetchRecord::from_compact("http://a/", &c).unwrap(), r);
        let odd = FetchRecord {
            fetched_at: "2026-11-27T10:00:00.5+01:00".into(),
            reason: Some("é".repeat(150)),
            ..r
        };
        let back = FetchRecord::from_compact("http://a/", &odd.compact()).unwrap();
        assert_eq!(back.fetched_at, odd.fetched_at);
        assert_eq!(back.reason.map(|r| r.len()), Some(200));
    }

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_from_unix(1_550_629_560), "2019-02-20T02:26:00Z");
    }
}
