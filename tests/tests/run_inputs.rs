//! `crawler run` takes its seeds and its User-Agent the way `crawler seed`
//! and the fetcher do: `--file`, `--sitemaps` and `--user-agent` (issue 17).
//! A small site on 127.0.0.1 records the User-Agent of every request, and
//! its robots.txt shuts that agent out of one seeded path and names a
//! sitemap with one more page.

use std::sync::{Arc, Mutex, OnceLock};

use crawler_tests::{stub_site, TestEnv};

const AGENT: &str = "RunInputsBot/1.0 (+mailto:ops@example.org)";

/// Requests seen: (path, User-Agent).
type Seen = Arc<Mutex<Vec<(String, String)>>>;

fn article(title: &str) -> Vec<u8> {
    let text = format!(
        "The {title} story is told here in full, with enough words to be an article. \
         It goes on for a while, so that the extractor finds a body worth keeping, \
         and it says something different from every other page of this small site."
    );
    format!(
        "<!DOCTYPE html><html><head><title>{title}</title></head><body><article>\
         <h1>{title}</h1><p>{text}</p><p>{text}</p></article></body></html>"
    )
    .into_bytes()
}

/// Serves the site until the test ends; returns its base URL and the
/// requests seen.
fn serve() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let base = Arc::new(OnceLock::<String>::new());
    let site = base.clone();
    let url = stub_site::serve(move |request| {
        let agent = request.header("user-agent").unwrap_or_default().to_string();
        log.lock().expect("log").push((request.path.clone(), agent));
        let base = site.get().map(String::as_str).unwrap_or_default();
        let (status, content_type, body): (&str, &str, Vec<u8>) = match request.path.as_str() {
            "/robots.txt" => (
                "200 OK",
                "text/plain",
                format!("User-agent: RunInputsBot\nDisallow: /private\n\nSitemap: {base}/sitemap.xml\n")
                    .into_bytes(),
            ),
            "/sitemap.xml" => (
                "200 OK",
                "application/xml",
                format!(
                    "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                     <url><loc>{base}/from-sitemap</loc></url></urlset>"
                )
                .into_bytes(),
            ),
            "/from-the-file" => ("200 OK", "text/html; charset=utf-8", article("File")),
            "/from-sitemap" => ("200 OK", "text/html; charset=utf-8", article("Sitemap")),
            "/private" => ("200 OK", "text/html; charset=utf-8", article("Private")),
            _ => ("404 Not Found", "text/plain", Vec::new()),
        };
        stub_site::Response {
            status,
            content_type: content_type.into(),
            body,
        }
    });
    base.set(url.clone()).expect("set once");
    (url, seen)
}

#[test]
fn run_takes_a_seed_file_sitemaps_and_a_user_agent() {
    let (base, seen) = serve();
    let env = TestEnv::new("run-inputs");
    let dir = std::env::temp_dir().join(format!("run-inputs-{}", env.namespace));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let seeds = dir.join("seeds.txt");
    std::fs::write(
        &seeds,
        format!("# two seeds\n{base}/from-the-file\n{base}/private\n"),
    )
    .expect("write the seed file");
    let out = dir.join("crawl.jsonl");
    let documents = env.run_locally(
        &out,
        &[
            "--max-depth",
            "0",
            "--user-agent",
            AGENT,
            "--sitemaps",
            "--file",
            seeds.to_str().expect("UTF-8 path"),
        ],
    );
    let mut urls: Vec<String> = documents.iter().map(|d| d.url.clone()).collect();
    urls.sort();
    assert_eq!(
        urls,
        vec![
            format!("{base}/from-sitemap"),
            format!("{base}/from-the-file")
        ],
        "the file's seed and the sitemap's page, not the path robots.txt shuts this agent out of"
    );
    let seen = seen.lock().expect("log").clone();
    let pages: Vec<&(String, String)> = seen
        .iter()
        .filter(|(path, _)| path.starts_with("/from"))
        .collect();
    assert_eq!(pages.len(), 2, "{seen:?}");
    for (path, agent) in pages {
        assert_eq!(agent, AGENT, "{path} was fetched as {agent:?}");
    }
    assert!(
        !seen.iter().any(|(path, _)| path == "/private"),
        "robots.txt was not obeyed for the given agent: {seen:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_without_any_seed_is_refused() {
    let env = TestEnv::new("run-inputs-none");
    let out = env.crawler(&["run", "--allow-private"]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("seed"), "{text}");
}
