//! Scoring the near-duplicate run: true and false positives per page,
//! and the report per kind, script, length and source, tuned and held
//! aside, with the distances and confusion cases behind the figures.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use script::Script;

use super::{jaccard, shingles, Decided, EvalPage, EvalSet, Kind};

/// True positives, false positives and false negatives of "duplicate".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub pages: usize,
    /// Pages that should be found.
    pub expected: usize,
    pub tp: usize,
    pub fp: usize,
    pub fn_: usize,
}

impl Tally {
    /// A false duplicate or a missed one.
    pub fn is_wrong(&self) -> bool {
        self.fp > 0 || self.fn_ > 0
    }
    pub fn precision(&self) -> f64 {
        crate::fraction(self.tp, self.tp + self.fp)
    }
    pub fn recall(&self) -> f64 {
        crate::fraction(self.tp, self.expected)
    }
    add_counters!(pages, expected, tp, fp, fn_);
}

/// One page's outcome: (tp, fp, fn) as a tally of one page.
pub fn outcome(set: &EvalSet, i: usize, d: &Decided) -> Tally {
    let p = &set.pages[i];
    let expected = p.kind.expects_duplicate();
    let mut t = Tally {
        pages: 1,
        expected: usize::from(expected),
        ..Tally::default()
    };
    let marked = d.doc.as_ref().is_some_and(|doc| doc.duplicate_of.is_some());
    let right_cluster = d
        .duplicate_of
        .is_some_and(|j| set.pages[j].cluster.is_some() && set.pages[j].cluster == p.cluster);
    match (expected, marked) {
        (true, true) if right_cluster => t.tp = 1,
        (true, true) => {
            t.fp = 1;
            t.fn_ = 1;
        }
        (true, false) => t.fn_ = 1,
        (false, true) => t.fp = 1,
        (false, false) => {}
    }
    t
}

/// Length buckets of a base, in SimHash tokens.
pub fn bucket(tokens: usize) -> (usize, &'static str) {
    match tokens {
        0 => (0, "no text"),
        1..=39 => (1, "< 40"),
        40..=149 => (2, "40-149"),
        150..=299 => (3, "150-299"),
        300..=599 => (4, "300-599"),
        _ => (5, ">= 600"),
    }
}

/// Tuned and held-aside tallies by a key.
type Split<K> = BTreeMap<K, [Tally; 2]>;

fn split<K: Ord>(set: &EvalSet, decided: &[Decided], key: impl Fn(&EvalPage) -> K) -> Split<K> {
    let mut m: Split<K> = BTreeMap::new();
    for (i, d) in decided.iter().enumerate() {
        let p = &set.pages[i];
        m.entry(key(p)).or_default()[usize::from(p.held_aside)].add(&outcome(set, i, d));
    }
    m
}

fn row(out: &mut String, name: &str, t: &[Tally; 2]) {
    let cell = |t: &Tally| {
        format!(
            "{:>5} {:>4} {:>4} {:>3} {:>4} {:>6.3} {:>6.3}",
            t.pages,
            t.expected,
            t.tp,
            t.fp,
            t.fn_,
            t.precision(),
            t.recall()
        )
    };
    let _ = writeln!(out, "| {name:<24} | {} | {} |", cell(&t[0]), cell(&t[1]));
}

fn table<K: Ord>(out: &mut String, title: &str, m: &Split<K>, name: impl Fn(&K) -> String) {
    let _ = writeln!(out, "\n### {title}\n");
    let _ = writeln!(
        out,
        "| {:<24} | {:>5} {:>4} {:>4} {:>3} {:>4} {:>6} {:>6} | {:>5} {:>4} {:>4} {:>3} {:>4} {:>6} {:>6} |",
        "tuned | held aside", "pages", "dups", "TP", "FP", "FN", "P", "R", "pages", "dups", "TP", "FP", "FN", "P", "R"
    );
    let mut total = [Tally::default(); 2];
    for (k, t) in m {
        row(out, &name(k), t);
        total[0].add(&t[0]);
        total[1].add(&t[1]);
    }
    row(out, "all", &total);
}

/// The totals: [tuned, held aside].
pub fn totals(set: &EvalSet, decided: &[Decided]) -> [Tally; 2] {
    let mut total = [Tally::default(); 2];
    for (i, d) in decided.iter().enumerate() {
        total[usize::from(set.pages[i].held_aside)].add(&outcome(set, i, d));
    }
    total
}

fn script_name(s: &Option<Script>) -> String {
    s.map_or("none", Script::name).to_string()
}

