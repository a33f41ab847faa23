//! Redis memory per page, by key kind, for N synthetic pages driven through
//! the real store operations of the four stages (no network, no broker).
//!
//! ```sh
//! cargo bench -p evaluation --bench memory                        # 1M pages, texts in files
//! MEMORY_BENCH_PAGES=10000000 cargo bench -p evaluation --bench memory
//! MEMORY_BENCH_TEXTS=redis MEMORY_BENCH_PAGES=51000 MEMORY_BENCH_HOSTS=50 cargo bench -p evaluation --bench memory
//! # the namespace expects MEMORY_BENCH_PAGES pages unless MEMORY_BENCH_EXPECTED_PAGES says
//! ```
//!
//! It starts its own `redis-server` (on a free port, nothing saved, the
//! settings the README recommends, `pipeline::store::RECOMMENDED_REDIS_CONFIG`,
//! unless `MEMORY_BENCH_REDIS_ARGS` gives others), then for each batch of pages:
//! - the frontier: the pages' URLs as one batch of links through
//!   `FrontierStage::handle` (normalize, admit, queue), then the releaser
//!   takes and confirms the tasks (`frontier::release`);
//! - the fetcher: the record of each fetch (`FetcherStage::record`);
//! - the extractor: its once step per page (`pipeline::once`);
//! - contentseen: the batch's fingerprints through the race-free protocol
//!   (`Table::insert` and `record_and_decide`), each document's full JSON
//!   into a text segment (or its record), its place under its original and
//!   its record with its counter (`DOC_STORE`).
//!
//! The pages: news-like URLs (about 80 bytes) on 20,000 hosts
//! (`MEMORY_BENCH_HOSTS`), titles of
//! about 60 characters, an author and a date, and a body of 250 words; one
//! page in ten a near-duplicate of an earlier one (3 words changed). It
//! prints the table of `evaluation::memory` (bytes per page by key kind,
//! and `used_memory`), the pages per second, and the text files' bytes per
//! page beside the zstd-compressed JSON lines of the same documents.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use contentseen::bands::Layout;
use contentseen::reach::Reach;
use contentseen::simhash::sketch;
use contentseen::table::Table;
use evaluation::rng::{rng, EvalRng, RngExt};
use pipeline::documents::{duplicate_op, inline, Body, DocRecord};
use pipeline::keys::{url_hash, Keys};
use pipeline::messages::{FetchRecord, FetchTask, UrlBatch, VERSION};
use pipeline::once::{once, EXTRACT_IDS};
use pipeline::worker::Stage;
use pipeline::{CrawlSpec, Link, Store, StoredDocument};

const NS: &str = "mem";
/// Hosts of the synthetic pages, unless `MEMORY_BENCH_HOSTS` says.
const HOSTS: u64 = 20_000;

fn hosts() -> u64 {
    match evaluation::bins::env_usize("MEMORY_BENCH_HOSTS", HOSTS as usize) {
        0 => HOSTS,
        n => n as u64,
    }
}
const BATCH: usize = 500;

fn start_redis() -> evaluation::own_redis::OwnRedis {
    let args = std::env::var("MEMORY_BENCH_REDIS_ARGS")
        .unwrap_or_else(|_| pipeline::store::RECOMMENDED_REDIS_CONFIG.join(" "));
    eprintln!("redis-server settings: {args}");
    evaluation::own_redis::OwnRedis::start(&args.split_whitespace().collect::<Vec<_>>())
        .expect("the bench's redis-server")
}

/// Words for the synthetic texts: 4,000 made-up ones, picked by a skewed
/// distribution as real words are.
fn vocabulary(rng: &mut EvalRng) -> Vec<String> {
    const SYL: [&str; 24] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vi", "da", "po", "gen", "tor", "lan", "mer",
        "dis", "pal", "ber", "fon", "gra", "hul", "jex", "kro", "quin", "wys",
    ];
    (0..4000)
        .map(|_| {
            let n = 1 + rng.random_range(0..3) as usize;
            (0..=n)
                .map(|_| SYL[rng.random_range(0..SYL.len() as u64) as usize])
                .collect()
        })
        .collect()
}

fn words(rng: &mut EvalRng, vocab: &[String], n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            // Skewed: squares of uniform draws favour the first words.
            let r = rng.random_range(0..1 << 16) as f64 / 65536.0;
            vocab[((r * r) * vocab.len() as f64) as usize].clone()
        })
        .collect()
}

/// One synthetic page.
struct Synth {
    url: String,
    title: String,
    author: String,
    text: String,
}

