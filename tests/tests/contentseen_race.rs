//! The race: several real `contentseen` worker processes over a burst of
//! near-duplicates published all at once. Each cluster must get exactly one
//! original, and every duplicate must point (through `duplicate_of`) at its
//! own cluster's original.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use contentseen::bands::Layout;
use contentseen::reach::Reach;
use contentseen::simhash::{distance, sketch};
use crawler_tests::{root_of, sim_value, TestEnv, AMQP_URL};
use pipeline::keys::Keys;
use pipeline::messages::{encode, Document};
use pipeline::{Broker, Queue, StoredDocument};

const CLUSTERS: usize = 40;
const WORKERS: usize = 3;

fn doc(url: &str, text: &str) -> Document {
    Document::new("race", url, text)
}

/// The SimHash and the search radius of a text, computed once per text
/// (fingerprinting is slow in a debug build, and the checks repeat texts).
fn fingerprint_and_radius(text: &str) -> (u64, u32) {
    thread_local! {
        static MEMO: RefCell<HashMap<String, (u64, u32)>> = RefCell::new(HashMap::new());
    }
    MEMO.with(|memo| {
        if let Some(&v) = memo.borrow().get(text) {
            return v;
        }
        let s = sketch(text);
        let v = (
            sim_value(s.fingerprint),
            Reach::default().radius(&Layout::default(), s.tokens),
        );
        memo.borrow_mut().insert(text.to_string(), v);
        v
    })
}

fn sim(text: &str) -> u64 {
    fingerprint_and_radius(text).0
}

/// The distance within which two texts count as near-duplicates: the
/// smaller of their search radii (k = 3 for long texts).
fn reach(a: &str, b: &str) -> u32 {
    fingerprint_and_radius(a).1.min(fingerprint_and_radius(b).1)
}

