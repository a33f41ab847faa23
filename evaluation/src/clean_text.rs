//! A near-duplicate evaluation set built from article bodies, and the
//! precision and recall of "duplicate" (fingerprints within distance k).
//!
//! From each body (the benchmark uses the 181 AEB article bodies) it makes
//! pairs that should be found:
//! - [`Kind::Mirror`]: the body under two templates: each copy has a few
//!   different boilerplate lines around it (share bar, "Related articles"
//!   heading, copyright, newsletter line), as two sites' extractors leave;
//! - [`Kind::Edit`]: the body and a light edit of it: one to three words
//!   changed, inserted or deleted, or one sentence added;
//! - [`Kind::Boilerplate`]: the body and the body with a block of
//!   boilerplate added (a "Related articles" list of three headlines and a
//!   newsletter pitch, about 50 words), as when one extraction keeps the
//!   sidebar and the other cuts it;
//!
//! and every pair of two different bodies, which should not be found (many
//! AEB articles share a topic and a site). Pure: the caller reads the
//! bodies and computes fingerprints.
//!
//! `cargo bench -p evaluation --bench contentseen` builds this set from the
//! 181 AEB article bodies (543 template mirror pairs, 543 light edits, 543
//! boilerplate blocks added, against all 16,290 pairs of distinct articles)
//! and prints recall per kind and the precision of "duplicate" per feature
//! choice, with the lookups the stage makes (k = 3, a larger radius for
//! short bodies: `contentseen::reach`).
//!
//! The tables below were measured when the set drew its variants from a
//! generator of its own (xorshift); since issue 16 it draws from
//! [`crate::rng`], so a run today is another draw of the same set (another
//! draw moves recall by about ±0.01).
//!
//! ## Feature choices (`contentseen::simhash`)
//!
//! Measured before numbers and URLs were left out and before the second
//! signal (MinHash). On this set:
//!
//! | features                        | mirrors | light edits | boilerplate | distinct found | precision |
//! |---------------------------------|---------|-------------|-------------|----------------|-----------|
//! | 3-shingles only                 | 0.773   | 0.783       | 0.285       | 0              | 1.000     |
//! | unigrams only                   | 0.972   | 0.985       | 0.836       | 10             | 0.991     |
//! | 2-shingles + unigrams ×2        | 0.959   | 0.980       | 0.786       | 1              | 0.999     |
//! | 3-shingles + unigrams ×2        | 0.956   | 0.982       | 0.790       | 1              | 0.999     |
//! | 4-shingles + unigrams ×2        | 0.959   | 0.985       | 0.823       | 2              | 0.998     |
//! | 3-sh. + uni. ×2, lines ≥ 6      | 0.989   | 0.982       | 0.790       | 2              | 0.998     |
//! | **3-sh. + uni. ×2, lines ≥ 10** | 1.000   | 0.972       | 0.807       | 2              | 0.998     |
//! | 3-sh. + uni. ×2, lines ≥ 15     | 1.000   | 0.969       | 0.923       | 2              | 0.998     |
//! | 3-sh. + uni. ×1, lines ≥ 10     | 1.000   | 0.943       | 0.720       | 0              | 1.000     |
//! | unigrams, lines ≥ 10            | 1.000   | 0.978       | 0.838       | 10             | 0.991     |
//! | 2-sh. + uni. ×2, lines ≥ 10     | 1.000   | 0.976       | 0.768       | 0              | 1.000     |
//! | 3-sh. + uni. ×4, lines ≥ 10     | 1.000   | 0.969       | 0.820       | 5              | 0.995     |
//!
//! ## Search radius and probed bits (`contentseen::reach`)
//!
//! Light edits on this set:
//!
//! | radius by length                                  | keys | recall (4 draws) | distinct pairs found |
//! |---------------------------------------------------|------|------------------|----------------------|
//! | 3 for all                                         | 4    | 0.888–0.913      | 2                    |
//! | 6 under 300 tokens, the 2 weakest bits            | 6    | 0.943–0.965      | 2                    |
//! | **5 / 6 / 7 under 600 / 300 / 150, 2 weakest bits** | 6  | 0.972–0.978      | 2                    |
//! | same radii, the weakest bit of each band          | 8    | 0.980–0.987      | 2                    |
//! | same radii, all 16 neighbours of each band        | 68   | 0.980–0.991      | 2                    |

