//! `cargo bench -p evaluation --bench neardup`: the near-duplicate verdicts
//! on HTML pages from AEB, CWCED, the charset corpus and the test site,
//! decided through the real stages; precision and recall per kind, script,
//! length and source, tuned and held aside (see `evaluation::neardup`).
//!
//! Runs over the memory store (as `crawler run`) and, unless
//! `NEARDUP_SKIP_REDIS=1`, again over the shared Redis (as the workers) in a
//! namespace of its own that it deletes at the end; the two runs' verdicts
//! must be the same. `NEARDUP_SEED` changes the draws (default 2026).

use evaluation::neardup::{build, report, run, totals, Config};
use pipeline::Store;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut config = Config::default();
    if let Some(seed) = std::env::var("NEARDUP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        config.seed = seed;
    }
    let started = std::time::Instant::now();
    let set = build(&config).unwrap_or_else(|e| panic!("building the set: {e}"));
    println!("# Near-duplicate verdicts through the real stages\n");
    let memory = run(&set, Store::memory(), "eval")
        .await
        .unwrap_or_else(|e| panic!("memory run: {e}"));
    print!("{}", report(&set, &memory));
    let [tuned, held] = totals(&set, &memory);
    println!(
        "\nTOTAL tuned: precision {:.4} recall {:.4} | held aside: precision {:.4} recall {:.4} ({:.1} s)",
        tuned.precision(),
        tuned.recall(),
        held.precision(),
        held.recall(),
        started.elapsed().as_secs_f64()
    );
    if std::env::var("NEARDUP_SKIP_REDIS").is_ok_and(|v| v == "1") {
        return;
    }
    let ns = format!("neardup-bench-{}", std::process::id());
    let store = Store::redis("redis://127.0.0.1:6379/")
        .await
        .unwrap_or_else(|e| panic!("Redis: {e}"));
    let redis = run(&set, store.clone(), &ns)
        .await
        .unwrap_or_else(|e| panic!("Redis run: {e}"));
    let differ = memory
        .iter()
        .zip(&redis)
        .filter(|(a, b)| a.duplicate_of != b.duplicate_of)
        .count();
    println!("Redis run: {differ} verdicts differ from the memory run");
    if let Err(e) = store.delete_matching(&format!("{ns}:*")).await {
        eprintln!("could not delete the namespace {ns}: {e}");
    }
    assert_eq!(differ, 0, "the Redis and memory runs must agree");
}
