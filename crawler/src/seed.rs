//! `crawler seed`: seeds, with their crawl's settings, to the frontier queue.

use std::io::BufRead;

use anyhow::Context;
use clap::Args;
use pipeline::messages::{encode, UrlBatch};
use pipeline::{CrawlRef, CrawlSpec, Link, Queue};

/// Seeds per published message.
const SEEDS_PER_MESSAGE: usize = 1000;

/// A crawl's settings, the same for `crawler seed` and `crawler run`; they
/// travel with every message of the crawl. The config file sets them by
/// their flags' names (`max_depth = 5`), under this help heading.
#[derive(Args, Clone)]
#[command(next_help_heading = pipeline::config::CRAWL_SETTINGS)]
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
    /// Decode this site's pages as ENCODING whatever they declare:
    /// `HOST=ENCODING`, or `*.DOMAIN=ENCODING` for DOMAIN and every host
    /// under it (repeatable; in the config file `charset_override = [...]`).
    /// The document records the rule that decided.
    #[arg(
        long = "charset-override",
        env = "CRAWLER_CHARSET_OVERRIDE",
        value_delimiter = ',',
        value_name = "HOST=ENCODING"
    )]
    pub charset_overrides: Vec<String>,
}

impl CrawlArgs {
    /// The crawl's settings; without allowed domains, the seeds' hosts.
    pub fn spec(&self, seeds: &[String]) -> anyhow::Result<CrawlSpec> {
        for pattern in self.include.iter().chain(&self.exclude) {
            regex::Regex::new(pattern).with_context(|| format!("bad pattern {pattern:?}"))?;
        }
        // Checked here, once, and sent in canonical form to every worker.
        let charset_overrides = charset::overrides::parse_all(&self.charset_overrides)?
            .iter()
            .map(ToString::to_string)
            .collect();
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
            charset_overrides,
        })
    }
}

#[derive(Args)]
pub struct SeedArgs {
    #[command(flatten)]
    pub source: SeedSource,
    /// With --sitemaps: allow fetching them from private addresses.
    #[arg(long, env = "CRAWLER_ALLOW_PRIVATE", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub allow_private: bool,
    /// Last: the heading of the crawl settings holds for what follows.
    #[command(flatten)]
    pub crawl: CrawlArgs,
}

/// Where a crawl's seeds come from: `crawler seed` and `crawler run` take
/// the same.
#[derive(Args)]
pub struct SeedSource {
    /// Also seed the URLs listed in the seed sites' sitemaps (robots.txt
    /// `Sitemap:` lines, else /sitemap.xml; indexes and gzip followed).
    #[arg(long)]
    pub sitemaps: bool,
    /// With --sitemaps: at most this many URLs from sitemaps.
    #[arg(long, default_value_t = 100_000)]
    pub sitemap_max_urls: usize,
    /// Read seed URLs from this file, one per line.
    #[arg(long)]
    pub file: Option<std::path::PathBuf>,
    /// Seed URLs; `-` reads them from standard input.
    pub urls: Vec<String>,
}

impl SeedSource {
    /// The crawl's spec (its scope from the seeds given, not from what
    /// sitemaps list) and every seed, those found in sitemaps included.
    pub async fn collect(
        &self,
        crawl: &CrawlArgs,
        allow_private: bool,
    ) -> anyhow::Result<(CrawlSpec, Vec<String>)> {
        let mut seeds = collect_seeds(&self.urls, self.file.as_deref())?;
        let spec = crawl.spec(&seeds)?;
        if self.sitemaps {
            let found =
                crate::sitemaps::discover(&seeds, self.sitemap_max_urls, allow_private).await?;
            seeds.extend(found);
        }
        Ok((spec, seeds))
    }
}

/// A seed as given, made a crawlable URL: `example.com/x` becomes
/// `http://example.com/x`; anything that is not an http(s) URL with a host
/// is refused with the reason.
pub fn check_seed(seed: &str) -> Result<String, String> {
    // `mailto:x`, `ftp://x` have a scheme; `host:8080/x` has a port.
    let has_scheme = seed.contains("://")
        || seed.split_once(':').is_some_and(|(s, rest)| {
            !s.is_empty()
                && !s.contains('.')
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-".contains(c))
                && !rest.starts_with(|c: char| c.is_ascii_digit())
        });
    let host_like = seed.contains('.') || seed.starts_with("localhost");
    let candidate = if has_scheme {
        seed.to_string()
    } else if host_like && !seed.contains(char::is_whitespace) {
        format!("http://{seed}")
    } else {
        return Err("not a URL (give http://host/path, or host.tld)".into());
    };
    let url =
        frontier::normalize::normalize(&candidate, None).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "scheme {:?}: only http and https are crawled",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("no host".into());
    }
    Ok(url.to_string())
}

