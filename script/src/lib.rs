//! # script: which writing system a character or a text is in
//!
//! One home for the script rules the stages and the evaluations share:
//! the extractor (Han names of authors and titles, an article's length in
//! [`word_equivalents`]), contentseen (its tokenizer splits unspaced
//! scripts into characters) and the evaluations (per-script reports).
//!
//! Consumes a character ([`of`], [`is_unspaced`]) or a text
//! ([`dominant`], [`word_equivalents`]); produces a [`Script`] or a count.
//! A leaf crate: no dependencies, no I/O.

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

/// A writing system, as far as the crawler needs to tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Script {
    Latin,
    /// Han characters (Chinese, and kanji).
    Han,
    /// Hiragana and katakana.
    Kana,
    Hangul,
    Cyrillic,
    Greek,
    Arabic,
    Hebrew,
    /// Thai, Lao, Khmer, Myanmar: written without spaces between words.
    SoutheastAsian,
    /// Devanagari and the other Indic scripts.
    Indic,
    /// Anything else that is a letter.
    Other,
}

impl Script {
    pub const ALL: [Script; 11] = [
        Script::Latin,
        Script::Han,
        Script::Kana,
        Script::Hangul,
        Script::Cyrillic,
        Script::Greek,
        Script::Arabic,
        Script::Hebrew,
        Script::SoutheastAsian,
        Script::Indic,
        Script::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Script::Latin => "Latin",
            Script::Han => "Han",
            Script::Kana => "kana",
            Script::Hangul => "Hangul",
            Script::Cyrillic => "Cyrillic",
            Script::Greek => "Greek",
            Script::Arabic => "Arabic",
            Script::Hebrew => "Hebrew",
            Script::SoutheastAsian => "Thai/Lao/Khmer",
            Script::Indic => "Indic",
            Script::Other => "other",
        }
    }

    /// Scripts whose words are not separated by spaces: tokenized by
    /// characters, not by runs between spaces (contentseen: a Han, kana or
    /// hangul character a token, Thai and the other alphabets by pairs of
    /// letters).
    pub fn is_unspaced(self) -> bool {
        matches!(
            self,
            Script::Han | Script::Kana | Script::Hangul | Script::SoutheastAsian
        )
    }
}

/// The script of a letter or digit; `None` for spaces, punctuation and
/// symbols.
pub fn of(c: char) -> Option<Script> {
    let u = c as u32;
    Some(match u {
        0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A => Script::Latin,
        0..=0x7F => return None,
        0xC0..=0x24F if u != 0xD7 && u != 0xF7 => Script::Latin,
        0x1E00..=0x1EFF => Script::Latin,
        0x370..=0x3FF | 0x1F00..=0x1FFF => Script::Greek,
        0x400..=0x52F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
        0x590..=0x5FF | 0xFB1D..=0xFB4F => Script::Hebrew,
        0x600..=0x6FF | 0x750..=0x77F | 0x8A0..=0x8FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => {
            Script::Arabic
        }
        0x900..=0xDFF => Script::Indic,
        0xE00..=0xEFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x19E0..=0x19FF => {
            Script::SoutheastAsian
        }
        0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => Script::Hangul,
        0x3041..=0x309F | 0x30A0..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Script::Kana,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF => Script::Han,
        0xFF10..=0xFF19 | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A => Script::Latin,
        _ if c.is_alphanumeric() => Script::Other,
        _ => return None,
    })
}

/// True for characters written without spaces between words (Han, kana,
/// hangul, Thai, Lao, Khmer, Myanmar): tokenized by characters
/// ([`Script::is_unspaced`]).
pub fn is_unspaced(c: char) -> bool {
    of(c).is_some_and(Script::is_unspaced)
}

/// About how many words a text holds: each run of letters and digits of a
/// spaced script is one, and every two characters of an unspaced one (Han,
/// kana, hangul, Thai…: a Chinese word is about two characters) one more.
pub fn word_equivalents(text: &str) -> usize {
    count_words(text, usize::MAX)
}

/// Whether a text holds at least `n` [`word_equivalents`]; it stops reading at the
/// `n`th (a body's length check reads a few words, not the whole body).
pub fn has_words(text: &str, n: usize) -> bool {
    count_words(text, n) >= n
}

/// [`word_equivalents`], counted until `stop` is reached (the count only grows).
fn count_words(text: &str, stop: usize) -> usize {
    let (mut words, mut unspaced, mut in_word) = (0usize, 0usize, false);
    for c in text.chars() {
        match of(c) {
            Some(s) if s.is_unspaced() => {
                unspaced += 1;
                in_word = false;
            }
            Some(_) => {
                words += usize::from(!in_word);
                in_word = true;
            }
            None => {
                in_word = false;
                continue;
            }
        }
        if words + unspaced.div_ceil(2) >= stop {
            break;
        }
    }
    words + unspaced.div_ceil(2)
}

/// The script most of a text's letters are in (`None` for a text without
/// letters). A text whose Han characters come with kana is Japanese: kana
/// when kana make up at least a tenth of its Han and kana.
pub fn dominant(text: &str) -> Option<Script> {
    let mut counts = [0usize; Script::ALL.len()];
    for c in text.chars() {
        if let Some(s) = of(c) {
            if !(c.is_ascii_digit()) {
                counts[s as usize] += 1;
            }
        }
    }
    let kana = counts[Script::Kana as usize];
    let han = counts[Script::Han as usize];
    if kana > 0 && kana * 10 >= kana + han {
        counts[Script::Kana as usize] += han;
        counts[Script::Han as usize] = 0;
    }
    let (best, &n) = counts
        .iter()
        .enumerate()
        .max_by_key(|&(i, n)| (*n, usize::MAX - i))?;
    (n > 0).then_some(Script::ALL[best])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_equivalents_count_spaced_words_and_pairs_of_unspaced_characters() {
        assert_eq!(word_equivalents(""), 0);
        assert_eq!(word_equivalents("404 Not Found"), 3);
        assert_eq!(word_equivalents("Please enable JavaScript, now!"), 4);
        assert_eq!(word_equivalents("加载中……"), 2);
        for (text, n) in [
            ("", 0),
            ("404 Not Found", 3),
            ("加载中……", 2),
            ("a 加载中 b", 4),
        ] {
            assert!(has_words(text, n) && !has_words(text, n + 1), "{text}");
        }
        assert_eq!(word_equivalents("他按掉后再打给我。"), 4);
        assert_eq!(word_equivalents("Das Café 中文"), 3);
    }

    #[test]
    fn scripts_of_texts() {
        for (text, script) in [
            ("The quick brown fox", Some(Script::Latin)),
            ("北京时间今天上午", Some(Script::Han)),
            ("東京で今日、新しいカメラが発売された", Some(Script::Kana)),
            ("서울에서 오늘", Some(Script::Hangul)),
            ("Москва сегодня", Some(Script::Cyrillic)),
            ("مرحبا بالعالم", Some(Script::Arabic)),
            ("שלום עולם", Some(Script::Hebrew)),
            ("สวัสดีชาวโลก", Some(Script::SoutheastAsian)),
            ("Καλημέρα κόσμε", Some(Script::Greek)),
            ("12345 -- !!", None),
            ("", None),
        ] {
            assert_eq!(dominant(text), script, "{text}");
        }
        assert!(is_unspaced('ก') && is_unspaced('字') && is_unspaced('か') && is_unspaced('한'));
        assert!(!is_unspaced('a') && !is_unspaced('я') && !is_unspaced(' '));
    }
}
