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
//! A crawl's settings: `crawler seed` and `crawler run` store them once
//! ([`register`]) before any message of the crawl exists; messages name
//! them by a [`CrawlRef`] and stages read them through [`Specs`], a cache
//! that asks the store once per crawl and worker.
//!
//! Redis keys: `crawl_control` (read and written), `specs` and `crawls`
//! (written by [`register`], read by [`Specs`] and `crawler crawls`), the
//! stats shards (counted by the stages' steps through [`counts`], summed by
//! [`read_counters`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::keys::{Keys, HOST_SHARDS};
use crate::messages::{CrawlRef, CrawlSpec};
use crate::store::{Op, Reply, Store, StoreError};

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

/// The ops that set `crawl`'s state in every shard's control hash. Each
/// is one shard's slot: run them in one batch (a process killed midway
/// leaves some shards behind; running the command again completes it).
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

/// The counters a crawl keeps of its own (fields `crawl:<name>:<field>`
/// of the stats shards beside the namespace's `<field>`): what `crawler
/// crawls` and the progress bars show. The others (per fetch outcome, per
/// reason a URL was left out) are the namespace's only: each mirrored
/// field costs one `HINCRBY` per message.
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

/// The prefix of a crawl's own counter fields in the stats shards.
const CRAWL_PREFIX: &str = "crawl:";

/// The counter increments `fields` of `crawl`, as fields of a stats shard
/// ([`Keys::stats_of_url`], [`Keys::stats_of_shard`]): each as the
/// namespace's field, and those of [`CRAWL_FIELDS`] as the crawl's too, for
/// the same atomic step, so the two never disagree.
pub fn counts(crawl: &str, fields: &[(&str, i64)]) -> Vec<(String, i64)> {
    let mut out = Vec::with_capacity(fields.len() * 2);
    for (field, by) in fields {
        out.push((field.to_string(), *by));
        if CRAWL_FIELDS.contains(field) {
            out.push((format!("{CRAWL_PREFIX}{crawl}:{field}"), *by));
        }
    }
    out
}

/// The namespace's increments of [`counts`] (what the metrics mirror).
pub fn namespace_counts(counts: &[(String, i64)]) -> Vec<(String, i64)> {
    counts
        .iter()
        .filter(|(f, _)| !f.starts_with(CRAWL_PREFIX))
        .cloned()
        .collect()
}

/// Every counter of the namespace, summed over its stats shards: the
/// namespace's totals, and each crawl's own.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counters {
    pub total: BTreeMap<String, i64>,
    pub crawls: BTreeMap<String, BTreeMap<String, i64>>,
}

impl Counters {
    /// A namespace counter (0 when never counted).
    pub fn get(&self, field: &str) -> i64 {
        self.total.get(field).copied().unwrap_or(0)
    }
}

/// Reads and sums every stats shard (one round trip; O(shards)).
pub async fn read_counters(
    store: &Store,
    keys: &Keys,
) -> Result<Counters, crate::store::StoreError> {
    let ops: Vec<Op> = keys
        .stats_shards()
        .into_iter()
        .map(|key| Op::HGetAll { key })
        .collect();
    let mut out = Counters::default();
    for reply in store.exec(&ops).await? {
        for (field, by) in reply.int_pairs()? {
            match field
                .strip_prefix(CRAWL_PREFIX)
                .and_then(|f| f.rsplit_once(':'))
            {
                Some((crawl, name)) => {
                    *out.crawls
                        .entry(crawl.to_string())
                        .or_default()
                        .entry(name.to_string())
                        .or_default() += by;
                }
                None => *out.total.entry(field).or_default() += by,
            }
        }
    }
    Ok(out)
}

