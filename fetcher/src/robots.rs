//! robots.txt: fetched once per origin, cached in the store with a TTL so
//! every fetcher shares it, and parsed with `texting_robots`.
//!
//! Following Google's documented rules: a 2xx body is obeyed; a 4xx means
//! there are no rules (allow all); a 5xx, a timeout or a connection failure
//! means "disallow all for a while" ([`UNREACHABLE_TTL`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::Store;
use texting_robots::Robot;
use url::Url;

use crate::http::{Client, AGENT_NAME};

/// How long fetched rules are trusted.
pub const RULES_TTL: Duration = Duration::from_secs(3600);
/// How long an unreachable robots.txt blocks its host before the next try.
pub const UNREACHABLE_TTL: Duration = Duration::from_secs(300);
/// Bytes of robots.txt read (Google's limit is 500 KiB).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// The rules of one origin.
pub enum Rules {
    AllowAll,
    DisallowAll,
    Parsed(Box<Robot>),
}

impl Rules {
    /// Parses a cached record: `A`, `D`, or `R` followed by the robots.txt body.
    fn from_record(record: &[u8]) -> Rules {
        match record.split_first() {
            Some((b'A', _)) => Rules::AllowAll,
            Some((b'R', body)) => match Robot::new(AGENT_NAME, body) {
                Ok(r) => Rules::Parsed(Box::new(r)),
                // Unparseable rules: no rules.
                Err(_) => Rules::AllowAll,
            },
            _ => Rules::DisallowAll,
        }
    }

    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            Rules::AllowAll => true,
            Rules::DisallowAll => false,
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
    local: Mutex<HashMap<String, (Instant, Arc<Rules>)>>,
}

/// Entries kept in the in-process cache before it is cleared.
const LOCAL_CACHE_MAX: usize = 10_000;
/// How long the in-process cache trusts an entry before asking the store.
const LOCAL_TTL: Duration = Duration::from_secs(60);

impl Robots {
    pub fn new(store: Store, keys: Keys, client: Client) -> Self {
        Robots {
            store,
            keys,
            client,
            local: Mutex::new(HashMap::new()),
        }
    }

    /// The rules that apply to `url` (fetching robots.txt if nobody has yet).
    pub async fn rules_for(&self, url: &Url) -> Result<Arc<Rules>, pipeline::store::StoreError> {
        let origin = origin(url);
        if let Some((at, rules)) = self
            .local
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&origin)
        {
            if at.elapsed() < LOCAL_TTL {
                return Ok(rules.clone());
            }
        }
        let key = self.keys.robots(&origin);
        let record = match self.store.one(Op::Get { key: key.clone() }).await?.data()? {
            Some(r) => r,
            None => {
                let (record, ttl) = self.fetch_record(&origin).await;
                self.store
                    .one(Op::Set {
                        key,
                        value: record.clone(),
                        expire_ms: Some(ttl.as_millis() as u64),
                    })
                    .await?;
                record
            }
        };
        let rules = Arc::new(Rules::from_record(&record));
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        if local.len() >= LOCAL_CACHE_MAX {
            local.clear();
        }
        local.insert(origin, (Instant::now(), rules.clone()));
        Ok(rules)
    }

    async fn fetch_record(&self, origin: &str) -> (Vec<u8>, Duration) {
        let Ok(url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return (b"A".to_vec(), RULES_TTL);
        };
        match self.client.get_following(&url, 5).await {
            Ok(resp) if (200..300).contains(&resp.status) => {
                let mut record = Vec::with_capacity(resp.body.len().min(MAX_ROBOTS_BYTES) + 1);
                record.push(b'R');
                record.extend_from_slice(&resp.body[..resp.body.len().min(MAX_ROBOTS_BYTES)]);
                (record, RULES_TTL)
            }
            Ok(resp) if (400..500).contains(&resp.status) => (b"A".to_vec(), RULES_TTL),
            Ok(resp) => {
                tracing::info!(%origin, status = resp.status, "robots.txt unavailable: host blocked for a while");
                (b"D".to_vec(), UNREACHABLE_TTL)
            }
            Err(e) => {
                tracing::info!(%origin, error = %e, "robots.txt unreachable: host blocked for a while");
                (b"D".to_vec(), UNREACHABLE_TTL)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records() {
        let u = Url::parse("http://h/private/1").unwrap();
        let ok = Url::parse("http://h/public").unwrap();
        assert!(Rules::from_record(b"A").allowed(&u));
        assert!(!Rules::from_record(b"D").allowed(&ok));
        let r = Rules::from_record(b"RUser-agent: *\nDisallow: /private/\nCrawl-delay: 2\n");
        assert!(!r.allowed(&u));
        assert!(r.allowed(&ok));
        assert_eq!(r.crawl_delay(), Some(2.0));
    }
}
