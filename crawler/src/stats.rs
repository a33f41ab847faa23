//! `crawler stats`: queue depths, page counters, and `--wait-idle` for scripts.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use pipeline::broker::QueueDepth;
use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::{Broker, Store};
use serde::Serialize;

/// How often `--wait-idle` polls.
const POLL: Duration = Duration::from_millis(250);
/// How long everything must look idle before `--wait-idle` believes it: longer
/// than a heartbeat period, so a message just taken by a worker is seen.
const IDLE_FOR: Duration = Duration::from_secs(2);

#[derive(Args)]
pub struct StatsArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Return once every queue is empty and nothing is in flight.
    #[arg(long)]
    pub wait_idle: bool,
    /// With --wait-idle: give up (exit 1) after this many seconds.
    #[arg(long, default_value_t = 3600)]
    pub timeout_secs: u64,
}

#[derive(Serialize)]
struct Snapshot {
    queues: Vec<QueueDepth>,
    /// Messages being processed by live workers.
    in_flight: i64,
    /// Fetch tasks waiting in the frontier's host queues for their turn.
    waiting_for_host: i64,
    live_workers: usize,
    counters: BTreeMap<String, i64>,
}

impl Snapshot {
    fn idle(&self) -> bool {
        self.in_flight == 0
            && self.waiting_for_host == 0
            && self
                .queues
                .iter()
                .filter(|q| !q.queue.ends_with(".dead"))
                .all(|q| q.ready == 0)
    }
}

async fn snapshot(
    store: &Store,
    session: &pipeline::broker::Session,
    keys: &Keys,
) -> anyhow::Result<Snapshot> {
    let queues = session.queue_depths().await?;
    let live = store.keys_matching(&keys.live_pattern()).await?;
    let mut ops: Vec<Op> = live.iter().map(|k| Op::Get { key: k.clone() }).collect();
    ops.push(Op::HGetAll { key: keys.stats() });
    let replies = store.exec(&ops).await?;
    let mut in_flight = 0;
    let mut live_workers = 0;
    for r in &replies[..live.len()] {
        if let Some(s) = r.string()? {
            live_workers += 1;
            in_flight += s.parse::<i64>().unwrap_or(0);
        }
    }
    let mut counters = BTreeMap::new();
    for name in [
        "seen",
        "fetched",
        "failed",
        "extracted",
        "stored",
        "duplicate",
    ] {
        counters.insert(name.to_string(), 0);
    }
    if let Some(all) = replies.last() {
        let items = all.strings()?;
        for pair in items.chunks(2) {
            if let [k, v] = pair {
                counters.insert(k.clone(), v.parse().unwrap_or(0));
            }
        }
    }
    let waiting_for_host = frontier::release::waiting(store, keys).await?;
    Ok(Snapshot {
        queues,
        in_flight,
        waiting_for_host,
        live_workers,
        counters,
    })
}

fn print(s: &Snapshot, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(s)?);
        return Ok(());
    }
    println!("{:<28} {:>10} {:>10}", "queue", "ready", "consumers");
    for q in &s.queues {
        println!("{:<28} {:>10} {:>10}", q.queue, q.ready, q.consumers);
    }
    println!(
        "in flight: {} (live workers: {})",
        s.in_flight, s.live_workers
    );
    for (k, v) in &s.counters {
        println!("{k:<20} {v:>10}");
    }
    Ok(())
}

pub async fn run(service: &pipeline::ServiceConfig, args: StatsArgs) -> anyhow::Result<()> {
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to Redis")?;
    let session = Broker::amqp(&service.amqp_url, &service.namespace)
        .open()
        .await
        .context("connecting to RabbitMQ")?;
    let keys = Keys::new(&service.namespace);
    if args.wait_idle {
        let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
        let mut idle_since: Option<Instant> = None;
        loop {
            let s = snapshot(&store, &session, &keys).await?;
            if s.idle() {
                let since = *idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= IDLE_FOR {
                    return print(&s, args.json);
                }
            } else {
                idle_since = None;
            }
            if Instant::now() > deadline {
                print(&s, args.json)?;
                anyhow::bail!("not idle after {} s", args.timeout_secs);
            }
            tokio::time::sleep(POLL).await;
        }
    }
    let s = snapshot(&store, &session, &keys).await?;
    print(&s, args.json)
}
