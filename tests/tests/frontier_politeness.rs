//! Cluster-wide politeness and exactly-once release, with several real
//! frontier and fetcher processes over the real RabbitMQ and Redis.

use std::collections::HashMap;
use std::time::Duration;

use crawler_tests::{expected_fetches, TestEnv};
use pipeline::messages::{decode, encode, FetchTask, UrlBatch};
use pipeline::{Broker, CrawlSpec, Link, Queue};
use testsite::{robots_txt_with_crawl_delay, serve, Site, SiteConfig};

/// The slow host's robots.txt Crawl-delay.
const DELAY: Duration = Duration::from_millis(200);

fn small_site(robots: String) -> Site {
    Site::generate(&SiteConfig {
        articles: 30,
        zh_articles: 3,
        mirrors: 3,
        copies: 3,
        edits: 3,
        same_topic_pairs: 2,
        private_pages: 2,
        redirects: 2,
        robots_txt: Some(robots),
        ..SiteConfig::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_workers_never_fetch_a_host_faster_than_its_delay() {
    let slow = serve(
        small_site(robots_txt_with_crawl_delay(DELAY.as_secs_f64())),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let fast = serve(
        small_site(testsite::DEFAULT_ROBOTS_TXT.to_string()),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let env = TestEnv::new("polite");
    let mut workers = Vec::new();
    for _ in 0..2 {
        workers.push(env.start("frontier", &[]));
    }
    for _ in 0..4 {
        workers.push(env.start("fetcher", &[]));
    }
    workers.push(env.start("extractor", &[]));
    workers.push(env.start("contentseen", &[]));

    // One crawl over both hosts, with no delay of its own: the slow host's
    // delay comes from its robots.txt.
    env.crawler_ok(&[
        "seed",
        "--delay-ms",
        "0",
        "--max-depth",
        "5",
        &slow.url("/"),
        &fast.url("/"),
    ]);
    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "240"]);

    let pages = |h: &testsite::ServerHandle| -> Vec<u64> {
        let mut at: Vec<u64> = h
            .requests()
            .iter()
            .filter(|r| r.path != "/robots.txt")
            .map(|r| r.unix_millis)
            .collect();
        at.sort();
        at
    };
    let slow_at = pages(&slow);
    let fast_at = pages(&fast);
    // Every page once, and transient error pages once more per retry.
    let total =
        |h: &testsite::ServerHandle| -> usize { expected_fetches(h.site(), 5).values().sum() };
    assert_eq!(slow_at.len(), total(&slow), "requests to the slow host");
    assert_eq!(fast_at.len(), total(&fast), "requests to the fast host");

    // The request log of the slow host: never two requests closer than its delay
    // (robots.txt itself is fetched before the delay is known, and not counted).
    let min_gap = slow_at
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(u64::MAX);
    assert!(
        min_gap >= DELAY.as_millis() as u64,
        "two requests to the slow host {min_gap} ms apart (delay {} ms)",
        DELAY.as_millis()
    );
    // Meanwhile the other host was crawled at full speed, at the same time:
    // most of its requests came in quick succession, not one per delay.
    let mut fast_gaps: Vec<u64> = fast_at.windows(2).map(|w| w[1] - w[0]).collect();
    fast_gaps.sort();
    let median = fast_gaps[fast_gaps.len() / 2];
    assert!(
        median < DELAY.as_millis() as u64 / 4,
        "the fast host was throttled: median gap {median} ms"
    );
    assert!(
        fast_at[0] < *slow_at.last().unwrap(),
        "the hosts were not crawled at the same time"
    );
    drop(workers);
    env.cleanup().await;
}

/// Seeds `distinct` URLs plus `repeats` repeats through two frontier
/// processes (no fetchers) and counts what lands on the fetch queue. With
/// `kill_one`, one frontier is killed halfway.
async fn release_through_two_frontiers(
    distinct: usize,
    repeats: usize,
    kill_one: bool,
) -> HashMap<String, usize> {
    let env = TestEnv::new("once");
    let mut frontiers = vec![env.start("frontier", &[]), env.start("frontier", &[])];

    // URLs over 50 hosts, shuffled into batches of 500.
    let url = |i: usize| format!("http://h{}.example/page/{i}", i % 50);
    let mut urls: Vec<String> = (0..distinct).map(url).collect();
    urls.extend((0..repeats).map(|i| url((i * 7919) % distinct)));
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in (1..urls.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        urls.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let crawl = CrawlSpec {
        allow_domains: vec!["example".into()],
        max_depth: 3,
        ..crawler_tests::test_crawl("once")
    };
    let crawl = pipeline::crawls::register(
        &env.store().await,
        &pipeline::keys::Keys::new(&env.namespace),
        &crawl,
    )
    .await
    .unwrap();
    let session = Broker::amqp(crawler_tests::AMQP_URL, &env.namespace)
        .open()
        .await
        .unwrap();
    let batches: Vec<Vec<u8>> = urls
        .chunks(500)
        .map(|chunk| {
            encode(&UrlBatch::new(
                &crawl,
                1,
                chunk.iter().map(Link::new).collect(),
            ))
            .unwrap()
        })
        .collect();
    session.publish(Queue::Frontier, &batches).await.unwrap();

    let mut consumer = session.consume(Queue::Fetch, 1000).await.unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut total = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    while seen.len() < distinct {
        let next = tokio::time::timeout_at(deadline, consumer.next()).await;
        let Ok(Some(Ok(delivery))) = next else {
            panic!("only {} of {distinct} distinct URLs released", seen.len());
        };
        // One message, or a bundle of them (pipeline::bundle).
        for raw in pipeline::bundle::unpack(&delivery.data).unwrap() {
            let task: FetchTask = decode(raw).unwrap();
            *seen.entry(task.url).or_default() += 1;
            total += 1;
            if kill_one && total == distinct / 2 {
                frontiers[0].kill();
            }
        }
        delivery.ack().await.unwrap();
    }
    // Anything still coming would be a repeat.
    while let Ok(Some(Ok(d))) = tokio::time::timeout(Duration::from_secs(3), consumer.next()).await
    {
        for raw in pipeline::bundle::unpack(&d.data).unwrap() {
            let task: FetchTask = decode(raw).unwrap();
            *seen.entry(task.url).or_default() += 1;
        }
        d.ack().await.unwrap();
    }
    drop(frontiers);
    env.cleanup().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_frontiers_release_each_distinct_url_exactly_once() {
    let seen = release_through_two_frontiers(70_000, 30_000, false).await;
    assert_eq!(seen.len(), 70_000);
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).take(3).collect();
    assert!(twice.is_empty(), "released more than once: {twice:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frontier_killed_midway_loses_no_url() {
    // At-least-once: a frontier killed between publishing a batch and
    // acknowledging it may cause a few repeats, never a loss.
    let seen = release_through_two_frontiers(10_000, 3_000, true).await;
    assert_eq!(seen.len(), 10_000);
    let repeats = seen.values().filter(|n| **n > 1).count();
    assert!(repeats <= 1_000, "{repeats} URLs released more than once");
}