use contentseen::bands::Layout;
use contentseen::reach::{Probe, Reach};
use contentseen::simhash::{distance, is_cjk, Features, Sketch, Weights};

use crate::rng::{rng, EvalRng, RngExt};

/// This set's stream of the evaluation generator.
const STREAM: u64 = 0xC1EA_7E27;

/// Why two texts of a pair are near-duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Mirror,
    Edit,
    Boilerplate,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Mirror, Kind::Edit, Kind::Boilerplate];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Mirror => "template mirrors",
            Kind::Edit => "light edits",
            Kind::Boilerplate => "boilerplate added/cut",
        }
    }
}

/// The texts and the labelled pairs between them.
#[derive(Debug, Clone)]
pub struct EvalSet {
    /// The original bodies first (`0..bases`), then the variants.
    pub texts: Vec<String>,
    pub bases: usize,
    /// For every text, the body it was made from.
    pub origin: Vec<usize>,
    /// Near-duplicate pairs: (kind, text index, text index).
    pub pairs: Vec<(Kind, usize, usize)>,
}

/// Lines a site template adds around an article.
const TEMPLATE_LINES: &[&str] = &[
    "Share this article: Facebook Twitter LinkedIn Email",
    "Share on Facebook Share on Twitter",
    "Related articles",
    "Advertisement",
    "Read more",
    "Copyright 2024 The Daily Example. All rights reserved.",
    "© Example Media Group",
    "Sign up for our newsletter",
    "Follow us on Twitter",
    "Comments (0)",
    "Print this page",
    "Photo: Reuters",
];

/// One of `0..n` (0 when `n` is 0).
fn below(rng: &mut EvalRng, n: usize) -> usize {
    rng.random_range(0..n.max(1))
}

/// The body with `lines` template lines, some before and some after.
fn templated(body: &str, rng: &mut EvalRng, lines: usize) -> String {
    let mut before = Vec::new();
    let mut after = Vec::new();
    for _ in 0..lines {
        let line = TEMPLATE_LINES[below(rng, TEMPLATE_LINES.len())];
        if rng.random_bool(0.5) {
            before.push(line);
        } else {
            after.push(line);
        }
    }
    let mut out = before.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(body);
    for l in after {
        out.push('\n');
        out.push_str(l);
    }
    out
}

/// A sentence of another body (its first one of 6 to 30 words).
fn sentence_of(other: &str) -> String {
    for s in other.split(['.', '!', '?', '\n']) {
        let n = s.split_whitespace().count();
        if (6..=30).contains(&n) {
            return format!("{}.", s.trim());
        }
    }
    "The company did not respond to a request for comment.".to_string()
}

/// One light edit: 1–3 words changed, inserted or deleted, or a sentence
/// added. Words are space-separated; a "word" holding a line break is not
/// edited (that would merge or split lines, which is not a word edit), and
/// in a "word" of CJK text (written without spaces: a whole clause) the
/// edit is two characters, the length of a typical Chinese word.
fn light_edit(body: &str, other: &str, rng: &mut EvalRng) -> String {
    let mut words: Vec<String> = body.split(' ').map(str::to_string).collect();
    let vocab: Vec<&str> = other.split_whitespace().collect();
    let other_cjk: Vec<char> = other.chars().filter(|&c| is_cjk(c)).collect();
    let editable = |words: &[String]| -> Vec<usize> {
        (0..words.len())
            .filter(|&i| !words[i].is_empty() && !words[i].contains('\n'))
            .collect()
    };
    if editable(&words).len() < 2 || vocab.is_empty() {
        return format!("{body} Updated.");
    }
    match below(rng, 4) {
        0 => {
            // A sentence added after a sentence end (or at the end).
            let at = (0..words.len())
                .filter(|&i| words[i].ends_with('.'))
                .nth(below(rng, 8))
                .map_or(words.len(), |i| i + 1);
            words.insert(at, sentence_of(other));
        }
        op => {
            for _ in 0..1 + below(rng, 3) {
                let places = editable(&words);
                if places.len() < 2 {
                    break;
                }
                let at = places[below(rng, places.len())];
                let chars: Vec<char> = words[at].chars().collect();
                let cjk = chars.iter().filter(|&&c| is_cjk(c)).count();
                if cjk >= 4 && other_cjk.len() >= 2 {
                    // Two characters of a CJK clause.
                    let j = below(rng, chars.len() - 1);
                    let k = below(rng, other_cjk.len() - 1);
                    let new = &other_cjk[k..k + 2];
                    let edited: String = match op {
                        1 => [&chars[..j], new, &chars[j + 2..]].concat(),
                        2 => [&chars[..j], new, &chars[j..]].concat(),
                        _ => [&chars[..j], &chars[j + 2..]].concat(),
                    }
                    .into_iter()
                    .collect();
                    words[at] = edited;
                    continue;
                }
                let w = vocab[below(rng, vocab.len())].to_string();
                match op {
                    1 => words[at] = w,
                    2 => words.insert(at, w),
                    _ => {
                        words.remove(at);
                    }
                }
            }
        }
    }
    words.join(" ")
}

