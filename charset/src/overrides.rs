//! Per-site charset overrides: `HOST=ENCODING` rules from the crawl's
//! settings (`crawler seed/run --charset-override`, or `charset_override` in
//! the config file), for sites that lie about their encoding in ways the
//! vote cannot see through. The rule that matches a page's host becomes
//! [`super::Signals::override_encoding`], and the page records which rule
//! decided (the document's charset evidence).
//!
//! A rule's host is either exact (`news.example.com`) or a suffix form
//! (`*.example.com`: `example.com` itself and every host under it). An exact
//! rule beats a suffix rule, and a longer suffix beats a shorter one.
//!
//! Pure logic: no I/O.

use std::fmt;

use encoding_rs::Encoding;

/// One `HOST=ENCODING` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharsetOverride {
    /// Lower-case host, without the `*.` of a suffix rule.
    host: String,
    /// Whether the rule covers the hosts under `host` too (`*.host`).
    suffix: bool,
    /// The encoding the rule imposes.
    pub encoding: &'static Encoding,
}

/// Why a rule was refused, with the rule as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("charset override {0:?}: expected HOST=ENCODING (or *.DOMAIN=ENCODING)")]
    Shape(String),
    #[error("charset override {0:?}: the host is not a host name")]
    Host(String),
    #[error("charset override {rule:?}: {label:?} is not an encoding label (WHATWG: utf-8, gbk, windows-1251, ...)")]
    Encoding { rule: String, label: String },
}

impl CharsetOverride {
    /// Parses `HOST=ENCODING` or `*.DOMAIN=ENCODING` (spaces around the
    /// parts are ignored; the host is case-insensitive; the encoding is any
    /// WHATWG label).
    pub fn parse(rule: &str) -> Result<CharsetOverride, OverrideError> {
        let (host, label) = rule
            .split_once('=')
            .ok_or_else(|| OverrideError::Shape(rule.to_owned()))?;
        let (host, label) = (host.trim().to_ascii_lowercase(), label.trim());
        let (host, suffix) = match host.strip_prefix("*.") {
            Some(domain) => (domain.to_owned(), true),
            None => (host, false),
        };
        let host_ok = !host.is_empty()
            && host.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            });
        if !host_ok {
            return Err(OverrideError::Host(rule.to_owned()));
        }
        let encoding = Encoding::for_label_no_replacement(label.as_bytes()).ok_or_else(|| {
            OverrideError::Encoding {
                rule: rule.to_owned(),
                label: label.to_owned(),
            }
        })?;
        Ok(CharsetOverride {
            host,
            suffix,
            encoding,
        })
    }

    /// Whether the rule covers `host` (lower-case, as in a parsed URL).
    pub fn covers(&self, host: &str) -> bool {
        let host = host.strip_suffix('.').unwrap_or(host);
        if host == self.host {
            return true;
        }
        self.suffix
            && host
                .strip_suffix(self.host.as_str())
                .is_some_and(|head| head.ends_with('.'))
    }

    /// How specific the rule is: an exact host above every suffix, then the
    /// longer suffix.
    fn specificity(&self) -> (bool, usize) {
        (!self.suffix, self.host.len())
    }
}

impl fmt::Display for CharsetOverride {
    /// The canonical form: `host=NAME` or `*.domain=NAME`, NAME the WHATWG name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let star = if self.suffix { "*." } else { "" };
        write!(f, "{star}{}={}", self.host, self.encoding.name())
    }
}

/// Parses every rule; the first bad one is the error.
pub fn parse_all<S: AsRef<str>>(rules: &[S]) -> Result<Vec<CharsetOverride>, OverrideError> {
    rules
        .iter()
        .map(|rule| CharsetOverride::parse(rule.as_ref()))
        .collect()
}

/// The most specific rule covering `host`, if any.
pub fn matching<'r>(rules: &'r [CharsetOverride], host: &str) -> Option<&'r CharsetOverride> {
    let host = host.to_ascii_lowercase();
    rules
        .iter()
        .filter(|rule| rule.covers(&host))
        .max_by_key(|rule| rule.specificity())
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{GBK, WINDOWS_1250, WINDOWS_1251};

    #[test]
    fn rules_parse_and_print_canonically() {
        let rule = CharsetOverride::parse(" News.Example.COM = cp1251 ").expect("a rule");
        assert_eq!(rule.encoding, WINDOWS_1251);
        assert_eq!(rule.to_string(), "news.example.com=windows-1251");
        let suffix = CharsetOverride::parse("*.example.cn=gb2312").expect("a rule");
        assert_eq!(suffix.to_string(), "*.example.cn=GBK");
        assert!(matches!(
            CharsetOverride::parse("example.com"),
            Err(OverrideError::Shape(_))
        ));
        assert!(matches!(
            CharsetOverride::parse("exa mple.com=gbk"),
            Err(OverrideError::Host(_))
        ));
        assert!(matches!(
            CharsetOverride::parse("*.=gbk"),
            Err(OverrideError::Host(_))
        ));
        assert!(matches!(
            CharsetOverride::parse("example.com=klingon"),
            Err(OverrideError::Encoding { .. })
        ));
        // The replacement encoding is no page's encoding.
        assert!(CharsetOverride::parse("example.com=iso-2022-kr").is_err());
    }

    #[test]
    fn exact_beats_suffix_and_longer_suffix_beats_shorter() {
        let rules = parse_all(&[
            "*.example.com=windows-1250",
            "*.news.example.com=gbk",
            "old.news.example.com=windows-1251",
        ])
        .expect("rules");
        let pick = |host: &str| matching(&rules, host).map(|r| r.encoding);
        assert_eq!(pick("example.com"), Some(WINDOWS_1250));
        assert_eq!(pick("www.example.com"), Some(WINDOWS_1250));
        assert_eq!(pick("news.example.com"), Some(GBK));
        assert_eq!(pick("a.news.example.com"), Some(GBK));
        assert_eq!(pick("OLD.news.example.com"), Some(WINDOWS_1251));
        assert_eq!(pick("old.news.example.com."), Some(WINDOWS_1251));
        assert_eq!(pick("badexample.com"), None);
        assert_eq!(pick("example.org"), None);
        let exact = parse_all(&["example.com=gbk"]).expect("rules");
        assert!(matching(&exact, "www.example.com").is_none());
        assert!(matching(&exact, "127.0.0.1").is_none());
        let ip = parse_all(&["127.0.0.1=gbk"]).expect("rules");
        assert!(matching(&ip, "127.0.0.1").is_some());
    }
}
