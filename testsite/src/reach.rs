//! What a polite crawler scoped to the test server should fetch: robots.txt
//! rules and breadth-first reachability over the generated links.

use std::collections::{BTreeMap, VecDeque};

use url::Url;

use crate::site::{Site, PORT_PLACEHOLDER};

/// Port assumed for links of a site not yet bound by `serve`; only needs to
/// be the same on both sides of the comparison.
const UNBOUND_PORT: u16 = 9;

/// The `User-agent: *` rules of a robots.txt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RobotsRules {
    /// (allow, path prefix); the longest matching prefix wins, allow on ties.
    rules: Vec<(bool, String)>,
    /// `Crawl-delay` in seconds, if given.
    pub crawl_delay_secs: Option<f64>,
}

impl RobotsRules {
    /// Parses the groups that apply to every user agent (`User-agent: *`).
    pub fn parse(robots_txt: &str) -> Self {
        let mut parsed = Self::default();
        let mut group_applies = false;
        let mut previous_was_user_agent = false;
        for line in robots_txt.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((field, value)) = line.split_once(':') else {
                continue;
            };
            let (field, value) = (field.trim().to_ascii_lowercase(), value.trim());
            if field == "user-agent" {
                let applies = value == "*";
                group_applies = if previous_was_user_agent {
                    group_applies || applies
                } else {
                    applies
                };
                previous_was_user_agent = true;
                continue;
            }
            previous_was_user_agent = false;
            if !group_applies {
                continue;
            }
            match field.as_str() {
                "disallow" if !value.is_empty() => parsed.rules.push((false, value.to_string())),
                "allow" if !value.is_empty() => parsed.rules.push((true, value.to_string())),
                "crawl-delay" => parsed.crawl_delay_secs = value.parse().ok(),
                _ => {}
            }
        }
        parsed
    }

    /// Whether a path (with its query) may be fetched.
    pub fn allows(&self, path_and_query: &str) -> bool {
        self.rules
            .iter()
            .filter(|(_, prefix)| path_and_query.starts_with(prefix.as_str()))
            .max_by_key(|(allow, prefix)| (prefix.len(), *allow))
            .map(|(allow, _)| *allow)
            .unwrap_or(true)
    }
}

impl Site {
    /// The robots rules the site serves (none when robots.txt is absent).
    pub fn robots(&self) -> RobotsRules {
        self.config()
            .robots_txt
            .as_deref()
            .map(RobotsRules::parse)
            .unwrap_or_default()
    }

    /// Paths (with query, without fragment) a polite crawler starting at
    /// `start` would request, with their link depth, following links up to
    /// `max_depth` that stay on this server (scheme http, host [`Site::host`],
    /// same port), skipping paths robots.txt disallows. Relative links are
    /// resolved against the page's own path. Same-host redirects are
    /// followed without adding depth (a fetcher follows them in one fetch).
    /// Pages that would answer 4xx/5xx are included: they are requested.
    pub fn reachable(&self, start: &str, max_depth: usize) -> BTreeMap<String, usize> {
        let port = self.port().unwrap_or(UNBOUND_PORT);
        let host = self.host();
        let origin = format!("http://{host}:{port}");
        let robots = self.robots();
        let mut depths: BTreeMap<String, usize> = BTreeMap::new();
        let mut queue: VecDeque<(String, usize)> = VecDeque::new();
        if robots.allows(start) {
            depths.insert(start.to_string(), 0);
            queue.push_back((start.to_string(), 0));
        }
        while let Some((path, depth)) = queue.pop_front() {
            if depths.get(&path).is_some_and(|known| *known < depth) {
                continue;
            }
            let Some((page, _)) = self.lookup(&path) else {
                continue;
            };
            let Ok(base) = Url::parse(&format!("{origin}{path}")) else {
                continue;
            };
            let mut edges: Vec<(String, usize)> = Vec::new();
            if let Some(location) = &page.redirect_to {
                edges.push((location.clone(), depth));
            }
            if depth < max_depth && page.redirect_to.is_none() {
                edges.extend(page.links.iter().map(|href| (href.clone(), depth + 1)));
            }
            for (href, target_depth) in edges {
                let href = href.replace(PORT_PLACEHOLDER, &port.to_string());
                let Some(target) = same_server_path(&base, &href, host, port) else {
                    continue;
                };
                if !robots.allows(&target)
                    || depths
                        .get(&target)
                        .is_some_and(|known| *known <= target_depth)
                {
                    continue;
                }
                depths.insert(target.clone(), target_depth);
                if target_depth == depth {
                    queue.push_front((target, target_depth));
                } else {
                    queue.push_back((target, target_depth));
                }
            }
        }
        depths
    }
}

