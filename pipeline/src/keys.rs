//! Every Redis key the crawler uses, in one place. All keys start with the
//! namespace; keys that one atomic step touches together share a `{hash
//! tag}`, so each step is one Redis Cluster slot (the layout and why:
//! [`crate::store::design`]).
//!
//! Two families of tags:
//! - `{u<T>}`: everything about one URL (its URL record, document record,
//!   the duplicates listed under it and the counters its steps bump), T
//!   the URL hash's top [`URL_TAG_BITS`] bits;
//! - `{h<n>}`: one politeness shard (schedule, host queues and records,
//!   the URL-seen sets of its hosts, its counters and indexes).

use xxhash_rust::xxh3::xxh3_64;

use crate::scale::Scale;

/// Shards of the politeness schedule: each shard's schedule, host queues,
/// host records, releasing set and URL-seen sets share one Redis Cluster
/// slot, so one script admits a URL and queues its task. 64, so that a
/// cluster's masters share them evenly.
pub const HOST_SHARDS: u32 = 64;

/// Bits of a URL hash that pick its tag `{u<T>}`: 256 tags, so the
/// per-URL keys and the counters in their slots spread over a cluster's
/// masters.
pub const URL_TAG_BITS: u32 = 8;

/// Sub-keys per tag of each per-URL hash family (URL records, document
/// records, duplicates): 2^11, so 2^19 keys a family and about 95 entries
/// a key at 50M URLs, under Redis's listpack limit of 128 entries.
pub const URL_SUB_BITS: u32 = 11;

/// The politeness shard of an origin (FNV-1a, stable across builds).
pub fn host_shard(origin: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in origin.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h % HOST_SHARDS
}

/// The 64-bit hash of a normalized URL: the field of its records, and
/// (as i64) its member in the URL-seen set.
pub fn url_hash(normalized: &str) -> u64 {
    xxh3_64(normalized.as_bytes())
}

/// The tag and sub-key of a 64-bit hash (a URL's, or a batch id's).
fn tag_and_sub(h: u64) -> (u64, u64) {
    (
        h >> (64 - URL_TAG_BITS),
        (h >> (64 - URL_TAG_BITS - URL_SUB_BITS)) & ((1 << URL_SUB_BITS) - 1),
    )
}

/// The field of a 64-bit hash in a hash key (its i64 in decimal, which
/// Redis keeps as an integer in a listpack).
pub fn hash_field(h: u64) -> String {
    (h as i64).to_string()
}

/// Builds key names for one namespace, at its [`Scale`].
#[derive(Debug, Clone)]
pub struct Keys {
    ns: String,
    scale: Scale,
}

impl Keys {
    /// The keys of namespace `ns` at [`Scale::LARGE`]; a stage that
    /// touches the scaled families takes its namespace's own scale from
    /// [`Scale::settle`].
    pub fn new(ns: &str) -> Self {
        Keys {
            ns: ns.to_string(),
            scale: Scale::LARGE,
        }
    }

    /// These keys at scale `scale`.
    pub fn with_scale(self, scale: Scale) -> Self {
        Keys { scale, ..self }
    }

    pub fn scale(&self) -> Scale {
        self.scale
    }

    pub fn namespace(&self) -> &str {
        &self.ns
    }

