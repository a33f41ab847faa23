//! Which document of a near-duplicate cluster is the original.
//!
//! Every stored fingerprint gets a sequence number *after* it is inserted in
//! the band tables and *before* its own lookup (see [`crate::table`] for
//! the rounds). The rule: among the document itself and every match it sees
//! within distance k, the one with the lowest sequence number is the
//! original; a match whose sequence number is not recorded yet is waited
//! for a little ([`crate::table::OWNER_WAITS`]) and then counts as later
//! than everything (its worker died between numbering and recording).
//!
//! Why two workers can never both store near-duplicates X and Y as
//! originals: if X's lookup did not see Y, Y was inserted after X's lookup,
//! so Y's number (taken after Y's insert) is higher than X's (taken and
//! recorded before X's lookup), and Y's lookup sees X recorded. So at least
//! one sees the other, and whoever sees a match with a lower number is the
//! duplicate. When both see each other, the one with the higher number,
//! say Y, may find X not recorded yet (X numbered first, then stalled
//! before its record): Y waits for X's record rather than count X as
//! later, since X's own lookup will see Y recorded with the higher number
//! and keep X as the original. No cross-key atomicity is needed, so it works on Redis
//! Cluster.
//!
//! A fingerprint is recorded once, by the first document that has it: a
//! later document with the very same fingerprint finds that record as its
//! own and points at its owner (or is the owner again, on a redelivery).
//!
//! ## Two signals must agree ([`near_duplicates`])
//!
//! A match counts only when the MinHash signatures ([`crate::minhash`])
//! of the two bodies agree as well: within the SimHash radius, an
//! estimated Jaccard similarity of at least [`CONFIRM_WITHIN_RADIUS`];
//! beyond it (a match found through the MinHash LSH keys), at least
//! [`CONFIRM_BEYOND_RADIUS`], and the SimHash distance must stay where
//! unrelated fingerprints almost never land ([`MAX_PAIR_DISTANCE`]). The rule is a function of the pair alone, so
//! both documents of a pair agree on it whichever looks up first. Matches
//! found through the LSH keys only are seen by the later document alone:
//! [`crate::table`] numbers the owner of an LSH key before any document
//! that finds it there, and waits for its record.

use crate::minhash::{jaccard, words_jaccard, Signature};
use crate::reach::Probe;
use crate::simhash::distance;

/// The estimated Jaccard similarity of the shingles that makes a pair
/// near-duplicates on its own, at any distance within reach (0 included).
///
/// Measured on the tuned part of the real sites (`cargo bench -p
/// evaluation --bench neardup_sites`, crawler run): with 0.3 for every
/// pair, the verdicts between pages of exact word 3-shingle Jaccard under
/// 0.5 had estimates up to 0.9 (0.31–0.65 for most), those at 0.8 or more
/// 0.62 and up; and on the tuned part of `--bench neardup` the heavier
/// edits (a tenth of the words replaced: true 4-shingle Jaccard 0.3–0.5)
/// need about 0.3: at 0.5 for every pair their recall fell from 0.954 to
/// 0.75. So an estimate alone must reach 0.6, and below it the
/// vocabularies must agree ([`CONFIRM_WORDS`]).
pub const CONFIRM_ALONE: f64 = 0.6;

/// The estimate of the shingles that makes a pair near-duplicates when
/// their vocabularies agree too ([`CONFIRM_WORDS`]): a text whose words
/// were reworded or reordered keeps its words but loses many shingles.
pub const CONFIRM_WITH_WORDS: f64 = 0.3;

/// The estimated Jaccard similarity of the two bodies' sets of words
/// that lets [`CONFIRM_WITH_WORDS`] apply (32 buckets: a standard
/// deviation of about 0.08). Tuned parts (real sites precision | neardup
/// heavier edits recall): 0.8 gave 0.9939 | 0.871, 0.7 – | 0.951,
/// 0.65 0.9939 | 0.958, 0.6 0.9890 | 0.959.
pub const CONFIRM_WORDS: f64 = 0.65;

/// The farthest SimHash distance at which the MinHash estimate alone (a
/// pair found through the LSH keys, beyond the radius) can make a pair:
/// two unrelated fingerprints land within 16 of each other once in 26,000
/// pairs (P(Binomial(64, ½) ≤ 16) = 3.9·10⁻⁵, within 17: 1.1·10⁻⁴), so
/// the SimHash still agrees that the bodies are alike. Without it, short
/// distinct bodies sharing one template's boilerplate (a cookie notice)
/// were matched at distance 17–25 (`cargo bench -p evaluation --bench
/// neardup`: tuned precision 0.998 → 0.9995, recall 0.977 → 0.974;
/// held aside 0.993 → 0.997 and 0.971 → 0.972).
pub const MAX_PAIR_DISTANCE: u32 = 16;

