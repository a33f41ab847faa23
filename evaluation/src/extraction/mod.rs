//! The extraction benchmark's metric, as `shared/README.md` defines it for the
//! article-extraction-benchmark (AEB), the fair matches used for CWCED's dates and authors,
//! [`fields`] (titles, authors and snippet bodies on the trafilatura and GNE sets), [`sets`]
//! (the pages and truths they are measured on), [`trafilatura`] (the Python extractor run
//! on the same pages) and [`report`] (the tallies per set, column, language and field).
//!
//! Body: both texts become `\w+` tokens, then overlapping 4-token shingles counted as
//! multisets; per page TP/FP/FN are normalised by their sum; precision is the mean over pages
//! with TP+FP > 0, recall the mean over pages with TP+FN > 0, F1 comes from the two means.
//! For Chinese pages each Han, kana or hangul character is a token of its own.

pub mod fields;
pub mod report;
pub mod sets;
pub mod trafilatura;

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use script::Script;

/// What an extractor gives for a page, as the bench scores it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// The body text.
    pub text: String,
    pub title: Option<String>,
    /// RFC 3339 or `YYYY-MM-DD` (a prefix of the date is enough for [`date_matches`]).
    pub date: Option<String>,
    pub author: Option<String>,
}

impl Output {
    /// Our extractor's article.
    pub fn of(article: extractor::Article) -> Output {
        Output {
            text: article.text,
            title: article.title,
            date: article.published,
            author: article.author,
        }
    }
}

/// Shingle length of the AEB metric.
pub const SHINGLE: usize = 4;

/// How text is cut into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// `\w+` runs of Unicode word characters (AEB).
    Words,
    /// Each Han, kana or hangul character alone, other text in `\w+` runs (CWCED).
    Cjk,
}

/// The tokens of `text`, in order.
pub fn tokens(text: &str, tokenizer: Tokenizer) -> Vec<&str> {
    static WORD: OnceLock<Regex> = OnceLock::new();
    let word = WORD.get_or_init(|| Regex::new(r"\w+").expect("static regex"));
    let mut out = Vec::new();
    for m in word.find_iter(text) {
        let s = m.as_str();
        if tokenizer == Tokenizer::Words || !s.chars().any(is_cjk) {
            out.push(s);
            continue;
        }
        // Split the run: each CJK char alone, the other runs whole.
        let mut start = None;
        for (i, c) in s.char_indices() {
            if is_cjk(c) {
                if let Some(st) = start.take() {
                    out.push(&s[st..i]);
                }
                out.push(&s[i..i + c.len_utf8()]);
            } else if start.is_none() {
                start = Some(i);
            }
        }
        if let Some(st) = start {
            out.push(&s[st..]);
        }
    }
    out
}

/// Han ideographs, kana and hangul (by [`script`]): one token each under
/// [`Tokenizer::Cjk`].
pub fn is_cjk(c: char) -> bool {
    matches!(
        script::of(c),
        Some(Script::Han | Script::Kana | Script::Hangul)
    )
}

/// The shingles of a token list as a multiset.
fn shingles<'a>(tokens: &[&'a str]) -> HashMap<Vec<&'a str>, usize> {
    let mut out = HashMap::new();
    if tokens.is_empty() {
        return out;
    }
    if tokens.len() < SHINGLE {
        out.insert(tokens.to_vec(), 1);
        return out;
    }
    for w in tokens.windows(SHINGLE) {
        *out.entry(w.to_vec()).or_insert(0) += 1;
    }
    out
}

/// One page's TP, FP and FN, normalised by their sum (all zero when both texts are empty).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PageCounts {
    pub tp: f64,
    pub fp: f64,
    pub fn_: f64,
}

impl PageCounts {
    /// Precision of the page, or `None` when it does not count (TP+FP = 0).
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.fp, self.fn_)
    }

    /// Recall of the page, or `None` when it does not count (TP+FN = 0).
    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.fn_, self.fp)
    }
}

/// `tp / (tp + other)`; 1 when both error terms are 0, `None` when `tp + other` is 0.
fn ratio(tp: f64, other: f64, third: f64) -> Option<f64> {
    if tp + other == 0.0 {
        return None;
    }
    if other == 0.0 && third == 0.0 {
        return Some(1.0);
    }
    Some(tp / (tp + other))
}

/// Compares a prediction with the truth for one page.
pub fn compare(truth: &str, prediction: &str, tokenizer: Tokenizer) -> PageCounts {
    let t = shingles(&tokens(truth, tokenizer));
    let p = shingles(&tokens(prediction, tokenizer));
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for (k, &tc) in &t {
        let pc = p.get(k).copied().unwrap_or(0);
        tp += tc.min(pc);
        fn_ += tc.saturating_sub(pc);
    }
    for (k, &pc) in &p {
        fp += pc.saturating_sub(t.get(k).copied().unwrap_or(0));
    }
    let sum = (tp + fp + fn_) as f64;
    if sum == 0.0 {
        return PageCounts::default();
    }
    PageCounts {
        tp: tp as f64 / sum,
        fp: fp as f64 / sum,
        fn_: fn_ as f64 / sum,
    }
}

