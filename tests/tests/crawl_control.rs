//! Crawl control on the real services with the real binaries: `crawler
//! crawls`, `pause`/`resume`, `cancel` and `reset`, and the per-crawl
//! counters of `crawler stats`.

use std::time::{Duration, Instant};

use crawler_tests::TestEnv;
use pipeline::keys::Keys;
use pipeline::messages::encode;
use pipeline::store::Op;
use pipeline::{Broker, FetchTask, Queue, Store};
use serde_json::Value;
use testsite::{serve, ServerHandle, Site, SiteConfig};

/// A small generated site (a few dozen pages: articles, copies, errors,
/// redirects); `seed` makes two sites differ.
async fn small_site(seed: u64) -> ServerHandle {
    let site = Site::generate(&SiteConfig {
        articles: 20,
        zh_articles: 2,
        seed,
        mirrors: 2,
        copies: 2,
        edits: 2,
        same_topic_pairs: 1,
        private_pages: 2,
        redirects: 2,
        links_per_index: 10,
        ..SiteConfig::default()
    });
    serve(site, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

/// `crawler crawls --json`: crawl name → its line.
fn crawls(env: &TestEnv) -> std::collections::BTreeMap<String, Value> {
    env.crawler_ok(&["crawls", "--json"])
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l}: {e}"));
            (v["crawl"].as_str().expect("crawl name").to_string(), v)
        })
        .collect()
}

fn stats(env: &TestEnv) -> Value {
    serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).expect("stats JSON")
}

