//! # politeness: how often the crawler may ask a host
//!
//! Owned by the two stages that keep it: the frontier's releaser hands out a
//! host's tasks one delay apart ([`schedule`]), and the fetchers take the
//! host's turn right before each request ([`turn`]). Each step is one
//! atomic store script ([`pipeline::store::Script`]): Lua for Redis and its
//! twin in Rust for the memory store of `crawler run`, side by side, so a
//! change to one is made next to the other
//! (`tests/tests/store_conformance.rs` proves each pair gives the same
//! replies and leaves the same state).
//!
//! - [`record`]: the fields of the per-host record, one set of names for
//!   the Lua, the twins and the fetcher's feedback.
//! - [`schedule`]: enqueue, release, sweep (the frontier), and drop a
//!   cancelled crawl's tasks (`crawler cancel`).
//! - [`turn`]: gate, turn done (the fetchers).
//!
//! Consumes and produces no message; builds store ops the stages run.
//!
//! Redis keys (names from [`pipeline::keys::Keys`], per shard of
//! [`pipeline::keys::HOST_SHARDS`], one cluster slot per shard):
//! `schedule` (sorted set: origin → when due), `host_queue` (list of
//! encoded fetch tasks per origin), `host` (the record, a hash), `releasing`
//! (sorted set: `origin\ntask` → when taken), and reads `crawl_control`
//! (the crawls paused or cancelled: their tasks are not released).
//!
//! Not here: the crawl's and robots.txt's delays and the Retry-After
//! backoffs themselves (the fetcher writes them: `fetcher::politeness`),
//! the releaser's loop (`frontier::release`).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod record;
pub mod schedule;
pub mod turn;
