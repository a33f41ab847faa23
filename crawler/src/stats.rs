//! `crawler stats`: queue depths, page counters, and `--wait-idle` for scripts;
//! and every crawl's own counters and state ([`crawls`], also `crawler crawls`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use pipeline::broker::QueueDepth;
use pipeline::crawls::{Counters, CrawlState};
use pipeline::keys::{Keys, HOST_SHARDS};
use pipeline::store::Op;
use pipeline::{Broker, Store};
use serde::Serialize;

/// How often `--wait-idle` polls.
const POLL: Duration = Duration::from_millis(100);
/// How long everything must look idle before `--wait-idle` believes it:
/// longer than a heartbeat period ([`pipeline::live::HEARTBEAT_EVERY`]),
/// so a message just taken by a worker is seen.
const IDLE_FOR: Duration = Duration::from_millis(700);

#[derive(Args)]
pub struct StatsArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Return once every queue is empty and nothing is in flight (a paused
    /// crawl's tasks wait in their hosts' queues: it returns once that crawl
    /// is resumed and done, or cancelled).
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
pub struct Snapshot {
    queues: Vec<QueueDepth>,
    /// Messages being processed by live workers.
    in_flight: i64,
    /// Fetch tasks waiting in the frontier's host queues for their turn.
    waiting_for_host: i64,
    live_workers: usize,
    /// Consumers on the stages' queues beyond the stage's live workers: a
    /// worker whose heartbeat lapsed (its Redis connection stuck, say)
    /// while it may still hold unacked messages, which `ready` does not
    /// show. Not idle while any.
    unheard_consumers: u64,
    /// Nothing in flight, waiting for its host, ready in a stage's queue
    /// or held by an unheard consumer ([`Snapshot::quiet`]): what
    /// `--wait-idle` waits for (with no counter moving) and tests read.
    idle: bool,
    counters: BTreeMap<String, i64>,
    /// Hosts with the most tasks waiting for their turn.
    busiest_hosts: Vec<(String, i64)>,
    /// Hosts parked after failing again and again, with until when (Unix ms).
    parked_hosts: Vec<(String, i64)>,
    /// Every crawl with its counters, state and page limit.
    pub crawls: Vec<CrawlProgress>,
}

/// One crawl as `crawler crawls` and `crawler stats` show it: its own
/// counters ([`Keys::crawl_stats`]), its state and its limit.
#[derive(Serialize, Clone)]
pub struct CrawlProgress {
    pub crawl: String,
    /// `running`, `paused`, `cancelled`, or `finished-idle` (running, and
    /// every URL released has its final outcome and every page fetched is
    /// stored, or nothing at all is going on in the namespace).
    pub state: &'static str,
    /// URLs released for fetching (the frontier's `seen`).
    pub released: i64,
    pub fetched: i64,
    pub failed: i64,
    pub extracted: i64,
    pub stored: i64,
    pub duplicates: i64,
    pub max_pages: Option<u64>,
    /// URLs with a final fetch outcome (fetched, failed or redirected):
    /// what the progress bar counts...
    pub done: i64,
    /// ...against this: the crawl's `--max-pages`, or the URLs discovered
    /// (released) so far.
    pub of: i64,
}

/// Every crawl of the namespace: those seeded (their settings), those
/// counted, and those paused or cancelled. `namespace_idle`: nothing is
/// queued or in flight at all (every running crawl is then finished).
/// Reads the crawl registry, the control hash and the counters: no scan.
pub async fn crawls(
    store: &Store,
    keys: &Keys,
    counters: &Counters,
    namespace_idle: bool,
) -> anyhow::Result<Vec<CrawlProgress>> {
    let states = pipeline::crawls::read_states(store, keys).await?;
    let specs: BTreeMap<String, Option<pipeline::CrawlSpec>> = store
        .one(Op::HGetAll { key: keys.crawls() })
        .await?
        .pairs()?
        .into_iter()
        .map(|(name, spec)| {
            let spec = spec
                .data()
                .ok()
                .flatten()
                .and_then(|json| serde_json::from_slice(&json).ok());
            (String::from_utf8_lossy(&name).into_owned(), spec)
        })
        .collect();
    let names: std::collections::BTreeSet<&String> = states
        .keys()
        .chain(specs.keys())
        .chain(counters.crawls.keys())
        .collect();
    let empty = BTreeMap::new();
    let mut out = Vec::new();
    for name in names {
        let max_pages = specs.get(name).cloned().flatten().and_then(|s| s.max_pages);
        let c = counters.crawls.get(name).unwrap_or(&empty);
        let get = |k: &str| c.get(k).copied().unwrap_or(0);
        let done = get("fetched") + get("failed") + get("fetch_redirect");
        let settled = get("seen") <= done
            && get("fetched") <= get("extracted")
            && get("extracted") <= get("stored") + get("duplicate");
        let state = match states.get(name).copied().unwrap_or(CrawlState::Running) {
            CrawlState::Running if namespace_idle || settled => "finished-idle",
            other => other.as_str(),
        };
        out.push(CrawlProgress {
            state,
            released: get("seen"),
            fetched: get("fetched"),
            failed: get("failed"),
            extracted: get("extracted"),
            stored: get("stored"),
            duplicates: get("duplicate"),
            max_pages,
            done,
            of: max_pages.map_or(get("seen"), |m| m as i64),
            crawl: name.clone(),
        });
    }
    Ok(out)
}

/// Hosts listed as busiest.
const BUSIEST: usize = 5;

impl Snapshot {
    fn quiet(&self) -> bool {
        self.in_flight == 0
            && self.waiting_for_host == 0
            && self.unheard_consumers == 0
            && self
                .queues
                .iter()
                .filter(|q| !q.queue.ends_with(".dead"))
                .all(|q| q.ready == 0)
    }
}

/// One reading of the namespace, from indexes only (O(shards + live
/// workers + crawls), whatever else the store holds).
pub async fn snapshot(
    store: &Store,
    session: &pipeline::broker::Session,
    keys: &Keys,
) -> anyhow::Result<Snapshot> {
    let queues = session.queue_depths().await?;
    let live = pipeline::live::read(store, keys).await?;
    let in_flight = live.iter().map(|(_, n)| n).sum();
    let unheard_consumers = unheard_consumers(&queues, &live, keys.namespace());
    let read = pipeline::crawls::read_counters(store, keys).await?;
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
    counters.extend(read.total.clone());
    let waiting_for_host = frontier::release::waiting(store, keys).await?;
    // The busiest hosts (each shard's few longest queues) and the parked
    // ones, from the shards' indexes.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let ops: Vec<Op> = (0..HOST_SHARDS)
        .flat_map(|shard| {
            [
                Op::ZRevRange {
                    key: keys.host_lengths(shard),
                    start: 0,
                    stop: BUSIEST as i64 - 1,
                },
                Op::ZRangeByScore {
                    key: keys.parked(shard),
                    min: now_ms,
                    max: i64::MAX,
                    limit: Some(BUSIEST as u32),
                },
            ]
        })
        .collect();
    let replies = store.exec(&ops).await?;
    let mut busiest: Vec<(String, i64)> = Vec::new();
    let mut parked_hosts: Vec<(String, i64)> = Vec::new();
    for pair in replies.chunks(2) {
        if let [lengths, parked] = pair {
            busiest.extend(lengths.int_pairs()?);
            parked_hosts.extend(parked.int_pairs()?);
        }
    }
    busiest.sort_by_key(|b| std::cmp::Reverse(b.1));
    busiest.truncate(BUSIEST);
    parked_hosts.sort_by_key(|p| p.1);
    let mut s = Snapshot {
        queues,
        in_flight,
        waiting_for_host,
        live_workers: live.len(),
        unheard_consumers,
        idle: false,
        counters,
        busiest_hosts: busiest,
        parked_hosts,
        crawls: Vec::new(),
    };
    s.idle = s.quiet();
    s.crawls = crawls(store, keys, &read, s.idle).await?;
    Ok(s)
}

/// Consumers on each stage's queue beyond the live workers of that stage
/// ([`pipeline::live::stage_of`]), summed.
fn unheard_consumers(
    queues: &[pipeline::broker::QueueDepth],
    live: &[(String, i64)],
    namespace: &str,
) -> u64 {
    pipeline::Queue::ALL
        .iter()
        .map(|q| {
            let name = q.name(namespace);
            let consumers = queues
                .iter()
                .find(|d| d.queue == name)
                .map_or(0, |d| d.consumers);
            let heard = live
                .iter()
                .filter(|(w, _)| pipeline::live::stage_of(w) == Some(q.stage()))
                .count() as u64;
            consumers.saturating_sub(heard)
        })
        .sum()
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
    for c in &s.crawls {
        println!("crawl {:<16} {:<13} {}", c.crawl, c.state, progress(c));
    }
    Ok(())
}

/// A crawl's bar and counts: `[###...]  40% 80/200 pages` (against its
/// `--max-pages`) or `... 80/120 discovered`.
fn progress(c: &CrawlProgress) -> String {
    let against = if c.max_pages.is_some() {
        "pages"
    } else {
        "discovered"
    };
    format!(
        "{} {}/{} {against}  fetched {}  stored {}  duplicates {}  failed {}",
        bar(c.done, c.of.max(0) as u64),
        c.done,
        c.of,
        c.fetched,
        c.stored,
        c.duplicates,
        c.failed
    )
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
        let old = prev.and_then(|p| p.crawls.iter().find(|o| o.crawl == c.crawl));
        let per_s =
            |now: i64, then: Option<i64>| (now - then.unwrap_or(now)) as f64 / secs.max(1e-3);
        println!(
            "crawl {:<16} {:<13} {}  ({:.1} fetched/s, {:.1} stored/s)",
            c.crawl,
            c.state,
            progress(c),
            per_s(c.fetched, old.map(|o| o.fetched)),
            per_s(
                c.stored + c.duplicates,
                old.map(|o| o.stored + o.duplicates)
            ),
        );
    }
}

