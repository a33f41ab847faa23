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
    /// Only originals, or only near-duplicates.
    #[arg(long, value_enum)]
    pub only: Option<Only>,
    /// Only the documents of this crawl.
    #[arg(long)]
    pub crawl: Option<String>,
    /// Start after this many stored documents (the cursor printed by an
    /// earlier export), to resume or to take only what is new.
    #[arg(long, default_value_t = 0)]
    pub cursor: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Only {
    Originals,
    Duplicates,
}

/// Which documents to write.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub only: Option<Only>,
    pub crawl: Option<String>,
}

impl Filter {
    fn keeps(&self, json: &[u8]) -> bool {
        if self.only.is_none() && self.crawl.is_none() {
            return true;
        }
        let Ok(doc) = serde_json::from_slice::<pipeline::StoredDocument>(json) else {
            return false;
        };
        let kind_ok = match self.only {
            None => true,
            Some(Only::Originals) => doc.duplicate_of.is_none(),
            Some(Only::Duplicates) => doc.duplicate_of.is_some(),
        };
        kind_ok && self.crawl.as_ref().is_none_or(|c| *c == doc.crawl)
    }
}

/// Writes every stored document of namespace `ns` as one JSON line; returns
/// how many.
pub async fn write_all(store: &Store, ns: &str, out: &mut dyn Write) -> anyhow::Result<u64> {
    Ok(write_from(store, ns, out, 0, &Filter::default()).await?.0)
}

/// Writes the stored documents from position `cursor` of the storage log
/// that pass `filter`, streaming in chunks; returns how many were written
/// and the cursor to resume from. A page changed by a recrawl is on the log
/// again (after the cursor of an earlier export); each URL is written once,
/// in its latest version.
pub async fn write_from(
    store: &Store,
    ns: &str,
    out: &mut dyn Write,
    cursor: u64,
    filter: &Filter,
) -> anyhow::Result<(u64, u64)> {
    let keys = Keys::new(ns);
    let mut start = cursor as i64;
    let mut written = 0u64;
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
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
        start += urls.len() as i64;
        let fresh: Vec<&String> = urls.iter().filter(|u| seen.insert((*u).clone())).collect();
        let ops: Vec<Op> = fresh
            .iter()
            .map(|u| Op::Get {
                key: keys.document(u),
            })
            .collect();
        if ops.is_empty() {
            continue;
        }
        for reply in store.exec(&ops).await? {
            if let Some(json) = reply.data()? {
                if filter.keeps(&json) {
                    out.write_all(&json)?;
                    out.write_all(b"\n")?;
                    written += 1;
                }
            }
        }
    }
    Ok((written, start as u64))
}

pub async fn run(service: &pipeline::ServiceConfig, args: ExportArgs) -> anyhow::Result<()> {
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to Redis")?;
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let filter = Filter {
        only: args.only,
        crawl: args.crawl.clone(),
    };
    let (n, cursor) =
        write_from(&store, &service.namespace, &mut out, args.cursor, &filter).await?;
    out.flush()?;
    eprintln!("exported {n} document(s); resume with --cursor {cursor}");
    Ok(())
}
