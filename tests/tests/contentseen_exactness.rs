//! Exactness of the banded lookup against the real Redis: with 1M random
//! fingerprints stored, every probe (random, or a stored fingerprint with
//! 0..k, exactly k, or k+1 bits flipped) finds exactly the stored
//! fingerprints a brute-force scan finds within distance k.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use contentseen::bands::Layout;
use contentseen::reach::Probe;
use contentseen::simhash::distance;
use contentseen::table::Table;
use evaluation::rng::{rng, EvalRng, Rng, RngExt};
use pipeline::store::Op;

const STORED: usize = 1_000_000;
const PROBES: usize = 2_000;

/// `fp` with exactly `n` distinct bits flipped.
fn flip(rng: &mut EvalRng, fp: u64, n: u32) -> u64 {
    let mut out = fp;
    while distance(out, fp) < n {
        out ^= 1 << rng.random_range(0..64);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn banded_lookups_return_exactly_what_a_scan_returns() {
    let (env, store, _) = crawler_tests::TestEnv::on_redis("csexact").await;
    let layout = Layout::default();
    let k = layout.max_distance();
    let table = Table::new(store.clone(), &env.namespace, layout);

    // Bulk insert: one APPEND of all its members per band key, big
    // pipelines.
    let mut rng = rng(0x5EED, 0);
    let t0 = Instant::now();
    let stored: Vec<u64> = (0..STORED).map(|_| rng.next_u64()).collect();
    let mut by_key: HashMap<String, Vec<u8>> = HashMap::new();
    for &fp in &stored {
        for (key, member) in table.band_entries(fp) {
            by_key.entry(key).or_default().extend(member);
        }
    }
    let ops: Vec<Op> = by_key
        .into_iter()
        .map(|(key, value)| Op::Append { key, value })
        .collect();
    for chunk in ops.chunks(20_000) {
        store.exec(chunk).await.expect("bulk APPEND");
    }
    eprintln!("bulk insert of {STORED}: {:?}", t0.elapsed());

    // Probes: random, near (0..=k flips), exactly k, exactly k+1.
    let probes: Vec<u64> = (0..PROBES)
        .map(|i| {
            let base = stored[(rng.next_u64() % STORED as u64) as usize];
            match i % 4 {
                0 => rng.next_u64(),
                1 => {
                    let n = (rng.next_u64() % (k as u64 + 1)) as u32;
                    flip(&mut rng, base, n)
                }
                2 => flip(&mut rng, base, k),
                _ => flip(&mut rng, base, k + 1),
            }
        })
        .collect();

    // Brute force: every stored fingerprint within k of each probe (two
    // threads, half of the probes each).
    let t0 = Instant::now();
    let expected: Vec<BTreeSet<u64>> = std::thread::scope(|scope| {
        let halves: Vec<_> = probes
            .chunks(PROBES.div_ceil(2))
            .map(|part| {
                let stored = &stored;
                scope.spawn(move || {
                    let mut out = vec![BTreeSet::new(); part.len()];
                    for &s in stored {
                        for (p, e) in part.iter().zip(out.iter_mut()) {
                            if (s ^ p).count_ones() <= k {
                                e.insert(s);
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        halves
            .into_iter()
            .flat_map(|h| h.join().expect("scan thread"))
            .collect()
    });
    eprintln!("brute-force scan: {:?}", t0.elapsed());

    // The banded lookups, 8 at a time.
    let t0 = Instant::now();
    let mut results: Vec<BTreeSet<u64>> = Vec::with_capacity(PROBES);
    for chunk in probes.chunks(8) {
        let lookups = chunk.iter().map(|&p| {
            let table = table.clone();
            let probe = Probe::exact(table.layout(), p);
            tokio::spawn(async move { table.near(&probe).await })
        });
        for handle in lookups.collect::<Vec<_>>() {
            let near = handle.await.expect("task").expect("lookup");
            results.push(near.into_iter().map(|n| n.fingerprint).collect());
        }
    }
    eprintln!("banded lookups: {:?}", t0.elapsed());

    let mut at_k = 0;
    let mut found_total = 0;
    for (i, (&p, got)) in probes.iter().zip(&results).enumerate() {
        assert_eq!(
            got, &expected[i],
            "probe {i} ({p:016x}): banded lookup differs from the scan"
        );
        at_k += got.iter().filter(|&&s| distance(s, p) == k).count();
        found_total += got.len();
    }
    // The boundary was exercised: matches at exactly k were found, and the
    // k+1 probes found nothing (or other fingerprints only by chance).
    assert!(at_k >= PROBES / 4, "only {at_k} matches at distance {k}");
    assert!(found_total >= PROBES / 2);
    let t0 = Instant::now();
    env.cleanup().await;
    eprintln!("cleanup: {:?}", t0.elapsed());
}
