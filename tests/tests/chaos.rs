//! Nothing lost under faults: one crawl of the test site by the real worker
//! binaries while a seeded random schedule kills every worker kind with
//! SIGKILL again and again (contentseen most often), restarts RabbitMQ once
//! and kills Redis once (restarted from its append-only file).
//!
//! The test starts its own RabbitMQ node and Redis on other ports
//! (`crawler_tests::services`), so the shared services are never disturbed.
//! If they cannot be started the test fails: it never passes without having
//! run.
//!
//! After the schedule it asserts that every in-scope page is stored exactly
//! once, that exported lines = stored documents = counters, that every
//! reachable URL has a final fetch record and the fetch counters agree with
//! the records, that no message went to a dead-letter queue, and that the
//! crawl goes idle within a bound after the last fault, with no stall (no
//! progress while not idle) longer than 10 s after it.
//!
//! `nothing_lost_on_clusters` runs the same crawl and worker faults on a
//! Redis Cluster of its own (3 masters, 3 replicas) and a 3-node RabbitMQ
//! cluster, with quorum queues and `CRAWLER_REDIS_WAIT=1`: its Redis fault
//! kills a master (SIGKILL), waits until its replica took over, and starts
//! the old master again (it rejoins as a replica); its broker fault kills
//! or stops one RabbitMQ node and starts it again. Which master and which
//! node follow from the seed.
//!
//! Settings (environment):
//! - `CHAOS_SEEDS=1,2,3`: run these seeds; else `CHAOS_RUNS=N` (default 2;
//!   `CHAOS_CLUSTER_RUNS`, default 1, on the clusters) seeds from a
//!   random base. The seeds are printed; a failure names its
//!   seed (`CHAOS_SEEDS=<seed>` reproduces its schedule).
//! - `CHAOS_WINDOW_SECS` (default 24): the span the faults are spread over.
//! - `CHAOS_RESPONSE_DELAY_MS` (default 300): the site's delay per response,
//!   and `CHAOS_FETCH_CONCURRENCY` (default 4): the fetcher's concurrency.
//!   Together they make the crawl last about 25 s, so that the faults land
//!   while it runs, with a few fetches in flight at any moment.
//! - `CHAOS_CRAWL_DELAY_MS` (default 0): the crawl's politeness delay.
//! - `CHAOS_IDLE_BOUND_SECS` (default 60), `CHAOS_STALL_BOUND_SECS`
//!   (default 10): the bounds after the last fault.
//! - `CHAOS_NO_FAULTS=1`: the same crawl without faults (to calibrate).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crawler_tests::chaos::{env_u64, schedule, seeds, Action, Lane, Step, INSTANCES};
use crawler_tests::services::{run_bounded, RabbitCluster, RabbitNode, RedisCluster, RedisServer};
use crawler_tests::{
    document_records, expected_documents, export_log_length, fetch_records, is_final_failure,
    parse_documents, TestEnv, Worker,
};
use pipeline::keys::Keys;
use testsite::{serve, Site, SiteConfig};

/// Deeper than the site (see crawl_end_to_end.rs).
const MAX_DEPTH: usize = 5;
/// How long everything must look idle (as `crawler stats --wait-idle`).
const IDLE_FOR: Duration = Duration::from_secs(2);
/// How often the monitor samples `crawler stats --json`.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);
/// Give up waiting for idle this long after the last fault.
const IDLE_TIMEOUT: Duration = Duration::from_secs(240);

struct Settings {
    window: Duration,
    crawl_delay_ms: u64,
    response_delay: Duration,
    fetch_concurrency: u64,
    idle_bound: Duration,
    stall_bound: Duration,
    faults: bool,
}

impl Settings {
    fn from_env() -> Settings {
        Settings {
            window: Duration::from_secs(env_u64("CHAOS_WINDOW_SECS", 24).max(8)),
            crawl_delay_ms: env_u64("CHAOS_CRAWL_DELAY_MS", 0),
            response_delay: Duration::from_millis(env_u64("CHAOS_RESPONSE_DELAY_MS", 300)),
            fetch_concurrency: env_u64("CHAOS_FETCH_CONCURRENCY", 4).max(1),
            idle_bound: Duration::from_secs(env_u64("CHAOS_IDLE_BOUND_SECS", 60)),
            stall_bound: Duration::from_secs(env_u64("CHAOS_STALL_BOUND_SECS", 10)),
            faults: std::env::var_os("CHAOS_NO_FAULTS").is_none(),
        }
    }
}

/// What a lane did: when (since the crawl was seeded), what, and how it went.
#[derive(Debug, Clone)]
struct Done {
    at: Duration,
    ended: Duration,
    what: String,
    error: Option<String>,
}

