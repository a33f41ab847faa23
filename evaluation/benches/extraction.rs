//! Extraction quality and speed on every extraction set of `../shared/bench` (AEB, CWCED,
//! trafilatura's evaluation set, GNE's Chinese news pages), ours beside trafilatura (Python,
//! run on the same pages in the same run) and `dom_smoothie` (Rust, bodies of AEB and
//! CWCED), each set reported on its own, tuned part and held-aside part side by side.
//!
//! `cargo bench -p evaluation --bench extraction` prints, per set (and per language where a
//! set has several), every field the set's truth has (`evaluation::extraction::report`):
//! - body: AEB and CWCED by the AEB shingle metric (CWCED one token per CJK character);
//!   trafilatura and GNE by snippets, the share of `with` snippets found (GNE: the first and
//!   last sentences of the body) and of `without` snippets left out, and trafilatura's
//!   snippet F1;
//! - title, date (year, month and day as far as the truth gives them), author (the exact
//!   set of names; CWCED: a true name in ours), and on GNE the credits that are not the
//!   author (an author where none is labelled, the source or the editor given instead);
//! - milliseconds per page: on AEB the median of `RUNS` timed calls of `extract()` per
//!   page, ours and dom_smoothie's calls interleaved so that machine noise weighs on both
//!   alike; elsewhere one call; trafilatura's as its runner times its call;
//! - on every set, the authors we output that look like navigation or an organisation
//!   (`suspect_author`).
//!
//! Held aside ([`evaluation::split`]: the hash of `<set>:<id>`, fixed before any result was
//! seen) is never tuned on. trafilatura runs from a throwaway virtualenv
//! (`evaluation::extraction::trafilatura`; `TRAFILATURA_PYTHON`, `TRAFILATURA_OUTPUT`),
//! `EXTRACTION_BENCH_SKIP_TRAFILATURA=1` leaves it out. `EXTRACTOR_BENCH_VERBOSE=1` adds one
//! line per tuned page (held-aside pages are never printed one by one; `=snippets` adds the
//! snippets each one misses or keeps);
//! `EXTRACTION_BENCH_ONLY=<text>|<text>...` runs only the tuned pages whose id holds one.

use std::collections::HashMap;
use std::time::Instant;

use evaluation::extraction::report::{median, Report, Who};
use evaluation::extraction::sets::{Page, Set};
use evaluation::extraction::trafilatura::{self, Extracted};
use evaluation::extraction::Output;
use url::Url;

/// Timed calls per AEB page; the page's time is their median.
const RUNS: usize = 5;

