//! `crawler seed`: seeds, with their crawl's settings, to the frontier queue.

use std::io::BufRead;

use anyhow::Context;
use clap::Args;
use pipeline::messages::{encode, new_id, UrlBatch, VERSION};
use pipeline::{Broker, CrawlSpec, Link, Queue};

/// Seeds per published message.
const SEEDS_PER_MESSAGE: usize = 1000;

/// A crawl's settings, the same for `crawler seed` and `crawler run`; they
/// travel with every message of the crawl.
#[derive(Args, Clone)]
pub struct CrawlArgs {
    /// The crawl these seeds start (tags every stored document).
    #[arg(long, default_value = "default")]
    pub crawl: String,
    /// Domains the crawl may follow links into (repeatable); default: the
    /// seeds' own hosts.
    #[arg(long = "allow-domain")]
    pub allow_domains: Vec<String>,
    /// Links deeper than this many hops from a seed are not followed.
    #[arg(long, default_value_t = 3)]
    pub max_depth: u32,
    /// At most this many pages fetched in this crawl.
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// At most this many pages fetched per host in this crawl.
    #[arg(long)]
    pub max_pages_per_host: Option<u64>,
    /// Least milliseconds between two requests to one host, cluster-wide
    /// (robots.txt Crawl-delay wins when larger).
    #[arg(long, default_value_t = pipeline::messages::DEFAULT_DELAY_MS)]
    pub delay_ms: u64,
    /// Follow only URLs matching this regular expression (repeatable: any).
    #[arg(long)]
    pub include: Vec<String>,
    /// Never follow URLs matching this regular expression (repeatable).
    #[arg(long)]
    pub exclude: Vec<String>,
    /// Another query parameter to strip from URLs (repeatable; `prefix*`).
    #[arg(long = "strip-param")]
    pub strip_params: Vec<String>,
    /// Sort query parameters, so their order does not make a new URL.
    #[arg(long)]
    pub sort_query: bool,
    /// Fetch every stored page again after this many seconds (the interval
    /// then doubles while a page is unchanged, halves when it changes).
    #[arg(long)]
    pub recrawl_secs: Option<u64>,
}

impl CrawlArgs {
    /// The crawl's settings; without allowed domains, the seeds' hosts.
    pub fn spec(&self, seeds: &[String]) -> anyhow::Result<CrawlSpec> {
        for pattern in self.include.iter().chain(&self.exclude) {
            regex::Regex::new(pattern).with_context(|| format!("bad pattern {pattern:?}"))?;
        }
        let mut domains: Vec<String> = self
            .allow_domains
            .iter()
            .map(|d| d.to_ascii_lowercase())
            .collect();
        if domains.is_empty() {
            for s in seeds {
                if let Ok(u) = frontier::normalize::normalize(s, None) {
                    if let Some(h) = u.host_str() {
                        if !domains.iter().any(|d| d == h) {
                            domains.push(h.to_string());
                        }
                    }
                }
            }
        }
        Ok(CrawlSpec {
            name: self.crawl.clone(),
            allow_domains: domains,
            max_depth: self.max_depth,
            max_pages: self.max_pages,
            delay_ms: self.delay_ms,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            max_pages_per_host: self.max_pages_per_host,
            strip_params: self.strip_params.clone(),
            sort_query: self.sort_query,
            recrawl_secs: self.recrawl_secs,
        })
    }
}

#[derive(Args)]
pub struct SeedArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// Also seed the URLs listed in the seed sites' sitemaps (robots.txt
    /// `Sitemap:` lines, else /sitemap.xml; indexes and gzip followed).
    #[arg(long)]
    pub sitemaps: bool,
    /// With --sitemaps: at most this many URLs from sitemaps.
    #[arg(long, default_value_t = 100_000)]
    pub sitemap_max_urls: usize,
    /// With --sitemaps: allow fetching them from private addresses.
    #[arg(long, env = "CRAWLER_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub allow_private: bool,
    /// Read seed URLs from this file, one per line.
    #[arg(long)]
    pub file: Option<std::path::PathBuf>,
    /// Seed URLs; `-` reads them from standard input.
    pub urls: Vec<String>,
}

/// Reads the seed list from the arguments, `--file` or stdin.
pub fn collect_seeds(
    urls: &[String],
    file: Option<&std::path::Path>,
) -> anyhow::Result<Vec<String>> {
    fn from_reader(r: &mut dyn BufRead, seeds: &mut Vec<String>) -> anyhow::Result<()> {
        for line in r.lines() {
            let line = line?;
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                seeds.push(line.to_string());
            }
        }
        Ok(())
    }
    let mut seeds = Vec::new();
    if let Some(path) = file {
        let f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        from_reader(&mut std::io::BufReader::new(f), &mut seeds)?;
    }
    for u in urls {
        if u == "-" {
            from_reader(&mut std::io::stdin().lock(), &mut seeds)?;
        } else {
            seeds.push(u.clone());
        }
    }
    if seeds.is_empty() {
        anyhow::bail!("no seed URLs given (arguments, --file or -)");
    }
    Ok(seeds)
}

/// The seed messages of a crawl.
pub fn seed_batches(spec: &CrawlSpec, seeds: &[String]) -> anyhow::Result<Vec<Vec<u8>>> {
    seeds
        .chunks(SEEDS_PER_MESSAGE)
        .map(|chunk| {
            Ok(encode(&UrlBatch {
                v: VERSION,
                id: new_id(),
                crawl: spec.clone(),
                depth: 0,
                seeds: true,
                source: None,
                redirects: 0,
                attempt: 0,
                rescheduled: false,
                links: chunk.iter().map(Link::new).collect(),
            })?)
        })
        .collect()
}

pub async fn run(service: &pipeline::ServiceConfig, args: SeedArgs) -> anyhow::Result<()> {
    let mut seeds = collect_seeds(&args.urls, args.file.as_deref())?;
    // The scope comes from the seeds given, not from what sitemaps list.
    let spec = args.crawl.spec(&seeds)?;
    if args.sitemaps {
        let found =
            crate::sitemaps::discover(&seeds, args.sitemap_max_urls, args.allow_private).await?;
        seeds.extend(found);
    }
    let payloads = seed_batches(&spec, &seeds)?;
    let session = Broker::amqp(&service.amqp_url, &service.namespace)
        .open()
        .await
        .context("connecting to RabbitMQ")?;
    // The crawl's settings, for `crawler stats` (progress against its limit).
    if let Ok(store) = pipeline::Store::redis(&service.redis_url).await {
        let keys = pipeline::keys::Keys::new(&service.namespace);
        let _ = store
            .one(pipeline::store::Op::Set {
                key: keys.crawl_spec(&spec.name),
                value: serde_json::to_vec(&spec)?,
                expire_ms: None,
            })
            .await;
    }
    session.publish(Queue::Frontier, &payloads).await?;
    eprintln!(
        "seeded {} URL(s) into crawl {:?} (domains: {}; max depth {}{})",
        seeds.len(),
        spec.name,
        spec.allow_domains.join(", "),
        spec.max_depth,
        spec.max_pages
            .map(|m| format!(", max pages {m}"))
            .unwrap_or_default()
    );
    Ok(())
}
