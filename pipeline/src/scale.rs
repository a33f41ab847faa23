//! How many keys a namespace spreads its large key families over: its
//! **scale**, fixed when the namespace is first used.
//!
//! Three families hold one small entry per page in many small keys, so that
//! every key stays in Redis's compact encodings (a listpack hash, an intset,
//! a short string) at any crawl size: the URL-seen sets (`seen`), the
//! fingerprint records and the MinHash LSH tables (`fpr`, `lsh`, and the
//! short bodies' `exact`), and the SimHash band tables (`bands`). How many
//! keys each family has is a trade: too few, and at many pages a key
//! outgrows its compact encoding (a listpack hash of over 128 entries
//! becomes a hash table, about 60 more bytes an entry); too many, and at
//! few pages each key holds one entry and its own overhead (about 50
//! bytes) weighs more than the entry. So the count follows the pages the
//! namespace expects (`--expected-pages`, `CRAWLER_EXPECTED_PAGES`,
//! [`DEFAULT_EXPECTED_PAGES`]): [`Scale::for_pages`].
//!
//! Measured (`MEMORY_BENCH_PAGES=N cargo bench -p evaluation --bench
//! memory`, texts in files unless said, bytes of Redis memory per page):
//!
//! | pages | scale for | `lsh` | `fpr` | `bands` | `seen` | all (`used_memory`) |
//! |---|---|---|---|---|---|---|
//! | 51,000, texts in Redis, 50 hosts | 51,000 | 102.3 | 67.8 | 36.5 | 23.8 | 2,126 |
//! | 51,000, texts in Redis, 50 hosts | 100,000 (the default) | 110.3 | 68.7 | 43.1 | 36.7 | |
//! | 51,000, texts in Redis, 50 hosts | 1M | 217.7 | 80.8 | 85.8 | 66.6 | |
//! | 51,000, before scales (the crawl) | 50M | 430 | 71 | 47 | 50 | 6,153 |
//! | 1M | 100,000 (the default) | 91.2 | 111.7 | 31.1 | 11.3 | 566.8 |
//! | 1M | 50M (before scales) | 150.1 | 73.1 | 55.3 | 19.0 | 648.2 |
//! | 10M | 10M (= before scales) | 88.5 | 74.0 | 30.1 | 9.8 | 435.6 |
//!
//! Every worker of a namespace must name the same keys, and a key's name
//! cannot change once entries are in it. So the first worker to use a
//! namespace writes its scale to `<ns>:scale` (`SET NX`), and every worker,
//! `crawler run` and the `crawler` CLI read it from there
//! ([`Scale::settle`]): a later `--expected-pages` changes nothing for a
//! namespace that exists (start a new namespace to change it). A namespace
//! written before scales existed (its `seq` counter set, no `scale` key)
//! gets [`Scale::LARGE`], the fixed counts of then.
//!
//! Measured: `MEMORY_BENCH_PAGES=N cargo bench -p evaluation --bench
//! memory` (which expects its N pages) prints bytes per page by key kind.

use crate::keys::Keys;
use crate::store::{Op, Reply, StoreError};
use crate::Store;

/// The pages a namespace expects when no one says: 100,000. A small crawl
/// then pays no key overhead beyond what it did before scales (measured at
/// 51,000 pages); a crawl that grows past it without saying so stays
/// compact to about 1M pages with Redis's `hash-max-listpack-entries` at
/// 512 ([`crate::store::RECOMMENDED_REDIS_CONFIG`]: 567 B/page at 1M,
/// against 648 with the counts for 10M), and past that its `fpr` and `lsh`
/// shards become hash tables (contentseen warns). A larger crawl says how
/// large.
pub const DEFAULT_EXPECTED_PAGES: u64 = 100_000;

/// The key counts of a namespace, as bits of a hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// Sub-keys per politeness shard of the URL-seen sets.
    pub seen_sub_bits: u32,
    /// Shards of the fingerprint records, of each MinHash LSH band and of
    /// the short bodies' exact hashes.
    pub shard_bits: u32,
    /// Bits of a SimHash band's value in its table's key (at most the
    /// band's width; the rest of the band goes into the member).
    pub band_key_bits: u32,
}

/// Entries a key of each family is sized for at the expected pages: under
/// Redis's listpack limit of 128 entries (`fpr`, `lsh`); a string of 160
/// six- or seven-byte members (`bands`); URL-seen sets of up to 256
/// members (an intset up to 512), for twice as many URLs as pages all on
/// one host.
const SHARD_ENTRIES: u64 = 90;
const BAND_MEMBERS: u64 = 160;
const SEEN_MEMBERS: u64 = 256;

/// The least bits of each family: few keys cost nothing at small sizes.
const MIN_SHARD_BITS: u32 = 8;
const MIN_BAND_KEY_BITS: u32 = 8;
const MIN_SEEN_SUB_BITS: u32 = 4;