fn main() {
    // `EXTRACTION_BENCH_ONLY=<text>|<text>...`: only the tuned pages whose id holds one, each
    // printed (for looking at one kind of miss; held-aside pages are never selected).
    let only = std::env::var("EXTRACTION_BENCH_ONLY").ok();
    let verbose = std::env::var_os("EXTRACTOR_BENCH_VERBOSE").is_some() || only.is_some();
    // `EXTRACTOR_BENCH_VERBOSE=snippets`: each tuned page's line also lists the `with`
    // snippets it misses and the `without` snippets it keeps.
    let snippets = std::env::var("EXTRACTOR_BENCH_VERBOSE").is_ok_and(|v| v == "snippets");
    let sets: Vec<(Set, Vec<Page>)> = Set::ALL
        .iter()
        .map(|&set| {
            let mut pages = set.pages().unwrap_or_else(|e| {
                panic!(
                    "{} set unreadable under {}: {e}",
                    set.name(),
                    evaluation::sources::bench_dir().display()
                )
            });
            if let Some(only) = &only {
                pages.retain(|p| !p.held_aside() && only.split('|').any(|o| p.key().contains(o)));
            }
            (set, pages)
        })
        .collect();
    if std::env::var_os("EXTRACTOR_BENCH_PROFILE").is_some() {
        // Only ours on AEB, many times over: for `perf record`.
        for _ in 0..20 {
            for p in &sets[0].1 {
                std::hint::black_box(extractor::extract(&p.html, &page_url(p)));
            }
        }
        return;
    }
    let traf: HashMap<String, Extracted> =
        if std::env::var_os("EXTRACTION_BENCH_SKIP_TRAFILATURA").is_some() {
            println!("trafilatura SKIPPED (EXTRACTION_BENCH_SKIP_TRAFILATURA is set)");
            HashMap::new()
        } else {
            let all: Vec<Page> = sets.iter().flat_map(|(_, p)| p.iter().cloned()).collect();
            trafilatura::extract_all(&all).unwrap_or_else(|e| panic!("trafilatura: {e}"))
        };

    let mut report = Report::default();
    let mut suspects = Vec::new();
    for (set, pages) in &sets {
        let timed = if *set == Set::Aeb && only.is_none() {
            Some(measure(pages))
        } else {
            None
        };
        for (i, p) in pages.iter().enumerate() {
            let url = page_url(p);
            let start = Instant::now();
            let ours = Output::of(extractor::extract(&p.html, &url));
            let ms = timed
                .as_ref()
                .map_or(start.elapsed().as_secs_f64() * 1e3, |t| t[0][i]);
            let verdict = report.add(Who::Ours, p, &ours, Some(ms));
            if let Some(a) = ours.author.as_deref().filter(|a| suspect_author(a)) {
                // Held-aside pages are counted, never named.
                suspects.push(if p.held_aside() {
                    None
                } else {
                    Some(format!("{}: {a:?}", p.key()))
                });
            }
            if matches!(set, Set::Aeb | Set::Cwced) {
                let text = smoothie_text(&p.html, &url);
                let ms = timed.as_ref().map(|t| t[1][i]);
                report.add(
                    Who::DomSmoothie,
                    p,
                    &Output {
                        text,
                        ..Output::default()
                    },
                    ms,
                );
            }
            let theirs = traf.get(&p.key());
            let their_verdict =
                theirs.map(|t| report.add(Who::Trafilatura, p, &t.output, Some(t.ms)));
            if verbose && !p.held_aside() {
                let mark = |v: Option<bool>| match v {
                    Some(true) => "ok",
                    Some(false) => "WRONG",
                    None => "-",
                };
                println!(
                    "page {} [{}] body {} | title {} {:?} (truth {:?}) | date {} {:?} (truth {:?}) | author {} {:?} (truth {:?})",
                    p.key(),
                    p.lang,
                    verdict.body,
                    mark(verdict.title),
                    ours.title,
                    p.truth.title,
                    mark(verdict.date),
                    ours.date,
                    p.truth.date,
                    mark(verdict.author),
                    ours.author,
                    p.truth.author,
                );
                if snippets {
                    print_missed_snippets(p, &ours.text);
                }
                if let (Some(t), Some(v)) = (theirs, their_verdict) {
                    println!(
                        "  trafilatura body {} | title {} {:?} | date {} {:?} | author {} {:?}",
                        v.body,
                        mark(v.title),
                        t.output.title,
                        mark(v.date),
                        t.output.date,
                        mark(v.author),
                        t.output.author
                    );
                }
            }
        }
    }
    for (set, _) in &sets {
        report.print_set(*set);
    }
    let aeb = [Who::Ours, Who::DomSmoothie, Who::Trafilatura].map(|w| {
        let mut ms = report.tally(Set::Aeb, w, false, None).ms;
        ms.extend(report.tally(Set::Aeb, w, true, None).ms);
        median(&ms)
    });
    println!(
        "AEB speed, median ms per page: ours {:.3}, dom_smoothie {:.3} ({:.1}x ours), trafilatura {:.3} ({:.1}x ours)",
        aeb[0],
        aeb[1],
        aeb[1] / aeb[0],
        aeb[2],
        aeb[2] / aeb[0]
    );
    println!(
        "Authors that look like navigation or an organisation, every set: {}",
        suspects.len()
    );
    for s in suspects.iter().flatten() {
        println!("  {s}");
    }
    let held = suspects.iter().filter(|s| s.is_none()).count();
    if held > 0 {
        println!("  ({held} on held-aside pages, not named)");
    }
}

/// The `with` snippets a tuned page's body misses and the `without` snippets it keeps, one
/// line each (`-` missed, `+` kept), cut to 100 characters.
fn print_missed_snippets(p: &Page, text: &str) {
    use evaluation::extraction::fields::collapse;
    use evaluation::extraction::sets::Body;
    let Body::Snippets { with, without } = &p.truth.body else {
        return;
    };
    let text = collapse(text);
    let cut = |s: &str| collapse(s).chars().take(100).collect::<String>();
    for s in with.iter().filter(|s| !text.contains(&collapse(s))) {
        println!("  - missed {:?}", cut(s));
    }
    for s in without.iter().filter(|s| text.contains(&collapse(s))) {
        println!("  + kept {:?}", cut(s));
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

/// An author output that is no person's name: navigation (`Sign In | Subscribe`), a label,
/// or an organisation (a news agency, a publication, a company). The bench's own check,
/// independent of the extractor's rules, so that the extractor cannot grade itself. (A wire
/// service credited as the author is a right answer where the truth says so: this count
/// flags, it does not score.)
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

fn page_url(p: &Page) -> Url {
    Url::parse(&p.url).unwrap_or_else(|_| Url::parse("http://example.com/").expect("static url"))
}

/// Ours and dom_smoothie's time on each AEB page: `[ours, dom_smoothie]`, each the median
/// of [`RUNS`] calls, their calls interleaved page by page and call by call (ours, theirs,
/// ours, ...), so that a machine slowing down or speeding up during the run weighs on both
/// alike.
fn measure(pages: &[Page]) -> [Vec<f64>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    for p in pages {
        let url = page_url(p);
        let mut times = [Vec::with_capacity(RUNS), Vec::with_capacity(RUNS)];
        // Warm-up.
        std::hint::black_box(extractor::extract(&p.html, &url));
        std::hint::black_box(smoothie_text(&p.html, &url));
        for _ in 0..RUNS {
            let start = Instant::now();
            std::hint::black_box(extractor::extract(std::hint::black_box(&p.html), &url));
            times[0].push(start.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            std::hint::black_box(smoothie_text(std::hint::black_box(&p.html), &url));
            times[1].push(start.elapsed().as_secs_f64() * 1e3);
        }
        for (o, t) in out.iter_mut().zip(times) {
            o.push(median(&t));
        }
    }
    out
}
