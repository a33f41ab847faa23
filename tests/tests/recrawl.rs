//! Recrawl: stored pages are fetched again after the crawl's interval; a
//! page whose text changed is updated (and its interval halves), a page
//! that did not is recorded unchanged (and its interval doubles).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crawler_tests::TestEnv;
use pipeline::keys::Keys;
use pipeline::{Store, StoredDocument};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An article body of `n` words, different for each `seed`.
fn body(seed: u64, n: usize) -> String {
    let words = [
        "harbour", "council", "river", "budget", "school", "museum", "railway", "winter",
        "festival", "court", "energy", "village", "market", "storm", "bridge", "garden", "science",
        "hospital", "union", "season", "players", "coach", "mayor", "farmers",
    ];
    let mut rng = evaluation::rng::rng(seed, 0);
    let mut out = Vec::new();
    for i in 0..n {
        out.push(*evaluation::rng::pick(&mut rng, &words));
        if i % 12 == 11 {
            out.push("and then.");
        }
    }
    out.join(" ")
}

fn page(title: &str, text: &str, link: Option<&str>) -> String {
    let link = link
        .map(|l| format!("<a href=\"{l}\">more</a>"))
        .unwrap_or_default();
    format!("<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{text}</p></article>{link}</body></html>")
}

/// Serves `/` (version A, or B once `changed` is set) and `/static`.
async fn serve(changed: Arc<AtomicBool>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let changed = changed.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, html) = match path.as_str() {
                    "/" if changed.load(Ordering::SeqCst) => {
                        ("200 OK", page("News", &body(2, 300), Some("/static")))
                    }
                    "/" => ("200 OK", page("News", &body(1, 300), Some("/static"))),
                    "/static" => ("200 OK", page("About", &body(3, 300), None)),
                    _ => ("404 Not Found", String::from("not found")),
                };
                let resp = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    port
}

async fn counter(store: &Store, keys: &Keys, name: &str) -> i64 {
    pipeline::crawls::read_counters(store, keys)
        .await
        .unwrap()
        .get(name)
}

async fn wait_for(store: &Store, keys: &Keys, what: &str, cond: impl Fn(i64, i64, i64) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (stored, changed, unchanged) = (
            counter(store, keys, "stored").await,
            counter(store, keys, "changed").await,
            counter(store, keys, "unchanged").await,
        );
        if cond(stored, changed, unchanged) {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: stored {stored}, changed {changed}, unchanged {unchanged}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `crawler export` (from `cursor`): the documents and the cursor it
/// prints to resume from.
fn export(env: &TestEnv, cursor: Option<String>) -> (Vec<StoredDocument>, String) {
    let mut args = vec!["export"];
    if let Some(c) = &cursor {
        args.extend(["--cursor", c.as_str()]);
    }
    let out = env.crawler(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let next = stderr
        .rsplit("--cursor ")
        .next()
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| panic!("no cursor in {stderr:?}"));
    (
        crawler_tests::parse_documents(&String::from_utf8_lossy(&out.stdout)),
        next,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_pages_are_updated_and_unchanged_ones_recorded() {
    let changed = Arc::new(AtomicBool::new(false));
    let port = serve(changed.clone()).await;
    let env = TestEnv::new("recrawl");
    let workers = env.start_all();
    let store = crawler_tests::shared_store().await;
    let keys = Keys::new(&env.namespace);
    let root = format!("http://127.0.0.1:{port}/");
    env.crawler_ok(&[
        "seed",
        "--recrawl-secs",
        "1",
        "--delay-ms",
        "0",
        "--max-depth",
        "1",
        &root,
    ]);
    wait_for(&store, &keys, "both pages stored", |s, _, _| s == 2).await;

    // Refetches find both pages unchanged, then `/` changes.
    wait_for(&store, &keys, "an unchanged refetch", |_, _, u| u >= 2).await;
    let (before, cursor) = export(&env, None);
    assert_eq!(before.len(), 2, "each page once: {before:?}");
    changed.store(true, Ordering::SeqCst);
    wait_for(&store, &keys, "the change", |_, c, _| c >= 1).await;
    // An export resumed from the cursor takes the changed page; a whole
    // export still writes each page once.
    let (after, _) = export(&env, Some(cursor));
    let changed_doc = after
        .iter()
        .find(|d| d.url == root)
        .unwrap_or_else(|| panic!("the changed page is missing after the cursor: {after:?}"));
    assert!(changed_doc.text.contains(&body(2, 300)[..60]));
    assert!(
        after.iter().all(|d| d.url == root),
        "only the changed page is new after the cursor: {after:?}"
    );
    let (all, _) = export(&env, None);
    let mut urls: Vec<&str> = all.iter().map(|d| d.url.as_str()).collect();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), all.len(), "a page written twice: {all:?}");

    let doc: StoredDocument =
        serde_json::from_str(env.crawler_ok(&["query", &root]).trim()).unwrap();
    assert!(
        doc.text.contains(&body(2, 300)[..60]),
        "stored text not updated: {}",
        &doc.text[..80.min(doc.text.len())]
    );
    assert!(doc.changed_at.is_some());
    let about: StoredDocument =
        serde_json::from_str(env.crawler_ok(&["query", &format!("{root}static")]).trim()).unwrap();
    assert!(about.unchanged >= 1 && about.changed_at.is_none());
    // The unchanged page's interval grew; a page is still stored once.
    let interval = pipeline::documents::Documents::new(store.clone(), keys.namespace(), None)
        .record(&format!("{root}static"))
        .await
        .unwrap()
        .and_then(|r| r.recrawl)
        .map_or(0, |r| r.interval_secs);
    assert!(interval >= 2, "interval {interval}");
    assert_eq!(counter(&store, &keys, "stored").await, 2);
    drop(workers);
    env.cleanup().await;
}
