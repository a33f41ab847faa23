//! The settings every binary reads: flags, each also read from a `CRAWLER_*`
//! environment variable, with defaults that point at the local services.
//!
//! One TOML file can hold them all (`--config FILE` or `CRAWLER_CONFIG`):
//! its keys are the environment variables' names without `CRAWLER_`, in
//! lower case (`amqp_url`, `namespace`, `fetch_timeout`, ...), at the top
//! level for every binary or under a `[frontier]`, `[fetcher]`, ... table for
//! one. Precedence: flag, then environment, then file, then default.

use clap::Args;

/// The settings file: every binary takes it (read by
/// [`apply_config_file`] before the command line is parsed; this flag is
/// for `--help` and the parser).
#[derive(Debug, Clone, Args)]
pub struct ConfigFile {
    /// A TOML file of settings (keys: the `CRAWLER_*` variable names without
    /// the prefix, lower case; tables per binary).
    #[arg(long, env = "CRAWLER_CONFIG", global = true)]
    pub config: Option<std::path::PathBuf>,
}

/// Where the services are, and how a worker consumes. Flattened into every
/// worker's command line and into the `crawler` subcommands that talk to
/// the services.
#[derive(Debug, Clone, Args)]
pub struct ServiceConfig {
    /// RabbitMQ URL.
    #[arg(
        long,
        env = "CRAWLER_AMQP_URL",
        // The value may hold a password: `--help` names the variable only.
        hide_env_values = true,
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f",
        global = true
    )]
    pub amqp_url: String,

    /// Redis URL.
    #[arg(
        long,
        env = "CRAWLER_REDIS_URL",
        hide_env_values = true,
        default_value = "redis://127.0.0.1:6379/",
        global = true
    )]
    pub redis_url: String,

    /// Prefix of every queue and Redis key: crawls (and tests) in different
    /// namespaces never mix.
    #[arg(
        long,
        env = "CRAWLER_NAMESPACE",
        default_value = "crawler",
        global = true
    )]
    pub namespace: String,

    /// Unacknowledged messages the broker hands this worker at once
    /// (default: the concurrency, so no delivered message waits unseen in a
    /// buffer and `crawler stats --wait-idle` sees every message in flight).
    #[arg(long, env = "CRAWLER_PREFETCH", global = true)]
    pub prefetch: Option<u16>,

    /// Messages this worker processes at once (default: the stage's own).
    #[arg(long, env = "CRAWLER_CONCURRENCY", global = true)]
    pub concurrency: Option<usize>,

    /// Serve Prometheus metrics on this port (`/metrics`); none if unset.
    #[arg(long, env = "CRAWLER_METRICS_PORT", global = true)]
    pub metrics_port: Option<u16>,

    /// Log as JSON lines instead of text.
    #[arg(long, env = "CRAWLER_LOG_JSON", global = true, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub log_json: bool,
}

impl ServiceConfig {
    /// The configuration for printing at start-up: URLs without passwords.
    pub fn redacted(&self) -> String {
        format!(
            "amqp_url={} redis_url={} namespace={} prefetch={} concurrency={} metrics_port={}",
            redact_url(&self.amqp_url),
            redact_url(&self.redis_url),
            self.namespace,
            self.prefetch
                .map(|p| p.to_string())
                .unwrap_or_else(|| "(as concurrency)".into()),
            self.concurrency
                .map(|c| c.to_string())
                .unwrap_or_else(|| "(stage default)".into()),
            self.metrics_port
                .map(|p| p.to_string())
                .unwrap_or_else(|| "none".into())
        )
    }
}

/// `scheme://user:secret@host` → `scheme://user:***@host`.
/// An error and its causes on one line, each said once: a cause whose text
/// the line already holds (an error that prints its source, and a library
/// error that wraps an I/O error and prints it too) is left out.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => match u.set_password(Some("***")) {
            Ok(()) => u.to_string(),
            Err(()) => "(a URL with a password)".to_string(),
        },
        Ok(_) => url.to_string(),
        // Not a URL we can read: show nothing that could be a secret.
        Err(_) if url.contains('@') => "(a URL with credentials)".to_string(),
        Err(_) => url.to_string(),
    }
}

/// The file named by `--config FILE`, `--config=FILE` or `CRAWLER_CONFIG`.
fn config_path() -> Option<std::path::PathBuf> {
    let mut args = std::env::args();
    while let Some(a) = args.next() {
        if a == "--config" {
            return args.next().map(Into::into);
        }
        if let Some(p) = a.strip_prefix("--config=") {
            return Some(p.into());
        }
    }
    std::env::var_os("CRAWLER_CONFIG").map(Into::into)
}