fn page(i: u64, hosts: u64, rng: &mut EvalRng, vocab: &[String], earlier: &[String]) -> Synth {
    let host = i % hosts;
    let slug = words(rng, vocab, 7).join("-");
    let url = format!(
        "https://www.news-site-{host}.example/2026/{:02}/{:02}/{slug}-{i}.html",
        1 + i % 12,
        1 + i % 28
    );
    let title = words(rng, vocab, 9).join(" ");
    let author = format!("{} {}", words(rng, vocab, 1)[0], words(rng, vocab, 1)[0]);
    let text = if i % 10 == 9 && !earlier.is_empty() {
        // A near-duplicate: an earlier body with three words changed.
        let base = &earlier[rng.random_range(0..earlier.len() as u64) as usize];
        let mut w: Vec<String> = base.split(' ').map(str::to_string).collect();
        for _ in 0..3 {
            let at = rng.random_range(0..w.len() as u64) as usize;
            w[at] = words(rng, vocab, 1)[0].clone();
        }
        w.join(" ")
    } else {
        words(rng, vocab, 250).join(" ")
    };
    Synth {
        url,
        title,
        author,
        text,
    }
}

fn main() {
    let pages = evaluation::bins::env_usize("MEMORY_BENCH_PAGES", 1_000_000) as u64;
    let in_files = std::env::var("MEMORY_BENCH_TEXTS").as_deref() != Ok("redis");
    let runtime = evaluation::bins::runtime(2);
    let redis = start_redis();
    runtime.block_on(run(&redis.url, pages, in_files));
}

