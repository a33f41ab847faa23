//! # warc: the crawl as WARC 1.1 files
//!
//! Owns the WARC output of a crawl (`crawler run --warc-dir`, the
//! workers' `CRAWLER_WARC_DIR`): which records a fetched page becomes, how
//! they are laid out, and the files they go to. Consumes nothing from a
//! queue and touches no Redis key: contentseen, which knows whether a page
//! is an original or a near-duplicate, calls it with the page's raw HTTP
//! exchange ([`pipeline::messages::RawExchange`]).
//!
//! - [`record`]: one record (pure): named fields, block, `sha1:` base32
//!   block and payload digests, one gzip member per record.
//! - [`capture`]: the records of one page (pure): `request`, `response`
//!   (original) or `revisit` (near-duplicate, profile
//!   [`capture::NEAR_DUPLICATE_PROFILE`], `WARC-Refers-To-*` its original,
//!   `WARC-Simhash-*` the evidence), and `metadata` (the extracted fields).
//! - [`writer`]: rolling files (size cap, a `warcinfo` record each, unique
//!   names per process, `.open` while written), recovery of the files a
//!   killed writer left open, fsync policy.
//!
//! Why not the `warc` crate of crates.io (0.4): its gzip writer wraps a
//! whole file in one gzip stream rather than one member per record, and it
//! computes no digests; what it would add here is the header lines.
//!
//! Not here: fetching (fetcher, which keeps the raw exchange when WARC
//! output is on), the near-duplicate verdict (contentseen).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod capture;
pub mod record;
pub mod writer;

pub use capture::{records, Capture, NearDuplicate, Original};
pub use record::{Record, RecordType};
pub use writer::{RollingWriter, SharedWriter, WarcError, WriterSettings};
