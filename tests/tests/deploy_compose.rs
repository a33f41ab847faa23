//! The compose file: every service's command names a binary the workspace
//! builds, a compose implementation accepts the file (Debian's
//! `docker-compose` validates without an engine; `.ci/run` installs it),
//! refuses it without the passwords, and the file, deploy/.env.example and
//! the README say the same about Redis's durability. Then the stack for real
//! (ignored unless scripts/compose-test.sh runs it).

use std::process::Command;

const COMPOSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/docker-compose.yml");
const ENV_EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/.env.example");
const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");

/// The binary each service built from our image runs (the services that
/// merge the `*worker` template or name `${CRAWLER_IMAGE...}`): the first
/// word of its `entrypoint:`, else of its `command:` (a `[...]` list or a
/// `- item` list on the next lines).
fn commands(text: &str) -> Vec<String> {
    fn first_word(rest: &str) -> Option<String> {
        let rest = rest.trim().trim_start_matches('[').trim();
        let first = rest.split(',').next()?.trim().trim_end_matches(']');
        let first = first.trim_start_matches("- ").trim().trim_matches('"');
        (!first.is_empty()).then(|| first.to_string())
    }
    #[derive(Default)]
    struct Service {
        ours: bool,
        entrypoint: Option<String>,
        command: Option<String>,
    }
    let mut services: Vec<Service> = Vec::new();
    let mut in_services = false;
    let mut pending: Option<&str> = None;
    for line in text.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') {
            in_services = line.trim_end() == "services:";
            continue;
        }
        if !in_services {
            continue;
        }
        // A service starts at two spaces of indent.
        if line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with(':') {
            services.push(Service::default());
            continue;
        }
        let Some(service) = services.last_mut() else {
            continue;
        };
        let t = line.trim();
        if let Some(key) = pending.take() {
            let word = t.strip_prefix("- ").and_then(first_word);
            match key {
                "entrypoint" => service.entrypoint = word,
                _ => service.command = word,
            }
            continue;
        }
        if t == "<<: *worker" || t.starts_with("image: ${CRAWLER_IMAGE") {
            service.ours = true;
        }
        for key in ["entrypoint", "command"] {
            if let Some(rest) = t.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
                if rest.trim().is_empty() {
                    pending = Some(key);
                } else if key == "entrypoint" {
                    service.entrypoint = first_word(rest);
                } else {
                    service.command = first_word(rest);
                }
            }
        }
    }
    services
        .into_iter()
        .filter(|s| s.ours)
        .filter_map(|s| s.entrypoint.or(s.command))
        .collect()
}

#[test]
fn every_service_runs_a_binary_of_the_workspace() {
    let text = std::fs::read_to_string(COMPOSE).expect("deploy/docker-compose.yml");
    let cmds = commands(&text);
    for worker in [
        "frontier",
        "fetcher",
        "extractor",
        "contentseen",
        "crawler",
        "testsite",
    ] {
        assert!(
            cmds.iter().any(|c| c == worker),
            "no service runs {worker}: {cmds:?}"
        );
    }
    let dir = crawler_tests::bin_dir();
    for c in &cmds {
        assert!(
            dir.join(c).is_file(),
            "compose runs {c}, which the workspace does not build"
        );
    }
}

#[test]
fn the_compose_file_validates() {
    if Command::new("docker-compose")
        .arg("version")
        .output()
        .is_err()
    {
        panic!(
            "docker-compose is not installed: the compose file cannot be validated \
             (scripts/ensure-services.sh installs Debian's package)"
        );
    }
    let out = Command::new("docker-compose")
        .args(["--env-file", ENV_EXAMPLE, "-f", COMPOSE, "config", "-q"])
        .output()
        .expect("running docker-compose");
    succeeded(&out, format_args!("docker-compose config"));
}

/// `docker-compose config` of the compose file with this env file's
/// content (and no credentials from the test's own environment).
fn config_with(name: &str, env_file: &str, args: &[&str]) -> Output {
    let path = std::env::temp_dir().join(format!("{name}-{}.env", std::process::id()));
    std::fs::write(&path, env_file).unwrap();
    let out = Command::new("docker-compose")
        .args([
            "--env-file",
            path.to_str().unwrap(),
            "-f",
            COMPOSE,
            "config",
        ])
        .args(args)
        .env_remove("RABBITMQ_USER")
        .env_remove("RABBITMQ_PASS")
        .env_remove("REDIS_PASSWORD")
        .env_remove("REDIS_APPENDFSYNC")
        .output()
        .expect("running docker-compose (scripts/ensure-services.sh installs it)");
    let _ = std::fs::remove_file(&path);
    out
}

