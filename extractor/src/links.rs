//! Outlinks and absolute URLs: every `<a href>` resolved against the page URL and `<base href>`.

use url::{Position, Url};

use crate::scan::{flag, word_hash, Page, NONE};
use crate::Link;

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
    let mut out = String::with_capacity(raw.len() + 32);
    resolve_into(base, raw, &mut out).then_some(out)
}

/// [`resolve_to_string`] appended to `out`: whether `raw` resolved (if not, `out` is left as
/// it was). One buffer can so take the URLs of every link of a page.
pub fn resolve_into(base: &Url, raw: &str, out: &mut String) -> bool {
    let raw = raw.trim();
    let start = out.len();
    if join_plain(base, raw, out).is_some() {
        return true;
    }
    out.truncate(start);
    match resolve(base, raw) {
        Some(u) => {
            out.push_str(u.as_str());
            true
        }
        None => false,
    }
}

/// Appends `base.join(raw)` without its fragment to `out`, when `raw` is an `http://` or
/// `https://` URL, or a `//host/...` or `/path` reference against an http(s) `base`, and
/// written so that URL parsing changes nothing: a lowercase host of plain labels (no port, no
/// user, no IP address, no punycode), a path and query of characters that are never
/// percent-encoded, no `.` or `..` segment, no backslash. `None` for any other `raw` (not "no
/// URL": the caller then asks `Url::join`), with part of the URL possibly pushed already.
fn join_plain(base: &Url, raw: &str, out: &mut String) -> Option<()> {
    let rest = if let Some(rest) = raw.strip_prefix("https://") {
        out.push_str("https://");
        plain_host(rest, "https", out)?
    } else if let Some(rest) = raw.strip_prefix("http://") {
        out.push_str("http://");
        plain_host(rest, "http", out)?
    } else if !matches!(base.scheme(), "http" | "https") {
        return None;
    } else if let Some(rest) = raw.strip_prefix("//") {
        out.push_str(base.scheme());
        out.push_str("://");
        plain_host(rest, base.scheme(), out)?
    } else if raw.starts_with('/') {
        // Scheme, user, host and port of the base.
        out.push_str(&base[..Position::BeforePath]);
        raw
    } else {
        return None;
    };
    plain_path_and_query(rest, out)
}

/// Pushes the host and port `rest` starts with (up to `/`, `?`, `#` or the end) when URL
/// parsing keeps them as they are, and returns what follows them. The host is either labels
/// that IDNA passes through unchanged (`[a-z][a-z0-9-]*`, not ending in `-`, no `--` at the
/// third character, so no `xn--`; the last label starts with a letter, so the host is no
/// IPv4 address) or an IPv4 address as it is written back (four decimal numbers up to 255
/// without leading zeros). The port, if any, is a number from 1 to 65535 without leading
/// zeros, and not the scheme's default (which URL parsing drops).
fn plain_host<'a>(rest: &'a str, scheme: &str, out: &mut String) -> Option<&'a str> {
    let bytes = rest.as_bytes();
    let host_end = match canonical_ipv4(bytes) {
        Some(end) => end,
        None => plain_labels(bytes)?,
    };
    let port_end = match bytes.get(host_end) {
        Some(b':') => {
            let digits = &bytes[host_end + 1..];
            let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
            let port: u32 = rest.get(host_end + 1..host_end + 1 + n)?.parse().ok()?;
            let default = match scheme {
                "http" => 80,
                "https" => 443,
                _ => return None,
            };
            let ends = matches!(digits.get(n), Some(b'/' | b'?' | b'#') | None);
            if !(ends && n <= 5 && digits[0] != b'0' && port <= 65535 && port != default) {
                return None;
            }
            host_end + 1 + n
        }
        Some(b'/' | b'?' | b'#') | None => host_end,
        Some(_) => return None,
    };
    out.push_str(&rest[..port_end]);
    Some(&rest[port_end..])
}

