//! Helpers for the integration tests: the real worker binaries as processes,
//! a fresh namespace per test on the real RabbitMQ and Redis, and the CLI.
//!
//! Every test gets its own namespace (queue and key prefix), so tests run side
//! by side on one broker and one Redis; [`TestEnv::cleanup`] deletes it.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use pipeline::{Broker, Store, StoredDocument};

pub mod canned;
pub mod chaos;
pub mod conformance;
pub mod services;
pub mod stub_site;

pub const AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
pub const REDIS_URL: &str = "redis://127.0.0.1:6379/";

/// The variable that moves every test using the shared Redis onto a Redis
/// Cluster: its seed nodes, comma-separated (`scripts/redis-cluster.sh
/// seeds`). Workers and the CLI then get `CRAWLER_REDIS_CLUSTER`, and
/// [`shared_store`] connects to the cluster.
pub const TEST_CLUSTER_VAR: &str = "CRAWLER_TEST_REDIS_CLUSTER";

/// The seed nodes of the Redis Cluster the tests run on instead of
/// [`REDIS_URL`], when [`TEST_CLUSTER_VAR`] is set.
pub fn test_cluster() -> Option<String> {
    std::env::var(TEST_CLUSTER_VAR)
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// The store of the tests' shared Redis: [`REDIS_URL`], or the cluster
/// of [`TEST_CLUSTER_VAR`].
pub async fn shared_store() -> Store {
    connect_store(REDIS_URL, test_cluster().as_deref()).await
}

/// The store at `redis_url`, or on the cluster of `cluster` (seed URLs,
/// comma-separated) when given.
pub async fn connect_store(redis_url: &str, cluster: Option<&str>) -> Store {
    let config = match cluster {
        Some(seeds) => pipeline::store::RedisConfig {
            cluster: pipeline::config::url_list(seeds),
            ..Default::default()
        },
        None => pipeline::store::RedisConfig {
            url: redis_url.to_string(),
            ..Default::default()
        },
    };
    Store::connect(&config)
        .await
        .unwrap_or_else(|e| panic!("connecting to the tests' Redis: {e}"))
}

/// The directory holding the workspace's binaries (`target/debug`), after
/// building them once per test process (a no-op when they are up to date).
pub fn bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/debug/deps/<test> → target/debug
        let dir = exe
            .parent()
            .and_then(|p| p.parent())
            .expect("target dir")
            .to_path_buf();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--manifest-path", manifest])
            .args([
                "-p",
                "frontier",
                "-p",
                "fetcher",
                "-p",
                "extractor",
                "-p",
                "contentseen",
            ])
            .args(["-p", "crawler", "-p", "testsite", "--bins"])
            // As the workspace's test build has it (this crate turns it
            // on), so the binaries are not rebuilt: `pipeline::fault`.
            .args(["--features", "pipeline/fault-points"])
            .status()
            .expect("running cargo build");
        assert!(status.success(), "building the binaries failed");
        dir
    })
    .clone()
}

pub fn bin(name: &str) -> PathBuf {
    bin_dir().join(name)
}

/// The settings of a test crawl named `crawl`: the defaults, without
/// delay between requests.
pub fn test_crawl(crawl: &str) -> pipeline::CrawlSpec {
    pipeline::CrawlSpec {
        name: crawl.into(),
        delay_ms: 0,
        ..pipeline::CrawlSpec::default()
    }
}

/// Stores [`test_crawl`]`(crawl)` in namespace `namespace` of `store`, as
/// `crawler seed` does, so the stages can read what [`fetch_task`]s name.
pub async fn register_test_crawl(store: &pipeline::Store, namespace: &str, crawl: &str) {
    let keys = pipeline::keys::Keys::new(namespace);
    pipeline::crawls::register(store, &keys, &test_crawl(crawl))
        .await
        .expect("storing the crawl's settings");
}

/// A first fetch task (depth `depth`, no redirect, no retry) of `url` in
/// the crawl [`test_crawl`]`(crawl)` (register it: [`register_test_crawl`]).
pub fn fetch_task(crawl: &str, url: &str, depth: u32) -> pipeline::FetchTask {
    pipeline::FetchTask {
        v: pipeline::messages::VERSION,
        crawl: test_crawl(crawl).reference(),
        url: url.to_string(),
        depth,
        redirects: 0,
        attempt: 0,
        recrawl: false,
        id: String::new(),
    }
}

