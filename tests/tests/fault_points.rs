//! Deterministic faults (`pipeline::fault`): a worker dies, as `kill -9`
//! would, at the exact window between two durable steps; a fresh worker of
//! the same kind takes over; the crawl must end with every page stored,
//! exported and counted exactly once, and every fetch recorded.
//!
//! The windows: a stage has stored and published what a message produced
//! but not acked it (each of the four stages); the frontier's releaser has
//! taken due tasks but not published them, or published them but not
//! confirmed them.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use crawler_tests::{expected_documents, fetch_records, is_final_failure, TestEnv, Worker};
use pipeline::fault;
use pipeline::keys::Keys;
use testsite::{Site, SiteConfig};

const MAX_DEPTH: &str = "5";

/// No 429/5xx pages: their retries back the host off for a minute, which
/// would hide how long recovery takes.
const NO_ERRORS: &str = "User-agent: *\nDisallow: /error/\nDisallow: /private/\n";

/// Crawls a small site with one worker of each kind, `binary` armed to die
/// at `point`; restarts it clean once it died; checks the result.
async fn crawl_through(binary: &str, point: &str) {
    // A task taken and never published waits for the sweep (10 s); nothing
    // else waits at all. (The rest of the crawl takes a few seconds.)
    crawl_site(binary, point, NO_ERRORS, Duration::from_secs(30)).await;
}

/// [`crawl_through`] a site whose robots.txt is `robots`; the crawl must be
/// idle within `recovery` after the worker's restart.
async fn crawl_site(
    binary: &str,
    point: &str,
    robots: &str,
    recovery: Duration,
) -> testsite::ServerHandle {
    let env = TestEnv::new(&format!("fault-{binary}"));
    crawl_in(env, binary, point, robots, recovery).await
}

