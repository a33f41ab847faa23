//! The tie-breaker among the Latin-script single-byte encodings: which one
//! reads the bytes as the accented letters of one language.
//!
//! The Latin single-byte encodings share ASCII and differ in a few dozen
//! accented letters, so every one of them reads a Latin page as plausible
//! Latin text, and a decode check refutes none. When the header and the meta
//! tell the same lie inside this family (ISO-8859-2 for a windows-1250 page,
//! windows-1252 for an ISO-8859-13 one) the declaration looks right, and
//! chardetng cannot name half of the family anyway. But a language writes
//! only its own few accented letters: Polish ą ę ł ś ź, Czech č ě ř ů,
//! Lithuanian ė į ų ū. The right reading spends its non-ASCII bytes on the
//! letters of one language; a wrong one scatters them over letters no single
//! language writes together, over symbols inside words (`pa¹stwo`) and over
//! C1 controls. [`best_latin`] scores each reading by the best-fitting
//! language's letters and keeps the preferred encoding (the declared one, or
//! the detector's) unless another reads clearly better.
//!
//! Pure logic: no I/O.

use super::alphabet::{is_common_punctuation, window_text};
use encoding_rs::{
    Encoding, ISO_8859_10, ISO_8859_13, ISO_8859_14, ISO_8859_15, ISO_8859_16, ISO_8859_2,
    ISO_8859_3, ISO_8859_4, MACINTOSH, WINDOWS_1250, WINDOWS_1252, WINDOWS_1254, WINDOWS_1257,
    WINDOWS_1258,
};

/// The Latin-script single-byte encodings the tie-breaker chooses among, in
/// the order that wins a tie after the preferred ones (commonest first).
pub const LATIN_FAMILY: [&Encoding; 14] = [
    WINDOWS_1252,
    WINDOWS_1250,
    ISO_8859_2,
    WINDOWS_1257,
    ISO_8859_13,
    ISO_8859_15,
    WINDOWS_1254,
    ISO_8859_4,
    ISO_8859_16,
    ISO_8859_10,
    ISO_8859_3,
    ISO_8859_14,
    WINDOWS_1258,
    MACINTOSH,
];

/// Another reading must beat the preferred one by more than this many
/// points, and more than a twentieth of the letters read: a page that uses
/// one or two accented letters cannot overturn a declaration on them.
const MARGIN: i64 = 2;

/// The accented letters (lower case) each language writes, and the
/// combining marks of Vietnamese (windows-1258 decodes tones as marks).
const LANGUAGES: &[&str] = &[
    // Western
    "àâæçéèêëîïôœùûüÿ", // French
    "äöüß",             // German
    "áéíñóúü",          // Spanish
    "áâãàçéêíóôõú",     // Portuguese
    "àèéìíîòóùú",       // Italian
    "àçèéíïòóúü",       // Catalan
    "æøåéèêóòô",        // Danish, Norwegian
    "åäöé",             // Swedish
    "äöåšž",            // Finnish
    "áðéíóúýþæö",       // Icelandic
    "áéíóú",            // Irish
    "ëéèïöüáóú",        // Dutch, Afrikaans
    "âêîôûŵŷäëïöü",     // Welsh
    "çë",               // Albanian
    "ċġħżàèìòù",        // Maltese
    // Central and Eastern
    "ąćęłńóśźż",                                                  // Polish
    "áčďéěíňóřšťúůýž",                                            // Czech
    "áäčďéíĺľňóôŕšťúýž",                                          // Slovak
    "áéíóöőúüű",                                                  // Hungarian
    "čćđšž",        // Croatian, Bosnian, Serbian Latin, Slovenian
    "ăâîșțşţ",      // Romanian
    "ąčęėįšųūž",    // Lithuanian
    "āčēģīķļņšūž",  // Latvian
    "äöõüšž",       // Estonian
    "áčđŋšŧžåäöæø", // Northern Sami
    "çğıöşüâîû",    // Turkish
    "ĉĝĥĵŝŭ",       // Esperanto
    "ăâđêôơư\u{300}\u{301}\u{303}\u{309}\u{323}àáâãèéêìíòóôõùúý", // Vietnamese
];

