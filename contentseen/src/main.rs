//! The `contentseen` worker binary: [`contentseen::ContentSeenStage`] over RabbitMQ and Redis.

use std::sync::Arc;

use clap::Parser;
use contentseen::bands::Layout;

/// Fingerprints extracted articles, finds near-duplicates in the banded
/// tables, and stores each document (duplicates marked).
#[derive(Parser)]
#[command(name = "contentseen", version)]
struct Args {
    #[command(flatten)]
    worker: pipeline::WorkerConfig,
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,

    /// Hamming distance within which two bodies are near-duplicates; the
    /// tables use k+1 bands of equal width so no match is missed.
    #[arg(long, env = "CRAWLER_SIMHASH_K", default_value_t = 3)]
    max_distance: u32,

    /// Write the crawl's WARC files here: request, response and metadata
    /// records per page, a revisit record instead of the response for a
    /// near-duplicate. The fetchers need the same setting (they keep the
    /// raw HTTP exchange only then).
    #[arg(long, env = "CRAWLER_WARC_DIR")]
    warc_dir: Option<std::path::PathBuf>,

    /// A WARC file is closed and the next one started at this many bytes.
    #[arg(long, env = "CRAWLER_WARC_MAX_BYTES", default_value_t = warc::writer::DEFAULT_MAX_BYTES)]
    warc_max_bytes: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (args, file) = pipeline::config::parse::<Args>("contentseen")?;
    file.start_logs(args.worker.service.log_json);
    let layout = Layout::even(args.max_distance)?;
    let ns = args.worker.service.namespace.clone();
    let writer = match &args.warc_dir {
        Some(dir) => Some(warc::writer::open_shared(dir, args.warc_max_bytes)?),
        None => None,
    };
    let text_dir = args.worker.service.text_dir.clone();
    let warc = writer.clone();
    pipeline::worker::serve_async(&args.worker, |store, keys| async move {
        let texts = match &text_dir {
            Some(dir) => Some(contentseen::texts::open(&store, &ns, dir).await?),
            None => None,
        };
        Ok::<_, anyhow::Error>(Arc::new(
            contentseen::ContentSeenStage::new(store, &ns, layout)
                .with_scale(keys.scale())
                .with_warc(warc)
                .with_texts(texts, text_dir.as_deref()),
        ))
    })
    .await?;
    if let Some(writer) = writer {
        writer.close()?;
    }
    Ok(())
}
