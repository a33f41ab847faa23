//! Short articles reach further, against the real Redis: a light edit of a
//! 100-token article that moved more bits than k = 3 (so an exact k = 3
//! lookup misses it) is still marked a duplicate of the article, through
//! the extra band keys of its lookup; distinct short articles stay
//! originals; and a read-only lookup of the edit lists the article.

use contentseen::bands::Layout;
use contentseen::reach::Reach;
use contentseen::simhash::{distance, sketch};
use contentseen::table::Table;
use contentseen::ContentSeenStage;
use crawler_tests::{article_bodies, sim, stored_document};
use pipeline::messages::Document;
use pipeline::worker::Stage;

/// The first `n` words of a body, its line breaks kept.
fn first_words(body: &str, n: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for line in body.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let take = words.len().min(n - count);
        if take == 0 {
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&words[..take].join(" "));
        count += take;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn light_edits_of_short_articles_are_found_past_k() {
    let (env, store, keys) = crawler_tests::TestEnv::on_redis("csreach").await;
    let layout = Layout::default();
    let reach = Reach::default();
    let k = layout.max_distance();

    let bodies: Vec<String> = article_bodies(12)
        .iter()
        .map(|b| first_words(b, 100))
        .collect();
    assert!(bodies.len() >= 6);
    let article = &bodies[0];
    let radius = reach.radius(&layout, sketch(article).tokens);
    assert!(radius > k, "a 100-token article gets a radius above k");

    // Light edits (one to three words of the article replaced by words of
    // another): the first whose distance is past k but within the radius,
    // and that the lookup's extra keys reach.
    let words: Vec<&str> = article.split(' ').collect();
    let vocab: Vec<&str> = bodies[1].split_whitespace().collect();
    let base = sim(article);
    let edit = (0..400)
        .find_map(|i| {
            let mut w = words.clone();
            for j in 0..1 + i % 3 {
                let at = (i * 7 + j * 31) % w.len();
                if !w[at].contains('\n') {
                    w[at] = vocab[(i * 13 + j) % vocab.len()];
                }
            }
            let text = w.join(" ");
            let s = sketch(&text);
            let probe = reach.probe(&layout, &s)?;
            let d = distance(base, probe.fingerprint);
            (d > k && probe.accepts(d, radius) && layout.sees(&probe, base)).then_some((text, d))
        })
        .expect("some light edit moves more than k bits");
    let (edit, d) = edit;

    let stage = ContentSeenStage::new(store.clone(), &env.namespace, layout.clone());
    let doc = |url: &str, text: &str| Document::new("reach", url, text);
    stage
        .handle(doc("http://r/article", article))
        .await
        .expect("handle");
    for (i, other) in bodies[2..6].iter().enumerate() {
        stage
            .handle(doc(&format!("http://r/other{i}"), other))
            .await
            .expect("handle");
    }
    stage
        .handle(doc("http://r/edit", &edit))
        .await
        .expect("handle");

    let e = stored_document(&store, &keys, "http://r/edit").await;
    assert_eq!(e.duplicate_of.as_deref(), Some("http://r/article"));
    assert_eq!(e.distance, Some(d));
    assert_eq!(e.text, "");
    assert_eq!(
        stored_document(&store, &keys, "http://r/article")
            .await
            .duplicate_of,
        None
    );
    for i in 0..4 {
        let o = stored_document(&store, &keys, &format!("http://r/other{i}")).await;
        assert_eq!(
            o.duplicate_of, None,
            "distinct short article {i} was merged"
        );
    }

    // The same lookup, read-only: the edit's text lists the article; an
    // exact k = 3 lookup does not reach it.
    let table = Table::new(store.clone(), &env.namespace, layout.clone());
    let probe = reach.probe(&layout, &sketch(&edit)).expect("SimHash");
    let near = table.near(&probe).await.expect("near");
    assert!(near
        .iter()
        .any(|n| n.url == Some(pipeline::keys::url_hash("http://r/article")) && n.distance == d));
    let exact = Reach::exact()
        .probe(&layout, &sketch(&edit))
        .expect("SimHash");
    let near = table.near(&exact).await.expect("near");
    assert!(near
        .iter()
        .all(|n| n.url != Some(pipeline::keys::url_hash("http://r/article"))));
    env.cleanup().await;
}
