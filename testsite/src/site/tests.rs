//! The site's promises: deterministic from the seed, distinct articles
//! far apart, near-duplicates near, bodies of the promised length, pages
//! decoding to their text, links rewritten when the port is bound.

use super::builder::LIES;
use super::*;
use crate::html;
use std::hash::{Hash, Hasher};

/// A plain 64-bit SimHash over lower-cased word unigrams and word
/// 3-shingles, term-frequency weighted: a stand-in for the crawler's.
fn simhash(text: &str) -> u64 {
    let words: Vec<String> = text
        .split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut features: HashMap<String, i64> = HashMap::new();
    for word in &words {
        *features.entry(word.clone()).or_default() += 1;
    }
    for shingle in words.windows(3) {
        *features.entry(shingle.join(" ")).or_default() += 1;
    }
    let mut weights = [0i64; 64];
    for (feature, weight) in features {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        feature.hash(&mut hasher);
        let hash = hasher.finish();
        for (bit, total) in weights.iter_mut().enumerate() {
            *total += if hash >> bit & 1 == 1 {
                weight
            } else {
                -weight
            };
        }
    }
    weights
        .iter()
        .enumerate()
        .fold(0, |fingerprint, (bit, total)| {
            if *total > 0 {
                fingerprint | 1 << bit
            } else {
                fingerprint
            }
        })
}

fn distance(first: &str, second: &str) -> u32 {
    (simhash(first) ^ simhash(second)).count_ones()
}

fn body<'a>(site: &'a Site, path: &str) -> &'a str {
    site.page(path)
        .and_then(|page| page.body_text.as_deref())
        .expect(path)
}

#[test]
fn generation_is_deterministic_and_depends_on_the_seed() {
    let config = SiteConfig::default();
    let first = Site::generate(&config);
    let second = Site::generate(&config);
    assert_eq!(
        serde_json::to_string(first.pages()).unwrap(),
        serde_json::to_string(second.pages()).unwrap()
    );
    for page in first.pages() {
        assert_eq!(
            first.response_bytes(&page.path),
            second.response_bytes(&page.path),
            "{}",
            page.path
        );
    }
    let other = Site::generate(&SiteConfig { seed: 43, ..config });
    assert_ne!(body(&first, "/article/0"), body(&other, "/article/0"));
}

#[test]
fn distinct_articles_are_far_apart_as_simhash_fingerprints() {
    let site = Site::generate(&SiteConfig::default());
    let fingerprints: Vec<u64> = site
        .pages_of_kind(PageKind::Article)
        .filter_map(|page| page.body_text.as_deref())
        .map(simhash)
        .collect();
    let mut histogram = [0u32; 65];
    for (index, first) in fingerprints.iter().enumerate() {
        for second in &fingerprints[index + 1..] {
            histogram[(first ^ second).count_ones() as usize] += 1;
        }
    }
    let pairs: u32 = histogram.iter().sum();
    let mean = histogram
        .iter()
        .enumerate()
        .map(|(distance, count)| distance as f64 * f64::from(*count))
        .sum::<f64>()
        / f64::from(pairs);
    let closest = histogram.iter().position(|count| *count > 0).unwrap_or(64);
    eprintln!("mean {mean:.1}, closest {closest}, histogram {histogram:?}");
    assert!(mean > 24.0, "mean Hamming distance {mean}");
    assert!(
        closest > 8,
        "two distinct articles at Hamming distance {closest}"
    );
}

