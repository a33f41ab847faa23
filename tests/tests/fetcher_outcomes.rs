//! Every outcome of a fetch, through the real fetcher stage
//! ([`fetcher::FetcherStage::handle`]) against the local test site (and, for
//! what the test site does not serve, [`crawler_tests::canned`]), with a
//! real Redis store in a namespace of its own: the returned message, the
//! `fetch:<url>` record, the counters and the host's politeness record.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use crawler_tests::canned::{local_server, Canned};
use crawler_tests::{serve_fetcher_site, TestEnv};
use fetcher::http::{Client, FetchSettings, AGENT_NAME};
use fetcher::FetcherStage;
use pipeline::keys::Keys;
use pipeline::messages::{decode, FetchTask, Page, UrlBatch};
use pipeline::store::Op;
use pipeline::worker::Stage;
use pipeline::{Queue, Store};
use politeness::record::{BACKOFF_UNTIL_MS, DELAY_MS, FAIL_STREAK};

/// Short limits, so that each hostile fetch ends in about a second.
fn test_settings() -> FetchSettings {
    FetchSettings {
        connect_timeout: Duration::from_secs(1),
        total_timeout: Duration::from_millis(1500),
        max_body_bytes: 1024 * 1024,
        max_redirects: 3,
        max_retries: 2,
        allow_private: true,
        ..FetchSettings::default()
    }
}

/// The stage, its store and namespace.
struct Fetcher {
    env: TestEnv,
    store: Store,
    keys: Keys,
    stage: FetcherStage,
}

/// What one fetch produced, after its store operations ran.
struct Ran {
    publish: Vec<(Queue, Vec<u8>)>,
    /// The `fetch:<url>` record.
    record: serde_json::Value,
    took: Duration,
}

impl Ran {
    fn outcome(&self) -> &str {
        self.record["outcome"].as_str().unwrap_or("(none)")
    }

    fn page(&self) -> Option<Page> {
        self.publish
            .iter()
            .find(|(q, _)| *q == Queue::Extract)
            .map(|(_, bytes)| decode(bytes).unwrap())
    }

    fn batches(&self) -> Vec<UrlBatch> {
        self.publish
            .iter()
            .filter(|(q, _)| *q == Queue::Frontier)
            .map(|(_, bytes)| decode(bytes).unwrap())
            .collect()
    }
}

impl Fetcher {
    async fn new(name: &str, settings: FetchSettings) -> Fetcher {
        let env = TestEnv::in_process(name);
        let store = crawler_tests::shared_store().await;
        let client = Client::new(settings).unwrap();
        let stage = FetcherStage::new(store.clone(), &env.namespace, client);
        crawler_tests::register_test_crawl(&store, &env.namespace, "fetcher-test").await;
        Fetcher {
            keys: Keys::new(&env.namespace),
            env,
            store,
            stage,
        }
    }

    fn task(url: &str) -> FetchTask {
        crawler_tests::fetch_task("fetcher-test", url, 1)
    }

    /// Handles `task` as the worker loop would, store operations included.
    async fn run(&self, task: FetchTask) -> Ran {
        let url = task.url.clone();
        let start = Instant::now();
        let outcome = self.stage.handle(task).await.expect("the stage handles it");
        let took = start.elapsed();
        self.store.exec(&outcome.store).await.unwrap();
        self.store.exec(&outcome.after_ack).await.unwrap();
        let record = self.record(&url).await.unwrap_or_else(|| {
            panic!("no fetch record for {url}");
        });
        Ran {
            publish: outcome.publish,
            record,
            took,
        }
    }

    async fn fetch(&self, url: &str) -> Ran {
        self.run(Fetcher::task(url)).await
    }

    async fn record(&self, url: &str) -> Option<serde_json::Value> {
        crawler_tests::fetch_record(&self.store, &self.keys, url).await
    }

    async fn hash(&self, key: String) -> HashMap<String, String> {
        let items = self
            .store
            .one(Op::HGetAll { key })
            .await
            .unwrap()
            .strings()
            .unwrap();
        items
            .chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect()
    }

    /// The politeness record of an origin (`http://127.0.0.1:PORT`).
    async fn host(&self, origin: &str) -> HashMap<String, String> {
        self.hash(self.keys.host(origin)).await
    }

