//! The second signal: a one-permutation MinHash of a body's shingles, an
//! estimate of the Jaccard similarity of two bodies independent of the
//! SimHash, and the LSH band values that find bodies the SimHash bands
//! cannot reach.
//!
//! ## Why a second signal (measured)
//!
//! SimHash turns a similarity into a Hamming distance with a wide spread:
//! the light edits of the near-duplicate evaluation (3% of the words
//! replaced, a paragraph dropped, a related-links box added) share 60–80%
//! of their shingles with their original, but land anywhere from 0 to more
//! than 11 bits away; and distinct articles that share a vocabulary land 3–6
//! bits apart (`cargo bench -p evaluation --bench neardup`). Widening the
//! SimHash radius trades one for the other. The MinHash does not: a pair is
//! a near-duplicate only when its estimated Jaccard similarity agrees
//! ([`crate::decide`]), and bodies too far apart in SimHash are still found
//! through [`BANDS`] LSH keys of the MinHash.
//!
//! ## What it is
//!
//! Every shingle the SimHash counts (the same tokens, so CJK and Thai by
//! characters, and the same lines: short template lines are left out)
//! falls in one of [`BUCKETS`] buckets by its top bits, and each bucket
//! keeps the smallest of its shingles' low 32 bits (one-permutation
//! hashing). Empty buckets borrow from the next filled one (rotation
//! densification), so two bodies compare bucket by bucket.
//!
//! - **Signature** (stored with each fingerprint's record, [`SIGNATURE_BYTES`]
//!   bytes): the low 8 bits of every bucket. Two signatures agree in a
//!   bucket with probability J + (1 − J)/256; [`jaccard`] inverts that.
//! - **LSH values** ([`BANDS`]): band b is the hash of buckets
//!   `ROWS·b .. ROWS·b + ROWS`. Two bodies share band b with probability
//!   about J^ROWS, so a pair with J = 0.6 shares one of the bands with
//!   probability 1 − (1 − 0.6^ROWS)^BANDS: 0.996 with 6 bands of one
//!   bucket. One bucket per band finds more than 8 bands of 2 (0.97 at
//!   J = 0.6, 0.53 against 0.88 at J = 0.3) for 6 claims per document
//!   instead of 8; the candidates it finds in excess are dropped by the
//!   Jaccard estimate ([`crate::decide`]). Measured with `cargo bench -p
//!   evaluation --bench neardup` (tuned | held aside): 8 × 2 recall
//!   0.973 | 0.966, 6 × 1 0.977 | 0.971, 5 × 1 0.974 | 0.969, 4 × 1
//!   0.967 | 0.959; precision the same for all (0.998 | 0.993).

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Buckets of the one-permutation MinHash.
pub const BUCKETS: usize = 32;
/// Bytes of a stored signature: one per bucket.
pub const SIGNATURE_BYTES: usize = BUCKETS;
/// LSH bands looked up per document.
pub const BANDS: usize = 6;
/// Buckets per LSH band.
pub const ROWS: usize = 1;

const EMPTY: u32 = u32::MAX;

/// The signature of a body: the low byte of each bucket's minimum.
pub type Signature = [u8; SIGNATURE_BYTES];

/// A body's MinHash: the smallest value per bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinHash {
    mins: [u32; BUCKETS],
    /// Shingles added.
    pub count: usize,
}

impl Default for MinHash {
    fn default() -> Self {
        MinHash {
            mins: [EMPTY; BUCKETS],
            count: 0,
        }
    }
}

impl MinHash {
    /// Adds one shingle's (well-mixed) 64-bit hash.
    #[inline(always)]
    pub fn add(&mut self, h: u64) {
        let bucket = (h >> (64 - BUCKETS.trailing_zeros())) as usize;
        let v = (h as u32).min(EMPTY - 1);
        let m = &mut self.mins[bucket];
        if v < *m {
            *m = v;
        }
        self.count += 1;
    }

    /// Buckets holding a shingle of their own (before densification).
    pub fn filled(&self) -> usize {
        self.mins.iter().filter(|&&m| m != EMPTY).count()
    }

    /// The buckets, empty ones filled from the next filled bucket (with
    /// the distance mixed in); `None` when no shingle was added.
    pub fn dense(&self) -> Option<[u32; BUCKETS]> {
        if self.count == 0 {
            return None;
        }
        let mut out = self.mins;
        for (i, slot) in out.iter_mut().enumerate() {
            if *slot != EMPTY {
                continue;
            }
            for step in 1..BUCKETS {
                let v = self.mins[(i + step) % BUCKETS];
                if v != EMPTY {
                    *slot = (v ^ (step as u32).wrapping_mul(0x9E37_79B9)).min(EMPTY - 1);
                    break;
                }
            }
        }
        Some(out)
    }

    /// The stored signature ([`SIGNATURE_BYTES`] bytes).
    pub fn signature(&self) -> Option<Signature> {
        let dense = self.dense()?;
        Some(std::array::from_fn(|i| dense[i] as u8))
    }

    /// The [`BANDS`] LSH values.
    pub fn bands(&self) -> Option<[u64; BANDS]> {
        let dense = self.dense()?;
        Some(std::array::from_fn(|b| {
            let mut bytes = [0u8; 4 * ROWS];
            for r in 0..ROWS {
                bytes[4 * r..4 * r + 4].copy_from_slice(&dense[ROWS * b + r].to_le_bytes());
            }
            xxh3_64_with_seed(&bytes, b as u64)
        }))
    }
}

/// The estimated Jaccard similarity of two bodies' shingle sets from their
/// signatures (the share of equal buckets, corrected for equal bytes by
/// chance; 0 when fewer agree than chance).
pub fn jaccard(a: &Signature, b: &Signature) -> f64 {
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / BUCKETS as f64;
    ((equal - 1.0 / 256.0) / (1.0 - 1.0 / 256.0)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(x: u64) -> u64 {
        let mut h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 31;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 29)
    }

    fn of(items: impl Iterator<Item = u64>) -> MinHash {
        let mut m = MinHash::default();
        for i in items {
            m.add(mix(i));
        }
        m
    }

    #[test]
    fn estimates_follow_the_true_similarity() {
        // Sets of 400 with overlaps giving J = 1, 0.6, 0.33, 0.
        for (shift, truth) in [(0u64, 1.0), (100, 0.6), (200, 1.0 / 3.0), (400, 0.0)] {
            let mut total = 0.0;
            for trial in 0..50u64 {
                let base = trial * 10_000;
                let a = of(base..base + 400).signature().unwrap();
                let b = of(base + shift..base + shift + 400).signature().unwrap();
                total += jaccard(&a, &b);
            }
            let mean = total / 50.0;
            assert!(
                (mean - truth).abs() < 0.06,
                "J {truth}: mean estimate {mean}"
            );
        }
    }

    #[test]
    fn equal_sets_share_every_band_and_empty_sets_have_none() {
        let a = of(0..50);
        let b = of(0..50);
        assert_eq!(a.bands(), b.bands());
        assert_eq!(
            jaccard(&a.signature().unwrap(), &b.signature().unwrap()),
            1.0
        );
        assert_eq!(MinHash::default().signature(), None);
        assert_eq!(MinHash::default().bands(), None);
        // A few shingles still give a full signature.
        assert!(of(0..3).signature().is_some());
    }
}
