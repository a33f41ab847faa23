//! The page's own declaration, found the way a browser finds it: the WHATWG
//! "prescan a byte stream to determine its encoding" over the first
//! [`PRESCAN_LIMIT`] bytes (`<meta charset>`, `<meta http-equiv="Content-Type"
//! content="...charset=...">`, skipping comments and other tags with their
//! attributes), then the "get an XML encoding" step for `<?xml ... encoding=...?>`.
//!
//! Spec: <https://html.spec.whatwg.org/multipage/parsing.html#prescan-a-byte-stream-to-determine-its-encoding>

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// How many leading bytes the prescan looks at. The spec encourages 1024 so
/// that a document's declaration is found before any of its text is decoded.
pub const PRESCAN_LIMIT: usize = 1024;

/// A declaration found by the prescan: the label as written (lower-cased by
/// the algorithm) and the encoding it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// The label as the page wrote it, e.g. `gb2312`; kept for the vote's evidence.
    pub label: String,
    /// The encoding the label maps to, after the prescan's own remapping
    /// (UTF-16 in a meta becomes UTF-8, x-user-defined becomes windows-1252).
    pub encoding: &'static Encoding,
}

/// The encoding a page declares for itself within its first 1024 bytes, if any.
pub fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    prescan_declaration(bytes).map(|declaration| declaration.encoding)
}

/// Like [`prescan`], but keeps the label as written.
pub fn prescan_declaration(bytes: &[u8]) -> Option<Declaration> {
    let window = &bytes[..bytes.len().min(PRESCAN_LIMIT)];
    // A UTF-16 XML declaration, recognised by its byte pattern: the spec
    // returns UTF-16 here, not UTF-8.
    if window.starts_with(b"<\0?\0x\0") {
        return Some(Declaration {
            label: "utf-16le".into(),
            encoding: UTF_16LE,
        });
    }
    if window.starts_with(b"\0<\0?\0x") {
        return Some(Declaration {
            label: "utf-16be".into(),
            encoding: UTF_16BE,
        });
    }
    match scan_for_meta(window) {
        Some(found) => Some(found),
        None => xml_declaration(window),
    }
}

/// Maps the encodings a meta declaration may not meaningfully name.
fn remap_for_html(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == UTF_16BE || encoding == UTF_16LE {
        UTF_8
    } else if encoding == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    }
}

