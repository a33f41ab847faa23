//! `crawler run --state` at scale (issue 33), in one command:
//!
//! ```sh
//! cargo build --release -p crawler && cargo bench -p evaluation --bench state
//! STATE_BENCH_PAGES=5000 cargo bench -p evaluation --bench state    # with the in-memory run beside it
//! ```
//!
//! Serves the pipeline bench's site ([`evaluation::bench_site`]: news pages of about 30 KB,
//! 92 links each, 10% near-duplicates, 5% GBK) rendered per request, so that a million
//! pages need no files and little memory, over `STATE_BENCH_HOSTS` loopback hosts (100),
//! and crawls it with `crawler run --state DIR` (the release binary; the documents go to
//! standard output, thrown away). Every 10 s it notes the pages the site has served and
//! the crawler's resident memory; at the end it prints:
//! - pages/s in each tenth of the crawl (by pages served), and the last tenth's share of
//!   the first's;
//! - peak RSS (VmHWM) and the RSS at each tenth;
//! - the state on disk per page: the store (`DIR/store`) and the text segments
//!   (`DIR/texts`) apart;
//! - the crawler's CPU per page, and the export of the documents at the end.
//!
//! With `STATE_BENCH_COMPARE=1` (the default up to 20,000 pages) it first crawls the same
//! site twice each way, interleaved, with `crawler run` in memory and with `--state`,
//! and prints the ratio of their pages/s (the issue's 80% target at 5,000 pages).
//!
//! Env: `STATE_BENCH_PAGES` (1000000), `STATE_BENCH_HOSTS` (100), `STATE_BENCH_COMPARE`,
//! `STATE_BENCH_DIR` (where the state goes, removed at the end; by default the bench's
//! folder in the temporary directory, which keeps the logs), `STATE_BENCH_BIN_DIR` (other binaries).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use evaluation::bench_site::{BenchServer, BenchSiteConfig};
use evaluation::bins::{env_usize, Bins};

/// Between two samples of the crawl's progress.
const SAMPLE: Duration = Duration::from_secs(10);

/// (resident, peak resident) of a process, in KiB.
fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// utime + stime of a process, in seconds (at 100 ticks a second, Linux's USER_HZ).
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<u64> = stat[stat.rfind(')')? + 2..]
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    Some((fields.get(11)? + fields.get(12)?) as f64 / 100.0)
}

/// Bytes of the files under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

/// What the store holds at the end, live entries by key family and entry kind (uncompressed
/// key and value bytes): where the bytes on disk come from.
fn print_usage(store: &Path, pages: u64) {
    let per_page = |b: u64| b as f64 / pages.max(1) as f64;
    let mut parts = vec![("journals".to_string(), bytes_under(&store.join("journals")))];
    if let Ok(entries) = std::fs::read_dir(store.join("partitions")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            parts.push((format!("partition {name}"), bytes_under(&e.path())));
        }
    }
    let parts: Vec<String> = parts
        .iter()
        .map(|(name, b)| format!("{name} {:.0} B/page", per_page(*b)))
        .collect();
    println!("the store's files: {}", parts.join(", "));
    let usage = pipeline::store::DiskStore::open(store).and_then(|s| s.usage());
    let usage = match usage {
        Ok(u) => u,
        Err(e) => {
            println!("the store's entries could not be read: {e}");
            return;
        }
    };
    println!("| key family, entry kind | entries | key B | value B | B/page |");
    println!("|---|---|---|---|---|");
    let mut total = 0;
    for (name, (n, k, v)) in &usage {
        total += k + v;
        println!("| {name} | {n} | {k} | {v} | {:.1} |", per_page(k + v));
    }
    println!("live entries, uncompressed: {:.1} B/page", per_page(total));
}

/// One sample of a crawl in progress.
#[derive(Clone, Copy)]
struct Sample {
    secs: f64,
    pages: u64,
    rss_kib: u64,
}

/// What one crawl measured.
struct Crawl {
    /// Pages the site served, and the crawl's wall time to its last page.
    pages: u64,
    crawl_secs: f64,
    /// From the last page served to the process's exit (the export of the documents).
    export_secs: f64,
    peak_kib: u64,
    cpu_secs: f64,
    samples: Vec<Sample>,
    ok: bool,
}

