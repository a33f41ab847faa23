//! The HTTP signal: the `charset` parameter of a `Content-Type` value, and
//! whether a label carries information at all.

use encoding_rs::{Encoding, WINDOWS_1252};

/// The `charset` parameter of a `Content-Type` header value, unquoted and
/// trimmed, e.g. `gb2312` for `text/html; charset="gb2312"`. `None` when
/// there is no such parameter or it is empty.
pub fn header_charset(content_type: &str) -> Option<&str> {
    let mut parameters = content_type.split(';');
    parameters.next(); // the MIME type itself
    for parameter in parameters {
        let Some((name, value)) = parameter.split_once('=') else {
            continue;
        };
        if !name.trim().eq_ignore_ascii_case("charset") {
            continue;
        }
        let value = value.trim();
        let value = match value.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or(quoted),
            None => value,
        };
        let value = value.trim();
        return (!value.is_empty()).then_some(value);
    }
    None
}

/// Servers and frameworks send `ISO-8859-1` (and its WHATWG twin
/// windows-1252) by default, whatever the bytes are: such a header is only a
/// weak vote, used when nothing else speaks.
pub fn is_default_label(encoding: &'static Encoding) -> bool {
    encoding == WINDOWS_1252
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_parameter_is_extracted() {
        assert_eq!(header_charset("text/html; charset=UTF-8"), Some("UTF-8"));
        assert_eq!(
            header_charset("text/html;charset=\"gb2312\""),
            Some("gb2312")
        );
        assert_eq!(
            header_charset("text/html; Charset = big5 ; q=1"),
            Some("big5")
        );
        assert_eq!(
            header_charset("text/html; format=flowed; charset=koi8-r"),
            Some("koi8-r")
        );
    }

    #[test]
    fn missing_or_empty_charset_is_none() {
        assert_eq!(header_charset("text/html"), None);
        assert_eq!(header_charset("text/html; charset="), None);
        assert_eq!(header_charset("text/html; charset=\"\""), None);
        assert_eq!(header_charset(""), None);
        assert_eq!(header_charset("charset=utf-8"), None);
    }
}
