//! A band table stays about its own size in the real Redis while it grows
//! through the protocol ([`contentseen::room`]): Redis doubles a string that
//! an `APPEND` outgrows, and the writer that caused it compacts it. Without
//! the compaction a table of 149 members (894 bytes) takes 2,136 bytes of
//! Redis memory; with it, about 1,100.

use contentseen::bands::Layout;
use contentseen::reach::Probe;
use contentseen::room;
use contentseen::table::Table;
use evaluation::rng::{rng, Rng};

/// A connection to the test's Redis: one node, or the test cluster
/// (`CRAWLER_TEST_REDIS_CLUSTER`), where a key's command goes to its node.
enum Conn {
    Node(redis::aio::MultiplexedConnection),
    Cluster(redis::cluster_async::ClusterConnection),
}

/// `MEMORY USAGE` of a key: its value, its name and Redis's entry for it.
async fn memory_usage(conn: &mut Conn, key: &str) -> usize {
    let cmd: redis::Cmd = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .clone();
    match conn {
        Conn::Node(c) => cmd.query_async::<usize>(c).await,
        Conn::Cluster(c) => cmd.query_async::<usize>(c).await,
    }
    .expect("MEMORY USAGE")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_band_table_is_compacted_when_redis_doubles_it() {
    let (env, store, _) = crawler_tests::TestEnv::on_redis("csroom").await;
    let mut conn = match &env.redis_cluster {
        Some(seeds) => Conn::Cluster(
            redis::cluster::ClusterClient::new(pipeline::config::url_list(seeds))
                .expect("cluster client")
                .get_async_connection()
                .await
                .expect("redis cluster"),
        ),
        None => Conn::Node(
            redis::Client::open(crawler_tests::REDIS_URL)
                .expect("client")
                .get_multiplexed_async_connection()
                .await
                .expect("redis"),
        ),
    };
    let layout = Layout::default();
    let table = Table::new(store.clone(), &env.namespace, layout.clone());
    // Fingerprints that share band 0's value (its low 16 bits): all land in
    // one band-0 table. Random elsewhere, so they are far apart.
    let mut r = rng(0xB0A7, 0);
    let fps: Vec<u64> = (0..400)
        .map(|_| (r.next_u64() & !0xFFFF) | 0x1234)
        .collect();
    let (key, _) = table.band_entries(fps[0]).next().expect("band 0");
    // Overhead of a key besides its string: Redis's object and entry, and
    // the key's name (under 128 bytes).
    let besides = 16 + 24 + 128;
    let mut checked = 0;
    let mut worst = 0.0f64;
    for (i, chunk) in fps.chunks(10).enumerate() {
        let docs: Vec<(Probe, String)> = chunk
            .iter()
            .enumerate()
            .map(|(j, &fp)| {
                (
                    Probe::exact(&layout, fp),
                    format!("https://room.test/{i}/{j}"),
                )
            })
            .collect();
        let batch: Vec<(Probe, u64)> = docs
            .iter()
            .map(|(p, u)| (*p, pipeline::keys::url_hash(u)))
            .collect();
        table.decide(&batch).await.expect("decide");
        let len = 6 * (i + 1) * chunk.len();
        if len < room::COMPACT_FROM {
            continue;
        }
        let used = memory_usage(&mut conn, &key).await;
        let string = used.saturating_sub(besides);
        worst = worst.max(string as f64 / len as f64);
        // At most an exact string's allocation: written exactly at this
        // length or a shorter one of the same size class.
        let bound = room::allocation(5 + len + 1);
        assert!(
            used <= bound + besides,
            "table of {len} bytes takes {used} bytes of Redis memory (bound {})",
            bound + besides
        );
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} sizes checked");
    eprintln!("worst string allocation per table byte: {worst:.2} over {checked} sizes");
    store
        .delete_matching(&format!("{}:*", env.namespace))
        .await
        .expect("clean up");
}
