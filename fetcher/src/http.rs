//! The HTTP client: reqwest with every limit named, and a guard that refuses
//! private and loopback addresses after DNS resolution and on IP literals.
//!
//! A fetch is two steps, so the caller can decide from the head whether the
//! body is worth reading: [`Client::send`] returns the status and headers as
//! a [`Head`], [`Head::read`] reads the body (decompressed, capped). Both run
//! under one deadline ([`FetchSettings::total_timeout`]), so a server that
//! drips one byte per second or never sends its headers ends as a `timeout`.
//!
//! Redirects are never followed here: a page redirect goes back to the
//! frontier as a new task (scope, seen-set and this guard apply to the target
//! like to any link); [`Client::get_following`] follows them for robots.txt.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::time::Instant;
use url::Url;

/// Default [`FetchSettings::connect_timeout`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`FetchSettings::total_timeout`].
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`FetchSettings::max_body_bytes`]: far above any article page
/// (the median is about 100 KB), far below what hurts a worker.
pub const DEFAULT_MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// Default [`FetchSettings::max_redirects`] (browsers allow about 20; a
/// news site rarely needs more than 3).
pub const DEFAULT_MAX_REDIRECTS: usize = 10;
/// Default [`FetchSettings::max_retries`].
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Idle keep-alive connections kept per host (connection reuse across tasks).
/// A polite crawl has one request at a time in flight per host, so one idle
/// connection is reused; two leave room for a host the crawl lets go faster.
/// Each idle connection keeps its read buffer (hyper grows it up to 400 KB):
/// with 8, `crawler run --state` over 100 hosts peaked at 395.0 MB of RSS at
/// 100,000 pages, with 2 at 342.3 MB, at the same speed (863.9 and 856.0
/// pages/s; `STATE_BENCH_PAGES=100000 STATE_BENCH_COMPARE=0 cargo bench -p
/// evaluation --bench state`, one run each, 2026-11-28; heaptrack of a
/// 30,000-page run had put 41 MB of the 165 MB heap peak in hyper's buffers).
pub const POOL_IDLE_PER_HOST: usize = 2;
/// How long an idle keep-alive connection is kept.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The limits and identity of the client. Each limit exists because some
/// server out there will otherwise hold a worker forever or fill its memory.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// Sent with every request: names the crawler and where to complain.
    pub user_agent: String,
    /// Giving up on a TCP/TLS connect (DNS included).
    pub connect_timeout: Duration,
    /// The whole request, from connect to the last body byte: stops servers
    /// that drip bytes or never answer.
    pub total_timeout: Duration,
    /// Bytes of (decompressed) body kept; more is a `too_large` outcome. The
    /// cap is checked on every decompressed chunk, so a compression bomb
    /// stops here with memory bounded by the cap.
    pub max_body_bytes: usize,
    /// Redirects followed (through the frontier) before `too_many_redirects`.
    pub max_redirects: usize,
    /// URLs longer than this (bytes) are not fetched: `invalid_url`.
    pub max_url_bytes: usize,
    /// Transient failures (timeouts, connection errors, 5xx, 429) are sent
    /// back to the frontier for another attempt at most this many times;
    /// then the failure is final.
    pub max_retries: u32,
    /// Allow loopback, private, link-local and metadata addresses (tests).
    pub allow_private: bool,
}

/// The crawler's name in the User-Agent and in robots.txt matching.
pub const AGENT_NAME: &str = "DedupCrawler";
/// The User-Agent: the crawler's name and version, and the operator's
/// `contact` (a URL or an e-mail address where site owners reach whoever
/// runs the crawl) when one is set. The default names no third party: a
/// crawl's operator sets the contact (`--contact`, `CRAWLER_CONTACT`).
pub fn user_agent(contact: Option<&str>) -> String {
    let version = env!("CARGO_PKG_VERSION");
    match contact.map(str::trim).filter(|c| !c.is_empty()) {
        Some(contact) => format!("Mozilla/5.0 (compatible; {AGENT_NAME}/{version}; +{contact})"),
        None => format!("Mozilla/5.0 (compatible; {AGENT_NAME}/{version})"),
    }
}

