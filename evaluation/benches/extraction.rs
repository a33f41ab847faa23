//! Extraction quality and speed on every extraction set of `../shared/bench`, ours against
//! `dom_smoothie`, each set reported on its own, tuned part and held-aside part side by side.
//!
//! `cargo bench -p evaluation --bench extraction` prints:
//! - AEB (181 pages): F1, precision and recall of the body text (the AEB shingle metric) for
//!   the tuned pages and the held-aside pages ([`evaluation::split`]: the hash of the page id,
//!   fixed before any result was seen; never tune on that column), and milliseconds per page
//!   over all pages (median and mean; each page's time is the median of `RUNS` timed calls of
//!   `extract()` alone, pages decompressed beforehand), for both extractors, their calls
//!   interleaved so that machine noise weighs on both alike;
//! - CWCED (35 Chinese pages): body F1 with one token per CJK character, the share of dated
//!   pages whose year-month-day we get right, and the share of pages with an author whose
//!   name we find (see `evaluation::extraction::author_matches`), tuned | held-aside;
//! - on every set, the authors we output that look like navigation or an organisation
//!   (`suspect_author`): there should be none.
//!
//! `EXTRACTOR_BENCH_VERBOSE=1` adds one line per page (with `held` on held-aside pages);
//! `EXTRACTOR_BENCH_DUMP=DIR` writes our CWCED body texts there.

use std::time::Instant;

use evaluation::extraction::{self as eval, sets, PageCounts, Tokenizer};
use evaluation::sources::Source;
use evaluation::split::{held_aside_in, COLUMNS};
use url::Url;

/// Timed calls per page; the page's time is their median.
const RUNS: usize = 5;

fn main() {
    let Some(aeb) = sets::aeb() else {
        panic!(
            "shared/bench/aeb not found at {}: nothing to measure",
            sets::bench_dir().display()
        );
    };
    let verbose = std::env::var_os("EXTRACTOR_BENCH_VERBOSE").is_some();

    let ours_fn = |html: &str, url: &Url| extractor::extract(html, url).text;
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
    let (ours, theirs) = measure(&aeb, ours_fn, smoothie_text);
    let aeb_held: Vec<bool> = aeb
        .iter()
        .map(|p| held_aside_in(Source::Aeb, &p.id))
        .collect();
    let mut suspects = Vec::new();
    for (i, p) in aeb.iter().enumerate() {
        let url = page_url(p);
        let author = extractor::extract(&p.html, &url).author;
        if let Some(a) = author.as_deref().filter(|a| suspect_author(a)) {
            suspects.push(format!("AEB {}: {a:?}", p.id));
        }
        if verbose {
            let (pr, rc) = (ours.counts[i].precision(), ours.counts[i].recall());
            println!(
                "page {}{} P={:.3} R={:.3} ms={:.3} dom_smoothie_ms={:.3} bytes={} author={:?} {}",
                p.id,
                if aeb_held[i] { " held" } else { "" },
                pr.unwrap_or(-1.0),
                rc.unwrap_or(-1.0),
                ours.ms[i],
                theirs.ms[i],
                p.html.len(),
                author,
                p.url
            );
        }
    }
    println!(
        "AEB {} pages ({} tuned | {} held aside), body text, shingle metric (higher is better):",
        aeb.len(),
        aeb_held.iter().filter(|h| !**h).count(),
        aeb_held.iter().filter(|h| **h).count()
    );
    println!("  {:<13} {:>24} | {:>24}", "", COLUMNS[0], COLUMNS[1]);
    for (name, m) in [("extractor", &ours), ("dom_smoothie", &theirs)] {
        let [t, h] = by_column(&m.counts, &aeb_held).map(|c| eval::score(&c));
        println!(
            "  {name:<13} F1 {:.3} P {:.3} R {:.3} | F1 {:.3} P {:.3} R {:.3}   all pages: median {:.3} ms/page, mean {:.3} ms/page",
            t.f1, t.precision, t.recall, h.f1, h.precision, h.recall, median(&m.ms), mean(&m.ms)
        );
    }
    println!(
        "  speed: extractor is {:.2}x faster than dom_smoothie (median), {:.2}x (mean)",
        median(&theirs.ms) / median(&ours.ms),
        mean(&theirs.ms) / mean(&ours.ms)
    );

    let Some(cwced) = sets::cwced() else {
        panic!("shared/bench/cwced not found: CWCED cannot be measured");
    };
    // Per column: body counts (ours, dom_smoothie), dates right, dated, authors right, authored.
    #[derive(Default)]
    struct Tally {
        ours: Vec<PageCounts>,
        smoothie: Vec<PageCounts>,
        dates: usize,
        dated: usize,
        authors: usize,
        authored: usize,
        pages: usize,
    }
    let mut tallies = [Tally::default(), Tally::default()];
    for p in &cwced {
        let held = held_aside_in(Source::Cwced, &p.id);
        let tally = &mut tallies[usize::from(held)];
        tally.pages += 1;
        let url = Url::parse(&format!("http://cwced.example/{}.html", p.id)).expect("static url");
        let a = extractor::extract(&p.html, &url);
        let counts = eval::compare(&p.body, &a.text, Tokenizer::Cjk);
        tally.ours.push(counts);
        if let Some(dir) = std::env::var_os("EXTRACTOR_BENCH_DUMP") {
            // Our body text per page, to compare with `cleaned/` by eye.
            let _ = std::fs::write(
                std::path::Path::new(&dir).join(format!("{}.txt", p.id)),
                &a.text,
            );
        }
        tally.smoothie.push(eval::compare(
            &p.body,
            &smoothie_text(&p.html, &url),
            Tokenizer::Cjk,
        ));
        if let Some(ok) = eval::date_matches(&p.date, a.published.as_deref()) {
            tally.dated += 1;
            tally.dates += ok as usize;
        }
        if let Some(ok) = eval::author_matches(&p.author, a.author.as_deref()) {
            tally.authored += 1;
            tally.authors += ok as usize;
        }
        if let Some(author) = a.author.as_deref().filter(|a| suspect_author(a)) {
            suspects.push(format!("CWCED {}: {author:?}", p.id));
        }
        if verbose {
            println!(
                "cwced {}{} P={:.3} R={:.3} date {:?} vs {:?}  author {:?} vs {:?}  title {:?}",
                p.id,
                if held { " held" } else { "" },
                counts.precision().unwrap_or(-1.0),
                counts.recall().unwrap_or(-1.0),
                a.published,
                p.date,
                a.author,
                p.author,
                a.title
            );
        }
    }
    println!(
        "CWCED {} pages ({} tuned | {} held aside), one token per CJK character:",
        cwced.len(),
        tallies[0].pages,
        tallies[1].pages
    );
    println!("  {:<34} {:>22} | {:>22}", "", COLUMNS[0], COLUMNS[1]);
    let [t, h] = &tallies;
    let body = |c: &[PageCounts]| {
        let s = eval::score(c);
        format!("F1 {:.3} P {:.3} R {:.3}", s.f1, s.precision, s.recall)
    };
    println!(
        "  {:<34} {:>22} | {:>22}",
        "extractor body",
        body(&t.ours),
        body(&h.ours)
    );
    println!(
        "  {:<34} {:>22} | {:>22}",
        "dom_smoothie body",
        body(&t.smoothie),
        body(&h.smoothie)
    );
    let share = |right: usize, total: usize| format!("{right}/{total} = {:.1}%", pct(right, total));
    println!(
        "  {:<34} {:>22} | {:>22}",
        "date (y-m-d as far as the truth)",
        share(t.dates, t.dated),
        share(h.dates, h.dated)
    );
    println!(
        "  {:<34} {:>22} | {:>22}",
        "author (a true name in ours)",
        share(t.authors, t.authored),
        share(h.authors, h.authored)
    );
    println!(
        "Authors that look like navigation or an organisation, every set: {}",
        suspects.len()
    );
    for s in &suspects {
        println!("  {s}");
    }
}

