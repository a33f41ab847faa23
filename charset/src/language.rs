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
//! C1 controls. [`best_latin`] scores each reading by its log-likelihood
//! under the best-fitting language of a unigram letter model (how often
//! each of 33 languages writes each letter, ASCII ones included, so the
//! plain letters say which language the page is in and the accented ones
//! are judged by it), oddities scored as letters no language writes, and
//! keeps the preferred encoding (the declared one, or the detector's) unless
//! another reads clearly better. The model ([`letter_model`]) is counted
//! from an independent source, the gettext translations of Debian packages
//! (see `evaluation::translations` and its `letter_model` test), not from
//! the pages the vote is measured on.
//!
//! Pure logic: no I/O.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::alphabet::{is_common_punctuation, window, window_text};
use super::letter_model;
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
/// nats of log-likelihood: a page that uses one or two accented letters
/// cannot overturn a declaration on them. Chosen on the tuned
/// translations and corpus pages: 10 before the word lists
/// (`KNOWN_WORD`); with them 8 keeps every right declaration the tuned
/// pages kept and overturns more lies of the translations (96.1% → 96.5%),
/// where 6 overturned 2 right declarations.
pub const MARGIN: f64 = 8.0;

/// The margin that keeps the detector's Latin guess when no declaration
/// stands (none was made, or the declarations were refuted): chardetng
/// often names a Central European encoding for an English page whose only
/// non-ASCII byte is a `£` (windows-1250's `Ł`), and its guess is not the
/// testimony of a page's author. Chosen on the tuned pages: with it (and
/// `LONE_LETTER`) the tuned AEB bodies as windows-1252 pages told each
/// lie went from 2119 to 2159 of 2183 right, the tuned translations from
/// 96.5% to 97.5%, and no tuned corpus page changed.
pub const DETECTOR_MARGIN: f64 = 2.0;

/// How much a letter of the all-ASCII words around the accented ones
/// counts, against one of the words that hold them, in saying which
/// language the page is in. A short page of Italian writes `è` alone as a
/// word, with no plain letter beside it to tell Italian from Czech (whose
/// `č` ISO-8859-2 reads there); its other words tell. Less than one: a
/// page may be written in two languages (a Hungarian course in English),
/// and its accented words are in the one that writes accents. Chosen on
/// the translations and the tuned corpus pages (0.1 and 0.3 both kept every
/// right declaration of the corpus, 0.3 overturned more lies of the
/// translations; 1 let the English of a Hungarian page outvote it).
const CONTEXT_WEIGHT: f64 = 0.3;

/// Bytes of the words holding non-ASCII characters past the window (see
/// [`super::alphabet::window_text`]) that a reading is scored on as well:
/// two encodings of the family may read the window alike and differ only
/// on letters further on (a long windows-1250 page whose first `ą` or `š`
/// comes 50 KB in), where a decode check of the window sees no lie.
const PAST_WINDOW_WORD_BYTES: usize = 16 * 1024;

/// What a word holding a non-ASCII letter adds (nats) to a language's
/// log-likelihood when it is among that language's commonest such words
/// ([`letter_model::Language::words`]): `è`, `più`, `één`, `información` are words;
/// the `č`, `pił`, `ťén` a wrong encoding makes of them are nobody's. A
/// letter model sees one letter at a time, so a short page with one or
/// two accented letters cannot outweigh a declaration on them; a known word
/// is evidence of another kind. The lists come from the tuned half of
/// the translations, so their figure flatters it; the corpus pages and the
/// held-aside translations say what it is worth. Set at 2 (same-lie
/// translations 95.7% → 96.1% tuned, 96.5% → 97.0% held aside; corpus
/// unchanged): 4 gained more of the tuned translations (96.5%) and the
/// same held aside, but overturned 4 more right declarations of the
/// held-aside part, which this choice has therefore seen.
const KNOWN_WORD: f64 = 2.0;