/// The end of the labels `bytes` starts with (see [`plain_host`]), before a `:`, `/`, `?`,
/// `#` or the end.
fn plain_labels(bytes: &[u8]) -> Option<usize> {
    let mut label_start = 0;
    let mut end = 0;
    loop {
        match bytes.get(end) {
            Some(b'a'..=b'z') => {}
            Some(b'0'..=b'9' | b'-') if end > label_start => {}
            Some(b'.') | Some(b':' | b'/' | b'?' | b'#') | None => {
                let label = &bytes[label_start..end];
                let passes = !label.is_empty()
                    && label.last() != Some(&b'-')
                    && !(label.len() >= 4 && label[2] == b'-' && label[3] == b'-');
                if !passes {
                    return None;
                }
                if bytes.get(end) != Some(&b'.') {
                    return Some(end);
                }
                label_start = end + 1;
            }
            Some(_) => return None,
        }
        end += 1;
    }
}

/// The end of the IPv4 address `bytes` starts with, when it is four decimal numbers of 0 to
/// 255 without leading zeros (`127.0.0.1`: URL parsing writes it back the same; `127.1`,
/// `010.0.0.1` or `0x7f.0.0.1` it rewrites), before a `:`, `/`, `?`, `#` or the end.
fn canonical_ipv4(bytes: &[u8]) -> Option<usize> {
    let mut end = 0;
    for part in 0..4 {
        let n = bytes[end..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let digits = &bytes[end..end + n];
        let value = digits
            .iter()
            .fold(0u32, |v, &d| v.saturating_mul(10) + u32::from(d - b'0'));
        if n == 0 || n > 3 || (n > 1 && digits[0] == b'0') || value > 255 {
            return None;
        }
        end += n;
        let next = bytes.get(end);
        if part < 3 {
            if next != Some(&b'.') {
                return None;
            }
            end += 1;
        } else if !matches!(next, Some(b':' | b'/' | b'?' | b'#') | None) {
            return None;
        }
    }
    Some(end)
}

/// The index of the first byte at or after `from` that is not [`PLAIN`] (`bytes.len()` if
/// none): eight bytes a step while all eight are plain (ANDing their [`URL_BYTES`] values
/// leaves the bit), then byte by byte. Paths run mostly over plain bytes.
fn skip_plain(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        if chunk
            .iter()
            .fold(PLAIN, |acc, &b| acc & URL_BYTES[b as usize])
            == 0
        {
            break;
        }
        i += 8;
    }
    while bytes
        .get(i)
        .is_some_and(|&b| URL_BYTES[b as usize] == PLAIN)
    {
        i += 1;
    }
    i
}

/// What a byte is to [`plain_path_and_query`]: [`PLAIN`], [`MARK`], or else (0) a byte that
/// URL parsing may change.
const URL_BYTES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_alphanumeric() {
            table[b] = PLAIN;
        }
        b += 1;
    }
    let others = b"-._~!$&()*+,;=:@";
    let mut i = 0;
    while i < others.len() {
        table[others[i] as usize] = PLAIN;
        i += 1;
    }
    let marks = b"/?%#";
    let mut i = 0;
    while i < marks.len() {
        table[marks[i] as usize] = MARK;
        i += 1;
    }
    table
};
/// Bytes outside every percent-encode set of special URLs and without special meaning in
/// their paths and queries (`\` is a slash there; `'` is encoded in their queries).
const PLAIN: u8 = 1;
/// Plain bytes that end a segment, the path or the URL (`/`, `?`, `#`), or may start an
/// encoded dot (`%`).
const MARK: u8 = 2;

/// Pushes the path and query `rest` starts with (an empty path as `/`), without the fragment,
/// when URL parsing keeps them as they are: plain bytes only ([`URL_BYTES`]), and no dot
/// segment in the path (`.`, `..`, or any `%2e`, which URL parsing reads as a dot).
fn plain_path_and_query(rest: &str, out: &mut String) -> Option<()> {
    path_and_query_skipping(rest, out, skip_plain)
}