/// The scale cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{key} holds {value:?}, not a scale")]
    Bad { key: String, value: String },
}

/// The bits of the least power of two at or above `n` (0 for n ≤ 1).
fn ceil_log2(n: u64) -> u32 {
    n.checked_next_power_of_two()
        .map_or(64, u64::trailing_zeros)
}

impl Scale {
    /// The fixed counts the crawler had before scales: 2^17 shards, 2^16
    /// keys a band, 2^11 seen sets a politeness shard. What
    /// [`Scale::for_pages`] gives for 10M pages and more, and the scale
    /// of [`Keys::new`] until a stage settles its namespace's.
    pub const LARGE: Scale = Scale {
        seen_sub_bits: 11,
        shard_bits: 17,
        band_key_bits: 16,
    };

    /// The scale for a namespace of `pages` pages: each family with as
    /// many keys as keeps its keys at about their sized entries at that
    /// many pages, between its least bits and [`Scale::LARGE`]'s.
    pub fn for_pages(pages: u64) -> Scale {
        let bits = |per_key: u64, min: u32, max: u32| ceil_log2(pages / per_key).clamp(min, max);
        Scale {
            seen_sub_bits: bits(SEEN_MEMBERS, MIN_SEEN_SUB_BITS, Self::LARGE.seen_sub_bits),
            shard_bits: bits(SHARD_ENTRIES, MIN_SHARD_BITS, Self::LARGE.shard_bits),
            band_key_bits: bits(BAND_MEMBERS, MIN_BAND_KEY_BITS, Self::LARGE.band_key_bits),
        }
    }

    /// The fingerprints this scale keeps its `fpr` and `lsh` shards
    /// compact for: 128 a shard (Redis's default listpack limit), past
    /// which a shard may become a hash table.
    pub fn compact_fingerprints(&self) -> i64 {
        128i64 << self.shard_bits.min(40)
    }

    /// As stored in `<ns>:scale`.
    pub fn encode(&self) -> String {
        format!(
            "seen_sub_bits={} shard_bits={} band_key_bits={}",
            self.seen_sub_bits, self.shard_bits, self.band_key_bits
        )
    }

    /// The scale in `s` ([`Scale::encode`]); `None` for anything else
    /// (a field missing, repeated, unknown or out of range).
    pub fn parse(s: &str) -> Option<Scale> {
        let (mut seen, mut shard, mut band) = (None, None, None);
        for part in s.split_whitespace() {
            let (name, value) = part.split_once('=')?;
            let value: u32 = value.parse().ok()?;
            let slot = match name {
                "seen_sub_bits" => &mut seen,
                "shard_bits" => &mut shard,
                "band_key_bits" => &mut band,
                _ => return None,
            };
            if slot.replace(value).is_some() {
                return None;
            }
        }
        let scale = Scale {
            seen_sub_bits: seen?,
            shard_bits: shard?,
            band_key_bits: band?,
        };
        let fits = (1..=32).contains(&scale.seen_sub_bits)
            && (1..=32).contains(&scale.shard_bits)
            && (1..=32).contains(&scale.band_key_bits);
        fits.then_some(scale)
    }

    /// The scale of `keys`'s namespace: the one stored, or (when the
    /// namespace is new) the one for `expected_pages`, stored first
    /// writer wins. Returns `keys` with it.
    pub async fn settle(
        store: &Store,
        keys: Keys,
        expected_pages: u64,
    ) -> Result<Keys, ScaleError> {
        let key = keys.scale_key();
        let stored = match Self::read(store, &key).await? {
            Some(scale) => scale,
            None => {
                let old = store
                    .one(Op::Get {
                        key: keys.sequence(),
                    })
                    .await?;
                let wanted = if matches!(old, Reply::Nil) {
                    Scale::for_pages(expected_pages)
                } else {
                    Scale::LARGE
                };
                store
                    .one(Op::SetNx {
                        key: key.clone(),
                        value: wanted.encode().into_bytes(),
                    })
                    .await?;
                Self::read(store, &key)
                    .await?
                    .ok_or_else(|| ScaleError::Bad {
                        key: key.clone(),
                        value: String::new(),
                    })?
            }
        };
        if stored != Scale::for_pages(expected_pages) {
            tracing::debug!(
                namespace = keys.namespace(),
                scale = %stored.encode(),
                expected_pages,
                "the namespace keeps the scale it was created with"
            );
        }
        Ok(keys.with_scale(stored))
    }

    /// `keys` at the scale stored for its namespace, writing none (for
    /// readers: `crawler query`): [`Scale::LARGE`] where none is stored
    /// (a namespace not written yet, or written before scales).
    pub async fn load(store: &Store, keys: Keys) -> Result<Keys, ScaleError> {
        let scale = Self::read(store, &keys.scale_key())
            .await?
            .unwrap_or(Scale::LARGE);
        Ok(keys.with_scale(scale))
    }

