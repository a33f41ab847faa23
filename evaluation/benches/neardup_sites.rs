//! `scripts/neardup-sites.sh` (or, with the labels made and the release
//! binaries built, `cargo bench -p evaluation --bench neardup_sites`): the
//! near-duplicate evaluation on real sites (issue 31,
//! `evaluation::neardup_sites`).
//!
//! Serves every site of `evaluation/neardup_sites/sites.tsv` and a
//! byte-identical mirror of it on loopback hosts, seeds every page of both
//! copies in a seeded random order, and crawls them twice: with `crawler
//! run` (every stage in one process) and with the four release worker
//! binaries over the real RabbitMQ and Redis (a fresh namespace, deleted at
//! the end). Each crawl's verdicts are scored against the labels: per site
//! and per kind, tuned beside held aside.
//!
//! Env: `NEARDUP_SITES_LABELS` (default `target/neardup-sites/labels.jsonl`),
//! `NEARDUP_SITES_ONLY=site,site`, `NEARDUP_SITES_SKIP_RUN=1`,
//! `NEARDUP_SITES_SKIP_DISTRIBUTED=1`, `NEARDUP_SITES_SEED` (2026),
//! `NEARDUP_SITES_KEEP=1` (keep the work folder: logs, seeds, the stored
//! documents of each mode),
//! `NEARDUP_SITES_CONFUSIONS=FILE` (the tuned part's wrong and unscored
//! verdicts, its pages labelled articles that came out no article and its
//! pairs not found, one per line), `NEARDUP_SITES_BIN_DIR=DIR` (crawl with the
//! binaries in DIR: another build, to compare), `CRAWLER_AMQP_URL`,
//! `CRAWLER_REDIS_URL`.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use evaluation::bins::WORKERS;
use evaluation::neardup_sites::labels::{self, Label};
use evaluation::neardup_sites::score::{report, score, Scores};
use evaluation::neardup_sites::sites::{pages, read_sites, table_path, Page, SiteServer};
use evaluation::neardup_sites::FOUND_AT;
use evaluation::rng::rng;
use pipeline::StoredDocument;
use rand::seq::SliceRandom;

/// The crawl both modes run: exactly the seeded pages, no politeness delay.
const CRAWL: [&str; 6] = ["--crawl", "sites", "--max-depth", "0", "--delay-ms", "0"];

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

struct Env {
    bins: evaluation::bins::Bins,
    seeds: PathBuf,
}

impl std::ops::Deref for Env {
    type Target = evaluation::bins::Bins;
    fn deref(&self) -> &Self::Target {
        &self.bins
    }
}

/// The stored documents of a JSON-lines file.
fn read_docs(path: &Path) -> Result<Vec<StoredDocument>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", path.display())))
        .collect()
}

/// `crawler run` over the seeds: its stored documents.
fn local_run(env: &Env) -> Result<Vec<StoredDocument>, String> {
    let (mut run, out) = env.crawler_run("unused", &CRAWL);
    run.arg("--file").arg(&env.seeds);
    env.run_crawler(run, "run", 15)?;
    read_docs(&out)
}

