//! The settings every binary reads: flags, each also read from a `CRAWLER_*`
//! environment variable, with defaults that point at the local services.

use clap::Args;

/// Where the services are, and how a worker consumes. Flattened into every
/// binary's command line.
#[derive(Debug, Clone, Args)]
pub struct ServiceConfig {
    /// RabbitMQ URL.
    #[arg(
        long,
        env = "CRAWLER_AMQP_URL",
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f",
        global = true
    )]
    pub amqp_url: String,

    /// Redis URL.
    #[arg(
        long,
        env = "CRAWLER_REDIS_URL",
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
                .unwrap_or_else(|| "= concurrency".into()),
            self.concurrency
                .map(|c| c.to_string())
                .unwrap_or_else(|| "stage default".into()),
            self.metrics_port
                .map(|p| p.to_string())
                .unwrap_or_else(|| "none".into())
        )
    }
}

/// `scheme://user:secret@host` → `scheme://user:***@host`.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match (authority.rfind('@'), authority.find(':')) {
        (Some(at), Some(colon)) if colon < at => format!(
            "{}://{}:***{}",
            &url[..scheme_end],
            &authority[..colon],
            &rest[at..]
        ),
        _ => url.to_string(),
    }
}

/// Sets up `tracing` logs (RUST_LOG filter, default `info`).
pub fn init_tracing(json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        let _ = builder.json().try_init();
    } else {
        let _ = builder.try_init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
