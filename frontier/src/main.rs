//! The `frontier` worker binary: [`frontier::FrontierStage`] and the
//! politeness releaser over RabbitMQ and Redis.

use clap::Parser;
use frontier::release::{self, ReleaseSettings};

/// Admits seed and discovered URLs (normalized, in scope, never seen) into
/// per-host queues, and releases them to the fetchers when each host is due.
#[derive(Parser)]
#[command(name = "frontier", version)]
struct Args {
    #[command(flatten)]
    service: pipeline::ServiceConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (args, file) = pipeline::config::parse::<Args>("frontier")?;
    file.start_logs(args.service.log_json);
    let ns = args.service.namespace.clone();
    let release_ns = ns.clone();
    pipeline::worker::serve_with(
        &args.service,
        |store| frontier::FrontierStage::new(store, &ns),
        move |store, broker, shutdown| {
            release::run(
                store,
                broker,
                release_ns,
                ReleaseSettings::default(),
                shutdown,
            )
        },
    )
    .await
}
