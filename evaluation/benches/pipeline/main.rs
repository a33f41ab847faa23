//! `scripts/bench-pipeline.sh` (or `cargo bench -p evaluation --bench
//! pipeline` after `cargo build --release -p frontier -p fetcher -p
//! extractor -p contentseen -p crawler`): the pipeline benchmark of issue 19.
//!
//! Generates the bench site ([`evaluation::bench_site`]: 5,000 pages of
//! about 30 KB over 50 loopback hosts, 10% near-duplicates, 5% GBK), serves
//! it from this process, and crawls it three ways:
//!
//! 1. distributed: the four release worker binaries as processes over the
//!    real RabbitMQ and Redis, in a fresh namespace (deleted at the end);
//! 2. `crawler run` (every stage in one process, memory broker and store);
//! 3. Scrapy (`evaluation/scrapy/bench_spider.py`, run by `$SCRAPY_BIN`).
//!
//! It prints pages/s, CPU ms per page of every process (from /proc: utime +
//! stime), Redis commands per page (INFO commandstats), RabbitMQ deliveries
//! per page (the workers' own `crawler_messages_total` metrics) and bytes
//! per page (the workers' AMQP connections' `recv_oct` + `send_oct` from
//! `rabbitmqctl list_connections`), and peak RSS (VmHWM) per process.
//!
//! Env: `PIPELINE_BENCH_PAGES` (5000), `PIPELINE_BENCH_HOSTS` (50),
//! `PIPELINE_BENCH_SKIP_SCRAPY=1`, `PIPELINE_BENCH_SKIP_RUN=1`,
//! `PIPELINE_BENCH_SKIP_DISTRIBUTED=1`, `PIPELINE_BENCH_TIMEOUT_SECS` (900),
//! `PIPELINE_BENCH_SCALE` (`fetcher=2,extractor=2`: that many processes of
//! those workers, one of each other),
//! `SCRAPY_BIN` (the `scrapy` of a virtualenv; Scrapy is skipped without it),
//! `CRAWLER_AMQP_URL`, `CRAWLER_REDIS_URL`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use evaluation::bench_site::{BenchServer, BenchSiteConfig};
use evaluation::bins::{env_usize, WORKERS};

mod distributed;

/// The crawl both modes run: the whole bench site (deeper than its
/// links go), no politeness delay.
const CRAWL_SETTINGS: [&str; 6] = ["--crawl", "bench", "--max-depth", "10", "--delay-ms", "0"];
mod procfs;
mod rabbitmq;
mod redis_client;
mod table;

use distributed::*;
use procfs::*;
use rabbitmq::*;
use redis_client::*;
use table::*;

const AMQP_PORT: u16 = 5672;
const REDIS_PORT: u16 = 6379;

/// The worker processes of the distributed crawl: (label, binary), one of
/// each worker unless `PIPELINE_BENCH_SCALE` says `name=count,…`.
fn instances() -> Vec<(String, &'static str)> {
    let scale = std::env::var("PIPELINE_BENCH_SCALE").unwrap_or_default();
    let count = |name: &str| -> usize {
        scale
            .split(',')
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(1)
            .max(1)
    };
    let mut out = Vec::new();
    for name in WORKERS {
        let n = count(name);
        for i in 1..=n {
            let label = if n == 1 {
                name.to_string()
            } else {
                format!("{name} #{i}")
            };
            out.push((label, name));
        }
    }
    out
}
/// How long the crawl's counters must stay still before the crawl is taken
/// to be over (then `crawler stats --wait-idle` confirms it).
const STILL_FOR: Duration = Duration::from_millis(1500);
const POLL: Duration = Duration::from_millis(100);

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

// -------------------------------------------------------------- results --

#[derive(Default)]
struct Proc {
    name: String,
    cpu_secs: f64,
    peak_rss_kib: Option<u64>,
}

#[derive(Default)]
struct Outcome {
    label: &'static str,
    pages: u64,
    wall_secs: f64,
    procs: Vec<Proc>,
    /// The site server (this process) over the same window.
    server_cpu_secs: f64,
    redis_commands: Option<u64>,
    amqp_messages: Option<u64>,
    amqp_bytes: Option<(u64, u64)>,
    notes: Vec<String>,
}

impl Outcome {
    fn pages_per_sec(&self) -> f64 {
        self.pages as f64 / self.wall_secs.max(1e-9)
    }
    fn ms_per_page(&self, secs: f64) -> f64 {
        secs * 1000.0 / (self.pages.max(1) as f64)
    }
}

