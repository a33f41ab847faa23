//! `crawler run --state DIR` killed with `kill -9` ten times at random
//! moments (the seed is printed; `STATE_RESUME_SEED=N` replays it), then
//! run again to the end: every page is stored once, `--out` holds each
//! document once, the counters equal the documents, and the crawl holds
//! the same articles as an uninterrupted in-memory `crawler run` of the
//! same site. Then `crawler query`, `export` and `stats --state DIR` read
//! the state with no service.

use std::collections::{BTreeSet, HashMap};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crawler_tests::{parse_documents, serve_site, succeeded, TestEnv};

/// How many times the crawl is killed.
const KILLS: usize = 10;

/// A tiny deterministic generator (xorshift64*), seeded by the printed seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// The articles among the documents of `jsonl`, by URL without its query
/// (which of `/article/N` and `/article/N?ref=related` is fetched first
/// depends on timing, in any crawl).
fn article_urls(jsonl: &str) -> BTreeSet<String> {
    parse_documents(jsonl)
        .into_iter()
        .map(|d| d.url.split('?').next().unwrap_or_default().to_string())
        .filter(|u| u.contains("/article/"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_killed_ten_times_resumes_and_stores_every_page_once() {
    let seed: u64 = std::env::var("STATE_RESUME_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        })
        | 1;
    println!("STATE_RESUME_SEED={seed}");
    let mut rng = Rng(seed);
    let site = testsite::Site::generate(&testsite::SiteConfig {
        articles: 300,
        zh_articles: 10,
        // A crawl long enough for ten kills in its middle.
        response_delay: Duration::from_millis(5),
        ..testsite::SiteConfig::default()
    });
    let server = serve_site(site).await;
    let env = TestEnv::new("state-resume");
    let dir = env.log_dir().to_path_buf();
    let state = dir.join("state");
    let out = dir.join("crawl.jsonl");
    let seed_url = server.base_url();
    let run_args = |state: Option<&std::path::Path>, out: &std::path::Path| {
        let mut args = vec![
            "run".to_string(),
            "--allow-private".into(),
            "--delay-ms".into(),
            "0".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        if let Some(s) = state {
            args.extend(["--state".to_string(), s.display().to_string()]);
        }
        args.push(seed_url.clone());
        args
    };

    // The reference: the same site crawled in memory, uninterrupted.
    let reference_out = dir.join("reference.jsonl");
    let reference = env
        .command("crawler")
        .args(run_args(None, &reference_out))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("running crawler");
    assert!(reference.success(), "the in-memory reference crawl failed");
    let reference = article_urls(&std::fs::read_to_string(&reference_out).unwrap());
    assert!(
        reference.len() >= 300,
        "reference: {} articles",
        reference.len()
    );

    let mut killed_running = 0;
    for kill in 0..KILLS {
        let mut child = env
            .command("crawler")
            .args(run_args(Some(&state), &out))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting crawler run");
        let after = Duration::from_millis(150 + rng.below(1200));
        tokio::time::sleep(after).await;
        let running = child.try_wait().expect("crawler's status").is_none();
        child.kill().expect("kill -9");
        let _ = child.wait();
        println!(
            "kill {kill}: after {after:?}, crawl {}",
            if running { "running" } else { "already done" }
        );
        killed_running += usize::from(running);
    }
    assert!(
        killed_running >= KILLS / 2,
        "only {killed_running} of {KILLS} kills hit a running crawl: the test checked little"
    );

    let started = Instant::now();
    let last = env
        .command("crawler")
        .args(run_args(Some(&state), &out))
        .stdout(Stdio::null())
        .output()
        .expect("running crawler");
    succeeded(&last, format_args!("the resumed crawl"));
    println!("the last run took {:?}", started.elapsed());

    let written = std::fs::read_to_string(&out).expect("the --out file");
    let docs = parse_documents(&written);
    let mut lines_per_url: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        *lines_per_url.entry(d.url.as_str()).or_default() += 1;
    }
    let twice: Vec<_> = lines_per_url.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "--out holds documents more than once: {twice:?}"
    );
    let resumed = article_urls(&written);
    assert!(
        resumed == reference,
        "the resumed crawl holds other articles than the uninterrupted one: only resumed {:?}, only uninterrupted {:?}",
        resumed.difference(&reference).collect::<Vec<_>>(),
        reference.difference(&resumed).collect::<Vec<_>>()
    );

    // The state read afterwards, with no service.
    let state_arg = state.display().to_string();
    let exported = env.crawler_ok(&["export", "--state", &state_arg]);
    let exported = parse_documents(&exported);
    assert_eq!(exported.len(), docs.len(), "export and --out differ");
    let stats = env.crawler_ok(&["stats", "--json", "--state", &state_arg]);
    let stats: serde_json::Value = serde_json::from_str(stats.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("stats --json: {e}: {stats}"));
    let counter = |name: &str| {
        stats["counters"][name]
            .as_u64()
            .unwrap_or_else(|| panic!("counter {name} in {stats}")) as usize
    };
    assert_eq!(
        counter("stored") + counter("duplicate"),
        docs.len(),
        "the counters do not equal the documents: {stats}"
    );
    let one = docs.iter().find(|d| d.url.contains("/article/")).unwrap();
    let queried = env.crawler_ok(&["query", "--state", &state_arg, &one.url]);
    assert!(queried.contains(&one.url), "query --state: {queried}");
    let _ = std::fs::remove_dir_all(&state);
}
