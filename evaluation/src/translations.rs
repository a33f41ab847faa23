//! An independent source of text for the charset vote: the gettext
//! translations (`.mo` catalogues) that Debian packages install under
//! `/usr/share/locale/<language>/LC_MESSAGES/`, in the languages of the
//! single-byte Latin and Cyrillic encodings. They share nothing with the
//! charset corpus (feeds and pages), so the vote's figure on them says
//! whether rules tuned on the corpus generalize, and the letter model of
//! [`charset::language`] is counted from them
//! (`tests/letter_model.rs`).
//!
//! Each catalogue of a language is one document (its cleaned translations,
//! one a line); a document is held aside by the hash of
//! `translations:<language>/<catalogue>` ([`crate::split`]). Each document
//! is encoded into each single-byte encoding [`languages`] lists for its
//! language (lines it cannot represent left out), cut into a
//! [`LONG_PAGE_BYTES`] and a [`crate::lying::SHORT_PAGE_BYTES`] form, and
//! wrapped like the corpus same-lie pages ([`crate::lying::built_page`]):
//! told the truth, then each lie of [`crate::lying::BOTH_LIES`] that reads it
//! differently.
//!
//! The catalogues come with the machine's packages; where they are missing
//! (`CHARSET_TRANSLATIONS_DIR` names another root), [`documents`] is an
//! error, never an empty set. `apt-get install --reinstall iso-codes
//! manpages-pl ...` is not needed on the project's image: its packages ship
//! the catalogues already.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use encoding_rs::{Encoding, UTF_8};
use unicode_normalization::UnicodeNormalization;

use crate::lying::{tellings, SHORT_PAGE_BYTES};
use crate::split::held_aside;

/// Bytes of a document kept in the long form of a built page.
pub const LONG_PAGE_BYTES: usize = 6 * 1024;

/// Catalogues read per language at most (the largest first are not
/// preferred: the order is the file names'), to bound the bench's time.
pub const DOCUMENTS_PER_LANGUAGE: usize = 40;

/// One language read, with the single-byte encodings its pages are really
/// written in, as [`LANGUAGES_FILE`] lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct Language {
    /// Its code (`pl`): its folder under the locale root.
    pub code: &'static str,
    /// The encodings, the commonest first.
    pub encodings: Vec<&'static Encoding>,
}

/// The file of the languages read: a line a language, its code and its
/// encodings' labels.
pub const LANGUAGES_FILE: &str = "evaluation/src/translations/languages.tsv";

