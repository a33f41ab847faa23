//! The politeness operations behave the same on the real Redis (Lua
//! scripts) and on the memory store of `crawler run`.

use std::time::Duration;

use frontier::release::{confirm, sweep, take_due, waiting, ReleaseSettings, Taken};
use pipeline::keys::Keys;
use pipeline::messages::{decode, encode, FetchTask, VERSION};
use pipeline::store::Op;
use pipeline::{CrawlSpec, Store};
use politeness::{record, schedule, turn};

/// The slow host's delay and the sweep's stale time: long enough that the
/// steps between (`waiting` scans the key space, slow on a Redis that holds
/// another test's million keys) fit well inside them.
const SLOW_MS: u64 = 2_000;
const STALE_MS: u64 = 1_000;

fn task(url: &str) -> Vec<u8> {
    encode(&FetchTask {
        v: VERSION,
        crawl: CrawlSpec::default(),
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
