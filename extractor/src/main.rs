//! The `extractor` worker binary: [`extractor::stage::ExtractorStage`] over RabbitMQ and Redis.

use clap::Parser;

/// Extracts title, time, author, body text and outlinks from fetched pages.
#[derive(Parser)]
#[command(name = "extractor", version)]
struct Args {
    #[command(flatten)]
    worker: pipeline::WorkerConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (args, file) = pipeline::config::parse::<Args>("extractor")?;
    file.start_logs(args.worker.service.log_json);
    let ns = args.worker.service.namespace.clone();
    pipeline::worker::serve(&args.worker, |_store| {
        extractor::stage::ExtractorStage::new(&ns)
    })
    .await
}