    async fn read(store: &Store, key: &str) -> Result<Option<Scale>, ScaleError> {
        let reply = store
            .one(Op::Get {
                key: key.to_string(),
            })
            .await?;
        let Some(text) = reply.string()? else {
            return Ok(None);
        };
        Scale::parse(&text)
            .map(Some)
            .ok_or_else(|| ScaleError::Bad {
                key: key.to_string(),
                value: text.chars().take(80).collect(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_million_pages_and_more_keep_the_counts_of_before() {
        assert_eq!(Scale::for_pages(10_000_000), Scale::LARGE);
        assert_eq!(Scale::for_pages(50_000_000), Scale::LARGE);
        assert_eq!(Scale::for_pages(u64::MAX), Scale::LARGE);
    }

    #[test]
    fn fewer_pages_get_fewer_keys() {
        let small = Scale::for_pages(51_000);
        assert_eq!(
            small,
            Scale {
                seen_sub_bits: 8,
                shard_bits: 10,
                band_key_bits: 9
            }
        );
        let default = Scale::for_pages(DEFAULT_EXPECTED_PAGES);
        assert_eq!(
            (
                default.seen_sub_bits,
                default.shard_bits,
                default.band_key_bits
            ),
            (9, 11, 10)
        );
        let million = Scale::for_pages(1_000_000);
        assert_eq!(million.shard_bits, 14);
        assert_eq!(million.band_key_bits, 13);
        assert_eq!(million.seen_sub_bits, 11);
        let none = Scale::for_pages(0);
        assert_eq!(
            (none.seen_sub_bits, none.shard_bits, none.band_key_bits),
            (MIN_SEEN_SUB_BITS, MIN_SHARD_BITS, MIN_BAND_KEY_BITS)
        );
    }

    #[test]
    fn a_scale_reads_back_and_garbage_does_not() {
        for pages in [0, 1, 51_000, 1_000_000, 10_000_000] {
            let s = Scale::for_pages(pages);
            assert_eq!(Scale::parse(&s.encode()), Some(s));
        }
        for bad in [
            "",
            "seen_sub_bits=11 shard_bits=17",
            "seen_sub_bits=11 shard_bits=17 band_key_bits=16 band_key_bits=16",
            "seen_sub_bits=11 shard_bits=17 band_key_bits=x",
            "seen_sub_bits=0 shard_bits=17 band_key_bits=16",
            "seen_sub_bits=11 shard_bits=17 band_key_bits=99",
            "seen_sub_bits=11 shard_bits=17 band_key_bits=16 more=1",
        ] {
            assert_eq!(Scale::parse(bad), None, "{bad:?}");
        }
    }

    #[tokio::test]
    async fn the_first_writer_fixes_a_namespace_s_scale() {
        let store = Store::memory();
        let keys = Scale::settle(&store, Keys::new("t"), 51_000).await.unwrap();
        assert_eq!(keys.scale(), Scale::for_pages(51_000));
        let later = Scale::settle(&store, Keys::new("t"), 10_000_000)
            .await
            .unwrap();
        assert_eq!(later.scale(), Scale::for_pages(51_000), "kept");
        let other = Scale::settle(&store, Keys::new("u"), 10_000_000)
            .await
            .unwrap();
        assert_eq!(other.scale(), Scale::LARGE);
        let read = Scale::load(&store, Keys::new("t")).await.unwrap();
        assert_eq!(read.scale(), Scale::for_pages(51_000));
        let none = Scale::load(&store, Keys::new("v")).await.unwrap();
        assert_eq!(none.scale(), Scale::LARGE);
        assert!(
            matches!(
                store
                    .one(Op::Get {
                        key: none.scale_key()
                    })
                    .await
                    .unwrap(),
                Reply::Nil
            ),
            "a reader writes no scale"
        );
    }

    /// A memory store holding what `op` writes.
    async fn holding(op: Op) -> Store {
        let store = Store::memory();
        store.one(op).await.unwrap();
        store
    }

    #[tokio::test]
    async fn a_namespace_from_before_scales_keeps_the_large_counts() {
        let keys = Keys::new("old");
        let store = holding(Op::Incr {
            key: keys.sequence(),
            by: 5,
        })
        .await;
        let keys = Scale::settle(&store, keys, 1_000).await.unwrap();
        assert_eq!(keys.scale(), Scale::LARGE);
    }

    #[tokio::test]
    async fn a_scale_key_holding_garbage_is_an_error() {
        let keys = Keys::new("bad");
        let store = holding(Op::Set {
            key: keys.scale_key(),
            value: b"shard_bits=ten".to_vec(),
            expire_ms: None,
        })
        .await;
        let err = Scale::settle(&store, keys, 1_000).await.unwrap_err();
        assert!(err.to_string().contains("not a scale"), "{err}");
    }
}
