//! How long the operator's reads take whatever else Redis holds: `crawler
//! stats`, `crawler crawls`, `stats --wait-idle` on an idle namespace, and
//! the frontier's count of waiting tasks (its idle check), on a Redis of
//! the bench's own that holds N keys of another namespace.
//!
//! ```sh
//! cargo build --release -p crawler && cargo bench -p evaluation --bench stats    # N = 10M
//! STATS_BENCH_FOREIGN=1000000 cargo bench -p evaluation --bench stats
//! ```
//!
//! Needs RabbitMQ on 127.0.0.1:5672 (`crawler stats` reads the queue
//! depths) and `redis-server`. Each figure is the median of 21 runs; the
//! `crawler` runs include the process's start and its connections.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pipeline::keys::Keys;
use pipeline::Store;

struct Redis {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_redis() -> Redis {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let dir = std::env::temp_dir().join(format!("stats-bench-redis-{port}"));
    std::fs::create_dir_all(&dir).expect("redis dir");
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Redis { child, port, dir }
}

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut t: Vec<Duration> = (0..runs).map(|_| f()).collect();
    t.sort();
    t[runs / 2]
}

fn main() {
    let foreign: u64 = std::env::var("STATS_BENCH_FOREIGN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let redis = start_redis();
    let url = format!("redis://127.0.0.1:{}/", redis.port);
    let client = redis::Client::open(url.as_str()).expect("redis url");
    let mut conn = client.get_connection().expect("redis");
    let loaded = Instant::now();
    let mut done = 0;
    while done < foreign {
        let n = (foreign - done).min(500_000);
        let _: () = redis::cmd("EVAL")
            .arg("for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('SET', 'foreign:' .. i, i) end")
            .arg(0)
            .arg(done + 1)
            .arg(done + n)
            .query(&mut conn)
            .expect("foreign keys");
        done += n;
    }
    let keys: u64 = redis::cmd("DBSIZE").query(&mut conn).expect("DBSIZE");
    println!(
        "Redis with {keys} keys of another namespace (written in {:.0} s)",
        loaded.elapsed().as_secs_f64()
    );
    let crawler = std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("crawler")))
        .filter(|p| p.is_file())
        .expect("target/release/crawler: run `cargo build --release -p crawler` first");
    let ns = format!("statsbench{}", std::process::id());
    let run = |args: &[&str]| {
        let t = Instant::now();
        let out = Command::new(&crawler)
            .args(args)
            .env("CRAWLER_REDIS_URL", &url)
            .env("CRAWLER_NAMESPACE", &ns)
            .stdin(Stdio::null())
            .output()
            .expect("crawler");
        assert!(
            out.status.success(),
            "crawler {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t.elapsed()
    };
    let stats = median(21, || run(&["stats", "--json"]));
    let crawls = median(21, || run(&["crawls", "--json"]));
    let idle = median(5, || run(&["stats", "--wait-idle", "--json"]));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let waiting = runtime.block_on(async {
        let store = Store::redis(&url).await.expect("store");
        let keys = Keys::new(&ns);
        let mut t = Vec::new();
        for _ in 0..201 {
            let s = Instant::now();
            frontier::release::waiting(&store, &keys)
                .await
                .expect("waiting");
            t.push(s.elapsed());
        }
        t.sort();
        t[100]
    });
    println!(
        "crawler stats --json:          {:>7.1} ms (median of 21, process start included)",
        ms(stats)
    );
    println!("crawler crawls --json:         {:>7.1} ms", ms(crawls));
    println!(
        "crawler stats --wait-idle:     {:>7.1} ms on an idle namespace (it must see {} of idleness)",
        ms(idle),
        "0.7 s"
    );
    println!(
        "frontier idle count (waiting): {:>7.2} ms a call (median of 201)",
        ms(waiting)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
