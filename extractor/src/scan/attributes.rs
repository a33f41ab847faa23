//! A start tag's attributes read from its source, and the attributes the pass reads.

use super::source::find_before;

/// The attributes of a start tag, read from its source (`<name attr=value ...>`) by the
/// HTML tokenizer's rules: names end at whitespace, `/`, `>` or `=`; values are quoted
/// (with `"` or `'`) or end at whitespace or `>`; a `/` between attributes is skipped. Yields
/// each attribute's name (as written) and raw value (character references not decoded).
pub(super) struct RawAttributes<'a> {
    html: &'a str,
    /// Where to read on (in `html`): just past the previous attribute.
    pos: usize,
    /// Just past the tag's `>`.
    end: usize,
}

/// [`TAG_BYTE`] bit: whitespace (the tokenizer's: tab, LF, FF, CR, space).
const T_SPACE: u8 = 1;
/// [`TAG_BYTE`] bit: `/`.
const T_SLASH: u8 = 2;
/// [`TAG_BYTE`] bit: `>`.
const T_GT: u8 = 4;
/// [`TAG_BYTE`] bit: `=`.
const T_EQ: u8 = 8;

/// What each byte is to the attribute reader: the loops test one table entry per byte.
const TAG_BYTE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'\t' as usize] = T_SPACE;
    table[b'\n' as usize] = T_SPACE;
    table[0x0c] = T_SPACE;
    table[b'\r' as usize] = T_SPACE;
    table[b' ' as usize] = T_SPACE;
    table[b'/' as usize] = T_SLASH;
    table[b'>' as usize] = T_GT;
    table[b'=' as usize] = T_EQ;
    table
};

/// The first index from `i` on whose byte has none of the `stop` bits of [`TAG_BYTE`]
/// (`skip`), or has one of them (`!skip`); `bytes.len()` if none.
#[inline(always)]
fn tag_scan(bytes: &[u8], mut i: usize, stop: u8, skip: bool) -> usize {
    while i < bytes.len() && ((TAG_BYTE[bytes[i] as usize] & stop != 0) == skip) {
        i += 1;
    }
    i
}

impl<'a> RawAttributes<'a> {
    /// The attributes of the start tag at `tag` of `html` (from its `<` to its `>`).
    pub(super) fn of(html: &'a str, tag: std::ops::Range<usize>) -> Self {
        let end = tag.end.min(html.len());
        let bytes = html.as_bytes().get(..end).unwrap_or_default();
        // The tag name runs from after `<` to whitespace, `/` or `>`.
        let pos = tag_scan(bytes, tag.start + 1, T_SPACE | T_SLASH | T_GT, false);
        RawAttributes { html, pos, end }
    }
}

impl<'a> Iterator for RawAttributes<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let all = self.html.as_bytes();
        let bytes = all.get(..self.end).unwrap_or_default();
        let mut i = tag_scan(bytes, self.pos, T_SPACE | T_SLASH, true);
        if i >= bytes.len() || bytes[i] == b'>' {
            self.pos = bytes.len();
            return None;
        }
        // A name may start with `=` (a parse error the tokenizer keeps in the name).
        let name_start = i;
        i = tag_scan(bytes, i + 1, T_SPACE | T_SLASH | T_GT | T_EQ, false);
        let name = self.html.get(name_start..i).unwrap_or("");
        i = tag_scan(bytes, i, T_SPACE, true);
        let mut value = "";
        if i < bytes.len() && bytes[i] == b'=' {
            i = tag_scan(bytes, i + 1, T_SPACE, true);
            match bytes.get(i) {
                Some(&quote) if quote == b'"' || quote == b'\'' => {
                    let start = i + 1;
                    let end = find_before(quote, all, start, self.end).unwrap_or(self.end);
                    value = self.html.get(start..end).unwrap_or("");
                    i = end + 1;
                }
                Some(&b) if b != b'>' => {
                    let start = i;
                    i = tag_scan(bytes, i, T_SPACE | T_GT, false);
                    value = self.html.get(start..i).unwrap_or("");
                }
                _ => {}
            }
        }
        self.pos = i;
        Some((name, value))
    }
}

/// The attributes the pass reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Attr {
    Id,
    Class,
    Style,
    Hidden,
    AriaHidden,
    Role,
    Itemprop,
    Rel,
    Href,
    /// `src`, or where lazy loaders put the image (`data-src`, `data-original`, ...).
    ImageSource,
    /// `name` or `property` (of `<meta>`).
    MetaKey,
    Content,
    Type,
    Lang,
    Datetime,
}

impl Attr {
    /// The attribute an attribute name (any case) stands for, if the pass reads it.
    pub(super) fn named(name: &str) -> Option<Attr> {
        let bytes = name.as_bytes();
        // Names are nearly always written in lowercase: copied only when they are not.
        let mut buffer = [0u8; 16];
        let lower = if bytes.iter().any(u8::is_ascii_uppercase) {
            // Longer names are none of those below.
            let lower = buffer.get_mut(..bytes.len())?;
            lower.copy_from_slice(bytes);
            lower.make_ascii_lowercase();
            &*lower
        } else {
            bytes
        };
        Some(match lower {
            b"id" => Attr::Id,
            b"class" => Attr::Class,
            b"style" => Attr::Style,
            b"hidden" => Attr::Hidden,
            b"aria-hidden" => Attr::AriaHidden,
            b"role" => Attr::Role,
            b"itemprop" => Attr::Itemprop,
            b"rel" => Attr::Rel,
            b"href" => Attr::Href,
            b"src" | b"data-src" | b"data-original" | b"data-lazy-src" | b"data-url" => {
                Attr::ImageSource
            }
            b"name" | b"property" => Attr::MetaKey,
            b"content" => Attr::Content,
            b"type" => Attr::Type,
            b"lang" => Attr::Lang,
            b"datetime" => Attr::Datetime,
            _ => return None,
        })
    }
}