struct Env {
    bins: evaluation::bins::Bins,
    ticks: f64,
    seeds: Vec<String>,
}

impl std::ops::Deref for Env {
    type Target = evaluation::bins::Bins;
    fn deref(&self) -> &Self::Target {
        &self.bins
    }
}

/// Waits for a child, sampling its VmHWM meanwhile; (wall, exit ok, peak).
fn wait_sampling(child: &mut Child, started: Instant) -> (f64, bool, Option<u64>) {
    let mut peak = None;
    loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = Some(kib);
        }
        match child.try_wait() {
            Ok(Some(status)) => return (started.elapsed().as_secs_f64(), status.success(), peak),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => return (started.elapsed().as_secs_f64(), false, peak),
        }
    }
}

/// Runs `cmd` (its stderr to the `log` log) to its exit, sampling its peak
/// memory, and records it in `out` as process `name`: its CPU, the bench's
/// own (the site server's) and the machine note over the same window, and a
/// failure note with the log's tail when it fails. The wall time, or `None`
/// (noted) when it cannot start.
fn run_measured(
    env: &Env,
    out: &mut Outcome,
    name: &str,
    log: &str,
    mut cmd: Command,
) -> Option<f64> {
    let before = self_ticks();
    let machine_before = machine_ticks();
    let started = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(env.log(log))
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            out.notes.push(format!("FAILED to start {name}: {e}"));
            return None;
        }
    };
    let (wall, ok, peak) = wait_sampling(&mut child, started);
    let after = self_ticks();
    let machine_after = machine_ticks();
    if !ok {
        out.notes
            .push(format!("FAILED: {name}: {}", env.tail(log, 20)));
    }
    out.procs.push(Proc {
        name: name.into(),
        cpu_secs: (after.1 - before.1) as f64 / env.ticks,
        peak_rss_kib: peak,
    });
    out.server_cpu_secs = (after.0 - before.0) as f64 / env.ticks;
    out.notes.push(machine_note(
        machine_before,
        machine_after,
        (after.0 + after.1 - before.0 - before.1) as f64 / env.ticks,
        env.ticks,
    ));
    Some(wall)
}

// ---------------------------------------------------------- crawler run --

fn local_run(env: &Env) -> Outcome {
    let mut out = Outcome {
        label: "crawler run",
        ..Outcome::default()
    };
    let (mut cmd, docs) = env.crawler_run("pbench-run", &CRAWL_SETTINGS);
    cmd.args(&env.seeds);
    let Some(wall) = run_measured(env, &mut out, "crawler run", "run", cmd) else {
        return out;
    };
    let text = std::fs::read_to_string(&docs).unwrap_or_default();
    let (mut pages, mut duplicates) = (0u64, 0u64);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        pages += 1;
        if serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|d| !d["duplicate_of"].is_null())
        {
            duplicates += 1;
        }
    }
    let _ = std::fs::remove_file(&docs);
    out.pages = pages;
    out.wall_secs = wall;
    out.notes.push(format!(
        "{pages} documents written ({duplicates} near-duplicates); wall = process start to exit (export of the documents included); {}",
        env.tail("run", 3).replace('\n', " | ")
    ));
    out
}

// --------------------------------------------------------------- Scrapy --

