//! The `frontier` worker binary: [`frontier::FrontierStage`] over RabbitMQ and Redis.

use clap::Parser;

/// Admits seed and discovered URLs (normalized, in scope, never seen) and
/// hands them to the fetchers.
#[derive(Parser)]
#[command(name = "frontier", version)]
struct Args {
    #[command(flatten)]
    service: pipeline::ServiceConfig,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let ns = args.service.namespace.clone();
    pipeline::worker::serve(&args.service, |store| {
        frontier::FrontierStage::new(store, &ns)
    })
    .await
}
