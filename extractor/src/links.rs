//! Outlinks and absolute URLs: every `<a href>` resolved against the page URL and `<base href>`.

use url::{Position, Url};

use crate::scan::{flag, Page, NONE};
use crate::Outlink;

/// Longest anchor text kept (chars); menus sometimes wrap whole blocks in one link.
pub const MAX_ANCHOR_CHARS: usize = 300;

/// The URL relative links resolve against: `<base href>` (itself resolved), else the page URL.
pub fn base_url(page: &Page, page_url: &Url) -> Url {
    page.base_href
        .as_deref()
        .and_then(|b| page_url.join(b).ok())
        .filter(|b| matches!(b.scheme(), "http" | "https"))
        .unwrap_or_else(|| page_url.clone())
}

/// Resolves `raw` to an absolute http(s) URL without fragment.
pub fn resolve(base: &Url, raw: &str) -> Option<Url> {
    let raw = raw.trim();
    if raw.is_empty() || raw.starts_with('#') {
        return None;
    }
    let mut u = base.join(raw).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    u.set_fragment(None);
    Some(u)
}

/// [`resolve`] as a string. The commonest hrefs (absolute http(s) URLs, root- and
/// protocol-relative paths, in plain ASCII that URL parsing keeps as it is) are joined by
/// concatenation, the same bytes `Url::join` gives; the rest go through `Url::join`.
pub fn resolve_to_string(base: &Url, raw: &str) -> Option<String> {
    let raw = raw.trim();
    join_plain(base, raw).or_else(|| resolve(base, raw).map(String::from))
}

/// `base.join(raw)` without its fragment, when `raw` is an `http://` or `https://` URL, or a
/// `//host/...` or `/path` reference against an http(s) `base`, and written so that URL
/// parsing changes nothing: a lowercase host of plain labels (no port, no user, no IP
/// address, no punycode), a path and query of characters that are never percent-encoded,
/// no `.` or `..` segment, no backslash. `None` for any other `raw` (not "no URL": the
/// caller then asks `Url::join`).
fn join_plain(base: &Url, raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len() + 32);
    let rest = if let Some(rest) = raw.strip_prefix("https://") {
        out.push_str("https://");
        plain_host(rest, &mut out)?
    } else if let Some(rest) = raw.strip_prefix("http://") {
        out.push_str("http://");
        plain_host(rest, &mut out)?
    } else if !matches!(base.scheme(), "http" | "https") {
        return None;
    } else if let Some(rest) = raw.strip_prefix("//") {
        out.push_str(base.scheme());
        out.push_str("://");
        plain_host(rest, &mut out)?
    } else if raw.starts_with('/') {
        // Scheme, user, host and port of the base.
        out.push_str(&base[..Position::BeforePath]);
        raw
    } else {
        return None;
    };
    plain_path_and_query(rest, &mut out)?;
    Some(out)
}

/// Pushes the host `rest` starts with (up to `/`, `?`, `#` or the end) when URL parsing keeps
/// it as it is, and returns what follows it. The host is labels that IDNA passes through
/// unchanged (`[a-z][a-z0-9-]*`, not ending in `-`, no `--` at the third character, so no
/// `xn--`); the last label starts with a letter, so the host is no IPv4 address.
fn plain_host<'a>(rest: &'a str, out: &mut String) -> Option<&'a str> {
    let bytes = rest.as_bytes();
    let mut label_start = 0;
    let mut end = 0;
    loop {
        match bytes.get(end) {
            Some(b'a'..=b'z') => {}
            Some(b'0'..=b'9' | b'-') if end > label_start => {}
            Some(b'.') | Some(b'/' | b'?' | b'#') | None => {
                let label = &bytes[label_start..end];
                let passes = !label.is_empty()
                    && label.last() != Some(&b'-')
                    && !(label.len() >= 4 && label[2] == b'-' && label[3] == b'-');
                if !passes {
                    return None;
                }
                if bytes.get(end) != Some(&b'.') {
                    break;
                }
                label_start = end + 1;
            }
            Some(_) => return None,
        }
        end += 1;
    }
    out.push_str(&rest[..end]);
    Some(&rest[end..])
}

/// Bytes outside every percent-encode set of special URLs and without special meaning in
/// their paths and queries (`\` is a slash there; `'` is encoded in their queries).
const PLAIN_URL_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let others = b"-._~!$&()*+,;=:@/%?";
    let mut i = 0;
    while i < others.len() {
        table[others[i] as usize] = true;
        i += 1;
    }
    table
};

