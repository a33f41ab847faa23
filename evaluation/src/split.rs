//! The held-aside split shared by every evaluation: an item is held aside
//! when the hash of its id falls in the last third (about one in three).
//!
//! The rule was fixed before any result was looked at, and depends on the
//! id alone, so the same page is on the same side in every run, every bench
//! and every machine. Tuning looks at the tuned column only; the held-aside
//! column says whether what was tuned generalizes.
//!
//! Ids are `<source>:<id within the source>`, as [`crate::sources::Source::name`]
//! names the source: `AEB:<id>`, `CWCED:<id>`, `charset corpus:<label>/<file>`,
//! `charset lying:<file>`.

use crate::sources::Source;

/// Whether the item with this id is held aside (about one in three).
pub fn held_aside(id: &str) -> bool {
    xxhash_rust::xxh3::xxh3_64(id.as_bytes()) % 3 == 2
}

/// Whether the item `id` of `source` is held aside.
pub fn held_aside_in(source: Source, id: &str) -> bool {
    held_aside(&format!("{}:{id}", source.name()))
}

/// The two columns of a report, tuned first.
pub const COLUMNS: [&str; 2] = ["tuned", "held-aside"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_a_third_is_held_aside_and_the_rule_is_stable() {
        let held = (0..3000)
            .filter(|i| held_aside(&format!("AEB:{i}")))
            .count();
        assert!((900..1100).contains(&held), "{held} of 3000");
        // The rule must never change: a page once held aside stays held aside.
        assert_eq!(held_aside_in(Source::Cwced, "1"), held_aside("CWCED:1"));
    }
}
