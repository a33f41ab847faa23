//! Outlinks and absolute URLs: every `<a href>` resolved against the page URL and `<base href>`.

use std::collections::HashSet;

use url::Url;

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

/// Every `<a href>` of the page, deduplicated by URL (the first kept).
pub fn outlinks(page: &Page, base: &Url) -> Vec<Outlink> {
    let mut seen: HashSet<String> = HashSet::new();
    // The same href written twice resolves the same: skip the (costly) resolution.
    let mut seen_raw: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for &(node, url) in &page.links {
        let Some(raw) = page.urls.get(url as usize) else {
            continue;
        };
        if !seen_raw.insert(raw.trim()) {
            continue;
        }
        let Some(u) = resolve(base, raw) else {
            continue;
        };
        let u = String::from(u);
        if seen.contains(&u) {
            continue;
        }
        seen.insert(u.clone());
        let (nofollow, anchor) = if node == NONE {
            (false, String::new())
        } else {
            let n = &page.nodes[node as usize];
            (n.flags & flag::NOFOLLOW != 0, anchor_text(page, node))
        };
        out.push(Outlink {
            url: u,
            nofollow,
            anchor,
        });
    }
    out
}

/// The link's text, whitespace collapsed, at most [`MAX_ANCHOR_CHARS`] characters.
fn anchor_text(page: &Page, node: u32) -> String {
    let mut out = String::new();
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