impl Crawl {
    fn pages_per_sec(&self) -> f64 {
        self.pages as f64 / self.crawl_secs.max(1e-9)
    }
}

/// Runs `crawler run` over the site (with `--state dir` when given) to its exit.
fn crawl(bins: &Bins, server: &BenchServer, state: Option<&Path>, log: &Path) -> Crawl {
    // `crawler run` uses no service: the namespace and the services' URLs are unused.
    let mut cmd = bins.command("crawler", "statebench");
    // The crawler's memory log (crawler/src/memory_log.rs) every 10 s, kept in the log.
    cmd.env_remove("CRAWLER_STATE")
        .env("CRAWLER_MEMORY_LOG", "10")
        .arg("run");
    if let Some(dir) = state {
        cmd.arg("--state").arg(dir);
    }
    cmd.args(["--crawl", "bench", "--max-depth", "10", "--delay-ms", "0"])
        .args(server.site.seeds())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("the crawl's log"));
    let (_, served_before) = server.served();
    let started = Instant::now();
    let mut child: Child = cmd.spawn().expect("crawler run (build it with --release)");
    let pid = child.id();
    let mut samples = Vec::new();
    let (mut peak_kib, mut cpu) = (0, 0.0);
    let mut next_sample = Duration::ZERO;
    let status = loop {
        if let Some((_, hwm)) = rss_kib(pid) {
            peak_kib = peak_kib.max(hwm);
        }
        if let Some(c) = cpu_secs(pid) {
            cpu = c;
        }
        if started.elapsed() >= next_sample {
            let (_, pages) = server.served();
            samples.push(Sample {
                secs: started.elapsed().as_secs_f64(),
                pages: pages - served_before,
                rss_kib: rss_kib(pid).map_or(0, |(rss, _)| rss),
            });
            next_sample += SAMPLE;
        }
        match child.try_wait() {
            Ok(Some(status)) => break status.success(),
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(_) => break false,
        }
    };
    let exited = started.elapsed().as_secs_f64();
    let (_, pages) = server.served();
    let last = server.last_request().saturating_duration_since(started);
    let crawl_secs = last.as_secs_f64().min(exited);
    Crawl {
        pages: pages - served_before,
        crawl_secs,
        export_secs: exited - crawl_secs,
        peak_kib,
        cpu_secs: cpu,
        samples,
        ok: status,
    }
}