/// [`plain_path_and_query`] with `skip` finding, from a byte on, the first byte that is not
/// plain: [`skip_plain`], or in the tests a byte-by-byte scan to check it against.
fn path_and_query_skipping(
    rest: &str,
    out: &mut String,
    skip: impl Fn(&[u8], usize) -> usize,
) -> Option<()> {
    let bytes = rest.as_bytes();
    let dot_segment = |segment: &[u8]| matches!(segment, b"." | b"..");
    let mut path_end = None;
    let mut segment_start = 0;
    let mut end = bytes.len();
    let mut i = 0;
    loop {
        // Runs of plain bytes skipped whole; a mark is looked at, anything else refused.
        i = skip(bytes, i);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        if URL_BYTES[b as usize] != MARK {
            return None;
        }
        match b {
            b'#' => {
                end = i;
                break;
            }
            b'/' | b'?' if path_end.is_none() => {
                if dot_segment(bytes.get(segment_start..i)?) {
                    return None;
                }
                segment_start = i + 1;
                if b == b'?' {
                    path_end = Some(i);
                }
            }
            b'%' if path_end.is_none()
                && bytes
                    .get(i + 1..i + 3)
                    .is_some_and(|h| h.eq_ignore_ascii_case(b"2e")) =>
            {
                return None;
            }
            _ => {}
        }
        i += 1;
    }
    if path_end.is_none() && dot_segment(bytes.get(segment_start..end)?) {
        return None;
    }
    if path_end.unwrap_or(end) == 0 {
        out.push('/');
    }
    out.push_str(rest.get(..end)?);
    Some(())
}

/// Every `<a href>` of the page, deduplicated by URL (the first kept).
pub fn outlinks(page: &Page, base: &Url) -> Vec<Link> {
    // The resolved URLs one after the other in one buffer, and where each link's is: no
    // string of its own for a URL that turns out to be a duplicate.
    let mut buffer = String::with_capacity(page.links.len() * 64);
    // A link written twice in a row (a teaser's image and its headline) is not resolved
    // again: it would resolve to the same URL and be dropped as a duplicate of the first.
    let mut previous: Option<&str> = None;
    let spans: Vec<Option<(usize, usize)>> = page
        .links
        .iter()
        .map(|&(_, url)| {
            let raw = page.url(url)?;
            if previous.replace(raw) == Some(raw) {
                return None;
            }
            let start = buffer.len();
            resolve_into(base, raw, &mut buffer).then_some((start, buffer.len()))
        })
        .collect();
    let keys: Vec<Option<&str>> = spans
        .iter()
        .map(|span| span.and_then(|(a, b)| buffer.get(a..b)))
        .collect();
    let firsts = first_occurrences(&keys);
    let mut out = Vec::with_capacity(firsts.iter().filter(|&&f| f).count());
    let mut anchor_buffer = String::new();
    for ((&(node, _), url), first) in page.links.iter().zip(keys).zip(firsts) {
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
        out.push(Link {
            url: url.to_string(),
            nofollow,
            anchor,
        });
    }
    out
}

/// For each key, whether it is the first of its value (`None` keys: never). The keys are
/// grouped by sorting their hashes (integer comparisons, not string ones); a group whose keys
/// are not all equal (a collision, by chance or made by an attacker) is sorted by value then,
/// so that no input costs more than sorting the strings themselves would.
fn first_occurrences(keys: &[Option<&str>]) -> Vec<bool> {
    // One integer a key: the high half of its hash, and its index below (a page has far
    // fewer than 2^32 links), so that equal hashes sort in page order and the first of a
    // group is the first on the page.
    const INDEX: u64 = u32::MAX as u64;
    let mut order: Vec<u64> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, key)| {
            Some(word_hash((*key)?.as_bytes()) & !INDEX | u64::try_from(i).ok()?)
        })
        .collect();
    order.sort_unstable();
    let index = |packed: &u64| (packed & INDEX) as usize;
    let mut first = vec![false; keys.len()];
    let mut collided = Vec::new();
    for group in order.chunk_by(|a, b| a & !INDEX == b & !INDEX) {
        let Some(head) = group.first().map(index) else {
            continue;
        };
        // A key alone with its hash (the common case) needs no string comparison.
        if group.len() == 1 || group.iter().all(|i| keys[index(i)] == keys[head]) {
            first[head] = true;
            continue;
        }
        collided.clear();
        collided.extend(group.iter().map(index));
        // Equal keys in page order, so the first of a run is the first on the page.
        collided.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]).then(a.cmp(&b)));
        let mut previous = None;
        for &i in &collided {
            if keys[i] != previous {
                first[i] = true;
                previous = keys[i];
            }
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
    let mut anchor = Anchor {
        out,
        chars: 0,
        space: false,
    };
    let mut prev_end = None;
    for ev in &page.events[n.open as usize..=n.close as usize] {
        let crate::scan::Event::Text(a, b) = *ev else {
            continue;
        };
        // Text ranges that do not touch were apart in the page (a block between them).
        if prev_end.is_some_and(|e| e != a) {
            anchor.space = true;
        }
        prev_end = Some(b);
        let text = &page.text[a as usize..b as usize];
        let full = if text.is_ascii() {
            anchor.ascii_text(text)
        } else {
            anchor.text(text)
        };
        if full {
            break;
        }
    }
    anchor.out
}

