//! Sitemaps as a seed source: `crawler seed --sitemaps` finds the test
//! site's sitemap index (no `Sitemap:` line in its robots.txt, so the
//! well-known `/sitemap.xml`), follows it to both sitemaps, and seeds every
//! article they list; the workers then fetch exactly those pages.

use std::collections::BTreeSet;

use crawler_tests::TestEnv;
use testsite::PageKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_come_from_the_sitemaps() {
    let server = crawler_tests::serve_news_site(25, 3).await;
    let env = TestEnv::new("sitemaps");
    let workers = env.start_all();
    // Depth 0: only the seeds themselves are fetched.
    env.crawler_ok(&[
        "seed",
        "--sitemaps",
        "--max-depth",
        "0",
        "--delay-ms",
        "0",
        &server.url("/"),
    ]);
    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "120"]);

    let fetched: BTreeSet<String> = server.requests().into_iter().map(|r| r.path).collect();
    for file in ["/sitemap.xml", "/sitemap-articles.xml", "/sitemap-zh.xml"] {
        assert!(fetched.contains(file), "{file} not read");
    }
    let listed: BTreeSet<String> = server
        .site()
        .pages()
        .iter()
        .filter(|p| matches!(p.kind, PageKind::Article | PageKind::ZhArticle))
        .map(|p| p.path.clone())
        .collect();
    assert_eq!(listed.len(), 28);
    let pages: BTreeSet<String> = fetched
        .iter()
        .filter(|p| !p.starts_with("/sitemap") && *p != "/robots.txt")
        .cloned()
        .collect();
    let mut want = listed.clone();
    want.insert("/".into());
    assert_eq!(
        pages, want,
        "fetched pages differ from the seed and the sitemaps' URLs"
    );
    drop(workers);
    env.cleanup().await;
}
