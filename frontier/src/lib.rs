//! # frontier: what is fetched next
//!
//! Consumes [`pipeline::UrlBatch`] (seeds from `crawler seed`, outlinks from
//! the extractor) and produces one [`pipeline::FetchTask`] per URL that is
//! valid, in scope, within depth and page limits, and never seen before in
//! this namespace.
//!
//! - [`normalize`]: URL normalization (pure).
//! - [`scope`]: the crawl's scope rules (pure).
//! - [`sitemap`]: sitemaps and robots.txt `Sitemap:` lines, as seed sources (pure).
//! - [`seen`]: the sharded URL-seen set: URL hashes, shard keys, claim ops.
//! - [`stage`]: the worker stage: admitted URLs go to their host's queue.
//! - [`release`]: hands tasks to the fetch queue when their host is due
//!   (cluster-wide politeness; its store scripts are the `politeness`
//!   crate's [`politeness::schedule`]).
//!
//! Redis keys (see [`pipeline::keys`]): `seen:{shard}` (sets of i64 URL
//! hashes), `claim:{shard}:{batch}` (what a batch claimed, until its fetch
//! tasks are confirmed), `crawl:<name>:pages` and
//! `crawl:<name>:host:<origin>:pages` (pages per crawl, and per host),
//! `once:frontier:<shard>` (one mark per batch, so a redelivered batch is
//! counted once), `stats` and `crawl:<name>:stats` (the crawl's own
//! counters, [`pipeline::crawls`]), `recrawl` (stored pages due for a
//! refetch, which the releaser hands back), `crawlctl` (read: a cancelled
//! crawl's batches are dropped); through
//! [`politeness::schedule`], each shard's `schedule`, `releasing`, host
//! queues and the `crawl_delay_ms`, `next_ms`, `parked_until_ms` of the host
//! records.
//!
//! Not here: fetching, robots.txt (the fetcher reads it and records the
//! Crawl-delay in the host record).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod normalize;
pub mod release;
pub mod scope;
pub mod seen;
pub mod sitemap;
pub mod stage;

pub use stage::FrontierStage;
