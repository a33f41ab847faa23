//! Does a single-byte reading of the bytes look like text in its alphabet?
//! A decode check cannot refute a single-byte label (every byte decodes), but
//! a wrong one shows in the text: KOI8-R read as windows-1251 swaps the case
//! of every Cyrillic letter, windows-1251 read as ISO-8859-5 turns half the
//! letters Serbian, and Cyrillic or CJK read as windows-1252 makes words of
//! accented capitals with no plain Latin letter in them; Greek read as
//! x-mac-cyrillic or Hebrew read as windows-1251 gives lower-case words of
//! a plausible case, but letter frequencies far from Russian's or
//! Ukrainian's. A declaration whose
//! reading passes is trusted without the detector; one that fails goes to it.

use encoding_rs::{Encoding, IBM866, ISO_8859_5, KOI8_R, KOI8_U, WINDOWS_1251, X_MAC_CYRILLIC};

/// How many bytes, from the first non-ASCII byte, the check reads.
const WINDOW: usize = 16 * 1024;

/// Below this many letters there is too little text to judge.
const MIN_LETTERS: usize = 20;

/// The alphabet a single-byte encoding is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alphabet {
    Cyrillic,
    Latin,
}

fn alphabet(encoding: &'static Encoding, latin_script: bool) -> Option<Alphabet> {
    if [
        WINDOWS_1251,
        KOI8_R,
        KOI8_U,
        IBM866,
        ISO_8859_5,
        X_MAC_CYRILLIC,
    ]
    .contains(&encoding)
    {
        Some(Alphabet::Cyrillic)
    } else if latin_script {
        Some(Alphabet::Latin)
    } else {
        None
    }
}

/// True if `encoding`'s reading of the bytes is plausible text in its
/// alphabet; false when it is not, or when the encoding has no alphabet
/// check (Greek, Hebrew, ...) or there is too little text to judge.
/// `latin_script` says whether the encoding is a Latin-script one.
pub fn reads_plausibly(encoding: &'static Encoding, latin_script: bool, bytes: &[u8]) -> bool {
    let Some(alphabet) = alphabet(encoding, latin_script) else {
        return false;
    };
    let (text, _) = window_text(encoding, bytes);
    let stats = WordStats::of(&text, alphabet);
    match alphabet {
        Alphabet::Cyrillic => stats.cyrillic_plausible(),
        Alphabet::Latin => stats.latin_plausible(),
    }
}

/// `encoding`'s reading of the [`WINDOW`] bytes from the first non-ASCII
/// byte (backed up to the start of its word), and where the window ends;
/// the text the alphabet check and the language tie-breaker read.
pub(crate) fn window_text<'b>(
    encoding: &'static Encoding,
    bytes: &'b [u8],
) -> (std::borrow::Cow<'b, str>, usize) {
    let (word_start, end) = window(bytes);
    let (text, _) = encoding.decode_without_bom_handling(&bytes[word_start..end]);
    (text, end)
}

