//! The extraction sets of `shared/bench` as the extraction benchmark and its floor test read
//! them: every page with its truths, one shape for the four sets.
//!
//! - AEB: the page decompressed (UTF-8), the body as given;
//! - CWCED: the page decoded by the crawler's own charset vote, body, author and date;
//! - trafilatura: the page decoded by the vote, `with`/`without` snippets, title, date,
//!   author (an empty value is "none recorded" and is not scored);
//! - GNE: the page decoded by the vote, the first and last body sentences and the snippets
//!   that are not body, title, date, author and the other credits (editor, source, account).
//!
//! Each page's id is `<set>:<id within the set>` (`AEB:<id>`, `CWCED:<id>`,
//! `trafilatura:<file>`, `GNE:<site>/<name>`), and [`crate::split`] holds a third of each
//! set aside by it. A missing or unreadable set is an error, never an empty set.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::Tokenizer;
pub use crate::sources::bench_dir;

/// The four extraction sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Set {
    /// The article-extraction benchmark: 181 news and blog pages, body text.
    Aeb,
    /// 35 Chinese pages in GBK, Big5 and UTF-8: body, author, date.
    Cwced,
    /// trafilatura's evaluation set: 990 pages in a dozen languages.
    Trafilatura,
    /// GeneralNewsExtractor's 62 Chinese news pages, labelled by hand.
    Gne,
}

impl Set {
    pub const ALL: [Set; 4] = [Set::Aeb, Set::Cwced, Set::Trafilatura, Set::Gne];

    /// The prefix of the set's page ids (`AEB` and `CWCED` as [`crate::sources::Source`]
    /// names them, so the split is the same in every bench).
    pub fn name(self) -> &'static str {
        match self {
            Set::Aeb => "AEB",
            Set::Cwced => "CWCED",
            Set::Trafilatura => "trafilatura",
            Set::Gne => "GNE",
        }
    }

    /// The set's pages.
    pub fn pages(self) -> Result<Vec<Page>, String> {
        match self {
            Set::Aeb => aeb(),
            Set::Cwced => cwced(),
            Set::Trafilatura => trafilatura(),
            Set::Gne => gne(),
        }
    }
}

/// One page of a set with its truths.
#[derive(Debug, Clone)]
pub struct Page {
    pub set: Set,
    /// Unique within the set.
    pub id: String,
    /// The page as saved (gzip-compressed where the name ends in `.gz`).
    pub path: PathBuf,
    pub url: String,
    /// The page decoded (see the module doc).
    pub html: String,
    /// The language it is reported under ([`language`]).
    pub lang: String,
    pub truth: Truth,
}

impl Page {
    /// `<set>:<id>`, the id the split hashes.
    pub fn key(&self) -> String {
        format!("{}:{}", self.set.name(), self.id)
    }

    /// Whether the page is in the held-aside part of its set (never tuned on).
    pub fn held_aside(&self) -> bool {
        crate::split::held_aside(&self.key())
    }
}

/// What a page should give. `None`: the set records no value for the page.
#[derive(Debug, Clone, Default)]
pub struct Truth {
    pub body: Body,
    pub title: Option<String>,
    /// `YYYY-MM-DD` (CWCED: `YYYY-MM-DD HH-MM-SS`, later parts may be missing).
    pub date: Option<String>,
    /// The writer as printed (CWCED: names separated by spaces).
    pub author: Option<String>,
    /// GNE's other credits.
    pub credits: Option<Credits>,
}

/// The body's truth.
#[derive(Debug, Clone)]
pub enum Body {
    /// The whole text (AEB, CWCED), scored by shingles.
    Text { text: String, tokenizer: Tokenizer },
    /// Snippets the body must hold and snippets it must not (trafilatura, GNE).
    Snippets {
        with: Vec<String>,
        without: Vec<String>,
    },
}

impl Default for Body {
    fn default() -> Body {
        Body::Snippets {
            with: Vec::new(),
            without: Vec::new(),
        }
    }
}

/// GNE's credits besides the author: what an extractor must not give as the author.
#[derive(Debug, Clone, Default)]
pub struct Credits {
    /// The `责任编辑` (responsible editor).
    pub editor: Option<String>,
    /// The publisher or agency credited (`来源`).
    pub source: Option<String>,
    /// A self-media account.
    pub account: Option<String>,
    /// The author is the editor: the page names no writer.
    pub author_from_editor: bool,
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn gunzip(path: &Path) -> Result<Vec<u8>, String> {
    let gz = read(path)?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes)
}

