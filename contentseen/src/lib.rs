//! # contentseen: store each article once
//!
//! Consumes [`pipeline::Document`] and stores a [`pipeline::StoredDocument`]:
//! originals with their text, near-duplicates (mirrors, reposts, light edits)
//! marked with `duplicate_of` and the Hamming distance, their text not stored
//! again.
//!
//! - [`simhash`]: the 64-bit SimHash of a body text (pure).
//! - [`minhash`]: the second signal: a MinHash of the shingles, its
//!   Jaccard estimate and LSH band values (pure).
//! - [`bands`]: the banded table layout and its no-false-negative guarantee (pure).
//! - [`reach`]: how far a document's lookup reaches: a larger radius for
//!   short bodies, and the extra band keys that reach it (pure).
//! - [`room`]: how much room Redis gives a band table, and when an
//!   `APPEND` made it double so that the writer compacts it (pure).
//! - [`decide`]: which document of a near-duplicate cluster is the original (pure).
//! - [`table`]: the banded table in the store and the race-free
//!   insert-number-record-look-up protocol, for one document or a batch;
//!   read-only lookups for `crawler query --text`.
//! - [`stage`]: the worker stage over [`table`] (Redis or memory; same
//!   banding logic).
//!
//! A pair of bodies is a near-duplicate when two independent signals agree
//! ([`decide::near_duplicates`]): their SimHashes are within the pair's
//! radius, or one found the other through the MinHash LSH keys; and the
//! MinHash estimate of their Jaccard similarity is at least 0.3. A page
//! without an article (the extractor's `article: false`, or no tokens at
//! all) is stored and never matched; a body under 40 tokens is matched by
//! its exact normalized text only. Measured on HTML pages from four sources
//! through the real stages: `cargo bench -p evaluation --bench neardup`;
//! on clean article bodies, with throughput through Redis and bytes per
//! fingerprint: `cargo bench -p evaluation --bench contentseen` (its set:
//! `evaluation::clean_text`). No evaluation code lives here.
//!
//! Redis keys (one slot per step: [`pipeline::store::design`]):
//! `bands:<i>:<value>` (strings of the fingerprints' bits outside band i,
//! 6 bytes each, in the order added; `bands:<i>:<value>~{…}` is the scratch
//! key of its compaction, gone when the script ends), `fpr:<shard>`
//! (fingerprint → sequence number, search radius, MinHash signature and URL
//! hash of its first document), `lsh:<band>:<shard>` (MinHash LSH band
//! value → the first fingerprint that had it), `seq` (the counter),
//! `exact:<shard>` (short bodies), and in each URL's slot `doc:{u<T>}:<S>`
//! (the document records, [`pipeline::documents`]), `docs:{u<T>}` (the
//! export logs), `dups:{u<T>}:<S>` (near-duplicates under their
//! original), `url:{u<T>}:<S>` (a refetch's once step) and the stats
//! shards; `segseq` (text segment numbers, [`texts`]), `recrawl:{h<n>}`
//! (refetches by due time), and reads `crawlctl` (a cancelled crawl's
//! documents are dropped). With `CRAWLER_TEXT_DIR` the documents go in
//! full to text segment files ([`texts`]), else compressed into their
//! records. A refetched page is compared with what is stored: unchanged
//! doubles its interval, changed updates it and halves it. Sizes and
//! costs: `contentseen/README.md`.
//!
//! With `CRAWLER_WARC_DIR` (`crawler run --warc-dir`), each new page's
//! WARC records (the `warc` crate) are written, from the raw HTTP exchange
//! the page carries ([`pipeline::Document::raw`]), before the page is
//! stored: request, response and metadata for an original (the response's
//! record id stored with it, `warc_record_id`); request, a revisit of the
//! original (read from its stored document) and metadata for a
//! near-duplicate.
//! Refetches of a recrawl are not written.
//!
//! Not here: extraction (extractor), fetching.

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod bands;
pub mod decide;
pub mod minhash;
pub mod reach;
pub mod room;
pub mod simhash;
pub mod stage;
pub mod table;
pub mod texts;

pub use stage::ContentSeenStage;
