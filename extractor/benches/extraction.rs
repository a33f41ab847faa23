//! Extraction quality and speed on `shared/bench`, ours against `dom_smoothie`.
//!
//! `cargo bench -p extractor --bench extraction` prints:
//! - AEB (181 pages): F1, precision and recall of the body text (the AEB shingle metric), and
//!   milliseconds per page (median and mean over pages; each page's time is the median of
//!   `RUNS` timed calls of `extract()` alone, pages decompressed beforehand), for both, the
//!   two extractors' calls interleaved so that machine noise weighs on both alike;
//! - CWCED (35 Chinese pages): body F1 with one token per CJK character, the share of dated
//!   pages whose year-month-day we get right, and the share of pages with an author whose
//!   name we find (see `extractor::eval::author_matches`).

#[path = "../tests/support/sets.rs"]
mod sets;

use std::time::Instant;

use extractor::eval::{self, PageCounts, Tokenizer};
use url::Url;

/// Timed calls per page; the page's time is their median.
const RUNS: usize = 5;

fn main() {
    let Some(aeb) = sets::aeb() else {
        println!(
            "shared/bench/aeb not found at {}: nothing to measure",
            sets::bench_dir().display()
        );
        return;
    };
    let verbose = std::env::var_os("EXTRACTOR_BENCH_VERBOSE").is_some();

    let ours_fn = |html: &str, url: &Url| extractor::extract(html, url).text;
    let theirs_fn = |html: &str, url: &Url| {
        dom_smoothie::Readability::new(html, Some(url.as_str()), None)
            .ok()
            .and_then(|mut r| r.parse().ok())
            .map(|a| a.text_content.to_string())
            .unwrap_or_default()
    };
    if std::env::var_os("EXTRACTOR_BENCH_PROFILE").is_some() {
        // Only ours, many times over: for `perf record`.
        for _ in 0..20 {
            for p in &aeb {
                let url = page_url(p);
                std::hint::black_box(ours_fn(&p.html, &url));
            }
        }
        return;
    }
    let (ours, theirs) = measure(&aeb, ours_fn, theirs_fn);
    if verbose {
        for (i, p) in aeb.iter().enumerate() {
            let (pr, rc) = (ours.counts[i].precision(), ours.counts[i].recall());
            println!(
                "page {} P={:.3} R={:.3} ms={:.3} dom_smoothie_ms={:.3} bytes={} {}",
                p.id,
                pr.unwrap_or(-1.0),
                rc.unwrap_or(-1.0),
                ours.ms[i],
                theirs.ms[i],
                p.html.len(),
                p.url
            );
        }
    }
    let (s, d) = (eval::score(&ours.counts), eval::score(&theirs.counts));
    println!(
        "AEB {} pages, body text, shingle metric (higher is better):",
        aeb.len()
    );
    println!("  extractor    F1 {:.3}  precision {:.3}  recall {:.3}  median {:.3} ms/page  mean {:.3} ms/page",
        s.f1, s.precision, s.recall, median(&ours.ms), mean(&ours.ms));
    println!("  dom_smoothie F1 {:.3}  precision {:.3}  recall {:.3}  median {:.3} ms/page  mean {:.3} ms/page",
        d.f1, d.precision, d.recall, median(&theirs.ms), mean(&theirs.ms));
    println!(
        "  speed: extractor is {:.2}x faster than dom_smoothie (median), {:.2}x (mean)",
        median(&theirs.ms) / median(&ours.ms),
        mean(&theirs.ms) / mean(&ours.ms)
    );

    let Some(cwced) = sets::cwced() else {
        println!("shared/bench/cwced not found: CWCED skipped");
        return;
    };
    let mut counts = Vec::new();
    let mut smoothie = Vec::new();
    let (mut dates, mut dated, mut authors, mut authored) = (0, 0, 0, 0);
    for p in &cwced {
        let url = Url::parse(&format!("http://cwced.example/{}.html", p.id)).expect("static url");
        let a = extractor::extract(&p.html, &url);
        counts.push(eval::compare(&p.body, &a.text, Tokenizer::Cjk));
        if let Some(dir) = std::env::var_os("EXTRACTOR_BENCH_DUMP") {
            // Our body text per page, to compare with `cleaned/` by eye.
            let _ = std::fs::write(
                std::path::Path::new(&dir).join(format!("{}.txt", p.id)),
                &a.text,
            );
        }
        let ds = dom_smoothie::Readability::new(p.html.as_str(), Some(url.as_str()), None)
            .ok()
            .and_then(|mut r| r.parse().ok())
            .map(|a| a.text_content.to_string())
            .unwrap_or_default();
        smoothie.push(eval::compare(&p.body, &ds, Tokenizer::Cjk));
        if let Some(ok) = eval::date_matches(&p.date, a.published.as_deref()) {
            dated += 1;
            dates += ok as usize;
        }
        if let Some(ok) = eval::author_matches(&p.author, a.author.as_deref()) {
            authored += 1;
            authors += ok as usize;
        }
        if verbose {
            let c = counts.last().copied().unwrap_or_default();
            println!(
                "cwced {} P={:.3} R={:.3} date {:?} vs {:?}  author {:?} vs {:?}  title {:?}",
                p.id,
                c.precision().unwrap_or(-1.0),
                c.recall().unwrap_or(-1.0),
                a.published,
                p.date,
                a.author,
                p.author,
                a.title
            );
        }
    }
    let c = eval::score(&counts);
    let cd = eval::score(&smoothie);
    println!("CWCED {} pages (one token per CJK character):", cwced.len());
    println!(
        "  extractor    body F1 {:.3}  precision {:.3}  recall {:.3}",
        c.f1, c.precision, c.recall
    );
    println!(
        "  dom_smoothie body F1 {:.3}  precision {:.3}  recall {:.3}",
        cd.f1, cd.precision, cd.recall
    );
    println!(
        "  date (year-month-day as far as the truth gives it) {dates}/{dated} = {:.1}%",
        pct(dates, dated)
    );
    println!(
        "  author (an expected name in ours, or ours in it)  {authors}/{authored} = {:.1}%",
        pct(authors, authored)
    );
}

