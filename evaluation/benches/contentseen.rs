//! `cargo bench -p evaluation --bench contentseen`: the figures of issue 6.
//!
//! 1. Quality: precision and recall of "duplicate" (distance ≤ k) on the
//!    near-duplicate set built from the AEB article bodies, per feature choice.
//! 2. Fingerprinting speed: MB/s of body text and fingerprints/s, one core.
//! 3. The race-free protocol through the real Redis: documents/s (insert,
//!    number, record, look up, resolve), batched, several connections, over
//!    a table preloaded with 1M fingerprints.
//! 4. Redis memory per stored fingerprint at 1M and 10M, per key family
//!    (`MEMORY USAGE` of every key) and as an `INFO memory` delta.
//!
//! Uses its own namespaces on the shared Redis and deletes their keys at the
//! end (SCAN + DEL, never FLUSHDB). Set `CONTENTSEEN_BENCH_FPS=1000000`
//! to stop after 1M, `CONTENTSEEN_BENCH_SKIP_REDIS=1` for 1–2 only,
//! `CONTENTSEEN_BENCH_SKIP_QUALITY=1` to skip 1, `CONTENTSEEN_BENCH_SKIP_MEMORY=1`
//! to skip 4.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use contentseen::bands::Layout;
use contentseen::minhash::{Signature, BANDS, SIGNATURE_BYTES};
use contentseen::reach::{Probe, Reach};
use contentseen::room;
use contentseen::simhash::{distance, fingerprint, sketch_with, Fingerprint, Sketch, DEFAULT};
use contentseen::table::{encode_record, Table};
use evaluation::clean_text::{
    build, feature_choices, is_duplicate, score, EvalSet, Kind, Lookup, Scores,
};
use evaluation::rng::{rng, EvalRng, Rng as _};
use pipeline::Store;
use redis::aio::MultiplexedConnection;

const REDIS_URL: &str = "redis://127.0.0.1:6379/";
const K: u32 = 3;

fn aeb_bodies() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/bench/aeb/ground-truth.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let json: serde_json::Value = serde_json::from_str(&text).expect("ground-truth.json");
    let mut ids: Vec<&String> = json.as_object().expect("object").keys().collect();
    ids.sort();
    ids.iter()
        .filter_map(|id| json[id.as_str()]["articleBody"].as_str())
        .map(str::to_string)
        .collect()
}

/// Which bits a short body's lookup flips, from its sketch and the
/// default's choice (0 for a body searched within k only).
type Flips<'a> = dyn Fn(&Sketch, u64) -> u64 + 'a;

