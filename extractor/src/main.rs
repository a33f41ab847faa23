//! The `extractor` worker binary: [`extractor::stage::ExtractorStage`] over RabbitMQ and Redis.

use clap::Parser;

/// Extracts title, time, author, body text and outlinks from fetched pages.
#[derive(Parser)]
#[command(name = "extractor", version)]
struct Args {
    #[command(flatten)]
    service: pipeline::ServiceConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    pipeline::config::apply_config_file("extractor")?;
    let args = Args::parse();
    let ns = args.service.namespace.clone();
    pipeline::worker::serve(&args.service, |_store| {
        extractor::stage::ExtractorStage::new(&ns)
    })
    .await
}
