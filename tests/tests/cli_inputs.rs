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
        for secret in ["S3cretAmqpPass", "S3cretRedisPass"] {
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
        for secret in ["S3cretAmqpPass", "S3cretRedisPass"] {
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
    let dir = std::env::temp_dir().join(format!("cli-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("junk.txt");
    let junk: String = (0..1000).map(|i| format!("junk line {i}\n")).collect();
    std::fs::write(&file, junk).expect("write");
    let (ok, text) = run(
        "crawler",
        &["seed", "--file", file.to_str().expect("utf-8 path")],
    );
    assert!(!ok, "a file of junk was seeded: {text}");
    assert!(text.contains("junk.txt line 1:"), "line numbers: {text}");
    assert!(text.contains("980 more refused"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_variable_is_unset_and_the_start_line_reads_plainly() {
    let dir = std::env::temp_dir().join(format!("cli-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("crawler.toml");
    std::fs::write(
        &config,
        "amqp_url = \"amqp://fileuser:filepass@127.0.0.1:1/%2f\"\nnamespace = \"from-file\"\n",
    )
    .expect("write");
    let mut child = Command::new(bin("frontier"))
        .env("CRAWLER_CONFIG", &config)
        .env("CRAWLER_AMQP_URL", "")
        .env("CRAWLER_NAMESPACE", "")
        .env("CRAWLER_REDIS_URL", "redis://127.0.0.1:1/")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("frontier");
    let stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let done = line.contains("namespace=");
            seen.push(line);
            if done {
                break;
            }
        }
        seen
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !reader.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let lines = reader.join().expect("reader");
    let start = lines
        .iter()
        .find(|l| l.contains("namespace="))
        .unwrap_or_else(|| panic!("no start line in {lines:?}"));
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
    let _ = std::fs::remove_dir_all(&dir);
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
