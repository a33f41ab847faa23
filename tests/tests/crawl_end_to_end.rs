//! The whole crawl, end to end: the four real worker binaries as separate
//! processes over the real RabbitMQ and Redis crawl the local test site; then
//! `crawler run` crawls it again in one process, and both store the same.

use std::collections::{BTreeSet, HashMap};

use crawler_tests::{
    check_clusters, expected_documents, expected_fetches, parse_documents, path_of, TestEnv,
};
use pipeline::StoredDocument;
use testsite::PageKind;

/// Deeper than the site (every page is within 3 hops of `/`): a URL is
/// crawled at the depth it is first discovered, and with concurrent stages
/// that is not always the shortest path, so at the depth limit the set of
/// pages would depend on timing. The depth limit itself is tested in the
/// frontier's unit tests.
const MAX_DEPTH: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_and_local_mode_crawl_the_site_alike() {
    let server = crawler_tests::serve_news_site(120, 12).await;
    let base = server.base_url();
    let env = TestEnv::new("e2e");
    let workers = env.start_all();

    env.crawl_until_idle("e2e", &server.url("/"));

    // Every in-scope page fetched exactly once; nothing out of scope.
    let site = server.site();
    let expected = site.reachable("/", MAX_DEPTH);
    let mut counts: HashMap<String, usize> = HashMap::new();
    for r in server.requests() {
        let host = r.host.as_deref().unwrap_or("");
        assert!(
            host.starts_with("127.0.0.1"),
            "out-of-scope host requested: {host} {}",
            r.path
        );
        assert!(
            !r.path.starts_with("/private/"),
            "robots.txt ignored: {}",
            r.path
        );
        *counts.entry(r.path.clone()).or_default() += 1;
    }
    // Once per page; transient errors (429, 5xx) once more per retry.
    for (path, want) in expected_fetches(site, MAX_DEPTH) {
        assert_eq!(
            counts.get(&path).copied().unwrap_or(0),
            want,
            "{path} fetched {:?} times",
            counts.get(&path)
        );
    }
    for (path, n) in &counts {
        assert!(
            expected.contains_key(path) || path == "/robots.txt",
            "{path} fetched ({n}x) but not in scope"
        );
    }
    assert_eq!(
        counts.get("/robots.txt").copied(),
        Some(1),
        "robots.txt fetched once"
    );

    // What was stored: every HTML page that answered 200.
    let docs = env.export();
    let stored: BTreeSet<String> = docs.iter().map(|d| path_of(&base, &d.url)).collect();
    let want = expected_documents(site, MAX_DEPTH);
    assert_eq!(
        stored, want,
        "stored documents differ from the expected pages"
    );
    check_clusters(site, &base, &docs);

    // GBK pages: decoded and extracted to the expected Unicode text.
    let mut zh = 0;
    for d in &docs {
        let page = site.page_for_target(&path_of(&base, &d.url)).unwrap();
        if page.kind == PageKind::ZhArticle && d.duplicate_of.is_none() {
            assert_eq!(d.encoding, "GBK");
            assert_eq!(
                Some(d.text.trim()),
                page.body_text.as_deref(),
                "text of {}",
                d.url
            );
            zh += 1;
        }
    }
    assert!(zh >= 10, "only {zh} Chinese pages checked");

    // crawler query and stats report it.
    let a_dup = docs
        .iter()
        .find(|d| d.duplicate_of.is_some())
        .expect("some duplicate");
    let shown: StoredDocument =
        serde_json::from_str(env.crawler_ok(&["query", &a_dup.url]).trim()).unwrap();
    assert_eq!(&shown, a_dup);
    let original = a_dup.duplicate_of.clone().unwrap();
    let dups = parse_documents(&env.crawler_ok(&["query", "--duplicates", &original]));
    assert!(
        dups.iter().any(|d| d.url == a_dup.url),
        "query --duplicates misses {}",
        a_dup.url
    );
    // From a duplicate: the same cluster, the original first, the asked URL
    // left out.
    let from_dup = parse_documents(&env.crawler_ok(&["query", "--duplicates", &a_dup.url]));
    assert_eq!(
        from_dup.first().map(|d| d.url.as_str()),
        Some(original.as_str())
    );
    assert!(from_dup.iter().all(|d| d.url != a_dup.url));
    assert_eq!(from_dup.len(), dups.len(), "the cluster seen from a member");
    // `query --why` explains the verdict.
    let why: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["query", "--why", &a_dup.url]).trim()).unwrap();
    assert_eq!(why["verdict"], "near-duplicate");
    assert_eq!(why["duplicate_of"].as_str(), Some(original.as_str()));
    assert_eq!(why["distance"].as_u64(), a_dup.distance.map(u64::from));
    assert!(why["radius"].as_u64().is_some());
    assert!(why["original_tokens"].as_u64().is_some_and(|t| t > 0));
    assert!(why["tokens"].as_u64().is_some_and(|t| t > 0));
    let stats: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    let counter = |k: &str| stats["counters"][k].as_i64().unwrap_or(-1);
    let originals = docs.iter().filter(|d| d.duplicate_of.is_none()).count() as i64;
    assert_eq!(counter("stored"), originals);
    assert_eq!(counter("duplicate"), docs.len() as i64 - originals);
    assert_eq!(counter("fetched"), docs.len() as i64);
    assert!(counter("failed") >= 3, "error pages count as failed");
    drop(workers);
    env.cleanup().await;

    // The same crawl with no services at all.
    server.clear_requests();
    let out = tempfile_path("local-run.jsonl");
    let local = env.run_locally(&out, &["--max-depth", "5", &server.url("/")]);
    let local_set: BTreeSet<String> = local.iter().map(|d| path_of(&base, &d.url)).collect();
    assert_eq!(
        local_set, stored,
        "crawler run stored a different set of documents"
    );
    check_clusters(site, &base, &local);
    // `query --why` on what `crawler run` wrote.
    let local_dup = local
        .iter()
        .find(|d| d.duplicate_of.is_some())
        .expect("some duplicate in the local run");
    let why: serde_json::Value = serde_json::from_str(
        env.crawler_ok(&[
            "query",
            "--why",
            &local_dup.url,
            "--from",
            out.to_str().unwrap(),
        ])
        .trim(),
    )
    .unwrap();
    assert_eq!(why["verdict"], "near-duplicate");
    assert_eq!(
        why["duplicate_of"].as_str(),
        local_dup.duplicate_of.as_deref()
    );
    assert_eq!(why["distance"].as_u64(), local_dup.distance.map(u64::from));
    assert!(why["original_tokens"].as_u64().is_some_and(|t| t > 0));
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("crawler-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}