/// Near-duplicate variants of a text: copies and light edits, each checked
/// to be within distance 3 of the text.
fn variants(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split(' ').collect();
    let mid = words.len() / 2;
    let edit = |f: &dyn Fn(&mut Vec<&str>)| {
        let mut w = words.clone();
        f(&mut w);
        w.join(" ")
    };
    let candidates = vec![
        text.to_string(),
        text.to_string(),
        format!("{text}\nShare this story"),
        edit(&|w| w[mid] = "indeed"),
        edit(&|w| {
            w.remove(mid / 2);
        }),
        edit(&|w| w.insert(mid, "reportedly")),
    ];
    let base = sim(text);
    candidates
        .into_iter()
        .filter(|v| distance(sim(v), base) <= 3)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_workers_elect_one_original_per_cluster() {
    let env = TestEnv::new("csrace");
    // Distinct articles of the test site (pairwise far apart).
    let mut bodies = crawler_tests::article_bodies(CLUSTERS);
    bodies.truncate(CLUSTERS);
    assert_eq!(bodies.len(), CLUSTERS);
    for i in 0..bodies.len() {
        for j in i + 1..bodies.len() {
            assert!(distance(sim(&bodies[i]), sim(&bodies[j])) > reach(&bodies[i], &bodies[j]));
        }
    }

    // Every variant of every cluster, interleaved so that near-duplicates
    // arrive side by side at different workers.
    let mut cluster_of: HashMap<String, usize> = HashMap::new();
    let mut text_of: HashMap<String, String> = HashMap::new();
    let mut per_cluster: Vec<Vec<(String, String)>> = Vec::new();
    for (c, body) in bodies.iter().enumerate() {
        let vs: Vec<(String, String)> = variants(body)
            .into_iter()
            .enumerate()
            .map(|(v, t)| (format!("http://race.test/{c}/{v}"), t))
            .collect();
        assert!(vs.len() >= 4, "cluster {c} has {} variants", vs.len());
        for (u, t) in &vs {
            cluster_of.insert(u.clone(), c);
            text_of.insert(u.clone(), t.clone());
        }
        per_cluster.push(vs);
    }
    let mut payloads = Vec::new();
    for round in 0.. {
        let before = payloads.len();
        for vs in &per_cluster {
            if let Some((u, t)) = vs.get(round) {
                payloads.push(encode(&doc(u, t)).expect("encode"));
            }
        }
        if payloads.len() == before {
            break;
        }
    }
    let total = payloads.len();

    // Start the workers, let them declare their consumers, then publish
    // the whole burst at once.
    let _workers: Vec<_> = (0..WORKERS)
        .map(|_| env.start("contentseen", &[]))
        .collect();
    let session = Broker::amqp(AMQP_URL, &env.namespace)
        .open()
        .await
        .expect("broker");
    tokio::time::sleep(Duration::from_secs(2)).await;
    session
        .publish(Queue::ContentSeen, &payloads)
        .await
        .expect("publish");

    // Wait until every document is stored.
    let store = crawler_tests::shared_store().await;
    let keys = Keys::new(&env.namespace);
    let deadline = Instant::now() + Duration::from_secs(50);
    let docs: HashMap<String, StoredDocument> = loop {
        let urls: Vec<&String> = cluster_of.keys().collect();
        let reader = pipeline::documents::Documents::new(store.clone(), keys.namespace(), None);
        let mut docs = HashMap::new();
        for u in &urls {
            if let Some(d) = reader.document(u).await.expect("read a document") {
                docs.insert(u.to_string(), d);
            }
        }
        if docs.len() == total {
            break docs;
        }
        assert!(
            Instant::now() < deadline,
            "only {} of {total} documents stored",
            docs.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    let mut originals: HashMap<usize, Vec<&str>> = HashMap::new();
    for (url, d) in &docs {
        let c = cluster_of[url];
        match &d.duplicate_of {
            None => originals.entry(c).or_default().push(url),
            Some(of) => {
                assert_eq!(
                    cluster_of.get(of),
                    Some(&c),
                    "{url} (cluster {c}) points at {of}, outside its cluster"
                );
                let (me, original) = (&text_of[url], &text_of[of]);
                assert_eq!(d.distance, Some(distance(sim(me), sim(original))), "{url}");
                assert!(
                    d.distance.is_some_and(|k| k <= reach(me, original)),
                    "{url}: {:?}",
                    d.distance
                );
                assert!(d.text.is_empty(), "{url}: a duplicate's text is stored");
                let root = root_of(&docs, url);
                assert!(docs[root].duplicate_of.is_none());
                assert_eq!(cluster_of[root], c);
            }
        }
    }
    for c in 0..CLUSTERS {
        assert_eq!(
            originals.get(&c).map(Vec::len),
            Some(1),
            "cluster {c} originals: {:?}",
            originals.get(&c)
        );
    }

    // The workers settled the namespace's scale (the default: fewer band
    // tables than the counts for 10M), and `crawler query --text` below
    // reads the tables at that scale.
    let scale = pipeline::scale::Scale::load(&store, keys.clone())
        .await
        .expect("the namespace's scale")
        .scale();
    assert_eq!(
        scale,
        pipeline::scale::Scale::for_pages(pipeline::scale::DEFAULT_EXPECTED_PAGES)
    );
    assert!(scale.band_key_bits < pipeline::scale::Scale::LARGE.band_key_bits);

    // `crawler query --text`: a cluster's text on stdin lists that
    // cluster's stored fingerprints, nearest first, and nothing else.
    let mut child = env
        .command("crawler")
        .args(["query", "--text"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("crawler query");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(bodies[7].as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("crawler query output");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert!(!lines.is_empty());
    assert_eq!(lines[0]["query_distance"], 0);
    for l in &lines {
        let url = l["url"].as_str().expect("url");
        assert_eq!(cluster_of.get(url), Some(&7), "query --text listed {url}");
        let r = u64::from(reach(&bodies[7], &text_of[url]));
        assert!(l["query_distance"].as_u64().is_some_and(|d| d <= r));
    }
    env.cleanup().await;
}
