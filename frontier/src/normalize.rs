//! URL normalization: one canonical spelling per URL, so the URL-seen set
//! recognises the same page written differently.
//!
//! Applied rules (the `url` crate's WHATWG parser does the first five):
//! 1. scheme and host lower-cased; IDN hosts to punycode;
//! 2. default ports removed (`:80`, `:443`);
//! 3. dot segments resolved (`/a/./b/../c` → `/a/c`); empty path → `/`;
//! 4. percent-encoding made uniform: characters that must be encoded are,
//!    escapes of unreserved characters are decoded (`%7E` → `~`), other
//!    escapes get upper-case hex (`%2f` → `%2F`), RFC 3986 §6.2.2;
//! 5. relative references resolved against the page (and its `<base>`);
//! 6. the fragment removed;
//! 7. tracking parameters removed ([`TRACKING_PARAMS`], and `utm_*`; more
//!    per crawl with [`Rules::strip_params`]); query parameters sorted if
//!    the crawl asks ([`Rules::sort_query`]);
//! 8. only `http` and `https`; at most [`MAX_URL_BYTES`] bytes.

use pipeline::messages::MAX_URL_BYTES;
use url::Url;

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
    #[error("URL longer than {MAX_URL_BYTES} bytes: {0:.80}...")]
    TooLong(String),
}

/// Per-crawl normalization options on top of the fixed rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// More query parameters to drop (exact names, case-insensitive; a
    /// trailing `*` matches a prefix).
    pub strip_params: Vec<String>,
    /// Sort query parameters by name, so `?b=1&a=2` and `?a=2&b=1` are one URL
    /// (off by default: some sites give the order a meaning).
    pub sort_query: bool,
}

/// Normalizes `raw`, resolved against `base` when it is relative.
pub fn normalize(raw: &str, base: Option<&Url>) -> Result<Url, UrlError> {
    normalize_with(raw, base, &Rules::default())
}

/// [`normalize`] with a crawl's own [`Rules`].
pub fn normalize_with(raw: &str, base: Option<&Url>, rules: &Rules) -> Result<Url, UrlError> {
    let raw = raw.trim();
    if raw.len() > MAX_URL_BYTES {
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
    // Escapes first: the tracking names and the sort order are those of the
    // normalized spelling (`%7e` sorts as `~`, after `S`).
    normalize_escapes(&mut url);
    strip_tracking(&mut url, rules);
    if url.as_str().len() > MAX_URL_BYTES {
        return Err(UrlError::TooLong(url.to_string()));
    }
    Ok(url)
}

fn is_tracking(name: &str, rules: &Rules) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("utm_")
        || TRACKING_PARAMS.contains(&lower.as_str())
        || rules.strip_params.iter().any(|p| {
            let p = p.to_ascii_lowercase();
            match p.strip_suffix('*') {
                Some(prefix) => lower.starts_with(prefix),
                None => lower == p,
            }
        })
}

fn strip_tracking(url: &mut Url, rules: &Rules) {
    let Some(query) = url.query() else { return };
    if query.is_empty() {
        url.set_query(None);
        return;
    }
    // Keep the other parameters byte for byte, in their order (or sorted).
    let mut kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            !pair.is_empty() && !is_tracking(name, rules)
        })
        .collect();
    if rules.sort_query {
        kept.sort_by(|a, b| {
            let key = |p: &str| p.split('=').next().unwrap_or("").to_string();
            key(a).cmp(&key(b))
        });
    }
    let new = kept.join("&");
    if new != query {
        url.set_query(if new.is_empty() { None } else { Some(&new) });
    }
}

/// RFC 3986 §6.2.2: decode escapes of unreserved characters, upper-case the
/// hex of the others (in the path and the query).
fn normalize_escapes(url: &mut Url) {
    let path = url.path().to_string();
    let fixed = fix_escapes(&path);
    if fixed != path {
        url.set_path(&fixed);
    }
    if let Some(q) = url.query().map(str::to_string) {
        let fixed = fix_escapes(&q);
        if fixed != q {
            url.set_query(Some(&fixed));
        }
    }
}

fn fix_escapes(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = &s[i + 1..i + 3];
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                let c = v as char;
                let unreserved = c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
                if unreserved && !makes_escape(&out, c, b.get(i + 3)) {
                    out.push(c);
                } else {
                    out.push('%');
                    out.push_str(&hex.to_ascii_uppercase());
                }
                i += 3;
                continue;
            }
        }
        // Not an escape: copy the character (the rest is valid UTF-8).
        let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// Whether decoding an escape to `c` would make a new escape with a stray
