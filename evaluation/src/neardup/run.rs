//! The run of the near-duplicate set through the real stages: the
//! fetcher's charset vote, the extractor stage and the contentseen stage
//! over the store given, and what each page's stored document says.

use std::collections::HashMap;

use pipeline::messages::{decode, Document, VERSION};

use pipeline::worker::Stage;
use pipeline::{CrawlSpec, Queue, Store, StoredDocument};

use super::EvalSet;

/// What was stored for a page.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The page the stored document names as its original.
    pub duplicate_of: Option<usize>,
    pub doc: Option<StoredDocument>,
    /// The body text the extractor gave.
    pub text: String,
}

/// Runs every page through the charset vote, the extractor stage and the
/// contentseen stage over `store` in `namespace`, and reads back what was
/// stored. Needs a multi-threaded Tokio runtime (the extractor stage runs
/// extraction in `block_in_place`).
pub async fn run(set: &EvalSet, store: Store, namespace: &str) -> Result<Vec<Decided>, String> {
    let extractor = extractor::stage::ExtractorStage::new(store.clone(), namespace);
    let contentseen = contentseen::ContentSeenStage::new(
        store.clone(),
        namespace,
        contentseen::bands::Layout::default(),
    );
    let crawl = CrawlSpec {
        name: "eval".into(),
        max_depth: 0,
        ..CrawlSpec::default()
    };
    let crawl = pipeline::crawls::register(&store, &pipeline::keys::Keys::new(namespace), &crawl)
        .await
        .map_err(|e| format!("storing the crawl's settings: {e}"))?;
    let mut texts = Vec::with_capacity(set.pages.len());
    for p in &set.pages {
        let header = p.served.content_type.as_deref();
        let (decision, html) = charset::decide_and_decode(
            &p.served.bytes,
            &charset::Signals {
                header,
                ..Default::default()
            },
        );
        let page = pipeline::Page {
            v: VERSION,
            crawl: crawl.clone(),
            url: p.served.url.clone(),
            final_url: p.served.url.clone(),
            depth: 0,
            status: 200,
            content_type: p.served.content_type.clone(),
            encoding: decision.encoding,
            charset_override: None,
            fetched_at: "2026-01-01T00:00:00Z".into(),
            recrawl: false,
            html: html.into_bytes(),
            task: String::new(),
            zstd: false,
            raw: None,
        };
        let out = extractor
            .handle(page)
            .await
            .map_err(|e| format!("{}: extractor: {e}", p.name))?;
        let (_, bytes) = out
            .publish
            .iter()
            .find(|(q, _)| *q == Queue::ContentSeen)
            .ok_or_else(|| format!("{}: no document", p.name))?;
        let doc: Document = decode(bytes).map_err(|e| format!("{}: {e}", p.name))?;
        texts.push(doc.text.clone());
        contentseen
            .handle(doc)
            .await
            .map_err(|e| format!("{}: contentseen: {e}", p.name))?;
    }
    let docs = pipeline::documents::Documents::new(store.clone(), namespace, None);
    let mut stored_docs = Vec::with_capacity(set.pages.len());
    for p in &set.pages {
        stored_docs.push(
            docs.document(&p.served.url)
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    let index: HashMap<&str, usize> = set
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.served.url.as_str(), i))
        .collect();
    let mut out = Vec::with_capacity(set.pages.len());
    for ((p, doc), text) in set.pages.iter().zip(stored_docs).zip(texts) {
        let _ = &p.name;
        let duplicate_of = doc
            .as_ref()
            .and_then(|d| d.duplicate_of.as_deref())
            .and_then(|u| index.get(u).copied());
        out.push(Decided {
            duplicate_of,
            doc,
            text,
        });
    }
    Ok(out)
}