/// The path and query `href` points to if it stays on `host`:`port`.
fn same_server_path(base: &Url, href: &str, host: &str, port: u16) -> Option<String> {
    let target = base.join(href).ok()?;
    if target.scheme() != "http"
        || target.host_str() != Some(host)
        || target.port_or_known_default() != Some(port)
    {
        return None;
    }
    Some(match target.query() {
        Some(query) => format!("{}?{query}", target.path()),
        None => target.path().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::{PageKind, SiteConfig};

    #[test]
    fn robots_rules_follow_the_star_group_and_longest_match() {
        let robots = RobotsRules::parse(
            "User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nAllow: /private/open\nCrawl-delay: 0.5\n",
        );
        assert!(robots.allows("/article/1"));
        assert!(!robots.allows("/private/3"));
        assert!(robots.allows("/private/open/1"));
        assert_eq!(robots.crawl_delay_secs, Some(0.5));
    }

    #[test]
    fn every_listed_page_is_reachable_within_depth_three() {
        for articles in [0, 5, 200, 600] {
            let site = Site::generate(&SiteConfig {
                articles,
                ..SiteConfig::default()
            });
            let reachable = site.reachable("/", 3);
            for page in site.pages() {
                let expected = match page.kind {
                    PageKind::Robots | PageKind::Hostile(_) | PageKind::Private => false,
                    // Sitemaps are found through robots.txt or their well-known path.
                    _ if page.path.starts_with("/sitemap") => false,
                    PageKind::Redirect => page.path != "/loop/b" || articles > 0,
                    _ => true,
                };
                if expected {
                    assert!(
                        reachable.contains_key(&page.path),
                        "{} unreachable with {articles} articles",
                        page.path
                    );
                }
            }
            assert!(!reachable.keys().any(|path| path.starts_with("/private/")));
            assert!(!reachable.keys().any(|path| path.starts_with("/hostile/")));
        }
    }

    #[test]
    fn a_renamed_site_reaches_the_same_pages_under_its_new_name() {
        let config = SiteConfig {
            articles: 60,
            ..SiteConfig::default()
        };
        let mut loopback = Site::generate(&config);
        loopback.bind_port(8080);
        let mut renamed = Site::generate(&config);
        renamed.rename_host("testsite");
        renamed.bind_port(8080);
        assert_eq!(renamed.host(), "testsite");
        assert_eq!(renamed.reachable("/", 5), loopback.reachable("/", 5));
        // The absolute self-links name the new host, `localhost` ones stay.
        let links: Vec<&String> = renamed.pages().iter().flat_map(|p| &p.links).collect();
        assert!(links.iter().any(|l| l.starts_with("http://testsite:8080/")));
        assert!(!links.iter().any(|l| l.starts_with("http://127.0.0.1:")));
        assert!(links
            .iter()
            .any(|l| l.starts_with("http://localhost:8080/")));
        let sitemap = String::from_utf8_lossy(renamed.response_bytes("/sitemap.xml").unwrap());
        assert!(sitemap.contains("http://testsite:8080/"), "{sitemap}");
    }

    #[test]
    fn depth_limits_and_query_links_are_respected() {
        let site = Site::generate(&SiteConfig::default());
        let shallow = site.reachable("/", 0);
        assert_eq!(shallow.keys().collect::<Vec<_>>(), vec!["/"]);
        let one = site.reachable("/", 1);
        assert!(one.contains_key("/?sort=latest"));
        assert_eq!(
            site.page_for_target("/?sort=latest")
                .map(|page| page.path.as_str()),
            Some("/")
        );
        assert!(one.values().all(|depth| *depth <= 1));
    }
}