/// One sample of `crawler stats --json`.
#[derive(Clone)]
struct Sample {
    at: Duration,
    stats: Result<serde_json::Value, String>,
    /// The crawl is waiting for its host's turn, legitimately: nothing ready
    /// or in flight, nothing being released, and every waiting task in the
    /// host's queue, whose turn is in the future (a retry's backoff, a
    /// Retry-After). Not a stall.
    host_turn_ahead: bool,
}

/// Whether the crawl only waits for the host's next turn (see
/// [`Sample::host_turn_ahead`]), read from Redis.
fn host_turn_ahead(
    env: &TestEnv,
    keys: &Keys,
    origin: &str,
    stats: &serde_json::Value,
) -> Result<bool, String> {
    let waiting = stats["waiting_for_host"].as_i64().unwrap_or(-1);
    if stats["in_flight"].as_i64() != Some(0) || waiting <= 0 || is_idle(stats) {
        return Ok(false);
    }
    let ready_elsewhere = stats["queues"].as_array().is_none_or(|qs| {
        qs.iter().any(|q| {
            !q["queue"].as_str().is_some_and(|n| n.ends_with(".dead"))
                && q["ready"].as_u64() != Some(0)
        })
    });
    if ready_elsewhere {
        return Ok(false);
    }
    let mut con: Box<dyn redis::ConnectionLike> = match &env.redis_cluster {
        Some(seeds) => Box::new(
            redis::cluster::ClusterClient::builder(pipeline::config::url_list(seeds))
                .connection_timeout(Duration::from_secs(2))
                .build()
                .and_then(|c| c.get_connection())
                .map_err(|e| e.to_string())?,
        ),
        None => Box::new(
            redis::Client::open(env.redis_url.as_str())
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
                .map_err(|e| e.to_string())?,
        ),
    };
    let con = con.as_mut();
    let mut releasing = 0i64;
    for shard in 0..pipeline::keys::HOST_SHARDS {
        let n: i64 = redis::cmd("ZCARD")
            .arg(keys.releasing(shard))
            .query(con)
            .map_err(|e| e.to_string())?;
        releasing += n;
    }
    let queued: i64 = redis::cmd("LLEN")
        .arg(keys.host_queue(origin))
        .query(con)
        .map_err(|e| e.to_string())?;
    let turn: Option<f64> = redis::cmd("ZSCORE")
        .arg(keys.schedule(pipeline::keys::host_shard(origin)))
        .arg(origin)
        .query(con)
        .map_err(|e| e.to_string())?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as f64)
        .unwrap_or(0.0);
    Ok(releasing == 0 && queued == waiting && turn.is_some_and(|t| t > now_ms))
}

/// Idle as `crawler stats` says it (its `idle`: nothing in flight, waiting
/// for its host, ready in a stage's queue or held by an unheard consumer).
fn is_idle(s: &serde_json::Value) -> bool {
    s["idle"].as_bool() == Some(true)
}

/// What changes while the crawl makes progress: counters, queue depths,
/// messages in flight, tasks waiting for their host.
fn progress_signature(s: &serde_json::Value) -> String {
    format!(
        "{}|{}|{}|{}",
        s["counters"], s["queues"], s["in_flight"], s["waiting_for_host"]
    )
}

fn counter(s: &serde_json::Value, name: &str) -> i64 {
    s["counters"][name].as_i64().unwrap_or(0)
}