/// `display:none` or `visibility:hidden` in a `style` value (any case and spacing), read
/// without allocating.
pub(super) fn has_hiding_style(style: &str) -> bool {
    let bytes = style.as_bytes();
    let declares = |property: &[u8], value: &[u8]| {
        let mut from = 0;
        while let Some(i) = bytes[from..]
            .windows(property.len())
            .position(|w| w.eq_ignore_ascii_case(property))
        {
            let mut k = from + i + property.len();
            let skip_space = |k: &mut usize| {
                while bytes.get(*k).is_some_and(u8::is_ascii_whitespace) {
                    *k += 1;
                }
            };
            skip_space(&mut k);
            if bytes.get(k) == Some(&b':') {
                k += 1;
                skip_space(&mut k);
                if bytes
                    .get(k..k + value.len())
                    .is_some_and(|v| v.eq_ignore_ascii_case(value))
                {
                    return true;
                }
            }
            from = from + i + 1;
        }
        false
    };
    style.contains(':') && (declares(b"display", b"none") || declares(b"visibility", b"hidden"))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use lol_html::html_content::Element;
    use lol_html::{element, HtmlRewriter, Settings};

    use super::*;

    /// The attributes `lol_html` itself reads from each start tag of `html`, by their
    /// source: what [`RawAttributes`] must agree with.
    fn lol_html_attributes(html: &str) -> Vec<Vec<(String, String)>> {
        let out = Rc::new(RefCell::new(Vec::new()));
        let sink = out.clone();
        let settings = Settings::new()
            .with_strict(false)
            .append_element_content_handler(element!("*", move |el: &mut Element| {
                let source = |l: Option<lol_html::html_content::SourceLocation>| {
                    l.and_then(|l| html.get(l.bytes()))
                        .unwrap_or("")
                        .to_string()
                };
                sink.borrow_mut().push(
                    el.attributes()
                        .iter()
                        .map(|a| {
                            (
                                source(a.name_source_location()),
                                source(a.value_source_location()),
                            )
                        })
                        .collect::<Vec<_>>(),
                );
                Ok(())
            }));
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        if rewriter.write(html.as_bytes()).is_ok() {
            let _ = rewriter.end();
        }
        let found = out.borrow().clone();
        found
    }

    #[test]
    fn attributes_read_as_lol_html_reads_them() {
        let names = [
            "class", "ID", "data-src", "=x", "a\"b", "x'", "hidden", "/", "href",
        ];
        let values = [
            "",
            "v",
            "two words",
            "a>b",
            "it's",
            "say \"hi\"",
            "/path/",
            "x=y",
            "&amp;",
        ];
        let spaces = ["", " ", "  ", "\n", "\t", "/", " / "];
        let mut next = crate::test_rng::sequence();
        let mut pick = |n: usize| (next() % n as u64) as usize;
        for _ in 0..3_000 {
            let mut tag = String::from(["<div", "<IMG", "<a", "<p"][pick(4)]);
            for _ in 0..pick(4) {
                tag.push_str([" ", "\n", "  ", "/"][pick(4)]);
                tag.push_str(names[pick(names.len())]);
                let value = values[pick(values.len())];
                match pick(5) {
                    0 => {}
                    1 => tag.push_str(&format!(
                        "{}={}",
                        spaces[pick(2)],
                        value.replace(['"', '\'', '>', ' ', '\n'], "")
                    )),
                    2 => tag.push_str(&format!(
                        "={}\"{}\"",
                        spaces[pick(spaces.len() - 2)],
                        value.replace('"', "")
                    )),
                    3 => tag.push_str(&format!(" = '{}'", value.replace('\'', ""))),
                    _ => tag.push_str(&format!("=\"{}\"", value.replace('"', ""))),
                }
            }
            tag.push_str(spaces[pick(spaces.len())]);
            tag.push('>');
            let html = format!("{tag}text");
            let theirs = lol_html_attributes(&html);
            let theirs = theirs.first().expect("every generated tag is an element");
            let end = html.find("text").unwrap_or(html.len());
            let ours: Vec<(String, String)> = RawAttributes::of(&html, 0..end)
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            assert_eq!(&ours, theirs, "{html:?}");
        }
    }

    #[test]
    fn attribute_names_any_case() {
        assert_eq!(Attr::named("class"), Some(Attr::Class));
        assert_eq!(Attr::named("CLASS"), Some(Attr::Class));
        assert_eq!(Attr::named("Data-Lazy-Src"), Some(Attr::ImageSource));
        assert_eq!(Attr::named("property"), Some(Attr::MetaKey));
        assert_eq!(Attr::named("data-analytics-TRACKING-ID"), None);
        assert_eq!(Attr::named("classes"), None);
        assert_eq!(Attr::named(""), None);
    }

    #[test]
    fn hiding_styles() {
        assert!(has_hiding_style("color:red; DISPLAY : None"));
        assert!(has_hiding_style("visibility:hidden"));
        assert!(!has_hiding_style("display:block; visibility: visible"));
        assert!(!has_hiding_style("displaynone"));
    }
}
