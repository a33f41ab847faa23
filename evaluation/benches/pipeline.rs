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
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use evaluation::bench_site::{BenchServer, BenchSiteConfig};

const AMQP_PORT: u16 = 5672;
const REDIS_PORT: u16 = 6379;
const WORKERS: [&str; 4] = ["frontier", "fetcher", "extractor", "contentseen"];

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

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

// ---------------------------------------------------------------- /proc --

/// Clock ticks per second of /proc/<pid>/stat.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Fields of /proc/<pid>/stat after the command name (index 0 = state).
fn stat_fields(pid: &str) -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime of a process, in ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let f = stat_fields(&pid.to_string())?;
    Some(f[11] + f[12])
}

/// (own utime + stime, waited-for children's cutime + cstime) of this process.
fn self_ticks() -> (u64, u64) {
    let f = stat_fields("self").unwrap_or_default();
    (f[11] + f[12], f[13] + f[14])
}

/// (busy, all) ticks of the whole machine, every core (/proc/stat).
fn machine_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = text
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let all: u64 = f.iter().take(8).sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (all - idle, all)
}

/// "the machine: 1.73 of 2 cores busy, 0.11 of them outside the measured
/// processes" over a window.
fn machine_note(before: (u64, u64), after: (u64, u64), ours_secs: f64, ticks: f64) -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let busy = (after.0 - before.0) as f64;
    let all = (after.1 - before.1).max(1) as f64;
    let wall = all / cores / ticks;
    let busy_cores = busy / all * cores;
    format!(
        "the whole machine over the window: {busy_cores:.2} of {cores:.0} cores busy, {:.2} of them outside the processes measured here (other engineers' builds and tests, the kernel's softirqs)",
        (busy_cores - ours_secs / wall.max(1e-9)).max(0.0)
    )
}

/// Peak resident memory (VmHWM) in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// (local port, remote port, state, inode) of every TCP socket.
fn tcp_sockets() -> Vec<(u16, u16, String, u64)> {
    let mut out = Vec::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 {
                continue;
            }
            let port = |a: &str| {
                a.rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    .unwrap_or(0)
            };
            out.push((
                port(f[1]),
                port(f[2]),
                f[3].to_string(),
                f[9].parse().unwrap_or(0),
            ));
        }
    }
    out
}

/// The socket inodes a process holds open.
fn socket_inodes(pid: u32) -> HashSet<u64> {
    let mut out = HashSet::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for entry in dir.flatten() {
            if let Ok(target) = std::fs::read_link(entry.path()) {
                let t = target.to_string_lossy();
                if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    if let Ok(inode) = inode.parse() {
                        out.insert(inode);
                    }
                }
            }
        }
    }
    out
}

/// The processes listening on TCP `port` (the Redis server, RabbitMQ's
/// beam.smp).
fn pids_listening_on(port: u16) -> Vec<(u32, String)> {
    let inodes: HashSet<u64> = tcp_sockets()
        .into_iter()
        .filter(|(local, _, state, _)| *local == port && state == "0A")
        .map(|(_, _, _, inode)| inode)
        .collect();
    let mut pids = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if !socket_inodes(pid).is_disjoint(&inodes) {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                pids.push((pid, comm));
            }
        }
    }
    pids
}

/// Local ports of a process's connections to `remote_port`.
fn connection_ports(pid: u32, remote_port: u16) -> Vec<u16> {
    let inodes = socket_inodes(pid);
    tcp_sockets()
        .into_iter()
        .filter(|(_, remote, state, inode)| {
            *remote == remote_port && state == "01" && inodes.contains(inode)
        })
        .map(|(local, ..)| local)
        .collect()
}

// --------------------------------------------------------------- Redis --

/// One Redis command over a fresh connection (the bench's own few calls).
struct Redis {
    reader: BufReader<TcpStream>,
    /// Commands this client sent (subtracted from the commandstats delta).
    sent: u64,
}

enum Reply {
    Nil,
    Int(i64),
    Text(String),
    Array(Vec<Reply>),
}

