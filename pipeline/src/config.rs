//! The settings every binary reads, in one typed layer. Each setting is a
//! flag, also read from its `CRAWLER_*` environment variable, then from the
//! config file, then its default: flag, environment, file, default.
//!
//! The config file (`--config FILE` or `CRAWLER_CONFIG`) is TOML, read by
//! serde into [`Settings`]: its keys are the variables' names without
//! `CRAWLER_`, in lower case (`amqp_url`, `namespace`, `fetch_timeout`,
//! ...), and the crawl's settings by their flags' names (`max_depth`,
//! `allow_domain`, ...), at the top level for every binary or under a
//! `[frontier]`, `[fetcher]`, ... table for one. A value of the wrong type
//! is an error; an unknown key is warned about (with the key and the file)
//! and ignored. [`parse`] hands the file's values to clap as the defaults
//! of the arguments they set, so clap applies the precedence and parses
//! every layer with the same parser. Nothing writes the process's
//! environment.
use clap::Args;

/// The settings file: every binary takes it (read by [`parse`] before the
/// rest of the command line is parsed; this flag is for `--help` and the
/// parser).
#[derive(Debug, Clone, Args)]
pub struct ConfigFile {
    /// A TOML file of settings (keys: the `CRAWLER_*` variable names without
    /// the prefix, lower case, and the crawl settings' flag names; tables per
    /// binary; unknown keys are warned about).
    #[arg(long, env = "CRAWLER_CONFIG", global = true)]
    pub config: Option<std::path::PathBuf>,
}

/// Where the services are. Flattened into every worker's command line
/// (inside [`WorkerConfig`]) and into the `crawler` subcommands that talk to
/// the services.
#[derive(Debug, Clone, Args)]
pub struct ServiceConfig {
    /// RabbitMQ URL (default: RabbitMQ's own guest account on
    /// 127.0.0.1:5672, vhost /).
    #[arg(
        long,
        env = "CRAWLER_AMQP_URL",
        // The value may hold a password: `--help` names the variable only,
        // and not the default's either.
        hide_env_values = true,
        hide_default_value = true,
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f",
        global = true
    )]
    pub amqp_url: String,

    /// The type of the crawl's RabbitMQ queues: `classic` (the default:
    /// on one node a quorum queue replicates to no one and is slower for
    /// large messages) or `quorum` (on a RabbitMQ cluster: the queues
    /// survive a node). A namespace keeps the type it was declared with.
    #[arg(
        long,
        env = "CRAWLER_QUEUE_TYPE",
        value_enum,
        default_value = "classic",
        global = true
    )]
    pub queue_type: crate::topology::QueueType,

    /// Redis URL.
    #[arg(
        long,
        env = "CRAWLER_REDIS_URL",
        hide_env_values = true,
        default_value = "redis://127.0.0.1:6379/",
        global = true
    )]
    pub redis_url: String,

    /// A Redis Cluster instead of one Redis: its seed nodes, comma-separated
    /// `redis://host:port` URLs. When set, `--redis-url` is ignored.
    #[arg(
        long,
        env = "CRAWLER_REDIS_CLUSTER",
        hide_env_values = true,
        global = true
    )]
    pub redis_cluster: Option<String>,

    /// Replicas each write (and each read that decides an ack) must reach
    /// before a stage acks its message (`WAIT`), so that a master's
    /// failover loses nothing acked; 0 (the default) waits for none.
    #[arg(long, env = "CRAWLER_REDIS_WAIT", default_value_t = 0, global = true)]
    pub redis_wait: u32,

    /// Keep the stored documents' texts in segment files under this
    /// directory instead of in Redis (contentseen writes them, `crawler
    /// query` and `export` read them: it must be the same directory, shared
    /// when they run on different machines).
    #[arg(long, env = "CRAWLER_TEXT_DIR", global = true)]
    pub text_dir: Option<std::path::PathBuf>,

    /// Read the state a `crawler run --state DIR` left in DIR instead of
    /// Redis (its namespace and its texts under DIR; no service needed).
    #[arg(long, env = "CRAWLER_STATE", global = true)]
    pub state: Option<std::path::PathBuf>,

    /// The pages the namespace is expected to hold: it sizes the key
    /// families that grow with the crawl (`pipeline::scale`: fewer keys
    /// for a small crawl, as many as stay compact for a large one). The
    /// first worker to use a namespace fixes it; later values are ignored.
    #[arg(
        long,
        env = "CRAWLER_EXPECTED_PAGES",
        default_value_t = crate::scale::DEFAULT_EXPECTED_PAGES,
        global = true
    )]
    pub expected_pages: u64,

    /// Prefix of every queue and Redis key: crawls (and tests) in different
    /// namespaces never mix.
    #[arg(
        long,
        env = "CRAWLER_NAMESPACE",
        default_value = "crawler",
        global = true
    )]
    pub namespace: String,

    /// Log as JSON lines instead of text.
    #[arg(long, env = "CRAWLER_LOG_JSON", global = true, value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub log_json: bool,
}

