//! The extraction sets of `shared/bench` as the extraction benchmark, its floor test and the
//! `extract_sets` example read them: AEB pages decompressed with their truth as given, CWCED
//! pages decoded by the crawler's own charset vote with their body, author and date truths.

use std::fs;
use std::io::Read;

pub use crate::sources::bench_dir;

/// One AEB page with its truth.
pub struct AebPage {
    pub id: String,
    pub url: String,
    pub html: String,
    pub truth: String,
}

/// The AEB pages, sorted by id; `None` when the set is absent.
pub fn aeb() -> Option<Vec<AebPage>> {
    let dir = bench_dir().join("aeb");
    let truth: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("ground-truth.json")).ok()?).ok()?;
    let mut pages = Vec::new();
    for (id, t) in truth.as_object()? {
        let gz = fs::read(dir.join("html").join(format!("{id}.html.gz"))).ok()?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut bytes)
            .ok()?;
        pages.push(AebPage {
            id: id.clone(),
            url: t["url"]
                .as_str()
                .unwrap_or("http://example.com/")
                .to_string(),
            html: String::from_utf8_lossy(&bytes).into_owned(),
            truth: t["articleBody"].as_str().unwrap_or("").to_string(),
        });
    }
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    Some(pages)
}

/// One CWCED page with its truths (`UNKNOWN` where the set has none).
pub struct CwcedPage {
    pub id: String,
    pub html: String,
    pub body: String,
    pub author: String,
    pub date: String,
}

/// The CWCED pages, sorted by id; `None` when the set is absent.
pub fn cwced() -> Option<Vec<CwcedPage>> {
    let dir = bench_dir().join("cwced");
    let mut pages = Vec::new();
    for entry in fs::read_dir(dir.join("original")).ok()? {
        let path = entry.ok()?.path();
        let id = path.file_stem()?.to_string_lossy().into_owned();
        let read = |sub: &str| {
            fs::read(dir.join(sub).join(format!("{id}.txt")))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_else(|_| "UNKNOWN".to_string())
        };
        pages.push(CwcedPage {
            html: decode(&fs::read(&path).ok()?),
            body: read("cleaned"),
            author: read("author").trim().to_string(),
            date: read("date").trim().to_string(),
            id,
        });
    }
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    Some(pages)
}

/// Decodes page bytes the way the crawler does: the fetcher's charset vote
/// (`fetcher::charset::decide_and_decode`), with no HTTP header (the set has none).
pub fn decode(bytes: &[u8]) -> String {
    fetcher::charset::decide_and_decode(bytes, &fetcher::charset::Signals::default()).1
}