/// The `CRAWLER_*` variables a config file sets for `binary`: top-level
/// keys, overridden by the keys of the `[binary]` table.
pub fn settings_from_toml(
    text: &str,
    binary: &str,
) -> Result<Vec<(String, String)>, toml::de::Error> {
    let table: toml::Table = text.parse()?;
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: &toml::Value| {
        let value = match v {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| i.to_string())
                })
                .collect::<Vec<_>>()
                .join(","),
            _ => return,
        };
        let name = format!("CRAWLER_{}", k.to_ascii_uppercase().replace('-', "_"));
        out.retain(|(n, _)| *n != name);
        out.push((name, value));
    };
    for (k, v) in &table {
        if !v.is_table() {
            put(k, v);
        }
    }
    if let Some(section) = table.get(binary).and_then(|v| v.as_table()) {
        for (k, v) in section {
            put(k, v);
        }
    }
    Ok(out)
}

/// Whether a setting's variable counts as set: an empty `CRAWLER_AMQP_URL=`
/// is unset (the file's value or the default applies), not an empty URL.
pub fn is_set(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// Reads the config file, if one is named, and sets its settings as
/// environment variables that are not set already (empty ones count as
/// unset and are removed, so that the file or the default applies). Call
/// first in `main`.
pub fn apply_config_file(binary: &str) -> anyhow::Result<()> {
    for (name, value) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CRAWLER_") && !is_set(Some(&value)) {
            std::env::remove_var(name);
        }
    }
    let Some(path) = config_path() else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("reading config file {}: {e}", path.display()))?;
    let settings = settings_from_toml(&text, binary)
        .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?;
    for (name, value) in settings {
        if !is_set(std::env::var_os(&name).as_deref()) {
            std::env::set_var(name, value);
        }
    }
    Ok(())
}

/// Sets up `tracing` logs (RUST_LOG filter, default `info`).
pub fn init_tracing(json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a terminal: not in files, pipes and log collectors.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    if json {
        let _ = builder.json().try_init();
    } else {
        let _ = builder.try_init();
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_error_chain_says_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("redis at {url}: {source}")]
        struct Outer {
            url: String,
            #[source]
            source: std::io::Error,
        }
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let e = anyhow::Error::new(Outer {
            url: "redis://h/".into(),
            source: io,
        })
        .context("connecting to Redis");
        let line = error_chain(e.as_ref());
        assert_eq!(
            line,
            "connecting to Redis: redis at redis://h/: Connection refused"
        );
        assert_eq!(line.matches("Connection refused").count(), 1);
    }
    use super::*;

    #[test]
    fn an_empty_variable_counts_as_unset() {
        use std::ffi::OsStr;
        assert!(!is_set(None));
        assert!(!is_set(Some(OsStr::new(""))));
        assert!(is_set(Some(OsStr::new("amqp://x/"))));
    }

    #[test]
    fn config_file_keys_become_variables_with_per_binary_tables() {
        let text = r#"
            amqp_url = "amqp://u:p@mq:5672/%2f"
            namespace = "news"
            concurrency = 8
            [fetcher]
            concurrency = 128
            allow_private = true
            fetch_timeout = 20
        "#;
        let f = settings_from_toml(text, "fetcher").unwrap();
        let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("CRAWLER_AMQP_URL"), Some("amqp://u:p@mq:5672/%2f"));
        assert_eq!(get("CRAWLER_NAMESPACE"), Some("news"));
        assert_eq!(get("CRAWLER_CONCURRENCY"), Some("128"));
        assert_eq!(get("CRAWLER_ALLOW_PRIVATE"), Some("true"));
        assert_eq!(get("CRAWLER_FETCH_TIMEOUT"), Some("20"));
        let c = settings_from_toml(text, "contentseen").unwrap();
        assert!(c
            .iter()
            .any(|(n, v)| n == "CRAWLER_CONCURRENCY" && v == "8"));
        assert!(!c.iter().any(|(n, _)| n == "CRAWLER_ALLOW_PRIVATE"));
        assert!(settings_from_toml("not = [toml", "x").is_err());
    }

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact_url("amqp://guest:guest@127.0.0.1:5672/%2f"),
            "amqp://guest:***@127.0.0.1:5672/%2f"
        );
        assert_eq!(
            redact_url("redis://127.0.0.1:6379/"),
            "redis://127.0.0.1:6379/"
        );
    }
}