/// The shingle estimate a pair at SimHash distance `d` whose shingle
/// estimate is `j` needed: [`CONFIRM_ALONE`] when `j` reaches it, else
/// [`CONFIRM_WITH_WORDS`] (with the vocabulary check); `None` beyond
/// [`MAX_PAIR_DISTANCE`], where no estimate makes a pair. `crawler query
/// --why` shows it beside the estimate.
pub fn threshold(d: u32, j: f64) -> Option<f64> {
    (d <= MAX_PAIR_DISTANCE).then_some(if j >= CONFIRM_ALONE {
        CONFIRM_ALONE
    } else {
        CONFIRM_WITH_WORDS
    })
}

/// Whether two bodies are near-duplicates: at SimHash distance `d`, with
/// the smaller of their radii `radius`, and their signatures when both
/// have one (without, the SimHash radius alone decides, as records
/// written before the second signal).
pub fn near_duplicates(d: u32, radius: u32, a: Option<&Signature>, b: Option<&Signature>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let j = jaccard(a, b);
            threshold(d, j).is_some_and(|t| {
                j >= t && (t >= CONFIRM_ALONE || words_jaccard(a, b) >= CONFIRM_WORDS)
            })
        }
        _ => d <= radius,
    }
}

/// A stored fingerprint within distance k, seen by a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub fingerprint: u64,
    /// Its sequence number, `None` while its owner has not recorded one.
    pub seq: Option<i64>,
    /// The search radius its owner recorded with it.
    pub radius: u32,
    /// The MinHash signature its owner recorded with it.
    pub signature: Option<Signature>,
}

/// The earliest document among a lookup's matches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Earliest {
    /// Its sequence number: the key to its URL.
    pub seq: i64,
    /// Its fingerprint's distance to the document's.
    pub distance: u32,
    /// The estimated Jaccard similarity of the two bodies, when both have
    /// a signature.
    pub jaccard: Option<f64>,
    /// The SimHash radius of the pair (the smaller of the two).
    pub radius: u32,
}

/// The verdict for one document.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Original,
    Duplicate {
        /// The original's URL hash (`pipeline::keys::url_hash`).
        of: u64,
        distance: u32,
        /// The second signal's estimate, when both bodies have one.
        jaccard: Option<f64>,
        /// The SimHash radius of the pair.
        radius: u32,
    },
}

impl Verdict {
    /// The original's URL hash, for a duplicate.
    pub fn original(&self) -> Option<u64> {
        match self {
            Verdict::Original => None,
            Verdict::Duplicate { of, .. } => Some(*of),
        }
    }
}

