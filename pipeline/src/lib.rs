//! # pipeline: what two or more stages of the crawler share
//!
//! The crawler is four stages that only talk through messages:
//!
//! ```text
//!  crawler seed ─▶ [frontier] ─FetchTask─▶ [fetch] ─Page─▶ [extract] ─Document─▶ [contentseen]
//!                      ▲                                       │
//!                      └──────────────── UrlBatch ─────────────┘
//! ```
//!
//! This crate owns the contract between them and the plumbing every stage uses;
//! it owns no stage logic (URL rules, charset vote, extraction, SimHash live in
//! the stage crates).
//!
//! - [`messages`]: the versioned message types, encoded once (MessagePack with
//!   named fields; page bodies as raw bytes).
//! - [`topology`]: queue names, dead-letter exchange and queues, per namespace.
//! - [`broker`]: publish with confirms and consume with explicit acks, over
//!   RabbitMQ (lapin) or over in-memory queues for `crawler run`; on
//!   RabbitMQ what is published to a queue within a few milliseconds
//!   travels as one message ([`bundle`]).
//! - [`bundle`]: many messages in one broker message (pure).
//! - [`store`]: the key/value operations the stages need, pipelined, over Redis
//!   or an in-memory map for `crawler run`; a stage's own atomic steps plug
//!   in as [`store::Script`]s (Lua and its memory twin), which the store
//!   runs without knowing them.
//! - [`worker`]: the at-least-once loop every worker binary runs: consume,
//!   handle, publish with confirms, ack; malformed input to the dead-letter
//!   queue; reconnect with backoff.
//! - [`crawls`]: crawl control (running, paused, cancelled) as the workers
//!   see it, and the per-crawl counters beside the namespace's.
//! - [`config`]: the settings every binary reads, one typed layer: flags,
//!   `CRAWLER_*` variables, the TOML config file (serde), defaults.
//! - [`backoff`], [`shutdown`]: small named types for cross-cutting concerns.
//! - [`keys`]: every Redis key name, in one place; [`scale`]: how many keys
//!   the large families spread over, fixed per namespace.
//! - [`documents`]: stored documents as the store keeps them (a compact
//!   record per URL; the full document in a text segment or the record).
//! - [`once`]: a message's records and counters applied once, in the slot
//!   of the URL it is about (the URL record).
//! - [`live`]: the live workers and their messages in flight (heartbeats).
//! - [`metrics`]: Prometheus counters and latency histograms of a worker.
//!
//! It consumes and produces no message of its own: the worker loop consumes
//! a stage's queue and publishes what the stage returns. Queues it declares:
//! every stage's `{ns}.<stage>` queue, the dead-letter exchange `{ns}.dlx`
//! and the `{ns}.<stage>.dead` queues ([`topology`]). Redis keys it touches
//! itself: the live-worker index `{ns}:live:{w}` and `{ns}:inflight:{w}`
//! ([`live`]), the URL records and stats shards through the stages' calls
//! of [`once`]; every other key is named in [`keys`] and written by the
//! stage that owns it.

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod backoff;
pub mod broker;
pub mod bundle;
pub mod config;
pub mod crawls;
pub mod dictionaries;
pub mod documents;
pub mod fault;
pub mod keys;
pub mod live;
pub mod messages;
pub mod metrics;
pub mod once;
pub mod scale;
pub mod shutdown;
pub mod store;
pub mod topology;
pub mod worker;
pub mod zstd_contexts;

pub use broker::{Broker, Delivery};
pub use config::{ServiceConfig, WorkerConfig};
pub use messages::{
    CrawlRef, CrawlSpec, Document, FetchTask, Link, Page, RawExchange, StoredDocument, UrlBatch,
};
pub use store::Store;
pub use topology::Queue;