/// The namespace of `crawler run`'s keys (in memory, or on disk under
/// `--state`).
pub const RUN_NAMESPACE: &str = "local";

/// Where the disk store of a `--state` directory is.
pub fn state_store(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("store")
}

/// Where the text segments of a `--state` directory are.
pub fn state_texts(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("texts")
}

impl ServiceConfig {
    /// These settings as they read a `--state` directory: `crawler run`'s
    /// namespace and the texts under it (unless `--text-dir` says where);
    /// unchanged without `--state`.
    pub fn with_state(mut self) -> ServiceConfig {
        if let Some(dir) = &self.state {
            self.namespace = RUN_NAMESPACE.to_string();
            if self.text_dir.is_none() {
                self.text_dir = Some(state_texts(dir));
            }
        }
        self
    }

    /// The configuration for printing at start-up: URLs without passwords.
    pub fn redacted(&self) -> String {
        let cluster = match &self.redis_cluster {
            Some(seeds) => format!(" redis_cluster={}", redact_urls(seeds)),
            None => String::new(),
        };
        format!(
            "amqp_url={} queue_type={} redis_url={}{cluster} redis_wait={} namespace={}",
            redact_urls(&self.amqp_url),
            self.queue_type.name(),
            redact_url(&self.redis_url),
            self.redis_wait,
            self.namespace,
        )
    }

    /// The broker the settings name: RabbitMQ at `amqp_url` (one node or
    /// a cluster's, comma-separated), queues of `queue_type`.
    pub fn broker(&self) -> crate::broker::Broker {
        crate::broker::Broker::amqp(&self.amqp_url, &self.namespace)
            .with_queue_type(self.queue_type)
    }

    /// Where the store is, as the settings say.
    pub fn redis_config(&self) -> crate::store::RedisConfig {
        crate::store::RedisConfig {
            url: self.redis_url.clone(),
            cluster: url_list(self.redis_cluster.as_deref().unwrap_or("")),
            wait_replicas: self.redis_wait,
            wait_timeout: None,
        }
    }

    /// Connects to the store (one Redis or a cluster), or opens the disk
    /// store of `--state`.
    pub async fn store(&self) -> Result<crate::store::Store, crate::store::StoreError> {
        if let Some(dir) = &self.state {
            return crate::store::Store::disk(&state_store(dir));
        }
        crate::store::Store::connect(&self.redis_config()).await
    }
}

/// A worker's settings: where the services are ([`ServiceConfig`]) and how
/// it consumes. Flattened into every worker's command line; the `crawler`
/// subcommands have only the services.
#[derive(Debug, Clone, Args)]
pub struct WorkerConfig {
    #[command(flatten)]
    pub service: ServiceConfig,

    /// Unacknowledged messages the broker hands this worker at once
    /// (default: the concurrency, so no delivered message waits unseen in a
    /// buffer and `crawler stats --wait-idle` sees every message in flight).
    #[arg(long, env = "CRAWLER_PREFETCH")]
    pub prefetch: Option<u16>,

    /// Messages this worker processes at once (default: the stage's own).
    #[arg(long, env = "CRAWLER_CONCURRENCY")]
    pub concurrency: Option<usize>,

    /// Serve Prometheus metrics on this port (`/metrics`); none if unset.
    #[arg(long, env = "CRAWLER_METRICS_PORT")]
    pub metrics_port: Option<u16>,

    /// The address the metrics server listens on (with `--metrics-port`):
    /// loopback by default, so a worker's metrics are not open to its
    /// network unless asked; `0.0.0.0` (or an interface's address) for a
    /// Prometheus on another machine or container.
    #[arg(long, env = "CRAWLER_METRICS_ADDR", default_value_t = DEFAULT_METRICS_ADDR)]
    pub metrics_addr: std::net::IpAddr,
}

/// Where a worker serves its metrics unless `--metrics-addr` says otherwise:
/// this machine only.
pub const DEFAULT_METRICS_ADDR: std::net::IpAddr =
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

