//! The politeness operations behave the same on the real Redis (Lua
//! scripts) and on the memory store of `crawler run`.

use std::time::Duration;

use frontier::release::{confirm, sweep, take_due, waiting, ReleaseSettings, Taken};
use pipeline::keys::Keys;
use pipeline::messages::{decode, encode, FetchTask, VERSION};
use pipeline::shutdown::Shutdown;
use pipeline::store::Op;
use pipeline::{Broker, CrawlSpec, Queue, Store};
use politeness::{record, schedule, turn};

/// The slow host's delay and the sweep's stale time: long enough that the
/// steps between (`waiting` scans the key space, slow on a Redis that holds
/// another test's million keys) fit well inside them.
const SLOW_MS: u64 = 2_000;
const STALE_MS: u64 = 1_000;

fn task(url: &str) -> Vec<u8> {
    encode(&FetchTask {
        v: VERSION,
        crawl: CrawlSpec::default().reference(),
        url: url.into(),
        depth: 0,
        redirects: 0,
        attempt: 0,
        recrawl: false,
        id: String::new(),
    })
    .unwrap()
}

/// Two tasks of `origin` (a host with a delay of `delay` ms) queued:
/// `{origin}/1` and `{origin}/2`.
async fn enqueue_two(store: &Store, keys: &Keys, origin: &str, delay: u64) {
    let tasks = (1..=2).map(|n| task(&format!("{origin}/{n}"))).collect();
    store
        .one(schedule::enqueue(keys, origin, delay, tasks))
        .await
        .unwrap();
}

fn urls(t: &Taken) -> Vec<String> {
    let mut v: Vec<String> = t
        .tasks()
        .iter()
        .map(|b| decode::<FetchTask>(b).unwrap().url)
        .collect();
    v.sort();
    v
}

async fn scenario(store: Store, ns: &str) {
    let keys = Keys::new(ns);
    let s = ReleaseSettings::default();
    enqueue_two(&store, &keys, "http://slow", SLOW_MS).await;
    enqueue_two(&store, &keys, "http://fast", 0).await;

    // The fast host bursts, the slow host gives one task per turn.
    let t = take_due(&store, &keys, &s).await.unwrap();
    assert_eq!(
        urls(&t),
        ["http://fast/1", "http://fast/2", "http://slow/1"]
    );
    assert_eq!(waiting(&store, &keys).await.unwrap(), 4);
    confirm(&store, &keys, &t).await.unwrap();
    assert_eq!(waiting(&store, &keys).await.unwrap(), 1);
    assert!(take_due(&store, &keys, &s).await.unwrap().is_empty());
    tokio::time::sleep(Duration::from_millis(SLOW_MS + 50)).await;
    let t = take_due(&store, &keys, &s).await.unwrap();
    assert_eq!(urls(&t), ["http://slow/2"]);

    // Not confirmed (the releaser died): swept back after the stale time.
    let quick = ReleaseSettings {
        stale_after: Duration::from_millis(STALE_MS),
        ..ReleaseSettings::default()
    };
    assert_eq!(sweep(&store, &keys, &quick).await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(STALE_MS + 50)).await;
    assert_eq!(sweep(&store, &keys, &quick).await.unwrap(), 1);
    tokio::time::sleep(Duration::from_millis(SLOW_MS + 50)).await;
    let t = take_due(&store, &keys, &s).await.unwrap();
    assert_eq!(urls(&t), ["http://slow/2"]);
    confirm(&store, &keys, &t).await.unwrap();
    assert_eq!(waiting(&store, &keys).await.unwrap(), 0);

    // The gate: a turn is held until released, then the delay runs.
    let gate = |hold_ms| turn::gate(&keys, "http://g", hold_ms);
    assert_eq!(store.one(gate(10_000)).await.unwrap().int().unwrap(), 0);
    let wait = store.one(gate(10_000)).await.unwrap().int().unwrap();
    assert!(wait > 9_000, "held: wait {wait}");
    store.one(turn::done(&keys, "http://g", 200)).await.unwrap();
    let wait = store.one(gate(10_000)).await.unwrap().int().unwrap();
    assert!(wait > 100 && wait <= 200, "after release: wait {wait}");

    // A host failing again and again is parked.
    store
        .one(Op::HSet {
            key: keys.host("http://bad"),
            fields: vec![(record::FAIL_STREAK.into(), b"9".to_vec())],
        })
        .await
        .unwrap();
    enqueue_two(&store, &keys, "http://bad", 0).await;
    let t = take_due(&store, &keys, &s).await.unwrap();
    assert_eq!(urls(&t), ["http://bad/1"]);
    let parked = store
        .one(Op::HGet {
            key: keys.host("http://bad"),
            field: record::PARKED_UNTIL_MS.into(),
        })
        .await
        .unwrap()
        .string()
        .unwrap();
    assert!(parked.is_some(), "the failing host is parked");
    confirm(&store, &keys, &t).await.unwrap();
}