/// `dom_smoothie`'s body text, as its README calls it.
fn smoothie_text(html: &str, url: &Url) -> String {
    dom_smoothie::Readability::new(html, Some(url.as_str()), None)
        .ok()
        .and_then(|mut r| r.parse().ok())
        .map(|a| a.text_content.to_string())
        .unwrap_or_default()
}

/// The counts of the tuned pages and of the held-aside pages.
fn by_column(counts: &[PageCounts], held: &[bool]) -> [Vec<PageCounts>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for (c, h) in counts.iter().zip(held) {
        out[usize::from(*h)].push(*c);
    }
    out
}

/// An author output that is no person's name: navigation (`Sign In | Subscribe`), a label,
/// or an organisation (a news agency, a publication, a company). The bench's own check,
/// independent of the extractor's rules, so that the extractor cannot grade itself.
fn suspect_author(author: &str) -> bool {
    const NAVIGATION: &[&str] = &[
        "sign in",
        "sign up",
        "log in",
        "login",
        "subscribe",
        "menu",
        "home",
        "search",
        "newsletter",
        "share",
        "comments",
        "follow",
        "|",
        "»",
        "首页",
        "登录",
        "注册",
        "导航",
        "订阅",
        "返回",
        "访问",
        "统计",
        "留言",
        "评论",
    ];
    const ORGANISATIONS: &[&str] = &[
        "news",
        "press",
        "agency",
        "reuters",
        "associated press",
        "afp",
        "staff",
        "media",
        "inc.",
        "ltd",
        "corporation",
        "university",
        "newspaper",
        "magazine",
        "editorial",
        "新华社",
        "新华网",
        "日报",
        "晚报",
        "有限公司",
        "集团",
        "中心",
        "委员会",
        "网站",
        "记者站",
        "编辑部",
        "出版社",
        "电视台",
        "通讯社",
    ];
    let lower = author.to_lowercase();
    NAVIGATION.iter().chain(ORGANISATIONS).any(|w| {
        if w.is_ascii() && w.chars().all(char::is_alphabetic) {
            lower
                .split(|c: char| !c.is_alphanumeric())
                .any(|word| word == *w)
        } else {
            lower.contains(w)
        }
    }) || author.split_whitespace().count() > 8
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