/// Redis and a RabbitMQ session, for reading counters and queue depths;
/// with `--state`, the disk store and the bus kept in it.
pub async fn connect(
    service: &pipeline::ServiceConfig,
) -> anyhow::Result<(Store, pipeline::broker::Session)> {
    let store = service.store().await.context("connecting to Redis")?;
    let broker = match &store {
        Store::Disk(disk) => Broker::Memory(pipeline::broker::MemoryBus::persistent(disk.clone())?),
        _ => service.broker(),
    };
    let session = broker.open().await.context("connecting to RabbitMQ")?;
    Ok((store, session))
}

/// The crawls of a snapshot that are paused.
fn paused_crawls(s: &Snapshot) -> Vec<String> {
    s.crawls
        .iter()
        .filter(|c| c.state == "paused")
        .map(|c| c.crawl.clone())
        .collect()
}

/// What `--wait-idle` says about paused crawls: their tasks keep it waiting.
fn paused_hint(paused: &[String]) -> String {
    format!(
        "paused: {}; their tasks wait in the hosts' queues until `crawler resume --crawl NAME` (or `crawler cancel --crawl NAME`)",
        paused.join(", ")
    )
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
    let mut idle_since: Option<(Instant, BTreeMap<String, i64>)> = None;
    let mut conns = None;
    let mut last: Option<Snapshot> = None;
    let mut down: Option<String> = None;
    let mut told_paused = false;
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
                    let paused = paused_crawls(&s);
                    if !paused.is_empty() && !told_paused {
                        eprintln!("{}", paused_hint(&paused));
                        told_paused = true;
                    }
                    // Idle at every poll for IDLE_FOR, and no counter moved
                    // meanwhile: a worker reports what it holds only at its
                    // heartbeat, so a message taken and handled between
                    // two heartbeats is seen by nothing but the counter it
                    // bumps.
                    if s.idle {
                        match &idle_since {
                            Some((since, counters)) if *counters == s.counters => {
                                if since.elapsed() >= IDLE_FOR {
                                    return print(&s, json);
                                }
                            }
                            _ => idle_since = Some((Instant::now(), s.counters.clone())),
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
            let paused = last.as_ref().map(paused_crawls).unwrap_or_default();
            match &down {
                Some(e) => {
                    anyhow::bail!("not idle after {timeout_secs} s (services unreachable: {e})")
                }
                None if !paused.is_empty() => {
                    anyhow::bail!("not idle after {timeout_secs} s: {}", paused_hint(&paused))
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

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::broker::QueueDepth;

    fn depth(queue: &str, consumers: u64) -> QueueDepth {
        QueueDepth {
            queue: queue.into(),
            ready: 0,
            consumers,
        }
    }

    #[test]
    fn a_consumer_without_a_live_worker_of_its_stage_is_unheard() {
        let queues = vec![
            depth("ns.frontier", 1),
            depth("ns.contentseen", 2),
            depth("ns.contentseen.dead", 3),
            depth("ns.fetch", 1),
        ];
        let live = |ids: &[&str]| -> Vec<(String, i64)> {
            ids.iter().map(|w| (w.to_string(), 0)).collect()
        };
        // Both contentseen workers heard, and a killed fetcher's heartbeat
        // not yet expired beside its successor's: nothing unheard.
        let all = live(&[
            "frontier:h:1",
            "contentseen:h:2",
            "contentseen:h:3",
            "fetch:h:4",
            "fetch:h:5",
        ]);
        assert_eq!(unheard_consumers(&queues, &all, "ns"), 0);
        // One contentseen's heartbeat lapsed while its consumer stays.
        let lapsed = live(&["frontier:h:1", "contentseen:h:2", "fetch:h:4"]);
        assert_eq!(unheard_consumers(&queues, &lapsed, "ns"), 1);
        // Another namespace's queues count nothing here.
        assert_eq!(unheard_consumers(&queues, &[], "other"), 0);
    }
}