#[tokio::test]
async fn memory_store() {
    scenario(Store::memory(), "mem").await;
}

#[tokio::test]
async fn redis_store() {
    let env = crawler_tests::TestEnv::new("ops");
    let store = crawler_tests::shared_store().await;
    scenario(store, &env.namespace).await;
    env.cleanup().await;
}

/// Tasks queued for the releaser test: 30 tasks on each of 100 hosts with
/// no delay, all due at once.
const HOSTS: usize = 100;
const PER_HOST: usize = 30;

/// The releaser stops taking tasks while the fetch queue holds
/// `fetch_ahead` messages waiting, and takes more once fetchers have taken
/// some: the rest stay in their hosts' queues. Without the wait it moves all
/// 3,000 tasks into the fetch queue within a second. (A message is a task on
/// the memory bus, a bundle of up to 32 on RabbitMQ.)
async fn releaser_waits(store: Store, broker: Broker, ns: &str) {
    let keys = Keys::new(ns);
    for h in 0..HOSTS {
        let origin = format!("http://h{h}.test");
        let tasks = (0..PER_HOST)
            .map(|n| task(&format!("{origin}/{n}")))
            .collect();
        store
            .one(schedule::enqueue(&keys, &origin, 0, tasks))
            .await
            .unwrap();
    }
    let total = (HOSTS * PER_HOST) as u64;
    assert_eq!(waiting(&store, &keys).await.unwrap() as u64, total);
    // One task per host and one host per shard a tick: a tick takes at most
    // 64 tasks (at most 64 messages), so the queue passes the mark by less.
    let settings = ReleaseSettings {
        hosts_per_shard: 1,
        burst: 1,
        fetch_ahead: 10,
        ..ReleaseSettings::default()
    };
    let tick = u64::from(pipeline::keys::HOST_SHARDS);
    let shutdown = Shutdown::new();
    let releaser = tokio::spawn(frontier::release::run(
        store.clone(),
        broker.clone(),
        ns.to_string(),
        settings.clone(),
        Default::default(),
        shutdown.clone(),
    ));
    let session = broker.open().await.unwrap();
    let ready = || async { session.ready(Queue::Fetch).await.unwrap() };
    let mark = settings.fetch_ahead;
    // Until the releaser reaches the mark, then a second more.
    let start = std::time::Instant::now();
    while ready().await < mark {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the releaser released nothing"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let first = ready().await;
    assert!(
        first >= mark && first < mark + tick,
        "the fetch queue holds {first} messages (mark {mark})"
    );
    let queued = waiting(&store, &keys).await.unwrap() as u64;
    assert!(
        queued > total / 2,
        "only {queued} of {total} tasks left in the host queues"
    );

    // A fetcher (one unacked at a time) takes the queue below the mark: the
    // releaser tops it up to the mark again, and no further.
    let mut consumer = session.consume(Queue::Fetch, 1).await.unwrap();
    let taken = first - mark + 3;
    for _ in 0..taken {
        consumer.next().await.unwrap().unwrap().ack().await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (now, left) = (ready().await, waiting(&store, &keys).await.unwrap() as u64);
    // RabbitMQ has handed the consumer its next message (unacked, not ready).
    assert!(
        now + 1 >= mark && now < mark + tick,
        "after {taken} taken the fetch queue holds {now} messages (mark {mark})"
    );
    assert!(left < queued, "nothing released after {taken} taken");
    assert!(left > total / 2, "only {left} of {total} tasks left");
    drop(consumer);
    shutdown.trigger();
    releaser.await.unwrap();
}

#[tokio::test]
async fn the_releaser_waits_while_the_fetch_queue_is_full_in_memory() {
    releaser_waits(Store::memory(), Broker::memory(), "mem").await;
}

#[tokio::test]
async fn the_releaser_waits_while_the_fetch_queue_is_full_on_rabbitmq() {
    let env = crawler_tests::TestEnv::new("release-ahead");
    let store = crawler_tests::shared_store().await;
    releaser_waits(store, env.broker(), &env.namespace).await;
    env.cleanup().await;
}