impl Redis {
    fn connect(url: &str) -> std::io::Result<Redis> {
        let address = url
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .rsplit('@')
            .next()
            .unwrap_or("127.0.0.1:6379")
            .to_string();
        let stream = TcpStream::connect(address)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Redis {
            reader: BufReader::new(stream),
            sent: 0,
        })
    }

    fn command(&mut self, args: &[&str]) -> std::io::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.reader.get_mut().write_all(out.as_bytes())?;
        self.sent += 1;
        self.read_reply()
    }

    fn read_reply(&mut self) -> std::io::Result<Reply> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let line = line.trim_end_matches("\r\n");
        let bad = || std::io::Error::other(format!("bad Redis reply {line:?}"));
        let (kind, rest) = line.split_at(1.min(line.len()));
        match kind {
            "+" => Ok(Reply::Text(rest.to_string())),
            "-" => Err(std::io::Error::other(rest.to_string())),
            ":" => Ok(Reply::Int(rest.parse().map_err(|_| bad())?)),
            "$" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                if n < 0 {
                    return Ok(Reply::Nil);
                }
                let mut buf = vec![0; n as usize + 2];
                self.reader.read_exact(&mut buf)?;
                buf.truncate(n as usize);
                Ok(Reply::Text(String::from_utf8_lossy(&buf).into_owned()))
            }
            "*" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                let mut items = Vec::new();
                for _ in 0..n.max(0) {
                    items.push(self.read_reply()?);
                }
                Ok(Reply::Array(items))
            }
            _ => Err(bad()),
        }
    }

    /// Total calls over every command (INFO commandstats).
    fn total_calls(&mut self) -> u64 {
        match self.command(&["INFO", "commandstats"]) {
            Ok(Reply::Text(text)) => text
                .lines()
                .filter_map(|l| l.split("calls=").nth(1))
                .filter_map(|c| c.split(',').next()?.parse::<u64>().ok())
                .sum(),
            _ => 0,
        }
    }

    /// A hash of integers.
    fn counters(&mut self, key: &str) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        if let Ok(Reply::Array(items)) = self.command(&["HGETALL", key]) {
            for pair in items.chunks(2) {
                if let [Reply::Text(k), Reply::Text(v)] = pair {
                    out.insert(k.clone(), v.parse().unwrap_or(0));
                }
            }
        }
        out
    }

    fn connected_clients(&mut self) -> u64 {
        match self.command(&["INFO", "clients"]) {
            Ok(Reply::Text(text)) => text
                .lines()
                .find_map(|l| l.strip_prefix("connected_clients:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            Ok(Reply::Int(n)) => n as u64,
            _ => 0,
        }
    }
}

// ------------------------------------------------------------ RabbitMQ --

/// recv_oct and send_oct of every broker connection, by the client's port.
fn amqp_octets() -> HashMap<u16, (u64, u64)> {
    let out = Command::new("rabbitmqctl")
        .args([
            "-q",
            "--no-table-headers",
            "list_connections",
            "peer_port",
            "recv_oct",
            "send_oct",
        ])
        .stderr(Stdio::null())
        .output();
    let mut octets = HashMap::new();
    if let Ok(out) = out {
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<u64> = line
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [port, recv, send] = f[..] {
                octets.insert(port as u16, (recv, send));
            }
        }
    }
    octets
}

/// `crawler_messages_total` by (stage, outcome) from a worker's metrics.
fn scrape_messages(port: u16) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return out;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ =
        stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    for line in text.lines() {
        // Broker deliveries (a bundle of messages is one delivery).
        if let Some(rest) = line.strip_prefix("crawler_deliveries_total{") {
            if let Some((_, value)) = rest.split_once("} ") {
                *out.entry("deliveries".to_string()).or_insert(0) +=
                    value.trim().parse().unwrap_or(0);
            }
        }
        if let Some(rest) = line.strip_prefix("crawler_messages_total{") {
            let Some((labels, value)) = rest.split_once("} ") else {
                continue;
            };
            let outcome = labels
                .split("outcome=\"")
                .nth(1)
                .and_then(|o| o.split('"').next())
                .unwrap_or("?");
            *out.entry(outcome.to_string()).or_insert(0) += value.trim().parse().unwrap_or(0);
        }
    }
    out
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn uptime() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            format!("load average {} {} {}", f[0], f[1], f[2])
        })
        .unwrap_or_default()
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
    bins: PathBuf,
    work: PathBuf,
    amqp_url: String,
    redis_url: String,
    ticks: f64,
    seeds: Vec<String>,
}

