//! How far a document's lookup reaches: its search radius, by the length of
//! its body, and the band keys it reads.
//!
//! The [`Layout`]'s k (3 by default) is exact: every stored fingerprint
//! within k is found. That is enough for articles of 600 tokens or more,
//! where light edits move 0–3 of the 64 bits, but not for short ones: three
//! changed words in a 100-token text, or a sentence added to it, move 4–9
//! bits (the expected share of flipped bits grows as the edited share of
//! the text's feature weight, to the power ½). Short bodies therefore get a
//! larger radius ([`SHORT_TEXT_RADII`]): 5 under 600 tokens, 6 under 300,
//! 7 under 150. Two documents are near-duplicates when their distance is
//! within the **smaller** of their two radii, so the rule is symmetric (both
//! documents of a pair agree, whichever looks up first) and a long article
//! is never matched beyond k.
//!
//! Beyond k the bands no longer guarantee a shared key, and probing every
//! one-bit neighbour of every band (the exact way to reach 7 with 4 bands:
//! 68 keys) would cost 17 times the reads. A lookup with a radius above k
//! also reads the band keys of its fingerprint with one of its
//! [`PROBED_BITS`] (2) **weakest bits** flipped: the bits whose weighted
//! count is nearest to the half ([`Sketch::margins`]). An edit flips the
//! weakest bits first, so when a band differs in one bit it is most often
//! one of those: 6 keys instead of 4 (measured on the AEB near-duplicate
//! set, `cargo bench -p evaluation --bench contentseen`; the table of
//! radii and probed bits: `evaluation::clean_text`, light edits 0.888–0.913
//! found with 3 for all, 0.972–0.978 with these radii).
//!
//! The weakest bit of every band finds 0.5–1% more, for two more reads:
//! through Redis a short body's two extra reads cost about 5 µs of Redis
//! CPU (four cost about 15), and half of the AEB bodies are short.
//!
//! Distinct short articles are further apart than distinct long ones (no
//! pair of distinct AEB bodies under 150 tokens is within 9), which is why
//! the larger radius costs no precision there.
//!
//! What is guaranteed: within k, everything (pigeonhole, [`Layout`]), and
//! two workers never both keep such a pair as originals ([`crate::decide`]).
//! Between k and the radius a match is found when one band is equal or
//! differs only in one of the looking-up document's probed bits;
//! then too, concurrency can only do what some sequential order would
//! (the earlier-numbered document stays the original).

use crate::bands::Layout;
use crate::minhash::{Signature, BANDS};
use crate::simhash::{Fingerprint, Sketch};

/// The search radius by body length: (fewer tokens than, radius), shortest
/// first. Longer bodies get the layout's k.
pub const SHORT_TEXT_RADII: [(usize, u32); 3] = [(150, 7), (300, 6), (600, 5)];

/// MinHash buckets a body must fill with shingles of its own (not
/// borrowed from a neighbour) for MinHash LSH lookups beyond the SimHash
/// radius: about 30 distinct shingles (25 of the 96 shingle buckets; 20
/// of 32 before issue 31).
pub const MIN_LSH_BUCKETS: usize = 25;

/// How many of its weakest bits a short body's lookup flips, one at a
/// time (one more band key read each).
pub const PROBED_BITS: usize = 2;

/// The largest radius a record can hold ([`crate::table`] keeps it in the
/// low [`RADIUS_BITS`] bits of the sequence record).
pub const RADIUS_BITS: u32 = 6;
pub const MAX_RADIUS: u32 = (1 << RADIUS_BITS) - 1;

/// Which radius a body of a given length gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// (fewer tokens than, radius), shortest first.
    radii: Vec<(usize, u32)>,
}

impl Default for Reach {
    /// [`SHORT_TEXT_RADII`].
    fn default() -> Self {
        Reach {
            radii: SHORT_TEXT_RADII.to_vec(),
        }
    }
}

impl Reach {
    /// Radii by length: (fewer tokens than, radius), in any order.
    pub fn new(radii: &[(usize, u32)]) -> Reach {
        let mut radii = radii.to_vec();
        radii.sort_unstable();
        Reach { radii }
    }

    /// The layout's k for every body: exact lookups only.
    pub fn exact() -> Reach {
        Reach { radii: Vec::new() }
    }

    /// The radius of a body of `tokens` tokens: never below the layout's k.
    pub fn radius(&self, layout: &Layout, tokens: usize) -> u32 {
        let tier = self
            .radii
            .iter()
            .find(|&&(below, _)| tokens < below)
            .map_or(0, |&(_, r)| r);
        tier.max(layout.max_distance()).min(MAX_RADIUS)
    }