/// The languages read (ISO-8859-1 is windows-1252 for the web). Not
/// ISO-8859-16: its Romanian reads as windows-1250's but for ș ț written
/// with a comma instead of a cedilla, which no letter model can tell apart.
pub fn languages() -> &'static [Language] {
    static LANGUAGES: OnceLock<Vec<Language>> = OnceLock::new();
    LANGUAGES.get_or_init(|| {
        parse_languages(include_str!("translations/languages.tsv"))
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The encodings of `language`'s pages; none for a language not read.
pub fn encodings_of(language: &str) -> &'static [&'static Encoding] {
    languages()
        .iter()
        .find(|l| l.code == language)
        .map_or(&[], |l| &l.encodings)
}

/// The [`Language`]s of `tsv` ([`LANGUAGES_FILE`]'s text): a line each,
/// its code, a tab and its encodings' labels separated by spaces; blank
/// lines and `#` comments skipped. An error names the file and the line.
fn parse_languages(tsv: &'static str) -> Result<Vec<Language>, String> {
    let mut out = Vec::new();
    for (line, fields) in crate::tsv_rows(tsv) {
        let at = |reason: String| format!("{LANGUAGES_FILE}:{line}: {reason}");
        let [code, labels] = fields[..] else {
            return Err(at(format!("{} fields, not 2", fields.len())));
        };
        let encodings = labels
            .split(' ')
            .map(|label| {
                Encoding::for_label(label.as_bytes())
                    .ok_or_else(|| at(format!("{label:?} is no encoding's label")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Language { code, encodings });
    }
    Ok(out)
}

/// One document: the cleaned translations of one catalogue.
pub struct Document {
    /// The language's code (`pl`).
    pub language: &'static str,
    /// `<language>/<catalogue file>`.
    pub id: String,
    /// Cleaned translations, one a line.
    pub text: String,
    /// Held aside by the hash of `translations:<id>`.
    pub held: bool,
}

/// Where the catalogues are read: `CHARSET_TRANSLATIONS_DIR`, or
/// `/usr/share/locale`.
pub fn locale_dir() -> PathBuf {
    std::env::var_os("CHARSET_TRANSLATIONS_DIR")
        .map_or_else(|| PathBuf::from("/usr/share/locale"), PathBuf::from)
}

/// Every language's documents (at most [`DOCUMENTS_PER_LANGUAGE`] each);
/// an error when a listed language has no catalogue at all, so a machine
/// without them fails rather than measures less.
pub fn documents(root: &Path) -> Result<Vec<Document>, String> {
    documents_within(root, DOCUMENTS_PER_LANGUAGE)
}

/// [`documents`] with another bound per language (`usize::MAX`: all).
pub fn documents_within(root: &Path, per_language: usize) -> Result<Vec<Document>, String> {
    let mut documents = Vec::new();
    let mut missing = Vec::new();
    for language in languages().iter().map(|l| l.code) {
        let dir = root.join(language).join("LC_MESSAGES");
        let Ok(paths) = crate::sources::sorted_entries(&dir) else {
            missing.push(language);
            continue;
        };
        let before = documents.len();
        for path in paths {
            if documents.len() - before >= per_language {
                break;
            }
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let Ok(translations) = mo_translations(&bytes) else {
                continue;
            };
            let text = translations
                .iter()
                .filter_map(|t| clean(t))
                .collect::<Vec<_>>()
                .join("\n");
            // A document needs some words, and words of its language's letters.
            if text.len() < SHORT_PAGE_BYTES || text.is_ascii() {
                continue;
            }
            let id = format!("{language}/{}", crate::sources::file_name(&path));
            documents.push(Document {
                language,
                held: held_aside(&format!("translations:{id}")),
                id,
                text,
            });
        }
        if documents.len() == before {
            missing.push(language);
        }
    }
    if documents.is_empty() || missing.len() * 2 > languages().len() {
        return Err(format!(
            "translations under {}: no catalogues for {missing:?}",
            root.display()
        ));
    }
    Ok(documents)
}

/// Why a `.mo` file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoError {
    /// No `.mo` magic number at the start.
    NotMo,
    /// A table or string points past the end of the file.
    Truncated,
}

/// The translations (plural forms apart) of a `.mo` catalogue, decoded with
/// the charset its header names (UTF-8 when it names none).
pub fn mo_translations(bytes: &[u8]) -> Result<Vec<String>, MoError> {
    let word = |at: usize, little: bool| -> Result<usize, MoError> {
        let b: [u8; 4] = bytes
            .get(at..at + 4)
            .and_then(|s| s.try_into().ok())
            .ok_or(MoError::Truncated)?;
        Ok(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        } as usize)
    };
    let little = match word(0, true)? {
        0x9504_12de => true,
        0xde12_0495 => false,
        _ => return Err(MoError::NotMo),
    };
    let count = word(8, little)?;
    let originals = word(12, little)?;
    let translations = word(16, little)?;
    let string = |table: usize, i: usize| -> Result<&[u8], MoError> {
        let length = word(table + 8 * i, little)?;
        let offset = word(table + 8 * i + 4, little)?;
        bytes
            .get(offset..offset.saturating_add(length))
            .ok_or(MoError::Truncated)
    };
    let mut encoding = UTF_8;
    let mut out = Vec::new();
    for i in 0..count {
        let original = string(originals, i)?;
        let translated = string(translations, i)?;
        if original.is_empty() {
            // The header entry: `Content-Type: text/plain; charset=...`.
            let header = String::from_utf8_lossy(translated);
            if let Some(label) = header
                .lines()
                .find_map(|line| line.split("charset=").nth(1))
                .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
            {
                encoding = label;
            }
            continue;
        }
        for form in translated.split(|&b| b == 0) {
            let (text, _) = encoding.decode_without_bom_handling(form);
            out.push(text.into_owned());
        }
    }
    Ok(out)
}

/// A translation as running text: format directives (`%s`, `%1$d`, `{0}`),
/// markup and escapes removed, accelerator marks (`_Open`, `&Open`)
/// dropped, whitespace collapsed; `None` when fewer than two words are
/// left.
pub fn clean(translation: &str) -> Option<String> {
    let mut out = String::with_capacity(translation.len());
    let mut chars = translation.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' => {
                // A printf directive: flags, width, then a conversion letter.
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_digit() || "$-+#. 'lhzjtIL*".contains(*d))
                {
                    chars.next();
                }
                chars.next();
                out.push(' ');
            }
            '<' | '{' => {
                let close = if c == '<' { '>' } else { '}' };
                for d in chars.by_ref() {
                    if d == close {
                        break;
                    }
                }
                out.push(' ');
            }
            '\\' => {
                chars.next();
                out.push(' ');
            }
            '_' | '&' if chars.peek().is_some_and(|d| d.is_alphabetic()) => {}
            c if c.is_whitespace() || c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    let words: Vec<&str> = out.split_whitespace().collect();
    let letters = words
        .iter()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count();
    (letters >= 2).then(|| words.join(" "))
}