/// What a process writes to stderr up to the first line that contains
/// `marker` (20 s at most), after which it is killed: what a worker says
/// as it starts, before it reaches any service.
pub fn stderr_until(mut command: Command, marker: &str) -> Vec<String> {
    let mut child = command
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting the binary");
    let stderr = child.stderr.take().expect("stderr");
    let marker = marker.to_string();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let done = line.contains(&marker);
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
    reader.join().expect("reader")
}

/// A worker process, killed when dropped.
pub struct Worker {
    pub name: String,
    child: Child,
}

impl Worker {
    /// Sends SIGKILL (the harshest way a worker can die).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().expect("waiting for worker")
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One test's namespace on the real services.
pub struct TestEnv {
    pub namespace: String,
    logs: PathBuf,
    /// The broker and Redis of the workers and the CLI: the shared
    /// [`AMQP_URL`] and [`REDIS_URL`] unless built by [`TestEnv::with_services`].
    pub amqp_url: String,
    pub redis_url: String,
    /// The Redis Cluster used instead of `redis_url` (its seed nodes,
    /// comma-separated): [`TEST_CLUSTER_VAR`]'s for the shared services,
    /// or a test's own ([`TestEnv::on_redis_cluster`]).
    pub redis_cluster: Option<String>,
    /// The type of the namespace's queues (`CRAWLER_QUEUE_TYPE`).
    pub queue_type: pipeline::topology::QueueType,
    /// Further variables of every command ([`TestEnv::with_var`]).
    vars: Vec<(String, String)>,
    /// Texts in segment files under this directory (`CRAWLER_TEXT_DIR` of
    /// every command), when [`TestEnv::with_text_files`] made it.
    pub text_dir: Option<PathBuf>,
}

impl TestEnv {
    /// This namespace with its documents' texts in segment files, in a
    /// directory of its own (for every worker and the CLI).
    pub fn with_text_files(mut self) -> TestEnv {
        let dir = self.logs.join("texts");
        std::fs::create_dir_all(&dir).expect("text dir");
        self.text_dir = Some(dir);
        self
    }

    pub fn new(name: &str) -> TestEnv {
        TestEnv::with_services(name, AMQP_URL, REDIS_URL)
    }

    /// This namespace on the Redis Cluster of `seeds` (comma-separated
    /// `redis://` URLs) instead of its Redis.
    pub fn on_redis_cluster(mut self, seeds: &str) -> TestEnv {
        self.redis_cluster = Some(seeds.to_string());
        self
    }

    /// This namespace with variable `name` set to `value` for every
    /// worker and `crawler` command.
    pub fn with_var(mut self, name: &str, value: &str) -> TestEnv {
        self.vars.push((name.to_string(), value.to_string()));
        self
    }

    /// This namespace with queues of type `queue_type`.
    pub fn with_queue_type(mut self, queue_type: pipeline::topology::QueueType) -> TestEnv {
        self.queue_type = queue_type;
        self
    }

    /// The namespace's store (its Redis, or its cluster).
    pub async fn store(&self) -> Store {
        connect_store(&self.redis_url, self.redis_cluster.as_deref()).await
    }

    /// The namespace's broker (its queue type).
    pub fn broker(&self) -> Broker {
        Broker::amqp(&self.amqp_url, &self.namespace).with_queue_type(self.queue_type)
    }