/// The User-Agent of a crawl: `user_agent` when the operator gave a whole
/// one, else [`user_agent`] with `contact`; warns (once, at start) when
/// site owners would have no way to reach the operator.
pub fn operator_user_agent(user_agent: Option<String>, contact: Option<&str>) -> String {
    if let Some(ua) = user_agent.filter(|ua| !ua.trim().is_empty()) {
        return ua;
    }
    if contact.is_none_or(|c| c.trim().is_empty()) {
        tracing::warn!(
            "no contact in the User-Agent: set --contact (CRAWLER_CONTACT) to a URL or \
             e-mail address where site owners can reach you"
        );
    }
    self::user_agent(contact)
}

impl FetchSettings {
    /// The product token robots.txt groups are matched against: the
    /// crawler's name in the User-Agent.
    pub fn robots_agent(&self) -> String {
        robots_token(&self.user_agent)
    }
}

/// The crawler's name in a User-Agent: `Name` in `Mozilla/5.0 (compatible;
/// Name/1.0; +url)` or in `Name/1.0 (+url)`; [`AGENT_NAME`] if none.
pub fn robots_token(user_agent: &str) -> String {
    let product = match user_agent.split_once("compatible;") {
        Some((_, rest)) => rest,
        None => user_agent,
    };
    let token: String = product
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    if token.is_empty() {
        AGENT_NAME.to_string()
    } else {
        token
    }
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            user_agent: user_agent(None),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            total_timeout: DEFAULT_TOTAL_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            max_url_bytes: pipeline::messages::MAX_URL_BYTES,
            max_retries: DEFAULT_MAX_RETRIES,
            allow_private: false,
        }
    }
}

/// How a fetch ended. Every fetch ends in exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FetchStatus {
    Ok,
    /// A 3xx: the target goes back to the frontier (scope, seen-set and
    /// depth apply to it like to any link), so each page is fetched once.
    Redirect,
    /// The server answered with a status that is not 2xx or a redirect (or
    /// with a body that cannot be decoded).
    HttpError,
    Timeout,
    TooLarge,
    NotHtml,
    RobotsDisallowed,
    TooManyRedirects,
    /// DNS failure, refused or reset connection, TLS failure.
    ConnectionError,
    /// The address is private/loopback and private addresses are not allowed.
    Refused,
    /// Unparseable, not http(s), or longer than the limit.
    InvalidUrl,
}

impl FetchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FetchStatus::Ok => "ok",
            FetchStatus::Redirect => "redirect",
            FetchStatus::HttpError => "http_error",
            FetchStatus::Timeout => "timeout",
            FetchStatus::TooLarge => "too_large",
            FetchStatus::NotHtml => "not_html",
            FetchStatus::RobotsDisallowed => "robots_disallowed",
            FetchStatus::TooManyRedirects => "too_many_redirects",
            FetchStatus::ConnectionError => "connection_error",
            FetchStatus::Refused => "refused",
            FetchStatus::InvalidUrl => "invalid_url",
        }
    }

    /// Every status, for counters and tests.
    pub const ALL: [FetchStatus; 11] = [
        FetchStatus::Ok,
        FetchStatus::Redirect,
        FetchStatus::HttpError,
        FetchStatus::Timeout,
        FetchStatus::TooLarge,
        FetchStatus::NotHtml,
        FetchStatus::RobotsDisallowed,
        FetchStatus::TooManyRedirects,
        FetchStatus::ConnectionError,
        FetchStatus::Refused,
        FetchStatus::InvalidUrl,
    ];
}

/// True for HTTP statuses worth another try later: 5xx and 429.
pub fn is_transient_http(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// A finished response, within the limits.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub final_url: Url,
    pub content_type: Option<String>,
    /// For a 3xx: the `Location` resolved against the URL.
    pub location: Option<Url>,
    /// The raw `Retry-After` header (429, 503).
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// A fetch that did not give a response within the limits.
#[derive(Debug, thiserror::Error)]
#[error("{status:?}: {reason}")]
pub struct FetchFailure {
    pub status: FetchStatus,
    pub reason: String,
    /// The HTTP status, when the server answered.
    pub http_status: Option<u16>,
}

impl FetchFailure {
    pub fn new(status: FetchStatus, reason: impl Into<String>) -> Self {
        FetchFailure {
            status,
            reason: reason.into(),
            http_status: None,
        }
    }

    fn with_http_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }
}

/// The resolver found only addresses the guard refuses.
#[derive(Debug, thiserror::Error)]
#[error("{host}: no public address (private addresses refused)")]
pub struct PrivateAddressRefused {
    pub host: String,
}