/// What a word of one non-ASCII letter that no language's list holds as a
/// word costs (nats). Italian writes `è` alone and Lithuanian `į` (both
/// listed words); no language writes `Š` alone, but an initial (`Š.
/// Novák`) or a label (`Š: 20 cm`) does. Standing between spaces (or at
/// the end), such a letter is an oddity as well (a letter no language
/// writes there): `Š NASA` is how ISO-8859-2 reads `© NASA`, `ť` its `»`.
const LONE_LETTER: f64 = 3.0;

/// Characters are counted per this many in the [`letter_model`].
pub const LETTER_MODEL_SCALE: u32 = 100_000;

/// The count given a letter the language was never seen to write (per
/// [`LETTER_MODEL_SCALE`]): about one in 200,000.
const UNSEEN: f64 = 0.5;

/// The least count (per [`LETTER_MODEL_SCALE`]) punctuation is given: the
/// translations the model is counted from write few of the symbols pages
/// use (`€`, `©`, `°`, the no-break space), yet these are punctuation of
/// every alphabet, likelier than a letter no language writes.
const PUNCTUATION_FLOOR: f64 = 10.0;

/// What a character is to the letter model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbol {
    /// A letter (lower-cased; Romanian ș ț folded into ş ţ, which legacy
    /// encodings wrote for them), or a Vietnamese combining mark.
    Letter(char),
    /// Punctuation and symbols any language's text holds (see
    /// `super::alphabet::is_common_punctuation`), each scored by how often
    /// text of every language writes it (`’` often, `¦` hardly ever).
    Punctuation(char),
    /// Anything else outside ASCII: symbols, C1 controls, other scripts.
    Other,
}

/// The model's symbol for `c`; `None` for ASCII that is not a letter.
pub fn model_symbol(c: char) -> Option<Symbol> {
    if c.is_ascii() {
        return c
            .is_ascii_alphabetic()
            .then(|| Symbol::Letter(c.to_ascii_lowercase()));
    }
    if is_latin_letter(c) {
        // A letter whose lower case is two characters (`İ`: `i` and a
        // combining dot) stays itself: its first would be a plain letter
        // (`©` read as ISO-8859-3's `İ` scored as a common `i`).
        let mut lowered = c.to_lowercase();
        let lower = match (lowered.next(), lowered.next()) {
            (Some(l), None) => l,
            _ => c,
        };
        return Some(Symbol::Letter(match lower {
            'ș' => 'ş',
            'ț' => 'ţ',
            other => other,
        }));
    }
    if is_common_punctuation(c) || (c.is_whitespace() && !is_c1_control(c)) {
        return Some(Symbol::Punctuation(c));
    }
    Some(Symbol::Other)
}

/// A word as the word lists of the [`letter_model`] hold it: its letters
/// folded as [`model_symbol`] folds them; `None` unless every character is
/// a letter and one is outside ASCII (the words that tell encodings apart),
/// or the word is longer than [`MAX_WORD_CHARS`].
pub fn word_key(word: &str) -> Option<String> {
    let mut key = String::with_capacity(word.len());
    let mut non_ascii = false;
    for (i, c) in word.chars().enumerate() {
        if i >= MAX_WORD_CHARS {
            return None;
        }
        match model_symbol(c) {
            Some(Symbol::Letter(l)) => {
                non_ascii |= !l.is_ascii();
                key.push(l);
            }
            _ => return None,
        }
    }
    non_ascii.then_some(key)
}

/// Longer words are not looked up (nor listed).
pub const MAX_WORD_CHARS: usize = 24;

/// Which languages' word lists ([`letter_model::Language::words`]) hold
/// each word: bit i for the i-th language of the [`letter_model`].
fn known_words() -> &'static HashMap<&'static str, u64> {
    static WORDS: OnceLock<HashMap<&'static str, u64>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mut map: HashMap<&'static str, u64> = HashMap::new();
        for (i, language) in letter_model::model().languages.iter().enumerate().take(64) {
            for &word in &language.words {
                *map.entry(word).or_default() |= 1 << i;
            }
        }
        map
    })
}

