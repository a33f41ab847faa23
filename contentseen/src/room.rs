//! How much room Redis gives a band table, and when to give back what an
//! `APPEND` took too much (pure).
//!
//! A band table grows by one `APPEND` of a member (6 bytes) at a time.
//! Redis 7 grows a string *greedily*: when an `APPEND` does not fit, it
//! reallocates to twice the new length. Every table of a layout holds about
//! the same number of members, so they all double at about the same
//! moment: just past a doubling, every table holds twice its bytes (at 10M
//! fingerprints, ~150 members a table: 2,136 bytes of Redis memory for a
//! 894-byte table, 47 B per fingerprint over the 4 bands).
//!
//! The cure: right after an `APPEND` that outgrew the room of an exact-size
//! string, rewrite the table at its exact size ([`crate::table`]'s
//! compaction: `COPY` and `RENAME` back in one script, so no member added
//! meanwhile is lost). A string written exactly has the room of its
//! allocator size class ([`exact_room`]); the next `APPEND`s fill that room
//! without moving it, and the first one that does not fit is seen from its
//! reply alone ([`outgrew`]): the new length is past the room of the length
//! before it. So the writer that caused the doubling undoes it, with no read
//! and no state kept anywhere. A writer that dies before it compacts leaves
//! one table with slack until the next size class is crossed, when the
//! next writer compacts it.
//!
//! The allocator is jemalloc, as Redis is built by default (its `INFO
//! memory` says `mem_allocator:jemalloc-…`): request sizes round up to
//! size classes, four per doubling ([`allocation`]). With another allocator
//! the rule still keeps tables correct; it only compacts at other moments.
//!
//! Tables shorter than [`COMPACT_FROM`] are never compacted: the size
//! classes are close together there, a compaction would come every few
//! `APPEND`s, and a short table's bytes are a small part of its key's
//! memory anyway.

/// Tables from this many bytes on are compacted when they outgrow their
/// room: at 512 bytes a compaction follows about one `APPEND` in 15 (the
/// size classes are 128 bytes apart), at 1 KB one in 30.
pub const COMPACT_FROM: usize = 512;

/// The bytes jemalloc hands out for a request of `n` bytes (its size
/// classes with a 16-byte quantum: 8, 16, 32, 48, … 128, then four classes
/// per doubling: 160, 192, 224, 256, 320, …).
pub fn allocation(n: usize) -> usize {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return n.div_ceil(16) * 16;
    }
    // 2^k < n ≤ 2^(k+1): classes 2^(k-2) apart.
    let k = usize::BITS - 1 - (n - 1).leading_zeros();
    let spacing = 1usize << (k - 2);
    n.div_ceil(spacing) * spacing
}

/// The header of a Redis string (sds) of `len` bytes, as a string written
/// at its exact size gets it: the smallest type that holds the length.
fn header(len: usize) -> usize {
    match len {
        0..=255 => 3,
        256..=65_535 => 5,
        65_536..=0xFFFF_FFFF => 9,
        _ => 17,
    }
}

/// The bytes a string written at its exact size `len` can hold before an
/// `APPEND` must move it: its allocation less its header and final NUL.
pub fn exact_room(len: usize) -> usize {
    let h = header(len);
    allocation(h + len + 1) - h - 1
}

/// Whether a table that an `APPEND` of `added` bytes left `len` bytes long
/// is to be compacted: it outgrew the room of an exactly written table (so
/// Redis doubled it), or it just reached [`COMPACT_FROM`] (grown greedily
/// until then, it is written exactly once, so that from there on every
/// doubling is one of the first kind).
pub fn outgrew(len: usize, added: usize) -> bool {
    if len < COMPACT_FROM || added > len {
        return false;
    }
    len - added < COMPACT_FROM || len > exact_room(len - added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jemalloc_size_classes() {
        let classes: Vec<usize> = [1, 9, 17, 100, 128, 129, 161, 256, 257, 513, 922, 1024, 1025]
            .iter()
            .map(|&n| allocation(n))
            .collect();
        assert_eq!(
            classes,
            vec![8, 16, 32, 112, 128, 160, 192, 256, 320, 640, 1024, 1024, 1280]
        );
        // Never less than asked, at most a quarter more past 128 bytes.
        for n in 1..100_000 {
            let a = allocation(n);
            assert!(a >= n && (n <= 128 || a * 4 <= n * 5), "{n} → {a}");
        }
    }

    #[test]
    fn an_exact_table_has_the_room_of_its_class() {
        // 894 bytes: 5 + 894 + 1 = 900 → the 1,024-byte class.
        assert_eq!(exact_room(894), 1018);
        assert_eq!(exact_room(1018), 1018);
        assert_eq!(exact_room(1019), 1274);
        assert_eq!(exact_room(200), 220);
    }

    #[test]
    fn only_the_append_that_leaves_the_room_outgrows_it() {
        // From 1,014 bytes (room 1,018) one member of 6 leaves it.
        assert!(!outgrew(1014, 6));
        assert!(outgrew(1020, 6));
        assert!(!outgrew(1026, 6));
        // Every crossing of a class is seen once, whatever the start.
        let crossings = (COMPACT_FROM..100_000)
            .step_by(6)
            .filter(|&len| outgrew(len, 6))
            .count();
        let classes = (COMPACT_FROM..100_000)
            .map(exact_room)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        assert!(
            crossings + 1 >= classes && crossings <= classes,
            "{crossings} {classes}"
        );
        // Short tables are left alone; one that reaches 512 bytes is
        // compacted once, whatever its room.
        assert!(!outgrew(COMPACT_FROM - 1, 6) && !outgrew(300, 6));
        assert!(!outgrew(3, 6));
        assert!(outgrew(516, 6) && !outgrew(522, 6));
    }
}