impl WorkerConfig {
    /// Where the metrics server listens (`--metrics-addr`, `--metrics-port`);
    /// `None`: no metrics server.
    pub fn metrics_listen(&self) -> Option<std::net::SocketAddr> {
        self.metrics_port
            .map(|port| std::net::SocketAddr::new(self.metrics_addr, port))
    }

    /// The configuration for printing at start-up: URLs without passwords.
    pub fn redacted(&self) -> String {
        format!(
            "{} prefetch={} concurrency={} metrics={}",
            self.service.redacted(),
            self.prefetch
                .map(|p| p.to_string())
                .unwrap_or_else(|| "(as concurrency)".into()),
            self.concurrency
                .map(|c| c.to_string())
                .unwrap_or_else(|| "(stage default)".into()),
            self.metrics_listen()
                .map(|a| a.to_string())
                .unwrap_or_else(|| "none".into())
        )
    }
}

/// `scheme://user:secret@host` → `scheme://user:***@host`.
/// An error and its causes on one line, each said once: a cause whose text
/// the line already holds (an error that prints its source, and a library
/// error that wraps an I/O error and prints it too) is left out.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// The URLs of a comma-separated list (`CRAWLER_AMQP_URL`,
/// `CRAWLER_REDIS_CLUSTER`), trimmed, empty entries left out. A URL with
/// neither user nor password takes those of the first URL that has them,
/// so a cluster's credentials are written once
/// (`redis://:pw@a:6379,redis://b:6379`), as libpq's multi-host URLs do;
/// the nodes of one cluster share them.
pub fn url_list(list: &str) -> Vec<String> {
    let urls: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    let credentials = urls.iter().find_map(|u| {
        let u = url::Url::parse(u).ok()?;
        let has = !u.username().is_empty() || u.password().is_some();
        has.then(|| (u.username().to_string(), u.password().map(str::to_string)))
    });
    urls.iter()
        .map(|raw| {
            let (Some((user, password)), Ok(mut u)) = (&credentials, url::Url::parse(raw)) else {
                return raw.to_string();
            };
            if !u.username().is_empty() || u.password().is_some() {
                return raw.to_string();
            }
            match (u.set_username(user), u.set_password(password.as_deref())) {
                (Ok(()), Ok(())) => u.to_string(),
                // A URL that cannot carry credentials: as given.
                _ => raw.to_string(),
            }
        })
        .collect()
}

/// [`redact_url`] of every URL of a comma-separated list, joined again.
pub fn redact_urls(list: &str) -> String {
    url_list(list)
        .iter()
        .map(|u| redact_url(u))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => match u.set_password(Some("***")) {
            Ok(()) => u.to_string(),
            Err(()) => "(a URL with a password)".to_string(),
        },
        Ok(_) => url.to_string(),
        // Not a URL we can read: show nothing that could be a secret.
        Err(_) if url.contains('@') => "(a URL with credentials)".to_string(),
        Err(_) => url.to_string(),
    }
}

/// The binaries that read the config file, each from the top level and
/// from its own table.
pub const BINARIES: &[&str] = &["crawler", "frontier", "fetcher", "extractor", "contentseen"];

/// The help heading of the crawl's settings (`crawler seed`, `crawler
/// run`): the settings without a `CRAWLER_*` variable that the file sets
/// all the same, by their flag's name.
pub const CRAWL_SETTINGS: &str = "Crawl settings";