/// The pages/s of each tenth of a crawl's pages, from its samples (interpolated).
fn tenths(c: &Crawl) -> Vec<f64> {
    let mut points: Vec<(f64, f64)> = c.samples.iter().map(|s| (s.secs, s.pages as f64)).collect();
    points.push((c.crawl_secs, c.pages as f64));
    let time_at = |pages: f64| -> f64 {
        let i = points.partition_point(|&(_, p)| p < pages);
        match (i.checked_sub(1).and_then(|j| points.get(j)), points.get(i)) {
            (Some(&(t0, p0)), Some(&(t1, p1))) if p1 > p0 => {
                t0 + (t1 - t0) * (pages - p0) / (p1 - p0)
            }
            (_, Some(&(t, _))) => t,
            _ => c.crawl_secs,
        }
    };
    (0..10)
        .map(|k| {
            let (a, b) = (
                c.pages as f64 * k as f64 / 10.0,
                c.pages as f64 * (k + 1) as f64 / 10.0,
            );
            (b - a) / (time_at(b) - time_at(a)).max(1e-9)
        })
        .collect()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let pages = env_usize("STATE_BENCH_PAGES", 1_000_000);
    let hosts = env_usize("STATE_BENCH_HOSTS", 100);
    let compare = std::env::var("STATE_BENCH_COMPARE").map_or(pages <= 20_000, |v| v == "1");
    let bin_dir = evaluation::bins::release_dir("STATE_BENCH_BIN_DIR");
    let work = evaluation::bins::work_dir("state-bench");
    let state_root = std::env::var_os("STATE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| work.clone());
    let runtime = evaluation::bins::runtime(1);
    let config = BenchSiteConfig {
        pages,
        hosts,
        render_on_demand: true,
        ..BenchSiteConfig::default()
    };
    let made = Instant::now();
    let server = runtime
        .block_on(BenchServer::start(&config))
        .expect("the bench site");
    println!(
        "site: {} (teasers made in {:.1} s)",
        server.site.summary(),
        made.elapsed().as_secs_f64()
    );
    println!("binaries: {}; work: {}", bin_dir.display(), work.display());
    let bins = Bins::from_env(bin_dir, work.clone());
    let _guard = runtime.enter();

    if compare {
        let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for round in 0..2 {
            for (mode, state) in [
                (0, None),
                (1, Some(state_root.join(format!("cmp-{round}")))),
            ] {
                let log = work.join(format!("cmp-{round}-{mode}.log"));
                let c = crawl(&bins, &server, state.as_deref(), &log);
                let label = if state.is_some() {
                    "--state"
                } else {
                    "in memory"
                };
                println!(
                    "round {round}, {label}: {} pages in {:.2} s, {:.1} pages/s, peak RSS {:.1} MB, CPU {:.3} ms/page{}",
                    c.pages,
                    c.crawl_secs,
                    c.pages_per_sec(),
                    c.peak_kib as f64 / 1024.0,
                    c.cpu_secs * 1000.0 / c.pages.max(1) as f64,
                    if c.ok { "" } else { " (FAILED: see the log)" }
                );
                rates[mode].push(c.pages_per_sec());
                if let Some(dir) = state {
                    let _ = std::fs::remove_dir_all(dir);
                }
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        println!(
            "--state / in memory, same run: {:.1}% ({:.1} against {:.1} pages/s, the mean of two runs each)",
            100.0 * mean(&rates[1]) / mean(&rates[0]).max(1e-9),
            mean(&rates[1]),
            mean(&rates[0])
        );
    }

    let dir = state_root.join("state");
    let _ = std::fs::remove_dir_all(&dir);
    println!("crawling {pages} pages with --state {} ...", dir.display());
    let log = work.join("state.log");
    let c = crawl(&bins, &server, Some(&dir), &log);
    let store = bytes_under(&dir.join("store"));
    let texts = bytes_under(&dir.join("texts"));
    let per_page = |b: u64| b as f64 / c.pages.max(1) as f64;
    println!("\n### crawler run --state, {} pages", c.pages);
    println!(
        "crawl {:.1} s ({:.1} pages/s), then the export of the documents {:.1} s; {}",
        c.crawl_secs,
        c.pages_per_sec(),
        c.export_secs,
        if c.ok {
            "exit 0"
        } else {
            "FAILED (see the log)"
        }
    );
    println!("| tenth of the pages | pages/s | RSS at its end |");
    println!("|---|---|---|");
    let rates = tenths(&c);
    for (k, rate) in rates.iter().enumerate() {
        let end = c.pages * (k as u64 + 1) / 10;
        let rss = c
            .samples
            .iter()
            .find(|s| s.pages >= end)
            .or(c.samples.last())
            .map_or(0, |s| s.rss_kib);
        println!("| {} | {rate:.1} | {:.1} MB |", k + 1, rss as f64 / 1024.0);
    }
    println!(
        "last tenth / first tenth: {:.1}%",
        100.0 * rates[9] / rates[0].max(1e-9)
    );
    println!("peak RSS (VmHWM): {:.1} MB", c.peak_kib as f64 / 1024.0);
    println!(
        "state on disk: store {:.0} B/page ({:.1} MB), texts {:.0} B/page ({:.1} MB)",
        per_page(store),
        store as f64 / 1e6,
        per_page(texts),
        texts as f64 / 1e6
    );
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let (memory, other): (Vec<&str>, Vec<&str>) =
        logged.lines().partition(|l| l.starts_with("memory: "));
    println!(
        "CPU of crawler run: {:.3} ms/page; the log's last lines:\n{}",
        c.cpu_secs * 1000.0 / c.pages.max(1) as f64,
        other
            .iter()
            .rev()
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The memory log's line of the highest RSS: live heap, allocator, engine.
    let rss_of = |l: &&str| -> u64 {
        l.split("rss ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|r| r.parse().ok())
            .unwrap_or(0)
    };
    if let Some(top) = memory.iter().copied().max_by_key(rss_of) {
        println!("the memory log at its highest RSS: {top}");
    }
    print_usage(&dir.join("store"), c.pages);
    let _ = std::fs::remove_dir_all(&dir);
    println!("(logs kept in {})", work.display());
}
