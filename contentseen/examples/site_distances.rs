//! Prints SimHash distances between the test site's articles and their edits
//! and mirrors, and the closest pair of distinct articles.
use contentseen::simhash::{distance, fingerprint};
use testsite::{PageKind, Site, SiteConfig};

fn main() {
    let site = Site::generate(&SiteConfig {
        articles: 300,
        edits: 60,
        ..SiteConfig::default()
    });
    let fp = |p: &str| {
        fingerprint(
            site.page(p)
                .and_then(|p| p.body_text.as_deref())
                .unwrap_or(""),
        )
        .value()
    };
    let mut hist = [0usize; 65];
    for p in site.pages_of_kind(PageKind::Edit) {
        let orig = p.duplicate_of.as_deref().unwrap();
        hist[distance(fp(&p.path), fp(orig)) as usize] += 1;
    }
    println!("edit distances: {:?}", &hist[..12]);
    let arts: Vec<u64> = site
        .pages_of_kind(PageKind::Article)
        .map(|p| fp(&p.path))
        .collect();
    let mut min = 64;
    let mut close = 0;
    for i in 0..arts.len() {
        for j in i + 1..arts.len() {
            let d = distance(arts[i], arts[j]);
            min = min.min(d);
            if d <= 6 {
                close += 1;
            }
        }
    }
    println!(
        "distinct articles: {} , min distance {min}, pairs <= 6: {close}",
        arts.len()
    );
}
