//! Loading the evaluation sets of `shared/bench` (shared by the floor test and the benchmark):
//! AEB pages decompressed, CWCED pages decoded the way a crawler would (BOM, then a `<meta>`
//! charset that decodes the bytes cleanly, then `chardetng`).

#![allow(dead_code)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// `shared/bench`, beside the project.
pub fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench")
}

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

/// Decodes page bytes: BOM, else a declared `charset=` that decodes without errors, else
/// `chardetng`'s guess.
pub fn decode(bytes: &[u8]) -> String {
    if let Some((enc, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        return enc
            .decode_without_bom_handling(&bytes[bom..])
            .0
            .into_owned();
    }
    if let Some(enc) = declared_charset(bytes) {
        if let Some(text) = enc.decode_without_bom_handling_and_without_replacement(bytes) {
            return text.into_owned();
        }
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let enc = detector.guess(None, chardetng::Utf8Detection::Allow);
    enc.decode_without_bom_handling(bytes).0.into_owned()
}

/// The first `charset=` label in the first 4 KB.
fn declared_charset(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let head = &bytes[..bytes.len().min(4096)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let pos = lower.windows(8).position(|w| w == b"charset=")? + 8;
    let rest = &lower[pos..];
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_'))
        .unwrap_or(rest.len());
    encoding_rs::Encoding::for_label(&rest[..end])
}
