//! The labels: each page's main text by another extractor
//! (`evaluation/neardup_sites/label.py`), its word 3-shingles, exact
//! Jaccard similarities and every pair of pages at [`super::FOUND_AT`] or
//! more.
//!
//! Words are Unicode letter-and-digit runs, lower-cased; a Han, kana,
//! hangul, Thai, Lao, Khmer or Myanmar character is a word of its own (the
//! rule of the shared sets' metric for CJK text). Shingles are runs of
//! [`SHINGLE`] words (a text of fewer words is one shingle of all of them),
//! as a set. Nothing here is the crawler's: not its tokenizer, not its
//! extractor.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

/// Words per shingle.
pub const SHINGLE: usize = 3;

/// One page's label.
#[derive(Debug, Clone, Default)]
pub struct Label {
    /// Words of the text.
    pub words: usize,
    /// The share of the text inside links.
    pub link_share: f64,
    /// The text's shingle hashes, sorted, without repeats.
    pub shingles: Vec<u64>,
    /// The shingles of a second extractor's text (`text_alt`), when the
    /// labels have one: its opinion vetoes a pair to find
    /// ([`Label::second_opinion_distinct`]).
    pub alt_shingles: Option<Vec<u64>>,
}

impl Label {
    /// A label of `text` with `link_share` of it in links.
    pub fn of(text: &str, link_share: f64) -> Label {
        let words = words(text);
        Label {
            words: words.len(),
            link_share,
            shingles: shingles_of(&words),
            alt_shingles: None,
        }
    }

    /// This label with a second extractor's text of the page.
    pub fn with_alt(self, alt: &str) -> Label {
        Label {
            alt_shingles: Some(shingles_of(&words(alt))),
            ..self
        }
    }

    /// Whether the second extractor's texts of this page and `other` are
    /// distinct (Jaccard under [`super::DISTINCT_BELOW`]): the labels
    /// disagree, and the pair is not one to find. False without a second
    /// text.
    pub fn second_opinion_distinct(&self, other: &Label) -> bool {
        match (&self.alt_shingles, &other.alt_shingles) {
            (Some(a), Some(b)) => jaccard(a, b) < super::DISTINCT_BELOW,
            _ => false,
        }
    }

    /// A listing or navigation page, or one without text.
    pub fn is_listing(&self) -> bool {
        self.words < super::LISTING_MAX_WORDS || self.link_share > super::LISTING_LINK_SHARE
    }
}

/// The shingle hashes of `words`, sorted, without repeats.
fn shingles_of(words: &[String]) -> Vec<u64> {
    let mut shingles: Vec<u64> = if words.is_empty() {
        Vec::new()
    } else if words.len() < SHINGLE {
        vec![shingle_hash(words)]
    } else {
        words.windows(SHINGLE).map(shingle_hash).collect()
    };
    shingles.sort_unstable();
    shingles.dedup();
    shingles
}

/// The words of a text, lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if script::is_unspaced(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
        } else if c.is_alphanumeric() || c == '_' {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn shingle_hash(words: &[String]) -> u64 {
    xxh3_64(words.join("\u{1}").as_bytes())
}

/// The exact Jaccard similarity of two shingle sets (sorted, without
/// repeats); 0 when both are empty.
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    let (mut i, mut j, mut both) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                both += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - both;
    if union == 0 {
        0.0
    } else {
        both as f64 / union as f64
    }
}

/// Where the labels are: `NEARDUP_SITES_LABELS`, else what `scripts/neardup-sites.sh`
/// writes (`target/neardup-sites/labels.jsonl`).
pub fn default_path() -> PathBuf {
    std::env::var_os("NEARDUP_SITES_LABELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/neardup-sites/labels.jsonl")
        })
}

/// The labels of a `label.py` output, by (site name, path).
pub fn read(path: &Path) -> Result<HashMap<(String, String), Label>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (scripts/neardup-sites.sh makes the labels)",
            path.display()
        )
    })?;
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        let (Some(site), Some(page), Some(body)) =
            (v["site"].as_str(), v["path"].as_str(), v["text"].as_str())
        else {
            return Err(format!(
                "{}:{}: no site, path or text",
                path.display(),
                n + 1
            ));
        };
        let share = v["link_share"].as_f64().unwrap_or(0.0);
        let label = match v["text_alt"].as_str() {
            Some(alt) => Label::of(body, share).with_alt(alt),
            None => Label::of(body, share),
        };
        out.insert((site.to_string(), page.to_string()), label);
    }
    Ok(out)
}

