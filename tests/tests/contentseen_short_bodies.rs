//! The short-body rule against the real Redis: bodies under
//! `MIN_TOKENS` tokens are matched by an exact hash of their normalized
//! tokens only (never by SimHash), and concurrent copies still elect one
//! original.

use contentseen::bands::Layout;
use contentseen::simhash::{fingerprint, Fingerprint, MIN_TOKENS};
use contentseen::ContentSeenStage;
use crawler_tests::stored_document;
use pipeline::messages::Document;
use pipeline::worker::Stage;

fn doc(url: &str, text: &str) -> Document {
    Document::new("short", url, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_bodies_match_exactly_and_only_exactly() {
    let (env, store, keys) = crawler_tests::TestEnv::on_redis("csshort").await;
    let ns = env.namespace.clone();
    let stage = ContentSeenStage::new(store.clone(), &ns, Layout::default());

    // Distinct words of letters (numbers are not features).
    let words: Vec<String> = (0..MIN_TOKENS)
        .map(|i| {
            format!(
                "word{}{}",
                (b'a' + (i / 26) as u8) as char,
                (b'a' + (i % 26) as u8) as char
            )
        })
        .collect();
    let short = words[..MIN_TOKENS - 1].join(" ");
    let long = words.join(" ");
    assert!(matches!(fingerprint(&short), Fingerprint::Exact(_)));
    assert!(matches!(fingerprint(&long), Fingerprint::Sim(_)));

    for (url, text) in [
        ("http://s/1", "Page not found"),
        ("http://s/2", "page, NOT found!"),
        ("http://s/3", "Page found"),
        ("http://s/4", short.as_str()),
        // One token more: a SimHash, never matched against the exact hash.
        ("http://s/5", long.as_str()),
        ("http://s/6", &short.to_uppercase()),
    ] {
        stage.handle(doc(url, text)).await.expect("handle");
    }
    let d = |u: &'static str| {
        let (store, keys) = (store.clone(), keys.clone());
        async move { stored_document(&store, &keys, u).await }
    };
    assert_eq!(d("http://s/1").await.duplicate_of, None);
    let two = d("http://s/2").await;
    assert_eq!(two.duplicate_of.as_deref(), Some("http://s/1"));
    assert_eq!(two.distance, Some(0));
    assert_eq!(two.text, "");
    assert_eq!(d("http://s/3").await.duplicate_of, None);
    assert_eq!(d("http://s/4").await.duplicate_of, None);
    assert_eq!(d("http://s/5").await.duplicate_of, None);
    assert_eq!(
        d("http://s/6").await.duplicate_of.as_deref(),
        Some("http://s/4")
    );

    // Copies handled at the same moment: one original.
    let handles: Vec<_> = (0..12)
        .map(|i| {
            let stage = ContentSeenStage::new(store.clone(), &ns, Layout::default());
            tokio::spawn(async move {
                stage
                    .handle(doc(
                        &format!("http://c/{i}"),
                        "Access denied. Please log in.",
                    ))
                    .await
                    .expect("handle")
            })
        })
        .collect();
    for h in handles {
        h.await.expect("task");
    }
    let mut originals = 0;
    for i in 0..12 {
        let s = stored_document(&store, &keys, &format!("http://c/{i}")).await;
        match s.duplicate_of {
            None => originals += 1,
            Some(of) => assert!(of.starts_with("http://c/")),
        }
    }
    assert_eq!(originals, 1);
    env.cleanup().await;
}
