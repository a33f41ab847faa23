//! What "decoded right" means, and the labelled sets' conventions, shared by
//! the `charset` benchmark and the `charset_accuracy` test (file reading
//! stays with them; this is pure).

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE};

/// Right means: decoding with the chosen encoding gives exactly the text
/// that decoding with the true encoding gives (so GBK for gb18030 is right,
/// and any ASCII-compatible choice is right for ASCII).
pub fn decodes_right(bytes: &[u8], chosen: &'static Encoding, truth: &'static Encoding) -> bool {
    if chosen == truth {
        return true;
    }
    let (expected, _) = truth.decode_with_bom_removal(bytes);
    let (got, _) = chosen.decode_with_bom_removal(bytes);
    expected == got
}

/// The true encoding for a `corpus/<label>` folder (a Python codec name),
/// mapped as the set's README says; `utf_16` takes the byte order from the BOM.
pub fn corpus_encoding(label: &str, bytes: &[u8]) -> Option<&'static Encoding> {
    let whatwg = match label {
        "cp932" => "shift_jis",
        "cp949" => "euc-kr",
        "mac_cyrillic" => "x-mac-cyrillic",
        "tis_620" => "windows-874",
        "gb2312" => "gbk",
        "ascii" => "us-ascii",
        "iso2022_jp" => "iso-2022-jp",
        "utf_16_le" => "utf-16le",
        "utf_16_be" => "utf-16be",
        "utf_16" => {
            return Some(match Encoding::for_bom(bytes) {
                Some((encoding, _)) if encoding == UTF_16BE => UTF_16BE,
                _ => UTF_16LE,
            })
        }
        other => {
            if let Some(number) = other.strip_prefix("iso8859_") {
                return Encoding::for_label(format!("iso-8859-{number}").as_bytes());
            }
            return Encoding::for_label(other.replace('_', "-").as_bytes());
        }
    };
    Encoding::for_label(whatwg.as_bytes())
}

/// The bytes with in-band declarations made unrecognisable (`charset` →
/// `charzet`, `encoding` → `encodinz`, any case, same length), so that a
/// detector test measures detection, not reading labels.
pub fn without_declarations(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for (word, replacement) in [(&b"charset"[..], b'z'), (&b"encoding"[..], b'z')] {
        let mut start = 0;
        while let Some(found) = out[start..]
            .windows(word.len())
            .position(|w| w.eq_ignore_ascii_case(word))
        {
            let at = start + found;
            out[at + word.len() - 1] = replacement;
            start = at + word.len();
        }
    }
    out
}

/// One row of `lying/labels.tsv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LyingPage {
    /// Path relative to the `lying/` folder.
    pub file: String,
    /// The encoding the page is really in (a WHATWG name).
    pub truth: String,
    /// The charset the HTTP header claims, if any.
    pub header: Option<String>,
    /// The charset the page's meta claims, if any.
    pub meta: Option<String>,
    /// `control_both_right`, `lie_both_same`, ...
    pub scenario: String,
}

impl LyingPage {
    /// Parses one data line of `labels.tsv` (`None` for the header line or a short line).
    pub fn parse(line: &str) -> Option<LyingPage> {
        let fields: Vec<&str> = line.trim_end_matches(['\r', '\n']).split('\t').collect();
        if fields.len() < 5 || fields[0] == "file" {
            return None;
        }
        let label = |value: &str| (value != "-" && !value.is_empty()).then(|| value.to_owned());
        Some(LyingPage {
            file: fields[0].to_owned(),
            truth: fields[1].to_owned(),
            header: label(fields[2]),
            meta: label(fields[3]),
            scenario: fields[4].to_owned(),
        })
    }

    /// The true encoding.
    pub fn truth_encoding(&self) -> Option<&'static Encoding> {
        Encoding::for_label(self.truth.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{GB18030, GBK, SHIFT_JIS, UTF_8, WINDOWS_1252};

    #[test]
    fn corpus_labels_map_to_whatwg() {
        assert_eq!(corpus_encoding("cp932", b""), Some(SHIFT_JIS));
        assert_eq!(corpus_encoding("gb2312", b""), Some(GBK));
        assert_eq!(
            corpus_encoding("iso8859_5", b""),
            Some(encoding_rs::ISO_8859_5)
        );
        assert_eq!(corpus_encoding("iso8859_1", b""), Some(WINDOWS_1252));
        assert_eq!(
            corpus_encoding("tis_620", b""),
            Some(encoding_rs::WINDOWS_874)
        );
        assert_eq!(
            corpus_encoding("mac_cyrillic", b""),
            Some(encoding_rs::X_MAC_CYRILLIC)
        );
        assert_eq!(corpus_encoding("euc_jp", b""), Some(encoding_rs::EUC_JP));
        assert_eq!(
            corpus_encoding("iso2022_jp", b""),
            Some(encoding_rs::ISO_2022_JP)
        );
        assert_eq!(corpus_encoding("utf_16_be", b""), Some(UTF_16BE));
        assert_eq!(corpus_encoding("utf_16", b"\xFE\xFF\0a"), Some(UTF_16BE));
        assert_eq!(corpus_encoding("utf_8", b""), Some(UTF_8));
        assert_eq!(corpus_encoding("koi8_r", b""), Some(encoding_rs::KOI8_R));
        assert_eq!(
            corpus_encoding("windows_1250", b""),
            Some(encoding_rs::WINDOWS_1250)
        );
        assert_eq!(corpus_encoding("ibm866", b""), Some(encoding_rs::IBM866));
        assert_eq!(corpus_encoding("ascii", b""), Some(WINDOWS_1252));
    }

    #[test]
    fn right_means_same_text() {
        let (gbk, _, _) = GBK.encode("中文");
        assert!(decodes_right(&gbk, GB18030, GBK));
        assert!(decodes_right(b"plain", UTF_8, WINDOWS_1252));
        assert!(!decodes_right(&gbk, encoding_rs::BIG5, GBK));
    }

    #[test]
    fn declarations_are_neutralised() {
        let page = without_declarations(b"<?xml version='1.0' ENCODING='big5'?><meta Charset=gbk>");
        assert_eq!(
            page,
            b"<?xml version='1.0' ENCODINz='big5'?><meta Charsez=gbk>".to_vec()
        );
        assert_eq!(charset::prescan(&page), None);
    }

    #[test]
    fn tsv_lines_parse() {
        let line = "pages/p0002.html\tGBK\tutf-8\t-\tlie_header_nometa\tsrc\tfull\t-";
        let page = LyingPage::parse(line).expect("a data line");
        assert_eq!(page.header.as_deref(), Some("utf-8"));
        assert_eq!(page.meta, None);
        assert_eq!(page.truth_encoding(), Some(GBK));
        assert_eq!(
            LyingPage::parse("file\ttrue_encoding\theader_charset\tmeta_charset\tscenario"),
            None
        );
    }
}