/// Every setting the config file may hold, typed: a key of the wrong type
/// is an error that names the file, a key not here is warned about and
/// ignored. Each is the flag of the same name (see [`setting_key`]); the
/// binaries that do not have a flag ignore its key.
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct Settings {
    // Where the services are ([`ServiceConfig`]), and how a worker
    // consumes ([`WorkerConfig`]).
    pub amqp_url: Option<String>,
    pub queue_type: Option<crate::topology::QueueType>,
    pub redis_url: Option<String>,
    pub redis_cluster: Option<String>,
    pub redis_wait: Option<u32>,
    pub text_dir: Option<std::path::PathBuf>,
    /// `crawler run --state`, and the state the other subcommands read.
    pub state: Option<std::path::PathBuf>,
    pub namespace: Option<String>,
    pub expected_pages: Option<u64>,
    pub prefetch: Option<u16>,
    pub concurrency: Option<usize>,
    pub metrics_port: Option<u16>,
    pub metrics_addr: Option<std::net::IpAddr>,
    pub log_json: Option<bool>,
    // The fetcher's (`allow_private` and `user_agent` also `crawler run`'s).
    pub allow_private: Option<bool>,
    pub user_agent: Option<String>,
    pub fetch_timeout: Option<f64>,
    pub connect_timeout: Option<f64>,
    pub max_body_bytes: Option<usize>,
    pub max_redirects: Option<usize>,
    pub max_url_bytes: Option<usize>,
    pub max_retries: Option<u32>,
    /// Put in the default User-Agent (the fetcher's, `crawler run`'s).
    pub contact: Option<String>,
    // WARC output (the fetcher keeps the raw exchange, contentseen and
    // `crawler run` write the files).
    pub warc_dir: Option<String>,
    pub warc_max_bytes: Option<u64>,
    // contentseen's (and `crawler query`'s).
    pub simhash_k: Option<u32>,
    // The crawl's settings, for `crawler seed` and `crawler run`.
    pub crawl: Option<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub allow_domain: Option<Vec<String>>,
    pub max_depth: Option<u32>,
    pub max_pages: Option<u64>,
    pub max_pages_per_host: Option<u64>,
    pub delay_ms: Option<u64>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub include: Option<Vec<String>>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub exclude: Option<Vec<String>>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub strip_param: Option<Vec<String>>,
    pub sort_query: Option<bool>,
    pub recrawl_secs: Option<u64>,
    /// `HOST=ENCODING` rules: an array, or one string of them
    /// comma-separated as in `CRAWLER_CHARSET_OVERRIDE`.
    #[serde(default, deserialize_with = "one_or_many")]
    pub charset_override: Option<Vec<String>>,
    /// Keys that are no setting: warned about, then ignored.
    #[serde(flatten, skip_serializing)]
    pub unknown: toml::Table,
}

impl Settings {
    /// Whether `key` is a setting here: a table is no setting's value, so
    /// a known key refuses it while an unknown one lands in `unknown`.
    pub fn knows(key: &str) -> bool {
        let mut probe = toml::Table::new();
        probe.insert(key.to_string(), toml::Value::Table(toml::Table::new()));
        <Settings as serde::Deserialize>::deserialize(toml::Value::Table(probe)).is_err()
    }
}

/// The setting keys of `command`'s arguments, in every subcommand, that
/// [`Settings`] does not hold: a flag given a `CRAWLER_*` variable or put
/// under [`CRAWL_SETTINGS`] must be added there too, or the file could
/// not set it. [`parse_from`] asserts there is none in debug builds.
pub fn keys_without_setting(command: &clap::Command) -> Vec<String> {
    let mut missing: Vec<String> = command
        .get_arguments()
        .filter_map(setting_key)
        .filter(|k| k != "config" && !Settings::knows(k))
        .collect();
    for sub in command.get_subcommands() {
        missing.extend(keys_without_setting(sub));
    }
    missing.sort();
    missing.dedup();
    missing
}

/// A list setting as an array of strings, or as one string of them
/// comma-separated (the form of its environment variable).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(Some(match serde::Deserialize::deserialize(d)? {
        OneOrMany::One(s) => s.split(',').map(|v| v.trim().to_string()).collect(),
        OneOrMany::Many(v) => v,
    }))
}

/// What a config file holds for one binary: its top level with the
/// binary's own table over it.
#[derive(Debug, Default, Clone)]
pub struct FileLayer {
    /// The file, for messages (`None`: no file named).
    pub path: Option<std::path::PathBuf>,
    /// The settings the file gives this binary.
    pub settings: Settings,
    /// The keys the file holds that are no setting (`fetcher.timeout`,
    /// `fetchr`): warned about by [`FileLayer::warn_unknown`].
    pub unknown: Vec<String>,
}

