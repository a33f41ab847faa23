//! The headline: `og:title` and other meta titles, `<title>`, and h1–h3 headings, reconciled
//! the GeneralNewsExtractor way (the heading sharing the longest common substring with the
//! titles wins), with site-name suffixes (`_凤凰网资讯_凤凰网`, ` | Reuters`, ` - BBC News`)
//! removed.

use crate::scan::{flag, Page, Tag};

/// Headings looked at (the first ones in the page).
pub const MAX_HEADINGS: usize = 12;
/// Longest heading considered (chars).
pub const MAX_HEADING_CHARS: usize = 300;

/// Separators between a headline and the site name in `<title>`.
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " :: ", " · ", " » ", "｜", "_", " |", "| ", "--", "——",
];

/// The page's title, if it has one.
pub fn title(page: &Page, site_name: Option<&str>) -> Option<String> {
    let meta = crate::meta(
        page,
        &[
            "og:title",
            "twitter:title",
            "articletitle",
            "headline",
            "title",
        ],
    )
    .map(collapse)
    .filter(|t| !t.is_empty());
    let json = page
        .json_ld
        .iter()
        .find_map(|j| crate::published::json_string(j, "headline"))
        .map(|t| collapse(&crate::entities::decode(&t)))
        .filter(|t| !t.is_empty());
    let doc = Some(collapse(&page.title)).filter(|t| !t.is_empty());
    let references: Vec<&str> = [doc.as_deref(), meta.as_deref(), json.as_deref()]
        .into_iter()
        .flatten()
        .collect();

    // The heading that shares most with the titles, when it shares most of itself.
    let bigrams: Vec<Bigrams> = references.iter().map(|r| Bigrams::of(r)).collect();
    let mut best: Option<(usize, String)> = None;
    for h in headings(page) {
        let hl = h.chars().count();
        let chars: Vec<char> = h.chars().take(MAX_HEADING_CHARS).collect();
        let at_least = best.as_ref().map_or(0, |(c, _)| *c);
        let common = references
            .iter()
            .zip(&bigrams)
            .filter(|(_, b)| {
                // Skip the quadratic comparison when even the bound cannot win.
                let bound = b.common_run_bound(&chars);
                bound * 10 >= hl * 6 && bound >= 4 && bound > at_least
            })
            .map(|(r, _)| longest_common_substring(&h, r))
            .max()
            .unwrap_or(0);
        if common * 10 >= hl * 6 && common >= 4 && best.as_ref().is_none_or(|(c, _)| common > *c) {
            best = Some((common, h));
        }
    }
    if let Some((_, h)) = best {
        return Some(h);
    }
    json.or(meta.map(|m| strip_site(&m, site_name)))
        .or(doc.map(|d| strip_site(&d, site_name)))
        .or_else(|| {
            // No title anywhere but the page: its first h1.
            page.nodes
                .iter()
                .enumerate()
                .find(|(_, n)| n.tag == Tag::H1 && n.flags & (flag::SKIPPED | flag::HEAD) == 0)
                .map(|(i, _)| collapse(&page.node_text(i as u32)))
        })
        .filter(|t| !t.is_empty())
}

/// Texts of the first h1–h3 outside skipped and chrome elements.
fn headings(page: &Page) -> Vec<String> {
    page.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            matches!(n.tag, Tag::H1 | Tag::H2 | Tag::H3)
                && n.flags & (flag::SKIPPED | flag::HEAD) == 0
        })
        .map(|(i, _)| collapse(&page.node_text(i as u32)))
        .filter(|t| !t.is_empty() && t.chars().count() <= MAX_HEADING_CHARS)
        .take(MAX_HEADINGS)
        .collect()
}

