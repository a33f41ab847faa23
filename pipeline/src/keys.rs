//! Every Redis key the crawler uses, in one place. All keys start with the
//! namespace; keys that must live together in one Redis Cluster slot share a
//! `{hash tag}`.

/// Builds key names for one namespace.
#[derive(Debug, Clone)]
pub struct Keys {
    ns: String,
}

impl Keys {
    pub fn new(ns: &str) -> Self {
        Keys { ns: ns.to_string() }
    }

    pub fn namespace(&self) -> &str {
        &self.ns
    }

    /// Shard `shard` of the URL-seen set (frontier). Members: i64 URL hashes.
    pub fn seen(&self, shard: u32) -> String {
        format!("{}:seen:{{{shard}}}", self.ns)
    }

    /// The URLs claimed in seen-shard `shard` by frontier batch `batch`: kept
    /// until the batch's fetch tasks are confirmed, so a redelivered batch
    /// releases them again. Same slot as the shard.
    pub fn claim(&self, shard: u32, batch: &str) -> String {
        format!("{}:claim:{{{shard}}}:{batch}", self.ns)
    }

    /// Count of URLs released for fetching in a crawl (max-pages).
    pub fn crawl_pages(&self, crawl: &str) -> String {
        format!("{}:crawl:{crawl}:pages", self.ns)
    }

    /// Counters shown by `crawler stats` (a hash: seen, fetched, failed, ...).
    pub fn stats(&self) -> String {
        format!("{}:stats", self.ns)
    }

    /// The outcome of the last fetch of a URL (fetcher), JSON.
    pub fn fetch_outcome(&self, url: &str) -> String {
        format!("{}:fetch:{url}", self.ns)
    }

    /// The cached robots.txt of an origin (`scheme://host:port`), with a TTL.
    pub fn robots(&self, origin: &str) -> String {
        format!("{}:robots:{origin}", self.ns)
    }

    /// What the fetchers learned about a host (origin), read by the
    /// frontier's politeness schedule. A hash: `delay_ms` (robots.txt
    /// Crawl-delay), `backoff_until_ms` (after 429/503/timeouts, honouring
    /// Retry-After; Unix ms), `fail_streak` (consecutive failures).
    pub fn host(&self, origin: &str) -> String {
        format!("{}:host:{origin}", self.ns)
    }

    /// Band table `band`, bucket `value` (contentseen). Members: i64 fingerprints.
    pub fn band(&self, band: usize, value: u64) -> String {
        format!("{}:band:{band}:{value:x}", self.ns)
    }

    /// Which document owns a fingerprint, and in which order it was stored:
    /// a hash shard, field = fingerprint (i64), value = "seq url".
    pub fn fingerprint_owner(&self, shard: u64) -> String {
        format!("{}:fp:{shard:x}", self.ns)
    }

    /// The sequence counter that orders stored fingerprints (contentseen).
    pub fn fingerprint_seq(&self) -> String {
        format!("{}:fpseq", self.ns)
    }

    /// The first document whose (too short for SimHash) body has this exact hash.
    pub fn exact(&self, hash: u64) -> String {
        format!("{}:exact:{hash:x}", self.ns)
    }

    /// A stored document, JSON.
    pub fn document(&self, url: &str) -> String {
        format!("{}:doc:{url}", self.ns)
    }

    /// The URLs of stored documents in storage order (export cursor).
    pub fn document_log(&self) -> String {
        format!("{}:docs", self.ns)
    }

    /// The near-duplicates of a stored document: a list of URLs.
    pub fn duplicates(&self, url: &str) -> String {
        format!("{}:dups:{url}", self.ns)
    }

    /// A live worker's heartbeat: its stage and in-flight message count.
    pub fn live(&self, worker: &str) -> String {
        format!("{}:live:{worker}", self.ns)
    }

    /// The pattern matching every live-worker key.
    pub fn live_pattern(&self) -> String {
        format!("{}:live:*", self.ns)
    }
}