/// True for addresses a crawler must not reach by default: loopback,
/// private, link-local (cloud metadata at 169.254.169.254), CGNAT (Alibaba's
/// metadata at 100.100.100.200), unspecified, broadcast, multicast, reserved
/// and benchmarking ranges, and IPv6 unique-local (AWS metadata at
/// fd00:ec2::254) and link-local, also when an IPv4 address hides inside
/// IPv6 (mapped, NAT64, 6to4).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64.0.0/10 CGNAT
                || (o[0] == 192 && o[1] == 0 && o[2] == 0) // 192.0.0.0/24 IETF
                || (o[0] == 198 && (o[1] & 0xfe) == 18) // 198.18.0.0/15 benchmarking
                || o[0] >= 240 // 240.0.0.0/4 reserved
                || o[0] == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            // 64:ff9b::/96 (NAT64): the last 32 bits are an IPv4 address.
            if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let v4 = std::net::Ipv4Addr::from((u32::from(seg[6]) << 16) | u32::from(seg[7]));
                return is_private(IpAddr::V4(v4));
            }
            // 2002::/16 (6to4): bits 16..48 are an IPv4 address.
            if seg[0] == 0x2002 {
                let v4 = std::net::Ipv4Addr::from((u32::from(seg[1]) << 16) | u32::from(seg[2]));
                if is_private(IpAddr::V4(v4)) {
                    return true;
                }
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
        }
    }
}

