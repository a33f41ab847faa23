//! The shared evaluation sets, read from `../shared/bench`, as base
//! articles: an id, a title, the body's paragraphs (the ground truth) and,
//! where the set has one, the page as published (its home page).
//!
//! A missing or unreadable set is an error, never an empty set: a
//! benchmark or test over missing data must fail.

use std::io::Read;
use std::path::{Path, PathBuf};

use encoding_rs::Encoding;

/// Where a base article comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// The article-extraction benchmark: 181 news and blog pages.
    Aeb,
    /// Chinese pages in GBK, Big5 and UTF-8.
    Cwced,
    /// Texts of the multilingual charset corpus (feeds, pages, plain text).
    Corpus,
    /// The generated test site.
    Testsite,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Aeb => "AEB",
            Source::Cwced => "CWCED",
            Source::Corpus => "charset corpus",
            Source::Testsite => "test site",
        }
    }
}

/// A page as served: its URL, bytes and the HTTP header's charset.
#[derive(Debug, Clone)]
pub struct Served {
    pub url: String,
    pub bytes: Vec<u8>,
    /// The `Content-Type` header value, when the page is served with one.
    pub content_type: Option<String>,
}

/// One article of a set.
#[derive(Debug, Clone)]
pub struct Base {
    pub source: Source,
    /// Unique within the source (a file name or id).
    pub id: String,
    pub title: String,
    /// The body, by paragraph (the set's ground truth).
    pub paragraphs: Vec<String>,
    /// The page as the set has it, if it has one.
    pub home: Option<Served>,
    /// The encoding the text was written in (for pages rebuilt from it).
    pub encoding: &'static Encoding,
}

/// `../shared/bench` seen from this crate.
pub fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench")
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The last component of `path` as text (lossily); empty when it has none.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The entries of `dir`, sorted by path; an error naming `dir` when it
/// cannot be read (missing data is never an empty set).
pub fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    Ok(paths)
}

fn sorted_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = sorted_entries(dir)?;
    files.retain(|p| p.is_file());
    Ok(files)
}

/// The first words of a body, as a title: nine words, or eighteen
/// characters of a script written without spaces (whose "words" between
/// the odd spaces are whole sentences).
fn title_of(paragraphs: &[String]) -> String {
    let first = paragraphs.first().map(String::as_str).unwrap_or("");
    let unspaced = script::dominant(first).is_some_and(script::Script::is_unspaced);
    if first.contains(' ') && !unspaced {
        first
            .split_whitespace()
            .take(9)
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        first.chars().take(18).collect()
    }
}

fn paragraphs_of(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// The AEB pages with their ground-truth bodies.
pub fn aeb() -> Result<Vec<Base>, String> {
    let dir = bench_dir().join("aeb");
    let truth = read(&dir.join("ground-truth.json"))?;
    let json: serde_json::Value =
        serde_json::from_slice(&truth).map_err(|e| format!("AEB ground truth: {e}"))?;
    let map = json.as_object().ok_or("AEB ground truth: not an object")?;
    let mut ids: Vec<&String> = map.keys().collect();
    ids.sort();
    let mut out = Vec::new();
    for id in ids {
        let body = map[id]["articleBody"].as_str().unwrap_or("");
        let url = map[id]["url"].as_str().unwrap_or("http://aeb.invalid/");
        let gz = read(&dir.join("html").join(format!("{id}.html.gz")))?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut bytes)
            .map_err(|e| format!("AEB {id}: {e}"))?;
        let paragraphs = paragraphs_of(body);
        out.push(Base {
            source: Source::Aeb,
            id: id.clone(),
            title: title_of(&paragraphs),
            paragraphs,
            home: Some(Served {
                url: url.to_string(),
                bytes,
                content_type: Some("text/html; charset=utf-8".into()),
            }),
            encoding: encoding_rs::UTF_8,
        });
    }
    if out.is_empty() {
        return Err("AEB: no pages".into());
    }
    Ok(out)
}