fn quality(bodies: &[String]) {
    let set = build(bodies, 3, 2026);
    let layout = Layout::default();
    println!(
        "\n## Quality: {} bodies, {} near-duplicate pairs, {} distinct pairs",
        set.bases,
        set.pairs.len(),
        set.bases * (set.bases - 1) / 2
    );
    println!("recall = share of near-duplicate pairs found (the variant looks up the body); distinct found = false positives;");
    println!("precision = found mirrors+edits / (found mirrors+edits + distinct pairs found)");
    println!(
        "\n### Features (with the default reach: k = {K}, radius 5/6/7 under 600/300/150 tokens)\n"
    );
    println!(
        "| features                  | mirrors | light edits | boilerplate | distinct found | precision |"
    );
    println!(
        "|---------------------------|---------|-------------|-------------|----------------|-----------|"
    );
    let choices = feature_choices().unwrap_or_else(|e| panic!("{e}"));
    let row = |name: &str, s: &Scores| {
        println!(
            "| {name:<25} | {:>7.3} | {:>11.3} | {:>11.3} | {:>6} / {:<5} | {:>9.4} |",
            s.recall_of(Kind::Mirror).rate(),
            s.recall_of(Kind::Edit).rate(),
            s.recall_of(Kind::Boilerplate).rate(),
            s.distinct.found,
            s.distinct.total,
            s.precision(&[Kind::Mirror, Kind::Edit]),
        );
    };
    let mut default_sketches = Vec::new();
    for (name, features) in choices {
        let sketches: Vec<Sketch> = set
            .texts
            .iter()
            .map(|t| sketch_with(t, &features))
            .collect();
        let lookups: Vec<Lookup> = sketches
            .iter()
            .map(|s| Lookup::of(s, &layout, &Reach::default()))
            .collect();
        let name = if features == DEFAULT {
            default_sketches = sketches;
            format!("{name} *")
        } else {
            name.to_string()
        };
        row(&name, &score(&set, &lookups, &layout));
    }
    println!("(* the default features)");

    // The reach: radius by length and the extra keys a lookup reads.
    println!("\n### Reach (default features): which radius, which extra band keys\n");
    println!(
        "| reach                     | mirrors | light edits | boilerplate | distinct found | precision |"
    );
    println!(
        "|---------------------------|---------|-------------|-------------|----------------|-----------|"
    );
    let with_flips = |reach: &Reach, flips: &Flips<'_>| -> Vec<Lookup> {
        default_sketches
            .iter()
            .map(|s| match Lookup::of(s, &layout, reach) {
                Lookup::Sim(p) => Lookup::Sim(Probe {
                    flips: flips(s, p.flips),
                    ..p
                }),
                l => l,
            })
            .collect()
    };
    let weakest_per_band = |s: &Sketch, flips: u64| -> u64 {
        if flips == 0 {
            return 0;
        }
        layout.bands().iter().fold(0, |m, b| {
            let bit = (b.shift..b.shift + b.bits)
                .min_by_key(|&bit| (s.margins[bit as usize], bit))
                .unwrap_or(b.shift);
            m | 1 << bit
        })
    };
    let short_only = |_: &Sketch, flips: u64| flips;
    let every_neighbour = |_: &Sketch, flips: u64| if flips == 0 { 0 } else { u64::MAX };
    let reaches: Vec<(&str, Reach, &Flips<'_>)> = vec![
        ("k = 3 for every body", Reach::exact(), &short_only),
        (
            "6 under 300, 2 weakest",
            Reach::new(&[(300, 6)]),
            &short_only,
        ),
        (
            "5/6/7, weakest per band",
            Reach::default(),
            &weakest_per_band,
        ),
        ("5/6/7, 2 weakest bits *", Reach::default(), &short_only),
        (
            "5/6/7, all 64 neighbours",
            Reach::default(),
            &every_neighbour,
        ),
    ];
    let mut default_lookups = Vec::new();
    for (name, reach, flips) in reaches {
        let lookups = with_flips(&reach, flips);
        row(name, &score(&set, &lookups, &layout));
        if reach == Reach::default() && name.ends_with('*') {
            default_lookups = lookups;
        }
    }
    println!("(* the default: radius 5/6/7 under 600/300/150 tokens, 3 above; its 2 weakest bits probed)");
    println!("(target: precision ≥ 0.99, recall ≥ 0.95 on mirrors and light edits)");

    let fps: Vec<Fingerprint> = default_sketches.iter().map(|s| s.fingerprint).collect();
    println!("\nDistances with the default features (count at 0, 1, 2, ... 11, then > 11):");
    for (name, h) in histograms(&set, &fps) {
        println!("{name:<22} {h:?}");
    }
    // Recall by the length of the article the pair comes from.
    let bins = [(0, 150), (150, 300), (300, 600), (600, usize::MAX)];
    for kind in [Kind::Mirror, Kind::Edit] {
        let mut line = format!("{} found, by tokens of the article:", kind.name());
        for (lo, hi) in bins {
            let (mut found, mut total) = (0, 0);
            for &(k, a, b) in &set.pairs {
                let n = default_sketches[set.origin[a]].tokens;
                if k != kind || n < lo || n >= hi {
                    continue;
                }
                total += 1;
                found += usize::from(is_duplicate(
                    &layout,
                    &default_lookups[a],
                    &default_lookups[b],
                ));
            }
            let range = if hi == usize::MAX {
                format!("≥ {lo}")
            } else {
                format!("{lo}–{hi}")
            };
            line += &format!(
                " {range}: {:.3} ({found}/{total});",
                found as f64 / total.max(1) as f64
            );
        }
        println!("{line}");
    }
}

