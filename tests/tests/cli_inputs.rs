//! What the binaries print and refuse before touching any service:
//! `--help` never shows a secret from the environment (clap would print
//! env values), and `crawler seed` refuses what is not an http(s) URL,
//! line by line, failing when nothing valid is left.

use std::process::Command;

use crawler_tests::bin;

const AMQP: &str = "amqp://crawler:S3cretAmqpPass@broker.invalid:5672/%2f";
const REDIS: &str = "redis://:S3cretRedisPass@redis.invalid:6379/";

fn run(binary: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(bin(binary))
        .args(args)
        .env("CRAWLER_AMQP_URL", AMQP)
        .env("CRAWLER_REDIS_URL", REDIS)
        .output()
        .expect("running the binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A folder of one test's files, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        Scratch(dir)
    }

    /// Writes `text` to the file `name` in the folder; its path, as text.
    fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write");
        path.to_str().expect("a UTF-8 temp path").to_string()
    }
}

/// Panics unless `text`, what `who` printed, holds every one of `parts`.
fn assert_holds_all(who: &str, text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{who} lacks {part}:\n{text}");
    }
}

/// The first of `lines` that holds `marker`.
fn line_with<'a>(lines: &'a [String], marker: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?} in {lines:?}"))
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn help_never_shows_secrets() {
    let cases: &[(&str, &[&str])] = &[
        ("frontier", &["--help"]),
        ("fetcher", &["--help"]),
        ("extractor", &["--help"]),
        ("contentseen", &["--help"]),
        ("crawler", &["seed", "--help"]),
        ("crawler", &["stats", "--help"]),
        ("crawler", &["query", "--help"]),
    ];
    for (binary, args) in cases {
        let (ok, text) = run(binary, args);
        assert!(ok, "{binary} {args:?} failed: {text}");
        assert!(
            text.contains("CRAWLER_AMQP_URL"),
            "{binary} {args:?} names the variable"
        );
        // Nor the default's (RabbitMQ's well-known guest password).
        for secret in ["S3cretAmqpPass", "S3cretRedisPass", "guest:guest"] {
            assert!(
                !text.contains(secret),
                "{binary} {args:?} shows {secret}:\n{text}"
            );
        }
    }
}

#[test]
fn service_flags_show_only_on_the_subcommands_that_use_them() {
    // Under their own heading where the subcommand talks to the services.
    for sub in [
        "seed",
        "query",
        "stats",
        "export",
        "dead-letters",
        "health",
        "crawls",
        "pause",
        "resume",
        "cancel",
        "reset",
    ] {
        let (ok, text) = run("crawler", &[sub, "--help"]);
        assert!(ok, "crawler {sub} --help failed: {text}");
        let heading = text
            .find("Services:")
            .unwrap_or_else(|| panic!("{sub}: no Services heading:\n{text}"));
        let amqp = text
            .find("--amqp-url")
            .unwrap_or_else(|| panic!("{sub}: no --amqp-url:\n{text}"));
        assert!(
            amqp > heading,
            "{sub}: --amqp-url is not under Services:\n{text}"
        );
        assert!(text.contains("Examples:"), "{sub}: no examples:\n{text}");
        // How a worker consumes is the workers' own.
        for flag in ["--prefetch", "--concurrency", "--metrics-port"] {
            assert!(!text.contains(flag), "{sub} shows {flag}:\n{text}");
        }
    }
    for worker in ["frontier", "fetcher", "extractor", "contentseen"] {
        let (ok, text) = run(worker, &["--help"]);
        assert!(ok, "{worker} --help failed: {text}");
        assert_holds_all(
            worker,
            &text,
            &[
                "--amqp-url",
                "--prefetch",
                "--concurrency",
                "--metrics-port",
            ],
        );
    }
    // Not on those that never reach a service, nor on the top level.
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["extract", "--help"],
        &["charset", "--help"],
    ] {
        let (ok, text) = run("crawler", args);
        assert!(ok, "crawler {args:?} failed: {text}");
        for flag in ["--amqp-url", "--redis-url", "--namespace", "Services:"] {
            assert!(
                !text.contains(flag),
                "crawler {args:?} lists {flag}:\n{text}"
            );
        }
        assert!(text.contains("Examples:"), "{args:?}: no examples:\n{text}");
        // Nor the default's (RabbitMQ's well-known guest password).
        for secret in ["S3cretAmqpPass", "S3cretRedisPass", "guest:guest"] {
            assert!(!text.contains(secret), "crawler {args:?} shows {secret}");
        }
    }
    // The settings file still goes before the subcommand or after it.
    let (ok, text) = run(
        "crawler",
        &["--config", "/nonexistent.toml", "charset", "--help"],
    );
    assert!(!ok, "a missing config file is an error: {text}");
    assert!(text.contains("nonexistent.toml"), "{text}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef crawler"),
        ("fish", "complete -c crawler"),
    ] {
        let (ok, text) = run("crawler", &["completions", shell]);
        assert!(ok, "completions {shell} failed: {text}");
        assert!(text.contains(marker), "completions {shell}: no {marker:?}");
        assert!(
            text.contains("dead-letters"),
            "completions {shell} miss a subcommand"
        );
    }
    let (ok, _) = run("crawler", &["completions", "tcsh"]);
    assert!(!ok, "an unknown shell is refused");
}