/// The CWCED pages (bytes as saved, no header) with their cleaned bodies.
pub fn cwced() -> Result<Vec<Base>, String> {
    let dir = bench_dir().join("cwced");
    let mut out = Vec::new();
    for file in sorted_files(&dir.join("original"))? {
        let Some(id) = file.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let bytes = read(&file)?;
        let cleaned = read(&dir.join("cleaned").join(format!("{id}.txt")))?;
        let paragraphs = paragraphs_of(&String::from_utf8_lossy(&cleaned));
        out.push(Base {
            source: Source::Cwced,
            id: id.to_string(),
            title: title_of(&paragraphs),
            paragraphs,
            home: Some(Served {
                url: format!("http://cwced.invalid/{id}.html"),
                bytes,
                content_type: None,
            }),
            encoding: encoding_rs::GBK,
        });
    }
    if out.is_empty() {
        return Err("CWCED: no pages".into());
    }
    Ok(out)
}

/// The visible text of a feed, page or plain text, by line: CDATA opened,
/// tags and comments dropped, character references decoded, whitespace
/// collapsed.
pub fn text_lines(markup: &str) -> Vec<String> {
    let mut text = String::with_capacity(markup.len());
    let mut rest = markup;
    while let Some(lt) = rest.find('<') {
        text.push_str(&rest[..lt]);
        rest = &rest[lt..];
        let skip_to = |s: &str, end: &str| s.find(end).map(|i| i + end.len()).unwrap_or(s.len());
        if let Some(inner) = rest.strip_prefix("<![CDATA[") {
            let end = inner.find("]]>").unwrap_or(inner.len());
            // CDATA in feeds often holds escaped HTML: take its text too.
            text.push_str(&text_lines(&inner[..end]).join("\n"));
            text.push('\n');
            rest = inner.get(end + 3..).unwrap_or("");
        } else if rest.starts_with("<!--") {
            rest = &rest[skip_to(rest, "-->")..];
        } else if rest
            .get(..7)
            .is_some_and(|t| t.eq_ignore_ascii_case("<script"))
        {
            rest = &rest[skip_to(rest, "</script>")..];
        } else if rest
            .get(..6)
            .is_some_and(|t| t.eq_ignore_ascii_case("<style"))
        {
            rest = &rest[skip_to(rest, "</style>")..];
        } else {
            rest = &rest[skip_to(rest, ">")..];
            text.push('\n');
        }
    }
    text.push_str(rest);
    let decoded = extractor::entities::decode(&text);
    paragraphs_of(&decoded)
}

/// One file of the charset corpus, decoded with its label.
#[derive(Debug, Clone)]
pub struct CorpusText {
    /// `label/file`.
    pub id: String,
    pub encoding: &'static Encoding,
    pub lines: Vec<String>,
}

/// Every file of the charset corpus, decoded with its true encoding.
pub fn corpus() -> Result<Vec<CorpusText>, String> {
    let dir = bench_dir().join("charset/corpus");
    let mut labels: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    labels.sort();
    let mut out = Vec::new();
    for label_dir in labels {
        let label = label_dir
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        for file in sorted_files(&label_dir)? {
            let bytes = read(&file)?;
            let Some(encoding) = crate::charset::corpus_encoding(&label, &bytes) else {
                continue;
            };
            let (text, _) = encoding.decode_with_bom_removal(&bytes);
            let name = file
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            out.push(CorpusText {
                id: format!("{label}/{name}"),
                encoding,
                lines: text_lines(&text),
            });
        }
    }
    if out.is_empty() {
        return Err("charset corpus: no files".into());
    }
    Ok(out)
}

/// The generated test site's pages, served bytes included, with the site.
pub fn testsite(config: &testsite::SiteConfig) -> testsite::Site {
    testsite::Site::generate(config)
}
