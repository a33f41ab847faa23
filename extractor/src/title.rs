//! The headline: `og:title` and other meta titles, `<title>`, and h1–h3 headings, reconciled
//! the GeneralNewsExtractor way (the heading sharing the longest common substring with the
//! titles wins), with site-name suffixes (`_凤凰网资讯_凤凰网`, ` | Reuters`, ` - BBC News`)
//! removed.

use crate::scan::{flag, Event, Page, Tag};

/// Headings looked at (the first ones in the page).
pub const MAX_HEADINGS: usize = 12;
/// Longest heading considered (chars).
pub const MAX_HEADING_CHARS: usize = 300;

/// Separators between a headline and the site name in `<title>`.
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " :: ", " · ", " » ", " • ", "│", "｜", "_", " |", "| ", "|", "--",
    "——",
];

/// The page's title, if it has one. `site_name` is the page's `og:site_name`, `host` the
/// host it was fetched from: a title that only names the site (`Telebasel` on
/// telebasel.ch, a blog's name in its logo heading) is not the headline.
pub fn title(page: &Page, site_name: Option<&str>, host: Option<&str>) -> Option<String> {
    headline_of(page, site_name, host).map(|t| without_leading_date(&t).to_string())
}

/// Longest date (bytes) cut from a title's start.
pub const LEADING_DATE_BYTES: usize = 24;

/// A title without the date a site puts before the headline ("23.01.2022 - Dorothea Wierer
/// darf jubeln"): the text after the first separator, when all before it is one date.
fn without_leading_date(title: &str) -> &str {
    [" - ", " – ", " — ", " | ", ": "]
        .iter()
        .filter_map(|sep| title.find(sep).map(|at| (at, at + sep.len())))
        .min()
        .filter(|&(at, _)| {
            let head = &title[..at];
            at <= LEADING_DATE_BYTES
                && crate::published::first_date(head) == Some(0)
                && !head.contains(char::is_alphabetic)
        })
        .map(|(_, rest)| title[rest..].trim())
        .filter(|rest| !rest.is_empty())
        .unwrap_or(title)
}

