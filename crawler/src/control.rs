//! `crawler crawls`, `pause`, `resume`, `cancel` and `reset`: list the
//! crawls of a namespace and steer them while the workers run.
//!
//! The states live in the crawl control hash of every politeness shard
//! ([`pipeline::crawls`]): the frontier's release script reads it with each
//! release, the workers through a cache of at most a second.

use anyhow::Context;
use clap::Args;
use pipeline::crawls::{read_states, set_state, CrawlState};
use pipeline::keys::{Keys, HOST_SHARDS};
use pipeline::store::Op;
use pipeline::Store;

use crate::stats::{self, CrawlProgress};

/// Keys deleted per round trip by `reset`.
const RESET_BATCH: usize = 1000;

#[derive(Args)]
pub struct CrawlsArgs {
    /// One JSON object per crawl (JSON lines).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct CrawlArgs {
    /// The crawl's name (as given to `crawler seed --crawl`).
    #[arg(long)]
    pub crawl: String,
}

#[derive(Args)]
pub struct ResetArgs {
    /// Really delete everything the namespace holds.
    #[arg(long)]
    pub yes: bool,
    /// Reset even while workers of the namespace are live (they would write
    /// into the emptied namespace again).
    #[arg(long)]
    pub force: bool,
}

async fn store(service: &pipeline::ServiceConfig) -> anyhow::Result<Store> {
    service.store().await.context("connecting to Redis")
}

/// `crawler crawls`: every crawl with its state and counters.
pub async fn list(service: &pipeline::ServiceConfig, args: CrawlsArgs) -> anyhow::Result<()> {
    let (store, session) = stats::connect(service).await?;
    let keys = Keys::new(&service.namespace);
    let snapshot = stats::snapshot(&store, &session, &keys).await?;
    if args.json {
        for c in &snapshot.crawls {
            println!("{}", serde_json::to_string(c)?);
        }
        return Ok(());
    }
    print!("{}", table(&snapshot.crawls));
    Ok(())
}

/// The crawls as a text table, one line each.
fn table(crawls: &[CrawlProgress]) -> String {
    let mut out = format!(
        "{:<20} {:<13} {:>9} {:>9} {:>9} {:>10} {:>7} {:>9}\n",
        "crawl", "state", "released", "fetched", "stored", "duplicates", "failed", "max-pages"
    );
    for c in crawls {
        out += &format!(
            "{:<20} {:<13} {:>9} {:>9} {:>9} {:>10} {:>7} {:>9}\n",
            c.crawl,
            c.state,
            c.released,
            c.fetched,
            c.stored,
            c.duplicates,
            c.failed,
            c.max_pages.map_or("-".to_string(), |m| m.to_string())
        );
    }
    out
}

/// The crawl's current state, or an error when the namespace knows no
/// crawl of that name.
async fn known(store: &Store, keys: &Keys, crawl: &str) -> anyhow::Result<CrawlState> {
    let states = read_states(store, keys).await?;
    if let Some(state) = states.get(crawl) {
        return Ok(*state);
    }
    let seeded = store
        .one(Op::HGet {
            key: keys.crawls(),
            field: crawl.to_string(),
        })
        .await?
        .data()?
        .is_some();
    let counted = || async {
        Ok::<bool, anyhow::Error>(
            pipeline::crawls::read_counters(store, keys)
                .await?
                .crawls
                .contains_key(crawl),
        )
    };
    if seeded || counted().await? {
        Ok(CrawlState::Running)
    } else {
        anyhow::bail!(
            "no crawl {crawl:?} in namespace {:?} (`crawler crawls` lists them)",
            keys.namespace()
        )
    }
}

