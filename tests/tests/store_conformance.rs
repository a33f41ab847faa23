//! Every store op written twice, on Redis (a Lua script, a `MULTI`/`EXEC`
//! transaction or a command) and as its twin in the memory store of
//! `crawler run`, gives the same replies and leaves the same state on both
//! for the same sequences of ops (one harness for all:
//! [`crawler_tests::conformance`]):
//!
//! - the politeness scripts ([`politeness::schedule`], [`politeness::turn`]):
//!   empty stores, a burst of 0, more than [`SWEEP_BATCH`] stale tasks, ties
//!   in score, failing and parked hosts, a backoff, paused and cancelled
//!   crawls sharing a host with a running one;
//! - `Op::ClaimFirst` (a first claim, a slot owned by another, the same slot
//!   twice in one call, no slot at all, binary values), `Op::SetNxWith`,
//!   `Op::Once`, `Op::Claim`, `Op::ZAddIn`, `Op::ZPopDue`, contentseen's
//!   band compaction ([`contentseen::table::COMPACT`]);
//! - `Op::HSet` of many fields, whose reply (the number of new fields) the
//!   Redis side once got wrong (it sent `HMSET`, which replies OK), and the
//!   plain commands.

use crawler_tests::conformance::{agree, Step};
use pipeline::keys::{host_shard, Keys, HOST_SHARDS};
use pipeline::store::{Op, Reply};
use politeness::record;
use politeness::schedule::{self, SWEEP_BATCH};
use politeness::turn;

/// Untimed steps.
fn steps(ops: Vec<Vec<Op>>) -> Vec<Step> {
    ops.into_iter().map(Step::new).collect()
}