/// [`crawl_site`] in `env` (texts in files, or in the store). Returns the
/// site's server, for its request log.
async fn crawl_in(
    env: TestEnv,
    binary: &str,
    point: &str,
    robots: &str,
    recovery: Duration,
) -> testsite::ServerHandle {
    let site = Site::generate(&SiteConfig {
        articles: 30,
        zh_articles: 3,
        robots_txt: Some(robots.into()),
        ..SiteConfig::default()
    });
    let server = crawler_tests::serve_site(site).await;
    let mut workers: Vec<Worker> = ["frontier", "fetcher", "extractor", "contentseen"]
        .iter()
        .filter(|b| **b != binary)
        .map(|b| env.start(b, &[]))
        .collect();
    let mut armed = env.start_with_env(binary, &[], &[(fault::ENV, point)]);
    env.crawler_ok(&[
        "seed",
        "--crawl",
        "faults",
        "--max-depth",
        MAX_DEPTH,
        "--delay-ms",
        "0",
        &server.url("/"),
    ]);

    // It dies at the point (the crawl cannot end without passing it).
    let deadline = Instant::now() + Duration::from_secs(120);
    while armed.is_running() {
        assert!(
            Instant::now() < deadline,
            "{binary} never reached {point}\n{}",
            env.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let name = point.split('@').next().unwrap_or(point);
    assert!(
        env.logs().contains(&format!("fault point {name} reached")),
        "{binary} exited, but not at {point}\n{}",
        env.logs()
    );
    let restarted = Instant::now();
    workers.push(env.start(binary, &[]));
    let out = env.crawler(&["stats", "--wait-idle", "--json", "--timeout-secs", "180"]);
    assert!(
        out.status.success(),
        "the crawl did not become idle after {binary} died at {point}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        env.logs()
    );
    let idle_after = restarted.elapsed();
    assert!(
        idle_after < recovery,
        "idle only {idle_after:?} after {binary} restarted"
    );
    eprintln!("{binary} died at {point}; idle {idle_after:?} after its restart");

    // Every page stored and exported once.
    let site = server.site();
    let base = server.base_url();
    let reachable = site.reachable("/", MAX_DEPTH.parse().unwrap());
    let want: BTreeSet<String> = expected_documents(site, MAX_DEPTH.parse().unwrap())
        .into_iter()
        .map(|p| format!("{base}{p}"))
        .collect();
    let docs = env.export();
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        *lines.entry(d.url.as_str()).or_default() += 1;
    }
    let repeated: Vec<_> = lines.iter().filter(|(_, n)| **n > 1).collect();
    assert!(repeated.is_empty(), "exported twice: {repeated:?}");
    let stored: BTreeSet<String> = lines.keys().map(|u| u.to_string()).collect();
    if stored != want {
        let why = explain_missing(&env, &want, &stored).await;
        panic!(
            "stored documents differ from the pages after {binary} died at {point}:\n{why}\n{}",
            env.logs()
        );
    }

    // Counted once.
    let stats: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    let counter = |k: &str| stats["counters"][k].as_i64().unwrap_or(-1);
    let n = docs.len() as i64;
    assert_eq!(
        counter("stored") + counter("duplicate"),
        n,
        "stored + duplicate counters vs exported lines: {stats}"
    );
    assert_eq!(counter("fetched"), n, "fetched counter: {stats}");
    assert_eq!(counter("extracted"), n, "extracted counter: {stats}");

    // Every fetch recorded.
    let store = crawler_tests::shared_store().await;
    let keys = Keys::new(&env.namespace);
    let mut missing: Vec<&String> = Vec::new();
    for p in reachable.keys() {
        if crawler_tests::fetch_record(&store, &keys, &format!("{base}{p}"))
            .await
            .is_none()
        {
            missing.push(p);
        }
    }
    assert!(missing.is_empty(), "no fetch record for {missing:?}");
    // Every fetch record (robots-disallowed URLs are not reachable pages).
    let final_failures = fetch_records(&store, &env.namespace)
        .await
        .values()
        .filter(|r| is_final_failure(r))
        .count() as i64;
    assert_eq!(
        counter("failed"),
        final_failures,
        "failed counter vs fetch records of final failures: {stats}"
    );

    drop(armed);
    drop(workers);
    env.cleanup().await;
    server
}

/// Where each page that was not stored got to, and whether the crawl was
/// still moving: what a failure needs to be understood.
async fn explain_missing(
    env: &TestEnv,
    want: &BTreeSet<String>,
    stored: &BTreeSet<String>,
) -> String {
    let missing: Vec<&String> = want.difference(stored).collect();
    let extra: Vec<&String> = stored.difference(want).collect();
    let store = crawler_tests::shared_store().await;
    // The workers' keys, at the scale they settled for the namespace.
    let keys = pipeline::scale::Scale::load(&store, Keys::new(&env.namespace))
        .await
        .unwrap_or_else(|_| Keys::new(&env.namespace));
    let mut out = format!(
        "{} missing, {} unexpected {extra:?}\n",
        missing.len(),
        extra.len()
    );
    for url in &missing {
        let h = pipeline::keys::url_hash(url);
        let origin = url::Url::parse(url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        let seen = store
            .one(pipeline::store::Op::SMIsMember {
                key: keys.seen(pipeline::keys::host_shard(&origin), h),
                members: vec![h as i64],
            })
            .await
            .and_then(|r| r.ints())
            .map(|v| v == [1])
            .unwrap_or(false);
        let fetched: Option<serde_json::Value> =
            crawler_tests::fetch_record(&store, &keys, url).await;
        out += &format!(
            "  {url}: in the seen set {seen}, fetch record {}\n",
            fetched.map_or("none".into(), |f| f.to_string())
        );
    }
    out += &format!(
        "stats then: {}\n",
        env.crawler_ok(&["stats", "--json"]).trim()
    );
    tokio::time::sleep(Duration::from_secs(15)).await;
    let later: BTreeSet<String> = env.export().into_iter().map(|d| d.url).collect();
    out += &format!(
        "15 s later, {} of them stored; stats: {}",
        missing.iter().filter(|u| later.contains(**u)).count(),
        env.crawler_ok(&["stats", "--json"]).trim()
    );
    out
}

fn after_store(stage: &str, nth: u32) -> String {
    format!("{}:{stage}@{nth}", fault::STORED_NOT_ACKED)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contentseen_dies_between_storing_a_document_and_its_ack() {
    crawl_through("contentseen", &after_store("contentseen", 5)).await;
}

/// With texts in files: contentseen dies after a document's text is in its
/// segment and before its record is stored. The redelivery writes it again
/// and stores it once; no record points at a text that is not there (the
/// export reads every text back from the files).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contentseen_dies_between_writing_a_text_and_its_record() {
    let env = TestEnv::new("fault-texts").with_text_files();
    let point = format!("{}@5", fault::TEXT_WRITTEN_NOT_RECORDED);
    crawl_in(
        env,
        "contentseen",
        &point,
        NO_ERRORS,
        Duration::from_secs(30),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fetcher_dies_between_recording_a_fetch_and_its_ack() {
    crawl_through("fetcher", &after_store("fetch", 4)).await;
}

/// A 500 is retried: the fetcher dies after sending its first retry back to
/// the frontier, before the ack; the task's redelivery must not make it a
/// second retry (fetched and counted twice). Only the 500 publishes to the
/// frontier: robots.txt keeps the fetcher off redirects and the 429/503
/// (whose Retry-After would pause the host).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fetcher_dies_between_sending_a_retry_and_its_ack() {
    let robots = "User-agent: *\nDisallow: /error/429\nDisallow: /error/503\nDisallow: /r/\nDisallow: /loop/\nDisallow: /private/\n";
    let point = format!("{}:fetch>frontier@1", fault::STORED_NOT_ACKED);
    // The 500's four attempts slow its host down: 2 + 4 + 8 + 16 s
    // between them (politeness::schedule doubles the delay per failure).
    let server = crawl_site("fetcher", &point, robots, Duration::from_secs(75)).await;
    // The 500's fetches: its attempts, and the one in flight when the
    // fetcher died, fetched again. The retry its redelivery sent again is
    // the same batch, queued once: twice, every later attempt ran twice
    // too (8 fetches).
    let attempts = 1 + fetcher::http::DEFAULT_MAX_RETRIES as usize;
    let fetched = server.request_count("/error/500");
    eprintln!("/error/500 fetched {fetched} times");
    assert!(
        (attempts..=attempts + 1).contains(&fetched),
        "/error/500 fetched {fetched} times, for {attempts} attempts"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extractor_dies_between_counting_a_page_and_its_ack() {
    crawl_through("extractor", &after_store("extract", 4)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_frontier_dies_between_queueing_links_and_the_ack() {
    crawl_through("frontier", &after_store("frontier", 3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_releaser_dies_between_publishing_and_confirming() {
    crawl_through("frontier", &format!("{}@3", fault::PUBLISHED_NOT_CONFIRMED)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_releaser_dies_between_taking_and_publishing() {
    crawl_through("frontier", &format!("{}@3", fault::TAKEN_NOT_PUBLISHED)).await;
}
