//! Crawl control as every stage sees it: whether a crawl runs, is paused
//! or is cancelled, and its own counters beside the namespace's.
//!
//! `crawler pause|resume|cancel` write the state into
//! [`Keys::crawl_control`] of every politeness shard ([`set_state`]). The
//! frontier's release script reads it there, atomically with each release
//! (`politeness::schedule::release`: a paused crawl's tasks stay queued, a
//! cancelled crawl's are dropped). Workers read it through [`CrawlStates`],
//! a cache refreshed at most every [`CrawlStates::REFRESH`], and drop (ack
//! without work) the messages of a cancelled crawl; the messages of a
//! paused crawl already in RabbitMQ are finished.
//!
//! Redis keys: `crawl_control` (read and written), `crawl_stats` (counted
//! by the stages through [`counts`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::keys::{Keys, HOST_SHARDS};
use crate::store::{Op, Reply, Store};

/// What a crawl may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrawlState {
    /// Its tasks are released (no field in the control hash).
    Running,
    /// None of its tasks is released; they stay queued until it resumes.
    Paused,
    /// Its queued tasks are dropped, and its messages acked without work.
    Cancelled,
}

impl CrawlState {
    /// The value in the control hash (and the name `crawler crawls` shows).
    pub fn as_str(self) -> &'static str {
        match self {
            CrawlState::Running => "running",
            CrawlState::Paused => "paused",
            CrawlState::Cancelled => "cancelled",
        }
    }

    /// The state a control hash value stands for (anything unknown runs).
    pub fn parse(value: &[u8]) -> CrawlState {
        match value {
            b"paused" => CrawlState::Paused,
            b"cancelled" => CrawlState::Cancelled,
            _ => CrawlState::Running,
        }
    }
}

/// The ops that set `crawl`'s state in every shard's control hash (run
/// them with [`Store::exec_atomic`], so every shard changes at once).
pub fn set_state(keys: &Keys, crawl: &str, state: CrawlState) -> Vec<Op> {
    (0..HOST_SHARDS)
        .map(|shard| {
            let key = keys.crawl_control(shard);
            match state {
                CrawlState::Running => Op::HDel {
                    key,
                    field: crawl.to_string(),
                },
                other => Op::HSet {
                    key,
                    fields: vec![(crawl.to_string(), other.as_str().as_bytes().to_vec())],
                },
            }
        })
        .collect()
}

/// Every crawl that is not running, with its state (read from shard 0's
/// control hash; every shard holds the same).
pub async fn read_states(
    store: &Store,
    keys: &Keys,
) -> Result<HashMap<String, CrawlState>, crate::store::StoreError> {
    let reply = store
        .one(Op::HGetAll {
            key: keys.crawl_control(0),
        })
        .await?;
    let Reply::Array(items) = reply else {
        return Ok(HashMap::new());
    };
    let mut out = HashMap::new();
    for pair in items.chunks(2) {
        if let [field, value] = pair {
            let (Some(field), Some(value)) = (field.data()?, value.data()?) else {
                continue;
            };
            out.insert(
                String::from_utf8_lossy(&field).into_owned(),
                CrawlState::parse(&value),
            );
        }
    }
    Ok(out)
}

/// The counters a crawl keeps of its own ([`Keys::crawl_stats`]): what
/// `crawler crawls` and the progress bars show. The others (per fetch
/// outcome, per reason a URL was left out) are the namespace's only: each
/// mirrored field costs one `HINCRBY` per message.
pub const CRAWL_FIELDS: [&str; 9] = [
    "seen",
    "fetched",
    "failed",
    "fetch_redirect",
    "extracted",
    "stored",
    "duplicate",
    "changed",
    "unchanged",
];

