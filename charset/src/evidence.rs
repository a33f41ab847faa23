//! What the bytes themselves say, cheaply: does an encoding decode them
//! without errors, do they look like UTF-16 without a BOM, do they hold
//! ISO-2022-JP escapes, and which multi-byte encodings could also read them.

use encoding_rs::{
    DecoderResult, Encoding, BIG5, EUC_JP, EUC_KR, GB18030, GBK, ISO_2022_JP, SHIFT_JIS, UTF_16BE,
    UTF_16LE, UTF_8,
};

/// How many leading bytes the UTF-16 sniff looks at: enough markup to see
/// the pattern of zero bytes that ASCII takes in UTF-16.
const UTF16_SNIFF_WINDOW: usize = 4096;

/// How many bytes the rival check decodes: a multi-byte lie shows itself
/// long before this, and bounding it keeps the no-detector path cheap.
pub const RIVAL_CHECK_WINDOW: usize = 64 * 1024;

/// The legacy multi-byte encodings a page may be mislabelled between.
pub const CJK_ENCODINGS: [&Encoding; 5] = [GBK, BIG5, SHIFT_JIS, EUC_JP, EUC_KR];

/// True if `encoding` decodes all of `bytes` with no malformed sequence
/// (BOM not treated specially). Never allocates more than a stack buffer.
pub fn decodes_cleanly(encoding: &'static Encoding, bytes: &[u8]) -> bool {
    decodes_cleanly_prefix(encoding, bytes, true)
}

/// Like [`decodes_cleanly`], for a prefix: when `complete` is false a
/// sequence cut by the end of the prefix is not an error.
pub fn decodes_cleanly_prefix(encoding: &'static Encoding, bytes: &[u8], complete: bool) -> bool {
    if encoding == UTF_8 {
        let valid = Encoding::utf8_valid_up_to(bytes);
        return valid == bytes.len()
            || (!complete && bytes.len() - valid < 4 && is_utf8_cut(&bytes[valid..]));
    }
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut buffer = [0u8; 8192];
    let mut input = bytes;
    loop {
        let (result, read, _) =
            decoder.decode_to_utf8_without_replacement(input, &mut buffer, complete);
        match result {
            DecoderResult::InputEmpty => return true,
            DecoderResult::OutputFull => input = &input[read..],
            DecoderResult::Malformed(_, _) => return false,
        }
    }
}

/// How many malformed sequences `encoding` meets in `bytes`, and how many
/// non-ASCII characters it decodes around them: a page saved with a few
/// broken bytes (a character cut in half by an editor) is not a page in
/// another encoding. Never allocates more than a stack buffer.
pub fn malformed_sequences(encoding: &'static Encoding, bytes: &[u8]) -> (usize, usize) {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut buffer = [0u8; 8192];
    let mut input = bytes;
    let (mut malformed, mut non_ascii) = (0usize, 0usize);
    loop {
        let (result, read, written) =
            decoder.decode_to_utf8_without_replacement(input, &mut buffer, true);
        // Every non-ASCII character in UTF-8 has exactly one lead byte.
        non_ascii += buffer[..written].iter().filter(|&&b| b >= 0xC0).count();
        input = &input[read..];
        match result {
            DecoderResult::InputEmpty => return (malformed, non_ascii),
            DecoderResult::OutputFull => {}
            DecoderResult::Malformed(_, _) => malformed += 1,
        }
    }
}

/// The tail of a prefix is the start of a UTF-8 sequence cut short.
fn is_utf8_cut(tail: &[u8]) -> bool {
    let mut decoder = UTF_8.new_decoder_without_bom_handling();
    let mut buffer = [0u8; 16];
    let (result, _, _) = decoder.decode_to_utf8_without_replacement(tail, &mut buffer, false);
    matches!(result, DecoderResult::InputEmpty)
}

/// Two encodings that give the same text for any bytes (the WHATWG GBK
/// decoder is the gb18030 decoder), so choosing either is right.
pub fn same_decoder(a: &'static Encoding, b: &'static Encoding) -> bool {
    a == b || (is_gbk_family(a) && is_gbk_family(b))
}

fn is_gbk_family(encoding: &'static Encoding) -> bool {
    encoding == GBK || encoding == GB18030
}

