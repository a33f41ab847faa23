//! No keyspace scan on an operational path: the four workers crawl the
//! test site, and `crawler stats`, `stats --wait-idle`, `crawls`, `query`
//! (a page, its duplicates, why, a text), `export`, `health`, `pause`,
//! `resume` and `cancel` run, all on a Redis of the test's own that holds
//! 200,000 keys of another namespace; Redis's own command statistics then
//! show no `SCAN` and no `KEYS` at all. (`crawler reset` may scan its own
//! namespace: it is not run here.) The same commands' times are printed
//! beside the foreign keys they ignored.

use std::time::{Duration, Instant};

use crawler_tests::services::RedisServer;
use crawler_tests::{TestEnv, AMQP_URL};
use testsite::{Site, SiteConfig};

/// Foreign keys written before the crawl (the CI's shared Redis holds more:
/// `scripts/foreign-keys.sh`).
const FOREIGN: u64 = 200_000;

fn command_calls(redis_url: &str, command: &str) -> u64 {
    let client = redis::Client::open(redis_url).expect("redis url");
    let mut conn = client.get_connection().expect("redis");
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut conn)
        .expect("INFO commandstats");
    info.lines()
        .find(|l| l.starts_with(&format!("cmdstat_{command}:")))
        .and_then(|l| l.split("calls=").nth(1))
        .and_then(|c| c.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_operational_path_scans_the_keyspace() {
    let redis = RedisServer::start().expect("a Redis of the test's own");
    {
        let client = redis::Client::open(redis.url()).expect("redis url");
        let mut conn = client.get_connection().expect("redis");
        let _: () = redis::cmd("EVAL")
            .arg("for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'foreign:' .. i, i) end")
            .arg(0)
            .arg(FOREIGN)
            .query(&mut conn)
            .expect("foreign keys");
    }
    let site = Site::generate(&SiteConfig {
        articles: 20,
        zh_articles: 2,
        ..SiteConfig::default()
    });
    let server = crawler_tests::serve_site(site).await;
    let env = TestEnv::with_services("noscan", AMQP_URL, &redis.url());
    let workers = env.start_all();
    env.crawler_ok(&[
        "seed",
        "--crawl",
        "n",
        "--max-depth",
        "2",
        // The site's 429/500/503 pages back off for minutes; what is
        // measured here is the commands, not the retries.
        "--exclude",
        "/error/",
        "--delay-ms",
        "0",
        &server.url("/"),
    ]);
    let t = Instant::now();
    env.crawler_ok(&["stats", "--wait-idle", "--timeout-secs", "300"]);
    eprintln!("stats --wait-idle: {:?} (the crawl included)", t.elapsed());
    let timed = |args: &[&str]| {
        let t = Instant::now();
        let out = env.crawler(args);
        eprintln!("crawler {args:?}: {:?}", t.elapsed());
        out
    };
    assert!(timed(&["stats", "--json"]).status.success());
    assert!(timed(&["crawls", "--json"]).status.success());
    let article = server.url("/article/1");
    assert!(timed(&["query", &article]).status.success());
    assert!(timed(&["query", "--why", &article]).status.success());
    assert!(timed(&["query", "--duplicates", &article]).status.success());
    assert!(timed(&["export"]).status.success());
    // A query of a text, and the health check of this host.
    let mut q = env.command("crawler");
    let out = q
        .args(["query", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            if let Some(mut i) = c.stdin.take() {
                let _ = i.write_all(b"some words of no page at all");
            }
            c.wait_with_output()
        })
        .expect("crawler query -");
    assert!(out.status.success());
    assert!(timed(&["health"]).status.success());
    for verb in ["pause", "resume", "cancel"] {
        assert!(timed(&[verb, "--crawl", "n"]).status.success(), "{verb}");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(workers);
    // The statistics are read right: the foreign keys' SETs are counted.
    assert!(
        command_calls(&redis.url(), "set") >= FOREIGN,
        "INFO commandstats shows the foreign keys' SET calls"
    );
    let scans = command_calls(&redis.url(), "scan");
    let keys = command_calls(&redis.url(), "keys");
    assert_eq!(
        (scans, keys),
        (0, 0),
        "SCAN and KEYS calls on the crawl's Redis"
    );
}