#[test]
fn same_topic_pairs_share_title_words_but_not_bodies() {
    let site = Site::generate(&SiteConfig::default());
    let pairs: Vec<&PageSpec> = site
        .pages_of_kind(PageKind::Article)
        .filter(|page| page.same_topic_as.is_some())
        .collect();
    assert_eq!(pairs.len(), 10);
    for page in pairs {
        let partner = site.page(page.same_topic_as.as_deref().unwrap()).unwrap();
        let title_start = |page: &PageSpec| {
            page.title
                .as_deref()
                .unwrap()
                .split(' ')
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(title_start(page), title_start(partner));
        let hamming = distance(body(&site, &page.path), body(&site, &partner.path));
        assert!(
            hamming > 10,
            "{} and {} at distance {hamming}",
            page.path,
            partner.path
        );
    }
}

#[test]
fn near_duplicates_match_their_originals() {
    for seed in [1, 2, 3, 42] {
        near_duplicates_match_their_originals_for_seed(seed);
    }
}

fn near_duplicates_match_their_originals_for_seed(seed: u64) {
    let site = Site::generate(&SiteConfig {
        seed,
        ..SiteConfig::default()
    });
    let mut seen = HashMap::new();
    for page in site
        .pages()
        .iter()
        .filter(|page| page.duplicate_of.is_some())
    {
        let original_path = page.duplicate_of.as_deref().unwrap();
        let original = body(&site, original_path);
        let copy = page.body_text.as_deref().unwrap();
        *seen.entry(page.kind).or_insert(0) += 1;
        match page.kind {
            PageKind::Copy => assert_eq!(
                site.response_bytes(&page.path),
                site.response_bytes(original_path)
            ),
            PageKind::Mirror => {
                assert_eq!(copy, original);
                assert_ne!(
                    site.response_bytes(&page.path),
                    site.response_bytes(original_path)
                );
            }
            PageKind::Edit => {
                let before: Vec<&str> = original.split_whitespace().collect();
                let after: Vec<&str> = copy.split_whitespace().collect();
                assert_eq!(before.len(), after.len());
                let changed = before
                    .iter()
                    .zip(&after)
                    .filter(|(old, new)| old != new)
                    .count();
                assert!(
                    (1..=2).contains(&changed),
                    "{} changes {changed} words",
                    page.path
                );
                let hamming = distance(original, copy);
                eprintln!("{} at distance {hamming}", page.path);
                assert!(
                    hamming <= 3,
                    "{} at distance {hamming} from its original",
                    page.path
                );
            }
            other => panic!("unexpected duplicate kind {other:?}"),
        }
    }
    assert_eq!(seen.len(), 3);
}

#[test]
fn article_bodies_have_the_promised_length_and_appear_in_the_page() {
    let site = Site::generate(&SiteConfig::default());
    for page in site.pages_of_kind(PageKind::Article) {
        let words = page
            .body_text
            .as_deref()
            .unwrap()
            .split_whitespace()
            .count();
        assert!((300..=800).contains(&words), "{}: {words} words", page.path);
        let html = std::str::from_utf8(site.response_bytes(&page.path).unwrap()).unwrap();
        for paragraph in page.body_text.as_deref().unwrap().split('\n') {
            assert!(html.contains(&format!("<p>{}</p>", html::escape_html(paragraph))));
        }
    }
}

#[test]
fn chinese_and_lying_pages_decode_to_their_text_in_the_true_encoding() {
    let site = Site::generate(&SiteConfig::default());
    let pages = site
        .pages_of_kind(PageKind::ZhArticle)
        .chain(site.pages_of_kind(PageKind::Lie));
    let mut count = 0;
    for page in pages {
        count += 1;
        let encoding =
            encoding_rs::Encoding::for_label(page.true_encoding.as_deref().unwrap().as_bytes())
                .unwrap();
        let bytes = site.response_bytes(&page.path).unwrap();
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        assert!(!had_errors, "{}", page.path);
        for paragraph in page.body_text.as_deref().unwrap().split('\n') {
            assert!(text.contains(paragraph), "{}", page.path);
        }
        assert!(text.contains("作者："));
        if page.true_encoding.as_deref() == Some("GBK") {
            assert!(
                std::str::from_utf8(bytes).is_err(),
                "{} must not be valid UTF-8",
                page.path
            );
        }
    }
    assert_eq!(count, 20 + LIES.len());
}

#[test]
fn binding_the_port_rewrites_links_headers_and_bodies() {
    let mut site = Site::generate(&SiteConfig::default());
    site.bind_port(4321);
    assert!(site.pages().iter().all(|page| !page
        .links
        .iter()
        .any(|link| link.contains(PORT_PLACEHOLDER))));
    assert!(site
        .page("/article/0")
        .unwrap()
        .links
        .contains(&"http://localhost:4321/about".to_string()));
    assert_eq!(
        site.page("/r/absolute").unwrap().redirect_to.as_deref(),
        Some("http://127.0.0.1:4321/about")
    );
    let html = site.response_bytes("/").unwrap();
    assert!(html
        .windows(21)
        .any(|window| window == b"http://localhost:4321"));
    assert!(!html
        .windows(PORT_PLACEHOLDER.len())
        .any(|window| window == PORT_PLACEHOLDER.as_bytes()));
}