/// A boilerplate block: three headlines of other articles and a pitch.
fn boilerplate_block(bodies: &[String], rng: &mut EvalRng) -> String {
    let mut block = String::from("Related articles\n");
    for _ in 0..3 {
        let s = sentence_of(&bodies[below(rng, bodies.len())]);
        let headline: Vec<&str> = s.split_whitespace().take(10).collect();
        block.push_str(&headline.join(" "));
        block.push('\n');
    }
    block.push_str(
        "Sign up for our daily newsletter and get the best of our journalism \
         delivered to your inbox every morning. Follow us on Facebook and Twitter.",
    );
    block
}

/// Builds the set: per body, `per_kind` pairs of each [`Kind`].
pub fn build(bodies: &[String], per_kind: usize, seed: u64) -> EvalSet {
    let mut rng = rng(seed, STREAM);
    let mut texts: Vec<String> = bodies.to_vec();
    let mut origin: Vec<usize> = (0..bodies.len()).collect();
    let mut pairs = Vec::new();
    let n = bodies.len();
    for (i, body) in bodies.iter().enumerate() {
        let mut push = |texts: &mut Vec<String>, t: String| {
            texts.push(t);
            origin.push(i);
            texts.len() - 1
        };
        for _ in 0..per_kind {
            let (la, lb) = (1 + below(&mut rng, 3), 1 + below(&mut rng, 3));
            let a = templated(body, &mut rng, la);
            let b = templated(body, &mut rng, lb);
            let (a, b) = (push(&mut texts, a), push(&mut texts, b));
            pairs.push((Kind::Mirror, a, b));

            let other = &bodies[(i + 1 + below(&mut rng, n.max(2) - 1)) % n];
            let e = push(&mut texts, light_edit(body, other, &mut rng));
            pairs.push((Kind::Edit, i, e));

            let block = boilerplate_block(bodies, &mut rng);
            let with = if rng.random_bool(0.5) {
                format!("{body}\n{block}")
            } else {
                format!("{block}\n{body}")
            };
            let w = push(&mut texts, with);
            pairs.push((Kind::Boilerplate, i, w));
        }
    }
    EvalSet {
        texts,
        bases: n,
        origin,
        pairs,
    }
}

/// How a text of the set is looked up: a SimHash lookup, or the exact hash
/// of a body too short for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    Sim(Probe),
    Exact(u64),
}

impl Lookup {
    /// The lookup the contentseen stage makes for a body.
    pub fn of(sketch: &Sketch, layout: &Layout, reach: &Reach) -> Lookup {
        reach
            .probe(layout, sketch)
            .map_or(Lookup::Exact(sketch.fingerprint.value()), Lookup::Sim)
    }
}

