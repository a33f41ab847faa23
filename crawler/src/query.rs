//! `crawler query`: one URL's stored document (or fetch outcome), or its
//! near-duplicates; or, with `--text` (or `-` as the URL), the stored
//! documents near any text given on stdin; or, with `--why`, why the
//! document is (or is not) a near-duplicate, from Redis or from the JSON
//! lines of `crawler run` (`--from FILE`).

use std::io::Read;

use anyhow::Context;
use clap::Args;
use contentseen::bands::Layout;
use contentseen::reach::Reach;
use contentseen::simhash::{sketch, Fingerprint};
use contentseen::table::Table;
use pipeline::documents::{DocRecord, Documents};
use pipeline::keys::{hash_field, url_hash, Keys};
use pipeline::messages::FetchRecord;
use pipeline::once::{section, FETCH_RECORD};
use pipeline::scale::Scale;
use pipeline::store::Op;
use pipeline::{Store, StoredDocument};

#[derive(Args)]
pub struct QueryArgs {
    /// List the URL's near-duplicates (their stored documents, one JSON line each).
    #[arg(long)]
    pub duplicates: bool,
    /// Read a body text from stdin and list the stored documents within
    /// Hamming distance k of its SimHash, or within the larger radius the
    /// workers give a short text (one JSON line each, nearest first, with
    /// `query_distance`). Same as giving `-` as the URL.
    #[arg(long, conflicts_with = "duplicates")]
    pub text: bool,
    /// Explain the URL's verdict as one JSON object: the original it points
    /// to, the SimHash distance, the radius that applied, the MinHash
    /// estimate of the Jaccard similarity (the second signal) and the
    /// estimate the pair needed at that distance (`jaccard_threshold`),
    /// and both bodies' lengths in tokens; or why it is an original.
    #[arg(long, conflicts_with_all = ["duplicates", "text"])]
    pub why: bool,
    /// With `--why`: read the documents from this JSON-lines file (what
    /// `crawler run` or `crawler export` wrote) instead of Redis.
    #[arg(long, requires = "why", value_name = "FILE")]
    pub from: Option<std::path::PathBuf>,
    /// k for `--text`: the distance the contentseen workers use.
    #[arg(long, env = "CRAWLER_SIMHASH_K", default_value_t = 3)]
    pub max_distance: u32,
    /// The URL (normalized the way the frontier does); `-` for `--text`.
    #[arg(required_unless_present = "text")]
    pub url: Option<String>,
}

pub async fn run(service: &pipeline::ServiceConfig, args: QueryArgs) -> anyhow::Result<()> {
    if let (true, Some(file), Some(url)) = (args.why, &args.from, &args.url) {
        return why_from_file(file, url);
    }
    let store = service.store().await.context("connecting to Redis")?;
    let keys = Keys::new(&service.namespace);
    let docs = Documents::new(
        store.clone(),
        &service.namespace,
        service.text_dir.as_deref(),
    );
    let url = match args.url.as_deref() {
        Some(u) if u != "-" && !args.text => u.to_string(),
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the text from stdin")?;
            let layout = Layout::even(args.max_distance)?;
            return near_text(&store, &docs, &service.namespace, layout, &text).await;
        }
    };
    let url = frontier::normalize::normalize(&url, None)
        .map(|u| u.to_string())
        .unwrap_or(url);
    if args.why {
        let record = docs
            .record(&url)
            .await?
            .with_context(|| format!("{url}: not stored in namespace {:?}", service.namespace))?;
        let original = match record.duplicate_of {
            Some(of) => docs.records(&[of]).await?.pop().flatten(),
            None => None,
        };
        let doc = summary(&record, original.as_ref());
        println!(
            "{}",
            explain(&doc, original.as_ref().map(|o| summary(o, None)).as_ref())
        );
        return Ok(());
    }
    if args.duplicates {
        return duplicates(&store, &keys, &docs, &url).await;
    }
    if let Some(doc) = docs.document(&url).await? {
        println!("{}", serde_json::to_string(&doc)?);
        return Ok(());
    }
    // Fetched but not stored: show how the fetch ended.
    let (key, field) = keys.url_record(url_hash(&url));
    let record = store.one(Op::HGet { key, field }).await?.data()?;
    match record
        .as_deref()
        .and_then(|r| section(r, FETCH_RECORD))
        .map(|c| FetchRecord::from_compact(&url, c))
    {
        Some(Ok(fetch)) => println!("{}", serde_json::to_string(&fetch)?),
        Some(Err(e)) => anyhow::bail!("{url}: its fetch record does not read: {e}"),
        None => anyhow::bail!(
            "{url}: not stored and never fetched in namespace {:?}",
            service.namespace
        ),
    }
    Ok(())
}

