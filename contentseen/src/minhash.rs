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
//! Two parts, in one signature. Every run of three tokens of the whole body ([`crate::simhash::minhash_of`]:
//! the SimHash's tokens, so CJK and Thai by characters, but numbers and
//! short lines included, which the SimHash leaves out) falls in one of
//! [`SHINGLE_BUCKETS`] buckets by its top bits, and each bucket keeps the
//! smallest of its shingles' low 32 bits (one-permutation hashing); every
//! word (token) falls in one of [`WORD_BUCKETS`] more in the same way: the
//! vocabulary check of [`crate::decide`]. Empty buckets borrow from the
//! next filled one of their part (rotation densification), so two bodies
//! compare bucket by bucket.
//!
//! - **Signature** (stored with each fingerprint's record, [`SIGNATURE_BYTES`]
//!   bytes): the low [`SIGNATURE_BITS`] (2) bits of every bucket, four
//!   buckets a byte (b-bit minwise hashing, Li and König 2010). Two
//!   signatures agree in a bucket with probability J + (1 − J)/4;
//!   [`jaccard`] (the shingles) and [`words_jaccard`] invert that. In the
//!   same 32 bytes, 96 shingle buckets of 2 bits estimate J with a standard
//!   deviation of 0.065 at J = 0.5 and 0.048 at 0.8, where 32 buckets of 8
//!   bits (the signature before issue 31) gave 0.088 and 0.071: template
//!   siblings of one real site (exact word 3-shingle Jaccard 0.2–0.3) were
//!   estimated at 0.31–0.5 and passed.
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

/// Buckets of the one-permutation MinHash: [`SHINGLE_BUCKETS`] of the
/// body's shingles, then [`WORD_BUCKETS`] of its words.
pub const BUCKETS: usize = SHINGLE_BUCKETS + WORD_BUCKETS;
/// Buckets of the shingles: the Jaccard estimate ([`jaccard`]) and the LSH
/// bands.
pub const SHINGLE_BUCKETS: usize = 96;
/// Buckets of the words (each distinct token once): the vocabulary check
/// ([`words_jaccard`]).
pub const WORD_BUCKETS: usize = 32;
/// Bits of each bucket kept in a stored signature.
pub const SIGNATURE_BITS: usize = 2;
/// Bytes of a stored signature: [`SIGNATURE_BITS`] per bucket.
pub const SIGNATURE_BYTES: usize = BUCKETS * SIGNATURE_BITS / 8;
// `jaccard` compares the signatures two bits a lane.
const _: () = assert!(
    SIGNATURE_BITS == 2 && SHINGLE_BUCKETS.is_multiple_of(4) && WORD_BUCKETS.is_multiple_of(4)
);
/// LSH bands looked up per document.
pub const BANDS: usize = 6;
/// Buckets per LSH band.
pub const ROWS: usize = 1;

const EMPTY: u32 = u32::MAX;

/// The signature of a body: the low [`SIGNATURE_BITS`] bits of each
/// bucket's minimum, bucket i in bits `2·(i % 4)` of byte `i / 4`.
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
    /// Keeps `h`'s low bits in bucket `first + (h's top bits scaled to n)`.
    #[inline(always)]
    fn keep(&mut self, h: u64, first: usize, n: usize) {
        let bucket = first + (((h >> 32) * n as u64) >> 32) as usize;
        let v = (h as u32).min(EMPTY - 1);
        let m = &mut self.mins[bucket];
        if v < *m {
            *m = v;
        }
    }

    /// Adds one shingle's (well-mixed) 64-bit hash.
    #[inline(always)]
    pub fn add(&mut self, h: u64) {
        self.keep(h, 0, SHINGLE_BUCKETS);
        self.count += 1;
    }

    /// Adds one word's (well-mixed) 64-bit hash.
    #[inline(always)]
    pub fn add_word(&mut self, h: u64) {
        self.keep(h, SHINGLE_BUCKETS, WORD_BUCKETS);
    }

    /// Shingle buckets holding a shingle of their own (before
    /// densification).
    pub fn filled(&self) -> usize {
        self.mins[..SHINGLE_BUCKETS]
            .iter()
            .filter(|&&m| m != EMPTY)
            .count()
    }

    /// The buckets, empty ones filled from the next filled bucket of their
    /// part (shingles, words; with the distance mixed in); `None` when no
    /// shingle was added.
    pub fn dense(&self) -> Option<[u32; BUCKETS]> {
        if self.count == 0 {
            return None;
        }
        let mut out = self.mins;
        for (first, n) in [(0, SHINGLE_BUCKETS), (SHINGLE_BUCKETS, WORD_BUCKETS)] {
            for i in 0..n {
                if out[first + i] != EMPTY {
                    continue;
                }
                for step in 1..n {
                    let v = self.mins[first + (i + step) % n];
                    if v != EMPTY {
                        out[first + i] =
                            (v ^ (step as u32).wrapping_mul(0x9E37_79B9)).min(EMPTY - 1);
                        break;
                    }
                }
            }
        }
        Some(out)
    }

    /// The stored signature ([`SIGNATURE_BYTES`] bytes).
    pub fn signature(&self) -> Option<Signature> {
        let dense = self.dense()?;
        let per_byte = 8 / SIGNATURE_BITS;
        let mask = (1u32 << SIGNATURE_BITS) - 1;
        Some(std::array::from_fn(|byte| {
            (0..per_byte).fold(0u8, |acc, k| {
                let b = dense[byte * per_byte + k] & mask;
                acc | ((b as u8) << (k * SIGNATURE_BITS))
            })
        }))
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
/// signatures (the share of equal buckets, corrected for buckets whose
/// kept bits are equal by chance; 0 when fewer agree than chance).
pub fn jaccard(a: &Signature, b: &Signature) -> f64 {
    estimate(a, b, 0, SHINGLE_BUCKETS)
}

/// The estimated Jaccard similarity of two bodies' sets of words (each
/// distinct token once), from the word part of their signatures.
pub fn words_jaccard(a: &Signature, b: &Signature) -> f64 {
    estimate(a, b, SHINGLE_BUCKETS, WORD_BUCKETS)
}

/// The estimate of buckets `first..first + n` (whole bytes).
fn estimate(a: &Signature, b: &Signature, first: usize, n: usize) -> f64 {
    let per_byte = 8 / SIGNATURE_BITS;
    let bytes = first / per_byte..(first + n) / per_byte;
    // Per byte, a 2-bit lane of `x ^ y` is 0 where the buckets agree.
    let differing: u32 = a[bytes.clone()]
        .iter()
        .zip(&b[bytes])
        .map(|(x, y)| {
            let d = x ^ y;
            ((d | (d >> 1)) & 0x55).count_ones()
        })
        .sum();
    let equal = (n as u32 - differing) as f64 / n as f64;
    let chance = 1.0 / f64::from(1u32 << SIGNATURE_BITS);
    ((equal - chance) / (1.0 - chance)).clamp(0.0, 1.0)
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
