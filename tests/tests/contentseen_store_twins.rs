//! `Op::ClaimFirst` (a `MULTI`/`EXEC` transaction on Redis), `Op::SetNxWith` and `Op::Once`
//! (Lua scripts) are each written twice, for Redis and as a
//! twin in the memory store of `crawler run`: the same sequences of ops give
//! the same replies on both (a first claim, a slot owned by another, the
//! same slot twice in one call, no slot at all, binary values). So is
//! `Op::HSet` of many fields, whose reply (the number of new fields) the
//! Redis side once got wrong (it sent `HMSET`, which replies OK).

use crawler_tests::REDIS_URL;
use pipeline::store::{Op, Reply};
use pipeline::Store;

/// Each store's replies to `steps`, one `exec` per step, in order.
async fn on_both(stores: &[&Store], steps: &[Vec<Op>]) -> Vec<Vec<Vec<Reply>>> {
    let mut replies = Vec::new();
    for store in stores {
        let mut got: Vec<Vec<Reply>> = Vec::new();
        for ops in steps {
            got.push(store.exec(ops).await.expect("exec"));
        }
        replies.push(got);
    }
    replies
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
async fn the_transaction_and_its_memory_twin_agree() {
    let env = crawler_tests::TestEnv::in_process("claimfirst");
    let ns = env.namespace.clone();
    let redis = Store::redis(REDIS_URL).await.expect("redis");
    let memory = Store::memory();
    let steps: Vec<Vec<Op>> = vec![
        vec![claim(
            &ns,
            &[("0:1", "11", b"100"), ("1:1", "12", b"100")],
            1,
        )],
        // A second document: one slot taken, one new; the same slot twice.
        vec![claim(
            &ns,
            &[
                ("0:1", "11", b"200"),
                ("1:2", "13", b"200"),
                ("1:2", "13", b"201"),
            ],
            2,
        )],
        // No slot: the counter alone.
        vec![claim(&ns, &[], 1)],
        // Binary values and two calls in one pipeline, in order.
        vec![
            claim(&ns, &[("2:9", "-5", &[0xFF, 0, 1])], 1),
            claim(&ns, &[("2:9", "-5", &[7]), ("0:1", "11", b"300")], 3),
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
    ];
    let replies = on_both(&[&redis, &memory], &steps).await;
    assert_eq!(replies[0], replies[1], "Redis and memory differ");
    // And what they agree on is right.
    let owners = |r: &Reply| match r {
        Reply::Array(items) => items.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        owners(&replies[1][0][0]),
        vec![Reply::Int(1), Reply::Int(1), Reply::Int(1)]
    );
    assert_eq!(
        owners(&replies[1][1][0]),
        vec![Reply::Int(0), Reply::Int(1), Reply::Int(0), Reply::Int(3)]
    );
    assert_eq!(owners(&replies[1][2][0]), vec![Reply::Int(4)]);
    assert_eq!(
        owners(&replies[1][3][1]),
        vec![Reply::Int(0), Reply::Int(0), Reply::Int(8)]
    );
    assert_eq!(
        replies[1][4],
        vec![
            Reply::Data(b"100".to_vec()),
            Reply::Data(b"200".to_vec()),
            Reply::Data(vec![0xFF, 0, 1]),
        ]
    );
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hset_and_its_memory_twin_agree() {
    let env = crawler_tests::TestEnv::in_process("hset");
    let key = format!("{}:h", env.namespace);
    let hset = |fields: &[(&str, &[u8])]| Op::HSet {
        key: key.clone(),
        fields: fields
            .iter()
            .map(|(f, v)| (f.to_string(), v.to_vec()))
            .collect(),
    };
    let steps = vec![
        vec![hset(&[("a", b"1"), ("b", &[0xFF, 0])])],
        // One field new, one replaced.
        vec![hset(&[("b", b"2"), ("c", b"3")])],
        vec![Op::HGet {
            key: key.clone(),
            field: "b".into(),
        }],
    ];
    let redis = Store::redis(REDIS_URL).await.expect("redis");
    let replies = on_both(&[&redis, &Store::memory()], &steps).await;
    assert_eq!(replies[0], replies[1], "Redis and memory differ");
    assert_eq!(replies[0][0], vec![Reply::Int(2)]);
    assert_eq!(replies[0][1], vec![Reply::Int(1)]);
    assert_eq!(replies[0][2], vec![Reply::Data(b"2".to_vec())]);
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setnx_with_and_its_memory_twin_agree() {
    let env = crawler_tests::TestEnv::in_process("setnxwith");
    let ns = env.namespace.clone();
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
    let steps: Vec<Vec<Op>> = vec![
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
    ];
    let redis = Store::redis(REDIS_URL).await.expect("redis");
    let replies = on_both(&[&redis, &Store::memory()], &steps).await;
    assert_eq!(replies[0], replies[1], "Redis and memory differ");
    let r = &replies[1];
    assert_eq!(r[0][0], Reply::Int(1));
    assert_eq!(r[2], vec![Reply::Int(0), Reply::Int(0)]);
    assert_eq!(
        r[3][0],
        Reply::Array(vec![Reply::Data(b"a".to_vec()), Reply::Data(b"b".to_vec())])
    );
    assert_eq!(r[3][1], Reply::Array(vec![Reply::Data(b"b".to_vec())]));
    assert_eq!(r[3][2], Reply::Data(b"1".to_vec()));
    assert_eq!(r[3][3], Reply::Data(b"1".to_vec()));
    assert_eq!(r[3][4], Reply::Data(vec![0xFF, 0]));
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_and_its_memory_twin_agree() {
    let env = crawler_tests::TestEnv::in_process("once");
    let ns = env.namespace.clone();
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
    let steps: Vec<Vec<Op>> = vec![
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
            Op::HGetAll {
                key: k("once:fetch:0"),
            },
        ],
    ];
    let redis = Store::redis(REDIS_URL).await.expect("redis");
    let mut replies = on_both(&[&redis, &Store::memory()], &steps).await;
    // HGETALL's field order is the store's own: compare as sorted pairs.
    let sorted = |r: &Reply| {
        let mut items: Vec<String> = match r {
            Reply::Array(items) => items.chunks(2).map(|p| format!("{:?}", p)).collect(),
            other => panic!("{other:?}"),
        };
        items.sort();
        items
    };
    assert_eq!(
        sorted(&replies[0][6][4]),
        sorted(&replies[1][6][4]),
        "marks differ"
    );
    for r in &mut replies {
        r[6].truncate(4);
    }
    assert_eq!(replies[0], replies[1], "Redis and memory differ");
    let r = &replies[1];
    assert_eq!(r[0], vec![Reply::Int(1)]);
    assert_eq!(r[1], vec![Reply::Int(0)]);
    assert_eq!(r[2], vec![Reply::Int(1), Reply::Int(1)]);
    assert_eq!(
        r[3],
        vec![Reply::Int(0)],
        "a late delivery is not counted again"
    );
    assert_eq!(
        r[4],
        vec![
            Reply::Int(1),
            Reply::Int(1),
            Reply::Int(1),
            Reply::Int(0),
            Reply::Int(1)
        ],
        "the mark remembers {} ids",
        pipeline::store::ONCE_HISTORY
    );
    assert_eq!(r[5], vec![Reply::Int(1)]);
    assert_eq!(r[6][0], Reply::Data(b"1 forgotten".to_vec()));
    assert_eq!(r[6][1], Reply::Data(b"b".to_vec()));
    assert_eq!(r[6][2], Reply::Data(b"7".to_vec()));
    assert_eq!(r[6][3], Reply::Data(b"14".to_vec()));
    env.cleanup().await;
}
