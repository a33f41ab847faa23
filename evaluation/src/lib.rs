//! # evaluation: the sets the benchmarks and tests measure on
//!
//! Not part of any worker (`publish = false`): benches and tests use it.
//!
//! - [`rng`]: the one seeded generator of the evaluations (PCG).
//! - [`sources`]: reading the shared sets in `../shared/bench` (AEB, the
//!   CWCED Chinese pages, the multilingual charset corpus) and the
//!   generated test site into base articles with their home pages.
//! - [`bench_site`]: the generated many-host news site of the pipeline
//!   benchmark (`--bench pipeline`) and its server.
//! - [`lying`]: pages built from the charset corpus whose HTTP header and
//!   meta tell the same lie, for the charset bench and its floor test.
//! - [`extraction`]: the extraction benchmark's metric (AEB shingles, the
//!   CJK rule and CWCED's date and author matches) and the AEB and CWCED
//!   pages with their truths ([`extraction::sets`]).
//! - [`split`]: which items are held aside (never tuned on), one rule
//!   for every bench: the hash of the item's id.
//! - [`neardup`]: the near-duplicate set of HTML pages built from those
//!   bases (mirrors, edits, shared templates, short texts in every script,
//!   near-empty and listing pages), its held-aside split, the run through
//!   the real stages (charset vote, extraction, contentseen over a store)
//!   and the report per kind, script and length.
//!
//! Reads files only under `../shared/bench`; touches no queue; the
//! near-duplicate run writes the keys of the namespace it is given.

pub mod bench_site;
pub mod extraction;
pub mod lying;
pub mod neardup;
pub mod rng;
pub mod sources;
pub mod split;