    async fn stats(&self) -> HashMap<String, i64> {
        pipeline::crawls::read_counters(&self.store, &self.keys)
            .await
            .unwrap()
            .total
            .into_iter()
            .collect()
    }
}

fn origin_of(url: &str) -> String {
    url::Url::parse(url).unwrap().origin().ascii_serialization()
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Asserts `ran` ended final with `outcome` (no retry, nothing published).
fn assert_final(ran: &Ran, outcome: &str) {
    assert_eq!(ran.outcome(), outcome, "record {}", ran.record);
    assert_eq!(ran.record["will_retry"], false, "record {}", ran.record);
    assert!(
        ran.publish.is_empty(),
        "{outcome}: published {:?}",
        ran.publish.iter().map(|(q, _)| q).collect::<Vec<_>>()
    );
}

/// This process's peak RSS (0 where it cannot be read).
fn peak_rss() -> u64 {
    crawler_tests::peak_rss_bytes(std::process::id()).unwrap_or(0)
}

/// The peak RSS grew by less than 64 MiB since `before` ([`peak_rss`]),
/// whatever the pages fetched meanwhile (the body cap is 1 MiB); by how
/// much it grew.
fn assert_peak_rss_grew_little(before: u64) -> u64 {
    let grown = peak_rss().saturating_sub(before);
    assert!(
        grown < 64 * 1024 * 1024,
        "peak memory grew by {grown} bytes for a 1 MiB cap"
    );
    grown
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_redirects_and_errors_end_in_their_outcomes() {
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let f = Fetcher::new("fetch-outcomes", test_settings()).await;

    // ok: an HTML page, published for extraction.
    let ok = f.fetch(&site.url("/article/0")).await;
    assert_eq!(ok.outcome(), "ok", "{}", ok.record);
    let page = ok.page().expect("a page for the extractor");
    assert_eq!(page.status, 200);
    assert_eq!(page.url, site.url("/article/0"));
    assert!(page.zstd, "the page travels compressed");
    assert_eq!(
        page.html().unwrap().as_ref(),
        site.site().response_bytes("/article/0").unwrap(),
        "a UTF-8 page reaches the extractor byte for byte"
    );
    assert_eq!(ok.record["http_status"], 200);
    assert_eq!(ok.record["encoding"], "UTF-8");

    // redirect: the target goes back to the frontier, one redirect further.
    let redirect = f.fetch(&site.url("/r/0")).await;
    assert_eq!(redirect.outcome(), "redirect");
    let target = site
        .site()
        .page("/r/0")
        .unwrap()
        .redirect_to
        .clone()
        .unwrap();
    let batches = redirect.batches();
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].links[0].url, site.url(&target));
    assert_eq!(batches[0].redirects, 1);
    assert_eq!(batches[0].attempt, 0);
    assert_eq!(batches[0].depth, 1, "a redirect target keeps the depth");
    assert_eq!(redirect.record["final_url"], site.url(&target));

    // too_many_redirects: a chain at its limit ends here.
    let mut at_limit = Fetcher::task(&site.url("/loop/a"));
    at_limit.redirects = 3;
    assert_final(&f.run(at_limit).await, "too_many_redirects");

    // http_error: a 404 is final at once (not retried).
    let missing = f.fetch(&site.url("/error/404")).await;
    assert_final(&missing, "http_error");
    assert_eq!(missing.record["http_status"], 404);

    // not_html: recorded, not decoded, nothing for the extractor.
    let pdf = f.fetch(&site.url("/file.pdf")).await;
    assert_final(&pdf, "not_html");
    assert!(pdf.record["reason"]
        .as_str()
        .unwrap()
        .contains("application/pdf"));

    // robots_disallowed: the page is never requested.
    let private = f.fetch(&site.url("/private/0")).await;
    assert_final(&private, "robots_disallowed");
    assert_eq!(site.request_count("/private/0"), 0);

    // invalid_url: too long, or not http(s); nothing is requested.
    let long = site.url(&format!("/article/0?{}", "q".repeat(3000)));
    assert_final(&f.fetch(&long).await, "invalid_url");
    assert_final(&f.fetch("ftp://127.0.0.1/file").await, "invalid_url");
    assert_final(&f.fetch("http://[::1/").await, "invalid_url");

    // connection_error on the last attempt: final.
    let closed = closed_port_url().await;
    let mut last = Fetcher::task(&closed);
    last.attempt = 2;
    assert_final(&f.run(last).await, "connection_error");

    // The site saw our User-Agent: the crawler's name, and no third
    // party's address (the contact is the operator's setting).
    let ua = site.requests()[0].user_agent.clone().unwrap();
    assert!(ua.contains(AGENT_NAME) && !ua.contains('+'), "{ua}");
    assert_eq!(
        site.request_count("/robots.txt"),
        1,
        "robots.txt fetched once"
    );

    // Counted: one per outcome; a redirect is neither fetched nor failed.
    let stats = f.stats().await;
    for (counter, n) in [
        ("fetch_ok", 1),
        ("fetch_redirect", 1),
        ("fetch_too_many_redirects", 1),
        ("fetch_http_error", 1),
        ("fetch_not_html", 1),
        ("fetch_robots_disallowed", 1),
        ("fetch_invalid_url", 3),
        ("fetch_connection_error", 1),
        ("fetched", 1),
        ("failed", 8),
    ] {
        assert_eq!(
            stats.get(counter).copied(),
            Some(n),
            "{counter} in {stats:?}"
        );
    }

    // What `crawler query` and `crawler stats` show.
    let shown: serde_json::Value =
        serde_json::from_str(f.env.crawler_ok(&["query", &site.url("/file.pdf")]).trim()).unwrap();
    assert_eq!(shown["outcome"], "not_html");
    let stats: serde_json::Value =
        serde_json::from_str(f.env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    assert_eq!(stats["counters"]["fetch_robots_disallowed"], 1);
    assert_eq!(stats["counters"]["failed"], 8);
    f.env.cleanup().await;
}

/// A URL on a local port where nothing listens.
async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/page")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_failures_are_retried_a_bounded_number_of_times() {
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let origin = origin_of(&site.base_url());
    let f = Fetcher::new("fetch-retry", test_settings()).await;

    // A 500: back to the frontier with attempt + 1, same depth and crawl,
    // until the last attempt (max_retries = 2), which is final.
    let url = site.url("/error/500");
    let mut task = Fetcher::task(&url);
    for attempt in 0..2 {
        task.attempt = attempt;
        let ran = f.run(task.clone()).await;
        assert_eq!(ran.outcome(), "http_error");
        assert_eq!(ran.record["will_retry"], true);
        assert_eq!(ran.record["attempt"], attempt);
        let batches = ran.batches();
        assert_eq!(batches.len(), 1, "a retry goes back to the frontier");
        let retry = &batches[0];
        assert_eq!(retry.attempt, attempt + 1);
        assert_eq!(retry.links.len(), 1);
        assert_eq!(retry.links[0].url, url);
        assert_eq!(retry.depth, task.depth);
        assert_eq!(retry.crawl, task.crawl);
        assert!(!retry.seeds);
        // The same task delivered again (its worker died before the ack)
        // sends the same retry: one retry, counted and fetched once.
        let again = f.run(task.clone()).await.batches();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].id, retry.id, "a redelivery is the same retry");
    }
    task.attempt = 2;
    let last = f.run(task).await;
    assert_final(&last, "http_error");
    assert_eq!(last.record["attempt"], 2);
    assert_eq!(site.request_count("/error/500"), 5);
    assert_eq!(f.host(&origin).await[FAIL_STREAK], "5");

    // A success ends the streak.
    assert_eq!(f.fetch(&site.url("/article/1")).await.outcome(), "ok");
    assert_eq!(f.host(&origin).await[FAIL_STREAK], "0");

    // 503 with Retry-After: 2 pauses the host about 2 s from now; 429 with
    // Retry-After: 1 about 1 s. Both are retried.
    for (path, secs) in [("/error/503", 2), ("/error/429", 1)] {
        let before = unix_ms();
        let ran = f.fetch(&site.url(path)).await;
        assert_eq!(ran.outcome(), "http_error");
        assert_eq!(ran.record["will_retry"], true);
        assert_eq!(ran.batches()[0].attempt, 1);
        let until: u64 = f.host(&origin).await[BACKOFF_UNTIL_MS].parse().unwrap();
        let expected = before + secs * 1000;
        assert!(
            until >= expected && until <= unix_ms() + secs * 1000,
            "{path}: backoff until {until}, expected about {expected}"
        );
    }

    // A timeout and a connection error are transient too.
    let drip = f.fetch(&site.url("/hostile/drip")).await;
    assert_eq!(drip.outcome(), "timeout");
    assert_eq!(drip.batches()[0].attempt, 1);
    let closed = f.fetch(&closed_port_url().await).await;
    assert_eq!(closed.outcome(), "connection_error");
    assert_eq!(closed.batches()[0].attempt, 1);
    let closed_origin = origin_of(closed.record["url"].as_str().unwrap());
    assert_eq!(f.host(&closed_origin).await[FAIL_STREAK], "1");

    // Retries are counted apart: not (yet) failed.
    let stats = f.stats().await;
    assert_eq!(stats.get("fetch_retried").copied(), Some(6), "{stats:?}");
    assert_eq!(stats.get("failed").copied(), Some(1), "{stats:?}");
    assert_eq!(stats.get("fetch_http_error").copied(), Some(1), "{stats:?}");
    f.env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_servers_end_in_bounded_time_and_memory() {
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let settings = test_settings();
    let limit = settings.total_timeout + Duration::from_millis(700);
    let f = Fetcher::new("fetch-hostile", settings).await;
    assert_eq!(f.fetch(&site.url("/about")).await.outcome(), "ok");
    let rss_before = peak_rss();

    for (path, outcome) in [
        // One byte per second: the total timeout ends it.
        ("/hostile/drip", "timeout"),
        // No headers for an hour.
        ("/hostile/slow-headers", "timeout"),
        // 1 GiB of zeros in about 1 MB of gzip: stops at the cap.
        ("/hostile/bomb", "too_large"),
        // A 1 GiB body.
        ("/hostile/huge", "too_large"),
        // A chunked body that never ends.
        ("/hostile/endless", "too_large"),
    ] {
        let mut task = Fetcher::task(&site.url(path));
        task.attempt = 2; // the last attempt: the outcome is final
        let ran = f.run(task).await;
        assert_final(&ran, outcome);
        assert!(ran.took < limit, "{path} took {:?}", ran.took);
        eprintln!("{path}: {outcome} in {:?}", ran.took);
        // The fetcher keeps working.
        let after = f.fetch(&site.url("/article/3")).await;
        assert_eq!(after.outcome(), "ok", "after {path}: {}", after.record);
        assert!(after.page().is_some());
    }
    let grown = assert_peak_rss_grew_little(rss_before);
    eprintln!(
        "peak RSS grew by {} KiB over the hostile fetches",
        grown / 1024
    );
    f.env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_disallow_and_crawl_delay_are_obeyed() {
    let site = serve_fetcher_site(Some(testsite::robots_txt_with_crawl_delay(0.2))).await;
    let origin = origin_of(&site.base_url());
    let f = Fetcher::new("fetch-robots", test_settings()).await;

    // Many tasks for a new host at once: robots.txt is fetched once.
    // (The politeness gate spaces them by the Crawl-delay; one whose turn
    // is too far off goes back to the frontier instead.)
    let tasks = (0..3).map(|n| Fetcher::task(&site.url(&format!("/article/{n}"))));
    let outcomes =
        futures_util::future::join_all(tasks.map(|t| async { f.stage.handle(t).await.unwrap() }))
            .await;
    for outcome in &outcomes {
        f.store.exec(&outcome.store).await.unwrap();
        f.store.exec(&outcome.after_ack).await.unwrap();
        let queues: Vec<Queue> = outcome.publish.iter().map(|(q, _)| *q).collect();
        assert!(
            queues == [Queue::Extract] || queues == [Queue::Frontier],
            "{queues:?}"
        );
    }
    assert!(outcomes
        .iter()
        .any(|o| o.publish.iter().any(|(q, _)| *q == Queue::Extract)));
    assert_eq!(site.request_count("/robots.txt"), 1);
    assert_final(&f.fetch(&site.url("/private/1")).await, "robots_disallowed");
    assert_eq!(site.request_count("/private/1"), 0);
    // The Crawl-delay lands in the host record, for the frontier.
    assert_eq!(f.host(&origin).await[DELAY_MS], "200");
    // The rules are cached in Redis for every fetcher.
    let cached = f
        .store
        .one(Op::Get {
            key: f.keys.robots(&origin),
        })
        .await
        .unwrap()
        .string()
        .unwrap()
        .unwrap();
    assert!(cached.contains("Crawl-delay: 0.2"), "{cached}");

    // A site without robots.txt (404): everything allowed.
    let open = serve_fetcher_site(None).await;
    assert_eq!(f.fetch(&open.url("/private/0")).await.outcome(), "ok");
    let open_host = f.host(&origin_of(&open.base_url())).await;
    assert!(!open_host.contains_key(DELAY_MS), "{open_host:?}");

    // Rules for our agent win over the `*` group.
    let ours = local_server(HashMap::from([
        (
            "/robots.txt".to_string(),
            Canned::text(
                200,
                "text/plain",
                &format!("User-agent: *\nAllow: /\n\nUser-agent: {AGENT_NAME}\nDisallow: /news/\nCrawl-delay: 1\n"),
            ),
        ),
        ("/news/1".to_string(), Canned::html("<p>news</p>")),
        ("/other".to_string(), Canned::html("<p>other</p>")),
    ]))
    .await;
    assert_final(&f.fetch(&ours.url("/news/1")).await, "robots_disallowed");
    assert_eq!(f.fetch(&ours.url("/other")).await.outcome(), "ok");
    assert_eq!(f.host(&ours.origin()).await[DELAY_MS], "1000");

    // With its own User-Agent, the crawler obeys the rules for that name.
    let custom = Fetcher::new(
        "fetch-robots-ua",
        FetchSettings {
            user_agent: "NewsArchiveBot/2.0 (+https://archive.example/bot)".into(),
            ..test_settings()
        },
    )
    .await;
    let named = local_server(HashMap::from([
        (
            "/robots.txt".to_string(),
            Canned::text(
                200,
                "text/plain",
                "User-agent: *\nAllow: /\n\nUser-agent: NewsArchiveBot\nDisallow: /\n",
            ),
        ),
        ("/other".to_string(), Canned::html("<p>other</p>")),
    ]))
    .await;
    assert_final(
        &custom.fetch(&named.url("/other")).await,
        "robots_disallowed",
    );
    assert_eq!(f.fetch(&named.url("/other")).await.outcome(), "ok");
    custom.env.cleanup().await;

    // robots.txt answering 5xx, or not at all: the host is off limits for a while.
    let broken = local_server(HashMap::from([
        (
            "/robots.txt".to_string(),
            Canned::text(500, "text/plain", "oops"),
        ),
        ("/page".to_string(), Canned::html("<p>page</p>")),
    ]))
    .await;
    // Not now, maybe later: a transient failure, retried.
    let ran = f.fetch(&broken.url("/page")).await;
    assert_eq!(ran.outcome(), "robots_disallowed", "{}", ran.record);
    assert_eq!(ran.record["will_retry"], true);
    assert_eq!(ran.batches()[0].attempt, 1);
    let hung = local_server(HashMap::from([
        ("/robots.txt".to_string(), Canned::hang()),
        ("/page".to_string(), Canned::html("<p>page</p>")),
    ]))
    .await;
    let mut last = Fetcher::task(&hung.url("/page"));
    last.attempt = 2;
    let ran = f.run(last).await;
    assert_final(&ran, "timeout");
    assert!(
        ran.record["reason"]
            .as_str()
            .unwrap()
            .contains("robots.txt"),
        "{}",
        ran.record
    );
    assert!(ran.took < Duration::from_secs(3), "{:?}", ran.took);
    for (server, outcome) in [(&broken, "robots_disallowed"), (&hung, "timeout")] {
        assert_eq!(
            server.count("/page"),
            0,
            "a page fetched despite robots.txt"
        );
        assert_eq!(server.count("/robots.txt"), 1);
        let record = f
            .store
            .one(Op::Get {
                key: f.keys.robots(&server.origin()),
            })
            .await
            .unwrap()
            .string()
            .unwrap()
            .unwrap_or_default();
        assert!(
            record.starts_with(&format!("D{outcome}\t")),
            "cached as unreachable: {record:?}"
        );
        // The frontier holds the host back until robots.txt may be asked again.
        let until: u64 = f.host(&server.origin()).await[BACKOFF_UNTIL_MS]
            .parse()
            .unwrap();
        assert!(until > unix_ms() + 60_000, "backoff until {until}");
    }
    // Asked again while the host is blocked: nothing is requested.
    let again = f.fetch(&broken.url("/page")).await;
    assert_eq!(again.outcome(), "robots_disallowed");
    assert_eq!(broken.count("/robots.txt"), 1);
    assert_eq!(broken.count("/page"), 0);
    f.env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_refused() {
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let f = Fetcher::new(
        "fetch-ssrf",
        FetchSettings {
            allow_private: false,
            ..test_settings()
        },
    )
    .await;
    let port = site.port();
    for url in [
        // IP literals.
        site.url("/article/0"),
        format!("http://[::1]:{port}/article/0"),
        format!("http://2130706433:{port}/article/0"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        // Names: localhost, and names the resolver turns into 127.0.0.1.
        format!("http://localhost:{port}/article/0"),
        format!("http://localhost.:{port}/article/0"),
    ] {
        let ran = f.fetch(&url).await;
        assert_final(&ran, "refused");
        assert!(ran.took < Duration::from_secs(2), "{url}: {:?}", ran.took);
    }
    // Nothing reached the server, not even a robots.txt request.
    assert!(site.requests().is_empty(), "{:?}", site.requests());
    let stats = f.stats().await;
    assert_eq!(stats.get("fetch_refused").copied(), Some(6), "{stats:?}");
    f.env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_loop_ends_within_max_redirects() {
    let site = serve_fetcher_site(Some(testsite::DEFAULT_ROBOTS_TXT.into())).await;
    let f = Fetcher::new("fetch-loop", test_settings()).await;
    // Play the frontier without its seen-set: follow every redirect batch.
    // (The real frontier drops the repeat of /loop/a even sooner.)
    let mut task = Fetcher::task(&site.url("/loop/a"));
    let mut hops = 0;
    let last = loop {
        let ran = f.run(task.clone()).await;
        let Some(batch) = ran.batches().pop() else {
            break ran;
        };
        assert_eq!(ran.outcome(), "redirect");
        hops += 1;
        task.url = batch.links[0].url.clone();
        task.redirects = batch.redirects;
        assert!(hops <= 3, "more hops than max_redirects");
    };
    assert_eq!(hops, 3);
    assert_final(&last, "too_many_redirects");
    f.env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_encodings_are_decoded_and_bombs_stop_at_the_cap() {
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Encoded</title></head><body><p>{}</p></body></html>",
        "Compressed text, decoded by the fetcher. ".repeat(200)
    );
    let original = html.as_bytes();
    // Bombs: 128 MiB of zeros in each encoding; the cap is 1 MiB.
    let zeros = 128 * 1024 * 1024;
    let mut routes = HashMap::new();
    for (encoding, compress) in ENCODERS {
        routes.insert(
            format!("/{encoding}"),
            Canned::encoded(encoding, compress(original)),
        );
        routes.insert(
            format!("/bomb/{encoding}"),
            Canned::encoded(encoding, compress_zeros(encoding, zeros)),
        );
    }
    let server = local_server(routes).await;
    let f = Fetcher::new("fetch-encodings", test_settings()).await;
    for (encoding, _) in ENCODERS {
        let ran = f.fetch(&server.url(&format!("/{encoding}"))).await;
        assert_eq!(ran.outcome(), "ok", "{encoding}: {}", ran.record);
        assert_eq!(
            ran.page().unwrap().html().unwrap().as_ref(),
            original,
            "{encoding} decoded to the original"
        );
        let asked = server.headers(&format!("/{encoding}"));
        assert!(
            asked.contains("accept-encoding") && asked.contains(encoding),
            "{encoding} not offered: {asked}"
        );
    }
    let rss_before = peak_rss();
    for (encoding, _) in ENCODERS {
        let ran = f.fetch(&server.url(&format!("/bomb/{encoding}"))).await;
        assert_final(&ran, "too_large");
        eprintln!("{encoding} bomb: too_large in {:?}", ran.took);
    }
    assert_peak_rss_grew_little(rss_before);
    f.env.cleanup().await;
}

/// With WARC output on, the page carries the exchange as the WARC records
/// need it: the body as the client gave it (decompressed, not decoded), a
/// head that says so, and the request head the server saw; off, nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raw_exchange_is_kept_only_for_warc_and_reads_as_one_http_message() {
    let html = "<html><head><meta charset=\"utf-8\"></head><body><p>\u{4e2d}\u{6587} raw</p></body></html>"
        .repeat(20);
    let (_, gzip) = ENCODERS[0];
    let mut routes = HashMap::new();
    routes.insert(
        "/gzip".to_string(),
        Canned::encoded("gzip", gzip(html.as_bytes())),
    );
    let server = local_server(routes).await;
    let mut f = Fetcher::new("fetch-raw", test_settings()).await;
    let url = server.url("/gzip");
    assert_eq!(f.fetch(&url).await.page().expect("a page").raw, None);
    f.stage = f.stage.with_raw_exchange(true);
    let page = f.fetch(&url).await.page().expect("a page");
    let raw = page.raw.expect("the raw exchange, with WARC on");
    assert_eq!(raw.body().unwrap().as_ref(), html.as_bytes());
    let head = String::from_utf8(raw.response.clone()).unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(
        head.ends_with(&format!("content-length: {}\r\n\r\n", html.len())),
        "{head}"
    );
    assert!(
        !head.contains("content-encoding") && !head.contains("transfer-encoding"),
        "{head}"
    );
    assert!(
        head.contains("content-type: text/html; charset=utf-8\r\n"),
        "{head}"
    );
    let request = String::from_utf8(raw.request.clone()).unwrap();
    assert!(request.starts_with("GET /gzip HTTP/1.1\r\n"), "{request}");
    assert!(request.ends_with("\r\n\r\n"), "{request}");
    // What the request record says was sent is what the server saw.
    let asked = server.headers("/gzip").to_ascii_lowercase();
    for line in request.lines().skip(1).filter(|l| !l.is_empty()) {
        let line = line.to_ascii_lowercase();
        let (name, value) = line.split_once(": ").expect("a header line");
        assert!(
            asked.contains(name) && asked.contains(value),
            "{line:?} not in what the server saw: {asked}"
        );
    }
    f.env.cleanup().await;
}

type Encoder = fn(&[u8]) -> Vec<u8>;

/// The content encodings a crawler meets, each with a compressor.
const ENCODERS: [(&str, Encoder); 4] = [
    ("gzip", |b| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }),
    ("deflate", |b| {
        // HTTP's "deflate" is the zlib format.
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }),
    ("br", |b| {
        let mut out = Vec::new();
        {
            let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            w.write_all(b).unwrap();
        }
        out
    }),
    ("zstd", |b| zstd::bulk::compress(b, 3).unwrap()),
];

/// `n` zeros compressed in `encoding`, streamed (never `n` bytes in memory).
fn compress_zeros(encoding: &str, n: usize) -> Vec<u8> {
    let block = vec![0u8; 1 << 20];
    let feed = |w: &mut dyn Write| {
        for _ in 0..n / block.len() {
            w.write_all(&block).unwrap();
        }
    };
    match encoding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            feed(&mut e);
            e.finish().unwrap()
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            feed(&mut e);
            e.finish().unwrap()
        }
        "br" => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 1 << 16, 1, 22);
                feed(&mut w);
            }
            out
        }
        "zstd" => {
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
            feed(&mut e);
            e.finish().unwrap()
        }
        other => panic!("no encoder for {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_serves_many_tasks_and_retry_after_dates_are_read() {
    // (The stage first: building it may wait for the binaries to build.)
    let f = Fetcher::new("fetch-reuse", test_settings()).await;
    let in_30s = httpdate_in(Duration::from_secs(30));
    let server = local_server(HashMap::from([
        (
            "/robots.txt".to_string(),
            Canned::text(200, "text/plain", "User-agent: *\nAllow: /\n"),
        ),
        ("/page".to_string(), Canned::html("<p>page</p>")),
        (
            "/busy".to_string(),
            Canned {
                headers: vec![("Retry-After".into(), in_30s)],
                ..Canned::text(503, "text/html", "busy")
            },
        ),
    ]))
    .await;
    // Another host for the 429: /busy's backoff holds the first one.
    let other = local_server(HashMap::from([(
        "/slow-down".to_string(),
        Canned::text(429, "text/html", "slow down"),
    )]))
    .await;
    for _ in 0..5 {
        assert_eq!(f.fetch(&server.url("/page")).await.outcome(), "ok");
    }
    assert_eq!(server.count("/page"), 5);
    // Six requests (robots.txt and five pages); a connection is back in
    // the pool a moment after its body is read, so a request sent at once
    // may open one more.
    assert!(
        server.connections() <= 2,
        "{} connections for robots.txt and five pages: no keep-alive reuse",
        server.connections()
    );

    // Retry-After as an HTTP date, 30 s ahead (whole seconds).
    let before = unix_ms();
    let busy = f.fetch(&server.url("/busy")).await;
    assert_eq!(busy.record["will_retry"], true);
    let until: u64 = f.host(&server.origin()).await[BACKOFF_UNTIL_MS]
        .parse()
        .unwrap();
    assert!(
        until + 2_000 >= before + 30_000 && until <= unix_ms() + 30_000,
        "backoff until {until}, now {before}"
    );
    // A 429 without Retry-After on the second attempt: the default backoff.
    let mut task = Fetcher::task(&other.url("/slow-down"));
    task.attempt = 1;
    let before = unix_ms();
    let slow = f.run(task).await;
    assert_eq!(slow.batches()[0].attempt, 2);
    let until: u64 = f.host(&other.origin()).await[BACKOFF_UNTIL_MS]
        .parse()
        .unwrap();
    let expected = fetcher::politeness::backoff_after(1).as_millis() as u64;
    assert!(
        until >= before + expected && until <= unix_ms() + expected,
        "backoff until {until}, expected {expected} ms after {before}"
    );
    f.env.cleanup().await;
}

