//! `crawler export`: stored documents as JSON lines, each export log in
//! storage order ([`pipeline::documents`]), resumable from a cursor.

use std::io::Write;

use anyhow::Context;
use clap::Args;
use pipeline::documents::{Cursor, DocRecord, Documents};
use pipeline::Store;

/// URL hashes read per export log per round trip.
const EXPORT_CHUNK: i64 = 64;

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
    /// Start where an earlier export stopped: the cursor it printed (`0`,
    /// the default, is the start), to resume or to take only what is new.
    #[arg(long, default_value = "0")]
    pub cursor: Cursor,
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
    /// Decided on the record alone: no text is read for a document left out.
    fn keeps(&self, r: &DocRecord) -> bool {
        let kind_ok = match self.only {
            None => true,
            Some(Only::Originals) => r.duplicate_of.is_none(),
            Some(Only::Duplicates) => r.duplicate_of.is_some(),
        };
        kind_ok && self.crawl.as_ref().is_none_or(|c| *c == r.crawl)
    }
}

/// Writes every stored document as one JSON line; returns how many.
pub async fn write_all(docs: &Documents, out: &mut dyn Write) -> anyhow::Result<u64> {
    Ok(
        write_from(docs, out, &Cursor::default(), &Filter::default())
            .await?
            .0,
    )
}

/// Writes the stored documents logged after `cursor` that pass `filter`,
/// streaming in chunks; returns how many were written and the cursor to
/// resume from. A page changed by a refetch is logged again (after the
/// cursor of an earlier export); each URL is written once per export, in
/// its latest version.
pub async fn write_from(
    docs: &Documents,
    out: &mut dyn Write,
    cursor: &Cursor,
    filter: &Filter,
) -> anyhow::Result<(u64, Cursor)> {
    let mut at = cursor.clone();
    let mut written = 0u64;
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut reader = None;
    loop {
        let (hashes, next) = docs.logged(&at, EXPORT_CHUNK).await?;
        if hashes.is_empty() {
            break;
        }
        at = next;
        let fresh: Vec<u64> = hashes.into_iter().filter(|h| seen.insert(*h)).collect();
        for record in docs.records(&fresh).await?.into_iter().flatten() {
            if filter.keeps(&record) {
                let doc = docs.full(&record, &mut reader)?;
                serde_json::to_writer(&mut *out, &doc)?;
                out.write_all(b"\n")?;
                written += 1;
            }
        }
    }
    Ok((written, at))
}

/// The documents of a store in a namespace, texts from `text_dir`.
pub fn documents(store: &Store, ns: &str, text_dir: Option<&std::path::Path>) -> Documents {
    Documents::new(store.clone(), ns, text_dir)
}

pub async fn run(service: &pipeline::ServiceConfig, args: ExportArgs) -> anyhow::Result<()> {
    let store = service.store().await.context("connecting to Redis")?;
    let docs = documents(&store, &service.namespace, service.text_dir.as_deref());
    let mut out: Box<dyn Write> = match &args.out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let filter = Filter {
        only: args.only,
        crawl: args.crawl.clone(),
    };
    let (n, cursor) = write_from(&docs, &mut out, &args.cursor, &filter).await?;
    out.flush()?;
    eprintln!("exported {n} document(s); resume with --cursor {cursor}");
    Ok(())
}
