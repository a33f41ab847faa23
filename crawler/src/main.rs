//! `crawler`: the user's command line.
//!
//! - `seed`: publish seed URLs (with their crawl's settings) to the frontier.
//! - `run`: the whole pipeline in this process over in-memory queues and store.
//! - `query`, `stats`, `export`: read what the cluster stored in Redis.
//! - `crawls`, `pause`, `resume`, `cancel`, `reset`: list and steer the
//!   crawls of a namespace, or empty it.
//! - `health`: whether this host's worker keeps its heartbeat (healthchecks).
//! - `extract`, `charset`: debug one saved page without any service.
//! - `completions`: a shell completion script.
//!
//! Only the subcommands that talk to RabbitMQ or Redis take the service
//! settings ([`pipeline::ServiceConfig`], under the help heading
//! "Services").
//!
//! Each subcommand lives in its own module; this file only parses and dispatches.

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

/// jemalloc, not the system's allocator: `crawler run` hands page-sized buffers between
/// threads all the time, and glibc's per-thread arenas kept free fragments (limited to two
/// arenas, glibc's peak RSS fell from 401 to 286 MB, and the crawl slowed from 602 to 475
/// pages/s; `STATE_BENCH_PAGES=30000 STATE_BENCH_COMPARE=0 cargo bench -p evaluation
/// --bench state`). jemalloc replaced mimalloc (tuned: purging at once, arenas committed as
/// used, no huge pages) on 2026-11-29: the same bench, interleaved, peak RSS 195.4 and 198.4
/// MB against 240.5 and 244.4 MB, 2.40 and 2.30 against 2.71 and 2.66 ms of CPU a page.
/// mimalloc's statistics had put half of its RSS in pages it kept, not in live data
/// (README, issue 33). The feature `system-allocator` leaves it out, for heap profilers
/// that see only the system's `malloc` (heaptrack).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its first allocation (before `main`): freed pages go back
/// to the system after a second (`dirty_decay_ms`; at once cost a third more CPU a page,
/// for a peak of 179 against 195 MB at 30,000 pages) by a background thread rather than on
/// the allocating threads, at most four arenas (the machine has two cores; one arena a
/// thread keeps more free memory apart), and no transparent huge pages (which the kernel
/// zeroes 2 MB at a time: a short command would pay for them).
#[cfg(not(feature = "system-allocator"))]
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
static malloc_conf: Option<&'static std::ffi::c_char> = Some(
    // SAFETY: a pointer to the first byte of a static, NUL-terminated string, which is
    // what jemalloc reads this symbol as.
    unsafe { &*JEMALLOC_OPTIONS.as_ptr() },
);

/// What [`malloc_conf`] points at.
#[cfg(not(feature = "system-allocator"))]
const JEMALLOC_OPTIONS: &std::ffi::CStr =
    c"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:4,thp:never";

mod control;
mod dead_letters;
mod export;
mod health;
mod memory_log;
mod page_tools;
mod query;
mod run;
mod seed;
mod sitemaps;
mod stats;

use clap::{Args, CommandFactory, Parser, Subcommand};
use pipeline::crawls::CrawlState;

#[derive(Parser)]
#[command(
    name = "crawler",
    version,
    about = "A distributed web crawler with a near-duplicate filter",
    after_help = "Examples:\n  crawler run --allow-private http://127.0.0.1:8080/ --max-pages 200 > crawl.jsonl   # one process, no services\n  crawler seed https://example.com/ --crawl news --max-pages 10000    # to the running workers\n  crawler stats --watch\n  crawler query --why https://example.com/a-repost.html\n\nThe subcommands that talk to RabbitMQ and Redis list their settings under \"Services\"."
)]
struct Cli {
    #[command(flatten)]
    _config_file: pipeline::config::ConfigFile,
    #[command(subcommand)]
    command: Command,
}

