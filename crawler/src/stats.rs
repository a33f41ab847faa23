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
    /// Refresh every second: rates, errors by kind, busiest hosts, progress.
    #[arg(long, conflicts_with = "wait_idle")]
    pub watch: bool,
    /// With --watch: stop after this many refreshes (default: until Ctrl-C).
    #[arg(long)]
    pub count: Option<u64>,
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
    /// Hosts with the most tasks waiting for their turn.
    busiest_hosts: Vec<(String, i64)>,
    /// Hosts parked after failing again and again, with until when (Unix ms).
    parked_hosts: Vec<(String, i64)>,
    /// Crawls with their released pages and page limit.
    crawls: Vec<CrawlProgress>,
}

#[derive(Serialize)]
struct CrawlProgress {
    crawl: String,
    released: i64,
    max_pages: Option<u64>,
}

/// Hosts listed as busiest.
const BUSIEST: usize = 5;

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
    // The busiest hosts, by queued tasks.
    let queues_keys = store.keys_matching(&keys.host_queue_pattern()).await?;
    let lens = store
        .exec(
            &queues_keys
                .iter()
                .map(|k| Op::LLen { key: k.clone() })
                .collect::<Vec<_>>(),
        )
        .await?;
    let mut busiest: Vec<(String, i64)> = queues_keys
        .iter()
        .zip(&lens)
        .map(|(k, r)| {
            let origin = k
                .split_once("}:")
                .map_or(k.as_str(), |(_, o)| o)
                .to_string();
            (origin, r.int().unwrap_or(0))
        })
        .collect();
    busiest.sort_by_key(|b| std::cmp::Reverse(b.1));
    busiest.truncate(BUSIEST);
    // Hosts parked after repeated failures.
    let host_keys = store.keys_matching(&keys.host_pattern()).await?;
    let parked_until = store
        .exec(
            &host_keys
                .iter()
                .map(|k| Op::HGet {
                    key: k.clone(),
                    field: "parked_until_ms".into(),
                })
                .collect::<Vec<_>>(),
        )
        .await?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let parked_hosts: Vec<(String, i64)> = host_keys
        .iter()
        .zip(&parked_until)
        .filter_map(|(k, r)| {
            let until = r.int().ok().filter(|u| *u > now_ms)?;
            let origin = k.split_once("}:").map_or(k.as_str(), |(_, o)| o);
            Some((origin.to_string(), until))
        })
        .collect();
    // Crawls seeded with their settings, and how far they got.
    let spec_keys = store.keys_matching(&keys.crawl_spec_pattern()).await?;
    let specs = store
        .exec(
            &spec_keys
                .iter()
                .map(|k| Op::Get { key: k.clone() })
                .collect::<Vec<_>>(),
        )
        .await?;
    let mut crawls = Vec::new();
    for r in specs {
        let Some(json) = r.data()? else { continue };
        let Ok(spec) = serde_json::from_slice::<pipeline::CrawlSpec>(&json) else {
            continue;
        };
        let released = store
            .one(Op::Get {
                key: keys.crawl_pages(&spec.name),
            })
            .await?
            .int()
            .unwrap_or(0);
        // The counter also counts URLs cut by the limit.
        let released = spec.max_pages.map_or(released, |m| released.min(m as i64));
        crawls.push(CrawlProgress {
            crawl: spec.name,
            released,
            max_pages: spec.max_pages,
        });
    }
    Ok(Snapshot {
        queues,
        in_flight,
        waiting_for_host,
        live_workers,
        counters,
        busiest_hosts: busiest,
        parked_hosts,
        crawls,
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
    for (host, until) in &s.parked_hosts {
        println!(
            "parked (failing): {host} until {}",
            pipeline::messages::rfc3339_from_unix(until / 1000)
        );
    }
    for (k, v) in &s.counters {
        println!("{k:<20} {v:>10}");
    }
    Ok(())
}

/// A text progress bar: `[#####.....] 50%`.
fn bar(done: i64, total: u64) -> String {
    let total = total.max(1) as f64;
    let frac = (done as f64 / total).clamp(0.0, 1.0);
    let filled = (frac * 30.0).round() as usize;
    format!(
        "[{}{}] {:>3.0}%",
        "#".repeat(filled),
        ".".repeat(30 - filled),
        frac * 100.0
    )
}

/// One refresh of `--watch`: depths and rates since the previous snapshot.
fn print_watch(s: &Snapshot, prev: Option<&Snapshot>, secs: f64) {
    let now = pipeline::messages::now_rfc3339();
    println!("-- {now} --");
    let rate = |name: &str| -> f64 {
        let cur = s.counters.get(name).copied().unwrap_or(0);
        let old = prev
            .and_then(|p| p.counters.get(name).copied())
            .unwrap_or(cur);
        (cur - old) as f64 / secs.max(1e-3)
    };
    for q in &s.queues {
        let old = prev
            .and_then(|p| p.queues.iter().find(|o| o.queue == q.queue))
            .map_or(q.ready, |o| o.ready);
        println!(
            "queue {:<30} {:>9} ready {:>+8.1}/s {:>4} consumers",
            q.queue,
            q.ready,
            (q.ready as f64 - old as f64) / secs.max(1e-3),
            q.consumers
        );
    }
    println!(
        "pages/s: fetched {:.1}  extracted {:.1}  stored {:.1}  duplicate {:.1}  failed {:.1}",
        rate("fetched"),
        rate("extracted"),
        rate("stored"),
        rate("duplicate"),
        rate("failed")
    );
    println!(
        "totals: seen {}  fetched {}  stored {}  duplicate {}  failed {}  in flight {}  waiting for host {}",
        s.counters.get("seen").unwrap_or(&0),
        s.counters.get("fetched").unwrap_or(&0),
        s.counters.get("stored").unwrap_or(&0),
        s.counters.get("duplicate").unwrap_or(&0),
        s.counters.get("failed").unwrap_or(&0),
        s.in_flight,
        s.waiting_for_host
    );
    let errors: Vec<String> = s
        .counters
        .iter()
        .filter(|(k, v)| k.starts_with("fetch_") && *k != "fetch_ok" && **v > 0)
        .map(|(k, v)| format!("{}={v}", &k["fetch_".len()..]))
        .collect();
    if !errors.is_empty() {
        println!("fetch outcomes: {}", errors.join("  "));
    }
    if !s.busiest_hosts.is_empty() {
        let hosts: Vec<String> = s
            .busiest_hosts
            .iter()
            .map(|(h, n)| format!("{h} ({n})"))
            .collect();
        println!("busiest hosts: {}", hosts.join(", "));
    }
    for (host, until) in &s.parked_hosts {
        println!(
            "parked (failing): {host} until {}",
            pipeline::messages::rfc3339_from_unix(until / 1000)
        );
    }
    for c in &s.crawls {
        match c.max_pages {
            Some(max) => println!(
                "crawl {:<16} {} {}/{max}",
                c.crawl,
                bar(c.released, max),
                c.released
            ),
            None => println!("crawl {:<16} {} pages released", c.crawl, c.released),
        }
    }
}

/// Redis and a RabbitMQ session, for reading counters and queue depths.
async fn connect(
    service: &pipeline::ServiceConfig,
) -> anyhow::Result<(Store, pipeline::broker::Session)> {
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to Redis")?;
    let session = Broker::amqp(&service.amqp_url, &service.namespace)
        .open()
        .await
        .context("connecting to RabbitMQ")?;
    Ok((store, session))
}

/// `--wait-idle`: polls until the crawl has been idle for [`IDLE_FOR`],
/// riding out a broker or Redis that is down or restarting (it reconnects
/// at every poll) until its own deadline.
async fn wait_idle(
    service: &pipeline::ServiceConfig,
    keys: &Keys,
    timeout_secs: u64,
    json: bool,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(timeout_secs);
    let mut idle_since: Option<Instant> = None;
    let mut conns = None;
    let mut last: Option<Snapshot> = None;
    let mut down: Option<String> = None;
    loop {
        if conns.is_none() {
            match connect(service).await {
                Ok(c) => conns = Some(c),
                Err(e) => {
                    if down.is_none() {
                        eprintln!(
                            "waiting for the services: {}",
                            pipeline::config::error_chain(e.as_ref())
                        );
                    }
                    down = Some(pipeline::config::error_chain(e.as_ref()));
                }
            }
        }
        if let Some((store, session)) = &conns {
            match snapshot(store, session, keys).await {
                Ok(s) => {
                    if down.take().is_some() {
                        eprintln!("services back");
                    }
                    if s.idle() {
                        let since = *idle_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= IDLE_FOR {
                            return print(&s, json);
                        }
                    } else {
                        idle_since = None;
                    }
                    last = Some(s);
                }
                Err(e) => {
                    // Reconnect at the next poll; idleness must be seen anew.
                    eprintln!(
                        "lost the services: {}",
                        pipeline::config::error_chain(e.as_ref())
                    );
                    down = Some(pipeline::config::error_chain(e.as_ref()));
                    conns = None;
                    idle_since = None;
                }
            }
        }
        if Instant::now() > deadline {
            if let Some(s) = &last {
                print(s, json)?;
            }
            match &down {
                Some(e) => {
                    anyhow::bail!("not idle after {timeout_secs} s (services unreachable: {e})")
                }
                None => anyhow::bail!("not idle after {timeout_secs} s"),
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

pub async fn run(service: &pipeline::ServiceConfig, args: StatsArgs) -> anyhow::Result<()> {
    if args.wait_idle {
        let keys = Keys::new(&service.namespace);
        return wait_idle(service, &keys, args.timeout_secs, args.json).await;
    }
    let (store, session) = connect(service).await?;
    let keys = Keys::new(&service.namespace);
    if args.watch {
        let mut prev: Option<(Instant, Snapshot)> = None;
        let mut n = 0u64;
        loop {
            let s = snapshot(&store, &session, &keys).await?;
            let secs = prev
                .as_ref()
                .map_or(1.0, |(t, _)| t.elapsed().as_secs_f64());
            if args.json {
                println!("{}", serde_json::to_string(&s)?);
            } else {
                print_watch(&s, prev.as_ref().map(|(_, p)| p), secs);
            }
            n += 1;
            if args.count.is_some_and(|c| n >= c) {
                return Ok(());
            }
            prev = Some((Instant::now(), s));
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = tokio::signal::ctrl_c() => return Ok(()),
            }
        }
    }
    let s = snapshot(&store, &session, &keys).await?;
    print(&s, args.json)
}