    /// A namespace on other services (a test's private RabbitMQ node and
    /// Redis, see [`services`]).
    pub fn with_services(name: &str, amqp_url: &str, redis_url: &str) -> TestEnv {
        let namespace = format!(
            "t-{name}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let logs = bin_dir().join("test-logs").join(&namespace);
        std::fs::create_dir_all(&logs).expect("log dir");
        TestEnv {
            namespace,
            logs,
            amqp_url: amqp_url.to_string(),
            redis_url: redis_url.to_string(),
            redis_cluster: if redis_url == REDIS_URL {
                test_cluster()
            } else {
                None
            },
            queue_type: pipeline::topology::QueueType::Classic,
            vars: Vec::new(),
            text_dir: None,
        }
    }

    /// Where the workers' logs go (`<binary>-<n>.log`).
    pub fn log_dir(&self) -> &std::path::Path {
        &self.logs
    }

    /// A command for `binary` (a worker or `crawler`) in this namespace.
    pub fn command(&self, binary: &str) -> Command {
        let mut c = Command::new(bin(binary));
        c.env("CRAWLER_AMQP_URL", &self.amqp_url)
            .env("CRAWLER_REDIS_URL", &self.redis_url)
            .env("CRAWLER_NAMESPACE", &self.namespace)
            .env("CRAWLER_ALLOW_PRIVATE", "1")
            .env("NO_PROXY", "*")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy");
        match &self.redis_cluster {
            Some(seeds) => c.env("CRAWLER_REDIS_CLUSTER", seeds),
            None => c.env_remove("CRAWLER_REDIS_CLUSTER"),
        };
        c.env("CRAWLER_QUEUE_TYPE", self.queue_type.name());
        c.envs(self.vars.iter().map(|(k, v)| (k, v)));
        match &self.text_dir {
            Some(dir) => c.env("CRAWLER_TEXT_DIR", dir),
            None => c.env_remove("CRAWLER_TEXT_DIR"),
        };
        c
    }

    /// Starts a worker binary (`frontier`, `fetcher`, `extractor`, `contentseen`).
    pub fn start(&self, binary: &str, extra_args: &[&str]) -> Worker {
        self.start_with_env(binary, extra_args, &[])
    }

    /// One of each worker.
    pub fn start_all(&self) -> Vec<Worker> {
        ["frontier", "fetcher", "extractor", "contentseen"]
            .iter()
            .map(|b| self.start(b, &[]))
            .collect()
    }

    /// Runs `crawler` with these arguments in this namespace.
    pub fn crawler(&self, args: &[&str]) -> Output {
        self.command("crawler")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("running crawler")
    }

    /// Runs `crawler`, panicking with its stderr unless it succeeds; returns stdout.
    pub fn crawler_ok(&self, args: &[&str]) -> String {
        succeeded(&self.crawler(args), format_args!("crawler {args:?}"))
    }

    /// `crawler run` writing to `out`, private addresses allowed and no
    /// delay between requests, with these further arguments (the seeds
    /// among them); the documents it wrote.
    pub fn run_locally(&self, out: &std::path::Path, args: &[&str]) -> Vec<StoredDocument> {
        let out_arg = out.to_str().expect("a UTF-8 path");
        let mut all = vec![
            "run",
            "--allow-private",
            "--delay-ms",
            "0",
            "--out",
            out_arg,
        ];
        all.extend_from_slice(args);
        self.crawler_ok(&all);
        parse_documents(&std::fs::read_to_string(out).expect("crawler run wrote its documents"))
    }

    /// Every stored document, through `crawler export`.
    pub fn export(&self) -> Vec<StoredDocument> {
        parse_documents(&self.crawler_ok(&["export"]))
    }

    /// Deletes the namespace's queues and keys.
    pub async fn cleanup(&self) {
        if let Ok(session) = self.broker().open().await {
            let _ = session.delete_topology().await;
        }
        {
            let store = self.store().await;
            let _ = store
                .delete_matching(&format!("{}:*", self.namespace))
                .await;
        }
    }
}

/// The document stored under `url` in the namespace of `keys` (texts in
/// the store); panics when none is stored.
pub async fn stored_document(
    store: &Store,
    keys: &pipeline::keys::Keys,
    url: &str,
) -> StoredDocument {
    pipeline::documents::Documents::new(store.clone(), keys.namespace(), None)
        .document(url)
        .await
        .expect("a readable stored document")
        .unwrap_or_else(|| panic!("{url} not stored"))
}

/// The fetch record of `url` (as `crawler query` shows it), if any.
pub async fn fetch_record(
    store: &Store,
    keys: &pipeline::keys::Keys,
    url: &str,
) -> Option<serde_json::Value> {
    let (key, field) = keys.url_record(pipeline::keys::url_hash(url));
    let record = store
        .one(pipeline::store::Op::HGet { key, field })
        .await
        .expect("redis")
        .data()
        .expect("reply")?;
    let compact = pipeline::once::section(&record, pipeline::once::FETCH_RECORD)?;
    let fetch = pipeline::messages::FetchRecord::from_compact(url, compact).ok()?;
    Some(serde_json::to_value(fetch).expect("a fetch record as JSON"))
}

/// Every fetch record of `namespace` (scanning its URL records: for
/// tests), by URL hash (`{:016x}` of `pipeline::keys::url_hash`); the
/// `url` field is the hash too.
pub async fn fetch_records(
    store: &Store,
    namespace: &str,
) -> std::collections::HashMap<String, serde_json::Value> {
    let mut out = std::collections::HashMap::new();
    for (h, record) in hash_fields(store, &format!("{namespace}:url:*")).await {
        let name = format!("{h:016x}");
        if let Some(fetch) = pipeline::once::section(&record, pipeline::once::FETCH_RECORD)
            .and_then(|c| pipeline::messages::FetchRecord::from_compact(&name, c).ok())
        {
            out.insert(name, serde_json::to_value(fetch).expect("JSON"));
        }
    }
    out
}

/// Every (URL hash, value) of the per-URL hashes matching `pattern`
/// (SCAN, then HGETALL: for tests).
async fn hash_fields(store: &Store, pattern: &str) -> Vec<(u64, Vec<u8>)> {
    let keys = store.keys_matching(pattern).await.expect("scan");
    let ops: Vec<pipeline::store::Op> = keys
        .iter()
        .map(|key| pipeline::store::Op::HGetAll { key: key.clone() })
        .collect();
    let mut out = Vec::new();
    for reply in store.exec(&ops).await.expect("read hashes") {
        for (field, value) in reply.pairs().expect("a hash") {
            let h = String::from_utf8_lossy(&field).parse::<i64>().unwrap_or(0) as u64;
            out.push((h, value.data().ok().flatten().unwrap_or_default()));
        }
    }
    out
}

/// How many document records `namespace` holds (scanning: for tests).
pub async fn document_records(store: &Store, namespace: &str) -> usize {
    hash_fields(store, &format!("{namespace}:doc:*"))
        .await
        .len()
}

/// How many entries the export logs of `keys`'s namespace hold.
pub async fn export_log_length(store: &Store, keys: &pipeline::keys::Keys) -> i64 {
    let ops: Vec<pipeline::store::Op> = keys
        .document_logs()
        .into_iter()
        .map(|key| pipeline::store::Op::LLen { key })
        .collect();
    let mut n = 0;
    for r in store.exec(&ops).await.expect("log lengths") {
        n += r.int().unwrap_or(0);
    }
    n
}

/// A fetch record of a final failure: neither a page nor a redirect, and
/// no retry to come (what the `failed` counter counts).
pub fn is_final_failure(record: &serde_json::Value) -> bool {
    !matches!(record["outcome"].as_str(), Some("ok") | Some("redirect"))
        && record["will_retry"].as_bool() == Some(false)
}

/// Parses JSON lines of stored documents.
pub fn parse_documents(jsonl: &str) -> Vec<StoredDocument> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad document line {l}: {e}")))
        .collect()
}

/// The original a stored document leads to through `duplicate_of` links.
pub fn root_of<'a>(
    docs: &'a std::collections::HashMap<String, StoredDocument>,
    url: &'a str,
) -> &'a str {
    let mut cur = url;
    for _ in 0..16 {
        match docs.get(cur).and_then(|d| d.duplicate_of.as_deref()) {
            Some(next) => cur = next,
            None => return cur,
        }
    }
    cur
}

