//! The extraction bench's tallies: per set, extractor, column (tuned | held aside) and
//! language, each field scored by the set's truth, and the tables printed from them.

use std::collections::BTreeMap;

use super::fields::{authors_match, names, title_matches, SnippetCounts};
use super::sets::{Body, Credits, Page, Set, Truth};
use super::{author_matches, compare, date_matches, score, Output, PageCounts};

/// Right answers among the pages whose truth has the field.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hits {
    pub right: usize,
    pub total: usize,
}

impl Hits {
    fn add(&mut self, right: Option<bool>) {
        if let Some(ok) = right {
            self.total += 1;
            self.right += usize::from(ok);
        }
    }

    pub fn share(&self) -> f64 {
        self.right as f64 / self.total.max(1) as f64
    }

    /// `95.1% 117/123`, or `-` with nothing to score.
    pub fn cell(&self) -> String {
        if self.total == 0 {
            "-".into()
        } else {
            format!("{:.1}% {}/{}", 100.0 * self.share(), self.right, self.total)
        }
    }
}

/// GNE's credits: an author where the page has none, the source or the editor given as the
/// author.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CreditErrors {
    /// Pages labelled with no author.
    pub unauthored: usize,
    /// Of those, pages where an author was given.
    pub invented: usize,
    /// Pages where the author given is the credited source (and not also the writer).
    pub source: usize,
    /// Pages that name a writer where the author given is the editor.
    pub editor: usize,
}

/// One cell of the report: the pages of a set, extractor, column and language.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub pages: usize,
    /// Shingle counts of whole-text bodies (AEB, CWCED).
    pub shingles: Vec<PageCounts>,
    /// Snippet counts of snippet bodies (trafilatura, GNE).
    pub snippets: SnippetCounts,
    pub title: Hits,
    pub date: Hits,
    pub author: Hits,
    pub credits: CreditErrors,
    /// Milliseconds per page, when timed.
    pub ms: Vec<f64>,
}

/// How one page fared: each field right, wrong or not scored.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// `F1 0.97` or `with 2/2 without 0/3`.
    pub body: String,
    pub title: Option<bool>,
    pub date: Option<bool>,
    pub author: Option<bool>,
}

impl Tally {
    /// Scores `out` against `truth` and counts it.
    pub fn add(&mut self, set: Set, truth: &Truth, out: &Output) -> Verdict {
        self.pages += 1;
        let body = match &truth.body {
            Body::Text { text, tokenizer } => {
                let c = compare(text, &out.text, *tokenizer);
                self.shingles.push(c);
                format!(
                    "P {:.3} R {:.3}",
                    c.precision().unwrap_or(-1.0),
                    c.recall().unwrap_or(-1.0)
                )
            }
            Body::Snippets { with, without } => {
                let c = SnippetCounts::of(&out.text, with, without);
                self.snippets.add(c);
                format!(
                    "with {}/{} without {}/{}",
                    c.with_found, c.with, c.without_present, c.without
                )
            }
        };
        let title = truth
            .title
            .as_deref()
            .map(|t| title_matches(t, out.title.as_deref()));
        let date = truth
            .date
            .as_deref()
            .and_then(|d| date_matches(d, out.date.as_deref()));
        let author = truth.author.as_deref().map(|a| match set {
            // CWCED's names are matched as its README says (a true name in ours).
            Set::Cwced => author_matches(a, out.author.as_deref()).unwrap_or(false),
            _ => authors_match(a, out.author.as_deref()),
        });
        self.title.add(title);
        self.date.add(date);
        self.author.add(author);
        if let Some(credits) = &truth.credits {
            self.count_credits(truth.author.as_deref(), credits, out.author.as_deref());
        }
        Verdict {
            body,
            title,
            date,
            author,
        }
    }

    fn count_credits(&mut self, author: Option<&str>, credits: &Credits, ours: Option<&str>) {
        let same = |a: Option<&str>, b: &str| {
            a.is_some_and(|a| !names(a).is_empty() && names(a) == names(b))
        };
        if author.is_none() {
            self.credits.unauthored += 1;
            self.credits.invented += usize::from(ours.is_some());
        }
        if let Some(source) = &credits.source {
            let is_also_writer = author.is_some_and(|a| names(a) == names(source));
            self.credits.source += usize::from(same(ours, source) && !is_also_writer);
        }
        if let (Some(editor), Some(writer)) = (&credits.editor, author) {
            if !credits.author_from_editor && names(writer) != names(editor) {
                self.credits.editor += usize::from(same(ours, editor));
            }
        }
    }