/// The counter increments `fields` of `crawl`: each on the namespace's
/// [`Keys::stats`], and those of [`CRAWL_FIELDS`] on the crawl's
/// [`Keys::crawl_stats`] too, for the same atomic op (an [`Op::Once`] or
/// [`Op::SetNxWith`]), so the two never disagree.
pub fn counts(keys: &Keys, crawl: &str, fields: &[(&str, i64)]) -> Vec<(String, String, i64)> {
    let (stats, own) = (keys.stats(), keys.crawl_stats(crawl));
    let mut out = Vec::with_capacity(fields.len() * 2);
    for (field, by) in fields {
        out.push((stats.clone(), field.to_string(), *by));
        if CRAWL_FIELDS.contains(field) {
            out.push((own.clone(), field.to_string(), *by));
        }
    }
    out
}

/// The crawl states as a worker sees them: read from the store at most
/// every [`CrawlStates::REFRESH`], so checking each message costs nothing
/// but a lock. A crawl cancelled is seen by every worker within that time.
pub struct CrawlStates {
    store: Store,
    keys: Keys,
    /// When the states were read, and what they were.
    cached: Mutex<Option<(Instant, HashMap<String, CrawlState>)>>,
}

impl CrawlStates {
    /// How old the states a worker acts on may be.
    pub const REFRESH: Duration = Duration::from_secs(1);

    pub fn new(store: Store, keys: Keys) -> Self {
        CrawlStates {
            store,
            keys,
            cached: Mutex::new(None),
        }
    }

    /// The state of `crawl`. When the store cannot be read, the last states
    /// known (or running): a check that fails must not stop the crawl.
    pub async fn state(&self, crawl: &str) -> CrawlState {
        {
            let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((at, states)) = cached.as_ref() {
                if at.elapsed() < Self::REFRESH {
                    return states.get(crawl).copied().unwrap_or(CrawlState::Running);
                }
            }
        }
        let fresh = read_states(&self.store, &self.keys).await;
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        match fresh {
            Ok(states) => *cached = Some((Instant::now(), states)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the crawl states; using the last known");
                let states = cached.take().map(|(_, s)| s).unwrap_or_default();
                *cached = Some((Instant::now(), states));
            }
        }
        cached
            .as_ref()
            .and_then(|(_, s)| s.get(crawl).copied())
            .unwrap_or(CrawlState::Running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn states_round_trip_through_every_shard() {
        let store = Store::memory();
        let keys = Keys::new("t");
        store
            .exec_atomic(&set_state(&keys, "news", CrawlState::Paused))
            .await
            .unwrap();
        store
            .exec_atomic(&set_state(&keys, "blogs", CrawlState::Cancelled))
            .await
            .unwrap();
        for shard in 0..HOST_SHARDS {
            let r = store
                .one(Op::HGet {
                    key: keys.crawl_control(shard),
                    field: "news".into(),
                })
                .await
                .unwrap();
            assert_eq!(r.string().unwrap().as_deref(), Some("paused"));
        }
        let states = read_states(&store, &keys).await.unwrap();
        assert_eq!(states.get("news"), Some(&CrawlState::Paused));
        assert_eq!(states.get("blogs"), Some(&CrawlState::Cancelled));
        store
            .exec_atomic(&set_state(&keys, "news", CrawlState::Running))
            .await
            .unwrap();
        let cache = CrawlStates::new(store.clone(), keys.clone());
        assert_eq!(cache.state("news").await, CrawlState::Running);
        assert_eq!(cache.state("blogs").await, CrawlState::Cancelled);
        assert_eq!(cache.state("other").await, CrawlState::Running);
    }

    #[test]
    fn counts_mirror_the_crawl_fields_on_the_crawl() {
        let keys = Keys::new("t");
        let c = counts(&keys, "news", &[("fetched", 1), ("fetch_ok", 1)]);
        assert_eq!(c.len(), 3);
        assert!(c.contains(&("t:stats".into(), "fetched".into(), 1)));
        assert!(c.contains(&("t:stats".into(), "fetch_ok".into(), 1)));
        assert!(c.contains(&("t:crawl:news:stats".into(), "fetched".into(), 1)));
    }
}
