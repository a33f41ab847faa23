//! Every Redis key the crawler uses, in one place. All keys start with the
//! namespace; keys that must live together in one Redis Cluster slot share a
//! `{hash tag}`.

/// Shards of the politeness schedule: each shard's schedule, host queues,
/// host records and releasing set share one Redis Cluster slot, so one
/// script can update them atomically.
pub const HOST_SHARDS: u32 = 16;

/// The politeness shard of an origin (FNV-1a, stable across builds).
pub fn host_shard(origin: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in origin.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h % HOST_SHARDS
}

/// Whether `key` is a namespace's stats hash ([`Keys::stats`]; not a
/// crawl's own counters, which live under `:crawl:`): the counters the
/// workers' metrics mirror.
pub fn is_stats_key(key: &str) -> bool {
    key.ends_with(":stats") && !key.contains(":crawl:")
}

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

    /// A crawl's settings as seeded (JSON), for progress reports.
    pub fn crawl_spec(&self, crawl: &str) -> String {
        format!("{}:crawl:{crawl}:spec", self.ns)
    }

    /// The pattern of every crawl's settings key.
    pub fn crawl_spec_pattern(&self) -> String {
        format!("{}:crawl:*:spec", self.ns)
    }

    /// A crawl's own counters (a hash with the fields of [`Keys::stats`]
    /// listed in [`crate::crawls::CRAWL_FIELDS`]),
    /// each counted in the same atomic op as the namespace counter it
    /// mirrors ([`crate::crawls::counts`]).
    pub fn crawl_stats(&self, crawl: &str) -> String {
        format!("{}:crawl:{crawl}:stats", self.ns)
    }

    /// The crawls that are not running, in shard `shard` of the politeness
    /// schedule: a hash crawl → `paused` or `cancelled` (a running crawl
    /// has no field). The same hash in every shard, written to all of them
    /// at once by `crawler pause|resume|cancel`, so the release script of
    /// a shard reads it in its own slot.
    pub fn crawl_control(&self, shard: u32) -> String {
        format!("{}:crawlctl:{{h{shard}}}", self.ns)
    }

    /// The glob pattern of every key of the namespace (`crawler reset`),
    /// with the namespace's own glob characters escaped.
    pub fn namespace_pattern(&self) -> String {
        let mut p = String::with_capacity(self.ns.len() + 2);
        for c in self.ns.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                p.push('\\');
            }
            p.push(c);
        }
        p + ":*"
    }

    /// Count of URLs released for fetching in a crawl on one host (origin).
    pub fn crawl_host_pages(&self, crawl: &str, origin: &str) -> String {
        format!("{}:crawl:{crawl}:host:{origin}:pages", self.ns)
    }

    /// Counters shown by `crawler stats` (a hash: seen, fetched, failed, ...).
    pub fn stats(&self) -> String {
        format!("{}:stats", self.ns)
    }

    /// Where a stage marks the last message it counted for a URL
    /// ([`crate::store::Op::Once`]): a hash key of 2^16 shards and the
    /// URL's field (its 64-bit hash, as i64), so a mark costs one small
    /// listpack entry per URL and stage.
    pub fn once(&self, stage: &str, url: &str) -> (String, String) {
        let h = xxhash_rust::xxh3::xxh3_64(url.as_bytes());
        (
            format!("{}:once:{stage}:{:x}", self.ns, h >> 48),
            (h as i64).to_string(),
        )
    }

    /// The outcome of the last fetch of a URL (fetcher), JSON.
    pub fn fetch_outcome(&self, url: &str) -> String {
        format!("{}:fetch:{url}", self.ns)
    }

    /// The cached robots.txt of an origin (`scheme://host:port`), with a TTL.
    pub fn robots(&self, origin: &str) -> String {
        format!("{}:robots:{origin}", self.ns)
    }

    /// What the crawl knows about a host (an origin, `scheme://host:port`):
    /// a hash read by the frontier's schedule and the fetchers' gate.
    /// Fields: `delay_ms` (robots.txt Crawl-delay, by the fetcher),
    /// `crawl_delay_ms` (the crawl's own delay, by the frontier),
    /// `backoff_until_ms` (after 429/503, honouring Retry-After; Unix ms),
    /// `fail_streak` (consecutive transient failures), `next_ms` (when the
    /// frontier may release the next task), `next_fetch_ms` (when a fetcher
    /// may start the next request). Same slot as the host's queue.
    pub fn host(&self, origin: &str) -> String {
        format!("{}{origin}", self.host_prefix(host_shard(origin)))
    }

    /// `host(origin)` is this prefix followed by the origin.
    pub fn host_prefix(&self, shard: u32) -> String {
        format!("{}:host:{{h{shard}}}:", self.ns)
    }

    /// The tasks waiting for a host, oldest first (a list of encoded
    /// `FetchTask`s): the frontier's per-host queue.
    pub fn host_queue(&self, origin: &str) -> String {
        format!("{}{origin}", self.host_queue_prefix(host_shard(origin)))
    }

    pub fn host_queue_prefix(&self, shard: u32) -> String {
        format!("{}:hostq:{{h{shard}}}:", self.ns)
    }

    /// The schedule of one shard of hosts: a sorted set of origins scored
    /// by when each may release its next task (Unix ms).
    pub fn schedule(&self, shard: u32) -> String {
        format!("{}:sched:{{h{shard}}}", self.ns)
    }

    /// Tasks taken from a host queue and not yet confirmed on the fetch
    /// queue (members `origin\ntask`, scored by when they were taken), so a
    /// frontier that dies mid-release loses nothing.
    pub fn releasing(&self, shard: u32) -> String {
        format!("{}:releasing:{{h{shard}}}", self.ns)
    }

    /// The pattern of every host record key.
    pub fn host_pattern(&self) -> String {
        format!("{}:host:*", self.ns)
    }

    /// The pattern of every host queue key.
    pub fn host_queue_pattern(&self) -> String {
        format!("{}:hostq:*", self.ns)
    }

    /// Stored pages due for a refetch: a sorted set of encoded `FetchTask`s
    /// (one per URL) scored by when (Unix ms).
    pub fn recrawl_schedule(&self) -> String {
        format!("{}:recrawl", self.ns)
    }

    /// The current refetch interval of each stored page (a hash: URL → s).
    pub fn recrawl_interval(&self) -> String {
        format!("{}:recrawl:interval", self.ns)
    }

    /// Band table `band`, bucket `value` (contentseen): a string, the
    /// fingerprints' members (their bits outside the band) in the order
    /// they were added.
    pub fn band(&self, band: usize, value: u64) -> String {
        format!("{}:bands:{band}:{value:x}", self.ns)
    }

    /// The records of stored fingerprints (contentseen): shard `shard` (the
    /// fingerprint's top bits) of a hash, field = fingerprint (i64), value =
    /// the record of the first document that had it (its sequence number
    /// and search radius, one integer). Integer fields and values keep it a
    /// compact listpack.
    pub fn fingerprint_sequence(&self, shard: u64) -> String {
        format!("{}:fpr:{shard:x}", self.ns)
    }

    /// contentseen: MinHash LSH band `band`, shard `shard` (a hash from
    /// band value to the fingerprint that first had it).
    pub fn minhash_band(&self, band: usize, shard: u64) -> String {
        format!("{}:lsh:{band}:{shard:x}", self.ns)
    }

    /// Which document took a sequence number (contentseen): block `block`
    /// (the number's high bits) of a hash, field = sequence number, value =
    /// the document's URL. Read only for the original a duplicate points at.
    pub fn sequence_url(&self, block: u64) -> String {
        format!("{}:sequrl:{block:x}", self.ns)
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

    /// The pattern matching the live-worker keys of workers on `host` (see
    /// `worker::host_name`).
    pub fn live_pattern_on(&self, host: &str) -> String {
        format!("{}:live:*:{host}:*", self.ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_pattern_matches_its_keys_only() {
        assert_eq!(Keys::new("crawler").namespace_pattern(), "crawler:*");
        // Glob characters of the name match themselves.
        assert_eq!(Keys::new("a*b[1]").namespace_pattern(), "a\\*b\\[1\\]:*");
    }
}