/// Removes the site name part of a title: the segments between separators that name the
/// site, or else everything but the longest segment.
pub fn strip_site(title: &str, site_name: Option<&str>) -> String {
    let mut parts = vec![title.to_string()];
    for sep in SEPARATORS {
        parts = parts
            .iter()
            .flat_map(|p| p.split(sep).map(str::to_string).collect::<Vec<_>>())
            .collect();
    }
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() <= 1 {
        return title.trim().to_string();
    }
    let site = site_name.map(|s| s.to_lowercase());
    let kept: Vec<&String> = parts
        .iter()
        .filter(|p| {
            let l = p.to_lowercase();
            site.as_ref()
                .is_none_or(|s| !(l.contains(s.as_str()) || s.contains(l.as_str())))
        })
        .collect();
    // The headline is the longest part (site names and sections are short).
    kept.iter()
        .max_by_key(|p| p.chars().count())
        .map(|p| p.to_string())
        .unwrap_or_else(|| title.trim().to_string())
}

/// The character bigrams of a text, hashed into a bit set: a cheap upper bound on the common
/// substrings another text can have with it.
struct Bigrams([u64; 64]);

impl Bigrams {
    fn of(s: &str) -> Bigrams {
        let mut set = Bigrams([0; 64]);
        let mut prev = None;
        for c in s.chars().take(4 * MAX_HEADING_CHARS) {
            if let Some(p) = prev {
                let h = Self::hash(p, c);
                set.0[h / 64] |= 1 << (h % 64);
            }
            prev = Some(c);
        }
        set
    }

    fn hash(a: char, b: char) -> usize {
        let x = (a as u32).wrapping_mul(0x9E37_79B1) ^ (b as u32).wrapping_mul(0x85EB_CA77);
        (x.rotate_left(13).wrapping_mul(0xC2B2_AE3D) >> 20) as usize % 4096
    }

    /// At least the length of the longest common substring of `chars` and the set's text:
    /// one more than the longest run of `chars`' bigrams all found in the set.
    fn common_run_bound(&self, chars: &[char]) -> usize {
        let (mut run, mut best) = (0, 0);
        for w in chars.windows(2) {
            let h = Self::hash(w[0], w[1]);
            if self.0[h / 64] & (1 << (h % 64)) != 0 {
                run += 1;
                best = best.max(run);
            } else {
                run = 0;
            }
        }
        best + usize::from(!chars.is_empty())
    }
}

/// Length (chars) of the longest common substring.
fn longest_common_substring(a: &str, b: &str) -> usize {
    // The usual case, a heading repeated in the title, without the quadratic table.
    if a.len() <= b.len() && b.contains(a) {
        return a.chars().take(MAX_HEADING_CHARS).count();
    }
    if b.len() < a.len() && a.contains(b) {
        return b.chars().take(MAX_HEADING_CHARS).count();
    }
    let a: Vec<char> = a.chars().take(MAX_HEADING_CHARS).collect();
    let b: Vec<char> = b.chars().take(MAX_HEADING_CHARS).collect();
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    let mut best = 0;
    for ca in &a {
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = if ca == cb { prev[j] + 1 } else { 0 };
            best = best.max(cur[j + 1]);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    best
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    #[test]
    fn suffixes_removed() {
        assert_eq!(
            strip_site("Markets rally on rate hopes | Reuters", Some("Reuters")),
            "Markets rally on rate hopes"
        );
        assert_eq!(
            strip_site("Storm hits coast - BBC News", None),
            "Storm hits coast"
        );
        assert_eq!(
            strip_site("男子救落水儿童_凤凰网资讯_凤凰网", None),
            "男子救落水儿童"
        );
        assert_eq!(strip_site("Plain title", None), "Plain title");
    }

    #[test]
    fn heading_reconciled_with_title() {
        let page = scan(
            "<title>男子勇救落水儿童 获颁见义勇为奖_凤凰网资讯_凤凰网</title>\
             <div class=nav><h2>热门推荐</h2></div><h1>男子勇救落水儿童 获颁见义勇为奖</h1>",
        );
        assert_eq!(
            title(&page, None).as_deref(),
            Some("男子勇救落水儿童 获颁见义勇为奖")
        );
        let page = scan("<title>Home | Site</title><h1>Unrelated</h1>");
        assert_eq!(title(&page, Some("Site")).as_deref(), Some("Home"));
    }
}