/// The report: per kind, script, length and source, the cells under the
/// precision floor, and the confusion cases by name.
pub fn report(set: &EvalSet, decided: &[Decided]) -> String {
    let mut out = String::new();
    let held = set.pages.iter().filter(|p| p.held_aside).count();
    let _ = writeln!(
        out,
        "{} pages ({} held aside), {} bases, seed {}",
        set.pages.len(),
        held,
        set.homes,
        set.seed
    );
    table(&mut out, "By kind", &split(set, decided, |p| p.kind), |k| {
        k.name().into()
    });
    table(
        &mut out,
        "By script",
        &split(set, decided, |p| p.script),
        script_name,
    );
    table(
        &mut out,
        "By length (base tokens)",
        &split(set, decided, |p| bucket(p.tokens)),
        |k| k.1.into(),
    );
    table(
        &mut out,
        "By source",
        &split(set, decided, |p| p.source),
        |k| k.name().into(),
    );
    let _ = writeln!(
        out,
        "\n### Pages stored without an article, by kind (tuned + held aside)\n"
    );
    for kind in Kind::ALL {
        let (n, of) = decided
            .iter()
            .zip(&set.pages)
            .filter(|(_, p)| p.kind == kind)
            .fold((0, 0), |(n, of), (d, _)| {
                (
                    n + usize::from(d.doc.as_ref().is_some_and(|doc| !doc.article)),
                    of + 1,
                )
            });
        let _ = writeln!(out, "- {}: {n} of {of}", kind.name());
    }
    let _ = writeln!(
        out,
        "\nHome pages stored without an article (tuned part; the held-aside ones are counted above, not named):"
    );
    for (d, p) in decided.iter().zip(&set.pages).filter(|(d, p)| {
        p.kind == Kind::Original && !p.held_aside && d.doc.as_ref().is_some_and(|doc| !doc.article)
    }) {
        let head: String = d.text.chars().take(80).collect();
        let _ = writeln!(out, "- {} ({} tokens): {head:?}", p.name, p.tokens);
    }
    let cells = split(set, decided, |p| (p.kind, p.script));
    let _ = writeln!(
        out,
        "\n### Cells (kind x script) with precision under 0.98 or recall under 0.95\n"
    );
    for ((k, s), t) in &cells {
        for (part, t) in ["tuned", "held aside"].iter().zip(t) {
            if t.precision() < 0.98 || t.recall() < 0.95 {
                let _ = writeln!(
                    out,
                    "- {} / {} ({part}): {} pages, TP {} FP {} FN {}, P {:.3} R {:.3}",
                    k.name(),
                    script_name(s),
                    t.pages,
                    t.tp,
                    t.fp,
                    t.fn_,
                    t.precision(),
                    t.recall()
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "\n### Pages that should be found: SimHash distance and true 4-shingle Jaccard to the home page's extracted text (tuned part)\n"
    );
    for kind in Kind::ALL.iter().filter(|k| k.expects_duplicate()) {
        let mut dist = [0usize; 12];
        let mut jac = [0usize; 10];
        for (i, d) in decided.iter().enumerate() {
            let p = &set.pages[i];
            if p.kind != *kind || p.held_aside {
                continue;
            }
            let Some(home) = p.cluster.and_then(|c| decided.get(c)) else {
                continue;
            };
            let fp = |d: &Decided| {
                d.doc
                    .as_ref()
                    .and_then(|doc| u64::from_str_radix(&doc.simhash, 16).ok())
            };
            if let (Some(a), Some(b)) = (fp(d), fp(home)) {
                dist[((a ^ b).count_ones() as usize).min(11)] += 1;
            }
            let j = jaccard(&shingles(&d.text), &shingles(&home.text));
            jac[((j * 10.0) as usize).min(9)] += 1;
        }
        let _ = writeln!(
            out,
            "- {}: distance 0..10,11+: {:?}; Jaccard by tenths: {:?}",
            kind.name(),
            dist,
            jac
        );
    }
    // The held-aside part is never looked at case by case: its confusions
    // are counted, not named, so that nobody tunes on them.
    let held_confusions = decided
        .iter()
        .enumerate()
        .filter(|(i, d)| set.pages[*i].held_aside && outcome(set, *i, d).is_wrong())
        .count();
    let _ = writeln!(
        out,
        "\n### Confusion cases (tuned part; {held_confusions} more held aside, not named)\n"
    );
    for (i, d) in decided.iter().enumerate() {
        let t = outcome(set, i, d);
        let p = &set.pages[i];
        if !t.is_wrong() || p.held_aside {
            continue;
        }
        let doc = d.doc.as_ref();
        let what = if t.fp > 0 {
            "FALSE DUPLICATE"
        } else {
            "MISSED"
        };
        let of = d
            .duplicate_of
            .map(|j| set.pages[j].name.as_str())
            .unwrap_or("-");
        // For a missed page: its distance to its home page.
        let home = p
            .cluster
            .and_then(|c| decided.get(c)?.doc.as_ref())
            .zip(doc)
            .and_then(|(h, d)| {
                let a = u64::from_str_radix(&h.simhash, 16).ok()?;
                let b = u64::from_str_radix(&d.simhash, 16).ok()?;
                Some((a ^ b).count_ones())
            });
        let _ = writeln!(
            out,
            "- {what}: {} ({} tokens, {}) -> {of} distance {:?} (to its home {:?}) simhash {}",
            p.name,
            p.tokens,
            script_name(&p.script),
            doc.and_then(|d| d.distance),
            home,
            doc.map_or("-", |d| d.simhash.as_str()),
        );
        if let Some(h) = p.cluster.and_then(|c| decided.get(c)) {
            let sig = |t: &str| contentseen::simhash::sketch(t).minhash.signature();
            let j = sig(&d.text)
                .zip(sig(&h.text))
                .map(|(a, b)| contentseen::minhash::jaccard(&a, &b));
            let _ = writeln!(
                out,
                "    home stored with an article: {:?}; this page: {:?}; MinHash estimate to the home: {j:?}",
                h.doc.as_ref().map(|d| d.article),
                d.doc.as_ref().map(|d| d.article)
            );
        }
        let head: String = d.text.chars().take(100).collect();
        let _ = writeln!(out, "    text: {head:?}");
    }
    out
}