fn claim(ns: &str, slots: &[(&str, &str, &[u8])], by: i64) -> Op {
    Op::ClaimFirst {
        slots: slots
            .iter()
            .map(|(k, f, v)| (format!("{ns}:lsh:{k}"), f.to_string(), v.to_vec()))
            .collect(),
        counter: format!("{ns}:fpseq"),
        by,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn band_compaction_and_its_memory_twin_agree() {
    use contentseen::table::Table;
    let run = agree("compact", |ns| {
        let key = format!("{ns}:bands:0:7");
        let append = |v: &[u8]| Op::Append {
            key: key.clone(),
            value: v.to_vec(),
        };
        steps(vec![
            // An absent table; then one grown by appends, compacted twice
            // (nothing changes the second time), appended to and read.
            vec![Table::compaction(&key)],
            (0..200u8).map(|i| append(&[i, 0, 0xFF, 1, 2, i])).collect(),
            vec![
                Table::compaction(&key),
                Table::compaction(&key),
                append(b"\x00abcde"),
                Op::Get { key: key.clone() },
            ],
        ])
    })
    .await;
    let r = &run.replies;
    assert_eq!(r[0], ints(&[0]));
    assert_eq!(r[2][..3], ints(&[1, 1, 1206]));
    match &r[2][3] {
        Reply::Data(v) => assert_eq!((v.len(), &v[6..12]), (1206, &[1, 0, 0xFF, 1, 2, 1][..])),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_first_and_its_memory_twin_agree() {
    let run = agree("claimfirst", |ns| {
        steps(vec![
            vec![claim(
                ns,
                &[("0:1", "11", b"100"), ("1:1", "12", b"100")],
                1,
            )],
            // A second document: one slot taken, one new; the same slot twice.
            vec![claim(
                ns,
                &[
                    ("0:1", "11", b"200"),
                    ("1:2", "13", b"200"),
                    ("1:2", "13", b"201"),
                ],
                2,
            )],
            // No slot: the counter alone.
            vec![claim(ns, &[], 1)],
            // Binary values and two calls in one pipeline, in order.
            vec![
                claim(ns, &[("2:9", "-5", &[0xFF, 0, 1])], 1),
                claim(ns, &[("2:9", "-5", &[7]), ("0:1", "11", b"300")], 3),
            ],
            // The owners, as round 2 reads them.
            vec![
                Op::HGet {
                    key: format!("{ns}:lsh:0:1"),
                    field: "11".into(),
                },
                Op::HGet {
                    key: format!("{ns}:lsh:1:2"),
                    field: "13".into(),
                },
                Op::HGet {
                    key: format!("{ns}:lsh:2:9"),
                    field: "-5".into(),
                },
            ],
        ])
    })
    .await;
    let r = &run.replies;
    // And what they agree on is right.
    let owners = |r: &Reply| match r {
        Reply::Array(items) => items.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(owners(&r[0][0]), ints(&[1, 1, 1]));
    assert_eq!(owners(&r[1][0]), ints(&[0, 1, 0, 3]));
    assert_eq!(owners(&r[2][0]), ints(&[4]));
    assert_eq!(owners(&r[3][1]), ints(&[0, 0, 8]));
    assert_eq!(
        r[4],
        vec![
            Reply::Data(b"100".to_vec()),
            Reply::Data(b"200".to_vec()),
            Reply::Data(vec![0xFF, 0, 1]),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hset_and_its_memory_twin_agree() {
    let run = agree("hset", |ns| {
        let key = format!("{ns}:h");
        let hset = |fields: &[(&str, &[u8])]| Op::HSet {
            key: key.clone(),
            fields: fields
                .iter()
                .map(|(f, v)| (f.to_string(), v.to_vec()))
                .collect(),
        };
        steps(vec![
            vec![hset(&[("a", b"1"), ("b", &[0xFF, 0])])],
            // One field new, one replaced.
            vec![hset(&[("b", b"2"), ("c", b"3")])],
            vec![Op::HGet {
                key: key.clone(),
                field: "b".into(),
            }],
        ])
    })
    .await;
    assert_eq!(run.replies[0], ints(&[2]));
    assert_eq!(run.replies[1], ints(&[1]));
    assert_eq!(run.replies[2], vec![Reply::Data(b"2".to_vec())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setnx_with_and_its_memory_twin_agree() {
    let run = agree("setnxwith", |ns| {
        let k = |s: &str| format!("{ns}:{s}");
        let op = |doc: &str, value: &[u8], dup_of: Option<&str>| Op::SetNxWith {
            key: k(&format!("doc:{doc}")),
            value: value.to_vec(),
            pushes: std::iter::once((k("docs"), doc.as_bytes().to_vec()))
                .chain(dup_of.map(|o| (k(&format!("dups:{o}")), doc.as_bytes().to_vec())))
                .collect(),
            counts: vec![(
                k("stats"),
                if dup_of.is_some() {
                    "duplicate"
                } else {
                    "stored"
                }
                .into(),
                1,
            )],
        };
        steps(vec![
            vec![op("a", b"{\"a\":1}", None)],
            vec![op("b", &[0xFF, 0], Some("a"))],
            // A redelivery: nothing happens twice.
            vec![op("b", b"other", Some("a")), op("a", b"x", None)],
            vec![
                Op::LRange {
                    key: k("docs"),
                    start: 0,
                    stop: -1,
                },
                Op::LRange {
                    key: k("dups:a"),
                    start: 0,
                    stop: -1,
                },
                Op::HGet {
                    key: k("stats"),
                    field: "stored".into(),
                },
                Op::HGet {
                    key: k("stats"),
                    field: "duplicate".into(),
                },
                Op::Get { key: k("doc:b") },
            ],
        ])
    })
    .await;
    let r = &run.replies;
    assert_eq!(r[0][0], Reply::Int(1));
    assert_eq!(r[2], ints(&[0, 0]));
    assert_eq!(
        r[3][0],
        Reply::Array(vec![Reply::Data(b"a".to_vec()), Reply::Data(b"b".to_vec())])
    );
    assert_eq!(r[3][1], Reply::Array(vec![Reply::Data(b"b".to_vec())]));
    assert_eq!(r[3][2], Reply::Data(b"1".to_vec()));
    assert_eq!(r[3][3], Reply::Data(b"1".to_vec()));
    assert_eq!(r[3][4], Reply::Data(vec![0xFF, 0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_and_its_memory_twin_agree() {
    let run = agree("once", |ns| {
        let k = |s: &str| format!("{ns}:{s}");
        let once = |url: &str, id: &str, record: &[u8]| Op::Once {
            mark: k("once:fetch:0"),
            field: url.to_string(),
            id: id.to_string(),
            sets: vec![(k(&format!("fetch:{url}")), record.to_vec())],
            counts: vec![
                (k("stats"), "fetched".into(), 1),
                (k("stats"), "fetch_ok".into(), 2),
            ],
        };
        steps(vec![
            vec![once("a", "t1", b"first")],
            // A redelivery of the same task: nothing happens again.
            vec![once("a", "t1", b"changed")],
            // The URL's next task, and another URL, in one pipeline.
            vec![once("a", "t2", &[0xFF, 0]), once("b", "t1", b"b")],
            // A late delivery of the first task after the next one was applied
            // (its ack lost in a broker restart): still counted once. Then
            // more tasks than the mark remembers push the first one out.
            vec![once("a", "t1", b"late")],
            vec![
                once("a", "t3", b"3"),
                once("a", "t4", b"4"),
                once("a", "t5", b"5"),
                once("a", "t2", b"2 again"),
                once("a", "t1", b"1 forgotten"),
            ],
            // No sets, no counts: the mark alone.
            vec![Op::Once {
                mark: k("once:fetch:0"),
                field: "c".into(),
                id: "t9".into(),
                sets: Vec::new(),
                counts: Vec::new(),
            }],
            vec![
                Op::Get { key: k("fetch:a") },
                Op::Get { key: k("fetch:b") },
                Op::HGet {
                    key: k("stats"),
                    field: "fetched".into(),
                },
                Op::HGet {
                    key: k("stats"),
                    field: "fetch_ok".into(),
                },
            ],
        ])
    })
    .await;
    // (The mark's hash is compared with the rest of the state.)
    let r = &run.replies;
    assert_eq!(r[0], ints(&[1]));
    assert_eq!(r[1], ints(&[0]));
    assert_eq!(r[2], ints(&[1, 1]));
    assert_eq!(r[3], ints(&[0]), "a late delivery is not counted again");
    assert_eq!(
        r[4],
        ints(&[1, 1, 1, 0, 1]),
        "the mark remembers {} ids",
        pipeline::store::ONCE_HISTORY
    );
    assert_eq!(r[5], ints(&[1]));
    assert_eq!(r[6][0], Reply::Data(b"1 forgotten".to_vec()));
    assert_eq!(r[6][1], Reply::Data(b"b".to_vec()));
    assert_eq!(r[6][2], Reply::Data(b"7".to_vec()));
    assert_eq!(r[6][3], Reply::Data(b"14".to_vec()));
}

/// The release step of every shard, as the frontier's releaser sends it.
fn release_all(keys: &Keys, max_hosts: u32, burst: u32) -> Vec<Op> {
    (0..HOST_SHARDS)
        .map(|shard| schedule::release(keys, shard, max_hosts, burst, PARK_AFTER, PARK_MS))
        .collect()
}

/// The sweep of every shard, for tasks taken at least `older_than_ms` ago.
fn sweep_all(keys: &Keys, older_than_ms: u64) -> Vec<Op> {
    (0..HOST_SHARDS)
        .map(|shard| schedule::sweep(keys, shard, older_than_ms))
        .collect()
}

const PARK_AFTER: u32 = 8;
const PARK_MS: u64 = 3_600_000;

fn tasks(names: &[&str]) -> Vec<Vec<u8>> {
    names.iter().map(|n| n.as_bytes().to_vec()).collect()
}

/// Integer replies, one per value.
fn ints(values: &[i64]) -> Vec<Reply> {
    values.iter().map(|&v| Reply::Int(v)).collect()
}

/// How many tasks each reply of a release step took, and how many tasks
/// each sweep step moved, summed over the shards.
fn taken(replies: &[Reply]) -> usize {
    replies
        .iter()
        .map(|r| match r {
            Reply::Array(items) => items.len(),
            other => panic!("{other:?}"),
        })
        .sum()
}

fn moved(replies: &[Reply]) -> i64 {
    replies.iter().map(|r| r.int().expect("int")).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_on_an_empty_store() {
    let run = agree("polite-empty", |ns| {
        let keys = Keys::new(ns);
        vec![
            Step::new(release_all(&keys, 64, 8)),
            Step::new(sweep_all(&keys, 0)),
            Step::timed(vec![turn::gate(&keys, "http://none", 0)]),
            // A host enqueued without tasks is scheduled, then dropped by
            // the release that finds its queue empty.
            Step::new(vec![schedule::enqueue(&keys, "http://e", 0, Vec::new())]),
            Step::new(release_all(&keys, 64, 8)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[0]), 0);
    assert_eq!(moved(&run.replies[1]), 0);
    assert_eq!(run.replies[2], ints(&[0]));
    assert_eq!(run.replies[3], ints(&[0]));
    assert_eq!(taken(&run.replies[4]), 0);
    assert!(
        !run.state.keys().any(|k| k.contains("schedule")),
        "{:?}",
        run.state
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_burst_zero_takes_one_and_keeps_the_host() {
    let run = agree("polite-burst0", |ns| {
        let keys = Keys::new(ns);
        vec![
            Step::new(vec![schedule::enqueue(
                &keys,
                "http://z",
                0,
                tasks(&["a", "b", "c"]),
            )]),
            Step::new(release_all(&keys, 64, 0)),
            Step::new(release_all(&keys, 64, 0)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[1]), 1, "a burst of 0 takes one task");
    assert_eq!(taken(&run.replies[2]), 1, "and the host stays scheduled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_sweep_is_bounded_and_in_score_order() {
    let n = SWEEP_BATCH as usize + 500;
    let run = agree("polite-sweep", |ns| {
        let keys = Keys::new(ns);
        let names: Vec<String> = (0..n).map(|i| format!("t{i:05}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        vec![
            Step::new(vec![schedule::enqueue(
                &keys,
                "http://big",
                0,
                tasks(&names),
            )]),
            // All taken at once (one score: ties broken by member).
            Step::new(release_all(&keys, 64, n as u32)),
            Step::new(sweep_all(&keys, 0)),
            Step::new(sweep_all(&keys, 0)),
            Step::new(sweep_all(&keys, 0)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[1]), n);
    assert_eq!(moved(&run.replies[2]), SWEEP_BATCH as i64);
    assert_eq!(moved(&run.replies[3]), 500);
    assert_eq!(moved(&run.replies[4]), 0);
}

/// `count` origins that share one schedule shard.
fn one_shard_origins(count: usize) -> Vec<String> {
    let shard = host_shard("http://tie0");
    (0..)
        .map(|i| format!("http://tie{i}"))
        .filter(|o| host_shard(o) == shard)
        .take(count)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_ties_in_score() {
    let origins = one_shard_origins(5);
    let run = agree("polite-ties", |ns| {
        let keys = Keys::new(ns);
        let mut enqueue: Vec<Op> = origins
            .iter()
            .map(|o| schedule::enqueue(&keys, o, 1000, tasks(&["x"])))
            .collect();
        enqueue.reverse();
        vec![
            Step::new(enqueue),
            // Whether the five enqueues share a millisecond (and so tie) is
            // up to the clock: this release's order is not compared.
            Step::unordered(release_all(&keys, 64, 8)),
            // The sweep schedules the five hosts at one score.
            Step::new(sweep_all(&keys, 0)),
            // Two hosts of five: the first two by member.
            Step::new(release_all(&keys, 2, 8)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[1]), 5);
    assert_eq!(moved(&run.replies[2]), 5);
    assert_eq!(taken(&run.replies[3]), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_failures_parking_backoffs_and_turns() {
    let run = agree("polite-fail", |ns| {
        let keys = Keys::new(ns);
        let set = |origin: &str, field: &str, v: &str| Op::HSet {
            key: keys.host(origin),
            fields: vec![(field.to_string(), v.as_bytes().to_vec())],
        };
        vec![
            Step::new(vec![
                set("http://bad", record::FAIL_STREAK, "9"),
                set("http://flaky", record::FAIL_STREAK, "2"),
                set("http://slow", record::DELAY_MS, "3000"),
                // A Retry-After far ahead (2100-01-01).
                set("http://later", record::BACKOFF_UNTIL_MS, "4102444800000"),
            ]),
            Step::new(vec![
                schedule::enqueue(&keys, "http://bad", 0, tasks(&["1", "2"])),
                schedule::enqueue(&keys, "http://flaky", 0, tasks(&["1", "2"])),
                schedule::enqueue(&keys, "http://slow", 1000, tasks(&["1", "2"])),
                schedule::enqueue(&keys, "http://later", 1000, tasks(&["1", "2"])),
            ]),
            Step::new(release_all(&keys, 64, 8)),
            // Nobody is due again yet; enqueueing keeps their turns.
            Step::new(release_all(&keys, 64, 8)),
            Step::new(vec![
                schedule::enqueue(&keys, "http://bad", 0, tasks(&["3"])),
                schedule::enqueue(&keys, "http://slow", 1000, tasks(&["3"])),
            ]),
            // The fetchers' turns.
            Step::timed(vec![
                turn::gate(&keys, "http://g", 10_000),
                turn::gate(&keys, "http://g", 10_000),
                turn::done(&keys, "http://g", 2000),
                turn::gate(&keys, "http://g", 10_000),
                turn::gate(&keys, "http://free", 0),
                turn::gate(&keys, "http://free", 0),
            ]),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[2]), 4, "one task per host");
    assert_eq!(taken(&run.replies[3]), 0);
    assert_eq!(run.replies[5], ints(&[0, 10_000, 0, 2000, 0, 0]));
    let parked = run
        .state
        .iter()
        .filter(|(_, v)| format!("{v:?}").contains(record::PARKED_UNTIL_MS))
        .count();
    assert_eq!(parked, 1, "the host failing 9 times in a row is parked");
}

/// An encoded fetch task of `crawl`, as the frontier queues it.
fn task_of(crawl: &str, url: &str) -> Vec<u8> {
    pipeline::messages::encode(&pipeline::FetchTask {
        v: pipeline::messages::VERSION,
        crawl: pipeline::CrawlSpec {
            name: crawl.into(),
            ..pipeline::CrawlSpec::default()
        },
        url: url.into(),
        depth: 0,
        redirects: 0,
        attempt: 0,
        recrawl: false,
        id: url.into(),
    })
    .expect("encode")
}

/// The crawls of the tasks a release step took, in order.
fn crawls_taken(replies: &[Reply]) -> Vec<String> {
    replies
        .iter()
        .flat_map(|r| match r {
            Reply::Array(items) => items.clone(),
            other => panic!("{other:?}"),
        })
        .map(|m| {
            let m = m.data().expect("data").expect("member");
            let i = m.iter().position(|b| *b == b'\n').expect("origin\\ntask");
            pipeline::messages::task_crawl(&m[i + 1..]).unwrap_or_else(|| "?".into())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_paused_and_cancelled_crawls() {
    use pipeline::crawls::{set_state, CrawlState};
    let run = agree("polite-control", |ns| {
        let keys = Keys::new(ns);
        vec![
            // One host shared by three crawls (no delay, burst 8), one host
            // of the paused crawl alone, and a task no crawl can be read from.
            Step::new(vec![
                schedule::enqueue(
                    &keys,
                    "http://shared",
                    0,
                    vec![
                        task_of("b", "http://shared/b1"),
                        task_of("a", "http://shared/a1"),
                        task_of("c", "http://shared/c1"),
                        task_of("b", "http://shared/b2"),
                        b"junk".to_vec(),
                        task_of("a", "http://shared/a2"),
                    ],
                ),
                schedule::enqueue(
                    &keys,
                    "http://paused",
                    0,
                    vec![task_of("b", "http://paused/b3")],
                ),
                schedule::enqueue(
                    &keys,
                    "http://mixed",
                    1000,
                    vec![
                        task_of("b", "http://mixed/b4"),
                        task_of("a", "http://mixed/a3"),
                        task_of("b", "http://mixed/b5"),
                    ],
                ),
            ]),
            Step::new(set_state(&keys, "b", CrawlState::Paused)),
            Step::new(set_state(&keys, "c", CrawlState::Cancelled)),
            // a, junk and a go; b's stay queued (at the back), c's is dropped;
            // the paused host keeps no turn; the mixed host (a delay) sends a.
            Step::new(release_all(&keys, 64, 8)),
            // Only paused tasks left: nothing goes, the hosts stay queued.
            Step::new(release_all(&keys, 64, 8)),
            // Resumed: the tasks are releasable again (once the hosts are
            // looked at again); cancelled: dropped from their queues.
            Step::new(set_state(&keys, "b", CrawlState::Running)),
            Step::new(set_state(&keys, "a", CrawlState::Cancelled)),
            Step::new(vec![
                schedule::enqueue(
                    &keys,
                    "http://mixed",
                    1000,
                    vec![task_of("a", "http://mixed/a4")],
                ),
                schedule::drop_crawl(&keys, "http://mixed", "a"),
                schedule::drop_crawl(&keys, "http://mixed", "a"),
                schedule::drop_crawl(&keys, "http://paused", "b"),
                schedule::drop_crawl(&keys, "http://none", "b"),
            ]),
        ]
    })
    .await;
    let mut first = crawls_taken(&run.replies[3]);
    first.sort();
    assert_eq!(first, vec!["?", "a", "a", "a"]);
    assert_eq!(taken(&run.replies[4]), 0);
    assert_eq!(run.replies[7], ints(&[3, 1, 0, 1, 0]));
    let queue = |origin: &str| {
        run.state
            .iter()
            .find(|(k, _)| k.contains(":hostq:") && k.ends_with(origin))
            .map(|(_, v)| format!("{v:?}"))
    };
    let shared = queue("http://shared").expect("shared queue");
    assert!(
        shared.contains("shared/b1") && shared.contains("shared/b2"),
        "{shared}"
    );
    assert!(
        !shared.contains("shared/c1"),
        "cancelled task dropped: {shared}"
    );
    let mixed = queue("http://mixed").expect("mixed queue");
    assert!(
        mixed.contains("mixed/b4") && mixed.contains("mixed/b5"),
        "{mixed}"
    );
    assert!(!mixed.contains("mixed/a"), "{mixed}");
    assert_eq!(queue("http://paused"), None, "its only task dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_and_scripted_ops_agree() {
    agree("ops", |ns| {
        let k = |s: &str| format!("{ns}:{s}");
        let claim = |batch: &str, members: Vec<i64>| Op::Claim {
            seen: k("seen:{0}"),
            claim: k(&format!("claim:{{0}}:{batch}")),
            members,
            ttl_secs: 60,
        };
        // The list `l` and the sorted set `z`.
        let rpush = |value: &[u8]| Op::RPush {
            key: k("l"),
            value: value.to_vec(),
        };
        let lrange = |start, stop| Op::LRange {
            key: k("l"),
            start,
            stop,
        };
        let zadd_in = |member: &[u8], in_ms| Op::ZAddIn {
            key: k("z"),
            member: member.to_vec(),
            in_ms,
        };
        let zpop_due = || Op::ZPopDue {
            key: k("z"),
            max: 10,
        };
        steps(vec![
            vec![
                Op::SAdd {
                    key: k("set"),
                    members: vec![3, -1, 7, 3],
                },
                Op::Incr { key: k("n"), by: 5 },
                Op::Incr {
                    key: k("n"),
                    by: -2,
                },
                Op::HIncr {
                    key: k("h"),
                    field: "c".into(),
                    by: 4,
                },
                Op::HSetNx {
                    key: k("h"),
                    field: "f".into(),
                    value: vec![0xFF],
                },
                Op::HSetNx {
                    key: k("h"),
                    field: "f".into(),
                    value: b"no".to_vec(),
                },
                Op::HGet {
                    key: k("h"),
                    field: "f".into(),
                },
                Op::HGet {
                    key: k("h"),
                    field: "none".into(),
                },
                Op::HGetAll { key: k("h1") },
            ],
            vec![
                Op::SetNx {
                    key: k("s"),
                    value: b"1".to_vec(),
                },
                Op::SetNx {
                    key: k("s"),
                    value: b"2".to_vec(),
                },
                Op::Set {
                    key: k("t"),
                    value: b"v".to_vec(),
                    expire_ms: None,
                },
                Op::Get { key: k("s") },
                Op::Get { key: k("none") },
                Op::Del { key: k("t") },
                Op::Del { key: k("t") },
            ],
            vec![
                Op::Append {
                    key: k("a"),
                    value: b"\x00\xffab".to_vec(),
                },
                Op::Append {
                    key: k("a"),
                    value: b"cd".to_vec(),
                },
                Op::Get { key: k("a") },
                Op::MGet {
                    keys: vec![k("a"), k("none"), k("a")],
                },
                Op::MGet { keys: vec![] },
            ],
            vec![
                rpush(b"a"),
                rpush(b"b"),
                rpush(b"c"),
                lrange(1, -1),
                lrange(-2, 10),
                lrange(5, 9),
                Op::LLen { key: k("l") },
                Op::LLen { key: k("none") },
            ],
            vec![
                zadd_in(b"due", 0),
                zadd_in(b"later", 60_000),
                Op::ZAddIn {
                    key: k("z"),
                    member: b"later".to_vec(),
                    in_ms: 60_000,
                },
                Op::ZCard { key: k("z") },
            ],
            vec![
                zpop_due(),
                zpop_due(),
                Op::ZRem {
                    key: k("z"),
                    members: vec![b"later".to_vec(), b"none".to_vec()],
                },
                Op::ZCard { key: k("z") },
            ],
            vec![claim("a", vec![1, 2, 3])],
            vec![claim("b", vec![3, 4])],
            vec![claim("a", vec![1, 2, 3])],
            vec![claim("c", vec![4])],
        ])
    })
    .await;
}