/// `crawler pause|resume|cancel --crawl C`.
pub async fn steer(
    service: &pipeline::ServiceConfig,
    args: CrawlArgs,
    to: CrawlState,
) -> anyhow::Result<()> {
    let store = store(service).await?;
    let keys = Keys::new(&service.namespace);
    let crawl = args.crawl.as_str();
    let now = known(&store, &keys, crawl).await?;
    if now == CrawlState::Cancelled && to != CrawlState::Cancelled {
        anyhow::bail!(
            "crawl {crawl:?} was cancelled: its queued URLs are gone and cannot be resumed; \
             seed a crawl of another name (or `crawler reset` the namespace)"
        );
    }
    if to == CrawlState::Cancelled {
        // Paused first: the releasers then keep its tasks (they drop a
        // cancelled crawl's tasks themselves), so what is dropped here is
        // every task queued when the cancel came, counted once; then
        // cancelled, and what was admitted meanwhile dropped too.
        let mut dropped = 0;
        if now != CrawlState::Paused {
            store
                .exec(&set_state(&keys, crawl, CrawlState::Paused))
                .await?;
        }
        dropped += drop_queued(&store, &keys, crawl).await?;
        store.exec(&set_state(&keys, crawl, to)).await?;
        dropped += drop_queued(&store, &keys, crawl).await?;
        println!(
            "crawl {crawl:?} cancelled: {dropped} queued URL(s) dropped; its messages still in \
             RabbitMQ queues are acked without work; its stored documents stay"
        );
        return Ok(());
    }
    store.exec(&set_state(&keys, crawl, to)).await?;
    match to {
        CrawlState::Paused => println!(
            "crawl {crawl:?} paused: none of its URLs is released until `crawler resume --crawl {crawl}`; \
             other crawls go on (its messages already in RabbitMQ queues are finished)"
        ),
        CrawlState::Running | CrawlState::Cancelled => println!("crawl {crawl:?} resumed"),
    }
    Ok(())
}

/// Removes the crawl's tasks from every host queue (one script per host
/// with tasks queued, found in the shards' `hostlen` indexes); returns how
/// many.
async fn drop_queued(store: &Store, keys: &Keys, crawl: &str) -> anyhow::Result<i64> {
    let lists: Vec<Op> = (0..HOST_SHARDS)
        .map(|shard| Op::ZRevRange {
            key: keys.host_lengths(shard),
            start: 0,
            stop: -1,
        })
        .collect();
    let mut origins = Vec::new();
    for r in store.exec(&lists).await? {
        origins.extend(r.int_pairs()?.into_iter().map(|(origin, _)| origin));
    }
    let ops: Vec<Op> = origins
        .iter()
        .map(|origin| politeness::schedule::drop_crawl(keys, origin, crawl))
        .collect();
    let mut dropped = 0;
    for chunk in ops.chunks(RESET_BATCH) {
        for r in store.exec(chunk).await? {
            dropped += r.int()?;
        }
    }
    Ok(dropped)
}

/// `crawler reset --namespace N --yes`: deletes every key of the namespace
/// and its queues.
pub async fn reset(service: &pipeline::ServiceConfig, args: ResetArgs) -> anyhow::Result<()> {
    let ns = &service.namespace;
    if !args.yes {
        anyhow::bail!(
            "`crawler reset` deletes everything namespace {ns:?} holds: every crawl, URL-seen set, \
             host queue, stored document and counter in Redis, and its RabbitMQ queues with their \
             messages. Run it again with --yes to do so"
        );
    }
    let store = store(service).await?;
    let keys = Keys::new(ns);
    let live = pipeline::live::read(&store, &keys).await?;
    if !live.is_empty() {
        if !args.force {
            anyhow::bail!(
                "{} worker(s) of namespace {ns:?} are live; stop them first (or pass --force: \
                 they would write into the emptied namespace again)",
                live.len()
            );
        }
        eprintln!(
            "warning: {} worker(s) of namespace {ns:?} are live; they will write into it again",
            live.len()
        );
    }
    let session = service
        .broker()
        .open()
        .await
        .context("connecting to RabbitMQ")?;
    session.delete_topology().await?;
    // The one scan of an operational command: its own namespace's keys.
    let all = store.keys_matching(&keys.namespace_pattern()).await?;
    let ops: Vec<Op> = all.iter().map(|k| Op::Unlink { key: k.clone() }).collect();
    for chunk in ops.chunks(RESET_BATCH) {
        store.exec(chunk).await?;
    }
    println!(
        "namespace {ns:?} reset: {} key(s) deleted, its queues deleted",
        all.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_every_column() {
        let c = CrawlProgress {
            crawl: "news".into(),
            state: "paused",
            released: 12,
            fetched: 10,
            failed: 1,
            extracted: 10,
            stored: 8,
            duplicates: 2,
            max_pages: Some(50),
            done: 11,
            of: 50,
        };
        let t = table(&[c]);
        let line = t.lines().nth(1).unwrap();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols, ["news", "paused", "12", "10", "8", "2", "1", "50"]);
    }
}
