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
    let mut seen = HashSet::new();
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
            let text = page.node_text(node);
            let anchor: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let anchor = anchor.chars().take(MAX_ANCHOR_CHARS).collect();
            (n.flags & flag::NOFOLLOW != 0, anchor)
        };
        out.push(Outlink {
            url: u,
            nofollow,
            anchor,
        });
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
             <a href='#top'>top</a><a href='javascript:void(0)'>j</a><a>no href</a>",
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
            ]
        );
    }
}