/// Encodings with multi-byte sequences, which random or foreign bytes
/// usually fail to decode: a declaration of one of these can be refuted by
/// a decode check alone.
pub fn is_multibyte(encoding: &'static Encoding) -> bool {
    !encoding.is_single_byte()
        && encoding != encoding_rs::REPLACEMENT
        && encoding != encoding_rs::X_USER_DEFINED
}

/// UTF-16 without a BOM, from the pattern of zero bytes that ASCII markup
/// leaves: `<\0h\0` is little-endian, `\0<\0h` big-endian.
pub fn sniff_utf16(bytes: &[u8]) -> Option<&'static Encoding> {
    let window = &bytes[..bytes.len().min(UTF16_SNIFF_WINDOW)];
    if !window.contains(&0) {
        return None;
    }
    let pairs = window.len() / 2;
    if pairs < 4 {
        return None;
    }
    let (mut even_zeros, mut odd_zeros) = (0usize, 0usize);
    for pair in window.chunks_exact(2) {
        even_zeros += usize::from(pair[0] == 0);
        odd_zeros += usize::from(pair[1] == 0);
    }
    // At least a fifth of the code units are ASCII, and the zeros sit on one side.
    let candidate = if odd_zeros * 5 >= pairs && even_zeros * 8 <= odd_zeros {
        UTF_16LE
    } else if even_zeros * 5 >= pairs && odd_zeros * 8 <= even_zeros {
        UTF_16BE
    } else {
        return None;
    };
    decodes_cleanly_prefix(candidate, window, window.len() == bytes.len()).then_some(candidate)
}

/// UTF-16 without a BOM and without ASCII (so without zero bytes): the
/// bytes decode cleanly as UTF-16 in one byte order, into code units that are
/// nearly all CJK ideographs, kana, CJK or full-width punctuation, or ASCII.
/// Legacy bytes read as UTF-16 scatter over the whole BMP instead (ASCII
/// spaces and capitals, and lead/trail pairs, land outside those blocks).
pub fn sniff_utf16_text(bytes: &[u8]) -> Option<&'static Encoding> {
    let window = &bytes[..bytes.len().min(UTF16_SNIFF_WINDOW) & !1];
    if window.len() < 32 || window.iter().filter(|&&b| b >= 0x80).count() * 4 < window.len() {
        return None;
    }
    let plausible_share = |units: &mut dyn Iterator<Item = u16>| {
        let (mut total, mut plausible) = (0usize, 0usize);
        for unit in units {
            total += 1;
            plausible += usize::from(matches!(unit,
                0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x3000..=0x30FF | 0x4E00..=0x9FFF | 0xFF00..=0xFFEF));
        }
        plausible * 100 >= total * 95
    };
    let complete = window.len() == bytes.len();
    [UTF_16LE, UTF_16BE].into_iter().find(|&encoding| {
        let mut units = window.chunks_exact(2).map(|pair| {
            let pair = [pair[0], pair[1]];
            if encoding == UTF_16LE {
                u16::from_le_bytes(pair)
            } else {
                u16::from_be_bytes(pair)
            }
        });
        plausible_share(&mut units) && decodes_cleanly_prefix(encoding, window, complete)
    })
}

/// ISO-2022-JP is seven-bit: it hides in ASCII-only bytes behind escapes
/// that switch to JIS X 0208 (`ESC $ B`, `ESC $ @`) or katakana (`ESC ( I`).
pub fn looks_like_iso_2022_jp(bytes: &[u8]) -> bool {
    let has_jis_escape = bytes.windows(3).any(|w| {
        matches!(
            w,
            [0x1B, b'$', b'B'] | [0x1B, b'$', b'@'] | [0x1B, b'(', b'I']
        )
    });
    has_jis_escape && decodes_cleanly(ISO_2022_JP, bytes)
}