/// An anchor text being written: its words, one space between them.
struct Anchor<'a> {
    out: &'a mut String,
    /// Characters written.
    chars: usize,
    /// Whitespace came since the last word.
    space: bool,
}

impl Anchor<'_> {
    /// Adds the words of `text`; true once the anchor is full (nothing more would be added).
    fn text(&mut self, text: &str) -> bool {
        for (i, word) in text.split(char::is_whitespace).enumerate() {
            self.space |= i > 0;
            if !word.is_empty() && self.run(word, word.chars().count()) {
                return true;
            }
        }
        false
    }

    /// [`Anchor::text`] for ASCII text, by bytes (the whitespace `char::is_whitespace` sees
    /// in ASCII), a run of words with one space between them at a time: the text is mostly
    /// collapsed already.
    fn ascii_text(&mut self, text: &str) -> bool {
        let bytes = text.as_bytes();
        let is_space = |b: &u8| matches!(b, b'\t'..=b'\r' | b' ');
        let word_end = |from: usize| {
            bytes
                .get(from..)
                .and_then(|rest| rest.iter().position(is_space))
                .map_or(bytes.len(), |p| from + p)
        };
        let mut start = 0;
        while start < bytes.len() {
            if bytes.get(start).is_some_and(is_space) {
                self.space = true;
                start += 1;
                continue;
            }
            let mut end = word_end(start);
            while bytes.get(end) == Some(&b' ') && bytes.get(end + 1).is_some_and(|b| !is_space(b))
            {
                end = word_end(end + 1);
            }
            // ASCII: one character a byte, and every byte a character boundary.
            if let Some(run) = text.get(start..end) {
                if self.run(run, run.len()) {
                    return true;
                }
            }
            start = end;
        }
        false
    }

    /// Adds a run of words (one ASCII space between them) of `chars` characters, after one
    /// space when whitespace came before it. Characters are written up to the cap, and a word
    /// started (its first character, and the space before it) is written even at the cap.
    /// True once the anchor is full.
    fn run(&mut self, run: &str, chars: usize) -> bool {
        if self.chars >= MAX_ANCHOR_CHARS {
            return true;
        }
        if self.space && !self.out.is_empty() {
            self.out.push(' ');
            self.chars += 1;
        }
        self.space = false;
        let room = MAX_ANCHOR_CHARS.saturating_sub(self.chars).max(1);
        if chars <= room {
            self.out.push_str(run);
            self.chars += chars;
            return self.chars >= MAX_ANCHOR_CHARS;
        }
        let (cut, taken) = if chars == run.len() {
            // ASCII; a space at the cap takes the first character of its word with it.
            let bytes = run.as_bytes();
            if bytes.get(room - 1) == Some(&b' ') {
                (room + 1, room + 1)
            } else {
                (room, room)
            }
        } else {
            let cut = run.char_indices().nth(room).map_or(run.len(), |(i, _)| i);
            (cut, room)
        };
        self.out.push_str(run.get(..cut).unwrap_or(run));
        self.chars += taken;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    /// The slow path: what `join_plain` must agree with.
    fn by_url_crate(base: &Url, raw: &str) -> Option<String> {
        resolve(base, raw).map(String::from)
    }

    /// `join_plain` into a buffer of its own.
    fn plain(base: &Url, raw: &str) -> Option<String> {
        let mut out = String::new();
        join_plain(base, raw, &mut out).map(|()| out)
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
            ("https://1.2.3.4/", "https://1.2.3.4/"),
            (
                "http://127.0.0.12:8080/p/3?x",
                "http://127.0.0.12:8080/p/3?x",
            ),
            ("//a.com:8443", "https://a.com:8443/"),
            ("https://a.com:80/", "https://a.com:80/"),
            (
                "/a:b@c/;d=e,f+g*h(i)!$~?q=/?",
                "https://news.example.com/a:b@c/;d=e,f+g*h(i)!$~?q=/?",
            ),
        ] {
            assert_eq!(plain(&base, raw).as_deref(), Some(want), "{raw}");
            assert_eq!(by_url_crate(&base, raw).as_deref(), Some(want), "{raw}");
        }
        for raw in [
            "HTTPS://a.com/",
            "https://A.com/",
            "https://a.com:443/",
            "https://u@a.com/",
            "https://xn--bcher-kva.example/",
            "https://a.0x1f/",
            "https://1.2.3/",
            "https://1.2.3.4.5/",
            "https://01.2.3.4/",
            "https://1.2.3.256/",
            "https://0x1.2.3.4/",
            "https://a.com:/",
            "https://a.com:0443/",
            "https://a.com:65536/",
            "http://a.com:80/",
            "https://a.com:8a/",
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
            assert_eq!(plain(&base, raw), None, "{raw}");
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
            ":8080",
            ":65535",
            ":65536",
            ":0",
            ":08",
            "127.0.0.1",
            "10.0.0.",
            "1.2.3",
            "256",
            "00",
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
        let mut next = crate::test_rng::sequence();
        // Answers of the fast path, with a port, with an IPv4 host.
        let mut tally = [0usize; 3];
        // Each base's fast answer to `raw`, if any, against the URL crate's; tallied.
        let check = |raw: &str, tally: &mut [usize; 3]| {
            for base in &bases {
                if let Some(fast) = plain(base, raw) {
                    let authority = fast.split('/').nth(2).unwrap_or("");
                    tally[0] += 1;
                    tally[1] += usize::from(authority.contains(':'));
                    tally[2] += usize::from(authority.starts_with(|c: char| c.is_ascii_digit()));
                    assert_eq!(
                        Some(fast),
                        by_url_crate(base, raw),
                        "{raw:?} against {base}"
                    );
                }
            }
        };
        for _ in 0..200_000 {
            let mut raw = String::new();
            let starts = ["https://", "http://", "//", "/", ""];
            raw.push_str(crate::test_rng::pick(&mut next, &starts));
            for _ in 0..next() % 8 {
                // Mostly plain letters, so that many hrefs stay on the fast path.
                if next().is_multiple_of(3) {
                    raw.push_str(crate::test_rng::pick(&mut next, PIECES));
                } else {
                    raw.push_str(["a", "b.", "c/", "d-e", "f"][(next() % 5) as usize]);
                }
            }
            check(&raw, &mut tally);
        }
        // The general hrefs' answers and ports; IPv4 hosts are counted over both loops.
        let [general, ported, _] = tally;
        // Hosts of numbers and dots, with ports or none.
        for _ in 0..50_000 {
            let mut raw = String::from(crate::test_rng::pick(&mut next, &["http://", "//"]));
            for i in 0..3 + next() % 3 {
                if i > 0 {
                    raw.push('.');
                }
                let parts = [
                    "0", "1", "9", "10", "99", "127", "255", "256", "01", "00", "0x7f",
                ];
                raw.push_str(crate::test_rng::pick(&mut next, &parts));
            }
            let ports = [
                "", ":", ":1", ":80", ":443", ":8080", ":65535", ":65536", ":08",
            ];
            raw.push_str(crate::test_rng::pick(&mut next, &ports));
            raw.push_str(crate::test_rng::pick(
                &mut next,
                &["", "/", "/p/1", "?q", "#f", "x"],
            ));
            check(&raw, &mut tally);
        }
        let ipv4 = tally[2];
        assert!(
            general > 100_000,
            "the fast path answered {general} times only"
        );
        assert!(
            ported > 1_000 && ipv4 > 1_000,
            "the fast path answered with a port {ported} times, an IPv4 host {ipv4} times"
        );
    }

    /// `plain_path_and_query` byte by byte, as it was before runs were skipped.
    fn path_by_bytes(rest: &str) -> Option<String> {
        let by_bytes = |bytes: &[u8], from: usize| {
            let plain = |b: &u8| b.is_ascii_alphanumeric() || b"-._~!$&()*+,;=:@".contains(b);
            from + bytes[from..].iter().take_while(|b| plain(b)).count()
        };
        let mut out = String::new();
        path_and_query_skipping(rest, &mut out, by_bytes)?;
        Some(out)
    }

    /// The path scanner that skips runs agrees with the byte-by-byte one, over generated
    /// text with long plain runs and every kind of byte that stops them.
    #[test]
    fn plain_run_skipping_agrees_with_byte_by_byte() {
        const PIECES: &[&str] = &[
            "a",
            "z",
            "0",
            "9",
            "-",
            "--",
            ".",
            "..",
            "/",
            "?",
            "#",
            "%",
            "%2e",
            "%2E",
            "%41",
            "_",
            "~",
            "@",
            ":",
            "A",
            " ",
            "\\",
            "'",
            "é",
            "xn--",
            "abcdefghij",
            "q=1&r=2",
            "\u{7f}",
            "\u{0}",
        ];
        let mut next = crate::test_rng::sequence();
        let mut paths = 0;
        for _ in 0..200_000 {
            let mut raw = String::new();
            for _ in 0..next() % 12 {
                if next().is_multiple_of(4) {
                    raw.push_str(crate::test_rng::pick(&mut next, PIECES));
                } else {
                    raw.push_str(["abcdefgh", "b.", "c/", "d-e", "f1"][(next() % 5) as usize]);
                }
            }
            let mut out = String::new();
            let path = plain_path_and_query(&raw, &mut out).map(|()| out);
            paths += usize::from(path.is_some());
            assert_eq!(path, path_by_bytes(&raw), "{raw:?}");
        }
        assert!(paths > 10_000, "the path was plain {paths} times only");
    }

    /// The anchor text char by char: what `anchor_text` must agree with.
    fn anchor_by_chars(page: &crate::scan::Page, node: u32) -> String {
        let mut out = String::new();
        let n = &page.nodes[node as usize];
        let (mut chars, mut space, mut prev_end) = (0, false, None);
        for ev in &page.events[n.open as usize..=n.close as usize] {
            let crate::scan::Event::Text(a, b) = *ev else {
                continue;
            };
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

    /// Anchor texts written by runs of words agree with the char-by-char rule, around the cap
    /// too, over generated links.
    #[test]
    fn anchor_text_agrees_with_the_char_rule() {
        const PIECES: &[&str] = &[
            "a", "bc", "def", " ", "  ", "\t", "\n", "\u{b}", "é", "\u{a0}", "日本", "x y", "<b>",
            "</b>", "<br>", "<p>", "<div>", "&nbsp;", "\u{3000}",
        ];
        let mut next = crate::test_rng::sequence();
        let mut buffer = String::new();
        for _ in 0..3_000 {
            let mut html = String::from("<a href='/x'>");
            let target = 300 + next() % 900;
            // Half the links in ASCII only, half in any text.
            let ascii = next().is_multiple_of(2);
            while (html.len() as u64) < target {
                let piece = crate::test_rng::pick(&mut next, PIECES);
                if !ascii || piece.is_ascii() {
                    html.push_str(piece);
                }
            }
            html.push_str("</a>");
            let page = scan(&html);
            for &(node, _) in &page.links {
                if node != NONE {
                    assert_eq!(
                        anchor_text(&page, node, &mut buffer),
                        anchor_by_chars(&page, node),
                        "{html:?}"
                    );
                }
            }
        }
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
                Link {
                    url: "http://ex.com/dir/a.html".into(),
                    nofollow: false,
                    anchor: "One two".into()
                },
                Link {
                    url: "https://o.org/p".into(),
                    nofollow: true,
                    anchor: "o".into()
                },
                Link {
                    url: "http://ex.com/b".into(),
                    nofollow: false,
                    anchor: "bold next".into()
                },
            ]
        );
    }
}
