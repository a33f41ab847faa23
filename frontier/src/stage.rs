//! The frontier stage: a [`UrlBatch`] in; one [`FetchTask`] per admitted URL
//! into its host's queue in the store, from which [`crate::release`] hands
//! it to the fetchers when the host is due.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use pipeline::keys::Keys;
use pipeline::messages::{encode, FetchTask, UrlBatch, VERSION};
use pipeline::store::Op;
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{CrawlSpec, Queue, Store};
use url::Url;

use crate::normalize::{normalize_with, Rules};
use crate::scope::{in_scope, Patterns};
use crate::seen::{claim_ops, url_hash};

pub struct FrontierStage {
    store: Store,
    keys: Keys,
    /// Compiled include/exclude patterns per crawl (crawls are few).
    patterns: Mutex<HashMap<String, Arc<Patterns>>>,
    /// URL hashes this process claimed and queued (or dropped for a limit)
    /// for good: a batch's links found here skip the claim. Exact, because
    /// the seen set only grows, and a hash enters only after the batch that
    /// claimed it stored its tasks and dropped its claims. A hash a batch
    /// found claimed by another never enters: that other batch may have
    /// died before queueing it, and its redelivery must find its claim
    /// (skipping the claim there would lose the URL for good). Most outlinks
    /// of a site repeat (navigation), so this saves most of the frontier's
    /// Redis work. Cleared when full ([`SEEN_CACHE_MAX`]).
    seen_cache: Mutex<HashSet<i64>>,
}

/// Crawls whose patterns are kept compiled before the cache is cleared.
const PATTERN_CACHE_MAX: usize = 1000;

/// URL hashes the seen cache holds before it is cleared (about 40 MB).
pub const SEEN_CACHE_MAX: usize = 1 << 20;

impl FrontierStage {
    pub fn new(store: Store, namespace: &str) -> Self {
        FrontierStage {
            store,
            keys: Keys::new(namespace),
            patterns: Mutex::new(HashMap::new()),
            seen_cache: Mutex::new(HashSet::new()),
        }
    }
}

/// What happened to the links of one batch (the counters of `crawler stats`).
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    invalid: i64,
    out_of_scope: i64,
    too_deep: i64,
    over_limit: i64,
    released: i64,
    retried: i64,
}

impl Stage for FrontierStage {
    type Input = UrlBatch;
    const QUEUE: Queue = Queue::Frontier;
    const DEFAULT_CONCURRENCY: usize = 16;

    async fn handle(&self, batch: UrlBatch) -> Result<Outcome, StageError> {
        let mut tally = Tally::default();
        let mut outcome = Outcome::default();
        if batch.depth > batch.crawl.max_depth {
            tally.too_deep = batch.links.len() as i64;
            outcome.store = self.counted(&batch, &tally);
            return Ok(outcome);
        }

        // Normalize, scope, and drop repeats within the batch.
        let base = batch.source.as_deref().and_then(|s| Url::parse(s).ok());
        let patterns = self.patterns(&batch.crawl)?;
        let rules = Rules {
            strip_params: batch.crawl.strip_params.clone(),
            sort_query: batch.crawl.sort_query,
        };
        let mut candidates: Vec<(i64, String)> = Vec::new();
        let mut in_batch = HashSet::new();
        for link in &batch.links {
            let url = match normalize_with(&link.url, base.as_ref(), &rules) {
                Ok(u) => u,
                Err(e) => {
                    tally.invalid += 1;
                    tracing::debug!(source = batch.source.as_deref().unwrap_or("seed"), error = %e, "invalid URL dropped");
                    continue;
                }
            };
            if !in_scope(&url, &batch.crawl) || !patterns.allows(&url) {
                tally.out_of_scope += 1;
                continue;
            }
            let s = url.to_string();
            let h = url_hash(&s);
            if in_batch.insert(h) {
                candidates.push((h, s));
            }
        }

        // A transiently failed fetch, or a task whose host was not due, coming
        // back: already seen, schedule it again.
        if batch.attempt > 0 || batch.rescheduled {
            let urls: Vec<String> = candidates.into_iter().map(|(_, s)| s).collect();
            tally.retried = urls.len() as i64;
            let counted = self.counted(&batch, &tally);
            self.enqueue(&batch, urls, counted).await?;
            return Ok(outcome);
        }

        // Links this process saw stored before are seen: no claim needed.
        {
            let cache = self.seen_cache.lock().unwrap_or_else(|p| p.into_inner());
            candidates.retain(|(h, _)| !cache.contains(h));
        }

        // Claim the new ones in the seen set: one pipelined round trip.
        let hashes: Vec<i64> = candidates.iter().map(|(h, _)| *h).collect();
        let (shards, ops) = claim_ops(&self.keys, &batch.id, &hashes);
        let replies = self.store.exec(&ops).await?;
        let mut claimed = HashSet::new();
        for r in &replies {
            claimed.extend(r.ints()?);
        }
        let mut released: Vec<String> = candidates
            .into_iter()
            .filter(|(h, _)| claimed.contains(h))
            .map(|(_, s)| s)
            .collect();

        // The crawl's page limit. (A batch redelivered after its worker died
        // counts its URLs twice, so a crawl can stop a little short of its
        // limit, never beyond it.)
        if let Some(max) = batch.crawl.max_pages {
            if !released.is_empty() {
                let total = self
                    .store
                    .one(Op::Incr {
                        key: self.keys.crawl_pages(&batch.crawl.name),
                        by: released.len() as i64,
                    })
                    .await?
                    .int()?;
                let over = (total - max as i64).clamp(0, released.len() as i64);
                tally.over_limit = over;
                released.truncate(released.len() - over as usize);
            }
        }

        let released = self
            .per_host_limit(&batch.crawl, released, &mut tally)
            .await?;
        tally.released = released.len() as i64;
        // The claims are dropped in the same round trip as the enqueue: a
        // redelivery after that finds the URLs seen and unclaimed, so they
        // are not queued twice (a crash between the two may still repeat a
        // few: at-least-once).
        let drop_claims: Vec<Op> = shards
            .into_iter()
            .map(|shard| Op::Del {
                key: self.keys.claim(shard, &batch.id),
            })
            .collect();
        let mut then = drop_claims;
        then.extend(self.counted(&batch, &tally));
        self.enqueue(&batch, released, then).await?;
        // Stored: the hashes this batch claimed are queued (or dropped for a
        // limit) for good. Not the others: see `seen_cache`.
        let mut cache = self.seen_cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() + claimed.len() > SEEN_CACHE_MAX {
            cache.clear();
        }
        cache.extend(claimed);
        Ok(outcome)
    }
}

