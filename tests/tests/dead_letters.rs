//! Dead letters carry their reason on the message, `crawler dead-letters`
//! lists them without taking them, and `--replay` sends them back to their
//! stage: on the real RabbitMQ, with a real frontier worker.

use std::time::{Duration, Instant};

use crawler_tests::{TestEnv, AMQP_URL};
use pipeline::messages::{encode, UrlBatch};
use pipeline::{Broker, CrawlSpec, Link, Queue};

fn lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l}: {e}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_say_why_and_can_be_replayed() {
    let env = TestEnv::new("deadletters");
    let mut frontier = env.start("frontier", &[]);
    let session = Broker::amqp(AMQP_URL, &env.namespace).open().await.unwrap();
    // Bytes that are no message at all, a batch whose crawl has a pattern
    // that does not compile, and one whose crawl's settings were never
    // stored (as after a `crawler reset`).
    let crawl = CrawlSpec {
        name: "dl".into(),
        include: vec!["(unclosed".into()],
        ..CrawlSpec::default()
    };
    let store = env.store().await;
    let crawl =
        pipeline::crawls::register(&store, &pipeline::keys::Keys::new(&env.namespace), &crawl)
            .await
            .unwrap();
    let bad_pattern = UrlBatch {
        seeds: true,
        source: Some("http://127.0.0.1:9/source".into()),
        ..UrlBatch::new(&crawl, 0, vec![Link::new("http://127.0.0.1:9/a")])
    };
    let unknown = UrlBatch {
        seeds: true,
        ..UrlBatch::new(
            &crawler_tests::test_crawl("never-seeded").reference(),
            0,
            vec![Link::new("http://127.0.0.1:9/b")],
        )
    };
    session
        .publish(
            Queue::Frontier,
            &[
                b"\xC1 not msgpack".to_vec(),
                encode(&bad_pattern).unwrap(),
                encode(&unknown).unwrap(),
            ],
        )
        .await
        .unwrap();

    // All end in the frontier's dead-letter queue, each with its reason.
    let deadline = Instant::now() + Duration::from_secs(60);
    let listed = loop {
        let listed = lines(&env.crawler_ok(&["dead-letters", "--stage", "frontier"]));
        if listed.len() >= 3 {
            break listed;
        }
        assert!(Instant::now() < deadline, "dead letters: {listed:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(listed.len(), 3, "{listed:?}");
    let reason = |i: usize| listed[i]["reason"].as_str().unwrap_or("").to_string();
    assert!(
        reason(0).contains("undecodable frontier message"),
        "{listed:?}"
    );
    assert!(reason(1).contains("bad pattern"), "{listed:?}");
    assert_eq!(listed[1]["url"], "http://127.0.0.1:9/source");
    assert!(listed[1]["failed_at"]
        .as_str()
        .is_some_and(|t| t.len() >= 20));
    assert!(
        reason(2).contains("\"never-seeded\"") && reason(2).contains("not in the store"),
        "{listed:?}"
    );
    // Listing does not take them; other stages have none.
    assert_eq!(lines(&env.crawler_ok(&["dead-letters"])).len(), 3);
    assert!(lines(&env.crawler_ok(&["dead-letters", "--stage", "fetch"])).is_empty());
    let bad = env.crawler(&["dead-letters", "--stage", "nowhere"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown stage"));

    // Replayed (with no frontier running, so they wait in its queue).
    frontier.kill();
    let replayed = lines(&env.crawler_ok(&["dead-letters", "--replay"]));
    assert_eq!(replayed.len(), 3);
    assert!(replayed.iter().all(|l| l["replayed"] == true));
    assert!(lines(&env.crawler_ok(&["dead-letters"])).is_empty());
    let depths = session.queue_depths().await.unwrap();
    let ready = |name: &str| {
        depths
            .iter()
            .find(|d| d.queue == name)
            .map(|d| d.ready)
            .unwrap_or(u64::MAX)
    };
    assert_eq!(ready(&Queue::Frontier.name(&env.namespace)), 3);
    assert_eq!(ready(&Queue::Frontier.dead_letter_name(&env.namespace)), 0);
    env.cleanup().await;
}
