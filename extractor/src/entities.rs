//! HTML character references. `lol_html` hands text and attribute values over as they are in
//! the source, so `&amp;`, `&#8217;` and `&eacute;` are decoded here.

use std::borrow::Cow;

use crate::entity_table::NAMED;

/// The longest name in the WHATWG table is 32 bytes (`&CounterClockwiseContourIntegral;`).
const MAX_NAME_LEN: usize = 33;

/// Decodes the character references in `s`; borrows when there are none.
pub fn decode(s: &str) -> Cow<'_, str> {
    if memchr::memchr(b'&', s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        match reference(after) {
            Some((consumed, Replacement::Char(c))) => {
                out.push(c);
                rest = &after[consumed..];
            }
            Some((consumed, Replacement::Str(r))) => {
                out.push_str(r);
                rest = &after[consumed..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

enum Replacement {
    Char(char),
    Str(&'static str),
}

/// Parses the reference that follows an `&`: returns the bytes it takes and what it stands for.
fn reference(after: &str) -> Option<(usize, Replacement)> {
    let bytes = after.as_bytes();
    if bytes.first() == Some(&b'#') {
        let (digits_from, radix) = match bytes.get(1) {
            Some(b'x') | Some(b'X') => (2, 16),
            _ => (1, 10),
        };
        let digits = bytes[digits_from..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit() && (radix == 16 || b.is_ascii_digit()))
            .count();
        if digits == 0 {
            return None;
        }
        let end = digits_from + digits;
        let value = u32::from_str_radix(after.get(digits_from..end)?, radix).unwrap_or(0xFFFD);
        let consumed = if bytes.get(end) == Some(&b';') {
            end + 1
        } else {
            end
        };
        return Some((consumed, Replacement::Char(numeric(value))));
    }
    let name_len = bytes
        .iter()
        .take(MAX_NAME_LEN)
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    if name_len == 0 {
        return None;
    }
    if bytes.get(name_len) == Some(&b';') {
        if let Some(r) = lookup(&after[..=name_len]) {
            return Some((name_len + 1, Replacement::Str(r)));
        }
    }
    // Legacy references without `;` (`&nbsp`, `&copy`): the table lists them without it.
    lookup(&after[..name_len]).map(|r| (name_len, Replacement::Str(r)))
}

fn lookup(name: &str) -> Option<&'static str> {
    NAMED
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| NAMED[i].1)
}

/// Numeric references: the WHATWG rules for the C1 range (windows-1252) and invalid values.
fn numeric(value: u32) -> char {
    const C1: [char; 32] = [
        '\u{20AC}', '\u{81}', '\u{201A}', '\u{192}', '\u{201E}', '\u{2026}', '\u{2020}',
        '\u{2021}', '\u{2C6}', '\u{2030}', '\u{160}', '\u{2039}', '\u{152}', '\u{8D}', '\u{17D}',
        '\u{8F}', '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}',
        '\u{2014}', '\u{2DC}', '\u{2122}', '\u{161}', '\u{203A}', '\u{153}', '\u{9D}', '\u{17E}',
        '\u{178}',
    ];
    match value {
        0 => '\u{FFFD}',
        0x80..=0x9F => C1[(value - 0x80) as usize],
        _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn named_numeric_and_legacy() {
        assert_eq!(decode("a &amp; b"), "a & b");
        assert_eq!(
            decode("caf&eacute; &#8217;&#x2014;"),
            "café \u{2019}\u{2014}"
        );
        assert_eq!(decode("&nbsp&copy; 2019"), "\u{a0}© 2019");
        assert_eq!(decode("&#150;"), "\u{2013}");
    }

    #[test]
    fn malformed_references_stay() {
        assert_eq!(decode("AT&T &; &#; &unknown; &"), "AT&T &; &#; &unknown; &");
        assert_eq!(decode("&#99999999999;"), "\u{FFFD}");
    }
}
