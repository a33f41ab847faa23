//! The author, as a checked candidate rather than the first match.
//!
//! Candidates come from meta tags and JSON-LD, the issuer that signs an official document,
//! Chinese bylines in the text around the body (`作者：`, `记者`, `编辑：`, `来源：`; the labels
//! ranked, an author before a reporter before an editor before a source, and within a rank
//! the one nearest the date), elements marked as the byline (`class=author`,
//! `itemprop=author`, `rel=author`; the one nearest the body, not a related story's), a
//! visible "By …" line (`By`, `Par`, `Von`, `Por`, `Door`, `Av`) at the top of the body,
//! and a bare name under the headline.
//!
//! Each candidate is checked ([`names_of`]): cut into names (co-authors joined by `、`, `,`,
//! `and`, `&`, `und`, `et`, `y`), a trailing role or agency dropped (`, Staff writer`,
//! `Associated Press`), and every name must have a name's shape for its script and be no
//! navigation (`Sign In | Subscribe`), organisation (`CBS News`, `新华网`, a JSON-LD
//! `Organization`) or label word. A declared candidate (meta, JSON-LD) whose names the page
//! never shows loses to a visible byline: sources are combined by agreement. When no
//! candidate passes, there is no author: none rather than a wrong one.

use std::sync::OnceLock;

use pipeline::script::Script;
use regex::Regex;

use crate::scan::{flag, Page};

/// Meta names and properties that carry the author, best first.
const META_KEYS: &[&str] = &[
    "author",
    "article:author",
    "byl",
    "dc.creator",
    "dcterms.creator",
    "sailthru.author",
    "parsely-author",
    "citation_author",
    "citation_authors",
    "og:article:author",
];

/// Longest byline kept (chars).
pub const MAX_AUTHOR_CHARS: usize = 80;
/// A byline this far (bytes) before or after the body's text is not at the body.
pub const NEAR_BODY: u32 = 600;
/// Rank added to bylines that are not at the body.
const FAR_RANK: u8 = 10;
/// Text searched around the body for a Chinese byline (bytes).
pub const SEARCH_AROUND: u32 = 3072;

/// The author of `page`. `span` is the body's text range, `body` its text as extracted,
/// `date_pos` where the date was read, `issuer` the body that signed the document (see
/// [`crate::signature`]): after the declared author, before bylines in the text.
pub fn author(
    page: &Page,
    span: Option<(u32, u32)>,
    body: &str,
    date_pos: Option<u32>,
    issuer: Option<String>,
) -> Option<String> {
    let checks = Checks::of(page);
    let declared = META_KEYS
        .iter()
        .filter_map(|key| crate::meta(page, &[key]))
        .find_map(|a| clean(a, &checks))
        .or_else(|| {
            page.json_ld
                .iter()
                .find_map(|json| json_author(json).and_then(|a| clean(&a, &checks)))
        });
    if issuer.is_some() && declared.is_none() {
        return issuer;
    }
    let visible = || {
        chinese_byline(page, span, date_pos, &checks).or_else(|| {
            // The nearer of a marked byline and a visible "By" line.
            let marked = marked_byline(page, span, &checks);
            let by = by_line(page, span, &checks);
            [marked, by]
                .into_iter()
                .flatten()
                .min_by_key(|(key, _)| *key)
                .map(|(_, name)| name)
        })
    };
    match declared {
        // A declared author the page never shows (a decoy or template meta tag) loses to a
        // byline the reader sees.
        Some(d) if !shown(page, &d) => visible().or(Some(d)),
        Some(d) => Some(d),
        None => visible().or_else(|| bare_name_line(body)),
    }
}

/// Whether every name of `author` is written in the page's visible text.
fn shown(page: &Page, author: &str) -> bool {
    split_names(author)
        .iter()
        .all(|name| page.text.contains(name.as_str()))
}

/// The names of an author value as [`crate::Article::author`] holds it: Han names joined by
/// spaces, others by `", "`.
pub fn split_names(author: &str) -> Vec<String> {
    let parts: Vec<&str> = if author.contains(", ") {
        author.split(", ").collect()
    } else if author.chars().all(|c| is_han(c) || c == ' ' || c == '·') {
        author.split(' ').collect()
    } else {
        vec![author]
    };
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// Han ideographs, by the one script table ([`pipeline::script`]).
fn is_han(c: char) -> bool {
    pipeline::script::of(c) == Some(Script::Han)
}

/// Lines of the body's opening looked at for a bare name.
pub const OPENING_LINES: usize = 4;
/// Longest line (chars) that may come before a bare name: the headline and a subtitle.
pub const HEADLINE_CHARS: usize = 40;

/// Words that stand alone on a line at the top of an article and are no name.
const NOT_BARE_NAMES: &[&str] = &[
    "正文",
    "摘要",
    "导读",
    "全文",
    "简介",
    "前言",
    "引言",
    "序言",
    "目录",
    "按语",
    "编者按",
    "打印",
    "关闭",
    "返回",
    "评论",
    "分享",
    "推荐",
    "图片",
    "视频",
    "专题",
    "新闻",
    "首页",
];

/// A Chinese article without a label often puts its author alone on the line under the
/// headline ("犬儒病(上)" / "胡平" / the text). A name here is a line of 2–4 Han characters
/// (or a foreign name with `·`) among the first lines of the body, after short lines only.
fn bare_name_line(body: &str) -> Option<String> {
    let name_re = han_name();
    let lines = body
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(OPENING_LINES);
    for (i, line) in lines.enumerate() {
        if i > 0 && name_re.is_match(line) && !NOT_BARE_NAMES.contains(&line) {
            // Checked as every candidate is ("发表评论" is a link, not a name).
            return clean(line, &Checks::default());
        }
        if line.chars().count() > HEADLINE_CHARS {
            return None;
        }
    }
    None
}

/// Where a visible byline stands: after the body's end (a related story's, or an author
/// box) ranks behind every byline before or in the body; then by distance from the body's
/// start.
type BylineKey = (bool, u32);

/// The text of the short element marked as the author that is nearest the body's start
/// (a byline of the page's own story, not of a related story further down); without a
/// body, the first.
fn marked_byline(
    page: &Page,
    span: Option<(u32, u32)>,
    checks: &Checks,
) -> Option<(BylineKey, String)> {
    let mut best: Option<(BylineKey, String)> = None;
    for (i, n) in page.nodes.iter().enumerate() {
        if n.flags & flag::AUTHOR == 0 || n.flags & (flag::SKIPPED | flag::HEAD) != 0 {
            continue;
        }
        let text = page.node_text(i as u32);
        let whole = text.split_whitespace().collect::<Vec<_>>().join(" ");
        // A forum's author cell holds the name, then the poster's counts on lines of
        // their own: the first line alone may be the name.
        let first_line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let Some(name) = [whole.as_str(), first_line]
            .into_iter()
            .filter(|t| t.chars().count() <= MAX_AUTHOR_CHARS)
            .find_map(|t| clean(t, checks))
        else {
            continue;
        };
        let Some((start, end)) = span else {
            return Some(((false, 0), name));
        };
        let pos = first_text(page, n).unwrap_or(0);
        // Far after the body, or in a related list, a sidebar or the page's chrome, a byline
        // belongs to another story.
        if pos > end + NEAR_BODY || in_boilerplate(page, i as u32) {
            continue;
        }
        let key = (pos > end, start.abs_diff(pos));
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, name));
        }
    }
    best
}