/// Pushes the path and query `rest` starts with (an empty path as `/`), without the fragment,
/// when URL parsing keeps them as they are: plain bytes only ([`PLAIN_URL_BYTES`]), and no
/// dot segment in the path (`.`, `..`, or any `%2e`, which URL parsing reads as a dot).
fn plain_path_and_query(rest: &str, out: &mut String) -> Option<()> {
    let bytes = rest.as_bytes();
    let dot_segment = |segment: &[u8]| matches!(segment, b"." | b"..");
    let mut path_end = None;
    let mut segment_start = 0;
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'#' {
            end = i;
            break;
        }
        if !PLAIN_URL_BYTES[b as usize] {
            return None;
        }
        if path_end.is_none() {
            match b {
                b'/' | b'?' => {
                    if dot_segment(&bytes[segment_start..i]) {
                        return None;
                    }
                    segment_start = i + 1;
                    if b == b'?' {
                        path_end = Some(i);
                    }
                }
                b'%' if bytes
                    .get(i + 1..i + 3)
                    .is_some_and(|h| h.eq_ignore_ascii_case(b"2e")) =>
                {
                    return None;
                }
                _ => {}
            }
        }
    }
    if path_end.is_none() && dot_segment(&bytes[segment_start..end]) {
        return None;
    }
    if path_end.unwrap_or(end) == 0 {
        out.push('/');
    }
    out.push_str(&rest[..end]);
    Some(())
}

/// Every `<a href>` of the page, deduplicated by URL (the first kept).
pub fn outlinks(page: &Page, base: &Url) -> Vec<Outlink> {
    // A link written twice in a row (a teaser's image and its headline) is not resolved
    // again: it would resolve to the same URL and be dropped as a duplicate of the first.
    let mut previous: Option<&str> = None;
    let resolved: Vec<Option<String>> = page
        .links
        .iter()
        .map(|&(_, url)| {
            let raw = page.urls.get(url as usize)?;
            if previous.replace(raw) == Some(raw) {
                return None;
            }
            resolve_to_string(base, raw)
        })
        .collect();
    let keys: Vec<Option<&str>> = resolved.iter().map(Option::as_deref).collect();
    let firsts = first_occurrences(&keys);
    let mut out = Vec::new();
    let mut anchor_buffer = String::new();
    for ((&(node, _), url), first) in page.links.iter().zip(resolved).zip(firsts) {
        let Some(url) = url.filter(|_| first) else {
            continue;
        };
        let (nofollow, anchor) = if node == NONE {
            (false, String::new())
        } else {
            let n = &page.nodes[node as usize];
            (
                n.flags & flag::NOFOLLOW != 0,
                anchor_text(page, node, &mut anchor_buffer).to_string(),
            )
        };
        out.push(Outlink {
            url,
            nofollow,
            anchor,
        });
    }
    out
}

/// For each key, whether it is the first of its value (`None` keys: never). A sort rather
/// than a hash set: no hashing of every string, and no worst case an attacker could pick.
fn first_occurrences(keys: &[Option<&str>]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..keys.len()).filter(|&i| keys[i].is_some()).collect();
    // Equal keys in page order, so the first of a run is the first on the page.
    order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]).then(a.cmp(&b)));
    let mut first = vec![false; keys.len()];
    let mut previous: Option<&str> = None;
    for i in order {
        if keys[i] != previous {
            first[i] = true;
            previous = keys[i];
        }
    }
    first
}