fn json(path: &Path) -> Result<serde_json::Value, String> {
    serde_json::from_slice(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// A non-empty string field.
fn field(v: &serde_json::Value, key: &str) -> Option<String> {
    v[key]
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn nonempty(set: Set, pages: Vec<Page>) -> Result<Vec<Page>, String> {
    if pages.is_empty() {
        return Err(format!("{}: no pages", set.name()));
    }
    Ok(pages)
}

/// The AEB pages, sorted by id.
pub fn aeb() -> Result<Vec<Page>, String> {
    let dir = bench_dir().join("aeb");
    let truth = json(&dir.join("ground-truth.json"))?;
    let map = truth.as_object().ok_or("AEB ground truth: not an object")?;
    let mut pages = Vec::new();
    for (id, t) in map {
        let path = dir.join("html").join(format!("{id}.html.gz"));
        let html = String::from_utf8_lossy(&gunzip(&path)?).into_owned();
        let url = field(t, "url").unwrap_or_else(|| "http://example.com/".into());
        pages.push(Page {
            set: Set::Aeb,
            id: id.clone(),
            lang: language(&html, &url),
            url,
            html,
            path,
            truth: Truth {
                body: Body::Text {
                    text: t["articleBody"].as_str().unwrap_or("").to_string(),
                    tokenizer: Tokenizer::Words,
                },
                ..Truth::default()
            },
        });
    }
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    nonempty(Set::Aeb, pages)
}

/// The CWCED pages, sorted by id.
pub fn cwced() -> Result<Vec<Page>, String> {
    let dir = bench_dir().join("cwced");
    let mut pages = Vec::new();
    for path in crate::sources::sorted_entries(&dir.join("original"))? {
        let Some(id) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        let truth = |sub: &str| -> Result<Option<String>, String> {
            let text = String::from_utf8_lossy(&read(&dir.join(sub).join(format!("{id}.txt")))?)
                .trim()
                .to_string();
            Ok((text != "UNKNOWN" && !text.is_empty()).then_some(text))
        };
        pages.push(Page {
            set: Set::Cwced,
            html: decode(&read(&path)?),
            url: format!("http://cwced.example/{id}.html"),
            lang: "zh".into(),
            truth: Truth {
                body: Body::Text {
                    text: truth("cleaned")?.unwrap_or_default(),
                    tokenizer: Tokenizer::Cjk,
                },
                author: truth("author")?,
                date: truth("date")?,
                ..Truth::default()
            },
            id,
            path,
        });
    }
    nonempty(Set::Cwced, pages)
}

/// The trafilatura set's pages, sorted by file.
pub fn trafilatura() -> Result<Vec<Page>, String> {
    let dir = bench_dir().join("trafilatura");
    let truth = json(&dir.join("evaldata.json"))?;
    let map = truth
        .as_object()
        .ok_or("trafilatura evaldata: not an object")?;
    let mut pages = Vec::new();
    for (url, t) in map {
        let file = field(t, "file").ok_or_else(|| format!("trafilatura {url}: no file"))?;
        let path = dir.join("pages").join(format!("{file}.gz"));
        let html = decode(&gunzip(&path)?);
        pages.push(Page {
            set: Set::Trafilatura,
            lang: language(&html, url),
            html,
            path,
            url: url.clone(),
            truth: Truth {
                body: Body::Snippets {
                    with: strings(&t["with"]),
                    without: strings(&t["without"]),
                },
                title: field(t, "title"),
                date: field(t, "date"),
                author: field(t, "author"),
                credits: None,
            },
            id: file,
        });
    }
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    nonempty(Set::Trafilatura, pages)
}

/// The GNE pages, in the labels' order.
pub fn gne() -> Result<Vec<Page>, String> {
    let dir = bench_dir().join("gne");
    let labels = json(&dir.join("labels.json"))?;
    let mut pages = Vec::new();
    for t in labels.as_array().ok_or("GNE labels: not a list")? {
        let file = field(t, "file").ok_or("GNE labels: a page without a file")?;
        let id = file.strip_suffix(".html").unwrap_or(&file).to_string();
        let path = dir.join("pages").join(format!("{file}.gz"));
        let mut with = Vec::new();
        with.extend(field(t, "body_first"));
        with.extend(field(t, "body_last"));
        pages.push(Page {
            set: Set::Gne,
            html: decode(&gunzip(&path)?),
            url: format!("http://gne.example/{file}"),
            lang: "zh".into(),
            path,
            truth: Truth {
                body: Body::Snippets {
                    with,
                    without: strings(&t["without"]),
                },
                title: field(t, "title"),
                date: field(t, "date"),
                author: field(t, "author"),
                credits: Some(Credits {
                    editor: field(t, "editor"),
                    source: field(t, "source"),
                    account: field(t, "account"),
                    author_from_editor: t["author_from_editor"].as_bool().unwrap_or(false),
                }),
            },
            id,
        });
    }
    nonempty(Set::Gne, pages)
}

/// Decodes page bytes the way the crawler does: the fetcher's charset vote
/// (`charset::decide_and_decode`), with no HTTP header (the sets have none).
pub fn decode(bytes: &[u8]) -> String {
    charset::decide_and_decode(bytes, &charset::Signals::default()).1
}

/// The language a page is reported under, read from the page as published, not from any
/// extractor: `<html lang>`, else the `content-language` or `og:locale` meta, else the
/// country of the URL's domain; the primary subtag in lower case, `other` when none says.
pub fn language(html: &str, url: &str) -> String {
    // The first 20,000 bytes, cut at a character boundary.
    let cut = (0..=html.len().min(20_000))
        .rev()
        .find(|&i| html.is_char_boundary(i))
        .unwrap_or(0);
    let head = &html[..cut];
    let lower = head.to_ascii_lowercase();
    let declared = html_lang(&lower).or_else(|| {
        ["content-language", "og:locale"]
            .iter()
            .find_map(|key| meta_content(&lower, key))
    });
    if let Some(lang) = declared.and_then(primary_subtag) {
        return lang;
    }
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let tld = host.rsplit('.').next().unwrap_or("");
    let by_country = match tld {
        "de" | "at" | "ch" => "de",
        "fr" => "fr",
        "es" | "cl" | "ar" | "mx" | "pe" | "co" | "bo" | "ve" | "uy" | "py" => "es",
        "pt" | "br" => "pt",
        "it" => "it",
        "pl" => "pl",
        "cz" => "cs",
        "cn" => "zh",
        "jp" => "ja",
        "ru" => "ru",
        "uk" | "us" | "ie" | "au" => "en",
        _ => "other",
    };
    by_country.to_string()
}

/// The value of `lang` on the `<html>` tag of a lower-cased page head.
fn html_lang(lower: &str) -> Option<&str> {
    let at = lower.find("<html")?;
    let tag = &lower[at..at + lower[at..].find('>')?];
    attribute(tag, "lang")
}

/// The `content` of the first `<meta>` whose name or property is `key`.
fn meta_content<'a>(lower: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = lower;
    while let Some(at) = rest.find("<meta") {
        let end = rest[at..].find('>').map_or(rest.len(), |e| at + e);
        let tag = &rest[at..end];
        let named = ["name", "property", "http-equiv"]
            .iter()
            .any(|a| attribute(tag, a) == Some(key));
        if named {
            return attribute(tag, "content");
        }
        rest = &rest[end..];
    }
    None
}

/// A tag's attribute value (quoted or not); the name must stand after whitespace.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(i) = tag[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        if !tag[..at].ends_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let rest = tag[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next(),
            _ => rest
                .split(|c: char| c.is_ascii_whitespace() || c == '>')
                .next(),
        };
        return value.map(str::trim);
    }
    None
}

/// `de` of `de-DE`, `de_AT` or `DE`; `None` for no two- or three-letter subtag.
fn primary_subtag(lang: &str) -> Option<String> {
    let first = lang.split(['-', '_']).next()?.trim();
    ((2..=3).contains(&first.len()) && first.chars().all(|c| c.is_ascii_alphabetic()))
        .then(|| first.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_from_the_page_then_the_domain() {
        assert_eq!(
            language("<html class=x lang=\"de-DE\">", "http://a.com/"),
            "de"
        );
        assert_eq!(
            language(
                "<html><meta property='og:locale' content='fr_FR'>",
                "http://a.com/"
            ),
            "fr"
        );
        assert_eq!(language("<html xml:lang=x><p>", "https://www.b.at/x"), "de");
        assert_eq!(language("<html>", "https://b.example/"), "other");
    }
}
