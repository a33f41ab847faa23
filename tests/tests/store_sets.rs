//! `Op::SMembers` on the real Redis (read from `DUMP` payloads, see
//! `pipeline::rdb`) returns exactly what `SMEMBERS` returns, for every
//! encoding a set of integers can have: intsets of 16-, 32- and 64-bit
//! members, intsets whose blob Redis LZF-compresses, hash-table sets past
//! `set-max-intset-entries`, a missing key; and the memory store agrees.
//! A server that refuses `DUMP` (here: an ACL user without it) gets the
//! same answers through SMEMBERS.

use std::collections::BTreeSet;

use crawler_tests::REDIS_URL;
use pipeline::store::Op;
use pipeline::Store;

fn sets() -> Vec<(&'static str, Vec<i64>)> {
    let mut x = 0x1234_5678_9ABC_DEF1u64;
    let mut random = |n: usize| -> Vec<i64> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as i64
            })
            .collect()
    };
    vec![
        ("int16", vec![-5, 0, 7, 300, -32768, 32767]),
        ("int32", vec![-70_000, 1, 2_000_000_000]),
        ("int64", random(15)),
        // Small consecutive integers: a blob LZF compresses.
        ("compressible", (0..400).collect()),
        (
            "compressible64",
            (0..300).map(|i| (1i64 << 40) + i).collect(),
        ),
        // Past 512 members Redis keeps a hash table of strings.
        ("hashtable", random(2000)),
        ("one", vec![i64::MIN]),
    ]
}

/// The reply of the Redis command `words` (the command's name, then its
/// arguments).
async fn command<T: redis::FromRedisValue>(
    conn: &mut redis::aio::MultiplexedConnection,
    words: &[&str],
) -> T {
    let (name, args) = words.split_first().expect("a command");
    redis::cmd(name)
        .arg(args)
        .query_async(conn)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", words.join(" ")))
}

#[tokio::test]
async fn set_members_match_smembers_for_every_encoding() {
    let env = crawler_tests::TestEnv::in_process("storesets");
    let ns = env.namespace.clone();
    let redis = Store::redis(REDIS_URL).await.expect("redis");
    let memory = Store::memory();
    let client = redis::Client::open(REDIS_URL).expect("url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    for (name, members) in sets() {
        let key = format!("{ns}:set:{name}");
        for store in [&redis, &memory] {
            store
                .exec(&[Op::SAdd {
                    key: key.clone(),
                    members: members.clone(),
                }])
                .await
                .expect("SADD");
        }
        let encoding: String = command(&mut conn, &["OBJECT", "ENCODING", &key]).await;
        let expected: BTreeSet<i64> = command::<Vec<i64>>(&mut conn, &["SMEMBERS", &key])
            .await
            .into_iter()
            .collect();
        assert_eq!(expected, members.iter().copied().collect(), "{name}");
        // The fast path itself understands this server's payload (no
        // silent fallback to SMEMBERS).
        let payload: Vec<u8> = command(&mut conn, &["DUMP", &key]).await;
        let decoded: Option<BTreeSet<i64>> =
            pipeline::rdb::set_members(&payload).map(|m| m.into_iter().collect());
        assert_eq!(
            decoded.as_ref(),
            Some(&expected),
            "{name} ({encoding}) payload"
        );
        for (which, store) in [("redis", &redis), ("memory", &memory)] {
            let replies = store
                .exec(&[Op::SMembers { key: key.clone() }])
                .await
                .expect("SMembers");
            let got: BTreeSet<i64> = replies[0].ints().expect("ints").into_iter().collect();
            assert_eq!(got, expected, "{name} ({encoding}) from {which}");
        }
    }
    // A client whose user may not DUMP: probed at connect, SMEMBERS instead.
    let user = format!("crawler-test-nodump-{ns}");
    let () = command(
        &mut conn,
        &[
            "ACL", "SETUSER", &user, "on", "nopass", "~*", "&*", "+@all", "-dump",
        ],
    )
    .await;
    let restricted = Store::redis(&format!("redis://{user}:x@127.0.0.1:6379/"))
        .await
        .expect("connect as the restricted user");
    for (name, members) in sets() {
        let key = format!("{ns}:set:{name}");
        let replies = restricted
            .exec(&[Op::SMembers { key }])
            .await
            .expect("SMembers without DUMP");
        let got: BTreeSet<i64> = replies[0].ints().expect("ints").into_iter().collect();
        assert_eq!(got, members.into_iter().collect(), "{name} without DUMP");
    }
    let _: i64 = command(&mut conn, &["ACL", "DELUSER", &user]).await;

    // A missing key is an empty set.
    let replies = redis
        .exec(&[Op::SMembers {
            key: format!("{ns}:set:missing"),
        }])
        .await
        .expect("SMembers");
    assert_eq!(replies[0].ints().expect("ints"), Vec::<i64>::new());
    redis
        .delete_matching(&format!("{ns}:*"))
        .await
        .expect("cleanup");
}