impl Worker {
    /// The worker's process id (to read its memory use in `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The peak resident memory of process `pid` (`VmHWM`), in bytes; `None`
/// where `/proc` does not say.
pub fn peak_rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The paths a complete crawl of `site` from `/` to `max_depth` stores: every
/// reachable HTML page that answers 200 without redirecting.
pub fn expected_documents(
    site: &testsite::Site,
    max_depth: usize,
) -> std::collections::BTreeSet<String> {
    site.reachable("/", max_depth)
        .into_keys()
        .filter(|p| {
            let page = site
                .page_for_target(p)
                .unwrap_or_else(|| panic!("no page for reachable {p}"));
            page.status == 200
                && page.content_type.starts_with("text/html")
                && page.redirect_to.is_none()
        })
        .collect()
}

/// How many requests a polite, complete crawl of `site` from `/` to
/// `max_depth` makes per path: once per page, and for transient errors
/// (429, 5xx) once more per retry.
pub fn expected_fetches(
    site: &testsite::Site,
    max_depth: usize,
) -> std::collections::HashMap<String, usize> {
    site.reachable("/", max_depth)
        .into_keys()
        .map(|path| {
            let status = site.page_for_target(&path).map_or(404, |p| p.status);
            let n = if status == 429 || status >= 500 {
                1 + fetcher::http::DEFAULT_MAX_RETRIES as usize
            } else {
                1
            };
            (path, n)
        })
        .collect()
}

impl TestEnv {
    /// A namespace for tests that run a stage in process: nothing is built
    /// up front (the binaries are built on the first `crawler` or `start`).
    pub fn in_process(name: &str) -> TestEnv {
        let namespace = format!(
            "t-{name}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let logs = std::env::temp_dir()
            .join("crawler-test-logs")
            .join(&namespace);
        std::fs::create_dir_all(&logs).expect("log dir");
        TestEnv {
            namespace,
            logs,
            amqp_url: AMQP_URL.to_string(),
            redis_url: REDIS_URL.to_string(),
            redis_cluster: test_cluster(),
            queue_type: pipeline::topology::QueueType::Classic,
            vars: Vec::new(),
            text_dir: None,
        }
    }

    /// Seeds crawl `crawl` with `urls` (depth 5, no delay: the whole test
    /// site, fast; `extra` flags after those).
    pub fn seed(&self, crawl: &str, extra: &[&str], urls: &[String]) {
        let mut args = vec![
            "seed",
            "--crawl",
            crawl,
            "--max-depth",
            "5",
            "--delay-ms",
            "0",
        ];
        args.extend_from_slice(extra);
        args.extend(urls.iter().map(String::as_str));
        self.crawler_ok(&args);
    }

    /// [`TestEnv::seed`] of `url`, then waits until the workers are idle
    /// (240 s at most).
    pub fn crawl_until_idle(&self, crawl: &str, url: &str) {
        self.seed(crawl, &[], &[url.to_string()]);
        self.crawler_ok(&["stats", "--wait-idle", "--json", "--timeout-secs", "240"]);
    }

    /// [`TestEnv::in_process`] with what a stage run in this process on
    /// the real Redis needs: a store on it and the namespace's keys.
    pub async fn on_redis(name: &str) -> (TestEnv, pipeline::Store, pipeline::keys::Keys) {
        let env = TestEnv::in_process(name);
        let store = shared_store().await;
        let keys = pipeline::keys::Keys::new(&env.namespace);
        (env, store, keys)
    }
}

/// The small test site of the fetcher tests: every kind of page, a few of each, and the
/// hostile endpoints at full size (1 GiB body, 1 GiB gzip bomb, one byte per second,
/// headers that never come), served on 127.0.0.1 with the given robots.txt.
pub async fn serve_fetcher_site(robots_txt: Option<String>) -> testsite::ServerHandle {
    let site = testsite::Site::generate(&testsite::SiteConfig {
        articles: 12,
        zh_articles: 2,
        mirrors: 1,
        copies: 1,
        edits: 1,
        same_topic_pairs: 1,
        private_pages: 2,
        redirects: 2,
        robots_txt,
        hostile: testsite::HostileSettings::default(),
        ..testsite::SiteConfig::default()
    });
    serve_site(site).await
}

/// The generated test site of `articles` English and `zh_articles`
/// Chinese articles (everything else as by default), served on a free
/// port of 127.0.0.1.
pub async fn serve_news_site(articles: usize, zh_articles: usize) -> testsite::ServerHandle {
    serve_site(testsite::Site::generate(&testsite::SiteConfig {
        articles,
        zh_articles,
        ..testsite::SiteConfig::default()
    }))
    .await
}

/// `site`, served on a free port of 127.0.0.1.
pub async fn serve_site(site: testsite::Site) -> testsite::ServerHandle {
    testsite::serve(site, "127.0.0.1:0".parse().expect("address"))
        .await
        .expect("serve the test site")
}

impl TestEnv {
    /// [`TestEnv::start`] with extra environment variables (for example
    /// `pipeline::fault::ENV`, to arm a fault point).
    pub fn start_with_env(
        &self,
        binary: &str,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> Worker {
        let n = std::fs::read_dir(&self.logs)
            .map(|d| d.count())
            .unwrap_or(0);
        let log =
            std::fs::File::create(self.logs.join(format!("{binary}-{n}.log"))).expect("log file");
        let child = self
            .command(binary)
            .args(extra_args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {binary}: {e}"));
        Worker {
            name: binary.to_string(),
            child,
        }
    }

    /// The log files of this test's workers, concatenated (for assertion
    /// messages and for checking that a fault point was reached).
    pub fn logs(&self) -> String {
        let mut out = String::new();
        if let Ok(dir) = std::fs::read_dir(&self.logs) {
            let mut paths: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths {
                out.push_str(&format!("== {}\n", p.display()));
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
        out
    }
}

/// The stdout of a command that must have succeeded: else a panic naming
/// it (`what`) with its stderr.
pub fn succeeded(out: &Output, what: std::fmt::Arguments) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The SimHash value of a fingerprint; panics on an exact one (a test text
/// too short for SimHash).
pub fn sim_value(fingerprint: contentseen::simhash::Fingerprint) -> u64 {
    match fingerprint {
        contentseen::simhash::Fingerprint::Sim(v) => v,
        contentseen::simhash::Fingerprint::Exact(_) => {
            panic!("test texts are long enough for SimHash")
        }
    }
}

/// The SimHash of a test text (see [`sim_value`]).
pub fn sim(text: &str) -> u64 {
    sim_value(contentseen::simhash::sketch(text).fingerprint)
}

/// The body texts of the article pages of a generated test site with this
/// many articles.
pub fn article_bodies(articles: usize) -> Vec<String> {
    testsite::Site::generate(&testsite::SiteConfig {
        articles,
        ..testsite::SiteConfig::default()
    })
    .pages_of_kind(testsite::PageKind::Article)
    .filter_map(|p| p.body_text.clone())
    .collect()
}

/// The "story" of a served page: pages with the same story carry the same
/// body (copies, mirrors, light edits, query-string variants), and pages of
/// different stories must never be merged.
pub fn story(site: &testsite::Site, path_and_query: &str) -> String {
    let page = site
        .page_for_target(path_and_query)
        .unwrap_or_else(|| panic!("no page for {path_and_query}"));
    page.duplicate_of
        .clone()
        .unwrap_or_else(|| page.path.clone())
}

/// The path and query of `url` on the site at `base` (`url` itself when
/// it is on another site).
pub fn path_of(base: &str, url: &str) -> String {
    url.strip_prefix(base).unwrap_or(url).to_string()
}

/// Asserts the near-duplicate clusters: same story ⇔ same original.
pub fn check_clusters(site: &testsite::Site, base: &str, docs: &[StoredDocument]) {
    let by_url: std::collections::HashMap<String, StoredDocument> =
        docs.iter().map(|d| (d.url.clone(), d.clone())).collect();
    let mut root_story: std::collections::HashMap<String, String> =
        std::collections::HashMap::new();
    for d in docs {
        if !d.article {
            // A listing or a page with no article is never anybody's
            // near-duplicate (the index and its `?sort=latest` twin stay
            // two documents), and nothing points at it.
            assert_eq!(d.duplicate_of, None, "{} has no article", d.url);
            assert!(
                !docs
                    .iter()
                    .any(|o| o.duplicate_of.as_deref() == Some(d.url.as_str())),
                "a document points at {}, which has no article",
                d.url
            );
            continue;
        }
        let root = root_of(&by_url, &d.url).to_string();
        assert!(
            by_url.contains_key(&root),
            "{} points at {root}, which is not stored",
            d.url
        );
        let st = story(site, &path_of(base, &d.url));
        let root_st = story(site, &path_of(base, &root));
        assert_eq!(
            st, root_st,
            "{} (story {st}) was marked a duplicate of {root} (story {root_st}), distance {:?}",
            d.url, d.distance
        );
        // One original per story.
        if let Some(prev) = root_story.insert(root_st.clone(), root.clone()) {
            assert_eq!(
                prev, root,
                "story {root_st} has two originals: {prev} and {root}"
            );
        }
        if d.duplicate_of.is_none() {
            assert!(
                !d.text.is_empty() || d.url.contains("/error/"),
                "{} stored without text",
                d.url
            );
        } else {
            assert!(
                d.text.is_empty(),
                "a duplicate's text is stored again: {}",
                d.url
            );
            // Within its radius, or beyond it with the second signal agreeing.
            let within = d.distance.zip(d.radius).is_some_and(|(k, r)| k <= r);
            let confirmed = d.jaccard.is_some_and(|j| j >= 0.3);
            assert!(
                within || confirmed,
                "{}: {:?} {:?} {:?}",
                d.url,
                d.distance,
                d.radius,
                d.jaccard
            );
        }
    }
}

/// The body of `GET path` from 127.0.0.1:`port` (a worker's metrics
/// server), or empty when it answers nothing.
pub fn http_get(port: u16, path: &str) -> String {
    try_http_get(port, path).expect("GET from 127.0.0.1")
}

/// [`http_get`], or why it failed (nothing listens yet, ...).
pub fn try_http_get(port: u16, path: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default())
}

/// A free TCP port of 127.0.0.1 (for a worker's `--metrics-port`).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The value of the Prometheus sample `series` (name and labels, exactly as
/// exposed) in `text`, or 0 when absent.
pub fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0)
}
