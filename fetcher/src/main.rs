//! The `fetcher` worker binary: [`fetcher::FetcherStage`] over RabbitMQ and Redis.

use clap::Parser;
use std::time::Duration;

use fetcher::http::{self, Client, FetchSettings};

/// Downloads pages (robots.txt obeyed, limits enforced), decodes them by
/// charset vote and hands them to the extractors.
#[derive(Parser)]
#[command(name = "fetcher", version)]
struct Args {
    #[command(flatten)]
    worker: pipeline::WorkerConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,

    /// Allow fetching loopback, private and link-local addresses (for local
    /// test sites; never on a crawler that takes URLs from the web).
    #[arg(long, env = "CRAWLER_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    allow_private: bool,

    /// The whole User-Agent header (default: the crawler's name and version,
    /// and --contact). Its product token (`Name` in `Name/1.0 (+url)`) is the
    /// name robots.txt rules are matched against.
    #[arg(long, env = "CRAWLER_USER_AGENT")]
    user_agent: Option<String>,

    /// Where site owners reach the crawl's operator (a URL or an e-mail
    /// address), put in the default User-Agent.
    #[arg(long, env = "CRAWLER_CONTACT")]
    contact: Option<String>,

    /// Seconds for the whole request, body included (fractions allowed).
    #[arg(long, env = "CRAWLER_FETCH_TIMEOUT", default_value_t = http::DEFAULT_TOTAL_TIMEOUT.as_secs_f64(), value_parser = seconds)]
    timeout_secs: f64,

    /// Seconds for a TCP/TLS connect, DNS included (fractions allowed).
    #[arg(long, env = "CRAWLER_CONNECT_TIMEOUT", default_value_t = http::DEFAULT_CONNECT_TIMEOUT.as_secs_f64(), value_parser = seconds)]
    connect_timeout_secs: f64,

    /// Bytes of decompressed body kept; bigger pages fail as too_large.
    #[arg(long, env = "CRAWLER_MAX_BODY_BYTES", default_value_t = http::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,

    /// Redirects followed before a URL fails as too_many_redirects.
    #[arg(long, env = "CRAWLER_MAX_REDIRECTS", default_value_t = http::DEFAULT_MAX_REDIRECTS)]
    max_redirects: usize,

    /// Longer URLs (bytes) are not fetched: invalid_url.
    #[arg(long, env = "CRAWLER_MAX_URL_BYTES", default_value_t = pipeline::messages::MAX_URL_BYTES)]
    max_url_bytes: usize,

    /// Retries of a transient failure (timeout, connection error, 5xx, 429)
    /// before it is final.
    #[arg(long, env = "CRAWLER_MAX_RETRIES", default_value_t = http::DEFAULT_MAX_RETRIES)]
    max_retries: u32,

    /// Where the crawl's WARC files go (written by contentseen, which needs
    /// the same setting). Set here, each page carries its raw HTTP exchange
    /// to contentseen; unset, none is kept.
    #[arg(long, env = "CRAWLER_WARC_DIR")]
    warc_dir: Option<std::path::PathBuf>,
}

/// A positive, finite number of seconds.
fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && Duration::try_from_secs_f64(v).is_ok() => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (args, file) = pipeline::config::parse::<Args>("fetcher")?;
    let settings = FetchSettings {
        user_agent: http::operator_user_agent(args.user_agent, args.contact.as_deref()),
        connect_timeout: Duration::from_secs_f64(args.connect_timeout_secs),
        total_timeout: Duration::from_secs_f64(args.timeout_secs),
        max_body_bytes: args.max_body_bytes,
        max_redirects: args.max_redirects,
        max_url_bytes: args.max_url_bytes,
        max_retries: args.max_retries,
        allow_private: args.allow_private,
    };
    file.start_logs(args.worker.service.log_json);
    tracing::info!(?settings, "fetch settings");
    // One client per worker: every task shares its keep-alive connections.
    let client = Client::new(settings)?;
    let ns = args.worker.service.namespace.clone();
    let keep_raw = args.warc_dir.is_some();
    pipeline::worker::serve(&args.worker, |store, _keys| {
        fetcher::FetcherStage::new(store, &ns, client).with_raw_exchange(keep_raw)
    })
    .await
}
