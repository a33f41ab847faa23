//! The release binaries a bench runs as processes: where they are
//! ([`release_dir`]) and whether they are all there ([`missing`]), each
//! started with the services' URLs and a namespace, logging into the
//! bench's work folder ([`Bins::start`], [`Bins::run_crawler`]) and stopped
//! ([`stop`]), and `crawler stats --json` read back ([`Bins::stats_json`],
//! [`Bins::attached`]); and what those benches set up alike: their numeric
//! settings ([`env_usize`]), a work folder of their own ([`work_dir`]) and
//! a tokio runtime ([`runtime`]). The pipeline, the real-site
//! near-duplicate and the `--state` benches share it (the memory bench its
//! runtime).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The folder of the binaries a bench runs: the one `override_var` names (another build,
/// to compare with), else the bench's own `target/release` (the bench runs as
/// `target/release/deps/<bench>-<hash>`).
pub fn release_dir(override_var: &str) -> PathBuf {
    match std::env::var_os(override_var) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| Some(e.parent()?.parent()?.to_path_buf()))
            .expect("target directory"),
    }
}

/// The number in the environment variable `name`, or `default` when it is unset or no
/// number.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The bench's work folder, `<temp>/<name>-<pid>`, created.
pub fn work_dir(name: &str) -> PathBuf {
    let work = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("work dir");
    work
}

/// A multi-threaded tokio runtime of `threads` workers, with all drivers.
pub fn runtime(threads: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The worker binaries, in the order they are started.
pub const WORKERS: [&str; 4] = ["frontier", "fetcher", "extractor", "contentseen"];

/// The first of the [`WORKERS`] and `crawler` not in `dir`, as a message
/// that names it and how to build them (`script`, or cargo); `None` when
/// all are there.
pub fn missing(dir: &Path, script: &str) -> Option<String> {
    WORKERS
        .iter()
        .chain(&["crawler"])
        .map(|name| dir.join(name))
        .find(|bin| !bin.exists())
        .map(|bin| {
            format!(
                "{} is missing: run {script}, or cargo build --release -p frontier -p fetcher -p extractor -p contentseen -p crawler",
                bin.display()
            )
        })
}

/// Stops the processes: SIGTERM to each, then each given 10 s to exit
/// before it is killed.
pub fn stop(children: &mut [Child]) {
    for c in children.iter() {
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
}

/// Where the binaries are, where their logs go, and the services.
pub struct Bins {
    pub dir: PathBuf,
    pub work: PathBuf,
    pub amqp_url: String,
    pub redis_url: String,
}

impl Bins {
    /// The services from `CRAWLER_AMQP_URL` and `CRAWLER_REDIS_URL`, or
    /// the local defaults.
    pub fn from_env(dir: PathBuf, work: PathBuf) -> Bins {
        Bins {
            dir,
            work,
            amqp_url: std::env::var("CRAWLER_AMQP_URL")
                .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into()),
            redis_url: std::env::var("CRAWLER_REDIS_URL")
                .unwrap_or_else(|_| "redis://127.0.0.1:6379/".into()),
        }
    }

    pub fn bin(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Binary `name` on namespace `ns`, allowed to crawl loopback hosts,
    /// with no proxy and no configuration file of the user's.
    pub fn command(&self, name: &str, ns: &str) -> Command {
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

    /// `crawler run SETTINGS --out <work>/run.jsonl` on namespace `ns`
    /// (the seeds still to add), and that output path.
    pub fn crawler_run(&self, ns: &str, settings: &[&str]) -> (Command, PathBuf) {
        let out = self.work.join("run.jsonl");
        let mut cmd = self.command("crawler", ns);
        cmd.arg("run").args(settings).arg("--out").arg(&out);
        (cmd, out)
    }

    /// A new log file `<work>/<name>.log`.
    pub fn log(&self, name: &str) -> std::fs::File {
        std::fs::File::create(self.work.join(format!("{name}.log"))).expect("log file")
    }

    /// Starts `cmd` as process `name`, its stderr to log `name`.
    pub fn start(&self, mut cmd: Command, name: &str) -> Result<Child, String> {
        cmd.stdout(Stdio::null())
            .stderr(self.log(name))
            .spawn()
            .map_err(|e| format!("starting {name}: {e}"))
    }

    /// Runs `crawler <what> …` (`cmd`) to its exit, its stderr to log
    /// `what`: when it fails, the log's last `tail` lines.
    pub fn run_crawler(&self, mut cmd: Command, what: &str, tail: usize) -> Result<(), String> {
        let status = cmd
            .stdout(Stdio::null())
            .stderr(self.log(what))
            .status()
            .map_err(|e| format!("crawler {what}: {e}"))?;
        if !status.success() {
            return Err(format!("crawler {what} failed: {}", self.tail(what, tail)));
        }
        Ok(())
    }

    /// The last `lines` lines of log `name`.
    pub fn tail(&self, name: &str, lines: usize) -> String {
        let text =
            std::fs::read_to_string(self.work.join(format!("{name}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// How many queues of namespace `ns` (dead-letter queues aside) have a
    /// consumer, by `crawler stats`; 0 when it does not answer.
    pub fn attached(&self, ns: &str) -> usize {
        self.stats_json(ns, &[]).ok().map_or(0, |v| {
            v["queues"].as_array().map_or(0, |qs| {
                qs.iter()
                    .filter(|q| !q["queue"].as_str().unwrap_or("").ends_with(".dead"))
                    .filter(|q| q["consumers"].as_u64().unwrap_or(0) > 0)
                    .count()
            })
        })
    }

    /// `crawler stats ARGS --json` of namespace `ns`: its last line.
    pub fn stats_json(&self, ns: &str, args: &[&str]) -> Result<serde_json::Value, String> {
        let out = self
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
                v.map(|v: serde_json::Value| v.to_string())
                    .unwrap_or_default()
            )),
        }
    }
}