/// A subcommand's own arguments and, under their own help heading, where
/// the services are: only the subcommands that talk to RabbitMQ or Redis
/// take them.
#[derive(Args)]
struct WithServices<A: Args> {
    #[command(flatten)]
    args: A,
    #[command(flatten, next_help_heading = "Services")]
    service: pipeline::ServiceConfig,
}

#[derive(Subcommand)]
enum Command {
    /// Publish seed URLs to the frontier queue.
    #[command(
        after_help = "Examples:\n  crawler seed https://example.com/ --crawl news --max-pages 10000\n  crawler seed --file seeds.txt --allow-domain example.com --max-depth 5\n  crawler seed https://example.com/ --sitemaps --delay-ms 2000"
    )]
    Seed(WithServices<seed::SeedArgs>),
    /// Crawl in this process (no RabbitMQ or Redis needed) and print every
    /// stored document as a JSON line.
    #[command(
        after_help = "Examples:\n  crawler run --allow-private http://127.0.0.1:8080/ --max-pages 200 > crawl.jsonl\n  crawler run https://example.com/ --max-depth 2 --delay-ms 1000 > crawl.jsonl"
    )]
    Run(run::RunArgs),
    /// Show the stored document of a URL, or its near-duplicates.
    #[command(
        after_help = "Examples:\n  crawler query https://example.com/story.html\n  crawler query --duplicates https://example.com/story.html\n  crawler query --why https://mirror.example.net/story.html\n  crawler query --why https://mirror.example.net/story.html --from crawl.jsonl   # a crawler run's output\n  echo \"some article text\" | crawler query --text"
    )]
    Query(WithServices<query::QueryArgs>),
    /// Queue depths and page counters.
    #[command(
        after_help = "Examples:\n  crawler stats\n  crawler stats --watch\n  crawler stats --wait-idle --timeout-secs 600 --json"
    )]
    Stats(WithServices<stats::StatsArgs>),
    /// Every crawl of the namespace with its state and counters.
    #[command(
        after_help = "States: running, paused, cancelled, finished-idle (every URL released has its outcome and every page fetched is stored).\n\nExamples:\n  crawler crawls\n  crawler crawls --json"
    )]
    Crawls(WithServices<control::CrawlsArgs>),
    /// Release no URL of a crawl until `crawler resume`; other crawls go on.
    /// Its messages already in RabbitMQ queues are finished.
    #[command(after_help = "Examples:\n  crawler pause --crawl news")]
    Pause(WithServices<control::CrawlArgs>),
    /// Release a paused crawl's URLs again.
    #[command(after_help = "Examples:\n  crawler resume --crawl news")]
    Resume(WithServices<control::CrawlArgs>),
    /// Stop a crawl for good: its queued URLs are dropped, and its messages
    /// still in RabbitMQ queues are acked without work. Other crawls go on;
    /// its stored documents stay.
    #[command(after_help = "Examples:\n  crawler cancel --crawl news")]
    Cancel(WithServices<control::CrawlArgs>),
    /// Delete everything a namespace holds (every key in Redis, its
    /// RabbitMQ queues); refuses without --yes, and while its workers live
    /// unless --force.
    #[command(after_help = "Examples:\n  crawler reset --namespace test --yes")]
    Reset(WithServices<control::ResetArgs>),
    /// Every stored document as JSON lines.
    #[command(
        after_help = "Examples:\n  crawler export > documents.jsonl\n  crawler export --only originals > originals.jsonl\n  crawler export --crawl news --cursor 1200 > new.jsonl   # after an earlier export's cursor"
    )]
    Export(WithServices<export::ExportArgs>),
    /// The messages a stage gave up on, with the reason on each, as JSON
    /// lines; `--replay` sends them back to their stage.
    #[command(
        after_help = "Examples:\n  crawler dead-letters\n  crawler dead-letters --stage fetch --replay"
    )]
    DeadLetters(WithServices<dead_letters::DeadLettersArgs>),
    /// Decode and extract saved pages; one JSON line per file.
    #[command(
        after_help = "Examples:\n  crawler extract page.html\n  crawler extract --url https://example.com/a.html page.html"
    )]
    Extract(page_tools::ExtractArgs),
    /// Show the charset vote for saved pages; one JSON line per file.
    #[command(
        after_help = "Examples:\n  crawler charset page.html\n  crawler charset --header-charset iso-8859-1 page.html"
    )]
    Charset(page_tools::CharsetArgs),
    /// Exit 0 when a worker on this host has a fresh heartbeat (for
    /// container healthchecks).
    #[command(after_help = "Examples:\n  crawler health\n  crawler health --host fetcher-2")]
    Health(WithServices<health::HealthArgs>),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  crawler completions bash > /etc/bash_completion.d/crawler\n  crawler completions zsh > \"${fpath[1]}/_crawler\"\n  crawler completions fish > ~/.config/fish/completions/crawler.fish"
    )]
    Completions {
        /// The shell: bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
}

