//! Floors of the charset vote on corpus pages whose HTTP header and meta
//! tell the same lie ([`evaluation::lying`]), single-byte encodings, tuned
//! and held-aside parts apart, and on the same pages told the truth. The
//! floors sit a little under the level reached (see `cargo bench -p
//! evaluation --bench charset`), so a change that makes the vote worse
//! fails here. Fails when the corpus is missing.

use charset::{vote, Signals};
use evaluation::charset::decodes_right;
use evaluation::lying;

/// Same-lie single-byte pages decoded right, tuned part: 4109/4114 = 0.999 reached.
const TUNED_SINGLE_BYTE_FLOOR: f64 = 0.99;
/// The held-aside part: 2012/2017 = 0.998 reached (the target is
/// 0.995; its aggregates were seen once, its pages never).
const HELD_SINGLE_BYTE_FLOOR: f64 = 0.995;
/// Single-byte pages told the truth: all of them, in both parts.
const HONEST_SINGLE_BYTE_FLOOR: f64 = 1.0;

#[test]
fn same_lie_single_byte_pages_are_decoded_right() {
    let files =
        lying::corpus_files().unwrap_or_else(|e| panic!("{e}: the floors cannot be checked"));
    // [tuned, held] (right, pages), lies then honest.
    let mut lied = [(0usize, 0usize); 2];
    let mut honest = [(0usize, 0usize); 2];
    lying::each_page(&files, |built| {
        if !built.file.truth.is_single_byte() {
            return;
        }
        let decision = vote(&built.page, &Signals::from_header(Some(built.header)));
        let right = decodes_right(&built.page, decision.encoding(), built.file.truth);
        let cell = if built.lie.is_some() {
            &mut lied[usize::from(built.file.held)]
        } else {
            &mut honest[usize::from(built.file.held)]
        };
        cell.0 += usize::from(right);
        cell.1 += 1;
    });
    let share = |(right, total): (usize, usize)| {
        assert!(total > 0, "no pages in a part: the floor checks nothing");
        right as f64 / total as f64
    };
    println!(
        "same lie, single-byte: tuned {:?} held {:?}; honest {honest:?}",
        lied[0], lied[1]
    );
    assert!(
        share(lied[0]) >= TUNED_SINGLE_BYTE_FLOOR,
        "tuned {:?}",
        lied[0]
    );
    assert!(
        share(lied[1]) >= HELD_SINGLE_BYTE_FLOOR,
        "held aside {:?}",
        lied[1]
    );
    for part in honest {
        assert!(share(part) >= HONEST_SINGLE_BYTE_FLOOR, "honest {part:?}");
    }
}