impl FileLayer {
    /// The settings of TOML `text` for `binary`. A value of the wrong type
    /// is an error; unknown keys are in [`FileLayer::unknown`]. The tables
    /// of the other binaries are not read.
    pub fn from_toml(text: &str, binary: &str) -> anyhow::Result<FileLayer> {
        let mut top: toml::Table = text.parse()?;
        let mut own = toml::Table::new();
        for name in BINARIES {
            match top.remove(*name) {
                None => {}
                Some(toml::Value::Table(t)) if *name == binary => own = t,
                Some(toml::Value::Table(_)) => {}
                Some(_) => anyhow::bail!("`{name}` must be a table ([{name}])"),
            }
        }
        let typed = |table: toml::Table, at: &str| -> anyhow::Result<Settings> {
            serde::Deserialize::deserialize(toml::Value::Table(table))
                .map_err(|e: toml::de::Error| anyhow::anyhow!("{at}{}", e.message()))
        };
        let top_settings = typed(top.clone(), "")?;
        let own_settings = typed(own.clone(), &format!("[{binary}]: "))?;
        let mut unknown: Vec<String> = top_settings.unknown.keys().cloned().collect();
        unknown.extend(own_settings.unknown.keys().map(|k| format!("{binary}.{k}")));
        // The binary's table over the top level, key by key.
        top.extend(own);
        let mut settings = typed(top, "")?;
        settings.unknown.clear();
        Ok(FileLayer {
            path: None,
            settings,
            unknown,
        })
    }

    /// The file named by `--config` (or `CRAWLER_CONFIG`), read for
    /// `binary`; an empty layer when none is named. A file that cannot be
    /// read or parsed is an error that names it.
    pub fn read(path: Option<std::path::PathBuf>, binary: &str) -> anyhow::Result<FileLayer> {
        let Some(path) = path else {
            return Ok(FileLayer::default());
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("reading config file {}: {e}", path.display()))?;
        let layer = FileLayer::from_toml(&text, binary)
            .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?;
        Ok(FileLayer {
            path: Some(path),
            ..layer
        })
    }

    /// The file's values by key, as the strings clap parses (a list: one
    /// string per item).
    fn values(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        let Ok(table) = toml::Table::try_from(&self.settings) else {
            return Default::default();
        };
        table
            .into_iter()
            .map(|(key, value)| {
                let strings = match value {
                    toml::Value::String(s) => vec![s],
                    toml::Value::Array(items) => items
                        .into_iter()
                        .map(|i| match i {
                            toml::Value::String(s) => s,
                            other => other.to_string(),
                        })
                        .collect(),
                    other => vec![other.to_string()],
                };
                (key, strings)
            })
            .collect()
    }

    /// Sets up logs ([`init_tracing`]) and warns there about the file's
    /// unknown keys: the first thing a binary does after [`parse`].
    pub fn start_logs(&self, json: bool) {
        init_tracing(json);
        self.warn_unknown();
    }

    /// Logs a warning for each unknown key, naming the key and the file.
    pub fn warn_unknown(&self) {
        for line in self.unknown_lines() {
            tracing::warn!("{line}");
        }
    }

    /// The warnings [`FileLayer::warn_unknown`] logs.
    pub fn unknown_lines(&self) -> Vec<String> {
        let file = self
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        self.unknown
            .iter()
            .map(|key| format!("config file {file}: unknown key `{key}` ignored"))
            .collect()
    }
}

/// The config file key of a command-line argument: its `CRAWLER_*`
/// variable's name without the prefix, in lower case (`--timeout-secs`
/// of the fetcher is `fetch_timeout`, as `CRAWLER_FETCH_TIMEOUT`); for a
/// crawl setting without a variable ([`CRAWL_SETTINGS`]), its flag's name
/// with `_` for `-` (`max_depth`). Other arguments have none.
pub fn setting_key(arg: &clap::Arg) -> Option<String> {
    if let Some(env) = arg.get_env() {
        return env
            .to_str()?
            .strip_prefix("CRAWLER_")
            .map(str::to_ascii_lowercase);
    }
    let crawl = arg.get_help_heading() == Some(CRAWL_SETTINGS);
    arg.get_long()
        .filter(|_| crawl)
        .map(|long| long.replace('-', "_"))
}

/// `command` with the file's values as the defaults of the arguments they
/// set, in every subcommand: clap then takes a flag first, its variable
/// next, the file's value next and the built-in default last, and parses
/// each with the argument's own parser. A variable that is set but empty
/// counts as unset: the argument stops reading it.
pub fn with_file(command: clap::Command, file: &FileLayer) -> clap::Command {
    apply_values(command, &file.values())
}

