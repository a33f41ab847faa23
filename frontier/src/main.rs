//! The `frontier` worker binary: [`frontier::FrontierStage`] and the
//! politeness releaser over RabbitMQ and Redis.

use frontier::release::{self, ReleaseSettings};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let worker = pipeline::config::start_worker(
        "frontier",
        "Admits seed and discovered URLs (normalized, in scope, never seen) into \
         per-host queues, and releases them to the fetchers when each host is due",
    )?;
    let ns = worker.service.namespace.clone();
    let release_ns = ns.clone();
    let wakeups = std::sync::Arc::new(release::Wakeups::default());
    let stage_wakeups = wakeups.clone();
    pipeline::worker::serve_with(
        &worker,
        |store, keys| {
            frontier::FrontierStage::new(store, &ns)
                .with_scale(keys.scale())
                .with_wakeups(stage_wakeups)
        },
        move |store, broker, shutdown| {
            release::run(
                store,
                broker,
                release_ns,
                ReleaseSettings::default(),
                wakeups,
                shutdown,
            )
        },
    )
    .await
}