async fn run(url: &str, pages: u64, in_files: bool) {
    let store = Store::redis(url).await.expect("bench redis");
    // The namespace expects the bench's pages (`pipeline::scale`), as a
    // crawl run with `--expected-pages N` would.
    // (`MEMORY_BENCH_EXPECTED_PAGES` sets another: a crawl that did not
    // say how large it would be has the default's,
    // `pipeline::scale::DEFAULT_EXPECTED_PAGES`.)
    let expected =
        evaluation::bins::env_usize("MEMORY_BENCH_EXPECTED_PAGES", pages as usize) as u64;
    let keys = pipeline::scale::Scale::settle(&store, Keys::new(NS), expected)
        .await
        .expect("the namespace's scale");
    let scale = keys.scale();
    eprintln!("scale: {}", scale.encode());
    // Packs the document records as contentseen does (its dictionary
    // trained on the records written).
    let records = pipeline::documents::Documents::new(store.clone(), NS, None);
    let mut record_bytes = 0u64;
    let text_dir = std::env::temp_dir().join(format!("memory-bench-texts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&text_dir);
    let texts = if in_files {
        Some(
            contentseen::texts::open(&store, NS, &text_dir)
                .await
                .expect("text writer"),
        )
    } else {
        None
    };
    let frontier = frontier::FrontierStage::new(store.clone(), NS).with_scale(scale);
    let client =
        fetcher::http::Client::new(fetcher::http::FetchSettings::default()).expect("http client");
    let fetcher = fetcher::FetcherStage::new(store.clone(), NS, client);
    let table = Table::new(store.clone(), NS, Layout::default()).with_scale(scale);
    let reach = Reach::default();
    let crawl = CrawlSpec {
        name: "bench".into(),
        max_depth: 10,
        delay_ms: 0,
        allow_domains: vec!["example".into()],
        ..CrawlSpec::default()
    };
    let spec = crawl;
    let crawl = pipeline::crawls::register(&store, &keys, &spec)
        .await
        .expect("storing the crawl's settings");
    let release = frontier::release::ReleaseSettings {
        hosts_per_shard: 4096,
        burst: 64,
        ..Default::default()
    };
    let used_before = store.used_memory().await.unwrap_or(0);
    let hosts = hosts();
    let mut rng = rng(7, 0);
    let vocab = vocabulary(&mut rng);
    let mut earlier: Vec<String> = Vec::new();
    let mut json_bytes = 0u64;
    // Every 997th original page: what the query timing asks for.
    let mut sample: Vec<String> = Vec::new();
    let started = Instant::now();
    let mut done = 0u64;
    while done < pages {
        let n = BATCH.min((pages - done) as usize);
        let batch: Vec<Synth> = (done..done + n as u64)
            .map(|i| page(i, hosts, &mut rng, &vocab, &earlier))
            .collect();
        for p in batch.iter().take(4) {
            if earlier.len() < 2000 {
                earlier.push(p.text.clone());
            } else {
                let at = rng.random_range(0..earlier.len() as u64) as usize;
                earlier[at] = p.text.clone();
            }
        }
        // The frontier: the batch's URLs as one page's links, admitted and
        // queued; then released to the fetchers and confirmed.
        let links: Vec<Link> = batch.iter().map(|p| Link::new(p.url.clone())).collect();
        let b = UrlBatch {
            id: format!("batch-{done}"),
            source: Some(format!("https://www.news-site-0.example/front-{done}")),
            ..UrlBatch::new(&crawl, 1, links)
        };
        frontier.handle(b).await.expect("frontier");
        loop {
            let taken = frontier::release::take_due(&store, &keys, &release)
                .await
                .expect("take");
            if taken.is_empty() {
                break;
            }
            frontier::release::confirm(&store, &keys, &taken)
                .await
                .expect("confirm");
        }
        // The fetcher's and the extractor's records.
        let now = pipeline::messages::now_rfc3339();
        let mut ops = Vec::with_capacity(2 * n);
        for p in &batch {
            let task = FetchTask {
                v: VERSION,
                crawl: crawl.clone(),
                url: p.url.clone(),
                depth: 1,
                redirects: 0,
                attempt: 0,
                recrawl: false,
                id: FetchTask::derive_id(&["bench", &p.url]),
            };
            ops.push(fetcher.record(
                &task,
                &FetchRecord {
                    url: p.url.clone(),
                    outcome: "ok".into(),
                    http_status: Some(200),
                    final_url: None,
                    reason: None,
                    encoding: Some("UTF-8".into()),
                    fetched_at: now.clone(),
                    attempt: 0,
                    bytes: Some(30_000),
                    will_retry: false,
                },
            ));
            ops.push(once(
                &keys,
                url_hash(&p.url),
                EXTRACT_IDS,
                &task.id,
                None,
                pipeline::crawls::counts(&crawl.name, &[("extracted", 1)]),
            ));
        }
        store.exec(&ops).await.expect("records");
        // contentseen: the batch through the protocol, then each document.
        let sketches: Vec<_> = batch.iter().map(|p| sketch(&p.text)).collect();
        let docs: Vec<(contentseen::reach::Probe, u64)> = batch
            .iter()
            .zip(&sketches)
            .filter_map(|(p, s)| Some((reach.probe(table.layout(), s)?, url_hash(&p.url))))
            .collect();
        let probes: Vec<_> = docs.iter().map(|d| d.0).collect();
        let (_, inserted) = table.insert(Vec::new(), &probes).await.expect("insert");
        let verdicts = table
            .record_and_decide(&docs, &inserted)
            .await
            .expect("decide");
        let mut first = Vec::new();
        let mut then = Vec::new();
        let mut lines = Vec::with_capacity(n);
        for ((p, s), v) in batch.iter().zip(&sketches).zip(&verdicts) {
            let me = url_hash(&p.url);
            let of = v.original();
            let stored = StoredDocument {
                url: p.url.clone(),
                final_url: p.url.clone(),
                status: 200,
                encoding: "UTF-8".into(),
                title: Some(p.title.clone()),
                published: Some("2026-11-27T08:00:00+01:00".into()),
                author: Some(p.author.clone()),
                authors: vec![p.author.clone()],
                text: if of.is_some() {
                    String::new()
                } else {
                    p.text.clone()
                },
                simhash: format!("{:016x}", s.fingerprint.value()),
                duplicate_of: of.map(|_| "https://www.news-site-1.example/2026/01/01/an-original-page-of-the-same-kind-1.html".into()),
                distance: of.map(|_| 1),
                fetched_at: now.clone(),
                crawl: crawl.name.clone(),
                depth: 1,
                lang: Some("en".into()),
                site_name: None,
                images: Vec::new(),
                changed_at: None,
                unchanged: 0,
                article: true,
                tokens: s.tokens as u32,
                radius: of.map(|_| 3),
                jaccard: of.map(|_| 0.9),
                charset_override: None,
                warc_record_id: None,
            };
            let json = serde_json::to_vec(&stored).expect("json");
            json_bytes += json.len() as u64 + 1;
            if let Some(of) = of {
                first.push(duplicate_op(&keys, of, me));
            } else if (done + lines.len() as u64).is_multiple_of(997) {
                sample.push(p.url.clone());
            }
            lines.push((me, of, stored, json));
        }
        let bodies: Vec<Body> = match &texts {
            Some(w) => {
                let appends = lines.iter().map(|(_, _, _, json)| w.append(json.clone()));
                futures_util::future::try_join_all(appends)
                    .await
                    .expect("texts")
                    .into_iter()
                    .map(Body::File)
                    .collect()
            }
            None => lines.iter().map(|(_, _, _, json)| inline(json)).collect(),
        };
        for ((me, of, stored, _), body) in lines.iter().zip(bodies) {
            let record = DocRecord::of(stored, *of, body);
            let packed = records.pack(&record).await.expect("a record");
            record_bytes += packed.len() as u64;
            let counter = if of.is_some() { "duplicate" } else { "stored" };
            then.push(contentseen::stage::doc_store(
                &keys,
                *me,
                packed,
                pipeline::crawls::counts(&crawl.name, &[(counter, 1)]),
            ));
        }
        store.exec(&first).await.expect("duplicates");
        store.exec(&then).await.expect("documents");
        done += n as u64;
        if done % 100_000 < BATCH as u64 {
            eprintln!(
                "{done} pages, {:.0} pages/s, used_memory {:.0} B/page",
                done as f64 / started.elapsed().as_secs_f64(),
                (store.used_memory().await.unwrap_or(0) - used_before) as f64 / done as f64
            );
        }
    }
    let secs = started.elapsed().as_secs_f64();
    drop(texts);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let used = store.used_memory().await.unwrap_or(0) - used_before;
    let kinds = evaluation::memory::by_kind(url, NS)
        .await
        .expect("memory by kind");
    let counters = pipeline::crawls::read_counters(&store, &keys)
        .await
        .expect("counters");
    println!(
        "memory bench: {pages} pages, texts in {}, {secs:.0} s ({:.0} pages/s); stored {}, duplicate {}, seen {}",
        if in_files { "files" } else { "redis" },
        pages as f64 / secs,
        counters.get("stored"),
        counters.get("duplicate"),
        counters.get("seen")
    );
    println!("{}", evaluation::memory::table(&kinds, pages, Some(used)));
    println!(
        "document records as stored (packed with the crawl's dictionary): {:.1} B/page",
        record_bytes as f64 / pages as f64
    );
    if in_files {
        let files: u64 = std::fs::read_dir(texts::folder(&text_dir, NS))
            .map(|d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        let whole = zstd_whole(&text_dir);
        println!(
            "text files: {files} bytes, {:.0} B/page; the same JSON lines ({json_bytes} bytes) as one zstd file: {whole} bytes ({:.2}x)",
            files as f64 / pages as f64,
            files as f64 / whole.max(1) as f64
        );
    }
    query_times(&store, &sample, in_files.then_some(text_dir.as_path()), url).await;
    let _ = std::fs::remove_dir_all(&text_dir);
}

/// How long `crawler query URL` takes at this size: the lookup it makes
/// (`Documents::document`: the record, then its text from its segment
/// frame), in process, over the sampled pages; then the `crawler` binary
/// itself (process start included) on a few, when it is built.
async fn query_times(
    store: &Store,
    sample: &[String],
    text_dir: Option<&std::path::Path>,
    url: &str,
) {
    let docs = pipeline::documents::Documents::new(store.clone(), NS, text_dir);
    let mut times = Vec::with_capacity(sample.len());
    for u in sample {
        let t = Instant::now();
        let doc = docs.document(u).await.expect("query");
        times.push(t.elapsed());
        assert!(doc.is_some_and(|d| !d.text.is_empty()), "{u}: no document");
    }
    times.sort();
    if let (Some(median), Some(worst)) = (times.get(times.len() / 2), times.last()) {
        println!(
            "query (record + text, in process): {} pages, median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            times.len(),
            median.as_secs_f64() * 1e3,
            times[times.len() * 99 / 100].as_secs_f64() * 1e3,
            worst.as_secs_f64() * 1e3
        );
    }
    let bin = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("release/crawler");
    if !bin.exists() {
        println!("query (crawler binary): not built (cargo build --release -p crawler)");
        return;
    }
    let mut times = Vec::new();
    for u in sample.iter().take(21) {
        let mut cmd = Command::new(&bin);
        cmd.args(["query", u])
            .env("CRAWLER_REDIS_URL", url)
            .env("CRAWLER_NAMESPACE", NS)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(dir) = text_dir {
            cmd.env("CRAWLER_TEXT_DIR", dir);
        }
        let t = Instant::now();
        let ok = cmd.status().map(|s| s.success()).unwrap_or(false);
        times.push(t.elapsed());
        assert!(ok, "crawler query {u} failed");
    }
    times.sort();
    if let Some(median) = times.get(times.len() / 2) {
        println!(
            "query (crawler query URL, process start included): median {:.1} ms of {}",
            median.as_secs_f64() * 1e3,
            times.len()
        );
    }
}

/// The bytes of the segments' lines compressed as one zstd file (level 3,
/// as `zstd` writes it): what the files are compared with.
fn zstd_whole(text_dir: &std::path::Path) -> u64 {
    let folder = texts::folder(text_dir, NS);
    let mut enc = zstd::stream::Encoder::new(Counter(0), 3).expect("zstd");
    let mut names: Vec<_> = std::fs::read_dir(&folder)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    names.sort();
    for path in names {
        if let Ok(bytes) = std::fs::read(&path) {
            if let Ok(plain) = zstd::stream::decode_all(bytes.as_slice()) {
                enc.write_all(&plain).expect("zstd");
            }
        }
    }
    enc.finish().map(|c| c.0).unwrap_or(0)
}

/// Counts the bytes written to it.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