/// How one encoding reads the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reading {
    /// Non-ASCII Latin letters (and combining marks) in the reading.
    pub letters: usize,
    /// Of those, the ones the best-fitting language writes.
    pub explained: usize,
    /// Non-ASCII characters that no Latin text holds where they are:
    /// symbols and controls inside words, capitals after a lower-case
    /// letter, letters of other scripts.
    pub odd: usize,
    /// C1 control characters (U+0080-U+009F): no text holds them; an
    /// ISO-8859 reading that makes them from windows-125x punctuation
    /// (`–`, `’`, `…`) is a wrong reading.
    pub controls: usize,
}

impl Reading {
    /// Explained letters count for the reading, unexplained ones and odd
    /// characters against it.
    pub fn score(&self) -> i64 {
        let unexplained = self.letters - self.explained;
        self.explained as i64 - unexplained as i64 - 3 * self.odd as i64
    }
}

/// How `encoding` reads the window of `bytes` from its first non-ASCII word (the
/// alphabet check's window).
pub fn read(encoding: &'static Encoding, bytes: &[u8]) -> Reading {
    let (text, end) = window_text(encoding, bytes);
    let mut reading = reading_of(&text);
    // Past the window, an ISO-8859 reading still meets C1 controls wherever the page
    // has a byte 0x80-0x9F (windows-125x punctuation): cheap to see over the whole body.
    let iso_8859 = encoding.name().starts_with("ISO-8859");
    if iso_8859 && reading.controls == 0 && bytes[end..].iter().any(|b| (0x80..0xA0).contains(b)) {
        reading.controls = 1;
        reading.odd += 1;
    }
    reading
}

fn is_latin_letter(c: char) -> bool {
    (('\u{C0}'..='\u{24F}').contains(&c) && c != '×' && c != '÷')
        || ('\u{300}'..='\u{36F}').contains(&c)
        || ('\u{1E00}'..='\u{1EFF}').contains(&c)
}

/// Separators between words: whitespace (but not the C1 control NEL) and
/// ASCII punctuation.
fn is_separator(c: char) -> bool {
    (c.is_whitespace() && !is_c1_control(c)) || (c.is_ascii() && !c.is_ascii_alphanumeric())
}

fn is_c1_control(c: char) -> bool {
    ('\u{80}'..='\u{9F}').contains(&c)
}

fn reading_of(text: &str) -> Reading {
    let mut counts = vec![0usize; LANGUAGES.len()];
    let mut reading = Reading::default();
    for word in text.split(is_separator).filter(|w| !w.is_ascii()) {
        let chars: Vec<char> = word.chars().collect();
        let mut previous_lower = false;
        for (i, &c) in chars.iter().enumerate() {
            if c.is_ascii() {
                previous_lower = c.is_ascii_lowercase();
                continue;
            }
            if is_latin_letter(c) {
                reading.letters += 1;
                if c.is_uppercase() && previous_lower {
                    reading.odd += 1;
                }
                let lower = c.to_lowercase().next().unwrap_or(c);
                for (count, letters) in counts.iter_mut().zip(LANGUAGES) {
                    *count += usize::from(letters.contains(lower));
                }
                previous_lower = c.is_lowercase();
                continue;
            }
            previous_lower = false;
            // Between two letters a symbol stands for a letter (`pa¹stwo`); at a word's
            // edge it may be a quote or a dash.
            let between_letters = i > 0
                && chars[i - 1].is_alphabetic()
                && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
            if is_c1_control(c) {
                reading.controls += 1;
                reading.odd += 1;
            } else if (between_letters && !is_word_internal(c)) || !is_common_punctuation(c) {
                // A letter of another script, or a symbol standing for a letter.
                reading.odd += 1;
            }
        }
    }
    reading.explained = counts.into_iter().max().unwrap_or(0);
    reading
}

/// Apostrophes, hyphens and the Catalan middle dot, which stand inside words.
fn is_word_internal(c: char) -> bool {
    matches!(
        c,
        '’' | '‘' | 'ʼ' | '·' | '\u{2010}' | '\u{2011}' | '\u{AD}'
    )
}

