//! The fetcher as it runs: the real `fetcher` binary over the real RabbitMQ
//! and Redis against hostile servers (bounded time and memory, and it keeps
//! working), and the four real workers crawling lying-charset pages, a
//! redirect loop and pages that end in failures, read back through
//! `crawler export`, `crawler query` and `crawler stats`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crawler_tests::{peak_rss_bytes, serve_fetcher_site, TestEnv, AMQP_URL};
use pipeline::keys::Keys;
use pipeline::messages::encode;
use pipeline::{Broker, Queue, Store};
use testsite::PageKind;

/// Waits until every URL has a `fetch:<url>` record; returns them.
async fn wait_for_records(
    store: &Store,
    keys: &Keys,
    urls: &[String],
    timeout: Duration,
) -> HashMap<String, serde_json::Value> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut found: HashMap<String, serde_json::Value> = HashMap::new();
        for u in urls {
            if let Some(r) = crawler_tests::fetch_record(store, keys, u).await {
                found.insert(u.clone(), r);
            }
        }
        if found.len() == urls.len() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no outcome within {timeout:?} for {:?}",
            urls.iter()
                .filter(|u| !found.contains_key(*u))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn task(url: &str) -> Vec<u8> {
    encode(&crawler_tests::fetch_task("hostile", url, 0)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fetcher_binary_survives_hostile_servers_in_bounded_time_and_memory() {
    // Full-size hostile endpoints: a 1 GiB body, a gzip bomb inflating to
    // 1 GiB, one byte per second, headers that never come, an endless body.
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let env = TestEnv::new("fetch-hostile-bin");
    // A 4 MiB body cap (reached in milliseconds even on a loaded machine); a
    // 3 s total timeout; final outcomes.
    // A User-Agent of the operator's choosing.
    let agent = "NewsArchiveBot/2.0 (+https://archive.example/bot; bot@archive.example)";
    let fetcher = env.start(
        "fetcher",
        &[
            "--timeout-secs",
            "3",
            "--max-body-bytes",
            "4194304",
            "--max-retries",
            "0",
            "--user-agent",
            agent,
        ],
    );
    let store = crawler_tests::shared_store().await;
    crawler_tests::register_test_crawl(&store, &env.namespace, "hostile").await;
    let keys = Keys::new(&env.namespace);
    let session = Broker::amqp(AMQP_URL, &env.namespace).open().await.unwrap();

    let expected = [
        ("/hostile/drip", "timeout"),
        ("/hostile/slow-headers", "timeout"),
        ("/hostile/bomb", "too_large"),
        ("/hostile/huge", "too_large"),
        ("/hostile/endless", "too_large"),
    ];
    let urls: Vec<String> = expected.iter().map(|(p, _)| site.url(p)).collect();
    let start = Instant::now();
    let fetch = |urls: Vec<String>, within: Duration| {
        let (session, store, keys) = (&session, &store, &keys);
        async move {
            let tasks: Vec<Vec<u8>> = urls.iter().map(|u| task(u)).collect();
            session.publish(Queue::Fetch, &tasks).await.unwrap();
            wait_for_records(store, keys, &urls, within).await
        }
    };
    let records = fetch(urls.clone(), Duration::from_secs(30)).await;
    let took = start.elapsed();
    for ((path, outcome), url) in expected.iter().zip(&urls) {
        assert_eq!(
            records[url]["outcome"], *outcome,
            "{path}: {}",
            records[url]
        );
    }
    // All at once, each bounded by the 2 s timeout or the cap.
    assert!(
        took < Duration::from_secs(10),
        "hostile fetches took {took:?}"
    );

    // It keeps working.
    let after = vec![site.url("/article/1"), site.url("/zh/0")];
    let records = fetch(after.clone(), Duration::from_secs(10)).await;
    for url in &after {
        assert_eq!(records[url]["outcome"], "ok", "{}", records[url]);
    }

    for request in site.requests() {
        assert_eq!(
            request.user_agent.as_deref(),
            Some(agent),
            "{}",
            request.path
        );
    }
    let peak = peak_rss_bytes(fetcher.pid()).expect("VmHWM in /proc");
    eprintln!(
        "hostile fetches done in {took:?}; fetcher peak RSS {} MiB",
        peak / (1024 * 1024)
    );
    assert!(
        peak < 128 * 1024 * 1024,
        "fetcher peak RSS {peak} bytes against 1 GiB bodies"
    );
    drop(fetcher);
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lying_pages_are_stored_right_and_failures_are_queryable() {
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let env = TestEnv::new("fetch-pipeline");
    let workers = env.start_all();

    let lies: Vec<_> = site.site().pages_of_kind(PageKind::Lie).collect();
    assert!(lies.len() >= 7, "every kind of lie");
    let mut seeds: Vec<String> = lies.iter().map(|p| site.url(&p.path)).collect();
    for path in ["/loop/a", "/error/404", "/file.pdf", "/private/0"] {
        seeds.push(site.url(path));
    }
    let mut args = vec![
        "seed",
        "--crawl",
        "lies",
        "--max-depth",
        "0",
        "--delay-ms",
        "0",
    ];
    args.extend(seeds.iter().map(String::as_str));
    env.crawler_ok(&args);
    env.crawler_ok(&["stats", "--wait-idle", "--json", "--timeout-secs", "60"]);

    // Each lying page decoded right: the stored text is the page's text.
    let docs = env.export();
    for page in &lies {
        let url = site.url(&page.path);
        let doc = docs
            .iter()
            .find(|d| d.url == url)
            .unwrap_or_else(|| panic!("{} not stored", page.path));
        assert!(
            doc.duplicate_of.is_none(),
            "{} stored as a duplicate",
            page.path
        );
        assert_eq!(
            Some(doc.encoding.as_str()),
            page.true_encoding.as_deref(),
            "{}: header {:?}, meta {:?}",
            page.path,
            page.header_charset,
            page.meta_charset
        );
        assert_eq!(
            Some(doc.text.trim()),
            page.body_text.as_deref(),
            "text of {}",
            page.path
        );
    }
    assert_eq!(docs.len(), lies.len(), "only the lying pages are stored");

    // The redirect loop: /loop/a → /loop/b → /loop/a, which the frontier
    // has seen: each fetched once.
    assert_eq!(site.request_count("/loop/a"), 1);
    assert_eq!(site.request_count("/loop/b"), 1);
    assert_eq!(site.request_count("/private/0"), 0);

    let query = |path: &str| -> serde_json::Value {
        serde_json::from_str(env.crawler_ok(&["query", &site.url(path)]).trim()).unwrap()
    };
    let a = query("/loop/a");
    assert_eq!(a["outcome"], "redirect");
    assert_eq!(a["final_url"], site.url("/loop/b"));
    assert_eq!(query("/loop/b")["outcome"], "redirect");
    assert_eq!(query("/error/404")["outcome"], "http_error");
    assert_eq!(query("/error/404")["http_status"], 404);
    assert_eq!(query("/file.pdf")["outcome"], "not_html");
    assert_eq!(query("/private/0")["outcome"], "robots_disallowed");

    let stats: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    let counter = |k: &str| stats["counters"][k].as_i64().unwrap_or(-1);
    assert_eq!(counter("fetch_ok"), lies.len() as i64);
    assert_eq!(counter("fetched"), lies.len() as i64);
    assert_eq!(counter("fetch_redirect"), 2);
    assert_eq!(counter("fetch_http_error"), 1);
    assert_eq!(counter("fetch_not_html"), 1);
    assert_eq!(counter("fetch_robots_disallowed"), 1);
    assert_eq!(counter("failed"), 3);
    drop(workers);
    env.cleanup().await;
}