impl Command {
    /// Whether logs are JSON lines: the subcommand's service setting, or
    /// for those without services `CRAWLER_LOG_JSON`, else the file's
    /// `log_json`.
    fn log_json(&self, file: &pipeline::config::FileLayer) -> bool {
        match self {
            Command::Seed(c) => c.service.log_json,
            Command::Query(c) => c.service.log_json,
            Command::Stats(c) => c.service.log_json,
            Command::Export(c) => c.service.log_json,
            Command::DeadLetters(c) => c.service.log_json,
            Command::Health(c) => c.service.log_json,
            Command::Crawls(c) => c.service.log_json,
            Command::Pause(c) | Command::Resume(c) | Command::Cancel(c) => c.service.log_json,
            Command::Reset(c) => c.service.log_json,
            Command::Run(_)
            | Command::Extract(_)
            | Command::Charset(_)
            | Command::Completions { .. } => match std::env::var("CRAWLER_LOG_JSON") {
                Ok(v) if !v.is_empty() => {
                    matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
                }
                _ => file.settings.log_json.unwrap_or(false),
            },
        }
    }
}

fn main() {
    let (cli, file) = match pipeline::config::parse::<Cli>("crawler") {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("crawler: {}", pipeline::config::error_chain(e.as_ref()));
            std::process::exit(2);
        }
    };
    file.start_logs(cli.command.log_json(&file));
    let result = runtime(&cli.command).and_then(|rt| rt.block_on(dispatch(cli.command)));
    if let Err(e) = result {
        let line = pipeline::config::error_chain(e.as_ref());
        eprintln!("crawler: {line}");
        if let Some(what_to_do) = what_to_do(&line) {
            eprintln!("crawler: {what_to_do}");
        }
        std::process::exit(1);
    }
}

/// The runtime a subcommand runs on: `run`'s stages on threads of their own (the
/// extractor's parsing blocks its thread, `block_in_place`); every other subcommand on this
/// thread alone, as a client of one or two connections: it starts no worker threads and
/// hands no reply from one thread to another. `crawler query` of a URL not stored took 4.8–5.9
/// against 6.4–7.5 ms of CPU (`perf stat -r 50`, three interleaved rounds, load average 6).
fn runtime(command: &Command) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = match command {
        Command::Run(_) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    Ok(builder.enable_all().build()?)
}

async fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Seed(c) => seed::run(&c.service, c.args).await,
        Command::Run(a) => run::run(a).await,
        Command::Query(c) => query::run(&c.service.with_state(), c.args).await,
        Command::Stats(c) => stats::run(&c.service.with_state(), c.args).await,
        Command::Export(c) => export::run(&c.service.with_state(), c.args).await,
        Command::DeadLetters(c) => dead_letters::run(&c.service.with_state(), c.args).await,
        Command::Extract(a) => page_tools::extract(a),
        Command::Charset(a) => page_tools::charset(a),
        Command::Health(c) => health::run(&c.service.with_state(), c.args).await,
        Command::Crawls(c) => control::list(&c.service.with_state(), c.args).await,
        Command::Pause(c) => control::steer(&c.service, c.args, CrawlState::Paused).await,
        Command::Resume(c) => control::steer(&c.service, c.args, CrawlState::Running).await,
        Command::Cancel(c) => control::steer(&c.service, c.args, CrawlState::Cancelled).await,
        Command::Reset(c) => control::reset(&c.service, c.args).await,
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "crawler",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    }
}

