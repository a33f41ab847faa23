//! WARC output: the test site crawled with `crawler run --warc-dir`, and by
//! the four worker binaries with `CRAWLER_WARC_DIR` (fetcher and
//! contentseen) over the real RabbitMQ and Redis; then every file is read
//! by a reader this project did not write (`scripts/warcio-check.sh`:
//! Python's warcio in a throwaway virtualenv) and every revisit record is
//! replayed to its original's payload. One response record per original,
//! one revisit per near-duplicate, a request and a metadata record per
//! page. The workers' crawl ends with contentseen killed (`kill -9`) while
//! its file is open; the next contentseen recovers the file.
//!
//! Needs python3 (with venv) and the package index for `pip install
//! warcio`: without them the test fails, it does not skip.

use std::path::{Path, PathBuf};
use std::process::Command;

use crawler_tests::TestEnv;
use pipeline::StoredDocument;
use testsite::{serve, Site, SiteConfig};

/// What `scripts/warcio-check.sh DIR --replay` counted; panics with its
/// output when it failed.
fn warcio_check(dir: &Path) -> serde_json::Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/warcio-check.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg(dir)
        .arg("--replay")
        .output()
        .expect("running scripts/warcio-check.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "warcio-check.sh {} failed:\n{stdout}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("summary line {last:?}: {e}"))
}

/// The record counts must match what the crawl stored.
fn check_counts(summary: &serde_json::Value, docs: &[StoredDocument], what: &str) {
    let n = |k: &str| {
        summary[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k} in {summary}")) as usize
    };
    let originals = docs.iter().filter(|d| d.duplicate_of.is_none()).count();
    let duplicates = docs.len() - originals;
    assert!(duplicates > 0, "{what}: the site has near-duplicates");
    assert_eq!(
        n("response"),
        originals,
        "{what}: one response per original"
    );
    assert_eq!(
        n("revisit"),
        duplicates,
        "{what}: one revisit per near-duplicate"
    );
    assert_eq!(n("replayed"), duplicates, "{what}: every revisit replayed");
    assert_eq!(n("request"), docs.len(), "{what}: one request per page");
    assert_eq!(
        n("metadata"),
        docs.len(),
        "{what}: one metadata record per page"
    );
    assert_eq!(
        n("warcinfo"),
        n("files"),
        "{what}: a warcinfo record per file"
    );
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "crawler-warc-{name}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_crawls_write_warc_files_that_warcio_reads_and_replays() {
    let python = Command::new("python3").arg("--version").output();
    assert!(
        python.is_ok_and(|o| o.status.success()),
        "python3 is needed to check the WARC files with warcio"
    );
    let site = Site::generate(&SiteConfig {
        articles: 40,
        zh_articles: 4,
        ..SiteConfig::default()
    });
    let server = serve(site, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let env = TestEnv::new("warc");

    // In one process: `crawler run --warc-dir`, with a small cap so the
    // files roll.
    let local_dir = fresh_dir("run");
    let out = local_dir.join("crawl.jsonl");
    let warc_dir = local_dir.join("warc");
    let local = env.run_locally(
        &out,
        &[
            "--max-depth",
            "5",
            "--warc-max-bytes",
            "200000",
            "--warc-dir",
            warc_dir.to_str().unwrap(),
            &server.url("/"),
        ],
    );
    let summary = warcio_check(&warc_dir);
    check_counts(&summary, &local, "crawler run");
    assert!(
        summary["files"].as_u64() > Some(1),
        "the 200 kB cap rolls the files: {summary}"
    );

    // The four workers; the fetcher and contentseen write WARC.
    let dir = fresh_dir("workers");
    let dir_s = dir.to_str().unwrap();
    let warc_env = [("CRAWLER_WARC_DIR", dir_s)];
    let mut workers = vec![
        env.start("frontier", &[]),
        env.start_with_env("fetcher", &[], &warc_env),
        env.start("extractor", &[]),
    ];
    let mut contentseen = env.start_with_env("contentseen", &[], &warc_env);
    env.crawl_until_idle("warc", &server.url("/"));
    // Killed with its file open: the file stays `.open`.
    contentseen.kill();
    assert_eq!(
        files_ending(&dir, ".warc.gz.open").len(),
        1,
        "a killed contentseen leaves its file open"
    );
    // The next contentseen takes it over (its writer is dead), and closes
    // its own (none: nothing left to write) on SIGTERM.
    let mut next = env.start_with_env("contentseen", &[], &warc_env);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !files_ending(&dir, ".warc.gz.open").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the .open file of the killed contentseen was not recovered"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(next.terminate().success(), "contentseen exits on SIGTERM");
    let docs = env.export();
    let stats: serde_json::Value =
        serde_json::from_str(env.crawler_ok(&["stats", "--json"]).trim()).unwrap();
    let counter = |k: &str| stats["counters"][k].as_u64().unwrap_or(0) as usize;
    let summary = warcio_check(&dir);
    check_counts(&summary, &docs, "workers");
    assert_eq!(
        summary["revisit"].as_u64(),
        Some(counter("duplicate") as u64)
    );
    assert_eq!(summary["response"].as_u64(), Some(counter("stored") as u64));
    // The stored originals name their response record.
    assert!(docs.iter().filter(|d| d.duplicate_of.is_none()).all(|d| d
        .warc_record_id
        .as_deref()
        .is_some_and(|id| id.starts_with("<urn:uuid:"))));
    workers.clear();
    env.cleanup().await;
    let _ = std::fs::remove_dir_all(&local_dir);
    let _ = std::fs::remove_dir_all(&dir);
}
