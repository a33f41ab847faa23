//! HTML character references. `lol_html` hands text and attribute values over as they are in
//! the source, so `&amp;`, `&#8217;` and `&eacute;` are decoded here, by `htmlize` (the
//! WHATWG table of named references, built from its JSON at build time, and the WHATWG
//! rules): a legacy name without `;` is read as the longest such prefix (`&copy2019` is
//! `©2019`, `&notit;` is `¬it;`), numeric references in the C1 range read as windows-1252,
//! `&#0;` and values past Unicode as U+FFFD.

use std::borrow::Cow;

/// Decodes the character references of text (element content, JSON-LD strings); borrows
/// when there are none.
pub fn decode(s: &str) -> Cow<'_, str> {
    htmlize::unescape(s)
}

/// Decodes the character references of an attribute value: as [`decode`], except that a
/// legacy name without `;` followed by a letter, a digit or `=` stays as written
/// (`?a=1&copy=2` is a query, not `?a=1©=2`).
pub fn decode_attribute(s: &str) -> Cow<'_, str> {
    htmlize::unescape_attribute(s)
}

#[cfg(test)]
mod tests {
    use super::{decode, decode_attribute};
    use std::borrow::Cow;

    /// Each text decodes (by `decoder`) to the text given.
    fn assert_decodes(decoder: fn(&str) -> Cow<'_, str>, cases: &[(&str, &str)]) {
        for &(text, decoded) in cases {
            assert_eq!(decoder(text), decoded, "{text}");
        }
    }

    #[test]
    fn named_numeric_and_legacy() {
        assert_decodes(
            decode,
            &[
                ("a &amp; b", "a & b"),
                ("caf&eacute; &#8217;&#x2014;", "café \u{2019}\u{2014}"),
                ("&nbsp&copy; 2019", "\u{a0}© 2019"),
                ("&#150;", "\u{2013}"),
            ],
        );
    }

    #[test]
    fn legacy_names_by_longest_prefix() {
        assert_decodes(
            decode,
            &[
                ("&copy2019", "©2019"),
                ("&notit;", "¬it;"),
                // A full name wins over its legacy prefix.
                ("&notin;", "\u{2209}"),
                ("&timesb;", "\u{22a0}"),
            ],
        );
    }

    #[test]
    fn attribute_values_keep_legacy_names_before_letters_digits_and_equals() {
        assert_decodes(
            decode_attribute,
            &[
                ("/a?x=1&copy=2", "/a?x=1&copy=2"),
                ("&copy2019", "&copy2019"),
                ("&copy 2019", "© 2019"),
                ("/a?x=1&amp;y=2", "/a?x=1&y=2"),
            ],
        );
        assert_eq!(decode("/a?x=1&copy=2"), "/a?x=1©=2");
    }

    #[test]
    fn malformed_references_stay() {
        assert_decodes(
            decode,
            &[
                ("AT&T &; &#; &unknown; &", "AT&T &; &#; &unknown; &"),
                ("&#99999999999;", "\u{FFFD}"),
                ("&#0;", "\u{FFFD}"),
            ],
        );
    }
}
