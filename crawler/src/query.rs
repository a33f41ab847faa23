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
use pipeline::keys::Keys;
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
    /// estimate of the Jaccard similarity (the second signal) and both
    /// bodies' lengths in tokens; or why it is an original.
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
        let url = frontier::normalize::normalize(url, None)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| url.clone());
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
        return Ok(());
    }
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to Redis")?;
    let keys = Keys::new(&service.namespace);
    let url = match args.url.as_deref() {
        Some(u) if u != "-" && !args.text => u.to_string(),
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the text from stdin")?;
            let layout = Layout::even(args.max_distance)?;
            return near_text(&store, &keys, &service.namespace, layout, &text).await;
        }
    };
    let url = frontier::normalize::normalize(&url, None)
        .map(|u| u.to_string())
        .unwrap_or(url);
    if args.why {
        let get = |u: String| {
            let store = store.clone();
            let key = keys.document(&u);
            async move {
                let Some(json) = store.one(Op::Get { key }).await?.data()? else {
                    return Ok::<_, anyhow::Error>(None);
                };
                let doc: StoredDocument = serde_json::from_slice(&json)
                    .with_context(|| format!("stored document of {u}"))?;
                Ok(Some(doc))
            }
        };
        let doc = get(url.clone())
            .await?
            .with_context(|| format!("{url}: not stored in namespace {:?}", service.namespace))?;
        let original = match &doc.duplicate_of {
            Some(of) => get(of.clone()).await?,
            None => None,
        };
        println!("{}", explain(&doc, original.as_ref()));
        return Ok(());
    }
    if args.duplicates {
        // From any member of a cluster: a duplicate leads to its original
        // (duplicates point at the first document of their cluster; a few
        // hops at most when an original was itself matched later).
        let mut original = url.clone();
        for _ in 0..16 {
            let json = store
                .one(Op::Get {
                    key: keys.document(&original),
                })
                .await?
                .string()?;
            let of = json
                .and_then(|j| serde_json::from_str::<StoredDocument>(&j).ok())
                .and_then(|d| d.duplicate_of);
            match of {
                Some(of) if of != original => original = of,
                _ => break,
            }
        }
        let dups = store
            .one(Op::LRange {
                key: keys.duplicates(&original),
                start: 0,
                stop: -1,
            })
            .await?
            .strings()?;
        // The cluster but the URL asked about: the original first when the
        // URL is one of its duplicates.
        let members: Vec<&String> = std::iter::once(&original)
            .filter(|o| **o != url)
            .chain(dups.iter().filter(|d| **d != url))
            .collect();
        let ops: Vec<Op> = members
            .iter()
            .map(|u| Op::Get {
                key: keys.document(u),
            })
            .collect();
        for reply in store.exec(&ops).await? {
            if let Some(json) = reply.string()? {
                println!("{json}");
            }
        }
        if original == url {
            eprintln!("{} near-duplicate(s) of {url}", members.len());
        } else {
            eprintln!(
                "{url} is a near-duplicate of {original}: {} other document(s) in its cluster",
                members.len()
            );
        }
        return Ok(());
    }
    let replies = store
        .exec(&[
            Op::Get {
                key: keys.document(&url),
            },
            Op::Get {
                key: keys.fetch_outcome(&url),
            },
        ])
        .await?;
    if let Some(doc) = replies[0].string()? {
        println!("{doc}");
    } else if let Some(outcome) = replies[1].string()? {
        // Fetched but not stored: show how the fetch ended.
        println!("{outcome}");
    } else {
        anyhow::bail!(
            "{url}: not stored and never fetched in namespace {:?}",
            service.namespace
        );
    }
    Ok(())
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
        let extra = serde_json::json!({
            "duplicate_of": of,
            "distance": doc.distance,
            "radius": doc.radius,
            "jaccard": doc.jaccard,
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
    keys: &Keys,
    namespace: &str,
    layout: Layout,
    text: &str,
) -> anyhow::Result<()> {
    let sketch = sketch(text);
    let fp = sketch.fingerprint;
    let matches: Vec<(String, u32)> = match Reach::default().probe(&layout, &sketch) {
        Some(probe) => Table::new(store.clone(), namespace, layout)
            .near(&probe)
            .await?
            .into_iter()
            .filter_map(|n| Some((n.url?, n.distance)))
            .collect(),
        None => store
            .one(Op::Get {
                key: keys.exact(fp.value()),
            })
            .await?
            .string()?
            .map(|u| (u, 0))
            .into_iter()
            .collect(),
    };
    let ops: Vec<Op> = matches
        .iter()
        .map(|(u, _)| Op::Get {
            key: keys.document(u),
        })
        .collect();
    let replies = store.exec(&ops).await?;
    for ((url, d), reply) in matches.iter().zip(replies) {
        let mut doc = match reply.data()? {
            Some(json) => serde_json::from_slice::<serde_json::Value>(&json)
                .with_context(|| format!("stored document of {url}"))?,
            // Recorded but not stored yet (a worker is on it).
            None => serde_json::json!({ "url": url }),
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