/// Mean precision, mean recall and the F1 of the two.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Score {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// Aggregates the pages of a set.
pub fn score(pages: &[PageCounts]) -> Score {
    let mean = |xs: Vec<f64>| {
        if xs.is_empty() {
            0.0
        } else {
            xs.iter().sum::<f64>() / xs.len() as f64
        }
    };
    let precision = mean(pages.iter().filter_map(PageCounts::precision).collect());
    let recall = mean(pages.iter().filter_map(PageCounts::recall).collect());
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Score {
        precision,
        recall,
        f1,
    }
}

/// CWCED date truth (`YYYY-MM-DD HH-MM-SS`, later parts may be missing) against our RFC 3339
/// value: year, month and day must match as far as the truth gives them. `None` when the
/// truth has no date (`UNKNOWN`).
pub fn date_matches(truth: &str, ours: Option<&str>) -> Option<bool> {
    let want = date_parts(truth)?;
    let got = ours.and_then(date_parts);
    Some(
        got.is_some_and(|g| {
            want.iter().zip(g.iter()).all(|(w, g)| w == g) && g.len() >= want.len()
        }),
    )
}

/// Year, month, day (as far as present) of a date written with `-` or `/` separators.
fn date_parts(s: &str) -> Option<Vec<u32>> {
    let s = s.trim();
    if !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let date = s.split([' ', 'T']).next()?;
    let parts: Vec<u32> = date
        .split(['-', '/'])
        .take(3)
        .map_while(|p| p.parse().ok())
        .collect();
    (!parts.is_empty()).then_some(parts)
}

/// CWCED author truth (names separated by spaces) against ours: a match when any expected
/// name is contained in ours, or ours (two characters at least) in it; bylines carry extra
/// words, such as "记者 张三".
/// `None` when the truth has no author (`UNKNOWN`).
pub fn author_matches(truth: &str, ours: Option<&str>) -> Option<bool> {
    let names: Vec<&str> = truth
        .split_whitespace()
        .filter(|n| *n != "UNKNOWN")
        .collect();
    if names.is_empty() {
        return None;
    }
    let ours = ours.map(str::trim).unwrap_or("");
    if ours.is_empty() {
        return Some(false);
    }
    let long_enough = ours.chars().count() >= 2;
    Some(
        names
            .iter()
            .any(|n| ours.contains(n) || (long_enough && n.contains(ours))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_words_and_cjk() {
        assert_eq!(
            tokens("Hello, wörld_1 x", Tokenizer::Words),
            ["Hello", "wörld_1", "x"]
        );
        assert_eq!(
            tokens("新华社北京 Apple 2019年", Tokenizer::Cjk),
            ["新", "华", "社", "北", "京", "Apple", "2019", "年"]
        );
        assert_eq!(tokens("新华社", Tokenizer::Words), ["新华社"]);
    }

    #[test]
    fn perfect_and_empty() {
        let c = compare("a b c d e", "a b c d e", Tokenizer::Words);
        assert_eq!(c.precision(), Some(1.0));
        assert_eq!(c.recall(), Some(1.0));
        let empty = compare("", "", Tokenizer::Words);
        assert_eq!((empty.precision(), empty.recall()), (None, None));
        // Nothing predicted: no precision, recall 0.
        let miss = compare("a b c d", "", Tokenizer::Words);
        assert_eq!((miss.precision(), miss.recall()), (None, Some(0.0)));
    }

    #[test]
    fn partial_counts_and_short_texts() {
        // truth shingles: abcd, bcde; prediction: abcd, bcdf → TP 1, FP 1, FN 1.
        let c = compare("a b c d e", "a b c d f", Tokenizer::Words);
        assert!((c.tp - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(c.precision(), Some(0.5));
        assert_eq!(c.recall(), Some(0.5));
        // Fewer than 4 tokens: one shingle of all of them.
        assert_eq!(
            compare("a b", "a b", Tokenizer::Words).precision(),
            Some(1.0)
        );
        assert_eq!(
            compare("a b", "a c", Tokenizer::Words).precision(),
            Some(0.0)
        );
        // Multiset: a repeated shingle counts once per occurrence.
        let r = compare("x y z w x y z w", "x y z w", Tokenizer::Words);
        assert_eq!(r.precision(), Some(1.0));
        assert!(r.recall().unwrap() < 1.0);
    }

    #[test]
    fn means_over_qualifying_pages() {
        let pages = [
            compare("a b c d", "a b c d", Tokenizer::Words),
            compare("a b c d", "", Tokenizer::Words),
        ];
        let s = score(&pages);
        assert_eq!(s.precision, 1.0);
        assert_eq!(s.recall, 0.5);
        assert!((s.f1 - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn date_and_author_matches() {
        assert_eq!(
            date_matches("2005-5-7 21:23:57", Some("2005-05-07T21:23:00")),
            Some(true)
        );
        assert_eq!(
            date_matches("1998-3", Some("1998-03-02T00:00:00")),
            Some(true)
        );
        assert_eq!(date_matches("2018", Some("2017-01-01")), Some(false));
        assert_eq!(date_matches("UNKNOWN", Some("2017-01-01")), None);
        assert_eq!(date_matches("2005-03-21 11:21", None), Some(false));
        assert_eq!(
            author_matches("王建宏 张文攀", Some("记者 张文攀")),
            Some(true)
        );
        assert_eq!(author_matches("胡平", Some("胡")), Some(false));
        assert_eq!(author_matches("欧阳胡平", Some("胡平")), Some(true));
        assert_eq!(author_matches("胡平", Some("新华社")), Some(false));
        assert_eq!(author_matches("UNKNOWN", Some("x")), None);
    }
}