/// `%` before it (`%4%41` is `%4` then `A`, not `%4A`): `c` is a hex digit
/// and the output ends in `%` and a hex digit, or in `%` with a hex digit
/// (`next`) after the escape.
fn makes_escape(out: &str, c: char, next: Option<&u8>) -> bool {
    if !c.is_ascii_hexdigit() {
        return false;
    }
    match out.as_bytes() {
        [.., b'%', h] if h.is_ascii_hexdigit() => true,
        [.., b'%'] => next.is_some_and(u8::is_ascii_hexdigit),
        _ => false,
    }
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
            (
                "http://example.com/%7Euser/%61",
                "http://example.com/~user/a",
            ),
            (
                "http://example.com/a%2fb?q=%3d",
                "http://example.com/a%2Fb?q=%3D",
            ),
            ("http://example.com/%", "http://example.com/%"),
            (
                "http://example.com/中文",
                "http://example.com/%E4%B8%AD%E6%96%87",
            ),
            ("http://EXAMPLE.com./x", "http://example.com./x"),
            ("  http://example.com/x  ", "http://example.com/x"),
        ];
        for (input, want) in cases {
            assert_eq!(n(input), want, "normalizing {input}");
        }
    }

    #[test]
    fn decoding_never_makes_a_new_escape() {
        // Found by fuzzing (fuzz/corpus/url_normalize/regress-stray-percent):
        // `%4%41` decoded to `%4A`, which a second pass (or the server) reads
        // as `J`. Normalization must keep the meaning and be idempotent.
        for (input, want) in [
            ("http://a/p?%4%41", "http://a/p?%4%41"),
            ("http://a/%%341", "http://a/%%341"),
            ("http://a/%%33%34", "http://a/%3%34"),
            ("http://a/%%7E%41", "http://a/%~A"),
            ("http://a/%4%47", "http://a/%4G"),
            ("http://a/%%%61d", "http://a/%%%61d"),
        ] {
            assert_eq!(n(input), want, "normalizing {input}");
            assert_eq!(n(want), want, "normalizing {want} again");
        }
    }

    #[test]
    fn sorts_the_normalized_query() {
        // Found by fuzzing (fuzz/corpus/url_normalize/regress-sort-escapes):
        // the query was sorted before `%7e` became `~`, so a second pass
        // sorted it again.
        let rules = Rules {
            strip_params: Vec::new(),
            sort_query: true,
        };
        let once = normalize_with("http://a/p?S=1&%7e=2&utm%5Fsource=x", None, &rules).unwrap();
        assert_eq!(once.as_str(), "http://a/p?S=1&~=2");
        let twice = normalize_with(once.as_str(), None, &rules).unwrap();
        assert_eq!(twice, once);
    }

    #[test]
    fn crawl_rules() {
        let rules = Rules {
            strip_params: vec!["sessionid".into(), "ref*".into()],
            sort_query: true,
        };
        let u = normalize_with(
            "http://e.com/p?z=1&SessionID=9&a=2&referrer=x&utm_x=1",
            None,
            &rules,
        )
        .unwrap();
        assert_eq!(u.as_str(), "http://e.com/p?a=2&z=1");
    }

    #[test]
    fn refuses_what_cannot_be_fetched() {
        for url in ["mailto:a@b.c", "javascript:void(0)", "ftp://x/y"] {
            let refused = normalize(url, None);
            assert!(matches!(refused, Err(UrlError::Scheme { .. })), "{url}");
        }
        for url in ["not a url", "http://[::1"] {
            let refused = normalize(url, None);
            assert!(matches!(refused, Err(UrlError::Parse { .. })), "{url}");
        }
        let long = format!("http://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(matches!(normalize(&long, None), Err(UrlError::TooLong(_))));
    }

    #[test]
    fn resolves_relative_links_against_the_page() {
        let base = Url::parse("http://example.com/dir/page.html").ok();
        let r = |s| normalize(s, base.as_ref()).map(|u| u.to_string()).ok();
        for (link, resolved) in [
            ("other.html", "http://example.com/dir/other.html"),
            ("../up", "http://example.com/up"),
            ("/abs?q=1#x", "http://example.com/abs?q=1"),
            ("//cdn.example.org/x", "http://cdn.example.org/x"),
        ] {
            assert_eq!(r(link).as_deref(), Some(resolved), "{link}");
        }
    }
}