/// Whether the node or an ancestor is page chrome: `nav`, `aside`, `footer` (a byline's own
/// class may read as boilerplate to the body scorer, so hints are not asked).
fn in_boilerplate(page: &Page, mut node: u32) -> bool {
    use crate::scan::Tag;
    while let Some(n) = page.nodes.get(node as usize) {
        if matches!(n.tag, Tag::Nav | Tag::Aside | Tag::Footer) {
            return true;
        }
        node = n.parent;
    }
    false
}

/// Where a node's first text starts in [`Page::text`].
fn first_text(page: &Page, n: &crate::scan::Node) -> Option<u32> {
    page.events
        .get(n.open as usize..=n.close as usize)?
        .iter()
        .find_map(|ev| match *ev {
            crate::scan::Event::Text(a, _) => Some(a),
            _ => None,
        })
}

/// Words that open a visible byline, in the languages of the sets.
const BY_WORDS: &[&str] = &[
    "By ", "BY ", "Par ", "PAR ", "Von ", "VON ", "Por ", "POR ", "Door ", "Av ",
];

/// Text around the body's start searched for a visible "By …" line (bytes).
pub const BY_LINE_AROUND: u32 = 1500;

/// A short line "By Jane Roe" (or Par, Von, Por, Door, Av) just before or at the top of the
/// body: the byline readability finds and our marked elements miss.
fn by_line(page: &Page, span: Option<(u32, u32)>, checks: &Checks) -> Option<(BylineKey, String)> {
    let (start, _) = span?;
    let text = &page.text;
    let lo = floor(text, start.saturating_sub(BY_LINE_AROUND) as usize);
    let hi = floor(text, (start + BY_LINE_AROUND) as usize);
    let mut best: Option<(u32, String)> = None;
    let mut at = lo;
    for line in text[lo..hi].split('\n') {
        let pos = at as u32;
        at += line.len() + 1;
        let line = line.trim();
        if line.chars().count() > MAX_AUTHOR_CHARS || !BY_WORDS.iter().any(|w| line.starts_with(w))
        {
            continue;
        }
        let Some(name) = clean(line, checks) else {
            continue;
        };
        let distance = start.abs_diff(pos);
        if best.as_ref().is_none_or(|(d, _)| distance < *d) {
            best = Some((distance, name));
        }
    }
    best.map(|(distance, name)| ((false, distance), name))
}

/// `"author": {"name": "..."}`, `"author": [{"name": ...}]` or `"author": "..."`; not an
/// author whose object says `"@type": "Organization"`.
fn json_author(json: &str) -> Option<String> {
    let raw = json_author_raw(json)?;
    // The author object around the name: from the key before it to the brace after it.
    let at = raw.as_ptr() as usize - json.as_ptr() as usize;
    let key = json[..at]
        .rfind("\"author\"")
        .or_else(|| json[..at].rfind("\"creator\""))?;
    let end = json[at..].find('}').map_or(json.len(), |i| at + i);
    if json[key..end].contains("Organization") {
        return None;
    }
    Some(crate::entities::decode(raw).into_owned())
}

/// The raw name [`json_author`] decodes: what the first match of
/// `"(?:author|creator)"\s*:\s*(?:\[\s*)?(?:\{[^{}]*?"name"\s*:\s*"([^"]{1,100})"|"([^"]{1,100})")`
/// captures, found without a regex (its captures cost a backtracking search per page). Each
/// `"author"` and `"creator"` key is tried in page order; the brace-free stretches after the
/// keys' `{` never overlap, so no byte is searched twice for `"name"`.
fn json_author_raw(json: &str) -> Option<&str> {
    let find = |key: &str, from: usize| {
        json.get(from..)
            .and_then(|rest| rest.find(key))
            .map(|i| from + i)
    };
    let mut next_author = find("\"author\"", 0);
    let mut next_creator = find("\"creator\"", 0);
    loop {
        let (at, key_len) = match (next_author, next_creator) {
            (Some(a), Some(c)) if c < a => (c, 9),
            (Some(a), _) => (a, 8),
            (None, Some(c)) => (c, 9),
            (None, None) => return None,
        };
        if let Some(name) = author_value(json, at + key_len) {
            return Some(name);
        }
        if key_len == 8 {
            next_author = find("\"author\"", at + 1);
        } else {
            next_creator = find("\"creator\"", at + 1);
        }
    }
}

