//! The HTTP client: reqwest with every limit named, and a guard that refuses
//! private and loopback addresses after DNS resolution and on every redirect.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Url;

/// The limits and identity of the client. Each limit exists because some
/// server out there will otherwise hold a worker forever or fill its memory.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// Sent with every request: names the crawler and where to complain.
    pub user_agent: String,
    /// Giving up on a TCP/TLS connect.
    pub connect_timeout: Duration,
    /// The whole request, body included: stops servers that drip bytes.
    pub total_timeout: Duration,
    /// Bytes of (decompressed) body kept; more is a `too_large` outcome, so a
    /// compression bomb stops here.
    pub max_body_bytes: usize,
    /// Redirects followed (through the frontier) before `too_many_redirects`.
    pub max_redirects: usize,
    /// Allow loopback, private, link-local and metadata addresses (tests).
    pub allow_private: bool,
}

/// The crawler's name in the User-Agent and in robots.txt matching.
pub const AGENT_NAME: &str = "DedupCrawler";

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            user_agent: format!(
                "Mozilla/5.0 (compatible; {AGENT_NAME}/{}; +https://github.com/dedup-crawler)",
                env!("CARGO_PKG_VERSION")
            ),
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            max_body_bytes: 10 * 1024 * 1024,
            max_redirects: 10,
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
    HttpError,
    Timeout,
    TooLarge,
    NotHtml,
    RobotsDisallowed,
    TooManyRedirects,
    ConnectionError,
    /// The address is private/loopback and private addresses are not allowed.
    Refused,
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
}

/// A finished response, within the limits.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub final_url: Url,
    pub content_type: Option<String>,
    /// For a 3xx: the `Location` resolved against the URL.
    pub location: Option<Url>,
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
    fn new(status: FetchStatus, reason: impl Into<String>) -> Self {
        FetchFailure {
            status,
            reason: reason.into(),
            http_status: None,
        }
    }
}

/// True for addresses a crawler must not reach by default: loopback,
/// private, link-local (cloud metadata at 169.254.169.254), CGNAT,
/// unspecified, multicast, and IPv6 unique-local and link-local.
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
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                || o[0] == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
        }
    }
}

/// DNS through the system resolver, dropping private addresses unless allowed.
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
                return Err(
                    format!("{host}: no public address (private addresses refused)").into(),
                );
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// True when `url`'s host is an IP literal that the guard refuses.
fn refused_literal(url: &Url, allow_private: bool) -> bool {
    if allow_private {
        return false;
    }
    match url.host() {
        Some(url::Host::Ipv4(ip)) => is_private(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => is_private(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => true,
    }
}

/// The HTTP client: one per worker, connections reused across tasks.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    settings: Arc<FetchSettings>,
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
            .pool_max_idle_per_host(8)
            .build()?;
        Ok(Client {
            http,
            settings: Arc::new(settings),
        })
    }

    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// GETs `url` within the limits. Any HTTP status is a [`Response`]; the
    /// caller decides what a 404 means.
    pub async fn get(&self, url: &Url) -> Result<Response, FetchFailure> {
        if refused_literal(url, self.settings.allow_private) {
            return Err(FetchFailure::new(
                FetchStatus::Refused,
                format!("{url}: private or loopback address refused"),
            ));
        }
        let mut resp = self
            .http
            .get(url.clone())
            .send()
            .await
            .map_err(|e| classify(url, e))?;
        let status = resp.status().as_u16();
        let final_url = resp.url().clone();
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let location = if (300..400).contains(&status) {
            resp.headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| final_url.join(l.trim()).ok())
        } else {
            None
        };
        if location.is_some() {
            // The body of a redirect is of no interest.
            return Ok(Response {
                status,
                final_url,
                content_type,
                location,
                body: Vec::new(),
            });
        }
        if let Some(len) = resp.content_length() {
            // Only a hint (compressed length); the real check is below.
            if len as usize > self.settings.max_body_bytes.saturating_mul(4) {
                return Err(FetchFailure {
                    http_status: Some(status),
                    ..FetchFailure::new(
                        FetchStatus::TooLarge,
                        format!("{url}: Content-Length {len} over the cap"),
                    )
                });
            }
        }
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > self.settings.max_body_bytes {
                        return Err(FetchFailure {
                            http_status: Some(status),
                            ..FetchFailure::new(
                                FetchStatus::TooLarge,
                                format!(
                                    "{url}: body over {} bytes (after decompression)",
                                    self.settings.max_body_bytes
                                ),
                            )
                        });
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => {
                    let mut f = classify(url, e);
                    f.http_status = Some(status);
                    return Err(f);
                }
            }
        }
        Ok(Response {
            status,
            final_url,
            content_type,
            location: None,
            body,
        })
    }

    /// GETs `url`, following up to `max_redirects` redirects (each hop
    /// checked by the guard; a loop is an error). For robots.txt and
    /// sitemaps, whose redirects do not go through the frontier.
    pub async fn get_following(
        &self,
        url: &Url,
        max_redirects: usize,
    ) -> Result<Response, FetchFailure> {
        let mut current = url.clone();
        let mut visited = vec![current.clone()];
        loop {
            let resp = self.get(&current).await?;
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
    let status = if e.is_timeout() {
        FetchStatus::Timeout
    } else if chain.contains("private addresses refused") {
        FetchStatus::Refused
    } else if e.is_builder() {
        FetchStatus::InvalidUrl
    } else {
        FetchStatus::ConnectionError
    };
    FetchFailure::new(status, format!("{url}: {chain}"))
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
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} is private");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "172.32.0.1"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[test]
    fn literal_hosts() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(refused_literal(&u("http://127.0.0.1:8080/"), false));
        assert!(refused_literal(&u("http://localhost/"), false));
        assert!(refused_literal(&u("http://[::1]/"), false));
        assert!(!refused_literal(&u("http://127.0.0.1/"), true));
        assert!(!refused_literal(&u("http://example.com/"), false));
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