/// ln of the share of `count` per [`LETTER_MODEL_SCALE`].
fn log_share(count: f64) -> f64 {
    (count / f64::from(LETTER_MODEL_SCALE)).ln()
}

/// The log-likelihood of `letter` in the language of `table` (sorted by letter).
fn letter_log_likelihood(table: &[(char, u32)], letter: char) -> f64 {
    let count = table
        .binary_search_by_key(&letter, |&(c, _)| c)
        .map_or(UNSEEN, |i| f64::from(table[i].1));
    log_share(count)
}

/// The log-likelihood of punctuation `c`, at least [`PUNCTUATION_FLOOR`]'s.
fn punctuation_log_likelihood(c: char) -> f64 {
    let table = &letter_model::model().punctuation;
    let count = table
        .binary_search_by_key(&c, |&(p, _)| p)
        .map_or(0.0, |i| f64::from(table[i].1));
    log_share(count.max(PUNCTUATION_FLOOR))
}

/// How one encoding reads the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reading {
    /// Non-ASCII Latin letters (and combining marks) in the reading.
    pub letters: usize,
    /// Non-ASCII characters that no Latin text holds where they are:
    /// symbols and controls inside words, capitals after a lower-case
    /// letter, letters of other scripts.
    pub odd: usize,
    /// Characters no text holds: C1 controls (U+0080-U+009F; an ISO-8859
    /// reading makes them from windows-125x punctuation, `–`, `’`, `…`),
    /// letters glued to a number where a currency sign or unit stood
    /// (`Ł40` for `£40`), and symbols between two letters that do not
    /// stand inside words (`pa¹stwo`, `kuu¨ilaiset`). A reading with none
    /// of them that scores higher beats one with some, whatever the margin.
    pub impossible: usize,
    /// The log-likelihood (nats) of the reading's letters under the
    /// best-fitting language of the [`letter_model`], oddities counted as
    /// letters no language writes.
    pub log_likelihood: f64,
}

impl Reading {
    /// Higher is better: the log-likelihood.
    pub fn score(&self) -> f64 {
        self.log_likelihood
    }
}

/// What a reading holds besides ASCII, before the model scores it.
#[derive(Debug, Default)]
struct Profile {
    reading: Reading,
    /// Non-ASCII letters and how often each occurs.
    letters: Vec<(char, u32)>,
    /// How often each ASCII letter (folded to lower case) occurs in the
    /// words that hold non-ASCII characters.
    ascii: [u32; 26],
    /// How often each ASCII letter occurs in the all-ASCII words of the
    /// text around them (markup left out): the context that says which
    /// language the page is in when its accented words are few or short.
    context: [u32; 26],
    /// For each word holding a non-ASCII letter that some language's word
    /// list knows: which languages know it (see [`known_words`]).
    known: Vec<u64>,
    /// Words of one non-ASCII letter that no language's list knows.
    lone: usize,
    /// The log-likelihood of the punctuation (the same for every language).
    punctuation: f64,
    /// Characters scored as no language's letters ([`Profile::oddity`]):
    /// symbols, controls, other scripts, and the oddities of context
    /// (capitals after lower-case letters, symbols inside words).
    unseen: usize,
}

impl Profile {
    /// A character no text holds where it stands: odd, scored as a letter
    /// no language writes, and [`Reading::impossible`] or not.
    fn oddity(&mut self, impossible: bool) {
        self.reading.odd += 1;
        self.unseen += 1;
        self.reading.impossible += usize::from(impossible);
    }
}

