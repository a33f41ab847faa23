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