/// Stores a crawl's settings, before any of its messages is published:
/// under their hash (what messages name), then in the crawl registry
/// (`crawler crawls`, newest settings per name). Two steps, each
/// idempotent: a seeding that dies between them is completed by seeding
/// again. Returns how messages name the crawl.
pub async fn register(
    store: &Store,
    keys: &Keys,
    spec: &CrawlSpec,
) -> Result<CrawlRef, StoreError> {
    let crawl = spec.reference();
    store.one(spec_op(keys, spec)).await?;
    // A struct of strings and numbers: its JSON cannot fail.
    let json = serde_json::to_vec(spec).unwrap_or_default();
    store
        .one(Op::HSet {
            key: keys.crawls(),
            fields: vec![(spec.name.clone(), json)],
        })
        .await?;
    Ok(crawl)
}

/// The field of [`Keys::crawl_specs`] that holds the settings of this hash:
/// the one place writer ([`spec_op`]) and reader ([`Specs::get`]) agree on.
fn spec_field(hash: u64) -> String {
    format!("{hash:016x}")
}

/// The op that stores `spec` under its hash.
fn spec_op(keys: &Keys, spec: &CrawlSpec) -> Op {
    Op::HSet {
        key: keys.crawl_specs(),
        fields: vec![(
            spec_field(spec.hash()),
            rmp_serde::to_vec_named(spec).unwrap_or_default(),
        )],
    }
}

/// Why a message's crawl settings could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// Not stored: the namespace was reset after the message was written,
    /// or the message was made by hand. The message is dead-lettered; seed
    /// the crawl again and replay it.
    #[error(
        "crawl {name:?}: its settings ({spec:016x}) are not in the store; seed the crawl again \
         (`crawler seed`), then replay the dead letters"
    )]
    Missing { name: String, spec: u64 },
    #[error("crawl {name:?}: its stored settings ({spec:016x}) do not read: {reason}")]
    Corrupt {
        name: String,
        spec: u64,
        reason: String,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<SpecError> for crate::worker::StageError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Store(e) => e.into(),
            other => crate::worker::StageError::Malformed(other.to_string()),
        }
    }
}

/// The crawls' settings as a stage reads them: from the store once per
/// crawl (settings never change under one hash), then from memory.
pub struct Specs {
    store: Store,
    keys: Keys,
    known: Mutex<HashMap<u64, Arc<CrawlSpec>>>,
}

impl Specs {
    /// Settings kept at most; past this the cache starts again (crawls
    /// are few; this bounds a stream of messages naming made-up hashes).
    const MAX_KNOWN: usize = 1024;