/// What lies past the window of a page's bytes: the same for every
/// encoding of the family (each splits bytes at the same ASCII separators),
/// so found once per page, not once per reading.
struct PastWindow {
    /// The words holding non-ASCII bytes ([`words_with_non_ascii`]).
    words: Vec<u8>,
    /// A byte 0x80-0x9F occurs: a C1 control in an ISO-8859 reading.
    c1: bool,
}

impl PastWindow {
    fn of(bytes: &[u8]) -> PastWindow {
        let past = &bytes[window(bytes).1..];
        PastWindow {
            words: words_with_non_ascii(past, PAST_WINDOW_WORD_BYTES),
            c1: past.iter().any(|b| (0x80..0xA0).contains(b)),
        }
    }
}

/// How `encoding` reads the window of `bytes` from its first non-ASCII word (the
/// alphabet check's window), and the words with non-ASCII characters past it.
fn read(encoding: &'static Encoding, bytes: &[u8], past: &PastWindow) -> Reading {
    let (text, _) = window_text(encoding, bytes);
    let mut profile = if past.words.is_empty() {
        profile_of(&text)
    } else {
        let (more, _) = encoding.decode_without_bom_handling(&past.words);
        profile_of(&format!("{text} {more}"))
    };
    // Past the window, an ISO-8859 reading still meets C1 controls wherever the page
    // has a byte 0x80-0x9F (windows-125x punctuation): cheap to see over the whole body.
    let iso_8859 = encoding.name().starts_with("ISO-8859");
    if iso_8859 && profile.reading.impossible == 0 && past.c1 {
        profile.oddity(true);
    }
    profile.reading.log_likelihood = best_log_likelihood(&profile);
    profile.reading
}

/// The words (runs between ASCII separators) of `bytes` that hold a byte
/// above 0x7F, joined by spaces, up to about `budget` bytes: what a reading
/// of the bytes past the window is scored on. ASCII-compatible single-byte
/// encodings all split the bytes at the same ASCII separators, so the words
/// are found once, before decoding, and the long ASCII stretches of a page
/// (markup, scripts) cost a scan.
fn words_with_non_ascii(bytes: &[u8], budget: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let is_separator = |b: &u8| b.is_ascii() && !b.is_ascii_alphanumeric();
    for word in bytes.split(is_separator).filter(|w| !w.is_ascii()) {
        if out.len() + word.len() > budget {
            break;
        }
        out.extend_from_slice(word);
        out.push(b' ');
    }
    out
}

/// The best language's log-likelihood of the reading's words that hold
/// non-ASCII characters: their ASCII letters, and at [`CONTEXT_WEIGHT`]
/// the letters of the all-ASCII words outside markup around them, say
/// which language they are in; their accented letters are judged by it.
fn best_log_likelihood(profile: &Profile) -> f64 {
    let fixed = profile.punctuation + profile.unseen as f64 * log_share(UNSEEN)
        - LONE_LETTER * profile.lone as f64;
    letter_model::model()
        .languages
        .iter()
        .enumerate()
        .map(|(i, language)| {
            let table = &language.letters;
            let known = profile
                .known
                .iter()
                .filter(|&&mask| i < 64 && mask & (1 << i) != 0)
                .count();
            // The log-likelihood of ASCII letter counts (a–z).
            let of_ascii = |counts: &[u32; 26]| -> f64 {
                (b'a'..=b'z')
                    .zip(counts)
                    .filter(|&(_, &n)| n > 0)
                    .map(|(c, &n)| f64::from(n) * letter_log_likelihood(table, char::from(c)))
                    .sum()
            };
            KNOWN_WORD * known as f64
                + CONTEXT_WEIGHT * of_ascii(&profile.context)
                + of_ascii(&profile.ascii)
                + profile
                    .letters
                    .iter()
                    .map(|&(c, n)| f64::from(n) * letter_log_likelihood(table, c))
                    .sum::<f64>()
        })
        .fold(f64::NEG_INFINITY, f64::max)
        + fixed
}