    /// The namespace's scale ([`Scale::encode`]), written once.
    pub fn scale_key(&self) -> String {
        format!("{}:scale", self.ns)
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

    // ---- Per URL ({u<T>}) ----

    /// The URL record of a URL hash (key and field): its last fetch and the
    /// message ids each stage applied for it (`pipeline::once`).
    pub fn url_record(&self, h: u64) -> (String, String) {
        let (t, s) = tag_and_sub(h);
        (format!("{}:url:{{u{t}}}:{s}", self.ns), hash_field(h))
    }

    /// The document record of a URL hash (key and field).
    pub fn document(&self, h: u64) -> (String, String) {
        let (t, s) = tag_and_sub(h);
        (format!("{}:doc:{{u{t}}}:{s}", self.ns), hash_field(h))
    }

    /// The near-duplicates of originals in the slot of original `h`: a
    /// hash from duplicate URL hash to original URL hash.
    pub fn duplicates(&self, original: u64) -> String {
        let (t, s) = tag_and_sub(original);
        format!("{}:dups:{{u{t}}}:{s}", self.ns)
    }

    /// The export log of the documents in the slot of URL hash `h`: a list
    /// of URL hashes in storage order (a changed refetch appends its URL
    /// again). The document record and its log entry are one step.
    pub fn document_log(&self, h: u64) -> String {
        let (t, _) = tag_and_sub(h);
        format!("{}:docs:{{u{t}}}", self.ns)
    }

    /// Every export log, in tag order: `crawler export` reads them all.
    pub fn document_logs(&self) -> Vec<String> {
        (0..1u64 << URL_TAG_BITS)
            .map(|t| self.document_log(t << (64 - URL_TAG_BITS)))
            .collect()
    }

    /// The counters of the steps in the slot of URL hash `h`.
    pub fn stats_of_url(&self, h: u64) -> String {
        let (t, _) = tag_and_sub(h);
        format!("{}:stats:{{u{t}}}", self.ns)
    }

    /// The counters of the steps in politeness shard `shard`'s slot.
    pub fn stats_of_shard(&self, shard: u32) -> String {
        format!("{}:stats:{{h{shard}}}", self.ns)
    }

    /// Every counter shard: summed, they are `crawler stats`.
    pub fn stats_shards(&self) -> Vec<String> {
        (0..1u64 << URL_TAG_BITS)
            .map(|t| self.stats_of_url(t << (64 - URL_TAG_BITS)))
            .chain((0..HOST_SHARDS).map(|s| self.stats_of_shard(s)))
            .collect()
    }

    // ---- Politeness shards ({h<n>}) ----

    /// The URL-seen set of URL hash `h` among the hosts of shard `shard`
    /// (members: i64 URL hashes): [`Keys::seen_prefix`] and
    /// [`Keys::seen_sub`].
    pub fn seen(&self, shard: u32, h: u64) -> String {
        format!("{}{}", self.seen_prefix(shard), self.seen_sub(h))
    }

    /// The seen sets of shard `shard` are this prefix and a sub-key.
    pub fn seen_prefix(&self, shard: u32) -> String {
        format!("{}:seen:{{h{shard}}}:", self.ns)
    }

    /// The sub-key of URL hash `h`'s seen set (its top
    /// [`Scale::seen_sub_bits`]).
    pub fn seen_sub(&self, h: u64) -> u64 {
        h >> (64 - self.scale.seen_sub_bits)
    }

    /// The shard of a 64-bit value among [`Scale::shard_bits`] (`fpr`,
    /// `lsh`, `exact`): its top bits.
    pub fn shard_of(&self, value: u64) -> u64 {
        value >> (64 - self.scale.shard_bits)
    }

    /// Tasks waiting in the host queues of shard `shard` (an integer kept
    /// by every script that queues or takes tasks: idle checks read it).
    pub fn queued(&self, shard: u32) -> String {
        format!("{}:queued:{{h{shard}}}", self.ns)
    }

    /// The hosts of shard `shard` by the length of their queue (a sorted
    /// set: the busiest hosts without a scan).
    pub fn host_lengths(&self, shard: u32) -> String {
        format!("{}:hostlen:{{h{shard}}}", self.ns)
    }

    /// The parked hosts of shard `shard`, by until when (Unix ms).
    pub fn parked(&self, shard: u32) -> String {
        format!("{}:parked:{{h{shard}}}", self.ns)
    }

    /// URLs released per crawl and host of shard `shard` (a hash, field
    /// `crawl\norigin`): `--max-pages-per-host`.
    pub fn crawl_host_pages(&self, shard: u32) -> String {
        format!("{}:hostpages:{{h{shard}}}", self.ns)
    }

    /// The crawls that are not running, in shard `shard` of the politeness
    /// schedule: a hash crawl → `paused` or `cancelled` (a running crawl
    /// has no field). The same hash in every shard, written to all of them
    /// by `crawler pause|resume|cancel`, so the release script of a shard
    /// reads it in its own slot.
    pub fn crawl_control(&self, shard: u32) -> String {
        format!("{}:crawlctl:{{h{shard}}}", self.ns)
    }

    /// What the crawl knows about a host (an origin, `scheme://host:port`):
    /// a hash read by the frontier's schedule and the fetchers' gate.
    /// Fields: `politeness::record`. Same slot as the host's queue.
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

    /// The schedule of one shard of hosts: a sorted set of the origins with
    /// tasks queued, scored by when each may release its next task (Unix
    /// ms).
    pub fn schedule(&self, shard: u32) -> String {
        format!("{}:sched:{{h{shard}}}", self.ns)
    }

    /// Tasks taken from a host queue and not yet confirmed on the fetch
    /// queue (members `origin\ntask`, scored by when they were taken), so a
    /// frontier that dies mid-release loses nothing.
    pub fn releasing(&self, shard: u32) -> String {
        format!("{}:releasing:{{h{shard}}}", self.ns)
    }

    /// Stored pages of shard `shard`'s hosts due for a refetch: a sorted
    /// set of encoded `FetchTask`s (one per URL) scored by when (Unix ms).
    pub fn recrawl_schedule(&self, shard: u32) -> String {
        format!("{}:recrawl:{{h{shard}}}", self.ns)
    }

    // ---- The namespace ----

    /// The crawls seeded: a hash from crawl name to its settings (JSON).
    pub fn crawls(&self) -> String {
        format!("{}:crawls", self.ns)
    }

    /// Every crawl's settings as messages name them: a hash from
    /// [`crate::messages::CrawlSpec::hash`] (16 hex digits) to the settings
    /// (MessagePack). Written when a crawl is seeded, never changed: a
    /// crawl seeded again with other settings adds an entry, and the
    /// messages of both stay readable.
    pub fn crawl_specs(&self) -> String {
        format!("{}:specs", self.ns)
    }

    /// Count of URLs released for fetching in a crawl (max-pages).
    pub fn crawl_pages(&self, crawl: &str) -> String {
        format!("{}:crawl:{crawl}:pages", self.ns)
    }

    /// The live workers: a sorted set of worker ids scored by when their
    /// heartbeat expires (Unix ms).
    pub fn live(&self) -> String {
        format!("{}:live:{{w}}", self.ns)
    }

    /// The messages each live worker has in flight (a hash, same slot as
    /// [`Keys::live`]).
    pub fn in_flight(&self) -> String {
        format!("{}:inflight:{{w}}", self.ns)
    }

    /// The cached robots.txt of an origin (`scheme://host:port`), with a TTL.
    pub fn robots(&self, origin: &str) -> String {
        format!("{}:robots:{origin}", self.ns)
    }

    // ---- contentseen's tables (single-key steps) ----

    /// Band table `band`, bucket `value` (contentseen): a string, the
    /// fingerprints' members (their bits outside the band) in the order
    /// they were added.
    pub fn band(&self, band: usize, value: u64) -> String {
        format!("{}:bands:{band}:{value:x}", self.ns)
    }

    /// MinHash LSH table `band`, bucket `bucket` (contentseen): a string of
    /// members (check bytes and fingerprint) in the order added.
    pub fn minhash_band(&self, band: usize, bucket: u64) -> String {
        format!("{}:lsh:{band}:{bucket:x}", self.ns)
    }

    /// The records of stored fingerprints (contentseen): shard `shard` of a
    /// hash, field = fingerprint (i64), value = the record of the first
    /// document that had it.
    pub fn fingerprint_sequence(&self, shard: u64) -> String {
        format!("{}:fpr:{shard:x}", self.ns)
    }

    /// The sequence counter: the order in which fingerprints were stored
    /// (contentseen's race-free rule).
    pub fn sequence(&self) -> String {
        format!("{}:seq", self.ns)
    }

    /// Shard `shard` of the first documents of short bodies: a hash from
    /// the body's exact hash to the URL hash of its first document.
    pub fn exact(&self, shard: u64) -> String {
        format!("{}:exact:{shard:x}", self.ns)
    }

    /// The counter that numbers text segment files.
    pub fn segment_sequence(&self) -> String {
        format!("{}:segseq", self.ns)
    }

    /// The zstd dictionaries of document records: a hash from dictionary
    /// id to its bytes (`crate::dictionaries`).
    pub fn dictionaries(&self) -> String {
        format!("{}:dicts", self.ns)
    }

    /// The counter that numbers the dictionaries.
    pub fn dictionary_sequence(&self) -> String {
        format!("{}:dictseq", self.ns)
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

    #[test]
    fn a_urls_keys_share_its_tag_and_spread_over_the_tags() {
        let keys = Keys::new("n");
        let tag = |k: &str| {
            k.split('{')
                .nth(1)
                .and_then(|t| t.split('}').next())
                .map(str::to_string)
        };
        let mut tags = std::collections::HashSet::new();
        for i in 0..2000 {
            let h = url_hash(&format!("https://example.com/{i}"));
            let (url, _) = keys.url_record(h);
            let (doc, _) = keys.document(h);
            assert_eq!(tag(&url), tag(&doc));
            assert_eq!(tag(&url), tag(&keys.duplicates(h)));
            assert_eq!(tag(&url), tag(&keys.stats_of_url(h)));
            tags.insert(tag(&url));
        }
        assert!(tags.len() > 250, "{} tags", tags.len());
        assert_eq!(keys.stats_shards().len(), 256 + HOST_SHARDS as usize);
    }
}