/// DNS through the system resolver, dropping private addresses unless
/// allowed: the guard sits where the address is chosen, so a name that
/// resolves to 127.0.0.1 (or changes its answer between two lookups) cannot
/// get past it.
struct GuardedResolver {
    allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow_private || !is_private(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(Box::new(PrivateAddressRefused { host }) as _);
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// True when `url`'s host is an IP literal (or `localhost`) that the guard
/// refuses; other names are checked after DNS resolution.
fn refused_literal(url: &Url, allow_private: bool) -> bool {
    if allow_private {
        return false;
    }
    match url.host() {
        Some(url::Host::Ipv4(ip)) => is_private(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => is_private(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        None => true,
    }
}

/// The HTTP client: one per worker, connections reused across tasks.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    settings: Arc<FetchSettings>,
}

/// A response whose status and headers arrived; the body is still unread.
pub struct Head {
    /// The response as far as it arrived: its status and headers, the body
    /// empty until [`Head::read`] reads it.
    pub parts: Response,
    /// The body length the server announced (absent when the body is
    /// compressed: reqwest decompresses it and the length is unknown).
    pub content_length: Option<u64>,
    response: reqwest::Response,
    /// When the whole fetch must be over ([`FetchSettings::total_timeout`]).
    deadline: Instant,
}

/// The `Accept` header of every request.
pub const ACCEPT: &str = "*/*";
/// The `Accept-Encoding` header of every request: what the client
/// decompresses (reqwest's gzip, deflate, brotli and zstd features).
pub const ACCEPT_ENCODING: &str = "zstd,gzip,deflate,br";

/// `HTTP/1.1` and the like.
fn version_str(version: reqwest::Version) -> &'static str {
    match version {
        reqwest::Version::HTTP_09 => "HTTP/0.9",
        reqwest::Version::HTTP_10 => "HTTP/1.0",
        reqwest::Version::HTTP_2 => "HTTP/2",
        reqwest::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

/// A response's status line and headers as received, for a WARC response
/// record ([`Head::wire_head`]); the body's length is set by
/// [`WireHead::with_length`].
pub struct WireHead {
    pub version: reqwest::Version,
    lines: Vec<u8>,
}

impl WireHead {
    /// The head, with `Content-Length: len` and the empty line that ends it.
    pub fn with_length(mut self, len: usize) -> Vec<u8> {
        self.lines
            .extend_from_slice(format!("content-length: {len}\r\n\r\n").as_bytes());
        self.lines
    }
}

/// What to do when a body is longer than the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// A `too_large` failure (pages).
    Fail,
    /// Keep the first `cap` bytes (robots.txt: Google reads the first 500 KiB).
    Truncate,
}

impl Head {
    /// The status line and headers as received (names in lower case, as
    /// hyper keeps them), without `Transfer-Encoding` and `Content-Length`:
    /// the body is kept de-chunked and decompressed (the decompression
    /// already dropped `Content-Encoding`), and [`WireHead::with_length`]
    /// gives its real length.
    pub fn wire_head(&self) -> WireHead {
        let version = self.response.version();
        let status = self.response.status();
        let mut lines = format!(
            "{} {} {}\r\n",
            version_str(version),
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )
        .into_bytes();
        for (name, value) in self.response.headers() {
            if name == reqwest::header::TRANSFER_ENCODING || name == reqwest::header::CONTENT_LENGTH
            {
                continue;
            }
            lines.extend_from_slice(name.as_str().as_bytes());
            lines.extend_from_slice(b": ");
            lines.extend_from_slice(value.as_bytes());
            lines.extend_from_slice(b"\r\n");
        }
        WireHead { version, lines }
    }

    /// The whole response: [`Head::parts`] with its body, read
    /// decompressed, at most `cap` bytes (beyond them, as `overflow` says),
    /// within the deadline.
    pub async fn read(mut self, cap: usize, overflow: Overflow) -> Result<Response, FetchFailure> {
        let body = self.body(cap, overflow).await?;
        Ok(Response { body, ..self.parts })
    }

    /// Reads the body, decompressed, at most `cap` bytes; stops at the
    /// deadline. Memory stays within `cap` plus one decompressed chunk.
    async fn body(&mut self, cap: usize, overflow: Overflow) -> Result<Vec<u8>, FetchFailure> {
        let url = self.parts.final_url.clone();
        let status = self.parts.status;
        if overflow == Overflow::Fail {
            if let Some(len) = self.content_length.filter(|&len| len > cap as u64) {
                return Err(FetchFailure::new(
                    FetchStatus::TooLarge,
                    format!("{url}: Content-Length {len} over the cap of {cap} bytes"),
                )
                .with_http_status(status));
            }
        }
        // Room for the whole body when the server says how long it is (within
        // the cap), so the bytes are not copied as the buffer grows.
        let announced = self.content_length.unwrap_or(0).min(cap as u64) as usize;
        let mut body = Vec::with_capacity(announced);
        loop {
            let chunk = tokio::time::timeout_at(self.deadline, self.response.chunk()).await;
            match chunk {
                Err(_) => return Err(deadline_passed(&url).with_http_status(status)),
                Ok(Ok(Some(chunk))) => {
                    if body.len() + chunk.len() > cap {
                        if overflow == Overflow::Truncate {
                            let room = cap - body.len();
                            body.extend_from_slice(&chunk[..room]);
                            return Ok(body);
                        }
                        return Err(FetchFailure::new(
                            FetchStatus::TooLarge,
                            format!("{url}: body over {cap} bytes (after decompression)"),
                        )
                        .with_http_status(status));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(Ok(None)) => return Ok(body),
                Ok(Err(e)) => return Err(classify(&url, e).with_http_status(status)),
            }
        }
    }
}

fn deadline_passed(url: &Url) -> FetchFailure {
    FetchFailure::new(
        FetchStatus::Timeout,
        format!("{url}: total timeout (deadline passed)"),
    )
}

impl Client {
    pub fn new(settings: FetchSettings) -> Result<Client, reqwest::Error> {
        let allow_private = settings.allow_private;
        let http = reqwest::Client::builder()
            .user_agent(settings.user_agent.clone())
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.total_timeout)
            // Redirects are not followed here: page redirects go back to the
            // frontier, robots.txt redirects are followed by `get_following`.
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            // A proxy would resolve names itself, past the SSRF guard.
            .no_proxy()
            .pool_max_idle_per_host(POOL_IDLE_PER_HOST)
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .build()?;
        Ok(Client {
            http,
            settings: Arc::new(settings),
        })
    }

    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// Checks `url` before any request: parseable, http(s), within the length
    /// limit, and not an address the guard refuses.
    pub fn check(&self, url: &str) -> Result<Url, FetchFailure> {
        let max = self.settings.max_url_bytes;
        if url.len() > max {
            return Err(FetchFailure::new(
                FetchStatus::InvalidUrl,
                format!("URL of {} bytes, longer than {max}", url.len()),
            ));
        }
        let parsed = Url::parse(url)
            .map_err(|e| FetchFailure::new(FetchStatus::InvalidUrl, format!("{url}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(FetchFailure::new(
                FetchStatus::InvalidUrl,
                format!("{url}: not an http(s) URL with a host"),
            ));
        }
        if refused_literal(&parsed, self.settings.allow_private) {
            return Err(FetchFailure::new(
                FetchStatus::Refused,
                format!("{url}: private or loopback address refused"),
            ));
        }
        Ok(parsed)
    }

    /// Sends a GET for `url` and waits for the status and headers (within the
    /// total timeout). Any HTTP status is a [`Head`]; the caller decides what
    /// a 404 means and whether to read the body.
    pub async fn send(&self, url: &Url) -> Result<Head, FetchFailure> {
        if refused_literal(url, self.settings.allow_private) {
            return Err(FetchFailure::new(
                FetchStatus::Refused,
                format!("{url}: private or loopback address refused"),
            ));
        }
        // reqwest's own timeout covers the same span; this deadline also
        // bounds what reqwest does not see (the body reads of a caller).
        let deadline = Instant::now() + self.settings.total_timeout;
        // Accept and Accept-Encoding set here as the client would set them,
        // so `request_head` knows what was sent.
        let request = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, ACCEPT)
            .header(reqwest::header::ACCEPT_ENCODING, ACCEPT_ENCODING);
        let response = match tokio::time::timeout_at(deadline, request.send()).await {
            Err(_) => return Err(deadline_passed(url)),
            Ok(Err(e)) => return Err(classify(url, e)),
            Ok(Ok(r)) => r,
        };
        let status = response.status().as_u16();
        let final_url = response.url().clone();
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(|s| s.trim().to_string())
        };
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let retry_after = header(reqwest::header::RETRY_AFTER);
        let location = if (300..400).contains(&status) {
            header(reqwest::header::LOCATION).and_then(|l| final_url.join(&l).ok())
        } else {
            None
        };
        Ok(Head {
            parts: Response {
                status,
                final_url,
                content_type,
                location,
                retry_after,
                body: Vec::new(),
            },
            content_length: response.content_length(),
            response,
            deadline,
        })
    }

    /// The request line and headers [`Client::send`] sends for `url`, for
    /// a WARC request record: what this client sets (the hop-by-hop
    /// connection headers hyper adds are left out), names in lower case as
    /// hyper writes them.
    pub fn request_head(&self, url: &Url, version: reqwest::Version) -> Vec<u8> {
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_string(),
        };
        format!(
            "GET {target} {}\r\nhost: {host}\r\nuser-agent: {}\r\naccept: {ACCEPT}\r\naccept-encoding: {ACCEPT_ENCODING}\r\n\r\n",
            version_str(version),
            self.settings.user_agent,
        )
        .into_bytes()
    }

    /// GETs `url` within the limits, body read up to `cap` bytes (the body
    /// of a redirect is not read).
    pub async fn get(
        &self,
        url: &Url,
        cap: usize,
        overflow: Overflow,
    ) -> Result<Response, FetchFailure> {
        let head = self.send(url).await?;
        if head.parts.location.is_some() {
            return Ok(head.parts);
        }
        head.read(cap, overflow).await
    }

    /// GETs `url`, following up to `max_redirects` redirects (each hop
    /// checked by the guard; a loop is an error), keeping at most `cap`
    /// bytes of the body. For robots.txt, whose redirects do not go through
    /// the frontier.
    pub async fn get_following(
        &self,
        url: &Url,
        max_redirects: usize,
        cap: usize,
    ) -> Result<Response, FetchFailure> {
        let mut current = url.clone();
        let mut visited = vec![current.clone()];
        loop {
            let resp = self.get(&current, cap, Overflow::Truncate).await?;
            let Some(next) = resp.location.clone() else {
                return Ok(resp);
            };
            if visited.contains(&next) {
                return Err(FetchFailure::new(
                    FetchStatus::TooManyRedirects,
                    format!("{url}: redirect loop at {next}"),
                ));
            }
            if visited.len() > max_redirects {
                return Err(FetchFailure::new(
                    FetchStatus::TooManyRedirects,
                    format!("{url}: more than {max_redirects} redirects"),
                ));
            }
            visited.push(next.clone());
            current = next;
        }
    }
}

fn classify(url: &Url, e: reqwest::Error) -> FetchFailure {
    let chain = error_chain(&e);
    let status = if refused_in_chain(&e) {
        FetchStatus::Refused
    } else if e.is_timeout() {
        FetchStatus::Timeout
    } else if e.is_builder() {
        FetchStatus::InvalidUrl
    } else if e.is_decode() {
        // The server sent a body its Content-Encoding does not describe.
        FetchStatus::HttpError
    } else {
        FetchStatus::ConnectionError
    };
    FetchFailure::new(status, format!("{url}: {chain}"))
}

/// True when the guarded resolver refused the host somewhere in `e`'s sources.
fn refused_in_chain(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.is::<PrivateAddressRefused>() {
            return true;
        }
        cur = err.source();
    }
    // Some layers re-wrap errors as text only.
    error_chain(e).contains("private addresses refused")
}

