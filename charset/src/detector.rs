//! chardetng's guess over a bounded window of the bytes, with the top-level
//! domain as a hint. The detector is the expensive signal (about 9 MB/s over
//! a whole file), so it reads at most [`DETECTOR_WINDOW`] bytes from the first
//! non-ASCII byte on: leading ASCII markup tells it nothing.

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::Encoding;

/// How many bytes, from the first non-ASCII byte, the detector reads. Past
/// this the guess rarely changes (see the `charset` benchmark), while the
/// cost keeps growing with the page.
pub const DETECTOR_WINDOW: usize = 16 * 1024;

/// chardetng's guess for `bytes`. `allow_utf8` should be false when the
/// bytes are known not to be UTF-8; `tld` is a hostname's last label (or a
/// whole hostname), used only if it is plain ASCII.
pub fn guess(bytes: &[u8], tld: Option<&[u8]>, allow_utf8: bool) -> &'static Encoding {
    guess_within(bytes, tld, allow_utf8, DETECTOR_WINDOW)
}

/// Like [`guess`], with an explicit window (`usize::MAX` for the whole input);
/// the benchmark measures the accuracy/speed trade-off with it.
pub fn guess_within(
    bytes: &[u8],
    tld: Option<&[u8]>,
    allow_utf8: bool,
    window: usize,
) -> &'static Encoding {
    let start = Encoding::ascii_valid_up_to(bytes);
    let end = start.saturating_add(window).min(bytes.len());
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Allow);
    detector.feed(&bytes[..end], end == bytes.len());
    let utf8 = if allow_utf8 {
        Utf8Detection::Allow
    } else {
        Utf8Detection::Deny
    };
    detector.guess(clean_tld(tld).as_deref(), utf8)
}

/// The detector's window of `bytes`: [`DETECTOR_WINDOW`] bytes from the
/// first non-ASCII one.
fn window(bytes: &[u8]) -> &[u8] {
    let start = Encoding::ascii_valid_up_to(bytes);
    &bytes[start..bytes.len().min(start.saturating_add(DETECTOR_WINDOW))]
}