/// `text` in `encoding`, line by line: a line the encoding cannot represent
/// is left out, after the substitutions legacy pages made (Romanian ș ț as
/// ş ţ where the encoding lacks them; Vietnamese tones as combining marks
/// for windows-1258). `None` when no non-ASCII line is left.
pub fn encode(text: &str, encoding: &'static Encoding) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.lines() {
        let line = representable(line, encoding);
        let (bytes, _, unmappable) = encoding.encode(&line);
        if unmappable {
            continue;
        }
        out.extend_from_slice(&bytes);
        out.push(b'\n');
    }
    (!out.is_ascii()).then_some(out)
}

/// `line` as a legacy page in `encoding` writes it: composed (NFC), with
/// Romanian ș ț as ş ţ and Vietnamese tones as combining marks where the
/// encoding lacks the composed letter. Characters it still lacks stay.
pub fn representable(line: &str, encoding: &'static Encoding) -> String {
    let line: String = line.nfc().collect();
    line.chars()
        .flat_map(|c| {
            let mut buffer = [0u8; 4];
            let (_, _, unmappable) = encoding.encode(c.encode_utf8(&mut buffer));
            if !unmappable {
                return vec![c];
            }
            match c {
                'ș' => vec!['ş'],
                'Ș' => vec!['Ş'],
                'ț' => vec!['ţ'],
                'Ț' => vec!['Ţ'],
                // Windows-1258 has the vowels with their shape marks and
                // the tones as combining marks: split the tone off.
                c => {
                    let decomposed: Vec<char> = std::iter::once(c).nfd().collect();
                    let (tones, rest): (Vec<char>, Vec<char>) =
                        decomposed.into_iter().partition(|m| {
                            matches!(m, '\u{300}' | '\u{301}' | '\u{303}' | '\u{309}' | '\u{323}')
                        });
                    let mut out: Vec<char> = rest.into_iter().nfc().collect();
                    out.extend(tones);
                    out
                }
            }
        })
        .collect()
}