    /// The lookup of a body, or `None` for a body too short for SimHash.
    pub fn probe(&self, layout: &Layout, sketch: &Sketch) -> Option<Probe> {
        let Fingerprint::Sim(fp) = sketch.fingerprint else {
            return None;
        };
        let radius = self.radius(layout, sketch.tokens);
        let mut flips = 0u64;
        if radius > layout.max_distance() {
            let mut bits: [u8; 64] = std::array::from_fn(|b| b as u8);
            bits.sort_unstable_by_key(|&b| (sketch.margins[b as usize], b));
            for &b in &bits[..PROBED_BITS] {
                flips |= 1 << b;
            }
        }
        Some(Probe {
            fingerprint: fp,
            radius,
            flips,
            signature: sketch.minhash.signature(),
            // A body with few shingles has a signature of repeats (empty
            // buckets borrow their neighbours'): too coarse to find
            // anything beyond the SimHash radius.
            lsh: if sketch.minhash.filled() >= MIN_LSH_BUCKETS {
                sketch.minhash.bands()
            } else {
                None
            },
        })
    }
}

/// One document's lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub fingerprint: u64,
    /// Matches within this distance count (and within the match's own).
    pub radius: u32,
    /// Bits whose single flip is also looked up (in its own band).
    pub flips: u64,
    /// The body's MinHash signature (the second signal), stored with its
    /// record; `None` for a lookup without one (SimHash alone decides).
    pub signature: Option<Signature>,
    /// The MinHash LSH values the lookup also files itself under and reads
    /// ([`crate::minhash::BANDS`]); `None`: SimHash bands only.
    pub lsh: Option<[u64; BANDS]>,
}

impl Probe {
    /// An exact lookup within the layout's k, without the second signal.
    pub fn exact(layout: &Layout, fingerprint: u64) -> Probe {
        Probe {
            fingerprint,
            radius: layout.max_distance(),
            flips: 0,
            signature: None,
            lsh: None,
        }
    }

    /// Whether a stored fingerprint with radius `stored_radius`, at the
    /// distance `d` from this one, is a near-duplicate: within both radii.
    pub fn accepts(&self, d: u32, stored_radius: u32) -> bool {
        d <= self.radius.min(stored_radius)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(fp: u64, tokens: usize, weak: &[u32]) -> Sketch {
        let mut margins = [100u32; 64];
        for (i, &b) in weak.iter().enumerate() {
            margins[b as usize] = i as u32;
        }
        Sketch {
            fingerprint: Fingerprint::Sim(fp),
            tokens,
            margins,
            minhash: Default::default(),
        }
    }

    #[test]
    fn radius_grows_as_bodies_get_shorter_and_never_drops_below_k() {
        let layout = Layout::default();
        let reach = Reach::default();
        assert_eq!(reach.radius(&layout, 40), 7);
        assert_eq!(reach.radius(&layout, 149), 7);
        assert_eq!(reach.radius(&layout, 150), 6);
        assert_eq!(reach.radius(&layout, 299), 6);
        assert_eq!(reach.radius(&layout, 300), 5);
        assert_eq!(reach.radius(&layout, 599), 5);
        assert_eq!(reach.radius(&layout, 600), 3);
        assert_eq!(Reach::exact().radius(&layout, 40), 3);
        // A layout with a larger exact k keeps it.
        let wide = Layout::even(9).unwrap();
        assert_eq!(reach.radius(&wide, 40), 9);
    }

    #[test]
    fn short_bodies_also_probe_their_weakest_bits() {
        let layout = Layout::default();
        let reach = Reach::default();
        // Weakest first: 20, 3, 5, ...
        let s = sketch(0xABCD, 100, &[20, 3, 5, 40, 63]);
        let p = reach.probe(&layout, &s).unwrap();
        assert_eq!(p.radius, 7);
        assert_eq!(p.flips, (1 << 20) | (1 << 3));
        assert_eq!(layout.lookup_keys(&p).count(), 4 + PROBED_BITS);
        // Long bodies: exact lookups.
        let p = reach.probe(&layout, &sketch(0xABCD, 1000, &[3])).unwrap();
        assert_eq!(p, Probe::exact(&layout, 0xABCD));
        // Ties go to the lowest bits; no Sim fingerprint, no probe.
        let p = reach.probe(&layout, &sketch(1, 100, &[])).unwrap();
        assert_eq!(p.flips, 0b11);
        let exact = Sketch {
            fingerprint: Fingerprint::Exact(7),
            tokens: 10,
            margins: [0; 64],
            minhash: Default::default(),
        };
        assert_eq!(reach.probe(&layout, &exact), None);
    }

    #[test]
    fn a_pair_counts_within_the_smaller_radius() {
        let layout = Layout::default();
        let short = Probe {
            radius: 7,
            ..Probe::exact(&layout, 0)
        };
        assert!(short.accepts(7, 7));
        assert!(!short.accepts(8, 7));
        assert!(short.accepts(3, 3));
        assert!(!short.accepts(4, 3));
        let long = Probe::exact(&layout, 0);
        assert!(!long.accepts(5, 7));
    }
}
