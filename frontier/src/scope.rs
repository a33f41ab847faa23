//! Scope: which URLs a crawl may fetch.

use pipeline::CrawlSpec;
use url::Url;

/// True when `host` is `domain` or a subdomain of it (ASCII case-insensitive;
/// hosts from [`crate::normalize`] are already lower-case).
pub fn host_matches(host: &str, domain: &str) -> bool {
    let domain = domain.trim_start_matches('.').to_ascii_lowercase();
    host == domain
        || (host.len() > domain.len()
            && host.ends_with(&domain)
            && host.as_bytes()[host.len() - domain.len() - 1] == b'.')
}

/// True when the crawl may fetch `url`: its host is one of the allowed
/// domains (or a subdomain). A crawl with no allowed domains is unscoped.
pub fn in_scope(url: &Url, crawl: &CrawlSpec) -> bool {
    if crawl.allow_domains.is_empty() {
        return true;
    }
    let Some(host) = url.host_str() else {
        return false;
    };
    crawl.allow_domains.iter().any(|d| host_matches(host, d))
}

/// A crawl's include and exclude patterns, compiled.
#[derive(Debug, Default)]
pub struct Patterns {
    include: Vec<regex::Regex>,
    exclude: Vec<regex::Regex>,
}

impl Patterns {
    /// Compiles a crawl's patterns; an invalid one is an error naming it.
    pub fn compile(crawl: &CrawlSpec) -> Result<Patterns, regex::Error> {
        let all = |ps: &[String]| -> Result<Vec<regex::Regex>, regex::Error> {
            ps.iter().map(|p| regex::Regex::new(p)).collect()
        };
        Ok(Patterns {
            include: all(&crawl.include)?,
            exclude: all(&crawl.exclude)?,
        })
    }

    /// Included (if there are include patterns) and not excluded.
    pub fn allows(&self, url: &Url) -> bool {
        let s = url.as_str();
        (self.include.is_empty() || self.include.iter().any(|r| r.is_match(s)))
            && !self.exclude.iter().any(|r| r.is_match(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_and_subdomains() {
        assert!(host_matches("example.com", "example.com"));
        assert!(host_matches("www.example.com", "example.com"));
        assert!(host_matches("www.example.com", ".Example.com"));
        assert!(!host_matches("badexample.com", "example.com"));
        assert!(!host_matches("example.com.evil.org", "example.com"));
        assert!(host_matches("127.0.0.1", "127.0.0.1"));
        assert!(!host_matches("localhost", "127.0.0.1"));
    }

    #[test]
    fn patterns() {
        let crawl = CrawlSpec {
            include: vec!["/news/".into(), "/blog/".into()],
            exclude: vec![r"\?page=\d+".into(), r"\.pdf$".into()],
            ..CrawlSpec::default()
        };
        let p = Patterns::compile(&crawl).unwrap();
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(p.allows(&u("http://e.com/news/1")));
        assert!(p.allows(&u("http://e.com/blog/x")));
        assert!(!p.allows(&u("http://e.com/about")));
        assert!(!p.allows(&u("http://e.com/news/?page=2")));
        assert!(!p.allows(&u("http://e.com/news/a.pdf")));
        assert!(Patterns::compile(&CrawlSpec::default())
            .unwrap()
            .allows(&u("http://x/")));
        let bad = CrawlSpec {
            exclude: vec!["(".into()],
            ..CrawlSpec::default()
        };
        assert!(Patterns::compile(&bad).is_err());
    }

    #[test]
    fn crawl_scope() {
        let crawl = CrawlSpec {
            allow_domains: vec!["example.com".into()],
            ..CrawlSpec::default()
        };
        let ok = Url::parse("http://news.example.com/a").unwrap();
        let out = Url::parse("http://example.org/a").unwrap();
        assert!(in_scope(&ok, &crawl));
        assert!(!in_scope(&out, &crawl));
        assert!(in_scope(&out, &CrawlSpec::default()));
    }
}