fn scrapy(env: &Env, bin: &str, hosts: &[String], port: u16) -> Outcome {
    let mut out = Outcome {
        label: "Scrapy",
        ..Outcome::default()
    };
    let spider = Path::new(env!("CARGO_MANIFEST_DIR")).join("scrapy/bench_spider.py");
    let stats_path = env.work.join("scrapy-stats.json");
    let mut cmd = Command::new(bin);
    cmd.arg("runspider")
        .arg(&spider)
        .arg("-a")
        .arg(format!("hosts={}", hosts.join(",")))
        .arg("-a")
        .arg(format!("port={port}"))
        .arg("-a")
        .arg(format!("out={}", stats_path.display()))
        .env("NO_PROXY", "*")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy");
    let Some(wall) = run_measured(env, &mut out, "scrapy", "scrapy", cmd) else {
        return out;
    };
    let stats: serde_json::Value = std::fs::read_to_string(&stats_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let items = stats["item_scraped_count"].as_u64().unwrap_or(0);
    let elapsed = stats["bench_elapsed_seconds"]
        .as_f64()
        .or(stats["elapsed_time_seconds"].as_f64())
        .unwrap_or(wall);
    out.pages = items;
    // Scrapy's own elapsed time (engine start to close): Python's start-up
    // is not charged to it.
    out.wall_secs = elapsed;
    out.notes.push(format!(
        "{items} items; Scrapy's own elapsed time (start_time to close) {elapsed:.2} s (process wall {wall:.2} s); responses {}, requests {}, robots.txt {}, offsite filtered {}, dupefilter {}",
        stats["response_received_count"],
        stats["downloader/request_count"],
        stats["robotstxt/request_count"],
        stats["offsite/filtered"],
        stats["dupefilter/filtered"],
    ));
    out
}

fn main() {
    let config = BenchSiteConfig {
        pages: env_usize("PIPELINE_BENCH_PAGES", 5_000),
        hosts: env_usize("PIPELINE_BENCH_HOSTS", 50),
        ..BenchSiteConfig::default()
    };
    let timeout = Duration::from_secs(env_usize("PIPELINE_BENCH_TIMEOUT_SECS", 900) as u64);
    let bins = evaluation::bins::release_dir("PIPELINE_BENCH_BIN_DIR");
    if let Some(missing) = evaluation::bins::missing(&bins, "scripts/bench-pipeline.sh") {
        eprintln!("{missing}");
        std::process::exit(2);
    }
    let work = evaluation::bins::work_dir("pipeline-bench");
    let rt = evaluation::bins::runtime(2);
    let generated = Instant::now();
    let server = rt
        .block_on(BenchServer::start(&config))
        .unwrap_or_else(|e| panic!("serving the bench site: {e}"));
    println!("# Pipeline benchmark (issue 19)\n");
    println!(
        "site: {} (generated in {:.1} s)",
        server.site.summary(),
        generated.elapsed().as_secs_f64()
    );
    println!("binaries: {}; logs: {}", bins.display(), work.display());
    println!(
        "machine: {} cores; {} at start",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        uptime()
    );
    let env = Env {
        bins: evaluation::bins::Bins::from_env(bins, work.clone()),
        ticks: clock_ticks(),
        seeds: server.site.seeds(),
    };
    let mut outcomes = Vec::new();
    if !env_flag("PIPELINE_BENCH_SKIP_DISTRIBUTED") {
        eprintln!("distributed crawl ({})...", uptime());
        let o = distributed(&env, &rt, timeout);
        eprintln!(
            "distributed: {} pages in {:.2} s; site served {:?} (requests, pages); {}",
            o.pages,
            o.wall_secs,
            server.served(),
            uptime()
        );
        outcomes.push(o);
    }
    if !env_flag("PIPELINE_BENCH_SKIP_RUN") {
        eprintln!("crawler run ({})...", uptime());
        let o = local_run(&env);
        eprintln!(
            "crawler run: {} pages in {:.2} s; {}",
            o.pages,
            o.wall_secs,
            uptime()
        );
        outcomes.push(o);
    }
    let scrapy_outcome = match std::env::var("SCRAPY_BIN") {
        _ if env_flag("PIPELINE_BENCH_SKIP_SCRAPY") => {
            println!("Scrapy skipped (PIPELINE_BENCH_SKIP_SCRAPY=1): no ratio to Scrapy.");
            None
        }
        Ok(bin) if !bin.is_empty() => {
            eprintln!("Scrapy ({})...", uptime());
            let o = scrapy(&env, &bin, &server.site.domains(), server.site.port);
            eprintln!(
                "Scrapy: {} pages in {:.2} s; {}",
                o.pages,
                o.wall_secs,
                uptime()
            );
            Some(o)
        }
        _ => {
            println!("Scrapy SKIPPED: SCRAPY_BIN is not set (scripts/bench-pipeline.sh sets it); no ratio to Scrapy.");
            None
        }
    };
    print_table(
        &outcomes.iter().collect::<Vec<_>>(),
        scrapy_outcome.as_ref(),
    );
    println!("\nmachine: {} at the end", uptime());
    let failed = outcomes
        .iter()
        .chain(&scrapy_outcome)
        .any(|o| o.notes.iter().any(|n| n.starts_with("FAILED")));
    if failed {
        println!("logs kept in {}", work.display());
    } else {
        let _ = std::fs::remove_dir_all(&work);
    }
    drop(server);
    rt.shutdown_timeout(Duration::from_secs(1));
}
