//! The release binaries a bench runs as processes: where they are
//! ([`release_dir`]), each started with the services' URLs and a namespace,
//! logging into the bench's work folder, and `crawler stats --json` read
//! back; and the benches' numeric settings ([`env_usize`]). The pipeline,
//! the real-site near-duplicate and the `--state` benches share it.

use std::path::PathBuf;
use std::process::{Command, Stdio};

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

    /// A new log file `<work>/<name>.log`.
    pub fn log(&self, name: &str) -> std::fs::File {
        std::fs::File::create(self.work.join(format!("{name}.log"))).expect("log file")
    }

    /// The last `lines` lines of log `name`.
    pub fn tail(&self, name: &str, lines: usize) -> String {
        let text =
            std::fs::read_to_string(self.work.join(format!("{name}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
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