#[test]
fn an_unreachable_service_says_what_to_do() {
    // Nothing listens on port 1 of the loopback address.
    let (ok, text) = run(
        "crawler",
        &[
            "seed",
            "--amqp-url",
            "amqp://guest:guest@127.0.0.1:1/%2f",
            "http://example.com/",
        ],
    );
    assert!(!ok, "{text}");
    assert!(text.contains("RabbitMQ is not reachable there"), "{text}");
    assert!(text.contains("crawler run"), "{text}");
    let (ok, text) = run("crawler", &["stats", "--redis-url", "redis://127.0.0.1:1/"]);
    assert!(!ok, "{text}");
    assert!(text.contains("Redis is not reachable there"), "{text}");
    // Other errors get no such advice.
    let (ok, text) = run("crawler", &["charset", "/nonexistent/page.html"]);
    assert!(!ok, "{text}");
    assert!(!text.contains("not reachable"), "{text}");
}

#[test]
fn seeds_that_are_not_urls_are_refused() {
    for bad in ["not-a-url", "ftp://x", "", "http://"] {
        let (ok, text) = run("crawler", &["seed", bad]);
        assert!(!ok, "seed {bad:?} accepted: {text}");
        assert!(!text.contains("seeded"), "{text}");
        assert!(
            text.contains("refused") || text.contains("no seed"),
            "{text}"
        );
    }
    let scratch = Scratch::new("inputs");
    let junk: String = (0..1000).map(|i| format!("junk line {i}\n")).collect();
    let file = scratch.file("junk.txt", &junk);
    let (ok, text) = run("crawler", &["seed", "--file", &file]);
    assert!(!ok, "a file of junk was seeded: {text}");
    assert!(text.contains("junk.txt line 1:"), "line numbers: {text}");
    assert!(text.contains("980 more refused"), "{text}");
}

#[test]
fn an_empty_variable_is_unset_and_the_start_line_reads_plainly() {
    let scratch = Scratch::new("empty");
    let config = scratch.file(
        "crawler.toml",
        "amqp_url = \"amqp://fileuser:filepass@127.0.0.1:1/%2f\"\nnamespace = \"from-file\"\n",
    );
    let mut frontier = Command::new(bin("frontier"));
    frontier
        .env("CRAWLER_CONFIG", &config)
        .env("CRAWLER_AMQP_URL", "")
        .env("CRAWLER_NAMESPACE", "")
        .env("CRAWLER_REDIS_URL", "redis://127.0.0.1:1/");
    let lines = crawler_tests::stderr_until(frontier, "namespace=");
    let start = line_with(&lines, "namespace=");
    // The file's values, the password redacted, no colour codes, plain words.
    assert!(
        start.contains("amqp_url=amqp://fileuser:***@127.0.0.1:1/"),
        "{start}"
    );
    assert!(start.contains("namespace=from-file"), "{start}");
    assert!(
        !start.contains("filepass") && !start.contains('\u{1b}'),
        "{start}"
    );
    assert!(!start.contains("=="), "{start}");
}

