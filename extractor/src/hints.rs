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

/// Reads a lowercased `id class` string.
pub fn classify(id_class: &str) -> Hint {
    let mut hint = Hint::default();
    if id_class.trim().is_empty() {
        return hint;
    }
    if POSITIVE.iter().any(|p| id_class.contains(p)) {
        hint.weight += CLASS_WEIGHT;
    }
    let negative_word = id_class
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| NEGATIVE_WORDS.contains(&w));
    if negative_word || NEGATIVE.iter().any(|p| id_class.contains(p)) {
        hint.weight -= CLASS_WEIGHT;
    }
    if ["author", "byline", "writer", "reporter", "editor", "zuozhe"]
        .iter()
        .any(|p| id_class.contains(p))
    {
        hint.flags |= flag::AUTHOR;
    }
    if ["date", "time", "publish", "pubtime", "posted", "dateline"]
        .iter()
        .any(|p| id_class.contains(p))
    {
        hint.flags |= flag::DATE;
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