/// Distance histograms per kind of pair, and for distinct pairs.
fn histograms(set: &EvalSet, fps: &[Fingerprint]) -> Vec<(&'static str, [usize; 13])> {
    let d = |a: usize, b: usize| match (fps[a], fps[b]) {
        (Fingerprint::Sim(x), Fingerprint::Sim(y)) => distance(x, y).min(12) as usize,
        _ => 12,
    };
    let mut out = Vec::new();
    for kind in Kind::ALL {
        let mut h = [0; 13];
        for &(k, a, b) in &set.pairs {
            if k == kind {
                h[d(a, b)] += 1;
            }
        }
        out.push((kind.name(), h));
    }
    let mut h = [0; 13];
    for i in 0..set.bases {
        for j in i + 1..set.bases {
            h[d(i, j)] += 1;
        }
    }
    out.push(("distinct pairs", h));
    out
}

fn speed(bodies: &[String]) {
    let bytes: usize = bodies.iter().map(String::len).sum();
    // Warm up, then run for about two seconds.
    let mut sink = 0u64;
    for b in bodies {
        sink ^= fingerprint(b).value();
    }
    let start = Instant::now();
    let cpu_start = thread_cpu_secs();
    let mut rounds = 0usize;
    while start.elapsed() < Duration::from_secs(3) {
        for b in bodies {
            sink ^= fingerprint(std::hint::black_box(b)).value();
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = thread_cpu_secs().map(|end| end - cpu_start.unwrap_or(0.0));
    std::hint::black_box(sink);
    let non_ascii = bodies.iter().filter(|b| !b.is_ascii()).count();
    println!("\n## Fingerprinting speed (one core, AEB bodies: {} KB, {non_ascii} of {} with non-ASCII text)", bytes / 1024, bodies.len());
    // The machine is shared: CPU time is the one-core figure, wall time
    // includes waiting for the core.
    if let Some(cpu) = cpu.filter(|c| *c > 0.5) {
        println!(
            "{:.0} MB/s of body text per CPU-second of one core, {:.0} fingerprints/s (mean body {} bytes)",
            (bytes * rounds) as f64 / cpu / 1e6,
            (bodies.len() * rounds) as f64 / cpu,
            bytes / bodies.len()
        );
    }
    println!(
        "{:.0} MB/s of body text by the wall clock (thread on CPU {:.0}% of the time)",
        (bytes * rounds) as f64 / secs / 1e6,
        cpu.map_or(100.0, |c| 100.0 * c / secs),
    );
}

/// Redis's CPU time (user + system), in seconds.
async fn redis_cpu_secs(conn: &mut MultiplexedConnection) -> f64 {
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(conn)
        .await
        .expect("INFO cpu");
    info.lines()
        .filter_map(|l| {
            l.strip_prefix("used_cpu_user:")
                .or_else(|| l.strip_prefix("used_cpu_sys:"))
        })
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .sum()
}

/// Redis's per-command counters (`INFO commandstats`): calls and µs.
async fn command_stats(conn: &mut MultiplexedConnection) -> HashMap<String, (u64, u64)> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .expect("INFO commandstats");
    let field = |v: &str, name: &str| -> u64 {
        v.split(',')
            .find_map(|f| f.strip_prefix(name))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    info.lines()
        .filter_map(|l| l.strip_prefix("cmdstat_")?.split_once(':'))
        .map(|(cmd, v)| (cmd.to_string(), (field(v, "calls="), field(v, "usec="))))
        .collect()
}

/// The commands of a run, per document: calls and µs inside the command
/// (the rest of Redis's CPU is parsing and the network).
fn per_document(
    before: &HashMap<String, (u64, u64)>,
    after: &HashMap<String, (u64, u64)>,
    docs: f64,
) -> String {
    let mut rows: Vec<(String, f64, f64)> = after
        .iter()
        .filter_map(|(cmd, &(calls, usec))| {
            let (c0, u0) = before.get(cmd).copied().unwrap_or((0, 0));
            let calls = calls.saturating_sub(c0) as f64 / docs;
            // EXEC's time includes the commands it ran.
            let us = usec.saturating_sub(u0) as f64 / docs;
            // A command sent once a batch (MGET) still counts for its time.
            ((calls >= 0.01 || us >= 0.05) && cmd != "exec" && cmd != "info")
                .then(|| (cmd.clone(), calls, us))
        })
        .collect();
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    rows.iter()
        .map(|(cmd, calls, us)| format!("{cmd} {calls:.3}x {us:.1} µs"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This process's CPU time (user + system), in seconds.
fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// This thread's CPU time (user + system) from /proc, in seconds.
fn thread_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name's closing parenthesis; utime and stime
    // are fields 14 and 15 (1-based), in clock ticks of 1/100 s.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// A seeded stream of random fingerprints (the evaluation generator).
struct Rng(EvalRng);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(rng(seed, 0))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Skips the next `n` values.
    fn skip(&mut self, n: u64) {
        self.0.advance(u128::from(n));
    }

    /// The value `next` returns on its (j+1)-th call from seed `seed`.
    fn nth(seed: u64, j: u64) -> u64 {
        let mut r = Rng::new(seed);
        r.skip(j);
        r.next()
    }
}

/// The second signal of a synthetic document: its MinHash signature and
/// LSH values, derived from `id` (documents with the same id share them,
/// as near-duplicates do).
fn second_signal(id: u64) -> (Signature, [u64; BANDS]) {
    let mut r = Rng::new(id ^ 0x5EC0_4D51_6A11);
    let mut sig = [0u8; 32];
    for chunk in sig.chunks_mut(8) {
        chunk.copy_from_slice(&r.next().to_le_bytes());
    }
    (sig, std::array::from_fn(|_| r.next()))
}

/// Search radii of the preloaded records (the value's size, not the
/// lookups, depends on them): as for bodies of every length.
const RADII: [u32; 4] = [3, 5, 6, 7];

fn bench_url(seq: u64) -> String {
    format!("https://news.example.com/2026/11/22/story-{seq}.html")
}

/// Loads fingerprints `from..to` of the seeded stream straight into the
/// table's keys (the state the protocol leaves: bands, signed records,
/// MinHash LSH slots), with big multi-member commands.
/// `lengths`: each band table's length so far (the tables start empty), to
/// compact a table when an `APPEND` makes Redis double it, as the protocol
/// does ([`contentseen::room`]).
async fn bulk_load(
    conn: &mut MultiplexedConnection,
    table: &Table,
    seed: u64,
    (from, to): (u64, u64),
    lengths: &mut HashMap<String, usize>,
) {
    let compact: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(contentseen::table::COMPACT.source())
        .query_async(conn)
        .await
        .expect("SCRIPT LOAD");
    const CHUNK: u64 = 1_000_000;
    let mut rng = Rng::new(seed);
    rng.skip(from);
    let mut at = from;
    while at < to {
        let end = (at + CHUNK).min(to);
        let mut bands: Vec<(String, Vec<u8>)> = Vec::new();
        let mut seqs: HashMap<String, Vec<(i64, Vec<u8>)>> = HashMap::new();
        let mut slots: HashMap<String, Vec<(i64, i64)>> = HashMap::new();
        for seq in at..end {
            let fp = rng.next();
            bands.extend(table.band_entries(fp));
            // Sequence numbers start at 1, like INCRBY's.
            let s = seq as i64 + 1;
            let (sig, lsh) = second_signal(fp);
            seqs.entry(table.sequence_key(fp)).or_default().push((
                fp as i64,
                encode_record(
                    s,
                    RADII[(fp % 4) as usize],
                    Some(&sig),
                    pipeline::keys::url_hash(&bench_url(seq + 1)),
                ),
            ));
            for (band, &v) in lsh.iter().enumerate() {
                let (key, _) = table.lsh_slot(band, v);
                slots.entry(key).or_default().push((v as i64, fp as i64));
            }
        }
        let mut bulk = Bulk::default();
        // One APPEND per member, as the protocol adds them: a table's
        // string grows (and reserves room, and is compacted) the way it
        // does in a crawl.
        for (key, member) in bands {
            let len = lengths.entry(key.clone()).or_default();
            *len += member.len();
            let outgrew = room::outgrew(*len, member.len());
            bulk.pipe.append(&key, member).ignore();
            bulk.queued(conn, "bulk APPEND").await;
            if outgrew {
                bulk.pipe
                    .cmd("EVALSHA")
                    .arg(&compact)
                    .arg(2)
                    .arg(&Table::compaction_keys(&key)[..])
                    .ignore();
                bulk.queued(conn, "bulk compaction").await;
            }
        }
        for (key, fields) in seqs {
            bulk.pipe.hset_multiple(key, &fields).ignore();
            bulk.queued(conn, "bulk HSET fps").await;
        }
        for (key, fields) in slots {
            bulk.pipe.hset_multiple(key, &fields).ignore();
            bulk.queued(conn, "bulk HSET lsh").await;
        }
        bulk.send(conn, "bulk load").await;
        at = end;
    }
    let () = redis::cmd("SET")
        .arg(format!("{}:seq", namespace_of(table)))
        .arg(to)
        .query_async(conn)
        .await
        .expect("SET seq");
}

/// Commands of a bulk load, sent 2,000 at a time.
#[derive(Default)]
struct Bulk {
    pipe: redis::Pipeline,
    queued: usize,
}

impl Bulk {
    /// One more command is on the pipe: sends them when there are enough.
    async fn queued(&mut self, conn: &mut MultiplexedConnection, what: &str) {
        self.queued += 1;
        if self.queued >= 2000 {
            self.send(conn, what).await;
        }
    }

    async fn send(&mut self, conn: &mut MultiplexedConnection, what: &str) {
        if self.queued > 0 {
            let pipe = std::mem::take(&mut self.pipe);
            self.queued = 0;
            let () = pipe.query_async(conn).await.expect(what);
        }
    }
}

fn namespace_of(table: &Table) -> String {
    // The counter key is `<ns>:seq`; the band key `<ns>:bands:..` gives the ns.
    let key = table.band_entries(0).next().unwrap_or_default().0;
    key.rsplitn(4, ':').last().unwrap_or_default().to_string()
}

/// Total `MEMORY USAGE` and count of the keys matching `pattern`.
async fn memory_of(store: &Store, conn: &mut MultiplexedConnection, pattern: &str) -> (u64, usize) {
    let keys = store.keys_matching(pattern).await.expect("SCAN");
    let mut total = 0u64;
    for chunk in keys.chunks(2000) {
        let mut pipe = redis::pipe();
        for k in chunk {
            pipe.cmd("MEMORY").arg("USAGE").arg(k).arg("SAMPLES").arg(0);
        }
        let sizes: Vec<Option<u64>> = pipe.query_async(conn).await.expect("MEMORY USAGE");
        total += sizes.into_iter().flatten().sum::<u64>();
    }
    (total, keys.len())
}

/// The `OBJECT ENCODING`s of a sample of the keys matching `pattern` (the
/// first 500 found), with their counts.
async fn encodings(store: &Store, conn: &mut MultiplexedConnection, pattern: &str) -> String {
    let mut keys = store.keys_matching(pattern).await.expect("SCAN");
    keys.truncate(500);
    let mut count: HashMap<String, usize> = HashMap::new();
    for chunk in keys.chunks(2000) {
        let mut pipe = redis::pipe();
        for k in chunk {
            pipe.cmd("OBJECT").arg("ENCODING").arg(k);
        }
        let encs: Vec<Option<String>> = pipe.query_async(conn).await.expect("OBJECT ENCODING");
        for e in encs.into_iter().flatten() {
            *count.entry(e).or_default() += 1;
        }
    }
    let mut v: Vec<_> = count.into_iter().collect();
    v.sort();
    v.iter()
        .map(|(e, n)| format!("{n} {e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn report_memory(
    store: &Store,
    conn: &mut MultiplexedConnection,
    ns: &str,
    fps: u64,
    baseline: i64,
) {
    let (band, nb) = memory_of(store, conn, &format!("{ns}:bands:*")).await;
    let (seq, ns_) = memory_of(store, conn, &format!("{ns}:fpr:*")).await;
    let (lsh, nl) = memory_of(store, conn, &format!("{ns}:lsh:*")).await;
    let delta = store.used_memory().await.expect("INFO memory") - baseline;
    let per = |b: u64| b as f64 / fps as f64;
    println!("\n## Redis memory at {fps} fingerprints (MEMORY USAGE of every key, bytes per fingerprint)");
    println!(
        "band tables (hot: read by every lookup): {:.1} B/fp  ({nb} keys; sample encodings: {})",
        per(band),
        encodings(store, conn, &format!("{ns}:bands:0:1*")).await
    );
    println!(
        "fpr records (fingerprint → number, radius, the {SIGNATURE_BYTES}-byte MinHash signature and the URL hash, read for matches): {:.1} B/fp  ({ns_} keys; sample: {})",
        per(seq),
        encodings(store, conn, &format!("{ns}:fpr:1*")).await
    );
    println!(
        "MinHash LSH slots ({BANDS} per document, band value → first fingerprint; the second signal): {:.1} B/fp  ({nl} keys)",
        per(lsh)
    );
    println!(
        "total {:.1} B/fp; band tables + fpr records {:.1} B/fp; the second signal (LSH slots + signatures in fpr, {SIGNATURE_BYTES} B each before overhead) {:.1} B/fp; INFO used_memory delta {:.1} B/fp",
        per(band + seq + lsh),
        per(band + seq),
        per(lsh) + SIGNATURE_BYTES as f64,
        delta as f64 / fps as f64
    );
}

/// Documents/s through [`Table::decide`] with `conns` connections and
/// `batch` documents per pipeline, for about `secs` seconds. A share
/// `short` of the documents are short bodies: radius 5–7, and one more
/// band key read per band.
async fn throughput(
    ns: &str,
    preloaded: u64,
    conns: usize,
    batch: usize,
    secs: u64,
    short: f64,
    run: u64,
) -> (f64, f64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for c in 0..conns {
        let ns = ns.to_string();
        tasks.push(tokio::spawn(async move {
            let store = Store::redis(REDIS_URL).await.expect("redis");
            let layout = Layout::default();
            let table = Table::new(store, &ns, layout.clone());
            // Each run draws new documents: one that drew the documents of an
            // earlier run would measure redeliveries.
            let mut rng = Rng::new(0xC0FFEE + c as u64 * 7919 + batch as u64 + (run << 32));
            let (mut docs, mut dups) = (0usize, 0usize);
            while Instant::now() < deadline {
                let batch_docs: Vec<(Probe, String)> = (0..batch)
                    .map(|i| {
                        let r = rng.next();
                        // One document in five repeats a stored one with 0–3 bits flipped
                        // (and its second signal).
                        let (fp, id) = if r % 5 < 1 && preloaded > 0 {
                            let base = Rng::nth(1, (r >> 8) % preloaded);
                            let mut fp = base;
                            for f in 0..(r >> 4) % 4 {
                                fp ^= 1 << ((r >> (16 + 6 * f)) & 63);
                            }
                            (fp, base)
                        } else {
                            (r, r)
                        };
                        let (sig, lsh) = second_signal(id);
                        let s = rng.next();
                        let probe = if (s % 1000) as f64 / 1000.0 < short {
                            // Its 2 weakest bits: any 2 bits, here.
                            let flips = (1u64 << ((s >> 10) & 63)) | (1 << ((s >> 16) & 63));
                            Probe {
                                radius: 5 + ((s >> 40) % 3) as u32,
                                flips,
                                ..Probe::exact(&layout, fp)
                            }
                        } else {
                            Probe::exact(&layout, fp)
                        };
                        let probe = Probe {
                            signature: Some(sig),
                            lsh: Some(lsh),
                            ..probe
                        };
                        (probe, format!("https://bench.example/{c}/{docs}/{i}"))
                    })
                    .collect();
                let refs: Vec<(Probe, u64)> = batch_docs
                    .iter()
                    .map(|(p, u)| (*p, pipeline::keys::url_hash(u)))
                    .collect();
                let verdicts = table.decide(&refs).await.expect("decide");
                dups += verdicts
                    .iter()
                    .filter(|v| !matches!(v, contentseen::decide::Verdict::Original))
                    .count();
                docs += batch;
            }
            (docs, dups)
        }));
    }
    let start = Instant::now();
    let (mut docs, mut dups) = (0, 0);
    for t in tasks {
        let (d, u) = t.await.expect("task");
        docs += d;
        dups += u;
    }
    let secs = start.elapsed().as_secs_f64();
    (docs as f64 / secs, dups as f64 / docs.max(1) as f64)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bodies = aeb_bodies();
    if std::env::var_os("CONTENTSEEN_BENCH_SKIP_QUALITY").is_none() {
        quality(&bodies);
    }
    speed(&bodies);
    if std::env::var_os("CONTENTSEEN_BENCH_SKIP_REDIS").is_some() {
        return;
    }
    let max: u64 = std::env::var("CONTENTSEEN_BENCH_FPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let client = redis::Client::open(REDIS_URL).expect("redis url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect to Redis at 127.0.0.1:6379");
    // Bulk loads and MEMORY USAGE scans of 10M run long on a busy server.
    conn.set_response_timeout(Duration::from_secs(600));
    // Key scans, INFO and deletion go through the project's store.
    let store = Store::redis(REDIS_URL).await.expect("redis store");
    let run = std::process::id();

    // 3. Throughput over a table of 1M.
    let ns_t = format!("bench-cs-{run}-t");
    let table = Table::new(Store::memory(), &ns_t, Layout::default());
    let t0 = Instant::now();
    let preload = 1_000_000.min(max);
    bulk_load(&mut conn, &table, 1, (0, preload), &mut HashMap::new()).await;
    println!(
        "\n## Protocol through Redis (table preloaded with {preload} fingerprints in {:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    println!("documents/s = documents decided (insert, number, record, look up, resolve) per second, one process");
    println!("CPU per document: Redis's (INFO cpu) and this process's (/proc), in µs; the 2 cores are shared");
    // Short bodies read 6 band keys instead of 4: as many as in the AEB set.
    let layout = Layout::default();
    let reach = Reach::default();
    let aeb_short = bodies
        .iter()
        .filter(|b| {
            let s = contentseen::simhash::sketch(b);
            reach.radius(&layout, s.tokens) > layout.max_distance()
        })
        .count() as f64
        / bodies.len().max(1) as f64;
    println!(
        "short bodies (radius > k, 6 band keys read): {:.0}% of documents, the AEB share, unless said",
        aeb_short * 100.0
    );
    // CONTENTSEEN_BENCH_RUNS=4x256: only the runs named (connections x batch).
    let only = std::env::var("CONTENTSEEN_BENCH_RUNS").ok();
    for (run, (conns, batch, short)) in [
        (1, 64, aeb_short),
        (2, 128, aeb_short),
        (4, 64, aeb_short),
        (4, 256, aeb_short),
        (8, 256, aeb_short),
        (4, 256, 0.0),
        (4, 256, 1.0),
    ]
    .into_iter()
    .enumerate()
    {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|r| r == format!("{conns}x{batch}")))
        {
            continue;
        }
        let stats0 = command_stats(&mut conn).await;
        let redis0 = redis_cpu_secs(&mut conn).await;
        let proc0 = process_cpu_secs();
        let t0 = Instant::now();
        let (rate, dup) = throughput(&ns_t, preload, conns, batch, 4, short, run as u64).await;
        let docs = rate * t0.elapsed().as_secs_f64();
        let redis_us = (redis_cpu_secs(&mut conn).await - redis0) / docs * 1e6;
        let proc_us = (process_cpu_secs() - proc0) / docs * 1e6;
        let mix = if short == aeb_short {
            String::new()
        } else {
            format!(", {:.0}% short", short * 100.0)
        };
        println!(
            "{conns} connection(s) x {batch} documents per pipeline{mix}: {rate:.0} documents/s ({:.0}% duplicates); \
             Redis {redis_us:.1} µs + client {proc_us:.1} µs CPU per document \
             (Redis alone on one core: {:.0} documents/s)",
            dup * 100.0,
            1e6 / redis_us
        );
        let stats = command_stats(&mut conn).await;
        println!("  per document: {}", per_document(&stats0, &stats, docs));
    }
    let n = store
        .delete_matching(&format!("{ns_t}:*"))
        .await
        .expect("delete");
    println!("(deleted {n} keys of {ns_t})");

    if std::env::var_os("CONTENTSEEN_BENCH_SKIP_MEMORY").is_some() {
        return;
    }
    // 4. Memory at 1M and 10M.
    let ns_m = format!("bench-cs-{run}-m");
    let table = Table::new(Store::memory(), &ns_m, Layout::default());
    let baseline = store.used_memory().await.expect("INFO memory");
    let mut loaded = 0;
    let mut lengths = HashMap::new();
    for target in [1_000_000u64, 10_000_000] {
        let target = target.min(max);
        if target <= loaded {
            continue;
        }
        let t0 = Instant::now();
        bulk_load(&mut conn, &table, 2, (loaded, target), &mut lengths).await;
        println!(
            "\n(loaded {} fingerprints in {:.1} s)",
            target - loaded,
            t0.elapsed().as_secs_f64()
        );
        loaded = target;
        report_memory(&store, &mut conn, &ns_m, loaded, baseline).await;
        // The protocol over the bigger table: every band table read is
        // longer (~150 members at 10M against ~15 at 1M).
        let redis0 = redis_cpu_secs(&mut conn).await;
        let stats0 = command_stats(&mut conn).await;
        let t0 = Instant::now();
        let (rate, _) = throughput(&ns_m, loaded, 4, 256, 4, aeb_short, 100 + loaded).await;
        let docs = rate * t0.elapsed().as_secs_f64();
        println!(
            "4 connection(s) x 256 documents per pipeline over {loaded}: {rate:.0} documents/s; Redis {:.1} µs CPU per document",
            (redis_cpu_secs(&mut conn).await - redis0) / docs * 1e6
        );
        println!(
            "  per document: {}",
            per_document(&stats0, &command_stats(&mut conn).await, docs)
        );
    }
    let n = store
        .delete_matching(&format!("{ns_m}:*"))
        .await
        .expect("delete");
    println!("(deleted {n} keys of {ns_m})");
}
