//! What an element's `id` and `class` say about it: the Readability lessons. Words such as
//! `article`, `content`, `post` mark content; `comment`, `sidebar`, `share`, `related` mark
//! boilerplate; `author`/`byline` and `date`/`time` mark the byline and the date line.

use crate::scan::flag;

/// Weight of one positive or negative class word, on the scale of a paragraph's score.
pub const CLASS_WEIGHT: i16 = 25;

/// The verdict on one `id` + `class` string.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// Positive for content, negative for boilerplate.
    pub weight: i16,
    /// [`flag`] bits the names imply (`AUTHOR`, `DATE`).
    pub flags: u16,
}

/// Substrings that mark content.
const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "hentry", "main", "post", "text", "blog", "story",
    "zhengwen", "detail",
];

/// Substrings that mark boilerplate.
const NEGATIVE: &[&str] = &[
    "comment",
    "footer",
    "masthead",
    "outbrain",
    "taboola",
    "promo",
    "related",
    "share",
    "sharing",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "widget",
    "breadcrumb",
    "social",
    "banner",
    "combx",
    "popup",
    "cookie",
    "newsletter",
    "subscribe",
    "signup",
    "recommend",
    "advert",
    "copyright",
    "disclaimer",
    "pagination",
    "pager",
    "navbar",
    "menu",
    "toolbar",
    "tags",
    "byline",
    "dateline",
    "caption",
    "credit",
    "hidden",
    "modal",
    "login",
    "more-",
    "read-more",
    "readmore",
    "most-",
    "popular",
    "trending",
    "teaser",
    "author-bio",
    "newsletter",
    "paywall",
    "inline-ad",
    "print-only",
    "visually-hidden",
    "sr-only",
    "screen-reader",
    "footnote-ref",
    "rightcol",
    "right-col",
    "leftcol",
    "xgwz",
    "xiangguan",
    "tuijian",
];

/// Whole words (between `-`, `_`, spaces) that mark boilerplate; too short for substrings.
const NEGATIVE_WORDS: &[&str] = &[
    "ad", "ads", "adv", "advert", "nav", "meta", "foot", "tag", "tools", "links", "aside", "side",
    "extra", "promo", "sns", "gg", "share", "print", "rel", "subnav", "header", "hot", "rank",
];

/// Substrings that mark an author byline.
const AUTHOR: &[&str] = &["author", "byline", "writer", "reporter", "editor", "zuozhe"];
/// Substrings that mark a date line.
const DATE: &[&str] = &["date", "time", "publish", "pubtime", "posted", "dateline"];

/// What a pattern of the automaton stands for.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Positive,
    Negative,
    Author,
    Date,
}

/// All substring lists in one automaton: one pass over the class string finds every match.
struct Matcher {
    automaton: aho_corasick::AhoCorasick,
    kinds: Vec<Kind>,
}

fn matcher() -> &'static Matcher {
    static M: std::sync::OnceLock<Matcher> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        let mut patterns = Vec::new();
        let mut kinds = Vec::new();
        for (list, kind) in [
            (POSITIVE, Kind::Positive),
            (NEGATIVE, Kind::Negative),
            (AUTHOR, Kind::Author),
            (DATE, Kind::Date),
        ] {
            for p in list {
                patterns.push(*p);
                kinds.push(kind);
            }
        }
        let automaton = aho_corasick::AhoCorasick::new(&patterns).expect("static patterns");
        Matcher { automaton, kinds }
    })
}

/// Reads a lowercased `id class` string.
pub fn classify(id_class: &str) -> Hint {
    let mut hint = Hint::default();
    if id_class.trim().is_empty() {
        return hint;
    }
    let m = matcher();
    let (mut positive, mut negative) = (false, false);
    for found in m.automaton.find_overlapping_iter(id_class) {
        match m.kinds[found.pattern().as_usize()] {
            Kind::Positive => positive = true,
            Kind::Negative => negative = true,
            Kind::Author => hint.flags |= flag::AUTHOR,
            Kind::Date => hint.flags |= flag::DATE,
        }
    }
    negative = negative
        || id_class
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| NEGATIVE_WORDS.contains(&w));
    if positive {
        hint.weight += CLASS_WEIGHT;
    }
    if negative {
        hint.weight -= CLASS_WEIGHT;
    }
    hint
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_and_boilerplate() {
        assert_eq!(classify("article-body ").weight, CLASS_WEIGHT);
        assert_eq!(classify("sidebar ").weight, -CLASS_WEIGHT);
        assert_eq!(classify("top-ad box ").weight, -CLASS_WEIGHT);
        assert_eq!(classify("header ").weight, -CLASS_WEIGHT);
        assert_eq!(classify("shadow ").weight, 0);
        assert_eq!(classify("post comments ").weight, 0);
        assert_eq!(classify("byline author ").flags, flag::AUTHOR);
        assert_eq!(classify("pubtime ").flags, flag::DATE);
    }
}