fn apply_values(
    mut command: clap::Command,
    values: &std::collections::BTreeMap<String, Vec<String>>,
) -> clap::Command {
    let ids: Vec<clap::Id> = command
        .get_arguments()
        .map(|a| a.get_id().clone())
        .collect();
    for id in ids {
        command = command.mut_arg(id, |mut arg| {
            let empty = arg
                .get_env()
                .and_then(std::env::var_os)
                .is_some_and(|v| v.is_empty());
            if let Some(strings) = setting_key(&arg).and_then(|k| values.get(&k)) {
                arg = arg.default_values(strings.clone());
            }
            if empty {
                arg = arg.env(None::<&'static str>);
            }
            arg
        });
    }
    let subcommands: Vec<String> = command
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in subcommands {
        command = command.mut_subcommand(name, |c| apply_values(c, values));
    }
    command
}

/// The file named by `--config FILE`, `--config=FILE` or `CRAWLER_CONFIG`
/// (an empty variable names none): read before clap parses, because the
/// file sets the defaults clap parses with.
pub fn config_path(args: &[std::ffi::OsString]) -> Option<std::path::PathBuf> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--config" {
            return it.next().map(Into::into);
        }
        if let Some(p) = a.to_str().and_then(|a| a.strip_prefix("--config=")) {
            return Some(p.into());
        }
    }
    std::env::var_os("CRAWLER_CONFIG")
        .filter(|v| !v.is_empty())
        .map(Into::into)
}

/// `binary`'s command line `P`, with every layer: flags, then `CRAWLER_*`
/// variables, then the config file, then the defaults. Call first in
/// `main`; then [`FileLayer::start_logs`]. Exits
/// as clap does on `--help`, `--version` and a bad command line.
pub fn parse<P: clap::Parser>(binary: &str) -> anyhow::Result<(P, FileLayer)> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let file = FileLayer::read(config_path(&args), binary)?;
    let parsed = parse_from(args, &file).unwrap_or_else(|e| e.exit());
    Ok((parsed, file))
}

/// The command line of a worker binary without flags of its own: the
/// worker's settings and `--config`. Read by [`start_worker`].
#[derive(clap::Parser)]
#[command(version)]
struct WorkerArgs {
    #[command(flatten)]
    worker: WorkerConfig,
    #[command(flatten)]
    _config_file: ConfigFile,
}

/// The start of a worker binary that has no flags of its own (named
/// `binary`, described by `about` in `--help`): its [`WorkerConfig`] read
/// from every layer as [`parse`] does, then its logs started.
pub fn start_worker(binary: &'static str, about: &'static str) -> anyhow::Result<WorkerConfig> {
    use clap::CommandFactory;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let file = FileLayer::read(config_path(&args), binary)?;
    let command = WorkerArgs::command()
        .name(binary)
        .about(about)
        .long_about(None);
    let parsed: WorkerArgs = parse_command(command, args, &file).unwrap_or_else(|e| e.exit());
    file.start_logs(parsed.worker.service.log_json);
    Ok(parsed.worker)
}

/// [`parse`] over given arguments and file layer.
pub fn parse_from<P: clap::Parser>(
    args: Vec<std::ffi::OsString>,
    file: &FileLayer,
) -> Result<P, clap::Error> {
    parse_command(P::command(), args, file)
}

/// [`parse_from`] with `P`'s command as given (renamed, described).
fn parse_command<P: clap::FromArgMatches>(
    command: clap::Command,
    args: Vec<std::ffi::OsString>,
    file: &FileLayer,
) -> Result<P, clap::Error> {
    // A flag with a `CRAWLER_*` variable that `Settings` lacks could not be
    // set from the file: caught by any debug run of the binary (the tests').
    debug_assert!(
        keys_without_setting(&command).is_empty(),
        "flags missing from config::Settings: {:?}",
        keys_without_setting(&command)
    );
    let mut matches = with_file(command, file).try_get_matches_from(args)?;
    P::from_arg_matches_mut(&mut matches)
}