/// The name after an author key ending at `i`: `\s*:\s*(?:\[\s*)?` then `{...}` holding a
/// `"name"` or a string. Every step is forced (whitespace runs end at a byte that is none),
/// so no other way through the pattern is left untried.
fn author_value(json: &str, i: usize) -> Option<&str> {
    let mut i = skip_whitespace(json, i);
    if json.as_bytes().get(i) != Some(&b':') {
        return None;
    }
    i = skip_whitespace(json, i + 1);
    if json.as_bytes().get(i) == Some(&b'[') {
        i = skip_whitespace(json, i + 1);
    }
    match json.as_bytes().get(i)? {
        b'"' => short_string(json, i),
        b'{' => {
            // `[^{}]*?"name"`: each `"name"` before the next brace, the nearest first.
            let start = i + 1;
            let rest = json.get(start..)?;
            let region = &rest[..rest.find(['{', '}']).unwrap_or(rest.len())];
            let mut from = 0;
            while let Some(k) = region.get(from..).and_then(|r| r.find("\"name\"")) {
                let key_end = start + from + k + 6;
                let j = skip_whitespace(json, key_end);
                if json.as_bytes().get(j) == Some(&b':') {
                    let j = skip_whitespace(json, j + 1);
                    if let Some(name) = short_string(json, j) {
                        return Some(name);
                    }
                }
                from += k + 1;
            }
            None
        }
        _ => None,
    }
}

/// The first byte at or after `i` that does not start a whitespace char (regex `\s`, the
/// Unicode White_Space property, as `char::is_whitespace`).
fn skip_whitespace(s: &str, i: usize) -> usize {
    let rest = s.get(i..).unwrap_or("");
    i + rest
        .find(|c: char| !c.is_whitespace())
        .unwrap_or(rest.len())
}

/// `"([^"]{1,100})"` at byte `i`: the string's text when it holds 1 to 100 chars.
fn short_string(s: &str, i: usize) -> Option<&str> {
    let rest = s.get(i..)?.strip_prefix('"')?;
    // Only the first 101 chars are looked at: a longer string does not match anyway.
    let (len, _) = rest.char_indices().take(101).find(|&(_, c)| c == '"')?;
    let text = rest.get(..len)?;
    (!text.is_empty()).then_some(text)
}

/// What a candidate is checked against besides its own shape.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    /// A one-word Latin name passes (a forum user name next to a Chinese label); elsewhere
    /// one word is a place, a section or a handle ("Washington", "subject"), not a byline.
    pub single_word: bool,
    /// Lower-case words (four letters or more) of the site's name: a byline part made of
    /// them names the publication ("Charlie Wood, Business Insider").
    pub site_words: Vec<String>,
}

impl Checks {
    fn of(page: &Page) -> Checks {
        let site =
            crate::meta(page, &["og:site_name", "application-name", "twitter:site"]).unwrap_or("");
        Checks {
            single_word: false,
            site_words: site
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() >= 4)
                .map(str::to_lowercase)
                .collect(),
        }
    }
}

/// A byline without its label, its names checked and joined (Han names by spaces, others
/// by `", "`); `None` when no name passes.
fn clean(raw: &str, checks: &Checks) -> Option<String> {
    let names = names_of(raw, checks)?;
    let han = names
        .iter()
        .all(|n| n.chars().all(|c| is_han(c) || c == '·'));
    Some(names.join(if han { " " } else { ", " }))
}

/// Labels and role words a byline opens with.
const BYLINE_PREFIXES: &[&str] = &[
    "By ",
    "by ",
    "BY ",
    "Par ",
    "par ",
    "PAR ",
    "Von ",
    "von ",
    "VON ",
    "Por ",
    "por ",
    "Door ",
    "Av ",
    "Written by ",
    "Posted by ",
    "Author: ",
    "Author:",
    "作者：",
    "作者:",
];

/// Words that make a Latin-script candidate no person: organisations, agencies, roles,
/// navigation (compared in lower case, word by word).
const NOT_PERSON_WORDS: &[&str] = &[
    "news",
    "press",
    "associated",
    "reuters",
    "afp",
    "ap",
    "upi",
    "bloomberg",
    "staff",
    "writer",
    "writers",
    "reporter",
    "reporters",
    "correspondent",
    "contributor",
    "contributors",
    "editorial",
    "editor",
    "editors",
    "desk",
    "bureau",
    "team",
    "agency",
    "media",
    "times",
    "post",
    "weekly",
    "daily",
    "herald",
    "tribune",
    "journal",
    "magazine",
    "reports",
    "report",
    "wire",
    "wires",
    "service",
    "services",
    "online",
    "digital",
    "group",
    "inc",
    "ltd",
    "llc",
    "corp",
    "network",
    "radio",
    "tv",
    "television",
    "channel",
    "foundation",
    "university",
    "institute",
    "association",
    "council",
    "ministry",
    "department",
    "office",
    "committee",
    "admin",
    "administrator",
    "webmaster",
    "guest",
    "anonymous",
    "bbc",
    "cnn",
    "cbs",
    "nbc",
    "abc",
    "pti",
    "ians",
    "xinhua",
    "sign",
    "login",
    "log",
    "subscribe",
    "menu",
    "home",
    "search",
    "newsletter",
    "share",
    "comments",
    "follow",
    "more",
    "show",
    "view",
    "all",
    "read",
    "click",
    "here",
    "website",
    "blog",
    "company",
    "www",
    "http",
    "https",
    "com",
];