/// A one-line summary of a sample.
fn brief(s: &Sample) -> String {
    match &s.stats {
        Err(e) => format!(
            "{:>6.1}s  unreachable: {}",
            s.at.as_secs_f64(),
            first_line(e)
        ),
        Ok(v) => {
            let queues: Vec<String> = v["queues"]
                .as_array()
                .map(|qs| {
                    qs.iter()
                        .map(|q| {
                            let name = q["queue"].as_str().unwrap_or("?");
                            let short = name.rsplit('.').next().unwrap_or(name);
                            let short = if name.ends_with(".dead") {
                                format!("{}.dead", name.split('.').rev().nth(1).unwrap_or("?"))
                            } else {
                                short.to_string()
                            };
                            format!("{short}={}/{}", q["ready"], q["consumers"])
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "{:>6.1}s  fetched {} failed {} extracted {} stored {} dup {} | in flight {} waiting {}{} live {} unheard {} | {}",
                s.at.as_secs_f64(),
                counter(v, "fetched"),
                counter(v, "failed"),
                counter(v, "extracted"),
                counter(v, "stored"),
                counter(v, "duplicate"),
                v["in_flight"],
                v["waiting_for_host"],
                if s.host_turn_ahead { " (turn ahead)" } else { "" },
                v["live_workers"],
                v["unheard_consumers"],
                queues.join(" ")
            )
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// Samples `crawler stats --json` until `stop`.
fn monitor(env: &TestEnv, origin: &str, t0: Instant, stop: &AtomicBool, out: &Mutex<Vec<Sample>>) {
    let keys = Keys::new(&env.namespace);
    while !stop.load(Ordering::SeqCst) {
        let next = Instant::now() + SAMPLE_EVERY;
        let at = t0.elapsed();
        let stats = run_bounded(
            env.command("crawler").args(["stats", "--json"]),
            Duration::from_secs(10),
        )
        .and_then(|o| {
            if o.success {
                serde_json::from_str(o.stdout.trim()).map_err(|e| format!("{e}: {}", o.stdout))
            } else {
                Err(o.stderr)
            }
        });
        let host_turn_ahead = stats
            .as_ref()
            .is_ok_and(|s| host_turn_ahead(env, &keys, origin, s).unwrap_or(false));
        out.lock().unwrap().push(Sample {
            at,
            stats,
            host_turn_ahead,
        });
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}

/// The measured end of the crawl: when it went idle (the start of the idle
/// run that lasted [`IDLE_FOR`]), and the longest stall after the last fault.
struct Ending {
    idle_at: Option<Duration>,
    /// The longest span after the last fault with no change in counters,
    /// queues or in-flight counts while the crawl was not idle; and when it
    /// began.
    stall: Duration,
    stall_from: Duration,
    /// The longest span after the last fault spent waiting for the host's
    /// turn (not counted as a stall).
    turn_wait: Duration,
    /// All the time after the last fault, before idle, in which every
    /// remaining task waited for its host's turn (a backoff, a Retry-After).
    /// Politeness sets it, not recovery, so the idle bound leaves it out: a
    /// failing fetch that a kill made run twice (it was in flight) adds one
    /// to the host's failure streak, and each failure doubles the host's
    /// delay (16, 32, 64 s at the end of a crawl whose last pages fail).
    turn_total: Duration,
    last_stats: Option<serde_json::Value>,
}

fn ending(samples: &[Sample], last_fault: Duration) -> Ending {
    let after: Vec<&Sample> = samples.iter().filter(|s| s.at >= last_fault).collect();
    let mut idle_at = None;
    let mut run_start: Option<Duration> = None;
    for s in &after {
        match &s.stats {
            Ok(v) if is_idle(v) => {
                let since = *run_start.get_or_insert(s.at);
                if s.at - since >= IDLE_FOR {
                    idle_at = Some(since);
                    break;
                }
            }
            _ => run_start = None,
        }
    }
    let end = idle_at.unwrap_or(Duration::MAX);
    let mut stall = Duration::ZERO;
    let mut stall_from = last_fault;
    let mut since = last_fault;
    let mut prev: Option<String> = None;
    let mut turn_wait = Duration::ZERO;
    let mut turn_total = Duration::ZERO;
    let mut turn_since: Option<Duration> = None;
    let mut last_at: Option<(Duration, bool)> = None;
    for s in after.iter().filter(|s| s.at <= end) {
        if let Some((at, true)) = last_at {
            turn_total += s.at - at;
        }
        last_at = Some((s.at, s.host_turn_ahead));
        if s.host_turn_ahead {
            let since = *turn_since.get_or_insert(s.at);
            turn_wait = turn_wait.max(s.at - since);
        } else {
            turn_since = None;
        }
        let sig = match &s.stats {
            Ok(v) if is_idle(v) || s.host_turn_ahead => None,
            Ok(v) => Some(progress_signature(v)),
            Err(_) => Some("unreachable".to_string()),
        };
        match (&sig, &prev) {
            (Some(a), Some(b)) if a == b => {}
            _ => since = s.at,
        }
        if sig.is_some() && s.at - since > stall {
            stall = s.at - since;
            stall_from = since;
        }
        prev = sig;
    }
    Ending {
        idle_at,
        stall,
        stall_from,
        turn_wait,
        turn_total,
        last_stats: after
            .iter()
            .rev()
            .find_map(|s| s.stats.as_ref().ok().cloned()),
    }
}

/// The warnings and errors in the workers' logs: per file, how many, and the
/// last few.
fn log_digest(env: &TestEnv, last: usize) -> String {
    let mut files: Vec<_> = std::fs::read_dir(env.log_dir())
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = String::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let bad: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("panicked"))
            .collect();
        if bad.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "  {} ({} warnings/errors):\n",
            f.file_name().unwrap_or_default().to_string_lossy(),
            bad.len()
        ));
        for l in &bad[bad.len().saturating_sub(last)..] {
            let l: String = l.chars().take(400).collect();
            out.push_str(&format!("    {l}\n"));
        }
    }
    out
}

/// Everything one seed's run found wrong (empty: it passed), with figures.
struct RunReport {
    seed: u64,
    problems: Vec<String>,
    figures: String,
}

/// The services a run crawls on, and how their faults are done.
enum Services {
    /// One RabbitMQ node and one Redis, restarted in place.
    Single {
        rabbit: RabbitNode,
        redis: RedisServer,
    },
    /// A 3-node RabbitMQ cluster and a 3+3 Redis Cluster.
    Clusters {
        rabbit: RabbitCluster,
        redis: RedisCluster,
    },
}

impl Services {
    fn describe(&self) -> String {
        match self {
            Services::Single { rabbit, redis } => format!(
                "RabbitMQ {} on {}, Redis on {}",
                rabbit.name, rabbit.port, redis.port
            ),
            Services::Clusters { rabbit, redis } => format!(
                "RabbitMQ cluster {}, Redis Cluster {}",
                rabbit
                    .nodes
                    .iter()
                    .map(|n| format!("{}:{}", n.name, n.port))
                    .collect::<Vec<_>>()
                    .join(" "),
                redis.seeds()
            ),
        }
    }

    /// A namespace on these services (quorum queues, and writes that wait
    /// for a replica, on the clusters).
    fn env(&self) -> TestEnv {
        match self {
            Services::Single { rabbit, redis } => {
                TestEnv::with_services("chaos", &rabbit.amqp_url(), &redis.url())
            }
            Services::Clusters { rabbit, redis } => {
                TestEnv::with_services("chaosc", &rabbit.amqp_urls(), "redis://unused/")
                    .on_redis_cluster(&redis.seeds())
                    .with_queue_type(pipeline::topology::QueueType::Quorum)
                    .with_var("CRAWLER_REDIS_WAIT", "1")
            }
        }
    }

    /// The broker's and Redis's sides, apart (their fault lanes run side
    /// by side).
    fn sides(&mut self) -> (BrokerSide<'_>, RedisSide<'_>) {
        match self {
            Services::Single { rabbit, redis } => {
                (BrokerSide::Node(rabbit), RedisSide::Node(redis))
            }
            Services::Clusters { rabbit, redis } => {
                (BrokerSide::Cluster(rabbit), RedisSide::Cluster(redis))
            }
        }
    }
}

enum BrokerSide<'a> {
    Node(&'a RabbitNode),
    Cluster(&'a RabbitCluster),
}

impl BrokerSide<'_> {
    /// The broker's fault `a`; on the cluster, done to node `pick % 3`.
    fn fault(&self, a: Action, pick: usize) -> Result<String, String> {
        let node = match self {
            BrokerSide::Node(rabbit) => rabbit,
            BrokerSide::Cluster(rabbit) => &rabbit.nodes[pick % rabbit.nodes.len()],
        };
        let note = match self {
            BrokerSide::Node(_) => String::new(),
            BrokerSide::Cluster(_) => format!(" (node {} on port {})", node.name, node.port),
        };
        match a {
            Action::BrokerStopApp => node.stop_app(),
            Action::BrokerStartApp => node.start_app().map(|_| ()),
            Action::BrokerKill => node.kill9(),
            Action::BrokerLaunch => node.launch().map(|_| ()),
            _ => unreachable!(),
        }
        .map(|()| note)
    }
}

enum RedisSide<'a> {
    Node(&'a mut RedisServer),
    Cluster(&'a mut RedisCluster),
}

impl RedisSide<'_> {
    /// Redis's fault `a`; on the cluster, to master `pick % 3` (a relaunch
    /// waits for the failover first).
    fn fault(&mut self, a: Action, pick: usize) -> Result<String, String> {
        match (self, a) {
            (RedisSide::Node(redis), Action::RedisKill) => {
                let was_running = redis.is_running();
                redis.kill9();
                if was_running {
                    Ok(String::new())
                } else {
                    Err("redis had already exited".into())
                }
            }
            (RedisSide::Node(redis), Action::RedisLaunch) => redis.launch().map(|_| String::new()),
            (RedisSide::Cluster(redis), Action::RedisKill) => redis
                .kill_master(pick)
                .map(|port| format!(" (master on port {port})")),
            (RedisSide::Cluster(redis), Action::RedisLaunch) => redis.relaunch_killed().map(|t| {
                format!(
                    " (failed over and whole again after {:.1}s)",
                    t.as_secs_f64()
                )
            }),
            _ => unreachable!(),
        }
    }
}

/// Runs the crawl of one seed under its schedule and checks the outcome.
fn run_seed(
    rt: &tokio::runtime::Runtime,
    services: &mut Services,
    seed: u64,
    settings: &Settings,
) -> RunReport {
    let started = Instant::now();
    let mut problems: Vec<String> = Vec::new();
    let site = Site::generate(&SiteConfig {
        articles: 100,
        zh_articles: 10,
        response_delay: settings.response_delay,
        ..SiteConfig::default()
    });
    let server = rt
        .block_on(serve(site, "127.0.0.1:0".parse().unwrap()))
        .expect("serve the test site");
    let base = server.base_url();
    let env = services.env();
    let steps = if settings.faults {
        schedule(seed, settings.window)
    } else {
        Vec::new()
    };
    println!(
        "[seed {seed}] namespace {}, logs {}, {} steps",
        env.namespace,
        env.log_dir().display(),
        steps.len()
    );
    let fetch_concurrency = settings.fetch_concurrency.to_string();
    let start = |i: usize| -> Worker {
        match INSTANCES[i] {
            "fetcher" => env.start("fetcher", &["--concurrency", &fetch_concurrency]),
            kind => env.start(kind, &[]),
        }
    };
    let mut workers: Vec<Worker> = (0..INSTANCES.len()).map(start).collect();
    env.crawler_ok(&[
        "seed",
        "--crawl",
        "chaos",
        "--max-depth",
        &MAX_DEPTH.to_string(),
        "--delay-ms",
        &settings.crawl_delay_ms.to_string(),
        &server.url("/"),
    ]);
    let t0 = Instant::now();
    let stop = AtomicBool::new(false);
    let samples = Mutex::new(Vec::new());

    let (done, last_fault, ending) = std::thread::scope(|scope| {
        let mon = scope.spawn(|| monitor(&env, &base, t0, &stop, &samples));
        let lane = |lane: Lane| -> Vec<Step> {
            steps.iter().filter(|s| s.lane == lane).cloned().collect()
        };
        let (worker_steps, broker_steps, redis_steps) =
            (lane(Lane::Workers), lane(Lane::Broker), lane(Lane::Redis));
        let start = &start;
        let workers = &mut workers;
        let w = scope.spawn(move || {
            run_lane(t0, &worker_steps, |a| match a {
                Action::Kill(i) => {
                    let was_running = workers[i].is_running();
                    workers[i].kill();
                    if was_running {
                        Ok(())
                    } else {
                        Err(format!(
                            "{} (instance {i}) had already exited",
                            INSTANCES[i]
                        ))
                    }
                }
                Action::Start(i) => {
                    workers[i] = start(i);
                    Ok(())
                }
                _ => unreachable!(),
            })
        });
        let (broker, mut redis) = services.sides();
        let (broker_pick, redis_pick) = ((seed % 3) as usize, ((seed / 3) % 3) as usize);
        let b = scope
            .spawn(move || run_lane_noting(t0, &broker_steps, |a| broker.fault(a, broker_pick)));
        let r =
            scope.spawn(move || run_lane_noting(t0, &redis_steps, |a| redis.fault(a, redis_pick)));
        let mut done: Vec<Done> = Vec::new();
        done.extend(w.join().expect("a fault lane panicked"));
        done.extend(b.join().expect("a fault lane panicked"));
        done.extend(r.join().expect("a fault lane panicked"));
        done.sort_by_key(|d| d.at);
        let last_fault = done.iter().map(|d| d.ended).max().unwrap_or_default();
        // Wait for the crawl to go idle after the last fault.
        let deadline = last_fault + IDLE_TIMEOUT;
        let end = loop {
            std::thread::sleep(SAMPLE_EVERY);
            let e = ending(&samples.lock().unwrap(), last_fault);
            if e.idle_at.is_some() || t0.elapsed() > deadline {
                break e;
            }
        };
        stop.store(true, Ordering::SeqCst);
        mon.join().expect("monitor panicked");
        (done, last_fault, end)
    });

    let samples = samples.into_inner().unwrap();
    let faults: Vec<&Done> = done.iter().collect();
    for d in &faults {
        if let Some(e) = &d.error {
            problems.push(format!(
                "fault step {} at {:.1}s: {e}",
                d.what,
                d.at.as_secs_f64()
            ));
        }
    }
    for (i, w) in workers.iter_mut().enumerate() {
        if !w.is_running() {
            problems.push(format!(
                "{} (instance {i}) exited on its own (see its log)",
                INSTANCES[i]
            ));
        }
    }
    let kills: BTreeMap<&str, usize> = done
        .iter()
        .filter(|d| d.what.starts_with("kill -9 ") && d.error.is_none())
        .fold(BTreeMap::new(), |mut m, d| {
            *m.entry(d.what.split_whitespace().nth(2).unwrap_or("?"))
                .or_default() += 1;
            m
        });
    if settings.faults {
        for kind in ["frontier", "fetcher", "extractor", "contentseen"] {
            let n = kills.get(kind).copied().unwrap_or(0);
            let want = if kind == "contentseen" { 6 } else { 3 };
            if n < want {
                problems.push(format!("only {n} kills of {kind} landed (want {want})"));
            }
        }
    }

    // The crawl went idle in time, and nothing stalled after the last fault.
    let idle_after = ending.idle_at.map(|t| t.saturating_sub(last_fault));
    match idle_after {
        None => problems.push(format!(
            "not idle {}s after the last fault (at {:.1}s)",
            IDLE_TIMEOUT.as_secs(),
            last_fault.as_secs_f64()
        )),
        Some(t) if t.saturating_sub(ending.turn_total) > settings.idle_bound => {
            problems.push(format!(
                "idle only {:.1}s after the last fault, {:.1}s of it not waiting for the host's turn (bound {}s)",
                t.as_secs_f64(),
                t.saturating_sub(ending.turn_total).as_secs_f64(),
                settings.idle_bound.as_secs()
            ))
        }
        Some(_) => {}
    }
    if ending.stall > settings.stall_bound {
        problems.push(format!(
            "stalled {:.1}s (no progress while not idle) from {:.1}s, after the last fault at {:.1}s (bound {}s)",
            ending.stall.as_secs_f64(),
            ending.stall_from.as_secs_f64(),
            last_fault.as_secs_f64(),
            settings.stall_bound.as_secs()
        ));
    }
    let crawl_secs = ending.idle_at.unwrap_or(t0.elapsed()).as_secs_f64();

    // What was stored, exported and counted.
    let site = server.site();
    let reachable = site.reachable("/", MAX_DEPTH);
    let want: BTreeSet<String> = expected_documents(site, MAX_DEPTH)
        .into_iter()
        .map(|p| format!("{base}{p}"))
        .collect();
    let export = env.crawler(&["export"]);
    let export_text = String::from_utf8_lossy(&export.stdout).into_owned();
    if !export.status.success() {
        problems.push(format!(
            "crawler export failed: {}",
            String::from_utf8_lossy(&export.stderr)
        ));
    }
    let docs = parse_documents(&export_text);
    let mut per_url: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &docs {
        *per_url.entry(d.url.as_str()).or_default() += 1;
    }
    let twice: Vec<String> = per_url
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(u, n)| format!("{u} ×{n}"))
        .collect();
    some_problems(&mut problems, &twice, "URLs exported more than once");
    let stored: BTreeSet<String> = per_url.keys().map(|u| u.to_string()).collect();
    let missing: Vec<&String> = want.difference(&stored).collect();
    let extra: Vec<&String> = stored.difference(&want).collect();
    some_problems(
        &mut problems,
        &missing,
        &format!("of {} in-scope pages not stored", want.len()),
    );
    some_problems(&mut problems, &extra, "stored documents not expected");

    let keys = Keys::new(&env.namespace);
    let (doc_keys, log_len, records) = rt.block_on(async {
        let store = env.store().await;
        let doc_keys = document_records(&store, &env.namespace).await;
        let log_len = export_log_length(&store, &keys).await;
        let records = fetch_records(&store, &env.namespace).await;
        (doc_keys, log_len, records)
    });
    let stats: serde_json::Value = match env.crawler(&["stats", "--json"]) {
        o if o.status.success() => {
            serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
        }
        o => {
            problems.push(format!(
                "crawler stats failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
            serde_json::Value::Null
        }
    };
    let c = |k: &str| counter(&stats, k);
    let lines = docs.len() as i64;
    if !(lines == doc_keys as i64 && lines == log_len && lines == c("stored") + c("duplicate")) {
        problems.push(format!(
            "exported lines {lines}, document keys {doc_keys}, document log {log_len}, counters stored {} + duplicate {} = {}",
            c("stored"),
            c("duplicate"),
            c("stored") + c("duplicate")
        ));
    }
    let ok_records = records
        .values()
        .filter(|r| r["outcome"].as_str() == Some("ok"))
        .count() as i64;
    let failed_records = records.values().filter(|r| is_final_failure(r)).count() as i64;
    if c("fetched") != ok_records || c("fetched") != lines {
        problems.push(format!(
            "counter fetched {} but {ok_records} fetch records say ok and {lines} documents are exported",
            c("fetched")
        ));
    }
    if c("failed") != failed_records {
        problems.push(format!(
            "counter failed {} but {failed_records} fetch records are final failures",
            c("failed")
        ));
    }
    if c("extracted") != lines {
        problems.push(format!(
            "counter extracted {} but {lines} documents are exported",
            c("extracted")
        ));
    }
    let no_record: Vec<String> = reachable
        .keys()
        .map(|p| format!("{base}{p}"))
        .filter(|u| !records.contains_key(&format!("{:016x}", pipeline::keys::url_hash(u))))
        .collect();
    some_problems(
        &mut problems,
        &no_record,
        &format!("of {} reachable URLs have no fetch record", reachable.len()),
    );
    let pending: Vec<String> = records
        .iter()
        .filter(|(_, r)| r["will_retry"].as_bool() != Some(false))
        .map(|(u, r)| format!("{u} {} attempt {}", r["outcome"], r["attempt"]))
        .collect();
    some_problems(
        &mut problems,
        &pending,
        "fetch records still wait for a retry that never came",
    );
    if let Some(qs) = stats["queues"].as_array() {
        for q in qs {
            let name = q["queue"].as_str().unwrap_or("");
            if name.ends_with(".dead") && q["ready"].as_u64().unwrap_or(0) > 0 {
                problems.push(format!("{} messages in {name}", q["ready"]));
            }
        }
    }

    // What the site saw: every in-scope page asked for, nothing else.
    let mut requests: HashMap<String, usize> = HashMap::new();
    for r in server.requests() {
        let host = r.host.as_deref().unwrap_or("");
        if !host.starts_with("127.0.0.1") || r.path.starts_with("/private/") {
            problems.push(format!("out of scope request: {host} {}", r.path));
        }
        *requests.entry(r.path.clone()).or_default() += 1;
    }
    let unasked: Vec<&String> = reachable
        .keys()
        .filter(|p| !requests.contains_key(*p))
        .collect();
    some_problems(&mut problems, &unasked, "reachable pages never requested");
    let total_requests: usize = requests.values().sum();

    let mut figures = format!(
        "[seed {seed}] {} in-scope pages ({} reachable URLs), {} stored, {total_requests} requests; crawl idle at {crawl_secs:.1}s; last fault ended at {:.1}s; idle {} after it; longest stall after it {:.1}s (from {:.1}s), longest wait for the host's turn {:.1}s ({:.1}s in all); kills {kills:?}; run took {:.1}s\n",
        want.len(),
        reachable.len(),
        docs.len(),
        last_fault.as_secs_f64(),
        idle_after.map_or("never".into(), |t| format!("{:.1}s", t.as_secs_f64())),
        ending.stall.as_secs_f64(),
        ending.stall_from.as_secs_f64(),
        ending.turn_wait.as_secs_f64(),
        ending.turn_total.as_secs_f64(),
        started.elapsed().as_secs_f64(),
    );
    figures.push_str(&format!(
        "[seed {seed}] counters {}\n",
        ending
            .last_stats
            .as_ref()
            .map_or("?".into(), |s| s["counters"].to_string())
    ));
    figures.push_str("  faults:\n");
    for d in &done {
        figures.push_str(&format!(
            "    {:>6.1}s..{:>5.1}s {}{}\n",
            d.at.as_secs_f64(),
            d.ended.as_secs_f64(),
            d.what,
            d.error
                .as_ref()
                .map_or(String::new(), |e| format!("  FAILED: {e}"))
        ));
    }
    figures.push_str("  progress (every 2 s):\n");
    // Every 2 s, and each change between reachable and unreachable.
    let mut next = Duration::ZERO;
    let mut was_down = false;
    for s in &samples {
        let down = s.stats.is_err();
        if s.at >= next || down != was_down {
            figures.push_str(&format!("    {}\n", brief(s)));
            next = s.at + Duration::from_secs(2);
        }
        was_down = down;
    }
    if !problems.is_empty() {
        figures.push_str(&format!(
            "  worker logs ({}):\n{}",
            env.log_dir().display(),
            log_digest(&env, 6)
        ));
    }
    drop(workers);
    rt.block_on(env.cleanup());
    RunReport {
        seed,
        problems,
        figures,
    }
}

/// Runs the steps of one lane at their times; returns what was done.
fn run_lane(
    t0: Instant,
    steps: &[Step],
    mut act: impl FnMut(Action) -> Result<(), String>,
) -> Vec<Done> {
    run_lane_noting(t0, steps, |a| act(a).map(|()| String::new()))
}

/// [`run_lane`] with steps that say more of what they did (added to the
/// step's name).
fn run_lane_noting(
    t0: Instant,
    steps: &[Step],
    mut act: impl FnMut(Action) -> Result<String, String>,
) -> Vec<Done> {
    let mut done = Vec::new();
    for s in steps {
        if let Some(wait) = s.at.checked_sub(t0.elapsed()) {
            std::thread::sleep(wait);
        }
        let at = t0.elapsed();
        let what = match s.action {
            Action::Kill(i) => format!("kill -9 {} #{i}", INSTANCES[i]),
            Action::Start(i) => format!("start {} #{i}", INSTANCES[i]),
            a => format!("{a:?}"),
        };
        let (what, error) = match act(s.action) {
            Ok(note) => (what + &note, None),
            Err(e) => (what, Some(e)),
        };
        done.push(Done {
            at,
            ended: t0.elapsed(),
            what,
            error,
        });
    }
    done
}

/// The private service `start` gave, or a panic naming `what` and the
/// `package` scripts/ensure-services.sh installs for it.
fn started<T, E: std::fmt::Display>(start: Result<T, E>, what: &str, package: &str) -> T {
    start.unwrap_or_else(|e| {
        panic!("cannot start {what} (the chaos test needs one; scripts/ensure-services.sh installs {package}): {e}")
    })
}

#[test]
fn nothing_lost_under_faults() {
    run_chaos(&seeds("CHAOS_RUNS", 2), || Services::Single {
        rabbit: started(RabbitNode::start(), "a private RabbitMQ node", "RabbitMQ"),
        redis: started(RedisServer::start(), "a private Redis", "Redis"),
    });
}

#[test]
fn nothing_lost_on_clusters() {
    // The Redis Cluster first, then the RabbitMQ cluster (fields are
    // evaluated in the order written).
    run_chaos(&seeds("CHAOS_CLUSTER_RUNS", 1), || Services::Clusters {
        redis: started(RedisCluster::start(), "a private Redis Cluster", "Redis"),
        rabbit: started(
            RabbitCluster::start(),
            "a private 3-node RabbitMQ cluster",
            "RabbitMQ",
        ),
    });
}

/// Runs `seeds` on the services `start` starts, and fails with every
/// failing seed's problems.
fn run_chaos(seeds: &[u64], start: impl FnOnce() -> Services) {
    let settings = Settings::from_env();
    let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
    println!(
        "chaos seeds: CHAOS_SEEDS={} (window {}s, crawl delay {}ms, response delay {}ms, fetch concurrency {}{})",
        list.join(","),
        settings.window.as_secs(),
        settings.crawl_delay_ms,
        settings.response_delay.as_millis(),
        settings.fetch_concurrency,
        if settings.faults { "" } else { ", NO FAULTS" }
    );
    // Build the binaries before the services start.
    crawler_tests::bin_dir();
    let mut services = start();
    println!("private services: {}", services.describe());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut failed = Vec::new();
    for &seed in seeds {
        let report = run_seed(&rt, &mut services, seed, &settings);
        let text = report
            .problems
            .iter()
            .map(|p| format!("  - {p}"))
            .collect::<Vec<_>>()
            .join("\n");
        // The problems before the long figures too: a log cut short (CI
        // shows a part of the output) still says what failed.
        if !report.problems.is_empty() {
            println!("[seed {}] problems:\n{text}", report.seed);
        }
        println!("{}", report.figures);
        if report.problems.is_empty() {
            println!("[seed {}] PASS", report.seed);
        } else {
            println!(
                "[seed {}] FAIL (CHAOS_SEEDS={} to reproduce):\n{text}",
                report.seed, report.seed
            );
            failed.push(format!(
                "seed {} (CHAOS_SEEDS={} to reproduce):\n{text}",
                report.seed, report.seed
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} chaos seeds failed:\n{}",
        failed.len(),
        seeds.len(),
        failed.join("\n")
    );
}

/// A problem when `items` is not empty: how many there are, `what` they
/// are, and the first ten.
fn some_problems<T: std::fmt::Debug>(problems: &mut Vec<String>, items: &[T], what: &str) {
    if !items.is_empty() {
        problems.push(format!(
            "{} {what}: {:?}",
            items.len(),
            &items[..items.len().min(10)]
        ));
    }
}

/// The idle bound's arithmetic: the time every remaining task waits for its
/// host's turn is summed (not only its longest span), and idle starts at the
/// run of idle samples that lasts [`IDLE_FOR`].
#[test]
fn ending_sums_the_waits_for_the_host_and_finds_idle() {
    let sample = |secs: u64, idle: bool, turn: bool| Sample {
        at: Duration::from_secs(secs),
        stats: Ok(serde_json::json!({ "idle": idle })),
        host_turn_ahead: turn,
    };
    let samples = [
        sample(10, false, false),
        sample(11, false, true),
        sample(12, false, true),
        sample(13, false, false),
        sample(14, false, true),
        sample(20, false, false),
        sample(21, true, false),
        sample(22, true, false),
        sample(23, true, false),
    ];
    let e = ending(&samples, Duration::from_secs(10));
    assert_eq!(e.idle_at, Some(Duration::from_secs(21)));
    // 11 → 13 and 14 → 20.
    assert_eq!(e.turn_total, Duration::from_secs(8));
    assert_eq!(e.turn_wait, Duration::from_secs(1));
}