#[test]
fn the_compose_file_refuses_to_run_without_credentials() {
    let out = config_with("empty", "", &["-q"]);
    assert!(!out.status.success(), "compose accepted no credentials");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("set RABBITMQ_USER in deploy/.env"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // RabbitMQ's credentials but no Redis password: refused as well.
    let out = config_with(
        "no-redis-password",
        "RABBITMQ_USER=u\nRABBITMQ_PASS=p\n",
        &["-q"],
    );
    assert!(!out.status.success(), "compose accepted no Redis password");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("set REDIS_PASSWORD in deploy/.env"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The value of `KEY=` in deploy/.env.example (the line not commented out).
fn env_example(key: &str) -> String {
    let text = std::fs::read_to_string(ENV_EXAMPLE).expect("deploy/.env.example");
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key}= in deploy/.env.example"))
        .trim()
        .to_string()
}

/// Redis's durability is one setting, REDIS_APPENDFSYNC, and the compose
/// file's default, deploy/.env.example and the README's durability
/// paragraph name the same mode: `always`. The rendered file starts Redis
/// with the append-only file, that mode and a password, and hands the
/// workers a Redis URL with the password and the metrics address 0.0.0.0.
#[test]
fn compose_env_example_and_readme_agree_on_redis_durability() {
    let compose = std::fs::read_to_string(COMPOSE).expect("deploy/docker-compose.yml");
    assert!(
        compose.contains("${REDIS_APPENDFSYNC:-always}"),
        "the compose file's Redis does not default to appendfsync always"
    );
    assert_eq!(env_example("REDIS_APPENDFSYNC"), "always");
    let readme = std::fs::read_to_string(README).expect("README.md");
    let durability = readme
        .split("\n\n")
        .find(|p| p.contains("REDIS_APPENDFSYNC"))
        .expect("a README paragraph on REDIS_APPENDFSYNC");
    for said in ["`appendfsync always`", "deploy/.env", "`everysec`"] {
        assert!(
            durability.contains(said),
            "the README's durability paragraph does not say {said}: {durability}"
        );
    }

    let out = config_with(
        "example",
        &std::fs::read_to_string(ENV_EXAMPLE).expect("deploy/.env.example"),
        &[],
    );
    let rendered = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let password = env_example("REDIS_PASSWORD");
    // The redis service's lines (up to the next service), and in them the
    // `command:` list.
    let service: Vec<&str> = rendered
        .lines()
        .skip_while(|l| *l != "  redis:")
        .skip(1)
        .take_while(|l| l.starts_with("   "))
        .collect();
    let redis_command: Vec<&str> = service
        .iter()
        .skip_while(|l| **l != "    command:")
        .skip(1)
        .map_while(|l| l.strip_prefix("    - "))
        .map(|w| w.trim_matches(['"', '\'']))
        .collect();
    let recommended = pipeline::store::RECOMMENDED_REDIS_CONFIG;
    for pair in [
        ["--appendonly", "yes"],
        ["--appendfsync", "always"],
        ["--requirepass", password.as_str()],
    ]
    .iter()
    .map(|p| p.as_slice())
    .chain(recommended.chunks(2))
    {
        assert!(
            redis_command.windows(2).any(|w| w == pair),
            "redis runs {redis_command:?}, without {pair:?}"
        );
    }
    assert!(
        rendered.contains(&format!(
            "CRAWLER_REDIS_URL: redis://:{password}@redis:6379/"
        )),
        "the workers' Redis URL has no password:\n{rendered}"
    );
    assert!(
        rendered.contains("CRAWLER_METRICS_ADDR: 0.0.0.0"),
        "{rendered}"
    );
    // The texts: contentseen writes them to the `texts` volume, the CLI
    // reads them from it, both told so by CRAWLER_TEXT_DIR.
    for service in ["contentseen", "crawler"] {
        let lines: Vec<&str> = rendered
            .lines()
            .skip_while(|l| *l != format!("  {service}:"))
            .skip(1)
            .take_while(|l| l.starts_with("   "))
            .collect();
        let mode = if service == "crawler" { "ro" } else { "rw" };
        for want in [
            format!("      CRAWLER_TEXT_DIR: {TEXT_DIR}"),
            format!("    - texts:{TEXT_DIR}:{mode}"),
        ] {
            assert!(
                lines.contains(&want.as_str()),
                "{service}: no `{want}` in {lines:#?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The compose stack for real: images, `up --scale`, a crawl, and faults.
// ---------------------------------------------------------------------------

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::process::Output;
use std::time::{Duration, Instant};

use crawler_tests::{check_clusters, expected_documents, parse_documents, path_of, succeeded};
use pipeline::keys::Keys;
use testsite::{Site, SiteConfig};

/// Deeper than the site: every page is within 3 hops of `/` (see
/// crawl_end_to_end.rs for why the limit is not the site's depth).
const MAX_DEPTH: usize = 5;
/// The test site's port and name inside the compose network.
const SITE_BASE: &str = "http://testsite:8080";
/// Articles of the generated site (the `testsite` service's TESTSITE_ARTICLES).
const ARTICLES: usize = 120;
/// The crawl's politeness delay (one host, so one fetch per delay) in the
/// crawl with faults: about 270 pages take over a minute, so the crawl is
/// still running when the last fault lands. The plain crawl has none.
const FAULT_CRAWL_DELAY_MS: u64 = 250;
/// Host ports the machine's own services use: the stack must publish none.
const HOST_SERVICE_PORTS: &[u16] = &[4369, 5672, 15672, 25672, 6379];
/// How long a fault lasts (Redis paused, a fetcher cut off).
const FAULT_SPAN: Duration = Duration::from_secs(10);
/// Where contentseen writes the texts and the CLI reads them (the compose
/// file's CRAWLER_TEXT_DIR, on the `texts` volume).
const TEXT_DIR: &str = "/var/lib/crawler/texts";

/// One compose project of this test: its own name, so its containers,
/// network and volumes are its own; `down -v` when dropped, also on a panic.
struct Stack {
    project: String,
    env: BTreeMap<&'static str, String>,
    /// The `cluster` profile's services are up and the workers use them.
    cluster: bool,
}

impl Stack {
    fn new() -> Stack {
        let image = |var: &str| {
            std::env::var(var).unwrap_or_else(|_| {
                panic!(
                    "{var} is not set: scripts/compose-test.sh builds the images \
                     (deploy/local-images.sh) and runs this test"
                )
            })
        };
        let project = std::env::var("COMPOSE_PROJECT_NAME").unwrap_or_else(|_| {
            format!(
                "crawlertest{}",
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            )
        });
        let mut env = BTreeMap::new();
        env.insert("RABBITMQ_IMAGE", image("RABBITMQ_IMAGE"));
        env.insert("REDIS_IMAGE", image("REDIS_IMAGE"));
        env.insert("CRAWLER_IMAGE", image("CRAWLER_IMAGE"));
        env.insert("PROMETHEUS_IMAGE", image("PROMETHEUS_IMAGE"));
        env.insert("RABBITMQ_USER", "crawler".into());
        env.insert(
            "RABBITMQ_PASS",
            uuid::Uuid::new_v4().simple().to_string()[..16].to_string(),
        );
        env.insert(
            "REDIS_PASSWORD",
            uuid::Uuid::new_v4().simple().to_string()[..16].to_string(),
        );
        // REDIS_APPENDFSYNC unset: the compose file's default (always).
        env.insert("CRAWLER_NAMESPACE", "crawler".into());
        env.insert("CRAWLER_ALLOW_PRIVATE", "1".into());
        env.insert("RUST_LOG", "info".into());
        // Free ports on 127.0.0.1, never the host's own services' ports.
        env.insert("RABBITMQ_HOST_PORT", "0".into());
        env.insert("RABBITMQ_UI_HOST_PORT", "0".into());
        env.insert("REDIS_HOST_PORT", "0".into());
        env.insert("PROMETHEUS_HOST_PORT", "0".into());
        env.insert("GRAFANA_HOST_PORT", "0".into());
        env.insert("TESTSITE_ARTICLES", ARTICLES.to_string());
        env.insert("TESTSITE_DELAY_MS", "0".into());
        env.insert("COMPOSE_PROFILES", "testsite".into());
        Stack {
            project,
            env,
            cluster: false,
        }
    }

    /// The stack of the `cluster` profile, set up as deploy/.env.example's
    /// cluster lines say: a Redis Cluster of six nodes, three RabbitMQ
    /// nodes, quorum queues, WAIT for a replica before each ack.
    fn cluster() -> Stack {
        let mut stack = Stack::new();
        let example = std::fs::read_to_string(ENV_EXAMPLE).expect("deploy/.env.example");
        for key in [
            "COMPOSE_PROFILES",
            "CLUSTER",
            "CRAWLER_REDIS_CLUSTER",
            "CRAWLER_REDIS_WAIT",
            "RABBITMQ_OTHER_NODES",
            "CRAWLER_QUEUE_TYPE",
        ] {
            let value = example
                .lines()
                .find_map(|l| l.strip_prefix(&format!("#{key}=")))
                .unwrap_or_else(|| panic!("deploy/.env.example has no cluster line for {key}"));
            let value = match key {
                "COMPOSE_PROFILES" => format!("testsite,{value}"),
                "CRAWLER_REDIS_CLUSTER" => value.replace("change-me", &stack.env["REDIS_PASSWORD"]),
                _ => value.to_string(),
            };
            stack.env.insert(key, value);
        }
        stack.cluster = true;
        stack
    }

    /// `docker-compose -p <project> -f deploy/docker-compose.yml <args>`,
    /// with the test's settings in the environment (they win over any
    /// deploy/.env).
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("docker-compose");
        c.args(["--ansi", "never", "-f", COMPOSE, "-p", &self.project])
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(std::process::Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .unwrap_or_else(|e| panic!("running docker-compose {args:?}: {e}"))
    }

    /// Runs docker-compose, panicking with its stderr unless it succeeds.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "docker-compose {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `docker-compose run --rm crawler <args>`: the CLI in the network.
    fn cli(&self, args: &[&str]) -> Output {
        let mut all = vec!["run", "--rm", "-T", "crawler"];
        all.extend_from_slice(args);
        self.run(&all)
    }

    fn cli_ok(&self, args: &[&str]) -> String {
        succeeded(&self.cli(args), format_args!("crawler {args:?}"))
    }

    /// A docker-compose command's output as a user sees it: stdout, then
    /// stderr without compose's own progress lines; panics unless it
    /// succeeds.
    fn shown(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let mut text = succeeded(&out, format_args!("docker-compose {args:?}"));
        for line in String::from_utf8_lossy(&out.stderr).lines() {
            let line = line.trim_end_matches('\r');
            // "Creating x ... " before its "Creating x ... done".
            let progress = line.contains(" ... ") && !line.ends_with("done");
            if !progress {
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }

    /// `crawler stats --json`, or `None` while a service is away.
    fn stats(&self) -> Option<serde_json::Value> {
        let out = self.cli(&["stats", "--json"]);
        if !out.status.success() {
            return None;
        }
        serde_json::from_slice(&out.stdout).ok()
    }

    /// The container ids of a service (of every service for "").
    fn containers(&self, service: &str) -> Vec<String> {
        let mut args = vec!["ps", "-q"];
        if !service.is_empty() {
            args.push(service);
        }
        self.ok(&args)
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect()
    }

    fn network(&self) -> String {
        format!("{}_default", self.project)
    }

    /// `redis-cli <args>` in the redis container (its REDISCLI_AUTH gives
    /// the password).
    fn redis_cli(&self, args: &[&str]) -> String {
        self.redis_cli_on("redis", args)
    }

    /// The hosts `redis-cli -h` reaches the Redis masters at from the
    /// redis container: itself, or on a cluster every master not failed.
    fn redis_masters(&self) -> Vec<String> {
        if !self.cluster {
            return vec!["127.0.0.1".to_string()];
        }
        self.redis_cli(&["cluster", "nodes"])
            .lines()
            .filter(|l| {
                node_flags(l).iter().any(|f| f == "master")
                    && !node_flags(l).iter().any(|f| f.starts_with("fail"))
            })
            .filter_map(|l| l.split_whitespace().nth(1))
            .map(|addr| addr.split([':', '@']).next().unwrap_or(addr).to_string())
            .collect()
    }

    /// `redis-cli <args>` in this Redis service's container.
    fn redis_cli_on(&self, service: &str, args: &[&str]) -> String {
        let mut all = vec!["exec", "-T", service, "redis-cli"];
        all.extend_from_slice(args);
        self.ok(&all)
    }

    /// The secrets of the stack's .env: no output may hold them.
    fn secrets(&self) -> [(&'static str, &str); 2] {
        [
            ("RABBITMQ_PASS", self.env["RABBITMQ_PASS"].as_str()),
            ("REDIS_PASSWORD", self.env["REDIS_PASSWORD"].as_str()),
        ]
    }

    /// Every service's log (compose's `logs`) holds no password.
    fn check_logs_hold_no_secret(&self, label: &str) {
        let logs = self.ok(&["logs", "--no-color"]);
        assert!(
            logs.lines().count() > 10,
            "[{label}] hardly any logs: {logs}"
        );
        for (name, secret) in self.secrets() {
            assert!(
                !logs.contains(secret),
                "[{label}] the logs show {name}:\n{}",
                logs.lines()
                    .filter(|l| l.contains(secret))
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }

    /// Up with three fetchers and two extractors; waits until every
    /// container with a healthcheck is healthy and the test site answers.
    fn up(&self) {
        let t0 = Instant::now();
        self.ok(&["up", "-d", "--scale", "fetcher=3", "--scale", "extractor=2"]);
        let all = self.containers("");
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let states: Vec<String> = all.iter().map(|c| inspect(c, HEALTH)).collect();
            if states.iter().all(|s| s == "healthy" || s == "none") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "not healthy after 180 s: {states:?}\n{}",
                self.ps()
            );
            std::thread::sleep(Duration::from_secs(1));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.ok(&["logs", "testsite"]).contains(SITE_BASE) {
            assert!(Instant::now() < deadline, "the test site did not start");
            std::thread::sleep(Duration::from_millis(500));
        }
        println!(
            "[compose] up, all healthy in {:.1} s:\n{}",
            t0.elapsed().as_secs_f64(),
            self.ps()
        );
    }

    fn ps(&self) -> String {
        String::from_utf8_lossy(&self.run(&["ps"]).stdout).into_owned()
    }

    fn down(&self) {
        let out = self.run(&["down", "-v", "--remove-orphans", "-t", "5"]);
        if !out.status.success() {
            eprintln!(
                "docker-compose down failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // What the workers said, for the failure's report.
            let logs = self.run(&["logs", "--tail", "40"]);
            eprintln!("{}", String::from_utf8_lossy(&logs.stdout));
        }
        self.down();
    }
}

const HEALTH: &str = "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}";

/// `docker inspect -f <format> <container>`.
fn inspect(container: &str, format: &str) -> String {
    docker_ok(&["inspect", "-f", format, container])
        .trim()
        .to_string()
}

fn docker_ok(args: &[&str]) -> String {
    let out = Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running docker {args:?}: {e}"));
    succeeded(&out, format_args!("docker {args:?}"))
}

/// The site the `testsite` service serves, as the test sees it.
fn compose_site() -> Site {
    let mut site = Site::generate(&SiteConfig {
        articles: ARTICLES,
        ..SiteConfig::default()
    });
    site.rename_host("testsite");
    site.bind_port(8080);
    site
}

fn counter(stats: &serde_json::Value, name: &str) -> i64 {
    stats["counters"][name].as_i64().unwrap_or(-1)
}

/// Every page stored exactly once, the near-duplicates as the site made
/// them, and the counters, the document log and the document keys agree.
fn check_crawl(stack: &Stack, site: &Site, label: &str) {
    let stats: serde_json::Value =
        serde_json::from_str(stack.cli_ok(&["stats", "--json"]).trim()).expect("stats json");
    let docs = parse_documents(&stack.cli_ok(&["export"]));
    let mut per_url: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &docs {
        *per_url.entry(d.url.as_str()).or_default() += 1;
    }
    let twice: Vec<_> = per_url.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "[{label}] stored twice: {twice:?}");
    let stored: BTreeSet<String> = docs.iter().map(|d| path_of(SITE_BASE, &d.url)).collect();
    let want = expected_documents(site, MAX_DEPTH);
    let missing: Vec<_> = want.difference(&stored).take(20).collect();
    let extra: Vec<_> = stored.difference(&want).take(20).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "[{label}] {} of {} pages stored; not stored: {missing:?}; not expected: {extra:?}; stats {stats}",
        stored.len(),
        want.len()
    );
    check_clusters(site, SITE_BASE, &docs);

    let lines = docs.len() as i64;
    let originals = docs.iter().filter(|d| d.duplicate_of.is_none()).count() as i64;
    assert_eq!(counter(&stats, "stored"), originals, "[{label}] {stats}");
    assert_eq!(
        counter(&stats, "duplicate"),
        lines - originals,
        "[{label}] {stats}"
    );
    assert_eq!(counter(&stats, "fetched"), lines, "[{label}] {stats}");
    assert_eq!(counter(&stats, "extracted"), lines, "[{label}] {stats}");
    for q in stats["queues"].as_array().expect("queues") {
        let name = q["queue"].as_str().unwrap_or("");
        assert!(
            !name.ends_with(".dead") || q["ready"].as_u64() == Some(0),
            "[{label}] dead letters: {q}"
        );
    }
    println!(
        "[{label}] {} documents ({originals} originals, {} near-duplicates), counters {}",
        lines,
        lines - originals,
        stats["counters"]
    );
    // Summed in Redis: the export logs (one per URL tag) and the document
    // records (fields of the per-URL document hashes). A script reads only
    // its own node's keys, so on a cluster each master counts its own
    // (found by SCAN) and the counts are summed.
    let count = |op: &str, pattern: &str| -> i64 {
        // Keys of many slots: a cluster node refuses that to a script
        // without the flag (Redis 7).
        let script = format!("#!lua flags=allow-cross-slot-keys\nlocal c, n = '0', 0 repeat local r = redis.call('SCAN', c, 'MATCH', ARGV[1], 'COUNT', 1000) c = r[1] for _, k in ipairs(r[2]) do n = n + redis.call('{op}', k) end until c == '0' return n");
        stack
            .redis_masters()
            .iter()
            .map(|host| {
                stack
                    .redis_cli(&["-h", host, "eval", &script, "0", pattern])
                    .trim()
                    .parse::<i64>()
                    .unwrap_or_else(|e| panic!("[{label}] {op} on {host}: {e}"))
            })
            .sum()
    };
    let (log_len, doc_keys) = if stack.cluster {
        (
            count("LLEN", "crawler:docs:*"),
            count("HLEN", "crawler:doc:*"),
        )
    } else {
        // On one node, the log keys by name.
        let sum_logs =
            "local n = 0 for _, k in ipairs(ARGV) do n = n + redis.call('LLEN', k) end return n"
                .to_string();
        let mut args = vec!["eval".to_string(), sum_logs, "0".to_string()];
        args.extend(Keys::new("crawler").document_logs());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let log_len: i64 = stack.redis_cli(&args).trim().parse().expect("log length");
        (log_len, count("HLEN", "crawler:doc:*"))
    };
    assert_eq!(log_len, lines, "[{label}] document log");
    assert_eq!(doc_keys, lines, "[{label}] document keys");
}

/// Inline commands, one after another on one new connection to `addr`:
/// the first line of each reply.
fn resp(addr: &str, commands: &[&str]) -> Vec<String> {
    let mut s = std::net::TcpStream::connect(addr).expect("published redis");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reader = std::io::BufReader::new(s.try_clone().unwrap());
    commands
        .iter()
        .map(|c| {
            s.write_all(format!("{c}\r\n").as_bytes()).unwrap();
            let mut line = String::new();
            std::io::BufRead::read_line(&mut reader, &mut line).expect("a Redis reply");
            line.trim_end().to_string()
        })
        .collect()
}

/// Redis answers no client without the password (from the host through the
/// published port, and from another container on the compose network),
/// and runs with the append-only file fsynced on every write.
fn check_redis_guarded(stack: &Stack, addr: &str) {
    let password = &stack.env["REDIS_PASSWORD"];
    let refused = resp(addr, &["PING", "GET crawler:stats"]);
    assert!(
        refused.iter().all(|r| r.starts_with("-NOAUTH")),
        "a client without the password: {refused:?}"
    );
    let wrong = resp(addr, &["AUTH not-the-password", "PING"]);
    assert!(wrong[0].starts_with("-WRONGPASS"), "{wrong:?}");
    assert!(wrong[1].starts_with("-NOAUTH"), "{wrong:?}");
    let right = resp(addr, &[&format!("AUTH {password}"), "PING"]);
    assert_eq!(right, ["+OK", "+PONG"]);
    // Another container of the network, without REDISCLI_AUTH.
    let out = Command::new("docker")
        .args(["run", "--rm", "--network", &stack.network()])
        .args([
            &stack.env["REDIS_IMAGE"],
            "redis-cli",
            "-h",
            "redis",
            "ping",
        ])
        .output()
        .expect("docker run redis-cli");
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("NOAUTH"),
        "redis-cli -h redis ping from the network: {said}"
    );
    assert!(!said.contains("PONG"), "{said}");
    let config = stack.redis_cli(&["config", "get", "append*"]);
    let config: Vec<&str> = config.lines().collect();
    for pair in [["appendonly", "yes"], ["appendfsync", "always"]] {
        assert!(
            config.windows(2).any(|w| w == pair),
            "redis config: {config:?}"
        );
    }
    println!("[redis] refuses clients without the password (NOAUTH, WRONGPASS); appendonly yes, appendfsync always");
}

/// The texts are in segment files on the `texts` volume, not in Redis: the
/// files are there, the CLI without CRAWLER_TEXT_DIR cannot export them,
/// and with it (the compose file's) every original's text read back is the
/// text contentseen fingerprinted.
fn check_texts_in_files(stack: &Stack, label: &str) {
    let volume = format!("{}_texts", stack.project);
    let segments = docker_ok(&[
        "run",
        "--rm",
        "-v",
        &format!("{volume}:/t:ro"),
        "--entrypoint",
        "find",
        &stack.env["REDIS_IMAGE"],
        "/t",
        "-name",
        "seg-*",
    ]);
    assert!(
        segments.lines().count() > 0,
        "[{label}] no text segment in the texts volume"
    );
    let out = stack.run(&[
        "run",
        "--rm",
        "-T",
        "-e",
        "CRAWLER_TEXT_DIR=",
        "crawler",
        "export",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no text directory is set"),
        "[{label}] export without CRAWLER_TEXT_DIR: the texts are not in files? {stderr}"
    );
    let docs = parse_documents(&stack.cli_ok(&["export"]));
    let mut articles = 0;
    for d in docs.iter().filter(|d| d.duplicate_of.is_none()) {
        let fp = contentseen::simhash::sketch(&d.text).fingerprint.value();
        assert_eq!(
            format!("{fp:016x}"),
            d.simhash,
            "[{label}] {}: the text read back is not the one fingerprinted",
            d.url
        );
        if d.article && !d.text.is_empty() {
            articles += 1;
        }
    }
    assert!(articles > 0, "[{label}] no article text read back");
    println!(
        "[{label}] texts in {} segment file(s) on the texts volume; {articles} articles' texts read back through `crawler export` match their SimHash",
        segments.lines().count()
    );
}

/// A Prometheus query's one value (an instant vector of one sample).
fn prometheus_value(addr: &str, query: &str) -> Option<f64> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET /api/v1/query?query={encoded} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let body = out.split_once("\r\n\r\n")?.1;
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

/// The `monitoring` profile's Prometheus (the image of local-images.sh)
/// finds every worker container and scrapes the counters `crawler stats`
/// shows. (Grafana has no image here: deploy_monitoring.rs checks its
/// dashboard against the series.)
fn check_prometheus(stack: &Stack) {
    let t0 = Instant::now();
    stack.ok(&["--profile", "monitoring", "up", "-d", "prometheus"]);
    let addr = stack.ok(&["port", "prometheus", "9090"]).trim().to_string();
    assert!(addr.starts_with("127.0.0.1:"), "Prometheus on {addr}");
    let stats = stack.stats().expect("stats");
    let workers = ["frontier", "fetcher", "extractor", "contentseen"]
        .iter()
        .map(|s| stack.containers(s).len())
        .sum::<usize>() as f64;
    let want = [
        ("count(up{job=\"crawler\"} == 1)", workers),
        (
            "sum(crawler_fetches_total{outcome=\"ok\"})",
            counter(&stats, "fetch_ok") as f64,
        ),
        (
            "sum(crawler_documents_total{verdict=\"duplicate\"})",
            counter(&stats, "duplicate") as f64,
        ),
    ];
    let deadline = Instant::now() + Duration::from_secs(90);
    for (query, value) in want {
        loop {
            let got = prometheus_value(&addr, query);
            if got == Some(value) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "Prometheus: {query} is {got:?}, not {value}\n{}",
                stack.ok(&["logs", "--tail", "20", "prometheus"])
            );
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    println!(
        "[monitoring] Prometheus scrapes {workers} workers, and its counters equal the stats, {:.1} s after it started",
        t0.elapsed().as_secs_f64()
    );
}

/// Prints a command and its output, as the README's walkthrough shows it.
fn show(command: &str, output: &str) {
    println!("$ {command}");
    for line in output.lines().take(40) {
        println!("{line}");
    }
}

/// Waits until `crawler stats --wait-idle` says the crawl is done.
fn wait_idle(stack: &Stack) -> Duration {
    let t0 = Instant::now();
    stack.cli_ok(&["stats", "--wait-idle", "--json", "--timeout-secs", "600"]);
    t0.elapsed()
}

/// Pages fetched so far, or -1 while the CLI gets no answer.
fn progress(stack: &Stack) -> i64 {
    stack.stats().map_or(-1, |s| counter(&s, "fetched"))
}

/// A crawl with faults: its seed, and each fault's time after it.
struct Timeline {
    label: &'static str,
    t0: Instant,
    lines: Vec<String>,
}

impl Timeline {
    /// Seeds the test site with the faults' politeness delay and returns
    /// once a tenth of the `want` pages are fetched.
    fn start(label: &'static str, stack: &Stack, want: i64) -> Timeline {
        let t0 = Instant::now();
        seed(stack, FAULT_CRAWL_DELAY_MS);
        let deadline = Instant::now() + Duration::from_secs(120);
        while progress(stack) < want / 10 {
            assert!(Instant::now() < deadline, "the crawl makes no progress");
            std::thread::sleep(Duration::from_millis(500));
        }
        Timeline {
            label,
            t0,
            lines: Vec::new(),
        }
    }

    fn mark(&mut self, what: &str) {
        let line = format!("{:6.1} s  {what}", self.t0.elapsed().as_secs_f64());
        println!("[{}] {line}", self.label);
        self.lines.push(line);
    }

    fn print(&self) {
        println!("[{}] timeline:\n{}", self.label, self.lines.join("\n"));
    }
}

/// Seeds the test site with this politeness delay.
fn seed(stack: &Stack, delay_ms: u64) -> String {
    stack.cli_ok(&[
        "seed",
        "--crawl",
        "compose",
        "--max-depth",
        "5",
        "--delay-ms",
        &delay_ms.to_string(),
        &format!("{SITE_BASE}/"),
    ])
}

/// The stack of deploy/docker-compose.yml on a real Docker engine, with the
/// images of deploy/local-images.sh: `up --scale fetcher=3 --scale
/// extractor=2` crawls the `testsite` service completely, Redis refuses
/// clients without its password, the texts are read back from their
/// segment files and no log shows a password; then, on a fresh stack, the
/// same crawl while a fetcher and contentseen are SIGKILLed, RabbitMQ
/// restarts, Redis is paused, then SIGKILLed and started again, and a
/// fetcher is cut off the network, and nothing is lost or stored twice.
#[test]
#[ignore = "needs a Docker engine and the images of deploy/local-images.sh: scripts/compose-test.sh runs it"]
fn compose_stack_crawls_and_survives_faults() {
    for tool in ["docker", "docker-compose"] {
        let ok = Command::new(tool)
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "{tool} cannot talk to a Docker engine");
    }
    let site = compose_site();
    let want = expected_documents(&site, MAX_DEPTH).len() as i64;

    // 1. A plain crawl.
    let stack = Stack::new();
    stack.down();
    stack.up();
    for service in ["fetcher", "extractor"] {
        let n = stack.containers(service).len();
        let expected = if service == "fetcher" { 3 } else { 2 };
        assert_eq!(n, expected, "{service} containers");
    }
    // Published on 127.0.0.1 only, never on the host services' ports, and
    // a host tool reaches them.
    for (service, port) in [
        ("rabbitmq", "5672"),
        ("rabbitmq", "15672"),
        ("redis", "6379"),
    ] {
        let addr = stack.ok(&["port", service, port]).trim().to_string();
        let (host, p) = addr.rsplit_once(':').expect("host:port");
        let p: u16 = p.parse().expect("port");
        assert_eq!(host, "127.0.0.1", "{service}:{port} published on {addr}");
        assert!(!HOST_SERVICE_PORTS.contains(&p), "{service} on {addr}");
        if service == "redis" {
            check_redis_guarded(&stack, &addr);
        }
    }
    let t0 = Instant::now();
    show(
        "docker-compose run --rm crawler seed --crawl compose --max-depth 5 --delay-ms 0 http://testsite:8080/",
        &stack.shown(&[
            "run", "--rm", "-T", "crawler", "seed", "--crawl", "compose", "--max-depth", "5",
            "--delay-ms", "0", "http://testsite:8080/",
        ]),
    );
    show(
        "docker-compose run --rm crawler stats --watch --count 2",
        &stack.shown(&[
            "run", "--rm", "-T", "crawler", "stats", "--watch", "--count", "2",
        ]),
    );
    wait_idle(&stack);
    println!(
        "[plain] crawl of {want} pages idle {:.1} s after the seed",
        t0.elapsed().as_secs_f64()
    );
    check_crawl(&stack, &site, "plain");
    check_texts_in_files(&stack, "plain");
    check_prometheus(&stack);
    show(
        "docker-compose run --rm crawler stats",
        &stack.cli_ok(&["stats"]),
    );
    let docs = parse_documents(&stack.cli_ok(&["export", "--only", "duplicates"]));
    let a_dup = docs.first().expect("some near-duplicate");
    let original = a_dup.duplicate_of.clone().unwrap();
    show(
        &format!("docker-compose run --rm crawler query --duplicates {original}"),
        &stack.cli_ok(&["query", "--duplicates", &original]),
    );
    show(
        &format!("docker-compose run --rm crawler query --why {}", a_dup.url),
        &stack.cli_ok(&["query", "--why", &a_dup.url]),
    );
    // From a near-duplicate, `query --duplicates` shows its original first,
    // with the text read from the segment files.
    let cluster = parse_documents(&stack.cli_ok(&["query", "--duplicates", &a_dup.url]));
    let first = cluster.first().expect("the near-duplicate's original");
    assert_eq!(first.url, original, "query --duplicates from {}", a_dup.url);
    assert!(
        !first.text.is_empty(),
        "query --duplicates: the original's text was not read back"
    );
    // A wrong Redis password: refused, and the URL shown without it.
    let out = stack.run(&[
        "run",
        "--rm",
        "-T",
        "-e",
        "CRAWLER_REDIS_URL=redis://:wrong-password-42@redis:6379/",
        "crawler",
        "stats",
    ]);
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "stats with a wrong password: {said}");
    assert!(
        !said.contains("wrong-password-42") && said.contains("redis://:***@redis"),
        "the CLI's error with a wrong Redis password: {said}"
    );
    stack.check_logs_hold_no_secret("plain");
    let all = parse_documents(&stack.cli_ok(&["export"]));
    println!(
        "$ docker-compose run --rm crawler export > documents.jsonl\n$ wc -l documents.jsonl\n{} documents.jsonl",
        all.len()
    );
    show(
        "docker-compose up -d --scale fetcher=4 --scale extractor=2",
        &stack.shown(&["up", "-d", "--scale", "fetcher=4", "--scale", "extractor=2"]),
    );
    assert_eq!(stack.containers("fetcher").len(), 4, "scaled to 4 fetchers");
    show(
        "docker-compose down -v",
        &stack.shown(&["down", "-v", "--remove-orphans", "-t", "30"]),
    );
    drop(stack);

    // 2. The same crawl with faults, on a fresh stack (new volumes).
    let stack = Stack::new();
    stack.up();
    let fetchers = stack.containers("fetcher");
    let contentseen = stack.containers("contentseen")[0].clone();
    let mut timeline = Timeline::start("faults", &stack, want);
    let mut mark = |what: &str| timeline.mark(what);

    // A fetcher SIGKILLed with `docker kill`: the engine counts that as the
    // operator's stop and leaves it stopped, so it is started again.
    mark(&format!(
        "docker kill -s KILL fetcher ({})",
        &fetchers[0][..12]
    ));
    docker_ok(&["kill", "-s", "KILL", &fetchers[0]]);
    std::thread::sleep(Duration::from_secs(2));
    docker_ok(&["start", &fetchers[0]]);
    mark("fetcher started again");

    // contentseen's process SIGKILLed (a crash, an OOM kill): the restart
    // policy starts it again.
    let restarts = inspect(&contentseen, "{{.RestartCount}}");
    let pid = inspect(&contentseen, "{{.State.Pid}}");
    mark(&format!(
        "SIGKILL to contentseen's process (pid {pid} on the host)"
    ));
    let killed = Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .expect("kill");
    assert!(killed.success(), "kill -KILL {pid}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while inspect(&contentseen, "{{.RestartCount}}") == restarts
        || inspect(&contentseen, "{{.State.Running}}") != "true"
    {
        assert!(
            Instant::now() < deadline,
            "the restart policy did not restart contentseen"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    mark("contentseen restarted by its restart policy");
    std::thread::sleep(Duration::from_secs(3));

    mark("docker-compose restart rabbitmq");
    stack.ok(&["restart", "rabbitmq"]);
    let rabbit = stack.containers("rabbitmq")[0].clone();
    wait_healthy(&rabbit, "rabbitmq", Duration::from_secs(120));
    mark("rabbitmq healthy again");

    let redis = stack.containers("redis")[0].clone();
    mark("docker pause redis");
    docker_ok(&["pause", &redis]);
    std::thread::sleep(FAULT_SPAN);
    docker_ok(&["unpause", &redis]);
    mark("docker unpause redis");
    std::thread::sleep(Duration::from_secs(3));

    // Redis killed with SIGKILL mid-crawl, so writes it acknowledged a
    // moment before are only in its append-only file (fsynced: always):
    // started again, it must have every one of them.
    let before = stack.redis_cli(&["info", "persistence"]);
    assert!(
        before.contains("aof_enabled:1"),
        "Redis runs without its append-only file: {before}"
    );
    mark("docker kill -s KILL redis");
    docker_ok(&["kill", "-s", "KILL", &redis]);
    std::thread::sleep(Duration::from_secs(2));
    docker_ok(&["start", &redis]);
    wait_healthy(&redis, "redis", Duration::from_secs(60));
    mark("redis started again, healthy (its append-only file loaded)");

    // Stats answer again once Redis does.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut fetched = progress(&stack);
    while fetched < 0 {
        assert!(
            Instant::now() < deadline,
            "crawler stats fails after the pause"
        );
        std::thread::sleep(Duration::from_millis(500));
        fetched = progress(&stack);
    }
    assert!(
        fetched < want,
        "the crawl ended ({fetched} of {want} fetched) before the last fault: \
         raise FAULT_CRAWL_DELAY_MS"
    );
    mark(&format!(
        "docker network disconnect fetcher ({}), {fetched} of {want} fetched",
        &fetchers[1][..12]
    ));
    docker_ok(&["network", "disconnect", &stack.network(), &fetchers[1]]);
    std::thread::sleep(FAULT_SPAN);
    docker_ok(&["network", "connect", &stack.network(), &fetchers[1]]);
    mark("docker network connect fetcher");

    wait_idle(&stack);
    mark("idle");
    check_crawl(&stack, &site, "faults");
    check_texts_in_files(&stack, "faults");
    stack.check_logs_hold_no_secret("faults");
    // Every worker runs again, and is healthy.
    for c in stack.containers("") {
        assert_eq!(inspect(&c, "{{.State.Running}}"), "true", "{c} not running");
    }
    timeline.print();
}

/// Whether `service`'s node sees the node `dead` (an id) as failed and
/// three other masters, none failing: a replica has taken over. (Right
/// after a kill the dead master still counts as a master: its failure is
/// only agreed on after the node timeout.)
fn failed_over(stack: &Stack, service: &str, dead: &str) -> bool {
    let nodes = stack.redis_cli_on(service, &["cluster", "nodes"]);
    let dead_failed = nodes
        .lines()
        .any(|l| l.starts_with(dead) && node_flags(l).iter().any(|f| f == "fail"));
    let masters = nodes
        .lines()
        .filter(|l| !l.starts_with(dead))
        .map(node_flags)
        .filter(|f| f.iter().any(|x| x == "master") && !f.iter().any(|x| x.starts_with("fail")))
        .count();
    dead_failed && masters == 3
}

/// The flags of a `CLUSTER NODES` line (`myself,master`, `master,fail?`, …).
fn node_flags(line: &str) -> Vec<String> {
    line.split_whitespace()
        .nth(2)
        .unwrap_or("")
        .split(',')
        .map(str::to_string)
        .collect()
}

/// Waits until a container's healthcheck says healthy.
fn wait_healthy(container: &str, what: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while inspect(container, HEALTH) != "healthy" {
        assert!(Instant::now() < deadline, "{what} not healthy again");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The compose file's `cluster` profile, set up by deploy/.env.example's
/// cluster lines: six Redis nodes made a cluster by redis-cluster-create
/// (3 masters, 3 replicas), three RabbitMQ nodes joined by
/// rabbitmq-cluster-join, quorum queues, and workers that WAIT for a
/// replica. Mid-crawl a Redis master is SIGKILLed (its replica takes over;
/// started again, it comes back as a replica) and a RabbitMQ node is
/// SIGKILLed and started again; every page is stored once and the
/// counters equal the export.
#[test]
#[ignore = "needs a Docker engine and the images of deploy/local-images.sh: scripts/compose-test.sh runs it"]
fn compose_cluster_crawls_and_survives_node_loss() {
    let site = compose_site();
    let want = expected_documents(&site, MAX_DEPTH).len() as i64;
    let stack = Stack::cluster();
    stack.down();
    stack.up();
    let info = stack.redis_cli(&["cluster", "info"]);
    for line in [
        "cluster_state:ok",
        "cluster_known_nodes:6",
        "cluster_size:3",
    ] {
        assert!(info.contains(line), "redis cluster info: {info}");
    }
    let running = stack.ok(&[
        "exec",
        "-T",
        "rabbitmq",
        "rabbitmqctl",
        "-q",
        "eval",
        "length(rabbit_nodes:all_running()).",
    ]);
    assert_eq!(running.trim(), "3", "running RabbitMQ nodes");
    for job in ["redis-cluster-create", "rabbitmq-cluster-join"] {
        for c in stack.containers(job) {
            assert_eq!(
                inspect(&c, "{{.State.Status}} {{.State.ExitCode}}"),
                "exited 0",
                "{job}: {}",
                stack.ok(&["logs", job])
            );
        }
    }
    println!("[cluster] Redis Cluster of 6 nodes (3 masters) and 3 RabbitMQ nodes");

    let mut timeline = Timeline::start("cluster", &stack, want);
    let mut mark = |what: &str| timeline.mark(what);

    // A Redis master SIGKILLed: its replica takes over; the old master,
    // started again, rejoins as a replica.
    let victim = ["redis-2", "redis-3"]
        .into_iter()
        .find(|n| stack.redis_cli_on(n, &["role"]).starts_with("master"))
        .expect("redis-2 or redis-3 is a master");
    let victim_id = stack
        .redis_cli_on(victim, &["cluster", "myid"])
        .trim()
        .to_string();
    let container = stack.containers(victim)[0].clone();
    mark(&format!("docker kill -s KILL {victim} (a master)"));
    docker_ok(&["kill", "-s", "KILL", &container]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !failed_over(&stack, "redis", &victim_id) {
        assert!(
            Instant::now() < deadline,
            "no replica took over from {victim}: {}",
            stack.redis_cli(&["cluster", "nodes"])
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    mark(&format!("{victim} failed, its replica a master"));
    docker_ok(&["start", &container]);
    wait_healthy(&container, victim, Duration::from_secs(180));
    // It learns from the others that its slots have a newer master.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let role = stack.redis_cli_on(victim, &["role"]);
        if role.starts_with("slave") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{victim}, started again after its failover, is not a replica: {role}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    mark(&format!("{victim} started again, healthy, a replica"));

    // A RabbitMQ node SIGKILLed and started again: its quorum queue members
    // catch up, its clients reconnect to the other nodes.
    let rabbit = stack.containers("rabbitmq-2")[0].clone();
    mark("docker kill -s KILL rabbitmq-2");
    docker_ok(&["kill", "-s", "KILL", &rabbit]);
    std::thread::sleep(FAULT_SPAN);
    docker_ok(&["start", &rabbit]);
    wait_healthy(&rabbit, "rabbitmq-2", Duration::from_secs(180));
    let fetched = progress(&stack);
    mark(&format!(
        "rabbitmq-2 started again, healthy; {fetched} of {want} fetched"
    ));
    assert!(
        fetched < want,
        "the crawl ended ({fetched} of {want} fetched) before the last fault: \
         raise FAULT_CRAWL_DELAY_MS"
    );

    wait_idle(&stack);
    mark("idle");
    let queues = stack.ok(&[
        "exec",
        "-T",
        "rabbitmq",
        "rabbitmqctl",
        "-q",
        "list_queues",
        "name",
        "type",
    ]);
    let classic: Vec<&str> = queues
        .lines()
        .filter(|l| l.starts_with("crawler") && !l.contains("quorum"))
        .collect();
    assert!(
        queues.contains("quorum") && classic.is_empty(),
        "queues not quorum: {queues}"
    );
    check_crawl(&stack, &site, "cluster");
    check_texts_in_files(&stack, "cluster");
    stack.check_logs_hold_no_secret("cluster");
    timeline.print();
}