/// Trailing words of an agency or role after the names ("ERIC TUCKER Associated Press",
/// "Paul Takahashi, Staff writer"), dropped before the names are checked.
const TRAILING_ROLE_WORDS: &[&str] = &[
    "the",
    "associated",
    "press",
    "reuters",
    "afp",
    "ap",
    "upi",
    "bloomberg",
    "writer",
    "reporter",
    "correspondent",
    "contributor",
    "news",
    "bbc",
    "cnn",
    "pti",
    "ians",
    "xinhua",
    "senior",
    "special",
    "to",
    "for",
    "contributing",
    "contributor",
    // Credentials after a name ("Rachael Link, MS, RD").
    "ms",
    "rd",
    "rdn",
    "md",
    "phd",
    "mph",
    "mba",
    "rn",
    "cpa",
    "esq",
    "jr",
    "sr",
    "ii",
    "iii",
];

/// Lower-case particles of Latin-script names (`Ludwig van Beethoven`).
const NAME_PARTICLES: &[&str] = &[
    "van", "von", "de", "da", "del", "della", "der", "den", "di", "du", "dos", "das", "la", "le",
    "bin", "al", "el", "ibn", "ter", "ten", "y", "e", "zu", "st.",
];

/// Endings of Chinese organisation names (a publication, a company, an office, a course or
/// column): never a person's name.
const HAN_ORGANISATION_ENDS: &[&str] = &[
    "网",
    "报",
    "社",
    "刊",
    "台",
    "公司",
    "集团",
    "中心",
    "网站",
    "频道",
    "杂志",
    "出版社",
    "委员会",
    "编辑部",
    "研究院",
    "研究所",
    "大学",
    "学院",
    "协会",
    "工作室",
    "课程",
    "专栏",
    "栏目",
    "记者站",
    "部门",
    "办公室",
    "有限",
];

/// The names of a byline, checked: `None` when none passes (see the module doc).
pub fn names_of(raw: &str, checks: &Checks) -> Option<Vec<String>> {
    let mut s = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if NOT_BARE_NAMES.contains(&s.as_str()) || NOT_NAMES.contains(&s.as_str()) {
        return None;
    }
    for prefix in BYLINE_PREFIXES {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim().to_string();
        }
    }
    let lower = s.to_lowercase();
    // Navigation and links, not a byline.
    let navigation = ['|', '»', '›', '<', '>', '@', '#', '=', '/']
        .iter()
        .any(|c| s.contains(*c))
        || lower.contains("http")
        || lower.contains("www.")
        || lower.contains(".com");
    let looks_wrong = s.is_empty()
        || s.chars().count() > MAX_AUTHOR_CHARS
        || navigation
        || s.chars().any(|c| c.is_ascii_digit())
        || s.contains('_')
        || s.contains("出版");
    if looks_wrong {
        return None;
    }
    // "赵  培" in citation metas: Han names are written without spaces.
    if s.chars().all(|c| is_han(c) || c == ' ') && s.split(' ').all(|p| p.chars().count() == 1) {
        s = s.replace(' ', "");
    }
    let han_text = s.chars().any(is_han);
    let mut names: Vec<String> = Vec::new();
    for part in split_byline(&s, han_text) {
        let lower = part.to_lowercase();
        let names_the_site = lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| checks.site_words.iter().any(|site| site == w));
        let Some(name) = checked_name(part, checks.single_word).filter(|_| !names_the_site) else {
            // A part that is no name: an organisation among names is a wrong candidate,
            // a role, a credential, an agency or the site after them is dropped.
            if is_role_or_agency(part) || (names_the_site && !names.is_empty()) {
                continue;
            }
            return None;
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (!names.is_empty()).then_some(names)
}

