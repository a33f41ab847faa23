//! Quality floors on the public sets of `shared/bench` (see `evaluation/benches/extraction.rs` for the
//! figures themselves). The floors sit a little under the level reached, so a change that
//! makes extraction worse fails here. No timing is asserted. A missing set fails, naming
//! where it should be.

use evaluation::extraction::sets::{self, Body, Page, Set};
use evaluation::extraction::{self as eval, Tokenizer};
use url::Url;

/// AEB body F1 reached: 0.973.
const AEB_F1_FLOOR: f64 = 0.968;
/// CWCED body F1 reached: 0.957.
const CWCED_F1_FLOOR: f64 = 0.945;
/// CWCED share of dated pages with the right day (or year and month, when that is all the
/// truth gives) reached: 29/31 = 0.935.
const CWCED_DATE_FLOOR: f64 = 0.90;
/// CWCED share of pages with an author where we find one of the names reached: 23/27 = 0.852.
const CWCED_AUTHOR_FLOOR: f64 = 0.81;

/// A set's pages; a failure, naming where the set should be, when it is
/// missing (a floor over no pages checks nothing).
fn required(set: Set) -> Vec<Page> {
    set.pages().unwrap_or_else(|e| {
        panic!(
            "{} has no readable {} set ({e}): its floors cannot be checked",
            sets::bench_dir().display(),
            set.name()
        )
    })
}

/// The page's whole-text body truth.
fn body(p: &Page) -> &str {
    match &p.truth.body {
        Body::Text { text, .. } => text,
        Body::Snippets { .. } => panic!("{}: no whole-text body", p.key()),
    }
}

#[test]
fn aeb_body_f1_floor() {
    let pages = required(Set::Aeb);
    let counts: Vec<_> = pages
        .iter()
        .map(|p| {
            let url =
                Url::parse(&p.url).unwrap_or_else(|_| Url::parse("http://example.com/").unwrap());
            eval::compare(
                body(p),
                &extractor::extract(&p.html, &url).text,
                Tokenizer::Words,
            )
        })
        .collect();
    let s = eval::score(&counts);
    println!("AEB F1 {:.3} P {:.3} R {:.3}", s.f1, s.precision, s.recall);
    assert!(
        s.f1 >= AEB_F1_FLOOR,
        "AEB F1 {:.3} fell below {AEB_F1_FLOOR}",
        s.f1
    );
}

#[test]
fn cwced_body_date_author_floors() {
    let pages = required(Set::Cwced);
    let mut counts = Vec::new();
    let (mut dates, mut dated, mut authors, mut authored) = (0, 0, 0, 0);
    for p in &pages {
        let url = Url::parse(&format!("http://cwced.example/{}.html", p.id)).unwrap();
        let a = extractor::extract(&p.html, &url);
        counts.push(eval::compare(body(p), &a.text, Tokenizer::Cjk));
        let truth = |t: &Option<String>| t.clone().unwrap_or_else(|| "UNKNOWN".into());
        if let Some(ok) = eval::date_matches(&truth(&p.truth.date), a.published.as_deref()) {
            dated += 1;
            dates += ok as usize;
        }
        if let Some(ok) = eval::author_matches(&truth(&p.truth.author), a.author.as_deref()) {
            authored += 1;
            authors += ok as usize;
        }
    }
    let s = eval::score(&counts);
    let date = dates as f64 / dated.max(1) as f64;
    let author = authors as f64 / authored.max(1) as f64;
    println!(
        "CWCED F1 {:.3} date {dates}/{dated} author {authors}/{authored}",
        s.f1
    );
    assert!(
        s.f1 >= CWCED_F1_FLOOR,
        "CWCED F1 {:.3} fell below {CWCED_F1_FLOOR}",
        s.f1
    );
    assert!(
        date >= CWCED_DATE_FLOOR,
        "CWCED date {date:.3} fell below {CWCED_DATE_FLOOR}"
    );
    assert!(
        author >= CWCED_AUTHOR_FLOOR,
        "CWCED author {author:.3} fell below {CWCED_AUTHOR_FLOOR}"
    );
}