/// Reads the seed list from the arguments, `--file` or stdin, made URLs by
/// [`check_seed`]. Refused seeds are reported on stderr with where they
/// came from (argument, or file and line number); an error when none is
/// left.
pub fn collect_seeds(
    urls: &[String],
    file: Option<&std::path::Path>,
) -> anyhow::Result<Vec<String>> {
    fn from_reader(
        r: &mut dyn BufRead,
        source: &str,
        seeds: &mut Vec<(String, String)>,
    ) -> anyhow::Result<()> {
        for (n, line) in r.lines().enumerate() {
            let line = line.with_context(|| format!("reading {source}"))?;
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                seeds.push((format!("{source} line {}", n + 1), line.to_string()));
            }
        }
        Ok(())
    }
    let mut given: Vec<(String, String)> = Vec::new();
    if let Some(path) = file {
        let f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        from_reader(
            &mut std::io::BufReader::new(f),
            &path.display().to_string(),
            &mut given,
        )?;
    }
    for (i, u) in urls.iter().enumerate() {
        if u == "-" {
            from_reader(&mut std::io::stdin().lock(), "stdin", &mut given)?;
        } else {
            given.push((format!("argument {}", i + 1), u.clone()));
        }
    }
    if given.is_empty() {
        anyhow::bail!("no seed URLs given (arguments, --file or -)");
    }
    let (mut seeds, mut refused) = (Vec::new(), 0usize);
    for (source, seed) in &given {
        match check_seed(seed) {
            Ok(url) => seeds.push(url),
            Err(why) => {
                refused += 1;
                if refused <= 20 {
                    eprintln!("{source}: {seed:?} refused: {why}");
                }
            }
        }
    }
    if refused > 20 {
        eprintln!("... and {} more refused", refused - 20);
    }
    if seeds.is_empty() {
        anyhow::bail!(
            "none of the {} seed(s) given is an http(s) URL",
            given.len()
        );
    }
    Ok(seeds)
}

/// The seed messages of a crawl (its settings stored first:
/// [`pipeline::crawls::register`]).
pub fn seed_batches(crawl: &CrawlRef, seeds: &[String]) -> anyhow::Result<Vec<Vec<u8>>> {
    seeds
        .chunks(SEEDS_PER_MESSAGE)
        .map(|chunk| {
            Ok(encode(&UrlBatch {
                seeds: true,
                ..UrlBatch::new(crawl, 0, chunk.iter().map(Link::new).collect())
            })?)
        })
        .collect()
}

pub async fn run(service: &pipeline::ServiceConfig, args: SeedArgs) -> anyhow::Result<()> {
    let (spec, seeds) = args.source.collect(&args.crawl, args.allow_private).await?;
    let session = service
        .broker()
        .open()
        .await
        .context("connecting to RabbitMQ")?;
    let store = service.store().await.context("connecting to Redis")?;
    let keys = pipeline::keys::Keys::new(&service.namespace);
    // The frontier would drop a cancelled crawl's seeds without a word.
    let states = pipeline::crawls::read_states(&store, &keys).await;
    match states.ok().and_then(|s| s.get(&spec.name).copied()) {
        Some(pipeline::crawls::CrawlState::Cancelled) => anyhow::bail!(
            "crawl {:?} was cancelled: its messages are dropped; seed a crawl of another name \
             (or `crawler reset` the namespace)",
            spec.name
        ),
        Some(pipeline::crawls::CrawlState::Paused) => eprintln!(
            "crawl {:?} is paused: its URLs wait until `crawler resume --crawl {}`",
            spec.name, spec.name
        ),
        _ => {}
    }
    // The crawl's settings, which every message names (and `crawler
    // crawls` shows), before any message.
    let crawl = pipeline::crawls::register(&store, &keys, &spec)
        .await
        .context("storing the crawl's settings in Redis")?;
    let payloads = seed_batches(&crawl, &seeds)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_urls_or_refused_with_a_reason() {
        for (seed, url) in [
            ("example.com", "http://example.com/"),
            ("example.com/a?b=1", "http://example.com/a?b=1"),
            ("https://Example.com", "https://example.com/"),
            ("localhost:8080/x", "http://localhost:8080/x"),
        ] {
            assert_eq!(check_seed(seed).ok().as_deref(), Some(url), "{seed:?}");
        }
        for seed in [
            "not-a-url",
            "ftp://x",
            "",
            "http://",
            "mailto:a@b.c",
            "a b.c",
        ] {
            assert_eq!(check_seed(seed).ok(), None, "{seed:?}");
        }
    }

    #[test]
    fn a_file_of_junk_is_refused_line_by_line_and_fails_when_nothing_is_left() {
        let dir = std::env::temp_dir().join(format!("seeds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("seeds.txt");
        std::fs::write(
            &path,
            "# comment\nexample.org\nnot a url\nftp://x\n\nhttp://ok.test/p\n",
        )
        .expect("write");
        let seeds = collect_seeds(&[], Some(&path)).expect("two valid seeds");
        assert_eq!(seeds, vec!["http://example.org/", "http://ok.test/p"]);
        std::fs::write(&path, "junk\nftp://x\n").expect("write");
        let err = collect_seeds(&[], Some(&path)).expect_err("no valid seed");
        assert!(err.to_string().contains("none of the 2"), "{err}");
        assert!(collect_seeds(&["".into()], None).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