/// `--why --from FILE`: the verdict of `url` explained from the JSON lines
/// of `crawler run` or `crawler export`.
fn why_from_file(file: &std::path::Path, url: &str) -> anyhow::Result<()> {
    let url = frontier::normalize::normalize(url, None)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| url.to_string());
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let docs: Vec<StoredDocument> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| {
                format!("{} line {}: not a stored document", file.display(), i + 1)
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let find = |u: &str| docs.iter().find(|d| d.url == u);
    let doc = find(&url).with_context(|| format!("{url}: not in {}", file.display()))?;
    let original = doc.duplicate_of.as_deref().and_then(find);
    println!("{}", explain(doc, original));
    Ok(())
}

/// `--duplicates`: the other members of `url`'s cluster, the original
/// first, one JSON line each; a line on stderr says how many and whose.
async fn duplicates(store: &Store, keys: &Keys, docs: &Documents, url: &str) -> anyhow::Result<()> {
    // From any member of a cluster: a duplicate leads to its original
    // (duplicates point at the first document of their cluster; a few
    // hops at most when an original was itself matched later).
    let mut original = url_hash(url);
    for _ in 0..16 {
        let of = docs
            .records(&[original])
            .await?
            .pop()
            .flatten()
            .and_then(|r| r.duplicate_of);
        match of {
            Some(of) if of != original => original = of,
            _ => break,
        }
    }
    let dups = pipeline::documents::duplicates_of(store, keys, original).await?;
    // The cluster but the URL asked about: the original first when the
    // URL is one of its duplicates.
    let me = url_hash(url);
    let members: Vec<u64> = std::iter::once(original)
        .filter(|o| *o != me)
        .chain(dups.into_iter().filter(|d| *d != me))
        .collect();
    let mut reader = None;
    let mut original_url = None;
    for (h, record) in members.iter().zip(docs.records(&members).await?) {
        if let Some(r) = record {
            if *h == original {
                original_url = Some(r.url.clone());
            }
            println!("{}", serde_json::to_string(&docs.full(&r, &mut reader)?)?);
        }
    }
    if original == me {
        eprintln!("{} near-duplicate(s) of {url}", members.len());
    } else {
        eprintln!(
            "{url} is a near-duplicate of {}: {} other document(s) in its cluster",
            original_url.unwrap_or_else(|| format!("{original:016x}")),
            members.len()
        );
    }
    Ok(())
}

/// A stored document as its record has it (no text, no images): what
/// `--why` explains. `original`: the record of the document it points to.
fn summary(r: &DocRecord, original: Option<&DocRecord>) -> StoredDocument {
    StoredDocument {
        url: r.url.clone(),
        final_url: r.url.clone(),
        status: 0,
        encoding: String::new(),
        title: r.title.clone(),
        published: r.published.as_ref().map(|p| p.text()),
        author: r.author.clone(),
        authors: Vec::new(),
        text: String::new(),
        simhash: format!("{:016x}", r.simhash),
        duplicate_of: original
            .map(|o| o.url.clone())
            .or_else(|| r.duplicate_of.map(|h| format!("{h:016x}"))),
        distance: r.distance,
        fetched_at: r.fetched_at.text(),
        crawl: r.crawl.clone(),
        depth: 0,
        lang: None,
        site_name: None,
        images: Vec::new(),
        changed_at: None,
        unchanged: 0,
        article: r.article,
        tokens: r.tokens,
        radius: r.radius,
        jaccard: r.jaccard,
        charset_override: None,
        warc_record_id: None,
    }
}

/// Why `doc` is what it is, as one JSON object (`original` is the stored
/// document it points to, when it is a near-duplicate).
pub fn explain(doc: &StoredDocument, original: Option<&StoredDocument>) -> serde_json::Value {
    let verdict = match (&doc.duplicate_of, doc.article) {
        (Some(_), _) => "near-duplicate",
        (None, false) => "original without an article (never a near-duplicate)",
        (None, true) => "original",
    };
    let mut why = serde_json::json!({
        "url": doc.url,
        "verdict": verdict,
        "article": doc.article,
        "tokens": doc.tokens,
        "simhash": doc.simhash,
    });
    if let Some(of) = &doc.duplicate_of {
        let matched_by = match (doc.distance, doc.radius) {
            (Some(0), _) if doc.tokens < contentseen::simhash::MIN_TOKENS as u32 => {
                "the same normalized text (too short for SimHash)"
            }
            (Some(d), Some(r)) if d <= r => "SimHash within the radius, confirmed by the MinHash",
            (Some(_), Some(_)) => "MinHash LSH beyond the SimHash radius",
            _ => "SimHash",
        };
        // The estimate the second signal needed at this distance (none
        // for a pair decided without it: short bodies, old records).
        let threshold = doc
            .jaccard
            .zip(doc.distance)
            .and_then(|(j, d)| contentseen::decide::threshold(d, f64::from(j)));
        let extra = serde_json::json!({
            "duplicate_of": of,
            "distance": doc.distance,
            "radius": doc.radius,
            "jaccard": doc.jaccard,
            "jaccard_threshold": threshold,
            "matched_by": matched_by,
            "original_tokens": original.map(|o| o.tokens),
            "original_simhash": original.map(|o| o.simhash.clone()),
        });
        if let (Some(w), Some(e)) = (why.as_object_mut(), extra.as_object()) {
            w.extend(e.clone());
        }
    }
    why
}