/// The parts of a byline that may each be one name.
fn split_byline(s: &str, han_text: bool) -> Vec<&str> {
    let mut parts = vec![s];
    let mut separators: Vec<&str> = vec![
        "、", "，", ",", ";", " & ", " and ", " And ", " AND ", " und ", " et ", " y ", " e ",
    ];
    if han_text {
        separators.extend([" ", "　", "/", "／"]);
    }
    for sep in separators {
        parts = parts.iter().flat_map(|p| p.split(sep)).collect();
    }
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// A part that holds only role or agency words ("Staff writer", "Associated Press").
fn is_role_or_agency(part: &str) -> bool {
    part.split_whitespace().all(|w| {
        let w = w.to_lowercase();
        TRAILING_ROLE_WORDS.contains(&w.as_str()) || NOT_PERSON_WORDS.contains(&w.as_str())
    })
}

/// One name, checked for its script's shape; a trailing agency or role is dropped.
fn checked_name(part: &str, single_word: bool) -> Option<String> {
    let part = part.trim_matches(|c: char| !c.is_alphanumeric() && c != '·' && c != '&');
    if part.is_empty() || NOT_NAMES.contains(&part) || NOT_BARE_NAMES.contains(&part) {
        return None;
    }
    if LABELS.iter().any(|(label, _)| part == *label) {
        return None;
    }
    if part.chars().any(is_han) {
        let organisation = HAN_ORGANISATION_ENDS.iter().any(|e| part.ends_with(e))
            || NOT_NAMES.iter().any(|w| part.contains(w));
        // One Han character is a forum's "乙", a label's remnant, not a name.
        let length = part.chars().count();
        let shaped = (2..=MAX_PEN_NAME_CHARS).contains(&length);
        return (!organisation && shaped).then(|| part.to_string());
    }
    let mut words: Vec<&str> = part.split_whitespace().collect();
    while words.len() > 1
        && words
            .last()
            .is_some_and(|w| TRAILING_ROLE_WORDS.contains(&w.to_lowercase().as_str()))
    {
        words.pop();
    }
    // "The Water Coolest": a publication; no name starts with the article.
    if words.is_empty() || words.len() > 5 || words[0].eq_ignore_ascii_case("the") {
        return None;
    }
    let person = words.iter().all(|w| {
        let lower = w.to_lowercase();
        let first = w.chars().next().unwrap_or(' ');
        !NOT_PERSON_WORDS.contains(&lower.trim_end_matches('.'))
            && w.chars().all(|c| c.is_alphabetic() || "'’.-&".contains(c))
            && (first.is_uppercase()
                || NAME_PARTICLES.contains(&lower.as_str())
                // A forum user name alone ("ggjjzhzz").
                || (words.len() == 1 && w.chars().count() >= 3))
    });
    (person && (single_word || words.len() >= 2)).then(|| words.join(" "))
}

/// Byline labels, by rank (lower is better).
const LABELS: &[(&str, u8)] = &[
    ("作者", 0),
    ("撰文", 0),
    ("执笔人", 0),
    ("文／", 0),
    ("文/", 0),
    ("本报记者", 1),
    ("记者", 1),
    ("通讯员", 1),
    ("实习生", 1),
    ("发表于", 2),
    ("责任编辑", 3),
    ("编辑", 3),
    ("责编", 3),
    ("来源", 4),
];

/// Common Chinese surnames: after a reporter, editor or source label, a word is taken as a
/// name only when it starts with one (a pen name after `作者` needs no such proof).
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝伊";

/// Words that end a list of names.
const NOT_NAMES: &[&str] = &[
    "扫一扫",
    "分享",
    "来源",
    "编辑",
    "责任",
    "发布",
    "点击",
    "打印",
    "返回",
    "关闭",
    "报道",
    "发表",
    "时间",
    "日期",
    "字号",
    "评论",
    "原标题",
    "摄影",
    "图片",
    "专栏",
    "简介",
    "相关",
    "个人",
    "作者",
    "全文",
    "更多",
    // A blog's or portal's chrome beside a byline ("作者：流泉 访问统计").
    "访问",
    "统计",
    "留言",
    "登录",
    "注册",
    "首页",
    "导航",
    "链接",
    "收藏",
    "订阅",
    "搜索",
    "浏览",
    "阅读",
    "下载",
    "帮助",
    "设置",
    "博客",
    "相册",
    "档案",
    "日志",
    "标签",
    "分类",
    "目录",
    "存档",
    "引用",
];

/// Publication words: a "source" ending with one of these is not a person.
const ORGANISATION_ENDS: &[&str] = &[
    "网", "报", "社", "刊", "台", "站", "部", "局", "厅", "委", "院", "会", "司", "端", "道", "心",
    "府", "组", "处", "室", "所", "馆", "团", "频", "章",
];

fn chinese_byline(
    page: &Page,
    span: Option<(u32, u32)>,
    date_pos: Option<u32>,
    checks: &Checks,
) -> Option<String> {
    // Forums and blogs sign with a one-word Latin user name ("ggjjzhzz 发表于").
    let checks = &Checks {
        single_word: true,
        site_words: checks.site_words.clone(),
    };
    let name_re = han_name();
    let text = &page.text;
    let (start, end) = span.unwrap_or((0, text.len() as u32));
    let lo = floor(text, start.saturating_sub(SEARCH_AROUND) as usize);
    let hi = floor(
        text,
        (end as usize + SEARCH_AROUND as usize).min(text.len()),
    );
    let window = &text[lo..hi];
    // Every label starts with, and every bracketed name needs (its surname), a character of
    // U+4E00..U+9FFF, encoded in UTF-8 with a lead byte in 0xE4..=0xE9: a window without one
    // (an English page) can hold no byline, and is not searched.
    if !has_han_lead_byte(window) {
        return None;
    }
    let anchor = date_pos.unwrap_or(start) as i64;
    let mut best: Option<((u8, i64), String)> = None;
    // Every label at once: one automaton pass instead of one search per label.
    static AUTOMATON: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();
    let automaton = AUTOMATON.get_or_init(|| {
        aho_corasick::AhoCorasick::new(LABELS.iter().map(|(l, _)| l)).expect("static labels")
    });
    for found in automaton.find_overlapping_iter(window) {
        let (label, rank) = LABELS[found.pattern().as_usize()];
        let at = found.start();
        let pos = lo + at;
        let after = &window[at + label.len()..];
        let names = if rank == 2 {
            // "ggjjzhzz 发表于 2005-9-15": the name comes before.
            let before = &window[floor(window, at.saturating_sub(40))..at];
            let last = before.split_whitespace().last().unwrap_or("");
            let latin_start = last
                .char_indices()
                .rev()
                .take_while(|(_, c)| c.is_ascii_alphanumeric())
                .last()
                .map_or(last.len(), |(i, _)| i);
            let latin = &last[latin_start..];
            if latin.len() >= 3 {
                vec![latin.to_string()]
            } else if name_re.is_match(last) {
                vec![last.to_string()]
            } else {
                Vec::new()
            }
        } else if rank == 0 && !after.starts_with(['：', ':', '/', '／']) {
            // "作者须知", "作者手记": not a byline.
            Vec::new()
        } else {
            let names = names_after(after, name_re, rank > 0, rank != 4);
            if names.is_empty() && rank == 0 {
                pen_name(after).into_iter().collect()
            } else {
                names
            }
        };
        if names.is_empty() {
            continue;
        }
        let joined = names.join(" ");
        if rank == 4 && ORGANISATION_ENDS.iter().any(|e| joined.ends_with(e)) {
            continue;
        }
        // A candidate that fails the check leaves the place to the next one.
        if clean(&joined, checks).is_none() {
            continue;
        }
        // A byline far from the body (a blog's sidebar "作者：owner") ranks after every
        // byline at the body.
        let far = (pos as u32) + NEAR_BODY < start || pos as u32 > end + NEAR_BODY;
        let key = (
            rank + if far { FAR_RANK } else { 0 },
            (pos as i64 - anchor).abs(),
        );
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, joined));
        }
    }
    // "[ 黄宇 ]" after the date, "（常书香 马丹阳 ）" or "（姚峰 上海报道）" after the body.
    static BRACKETS: OnceLock<Regex> = OnceLock::new();
    let brackets = BRACKETS.get_or_init(|| {
        Regex::new(r"[\[（(【]\s*([\p{Han} ]{2,24}?)\s*[\]）)】]").expect("static regex")
    });
    for c in brackets.captures_iter(window) {
        let (Some(all), Some(m)) = (c.get(0), c.get(1)) else {
            continue;
        };
        // "[关注] 性问题成了民工之痛": a tag in front of a headline, not a byline.
        let line_start = window[..all.start()].rfind('\n').map_or(0, |i| i + 1);
        let rest_of_line = window[all.end()..].split('\n').next().unwrap_or("");
        if window[line_start..all.start()].trim().is_empty()
            && rest_of_line.trim().chars().count() >= 6
        {
            continue;
        }
        let words: Vec<&str> = m.as_str().split_whitespace().collect();
        let names: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| {
                !NOT_NAMES.contains(w)
                    && name_re.is_match(w)
                    && w.chars().count() <= 3
                    && w.chars().next().is_some_and(|c| SURNAMES.contains(c))
            })
            .collect();
        let others_ok = words
            .iter()
            .all(|w| names.contains(w) || w.ends_with("报道") || *w == "摄");
        if names.is_empty() || !others_ok {
            continue;
        }
        // "刘欢的家(组图)</a>(房产)": a tag after a linked headline, not a byline.
        // (Checked last: it walks the events.)
        if after_link(page, (lo + all.start()) as u32) {
            continue;
        }

        // Far from the body, a bracket is a tag in a list of headlines ("(房产)").
        let pos = (lo + m.start()) as u32;
        let far = pos + NEAR_BODY < start || pos > end + NEAR_BODY;
        let key = (
            2 + if far { FAR_RANK } else { 0 },
            (pos as i64 - anchor).abs(),
        );
        let joined = names.join(" ");
        if clean(&joined, checks).is_some() && best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, joined));
        }
    }
    best.and_then(|(_, n)| clean(&n, checks))
}

