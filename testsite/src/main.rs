//! `testsite`: serves the generated test site on 127.0.0.1 until killed.
//!
//! Prints the base URL on the first line of stdout, e.g.
//! `testsite --port 8080 --articles 500 --delay-ms 20`. In a container
//! (deploy/docker-compose.yml) it listens on every address and names itself
//! by its service name: `testsite --bind 0.0.0.0 --host-name testsite`.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use clap::Parser;
use testsite::{robots_txt_with_crawl_delay, serve, Site, SiteConfig};

#[derive(Debug, Parser)]
#[command(
    about = "Serves a generated, linked news site on 127.0.0.1 for crawler tests and benchmarks"
)]
struct Arguments {
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// The host name the site's absolute links to itself use instead of
    /// 127.0.0.1 (the name clients reach this server by).
    #[arg(long)]
    host_name: Option<String>,
    /// English articles.
    #[arg(long, default_value_t = 200)]
    articles: usize,
    /// Chinese GBK articles.
    #[arg(long, default_value_t = 20)]
    zh_articles: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Delay before every response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Link the hostile endpoints from the front page.
    #[arg(long)]
    link_hostile: bool,
    /// Add `Crawl-delay` (seconds) to robots.txt.
    #[arg(long)]
    crawl_delay: Option<f64>,
    /// Serve no robots.txt (404).
    #[arg(long, conflicts_with = "crawl_delay")]
    no_robots: bool,
    /// Write every page's metadata (expected text, links, duplicates) as JSON here.
    #[arg(long)]
    manifest: Option<std::path::PathBuf>,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let arguments = Arguments::parse();
    let defaults = SiteConfig::default();
    let config = SiteConfig {
        articles: arguments.articles,
        zh_articles: arguments.zh_articles,
        seed: arguments.seed,
        link_hostile: arguments.link_hostile,
        response_delay: Duration::from_millis(arguments.delay_ms),
        robots_txt: match (arguments.no_robots, arguments.crawl_delay) {
            (true, _) => None,
            (false, Some(seconds)) => Some(robots_txt_with_crawl_delay(seconds)),
            (false, None) => defaults.robots_txt.clone(),
        },
        ..defaults
    };
    let mut site = Site::generate(&config);
    if let Some(host) = &arguments.host_name {
        site.rename_host(host);
    }
    let handle = serve(site, SocketAddr::from((arguments.bind, arguments.port))).await?;
    if let Some(path) = &arguments.manifest {
        std::fs::write(path, serde_json::to_vec_pretty(handle.site().pages())?)?;
    }
    let mut stdout = std::io::stdout();
    match &arguments.host_name {
        Some(host) => writeln!(stdout, "http://{host}:{}", handle.port())?,
        None => writeln!(stdout, "{}", handle.base_url())?,
    }
    stdout.flush()?;
    tokio::signal::ctrl_c().await?;
    handle.shutdown();
    Ok(())
}