/// Where [`window_text`]'s window of `bytes` starts (the first non-ASCII
/// byte, backed up to the start of its word) and ends.
pub(crate) fn window(bytes: &[u8]) -> (usize, usize) {
    let start = Encoding::ascii_valid_up_to(bytes);
    let word_start = bytes[..start]
        .iter()
        .rposition(|b| !b.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    (word_start, start.saturating_add(WINDOW).min(bytes.len()))
}

/// Counts over the words (runs of letters) of a text.
#[derive(Debug, Default)]
struct WordStats {
    /// Non-ASCII letters of the alphabet.
    letters: usize,
    /// Of those, upper-case ones.
    upper: usize,
    /// Of those, in words whose case pattern no language writes
    /// (`пРИВЕТ`: lower then upper).
    in_odd_case_words: usize,
    /// Of those, in words with no ASCII letter (for Latin: `ÐÒÉ×ÅÔ`).
    in_words_without_ascii: usize,
    /// Of those, in words that also hold ASCII letters (for Cyrillic: `cafй`).
    in_mixed_words: usize,
    /// Cyrillic letters outside Russian and Ukrainian (Serbian, Macedonian, ...).
    rare_cyrillic: usize,
    /// Non-ASCII characters that are neither letters of the alphabet nor
    /// common punctuation: box drawing, C1 controls, letters of other scripts.
    odd: usize,
    /// How often each lower-case Cyrillic letter U+0430-U+045F occurs
    /// (capitals folded in).
    cyrillic_counts: Vec<u32>,
}

impl WordStats {
    fn of(text: &str, alphabet: Alphabet) -> WordStats {
        let mut stats = WordStats {
            cyrillic_counts: vec![0; 48],
            ..WordStats::default()
        };
        let mut word: Vec<char> = Vec::new();
        for c in text.chars().chain(std::iter::once(' ')) {
            if c.is_alphabetic() {
                word.push(c);
                continue;
            }
            stats.add_word(&word, alphabet);
            word.clear();
            if !c.is_ascii() && !is_common_punctuation(c) {
                stats.odd += 1;
            }
        }
        stats
    }

    fn add_word(&mut self, word: &[char], alphabet: Alphabet) {
        let in_alphabet = |c: char| match alphabet {
            Alphabet::Cyrillic => ('\u{400}'..='\u{4FF}').contains(&c),
            Alphabet::Latin => ('\u{C0}'..='\u{24F}').contains(&c) && c != '×' && c != '÷',
        };
        let letters = word
            .iter()
            .filter(|c| !c.is_ascii() && in_alphabet(**c))
            .count();
        self.odd += word
            .iter()
            .filter(|c| !c.is_ascii() && !in_alphabet(**c))
            .count();
        if letters == 0 {
            return;
        }
        self.letters += letters;
        self.upper += word
            .iter()
            .filter(|c| !c.is_ascii() && c.is_uppercase())
            .count();
        // Lower-case, Capitalised or ALL-CAPS; anything else is odd.
        let rest_upper = word.iter().skip(1).filter(|c| c.is_uppercase()).count();
        let odd_case = rest_upper != 0 && rest_upper != word.len() - 1;
        if odd_case {
            self.in_odd_case_words += letters;
        }
        if word.iter().any(char::is_ascii_alphabetic) {
            self.in_mixed_words += letters;
        } else {
            self.in_words_without_ascii += letters;
        }
        self.rare_cyrillic += word.iter().filter(|c| is_rare_cyrillic(**c)).count();
        if alphabet == Alphabet::Cyrillic {
            for c in word.iter().flat_map(|c| c.to_lowercase()) {
                if let Some(slot) = (c as usize)
                    .checked_sub(0x430)
                    .and_then(|i| self.cyrillic_counts.get_mut(i))
                {
                    *slot += 1;
                }
            }
        }
    }

    /// The cosine between the reading's letter frequencies and Russian's
    /// or Ukrainian's, whichever is closer (1: the same proportions).
    fn cyrillic_frequency_fit(&self) -> f64 {
        LETTER_FREQUENCIES
            .iter()
            .map(|reference| cosine(&self.cyrillic_counts, reference))
            .fold(0.0, f64::max)
    }

    fn cyrillic_plausible(&self) -> bool {
        // Sentences start with capitals, but most letters are lower-case;
        // Cyrillic words hold no Latin letters.
        self.letters >= MIN_LETTERS
            && self.upper * 10 <= self.letters * 4
            && self.upper * 100 >= self.letters
            && self.in_mixed_words * 10 <= self.letters
            && self.in_odd_case_words * 10 <= self.letters
            && self.rare_cyrillic * 10 <= self.letters
            && self.odd * 20 <= self.letters
            && (self.letters < MIN_LETTERS_FOR_FREQUENCIES
                || self.cyrillic_frequency_fit() >= MIN_FREQUENCY_FIT)
    }

    fn latin_plausible(&self) -> bool {
        self.letters >= 1
            && self.in_words_without_ascii * 4 <= self.letters
            && self.in_odd_case_words * 10 <= self.letters
            && self.odd * 10 <= self.letters
    }
}

/// Below this many letters the frequencies of a reading are too noisy to judge.
const MIN_LETTERS_FOR_FREQUENCIES: usize = 40;

/// A Cyrillic reading whose letter frequencies are further than this from
/// Russian's and Ukrainian's is another script's letters mapped onto
/// Cyrillic ones: Greek read as x-mac-cyrillic or Hebrew read as
/// windows-1251 gives lower-case words of plausible case, but `б`, `п`, `ф`
/// or `й`, `ш`, `ъ` among the commonest letters. Real text of either
/// language, even a pangram, scores above 0.8, Bulgarian too; such
/// misreadings score about 0.55-0.7.
const MIN_FREQUENCY_FIT: f64 = 0.75;

/// Letter frequencies (per mille) of Russian and Ukrainian text, indexed from
/// U+0430 like [`WordStats::cyrillic_counts`]: а-я, then ѐ-џ (ё, є, і, ї).
const LETTER_FREQUENCIES: [[u16; 48]; 2] = [
    // а б в г д е ж з и й к л м н о п р с т у ф х ц ч ш щ ъ ы ь э ю я
    [
        80, 16, 45, 17, 30, 85, 9, 17, 74, 12, 35, 44, 32, 67, 110, 28, 47, 55, 63, 26, 3, 10, 5,
        14, 7, 4, 1, 19, 17, 3, 6, 20, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
    [
        84, 15, 54, 16, 32, 50, 9, 22, 61, 9, 39, 36, 30, 65, 94, 28, 46, 42, 51, 35, 2, 10, 10,
        13, 8, 5, 0, 0, 18, 0, 6, 25, 0, 0, 0, 0, 4, 0, 59, 9, 0, 0, 0, 0, 0, 0, 0, 0,
    ],
];

fn cosine(counts: &[u32], reference: &[u16; 48]) -> f64 {
    let (mut dot, mut norm_a, mut norm_b) = (0.0, 0.0, 0.0);
    for (&a, &b) in counts.iter().zip(reference) {
        let (a, b) = (f64::from(a), f64::from(b));
        dot += a * b;
        norm_a += a * a;
        norm_b += b * b;
    }
    if norm_a == 0.0 || norm_b == 0.0 {
        return 0.0;
    }
    dot / (norm_a.sqrt() * norm_b.sqrt())
}

/// Cyrillic letters that Russian, Ukrainian and Belarusian text do not use.
fn is_rare_cyrillic(c: char) -> bool {
    ('\u{400}'..='\u{4FF}').contains(&c)
        && !matches!(
            c,
            'А'..='я' | 'Ё' | 'ё' | 'І' | 'і' | 'Ї' | 'ї' | 'Є' | 'є' | 'Ґ' | 'ґ' | 'Ў' | 'ў'
        )
}

/// Punctuation and symbols single-byte pages use with any alphabet (also
/// the word-free symbols of [`super::language`]).
pub(crate) fn is_common_punctuation(c: char) -> bool {
    matches!(
        c,
        '\u{A0}'
            | '«'
            | '»'
            | '–'
            | '—'
            | '‘'
            | '’'
            | '‚'
            | '“'
            | '”'
            | '„'
            | '…'
            | '•'
            | '·'
            | '°'
            | '§'
            | '©'
            | '®'
            | '™'
            | '€'
            | '№'
            | '±'
            | '×'
            | '¦'
            | '¬'
            | '\u{AD}'
            | '′'
            | '″'
            | '‹'
            | '›'
            | '†'
            | '‡'
            | '‰'
            | '¤'
            | '¶'
            | '£'
            | '¥'
            | '¢'
            | '¿'
            | '¡'
            | 'º'
            | 'ª'
            | '²'
            | '³'
            | '¹'
            | '½'
            | '¼'
            | '¾'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{GBK, WINDOWS_1252};

    const RUSSIAN: &str =
        "Съешь же ещё этих мягких французских булок, да выпей чаю. В чащах юга жил бы \
        цитрус? Да, но фальшивый экземпляр! Мы приехали в Москву поздно вечером.";
    const FRENCH: &str =
        "Le cœur a ses raisons que la raison ne connaît point. L'été dernier, nous sommes \
        allés à la mer; c'était très agréable, même sous la pluie.";

    #[test]
    fn right_cyrillic_readings_pass_swapped_ones_fail() {
        let (koi8, _, _) = KOI8_R.encode(RUSSIAN);
        let (cp1251, _, _) = WINDOWS_1251.encode(RUSSIAN);
        assert!(reads_plausibly(KOI8_R, false, &koi8));
        assert!(reads_plausibly(WINDOWS_1251, false, &cp1251));
        assert!(!reads_plausibly(WINDOWS_1251, false, &koi8));
        assert!(!reads_plausibly(KOI8_R, false, &cp1251));
        assert!(!reads_plausibly(ISO_8859_5, false, &cp1251));
        assert!(!reads_plausibly(IBM866, false, &cp1251));
    }

    #[test]
    fn cyrillic_reading_of_latin_or_caseless_text_fails() {
        let (latin, _, _) = WINDOWS_1252.encode(FRENCH);
        assert!(!reads_plausibly(WINDOWS_1251, false, &latin));
        let (hebrew, _, _) = encoding_rs::WINDOWS_1255
            .encode("שלום עולם, זהו טקסט בעברית שנכתב לבדיקה של הקידוד הנכון");
        assert!(!reads_plausibly(WINDOWS_1251, false, &hebrew));
    }

    #[test]
    fn latin_reading_of_other_scripts_fails() {
        let (latin, _, _) = WINDOWS_1252.encode(FRENCH);
        assert!(reads_plausibly(WINDOWS_1252, true, &latin));
        let (koi8, _, _) = KOI8_R.encode(RUSSIAN);
        assert!(!reads_plausibly(WINDOWS_1252, true, &koi8));
        let (gbk, _, _) = GBK.encode("我们的网站提供最新的新闻和评论。今天的天气很好。");
        assert!(!reads_plausibly(WINDOWS_1252, true, &gbk));
    }

    #[test]
    fn other_scripts_mapped_onto_cyrillic_letters_fail_on_frequencies() {
        let greek = "Ζητείται βοηθός νοσοκόμα για την φροντίδα ηλικιωμένου ατόμου στην \
            περιοχή της Αθήνας. Οι ενδιαφερόμενοι μπορούν να επικοινωνήσουν μαζί μας.";
        let (bytes, _, _) = encoding_rs::ISO_8859_7.encode(greek);
        assert!(!reads_plausibly(X_MAC_CYRILLIC, false, &bytes));
        let hebrew = "שלום עולם, זהו טקסט בעברית שנכתב לבדיקה של הקידוד הנכון של העמוד \
            ואנחנו מקווים שהוא יעבוד היטב גם כאשר הכותרת משקרת";
        let (bytes, _, _) = encoding_rs::WINDOWS_1255.encode(hebrew);
        assert!(!reads_plausibly(WINDOWS_1251, false, &bytes));
        let (bytes, _, _) = X_MAC_CYRILLIC.encode(RUSSIAN);
        assert!(reads_plausibly(X_MAC_CYRILLIC, false, &bytes));
    }

    #[test]
    fn encodings_without_a_check_never_pass() {
        assert!(!reads_plausibly(
            encoding_rs::WINDOWS_1253,
            false,
            "Καλημέρα".as_bytes()
        ));
        assert!(!reads_plausibly(WINDOWS_1251, false, b"\xC0"));
    }
}
