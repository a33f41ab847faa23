//! The visible text: whitespace collapsed, entities decoded, characters and punctuation
//! counted per element, blocks on lines of their own; and where other text goes (title,
//! JSON-LD, nowhere).

use super::{
    flag, truncate, Event, Scan, Tag, MAX_JSON_LD_BYTES, MAX_SHORT_BYTES, MAX_TEXT_BYTES,
    MAX_TEXT_NODE_BYTES,
};
use crate::entities;

impl Scan {
    /// Separates the text of blocks in `Page::text` (no event refers to the separator).
    /// A block whose text ends in spaces (`吉林省人民政府　　</div>`) has its collapsed space
    /// turned into the line break, in place, so the next block still starts a line.
    pub(super) fn block_boundary(&mut self, tag: Tag) {
        if !tag.is_block() || self.page.text.is_empty() {
            return;
        }
        if !self.space_before && self.page.text.len() < MAX_TEXT_BYTES {
            self.page.text.push('\n');
            self.space_before = true;
        } else if self.space_before && self.page.text.ends_with(' ') {
            self.page.text.pop();
            self.page.text.push('\n');
        }
    }

    /// Text of the innermost open element: kept as visible text, as the title, as JSON-LD,
    /// or dropped.
    pub(super) fn text_piece(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let text = truncate(text, MAX_TEXT_NODE_BYTES);
        let top = *self.stack.last().unwrap_or(&0);
        let flags = self.page.nodes[top as usize].flags;
        if flags & flag::JSON_LD != 0 {
            let total: usize = self.page.json_ld.iter().map(String::len).sum();
            if total + text.len() <= MAX_JSON_LD_BYTES {
                self.page.json_ld.push(text.to_string());
            }
        } else if self.in_title && self.page.nodes[top as usize].tag == Tag::Title {
            if self.page.title.len() < MAX_SHORT_BYTES {
                self.page.title.push_str(&entities::decode(text));
            }
        } else if flags & flag::SKIPPED == 0
            && flags & (flag::IN_SVG | flag::SVG_WORDS) != flag::IN_SVG
            && self.raw_open.is_none()
        {
            self.push_visible(text, top, flags & flag::PRE != 0);
        }
    }

    pub(super) fn push_visible(&mut self, raw: &str, node: u32, pre: bool) {
        if self.page.text.len() >= MAX_TEXT_BYTES {
            return;
        }
        if !pre && raw.bytes().all(|b| BYTE_CLASS[b as usize] == SPACE) {
            // Whitespace between tags (the commonest text): the one space it collapses to.
            if !self.space_before {
                let start = self.page.text.len() as u32;
                self.page.text.push(' ');
                self.space_before = true;
                self.page.events.push(Event::Text(start, start + 1));
            }
            return;
        }
        let decoded = entities::decode(raw);
        let start = self.page.text.len();
        let mut chars = 0u32;
        let mut punct = 0u32;
        // Runs of text are copied whole; other whitespace collapses to one space.
        let mut run = 0;
        let bytes = decoded.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            let (class, len) = if b < 0x80 {
                (BYTE_CLASS[b as usize], 1)
            } else {
                let c = decoded[i..].chars().next().unwrap_or(' ');
                let class = if c.is_whitespace() {
                    SPACE
                } else if is_punct(c) {
                    PUNCT
                } else {
                    WORD
                };
                (class, c.len_utf8())
            };
            if class != SPACE {
                chars += 1;
                punct += u32::from(class == PUNCT);
                // The ASCII letters and punctuation that follow, by the table alone.
                i += len;
                while let Some(&next) = bytes.get(i) {
                    let class = BYTE_CLASS[next as usize];
                    if class > PUNCT {
                        break;
                    }
                    chars += 1;
                    punct += u32::from(class);
                    i += 1;
                }
                continue;
            } else if b == b' '
                && i > run
                && bytes
                    .get(i + 1)
                    .is_some_and(|&next| BYTE_CLASS[next as usize] <= PUNCT)
            {
                // One space between two words is what collapsing writes: it stays in the run.
            } else {
                if run < i {
                    self.page.text.push_str(&decoded[run..i]);
                    self.space_before = false;
                }
                run = i + len;
                if pre && b == b'\n' {
                    self.page.text.push('\n');
                    self.space_before = true;
                } else if !self.space_before {
                    self.page.text.push(' ');
                    self.space_before = true;
                }
                if !pre {
                    // The ASCII whitespace that follows collapses into this space.
                    while bytes
                        .get(run)
                        .is_some_and(|&next| BYTE_CLASS[next as usize] == SPACE)
                    {
                        run += 1;
                    }
                    i = run;
                    continue;
                }
            }
            i += len;
        }
        if run < decoded.len() {
            self.page.text.push_str(&decoded[run..]);
            self.space_before = false;
        }
        let end = self.page.text.len();
        if end > start {
            self.page.events.push(Event::Text(start as u32, end as u32));
            let n = &mut self.page.nodes[node as usize];
            n.chars = n.chars.saturating_add(chars);
            n.punct = n.punct.saturating_add(punct);
        }
    }
}

