//! The near-duplicate rules of issue 13 against the real Redis, through the
//! contentseen stage:
//! - a repost with words replaced, a paragraph dropped and a box of links
//!   added, whose SimHash moved beyond its radius, is found through the
//!   MinHash LSH keys, with the Jaccard estimate and radius stored;
//! - two different articles whose SimHashes are within the radius are kept
//!   apart by the second signal;
//! - pages without an article (an empty extraction, `{}`, a listing the
//!   extractor flagged) are stored with `article: false` and never matched,
//!   even by each other; exact short copies still are.

use contentseen::bands::Layout;
use contentseen::minhash::jaccard;
use contentseen::reach::Reach;
use contentseen::simhash::{distance, sketch, Fingerprint};
use contentseen::ContentSeenStage;
use crawler_tests::{article_bodies, sim, stored_document};
use pipeline::messages::Document;
use pipeline::worker::Stage;

/// A repost: every `every`-th word replaced by the word before it, the
/// third paragraph dropped, a box of related headlines appended.
fn repost(body: &str, every: usize, headlines: &[&str]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut n = 0;
    for (i, line) in body.lines().enumerate() {
        if i == 2 {
            continue;
        }
        let mut words: Vec<&str> = line.split_whitespace().collect();
        for j in 1..words.len() {
            n += 1;
            if n % every == 0 {
                words[j] = words[j - 1];
            }
        }
        out.push(words.join(" "));
    }
    out.push("Related stories".into());
    out.extend(headlines.iter().map(|h| h.to_string()));
    out.join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reposts_beyond_the_radius_are_found_and_lookalikes_are_not() {
    let (env, store, keys) = crawler_tests::TestEnv::on_redis("cssecond").await;
    let layout = Layout::default();
    let reach = Reach::default();
    let stage = ContentSeenStage::new(store.clone(), &env.namespace, layout.clone());

    let bodies = article_bodies(40);
    assert!(bodies.len() >= 40, "the test site has its articles");
    let headlines = [
        "Council approves the new harbour budget after a long night",
        "Storm closes the railway line for a second day in the north",
        "Museum reopens its winter garden to visitors this weekend",
    ];

    // A repost that SimHash alone would miss: beyond the pair's radius.
    let (orig, edit, d) = bodies
        .iter()
        .find_map(|b| {
            [20, 15, 12].into_iter().find_map(|every| {
                let e = repost(b, every, &headlines);
                let d = distance(sim(b), sim(&e));
                let radius = reach
                    .radius(&layout, sketch(b).tokens)
                    .min(reach.radius(&layout, sketch(&e).tokens));
                (d > radius).then(|| (b.clone(), e, d))
            })
        })
        .expect("some repost moved beyond its SimHash radius");
    stage
        .handle(Document::new("t", "http://a/orig", &orig))
        .await
        .expect("handle");
    stage
        .handle(Document::new("t", "http://a/repost", &edit))
        .await
        .expect("handle");
    let got = stored_document(&store, &keys, "http://a/repost").await;
    assert_eq!(
        got.duplicate_of.as_deref(),
        Some("http://a/orig"),
        "a repost at distance {d} is found through the MinHash keys"
    );
    assert_eq!(got.distance, Some(d));
    let j = got.jaccard.expect("the Jaccard estimate is stored");
    assert!(j >= 0.3, "estimate {j}");
    assert!(got.radius.is_some_and(|r| r < d));
    assert!(got.tokens > 0 && got.article);

    // Two different articles within each other's SimHash radius (if the
    // site has such a pair) are kept apart by their signatures.
    let sketches: Vec<_> = bodies.iter().map(|b| sketch(b)).collect();
    let mut lookalikes = 0;
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            let (a, b) = (&sketches[i], &sketches[j]);
            let (Fingerprint::Sim(x), Fingerprint::Sim(y)) = (a.fingerprint, b.fingerprint) else {
                continue;
            };
            let radius = reach
                .radius(&layout, a.tokens)
                .min(reach.radius(&layout, b.tokens));
            let est = jaccard(
                &a.minhash.signature().expect("signature"),
                &b.minhash.signature().expect("signature"),
            );
            assert!(
                est < 0.3,
                "distinct site articles {i} and {j}: estimate {est}"
            );
            if distance(x, y) <= radius {
                lookalikes += 1;
            }
        }
    }
    for (i, b) in bodies.iter().enumerate() {
        stage
            .handle(Document::new("t", &format!("http://b/{i}"), b))
            .await
            .expect("handle");
    }
    for (i, body) in bodies.iter().enumerate() {
        let doc = stored_document(&store, &keys, &format!("http://b/{i}")).await;
        if let Some(of) = &doc.duplicate_of {
            // Only the article the first part stored (the same text).
            assert!(
                of == "http://a/orig" && *body == orig,
                "article {i} marked a duplicate of {of} ({lookalikes} pairs within a radius)"
            );
        }
    }
    env.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_without_an_article_are_never_near_duplicates() {
    let (env, store, keys) = crawler_tests::TestEnv::on_redis("csnoart").await;
    let stage = ContentSeenStage::new(store.clone(), &env.namespace, Layout::default());
    let listing = "Home | News | World | Business | Sport\n".repeat(30);
    let mut flagged = Document::new("t", "http://n/listing-1", &listing);
    flagged.article = false;
    let mut flagged2 = Document::new("t", "http://n/listing-2", &listing);
    flagged2.article = false;
    for doc in [
        Document::new("t", "http://n/empty", ""),
        Document::new("t", "http://n/braces", "{}"),
        Document::new("t", "http://n/spaces", " \n \t "),
        Document::new("t", "http://n/digits", "404 2024-01-01 10:00"),
        flagged,
        flagged2,
        Document::new("t", "http://n/short-1", "Access denied. Please log in."),
        Document::new("t", "http://n/short-2", "access DENIED, please log in!"),
    ] {
        stage.handle(doc).await.expect("handle");
    }
    for url in [
        "http://n/empty",
        "http://n/braces",
        "http://n/spaces",
        "http://n/digits",
        "http://n/listing-1",
        "http://n/listing-2",
    ] {
        let doc = stored_document(&store, &keys, url).await;
        assert!(!doc.article, "{url} is stored without an article");
        assert_eq!(doc.duplicate_of, None, "{url} is nobody's near-duplicate");
    }
    // The listing keeps its text; a short exact copy is still a copy.
    assert_eq!(
        stored_document(&store, &keys, "http://n/listing-2")
            .await
            .text,
        listing
    );
    let short = stored_document(&store, &keys, "http://n/short-2").await;
    assert!(short.article);
    assert_eq!(short.duplicate_of.as_deref(), Some("http://n/short-1"));
    env.cleanup().await;
}
