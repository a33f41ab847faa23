//! The body's HTML is built only when asked for (`extractor::Parts`), and asking for it
//! changes nothing else: on every page of every set in `shared/bench`, the article
//! extracted with the HTML is the one extracted without it, plus the HTML. A missing set
//! fails, naming where it should be.

use evaluation::extraction::sets::{self, Set};
use extractor::{extract, extract_with, Parts};
use url::Url;

#[test]
fn the_body_html_is_built_only_when_asked_and_changes_nothing_else() {
    let mut pages = 0;
    let mut with_html = 0;
    for set in Set::ALL {
        let set_pages = set.pages().unwrap_or_else(|e| {
            panic!(
                "{} has no readable {} set ({e})",
                sets::bench_dir().display(),
                set.name()
            )
        });
        assert!(!set_pages.is_empty(), "{}: no pages", set.name());
        for p in &set_pages {
            let url = Url::parse(&p.url)
                .unwrap_or_else(|_| Url::parse("http://example.com/").expect("fixed URL"));
            let plain = extract(&p.html, &url);
            assert_eq!(plain.body_html, None, "{}", p.key());
            let mut full = extract_with(&p.html, &url, Parts { body_html: true });
            let html = full.body_html.take().expect("the HTML asked for");
            assert_eq!(full, plain, "{}", p.key());
            if !plain.text.is_empty() {
                assert!(!html.is_empty(), "{}: text but no HTML", p.key());
                with_html += 1;
            }
            pages += 1;
        }
    }
    println!("{pages} pages, {with_html} with a body");
    assert!(
        with_html > 1000,
        "only {with_html} of {pages} pages had a body"
    );
}
