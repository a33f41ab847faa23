//! # fetcher: pages from the web, decoded right
//!
//! Consumes [`pipeline::FetchTask`], produces [`pipeline::Page`] (the page
//! decoded to UTF-8, with the encoding chosen and why).
//!
//! - [`charset`]: the charset vote (pure): BOM, HTTP header, the page's own
//!   declaration, chardetng and decode checks.
//! - [`http`]: the HTTP client and its limits: timeouts, body cap (after
//!   decompression), redirects, the SSRF guard on every resolved address.
//! - [`robots`]: robots.txt, fetched once per host and cached in the store.
//! - [`stage`]: the worker stage: robots check, fetch, decode, publish, and
//!   the recorded outcome of every fetch.
//!
//! Redis keys: `robots:<origin>` (cached robots.txt), `fetch:<url>` (the last
//! outcome of a URL), `stats` (fetched, failed, fetch_<outcome>).
//!
//! Not here: which URLs to fetch and when (frontier), what the page says
//! (extractor).

pub mod charset;
pub mod http;
pub mod robots;
pub mod stage;

pub use stage::FetcherStage;
