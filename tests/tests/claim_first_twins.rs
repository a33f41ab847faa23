//! `Op::ClaimFirst` is written twice, as a Lua script for Redis and as its
//! twin in the memory store of `crawler run`: the same sequences of ops give
//! the same replies on both (a first claim, a slot owned by another, the
//! same slot twice in one call, no slot at all, binary values).

use crawler_tests::REDIS_URL;
use pipeline::store::{Op, Reply};
use pipeline::Store;

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
async fn the_script_and_its_memory_twin_agree() {
    let env = crawler_tests::TestEnv::in_process("claimfirst");
    let ns = env.namespace.clone();
    let redis = Store::redis(REDIS_URL).await.expect("redis");
    let memory = Store::memory();
    let steps: Vec<Vec<Op>> = vec![
        vec![claim(&ns, &[("0:1", "11", b"100"), ("1:1", "12", b"100")], 1)],
        // A second document: one slot taken, one new; the same slot twice.
        vec![claim(
            &ns,
            &[("0:1", "11", b"200"), ("1:2", "13", b"200"), ("1:2", "13", b"201")],
            2,
        )],
        // No slot: the counter alone.
        vec![claim(&ns, &[], 1)],
        // Binary values and two calls in one pipeline, in order.
        vec![
            claim(&ns, &[("2:9", "-5", &[0xFF, 0, 1])], 1),
            claim(&ns, &[("2:9", "-5", &[7]), ("0:1", "11", b"300")], 3),
        ],
    ];
    let mut replies = Vec::new();
    for store in [&redis, &memory] {
        let mut got: Vec<Vec<Reply>> = Vec::new();
        for ops in &steps {
            got.push(store.exec(ops).await.expect("exec"));
        }
        replies.push(got);
    }
    assert_eq!(replies[0], replies[1], "Redis and memory differ");
    // And what they agree on is right.
    let owners = |r: &Reply| match r {
        Reply::Array(items) => items.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        owners(&replies[1][1][0]),
        vec![
            Reply::Data(b"100".to_vec()),
            Reply::Data(b"200".to_vec()),
            Reply::Data(b"200".to_vec()),
            Reply::Int(3)
        ]
    );
    assert_eq!(owners(&replies[1][2][0]), vec![Reply::Int(4)]);
    assert_eq!(
        owners(&replies[1][3][1]),
        vec![Reply::Data(vec![0xFF, 0, 1]), Reply::Data(b"100".to_vec()), Reply::Int(8)]
    );
    env.cleanup().await;
}
