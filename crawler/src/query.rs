//! `crawler query`: one URL's stored document (or fetch outcome), or its
//! near-duplicates.

use anyhow::Context;
use clap::Args;
use pipeline::keys::Keys;
use pipeline::store::Op;
use pipeline::Store;

#[derive(Args)]
pub struct QueryArgs {
    /// List the URL's near-duplicates (their stored documents, one JSON line each).
    #[arg(long)]
    pub duplicates: bool,
    /// The URL (normalized the way the frontier does).
    pub url: String,
}

pub async fn run(service: &pipeline::ServiceConfig, args: QueryArgs) -> anyhow::Result<()> {
    let store = Store::redis(&service.redis_url)
        .await
        .context("connecting to Redis")?;
    let keys = Keys::new(&service.namespace);
    let url = frontier::normalize::normalize(&args.url, None)
        .map(|u| u.to_string())
        .unwrap_or(args.url.clone());
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
