//! `crawler query`: one URL's stored document (or fetch outcome), or its
//! near-duplicates; or, with `--text` (or `-` as the URL), the stored
//! documents near any text given on stdin.

use std::io::Read;

use anyhow::Context;
use clap::Args;
use contentseen::bands::Layout;
use contentseen::reach::Reach;
use contentseen::simhash::{sketch, Fingerprint};
use contentseen::table::Table;
use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::Store;

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
    /// k for `--text`: the distance the contentseen workers use.
    #[arg(long, env = "CRAWLER_SIMHASH_K", default_value_t = 3)]
    pub max_distance: u32,
    /// The URL (normalized the way the frontier does); `-` for `--text`.
    #[arg(required_unless_present = "text")]
    pub url: Option<String>,
}

pub async fn run(service: &pipeline::ServiceConfig, args: QueryArgs) -> anyhow::Result<()> {
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
    if args.duplicates {
        let dups = store
            .one(Op::LRange {
                key: keys.duplicates(&url),
                start: 0,
                stop: -1,
            })
            .await?
            .strings()?;
        let ops: Vec<Op> = dups
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
        eprintln!("{} near-duplicate(s) of {url}", dups.len());
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