/// The text just before byte `pos` of the page's text (spaces aside) is link text.
fn after_link(page: &Page, pos: u32) -> bool {
    let text = &page.text;
    let before = text[..floor(text, pos as usize)].trim_end_matches(' ');
    if before.is_empty() || before.ends_with('\n') {
        return false;
    }
    let at = before.len() as u32 - 1;
    // The text event holding `at`, and the element open around it.
    let mut stack: Vec<u32> = Vec::new();
    for ev in &page.events {
        match *ev {
            crate::scan::Event::Open(n) => stack.push(n),
            crate::scan::Event::Close(_) => {
                stack.pop();
            }
            crate::scan::Event::Text(a, b) if a <= at && at < b => {
                return stack
                    .last()
                    .is_some_and(|&n| page.nodes[n as usize].flags & flag::IN_LINK != 0);
            }
            crate::scan::Event::Text(..) => {}
        }
    }
    false
}

/// The names after a label: `：张三 李四`, `记者 张三`.
/// Longest pen name (chars) taken after `作者：` when it is no plain name.
pub const MAX_PEN_NAME_CHARS: usize = 12;

/// A forum or blog pen name after `作者：` ("放飞&心情"): the first word of the line, when
/// it is short and holds a letter.
fn pen_name(after: &str) -> Option<String> {
    let line = after.split('\n').next().unwrap_or("");
    let rest = line.trim_start_matches([' ', '：', ':', '/', '／', '　']);
    let word = rest.split([' ', '　']).next()?.trim();
    let n = word.chars().count();
    let ok = (2..=MAX_PEN_NAME_CHARS).contains(&n)
        && word.chars().any(char::is_alphabetic)
        && !NOT_NAMES.iter().any(|w| word.contains(w))
        && !LABELS.iter().any(|(l, _)| word.contains(l));
    ok.then(|| word.to_string())
}

fn names_after(after: &str, name_re: &Regex, need_surname: bool, pen_names: bool) -> Vec<String> {
    let line = after.split('\n').next().unwrap_or("");
    let rest = line.trim_start_matches([' ', '：', ':', '/', '／', ']', '】', '　']);
    let mut names = Vec::new();
    for (i, word) in rest.split([' ', '　', '、']).enumerate() {
        if i > 6 {
            break;
        }
        if word.is_empty() {
            if names.is_empty() {
                continue;
            }
            break;
        }
        // "王燕平本报记者": cut at the next label.
        let word = NOT_NAMES
            .iter()
            .chain(LABELS.iter().map(|(l, _)| l))
            .filter_map(|w| word.find(w))
            .min()
            .map_or(word, |cut| &word[..cut]);
        let word = word.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '·');
        // A word alone after the label, to the end of its line ("编辑：山石"), is the
        // editor's (pen) name whatever its first character, unless it names a publication.
        let alone = i == 0 && rest.trim_end() == word;
        let pen_name = pen_names
            && alone
            && word.chars().count() <= 3
            && !ORGANISATION_ENDS.iter().any(|e| word.ends_with(e));
        let surname_ok = !need_surname
            || pen_name
            || (word.chars().next().is_some_and(|c| SURNAMES.contains(c))
                && word.chars().count() <= 3);
        if name_re.is_match(word) && surname_ok {
            names.push(word.to_string());
        } else if names.is_empty()
            && word.chars().all(|c| c.is_ascii_alphanumeric())
            && word.len() >= 3
        {
            // Latin user names on blogs and forums.
            names.push(word.to_string());
            break;
        } else {
            break;
        }
    }
    names
}