/// Every pair (i < j) of `sets` with a Jaccard similarity of at least
/// `threshold`, with it: exact, by prefix filtering (Bayardo, Ma, Srikant
/// 2007): with the shingles of each set in one global order, rarest first,
/// two sets with J ≥ t share a shingle among the first |x| − ⌈t·|x|⌉ + 1 of
/// each. Empty sets are in no pair.
pub fn pairs_at_least(sets: &[&[u64]], threshold: f64) -> Vec<(usize, usize, f64)> {
    let mut df: HashMap<u64, u32> = HashMap::new();
    for s in sets {
        for &h in s.iter() {
            *df.entry(h).or_default() += 1;
        }
    }
    let prefix_len = |n: usize| n - (threshold * n as f64).ceil() as usize + 1;
    let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, s) in sets.iter().enumerate() {
        if s.is_empty() {
            continue;
        }
        let mut ordered: Vec<u64> = s.to_vec();
        ordered.sort_unstable_by_key(|h| (df[h], *h));
        for h in &ordered[..prefix_len(s.len()).min(s.len())] {
            index.entry(*h).or_default().push(i);
        }
    }
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    for list in index.values() {
        for (a, &i) in list.iter().enumerate() {
            for &j in &list[a + 1..] {
                let (x, y) = (sets[i].len() as f64, sets[j].len() as f64);
                // Length filter: J ≤ min/max.
                if x.min(y) >= threshold * x.max(y) {
                    candidates.push((i.min(j), i.max(j)));
                }
            }
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    candidates
        .into_iter()
        .filter_map(|(i, j)| {
            let s = jaccard(sets[i], sets[j]);
            (s >= threshold).then_some((i, j, s))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_punctuation_and_cjk_characters() {
        assert_eq!(
            words("Hello, World! 中文x"),
            ["hello", "world", "中", "文", "x"]
        );
        assert_eq!(words(""), Vec::<String>::new());
    }

    #[test]
    fn a_second_opinion_that_the_texts_are_distinct_vetoes_a_pair() {
        let notice = "a complete list of releases in a single page is also available";
        let a = Label::of(notice, 0.0).with_alt("version one fixes the parser and the planner");
        let b = Label::of(notice, 0.0).with_alt("version two adds window functions to queries");
        let c = Label::of(notice, 0.0).with_alt("version one fixes the parser and the planner too");
        assert_eq!(jaccard(&a.shingles, &b.shingles), 1.0);
        assert!(a.second_opinion_distinct(&b));
        assert!(!a.second_opinion_distinct(&c));
        // Without a second text, no veto.
        assert!(!Label::of(notice, 0.0).second_opinion_distinct(&b));
    }

    #[test]
    fn jaccard_of_shingles() {
        let a = Label::of("one two three four five", 0.0);
        let b = Label::of("one two three four six", 0.0);
        // {123, 234, 345} against {123, 234, 346}: 2 of 4.
        assert_eq!(jaccard(&a.shingles, &b.shingles), 0.5);
        assert_eq!(jaccard(&a.shingles, &a.shingles), 1.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
        assert_eq!(Label::of("two words", 0.0).shingles.len(), 1);
    }

    #[test]
    fn prefix_filtering_finds_every_close_pair_and_no_other() {
        // Sets drawn from a small universe: compare with all pairs.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut sets: Vec<Vec<u64>> = Vec::new();
        for i in 0..120 {
            let mut s: Vec<u64> = if i % 3 == 0 || sets.is_empty() {
                (0..20 + next() % 30).map(|_| next() % 400).collect()
            } else {
                // A near copy of an earlier set.
                let mut s = sets[(next() % sets.len() as u64) as usize].clone();
                for _ in 0..next() % 4 {
                    s.push(next() % 400);
                }
                s
            };
            s.sort_unstable();
            s.dedup();
            sets.push(s);
        }
        let refs: Vec<&[u64]> = sets.iter().map(Vec::as_slice).collect();
        for t in [0.5, 0.8, 0.95] {
            let got: Vec<(usize, usize)> = pairs_at_least(&refs, t)
                .into_iter()
                .map(|(i, j, _)| (i, j))
                .collect();
            let mut want = Vec::new();
            for i in 0..sets.len() {
                for j in i + 1..sets.len() {
                    if jaccard(&sets[i], &sets[j]) >= t {
                        want.push((i, j));
                    }
                }
            }
            assert!(!want.is_empty());
            assert_eq!(got, want, "threshold {t}");
        }
    }
}
