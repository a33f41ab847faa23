//! robots.txt: fetched once per origin, cached in the store with a TTL so
//! every fetcher shares it, and parsed with `texting_robots`.
//!
//! Following Google's documented rules: a 2xx body is obeyed; a 4xx means
//! there are no rules (allow all); a 5xx, a timeout or a connection failure
//! means "disallow all for a while" ([`UNREACHABLE_TTL`]; the host record's
//! `backoff_until_ms` tells the frontier, and pages meet it as a transient
//! failure, retried later); a 429 counts as a 5xx, too many redirects as a
//! 4xx. An origin whose address the SSRF guard
//! refuses gets no rules at all: its URLs end `refused`.
//!
//! A `Crawl-delay` for our agent is written to the host record
//! (`Keys::host(origin)`, field `delay_ms`) when the rules are fetched, for
//! the frontier's schedule.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::Store;
use texting_robots::Robot;
use url::Url;

use crate::http::{Client, FetchStatus};
use crate::politeness::{now_unix_ms, HostFeedback};

/// How long fetched rules are trusted.
pub const RULES_TTL: Duration = Duration::from_secs(3600);
/// How long an unreachable robots.txt blocks its host before the next try.
pub const UNREACHABLE_TTL: Duration = Duration::from_secs(300);
/// Bytes of robots.txt read (Google's limit is 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// The rules of one origin.
pub enum Rules {
    AllowAll,
    /// robots.txt could not be read (5xx, 429, timeout, connection error):
    /// nothing may be fetched from the origin for a while
    /// ([`UNREACHABLE_TTL`]). Pages meet it as a transient failure, with
    /// `status` (`robots_disallowed` for an answer, `timeout` or
    /// `connection_error` when the host could not be reached at all).
    Unreachable {
        status: FetchStatus,
        reason: String,
    },
    Parsed(Box<Robot>),
}

impl Rules {
    /// Parses a cached record: `A`; `R` followed by the robots.txt body; `D`
    /// followed by the outcome name, a tab and the reason.
    /// `agent` is the product token robots.txt groups are matched against.
    pub fn from_record(record: &[u8], agent: &str) -> Rules {
        match record.split_first() {
            Some((b'A', _)) => Rules::AllowAll,
            Some((b'R', body)) => match Robot::new(agent, body) {
                Ok(r) => Rules::Parsed(Box::new(r)),
                // Unparseable rules: no rules.
                Err(_) => Rules::AllowAll,
            },
            other => {
                let text = other
                    .map(|(_, rest)| String::from_utf8_lossy(rest).into_owned())
                    .unwrap_or_default();
                let (name, reason) = text.split_once('\t').unwrap_or(("", &text));
                let status = FetchStatus::ALL
                    .into_iter()
                    .find(|s| s.as_str() == name)
                    .unwrap_or(FetchStatus::RobotsDisallowed);
                Rules::Unreachable {
                    status,
                    reason: if reason.is_empty() {
                        "robots.txt unavailable".into()
                    } else {
                        reason.to_string()
                    },
                }
            }
        }
    }

    /// The record of an unreachable robots.txt.
    fn unreachable_record(status: FetchStatus, reason: &str) -> Vec<u8> {
        format!("D{}\t{reason}", status.as_str()).into_bytes()
    }

    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            Rules::AllowAll => true,
            Rules::Unreachable { .. } => false,
            Rules::Parsed(r) => r.allowed(url.as_str()),
        }
    }

    /// The Crawl-delay for our agent, in seconds.
    pub fn crawl_delay(&self) -> Option<f32> {
        match self {
            Rules::Parsed(r) => r.delay,
            _ => None,
        }
    }
}

/// The origin of a URL: `scheme://host[:port]`.
pub fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// robots.txt for every origin, through a small in-process cache over the store.
pub struct Robots {
    store: Store,
    keys: Keys,
    client: Client,
    /// Our product token in robots.txt (from the User-Agent).
    agent: String,
    local: Mutex<HashMap<String, (Instant, Arc<Rules>)>>,
    /// One lock per origin being looked up, so that concurrent tasks of one
    /// worker for a new host fetch its robots.txt once, not once each.
    fetching: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Entries kept in the in-process cache before it is cleared.
const LOCAL_CACHE_MAX: usize = 10_000;
/// How long the in-process cache trusts an entry before asking the store.
const LOCAL_TTL: Duration = Duration::from_secs(60);
/// Redirects followed for robots.txt (Google follows at least five).
pub const ROBOTS_MAX_REDIRECTS: usize = 5;

/// Why no rules could be given for a URL.
#[derive(Debug, thiserror::Error)]
pub enum RobotsError {
    /// The store could not be read or written (worth another try).
    #[error(transparent)]
    Store(#[from] pipeline::store::StoreError),
    /// The host's address is refused by the SSRF guard: nothing is fetched
    /// from it, robots.txt included, and nothing is cached.
    #[error("{0}")]
    Refused(String),
}

impl Robots {
    pub fn new(store: Store, keys: Keys, client: Client) -> Self {
        Robots {
            agent: client.settings().robots_agent(),
            store,
            keys,
            client,
            local: Mutex::new(HashMap::new()),
            fetching: Mutex::new(HashMap::new()),
        }
    }

    fn cached(&self, origin: &str) -> Option<Arc<Rules>> {
        let local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        local
            .get(origin)
            .filter(|(at, _)| at.elapsed() < LOCAL_TTL)
            .map(|(_, rules)| rules.clone())
    }

