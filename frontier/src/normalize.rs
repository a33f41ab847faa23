//! URL normalization: one canonical spelling per URL, so the URL-seen set
//! recognises the same page written differently.
//!
//! Applied rules (the `url` crate's WHATWG parser does the first five):
//! 1. scheme and host lower-cased; IDN hosts to punycode;
//! 2. default ports removed (`:80`, `:443`);
//! 3. dot segments resolved (`/a/./b/../c` → `/a/c`); empty path → `/`;
//! 4. percent-encoding made uniform for characters that must be encoded;
//! 5. relative references resolved against the page (and its `<base>`);
//! 6. the fragment removed;
//! 7. tracking parameters removed ([`TRACKING_PARAMS`], and `utm_*`);
//! 8. only `http` and `https`; at most [`MAX_URL_LEN`] bytes.

use url::Url;

/// Longer URLs are refused: they are almost always traps or junk, and
/// browsers and servers commonly cap near 2 KB.
pub const MAX_URL_LEN: usize = 2048;

/// Query parameters that only track the click, never change the page.
pub const TRACKING_PARAMS: &[&str] = &[
    "fbclid", "gclid", "dclid", "msclkid", "yclid", "mc_cid", "mc_eid", "_hsenc", "_hsmi",
    "igshid", "spm",
];

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("cannot parse URL {url:?}: {reason}")]
    Parse { url: String, reason: String },
    #[error("unsupported scheme {scheme:?} in {url:?}")]
    Scheme { url: String, scheme: String },
    #[error("URL has no host: {0:?}")]
    NoHost(String),
    #[error("URL longer than {MAX_URL_LEN} bytes: {0:.80}...")]
    TooLong(String),
}

/// Normalizes `raw`, resolved against `base` when it is relative.
pub fn normalize(raw: &str, base: Option<&Url>) -> Result<Url, UrlError> {
    let raw = raw.trim();
    if raw.len() > MAX_URL_LEN {
        return Err(UrlError::TooLong(raw.to_string()));
    }
    let parsed = match base {
        Some(b) => b.join(raw),
        None => Url::parse(raw),
    };
    let mut url = parsed.map_err(|e| UrlError::Parse {
        url: raw.to_string(),
        reason: e.to_string(),
    })?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(UrlError::Scheme {
            url: raw.to_string(),
            scheme: url.scheme().to_string(),
        });
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost(raw.to_string()));
    }
    url.set_fragment(None);
    strip_tracking(&mut url);
    if url.as_str().len() > MAX_URL_LEN {
        return Err(UrlError::TooLong(url.to_string()));
    }
    Ok(url)
}

fn is_tracking(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("utm_") || TRACKING_PARAMS.contains(&lower.as_str())
}

fn strip_tracking(url: &mut Url) {
    let Some(query) = url.query() else { return };
    if query.is_empty() {
        url.set_query(None);
        return;
    }
    // Keep the other parameters byte for byte, in their order.
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            !pair.is_empty() && !is_tracking(name)
        })
        .collect();
    if kept.len() == query.split('&').count() {
        return;
    }
    let new = kept.join("&");
    url.set_query(if new.is_empty() { None } else { Some(&new) });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(s, None)
            .map(|u| u.to_string())
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn table_of_cases() {
        let cases = [
            ("HTTP://Example.COM/a", "http://example.com/a"),
            ("http://example.com:80/a", "http://example.com/a"),
            ("https://example.com:443/a", "https://example.com/a"),
            ("http://example.com:8080/a", "http://example.com:8080/a"),
            ("http://example.com", "http://example.com/"),
            ("http://example.com/a/./b/../c", "http://example.com/a/c"),
            ("http://example.com/a#frag", "http://example.com/a"),
            ("http://example.com/a b", "http://example.com/a%20b"),
            ("http://bücher.de/", "http://xn--bcher-kva.de/"),
            (
                "http://example.com/?utm_source=x&id=3&fbclid=y",
                "http://example.com/?id=3",
            ),
            ("http://example.com/?utm_medium=a", "http://example.com/"),
            ("http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"),
            ("  http://example.com/x  ", "http://example.com/x"),
        ];
        for (input, want) in cases {
            assert_eq!(n(input), want, "normalizing {input}");
        }
    }

    #[test]
    fn refuses_what_cannot_be_fetched() {
        assert!(matches!(
            normalize("mailto:a@b.c", None),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            normalize("javascript:void(0)", None),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            normalize("ftp://x/y", None),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            normalize("not a url", None),
            Err(UrlError::Parse { .. })
        ));
        assert!(matches!(
            normalize("http://[::1", None),
            Err(UrlError::Parse { .. })
        ));
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(matches!(normalize(&long, None), Err(UrlError::TooLong(_))));
    }

    #[test]
    fn resolves_relative_links_against_the_page() {
        let base = Url::parse("http://example.com/dir/page.html").ok();
        let r = |s| normalize(s, base.as_ref()).map(|u| u.to_string()).ok();
        assert_eq!(
            r("other.html").as_deref(),
            Some("http://example.com/dir/other.html")
        );
        assert_eq!(r("../up").as_deref(), Some("http://example.com/up"));
        assert_eq!(
            r("/abs?q=1#x").as_deref(),
            Some("http://example.com/abs?q=1")
        );
        assert_eq!(
            r("//cdn.example.org/x").as_deref(),
            Some("http://cdn.example.org/x")
        );
    }
}
