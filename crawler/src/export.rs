//! `crawler export`: stored documents as JSON lines, in storage order.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::Store;

/// Documents read per round trip.
const EXPORT_CHUNK: i64 = 500;

#[derive(Args)]
pub struct ExportArgs {
    /// Write here instead of standard output.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

/// Writes every stored document of namespace `ns` as one JSON line; returns
/// how many.
pub async fn write_all(store: &Store, ns: &str, out: &mut dyn Write) -> anyhow::Result<u64> {
    let keys = Keys::new(ns);
    let mut start = 0i64;
    let mut written = 0u64;
    loop {
        let urls = store
            .one(Op::LRange {
                key: keys.document_log(),
                start,
                stop: start + EXPORT_CHUNK - 1,
            })
            .await?
            .strings()?;
        if urls.is_empty() {
            break;
        }
        let ops: Vec<Op> = urls
            .iter()
            .map(|u| Op::Get {
                key: keys.document(u),
            })
            .collect();
        for reply in store.exec(&ops).await? {
            if let Some(json) = reply.data()? {
                out.write_all(&json)?;
                out.write_all(b"\n")?;
                written += 1;
            }
        }
        start += urls.len() as i64;
    }
    Ok(written)
}

pub async fn run(service: &pipeline::ServiceConfig, args: ExportArgs) -> anyhow::Result<()> {
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to Redis")?;
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let n = write_all(&store, &service.namespace, &mut out).await?;
    out.flush()?;
    eprintln!("exported {n} document(s)");
    Ok(())
}
