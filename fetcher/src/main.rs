//! The `fetcher` worker binary: [`fetcher::FetcherStage`] over RabbitMQ and Redis.

use std::time::Duration;

use clap::Parser;
use fetcher::http::{Client, FetchSettings};

/// Downloads pages (robots.txt obeyed, limits enforced), decodes them by
/// charset vote and hands them to the extractors.
#[derive(Parser)]
#[command(name = "fetcher", version)]
struct Args {
    #[command(flatten)]
    service: pipeline::ServiceConfig,

    /// Allow fetching loopback, private and link-local addresses (for local
    /// test sites; never on a crawler that takes URLs from the web).
    #[arg(long, env = "CRAWLER_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    allow_private: bool,

    /// The User-Agent header (default names the crawler and a contact URL).
    #[arg(long, env = "CRAWLER_USER_AGENT")]
    user_agent: Option<String>,

    /// Seconds for the whole request, body included.
    #[arg(long, env = "CRAWLER_FETCH_TIMEOUT", default_value_t = 30)]
    timeout_secs: u64,

    /// Bytes of decompressed body kept; bigger pages fail as too_large.
    #[arg(long, env = "CRAWLER_MAX_BODY_BYTES", default_value_t = 10 * 1024 * 1024)]
    max_body_bytes: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut settings = FetchSettings {
        allow_private: args.allow_private,
        total_timeout: Duration::from_secs(args.timeout_secs),
        max_body_bytes: args.max_body_bytes,
        ..FetchSettings::default()
    };
    if let Some(ua) = args.user_agent {
        settings.user_agent = ua;
    }
    let client = Client::new(settings)?;
    let ns = args.service.namespace.clone();
    pipeline::worker::serve(&args.service, |store| {
        fetcher::FetcherStage::new(store, &ns, client)
    })
    .await
}
