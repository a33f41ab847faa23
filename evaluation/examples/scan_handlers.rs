//! Why `extractor::scan` has a tokenizer of its own beside `lol_html`: the time `lol_html`
//! alone takes to report what the scan needs through its handlers (every start tag, an
//! end-tag handler per element, every text chunk), against the whole scan (start tags from
//! `lol_html`, text and end tags read from the source by the scan, records kept), over the
//! AEB pages. The two are timed in turns, and each figure is the median of the rounds.
//!
//! `cargo run --release -p evaluation --example scan_handlers`

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use evaluation::extraction::sets;
use lol_html::html_content::{Element, TextChunk};
use lol_html::{element, text, HtmlRewriter, Settings};

/// Rounds of each reading over all pages.
const ROUNDS: usize = 7;

/// `lol_html` with the handlers the scan would need and nothing done in them but counting.
fn handlers_only(html: &str) -> usize {
    let seen = Rc::new(Cell::new(0usize));
    let (on_element, on_text) = (seen.clone(), seen.clone());
    let settings = Settings::new()
        .with_strict(false)
        .append_element_content_handler(element!("*", move |el: &mut Element| {
            on_element.set(on_element.get() + 1);
            let on_end = on_element.clone();
            if let Some(handlers) = el.end_tag_handlers() {
                handlers.push(Box::new(move |_end| {
                    on_end.set(on_end.get() + 1);
                    Ok(())
                }));
            }
            Ok(())
        }))
        .append_element_content_handler(text!("*", move |t: &mut TextChunk| {
            on_text.set(on_text.get() + t.as_str().len());
            Ok(())
        }));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    if rewriter.write(html.as_bytes()).is_ok() {
        let _ = rewriter.end();
    }
    seen.get()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let pages = sets::aeb().expect("the AEB set in ../shared/bench");
    let per_page = |start: Instant| start.elapsed().as_secs_f64() * 1e3 / pages.len() as f64;
    let (mut scan_ms, mut handlers_ms) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for p in &pages {
            extractor::scan::recycle(std::hint::black_box(extractor::scan::scan(&p.html)));
        }
        scan_ms.push(per_page(start));
        let start = Instant::now();
        for p in &pages {
            std::hint::black_box(handlers_only(&p.html));
        }
        handlers_ms.push(per_page(start));
    }
    println!(
        "AEB ({} pages): whole scan {:.3} ms/page; lol_html end-tag and text handlers alone {:.3} ms/page",
        pages.len(),
        median(scan_ms),
        median(handlers_ms)
    );
}
