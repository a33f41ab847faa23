//! Which document of a near-duplicate cluster is the original.
//!
//! Every stored fingerprint gets a sequence number *after* it is inserted in
//! the band tables and *before* its own lookup. The rule: among the document
//! itself and every match it sees within distance k, the one with the lowest
//! sequence number is the original; a match whose sequence number is not
//! recorded yet counts as later than everything.
//!
//! Why two workers can never both store near-duplicates X and Y as
//! originals: if X's lookup did not see Y, Y was inserted after X's lookup,
//! so Y's number (taken after Y's insert) is higher than X's (taken before
//! X's lookup), and Y's lookup sees X. So at least one sees the other, and
//! whoever sees a match with a lower number is the duplicate. No cross-key
//! atomicity is needed, so it works on Redis Cluster.

use crate::simhash::distance;

/// A stored fingerprint seen by a lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub fingerprint: u64,
    /// Its sequence number, `None` while its owner has not recorded one.
    pub seq: Option<i64>,
    /// The URL of the document that owns it.
    pub url: Option<String>,
}

/// The verdict for one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Original,
    Duplicate { of: String, distance: u32 },
}

/// Decides for a document with fingerprint `fp` owned by (`own_seq`,
/// `own_url`) (the owner is another document when an earlier one had the
/// very same fingerprint), given every stored fingerprint its lookup saw.
pub fn verdict(
    fp: u64,
    own_seq: i64,
    own_url: &str,
    me: &str,
    seen: &[Seen],
    max_distance: u32,
) -> Verdict {
    let mut best: (i64, &str, u32) = (own_seq, own_url, 0);
    for s in seen {
        let (Some(seq), Some(url)) = (s.seq, s.url.as_deref()) else {
            continue;
        };
        let d = distance(fp, s.fingerprint);
        if d > max_distance || url == me {
            continue;
        }
        if (seq, url) < (best.0, best.1) {
            best = (seq, url, d);
        }
    }
    if best.1 == me {
        Verdict::Original
    } else {
        Verdict::Duplicate {
            of: best.1.to_string(),
            distance: best.2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(fp: u64, seq: Option<i64>, url: &str) -> Seen {
        Seen {
            fingerprint: fp,
            seq,
            url: Some(url.into()),
        }
    }

    #[test]
    fn lowest_sequence_within_k_wins() {
        let fp = 0b1111u64;
        let v = verdict(fp, 5, "me", "me", &[seen(0b0111, Some(3), "a")], 3);
        assert_eq!(
            v,
            Verdict::Duplicate {
                of: "a".into(),
                distance: 1
            }
        );
        // Later matches do not make me a duplicate.
        let v = verdict(fp, 5, "me", "me", &[seen(0b0111, Some(9), "b")], 3);
        assert_eq!(v, Verdict::Original);
        // Exactly k counts; k+1 does not.
        let v = verdict(0, 5, "me", "me", &[seen(0b111, Some(1), "c")], 3);
        assert_eq!(
            v,
            Verdict::Duplicate {
                of: "c".into(),
                distance: 3
            }
        );
        let v = verdict(0, 5, "me", "me", &[seen(0b1111, Some(1), "d")], 3);
        assert_eq!(v, Verdict::Original);
        // Unrecorded sequence numbers count as later.
        let v = verdict(fp, 5, "me", "me", &[seen(fp, None, "e")], 3);
        assert_eq!(v, Verdict::Original);
    }

    #[test]
    fn an_earlier_document_with_my_exact_fingerprint_owns_it() {
        let v = verdict(7, 2, "first", "me", &[seen(7, Some(2), "first")], 3);
        assert_eq!(
            v,
            Verdict::Duplicate {
                of: "first".into(),
                distance: 0
            }
        );
    }
}