impl Env {
    fn bin(&self, name: &str) -> PathBuf {
        self.bins.join(name)
    }

    fn command(&self, name: &str, ns: &str) -> Command {
        let mut c = Command::new(self.bin(name));
        c.env("CRAWLER_AMQP_URL", &self.amqp_url)
            .env("CRAWLER_REDIS_URL", &self.redis_url)
            .env("CRAWLER_NAMESPACE", ns)
            .env("CRAWLER_ALLOW_PRIVATE", "1")
            .env("NO_PROXY", "*")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("CRAWLER_CONFIG")
            .stdin(Stdio::null());
        c
    }

    fn log(&self, name: &str) -> std::fs::File {
        std::fs::File::create(self.work.join(format!("{name}.log"))).expect("log file")
    }

    fn tail(&self, name: &str, lines: usize) -> String {
        let text =
            std::fs::read_to_string(self.work.join(format!("{name}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
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

// ----------------------------------------------------------- distributed --

fn stats_json(env: &Env, ns: &str, args: &[&str]) -> Result<serde_json::Value, String> {
    let out = env
        .command("crawler", ns)
        .arg("stats")
        .args(args)
        .arg("--json")
        .output()
        .map_err(|e| format!("crawler stats: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let parsed = text
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok());
    match (out.status.success(), parsed) {
        (true, Some(v)) => Ok(v),
        (_, v) => Err(format!(
            "crawler stats {args:?} failed: {} {}",
            String::from_utf8_lossy(&out.stderr).trim(),
            v.map(|v| v.to_string()).unwrap_or_default()
        )),
    }
}

fn distributed(env: &Env, rt: &tokio::runtime::Runtime, timeout: Duration) -> Outcome {
    let ns = format!(
        "pbench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    );
    let mut outcome = Outcome {
        label: "distributed",
        ..Outcome::default()
    };
    let result = distributed_in(env, &ns, timeout, &mut outcome);
    if let Err(e) = result {
        outcome.notes.push(format!("FAILED: {e}"));
        eprintln!("distributed run failed: {e}");
    }
    // Delete the namespace: its queues, then its keys.
    rt.block_on(async {
        if let Ok(session) = pipeline::Broker::amqp(&env.amqp_url, &ns).open().await {
            if let Err(e) = session.delete_topology().await {
                eprintln!("could not delete the queues of {ns}: {e}");
            }
        }
        match pipeline::Store::redis(&env.redis_url).await {
            Ok(store) => match store.delete_matching(&format!("{ns}:*")).await {
                Ok(n) => eprintln!("namespace {ns} deleted ({n} keys)"),
                Err(e) => eprintln!("could not delete the keys of {ns}: {e}"),
            },
            Err(e) => eprintln!("could not delete the keys of {ns}: {e}"),
        }
    });
    outcome
}

struct Snapshot {
    at: Instant,
    workers: Vec<u64>,
    redis: u64,
    rabbit: u64,
    self_cpu: (u64, u64),
    redis_calls: u64,
    machine: (u64, u64),
}

fn distributed_in(env: &Env, ns: &str, timeout: Duration, out: &mut Outcome) -> Result<(), String> {
    let redis_pids = pids_listening_on(REDIS_PORT);
    let rabbit_pids = pids_listening_on(AMQP_PORT);
    eprintln!("Redis processes {redis_pids:?}, RabbitMQ processes {rabbit_pids:?}");
    let ticks_of =
        |pids: &[(u32, String)]| -> u64 { pids.iter().filter_map(|(p, _)| cpu_ticks(*p)).sum() };
    let workers = instances();
    let metrics_ports: Vec<u16> = workers.iter().map(|_| free_port()).collect();
    let mut children: Vec<Child> = Vec::new();
    for ((name, binary), port) in workers.iter().zip(&metrics_ports) {
        let child = env
            .command(binary, ns)
            .env("CRAWLER_METRICS_PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(env.log(name))
            .spawn()
            .map_err(|e| format!("starting {name}: {e}"))?;
        children.push(child);
    }
    let kill_all = |children: &mut Vec<Child>| {
        for c in children.iter_mut() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
        }
        for c in children.iter_mut() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    };
    let result = (|| {
        // Ready: every work queue has a consumer.
        let ready_by = Instant::now() + Duration::from_secs(60);
        loop {
            let consumers = stats_json(env, ns, &[]).ok().map(|v| {
                v["queues"]
                    .as_array()
                    .map(|qs| {
                        qs.iter()
                            .filter(|q| !q["queue"].as_str().unwrap_or("").ends_with(".dead"))
                            .filter(|q| q["consumers"].as_u64().unwrap_or(0) > 0)
                            .count()
                    })
                    .unwrap_or(0)
            });
            if consumers == Some(4) {
                break;
            }
            for ((name, _), c) in workers.iter().zip(children.iter_mut()) {
                if !matches!(c.try_wait(), Ok(None)) {
                    return Err(format!("{name} exited at start: {}", env.tail(name, 20)));
                }
            }
            if Instant::now() > ready_by {
                return Err("the workers did not attach to their queues in 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let worker_ports: Vec<Vec<u16>> = children
            .iter()
            .map(|c| connection_ports(c.id(), AMQP_PORT))
            .collect();
        let octets_before = amqp_octets();
        let mut redis = Redis::connect(&env.redis_url).map_err(|e| format!("Redis: {e}"))?;
        let stats_key = pipeline::keys::Keys::new(ns).stats();
        let snapshot = |redis: &mut Redis, children: &[Child]| Snapshot {
            at: Instant::now(),
            workers: children
                .iter()
                .map(|c| cpu_ticks(c.id()).unwrap_or(0))
                .collect(),
            redis: ticks_of(&redis_pids),
            rabbit: ticks_of(&rabbit_pids),
            self_cpu: self_ticks(),
            redis_calls: redis.total_calls(),
            machine: machine_ticks(),
        };
        // The background over 3 s before the seed: idle workers and any
        // other client of the shared services.
        let quiet = snapshot(&mut redis, &children);
        std::thread::sleep(Duration::from_secs(3));
        let start = snapshot(&mut redis, &children);
        let secs = start.at.duration_since(quiet.at).as_secs_f64();
        let background = format!(
            "background before the seed (idle workers + other clients, {:.1} s): Redis {:.0} commands/s, {:.1} ms CPU/s; RabbitMQ {:.1} ms CPU/s; {} Redis clients connected",
            secs,
            (start.redis_calls.saturating_sub(quiet.redis_calls + 1)) as f64 / secs,
            (start.redis - quiet.redis) as f64 / env.ticks * 1000.0 / secs,
            (start.rabbit - quiet.rabbit) as f64 / env.ticks * 1000.0 / secs,
            redis.connected_clients(),
        );
        eprintln!("{background}");
        out.notes.push(background);
        let bg_redis_rate = (start.redis_calls.saturating_sub(quiet.redis_calls + 1)) as f64 / secs;
        let polls_before = redis.sent;

        let seed = env
            .command("crawler", ns)
            .args([
                "seed",
                "--crawl",
                "bench",
                "--max-depth",
                "10",
                "--delay-ms",
                "0",
            ])
            .args(&env.seeds)
            .stdout(Stdio::null())
            .stderr(env.log("seed"))
            .status()
            .map_err(|e| format!("crawler seed: {e}"))?;
        if !seed.success() {
            return Err(format!("crawler seed failed: {}", env.tail("seed", 10)));
        }
        // Poll the counters until they stand still, then confirm with
        // `crawler stats --wait-idle`.
        let mut last = BTreeMap::new();
        let mut last_change = Instant::now();
        let mut confirmations = 0;
        let (end, idle_json) = loop {
            let now = redis.counters(&stats_key);
            if now != last {
                last = now;
                last_change = Instant::now();
            } else if last_change.elapsed() >= STILL_FOR
                && last.get("stored").copied().unwrap_or(0) > 0
            {
                let end = snapshot(&mut redis, &children);
                confirmations += 1;
                let idle = stats_json(env, ns, &["--wait-idle", "--timeout-secs", "300"])?;
                let after = redis.counters(&stats_key);
                if after == last {
                    break (end, idle);
                }
                eprintln!(
                    "the counters moved after they stood still for {STILL_FOR:?}: waiting again"
                );
                last = after;
                last_change = Instant::now();
            }
            if start.at.elapsed() > timeout {
                let stats = stats_json(env, ns, &[])
                    .map(|v| v.to_string())
                    .unwrap_or_else(|e| e);
                let mut logs = String::new();
                for (name, _) in &workers {
                    logs.push_str(&format!("--- {name}\n{}\n", env.tail(name, 15)));
                }
                return Err(format!(
                    "STALL: not idle after {timeout:?}; counters {last:?}\nstats: {stats}\n{logs}"
                ));
            }
            std::thread::sleep(POLL);
        };
        let octets_after = amqp_octets();
        let hwm: Vec<Option<u64>> = children.iter().map(|c| peak_rss_kib(c.id())).collect();
        let messages: Vec<BTreeMap<String, u64>> =
            metrics_ports.iter().map(|p| scrape_messages(*p)).collect();

        let stored = last.get("stored").copied().unwrap_or(0);
        let duplicate = last.get("duplicate").copied().unwrap_or(0);
        out.pages = (stored + duplicate) as u64;
        out.wall_secs = last_change.duration_since(start.at).as_secs_f64();
        let t = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / env.ticks;
        for (i, (name, _)) in workers.iter().enumerate() {
            out.procs.push(Proc {
                name: name.clone(),
                cpu_secs: t(start.workers[i], end.workers[i]),
                peak_rss_kib: hwm[i],
            });
        }
        out.procs.push(Proc {
            name: "redis-server".into(),
            cpu_secs: t(start.redis, end.redis),
            peak_rss_kib: None,
        });
        out.procs.push(Proc {
            name: "rabbitmq (beam.smp)".into(),
            cpu_secs: t(start.rabbit, end.rabbit),
            peak_rss_kib: None,
        });
        out.procs.push(Proc {
            name: "crawler seed".into(),
            cpu_secs: t(start.self_cpu.1, end.self_cpu.1),
            peak_rss_kib: None,
        });
        out.server_cpu_secs = t(start.self_cpu.0, end.self_cpu.0);
        let ours: f64 = out.procs.iter().map(|p| p.cpu_secs).sum::<f64>() + out.server_cpu_secs;
        out.notes
            .push(machine_note(start.machine, end.machine, ours, env.ticks));
        let window = end.at.duration_since(start.at).as_secs_f64();
        let own = redis.sent - polls_before;
        let calls = end.redis_calls.saturating_sub(start.redis_calls + own);
        out.redis_commands = Some(calls);
        let tail = bg_redis_rate * (window - out.wall_secs).max(0.0);
        out.notes.push(format!(
            "Redis commands/page without the idle tail (the background rate × the {:.1} s after the counters last moved, ≈ {tail:.0} commands): {:.1}",
            window - out.wall_secs,
            (calls as f64 - tail).max(0.0) / out.pages.max(1) as f64
        ));
        // Broker messages: deliveries (bundles count once), not the
        // messages inside them.
        let delivered: u64 = messages.iter().filter_map(|m| m.get("deliveries")).sum();
        out.amqp_messages = Some(delivered);
        let (mut recv, mut send, mut found) = (0, 0, 0);
        for ports in &worker_ports {
            for p in ports {
                if let (Some(a), Some(b)) = (octets_before.get(p), octets_after.get(p)) {
                    recv += b.0 - a.0;
                    send += b.1 - a.1;
                    found += 1;
                }
            }
        }
        if found > 0 {
            out.amqp_bytes = Some((recv, send));
        }
        out.notes.push(format!(
            "seed → counters last moved: {:.2} s; CPU window seed → still for {:.1} s: {:.2} s; idle confirmed by `crawler stats --wait-idle` ({} time(s)); counters {}",
            out.wall_secs,
            STILL_FOR.as_secs_f64(),
            window,
            confirmations,
            serde_json::to_string(&last).unwrap_or_default()
        ));
        out.notes
            .push(format!("queues at idle: {}", idle_json["queues"]));
        out.notes.push(format!(
            "Redis commands: INFO commandstats delta over the CPU window minus the bench's own {own} HGETALL/INFO; the shared Redis counts every client, and the background rate before the seed (idle workers polling, and anyone else) × the window ≈ {:.0} commands",
            bg_redis_rate * window
        ));
        out.notes.push(format!(
            "RabbitMQ: broker deliveries are the workers' crawler_deliveries_total, the messages in them by outcome (crawler_messages_total) {}; bytes are the {} worker connections' socket octets (AMQP frames both ways, acks and confirms included): {} B in, {} B out",
            workers
                .iter()
                .map(|(name, _)| name)
                .zip(&messages)
                .map(|(n, m)| format!("{n} {m:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            found,
            recv,
            send
        ));
        Ok(())
    })();
    kill_all(&mut children);
    result
}

// ---------------------------------------------------------- crawler run --

fn local_run(env: &Env) -> Outcome {
    let mut out = Outcome {
        label: "crawler run",
        ..Outcome::default()
    };
    let docs = env.work.join("run.jsonl");
    let mut cmd = env.command("crawler", "pbench-run");
    cmd.args([
        "run",
        "--crawl",
        "bench",
        "--max-depth",
        "10",
        "--delay-ms",
        "0",
        "--out",
    ])
    .arg(&docs)
    .args(&env.seeds);
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

// ---------------------------------------------------------------- table --

fn print_table(outcomes: &[&Outcome], scrapy: Option<&Outcome>) {
    println!("\n## Pipeline benchmark results\n");
    let fmt_rss =
        |k: Option<u64>| k.map_or("-".to_string(), |k| format!("{:.1} MB", k as f64 / 1024.0));
    for o in outcomes.iter().copied().chain(scrapy) {
        println!("### {}", o.label);
        println!(
            "pages: {}   wall: {:.2} s   pages/s: {:.1}",
            o.pages,
            o.wall_secs,
            o.pages_per_sec()
        );
        if let Some(s) = scrapy.filter(|s| s.pages > 0 && !std::ptr::eq(*s, o)) {
            println!(
                "ratio to Scrapy: {:.2}×",
                o.pages_per_sec() / s.pages_per_sec()
            );
        }
        println!(
            "{:<28} {:>12} {:>14} {:>12}",
            "process", "CPU s", "CPU ms/page", "peak RSS"
        );
        let mut total = 0.0;
        for p in &o.procs {
            total += p.cpu_secs;
            println!(
                "{:<28} {:>12.2} {:>14.3} {:>12}",
                p.name,
                p.cpu_secs,
                o.ms_per_page(p.cpu_secs),
                fmt_rss(p.peak_rss_kib)
            );
        }
        total += o.server_cpu_secs;
        println!(
            "{:<28} {:>12.2} {:>14.3} {:>12}",
            "site server (bench process)",
            o.server_cpu_secs,
            o.ms_per_page(o.server_cpu_secs),
            "-"
        );
        println!(
            "{:<28} {:>12.2} {:>14.3}   ({:.2} of 2 cores busy over the wall time)",
            "total",
            total,
            o.ms_per_page(total),
            total / o.wall_secs.max(1e-9)
        );
        if let Some(c) = o.redis_commands {
            println!(
                "Redis commands/page: {:.1} ({c} in all)",
                c as f64 / o.pages.max(1) as f64
            );
        }
        if let Some(m) = o.amqp_messages {
            println!(
                "RabbitMQ messages (deliveries)/page: {:.2} ({m} in all)",
                m as f64 / o.pages.max(1) as f64
            );
        }
        if let Some((recv, send)) = o.amqp_bytes {
            let n = o.pages.max(1) as f64;
            println!(
                "RabbitMQ bytes/page: {:.0} (into the broker {:.0} + out of it {:.0})",
                (recv + send) as f64 / n,
                recv as f64 / n,
                send as f64 / n
            );
        }
        for note in &o.notes {
            println!("  - {note}");
        }
        println!();
    }
    // The summary line of each figure side by side.
    println!("### Summary");
    let all: Vec<&Outcome> = outcomes.iter().copied().chain(scrapy).collect();
    print!("{:<34}", "");
    for o in &all {
        print!("{:>16}", o.label);
    }
    println!();
    let row = |name: &str, f: &dyn Fn(&Outcome) -> String| {
        print!("{name:<34}");
        for o in &all {
            print!("{:>16}", f(o));
        }
        println!();
    };
    row("pages", &|o| o.pages.to_string());
    row("pages/s", &|o| format!("{:.1}", o.pages_per_sec()));
    row(
        "ratio to Scrapy",
        &|o| match scrapy.filter(|s| s.pages > 0) {
            Some(s) => format!("{:.2}×", o.pages_per_sec() / s.pages_per_sec()),
            None => "(skipped)".into(),
        },
    );
    let mut names: Vec<String> = Vec::new();
    for o in &all {
        for p in &o.procs {
            if !names.contains(&p.name) {
                names.push(p.name.clone());
            }
        }
    }
    for name in &names {
        row(&format!("CPU ms/page {name}"), &|o| {
            o.procs
                .iter()
                .find(|p| &p.name == name)
                .map_or("-".into(), |p| format!("{:.3}", o.ms_per_page(p.cpu_secs)))
        });
    }
    row("CPU ms/page site server", &|o| {
        format!("{:.3}", o.ms_per_page(o.server_cpu_secs))
    });
    row("CPU ms/page total", &|o| {
        let total: f64 = o.procs.iter().map(|p| p.cpu_secs).sum::<f64>() + o.server_cpu_secs;
        format!("{:.3}", o.ms_per_page(total))
    });
    row("Redis commands/page", &|o| {
        o.redis_commands.map_or("-".into(), |c| {
            format!("{:.1}", c as f64 / o.pages.max(1) as f64)
        })
    });
    row("RabbitMQ messages/page", &|o| {
        o.amqp_messages.map_or("-".into(), |c| {
            format!("{:.2}", c as f64 / o.pages.max(1) as f64)
        })
    });
    row("RabbitMQ bytes/page", &|o| {
        o.amqp_bytes.map_or("-".into(), |(r, s)| {
            format!("{:.0}", (r + s) as f64 / o.pages.max(1) as f64)
        })
    });
    let with_rss: Vec<&String> = names
        .iter()
        .filter(|n| {
            all.iter()
                .flat_map(|o| &o.procs)
                .any(|p| &&p.name == n && p.peak_rss_kib.is_some())
        })
        .collect();
    for name in with_rss {
        row(&format!("peak RSS {name}"), &|o| {
            o.procs
                .iter()
                .find(|p| &p.name == name)
                .map_or("-".into(), |p| fmt_rss(p.peak_rss_kib))
        });
    }
}

fn main() {
    let config = BenchSiteConfig {
        pages: env_usize("PIPELINE_BENCH_PAGES", 5_000),
        hosts: env_usize("PIPELINE_BENCH_HOSTS", 50),
        ..BenchSiteConfig::default()
    };
    let timeout = Duration::from_secs(env_usize("PIPELINE_BENCH_TIMEOUT_SECS", 900) as u64);
    // target/release/deps/pipeline-<hash> → target/release, unless
    // PIPELINE_BENCH_BIN_DIR names other binaries (a build to compare with).
    let bins = match std::env::var_os("PIPELINE_BENCH_BIN_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| Some(e.parent()?.parent()?.to_path_buf()))
            .expect("target directory"),
    };
    for name in WORKERS.iter().chain(&["crawler"]) {
        if !bins.join(name).exists() {
            eprintln!(
                "{} is missing: run scripts/bench-pipeline.sh, or cargo build --release -p frontier -p fetcher -p extractor -p contentseen -p crawler",
                bins.join(name).display()
            );
            std::process::exit(2);
        }
    }
    let work = std::env::temp_dir().join(format!("pipeline-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
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
        bins,
        work: work.clone(),
        amqp_url: std::env::var("CRAWLER_AMQP_URL")
            .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into()),
        redis_url: std::env::var("CRAWLER_REDIS_URL")
            .unwrap_or_else(|_| "redis://127.0.0.1:6379/".into()),
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