/// The Latin encoding whose reading of `bytes` fits a language best:
/// `preferred[0]` (then the others of `preferred`) unless another member of
/// [`LATIN_FAMILY`] scores more than [`MARGIN`] points and a twentieth of
/// the letters higher, or scores higher with no C1 control where
/// `preferred[0]` reads some. Returns the winner and its reading.
pub fn best_latin(
    bytes: &[u8],
    preferred: &[&'static Encoding],
) -> Option<(&'static Encoding, Reading)> {
    let first = *preferred.first()?;
    let base = read(first, bytes);
    let margin = MARGIN.max(base.letters as i64 / 20);
    let mut best = (first, base);
    let mut seen: Vec<&'static Encoding> = vec![first];
    for &candidate in preferred.iter().skip(1).chain(LATIN_FAMILY.iter()) {
        // Mac Roman is a page's encoding only when something names it: the web
        // hardly uses it, and its reading of other bytes is all accented letters.
        if seen.contains(&candidate) || (candidate == MACINTOSH && !preferred.contains(&candidate))
        {
            continue;
        }
        seen.push(candidate);
        let reading = read(candidate, bytes);
        let clearly_better = reading.score() > base.score() + margin
            || (base.controls > 0 && reading.controls == 0 && reading.score() > base.score());
        if clearly_better && reading.score() > best.1.score() {
            best = (candidate, reading);
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charset::same_text;

    const POLISH: &str = "Państwowa komisja wyborcza ogłosiła, że w niedzielnych wyborach \
        frekwencja była wyższa niż się spodziewano. Głosowało ponad sześćdziesiąt procent \
        uprawnionych, a najwięcej wyborców przyszło do lokali w dużych miastach.";
    const LITHUANIAN: &str = "Lietuvos žemės ūkio ministerija pranešė, kad šių metų derlius \
        buvo gausesnis nei tikėtasi. Ūkininkai džiaugiasi geru oru ir sėkmingu sezonu.";
    const FRENCH: &str = "Le cœur a ses raisons que la raison ne connaît point. L'été dernier, \
        nous sommes allés à la mer; c'était très agréable, même sous la pluie.";

    fn winner(text: &str, truth: &'static Encoding, told: &'static Encoding) -> &'static Encoding {
        let (bytes, _, unmappable) = truth.encode(text);
        assert!(!unmappable);
        let (chosen, _) = best_latin(&bytes, &[told]).expect("a reading");
        assert!(
            same_text(chosen, truth, &bytes),
            "{} told {}: chose {}",
            truth.name(),
            told.name(),
            chosen.name()
        );
        chosen
    }

    #[test]
    fn a_lie_inside_the_family_is_overturned() {
        winner(POLISH, WINDOWS_1250, ISO_8859_2);
        winner(POLISH, ISO_8859_2, WINDOWS_1250);
        winner(POLISH, ISO_8859_2, WINDOWS_1252);
        winner(LITHUANIAN, WINDOWS_1257, ISO_8859_2);
        winner(LITHUANIAN, ISO_8859_13, WINDOWS_1252);
        winner(FRENCH, WINDOWS_1252, ISO_8859_2);
    }

    #[test]
    fn a_right_label_is_kept() {
        assert_eq!(winner(POLISH, WINDOWS_1250, WINDOWS_1250), WINDOWS_1250);
        assert_eq!(winner(POLISH, ISO_8859_2, ISO_8859_2), ISO_8859_2);
        assert_eq!(winner(FRENCH, WINDOWS_1252, WINDOWS_1252), WINDOWS_1252);
        assert_eq!(winner(LITHUANIAN, WINDOWS_1257, WINDOWS_1257), WINDOWS_1257);
        // Too few accented letters to overturn anything.
        let (bytes, _, _) = WINDOWS_1252.encode("Le café est fermé aujourd'hui.");
        assert_eq!(
            best_latin(&bytes, &[ISO_8859_2]).map(|(e, _)| e),
            Some(ISO_8859_2)
        );
    }

    #[test]
    fn readings_count_letters_and_oddities() {
        let r = reading_of("państwo pa¹stwo ÄaB");
        assert_eq!(r.letters, 2);
        assert_eq!(r.odd, 1);
        assert_eq!(reading_of("« bonjour » — été „Szia” l’été").odd, 0);
        assert_eq!(reading_of("a\u{9A}b").odd, 1);
        assert_eq!(reading_of("a\u{85}b \u{96}").controls, 2);
    }
}