fn is_space(byte: u8) -> bool {
    matches!(byte, 0x09 | 0x0A | 0x0C | 0x0D | 0x20)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The main loop of the prescan; `None` if no usable meta was found before
/// the window ended.
fn scan_for_meta(window: &[u8]) -> Option<Declaration> {
    let mut position = 0;
    while position < window.len() {
        let rest = &window[position..];
        if rest.starts_with(b"<!--") {
            // The closing `-->` may share its dashes with the opening `<!--`.
            let close = find(&rest[2..], b"-->")?;
            position += 2 + close + 2;
        } else if rest.len() > 5
            && rest[..5].eq_ignore_ascii_case(b"<meta")
            && (is_space(rest[5]) || rest[5] == b'/')
        {
            position += 5;
            match meta_element(window, &mut position) {
                MetaOutcome::Found(declaration) => return Some(declaration),
                MetaOutcome::Nothing => {}
                MetaOutcome::EndOfInput => return None,
            }
        } else if rest[0] == b'<' && starts_tag(&rest[1..]) {
            position += rest.iter().position(|&b| is_space(b) || b == b'>')?;
            loop {
                match attribute(window, &mut position) {
                    AttributeOutcome::Attribute(_) => {}
                    AttributeOutcome::NoMore => break,
                    AttributeOutcome::EndOfInput => return None,
                }
            }
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            position += rest.iter().position(|&b| b == b'>')?;
        }
        position += 1;
    }
    None
}

/// `<` is followed by a letter, or by `/` and a letter: a start or end tag.
fn starts_tag(after_lt: &[u8]) -> bool {
    match after_lt {
        [b'/', next, ..] => next.is_ascii_alphabetic(),
        [first, ..] => first.is_ascii_alphabetic(),
        [] => false,
    }
}

enum MetaOutcome {
    Found(Declaration),
    Nothing,
    EndOfInput,
}

/// The `<meta` branch of the prescan, from after `<meta` to the end of its attributes.
fn meta_element(window: &[u8], position: &mut usize) -> MetaOutcome {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<(Vec<u8>, &'static Encoding)> = None;
    loop {
        let found = match attribute(window, position) {
            AttributeOutcome::Attribute(found) => found,
            AttributeOutcome::NoMore => break,
            AttributeOutcome::EndOfInput => return MetaOutcome::EndOfInput,
        };
        if seen.contains(&found.name) {
            continue;
        }
        seen.push(found.name.clone());
        match found.name.as_slice() {
            b"http-equiv" if found.value == b"content-type" => got_pragma = true,
            b"content" if charset.is_none() => {
                let label = charset_from_content(&found.value);
                if let Some((label, encoding)) =
                    label.and_then(|label| Some((label, Encoding::for_label(label)?)))
                {
                    charset = Some((label.to_vec(), encoding));
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = Encoding::for_label(&found.value)
                    .map(|encoding| (found.value.clone(), encoding));
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    match (need_pragma, charset) {
        (Some(need), Some((label, encoding))) if !need || got_pragma => {
            MetaOutcome::Found(Declaration {
                label: String::from_utf8_lossy(&label).trim().to_owned(),
                encoding: remap_for_html(encoding),
            })
        }
        _ => MetaOutcome::Nothing,
    }
}

struct Attribute {
    name: Vec<u8>,
    value: Vec<u8>,
}

enum AttributeOutcome {
    Attribute(Attribute),
    /// A `>` ended the tag: there are no more attributes.
    NoMore,
    /// The window ended inside the tag: the prescan stops.
    EndOfInput,
}

/// The spec's "get an attribute" algorithm. Names and values are lower-cased.
fn attribute(window: &[u8], position: &mut usize) -> AttributeOutcome {
    use AttributeOutcome::{Attribute as Found, EndOfInput, NoMore};
    let byte_at = |position: usize| window.get(position).copied();
    // Skip whitespace and slashes.
    loop {
        match byte_at(*position) {
            None => return EndOfInput,
            Some(b) if is_space(b) || b == b'/' => *position += 1,
            Some(b'>') => return NoMore,
            Some(_) => break,
        }
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    // Name.
    loop {
        let Some(b) = byte_at(*position) else {
            return EndOfInput;
        };
        match b {
            b'=' if !name.is_empty() => {
                *position += 1;
                break;
            }
            b if is_space(b) => {
                // Spaces, then either `=` or the end of a value-less attribute.
                while byte_at(*position).is_some_and(is_space) {
                    *position += 1;
                }
                match byte_at(*position) {
                    None => return EndOfInput,
                    Some(b'=') => {
                        *position += 1;
                        break;
                    }
                    Some(_) => return Found(Attribute { name, value }),
                }
            }
            b'/' | b'>' => return Found(Attribute { name, value }),
            b => name.push(b.to_ascii_lowercase()),
        }
        *position += 1;
    }
    // Value.
    while byte_at(*position).is_some_and(is_space) {
        *position += 1;
    }
    let Some(first) = byte_at(*position) else {
        return EndOfInput;
    };
    match first {
        quote @ (b'"' | b'\'') => loop {
            *position += 1;
            match byte_at(*position) {
                None => return EndOfInput,
                Some(b) if b == quote => {
                    *position += 1;
                    return Found(Attribute { name, value });
                }
                Some(b) => value.push(b.to_ascii_lowercase()),
            }
        },
        b'>' => return Found(Attribute { name, value }),
        b => {
            value.push(b.to_ascii_lowercase());
            *position += 1;
        }
    }
    loop {
        match byte_at(*position) {
            None => return EndOfInput,
            Some(b) if is_space(b) || b == b'>' => return Found(Attribute { name, value }),
            Some(b) => value.push(b.to_ascii_lowercase()),
        }
        *position += 1;
    }
}

/// The spec's "algorithm for extracting a character encoding from a meta
/// element": the label after `charset=` in a `content` value (already lower-cased).
fn charset_from_content(content: &[u8]) -> Option<&[u8]> {
    let mut position = 0;
    loop {
        position += find(&content[position..], b"charset")? + b"charset".len();
        while content.get(position).is_some_and(u8::is_ascii_whitespace) {
            position += 1;
        }
        if content.get(position) == Some(&b'=') {
            position += 1;
            break;
        }
    }
    while content.get(position).is_some_and(u8::is_ascii_whitespace) {
        position += 1;
    }
    let rest = content.get(position..)?;
    match rest.first()? {
        quote @ (b'"' | b'\'') => {
            let inner = &rest[1..];
            let end = inner.iter().position(|b| b == quote)?;
            Some(&inner[..end])
        }
        _ => {
            let end = rest
                .iter()
                .position(|b| b.is_ascii_whitespace() || *b == b';')
                .unwrap_or(rest.len());
            Some(&rest[..end])
        }
    }
}

/// The spec's "get an XML encoding": `<?xml ... encoding="label" ...?>` at the
/// very start of the stream.
fn xml_declaration(window: &[u8]) -> Option<Declaration> {
    if !window.starts_with(b"<?xml") {
        return None;
    }
    let end = window.iter().position(|&b| b == b'>')?;
    let declaration = &window[..end];
    let mut position = find(declaration, b"encoding")? + b"encoding".len();
    while *declaration.get(position)? <= 0x20 {
        position += 1;
    }
    if *declaration.get(position)? != b'=' {
        return None;
    }
    position += 1;
    while *declaration.get(position)? <= 0x20 {
        position += 1;
    }
    let quote = *declaration.get(position)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    position += 1;
    let length = declaration[position..].iter().position(|&b| b == quote)?;
    let label = &declaration[position..position + length];
    // A label containing bytes at or below 0x20 is not a label.
    if label.iter().any(|&b| b <= 0x20) {
        return None;
    }
    let encoding = Encoding::for_label(label)?;
    Some(Declaration {
        label: String::from_utf8_lossy(label).into_owned(),
        encoding: remap_for_html(encoding),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{BIG5, GBK, SHIFT_JIS, WINDOWS_1251};

    #[test]
    fn meta_charset_is_found() {
        assert_eq!(prescan(b"<html><head><meta charset=\"gb2312\">"), Some(GBK));
        assert_eq!(prescan(b"<meta charset=big5>"), Some(BIG5));
        assert_eq!(prescan(b"<META CHARSET='Shift_JIS'>"), Some(SHIFT_JIS));
        assert_eq!(prescan(b"<meta/charset=utf-8>"), Some(UTF_8));
    }

    #[test]
    fn http_equiv_needs_the_pragma() {
        let with_pragma =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">";
        assert_eq!(prescan(with_pragma), Some(WINDOWS_1251));
        let content_first =
            b"<meta content='text/html; charset=\"koi8-r\"' http-equiv=content-type>";
        assert_eq!(prescan(content_first), Some(encoding_rs::KOI8_R));
        let without_pragma = b"<meta content=\"text/html; charset=windows-1251\">";
        assert_eq!(prescan(without_pragma), None);
    }

    #[test]
    fn comments_and_attribute_values_hide_declarations() {
        assert_eq!(
            prescan(b"<!-- <meta charset=big5> --><meta charset=gbk>"),
            Some(GBK)
        );
        assert_eq!(prescan(b"<!--><meta charset=big5>"), Some(BIG5));
        assert_eq!(
            prescan(b"<div title='<meta charset=big5>'><meta charset=gbk>"),
            Some(GBK)
        );
        assert_eq!(
            prescan(b"<script>x='<meta charset=big5>'</script>"),
            Some(BIG5)
        );
    }

    #[test]
    fn first_usable_meta_wins_and_duplicates_are_ignored() {
        assert_eq!(
            prescan(b"<meta charset=nonsense><meta charset=big5>"),
            Some(BIG5)
        );
        assert_eq!(prescan(b"<meta charset=big5 charset=gbk>"), Some(BIG5));
        assert_eq!(
            prescan(b"<meta name=x><meta charset=koi8-r>"),
            Some(encoding_rs::KOI8_R)
        );
    }

    #[test]
    fn utf16_in_meta_means_utf8_and_x_user_defined_means_windows_1252() {
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
        assert_eq!(
            prescan(b"<meta charset=x-user-defined>"),
            Some(WINDOWS_1252)
        );
    }

    #[test]
    fn declarations_after_1024_bytes_are_not_seen() {
        let mut page = vec![b' '; PRESCAN_LIMIT];
        page.extend_from_slice(b"<meta charset=big5>");
        assert_eq!(prescan(&page), None);
    }

    #[test]
    fn truncated_meta_is_no_declaration() {
        assert_eq!(prescan(b"<meta charset=\"big5"), None);
        assert_eq!(prescan(b"<meta charset=big5"), None);
    }

    #[test]
    fn xml_declaration_is_a_fallback() {
        assert_eq!(
            prescan(b"<?xml version=\"1.0\" encoding=\"EUC-JP\"?><rss>"),
            Some(encoding_rs::EUC_JP)
        );
        assert_eq!(
            prescan(b"<?xml version='1.0' encoding = 'gb2312' ?>"),
            Some(GBK)
        );
        assert_eq!(prescan(b"<?xml version=\"1.0\"?>"), None);
        assert_eq!(prescan(b" <?xml version=\"1.0\" encoding=\"big5\"?>"), None);
        assert_eq!(prescan(b"<?xml encoding=\"utf-16\"?>"), Some(UTF_8));
        assert_eq!(prescan(b"<\0?\0x\0m\0l\0"), Some(UTF_16LE));
    }

    #[test]
    fn any_bytes_are_safe() {
        for length in 0..64 {
            let bytes: Vec<u8> = (0..length).map(|i| (i * 37 % 256) as u8).collect();
            let _ = prescan(&bytes);
        }
        let _ = prescan(b"<meta");
        let _ = prescan(b"<meta ");
        let _ = prescan(b"<meta charset");
        let _ = prescan(b"<meta charset=");
        let _ = prescan(b"<meta content='charset=");
        let _ = prescan(b"<?xml encoding=");
        let _ = prescan(b"<a b c=");
    }
}