/// The error and its sources on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        cur = inner.source();
    }
    s
}

/// True for content types the extractor can read.
pub fn is_html(content_type: Option<&str>) -> bool {
    match content_type {
        // No type: sniffing is the extractor's problem; most such pages are HTML.
        None => true,
        Some(ct) => {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            mime.is_empty()
                || mime == "text/html"
                || mime == "application/xhtml+xml"
                || mime == "text/plain"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses() {
        for ip in [
            "127.0.0.1",
            "127.1.2.3",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "240.1.1.1",
            "198.18.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::7f00:1",
            "2002:7f00:1::1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} is private");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700::1111",
            "172.32.0.1",
            "64:ff9b::808:808",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[test]
    fn literal_hosts() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(refused_literal(&u("http://127.0.0.1:8080/"), false));
        assert!(refused_literal(&u("http://2130706433/"), false));
        assert!(refused_literal(&u("http://localhost/"), false));
        assert!(refused_literal(&u("http://LOCALHOST./"), false));
        assert!(refused_literal(&u("http://a.localhost/"), false));
        assert!(refused_literal(&u("http://[::1]/"), false));
        assert!(!refused_literal(&u("http://127.0.0.1/"), true));
        assert!(!refused_literal(&u("http://example.com/"), false));
    }

    #[test]
    fn urls_are_checked_before_any_request() {
        let client = Client::new(FetchSettings {
            max_url_bytes: 40,
            ..FetchSettings::default()
        })
        .unwrap();
        let status = |u: &str| client.check(u).err().map(|f| f.status);
        for (url, want) in [
            ("http://example.com/a", None),
            (
                "http://example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                Some(FetchStatus::InvalidUrl),
            ),
            ("ftp://example.com/", Some(FetchStatus::InvalidUrl)),
            ("not a url", Some(FetchStatus::InvalidUrl)),
            ("http://10.0.0.1/", Some(FetchStatus::Refused)),
        ] {
            assert_eq!(status(url), want, "{url}");
        }
    }

    #[test]
    fn robots_token_is_the_crawler_name() {
        assert_eq!(FetchSettings::default().robots_agent(), AGENT_NAME);
        assert_eq!(
            robots_token("NewsArchiveBot/2.0 (+https://a.example/bot)"),
            "NewsArchiveBot"
        );
        assert_eq!(
            robots_token("Mozilla/5.0 (compatible; Other-Bot/1; +x)"),
            "Other-Bot"
        );
        assert_eq!(robots_token(""), AGENT_NAME);
    }

    #[test]
    fn the_user_agent_names_the_operators_contact_and_no_one_else() {
        let plain = user_agent(None);
        assert!(
            plain.contains(AGENT_NAME) && !plain.contains('+'),
            "{plain}"
        );
        assert_eq!(user_agent(Some("  ")), plain);
        let ua = user_agent(Some("https://ops.example/crawler"));
        assert!(ua.ends_with("; +https://ops.example/crawler)"), "{ua}");
        assert_eq!(robots_token(&ua), AGENT_NAME);
        // A whole User-Agent wins over the contact.
        assert_eq!(
            operator_user_agent(Some("Bot/1 (+mailto:a@b.example)".into()), Some("x")),
            "Bot/1 (+mailto:a@b.example)"
        );
        assert_eq!(
            operator_user_agent(None, Some("mailto:ops@example.org")),
            user_agent(Some("mailto:ops@example.org"))
        );
    }

    #[test]
    fn transient_statuses() {
        assert!(is_transient_http(429));
        assert!(is_transient_http(503));
        assert!(is_transient_http(500));
        assert!(!is_transient_http(404));
        assert!(!is_transient_http(200));
    }

    #[test]
    fn html_types() {
        assert!(is_html(Some("text/html; charset=gbk")));
        assert!(is_html(Some("application/xhtml+xml")));
        assert!(is_html(None));
        assert!(!is_html(Some("application/pdf")));
        assert!(!is_html(Some("image/png")));
    }
}