/// For a document looked up by `probe`, starting from `own`: the number of
/// its fingerprint's record (with the second signal's estimate when the
/// record is another document's, [`crate::table::own_record`]) or its own,
/// the earliest of itself and every recorded match within both radii. The
/// document is the original when that is its own record and the record is
/// its own (the caller checks the record's URL).
pub fn earliest(probe: &Probe, own: (i64, Option<f64>), seen: &[Seen]) -> Earliest {
    let mut best = Earliest {
        seq: own.0,
        distance: 0,
        jaccard: own.1,
        radius: probe.radius,
    };
    for s in seen {
        let Some(seq) = s.seq else { continue };
        let d = distance(probe.fingerprint, s.fingerprint);
        let radius = probe.radius.min(s.radius);
        if seq < best.seq
            && near_duplicates(d, radius, probe.signature.as_ref(), s.signature.as_ref())
        {
            let jaccard = probe
                .signature
                .as_ref()
                .zip(s.signature.as_ref())
                .map(|(a, b)| jaccard(a, b));
            best = Earliest {
                seq,
                distance: d,
                jaccard,
                radius,
            };
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(fp: u64, seq: Option<i64>) -> Seen {
        Seen {
            fingerprint: fp,
            seq,
            radius: 3,
            signature: None,
        }
    }

    /// `earliest` for an exact lookup within 3.
    fn earliest_k3(fp: u64, own_seq: i64, seen: &[Seen]) -> Earliest {
        let probe = Probe::exact(&crate::bands::Layout::default(), fp);
        earliest(&probe, (own_seq, None), seen)
    }

    #[test]
    fn lowest_sequence_within_k_wins() {
        let fp = 0b1111u64;
        let e = earliest_k3(fp, 5, &[seen(0b0111, Some(3))]);
        assert_eq!(
            e,
            Earliest {
                seq: 3,
                distance: 1,
                jaccard: None,
                radius: 3
            }
        );
        // Later matches do not make me a duplicate.
        let e = earliest_k3(fp, 5, &[seen(0b0111, Some(9))]);
        assert_eq!(
            e,
            Earliest {
                seq: 5,
                distance: 0,
                jaccard: None,
                radius: 3
            }
        );
        // Exactly k counts; k+1 does not.
        let e = earliest_k3(0, 5, &[seen(0b111, Some(1))]);
        assert_eq!(
            e,
            Earliest {
                seq: 1,
                distance: 3,
                jaccard: None,
                radius: 3
            }
        );
        let e = earliest_k3(0, 5, &[seen(0b1111, Some(1))]);
        assert_eq!(e.seq, 5);
        // Unrecorded sequence numbers count as later.
        let e = earliest_k3(fp, 5, &[seen(0b0111, None)]);
        assert_eq!(e.seq, 5);
        // The lowest of several.
        let e = earliest_k3(
            0,
            50,
            &[seen(1, Some(40)), seen(3, Some(7)), seen(7, Some(9))],
        );
        assert_eq!(
            e,
            Earliest {
                seq: 7,
                distance: 2,
                jaccard: None,
                radius: 3
            }
        );
    }

    #[test]
    fn short_bodies_match_within_the_smaller_radius() {
        let short = Probe {
            radius: 7,
            ..Probe::exact(&crate::bands::Layout::default(), 0)
        };
        let far = |radius| Seen {
            fingerprint: 0b11_1111,
            seq: Some(1),
            radius,
            signature: None,
        };
        // Distance 6: a short match counts, a long one (radius 3) does not.
        assert_eq!(earliest(&short, (5, None), &[far(7)]).seq, 1);
        assert_eq!(earliest(&short, (5, None), &[far(6)]).seq, 1);
        assert_eq!(earliest(&short, (5, None), &[far(5)]).seq, 5);
        assert_eq!(earliest(&short, (5, None), &[far(3)]).seq, 5);
        // A long document does not reach a short one beyond its own 3.
        assert_eq!(earliest_k3(0, 5, &[far(7)]).seq, 5);
    }

    #[test]
    fn two_concurrent_near_duplicates_never_both_win() {
        // Every interleaving of X and Y (insert, number, record, look up):
        // whichever lookup sees the other recorded with a lower number loses.
        let (fx, fy) = (0u64, 0b101u64);
        for x_seq in 1..4 {
            for y_seq in 1..4 {
                if x_seq == y_seq {
                    continue;
                }
                // The later-numbered one was inserted after the earlier
                // one's record, so it sees the earlier one recorded.
                let (later_fp, later_seq, earlier_fp, earlier_seq) = if x_seq > y_seq {
                    (fx, x_seq, fy, y_seq)
                } else {
                    (fy, y_seq, fx, x_seq)
                };
                let later =
                    earliest_k3(later_fp, later_seq, &[seen(earlier_fp, Some(earlier_seq))]);
                assert_eq!(later.seq, earlier_seq);
                // The earlier one sees the later one unrecorded or higher.
                for other in [None, Some(later_seq)] {
                    let e = earliest_k3(earlier_fp, earlier_seq, &[seen(later_fp, other)]);
                    assert_eq!(e.seq, earlier_seq);
                }
            }
        }
    }

    #[test]
    fn both_signals_must_agree() {
        let a: Signature = [7; 32];
        let mut half = a;
        for b in half.iter_mut().take(16) {
            *b = 9;
        }
        let other: Signature = std::array::from_fn(|i| i as u8 + 100);
        // Within the radius, a similar body counts and a dissimilar one not.
        assert!(near_duplicates(2, 3, Some(&a), Some(&half)));
        assert!(!near_duplicates(2, 3, Some(&a), Some(&other)));
        // Beyond it, only a body similar enough.
        assert!(near_duplicates(12, 3, Some(&a), Some(&half)));
        assert!(!near_duplicates(12, 3, Some(&a), Some(&other)));
        // But never where unrelated fingerprints land: the SimHash must agree too.
        assert!(near_duplicates(MAX_PAIR_DISTANCE, 3, Some(&a), Some(&a)));
        assert!(!near_duplicates(
            MAX_PAIR_DISTANCE + 1,
            3,
            Some(&a),
            Some(&a)
        ));
        assert!(!near_duplicates(25, 3, Some(&a), Some(&a)));
        // Without signatures, the radius alone.
        assert!(near_duplicates(3, 3, None, Some(&a)));
        assert!(!near_duplicates(4, 3, None, None));
    }

    #[test]
    fn a_middling_estimate_needs_the_vocabulary_to_agree() {
        let a: Signature = [7; 32];
        // 40 of the 96 shingle buckets differ: an estimate of 0.44, under
        // CONFIRM_ALONE, over CONFIRM_WITH_WORDS.
        let mut reworded = a;
        for b in reworded.iter_mut().take(20) {
            *b = 9;
        }
        let j = jaccard(&a, &reworded);
        assert!((CONFIRM_WITH_WORDS..CONFIRM_ALONE).contains(&j), "{j}");
        // The same words: a near-duplicate, at distance 0 as further.
        assert!(near_duplicates(0, 3, Some(&a), Some(&reworded)));
        assert!(near_duplicates(12, 3, Some(&a), Some(&reworded)));
        assert_eq!(threshold(12, j), Some(CONFIRM_WITH_WORDS));
        // Other words (a sibling page of one template): not one.
        let mut sibling = reworded;
        for b in sibling.iter_mut().skip(24) {
            *b = !*b;
        }
        assert!(words_jaccard(&a, &sibling) < CONFIRM_WORDS);
        assert!(!near_duplicates(0, 3, Some(&a), Some(&sibling)));
        // A high estimate needs nothing more; nothing beyond 16 bits.
        assert!(near_duplicates(5, 3, Some(&a), Some(&a)));
        assert_eq!(threshold(5, 1.0), Some(CONFIRM_ALONE));
        assert_eq!(threshold(MAX_PAIR_DISTANCE + 1, 1.0), None);
    }
}