/// chardetng has no x-mac-cyrillic: when it reads Cyrillic, check whether
/// the Mac encoding gives more Cyrillic letters (Mac puts the capitals at
/// 0x80-0x9F, where windows-1251 has punctuation and Serbian letters); when
/// it reads Latin that is no plausible Latin text (Mac Cyrillic's capitals
/// put it off Cyrillic altogether), check whether the Mac reading is
/// plausible Cyrillic.
pub fn refine_cyrillic(guess: &'static Encoding, bytes: &[u8]) -> &'static Encoding {
    use encoding_rs::{IBM866, ISO_8859_5, KOI8_U, WINDOWS_1251, X_MAC_CYRILLIC};
    if super::language::LATIN_FAMILY.contains(&guess)
        && !super::alphabet::reads_plausibly(guess, true, bytes)
        && super::alphabet::reads_plausibly(X_MAC_CYRILLIC, false, bytes)
    {
        return X_MAC_CYRILLIC;
    }
    if ![WINDOWS_1251, KOI8_U, IBM866, ISO_8859_5].contains(&guess) {
        return guess;
    }
    let window = window(bytes);
    if cyrillic_letters(X_MAC_CYRILLIC, window) > cyrillic_letters(guess, window) {
        X_MAC_CYRILLIC
    } else {
        guess
    }
}

/// The Cyrillic single-byte encodings, which put the same letters at
/// different bytes.
const CYRILLIC_FAMILY: [&Encoding; 6] = [
    encoding_rs::WINDOWS_1251,
    encoding_rs::KOI8_R,
    encoding_rs::KOI8_U,
    encoding_rs::IBM866,
    encoding_rs::ISO_8859_5,
    encoding_rs::X_MAC_CYRILLIC,
];

/// A Cyrillic encoding that reads clearly more Cyrillic letters from the
/// bytes than `declared` does (more than a twentieth, and more than two):
/// the declaration is then a lie inside the family (x-mac-cyrillic and
/// windows-1251 read the same lower-case letters and differ on capitals).
pub fn cyrillic_rival(declared: &'static Encoding, bytes: &[u8]) -> Option<&'static Encoding> {
    if !CYRILLIC_FAMILY.contains(&declared) {
        return None;
    }
    let window = window(bytes);
    let own = cyrillic_letters(declared, window);
    let (rival, letters) = CYRILLIC_FAMILY
        .iter()
        .map(|&e| (e, cyrillic_letters(e, window)))
        .max_by_key(|&(_, letters)| letters)?;
    (letters > own + 2.max(own / 20)).then_some(rival)
}

/// The letters of the reading that stand in words of the alphabet of one
/// of the languages the Cyrillic single-byte encodings are written in
/// (Russian, Ukrainian, Belarusian, Bulgarian, Serbian, Macedonian:
/// `після`, `беларускі`, `између`, `њега` count as much as `после`) of a
/// plausible case: lower-case, ALL-CAPS, Capitalised or CamelCase
/// (`РегистрСведений`, every capital followed by a lower-case letter).
/// Words run between spaces and ASCII punctuation, quotes and dashes
/// trimmed at their edges: a symbol inside a word (Ukrainian `і` read as
/// x-mac-cyrillic's `≥`, `п≥сля`) spoils the word rather than splitting it
/// into two Russian-looking ones. Punctuation of one encoding read as
/// capitals of another (`–` as a lone `Ц`, `“Слово` as `УСлово`) and
/// swapped case (`пРИВЕТ`) do not count. The letters only Serbian and
/// Macedonian write (`ђ` `ј` `љ` `њ` `ћ` `џ` `ѓ` `ќ` `ѕ`) count inside a word,
/// not at its start: leaving them out made Serbian windows-1251 (`између`,
/// `није`) lose to its x-mac-cyrillic reading, which turns `ђ` `њ` `ћ` into
/// capitals (`Ьега`) and so counts the words they start; but where the
/// two encodings put a Russian capital, the other puts one of these letters
/// (`Москва` in windows-1251 read as x-mac-cyrillic is `ћосква`), so at the
/// start of a word they say nothing.
fn cyrillic_letters(encoding: &'static Encoding, bytes: &[u8]) -> usize {
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    // U+0400-U+045F holds every letter of these alphabets (and Ѐ Ѝ, which no
    // single-byte encoding has); Ґ ґ stand apart.
    let is_alphabet = |c: char| matches!(c, '\u{400}'..='\u{45F}' | 'Ґ' | 'ґ');
    let is_south_slavic_only = |c: char| {
        matches!(
            c,
            'Ђ' | 'ђ'
                | 'Ѓ'
                | 'ѓ'
                | 'Ѕ'
                | 'ѕ'
                | 'Ј'
                | 'ј'
                | 'Љ'
                | 'љ'
                | 'Њ'
                | 'њ'
                | 'Ћ'
                | 'ћ'
                | 'Ќ'
                | 'ќ'
                | 'Џ'
                | 'џ'
        )
    };
    text.split(|c: char| c.is_whitespace() || (c.is_ascii() && !c.is_ascii_alphabetic()))
        .map(|word| word.trim_matches(|c: char| !c.is_alphabetic()))
        .filter(|word| {
            word.chars().all(is_alphabet)
                && word
                    .chars()
                    .next()
                    .is_some_and(|c| !is_south_slavic_only(c))
        })
        .map(|word| word.chars().collect::<Vec<char>>())
        .filter(|word| plausible_case(word))
        .map(|word| word.len())
        .sum()
}

/// chardetng names the whole KOI8 family KOI8-U, so its KOI8-U confirms a
/// declared KOI8-R, unless the bytes are Ukrainian: KOI8-U is KOI8-R with
/// `і` `ї` `є` `ґ` (and their capitals) where KOI8-R draws boxes, so
/// Ukrainian read as KOI8-R has box drawing inside its words, and the
/// KOI8-U reading holds more words of letters.
pub fn koi8_u_reads_more(bytes: &[u8]) -> bool {
    use encoding_rs::{KOI8_R, KOI8_U};
    let window = window(bytes);
    cyrillic_letters(KOI8_U, window) > cyrillic_letters(KOI8_R, window)
}

/// ALL-CAPS of two letters or more, or every capital followed by a
/// lower-case letter.
fn plausible_case(word: &[char]) -> bool {
    if word.iter().all(|c| c.is_uppercase()) {
        return word.len() >= 2;
    }
    word.iter()
        .enumerate()
        .all(|(i, c)| !c.is_uppercase() || word.get(i + 1).is_some_and(|d| d.is_lowercase()))
}

/// The form chardetng requires (lower-case ASCII, no dot; it panics on
/// anything else): the last label of whatever the caller gave, or nothing.
fn clean_tld(tld: Option<&[u8]>) -> Option<Vec<u8>> {
    let tld = tld?;
    let tld = tld.strip_suffix(b".").unwrap_or(tld);
    let label = tld.rsplit(|&b| b == b'.').next()?;
    if label.is_empty()
        || !label
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
    {
        return None;
    }
    Some(label.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tld_is_cleaned_not_panicked_on() {
        assert_eq!(clean_tld(Some(b"RU")), Some(b"ru".to_vec()));
        assert_eq!(clean_tld(Some(b"www.example.co.jp")), Some(b"jp".to_vec()));
        assert_eq!(clean_tld(Some(b"example.com.")), Some(b"com".to_vec()));
        assert_eq!(clean_tld(Some("рф".as_bytes())), None);
        assert_eq!(clean_tld(Some(b"")), None);
        assert_eq!(clean_tld(Some(b".")), None);
        let _ = guess("привет".as_bytes(), Some("Ü.X".as_bytes()), true);
    }

    #[test]
    fn case_patterns() {
        let ok = |w: &str| plausible_case(&w.chars().collect::<Vec<_>>());
        assert!(ok("слово") && ok("Слово") && ok("СЛОВО") && ok("РегистрСведений"));
        assert!(!ok("УСлово") && !ok("пРИВЕТ") && !ok("Ц") && !ok("словО"));
    }

    #[test]
    fn serbian_windows_1251_is_not_taken_for_mac_cyrillic() {
        let serbian = "Ова датотека није пронађена. Молимо вас да проверите путању и \
            покушате поново, јер без ње програм не може да ради како треба. Њега \
            ће обавестити између осталог и о томе шта је још потребно.";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(serbian);
        assert_eq!(
            refine_cyrillic(encoding_rs::WINDOWS_1251, &bytes),
            encoding_rs::WINDOWS_1251
        );
        assert_eq!(cyrillic_rival(encoding_rs::WINDOWS_1251, &bytes), None);
        let russian = "Москва Россия Привет Съешь же ещё этих мягких французских булок.";
        let (bytes, _, _) = encoding_rs::X_MAC_CYRILLIC.encode(russian);
        assert_eq!(
            refine_cyrillic(encoding_rs::WINDOWS_1251, &bytes),
            encoding_rs::X_MAC_CYRILLIC
        );
    }

    #[test]
    fn ukrainian_reads_more_as_koi8_u() {
        let ukrainian = "Файл не знайдено. Перевірте шлях і спробуйте ще раз, або \
            зверніться до адміністратора системи: їхня відповідь є у журналі.";
        let (bytes, _, _) = encoding_rs::KOI8_U.encode(ukrainian);
        assert!(koi8_u_reads_more(&bytes));
        let (bytes, _, _) =
            encoding_rs::KOI8_R.encode("Съешь же ещё этих мягких французских булок, да выпей чаю.");
        assert!(!koi8_u_reads_more(&bytes));
    }

    #[test]
    fn detector_reads_cyrillic() {
        let (bytes, _, _) =
            encoding_rs::KOI8_R.encode("Съешь же ещё этих мягких французских булок, да выпей чаю.");
        assert_eq!(guess(&bytes, Some(b"ru"), false), encoding_rs::KOI8_U);
    }
}