/// Sets up `tracing` logs (RUST_LOG filter; by default `info`, the embedded store's
/// engine at `warn`).
pub fn init_tracing(json: bool) {
    use tracing_subscriber::EnvFilter;
    // The embedded store's engine says at `info` each partition it opens
    // and recovers: six lines before every `crawler query --state`.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,fjall=warn,lsm_tree=warn"));
    // Colours only for a terminal: not in files, pipes and log collectors.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    if json {
        let _ = builder.json().try_init();
    } else {
        let _ = builder.try_init();
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_error_chain_says_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("redis at {url}: {source}")]
        struct Outer {
            url: String,
            #[source]
            source: std::io::Error,
        }
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let e = anyhow::Error::new(Outer {
            url: "redis://h/".into(),
            source: io,
        })
        .context("connecting to Redis");
        let line = error_chain(e.as_ref());
        assert_eq!(
            line,
            "connecting to Redis: redis at redis://h/: Connection refused"
        );
        assert_eq!(line.matches("Connection refused").count(), 1);
    }
    use super::*;

    const FILE: &str = r#"
        amqp_url = "amqp://u:p@mq:5672/%2f"
        namespace = "news"
        concurrency = 8
        max_depth = 7
        colour = "blue"
        [fetcher]
        concurrency = 128
        allow_private = true
        fetch_timeout = 20
        fetch_timout = 21
        [frontier]
        concurrency = "not read by the fetcher"
        [fetchr]
        concurrency = 1
    "#;

    #[test]
    fn a_worker_reads_the_top_level_and_its_own_table() {
        let f = FileLayer::from_toml(FILE, "fetcher").unwrap();
        assert_eq!(
            f.settings.amqp_url.as_deref(),
            Some("amqp://u:p@mq:5672/%2f")
        );
        assert_eq!(f.settings.namespace.as_deref(), Some("news"));
        assert_eq!(f.settings.concurrency, Some(128));
        assert_eq!(f.settings.allow_private, Some(true));
        assert_eq!(f.settings.fetch_timeout, Some(20.0));
        let c = FileLayer::from_toml(FILE, "contentseen").unwrap();
        assert_eq!(c.settings.concurrency, Some(8));
        assert_eq!(c.settings.allow_private, None);
        // Another binary's table is read by that binary: a wrong type there
        // is its error.
        assert!(FileLayer::from_toml(FILE, "frontier")
            .unwrap_err()
            .to_string()
            .contains("[frontier]"));
        assert!(FileLayer::from_toml("not = [toml", "x").is_err());
        assert!(FileLayer::from_toml("fetcher = 3", "fetcher").is_err());
    }

    #[test]
    fn unknown_keys_are_named_with_the_file() {
        let mut f = FileLayer::from_toml(FILE, "fetcher").unwrap();
        assert_eq!(f.unknown, ["colour", "fetchr", "fetcher.fetch_timout"]);
        f.path = Some("/etc/crawler.toml".into());
        assert_eq!(
            f.unknown_lines()[2],
            "config file /etc/crawler.toml: unknown key `fetcher.fetch_timout` ignored"
        );
    }

    #[test]
    fn the_example_file_holds_only_known_keys() {
        let text = include_str!("../../deploy/crawler.toml.example");
        for binary in BINARIES {
            let f = FileLayer::from_toml(text, binary).unwrap();
            assert!(f.unknown.is_empty(), "{binary}: {:?}", f.unknown);
        }
    }

    #[test]
    fn a_known_key_is_told_from_an_unknown_one() {
        for key in [
            "amqp_url",
            "concurrency",
            "log_json",
            "fetch_timeout",
            "allow_domain",
            "charset_override",
            "warc_dir",
        ] {
            assert!(Settings::knows(key), "{key}");
        }
        assert!(!Settings::knows("fetch_timout"));
        assert!(!Settings::knows("config"));
    }

    #[test]
    fn list_settings_take_an_array_or_a_comma_separated_string() {
        let f = FileLayer::from_toml(
            "charset_override = \"a.com=gbk, b.com=big5\"\n[crawler]\ninclude = [\"x\", \"y\"]",
            "crawler",
        )
        .unwrap();
        assert_eq!(
            f.settings.charset_override,
            Some(vec!["a.com=gbk".into(), "b.com=big5".into()])
        );
        assert_eq!(f.settings.include, Some(vec!["x".into(), "y".into()]));
    }

    /// A command line like a binary's: a setting with a variable, a crawl
    /// setting by its flag name, and an argument the file never sets.
    #[derive(clap::Parser, Debug)]
    struct Toy {
        /// Its variable must be unset in tests: the other layers decide.
        #[arg(long, env = "CRAWLER_CONCURRENCY", default_value_t = 1)]
        concurrency: usize,
        #[arg(long, default_value_t = 5)]
        timeout_secs: u64,
        // Last: its help heading holds for what follows.
        #[command(flatten)]
        crawl: ToyCrawl,
    }

    #[derive(clap::Args, Debug)]
    #[command(next_help_heading = CRAWL_SETTINGS)]
    struct ToyCrawl {
        #[arg(long, default_value_t = 3)]
        max_depth: u32,
        #[arg(long = "allow-domain")]
        allow_domains: Vec<String>,
        #[arg(long)]
        sort_query: bool,
    }

    fn toy(args: &[&str], file: &str) -> Toy {
        assert!(
            std::env::var_os("CRAWLER_CONCURRENCY").is_none(),
            "unset CRAWLER_CONCURRENCY to run this test"
        );
        let layer = FileLayer::from_toml(file, "fetcher").unwrap();
        let argv = std::iter::once("toy").chain(args.iter().copied());
        parse_from(argv.map(Into::into).collect(), &layer).unwrap()
    }

    #[test]
    fn precedence_is_flag_then_file_then_default() {
        let t = toy(&[], "");
        assert_eq!(
            (t.concurrency, t.crawl.max_depth, t.timeout_secs),
            (1, 3, 5)
        );
        assert!(t.crawl.allow_domains.is_empty() && !t.crawl.sort_query);
        let file = "max_depth = 9\nallow_domain = [\"a.com\", \"b.com\"]\nsort_query = true\ntimeout_secs = 50\nconcurrency = 2\n[fetcher]\nconcurrency = 4\n";
        let t = toy(&[], file);
        assert_eq!((t.concurrency, t.crawl.max_depth), (4, 9));
        assert_eq!(t.crawl.allow_domains, ["a.com", "b.com"]);
        assert!(t.crawl.sort_query);
        // Not a setting (no variable, not a crawl setting): the file's key
        // does nothing.
        assert_eq!(t.timeout_secs, 5);
        let t = toy(
            &[
                "--max-depth",
                "2",
                "--allow-domain",
                "c.com",
                "--concurrency",
                "3",
            ],
            file,
        );
        assert_eq!((t.concurrency, t.crawl.max_depth), (3, 2));
        assert_eq!(t.crawl.allow_domains, ["c.com"]);
    }

    #[test]
    fn the_config_path_comes_from_the_flag_in_either_form() {
        let args = |a: &[&str]| {
            a.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert_eq!(
            config_path(&args(&["x", "--config", "a.toml", "run"])),
            Some("a.toml".into())
        );
        assert_eq!(
            config_path(&args(&["x", "run", "--config=b.toml"])),
            Some("b.toml".into())
        );
    }

    #[test]
    fn metrics_listen_on_loopback_unless_told_otherwise() {
        #[derive(clap::Parser)]
        struct Worker {
            #[command(flatten)]
            worker: WorkerConfig,
        }
        let listen = |args: &[&str]| {
            let args = std::iter::once("worker").chain(args.iter().copied());
            <Worker as clap::Parser>::try_parse_from(args).map(|w| w.worker.metrics_listen())
        };
        assert_eq!(listen(&[]).unwrap(), None);
        assert_eq!(
            listen(&["--metrics-port", "9100"]).unwrap(),
            Some("127.0.0.1:9100".parse().unwrap())
        );
        assert_eq!(
            listen(&["--metrics-port", "9100", "--metrics-addr", "0.0.0.0"]).unwrap(),
            Some("0.0.0.0:9100".parse().unwrap())
        );
        assert_eq!(
            listen(&["--metrics-port", "9100", "--metrics-addr", "::1"]).unwrap(),
            Some("[::1]:9100".parse().unwrap())
        );
        assert!(listen(&["--metrics-addr", "localhost:9100"]).is_err());
    }

    #[test]
    fn url_lists_share_the_first_credentials() {
        assert_eq!(
            url_list(" redis://:pw@a:6379 , redis://b:6379,,redis://u:other@c:6379/ ,"),
            [
                "redis://:pw@a:6379",
                "redis://:pw@b:6379",
                "redis://u:other@c:6379/"
            ]
        );
        assert_eq!(
            url_list("amqp://h1:5672/%2f,amqp://crawler:s3cret@h2:5672/%2f"),
            [
                "amqp://crawler:s3cret@h1:5672/%2f",
                "amqp://crawler:s3cret@h2:5672/%2f"
            ]
        );
        assert_eq!(
            url_list("redis://a:1,redis://b:2"),
            ["redis://a:1", "redis://b:2"]
        );
        assert!(url_list(" , ").is_empty());
        assert_eq!(
            redact_urls("amqp://u:p@h1/%2f,amqp://h2/%2f"),
            "amqp://u:***@h1/%2f,amqp://u:***@h2/%2f"
        );
    }

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact_url("amqp://guest:guest@127.0.0.1:5672/%2f"),
            "amqp://guest:***@127.0.0.1:5672/%2f"
        );
        assert_eq!(
            redact_url("redis://127.0.0.1:6379/"),
            "redis://127.0.0.1:6379/"
        );
    }
}