/// Polls `crawls` until `crawl` is in `state`; panics with the last view
/// after `timeout`.
fn wait_state(env: &TestEnv, crawl: &str, state: &str, timeout: Duration) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let all = crawls(env);
        if let Some(c) = all.get(crawl).filter(|c| c["state"] == state) {
            return c.clone();
        }
        assert!(
            Instant::now() < deadline,
            "crawl {crawl} not {state} after {timeout:?}: {all:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn int(v: &Value, field: &str) -> i64 {
    v[field]
        .as_i64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

/// Panics unless `site` got no request at all (`whose`: the crawl's state).
fn never_asked(site: &ServerHandle, whose: &str) {
    let paths: Vec<String> = site.requests().into_iter().map(|r| r.path).collect();
    assert!(
        paths.is_empty(),
        "{whose} crawl's site was asked: {paths:?}"
    );
}

/// The namespace's `seen` counter, if any.
async fn seen(store: &Store, keys: &Keys) -> Option<String> {
    let counters = pipeline::crawls::read_counters(store, keys).await.unwrap();
    counters.total.get("seen").map(i64::to_string)
}

fn seed(env: &TestEnv, crawl: &str, extra: &[&str], urls: &[String]) {
    env.seed(crawl, extra, urls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_crawl_releases_nothing_while_another_goes_on_until_resumed() {
    let site_a = small_site(1).await;
    let site_b = small_site(2).await;
    let env = TestEnv::new("pause");
    // Seeded and paused before any worker runs, so not one of its URLs can
    // have been released before the pause.
    seed(&env, "a", &[], &[site_a.url("/")]);
    let said = env.crawler_ok(&["pause", "--crawl", "a"]);
    assert!(said.contains("paused"), "{said}");
    let _workers = env.start_all();
    seed(&env, "b", &["--max-pages", "15"], &[site_b.url("/")]);

    let b = wait_state(&env, "b", "finished-idle", Duration::from_secs(120));
    let a = crawls(&env)["a"].clone();
    assert_eq!(a["state"], "paused");
    assert_eq!(int(&a, "released"), 1, "the seed admitted: {a}");
    assert_eq!(int(&a, "fetched") + int(&a, "failed"), 0, "{a}");
    never_asked(&site_a, "a paused");
    assert!(int(&stats(&env), "waiting_for_host") >= 1);
    // Waiting for idleness cannot end while a crawl is paused, and says why.
    let out = env.crawler(&["stats", "--wait-idle", "--timeout-secs", "3"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "idle with a paused crawl: {said}");
    assert!(
        said.contains("paused: a;") && said.contains("crawler resume --crawl"),
        "{said}"
    );
    // The other crawl went on, within its limit.
    assert_eq!(int(&b, "of"), 15);
    assert_eq!(b["max_pages"], 15);
    assert!(int(&b, "released") <= 15 && int(&b, "fetched") > 5, "{b}");
    assert!(!site_b.requests().is_empty());

    let said = env.crawler_ok(&["resume", "--crawl", "a"]);
    assert!(said.contains("resumed"), "{said}");
    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "180"]);
    let all = crawls(&env);
    let a = &all["a"];
    assert_eq!(a["state"], "finished-idle", "{a}");
    assert!(int(a, "fetched") > 20, "{a}");
    // Every crawl's counters add up, and to the namespace's.
    let s = stats(&env);
    for (field, counter) in [
        ("released", "seen"),
        ("fetched", "fetched"),
        ("failed", "failed"),
        ("stored", "stored"),
        ("duplicates", "duplicate"),
    ] {
        let sum: i64 = all.values().map(|c| int(c, field)).sum();
        assert_eq!(sum, int(&s["counters"], counter), "{field}: {all:?} vs {s}");
    }
    for c in all.values() {
        assert_eq!(
            int(c, "done"),
            int(c, "released"),
            "every URL has its outcome: {c}"
        );
        assert_eq!(
            int(c, "stored") + int(c, "duplicates"),
            int(c, "fetched"),
            "every page fetched is stored: {c}"
        );
    }
    // The text views: the table, and a progress bar per crawl.
    let table = env.crawler_ok(&["crawls"]);
    assert!(table.starts_with("crawl"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("a ") && l.contains("finished-idle")),
        "{table}"
    );
    let watch = env.crawler_ok(&["stats", "--watch", "--count", "1"]);
    let bar_of = |crawl: &str| {
        watch
            .lines()
            .find(|l| l.starts_with(&format!("crawl {crawl} ")))
            .unwrap_or_else(|| panic!("no line for crawl {crawl}: {watch}"))
            .to_string()
    };
    assert!(
        bar_of("a").contains("100%") && bar_of("a").contains("discovered"),
        "{watch}"
    );
    assert!(
        bar_of("b").contains("pages") && bar_of("b").contains("fetched/s"),
        "{watch}"
    );
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_crawl_loses_its_queued_urls_and_messages_while_another_goes_on() {
    let site_a = small_site(3).await;
    let site_b = small_site(4).await;
    let env = TestEnv::new("cancel");
    let urls: Vec<String> = (0..10)
        .map(|i| site_a.url(&format!("/article/{i}")))
        .chain([site_a.url("/")])
        .collect();
    seed(&env, "a", &[], &urls);
    env.crawler_ok(&["pause", "--crawl", "a"]);
    let _workers = env.start_all();
    // Its eleven URLs reach their host queue, and stay there.
    let deadline = Instant::now() + Duration::from_secs(120);
    while int(&stats(&env), "waiting_for_host") < 11 {
        assert!(
            Instant::now() < deadline,
            "seeds not queued: {}",
            stats(&env)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    seed(&env, "b", &[], &[site_b.url("/")]);

    let said = env.crawler_ok(&["cancel", "--crawl", "a"]);
    assert!(said.contains("11 queued URL(s) dropped"), "{said}");
    // A message of the cancelled crawl already in RabbitMQ, once the workers'
    // cached crawl states are refreshed: acked without work.
    tokio::time::sleep(pipeline::crawls::CrawlStates::REFRESH + Duration::from_millis(500)).await;
    let task = FetchTask {
        id: "cancelled-task".into(),
        ..crawler_tests::fetch_task("a", &site_a.url("/article/15"), 1)
    };
    let session = Broker::amqp(&env.amqp_url, &env.namespace)
        .open()
        .await
        .unwrap();
    session
        .publish(Queue::Fetch, &[encode(&task).unwrap()])
        .await
        .unwrap();

    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "180"]);
    never_asked(&site_a, "a cancelled");
    let all = crawls(&env);
    assert_eq!(all["a"]["state"], "cancelled");
    assert_eq!(int(&all["a"], "fetched") + int(&all["a"], "failed"), 0);
    assert_eq!(all["b"]["state"], "finished-idle");
    assert!(int(&all["b"], "fetched") > 20, "{:?}", all["b"]);
    assert_eq!(int(&stats(&env), "waiting_for_host"), 0);

    // A cancelled crawl stays cancelled; an unknown one is refused.
    let out = env.crawler(&["resume", "--crawl", "a"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cancelled"));
    let out = env.crawler(&["seed", "--crawl", "a", &site_a.url("/article/16")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cancelled"));
    let out = env.crawler(&["pause", "--crawl", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no crawl \"nope\""));
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_deletes_everything_of_its_namespace_and_nothing_else() {
    let site = small_site(5).await;
    let env = TestEnv::new("reset");
    let store = env.store().await;
    // A namespace whose name starts with this one's: not touched.
    let neighbour = Keys::new(&format!("{}x", env.namespace));
    store
        .one(Op::HIncr {
            key: neighbour.stats_of_shard(0),
            field: "seen".into(),
            by: 7,
        })
        .await
        .unwrap();

    let mut frontier = env.start("frontier", &[]);
    seed(&env, "r", &[], &[site.url("/")]);
    let keys = Keys::new(&env.namespace);
    let mine = keys.namespace_pattern();
    // Two minutes: a loaded machine is slow to start the frontier.
    let deadline = Instant::now() + Duration::from_secs(120);
    // The frontier admitted the seed (and released it to the fetch queue).
    loop {
        if seen(&store, &keys).await.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the frontier never admitted the seed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Without --yes: explained, refused, nothing deleted.
    let out = env.crawler(&["reset"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    // With a live worker: refused.
    let out = env.crawler(&["reset", "--yes"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("live"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!store.keys_matching(&mine).await.unwrap().is_empty());

    frontier.terminate();
    // A message waiting in a queue goes too.
    seed(&env, "r2", &[], &[site.url("/article/1")]);
    let said = env.crawler_ok(&["reset", "--yes"]);
    assert!(said.contains("reset"), "{said}");
    assert_eq!(
        store.keys_matching(&mine).await.unwrap(),
        Vec::<String>::new()
    );
    let session = Broker::amqp(&env.amqp_url, &env.namespace)
        .open()
        .await
        .unwrap();
    for q in session.queue_depths().await.unwrap() {
        assert_eq!(q.ready, 0, "{} not purged", q.queue);
    }
    assert!(crawls(&env).is_empty());
    assert_eq!(seen(&store, &neighbour).await.as_deref(), Some("7"));
    store
        .delete_matching(&neighbour.namespace_pattern())
        .await
        .unwrap();
    env.cleanup().await;
}
