//! Operating a crawl: `crawler stats --watch` while it runs, `crawler export`
//! with its filters and cursor, and workers that stop cleanly on SIGTERM.

use std::time::{Duration, Instant};

use crawler_tests::{free_port, http_get, metric, parse_documents, TestEnv};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_export_and_shutdown() {
    let server = crawler_tests::serve_news_site(60, 4).await;
    let env = TestEnv::new("operate");
    let metrics_port = free_port();
    let mut workers = vec![
        env.start("frontier", &[]),
        env.start("fetcher", &[]),
        env.start("extractor", &["--metrics-port", &metrics_port.to_string()]),
        env.start("contentseen", &[]),
    ];
    env.crawler_ok(&[
        "seed",
        "--crawl",
        "limited",
        "--max-pages",
        "50",
        "--delay-ms",
        "0",
        "--max-depth",
        "4",
        &server.url("/"),
    ]);

    // Three refreshes of the live view, while the crawl runs.
    let watch = env.crawler_ok(&["stats", "--watch", "--count", "3"]);
    assert_eq!(watch.matches("-- ").count(), 3, "three refreshes:\n{watch}");
    for needle in [
        "queue ",
        ".fetch",
        "pages/s: fetched",
        "totals: seen",
        "crawl limited",
    ] {
        assert!(watch.contains(needle), "--watch lacks {needle:?}:\n{watch}");
    }
    assert!(
        watch.contains("/50"),
        "a progress bar against the page limit:\n{watch}"
    );
    let json = env.crawler_ok(&["stats", "--watch", "--json", "--count", "1"]);
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("one JSON object");
    assert!(v["queues"].is_array() && v["counters"].is_object());

    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "240"]);
    let stats: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    assert_eq!(
        stats["counters"]["seen"].as_i64(),
        Some(50),
        "the page limit holds"
    );

    // The extractor's Prometheus metrics count what it handled.
    let metrics = http_get(metrics_port, "/metrics");
    let acked = metric(
        &metrics,
        "crawler_messages_total{stage=\"extract\",outcome=\"acked\"}",
    ) as u64;
    let extracted = stats["counters"]["extracted"].as_u64().unwrap_or(0);
    assert_eq!(acked, extracted, "metrics:\n{metrics}");
    assert!(metrics.contains("crawler_message_seconds_bucket{stage=\"extract\",le=\"+Inf\"}"));

    // Export: everything, and its partitions.
    let all = env.export();
    assert!(!all.is_empty());
    let originals = parse_documents(&env.crawler_ok(&["export", "--only", "originals"]));
    let duplicates = parse_documents(&env.crawler_ok(&["export", "--only", "duplicates"]));
    assert!(originals.iter().all(|d| d.duplicate_of.is_none()));
    assert!(duplicates.iter().all(|d| d.duplicate_of.is_some()));
    assert_eq!(originals.len() + duplicates.len(), all.len());
    assert_eq!(
        parse_documents(&env.crawler_ok(&["export", "--crawl", "limited"])).len(),
        all.len()
    );
    assert!(parse_documents(&env.crawler_ok(&["export", "--crawl", "other"])).is_empty());
    // Resuming from the cursor an export printed gives what is new since:
    // nothing here; from 0, everything again.
    let out = env.crawler(&["export"]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    let cursor = said
        .rsplit("--cursor ")
        .next()
        .map(str::trim)
        .unwrap_or_else(|| panic!("no cursor in {said:?}"));
    assert!(env
        .crawler_ok(&["export", "--cursor", cursor])
        .trim()
        .is_empty());
    assert_eq!(
        parse_documents(&env.crawler_ok(&["export", "--cursor", "0"])).len(),
        all.len()
    );
    assert!(!env.crawler(&["export", "--cursor", "12"]).status.success());

    // SIGTERM: every worker stops taking messages and exits, in bounded time.
    for w in &mut workers {
        let t = Instant::now();
        let status = w.terminate();
        assert!(status.success(), "{} exited with {status}", w.name);
        assert!(
            t.elapsed() < Duration::from_secs(35),
            "{} took {:?}",
            w.name,
            t.elapsed()
        );
    }
    env.cleanup().await;
}
