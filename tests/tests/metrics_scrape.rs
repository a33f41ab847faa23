//! Every worker's `/metrics` during a crawl: the crawl's series start at
//! zero and end equal to the counters `crawler stats` shows (fetches by
//! outcome, bytes, documents by verdict, URLs), a host that answers 429 is
//! counted as a backoff, and the queue depths are there.

use std::collections::BTreeMap;

use crawler_tests::{free_port, metric, stub_site, try_http_get, TestEnv};
use testsite::{serve, Site, SiteConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_with_the_crawl() {
    let site = Site::generate(&SiteConfig {
        articles: 30,
        zh_articles: 2,
        ..SiteConfig::default()
    });
    let server = serve(site, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    // A host that asks to be left alone (robots.txt aside: a 429 there
    // would forbid the whole site).
    let busy = stub_site::serve(|request| stub_site::Response {
        status: if request.path == "/robots.txt" {
            "404 Not Found"
        } else {
            "429 Too Many Requests"
        },
        content_type: "text/plain".into(),
        body: b"slow down".to_vec(),
    });
    let env = TestEnv::new("metrics");
    let stages = ["frontier", "fetcher", "extractor", "contentseen"];
    let ports: BTreeMap<&str, u16> = stages.iter().map(|s| (*s, free_port())).collect();
    let mut workers = Vec::new();
    for stage in stages {
        let port = ports[stage].to_string();
        let mut args = vec!["--metrics-port", port.as_str()];
        if stage == "fetcher" {
            // A 429 is final at once, so the crawl ends soon.
            args.extend(["--max-retries", "0"]);
        }
        workers.push(env.start(stage, &args));
    }
    let scrape = |stage: &str| {
        // The worker's server starts with it: retry for a few seconds.
        for _ in 0..50 {
            if let Ok(text) = try_http_get(ports[stage], "/metrics") {
                if text.contains("# EOF") {
                    return text;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!("{stage} serves no metrics:\n{}", env.logs());
    };
    let before = scrape("fetcher");
    assert_eq!(
        metric(&before, "crawler_fetched_bytes_total{stage=\"fetch\"}"),
        0.0
    );

    env.crawler_ok(&[
        "seed",
        "--delay-ms",
        "0",
        "--max-depth",
        "3",
        &server.url("/"),
    ]);
    env.crawler_ok(&["seed", "--crawl", "busy", &format!("{busy}/")]);
    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "240"]);
    let stats: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    let counter = |name: &str| stats["counters"][name].as_f64().unwrap_or(0.0);

    let fetch = scrape("fetcher");
    assert!(counter("fetch_ok") > 20.0, "{stats}");
    for outcome in ["ok", "http_error"] {
        assert_eq!(
            metric(
                &fetch,
                &format!("crawler_fetches_total{{stage=\"fetch\",outcome=\"{outcome}\"}}")
            ),
            counter(&format!("fetch_{outcome}")),
            "fetches {outcome}:\n{fetch}"
        );
    }
    let bytes = metric(&fetch, "crawler_fetched_bytes_total{stage=\"fetch\"}");
    assert!(
        bytes > 1000.0 * counter("fetch_ok"),
        "bytes {bytes}:\n{fetch}"
    );
    assert_eq!(
        bytes,
        counter("fetched_bytes"),
        "the stats count the bytes too"
    );
    let backoffs: f64 = fetch
        .lines()
        .filter(|l| l.starts_with("crawler_host_backoffs_total{") && l.contains(&busy))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(backoffs >= 1.0, "the 429 host backed off:\n{fetch}");
    assert!(
        fetch.lines().any(
            |l| l.starts_with("crawler_queue_messages{stage=\"fetch\",queue=\"")
                && l.contains(".fetch\"} ")
        ),
        "queue depths:\n{fetch}"
    );

    let seen = scrape("contentseen");
    for verdict in ["stored", "duplicate"] {
        assert_eq!(
            metric(
                &seen,
                &format!("crawler_documents_total{{stage=\"contentseen\",verdict=\"{verdict}\"}}")
            ),
            counter(verdict),
            "documents {verdict}:\n{seen}"
        );
    }
    assert!(
        counter("stored") > 10.0 && counter("duplicate") > 0.0,
        "{stats}"
    );

    let frontier = scrape("frontier");
    assert_eq!(
        metric(
            &frontier,
            "crawler_urls_total{stage=\"frontier\",outcome=\"seen\"}"
        ),
        counter("seen"),
        "{frontier}"
    );
    let extract = scrape("extractor");
    assert_eq!(
        metric(
            &extract,
            "crawler_events_total{stage=\"extract\",event=\"extracted\"}"
        ),
        counter("extracted"),
        "{extract}"
    );

    for w in &mut workers {
        w.kill();
    }
    env.cleanup().await;
}