/// The stored documents near `text`: within k of its SimHash through the
/// banded table (further for a short text, as the contentseen stage
/// decides: `contentseen::reach`), or with its exact hash for a body too
/// short for SimHash.
async fn near_text(
    store: &Store,
    docs: &Documents,
    namespace: &str,
    layout: Layout,
    text: &str,
) -> anyhow::Result<()> {
    let sketch = sketch(text);
    let fp = sketch.fingerprint;
    let keys = Scale::load(store, docs.keys().clone()).await?;
    let scale = keys.scale();
    let matches: Vec<(u64, u32)> = match Reach::default().probe(&layout, &sketch) {
        Some(probe) => Table::new(store.clone(), namespace, layout)
            .with_scale(scale)
            .near(&probe)
            .await?
            .into_iter()
            .filter_map(|n| Some((n.url?, n.distance)))
            .collect(),
        None => {
            let key = keys.exact(keys.shard_of(fp.value()));
            store
                .one(Op::HGet {
                    key,
                    field: hash_field(fp.value()),
                })
                .await?
                .data()?
                .and_then(|v| String::from_utf8_lossy(&v).parse::<i64>().ok())
                .map(|h| (h as u64, 0))
                .into_iter()
                .collect()
        }
    };
    let hashes: Vec<u64> = matches.iter().map(|(h, _)| *h).collect();
    let mut reader = None;
    for ((h, d), record) in matches.iter().zip(docs.records(&hashes).await?) {
        let mut doc = match record {
            Some(r) => serde_json::to_value(docs.full(&r, &mut reader)?)?,
            // Recorded but not stored yet (a worker is on it).
            None => serde_json::json!({ "url_hash": format!("{h:016x}") }),
        };
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("query_distance".into(), (*d).into());
        }
        println!("{doc}");
    }
    let kind = match fp {
        Fingerprint::Sim(_) => "SimHash",
        Fingerprint::Exact(_) => "exact hash (short text)",
    };
    eprintln!(
        "{} stored document(s) near the text ({kind} {:016x})",
        matches.len(),
        fp.value()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(url: &str) -> StoredDocument {
        let mut d: StoredDocument = serde_json::from_value(serde_json::json!({
            "url": url, "final_url": url, "status": 200, "encoding": "UTF-8",
            "title": null, "published": null, "author": null, "text": "",
            "simhash": "00000000000000ff", "duplicate_of": null, "distance": null,
            "fetched_at": "2026-01-01T00:00:00Z", "crawl": "c"
        }))
        .expect("a stored document");
        d.tokens = 300;
        d
    }

    #[test]
    fn explains_each_kind_of_verdict() {
        let orig = stored("http://a/");
        let mut dup = stored("http://b/");
        dup.duplicate_of = Some("http://a/".into());
        dup.distance = Some(9);
        dup.radius = Some(6);
        dup.jaccard = Some(0.55);
        let why = explain(&dup, Some(&orig));
        assert_eq!(why["verdict"], "near-duplicate");
        assert_eq!(why["duplicate_of"], "http://a/");
        assert_eq!(why["distance"], 9);
        assert_eq!(why["radius"], 6);
        assert_eq!(why["original_tokens"], 300);
        assert_eq!(why["matched_by"], "MinHash LSH beyond the SimHash radius");
        assert!((why["jaccard"].as_f64().unwrap_or(0.0) - 0.55).abs() < 1e-6);
        assert_eq!(
            why["jaccard_threshold"].as_f64(),
            contentseen::decide::threshold(9, 0.55)
        );
        assert!(why["jaccard_threshold"].as_f64().is_some());
        dup.distance = Some(2);
        assert_eq!(
            explain(&dup, Some(&orig))["matched_by"],
            "SimHash within the radius, confirmed by the MinHash"
        );
        let mut listing = stored("http://c/");
        listing.article = false;
        assert_eq!(
            explain(&listing, None)["verdict"],
            "original without an article (never a near-duplicate)"
        );
        assert_eq!(explain(&orig, None)["verdict"], "original");
    }
}
