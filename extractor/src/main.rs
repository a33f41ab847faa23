//! The `extractor` worker binary: [`extractor::stage::ExtractorStage`] over RabbitMQ and Redis.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let worker = pipeline::config::start_worker(
        "extractor",
        "Extracts title, time, author, body text and outlinks from fetched pages",
    )?;
    let ns = worker.service.namespace.clone();
    pipeline::worker::serve(&worker, |store, _keys| {
        extractor::stage::ExtractorStage::new(store, &ns)
    })
    .await
}
