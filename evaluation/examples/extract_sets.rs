//! Runs `extract()` over every page of the AEB and CWCED sets (`shared/bench`), for profiling
//! (`valgrind --tool=callgrind`) and for checking that a change leaves the output identical.
//!
//! `cargo run --release -p evaluation --example extract_sets -- [dump FILE] [aeb-only] [times N]`
//! - `dump FILE`: writes each page's `Article` as one JSON line to FILE;
//! - `aeb-only`: skips CWCED (the profile of the benchmark's timed set);
//! - `only PREFIX`: of AEB, only the pages whose id starts with PREFIX (one page's profile);
//! - `times N`: runs the whole set N times after one warm-up run (the dump is of the warm-up),
//!   and prints the mean wall time per page of those runs;
//! - `smoothie`: the timed runs are of `dom_smoothie` instead (for a CPU-time ratio with
//!   `perf stat -e task-clock`, less disturbed by a busy machine than wall time).
//!
//! The timed runs are in [`measured`]: `--toggle-collect='extract_sets::measured'` counts
//! them alone (not the loading, nor the one-time set-up of lazily built tables).

use std::io::Write;

use evaluation::extraction::sets;
use url::Url;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg_after = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let dump = arg_after("dump");
    let times: usize = arg_after("times").and_then(|t| t.parse().ok()).unwrap_or(1);
    let aeb_only = args.iter().any(|a| a == "aeb-only");
    let only = arg_after("only");
    let smoothie = args.iter().any(|a| a == "smoothie");

    let mut pages: Vec<(String, Url)> = Vec::new();
    for p in sets::aeb().unwrap_or_default() {
        if only
            .as_ref()
            .is_some_and(|prefix| !p.id.starts_with(prefix.as_str()))
        {
            continue;
        }
        let url = Url::parse(&p.url)
            .unwrap_or_else(|_| Url::parse("http://example.com/").expect("static url"));
        pages.push((p.html, url));
    }
    if !aeb_only {
        for p in sets::cwced().unwrap_or_default() {
            let url =
                Url::parse(&format!("http://cwced.example/{}.html", p.id)).expect("static url");
            pages.push((p.html, url));
        }
    }
    let mut out = dump.map(|f| {
        std::io::BufWriter::new(std::fs::File::create(f).expect("dump file can be created"))
    });
    for (html, url) in &pages {
        let a = extractor::extract(html, url);
        if let Some(out) = out.as_mut() {
            serde_json::to_writer(&mut *out, &a).expect("dump written");
            writeln!(out).expect("dump written");
        }
    }
    let start = std::time::Instant::now();
    if smoothie {
        measured_smoothie(&pages, times);
    } else {
        measured(&pages, times);
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    eprintln!(
        "{} pages x {times}: {:.4} ms/page",
        pages.len(),
        ms / (pages.len() * times).max(1) as f64
    );
}

/// `times` extractions of every page by `dom_smoothie`, as the benchmark calls it.
#[inline(never)]
fn measured_smoothie(pages: &[(String, Url)], times: usize) {
    for _ in 0..times {
        for (html, url) in pages {
            let text = dom_smoothie::Readability::new(html.as_str(), Some(url.as_str()), None)
                .ok()
                .and_then(|mut r| r.parse().ok())
                .map(|a| a.text_content.to_string());
            std::hint::black_box(text);
        }
    }
}

/// `times` extractions of every page.
#[inline(never)]
fn measured(pages: &[(String, Url)], times: usize) {
    for _ in 0..times {
        for (html, url) in pages {
            std::hint::black_box(extractor::extract(html, url));
        }
    }
}
