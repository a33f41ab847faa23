//! The 64-bit SimHash of a body text.
//!
//! Text is normalized (NFKC, lower case, every run of punctuation and
//! whitespace one separator), cut into tokens (a word for space-separated
//! scripts, one character for Han, kana and hangul, which have no spaces),
//! and each run of [`SHINGLE`] consecutive tokens is a feature hashed with
//! xxh3. Every occurrence adds its hash to the sum, so a feature weighs as
//! often as it occurs. Bit i of the fingerprint is set when more features
//! have bit i set than not.

use unicode_normalization::UnicodeNormalization;
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

/// Tokens per shingle feature.
pub const SHINGLE: usize = 3;

/// Single tokens are features too, with this weight per occurrence (a
/// shingle occurrence weighs 1): a light edit changes few of them, so they
/// hold near-duplicates together, while the shingles keep distinct texts
/// over the same vocabulary apart.
pub const UNIGRAM_WEIGHT: i32 = 2;

/// Bodies with fewer tokens than this are too short for SimHash to tell
/// near-duplicates from different short texts; they are matched by an exact
/// hash instead.
pub const MIN_TOKENS: usize = 40;

/// The fingerprint of a body, or why it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fingerprint {
    /// A SimHash over at least [`MIN_TOKENS`] tokens.
    Sim(u64),
    /// Too short: the xxh3 of the normalized text, for exact matching only.
    Exact(u64),
}

impl Fingerprint {
    pub fn value(self) -> u64 {
        match self {
            Fingerprint::Sim(v) | Fingerprint::Exact(v) => v,
        }
    }
}

/// True for characters written without spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // hiragana, katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified
        | 0xAC00..=0xD7AF // hangul syllables
        | 0xF900..=0xFAFF // CJK compatibility
        | 0x20000..=0x2FFFF)
}

/// The token hashes of a text, in order.
pub fn tokens(text: &str) -> Vec<u64> {
    let mut out = Vec::with_capacity(text.len() / 5);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<u64>| {
        if !word.is_empty() {
            out.push(xxh3_64(word.as_bytes()));
            word.clear();
        }
    };
    let push_char = |c: char, word: &mut String, out: &mut Vec<u64>| {
        if is_cjk(c) {
            flush(word, out);
            let mut buf = [0u8; 4];
            out.push(xxh3_64(c.encode_utf8(&mut buf).as_bytes()));
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(word, out);
        }
    };
    if text.is_ascii() {
        for c in text.chars() {
            push_char(c, &mut word, &mut out);
        }
    } else {
        for c in text.nfkc() {
            push_char(c, &mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The fingerprint of a body text.
pub fn fingerprint(text: &str) -> Fingerprint {
    let toks = tokens(text);
    if toks.len() < MIN_TOKENS {
        let mut h = 0u64;
        for (i, t) in toks.iter().enumerate() {
            h = xxh3_64_with_seed(&t.to_le_bytes(), h ^ i as u64);
        }
        return Fingerprint::Exact(h);
    }
    let mut sums = [0i32; 64];
    let mut add = |h: u64, w: i32| {
        for (bit, sum) in sums.iter_mut().enumerate() {
            *sum += ((((h >> bit) & 1) as i32) * 2 - 1) * w;
        }
    };
    if UNIGRAM_WEIGHT > 0 {
        for t in &toks {
            add(*t, UNIGRAM_WEIGHT);
        }
    }
    for window in toks.windows(SHINGLE) {
        let mut bytes = [0u8; 8 * SHINGLE];
        for (i, t) in window.iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&t.to_le_bytes());
        }
        add(xxh3_64(&bytes), 1);
    }
    let mut fp = 0u64;
    for (bit, sum) in sums.iter().enumerate() {
        if *sum > 0 {
            fp |= 1 << bit;
        }
    }
    Fingerprint::Sim(fp)
}

/// Hamming distance between two fingerprints.
pub fn distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn article(seed: u64, words: usize) -> String {
        // A deterministic pseudo-text over a small vocabulary.
        let vocab = [
            "market", "river", "council", "vote", "school", "winter", "bridge", "report",
            "minister", "storm", "harbour", "budget", "science", "festival", "railway", "garden",
            "court", "museum", "energy", "farm", "police", "hospital", "city", "village",
            "company", "union", "season", "team", "coach", "player",
        ];
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..words)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                vocab[(x % vocab.len() as u64) as usize]
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn same_text_same_fingerprint_whatever_the_spacing_and_case() {
        let a = article(1, 300);
        let b = format!("  {}!!", a.to_uppercase().replace(' ', " ,\n "));
        assert_eq!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn a_light_edit_is_near_and_another_text_is_far() {
        let a = article(7, 500);
        let mut words: Vec<&str> = a.split(' ').collect();
        words[250] = "zebra";
        let edited = words.join(" ");
        let (Fingerprint::Sim(fa), Fingerprint::Sim(fe), Fingerprint::Sim(fo)) = (
            fingerprint(&a),
            fingerprint(&edited),
            fingerprint(&article(8, 500)),
        ) else {
            panic!("long texts get a SimHash")
        };
        assert!(distance(fa, fe) <= 3, "edit distance {}", distance(fa, fe));
        assert!(
            distance(fa, fo) > 10,
            "other text distance {}",
            distance(fa, fo)
        );
    }

    #[test]
    fn cjk_is_tokenized_per_character() {
        assert_eq!(tokens("中文新闻").len(), 4);
        assert_eq!(tokens("hello 世界 world").len(), 4);
        // Full-width forms fold to ASCII under NFKC.
        assert_eq!(tokens("ＡＢＣ abc"), tokens("abc abc"));
    }

    #[test]
    fn short_bodies_get_an_exact_hash() {
        assert!(matches!(
            fingerprint("Page not found"),
            Fingerprint::Exact(_)
        ));
        assert_eq!(
            fingerprint("Page not found"),
            fingerprint("page, NOT found.")
        );
        assert_ne!(fingerprint("Page not found"), fingerprint("Page found"));
    }
}
