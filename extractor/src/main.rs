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
    let (args, file) = pipeline::config::parse::<Args>("extractor")?;
    file.start_logs(args.service.log_json);
    let ns = args.service.namespace.clone();
    pipeline::worker::serve(&args.service, |_store| {
        extractor::stage::ExtractorStage::new(&ns)
    })
    .await
}