fn is_latin_letter(c: char) -> bool {
    (('\u{C0}'..='\u{24F}').contains(&c) && c != '×' && c != '÷')
        || ('\u{300}'..='\u{36F}').contains(&c)
        || ('\u{1E00}'..='\u{1EFF}').contains(&c)
}

/// Separators between words: whitespace (but not the C1 control NEL) and
/// ASCII punctuation.
pub fn is_separator(c: char) -> bool {
    (c.is_whitespace() && !is_c1_control(c)) || (c.is_ascii() && !c.is_ascii_alphanumeric())
}

fn is_c1_control(c: char) -> bool {
    ('\u{80}'..='\u{9F}').contains(&c)
}

/// Counts the ASCII letters of the all-ASCII words outside markup tags
/// (the context of [`CONTEXT_WEIGHT`]).
fn count_context(text: &str, context: &mut [u32; 26]) {
    let mut in_tag = false;
    let mut word_ascii = true;
    let mut word: [u32; 26] = [0; 26];
    let mut flush = |word: &mut [u32; 26], ascii: bool| {
        if ascii {
            for (c, n) in context.iter_mut().zip(word.iter()) {
                *c += n;
            }
        }
        *word = [0; 26];
    };
    for c in text.chars() {
        if in_tag {
            in_tag = c != '>';
            continue;
        }
        if c == '<' {
            in_tag = true;
            flush(&mut word, word_ascii);
            word_ascii = true;
            continue;
        }
        if is_separator(c) {
            flush(&mut word, word_ascii);
            word_ascii = true;
        } else if c.is_ascii_alphabetic() {
            word[usize::from(c.to_ascii_lowercase() as u8 - b'a')] += 1;
        } else if !c.is_ascii() {
            word_ascii = false;
        }
    }
    flush(&mut word, word_ascii);
}

