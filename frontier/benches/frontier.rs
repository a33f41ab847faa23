//! Frontier benchmark against the real Redis at 127.0.0.1:6379 (its own
//! namespace, deleted afterwards). Prints:
//! 1. URLs/s through normalization, scope and hashing (pure, one core);
//! 2. outlinks/s through the whole frontier stage (normalize, scope, claim
//!    in the seen set, enqueue per host) from one process;
//! 3. Redis bytes per seen URL at 1M and 10M URLs.
//!
//! `cargo bench -p frontier --bench frontier` (set FRONTIER_BENCH_MAX=1000000
//! to skip the 10M step).

use std::sync::Arc;
use std::time::Instant;

use frontier::normalize::normalize;
use frontier::scope::Scope;
use frontier::seen::url_hash;
use frontier::FrontierStage;
use pipeline::keys::Keys;
use pipeline::keys::HOST_SHARDS;
use pipeline::messages::{new_id, UrlBatch};
use pipeline::store::Op;
use pipeline::worker::Stage;
use pipeline::{CrawlSpec, Link, Store};

const REDIS: &str = "redis://127.0.0.1:6379/";

fn outlink(i: u64) -> String {
    // Realistic shapes: relative and absolute, queries, tracking parameters.
    match i % 4 {
        0 => format!("/news/2024/{}/story-{i}.html", i % 12),
        1 => format!(
            "https://www.example.com/section/{}/article?id={i}&utm_source=rss",
            i % 50
        ),
        2 => format!("../tags/{}#comments", i % 1000),
        _ => format!("//cdn{}.example.com/a/{i}/", i % 8),
    }
}

#[tokio::main]
async fn main() {
    let max: u64 = std::env::var("FRONTIER_BENCH_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);

    // 1. Pure: normalize + scope + hash.
    let base = url::Url::parse("https://www.example.com/news/today/index.html").expect("base");
    let crawl = CrawlSpec {
        name: "bench".into(),
        allow_domains: vec!["example.com".into()],
        max_depth: 5,
        max_pages: None,
        delay_ms: 0,
        ..CrawlSpec::default()
    };
    let scope = Scope::compile(&crawl).expect("the bench's scope");
    let links: Vec<String> = (0..200_000).map(outlink).collect();
    let t = Instant::now();
    let mut kept = 0u64;
    for l in &links {
        if let Ok(u) = normalize(l, Some(&base)) {
            if scope.allows(&u) {
                kept += url_hash(u.as_str()) as u64 & 1;
            }
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "normalize+scope+hash: {:.0} URLs/s on one core ({} URLs, checksum {kept})",
        links.len() as f64 / secs,
        links.len()
    );

    // 2. The stage through Redis: batches of 100 outlinks, 30% seen before.
    let store = match Store::redis(REDIS).await {
        Ok(s) => s,
        Err(e) => {
            println!("redis not reachable ({e}): skipping the Redis figures");
            return;
        }
    };
    let ns = format!("bench-frontier-{}", &new_id()[..8]);
    let stage = Arc::new(FrontierStage::new(store.clone(), &ns));
    let crawl =
        match pipeline::crawls::register(&store, &pipeline::keys::Keys::new(&ns), &crawl).await {
            Ok(c) => c,
            Err(e) => {
                println!("cannot store the crawl's settings ({e}): skipping the Redis figures");
                return;
            }
        };
    let batches: Vec<UrlBatch> = (0..2000u64)
        .map(|b| {
            let links = (0..100u64)
                .map(|j| {
                    let i = b * 100 + j;
                    // 30% repeats of earlier links.
                    let n = if i % 10 < 3 { i / 3 } else { i };
                    Link::new(outlink(n))
                })
                .collect();
            UrlBatch {
                source: Some(base.to_string()),
                ..UrlBatch::new(&crawl, 1, links)
            }
        })
        .collect();
    let total_links: usize = batches.iter().map(|b| b.links.len()).sum();
    let t = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    let concurrency = 16;
    let mut it = batches.into_iter();
    for b in it.by_ref().take(concurrency) {
        let s = stage.clone();
        tasks.spawn(async move { s.handle(b).await.map(|_| ()) });
    }
    while let Some(done) = tasks.join_next().await {
        if let Ok(Err(e)) = done {
            println!("stage error: {e}");
        }
        if let Some(b) = it.next() {
            let s = stage.clone();
            tasks.spawn(async move { s.handle(b).await.map(|_| ()) });
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "frontier stage through Redis: {:.0} outlinks checked/s from one process ({total_links} outlinks in batches of 100, 16 batches at once)",
        total_links as f64 / secs
    );
    let _ = store.delete_matching(&format!("{ns}:*")).await;

    // 3. Bytes per seen URL, the seen-set layout alone.
    let keys = Keys::new(&format!("{ns}-mem"));
    let before = store.used_memory().await.unwrap_or(0);
    let mut inserted = 0u64;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for target in [1_000_000u64, 10_000_000] {
        if target > max {
            break;
        }
        while inserted < target {
            let n = (target - inserted).min(100_000);
            // URLs of hosts spread evenly over the politeness shards.
            let mut by_key: std::collections::HashMap<String, Vec<i64>> = Default::default();
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let shard = (x % u64::from(HOST_SHARDS)) as u32;
                by_key
                    .entry(keys.seen(shard, x))
                    .or_default()
                    .push(x as i64);
            }
            let ops: Vec<Op> = by_key
                .into_iter()
                .map(|(key, members)| Op::SAdd { key, members })
                .collect();
            for chunk in ops.chunks(2000) {
                store.exec(chunk).await.expect("SADD");
            }
            inserted += n;
        }
        let after = store.used_memory().await.unwrap_or(0);
        println!(
            "seen set: {:.1} bytes of Redis memory per URL at {} URLs ({} sets)",
            (after - before) as f64 / inserted as f64,
            inserted,
            u64::from(HOST_SHARDS) << keys.scale().seen_sub_bits
        );
    }
    let _ = store
        .delete_matching(&format!("{}:*", keys.namespace()))
        .await;
}