/// True when `later`, looked up after `earlier` was stored, is found to be
/// its near-duplicate, as the table decides: its lookup reads a band key
/// `earlier` is filed under and the distance is within both radii; or the
/// exact hashes of two short bodies are equal.
pub fn is_duplicate(layout: &Layout, earlier: &Lookup, later: &Lookup) -> bool {
    match (earlier, later) {
        (Lookup::Sim(a), Lookup::Sim(b)) => {
            b.accepts(distance(a.fingerprint, b.fingerprint), a.radius)
                && layout.sees(b, a.fingerprint)
        }
        (Lookup::Exact(x), Lookup::Exact(y)) => x == y,
        _ => false,
    }
}

/// Found and total pairs of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub found: usize,
    pub total: usize,
}

impl Count {
    pub fn rate(&self) -> f64 {
        crate::fraction(self.found, self.total)
    }
}

/// The scores of one fingerprint choice on an [`EvalSet`].
#[derive(Debug, Clone, PartialEq)]
pub struct Scores {
    /// Recall per kind, in [`Kind::ALL`] order.
    pub recall: [Count; 3],
    /// Distinct pairs within k (false positives), of all distinct pairs.
    pub distinct: Count,
}

impl Scores {
    /// Precision of "duplicate" over the given kinds and every distinct pair.
    pub fn precision(&self, kinds: &[Kind]) -> f64 {
        let tp: usize = Kind::ALL
            .iter()
            .zip(&self.recall)
            .filter(|(k, _)| kinds.contains(k))
            .map(|(_, c)| c.found)
            .sum();
        let fp = self.distinct.found;
        crate::fraction(tp, tp + fp)
    }

    pub fn recall_of(&self, kind: Kind) -> Count {
        self.recall[kind as usize]
    }
}

/// Scores lookups (one per text of `set`, same order): in every pair the
/// second text (the variant; of two distinct bodies, the later one) looks
/// up the first.
pub fn score(set: &EvalSet, lookups: &[Lookup], layout: &Layout) -> Scores {
    let mut recall = [Count::default(); 3];
    for &(kind, a, b) in &set.pairs {
        let c = &mut recall[kind as usize];
        c.total += 1;
        c.found += usize::from(is_duplicate(layout, &lookups[a], &lookups[b]));
    }
    let mut distinct = Count::default();
    for i in 0..set.bases {
        for j in i + 1..set.bases {
            distinct.total += 1;
            distinct.found += usize::from(is_duplicate(layout, &lookups[i], &lookups[j]));
        }
    }
    Scores { recall, distinct }
}

/// The file of the feature choices `--bench contentseen` compares.
pub const FEATURE_CHOICES_FILE: &str = "evaluation/src/clean_text/features.tsv";

/// The feature choices `--bench contentseen` compares, each with the name
/// of its row, as [`FEATURE_CHOICES_FILE`] lists them.
pub fn feature_choices() -> Result<Vec<(&'static str, Features)>, String> {
    parse_feature_choices(include_str!("clean_text/features.tsv"))
}

