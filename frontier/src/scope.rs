//! Scope: which URLs a crawl may fetch.

use std::collections::HashSet;

use pipeline::CrawlSpec;
use url::Url;

/// A crawl's scope, compiled: its allowed domains as a set (a link costs one lookup per
/// label of its host, however many domains the crawl allows), and its include and exclude
/// patterns.
#[derive(Debug, Default)]
pub struct Scope {
    /// Lower case, without a leading dot; empty: unscoped.
    domains: HashSet<String>,
    include: Vec<regex::Regex>,
    exclude: Vec<regex::Regex>,
}

impl Scope {
    /// Compiles a crawl's scope; an invalid pattern is an error naming it.
    pub fn compile(crawl: &CrawlSpec) -> Result<Scope, regex::Error> {
        let all = |ps: &[String]| -> Result<Vec<regex::Regex>, regex::Error> {
            ps.iter().map(|p| regex::Regex::new(p)).collect()
        };
        Ok(Scope {
            domains: crawl
                .allow_domains
                .iter()
                .map(|d| d.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
            include: all(&crawl.include)?,
            exclude: all(&crawl.exclude)?,
        })
    }

    /// The crawl may fetch `url`: its host is one of the allowed domains or a subdomain of
    /// one (any host when the crawl allows no domain), it is included (if there are include
    /// patterns) and not excluded.
    pub fn allows(&self, url: &Url) -> bool {
        let s = url.as_str();
        self.in_domains(url)
            && (self.include.is_empty() || self.include.iter().any(|r| r.is_match(s)))
            && !self.exclude.iter().any(|r| r.is_match(s))
    }

    /// The host, or a parent of it (what follows one of its dots), is an allowed domain.
    /// Hosts from [`crate::normalize`] are lower case.
    fn in_domains(&self, url: &Url) -> bool {
        if self.domains.is_empty() {
            return true;
        }
        let Some(mut rest) = url.host_str() else {
            return false;
        };
        loop {
            if self.domains.contains(rest) {
                return true;
            }
            match rest.find('.') {
                Some(dot) => rest = &rest[dot + 1..],
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition the set lookup implements: `host` is `domain` or ends with `.domain`
    /// (the domain lower-cased, without its leading dot).
    fn host_matches(host: &str, domain: &str) -> bool {
        let domain = domain.trim_start_matches('.').to_ascii_lowercase();
        host == domain
            || (host.len() > domain.len()
                && host.ends_with(&domain)
                && host.as_bytes()[host.len() - domain.len() - 1] == b'.')
    }

    fn scope_of(domains: &[&str]) -> Scope {
        Scope::compile(&CrawlSpec {
            allow_domains: domains.iter().map(|d| d.to_string()).collect(),
            ..CrawlSpec::default()
        })
        .unwrap()
    }

    #[test]
    fn domains_and_subdomains() {
        let u = |s: &str| Url::parse(s).unwrap();
        for (host, domain, want) in [
            ("example.com", "example.com", true),
            ("www.example.com", "example.com", true),
            ("www.example.com", ".Example.com", true),
            ("badexample.com", "example.com", false),
            ("example.com.evil.org", "example.com", false),
            ("127.0.0.1", "127.0.0.1", true),
            ("localhost", "127.0.0.1", false),
        ] {
            assert_eq!(host_matches(host, domain), want, "{host} {domain}");
            let url = u(&format!("http://{host}/a"));
            assert_eq!(scope_of(&[domain]).allows(&url), want, "{host} {domain}");
        }
        assert!(scope_of(&[]).allows(&u("http://example.org/a")));
    }

    /// The set lookup agrees with the definition, for generated hosts against generated
    /// lists of domains.
    #[test]
    fn set_lookup_agrees_with_the_definition() {
        let labels = [
            "a", "b", "example", "com", "co", "uk", "1", "0", "xn--p1ai", "",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let name = |next: &mut dyn FnMut(usize) -> usize| {
            let parts: Vec<&str> = (0..1 + next(4))
                .map(|_| labels[next(labels.len())])
                .collect();
            parts.join(".")
        };
        let mut checked = 0;
        for _ in 0..60_000 {
            let host = name(&mut next);
            let Ok(url) = Url::parse(&format!("http://{host}/")) else {
                continue;
            };
            let Some(parsed) = url.host_str() else {
                continue;
            };
            let domains: Vec<String> = (0..next(4))
                .map(|_| {
                    let d = name(&mut next);
                    if next(3) == 0 {
                        format!(".{}", d.to_uppercase())
                    } else {
                        d
                    }
                })
                .collect();
            let want = domains.is_empty() || domains.iter().any(|d| host_matches(parsed, d));
            let scope = Scope::compile(&CrawlSpec {
                allow_domains: domains.clone(),
                ..CrawlSpec::default()
            })
            .unwrap();
            assert_eq!(scope.allows(&url), want, "{parsed} against {domains:?}");
            checked += usize::from(want && !domains.is_empty());
        }
        assert!(
            checked > 1_000,
            "only {checked} hosts in scope of a non-empty list"
        );
    }

    #[test]
    fn patterns() {
        let crawl = CrawlSpec {
            include: vec!["/news/".into(), "/blog/".into()],
            exclude: vec![r"\?page=\d+".into(), r"\.pdf$".into()],
            ..CrawlSpec::default()
        };
        let p = Scope::compile(&crawl).unwrap();
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(p.allows(&u("http://e.com/news/1")));
        assert!(p.allows(&u("http://e.com/blog/x")));
        assert!(!p.allows(&u("http://e.com/about")));
        assert!(!p.allows(&u("http://e.com/news/?page=2")));
        assert!(!p.allows(&u("http://e.com/news/a.pdf")));
        assert!(Scope::compile(&CrawlSpec::default())
            .unwrap()
            .allows(&u("http://x/")));
        let bad = CrawlSpec {
            exclude: vec!["(".into()],
            ..CrawlSpec::default()
        };
        assert!(Scope::compile(&bad).is_err());
    }
}
