//! The near-duplicate evaluation (a tenth of its bases, every kind of page)
//! through the real stages, once over the memory store (as `crawler run`)
//! and once over the real Redis (as the workers): the verdicts must be the
//! same page for page, and the figures must hold their targets on this
//! sample. The full set and its table: `cargo bench -p evaluation --bench
//! neardup`. Reads `../shared/bench`; fails when it is missing.

use evaluation::neardup::{build, run, totals, Config};
use pipeline::Store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_and_redis_give_the_same_verdicts() {
    let env = crawler_tests::TestEnv::in_process("neardup");
    let set = build(&Config {
        every: 10,
        site_articles: 20,
        ..Config::default()
    })
    .expect("the shared evaluation sets are readable");
    assert!(set.pages.len() > 200, "{} pages", set.pages.len());
    let memory = run(&set, Store::memory(), &env.namespace)
        .await
        .expect("memory run");
    let redis = crawler_tests::shared_store().await;
    let via_redis = run(&set, redis, &env.namespace).await.expect("Redis run");
    for ((m, r), p) in memory.iter().zip(&via_redis).zip(&set.pages) {
        assert_eq!(m.duplicate_of, r.duplicate_of, "{}", p.name);
        assert_eq!(
            m.doc.as_ref().map(|d| (d.article, d.distance)),
            r.doc.as_ref().map(|d| (d.article, d.distance)),
            "{}",
            p.name
        );
    }
    let all = totals(&set, &memory);
    let (tp, fp, expected) = all.iter().fold((0, 0, 0), |(a, b, c), t| {
        (a + t.tp, b + t.fp, c + t.expected)
    });
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / expected.max(1) as f64;
    eprintln!(
        "{} pages: precision {precision:.3}, recall {recall:.3}",
        set.pages.len()
    );
    assert!(expected > 50, "{expected} pages to find");
    assert!(precision >= 0.98, "precision {precision:.3}");
    assert!(recall >= 0.9, "recall {recall:.3}");
    env.cleanup().await;
}