struct Measured {
    counts: Vec<PageCounts>,
    ms: Vec<f64>,
}

/// An extractor under test: page HTML and URL in, body text out.
type Extract<'a> = dyn Fn(&str, &Url) -> String + 'a;

fn page_url(p: &sets::AebPage) -> Url {
    Url::parse(&p.url).unwrap_or_else(|_| Url::parse("http://example.com/").expect("static url"))
}

/// Both extractors over the pages, their timed calls interleaved page by
/// page and call by call (ours, theirs, ours, ...), so that a machine
/// slowing down or speeding up during the run weighs on both alike.
fn measure(
    pages: &[sets::AebPage],
    ours: impl Fn(&str, &Url) -> String,
    theirs: impl Fn(&str, &Url) -> String,
) -> (Measured, Measured) {
    let mut out = [
        Measured {
            counts: Vec::new(),
            ms: Vec::new(),
        },
        Measured {
            counts: Vec::new(),
            ms: Vec::new(),
        },
    ];
    let fs: [&Extract<'_>; 2] = [&ours, &theirs];
    for p in pages {
        let url = page_url(p);
        let mut times = [Vec::with_capacity(RUNS), Vec::with_capacity(RUNS)];
        for (m, f) in out.iter_mut().zip(fs) {
            let text = f(&p.html, &url); // warm-up, and the text we score
            m.counts
                .push(eval::compare(&p.truth, &text, Tokenizer::Words));
        }
        for _ in 0..RUNS {
            for (t, f) in times.iter_mut().zip(fs) {
                let start = Instant::now();
                std::hint::black_box(f(std::hint::black_box(&p.html), &url));
                t.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        for (m, mut t) in out.iter_mut().zip(times) {
            t.sort_by(f64::total_cmp);
            m.ms.push(t[RUNS / 2]);
        }
    }
    let [a, b] = out;
    (a, b)
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}