    pub fn new(store: Store, keys: Keys) -> Self {
        Specs {
            store,
            keys,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The settings `crawl` names. Settings carried inline (a version 1
    /// message) are stored under their hash first, for the messages this
    /// one leads to, which name them.
    pub async fn get(&self, crawl: &CrawlRef) -> Result<Arc<CrawlSpec>, SpecError> {
        if let Some(spec) = self.cached(crawl.spec) {
            return Ok(spec);
        }
        let spec = match &crawl.inline {
            Some(spec) => {
                self.store.one(spec_op(&self.keys, spec)).await?;
                spec.clone()
            }
            None => {
                let data = self
                    .store
                    .one(Op::HGet {
                        key: self.keys.crawl_specs(),
                        field: spec_field(crawl.spec),
                    })
                    .await?
                    .data()?
                    .ok_or_else(|| SpecError::Missing {
                        name: crawl.name.clone(),
                        spec: crawl.spec,
                    })?;
                let spec: CrawlSpec =
                    rmp_serde::from_slice(&data).map_err(|e| SpecError::Corrupt {
                        name: crawl.name.clone(),
                        spec: crawl.spec,
                        reason: e.to_string(),
                    })?;
                if spec.name != crawl.name {
                    return Err(SpecError::Corrupt {
                        name: crawl.name.clone(),
                        spec: crawl.spec,
                        reason: format!("they are crawl {:?}'s", spec.name),
                    });
                }
                Arc::new(spec)
            }
        };
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known.len() >= Self::MAX_KNOWN {
            known.clear();
        }
        known.insert(crawl.spec, spec.clone());
        Ok(spec)
    }

    fn cached(&self, spec: u64) -> Option<Arc<CrawlSpec>> {
        let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        known.get(&spec).cloned()
    }
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
    async fn settings_are_read_by_the_hash_messages_name() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let spec = CrawlSpec {
            name: "news".into(),
            max_depth: 7,
            ..CrawlSpec::default()
        };
        let specs = Specs::new(store.clone(), keys.clone());
        // Not registered: a clear error, dead-lettered by the stages.
        let missing = specs.get(&spec.reference()).await.unwrap_err();
        assert!(matches!(missing, SpecError::Missing { .. }), "{missing}");
        assert!(matches!(
            crate::worker::StageError::from(missing),
            crate::worker::StageError::Malformed(_)
        ));
        let crawl = register(&store, &keys, &spec).await.unwrap();
        assert_eq!(crawl, spec.reference());
        assert_eq!(*specs.get(&crawl).await.unwrap(), spec);
        // Seeded again with other settings: both stay readable.
        let deeper = CrawlSpec {
            max_depth: 9,
            ..spec.clone()
        };
        let second = register(&store, &keys, &deeper).await.unwrap();
        assert_ne!(second.spec, crawl.spec);
        assert_eq!(specs.get(&second).await.unwrap().max_depth, 9);
        assert_eq!(
            Specs::new(store.clone(), keys.clone())
                .get(&crawl)
                .await
                .unwrap()
                .max_depth,
            7
        );
        // Inline settings (a version 1 message) are stored for what follows.
        let inline = CrawlSpec {
            name: "blogs".into(),
            ..CrawlSpec::default()
        };
        let old = CrawlRef {
            inline: Some(Arc::new(inline.clone())),
            ..inline.reference()
        };
        assert_eq!(*specs.get(&old).await.unwrap(), inline);
        let fresh = Specs::new(store.clone(), keys.clone());
        assert_eq!(*fresh.get(&inline.reference()).await.unwrap(), inline);
        // Settings stored under a hash that names another crawl.
        let wrong = CrawlRef {
            name: "other".into(),
            ..crawl.clone()
        };
        assert!(matches!(
            fresh.get(&wrong).await,
            Err(SpecError::Corrupt { .. })
        ));
    }

    #[tokio::test]
    async fn states_round_trip_through_every_shard() {
        let store = Store::memory();
        let keys = Keys::new("t");
        store
            .exec(&set_state(&keys, "news", CrawlState::Paused))
            .await
            .unwrap();
        store
            .exec(&set_state(&keys, "blogs", CrawlState::Cancelled))
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
            .exec(&set_state(&keys, "news", CrawlState::Running))
            .await
            .unwrap();
        let cache = CrawlStates::new(store.clone(), keys.clone());
        assert_eq!(cache.state("news").await, CrawlState::Running);
        assert_eq!(cache.state("blogs").await, CrawlState::Cancelled);
        assert_eq!(cache.state("other").await, CrawlState::Running);
    }

    #[tokio::test]
    async fn counts_mirror_the_crawl_fields_and_sum_over_the_shards() {
        let c = counts("news:2026", &[("fetched", 1), ("fetch_ok", 1)]);
        assert_eq!(
            c,
            vec![
                ("fetched".to_string(), 1),
                ("crawl:news:2026:fetched".to_string(), 1),
                ("fetch_ok".to_string(), 1)
            ]
        );
        assert_eq!(namespace_counts(&c).len(), 2);
        let store = Store::memory();
        let keys = Keys::new("t");
        let shards = keys.stats_shards();
        let ops: Vec<Op> = [&shards[0], &shards[300]]
            .into_iter()
            .flat_map(|key| {
                c.iter().map(|(field, by)| Op::HIncr {
                    key: key.clone(),
                    field: field.clone(),
                    by: *by,
                })
            })
            .collect();
        store.exec(&ops).await.unwrap();
        let read = read_counters(&store, &keys).await.unwrap();
        assert_eq!(read.get("fetched"), 2);
        assert_eq!(read.get("fetch_ok"), 2);
        assert_eq!(read.crawls["news:2026"]["fetched"], 2);
    }
}
