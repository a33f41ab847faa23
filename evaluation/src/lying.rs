//! Pages built from the charset corpus whose HTTP header and meta tell the
//! same lie (and the same pages told the truth): the set the charset bench
//! reports per true encoding and the `charset_same_lie` test holds floors
//! on, tuned and held aside ([`crate::split`]).
//!
//! Each corpus file (its own declarations neutralised) is wrapped in the
//! page form of `lying/` (`<meta charset>` in the head, the text in a
//! `<pre>`), whole and as a 1 KB slice from the line of its first non-ASCII
//! byte, and told each of [`BOTH_LIES`] that reads its bytes differently
//! from the truth. UTF-16 files (no ASCII page can hold them) and files
//! that are ASCII (every lie reads them right) are left out.

use crate::charset::{corpus_encoding, decodes_right, without_declarations};
use encoding_rs::{Encoding, UTF_16BE, UTF_16LE};

use crate::sources::{bench_dir, Source};
use crate::split::held_aside_in;

/// The lies told by both the HTTP header and the meta: the labels servers
/// and templates get wrong in practice, the single-byte Latin family above
/// all (where the detector has least to go on), and the common multi-byte
/// and UTF-8 ones. Fixed before any result was seen.
pub const BOTH_LIES: [&str; 14] = [
    "windows-1252",
    "iso-8859-15",
    "iso-8859-2",
    "windows-1250",
    "windows-1257",
    "iso-8859-4",
    "iso-8859-13",
    "windows-1251",
    "koi8-r",
    "x-mac-cyrillic",
    "utf-8",
    "gbk",
    "shift_jis",
    "euc-kr",
];

/// Bytes of a corpus file kept in the short form of a built page.
pub const SHORT_PAGE_BYTES: usize = 1024;

/// One file of `charset/corpus/`.
pub struct CorpusFile {
    /// The folder: a Python codec name (`gb2312`, `mac_cyrillic`, ...).
    pub label: String,
    /// `<label>/<file>`.
    pub id: String,
    /// The file as published, declarations and all.
    pub original: Vec<u8>,
    /// With `charset`/`encoding` declarations neutralised.
    pub undeclared: Vec<u8>,
    pub truth: &'static Encoding,
    /// Held aside by the hash of `charset corpus:<label>/<file>`.
    pub held: bool,
}

/// Every file of `charset/corpus/` whose folder maps to an encoding; an
/// error when the corpus is missing or empty.
pub fn corpus_files() -> Result<Vec<CorpusFile>, String> {
    let mut files = Vec::new();
    let folders = crate::sources::sorted_entries(&bench_dir().join("charset/corpus"))?;
    for folder in folders.into_iter().filter(|path| path.is_dir()) {
        let label = crate::sources::file_name(&folder);
        for path in crate::sources::sorted_entries(&folder)? {
            let original = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let Some(truth) = corpus_encoding(&label, &original) else {
                break;
            };
            let id = format!("{label}/{}", crate::sources::file_name(&path));
            files.push(CorpusFile {
                held: held_aside_in(Source::Corpus, &id),
                undeclared: without_declarations(&original),
                id,
                label: label.clone(),
                original,
                truth,
            });
        }
    }
    if files.is_empty() {
        return Err("charset corpus: no files".into());
    }
    Ok(files)
}

/// A page around `content` whose meta says `label`, in the form of the
/// `lying/` pages.
pub fn built_page(label: &str, content: &[u8]) -> Vec<u8> {
    let mut page = format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"{label}\">\n<title>test page</title>\n</head>\n<body>\n<pre>\n"
    )
    .into_bytes();
    page.extend_from_slice(content);
    page.extend_from_slice(b"</pre>\n</body>\n</html>\n");
    page
}

/// The file whole, and about [`SHORT_PAGE_BYTES`] from the start of the line
/// of its first non-ASCII byte (cut at a line end, so no character is cut).
pub fn forms(bytes: &[u8]) -> [(&'static str, &[u8]); 2] {
    let first = Encoding::ascii_valid_up_to(bytes);
    let start = bytes[..first]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = (start + SHORT_PAGE_BYTES).min(bytes.len());
    let end = bytes[start..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(end, |i| start + i + 1);
    [("full", bytes), ("short", &bytes[start..end])]
}

/// One built page: the file it comes from, its form, the label both the
/// header and the meta claim (`None`: the truth), and its bytes.
pub struct BuiltPage<'a> {
    pub file: &'a CorpusFile,
    pub form: &'static str,
    pub lie: Option<&'static str>,
    pub page: Vec<u8>,
    /// The label the HTTP header claims.
    pub header: &'static str,
}

/// Calls `f(lie, page)` on the pages of `content`, whose bytes are in
/// `truth`: told the truth (`None`), then told each of [`BOTH_LIES`] that
/// reads them differently.
pub fn tellings(
    truth: &'static Encoding,
    content: &[u8],
    mut f: impl FnMut(Option<&'static str>, Vec<u8>),
) {
    f(None, built_page(truth.name(), content));
    for lie in BOTH_LIES {
        let Some(lie_encoding) = Encoding::for_label(lie.as_bytes()) else {
            continue;
        };
        let page = built_page(lie, content);
        if decodes_right(&page, lie_encoding, truth) {
            continue; // not a lie for these bytes
        }
        f(Some(lie), page);
    }
}

/// Calls `f` on every built page: for each usable file and form, the page
/// told the truth, then the page told each lie that reads it differently.
pub fn each_page(files: &[CorpusFile], mut f: impl FnMut(BuiltPage<'_>)) {
    for file in files {
        if [UTF_16LE, UTF_16BE].contains(&file.truth) || file.undeclared.is_ascii() {
            continue;
        }
        for (form, content) in forms(&file.undeclared) {
            if content.is_ascii() {
                continue;
            }
            tellings(file.truth, content, |lie, page| {
                f(BuiltPage {
                    file,
                    form,
                    lie,
                    page,
                    header: lie.unwrap_or(file.truth.name()),
                })
            });
        }
    }
}
