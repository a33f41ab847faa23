//! `crawler`: the user's command line.
//!
//! - `seed`: publish seed URLs (with their crawl's settings) to the frontier.
//! - `run`: the whole pipeline in this process over in-memory queues and store.
//! - `query`, `stats`, `export`: read what the cluster stored in Redis.
//! - `health`: whether this host's worker keeps its heartbeat (healthchecks).
//! - `extract`, `charset`: debug one saved page without any service.
//!
//! Each subcommand lives in its own module; this file only parses and dispatches.

mod dead_letters;
mod export;
mod health;
mod page_tools;
mod query;
mod run;
mod seed;
mod sitemaps;
mod stats;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "crawler",
    version,
    about = "A distributed web crawler with a near-duplicate filter"
)]
struct Cli {
    #[command(flatten)]
    service: pipeline::ServiceConfig,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Publish seed URLs to the frontier queue.
    Seed(seed::SeedArgs),
    /// Crawl in this process (no RabbitMQ or Redis needed) and print every
    /// stored document as a JSON line.
    Run(run::RunArgs),
    /// Show the stored document of a URL, or its near-duplicates.
    Query(query::QueryArgs),
    /// Queue depths and page counters.
    Stats(stats::StatsArgs),
    /// Every stored document as JSON lines.
    Export(export::ExportArgs),
    /// The messages a stage gave up on, with the reason on each, as JSON
    /// lines; `--replay` sends them back to their stage.
    DeadLetters(dead_letters::DeadLettersArgs),
    /// Decode and extract saved pages; one JSON line per file.
    Extract(page_tools::ExtractArgs),
    /// Show the charset vote for saved pages; one JSON line per file.
    Charset(page_tools::CharsetArgs),
    /// Exit 0 when a worker on this host has a fresh heartbeat (for
    /// container healthchecks).
    Health(health::HealthArgs),
}

#[tokio::main]
async fn main() {
    if let Err(e) = pipeline::config::apply_config_file("crawler") {
        eprintln!("crawler: {}", pipeline::config::error_chain(e.as_ref()));
        std::process::exit(2);
    }
    let cli = Cli::parse();
    pipeline::config::init_tracing(cli.service.log_json);
    let result = match cli.command {
        Command::Seed(a) => seed::run(&cli.service, a).await,
        Command::Run(a) => run::run(a).await,
        Command::Query(a) => query::run(&cli.service, a).await,
        Command::Stats(a) => stats::run(&cli.service, a).await,
        Command::Export(a) => export::run(&cli.service, a).await,
        Command::DeadLetters(a) => dead_letters::run(&cli.service, a).await,
        Command::Extract(a) => page_tools::extract(a),
        Command::Charset(a) => page_tools::charset(a),
        Command::Health(a) => health::run(&cli.service, a).await,
    };
    if let Err(e) = result {
        eprintln!("crawler: {}", pipeline::config::error_chain(e.as_ref()));
        std::process::exit(1);
    }
}