/// The feature choices of `tsv` ([`FEATURE_CHOICES_FILE`]'s text): a line
/// each, its name and the [`Features`] fields in their order, the weights
/// as `count`, `log` or `once`. An error names the file and the line.
fn parse_feature_choices(tsv: &'static str) -> Result<Vec<(&'static str, Features)>, String> {
    let mut out = Vec::new();
    for (line, fields) in crate::tsv_rows(tsv) {
        let at = |reason: String| format!("{FEATURE_CHOICES_FILE}:{line}: {reason}");
        let [name, shingle, unigram_weight, shingle_weight, min_line_tokens, weights] = fields[..]
        else {
            return Err(at(format!("{} fields, not 6", fields.len())));
        };
        let number = |field: &str| {
            field
                .parse::<u8>()
                .map_err(|_| at(format!("{field:?} is not a number to 255")))
        };
        let weights = match weights {
            "count" => Weights::Count,
            "log" => Weights::Log,
            "once" => Weights::Once,
            other => return Err(at(format!("{other:?} is not count, log or once"))),
        };
        let features = Features {
            shingle: number(shingle)?.into(),
            unigram_weight: number(unigram_weight)?,
            shingle_weight: number(shingle_weight)?,
            min_line_tokens: number(min_line_tokens)?.into(),
            weights,
        };
        out.push((name, features));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feature_choices_are_read_from_their_file() {
        let choices = feature_choices().expect("the feature choices");
        let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
        assert_eq!(names.len(), 15);
        assert_eq!(names[..2], ["3-shingles only", "unigrams only"]);
        let features =
            |shingle, unigram_weight, shingle_weight, min_line_tokens, weights| Features {
                shingle,
                unigram_weight,
                shingle_weight,
                min_line_tokens,
                weights,
            };
        assert_eq!(choices[0].1, features(3, 0, 1, 0, Weights::Count));
        assert_eq!(
            choices[5],
            (
                "3-sh + uni x2, lines ≥ 6",
                features(3, 2, 1, 6, Weights::Count)
            )
        );
        assert_eq!(choices[13].1, features(3, 2, 1, 10, Weights::Log));
        assert_eq!(choices[14].1, features(3, 2, 1, 10, Weights::Once));
        assert!(choices
            .iter()
            .any(|(_, f)| *f == contentseen::simhash::DEFAULT));
        assert_eq!(
            parse_feature_choices("# a comment\nx\t3\t2\t1\t10\tsquare\n").unwrap_err(),
            format!("{FEATURE_CHOICES_FILE}:2: \"square\" is not count, log or once")
        );
    }
    use contentseen::simhash::sketch;

    /// A number as letters (numbers are not features).
    fn letters(mut n: usize) -> String {
        let mut s = String::new();
        loop {
            s.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
            if n == 0 {
                return s;
            }
        }
    }

    fn bodies() -> Vec<String> {
        (0..6)
            .map(|i| {
                (0..600)
                    .map(|w| format!("word{}x{}", letters((w * 7 + i * 13) % 97), letters(i)))
                    .collect::<Vec<_>>()
                    .chunks(12)
                    .map(|s| s.join(" ") + ".")
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn builds_labelled_pairs_and_scores_them() {
        let b = bodies();
        let set = build(&b, 2, 7);
        assert_eq!(set.bases, 6);
        assert_eq!(set.pairs.len(), 6 * 2 * 3);
        for &(_, x, y) in &set.pairs {
            assert_ne!(set.texts[x], set.texts[y]);
        }
        let layout = Layout::default();
        let lookups = |reach: &Reach| -> Vec<Lookup> {
            set.texts
                .iter()
                .map(|t| Lookup::of(&sketch(t), &layout, reach))
                .collect()
        };
        let s = score(&set, &lookups(&Reach::default()), &layout);
        assert_eq!(s.distinct.total, 15);
        assert_eq!(s.distinct.found, 0);
        assert!(s.recall_of(Kind::Mirror).found > 0);
        // Reaching every distance finds everything, so precision falls to
        // the share of near-duplicate pairs.
        let all = Layout::new(63, &[1; 64]).unwrap();
        let lookups: Vec<Lookup> = set
            .texts
            .iter()
            .map(|t| Lookup::of(&sketch(t), &all, &Reach::exact()))
            .collect();
        let all = score(&set, &lookups, &all);
        assert_eq!(all.recall_of(Kind::Edit).rate(), 1.0);
        assert!(all.precision(&[Kind::Edit]) < 1.0);
    }

    #[test]
    fn a_later_text_finds_an_earlier_one_only_through_a_key_it_reads() {
        let layout = Layout::default();
        let probe = |fp, radius, flips| {
            Lookup::Sim(Probe {
                radius,
                flips,
                ..Probe::exact(&layout, fp)
            })
        };
        let fp = 0xFFFF_0000_FFFF_0000u64;
        // 5 bits apart, 1 or 2 in every band.
        let other = fp ^ 1 ^ (0b11 << 16) ^ (1 << 32) ^ (1 << 48);
        assert!(is_duplicate(&layout, &probe(fp, 7, 0), &probe(other, 7, 1)));
        assert!(!is_duplicate(
            &layout,
            &probe(fp, 7, 0),
            &probe(other, 7, 2)
        ));
        assert!(!is_duplicate(
            &layout,
            &probe(fp, 3, 0),
            &probe(other, 7, 1)
        ));
        assert!(is_duplicate(&layout, &Lookup::Exact(4), &Lookup::Exact(4)));
        assert!(!is_duplicate(&layout, &Lookup::Exact(4), &probe(4, 3, 0)));
    }
}
