//! # contentseen: store each article once
//!
//! Consumes [`pipeline::Document`] and stores a [`pipeline::StoredDocument`]:
//! originals with their text, near-duplicates (mirrors, reposts, light edits)
//! marked with `duplicate_of` and the Hamming distance, their text not stored
//! again.
//!
//! - [`simhash`]: the 64-bit SimHash of a body text (pure).
//! - [`bands`]: the banded table layout and its no-false-negative guarantee (pure).
//! - [`decide`]: which document of a near-duplicate cluster is the original (pure).
//! - [`stage`]: the worker stage: the race-free insert-then-look-up protocol
//!   over the store (Redis or memory; same banding logic).
//!
//! Redis keys: `band:<i>:<value>` (sets of i64 fingerprints),
//! `fp:<shard>` (fingerprint → "seq url" of its first document), `fpseq`,
//! `exact:<hash>` (short bodies), `doc:<url>`, `docs`, `dups:<url>`, `stats`.
//!
//! Not here: extraction (extractor), fetching.

pub mod bands;
pub mod decide;
pub mod simhash;
pub mod stage;

pub use stage::ContentSeenStage;