/// What a user can do about an error, when the error says which service
/// could not be reached.
fn what_to_do(error: &str) -> Option<&'static str> {
    let unreachable = [
        "Connection refused",
        "timed out",
        "failed to lookup address",
        "No route to host",
    ]
    .iter()
    .any(|s| error.contains(s));
    if !unreachable {
        None
    } else if error.contains("rabbitmq at") {
        Some(
            "RabbitMQ is not reachable there: start it (scripts/ensure-services.sh, or see the README), \
             point --amqp-url / CRAWLER_AMQP_URL at it, or use `crawler run` for a crawl in one process",
        )
    } else if error.contains("redis at") {
        Some(
            "Redis is not reachable there: start it (scripts/ensure-services.sh, or see the README), \
             point --redis-url / CRAWLER_REDIS_URL at it, or use `crawler run` for a crawl in one process",
        )
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::config::{parse_from, FileLayer};

    fn cli(args: &[&str], file: &str) -> Cli {
        let layer = FileLayer::from_toml(file, "crawler").unwrap();
        let argv = std::iter::once("crawler").chain(args.iter().copied());
        parse_from(argv.map(Into::into).collect(), &layer).unwrap()
    }

    #[test]
    fn every_setting_of_the_command_line_can_come_from_the_file() {
        let missing = pipeline::config::keys_without_setting(&Cli::command());
        assert!(missing.is_empty(), "not in config::Settings: {missing:?}");
    }

    #[test]
    fn the_crawl_settings_come_from_the_file_under_the_flags() {
        let file = "crawl = \"news\"\nmax_depth = 7\n[crawler]\nallow_domain = [\"a.com\"]\ndelay_ms = 250\nsort_query = true\n";
        let Command::Seed(seed) = cli(&["seed", "http://a.com/"], file).command else {
            panic!("not seed");
        };
        let c = &seed.args.crawl;
        assert_eq!(
            (c.crawl.as_str(), c.max_depth, c.delay_ms),
            ("news", 7, 250)
        );
        assert_eq!(c.allow_domains, ["a.com"]);
        assert!(c.sort_query);
        let Command::Run(run) = cli(&["run", "--max-depth", "1", "http://a.com/"], file).command
        else {
            panic!("not run");
        };
        assert_eq!((run.crawl.max_depth, run.crawl.delay_ms), (1, 250));
        // `export --crawl` filters; it is no crawl setting and the file's
        // `crawl` leaves it alone.
        let Command::Export(export) = cli(&["export"], file).command else {
            panic!("not export");
        };
        assert_eq!(export.args.crawl, None);
    }

    /// jemalloc read [`JEMALLOC_OPTIONS`]: each option holds as written.
    #[cfg(not(feature = "system-allocator"))]
    #[test]
    fn the_allocator_takes_its_options() {
        fn read<T: Default>(name: &std::ffi::CStr) -> T {
            crate::memory_log::read(name).unwrap_or_else(|| panic!("mallctl {name:?}"))
        }
        assert!(read::<bool>(c"opt.background_thread"));
        assert_eq!(read::<isize>(c"opt.dirty_decay_ms"), 1000);
        assert_eq!(read::<isize>(c"opt.muzzy_decay_ms"), 0);
        assert_eq!(read::<u32>(c"opt.narenas"), 4);
        let thp: *const std::ffi::c_char = read::<usize>(c"opt.thp") as *const _;
        // SAFETY: jemalloc's option strings are static and NUL-terminated.
        assert_eq!(unsafe { std::ffi::CStr::from_ptr(thp) }, c"never");
    }
}