#[test]
fn wait_idle_rides_out_a_missing_broker_until_its_own_timeout() {
    let started = std::time::Instant::now();
    let out = Command::new(bin("crawler"))
        .args(["stats", "--wait-idle", "--timeout-secs", "3"])
        .env("CRAWLER_AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f")
        .env("CRAWLER_REDIS_URL", crawler_tests::REDIS_URL)
        .env("CRAWLER_NAMESPACE", "t-waitidle-nobroker")
        .output()
        .expect("crawler stats");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(3),
        "gave up after {:?}: {text}",
        started.elapsed()
    );
    assert!(text.contains("not idle after 3 s"), "{text}");
    assert!(text.contains("services unreachable"), "{text}");
    // Said once, not at every poll.
    assert_eq!(
        text.matches("waiting for the services").count(),
        1,
        "{text}"
    );
}

#[test]
fn an_error_says_its_cause_once() {
    // Nothing listens on port 1 of loopback.
    let out = Command::new(bin("crawler"))
        .args(["export"])
        .env("CRAWLER_REDIS_URL", "redis://127.0.0.1:1/")
        .env("CRAWLER_AMQP_URL", "amqp://user:s3cret@127.0.0.1:1/%2f")
        .output()
        .expect("crawler");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("connecting to Redis"), "{err}");
    assert_eq!(err.matches("refused").count(), 1, "{err}");
    let out = Command::new(bin("crawler"))
        .args(["dead-letters"])
        .env("CRAWLER_AMQP_URL", "amqp://user:s3cret@127.0.0.1:1/%2f")
        .output()
        .expect("crawler");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("connecting to RabbitMQ"), "{err}");
    assert_eq!(err.matches("refused").count(), 1, "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

#[test]
fn a_worker_takes_flag_then_variable_then_its_table_then_the_top_level() {
    let scratch = Scratch::new("layers");
    let config = scratch.file(
        "crawler.toml",
        "concurrency = 4\nfetch_timeout = 7\nmax_redirects = 3\nmax_retries = 1\n\
         [fetcher]\nconcurrency = 9\nconnect_timeout = 3\nmax_retries = 5\n\
         [frontier]\nconcurrency = 1\n",
    );
    let mut fetcher = Command::new(bin("fetcher"));
    fetcher
        .args(["--config", &config])
        .args(["--connect-timeout-secs", "2"])
        .env("CRAWLER_MAX_RETRIES", "6")
        .env("CRAWLER_MAX_REDIRECTS", "")
        .env("CRAWLER_AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f")
        .env("CRAWLER_REDIS_URL", "redis://127.0.0.1:1/");
    let lines = crawler_tests::stderr_until(fetcher, "namespace=");
    let settings = line_with(&lines, "fetch settings");
    // Flag over the file; variable over the file; the fetcher's table over
    // the top level; the top level over the default; an empty variable is
    // unset.
    assert_holds_all(
        "the fetch settings line",
        settings,
        &[
            "connect_timeout: 2s",
            "max_retries: 6",
            "total_timeout: 7s",
            "max_redirects: 3",
        ],
    );
    let start = line_with(&lines, "namespace=");
    assert!(start.contains("concurrency=9"), "{start}");
}

#[test]
fn unknown_config_keys_are_warned_about_with_the_file() {
    let scratch = Scratch::new("unknown");
    let config = scratch.file("typos.toml", "namespase = \"x\"\n[crawler]\nmax_dept = 3\n");
    let page = scratch.file("page.html", "<html><body><p>hello</p></body></html>");
    let (ok, text) = run("crawler", &["--config", &config, "charset", &page]);
    assert!(ok, "an unknown key is no error: {text}");
    for key in ["`namespase`", "`crawler.max_dept`"] {
        let warned = text
            .lines()
            .any(|l| l.contains("WARN") && l.contains(key) && l.contains(&config));
        assert!(warned, "no warning naming {key} and {config}: {text}");
    }
}
