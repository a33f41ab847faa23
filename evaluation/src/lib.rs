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
//! - [`loopback`]: many hosts served from one process, one loopback
//!   address each, all on one port (the bench site's and the real sites').
//! - [`charset`]: what "decoded right" means, the corpus folders' true
//!   encodings and the `lying/labels.tsv` rows (the charset bench and the
//!   charset floor tests).
//! - [`lying`]: pages built from the charset corpus whose HTTP header and
//!   meta tell the same lie, for the charset bench and its floor test.
//! - [`extraction`]: the extraction benchmark's metric (AEB shingles, the
//!   CJK rule and CWCED's date and author matches) and the AEB and CWCED
//!   pages with their truths ([`extraction::sets`]).
//! - [`translations`]: an independent source of text for the charset
//!   vote, the gettext catalogues installed on the machine, as same-lie
//!   pages in every single-byte encoding their languages are written in.
//! - [`split`]: which items are held aside (never tuned on), one rule
//!   for every bench: the hash of the item's id.
//! - [`clean_text`]: the near-duplicate set built from clean article
//!   bodies (mirrors, light edits, boilerplate) and the precision and
//!   recall of contentseen's lookups on it (`--bench contentseen`).
//! - [`memory`]: Redis memory per page by key kind (the memory bench, and
//!   the pipeline bench's table of its crawl).
//! - [`neardup`]: the near-duplicate set of HTML pages built from those
//!   bases (mirrors, edits, shared templates, short texts in every script,
//!   near-empty and listing pages), its held-aside split, the run through
//!   the real stages (charset vote, extraction, contentseen over a store)
//!   and the report per kind, script and length.
//! - [`neardup_sites`]: the near-duplicate evaluation on real sites
//!   (Debian's documentation packages and the shared news pages, each with
//!   a mirror), its labels by another extractor, and the scores of a
//!   crawl's verdicts per site and kind (`--bench neardup_sites`).
//! - [`fraction`]: the one reading of a rate (precision, recall, Jaccard)
//!   as part of a whole, 1 when there was nothing to find.
//!
//! Reads files only under `../shared/bench` (and the translations under
//! `/usr/share/locale`, the documentation sites under `/usr/share/doc` and
//! `/usr/share/gtk-doc`); touches no queue; the
//! near-duplicate run writes the keys of the namespace it is given.

/// Writes a tally's `fn add(&mut self, o: &Self)`: each listed counter of
/// `o` added to this one's.
macro_rules! add_counters {
    ($($field:ident),+ $(,)?) => {
        fn add(&mut self, o: &Self) {
            $(self.$field += o.$field;)+
        }
    };
}

pub mod bench_site;
pub mod bins;
pub mod charset;
pub mod clean_text;
pub mod extraction;
pub mod loopback;
pub mod lying;
pub mod memory;
pub mod neardup;
pub mod neardup_sites;
pub mod own_redis;
pub mod rng;
pub mod sources;
pub mod split;
pub mod translations;

/// The rows of a tab-separated table held in `text`: each line that is not
/// blank or a `#` comment, with its number (from 1, for errors) and its
/// fields.
pub fn tsv_rows(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|(i, line)| (i + 1, line.split('\t').collect()))
}

/// `part` of `whole` as a fraction; 1 when `whole` is 0 (nothing to find,
/// so nothing missed).
pub fn fraction(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}