    /// The rules that apply to `url` (fetching robots.txt if nobody has yet).
    pub async fn rules_for(&self, url: &Url) -> Result<Arc<Rules>, RobotsError> {
        let origin = origin(url);
        if let Some(rules) = self.cached(&origin) {
            return Ok(rules);
        }
        let lock = {
            let mut fetching = self.fetching.lock().unwrap_or_else(|p| p.into_inner());
            if fetching.len() >= LOCAL_CACHE_MAX {
                fetching.retain(|_, l| Arc::strong_count(l) > 1);
            }
            fetching.entry(origin.clone()).or_default().clone()
        };
        let _one_at_a_time = lock.lock().await;
        // Another task may have fetched them while this one waited.
        if let Some(rules) = self.cached(&origin) {
            return Ok(rules);
        }
        let key = self.keys.robots(&origin);
        let rules = match self.store.one(Op::Get { key: key.clone() }).await?.data()? {
            Some(record) => Rules::from_record(&record, &self.agent),
            None => {
                let (record, ttl) = self.fetch_record(&origin).await?;
                let rules = Rules::from_record(&record, &self.agent);
                let mut ops = vec![Op::Set {
                    key,
                    value: record,
                    expire_ms: Some(ttl.as_millis() as u64),
                }];
                let host = HostFeedback::new(&self.keys, &origin);
                match &rules {
                    // The frontier spaces this host's tasks by its Crawl-delay.
                    Rules::Parsed(_) => {
                        if let Some(delay) = rules.crawl_delay() {
                            ops.push(host.crawl_delay(delay));
                        }
                    }
                    // The host is off limits until robots.txt may be asked
                    // again: the frontier holds its tasks back until then.
                    Rules::Unreachable { status, .. } => {
                        if *status != FetchStatus::RobotsDisallowed {
                            ops.push(host.failed());
                        }
                        ops.push(host.back_off(now_unix_ms(), ttl));
                    }
                    Rules::AllowAll => {}
                }
                self.store.exec(&ops).await?;
                rules
            }
        };
        let rules = Arc::new(rules);
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        if local.len() >= LOCAL_CACHE_MAX {
            local.clear();
        }
        local.insert(origin, (Instant::now(), rules.clone()));
        Ok(rules)
    }

    /// Fetches an origin's robots.txt: the record to cache and its TTL.
    async fn fetch_record(&self, origin: &str) -> Result<(Vec<u8>, Duration), RobotsError> {
        let Ok(url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return Ok((b"A".to_vec(), RULES_TTL));
        };
        let result = self
            .client
            .get_following(&url, ROBOTS_MAX_REDIRECTS, MAX_ROBOTS_BYTES)
            .await;
        Ok(match result {
            Ok(resp) if (200..300).contains(&resp.status) => {
                let mut record = Vec::with_capacity(resp.body.len() + 1);
                record.push(b'R');
                record.extend_from_slice(&resp.body);
                (record, RULES_TTL)
            }
            // 429 is "slow down", not "no rules": like a 5xx.
            Ok(resp) if (400..500).contains(&resp.status) && resp.status != 429 => {
                (b"A".to_vec(), RULES_TTL)
            }
            Ok(resp) => {
                tracing::info!(%origin, status = resp.status, "robots.txt unavailable: host blocked for a while");
                let reason = format!("robots.txt answered HTTP {}", resp.status);
                (
                    Rules::unreachable_record(FetchStatus::RobotsDisallowed, &reason),
                    UNREACHABLE_TTL,
                )
            }
            Err(e) if e.status == FetchStatus::Refused => {
                return Err(RobotsError::Refused(e.reason));
            }
            // Too many redirects: Google treats it like a 404.
            Err(e) if e.status == FetchStatus::TooManyRedirects => (b"A".to_vec(), RULES_TTL),
            Err(e) => {
                tracing::info!(%origin, error = %e, "robots.txt unreachable: host blocked for a while");
                let status = match e.status {
                    FetchStatus::Timeout | FetchStatus::ConnectionError => e.status,
                    _ => FetchStatus::RobotsDisallowed,
                };
                let reason = format!("robots.txt unreachable: {}", e.reason);
                (Rules::unreachable_record(status, &reason), UNREACHABLE_TTL)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::http::AGENT_NAME;

    #[test]
    fn records() {
        let u = Url::parse("http://h/private/1").unwrap();
        let ok = Url::parse("http://h/public").unwrap();
        assert!(Rules::from_record(b"A", AGENT_NAME).allowed(&u));
        assert!(!Rules::from_record(b"D", AGENT_NAME).allowed(&ok));
        let down = Rules::unreachable_record(FetchStatus::Timeout, "robots.txt: timed out");
        match Rules::from_record(&down, AGENT_NAME) {
            Rules::Unreachable { status, reason } => {
                assert_eq!(status, FetchStatus::Timeout);
                assert_eq!(reason, "robots.txt: timed out");
            }
            _ => panic!("not unreachable"),
        }
        let r = Rules::from_record(
            b"RUser-agent: *\nDisallow: /private/\nCrawl-delay: 2\n",
            AGENT_NAME,
        );
        assert!(!r.allowed(&u));
        assert!(r.allowed(&ok));
        assert_eq!(r.crawl_delay(), Some(2.0));
    }
}