/// The four workers over RabbitMQ and Redis in namespace `ns`: seeded,
/// waited for until idle, exported.
fn distributed_in(env: &Env, ns: &str) -> Result<Vec<StoredDocument>, String> {
    let mut children: Vec<Child> = Vec::new();
    for name in WORKERS {
        children.push(env.start(env.command(name, ns), name)?);
    }
    let result = (|| {
        let ready_by = Instant::now() + Duration::from_secs(60);
        loop {
            if env.attached(ns) == WORKERS.len() {
                break;
            }
            if Instant::now() > ready_by {
                return Err("the workers did not attach to their queues in 60 s".to_string());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let mut seed = env.command("crawler", ns);
        seed.arg("seed").args(CRAWL).arg("--file").arg(&env.seeds);
        env.run_crawler(seed, "seed", 15)?;
        env.stats_json(ns, &["--wait-idle", "--timeout-secs", "1800"])?;
        let out = env.work.join("distributed.jsonl");
        let mut export = env.command("crawler", ns);
        export.arg("export").arg("--out").arg(&out);
        env.run_crawler(export, "export", 15)?;
        read_docs(&out)
    })();
    evaluation::bins::stop(&mut children);
    result
}

fn distributed(env: &Env, rt: &tokio::runtime::Runtime) -> Result<Vec<StoredDocument>, String> {
    let ns = format!("neardup-sites-{}", std::process::id());
    let result = distributed_in(env, &ns);
    rt.block_on(async {
        if let Ok(session) = pipeline::Broker::amqp(&env.amqp_url, &ns).open().await {
            if let Err(e) = session.delete_topology().await {
                eprintln!("could not delete the queues of {ns}: {e}");
            }
        }
        match pipeline::Store::redis(&env.redis_url).await {
            Ok(store) => {
                if let Err(e) = store.delete_matching(&format!("{ns}:*")).await {
                    eprintln!("could not delete the keys of {ns}: {e}");
                }
            }
            Err(e) => eprintln!("could not delete the keys of {ns}: {e}"),
        }
    });
    result
}

/// Prints a crawl's report, writes its tuned confusions, and returns its
/// verdicts by URL (to compare the two modes).
fn judge(
    label: &str,
    docs: &[StoredDocument],
    scored: impl Fn(&[StoredDocument]) -> Scores,
) -> Scores {
    let s = scored(docs);
    print!("{}", report(label, &s));
    // The estimates of the tuned verdicts, by exact Jaccard band: what the
    // threshold is set from.
    let mut bands: std::collections::BTreeMap<u32, (usize, f64, f32, f32)> = Default::default();
    for &(exact, est, _) in &s.tuned_estimates {
        let b = bands
            .entry((exact * 10.0).floor().min(9.0) as u32)
            .or_insert((0, 0.0, f32::MAX, 0.0));
        b.0 += 1;
        b.1 += f64::from(est);
        b.2 = b.2.min(est);
        b.3 = b.3.max(est);
    }
    println!("\n{label}: the crawler's Jaccard estimate of its tuned verdicts by exact Jaccard (count, mean, min, max):");
    for (b, (n, sum, lo, hi)) in bands {
        println!(
            "  exact {:.1}–{:.1}: {n} verdicts, estimate mean {:.3}, min {lo:.3}, max {hi:.3}",
            f64::from(b) / 10.0,
            f64::from(b + 1) / 10.0,
            sum / n as f64
        );
    }
    if let Ok(file) = std::env::var("NEARDUP_SITES_CONFUSIONS") {
        let mut text = String::new();
        for c in &s.tuned_confusions {
            text.push_str(&format!(
                "{label}\t{}\texact {:.3}\testimate {:?}\tdistance {:?}\tradius {:?}\ttokens {}\t{}\t{}\n",
                c.kind.name(),
                c.exact,
                c.estimate,
                c.distance,
                c.radius,
                c.tokens,
                c.duplicate,
                c.original
            ));
        }
        for m in &s.tuned_misses {
            text.push_str(&format!("{label}\t{m}\n"));
        }
        let path = format!("{file}.{}", label.replace(' ', "-"));
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("{path}: {e}");
        }
    }
    s
}

fn main() {
    let started = Instant::now();
    let only: Vec<String> = std::env::var("NEARDUP_SITES_ONLY")
        .map(|s| s.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let sites = read_sites(&table_path(), &evaluation::sources::bench_dir(), &only)
        .unwrap_or_else(|e| panic!("{e}"));
    let (all_pages, odd) = pages(&sites).unwrap_or_else(|e| panic!("{e}"));
    let labels_path = labels::default_path();
    let by_key = labels::read(&labels_path).unwrap_or_else(|e| panic!("{e}"));
    // The pages of the evaluation are the labelled ones (label.py samples
    // the largest sites).
    let (pages, labels): (Vec<Page>, Vec<Label>) = all_pages
        .iter()
        .filter_map(|p| {
            let label = by_key.get(&(sites[p.site].name.clone(), p.path.clone()))?;
            Some((p.clone(), label.clone()))
        })
        .unzip();
    assert!(
        !pages.is_empty(),
        "no page has a label in {}: run scripts/neardup-sites.sh (NEARDUP_SITES_RELABEL=1)",
        labels_path.display()
    );
    assert!(
        labels.iter().all(|l| l.alt_shingles.is_some()),
        "labels without a second opinion (text_alt): made by an older label.py; run scripts/neardup-sites.sh (NEARDUP_SITES_RELABEL=1)"
    );
    let sets: Vec<&[u64]> = labels.iter().map(|l| l.shingles.as_slice()).collect();
    let (near, vetoed): (Vec<(usize, usize, f64)>, Vec<_>) =
        labels::pairs_at_least(&sets, FOUND_AT)
            .into_iter()
            .filter(|&(i, j, _)| i != j)
            .partition(|&(i, j, _)| !labels[i].second_opinion_distinct(&labels[j]));
    println!("# Near-duplicate verdicts on real sites (issue 31)\n");
    println!(
        "{} pairs of other pages at J ≥ {FOUND_AT} by the labels' text; {} of them not to find: the second extractor's texts are distinct (J < {})",
        near.len() + vetoed.len(),
        vetoed.len(),
        evaluation::neardup_sites::DISTINCT_BELOW
    );
    for (i, site) in sites.iter().enumerate() {
        let mine: Vec<usize> = (0..pages.len()).filter(|&p| pages[p].site == i).collect();
        println!(
            "- {}: {} pages ({} held aside{}), {} listings by the labels, {} pairs of other pages at J ≥ {FOUND_AT} ({} more vetoed); {}",
            site.name,
            mine.len(),
            mine.iter().filter(|&&p| pages[p].held_aside).count(),
            if site.held_aside { ": the whole site" } else { "" },
            mine.iter().filter(|&&p| labels[p].is_listing()).count(),
            near.iter().filter(|&&(a, _, _)| pages[a].site == i).count(),
            vetoed.iter().filter(|&&(a, _, _)| pages[a].site == i).count(),
            site.root.display()
        );
    }
    println!(
        "{} pages, each on its site's host and its mirror ({} files of the sites not labelled: sampled out; {odd} left out: paths that need percent-encoding)",
        pages.len(),
        all_pages.len() - pages.len()
    );

    let bins = evaluation::bins::release_dir("NEARDUP_SITES_BIN_DIR");
    if let Some(missing) = evaluation::bins::missing(&bins, "scripts/neardup-sites.sh") {
        panic!("{missing}");
    }
    let work = evaluation::bins::work_dir("neardup-sites");
    let rt = evaluation::bins::runtime(2);
    let server = rt
        .block_on(SiteServer::start(sites.len(), &pages))
        .unwrap_or_else(|e| panic!("serving the sites: {e}"));
    let seed: u64 = std::env::var("NEARDUP_SITES_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2026);
    let mut seeds: Vec<String> = pages
        .iter()
        .flat_map(|p| [false, true].map(|m| server.url(p.site, m, &p.path)))
        .collect();
    seeds.shuffle(&mut rng(seed, 31));
    let seeds_path = work.join("seeds.txt");
    std::fs::write(&seeds_path, seeds.join("\n")).expect("seeds file");
    let env = Env {
        bins: evaluation::bins::Bins::from_env(bins, work.clone()),
        seeds: seeds_path,
    };
    let scored = |docs: &[StoredDocument]| score(&sites, &pages, &labels, &near, docs);
    let mut failed = false;
    let mut totals = Vec::new();
    let run_local = || local_run(&env);
    let run_workers = || distributed(&env, &rt);
    type Mode<'a> = (
        &'a str,
        &'a str,
        &'a dyn Fn() -> Result<Vec<StoredDocument>, String>,
    );
    let modes: [Mode; 2] = [
        ("crawler run", "NEARDUP_SITES_SKIP_RUN", &run_local),
        ("workers", "NEARDUP_SITES_SKIP_DISTRIBUTED", &run_workers),
    ];
    for (label, skip, run) in modes {
        if env_flag(skip) {
            continue;
        }
        let t = Instant::now();
        match run() {
            Ok(docs) => {
                println!(
                    "\n{label}: {} documents in {:.1} s",
                    docs.len(),
                    t.elapsed().as_secs_f64()
                );
                totals.push((label, judge(label, &docs, scored).total));
            }
            Err(e) => {
                failed = true;
                println!("{label} FAILED: {e}");
            }
        }
    }
    println!("\n## Summary (tuned | held aside)\n");
    for (label, [t, h]) in &totals {
        println!(
            "{label}: precision {:.4} | {:.4}, recall {:.4} | {:.4}, J<0.3 marked {} | {}, distance 0 under J 0.8 {} | {}, listing pages matched {} | {}, pages reached {}/{} | {}/{}",
            t.precision(),
            h.precision(),
            t.recall(),
            h.recall(),
            t.wrong_below_03,
            h.wrong_below_03,
            t.distance0_below_08,
            h.distance0_below_08,
            t.listing_matched,
            h.listing_matched,
            t.reached,
            t.pages,
            h.reached,
            h.pages
        );
    }
    println!("({:.0} s)", started.elapsed().as_secs_f64());
    drop(server);
    if failed || env_flag("NEARDUP_SITES_KEEP") {
        println!("logs and stored documents kept in {}", work.display());
    }
    if failed {
        std::process::exit(1);
    }
    if env_flag("NEARDUP_SITES_KEEP") {
        return;
    }
    let _ = std::fs::remove_dir_all(&work);
}