/// [`BYTE_CLASS`] of a character that is neither whitespace nor punctuation.
const WORD: u8 = 0;
/// [`BYTE_CLASS`] of punctuation ([`is_punct`]). Its value is 1: a run of `WORD` and `PUNCT`
/// bytes counts its punctuation by adding the classes up.
const PUNCT: u8 = 1;
/// [`BYTE_CLASS`] of whitespace (`char::is_whitespace`).
const SPACE: u8 = 2;
/// [`BYTE_CLASS`] of the bytes of non-ASCII characters: the character is decoded to be read.
const NON_ASCII: u8 = 3;

/// [`WORD`], [`PUNCT`], [`SPACE`] or [`NON_ASCII`] of each byte: the text loop's table.
const BYTE_CLASS: [u8; 256] = {
    let mut table = [NON_ASCII; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8 as char;
        table[b] = if c.is_whitespace() {
            SPACE
        } else if is_punct(c) {
            PUNCT
        } else {
            WORD
        };
        b += 1;
    }
    table
};

/// Sentence punctuation, ASCII and CJK: the "symbols" of text-and-symbol density.
pub const fn is_punct(c: char) -> bool {
    matches!(
        c,
        '.' | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | '"'
            | '\''
            | '('
            | ')'
            | '，'
            | '。'
            | '、'
            | '；'
            | '：'
            | '！'
            | '？'
            | '“'
            | '”'
            | '‘'
            | '’'
            | '（'
            | '）'
            | '《'
            | '》'
            | '「'
            | '」'
            | '…'
            | '—'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;
    use crate::scan::tests::texts;

    #[test]
    fn skipped_text_and_head() {
        let p = scan(
            "<html lang=en><head><title>T &amp; U</title><meta property='og:title' content='OG'>\
             <script type='application/ld+json'>{\"a\":1}</script><style>x{}</style></head>\
             <body>hello <script>var x;</script>world</body></html>",
        );
        assert_eq!(p.title, "T & U");
        assert_eq!(p.lang.as_deref(), Some("en"));
        assert_eq!(p.metas, [("og:title".to_string(), "OG".to_string())]);
        assert_eq!(p.json_ld, ["{\"a\":1}"]);
        assert_eq!(p.text.trim(), "hello world");
    }

    #[test]
    fn blocks_ending_in_spaces_still_end_their_line() {
        let p = scan(
            "<body><div>　　吉林省人民政府　　　　</div><div>　　2022年1月27日　　</div><p>x</p>",
        );
        assert_eq!(p.text.trim(), "吉林省人民政府\n2022年1月27日\nx");
        // Text events keep their offsets: each block's text reads back whole.
        assert_eq!(texts(&p, Tag::Div), ["吉林省人民政府", "2022年1月27日"]);
    }

    /// Visible text as first written, a char at a time: what `push_visible` must write.
    /// Returns the non-space and punctuation characters of `raw`.
    fn push_visible_reference(
        text: &mut String,
        space_before: &mut bool,
        raw: &str,
        pre: bool,
    ) -> (u32, u32) {
        let decoded = entities::decode(raw);
        let (mut chars, mut punct, mut run) = (0, 0, 0);
        for (i, c) in decoded.char_indices() {
            if c.is_whitespace() {
                if run < i {
                    text.push_str(&decoded[run..i]);
                    *space_before = false;
                }
                run = i + c.len_utf8();
                if pre && c == '\n' {
                    text.push('\n');
                    *space_before = true;
                } else if !*space_before {
                    text.push(' ');
                    *space_before = true;
                }
            } else {
                chars += 1;
                punct += u32::from(is_punct(c));
            }
        }
        if run < decoded.len() {
            text.push_str(&decoded[run..]);
            *space_before = false;
        }
        (chars, punct)
    }

    #[test]
    fn visible_text_collapses_as_char_by_char() {
        const PIECES: &[&str] = &[
            "word", "a", " ", "  ", "\n", "\t", "\r\n  ", "\u{a0}", "\u{3000}", "中文", "，", "。",
            ".", ",", "!", "\"", "'", "(", "&amp;", "&nbsp;", "&#x20;", "é", "\u{b}", "\u{1c}",
        ];
        let mut next = crate::test_rng::sequence();
        for _ in 0..2_000 {
            let mut s = Scan::default();
            s.page.nodes.push(scan("").nodes[0].clone());
            let (mut text, mut space_before) = (String::new(), false);
            let (mut chars, mut punct) = (0, 0);
            for _ in 0..next() % 6 + 1 {
                let raw = crate::test_rng::string(&mut next, PIECES, 8);
                if raw.is_empty() {
                    continue;
                }
                let pre = next().is_multiple_of(4);
                let before = text.len();
                let (c, p) = push_visible_reference(&mut text, &mut space_before, &raw, pre);
                chars += c;
                punct += p;
                let events = s.page.events.len();
                s.push_visible(&raw, 0, pre);
                assert_eq!(s.page.text, text, "{raw:?} pre {pre}");
                assert_eq!(s.space_before, space_before, "{raw:?} pre {pre}");
                let event =
                    (text.len() > before).then_some(Event::Text(before as u32, text.len() as u32));
                assert_eq!(s.page.events.get(events).copied(), event, "{raw:?}");
            }
            assert_eq!(
                (s.page.nodes[0].chars, s.page.nodes[0].punct),
                (chars, punct)
            );
        }
    }
}
