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
//! - the frontier's admission ([`politeness::schedule::admit`]: new, seen,
//!   over a per-host limit, without the seen check), contentseen's
//!   document store ([`contentseen::stage::DOC_STORE`]), the stages' once
//!   step ([`pipeline::once::ONCE`]), the live-worker index
//!   ([`pipeline::live`]), refetches scheduled and released, contentseen's
//!   band compaction ([`contentseen::table::COMPACT`]);
//! - `Op::HSet` of many fields, whose reply (the number of new fields) the
//!   Redis side once got wrong (it sent `HMSET`, which replies OK), and the
//!   plain commands.

use crawler_tests::conformance::{agree, agree_on_keys, Step};
use pipeline::keys::{host_shard, Keys, HOST_SHARDS};
use pipeline::store::{Op, Reply};
use politeness::record;
use politeness::schedule::{self, SWEEP_BATCH};
use politeness::turn;

/// Untimed steps.
fn steps(ops: Vec<Vec<Op>>) -> Vec<Step> {
    ops.into_iter().map(Step::new).collect()
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
async fn admit_and_its_memory_twin_agree() {
    let run = agree_on_keys("admit", |keys| {
        let url = |origin: &str, path: &str| schedule::Admission {
            origin: origin.to_string(),
            url_hash: pipeline::keys::url_hash(&format!("{origin}/{path}")),
            task: format!("{origin}/{path}").into_bytes(),
        };
        let retry = |origin: &str, path: &str| schedule::Admission {
            url_hash: pipeline::keys::url_hash(&format!("retry of {origin}/{path}")),
            ..url(origin, path)
        };
        // Two hosts of one shard.
        let a = "http://a.test".to_string();
        let shard = host_shard(&a);
        let b = (0..)
            .map(|i| format!("http://b{i}.test"))
            .find(|o| host_shard(o) == shard)
            .expect("a host of the same shard");
        let (a, b) = (a.as_str(), b.as_str());
        let crawl = |max: Option<u64>| schedule::AdmitCrawl {
            name: "news",
            delay_ms: 0,
            max_per_host: max,
        };
        let admit = |urls: Vec<schedule::Admission>, max, check| {
            schedule::admit(keys, shard, &crawl(max), &urls, check)
        };
        steps(vec![
            // New URLs (a crawl of 3 pages per host at most).
            vec![admit(
                vec![url(a, "1"), url(a, "2"), url(b, "1")],
                Some(3),
                schedule::Check::New,
            )],
            // A redelivery: all seen, nothing queued or counted.
            vec![admit(
                vec![url(a, "1"), url(a, "2"), url(b, "1")],
                Some(3),
                schedule::Check::New,
            )],
            // Past the per-host limit on a: one more queued, one dropped (seen).
            vec![admit(
                vec![url(a, "3"), url(a, "4")],
                Some(3),
                schedule::Check::New,
            )],
            // Without a check (a task handed back): queued again, not counted.
            vec![admit(vec![url(a, "1")], None, schedule::Check::Nothing)],
            // A retry, by its own id's hash: queued although a is at its
            // per-host limit, not counted; the same retry again: nothing.
            vec![admit(vec![retry(a, "1")], Some(3), schedule::Check::Retry)],
            vec![admit(vec![retry(a, "1")], Some(3), schedule::Check::Retry)],
            // An URL over the page limit: seen, not queued (empty task).
            vec![admit(
                vec![schedule::Admission {
                    task: Vec::new(),
                    ..url(b, "9")
                }],
                None,
                schedule::Check::New,
            )],
            release_all(keys, 64, 8),
            vec![
                Op::Get {
                    key: keys.queued(shard),
                },
                Op::ZRevRange {
                    key: keys.host_lengths(shard),
                    start: 0,
                    stop: -1,
                },
                Op::HGet {
                    key: keys.stats_of_shard(shard),
                    field: "seen".into(),
                },
                Op::HGet {
                    key: keys.stats_of_shard(shard),
                    field: "over_limit".into(),
                },
            ],
        ])
    })
    .await;
    let r = &run.replies;
    // Released everything: nothing waits; 4 admitted, 1 over the limit.
    assert_eq!(
        r[8],
        vec![
            Reply::Int(0),
            Reply::Array(Vec::new()),
            Reply::Int(4),
            Reply::Int(1)
        ]
    );
    let pair = |r: &Reply| r.ints().unwrap();
    assert_eq!(pair(&r[0][0]), vec![3, 0]);
    assert_eq!(pair(&r[1][0]), vec![0, 0]);
    assert_eq!(pair(&r[2][0]), vec![1, 1]);
    assert_eq!(pair(&r[3][0]), vec![1, 0]);
    assert_eq!(pair(&r[4][0]), vec![1, 0]);
    assert_eq!(pair(&r[5][0]), vec![0, 0]);
    assert_eq!(pair(&r[6][0]), vec![0, 0]);
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
    // (A string that is an integer is compared as one.)
    assert_eq!(run.replies[2], ints(&[2]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doc_store_and_its_memory_twin_agree() {
    use contentseen::stage::doc_store;
    use pipeline::documents::{inline, DocRecord};
    let run = agree_on_keys("docstore", |keys| {
        let record = |url: &str, dup: Option<&str>| {
            let doc: pipeline::StoredDocument = serde_json::from_value(serde_json::json!({
                "url": url, "final_url": url, "status": 200, "encoding": "UTF-8",
                "title": "t", "published": null, "author": null, "text": "words",
                "simhash": "00000000000000ff", "duplicate_of": dup, "distance": null,
                "fetched_at": "2026-11-27T10:00:00Z", "crawl": "news"
            }))
            .expect("a document");
            DocRecord::of(&doc, dup.map(pipeline::keys::url_hash), inline(b"{}"))
        };
        let store = |url: &str, dup: Option<&str>| {
            let counter = if dup.is_some() { "duplicate" } else { "stored" };
            doc_store(
                keys,
                pipeline::keys::url_hash(url),
                record(url, dup).encode(),
                pipeline::crawls::counts("news", &[(counter, 1)]),
            )
        };
        steps(vec![
            vec![store("http://a/", None)],
            vec![store("http://b/", Some("http://a/"))],
            // A redelivery: nothing happens twice.
            vec![
                store("http://b/", Some("http://a/")),
                store("http://a/", None),
            ],
        ])
    })
    .await;
    let r = &run.replies;
    assert_eq!(r[0], ints(&[1]));
    assert_eq!(r[1], ints(&[1]));
    assert_eq!(r[2], ints(&[0, 0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_and_its_memory_twin_agree() {
    use pipeline::once::{once, once_with, Also, FETCH_IDS, FETCH_RECORD, HISTORY};
    let run = agree_on_keys("once", |keys| {
        let h = |url: &str| pipeline::keys::url_hash(url);
        let step = |url: &str, id: &str, record: &[u8]| {
            once(
                keys,
                h(url),
                FETCH_IDS,
                id,
                Some((FETCH_RECORD, record.to_vec())),
                vec![("fetched".into(), 1), ("fetch_ok".into(), 2)],
            )
        };
        let (doc_key, doc_field) = keys.document(h("a"));
        steps(vec![
            vec![step("a", "t1", b"first")],
            // A redelivery of the same task: nothing happens again.
            vec![step("a", "t1", b"changed")],
            // The URL's next task, and another URL, in one pipeline.
            vec![step("a", "t2", &[0xFF, 0]), step("b", "t1", b"b")],
            // A late delivery of the first task after the next one was
            // applied (its ack lost in a broker restart): still counted
            // once. Then more tasks than the record remembers push the
            // first one out.
            vec![step("a", "t1", b"late")],
            vec![
                step("a", "t3", b"3"),
                step("a", "t4", b"4"),
                step("a", "t5", b"5"),
                step("a", "t2", b"2 again"),
                step("a", "t1", b"1 forgotten"),
            ],
            // No record, no counts: the ids alone; and writes besides.
            vec![
                once(keys, h("c"), b'e', "t9", None, Vec::new()),
                once_with(
                    keys,
                    h("a"),
                    b'r',
                    "2026-11-27T10:00:00Z",
                    None,
                    vec![
                        Also::HSet(doc_key.clone(), doc_field.clone(), b"record".to_vec()),
                        Also::RPush(keys.document_log(h("a")), b"log".to_vec()),
                    ],
                    vec![("changed".into(), 1)],
                ),
            ],
        ])
    })
    .await;
    // (The URL records are compared with the rest of the state.)
    let r = &run.replies;
    assert_eq!(r[0], ints(&[1]));
    assert_eq!(r[1], ints(&[0]));
    assert_eq!(r[2], ints(&[1, 1]));
    assert_eq!(r[3], ints(&[0]), "a late delivery is not counted again");
    assert_eq!(
        r[4],
        ints(&[1, 1, 1, 0, 1]),
        "the record remembers {HISTORY} ids"
    );
    assert_eq!(r[5], ints(&[1, 1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_workers_and_their_memory_twin_agree() {
    let run = agree_on_keys("live", |keys| {
        vec![
            Step::new(vec![
                pipeline::live::beat(keys, "fetch:h:1", 3),
                pipeline::live::beat(keys, "extract:h:2", 0),
            ]),
            Step::unordered(vec![pipeline::live::read_op(keys)]),
            Step::new(pipeline::live::leave(keys, "fetch:h:1")),
            Step::new(vec![pipeline::live::read_op(keys)]),
        ]
    })
    .await;
    assert_eq!(
        run.replies[3][0].int_pairs().unwrap(),
        vec![("extract:h:2".to_string(), 0)]
    );
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

/// A release reply: the shard's wait (its one integer, wherever an
/// unordered step sorted it) and the members taken.
fn release_reply(r: &Reply) -> (i64, Vec<Vec<u8>>) {
    let Reply::Array(items) = r else {
        panic!("a release reply that is no array: {r:?}")
    };
    let mut wait = None;
    let mut members = Vec::new();
    for item in items {
        match item {
            Reply::Int(w) => wait = Some(*w),
            Reply::Data(m) => members.push(m.clone()),
            other => panic!("{other:?} in a release reply"),
        }
    }
    (wait.expect("a release reply without its wait"), members)
}

/// The waits of a release step's replies that name a scheduled host (not
/// -1), sorted.
fn waits(replies: &[Reply]) -> Vec<i64> {
    let mut w: Vec<i64> = replies
        .iter()
        .map(|r| release_reply(r).0)
        .filter(|w| *w >= 0)
        .collect();
    w.sort();
    w
}

/// How many tasks the replies of a release step took, summed over the
/// shards.
fn taken(replies: &[Reply]) -> usize {
    replies.iter().map(|r| release_reply(r).1.len()).sum()
}

/// How many tasks the replies of a sweep step moved, summed over the shards.
fn moved(replies: &[Reply]) -> i64 {
    replies.iter().map(|r| r.int().expect("int")).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_on_an_empty_store() {
    let run = agree_on_keys("polite-empty", |keys| {
        vec![
            Step::timed(release_all(keys, 64, 8)),
            Step::new(sweep_all(keys, 0)),
            Step::timed(vec![turn::gate(keys, "http://none", 0)]),
            // A host enqueued without tasks is scheduled, then dropped by
            // the release that finds its queue empty.
            Step::new(vec![schedule::enqueue(keys, "http://e", 0, Vec::new())]),
            Step::timed(release_all(keys, 64, 8)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[0]), 0);
    assert_eq!(
        waits(&run.replies[0]),
        Vec::<i64>::new(),
        "no shard has a host"
    );
    assert_eq!(moved(&run.replies[1]), 0);
    assert_eq!(run.replies[2], ints(&[0]));
    assert_eq!(run.replies[3], vec![Reply::Array(ints(&[0, 0]))]);
    assert_eq!(taken(&run.replies[4]), 0);
    assert!(
        !run.state.keys().any(|k| k.contains("schedule")),
        "{:?}",
        run.state
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_burst_zero_takes_one_and_keeps_the_host() {
    let run = agree_on_keys("polite-burst0", |keys| {
        vec![
            Step::new(vec![schedule::enqueue(
                keys,
                "http://z",
                0,
                tasks(&["a", "b", "c"]),
            )]),
            Step::timed(release_all(keys, 64, 0)),
            Step::timed(release_all(keys, 64, 0)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[1]), 1, "a burst of 0 takes one task");
    assert_eq!(taken(&run.replies[2]), 1, "and the host stays scheduled");
    assert_eq!(waits(&run.replies[2]), vec![0], "due again at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_sweep_is_bounded_and_in_score_order() {
    let n = SWEEP_BATCH as usize + 500;
    let run = agree_on_keys("polite-sweep", |keys| {
        let names: Vec<String> = (0..n).map(|i| format!("t{i:05}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        vec![
            Step::new(vec![schedule::enqueue(
                keys,
                "http://big",
                0,
                tasks(&names),
            )]),
            // All taken at once (one score: ties broken by member).
            Step::timed(release_all(keys, 64, n as u32)),
            Step::new(sweep_all(keys, 0)),
            Step::new(sweep_all(keys, 0)),
            Step::new(sweep_all(keys, 0)),
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
    let run = agree_on_keys("polite-ties", |keys| {
        let mut enqueue: Vec<Op> = origins
            .iter()
            .map(|o| schedule::enqueue(keys, o, 1000, tasks(&["x"])))
            .collect();
        enqueue.reverse();
        vec![
            Step::new(enqueue),
            // Whether the five enqueues share a millisecond (and so tie) is
            // up to the clock: this release's order is not compared.
            Step {
                timed: true,
                ..Step::unordered(release_all(keys, 64, 8))
            },
            // The sweep schedules the five hosts at one score.
            Step::new(sweep_all(keys, 0)),
            // Two hosts of five: the first two by member.
            Step::timed(release_all(keys, 2, 8)),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[1]), 5);
    assert_eq!(moved(&run.replies[2]), 5);
    assert_eq!(taken(&run.replies[3]), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_failures_parking_backoffs_and_turns() {
    let run = agree_on_keys("polite-fail", |keys| {
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
                schedule::enqueue(keys, "http://bad", 0, tasks(&["1", "2"])),
                schedule::enqueue(keys, "http://flaky", 0, tasks(&["1", "2"])),
                schedule::enqueue(keys, "http://slow", 1000, tasks(&["1", "2"])),
                schedule::enqueue(keys, "http://later", 1000, tasks(&["1", "2"])),
            ]),
            Step::timed(release_all(keys, 64, 8)),
            // Nobody is due again yet; enqueueing keeps their turns.
            Step::timed(release_all(keys, 64, 8)),
            Step::new(vec![
                schedule::enqueue(keys, "http://bad", 0, tasks(&["3"])),
                schedule::enqueue(keys, "http://slow", 1000, tasks(&["3"])),
            ]),
            // The fetchers' turns.
            Step::timed(vec![
                turn::gate(keys, "http://g", 10_000),
                turn::gate(keys, "http://g", 10_000),
                turn::done(keys, "http://g", 2000),
                turn::gate(keys, "http://g", 10_000),
                turn::gate(keys, "http://free", 0),
                turn::gate(keys, "http://free", 0),
            ]),
        ]
    })
    .await;
    assert_eq!(taken(&run.replies[2]), 4, "one task per host");
    assert_eq!(taken(&run.replies[3]), 0);
    // Each shard's next host: the slow one in 3 s, the flaky one (two
    // failures) in 4 s, the parked one in an hour, the later one in 2100
    // (compared as a day).
    let next = waits(&run.replies[3]);
    assert_eq!(next, vec![3000, 4000, 3_600_000, 86_400_000]);
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
        }
        .reference(),
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
        .flat_map(|r| release_reply(r).1)
        .map(|m| {
            let i = m.iter().position(|b| *b == b'\n').expect("origin\\ntask");
            pipeline::messages::task_crawl(&m[i + 1..]).unwrap_or_else(|| "?".into())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_paused_and_cancelled_crawls() {
    use pipeline::crawls::{set_state, CrawlState};
    let run = agree_on_keys("polite-control", |keys| {
        vec![
            // One host shared by three crawls (no delay, burst 8), one host
            // of the paused crawl alone, and a task no crawl can be read from.
            Step::new(vec![
                schedule::enqueue(
                    keys,
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
                    keys,
                    "http://paused",
                    0,
                    vec![task_of("b", "http://paused/b3")],
                ),
                schedule::enqueue(
                    keys,
                    "http://mixed",
                    1000,
                    vec![
                        task_of("b", "http://mixed/b4"),
                        task_of("a", "http://mixed/a3"),
                        task_of("b", "http://mixed/b5"),
                    ],
                ),
            ]),
            Step::new(set_state(keys, "b", CrawlState::Paused)),
            Step::new(set_state(keys, "c", CrawlState::Cancelled)),
            // a, junk and a go; b's stay queued (at the back), c's is dropped;
            // the paused host keeps no turn; the mixed host (a delay) sends a.
            Step::timed(release_all(keys, 64, 8)),
            // Only paused tasks left: nothing goes, the hosts stay queued.
            Step::timed(release_all(keys, 64, 8)),
            // Resumed: the tasks are releasable again (once the hosts are
            // looked at again); cancelled: dropped from their queues.
            Step::new(set_state(keys, "b", CrawlState::Running)),
            Step::new(set_state(keys, "a", CrawlState::Cancelled)),
            Step::new(vec![
                schedule::enqueue(
                    keys,
                    "http://mixed",
                    1000,
                    vec![task_of("a", "http://mixed/a4")],
                ),
                schedule::drop_crawl(keys, "http://mixed", "a"),
                schedule::drop_crawl(keys, "http://mixed", "a"),
                schedule::drop_crawl(keys, "http://paused", "b"),
                schedule::drop_crawl(keys, "http://none", "b"),
            ]),
        ]
    })
    .await;
    let mut first = crawls_taken(&run.replies[3]);
    first.sort();
    assert_eq!(first, vec!["?", "a", "a", "a"]);
    assert_eq!(taken(&run.replies[4]), 0);
    // The enqueue queued one task; the drops.
    assert_eq!(run.replies[7][0], Reply::Array(ints(&[1, 0])));
    assert_eq!(run.replies[7][1..], ints(&[1, 0, 1, 0]));
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
        // The list `l` and the sorted set `z`.
        let rpush = |values: &[&[u8]]| Op::RPush {
            key: k("l"),
            values: values.iter().map(|v| v.to_vec()).collect(),
        };
        let lrange = |start, stop| Op::LRange {
            key: k("l"),
            start,
            stop,
        };
        let keys = Keys::new(ns);
        let origin = "http://r.test";
        let shard = host_shard(origin);
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
                rpush(&[b"a"]),
                rpush(&[b"b", b"c"]),
                lrange(1, -1),
                lrange(-2, 10),
                lrange(5, 9),
                Op::LLen { key: k("l") },
                Op::LLen { key: k("none") },
            ],
            vec![
                Op::ZAdd {
                    key: k("z"),
                    members: vec![(5, b"b".to_vec()), (5, b"a".to_vec()), (-3, b"c".to_vec())],
                },
                Op::ZAdd {
                    key: k("z"),
                    members: vec![(9, b"c".to_vec())],
                },
                Op::ZRangeByScore {
                    key: k("z"),
                    min: i64::MIN,
                    max: 5,
                    limit: Some(10),
                },
                Op::ZRangeByScore {
                    key: k("z"),
                    min: 5,
                    max: i64::MAX,
                    limit: None,
                },
                Op::ZRevRange {
                    key: k("z"),
                    start: 0,
                    stop: 1,
                },
                Op::ZRem {
                    key: k("z"),
                    members: vec![b"a".to_vec(), b"none".to_vec()],
                },
                Op::ZCard { key: k("z") },
                Op::SMIsMember {
                    key: k("set"),
                    members: vec![7, 8, -1],
                },
            ],
            // Refetches: one due now, one in a minute, moved into the host
            // queue when due.
            vec![
                schedule::schedule_recrawl(&keys, origin, b"due", 0),
                schedule::schedule_recrawl(&keys, origin, b"later", 60_000),
            ],
            vec![schedule::release_recrawls(&keys, shard, 10)],
            vec![Op::LRange {
                key: keys.host_queue(origin),
                start: 0,
                stop: -1,
            }],
        ])
    })
    .await;
}

/// Every script of every stage loads on the real Redis (a Lua error would
/// otherwise show only when the step first runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_script_loads() {
    let scripts: [&pipeline::store::Script; 13] = [
        &schedule::ADMIT,
        &schedule::RELEASE,
        &schedule::SWEEP,
        &schedule::DROP_CRAWL,
        &schedule::RECRAWL_AT,
        &schedule::RELEASE_RECRAWLS,
        &turn::GATE,
        &turn::TURN_DONE,
        &pipeline::once::ONCE,
        &pipeline::live::BEAT,
        &pipeline::live::READ,
        &contentseen::stage::DOC_STORE,
        &contentseen::table::COMPACT,
    ];
    let client = redis::Client::open(crawler_tests::REDIS_URL).expect("redis url");
    let mut conn = client.get_connection().expect("redis");
    for s in scripts {
        let loaded: redis::RedisResult<String> = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(s.source())
            .query(&mut conn);
        assert!(loaded.is_ok(), "{s:?}: {loaded:?}");
    }
}

/// `CRAWLER_REDIS_WAIT`: a batch that writes waits for its replicas, and
/// so does a confirmed read (`Store::exec_confirmed`: a "done already"
/// answer that acks a message). An old master started again after its
/// failover answers as a master, without replicas, until it hears it is a
/// replica; what it holds beyond its successor is dropped then. The shared
/// Redis has no replica: with a wait of 1 a write and a confirmed read
/// fail there, a plain read does not. On the test cluster (a replica per
/// master) all pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_store_confirms_writes_and_reads_that_ack_with_replicas() {
    use pipeline::store::{RedisConfig, Store, StoreError};
    let key = format!(
        "t-wait-{}:k",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let cluster = crawler_tests::test_cluster();
    let config = RedisConfig {
        url: crawler_tests::REDIS_URL.to_string(),
        cluster: cluster
            .as_deref()
            .map(pipeline::config::url_list)
            .unwrap_or_default(),
        wait_replicas: 1,
        wait_timeout: Some(std::time::Duration::from_millis(200)),
    };
    let waiting = Store::connect(&config).await.expect("connect");
    let plain = crawler_tests::shared_store().await;
    let set = Op::Set {
        key: key.clone(),
        value: b"v".to_vec(),
        expire_ms: None,
    };
    let get = [Op::Get { key: key.clone() }];
    let write = waiting.exec(std::slice::from_ref(&set)).await;
    plain.exec(&[set]).await.expect("plain write");
    let read = waiting.exec(&get).await;
    let confirmed = waiting.exec_confirmed(&get).await;
    plain.exec(&[Op::Del { key }]).await.expect("clean up");
    let value = vec![Reply::Data(b"v".to_vec())];
    assert_eq!(read.expect("a plain read waits for nothing"), value);
    if cluster.is_some() {
        write.expect("a write on the cluster, confirmed by a replica");
        assert_eq!(confirmed.expect("a confirmed read on the cluster"), value);
    } else {
        for (what, result) in [
            ("write", write.map(|_| ())),
            ("confirmed read", confirmed.map(|_| ())),
        ] {
            match result {
                Err(StoreError::Replicas {
                    wanted: 1,
                    acked: 0,
                    ..
                }) => {}
                other => panic!("a {what} on a Redis without replicas, waiting for one: {other:?}"),
            }
        }
    }
}
