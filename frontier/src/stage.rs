//! The frontier stage: a [`UrlBatch`] in; one [`FetchTask`] per admitted URL
//! into its host's queue in the store, from which [`crate::release`] hands
//! it to the fetchers when the host is due.
//!
//! Per batch: normalize and scope its links (pure); then one round trip of
//! single-slot steps: per politeness shard one
//! [`politeness::schedule::admit`] (each URL added to the seen set and, if
//! new, its task queued and counted, atomically), and one
//! [`pipeline::once::once`] step for the batch's other counters in the URL
//! record of the page the links came from. A redelivered batch finds its
//! URLs seen (nothing queued twice, nothing lost) and its counters
//! counted. With a page limit (`--max-pages`), the URLs not yet seen are
//! counted against it first (`SMISMEMBER`, then `INCRBY`): a batch
//! redelivered after that counts its URLs twice, so a crawl can stop a
//! little short of its limit, never beyond it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use pipeline::crawls::Specs;
use pipeline::keys::{host_shard, url_hash, Keys};
use pipeline::messages::{encode, FetchTask, UrlBatch, VERSION};
use pipeline::once::{once, LINK_IDS};
use pipeline::store::Op;
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{CrawlSpec, Queue, Store};
use politeness::schedule::{admit, Admission, AdmitCrawl, Check};
use url::Url;

use crate::normalize::{normalize_with, Rules};
use crate::scope::Scope;

pub struct FrontierStage {
    store: Store,
    keys: Keys,
    /// The crawls' settings, by the hash batches name them by.
    specs: Specs,
    /// Compiled scopes per crawl settings (crawls are few).
    scopes: Mutex<HashMap<u64, Arc<Scope>>>,
    /// URL hashes this process admitted (or found admitted) for good: a
    /// batch's links found here skip the store. Exact, because the seen set
    /// only grows and a hash is in it only with its task queued (one
    /// step). Most outlinks of a site repeat (navigation), so this saves
    /// most of the frontier's Redis work. Cleared when full
    /// ([`SEEN_CACHE_MAX`]).
    seen_cache: Mutex<SeenCache>,
    /// Held by a batch of a crawl with a page limit from its check of what
    /// is new to its admission: two batches of this process linking the
    /// same new URL would otherwise both count it against the limit, and
    /// the crawl would end short of it.
    page_limit: tokio::sync::Mutex<()>,
    /// Told of the shards a batch queued tasks in, when this process runs
    /// a releaser ([`crate::release::Wakeups`]).
    wakeups: Option<Arc<crate::release::Wakeups>>,
}

/// Crawls whose scopes are kept compiled before the cache is cleared.
const SCOPE_CACHE_MAX: usize = 1000;

/// URL hashes the seen cache holds before it is cleared (about 40 MB with
/// the links beside them).
pub const SEEN_CACHE_MAX: usize = 1 << 20;

/// What this process knows to be admitted for good.
struct SeenCache {
    /// URL hashes (and as many links) held before both sets are cleared.
    max: usize,
    /// Hashes of normalized URLs ([`url_hash`]).
    urls: HashSet<u64>,
    /// Links as the extractor wrote them (absolute), with the crawl
    /// settings they were read under ([`link_key`]), whose normalized URL is
    /// in `urls`: the navigation links every page repeats skip
    /// normalization and scope, most of the stage's CPU.
    links: HashSet<u64>,
}

impl SeenCache {
    /// Makes room for `more` URL hashes: both sets cleared when full.
    fn room_for(&mut self, more: usize) {
        if self.urls.len() + more > self.max || self.links.len() > self.max {
            self.urls.clear();
            self.links.clear();
        }
    }
}

/// The key of an absolute `http(s)://` link under crawl settings `spec`: its
/// normalization depends on nothing else (no base, the crawl's rules, the
/// crawl's scope). `None` for other links, which are always normalized.
fn link_key(raw: &str, spec: u64) -> Option<u64> {
    let absolute = raw.starts_with("http://") || raw.starts_with("https://");
    absolute.then(|| xxhash_rust::xxh3::xxh3_64_with_seed(raw.as_bytes(), spec))
}