/// An HTTP date `ahead` from now.
fn httpdate_in(ahead: Duration) -> String {
    // RFC 7231 IMF-fixdate, computed here to keep the test free of a date crate.
    let secs = (SystemTime::now() + ahead)
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let rfc3339 = pipeline::messages::rfc3339_from_unix(secs); // YYYY-MM-DDTHH:MM:SSZ
    let (y, m, d) = (&rfc3339[0..4], &rfc3339[5..7], &rfc3339[8..10]);
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months[m.parse::<usize>().unwrap() - 1];
    let weekday =
        ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(secs.div_euclid(86_400) % 7) as usize];
    format!("{weekday}, {d} {month} {y} {} GMT", &rfc3339[11..19])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connect_timeout_bounds_a_host_that_never_accepts() {
    // A listener that never accepts, its backlog filled: further SYNs are
    // dropped, so a connect hangs until the client gives up.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut fillers = Vec::new();
    for _ in 0..4 {
        if let Ok(Ok(s)) = tokio::time::timeout(
            Duration::from_millis(200),
            tokio::net::TcpStream::connect(addr),
        )
        .await
        {
            fillers.push(s);
        }
    }
    let f = Fetcher::new(
        "fetch-connect",
        FetchSettings {
            connect_timeout: Duration::from_millis(500),
            total_timeout: Duration::from_secs(20),
            ..test_settings()
        },
    )
    .await;
    let mut task = Fetcher::task(&format!("http://{addr}/page"));
    task.attempt = 2;
    let ran = f.run(task).await;
    // The first connect (for robots.txt) times out after the connect timeout,
    // long before the total timeout.
    assert_final(&ran, "timeout");
    assert!(ran.took < Duration::from_secs(3), "took {:?}", ran.took);
    eprintln!(
        "connect timeout after {:?}: {}",
        ran.took, ran.record["reason"]
    );
    drop(fillers);
    drop(listener);
    f.env.cleanup().await;
}
