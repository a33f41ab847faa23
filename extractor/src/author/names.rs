//! A candidate checked ([`names_of`]): cut into names, roles and agencies dropped, each
//! name with a name's shape for its script and no navigation, organisation or label word.

use super::chinese::{LABELS, MAX_PEN_NAME_CHARS, NOT_NAMES};
use super::{is_han, MAX_AUTHOR_CHARS, NOT_BARE_NAMES};
use crate::scan::Page;

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
    pub(super) fn of(page: &Page) -> Checks {
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
pub(super) fn clean(raw: &str, checks: &Checks) -> Option<String> {
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