impl FrontierStage {
    /// The crawl's compiled patterns; a pattern that does not compile makes
    /// the batch malformed (dead-lettered with the reason).
    fn patterns(&self, crawl: &CrawlSpec) -> Result<Arc<Patterns>, StageError> {
        let key = format!(
            "{}\u{0}{:?}\u{0}{:?}",
            crawl.name, crawl.include, crawl.exclude
        );
        let mut cache = self.patterns.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(&key) {
            return Ok(p.clone());
        }
        let compiled = Arc::new(Patterns::compile(crawl).map_err(|e| {
            StageError::Malformed(format!("crawl {:?}: bad pattern: {e}", crawl.name))
        })?);
        if cache.len() >= PATTERN_CACHE_MAX {
            cache.clear();
        }
        cache.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// Applies the crawl's per-host page limit to `urls` (counted per origin).
    async fn per_host_limit(
        &self,
        crawl: &CrawlSpec,
        urls: Vec<String>,
        tally: &mut Tally,
    ) -> Result<Vec<String>, StageError> {
        let Some(max) = crawl.max_pages_per_host else {
            return Ok(urls);
        };
        let mut by_origin: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for u in urls {
            let origin = Url::parse(&u)
                .map(|p| p.origin().ascii_serialization())
                .unwrap_or_default();
            by_origin.entry(origin).or_default().push(u);
        }
        let ops: Vec<Op> = by_origin
            .iter()
            .map(|(origin, us)| Op::Incr {
                key: self.keys.crawl_host_pages(&crawl.name, origin),
                by: us.len() as i64,
            })
            .collect();
        let replies = self.store.exec(&ops).await?;
        let mut kept = Vec::new();
        for ((_, mut us), reply) in by_origin.into_iter().zip(replies) {
            let total = reply.int()?;
            let over = (total - max as i64).clamp(0, us.len() as i64);
            tally.over_limit += over;
            us.truncate(us.len() - over as usize);
            kept.extend(us);
        }
        Ok(kept)
    }

    /// Puts fetch tasks in their hosts' queues (one round trip); the
    /// releaser hands them to the fetchers when each host is due.
    async fn enqueue(
        &self,
        batch: &UrlBatch,
        urls: Vec<String>,
        then: Vec<Op>,
    ) -> Result<(), StageError> {
        let mut by_origin: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
        for url in urls {
            let origin = match Url::parse(&url) {
                Ok(u) => u.origin().ascii_serialization(),
                Err(_) => continue,
            };
            // A redelivered batch makes the same tasks; a task handed back
            // stays the task it was.
            let id = match &batch.task {
                Some(task) if batch.rescheduled && !task.is_empty() => task.clone(),
                _ => FetchTask::derive_id(&[&batch.id, &url]),
            };
            let task = FetchTask {
                v: VERSION,
                crawl: batch.crawl.clone(),
                url,
                depth: batch.depth,
                redirects: batch.redirects,
                attempt: batch.attempt,
                recrawl: false,
                id,
            };
            by_origin.entry(origin).or_default().push(encode(&task)?);
        }
        let mut ops: Vec<Op> = by_origin
            .into_iter()
            .map(|(origin, tasks)| {
                politeness::schedule::enqueue(&self.keys, &origin, batch.crawl.delay_ms, tasks)
            })
            .collect();
        ops.extend(then);
        // The tasks, the claims dropped and the counters: all or nothing.
        self.store.exec_atomic(&ops).await?;
        Ok(())
    }

    /// The batch's counters, counted once per batch ([`Op::Once`]): in the
    /// same transaction as its tasks, so a redelivery (which finds its URLs
    /// seen and its claims gone) neither loses nor repeats them.
    fn counted(&self, batch: &UrlBatch, t: &Tally) -> Vec<Op> {
        let fields: Vec<(&str, i64)> = [
            ("seen", t.released),
            ("invalid_url", t.invalid),
            ("out_of_scope", t.out_of_scope),
            ("too_deep", t.too_deep),
            ("over_limit", t.over_limit),
            ("retried", t.retried),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
        let counts = pipeline::crawls::counts(&self.keys, &batch.crawl.name, &fields);
        if counts.is_empty() {
            return Vec::new();
        }
        let (mark, field) = self.keys.once("frontier", &batch.id);
        vec![Op::Once {
            mark,
            field,
            id: batch.id.clone(),
            sets: Vec::new(),
            counts,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::messages::decode;
    use pipeline::{CrawlSpec, Link};

    fn batch(id: &str, depth: u32, urls: &[&str]) -> UrlBatch {
        let crawl = CrawlSpec {
            name: "t".into(),
            allow_domains: vec!["example.com".into()],
            max_depth: 2,
            max_pages: Some(5),
            delay_ms: 0,
            ..CrawlSpec::default()
        };
        UrlBatch {
            id: id.into(),
            source: Some("http://example.com/".into()),
            ..UrlBatch::new(&crawl, depth, urls.iter().map(|u| Link::new(*u)).collect())
        }
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
        let stage = FrontierStage::new(Store::memory(), "t");
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
    async fn a_redelivered_batch_loses_nothing_and_repeats_nothing() {
        let stage = FrontierStage::new(Store::memory(), "t");
        let b = batch("same-id", 1, &["/a", "/b"]);
        // A first delivery claimed the URLs and died before queueing them.
        let hashes: Vec<i64> = ["http://example.com/a", "http://example.com/b"]
            .iter()
            .map(|u| url_hash(u))
            .collect();
        let (_, ops) = claim_ops(&stage.keys, &b.id, &hashes);
        stage.store.exec(&ops).await.unwrap();
        // The redelivery queues them instead of dropping them as seen.
        stage.handle(b.clone()).await.unwrap();
        let mut got = fetched(&stage).await;
        got.sort();
        assert_eq!(got, ["http://example.com/a", "http://example.com/b"]);
        // A redelivery after they were queued (died before the ack) adds nothing.
        stage.handle(b).await.unwrap();
        assert!(fetched(&stage).await.is_empty());
    }

    /// The fault test's loss, found with its diagnostics: a batch claimed a
    /// URL and its process died before queueing it; in the next process
    /// another batch with the same link came first (finding it seen, not
    /// its own); then the redelivery must still get its claim back.
    #[tokio::test]
    async fn a_link_seen_in_another_batch_does_not_hide_a_dead_batchs_claim() {
        let stage = FrontierStage::new(Store::memory(), "t");
        let dead = batch("dead", 1, &["/a"]);
        let (_, ops) = claim_ops(&stage.keys, &dead.id, &[url_hash("http://example.com/a")]);
        stage.store.exec(&ops).await.unwrap();
        stage
            .handle(batch("other", 1, &["/a", "/b"]))
            .await
            .unwrap();
        assert_eq!(fetched(&stage).await, ["http://example.com/b"]);
        stage.handle(dead).await.unwrap();
        assert_eq!(fetched(&stage).await, ["http://example.com/a"]);
    }

    #[tokio::test]
    async fn per_host_limits_and_patterns() {
        let stage = FrontierStage::new(Store::memory(), "t");
        let mut b = batch(
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
        b.crawl.max_pages = None;
        b.crawl.max_pages_per_host = Some(2);
        b.crawl.include = vec!["/news/".into()];
        b.crawl.exclude = vec![r"\.pdf$".into()];
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
        let mut bad = batch("b2", 1, &["/x"]);
        bad.crawl.include = vec!["(".into()];
        assert!(matches!(
            stage.handle(bad).await,
            Err(StageError::Malformed(_))
        ));
    }

    #[tokio::test]
    async fn a_task_handed_back_keeps_its_identity() {
        let stage = FrontierStage::new(Store::memory(), "t");
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
    async fn retries_skip_the_seen_check() {
        let stage = FrontierStage::new(Store::memory(), "t");
        stage.handle(batch("b1", 1, &["/a"])).await.unwrap();
        assert_eq!(fetched(&stage).await.len(), 1);
        let mut retry = batch("b2", 1, &["/a"]);
        retry.attempt = 1;
        stage.handle(retry).await.unwrap();
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