impl FrontierStage {
    pub fn new(store: Store, namespace: &str) -> Self {
        let keys = Keys::new(namespace);
        FrontierStage {
            specs: Specs::new(store.clone(), keys.clone()),
            store,
            keys,
            scopes: Mutex::new(HashMap::new()),
            seen_cache: Mutex::new(SeenCache {
                max: SEEN_CACHE_MAX,
                urls: HashSet::new(),
                links: HashSet::new(),
            }),
            page_limit: tokio::sync::Mutex::new(()),
            wakeups: None,
        }
    }

    /// This stage with a seen cache of at most `max` URL hashes (and as many
    /// links) instead of [`SEEN_CACHE_MAX`].
    pub fn with_seen_cache(self, max: usize) -> Self {
        self.seen_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .max = max;
        self
    }

    /// This stage telling `wakeups` (its process's releaser) where it
    /// queued tasks.
    pub fn with_wakeups(mut self, wakeups: Arc<crate::release::Wakeups>) -> Self {
        self.wakeups = Some(wakeups);
        self
    }

    /// This stage with its namespace's scale (`pipeline::scale`): which
    /// URL-seen set a URL's hash goes to.
    pub fn with_scale(mut self, scale: pipeline::scale::Scale) -> Self {
        self.keys = self.keys.with_scale(scale);
        self
    }
}

/// What happened to the links of one batch (the counters of `crawler
/// stats`) that the batch's own step counts; `seen` (admitted) is counted
/// by each admission.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    invalid: i64,
    out_of_scope: i64,
    too_deep: i64,
    over_limit: i64,
    retried: i64,
}

/// (link key, URL hash) of a batch's absolute links in scope ([`link_key`]).
type Keyed = Vec<(u64, u64)>;

/// A URL of the batch that passed normalization and scope.
struct Candidate {
    hash: u64,
    url: String,
    origin: String,
}

impl Stage for FrontierStage {
    type Input = UrlBatch;
    const QUEUE: Queue = Queue::Frontier;
    const DEFAULT_CONCURRENCY: usize = 16;

    async fn handle(&self, batch: UrlBatch) -> Result<Outcome, StageError> {
        let mut tally = Tally::default();
        let spec = self.specs.get(&batch.crawl).await?;
        if batch.depth > spec.max_depth {
            tally.too_deep = batch.links.len() as i64;
            self.store.exec(&self.counted(&batch, &tally)).await?;
            return Ok(Outcome::default());
        }
        // A transiently failed fetch, or a task whose host was not due, coming
        // back: already seen, schedule it again (a retry once, by its id).
        let check = match (batch.rescheduled, batch.attempt) {
            (true, _) => Check::Nothing,
            (false, 0) => Check::New,
            (false, _) => Check::Retry,
        };
        let retry = check != Check::New;
        let (mut candidates, keyed) = self.candidates(&batch, &spec, retry, &mut tally)?;
        if retry {
            tally.retried = candidates.len() as i64;
        } else {
            // URLs this process saw admitted before: nothing to do.
            let cache = self.seen_cache.lock().unwrap_or_else(|p| p.into_inner());
            candidates.retain(|c| !cache.urls.contains(&c.hash));
        }
        let mut over_limit = Vec::new();
        let _limit = match (retry, spec.max_pages) {
            (false, Some(_)) => Some(self.page_limit.lock().await),
            _ => None,
        };
        if !retry {
            if let Some(max) = spec.max_pages {
                over_limit = self.page_limit(&spec, &mut candidates, max).await?;
                tally.over_limit = over_limit.len() as i64;
            }
        }

        // Per shard one admission; the batch's counters; one round trip.
        let by_shard = self.admissions(&batch, check, &candidates, &over_limit)?;
        let crawl = AdmitCrawl {
            name: &batch.crawl.name,
            delay_ms: spec.delay_ms,
            max_per_host: spec.max_pages_per_host,
        };
        let mut ops: Vec<Op> = by_shard
            .iter()
            .map(|(shard, urls)| admit(&self.keys, *shard, &crawl, urls, check))
            .collect();
        ops.extend(self.counted(&batch, &tally));
        self.store.exec(&ops).await?;
        if let Some(w) = &self.wakeups {
            w.touch(by_shard.keys().copied());
        }
        if !retry {
            self.remember(&candidates, &keyed);
        }
        Ok(Outcome::default())
    }
}

