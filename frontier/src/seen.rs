//! The URL-seen set: an exact set of 64-bit URL hashes, stored as signed
//! integers (so small Redis sets stay compact intsets) and sharded over
//! [`SEEN_SHARDS`] keys so that no key grows without bound and Redis Cluster
//! spreads them.
//!
//! Adding is a claim ([`pipeline::store::Op::Claim`]): a batch adds its URLs
//! and remembers which ones it was first to add, so that if the batch is
//! redelivered (its worker died before the fetch tasks were confirmed) it
//! releases those URLs again instead of losing them as "already seen".
//!
//! Collisions: two distinct URLs share a 64-bit hash with probability about
//! n²/2⁶⁵; at a billion URLs that is about 2.7%, for one URL pair that would
//! be wrongly skipped.

use pipeline::keys::Keys;
use pipeline::store::Op;
use xxhash_rust::xxh3::xxh3_64;

/// Number of seen-set shards. Redis keeps a set whose members are all
/// integers as a compact intset (8 bytes a member) while it has at most
/// `set-max-intset-entries` (default 512) members; 2^15 shards keep every
/// shard under that up to about 16M URLs, so a seen URL costs about 8–12
/// bytes of Redis memory (measured by `cargo bench -p frontier`). For larger
/// crawls raise `set-max-intset-entries` (intset inserts stay cheap to a few
/// thousand) before the sets convert to hash tables (~50 bytes a member).
pub const SEEN_SHARDS: u32 = 1 << 15;

/// How long a batch's claim record outlives a worker that died mid-batch.
pub const CLAIM_TTL_SECS: u64 = 24 * 3600;

/// The hash of a normalized URL, as the signed integer stored in Redis.
pub fn url_hash(normalized: &str) -> i64 {
    xxh3_64(normalized.as_bytes()) as i64
}

/// The shard of a URL hash (from its top bits; the low bits stay the member).
pub fn shard_of(hash: i64) -> u32 {
    ((hash as u64) >> 40) as u32 % SEEN_SHARDS
}

/// Groups hashes by shard and builds one claim op per shard, in the order of
/// the returned shard list.
pub fn claim_ops(keys: &Keys, batch_id: &str, hashes: &[i64]) -> (Vec<u32>, Vec<Op>) {
    let mut by_shard: std::collections::BTreeMap<u32, Vec<i64>> = Default::default();
    for &h in hashes {
        by_shard.entry(shard_of(h)).or_default().push(h);
    }
    let shards: Vec<u32> = by_shard.keys().copied().collect();
    let ops = by_shard
        .into_iter()
        .map(|(shard, members)| Op::Claim {
            seen: keys.seen(shard),
            claim: keys.claim(shard, batch_id),
            members,
            ttl_secs: CLAIM_TTL_SECS,
        })
        .collect();
    (shards, ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_shards_in_range() {
        let h = url_hash("http://example.com/");
        assert_eq!(h, url_hash("http://example.com/"));
        assert_ne!(h, url_hash("http://example.com/a"));
        for i in 0..1000 {
            assert!(shard_of(url_hash(&format!("http://e/{i}"))) < SEEN_SHARDS);
        }
    }

    #[test]
    fn claim_ops_group_by_shard() {
        let keys = Keys::new("t");
        let hashes: Vec<i64> = (0..100)
            .map(|i| url_hash(&format!("http://e/{i}")))
            .collect();
        let (shards, ops) = claim_ops(&keys, "b1", &hashes);
        assert_eq!(shards.len(), ops.len());
        let total: usize = ops
            .iter()
            .map(|op| match op {
                Op::Claim { members, .. } => members.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(total, 100);
    }
}
