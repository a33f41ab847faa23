//! `crawler seed --sitemaps`: more seeds from the sites' sitemaps — the
//! `Sitemap:` lines of each seed origin's robots.txt, else its
//! `/sitemap.xml` — following sitemap indexes, plain or gzip. Fetched with
//! the fetcher's client, so the same limits and SSRF guard apply.

use std::collections::{HashSet, VecDeque};

use fetcher::http::{Client, FetchSettings};
use frontier::sitemap::{parse, robots_sitemaps, Sitemap, MAX_SITEMAP_BYTES};
use url::Url;

/// Sitemap files read per seeding, at most (indexes can nest).
pub const MAX_SITEMAP_FILES: usize = 1000;
/// Redirects followed to a sitemap or robots.txt.
const MAX_REDIRECTS: usize = 5;

/// The page URLs the seeds' sitemaps list, at most `max_urls`.
pub async fn discover(
    seeds: &[String],
    max_urls: usize,
    allow_private: bool,
) -> anyhow::Result<Vec<String>> {
    let client = Client::new(FetchSettings {
        allow_private,
        ..FetchSettings::default()
    })?;
    let mut origins: Vec<Url> = Vec::new();
    for s in seeds {
        if let Ok(u) = frontier::normalize::normalize(s, None) {
            let origin = u.join("/").unwrap_or(u);
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
    }
    let mut queue: VecDeque<Url> = VecDeque::new();
    for origin in &origins {
        let mut listed = Vec::new();
        if let Ok(robots) = origin.join("/robots.txt") {
            match client
                .get_following(&robots, MAX_REDIRECTS, 500 * 1024)
                .await
            {
                Ok(r) if (200..300).contains(&r.status) => {
                    listed = robots_sitemaps(&String::from_utf8_lossy(&r.body));
                }
                Ok(_) => {}
                Err(e) => eprintln!("sitemaps: {robots}: {e}"),
            }
        }
        if listed.is_empty() {
            listed.push(format!("{}sitemap.xml", origin.as_str()));
        }
        queue.extend(listed.iter().filter_map(|l| Url::parse(l).ok()));
    }

    let mut seen_files = HashSet::new();
    let mut urls = Vec::new();
    let mut seen_urls = HashSet::new();
    while let Some(file) = queue.pop_front() {
        if urls.len() >= max_urls || seen_files.len() >= MAX_SITEMAP_FILES {
            break;
        }
        if !seen_files.insert(file.clone()) {
            continue;
        }
        let body = match client
            .get_following(&file, MAX_REDIRECTS, MAX_SITEMAP_BYTES)
            .await
        {
            Ok(r) if (200..300).contains(&r.status) => r.body,
            Ok(r) => {
                eprintln!("sitemaps: {file}: HTTP {}", r.status);
                continue;
            }
            Err(e) => {
                eprintln!("sitemaps: {file}: {e}");
                continue;
            }
        };
        match parse(&body) {
            Ok(Sitemap::Urls(list)) => {
                for u in list {
                    if urls.len() >= max_urls {
                        break;
                    }
                    if seen_urls.insert(u.clone()) {
                        urls.push(u);
                    }
                }
            }
            Ok(Sitemap::Index(list)) => {
                queue.extend(list.iter().filter_map(|l| Url::parse(l).ok()))
            }
            Err(e) => eprintln!("sitemaps: {file}: {e}"),
        }
    }
    eprintln!(
        "sitemaps: {} URL(s) from {} file(s)",
        urls.len(),
        seen_files.len()
    );
    Ok(urls)
}