fn profile_of(text: &str) -> Profile {
    let mut profile = Profile::default();
    count_context(text, &mut profile.context);
    let mut letters: Vec<(char, u32)> = Vec::new();
    let known = known_words();
    for piece in text.split_inclusive(is_separator) {
        // The word, and the separator after it.
        let (word, after) = match piece.char_indices().last() {
            Some((i, c)) if is_separator(c) => (&piece[..i], Some(c)),
            _ => (piece, None),
        };
        if word.is_ascii() {
            continue;
        }
        let key = word_key(word);
        match key.as_deref().and_then(|k| known.get(k)) {
            Some(&mask) => profile.known.push(mask),
            // A non-ASCII letter standing alone that no list knows as a word.
            None if key.is_some_and(|k| k.chars().count() == 1) => {
                profile.lone += 1;
                if after.is_none_or(char::is_whitespace) {
                    profile.oddity(false);
                }
            }
            None => {}
        }
        let chars: Vec<char> = word.chars().collect();
        let mut previous_lower = false;
        for (i, &c) in chars.iter().enumerate() {
            if c.is_ascii() {
                if c.is_ascii_alphabetic() {
                    profile.ascii[usize::from(c.to_ascii_lowercase() as u8 - b'a')] += 1;
                }
                previous_lower = c.is_ascii_lowercase();
                continue;
            }
            if let Some(Symbol::Letter(letter)) = model_symbol(c) {
                profile.reading.letters += 1;
                let glued = glued_to_a_number(&chars, i);
                if (c.is_uppercase() && previous_lower) || glued {
                    profile.oddity(glued);
                }
                match letters.iter_mut().find(|(l, _)| *l == letter) {
                    Some(slot) => slot.1 += 1,
                    None => letters.push((letter, 1)),
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
            let inside_a_word = between_letters && !is_word_internal(c);
            if is_c1_control(c) {
                profile.oddity(true);
            } else if inside_a_word || !is_common_punctuation(c) {
                // A letter of another script, or a symbol standing for a letter
                // (impossible: no text writes one there).
                profile.oddity(inside_a_word && !c.is_alphabetic());
            } else {
                profile.punctuation += punctuation_log_likelihood(c);
            }
        }
    }
    profile.letters = letters;
    profile
}

/// Apostrophes, hyphens, dashes and the Catalan middle dot, which stand
/// inside words (`l’été`, `day—and`).
fn is_word_internal(c: char) -> bool {
    matches!(
        c,
        '’' | '‘' | 'ʼ' | '·' | '\u{2010}' | '\u{2011}' | '\u{AD}' | '–' | '—'
    )
}

/// The letter at `i` touches a digit and no letter: a currency sign or a
/// unit a wrong reading made a letter of (`£40` read as `Ł40`, `40€` as
/// `40¤`); an ordinal suffix (`3ème`) has letters beside it.
fn glued_to_a_number(chars: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| chars.get(j));
    let after = chars.get(i + 1);
    let neighbours = [before, after];
    neighbours.iter().flatten().any(|c| c.is_ascii_digit())
        && !neighbours.iter().flatten().any(|c| c.is_alphabetic())
}

/// The Latin encoding whose reading of `bytes` fits a language best:
/// `preferred[0]` (then the others of `preferred`) unless another member of
/// [`LATIN_FAMILY`] reads it with a log-likelihood more than `margin`
/// nats higher ([`MARGIN`] for a declaration, [`DETECTOR_MARGIN`] for the
/// detector's guess), or higher with no C1 control where `preferred[0]` reads
/// some. Returns the winner and its
/// reading.
pub fn best_latin(
    bytes: &[u8],
    preferred: &[&'static Encoding],
    margin: f64,
) -> Option<(&'static Encoding, Reading)> {
    let first = *preferred.first()?;
    let past = PastWindow::of(bytes);
    let base = read(first, bytes, &past);
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
        let reading = read(candidate, bytes, &past);
        let clearly_better = reading.score() > base.score() + margin
            || (base.impossible > 0 && reading.impossible == 0 && reading.score() > base.score());
        if clearly_better && reading.score() > best.1.score() {
            best = (candidate, reading);
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::same_text;

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
        let (chosen, _) = best_latin(&bytes, &[told], MARGIN).expect("a reading");
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
            best_latin(&bytes, &[ISO_8859_2], MARGIN).map(|(e, _)| e),
            Some(ISO_8859_2)
        );
    }

    #[test]
    fn the_model_tables_are_sorted_for_binary_search() {
        let sorted = |table: &[(char, u32)]| table.windows(2).all(|w| w[0].0 < w[1].0);
        let model = letter_model::model();
        assert!(sorted(&model.punctuation));
        for language in &model.languages {
            assert!(sorted(&language.letters), "{}", language.code);
        }
        assert!(model.languages.len() >= 30);
    }

    #[test]
    fn letters_past_the_window_are_read() {
        // The window reads alike in windows-1250 and ISO-8859-2 (ż ó ł ę);
        // only the `ą` far past it (ISO-8859-2's `š`) tells them apart.
        let mut page = WINDOWS_1250
            .encode("Pół żółtej łodzi płynęło po jeziorze, gdy wiał wiatr. ")
            .0
            .into_owned();
        page.extend(b"<div class=\"row\"></div>\n".repeat(1000));
        page.extend_from_slice(
            &WINDOWS_1250
                .encode(" Oni są tutaj i mają czas, bo pracują rano i wracają wieczorem.")
                .0,
        );
        assert_eq!(
            best_latin(&page, &[ISO_8859_2], MARGIN).map(|(e, _)| e),
            Some(WINDOWS_1250)
        );
        assert_eq!(
            words_with_non_ascii(b"<a href=x>caf\xe9 ok</a> na\xefve", 100),
            b"caf\xe9 na\xefve ".to_vec()
        );
    }

    #[test]
    fn a_symbol_between_letters_is_impossible() {
        // ISO-8859-4 reads ISO-8859-15's `š` as `¨`: a symbol inside words,
        // which no text writes, so the truth wins on its score alone.
        let finnish = "Suomalais-ugrilaiset kielet: kuušilaiset ja sališilaiset ovat kansoja.";
        winner(finnish, ISO_8859_15, ISO_8859_4);
        assert_eq!(profile_of("kuu¨ilaiset").reading.impossible, 1);
        assert_eq!(profile_of("l’été, day—and").reading.impossible, 0);
    }

    #[test]
    fn hungarian_double_acute_beats_tilde() {
        let hungarian = "A véletlenszerű bejegyzések között sok érdekes írás található, \
            különösen a hosszú őszi estékről és a főváros műemlékeiről.";
        winner(hungarian, ISO_8859_2, WINDOWS_1252);
        winner(hungarian, WINDOWS_1250, ISO_8859_15);
    }

    #[test]
    fn known_words_are_found_in_the_right_reading_only() {
        assert_eq!(word_key("Più").as_deref(), Some("più"));
        assert_eq!(word_key("casa"), None, "all ASCII: alike in every reading");
        assert_eq!(word_key("pa¹stwo"), None, "not all letters");
        // Italian as windows-1252 writes it, and as ISO-8859-2 reads it.
        let italian = "è più già così città";
        let (bytes, _, _) = WINDOWS_1252.encode(italian);
        let (mangled, _) = ISO_8859_2.decode_without_bom_handling(&bytes);
        let right = profile_of(italian);
        let wrong = profile_of(&mangled);
        assert!(right.known.len() >= 4, "{:?}", right.known);
        assert!(wrong.known.is_empty(), "{mangled}: {:?}", wrong.known);
        let italian_bit = letter_model::model()
            .languages
            .iter()
            .position(|l| l.code == "it")
            .expect("Italian words");
        assert!(right.known.iter().all(|m| m & (1 << italian_bit) != 0));
    }

    #[test]
    fn a_capital_whose_lower_case_is_two_characters_is_not_a_plain_letter() {
        assert_eq!(model_symbol('İ'), Some(Symbol::Letter('İ')));
        assert_eq!(model_symbol('Ä'), Some(Symbol::Letter('ä')));
        // English with a `©`, as ISO-8859-3 reads its byte: not better.
        let (bytes, _, _) =
            WINDOWS_1252.encode("Image © NASA, the agency that sent the probe to Titan.");
        assert_eq!(
            best_latin(&bytes, &[WINDOWS_1252], DETECTOR_MARGIN).map(|(e, _)| e),
            Some(WINDOWS_1252)
        );
    }

    #[test]
    fn readings_count_letters_and_oddities() {
        let r = profile_of("państwo pa¹stwo ÄaB").reading;
        assert_eq!(r.letters, 2);
        assert_eq!(r.odd, 1);
        assert_eq!(profile_of("« bonjour » — été „Szia” l’été").reading.odd, 0);
        assert_eq!(profile_of("a\u{9A}b").reading.odd, 1);
        assert_eq!(profile_of("a\u{85}b \u{96}").reading.impossible, 2);
        // Glued to a number with no letter beside it; an ordinal suffix is not.
        assert_eq!(profile_of("(Ł40) Ŗ23.99").reading.impossible, 2);
        assert_eq!(profile_of("le 3ème siècle").reading.impossible, 0);
        // A lone letter no list knows is odd between spaces, not as an
        // initial or a label; a listed word is not odd.
        assert_eq!(profile_of("Ł. Kowalski, Š: 20").reading.odd, 0);
        assert_eq!(profile_of("Š NASA ť").reading.odd, 2);
        assert_eq!(profile_of("lui è più").reading.odd, 0);
        // Dashes stand between words written without spaces.
        assert_eq!(profile_of("all day—and night").reading.odd, 0);
    }
}