impl FrontierStage {
    /// The batch's links normalized, in scope, once each (pure but for the
    /// process's caches): the candidates, and (link key, URL hash) of the
    /// absolute links among them. Links this process saw admitted before
    /// (as written) are skipped unless the batch is a `retry`; the invalid
    /// and out-of-scope ones are counted in `tally`.
    fn candidates(
        &self,
        batch: &UrlBatch,
        spec: &CrawlSpec,
        retry: bool,
        tally: &mut Tally,
    ) -> Result<(Vec<Candidate>, Keyed), StageError> {
        let base = batch.source.as_deref().and_then(|s| Url::parse(s).ok());
        let scope = self.scope(batch.crawl.spec, spec)?;
        let rules = Rules {
            strip_params: spec.strip_params.clone(),
            sort_query: spec.sort_query,
        };
        let mut links: Vec<_> = batch
            .links
            .iter()
            .map(|l| (l, link_key(&l.url, batch.crawl.spec)))
            .collect();
        if !retry {
            let cache = self.seen_cache.lock().unwrap_or_else(|p| p.into_inner());
            links.retain(|(_, k)| k.is_none_or(|k| !cache.links.contains(&k)));
        }
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut in_batch = HashSet::new();
        let mut keyed = Vec::new();
        for (link, key) in links {
            let url = match normalize_with(&link.url, base.as_ref(), &rules) {
                Ok(u) => u,
                Err(e) => {
                    tally.invalid += 1;
                    tracing::debug!(source = batch.source.as_deref().unwrap_or("seed"), error = %e, "invalid URL dropped");
                    continue;
                }
            };
            if !scope.allows(&url) {
                tally.out_of_scope += 1;
                continue;
            }
            let origin = url.origin().ascii_serialization();
            let s = url.to_string();
            let hash = url_hash(&s);
            if let Some(k) = key {
                keyed.push((k, hash));
            }
            if in_batch.insert(hash) {
                candidates.push(Candidate {
                    hash,
                    url: s,
                    origin,
                });
            }
        }
        Ok((candidates, keyed))
    }

    /// The admissions of the batch per politeness shard: each candidate
    /// with its fetch task, and those `over_limit` with none (seen, not
    /// queued). A retry is admitted by the hash of its task's id (derived
    /// from the batch's), which a retry batch delivered again repeats
    /// ([`Check::Retry`]).
    fn admissions(
        &self,
        batch: &UrlBatch,
        check: Check,
        candidates: &[Candidate],
        over_limit: &[Candidate],
    ) -> Result<BTreeMap<u32, Vec<Admission>>, StageError> {
        let mut by_shard: BTreeMap<u32, Vec<Admission>> = BTreeMap::new();
        for c in candidates.iter().chain(over_limit) {
            let (url_hash, task) = if over_limit.iter().any(|o| o.hash == c.hash) {
                (c.hash, Vec::new())
            } else {
                let task = self.task(batch, &c.url);
                let hash = match check {
                    Check::Retry => url_hash(&task.id),
                    Check::New | Check::Nothing => c.hash,
                };
                (hash, encode(&task)?)
            };
            by_shard
                .entry(host_shard(&c.origin))
                .or_default()
                .push(Admission {
                    origin: c.origin.clone(),
                    url_hash,
                    task,
                });
        }
        Ok(by_shard)
    }