/// The link's text, whitespace collapsed, at most [`MAX_ANCHOR_CHARS`] characters, written
/// into `out` (cleared first: one buffer serves every link, and each anchor is then copied
/// out at its size).
fn anchor_text<'a>(page: &Page, node: u32, out: &'a mut String) -> &'a str {
    out.clear();
    let n = &page.nodes[node as usize];
    let (mut chars, mut space, mut prev_end) = (0, false, None);
    for ev in &page.events[n.open as usize..=n.close as usize] {
        let crate::scan::Event::Text(a, b) = *ev else {
            continue;
        };
        // Text ranges that do not touch were apart in the page (a block between them).
        if prev_end.is_some_and(|e| e != a) {
            space = true;
        }
        prev_end = Some(b);
        for c in page.text[a as usize..b as usize].chars() {
            if c.is_whitespace() {
                space = true;
                continue;
            }
            if chars >= MAX_ANCHOR_CHARS {
                return out;
            }
            if space && !out.is_empty() {
                out.push(' ');
                chars += 1;
            }
            space = false;
            out.push(c);
            chars += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    /// The slow path: what `join_plain` must agree with.
    fn by_url_crate(base: &Url, raw: &str) -> Option<String> {
        resolve(base, raw).map(String::from)
    }

    #[test]
    fn plain_join_takes_the_common_hrefs() {
        let base = Url::parse("https://news.example.com/2019/02/story.html?x=1#top").unwrap();
        for (raw, want) in [
            (
                "https://other.org/a/b-c_d.html?q=1&r=2#frag",
                "https://other.org/a/b-c_d.html?q=1&r=2",
            ),
            ("http://www.example.co.uk", "http://www.example.co.uk/"),
            ("https://a.com?x=1", "https://a.com/?x=1"),
            (
                "//cdn.example.net/img%20x.png",
                "https://cdn.example.net/img%20x.png",
            ),
            ("/world/europe/", "https://news.example.com/world/europe/"),
            ("/", "https://news.example.com/"),
            (
                "/a:b@c/;d=e,f+g*h(i)!$~?q=/?",
                "https://news.example.com/a:b@c/;d=e,f+g*h(i)!$~?q=/?",
            ),
        ] {
            assert_eq!(join_plain(&base, raw).as_deref(), Some(want), "{raw}");
            assert_eq!(by_url_crate(&base, raw).as_deref(), Some(want), "{raw}");
        }
        for raw in [
            "HTTPS://a.com/",
            "https://A.com/",
            "https://a.com:443/",
            "https://u@a.com/",
            "https://xn--bcher-kva.example/",
            "https://1.2.3.4/",
            "https://a.0x1f/",
            "https://a.com./",
            "https://a-.com/",
            "https://a.com/./b",
            "https://a.com/b/../c",
            "https://a.com/%2E%2e/c",
            "https://a.com/b\\c",
            "https://a.com/b c",
            "https://a.com/é",
            "https://a.com/?q='",
            "relative/path",
            "?q=1",
            "#top",
            "mailto:x@y",
        ] {
            assert_eq!(join_plain(&base, raw), None, "{raw}");
        }
    }

    /// `join_plain`, wherever it answers, gives the bytes of `Url::join` (without fragment),
    /// over many generated hrefs made of the pieces URL parsing treats specially.
    #[test]
    fn plain_join_agrees_with_the_url_crate() {
        const PIECES: &[&str] = &[
            "http://",
            "https://",
            "HTTP://",
            "//",
            "/",
            "\\",
            ".",
            "..",
            "%2e",
            "%2E",
            "%",
            "%41",
            "?",
            "#",
            ":",
            "@",
            "80",
            "443",
            ":80",
            ":443",
            "xn--",
            "a",
            "B",
            "z9",
            "0x",
            "0",
            "1",
            "255",
            "-",
            "--",
            " ",
            "\t",
            "\n",
            "é",
            "'",
            "\"",
            "<",
            ">",
            "{",
            "}",
            "|",
            "^",
            "[",
            "]",
            "`",
            "~",
            "&amp;",
            "=",
            ";",
            ",",
            "+",
            "*",
            "!",
            "$",
            "(",
            ")",
            "_",
            "com",
            "www.",
            "example.",
            "index.html",
            "a.b",
            "a..b",
            "q=1&r=2",
            "\u{0}",
            "\u{7f}",
            "\u{3000}",
            "日本",
            "mailto:",
            "javascript:",
            "data:",
            "ftp://",
        ];
        let bases = [
            "https://news.example.com/2019/02/story.html?x=1#top",
            "http://ex.com",
            "http://user:pw@ex.com:8080/dir/",
            "https://ex.com/a/b/",
            "ftp://files.example.org/pub/",
        ]
        .map(|b| Url::parse(b).unwrap());
        let mut next = crate::test_rng::xorshift();
        let mut answered = 0;
        for _ in 0..200_000 {
            let mut raw = String::new();
            let starts = ["https://", "http://", "//", "/", ""];
            raw.push_str(starts[(next() % starts.len() as u64) as usize]);
            for _ in 0..next() % 8 {
                // Mostly plain letters, so that many hrefs stay on the fast path.
                if next().is_multiple_of(3) {
                    raw.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
                } else {
                    raw.push_str(["a", "b.", "c/", "d-e", "f"][(next() % 5) as usize]);
                }
            }
            for base in &bases {
                if let Some(fast) = join_plain(base, &raw) {
                    answered += 1;
                    assert_eq!(
                        Some(fast),
                        by_url_crate(base, &raw),
                        "{raw:?} against {base}"
                    );
                }
            }
        }
        assert!(
            answered > 100_000,
            "the fast path answered {answered} times only"
        );
    }

    #[test]
    fn first_occurrences_keeps_the_first_of_each_value() {
        let keys = [
            Some("b"),
            Some("a"),
            None,
            Some("b"),
            Some("c"),
            Some("a"),
            None,
        ];
        assert_eq!(
            first_occurrences(&keys),
            [true, true, false, false, true, false, false]
        );
    }

    #[test]
    fn resolved_filtered_deduplicated() {
        let page = scan(
            "<base href='/dir/'><a href='a.html#x'> One\n two </a><a href='a.html'>again</a>\
             <a href='mailto:x@y'>m</a><a href='https://o.org/p' rel='nofollow'>o</a>\
             <a href='/b'>b<i>old</i><br>next</a><a href='#top'>top</a><a href='javascript:void(0)'>j</a><a>no href</a>",
        );
        let page_url = Url::parse("http://ex.com/news/1").unwrap();
        let links = outlinks(&page, &base_url(&page, &page_url));
        assert_eq!(
            links,
            [
                Outlink {
                    url: "http://ex.com/dir/a.html".into(),
                    nofollow: false,
                    anchor: "One two".into()
                },
                Outlink {
                    url: "https://o.org/p".into(),
                    nofollow: true,
                    anchor: "o".into()
                },
                Outlink {
                    url: "http://ex.com/b".into(),
                    nofollow: false,
                    anchor: "bold next".into()
                },
            ]
        );
    }
}