/// The long and the short form of a document's bytes, cut at line ends.
pub fn forms(bytes: &[u8]) -> [(&'static str, &[u8]); 2] {
    let cut = |limit: usize| {
        let end = limit.min(bytes.len());
        bytes[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(end, |i| i + 1)
    };
    [
        ("long", &bytes[..cut(LONG_PAGE_BYTES)]),
        ("short", &bytes[..cut(SHORT_PAGE_BYTES)]),
    ]
}

/// One built page of a document.
pub struct TranslatedPage<'a> {
    pub document: &'a Document,
    /// The encoding the bytes are really in.
    pub truth: &'static Encoding,
    pub form: &'static str,
    /// The label both the header and the meta claim (`None`: the truth).
    pub lie: Option<&'static str>,
    pub page: Vec<u8>,
    /// The label the HTTP header claims.
    pub header: &'static str,
}

/// Calls `f` on every built page: for each document, encoding of its
/// language and form, the page told the truth, then told each lie that
/// reads it differently.
pub fn each_page(documents: &[Document], mut f: impl FnMut(TranslatedPage<'_>)) {
    for document in documents {
        for &truth in encodings_of(document.language) {
            let Some(bytes) = encode(&document.text, truth) else {
                continue;
            };
            for (form, content) in forms(&bytes) {
                if content.is_ascii() {
                    continue;
                }
                tellings(truth, content, |lie, page| {
                    f(TranslatedPage {
                        document,
                        truth,
                        form,
                        lie,
                        page,
                        header: lie.unwrap_or(truth.name()),
                    })
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_languages_are_read_from_their_file() {
        use encoding_rs::{ISO_8859_15, ISO_8859_5, KOI8_R, WINDOWS_1251, WINDOWS_1252};
        let codes: Vec<&str> = languages().iter().map(|l| l.code).collect();
        assert_eq!(codes.len(), 39);
        assert_eq!(codes[..3], ["de", "fr", "es"]);
        assert_eq!(encodings_of("de"), [WINDOWS_1252, ISO_8859_15]);
        assert_eq!(
            encodings_of("ru"),
            [
                WINDOWS_1251,
                KOI8_R,
                ISO_8859_5,
                encoding_rs::IBM866,
                encoding_rs::X_MAC_CYRILLIC
            ]
        );
        assert!(encodings_of("el").is_empty());
        let error = parse_languages("# comment\nde\twindows-1252 latin-9000\n").unwrap_err();
        assert_eq!(
            error,
            format!("{LANGUAGES_FILE}:2: \"latin-9000\" is no encoding's label")
        );
    }

    #[test]
    fn translations_are_cleaned_to_running_text() {
        assert_eq!(
            clean("_Otwórz plik %s…\\n").as_deref(),
            Some("Otwórz plik …")
        );
        assert_eq!(
            clean("<b>Błąd</b>: {0} nie istnieje").as_deref(),
            Some("Błąd : nie istnieje")
        );
        assert_eq!(clean("%1$d"), None);
    }

    #[test]
    fn legacy_substitutions_make_lines_representable() {
        let romanian = encode("Ștefan și țara", encoding_rs::WINDOWS_1250).expect("bytes");
        assert_eq!(
            encoding_rs::WINDOWS_1250
                .decode_without_bom_handling(&romanian)
                .0,
            "Ştefan şi ţara\n"
        );
        let vietnamese = encode("Tiếng Việt", encoding_rs::WINDOWS_1258).expect("bytes");
        let (text, _) = encoding_rs::WINDOWS_1258.decode_without_bom_handling(&vietnamese);
        assert_eq!(text.nfc().collect::<String>(), "Tiếng Việt\n");
        assert_eq!(encode("Ελληνικά", encoding_rs::WINDOWS_1252), None);
    }

    #[test]
    fn a_mo_file_is_parsed() {
        // Two entries: the header and one translation, little-endian.
        let strings: [(&[u8], &[u8]); 2] = [
            (b"", b"Content-Type: text/plain; charset=UTF-8\n"),
            (b"Open", "Otwórz".as_bytes()),
        ];
        let mut mo = Vec::new();
        for w in [0x9504_12de_u32, 0, 2, 28, 44, 0, 0] {
            mo.extend_from_slice(&w.to_le_bytes());
        }
        let mut data = Vec::new();
        let base = 28 + 32;
        let mut tables = [Vec::new(), Vec::new()];
        for (table, pick) in tables.iter_mut().zip([0, 1]) {
            for pair in &strings {
                let s = if pick == 0 { pair.0 } else { pair.1 };
                table.extend_from_slice(&(s.len() as u32).to_le_bytes());
                table.extend_from_slice(&((base + data.len()) as u32).to_le_bytes());
                data.extend_from_slice(s);
                data.push(0);
            }
        }
        mo.extend(tables.concat());
        mo.extend(data);
        assert_eq!(mo_translations(&mo), Ok(vec!["Otwórz".to_owned()]));
        assert_eq!(mo_translations(b"nope"), Err(MoError::NotMo));
    }
}