    /// Stored: every hash of the batch is admitted for good, and the links
    /// written as those URLs are known.
    fn remember(&self, candidates: &[Candidate], keyed: &Keyed) {
        let mut cache = self.seen_cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.room_for(candidates.len());
        cache.urls.extend(candidates.iter().map(|c| c.hash));
        let admitted: Vec<u64> = keyed
            .iter()
            .filter(|(_, h)| cache.urls.contains(h))
            .map(|(k, _)| *k)
            .collect();
        cache.links.extend(admitted);
    }

    /// The crawl's compiled scope; a pattern that does not compile makes the batch
    /// malformed (dead-lettered with the reason). Kept by the hash of the crawl's
    /// settings, `key` (a crawl seeded again with other domains gets a new scope).
    fn scope(&self, key: u64, crawl: &CrawlSpec) -> Result<Arc<Scope>, StageError> {
        let mut cache = self.scopes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let compiled = Arc::new(Scope::compile(crawl).map_err(|e| {
            StageError::Malformed(format!("crawl {:?}: bad pattern: {e}", crawl.name))
        })?);
        if cache.len() >= SCOPE_CACHE_MAX {
            cache.clear();
        }
        cache.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// The crawl's page limit: the candidates not seen yet are counted
    /// against it, and those past it come back (to be marked seen, not
    /// queued); the rest stay in `candidates`.
    async fn page_limit(
        &self,
        crawl: &CrawlSpec,
        candidates: &mut Vec<Candidate>,
        max: u64,
    ) -> Result<Vec<Candidate>, StageError> {
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let ops: Vec<Op> = candidates
            .iter()
            .map(|c| Op::SMIsMember {
                key: self.keys.seen(host_shard(&c.origin), c.hash),
                members: vec![c.hash as i64],
            })
            .collect();
        let mut fresh = Vec::new();
        for (c, r) in std::mem::take(candidates)
            .into_iter()
            .zip(self.store.exec(&ops).await?)
        {
            if r.ints()?.first() == Some(&1) {
                // Seen already: admitting it again changes nothing.
                candidates.push(c);
            } else {
                fresh.push(c);
            }
        }
        if fresh.is_empty() {
            return Ok(Vec::new());
        }
        let total = self
            .store
            .one(Op::Incr {
                key: self.keys.crawl_pages(&crawl.name),
                by: fresh.len() as i64,
            })
            .await?
            .int()?;
        let over = (total - max as i64).clamp(0, fresh.len() as i64) as usize;
        let past = fresh.split_off(fresh.len() - over);
        candidates.extend(fresh);
        Ok(past)
    }

    /// The fetch task of `url` from `batch`: a redelivered batch makes the
    /// same task; a task handed back stays the task it was.
    fn task(&self, batch: &UrlBatch, url: &str) -> FetchTask {
        let id = match &batch.task {
            Some(task) if batch.rescheduled && !task.is_empty() => task.clone(),
            _ => FetchTask::derive_id(&[&batch.id, url]),
        };
        FetchTask {
            v: VERSION,
            crawl: batch.crawl.clone(),
            url: url.to_string(),
            depth: batch.depth,
            redirects: batch.redirects,
            attempt: batch.attempt,
            recrawl: false,
            id,
        }
    }

    /// The batch's counters, counted once per batch ([`once`], in the URL
    /// record of the page its links came from, or of its id for seeds).
    fn counted(&self, batch: &UrlBatch, t: &Tally) -> Vec<Op> {
        let fields: Vec<(&str, i64)> = [
            ("invalid_url", t.invalid),
            ("out_of_scope", t.out_of_scope),
            ("too_deep", t.too_deep),
            ("over_limit", t.over_limit),
            ("retried", t.retried),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
        if fields.is_empty() {
            return Vec::new();
        }
        let subject = url_hash(batch.source.as_deref().unwrap_or(&batch.id));
        vec![once(
            &self.keys,
            subject,
            LINK_IDS,
            &batch.id,
            None,
            pipeline::crawls::counts(&batch.crawl.name, &fields),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::messages::decode;
    use pipeline::{CrawlSpec, Link};

    /// The tests' crawl: example.com, depth 2, five pages.
    fn spec() -> CrawlSpec {
        CrawlSpec {
            name: "t".into(),
            allow_domains: vec!["example.com".into()],
            max_depth: 2,
            max_pages: Some(5),
            delay_ms: 0,
            ..CrawlSpec::default()
        }
    }

    /// [`spec`] without a page limit, with `n` pages per host at most.
    fn per_host(n: u64) -> CrawlSpec {
        CrawlSpec {
            max_pages: None,
            max_pages_per_host: Some(n),
            ..spec()
        }
    }

    /// A stage over a fresh memory store with [`spec`] registered.
    async fn stage() -> FrontierStage {
        let stage = FrontierStage::new(Store::memory(), "t");
        register(&stage, &spec()).await;
        stage
    }

    /// Registers `crawl`'s settings in the stage's store.
    async fn register(stage: &FrontierStage, crawl: &CrawlSpec) {
        pipeline::crawls::register(&stage.store, &stage.keys, crawl)
            .await
            .unwrap();
    }

    /// Asserts the stage's crawl counters named in `want`.
    async fn assert_counts(stage: &FrontierStage, want: &[(&str, i64)]) {
        let counters = counters(stage).await;
        for (name, n) in want {
            assert_eq!(counters.get(name), *n, "{name}");
        }
    }

    /// The crawl counters of the stage's store.
    async fn counters(stage: &FrontierStage) -> pipeline::crawls::Counters {
        pipeline::crawls::read_counters(&stage.store, &stage.keys)
            .await
            .unwrap()
    }

    fn batch_of(crawl: &CrawlSpec, id: &str, depth: u32, urls: &[&str]) -> UrlBatch {
        UrlBatch {
            id: id.into(),
            source: Some("http://example.com/".into()),
            ..UrlBatch::new(
                &crawl.reference(),
                depth,
                urls.iter().map(|u| Link::new(*u)).collect(),
            )
        }
    }

    fn batch(id: &str, depth: u32, urls: &[&str]) -> UrlBatch {
        batch_of(&spec(), id, depth, urls)
    }

    /// Everything the stage scheduled so far, as the releaser hands it out.
    /// The tasks the releaser hands out now (taken and confirmed).
    async fn released_tasks(stage: &FrontierStage) -> Vec<FetchTask> {
        let taken = crate::release::take_due(&stage.store, &stage.keys, &Default::default())
            .await
            .unwrap();
        let tasks = taken
            .tasks()
            .iter()
            .map(|p| decode::<FetchTask>(p).unwrap())
            .collect();
        crate::release::confirm(&stage.store, &stage.keys, &taken)
            .await
            .unwrap();
        tasks
    }

    async fn fetched(stage: &FrontierStage) -> Vec<String> {
        released_tasks(stage)
            .await
            .into_iter()
            .map(|t| t.url)
            .collect()
    }

    #[tokio::test]
    async fn admits_each_url_once_in_scope_and_within_limits() {
        let stage = stage().await;
        stage
            .handle(batch(
                "b1",
                1,
                &[
                    "/a",
                    "/a#x",
                    "http://other.org/",
                    "mailto:x@y",
                    "/b",
                    "/c?utm_source=z",
                ],
            ))
            .await
            .unwrap();
        assert_eq!(
            fetched(&stage).await,
            vec![
                "http://example.com/a",
                "http://example.com/b",
                "http://example.com/c"
            ]
        );
        // A second batch with the same links releases nothing new.
        stage
            .handle(batch("b2", 1, &["/a", "/b", "/d"]))
            .await
            .unwrap();
        assert_eq!(fetched(&stage).await, vec!["http://example.com/d"]);
        // Too deep: nothing.
        stage.handle(batch("b3", 3, &["/e"])).await.unwrap();
        assert!(fetched(&stage).await.is_empty());
        // Page limit 5: four released so far, only one more.
        stage
            .handle(batch("b4", 1, &["/f", "/g", "/h"]))
            .await
            .unwrap();
        assert_eq!(fetched(&stage).await.len(), 1);
    }

    #[tokio::test]
    async fn links_admitted_as_written_are_skipped_only_under_the_same_settings() {
        let stage = stage().await;
        let link = "http://example.com/a?utm_source=z";
        stage.handle(batch("b1", 1, &[link, "/r"])).await.unwrap();
        let mut got = fetched(&stage).await;
        got.sort();
        assert_eq!(got, ["http://example.com/a", "http://example.com/r"]);
        // The absolute link is known as written; the relative one only by its URL.
        assert_eq!(stage.seen_cache.lock().unwrap().links.len(), 1);
        stage
            .handle(batch("b2", 1, &[link, "http://example.com/b"]))
            .await
            .unwrap();
        assert_eq!(fetched(&stage).await, ["http://example.com/b"]);
        // Under another crawl's settings the same link is read again: its
        // scope leaves example.com out, and the link is counted so.
        let other = CrawlSpec {
            name: "u".into(),
            allow_domains: vec!["example.org".into()],
            ..spec()
        };
        register(&stage, &other).await;
        stage
            .handle(batch_of(&other, "b3", 1, &[link]))
            .await
            .unwrap();
        assert_counts(&stage, &[("out_of_scope", 1), ("seen", 3)]).await;
    }

    /// A smaller seen cache is cleared when full, and a URL it forgot is found
    /// seen in the store: never fetched twice.
    #[tokio::test]
    async fn a_seen_cache_past_its_size_is_cleared_and_the_store_still_knows() {
        let stage = stage().await.with_seen_cache(2);
        stage.handle(batch("b1", 1, &["/a", "/b"])).await.unwrap();
        assert_eq!(fetched(&stage).await.len(), 2);
        assert_eq!(stage.seen_cache.lock().unwrap().urls.len(), 2);
        stage.handle(batch("b2", 1, &["/c"])).await.unwrap();
        assert_eq!(fetched(&stage).await, ["http://example.com/c"]);
        assert_eq!(stage.seen_cache.lock().unwrap().urls.len(), 1);
        stage
            .handle(batch("b3", 1, &["/a", "/b", "/c"]))
            .await
            .unwrap();
        assert!(fetched(&stage).await.is_empty());
    }

    #[tokio::test]
    async fn a_redelivered_batch_loses_nothing_and_repeats_nothing() {
        let stage = stage().await;
        let b = batch("same-id", 1, &["/a", "/b", "http://other.org/"]);
        stage.handle(b.clone()).await.unwrap();
        let mut got = fetched(&stage).await;
        got.sort();
        assert_eq!(got, ["http://example.com/a", "http://example.com/b"]);
        // A redelivery (died before the ack), in a fresh process: nothing
        // queued again, nothing counted again.
        let again = FrontierStage::new(stage.store.clone(), "t");
        again.handle(b).await.unwrap();
        assert!(fetched(&again).await.is_empty());
        assert_counts(&stage, &[("seen", 2), ("out_of_scope", 1)]).await;
    }

    #[tokio::test]
    async fn per_host_limits_and_patterns() {
        let stage = stage().await;
        let patterns = CrawlSpec {
            include: vec!["/news/".into()],
            exclude: vec![r"\.pdf$".into()],
            ..per_host(2)
        };
        register(&stage, &patterns).await;
        let b = batch_of(
            &patterns,
            "b1",
            1,
            &[
                "http://a.example.com/news/1",
                "http://a.example.com/news/2",
                "http://a.example.com/news/3",
                "http://b.example.com/news/1",
                "http://b.example.com/about",
                "http://b.example.com/news/x.pdf",
            ],
        );
        stage.handle(b).await.unwrap();
        let mut got = fetched(&stage).await;
        got.sort();
        assert_eq!(
            got,
            [
                "http://a.example.com/news/1",
                "http://a.example.com/news/2",
                "http://b.example.com/news/1"
            ]
        );
        // A bad pattern: the batch is malformed, not a crash.
        let bad = CrawlSpec {
            include: vec!["(".into()],
            ..spec()
        };
        register(&stage, &bad).await;
        assert!(matches!(
            stage.handle(batch_of(&bad, "b2", 1, &["/x"])).await,
            Err(StageError::Malformed(_))
        ));
        // Settings never stored (a reset namespace): malformed, with why.
        let unknown = CrawlSpec {
            max_depth: 1,
            ..spec()
        };
        match stage.handle(batch_of(&unknown, "b3", 1, &["/y"])).await {
            Err(StageError::Malformed(why)) => assert!(why.contains("not in the store"), "{why}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }

    #[tokio::test]
    async fn a_task_handed_back_keeps_its_identity() {
        let stage = stage().await;
        stage.handle(batch("b1", 1, &["/a"])).await.unwrap();
        let first = released_tasks(&stage).await;
        assert_eq!(first.len(), 1);
        // The fetcher hands it back (its host was not due), twice: the task
        // it becomes each time is the same task, so it is counted once.
        for round in ["b2", "b3"] {
            let mut later = batch(round, 1, &["/a"]);
            later.rescheduled = true;
            later.task = Some(first[0].id.clone());
            stage.handle(later).await.unwrap();
            let again = released_tasks(&stage).await;
            assert_eq!(again.len(), 1);
            assert_eq!(again[0].id, first[0].id, "{round}");
        }
        // A retry is a new attempt, and a new task.
        let mut retry = batch("b4", 1, &["/a"]);
        retry.attempt = 1;
        stage.handle(retry).await.unwrap();
        let retried = released_tasks(&stage).await;
        assert_ne!(retried[0].id, first[0].id);
    }

    #[tokio::test]
    async fn retries_and_hand_backs_are_not_counted_against_the_per_host_limit() {
        let stage = stage().await;
        let one = per_host(1);
        register(&stage, &one).await;
        stage
            .handle(batch_of(&one, "b1", 1, &["/a"]))
            .await
            .unwrap();
        assert_eq!(fetched(&stage).await, vec!["http://example.com/a"]);
        let mut retry = batch_of(&one, "b2", 1, &["/a"]);
        retry.attempt = 1;
        stage.handle(retry).await.unwrap();
        let mut later = batch_of(&one, "b3", 1, &["/a"]);
        later.rescheduled = true;
        stage.handle(later).await.unwrap();
        // The URL's one page of the host: fetched again, not over the limit.
        assert_eq!(fetched(&stage).await.len(), 2);
        assert_counts(&stage, &[("over_limit", 0)]).await;
        // A new URL of the host is.
        stage
            .handle(batch_of(&one, "b4", 1, &["/b"]))
            .await
            .unwrap();
        assert!(fetched(&stage).await.is_empty());
        assert_counts(&stage, &[("over_limit", 1)]).await;
    }

    #[tokio::test]
    async fn retries_skip_the_seen_check() {
        let stage = stage().await;
        stage.handle(batch("b1", 1, &["/a"])).await.unwrap();
        assert_eq!(fetched(&stage).await.len(), 1);
        let mut retry = batch("b2", 1, &["/a"]);
        retry.attempt = 1;
        stage.handle(retry.clone()).await.unwrap();
        assert_eq!(fetched(&stage).await, vec!["http://example.com/a"]);
        // The same retry delivered again (its sender died before the ack),
        // to a fresh process: queued once.
        let again = FrontierStage::new(stage.store.clone(), "t");
        again.handle(retry).await.unwrap();
        assert!(fetched(&stage).await.is_empty());
        // The next attempt is another retry.
        let mut next = batch("b2b", 1, &["/a"]);
        next.attempt = 2;
        stage.handle(next).await.unwrap();
        assert_eq!(fetched(&stage).await, vec!["http://example.com/a"]);
        // Handed back because its host was not due: scheduled again too.
        let mut later = batch("b3", 1, &["/a"]);
        later.rescheduled = true;
        stage.handle(later).await.unwrap();
        assert_eq!(fetched(&stage).await, vec!["http://example.com/a"]);
        // But the same URL as a new link is dropped as seen.
        stage.handle(batch("b4", 1, &["/a"])).await.unwrap();
        assert!(fetched(&stage).await.is_empty());
    }
}
