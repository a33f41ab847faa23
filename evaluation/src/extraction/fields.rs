//! How a title, an author and a snippet body are judged on the trafilatura and GNE sets, the
//! same rule for every extractor (ours and trafilatura alike).
//!
//! - Title: right when it equals the truth letter for letter, ignoring case, spaces and
//!   punctuation (`Elektro-Zapfsäulen.` = `elektro zapfsäulen`), up to [`TITLE_EDITS`] of
//!   its letters edited (the hand labels hold typos, `ß` written `SS`, a last letter cut);
//!   a site name or a kicker left on it, or a headline cut short, is wrong.
//! - Author: right when it names exactly the people of the truth ([`names`]: cut at `,`,
//!   `;`, `、`, `|`, `/`, `&`, ` and `, ` und `, ...; Han names also at spaces), in any order;
//!   a name missing or one too many is wrong.
//! - Snippets (trafilatura's own evaluation): a snippet is found when the body holds it
//!   after whitespace is collapsed in both; `with` snippets should be found, `without`
//!   snippets should not.
//! - Dates are matched by [`super::date_matches`] (year, month and day as far as the truth
//!   gives them).

/// Letters and digits, lower case: what two titles must share to be the same.
fn letters(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The share of a title's letters that may differ (edit distance over the longer of the
/// two): one letter in twenty.
pub const TITLE_EDITS: f64 = 0.05;

/// Whether `ours` is the title `truth` (see the module doc).
pub fn title_matches(truth: &str, ours: Option<&str>) -> bool {
    let want: Vec<char> = letters(truth).chars().collect();
    let Some(got) = ours.map(|o| letters(o).chars().collect::<Vec<char>>()) else {
        return false;
    };
    let longer = want.len().max(got.len());
    !want.is_empty() && edit_distance(&want, &got) as f64 <= TITLE_EDITS * longer as f64
}

/// Levenshtein distance between two char sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The people an author value names, normalised (lower case, single spaces, no surrounding
/// punctuation), in order, without repeats.
pub fn names(author: &str) -> Vec<String> {
    let mut parts = vec![author.to_string()];
    for sep in [
        ",", ";", "，", "；", "、", "|", "/", "／", "&", " and ", " und ", " et ", " y ", " e ",
        "\n",
    ] {
        parts = parts
            .iter()
            .flat_map(|p| {
                // Separators that are words are matched in lower case.
                let lower = p.to_lowercase();
                if sep.trim().chars().all(char::is_alphabetic) && lower.len() == p.len() {
                    let mut out = Vec::new();
                    let mut from = 0;
                    for (i, _) in lower.match_indices(sep) {
                        out.push(p[from..i].to_string());
                        from = i + sep.len();
                    }
                    out.push(p[from..].to_string());
                    out
                } else {
                    p.split(sep).map(str::to_string).collect()
                }
            })
            .collect();
    }
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        let words: Vec<&str> = part.split_whitespace().collect();
        // "刘玺东 易赛楠": Han names are written without spaces, so a space parts two.
        let han = !words.is_empty() && words.iter().all(|w| w.chars().all(is_han));
        let pieces = if han { words } else { vec![part.as_str()] };
        for piece in pieces {
            let name = piece
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn is_han(c: char) -> bool {
    matches!(script::of(c), Some(script::Script::Han)) || c == '·'
}

/// Whether `ours` names exactly the people of `truth`, in any order.
pub fn authors_match(truth: &str, ours: Option<&str>) -> bool {
    let mut want = names(truth);
    let mut got = names(ours.unwrap_or(""));
    want.sort();
    got.sort();
    !want.is_empty() && want == got
}

/// `s` with every whitespace run made one space, trimmed.
pub fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A page's snippets: found `with`, all `with`, present `without`, all `without`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SnippetCounts {
    pub with_found: usize,
    pub with: usize,
    pub without_present: usize,
    pub without: usize,
}

impl SnippetCounts {
    /// The snippets of one page against a body text.
    pub fn of(body: &str, with: &[String], without: &[String]) -> SnippetCounts {
        let text = collapse(body);
        let found = |s: &String| text.contains(&collapse(s));
        SnippetCounts {
            with_found: with.iter().filter(|s| found(s)).count(),
            with: with.len(),
            without_present: without.iter().filter(|s| found(s)).count(),
            without: without.len(),
        }
    }

    pub fn add(&mut self, other: SnippetCounts) {
        self.with_found += other.with_found;
        self.with += other.with;
        self.without_present += other.without_present;
        self.without += other.without;
    }

    /// The share of `with` snippets found (recall over snippets).
    pub fn with_share(&self) -> f64 {
        share(self.with_found, self.with)
    }

    /// The share of `without` snippets left out.
    pub fn without_share(&self) -> f64 {
        share(self.without - self.without_present, self.without)
    }

    /// Precision, recall and F1 over snippets as trafilatura's evaluation counts them
    /// (a `with` found is a true positive, a `without` present a false positive).
    pub fn f1(&self) -> f64 {
        let tp = self.with_found as f64;
        let precision = tp / (tp + self.without_present as f64).max(1.0);
        let recall = self.with_share();
        if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        }
    }
}

fn share(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks `matches` against each (truth, ours, expected) case.
    fn check_matches(
        matches: fn(&str, Option<&str>) -> bool,
        cases: &[(&str, Option<&str>, bool)],
    ) {
        for &(truth, ours, expected) in cases {
            assert_eq!(matches(truth, ours), expected, "{truth:?} against {ours:?}");
        }
    }

    #[test]
    fn titles_ignore_case_spaces_and_punctuation() {
        check_matches(
            title_matches,
            &[
                ("Elektro-Zapfsäulen.", Some("elektro zapfsäulen"), true),
                ("定了！广州 南沙", Some("定了广州南沙"), true),
                ("Storm hits coast", Some("Storm hits coast - BBC"), false),
                // A typo or a letter cut in the label is no fault of the extractor.
                (
                    "Sportzentrum Kerenzberg in Filzbach erweitert",
                    Some("Sportzentrum Kerenzerberg in Filzbach erweitert"),
                    true,
                ),
                (
                    "PEKING 2022 – EINE GROSSE CHANCE FÜR DEN CHINESISCHEN BIATHLONSPORT",
                    Some("Peking 2022 – Eine große Chance für den chinesischen Biathlonsport"),
                    true,
                ),
                (
                    "Bohren, bis es heiß wird",
                    Some("Klimaschutz: Bohren, bis es heiß wird"),
                    false,
                ),
                ("Storm", None, false),
                ("", Some(""), false),
            ],
        );
        assert_eq!(edit_distance(&['a', 'b'], &['b']), 1);
    }

    #[test]
    fn authors_are_sets_of_names() {
        assert_eq!(
            names("Benjamin Fischer und Marcus Theurer"),
            ["benjamin fischer", "marcus theurer"]
        );
        assert_eq!(names("刘玺东 易赛楠"), ["刘玺东", "易赛楠"]);
        assert_eq!(names("汤诗瑶、丁涛"), ["汤诗瑶", "丁涛"]);
        check_matches(
            authors_match,
            &[
                (
                    "Benjamin Fischer und Marcus Theurer",
                    Some("Marcus Theurer, Benjamin Fischer"),
                    true,
                ),
                ("Heiko", Some("heiko"), true),
                (
                    "Benjamin Fischer und Marcus Theurer",
                    Some("Benjamin Fischer"),
                    false,
                ),
                ("Jane Roe", Some("Jane Roe, John Doe"), false),
                ("Jane Roe", None, false),
            ],
        );
        // "Ernst" holds "e" but is no separator; "Anderson" holds "and".
        assert_eq!(names("Ernst Anderson"), ["ernst anderson"]);
        assert_eq!(names("Tom AND Jerry"), ["tom", "jerry"]);
    }

    #[test]
    fn snippets_after_collapsing_whitespace() {
        let with = vec!["a  b".to_string(), "c".to_string(), "zz".to_string()];
        let without = vec!["menu".to_string()];
        let c = SnippetCounts::of("a\nb c menu", &with, &without);
        assert_eq!(
            c,
            SnippetCounts {
                with_found: 2,
                with: 3,
                without_present: 1,
                without: 1
            }
        );
        assert!((c.with_share() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(c.without_share(), 0.0);
        assert!((c.f1() - 2.0 * (2.0 / 3.0) * (2.0 / 3.0) / (4.0 / 3.0)).abs() < 1e-12);
    }
}