/// The title before [`without_leading_date`].
fn headline_of(page: &Page, site_name: Option<&str>, host: Option<&str>) -> Option<String> {
    let names_site = |t: &str| names_the_site(t, site_name, host);
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
    // The heading's bigram hashes, computed once for all the references (one buffer).
    let mut heading_bigrams = Vec::new();
    let headings = headings(page);
    for h in headings.iter().filter(|h| !names_site(h)).cloned() {
        let hl = h.chars().count();
        Bigrams::hashes_into(&h, &mut heading_bigrams);
        let at_least = best.as_ref().map_or(0, |(c, _)| *c);
        let common = references
            .iter()
            .zip(&bigrams)
            .filter(|(_, b)| {
                // Skip the quadratic comparison when even the bound cannot win.
                let bound = b.common_run_bound(&heading_bigrams, !h.is_empty());
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
        return Some(declared_within(&h, &references).unwrap_or(h));
    }
    let first_h1 = || {
        page.nodes
            .iter()
            .enumerate()
            .find(|(_, n)| n.tag == Tag::H1 && n.flags & (flag::SKIPPED | flag::HEAD) == 0)
            .map(|(i, _)| collapse(&page.node_text(i as u32)))
            .filter(|h| !h.is_empty() && h.chars().count() <= MAX_HEADING_CHARS)
    };
    let declared = json
        .map(|j| cut_site_part(&j, &names_site))
        .or(meta.map(|m| strip_site(&m, site_name)))
        .or(doc.map(|d| strip_site(&d, site_name)))
        .filter(|t| !t.is_empty());
    // The first h1 that is not the site's name (a blog's logo), else the first such h2
    // (blog templates set the site's name in the h1 and each post's title in an h2).
    let headline = || {
        first_h1().filter(|h| !names_site(h)).or_else(|| {
            headings
                .iter()
                .find(|h| !names_site(h))
                .filter(|_| first_h1().is_none_or(|h| names_site(&h)))
                .cloned()
        })
    };
    match declared {
        // The site's name as the title (a template's `og:title`): the page's headline.
        Some(t) if names_site(&t) => headline().or(Some(t)),
        Some(t) => Some(t),
        // No title anywhere but the page: its first h1.
        None => first_h1(),
    }
}

/// Most words of a part a heading adds to a declared title ([`declared_within`]).
pub const MAX_ADDED_WORDS: usize = 3;

/// The declared title (`og:title`, `<title>`, JSON-LD's headline) that `heading` holds
/// whole, with a short part added before or after it at a [`SEPARATORS`] (at most
/// [`MAX_ADDED_WORDS`] words: a site's name or a section's label, "Local News | Brothel
/// busted", "Atomkraft nicht nachhaltig | Umweltbundesamt", a hidden "| FASSETTE.NET"):
/// the headline without it. `None` when no declared title is so held.
fn declared_within(heading: &str, references: &[&str]) -> Option<String> {
    references.iter().find_map(|r| {
        let r = r.trim();
        if r.is_empty() || r.len() >= heading.len() {
            return None;
        }
        let (added, after) = match heading.strip_prefix(r) {
            Some(rest) => (rest, true),
            None => (heading.strip_suffix(r)?, false),
        };
        // A space between the title and the separator, or a separator that joins no word
        // ("Corona-Lockdown" is one word after the title "Corona").
        let spaced = if after {
            added.starts_with(char::is_whitespace)
        } else {
            added.ends_with(char::is_whitespace)
        };
        let added = added.trim();
        let part = SEPARATORS
            .iter()
            .map(|s| s.trim())
            .filter(|sep| spaced || ["|", "｜", "│", "_"].contains(sep))
            .find_map(|sep| {
                if after {
                    added.strip_prefix(sep)
                } else {
                    added.strip_suffix(sep)
                }
            })?;
        let words = part.split_whitespace().count();
        (1..=MAX_ADDED_WORDS)
            .contains(&words)
            .then(|| r.to_string())
    })
}

/// Whether `t` names the site: the same letters as its `og:site_name`, or letters (four or
/// more) that the host's name holds (`energieverbraucher.de` on www.energieverbraucher.de,
/// `Anwalt Niemeyer` on anwaltniemeyer.de).
fn names_the_site(t: &str, site_name: Option<&str>, host: Option<&str>) -> bool {
    if site_name.is_some_and(|s| same_letters(s, t)) {
        return true;
    }
    let letters: String = t
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    let host: String = host
        .unwrap_or("")
        .trim_start_matches("www.")
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    letters.chars().count() >= 4 && host.contains(&letters)
}

/// Whether two texts have the same letters and digits, ignoring case.
fn same_letters(a: &str, b: &str) -> bool {
    let letters = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let a = letters(a);
    !a.is_empty() && a == letters(b)
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
        // Past 4 bytes a character of the longest heading, the text is too long whatever
        // follows: an element wrapping the page (`<h1>` around everything) is not read whole.
        .map(|(i, _)| collapsed_text(page, i, 4 * MAX_HEADING_CHARS))
        .filter(|t| !t.is_empty() && t.chars().count() <= MAX_HEADING_CHARS)
        .take(MAX_HEADINGS)
        .collect()
}

/// `collapse(&page.node_text(node))` written straight from the events, without the text of
/// kickers inside it ([`flag::KICKER`]): the words of the
/// node's text (block elements inside it part words, as the line breaks of `node_text` do),
/// one space between them. Once longer than `limit` bytes, the text is returned as it is then
/// (a prefix of it, still longer than `limit`).
fn collapsed_text(page: &Page, node: usize, limit: usize) -> String {
    let mut out = String::new();
    let Some(n) = page.nodes.get(node) else {
        return out;
    };
    let events = page
        .events
        .get(n.open as usize..=n.close as usize)
        .unwrap_or_default();
    // Whitespace (or a block) came since the last word written.
    let mut space = false;
    // Inside a kicker (`<span class=kicker>Klimaschutz</span>`): the node whose close ends it.
    let mut kicker: Option<u32> = None;
    for ev in events {
        match *ev {
            Event::Open(i)
                if kicker.is_none()
                    && i as usize != node
                    && page
                        .nodes
                        .get(i as usize)
                        .is_some_and(|e| e.flags & flag::KICKER != 0) =>
            {
                kicker = Some(i);
                space = true;
            }
            Event::Close(i) if kicker == Some(i) => {
                kicker = None;
                space = true;
            }
            _ if kicker.is_some() => {}
            Event::Text(a, b) => {
                let text = page.text.get(a as usize..b as usize).unwrap_or_default();
                for (i, word) in text.split(char::is_whitespace).enumerate() {
                    space |= i > 0;
                    if word.is_empty() {
                        continue;
                    }
                    if space && !out.is_empty() {
                        out.push(' ');
                    }
                    space = false;
                    out.push_str(word);
                }
                if out.len() > limit {
                    return out;
                }
            }
            Event::Open(i) | Event::Close(i) => {
                if page.nodes.get(i as usize).is_some_and(|e| e.tag.is_block()) {
                    space = true;
                }
            }
        }
    }
    out
}

/// Removes the site name part of a title: the segments between separators that name the
/// site, or else everything but the longest segment.
pub fn strip_site(title: &str, site_name: Option<&str>) -> String {
    // Between Han characters a bare hyphen separates too ("…影响交通-新华网"): Han text
    // has no hyphenated words.
    let spaced = spaced_han_hyphens(title);
    let title = spaced.as_str();
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

/// `title` without a first or last part that names the site (`names_site`), cut at a
/// [`SEPARATORS`] (`Headline | FASSETTE.NET` on fassette.net); the title as it is when no
/// part does (a headline's own dashes stay).
fn cut_site_part(title: &str, names_site: &impl Fn(&str) -> bool) -> String {
    for sep in SEPARATORS {
        if let Some((rest, site)) = title.rsplit_once(sep) {
            if names_site(site.trim()) && !rest.trim().is_empty() {
                return rest.trim().to_string();
            }
        }
        if let Some((site, rest)) = title.split_once(sep) {
            if names_site(site.trim()) && !rest.trim().is_empty() {
                return rest.trim().to_string();
            }
        }
    }
    title.to_string()
}

/// `title` with each `-` between two Han characters written ` - `.
fn spaced_han_hyphens(title: &str) -> String {
    let han = |c: Option<char>| c.is_some_and(|c| script::of(c) == Some(script::Script::Han));
    let chars: Vec<char> = title.chars().collect();
    let mut out = String::with_capacity(title.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '-' && i > 0 && han(chars.get(i - 1).copied()) && han(chars.get(i + 1).copied()) {
            out.push_str(" - ");
        } else {
            out.push(c);
        }
    }
    out
}

/// The character bigrams of a text, hashed into a bit set: a cheap upper bound on the common
/// substrings another text can have with it. (Any hash gives a true bound, and the bound only
/// spares comparisons that could not win: the hash decides how many it spares, never the
/// title.)
struct Bigrams([u64; 64]);

impl Bigrams {
    fn of(s: &str) -> Bigrams {
        let mut set = Bigrams([0; 64]);
        let mut prev = None;
        for c in s.chars().take(4 * MAX_HEADING_CHARS) {
            if let Some(p) = prev {
                let h = usize::from(Self::hash(p, c));
                set.0[h / 64] |= 1 << (h % 64);
            }
            prev = Some(c);
        }
        set
    }

    /// A bigram's bit (of 4096).
    fn hash(a: char, b: char) -> u16 {
        let x = (a as u32).wrapping_mul(0x9E37_79B1) ^ (b as u32).wrapping_mul(0x85EB_CA77);
        (x.rotate_left(13).wrapping_mul(0xC2B2_AE3D) >> 20) as u16
    }

    /// The hashes of the bigrams of `s`'s first [`MAX_HEADING_CHARS`] characters, in order,
    /// written into `out` (cleared first).
    fn hashes_into(s: &str, out: &mut Vec<u16>) {
        out.clear();
        let mut chars = s.chars().take(MAX_HEADING_CHARS);
        let Some(mut prev) = chars.next() else {
            return;
        };
        for c in chars {
            out.push(Self::hash(prev, c));
            prev = c;
        }
    }

    /// At least the length of the longest common substring of a text and the set's text,
    /// given the text's bigram hashes ([`Bigrams::hashes_into`]) and whether it has a
    /// character: one more than the longest run of its bigrams all found in the set.
    fn common_run_bound(&self, hashes: &[u16], has_chars: bool) -> usize {
        let (mut run, mut best) = (0, 0);
        for &h in hashes {
            let h = usize::from(h);
            if self.0[h / 64] & (1 << (h % 64)) != 0 {
                run += 1;
                best = best.max(run);
            } else {
                run = 0;
            }
        }
        best + usize::from(has_chars)
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

/// `s`'s words, one space between them (one allocation, no vector of words).
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_or_section_added_to_the_declared_title_is_cut() {
        let refs = [
            "Brothel busted in Boston | Boston Herald",
            "Brothel busted in Boston",
        ];
        assert_eq!(
            declared_within("Local News | Brothel busted in Boston", &refs).as_deref(),
            Some("Brothel busted in Boston")
        );
        assert_eq!(
            declared_within("Brothel busted in Boston | FASSETTE.NET", &refs).as_deref(),
            Some("Brothel busted in Boston")
        );
        // The heading is the declared title, a word joined to it, or more than a label.
        assert_eq!(declared_within("Brothel busted in Boston", &refs), None);
        assert_eq!(declared_within("Corona-Lockdown", &["Corona"]), None);
        assert_eq!(
            declared_within(
                "Kim Jong Un: Der Diktator ist zurück - Donald Trump ist glücklich",
                &["Kim Jong Un: Der Diktator ist zurück"]
            ),
            None
        );
        let html = r#"<html><head><title>EU-Taxonomie: Atomkraft nicht nachhaltig | Umweltbundesamt</title>
            <meta property="og:title" content="EU-Taxonomie: Atomkraft nicht nachhaltig"></head>
            <body><h1>EU-Taxonomie: Atomkraft nicht nachhaltig | Umweltbundesamt</h1></body></html>"#;
        assert_eq!(
            title(&crate::scan::scan(html), None, None).as_deref(),
            Some("EU-Taxonomie: Atomkraft nicht nachhaltig")
        );
    }

    #[test]
    fn a_date_before_the_headline() {
        assert_eq!(
            without_leading_date("23.01.2022 - Dorothea Wierer darf jubeln"),
            "Dorothea Wierer darf jubeln"
        );
        assert_eq!(without_leading_date("2022-01-23 | Headline"), "Headline");
        // A headline that opens with a date in words, or no date at all, stays.
        assert_eq!(
            without_leading_date("1. Mai 2022 - Demo"),
            "1. Mai 2022 - Demo"
        );
        assert_eq!(
            without_leading_date("Wetter - Aussichten"),
            "Wetter - Aussichten"
        );
    }
    use crate::scan::scan;

    #[test]
    fn a_title_naming_the_site_gives_way_to_the_headline() {
        // The `<title>` and the logo's h1 name the site (by its host); the post's h2 is
        // the headline.
        let page = scan(
            "<html><head><title>Literaturgefluester</title></head><body>\
             <h1>Literaturgefluester</h1><h2>Ins neue Jahr</h2><p>Text.</p></body></html>",
        );
        let host = Some("literaturgefluester.wordpress.com");
        assert_eq!(title(&page, None, host).as_deref(), Some("Ins neue Jahr"));
        // On another host the same page's title stands.
        assert_eq!(
            title(&page, None, Some("example.com")).as_deref(),
            Some("Literaturgefluester")
        );
    }

    #[test]
    fn the_site_name_as_og_title_gives_way_to_the_headline() {
        let html = "<html><head><meta property=og:title content='Telebasel'>\
                    <meta property=og:site_name content='Telebasel'></head><body>\
                    <h1>Junge Lenker schrotten Corvette und Audi in einer Nacht</h1><p>Text.</p></body></html>";
        let page = crate::scan::scan(html);
        assert_eq!(
            title(&page, Some("Telebasel"), None).as_deref(),
            Some("Junge Lenker schrotten Corvette und Audi in einer Nacht")
        );
        // Without a heading, the site's name is all the page gives.
        let bare = html.replace(
            "<h1>Junge Lenker schrotten Corvette und Audi in einer Nacht</h1>",
            "",
        );
        let page = crate::scan::scan(&bare);
        assert_eq!(
            title(&page, Some("Telebasel"), None).as_deref(),
            Some("Telebasel")
        );
    }

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
        assert_eq!(
            strip_site("法国全国大罢工再次严重影响交通-新华网", None),
            "法国全国大罢工再次严重影响交通"
        );
        assert_eq!(strip_site("Jean-Pierre wins", None), "Jean-Pierre wins");
        assert_eq!(
            strip_site("Flächenverbrauch für Fleisch • CareElite", None),
            "Flächenverbrauch für Fleisch"
        );
        let on_fassette = |t: &str| names_the_site(t, None, Some("www.fassette.net"));
        assert_eq!(
            cut_site_part("Was wir nicht hören wollen | FASSETTE.NET", &on_fassette),
            "Was wir nicht hören wollen"
        );
        assert_eq!(
            cut_site_part("VW-Chef warnt - Golf aus China", &on_fassette),
            "VW-Chef warnt - Golf aus China"
        );
    }

    #[test]
    fn bigram_bound_is_never_below_the_common_substring() {
        // The bound may only spare comparisons that cannot win: it must hold on any input.
        let alphabet: Vec<char> = "ab c中文新闻".chars().collect();
        let mut next = crate::test_rng::sequence();
        let mut text = |max: u64| crate::test_rng::string(&mut next, &alphabet, max);
        let mut hashes = Vec::new();
        for _ in 0..2000 {
            let (heading, reference) = (text(30), text(60));
            Bigrams::hashes_into(&heading, &mut hashes);
            let bound = Bigrams::of(&reference).common_run_bound(&hashes, !heading.is_empty());
            let common = longest_common_substring(&heading, &reference);
            assert!(bound >= common, "{heading:?} {reference:?}");
        }
    }

    #[test]
    fn collapsed_text_agrees_with_node_text() {
        let pieces = [
            "<h1>", "</h1>", "<p>", "</p>", "<b>", "</b>", "<br>", "<div>", "</div>", "<span>",
            "</span>", " ", "  ", "\n", "\t", "\u{3000}", "\u{a0}", "word", "中文", "x",
        ];
        let mut next = crate::test_rng::sequence();
        for _ in 0..500 {
            let html = crate::test_rng::string(&mut next, &pieces, 30);
            let page = scan(&html);
            for i in 0..page.nodes.len() {
                let want = collapse(&page.node_text(i as u32));
                assert_eq!(
                    collapsed_text(&page, i, usize::MAX),
                    want,
                    "{html:?} node {i}"
                );
                let short = collapsed_text(&page, i, 6);
                assert!(want.starts_with(&short) && (short == want || short.len() > 6));
            }
        }
    }

    #[test]
    fn a_kicker_in_the_heading_is_no_part_of_the_headline() {
        let page = scan(
            "<head><meta property=og:title content='Klimaschutz: Bohren, bis es heiß wird'></head>\
             <h1 class=article-heading><span class=article-heading__kicker>Klimaschutz</span>\
             <span class=visually-hidden>: </span><span class=article-heading__title>Bohren, bis \
             es heiß wird</span></h1>",
        );
        assert_eq!(
            title(&page, None, None).as_deref(),
            Some("Bohren, bis es heiß wird")
        );
    }

    #[test]
    fn heading_reconciled_with_title() {
        let page = scan(
            "<title>男子勇救落水儿童 获颁见义勇为奖_凤凰网资讯_凤凰网</title>\
             <div class=nav><h2>热门推荐</h2></div><h1>男子勇救落水儿童 获颁见义勇为奖</h1>",
        );
        assert_eq!(
            title(&page, None, None).as_deref(),
            Some("男子勇救落水儿童 获颁见义勇为奖")
        );
        let page = scan("<title>Home | Site</title><h1>Unrelated</h1>");
        assert_eq!(title(&page, Some("Site"), None).as_deref(), Some("Home"));
    }
}
