//! The `contentseen` worker binary: [`contentseen::ContentSeenStage`] over RabbitMQ and Redis.

use clap::Parser;
use contentseen::bands::Layout;

/// Fingerprints extracted articles, finds near-duplicates in the banded
/// tables, and stores each document (duplicates marked).
#[derive(Parser)]
#[command(name = "contentseen", version)]
struct Args {
    #[command(flatten)]
    service: pipeline::ServiceConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,

    /// Hamming distance within which two bodies are near-duplicates; the
    /// tables use k+1 bands of equal width so no match is missed.
    #[arg(long, env = "CRAWLER_SIMHASH_K", default_value_t = 3)]
    max_distance: u32,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (args, file) = pipeline::config::parse::<Args>("contentseen")?;
    file.start_logs(args.service.log_json);
    let layout = Layout::even(args.max_distance)?;
    let ns = args.service.namespace.clone();
    pipeline::worker::serve(&args.service, |store| {
        contentseen::ContentSeenStage::new(store, &ns, layout)
    })
    .await
}