/// UTF-8 lead bytes of U+4000..U+9FFF, the block of the labels' and surnames' characters.
const HAN_LEAD_BYTES: std::ops::RangeInclusive<u8> = 0xE4..=0xE9;

/// `s` holds a byte of [`HAN_LEAD_BYTES`]. Scanned by blocks of 64 bytes without an early
/// exit inside a block, so the comparison vectorises.
fn has_han_lead_byte(s: &str) -> bool {
    let (lo, span) = (
        *HAN_LEAD_BYTES.start(),
        HAN_LEAD_BYTES.end() - HAN_LEAD_BYTES.start(),
    );
    s.as_bytes().chunks(64).any(|block| {
        block
            .iter()
            .fold(false, |seen, &b| seen | (b.wrapping_sub(lo) <= span))
    })
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A bare Chinese name: 2–4 Han characters (or the middle dot of
/// transliterated names), nothing else.
fn han_name() -> &'static Regex {
    static NAME: OnceLock<Regex> = OnceLock::new();
    NAME.get_or_init(|| Regex::new(r"^[\p{Han}·]{2,4}$").expect("static regex"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regex [`json_author_raw`] stands for.
    fn json_author_by_regex(json: &str) -> Option<&str> {
        static RE: OnceLock<Regex> = OnceLock::new();
        let re = RE.get_or_init(|| Regex::new(r#""(?:author|creator)"\s*:\s*(?:\[\s*)?(?:\{[^{}]*?"name"\s*:\s*"([^"]{1,100})"|"([^"]{1,100})")"#).unwrap());
        let c = re.captures(json)?;
        c.get(1).or_else(|| c.get(2)).map(|m| m.as_str())
    }

    /// The hand-written matcher agrees with the regex over generated JSON-like text made of
    /// the pieces the pattern turns on.
    #[test]
    fn json_author_agrees_with_the_regex() {
        const PIECES: &[&str] = &[
            "\"author\"",
            "\"creator\"",
            "\"name\"",
            "\"nam",
            "\"author",
            ":",
            " ",
            "\n",
            "\t",
            "\u{3000}",
            "\u{a0}",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "\"",
            ",",
            "x",
            "é",
            "日本",
            "Jane Doe",
            "\"@type\"",
            "\\",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ];
        let mut next = crate::test_rng::xorshift();
        let mut found = 0;
        for _ in 0..100_000 {
            let mut json = String::new();
            for _ in 0..next() % 24 {
                json.push_str(crate::test_rng::pick(&mut next, PIECES));
            }
            let fast = json_author_raw(&json);
            found += usize::from(fast.is_some());
            assert_eq!(fast, json_author_by_regex(&json), "{json:?}");
        }
        for json in [
            r#"{"author": {"@type": "Person", "name": "Jane Doe"}}"#,
            r#"{"author": [ {"name" : "A"}, {"name": "B"}]}"#,
            r#"{"creator": "C", "author": "D"}"#,
            r#"{"author": {"url": "x"}, "author": "E"}"#,
        ] {
            assert!(json_author_raw(json).is_some());
            assert_eq!(json_author_raw(json), json_author_by_regex(json), "{json}");
        }
        assert!(found > 1_000, "a name was found {found} times only");
    }

    #[test]
    fn pen_name_after_the_author_label() {
        assert_eq!(
            pen_name("： 放飞&心情\n振威将军").as_deref(),
            Some("放飞&心情")
        );
        assert_eq!(pen_name("：责任编辑 张三"), None);
        assert_eq!(pen_name("：-- \n"), None);
    }

    #[test]
    fn bare_name_under_the_headline() {
        let html = "<body><div><p>犬儒病(上)</p><p>胡平<br>人心不会熄灭，但它可能蒙上灰烬而不再燃烧。\
                    灰烬本来是燃烧的产物，但它反过来又抑制了燃烧。拨开灰烬，你会看到重新燃烧的人心。</p>\
                    <p>当今中国最流行的是什么？是犬儒主义，这是一段很长的正文，用来让正文足够长。</p></div></body>";
        let url = url::Url::parse("http://example.com/a.html").unwrap();
        assert_eq!(crate::extract(html, &url).author.as_deref(), Some("胡平"));
        // A short word under the headline that is a heading, not a name.
        let html = html.replace("胡平", "摘要");
        assert_eq!(crate::extract(&html, &url).author, None);
    }
    use crate::scan::scan;

    fn byline(html: &str) -> Option<String> {
        let page = scan(html);
        author(&page, None, "", None, None)
    }

    #[test]
    fn meta_json_and_marked() {
        assert_eq!(
            byline("<meta name=author content='By Jane Doe'>").as_deref(),
            Some("Jane Doe")
        );
        assert_eq!(
            byline("<meta name=author content='L_104485'><p>x</p>"),
            None
        );
        assert_eq!(
            byline(r#"<script type="application/ld+json">{"author":[{"@type":"Person","name":"Ann Lee"}]}</script>"#)
                .as_deref(),
            Some("Ann Lee")
        );
        assert_eq!(
            byline("<span class=byline>By Tom Smith</span>").as_deref(),
            Some("Tom Smith")
        );
        assert_eq!(
            byline("<meta name=citation_authors content='赵  培'>").as_deref(),
            Some("赵培")
        );
    }

    #[test]
    fn navigation_organisations_and_roles_are_no_author() {
        let none = [
            "<span class=author>Sign In| Sign Up| Subscribe Show Menu</span>",
            "<meta name=author content='Reuters'>",
            "<meta name=author content='Staff Reports'>",
            "<meta name=author content='Editorial'>",
            "<meta name=author content='HNN Staff'>",
            "<meta name=author content='The Water Coolest'>",
            r#"<script type="application/ld+json">{"author":{"@type":"Organization","name":"CBS News"}}</script>"#,
            "<meta name=author content='Washington'>",
            "<p>来源：人民网 作者：环球时报</p>",
            "<p>作者：市场营销课程</p>",
            "<p>访问统计 首页 博客</p>",
        ];
        for html in none {
            assert_eq!(byline(html), None, "{html}");
        }
        assert_eq!(
            byline("<meta name=author content='By Paul Takahashi, Staff writer'>").as_deref(),
            Some("Paul Takahashi")
        );
        assert_eq!(
            byline("<meta name=author content='Rachael Link, MS, RD'>").as_deref(),
            Some("Rachael Link")
        );
        assert_eq!(
            byline("<meta property=og:site_name content='Business Insider'><meta name=author content='Charlie Wood, Business Insider'>")
                .as_deref(),
            Some("Charlie Wood")
        );
    }

    #[test]
    fn co_authors_are_kept_as_a_list() {
        let joined = byline(
            "<meta name=author content='LISA MASCARO, MARY CLARE JALONICK and ERIC TUCKER Associated Press'>",
        );
        assert_eq!(
            joined.as_deref(),
            Some("LISA MASCARO, MARY CLARE JALONICK, ERIC TUCKER")
        );
        assert_eq!(
            split_names(joined.as_deref().unwrap_or("")),
            ["LISA MASCARO", "MARY CLARE JALONICK", "ERIC TUCKER"]
        );
        assert_eq!(
            byline("<p>作者： 流泉 访问统计： 2005年08月30日</p>").as_deref(),
            Some("流泉")
        );
        let han = byline("<p>作者：张三、李四</p>");
        assert_eq!(han.as_deref(), Some("张三 李四"));
        assert_eq!(split_names(han.as_deref().unwrap_or("")), ["张三", "李四"]);
    }

    #[test]
    fn a_visible_byline_beats_a_decoy_meta_and_a_related_story() {
        let url = url::Url::parse("http://example.com/a.html").unwrap();
        let body = "<p>The council voted on Tuesday to extend the library's opening hours,                     after a long campaign by residents who wanted a quiet place to study.</p>"
            .repeat(4);
        let html = format!(
            "<html><head><meta name=author content='Site Owner Name'></head><body><article>             <h1>Library hours</h1><p>By Jane Roe</p>{body}</article>             <aside><h3>Related</h3><p>Another story <span class=author>John Related</span></p></aside>             </body></html>"
        );
        let a = crate::extract(&html, &url);
        assert_eq!(a.author.as_deref(), Some("Jane Roe"));
        assert_eq!(a.authors, ["Jane Roe"]);
        // Par, Von: the same in French and German.
        let fr = html.replace("By Jane Roe", "Par Marie Dupont");
        assert_eq!(
            crate::extract(&fr, &url).author.as_deref(),
            Some("Marie Dupont")
        );
        // With the body's own byline marked, the related story's is not taken.
        let marked = html
            .replace(
                "<p>By Jane Roe</p>",
                "<p class=byline><span class=author>Jane Roe</span></p>",
            )
            .replace("<meta name=author content='Site Owner Name'>", "");
        assert_eq!(
            crate::extract(&marked, &url).author.as_deref(),
            Some("Jane Roe")
        );
        let unmarked = marked.replace("<p class=byline><span class=author>Jane Roe</span></p>", "");
        assert_eq!(crate::extract(&unmarked, &url).author, None);
    }

    #[test]
    fn bracket_after_a_linked_headline_is_a_tag() {
        assert_eq!(
            byline("<p>正文很长的一段话。</p><p>编辑：山石</p><div><a href=/a>歌坛大哥大刘欢的家(组图)</a>\
                    <span>(房产)</span></div>")
            .as_deref(),
            Some("山石")
        );
        assert_eq!(
            byline("<p>正文很长的一段话，最后一句。（姚峰 上海报道）</p>").as_deref(),
            Some("姚峰")
        );
    }

    #[test]
    fn labels_and_surnames_start_with_a_han_lead_byte() {
        // The early return of `chinese_byline` on windows without such a byte relies on it.
        let first_bytes = LABELS
            .iter()
            .map(|(l, _)| l.as_bytes()[0])
            .chain(SURNAMES.chars().map(|c| c.to_string().as_bytes()[0]));
        for b in first_bytes {
            assert!(HAN_LEAD_BYTES.contains(&b), "{b:#x}");
        }
        assert!(has_han_lead_byte(&("a".repeat(200) + "记者")));
        assert!(!has_han_lead_byte(&"é ü — “x” ".repeat(50)));
        assert!(!has_han_lead_byte("ア한"));
    }

    #[test]
    fn chinese_labels_ranked() {
        assert_eq!(
            byline("<p>来源：新华网 作者：李四</p>").as_deref(),
            Some("李四")
        );
        assert_eq!(
            byline("<p>光明日报记者 王建宏 张文攀</p>").as_deref(),
            Some("王建宏 张文攀")
        );
        assert_eq!(
            byline("<p>来源：巴彦淖尔日报 编辑：苏亮 扫一扫在手机打开</p>").as_deref(),
            Some("苏亮")
        );
        assert_eq!(
            byline("<p>来源: 尹娟 【发表评论】</p>").as_deref(),
            Some("尹娟")
        );
        assert_eq!(byline("<p>来源：新华网</p>"), None);
        // A pen name alone after the label, with no common surname.
        assert_eq!(
            byline("<p>来源：新闻晨报</p><p>编辑：山石</p>").as_deref(),
            Some("山石")
        );
        assert_eq!(byline("<p>编辑：本报</p>"), None);
        assert_eq!(byline("<p>来源：央视</p>"), None);
        assert_eq!(byline("<p>记者 山石流水 报道</p>"), None);
    }
}