    /// Adds another tally's counts (a language's into the set's whole).
    pub fn merge(&mut self, other: &Tally) {
        self.pages += other.pages;
        self.shingles.extend_from_slice(&other.shingles);
        self.snippets.add(other.snippets);
        for (a, b) in [
            (&mut self.title, other.title),
            (&mut self.date, other.date),
            (&mut self.author, other.author),
        ] {
            a.right += b.right;
            a.total += b.total;
        }
        self.credits.unauthored += other.credits.unauthored;
        self.credits.invented += other.credits.invented;
        self.credits.source += other.credits.source;
        self.credits.editor += other.credits.editor;
        self.ms.extend_from_slice(&other.ms);
    }

    /// `F1 0.975 P 0.980 R 0.970`, or `-` without whole-text bodies.
    pub fn body_f1(&self) -> String {
        if self.shingles.is_empty() {
            return "-".into();
        }
        let s = score(&self.shingles);
        format!("F1 {:.3} P {:.3} R {:.3}", s.f1, s.precision, s.recall)
    }
}

/// Reads one field's hits from a tally.
type FieldOf = fn(&Tally) -> Hits;

/// The extractors the report compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Who {
    Ours,
    Trafilatura,
    DomSmoothie,
}

impl Who {
    pub fn name(self) -> &'static str {
        match self {
            Who::Ours => "ours",
            Who::Trafilatura => "trafilatura",
            Who::DomSmoothie => "dom_smoothie",
        }
    }
}

/// Every tally, by set, extractor, held aside and language.
#[derive(Debug, Default)]
pub struct Report {
    tallies: BTreeMap<(Set, Who, bool, String), Tally>,
}

impl Report {
    /// Scores and counts one extractor's output on a page; `ms` is the time of its call.
    pub fn add(&mut self, who: Who, page: &Page, out: &Output, ms: Option<f64>) -> Verdict {
        let key = (page.set, who, page.held_aside(), page.lang.clone());
        let tally = self.tallies.entry(key).or_default();
        tally.ms.extend(ms);
        tally.add(page.set, &page.truth, out)
    }

    /// The tally of a set, extractor and column over every language (`lang: None`) or one.
    pub fn tally(&self, set: Set, who: Who, held: bool, lang: Option<&str>) -> Tally {
        let mut out = Tally::default();
        for ((s, w, h, l), t) in &self.tallies {
            if *s == set && *w == who && *h == held && lang.is_none_or(|x| x == l) {
                out.merge(t);
            }
        }
        out
    }

