//! # fetcher: pages from the web, decoded right
//!
//! Consumes [`pipeline::FetchTask`], produces [`pipeline::Page`] (the page
//! decoded to UTF-8, with the name of the encoding chosen; with
//! `CRAWLER_WARC_DIR` set, also its raw HTTP exchange for the WARC records,
//! [`pipeline::Page::raw`]).
//!
//! The decoding is the `charset` crate's vote ([`::charset::decide_and_decode`]:
//! BOM, HTTP header, the page's own declaration, chardetng and decode checks),
//! a pure leaf crate of its own, so the tools, benches and fuzz targets that
//! only decode link no HTTP client, broker or store. Everything in this crate
//! is the worker's I/O:
//!
//! - [`http`]: the HTTP client and its limits ([`http::FetchSettings`]):
//!   connect and total timeouts, body cap (after decompression, per chunk),
//!   redirects, URL length, retries; gzip, deflate, brotli and zstd; the SSRF
//!   guard on IP literals and on every resolved address.
//! - [`gate`]: the politeness gate: a host's next request waits for its
//!   turn, booked in the store for all fetchers (the store scripts are the
//!   `politeness` crate's [`::politeness::turn`]).
//! - [`robots`]: robots.txt, fetched once per origin and cached in the store.
//! - [`politeness`]: what a fetch teaches about its host (Crawl-delay,
//!   Retry-After backoff, failure streak), for the frontier's schedule.
//! - [`stage`]: the worker stage: URL check, robots, fetch, decode, publish;
//!   the recorded outcome of every fetch; transient failures sent back to
//!   the frontier for a bounded number of retries.
//!
//! Produces also: [`pipeline::UrlBatch`] to the frontier, for a redirect
//! target (`redirects + 1`), a retry (`attempt + 1`), or a task whose host
//! is not due for a while (the gate).
//!
//! Redis keys: `robots:<origin>` (cached robots.txt), `host:<origin>` (the
//! politeness record, field names in [`::politeness::record`]: `delay_ms`,
//! `backoff_until_ms`, `fail_streak` written here, `next_fetch_ms` by the
//! gate),
//! `fetch:<url>` (the last outcome of a URL), `once:fetch:<shard>` (one
//! mark per task, so a redelivered task is counted once), `stats`
//! (fetched, failed, `fetch_<outcome>`, `fetch_retried`) and the same
//! fields in `crawl:<name>:stats`; `crawlctl` (read: a cancelled crawl's
//! tasks are dropped, [`pipeline::crawls`]).
//!
//! Not here: which URLs to fetch and when (frontier), what the page says
//! (extractor).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod gate;
pub mod http;
pub mod politeness;
pub mod robots;
pub mod stage;

pub use stage::FetcherStage;
