//! The per-site charset override (`--charset-override HOST=ENCODING`, or
//! `charset_override` in the config file) reaches the fetcher's vote and is
//! recorded in the stored document: a page whose HTTP header and meta tell
//! the same lie is crawled without the override (the vote decides) and with
//! it (the override decides), by `crawler run` in one process and by
//! `crawler seed` and the four workers over the real RabbitMQ and Redis.

use charset::{vote, Signals};
use crawler_tests::{stub_site, TestEnv};
use encoding_rs::WINDOWS_1252;
use pipeline::StoredDocument;

/// French text in windows-1252 whose only letter that ISO-8859-2 (the label
/// both the header and the meta claim) reads differently is `à`, read as
/// `ŕ`, a letter Slovak writes beside `é`: both readings are plausible text,
/// too little for the vote to refute the declaration. The kind of site an
/// operator fixes with an override.
const TEXT: &str = "Le conseil municipal a voté mardi soir le nouveau budget de la ville. \
    Le maire a rappelé que les travaux de la gare commenceront à la fin du mois, \
    et que les écoles seront rénovées avant la rentrée.";
const LIE: &str = "iso-8859-2";
const RULE: &str = "127.0.0.1=windows-1252";

/// The lying page's bytes.
fn page() -> Vec<u8> {
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"{LIE}\"><title>Derlius</title></head>\
         <body><article><h1>Derlius</h1><p>{TEXT}</p><p>{TEXT}</p></article></body></html>"
    );
    let (bytes, _, unmappable) = WINDOWS_1252.encode(&html);
    assert!(!unmappable, "the text must be windows-1252");
    bytes.into_owned()
}

/// Serves the page at every path but `/robots.txt` (404), with the lying
/// header, on 127.0.0.1 until the test ends. Returns the page's URL.
fn serve(body: Vec<u8>) -> String {
    let base = stub_site::serve(move |request| {
        if request.path == "/robots.txt" {
            stub_site::Response {
                status: "404 Not Found",
                content_type: "text/plain".into(),
                body: Vec::new(),
            }
        } else {
            stub_site::Response {
                status: "200 OK",
                content_type: format!("text/html; charset={LIE}"),
                body: body.clone(),
            }
        }
    });
    format!("{base}/story")
}

/// The one document of a crawl of the page.
fn only_document(docs: Vec<StoredDocument>) -> StoredDocument {
    assert_eq!(docs.len(), 1, "one page crawled: {docs:?}");
    docs.into_iter().next().expect("one document")
}

/// `crawler run` over the page, with these extra arguments.
fn run(env: &TestEnv, url: &str, extra: &[&str]) -> StoredDocument {
    let out = std::env::temp_dir().join(format!(
        "charset-override-{}-{}.jsonl",
        env.namespace,
        extra.len()
    ));
    let mut args = extra.to_vec();
    args.push(url);
    let documents = env.run_locally(&out, &args);
    let _ = std::fs::remove_file(&out);
    only_document(documents)
}

/// What the document holds when the override decided.
fn assert_overridden(doc: &StoredDocument) {
    assert_eq!(doc.encoding, "windows-1252", "{doc:?}");
    assert_eq!(doc.charset_override.as_deref(), Some(RULE));
    let second_sentence = TEXT.split(". ").nth(1).expect("a sentence");
    assert!(
        doc.text.contains(second_sentence),
        "the text is decoded right: {:?}",
        doc.text
    );
}

#[test]
fn crawler_run_with_and_without_the_override() {
    let bytes = page();
    // Without an override the vote decides, from the header, the meta and the bytes.
    let voted = vote(
        &bytes,
        &Signals {
            header: Some(LIE),
            ..Signals::default()
        },
    );
    let url = serve(bytes);
    let env = TestEnv::in_process("charset-override");

    let plain = run(&env, &url, &[]);
    assert_eq!(plain.encoding, voted.encoding, "{plain:?}");
    assert_eq!(plain.charset_override, None);

    // An exact host, given in any case and with any label of the encoding.
    let exact = run(&env, &url, &["--charset-override", "127.0.0.1=Latin1"]);
    assert_overridden(&exact);

    // A rule for another host leaves the page to the vote.
    let other = run(&env, &url, &["--charset-override", "*.example.com=gbk"]);
    assert_eq!(other.encoding, voted.encoding);
    assert_eq!(other.charset_override, None);

    // A bad rule is refused before anything is crawled.
    let refused = env.crawler(&["run", "--charset-override", "127.0.0.1", &url]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("HOST=ENCODING"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_from_the_config_file_reaches_the_workers() {
    let url = serve(page());
    let env = TestEnv::new("charset-override");
    let config = std::env::temp_dir().join(format!("{}.toml", env.namespace));
    std::fs::write(
        &config,
        format!("[crawler]\ncharset_override = [\"{RULE}\"]\n"),
    )
    .expect("write the config file");
    let workers = env.start_all();
    let config_arg = config.to_str().expect("a UTF-8 temp path").to_string();
    env.crawler_ok(&[
        "--config",
        &config_arg,
        "seed",
        "--crawl",
        "override",
        "--delay-ms",
        "0",
        &url,
    ]);
    env.crawler_ok(&["stats", "--wait-idle", "--json", "--timeout-secs", "120"]);
    let doc = only_document(env.export());
    drop(workers);
    env.cleanup().await;
    let _ = std::fs::remove_file(&config);
    assert_overridden(&doc);
}