    /// The languages of a set, most pages first.
    pub fn languages(&self, set: Set) -> Vec<String> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for ((s, w, _, l), t) in &self.tallies {
            if *s == set && *w == Who::Ours {
                *count.entry(l).or_default() += t.pages;
            }
        }
        let mut langs: Vec<(&str, usize)> = count.into_iter().collect();
        langs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        langs.into_iter().map(|(l, _)| l.to_string()).collect()
    }

    /// Whether any page of the set was scored for `who`.
    pub fn has(&self, set: Set, who: Who) -> bool {
        self.tallies
            .keys()
            .any(|(s, w, _, _)| *s == set && *w == who)
    }

    /// The set's table: every field, tuned | held aside, each extractor that ran on it.
    pub fn print_set(&self, set: Set) {
        let whos: Vec<Who> = [Who::Ours, Who::Trafilatura, Who::DomSmoothie]
            .into_iter()
            .filter(|w| self.has(set, *w))
            .collect();
        let ours = [false, true].map(|h| self.tally(set, Who::Ours, h, None));
        println!(
            "{}: {} pages ({} tuned | {} held aside)",
            set.name(),
            ours[0].pages + ours[1].pages,
            ours[0].pages,
            ours[1].pages
        );
        println!(
            "  {:<28} {:<14} {:>28} | {:<28}",
            "field", "extractor", "tuned", "held aside"
        );
        let row = |field: &str, who: Who, cell: &dyn Fn(&Tally) -> String| {
            let [t, h] = [false, true].map(|held| self.tally(set, who, held, None));
            if t.pages + h.pages == 0 {
                return;
            }
            println!(
                "  {field:<28} {:<14} {:>28} | {:<28}",
                who.name(),
                cell(&t),
                cell(&h)
            );
        };
        for &who in &whos {
            if !ours[0].shingles.is_empty() || !ours[1].shingles.is_empty() {
                row("body (shingles)", who, &|t| t.body_f1());
            }
        }
        let snippets = ours[0].snippets.with + ours[1].snippets.with > 0;
        for &who in whos.iter().filter(|w| **w != Who::DomSmoothie) {
            if snippets {
                row("body: `with` found", who, &|t| {
                    format!(
                        "{:.3} {}/{}",
                        t.snippets.with_share(),
                        t.snippets.with_found,
                        t.snippets.with
                    )
                });
                row("body: `without` left out", who, &|t| {
                    format!(
                        "{:.3} {}/{}",
                        t.snippets.without_share(),
                        t.snippets.without - t.snippets.without_present,
                        t.snippets.without
                    )
                });
                row("body: snippet F1", who, &|t| {
                    format!("{:.3}", t.snippets.f1())
                });
            }
        }
        let fields: [(&str, FieldOf); 3] = [
            ("title", |t| t.title),
            ("date (y-m-d)", |t| t.date),
            ("author", |t| t.author),
        ];
        for (name, hits) in fields {
            if ours.iter().all(|t| hits(t).total == 0) {
                continue;
            }
            for &who in whos.iter().filter(|w| **w != Who::DomSmoothie) {
                row(name, who, &|t| hits(t).cell());
            }
        }
        if ours.iter().any(|t| t.credits != CreditErrors::default()) {
            for &who in whos.iter().filter(|w| **w != Who::DomSmoothie) {
                row("author where none labelled", who, &|t| {
                    format!("{}/{}", t.credits.invented, t.credits.unauthored)
                });
                row("author = the source", who, &|t| {
                    t.credits.source.to_string()
                });
                row("author = editor, writer named", who, &|t| {
                    t.credits.editor.to_string()
                });
            }
        }
        for &who in &whos {
            row("ms per page: median, mean", who, &|t| {
                if t.ms.is_empty() {
                    "-".into()
                } else {
                    format!("{:.3}, {:.3}", median(&t.ms), mean(&t.ms))
                }
            });
        }
        let langs = self.languages(set);
        if langs.len() > 1 {
            println!("  per language (pages): body, title, date, author");
            for lang in &langs {
                for held in [false, true] {
                    for &who in whos.iter().filter(|w| **w != Who::DomSmoothie) {
                        let t = self.tally(set, who, held, Some(lang));
                        if t.pages == 0 {
                            continue;
                        }
                        let body = if t.shingles.is_empty() {
                            format!(
                                "with {:.3} without {:.3}",
                                t.snippets.with_share(),
                                t.snippets.without_share()
                            )
                        } else {
                            t.body_f1()
                        };
                        println!(
                            "    {lang:<6} {:<10} {:<11} ({:>3}) {body}  title {}  date {}  author {}",
                            if held { "held aside" } else { "tuned" },
                            who.name(),
                            t.pages,
                            t.title.cell(),
                            t.date.cell(),
                            t.author.cell()
                        );
                    }
                }
            }
        }
    }
}

pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_tell_the_source_and_the_editor_from_the_writer() {
        let credits = Credits {
            editor: Some("姚昊".into()),
            source: Some("长江网".into()),
            account: None,
            author_from_editor: false,
        };
        let truth = Truth {
            author: Some("陈智".into()),
            credits: Some(credits),
            ..Truth::default()
        };
        let mut t = Tally::default();
        for ours in ["陈智", "姚昊", "长江网"] {
            let out = Output {
                author: Some(ours.into()),
                ..Output::default()
            };
            t.add(Set::Gne, &truth, &out);
        }
        assert_eq!(t.author, Hits { right: 1, total: 3 });
        assert_eq!(
            t.credits,
            CreditErrors {
                unauthored: 0,
                invented: 0,
                source: 1,
                editor: 1
            }
        );
    }
}