/// The legacy multi-byte encodings, other than `declared` and its twins, that
/// also decode the first [`RIVAL_CHECK_WINDOW`] bytes cleanly: when there is
/// any, a clean decode does not prove the declaration right (Big5 bytes are
/// valid GBK, EUC-JP bytes are often valid Shift_JIS, ...).
pub fn clean_rivals(declared: &'static Encoding, bytes: &[u8]) -> Vec<&'static Encoding> {
    let window = &bytes[..bytes.len().min(RIVAL_CHECK_WINDOW)];
    let complete = window.len() == bytes.len();
    CJK_ENCODINGS
        .into_iter()
        .filter(|&rival| !same_decoder(rival, declared))
        .filter(|&rival| decodes_cleanly_prefix(rival, window, complete))
        .collect()
}

/// The text a clean decode gives is mostly real characters, not the
/// oddities a wrong multi-byte decoder produces from foreign bytes:
/// private-use characters, half-width katakana, C1 controls; and, for a
/// CJK encoding, not mostly lone characters stuck inside Latin words. Reads
/// at most [`RIVAL_CHECK_WINDOW`] bytes.
///
/// The second is how Latin text told it is GBK, Big5 or EUC-KR looks: an
/// accented letter followed by a letter (`é` then `t` in `été`) is a valid
/// two-byte sequence, so a page whose few accented letters all precede a
/// letter decodes cleanly, each of them with the letter after it turned
/// into one CJK character between ASCII letters. Real CJK text runs several
/// CJK characters together, and where it meets Latin words (`iPhone版`)
/// most of its characters still have a CJK neighbour.
pub fn reads_as_text(encoding: &'static Encoding, bytes: &[u8]) -> bool {
    let window = &bytes[..bytes.len().min(RIVAL_CHECK_WINDOW)];
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut buffer = String::with_capacity(8192);
    let mut input = window;
    let (mut non_ascii, mut odd) = (0usize, 0usize);
    let mut lone = LoneInLatin::default();
    loop {
        buffer.clear();
        let (result, read, _) = decoder.decode_to_string(input, &mut buffer, false);
        for c in buffer.chars() {
            lone.push(c);
            if !c.is_ascii() {
                non_ascii += 1;
                odd += usize::from(is_odd_char(c));
            }
        }
        input = &input[read..];
        if result == encoding_rs::CoderResult::InputEmpty {
            break;
        }
    }
    lone.finish();
    // A few odd characters happen (a PUA icon font, one katakana word);
    // a tenth is a wrong decoder.
    let cjk = encoding != UTF_8 && is_multibyte(encoding);
    odd * 10 <= non_ascii && !(cjk && lone.is_latin_text(non_ascii))
}

/// Counts, over a stream of characters, the non-ASCII ones that stand
/// alone between ASCII characters with an ASCII letter on one side at least.
#[derive(Debug, Default)]
struct LoneInLatin {
    /// The character before the candidate.
    before: Option<char>,
    /// The character judged when the next one arrives.
    candidate: Option<char>,
    lone: usize,
}

impl LoneInLatin {
    fn push(&mut self, next: char) {
        self.judge(Some(next));
        self.before = self.candidate;
        self.candidate = Some(next);
    }

    fn finish(&mut self) {
        self.judge(None);
    }

    fn judge(&mut self, next: Option<char>) {
        let Some(c) = self.candidate else { return };
        if c.is_ascii() {
            return;
        }
        let ascii_side = |side: Option<char>| side.is_none_or(|s| s.is_ascii());
        let letter_side = |side: Option<char>| side.is_some_and(|s| s.is_ascii_alphabetic());
        if ascii_side(self.before)
            && ascii_side(next)
            && (letter_side(self.before) || letter_side(next))
        {
            self.lone += 1;
        }
    }

    /// Most non-ASCII characters (and at least [`MIN_LONE_IN_LATIN`]) are
    /// lone characters in Latin words.
    fn is_latin_text(&self, non_ascii: usize) -> bool {
        self.lone >= MIN_LONE_IN_LATIN && self.lone * 2 > non_ascii
    }
}

/// Lone CJK characters in Latin words needed before a reading counts as
/// Latin text told it is CJK: one or two happen in real pages (a name, a
/// unit).
const MIN_LONE_IN_LATIN: usize = 3;

fn is_odd_char(c: char) -> bool {
    matches!(c, '\u{80}'..='\u{9F}' | '\u{E000}'..='\u{F8FF}' | '\u{FF61}'..='\u{FF9F}' | '\u{FFFD}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::utf16;

    #[test]
    fn latin_text_told_it_is_cjk_does_not_read_as_text() {
        // Every accented letter precedes a letter: GBK decodes it cleanly,
        // into lone CJK characters inside words.
        let latin = "Les \u{e9}l\u{e8}ves ont \u{e9}tudi\u{e9}s la f\u{ea}te du cr\u{e9}puscule avec leurs amis.";
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(latin);
        assert!(
            decodes_cleanly(GBK, &bytes),
            "the test needs a clean GBK decode"
        );
        assert!(!reads_as_text(GBK, &bytes));
        // Real Chinese text with Latin words in it still reads as text.
        let mixed = "\u{6211}\u{4eec}\u{7528}iPhone\u{624b}\u{673a}\u{6d4f}\u{89c8}\u{7f51}\u{9875}\u{ff0c}Windows\u{7248}\u{672c}\u{4e5f}\u{53ef}\u{4ee5}\u{3002}";
        let (bytes, _, _) = GBK.encode(mixed);
        assert!(reads_as_text(GBK, &bytes));
        // Never asked of UTF-8: French in UTF-8 is made of lone accented
        // letters.
        assert!(reads_as_text(UTF_8, latin.as_bytes()));
    }

    #[test]
    fn clean_decode_refutes_multibyte_lies() {
        let (gbk_bytes, _, _) = GBK.encode("中文网页，简体字。");
        assert!(decodes_cleanly(GBK, &gbk_bytes));
        assert!(!decodes_cleanly(UTF_8, &gbk_bytes));
        assert!(decodes_cleanly(UTF_8, "中文".as_bytes()));
        assert!(decodes_cleanly(encoding_rs::WINDOWS_1251, &gbk_bytes));
    }

    #[test]
    fn cut_prefix_is_not_an_error() {
        let text = "日本語".as_bytes();
        assert!(!decodes_cleanly(UTF_8, &text[..4]));
        assert!(decodes_cleanly_prefix(UTF_8, &text[..4], false));
        let (sjis, _, _) = SHIFT_JIS.encode("日本語");
        assert!(decodes_cleanly_prefix(SHIFT_JIS, &sjis[..3], false));
    }

    #[test]
    fn malformed_sequences_are_counted() {
        let mut bytes = GBK.encode("中文网页，简体字。").0.into_owned();
        assert_eq!(malformed_sequences(GBK, &bytes), (0, 9));
        // A character cut in half before ASCII: one malformed sequence.
        bytes.insert(4, 0xB5);
        bytes.insert(5, b' ');
        assert_eq!(malformed_sequences(GBK, &bytes), (1, 9));
        assert_eq!(malformed_sequences(UTF_8, b"plain"), (0, 0));
    }

    #[test]
    fn gbk_and_gb18030_are_one_decoder() {
        assert!(same_decoder(GBK, GB18030));
        assert!(!same_decoder(GBK, BIG5));
    }

    #[test]
    fn utf16_without_bom_is_sniffed() {
        let le = utf16("<html><body>hello</body></html>", u16::to_le_bytes);
        let be = utf16("<html><body>hello</body></html>", u16::to_be_bytes);
        assert_eq!(sniff_utf16(&le), Some(UTF_16LE));
        assert_eq!(sniff_utf16(&be), Some(UTF_16BE));
        assert_eq!(sniff_utf16(b"plain ascii text"), None);
    }

    #[test]
    fn utf16_cjk_text_without_bom_is_sniffed() {
        let text = "我们的网站是中文的，没有字节顺序标记。这是一段比较长的中文文本，用来测试检测。";
        let le = utf16(text, u16::to_le_bytes);
        let be = utf16(text, u16::to_be_bytes);
        assert_eq!(sniff_utf16_text(&le), Some(UTF_16LE));
        assert_eq!(sniff_utf16_text(&be), Some(UTF_16BE));
        let (gbk, _, _) = GBK.encode(text);
        assert_eq!(sniff_utf16_text(&gbk), None);
        assert_eq!(
            sniff_utf16_text(b"the quick brown fox jumps over the lazy dog again"),
            None
        );
    }

    #[test]
    fn iso_2022_jp_is_recognised() {
        let (bytes, _, _) = ISO_2022_JP.encode("日本語のテキスト");
        assert!(looks_like_iso_2022_jp(&bytes));
        assert!(!looks_like_iso_2022_jp(b"plain ascii"));
    }
}
