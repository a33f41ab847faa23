//! The second tokenizer: the source between two start tags that `lol_html` reports, read by
//! byte offsets (text, end tags, comments, doctypes, raw-text content); see the map in
//! [`super`] for why.

use super::tags::tag_named;
use super::Scan;

impl Scan {
    /// Reads the source between the last start tag seen and byte `end` of `html`: text,
    /// and the end tags, comments and doctypes among it (`lol_html` reports start tags only,
    /// so the pass reads end tags itself, by the tokenizer's rules: in a raw-text element
    /// only its own end tag counts).
    pub(super) fn text_until(&mut self, html: &str, end: usize) {
        let mut pos = self.last_end;
        if end <= pos {
            return;
        }
        self.last_end = end;
        if html.get(pos..end).is_none() {
            return;
        }
        let bytes = html.as_bytes();
        // Positions are of `html`; every one the loop moves to is just past an ASCII byte.
        while let Some(rest) = html.get(pos..end).filter(|r| !r.is_empty()) {
            if let Some(raw) = self.raw_open {
                match find_end_tag(rest, raw) {
                    Some((at, after)) => {
                        self.text_piece(&rest[..at]);
                        self.pop();
                        pos += after;
                    }
                    None => {
                        self.text_piece(rest);
                        return;
                    }
                }
                continue;
            }
            let Some(at) = next_markup(bytes, pos, end) else {
                self.text_piece(rest);
                return;
            };
            self.text_piece(&rest[..at - pos]);
            let markup = &html[at..end];
            pos = if let Some(comment) = markup.strip_prefix("<!--") {
                comment.find("-->").map_or(end, |e| at + e + 7)
            } else {
                if let Some(name) = markup.strip_prefix("</") {
                    let (tag, hash, _) = tag_named(name);
                    self.end_tag(tag, hash);
                }
                find_before(b'>', bytes, at, end).map_or(end, |e| e + 1)
            };
        }
    }
}

/// Where the next markup starts in `bytes[from..limit]`: a `<` before a letter, `/`, `!`
/// or `?`. A `<` that starts no markup (`a < b`) is text, and so is one at `limit - 1`.
fn next_markup(bytes: &[u8], mut from: usize, limit: usize) -> Option<usize> {
    while let Some(at) = find_before(b'<', bytes, from, limit) {
        let next = if at + 1 < limit { bytes[at + 1] } else { b' ' };
        if next.is_ascii_alphabetic() || matches!(next, b'/' | b'!' | b'?') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The end tag `</name>` of a raw-text element in `s` (any case): where it starts and
/// where it ends.
fn find_end_tag(s: &str, name: &str) -> Option<(usize, usize)> {
    // Scripts run to hundreds of kilobytes: a vectorised search for `</` (the automaton's
    // prefilter), not `str::find`'s two-way search.
    static END_TAG_OPEN: std::sync::OnceLock<aho_corasick::AhoCorasick> =
        std::sync::OnceLock::new();
    let opener = END_TAG_OPEN
        .get_or_init(|| aho_corasick::AhoCorasick::new(["</"]).expect("static pattern"));
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = opener.find(&bytes[from..]).map(|m| m.start()) {
        let at = from + i;
        let after_name = at + 2 + name.len();
        let matches = bytes
            .get(at + 2..after_name)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()))
            && bytes
                .get(after_name)
                .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'));
        if matches {
            let end = s[after_name..]
                .find('>')
                .map_or(s.len(), |e| after_name + e + 1);
            return Some((at, end));
        }
        from = at + 2;
    }
    None
}

/// The first `needle` in `bytes[from..limit]`, as an index of `bytes`. The search reads
/// past `limit`, up to 64 bytes from `from`, where `bytes` has them: most searches of the
/// pass end within a few bytes (the text between two tags, an attribute value), and
/// `memchr` takes its vectorised path only on a haystack of 32 bytes or more (on a shorter
/// one it is several times slower).
#[inline]
pub(super) fn find_before(needle: u8, bytes: &[u8], from: usize, limit: usize) -> Option<usize> {
    let stop = limit.max(from + 64).min(bytes.len());
    let found = from + memchr::memchr(needle, bytes.get(from..stop)?)?;
    (found < limit).then_some(found)
}

#[cfg(test)]
mod tests {
    use crate::scan::tests::texts;
    use crate::scan::{scan, Tag};

    #[test]
    fn text_between_tags_skips_comments_and_stray_end_tags() {
        let p = scan("<!doctype html><body><p>a &amp; b<!-- <p>hidden</p> --> c</span> 1 < 2</p>");
        assert_eq!(texts(&p, Tag::P), ["a & b c 1 < 2"]);
        let p = scan(
            "<div>x<!--y-->z</q>w<?pi?>v<script>if (a</b) document.write('</div>')</script>u</div>",
        );
        assert_eq!(texts(&p, Tag::Div), ["xzwvu"]);
        // End tags close what they name; a stray inline end tag stops at a block.
        let p = scan("<div><b>bold</B> <i>it<p>para</i> more</p></span>after</div>");
        assert_eq!(texts(&p, Tag::P), ["para more"]);
        assert_eq!(texts(&p, Tag::Div), ["bold it\npara more\nafter"]);
    }
}
