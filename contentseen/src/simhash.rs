//! The 64-bit SimHash of a body text.
//!
//! Text is normalized (NFKC for non-ASCII text, lower case, every run of
//! punctuation and whitespace one separator) and cut into tokens: a word
//! for space-separated scripts, one character for Han, kana and hangul,
//! which have no spaces. Lines of fewer than [`Features::min_line_tokens`]
//! tokens are left out (unless that leaves under [`MIN_TOKENS`]). Features
//! are every single token, with weight `unigram_weight` (2), and every run
//! of `shingle` (3) consecutive tokens, with weight `shingle_weight` (1);
//! every occurrence adds its weight, so a feature weighs as often as it
//! occurs. Bit i of the fingerprint is set when the features with bit i set
//! outweigh those without.
//!
//! ## Why 3-token shingles, unigrams of weight 2, lines of ≥ 10 tokens (measured)
//!
//! `cargo bench -p contentseen --bench contentseen` builds a near-duplicate
//! set from the 181 AEB article bodies ([`crate::evaluation`]: 543 template
//! mirror pairs, 543 light edits, 543 boilerplate blocks added, against all
//! 16,290 pairs of distinct articles) and prints recall per kind and the
//! precision of "distance ≤ 3" per feature choice. On that set:
//!
//! | features                        | mirrors | light edits | boilerplate | distinct ≤ 3 | precision |
//! |---------------------------------|---------|-------------|-------------|--------------|-----------|
//! | 3-shingles only                 | 0.628   | 0.635       | 0.234       | 0            | 1.000     |
//! | unigrams only                   | 0.899   | 0.934       | 0.713       | 5            | 0.995     |
//! | 3-shingles + unigrams ×2        | 0.858   | 0.921       | 0.650       | 0            | 1.000     |
//! | 2-shingles + unigrams ×2        | 0.880   | 0.921       | 0.645       | 0            | 1.000     |
//! | 4-shingles + unigrams ×2        | 0.878   | 0.915       | 0.694       | 1            | 0.999     |
//! | 3-sh. + uni. ×2, lines ≥ 6      | 0.928   | 0.915       | 0.652       | 1            | 0.999     |
//! | **3-sh. + uni. ×2, lines ≥ 10** | 1.000   | 0.923       | 0.678       | 2            | 0.998     |
//! | 3-sh. + uni. ×2, lines ≥ 15     | 1.000   | 0.901       | 0.820       | 2            | 0.998     |
//! | 3-sh. + uni. ×1, lines ≥ 10     | 0.998   | 0.836       | 0.576       | 0            | 1.000     |
//! | 3-sh. + uni. ×4, lines ≥ 10     | 1.000   | 0.912       | 0.691       | 3            | 0.997     |
//!
//! Shingles alone move too many bits per edit (each changed word changes
//! three shingles); unigrams alone hold edits together but merge distinct
//! texts over one vocabulary (5 AEB pairs; the test site's generated
//! articles). Unigrams weighted 2 with 3-shingles keep distinct texts apart
//! (no pair within 3, 2 of 16,290 with lines ≥ 10) and edits together.
//! Leaving out lines of fewer than 10 tokens (share bars, copyright lines,
//! "Related articles" headings: what templates add) takes mirror recall
//! from 0.86 to 1.00. Light edits are found at 0.975 on articles of 300
//! tokens or more but 0.72 under 300 tokens (three changed words or an
//! added sentence are 5–20% of a 70-token text, too much for 3 of 64 bits):
//! overall 0.923, short of the 0.95 target; a larger k would buy recall on
//! short texts with the precision the table shows for distinct pairs at
//! distance 4–5.
//!
//! ## Speed
//!
//! One pass over the bytes, no allocation per token: runs of ASCII letters
//! and digits are lower-cased into one reused buffer and hashed with xxh3;
//! only runs holding non-ASCII characters go through NFKC. Bit counts are
//! kept in byte lanes (eight 8-bit counters per `u64`, one lookup-table add
//! per hash byte instead of 64 branches per feature), flushed to 32-bit
//! totals before a lane could overflow.

use unicode_normalization::UnicodeNormalization;
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

/// Which features a fingerprint counts, and their weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// Tokens per shingle feature (1 to [`MAX_SHINGLE`]); 0 for no shingles.
    pub shingle: usize,
    /// Weight of each single-token occurrence (0: no unigram features).
    pub unigram_weight: u8,
    /// Weight of each shingle occurrence.
    pub shingle_weight: u8,
    /// Lines with fewer tokens are left out (0: every line counts), unless
    /// fewer than [`MIN_TOKENS`] tokens would be left.
    pub min_line_tokens: usize,
}

/// The longest shingle a [`Features`] may ask for.
pub const MAX_SHINGLE: usize = 8;

/// Index mask of the ring of recent tokens (a power of two ≥ MAX_SHINGLE,
/// so the ring is indexed without a division per token).
const RING_MASK: usize = MAX_SHINGLE - 1;

/// The features every stored fingerprint uses (see the module doc for why).
pub const DEFAULT: Features = Features {
    shingle: 3,
    unigram_weight: 2,
    shingle_weight: 1,
    min_line_tokens: 10,
};

/// Tokens per shingle feature of [`DEFAULT`].
pub const SHINGLE: usize = DEFAULT.shingle;

/// Bodies with fewer tokens than this are too short for SimHash to tell
/// near-duplicates from different short texts (a 40-token text changes
/// several bits per edited word); they are matched by an exact hash instead.
pub const MIN_TOKENS: usize = 40;

/// The fingerprint of a body, or why it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fingerprint {
    /// A SimHash over at least [`MIN_TOKENS`] tokens.
    Sim(u64),
    /// Too short: a hash of the normalized tokens, for exact matching only.
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

/// Byte classes of the tokenizer's scan: a separator, or the flags a run
/// collects.
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const NON_ASCII: u8 = 4;
const CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b'a'..=b'z' | b'0'..=b'9' => LOWER,
            b'A'..=b'Z' => UPPER,
            0x80..=0xFF => NON_ASCII,
            _ => SEP,
        };
        b += 1;
    }
    t
};

/// The top bit of every byte lane.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// For eight bytes: the top bit of each lane set when that byte is an ASCII
/// letter or digit, and the same for upper-case letters (non-ASCII bytes
/// count as neither; "hasbetween" from Bit Twiddling Hacks).
#[inline(always)]
fn ascii_alnum_mask(x: u64) -> (u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let between = |m: u64, n: u64| {
        // Lanes with m < byte < n, for bytes below 0x80.
        let low = x & (ONES * 127);
        (ONES * (127 + n)).wrapping_sub(low) & !x & (low.wrapping_add(ONES * (127 - m))) & HIGH_BITS
    };
    let upper = between(b'A' as u64 - 1, b'Z' as u64 + 1);
    let alnum = upper
        | between(b'a' as u64 - 1, b'z' as u64 + 1)
        | between(b'0' as u64 - 1, b'9' as u64 + 1);
    (alnum, upper)
}

/// Calls `emit` with the hash of every token of `text`, in order.
pub fn for_each_token(text: &str, mut emit: impl FnMut(u64)) {
    tokens_into(text, &mut Vec::with_capacity(64), &mut emit);
}

/// [`for_each_token`] with a reusable word buffer.
#[inline(always)]
fn tokens_into(text: &str, word: &mut Vec<u8>, emit: &mut impl FnMut(u64)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if CLASS[bytes[i] as usize] == SEP {
            i += 1;
            continue;
        }
        // A run up to the next ASCII separator: eight ASCII bytes at a time
        // while they are letters and digits, then byte by byte.
        let start = i;
        let mut flags = 0;
        while let Some(chunk) = bytes.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            let (alnum, upper) = ascii_alnum_mask(x);
            let stop = !alnum & HIGH_BITS;
            // The lanes before the first stop (all eight when none).
            let before = (stop & stop.wrapping_neg()).wrapping_sub(1);
            if upper & before != 0 {
                flags |= UPPER;
            }
            if stop != 0 {
                i += (stop.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        while i < bytes.len() {
            let c = CLASS[bytes[i] as usize];
            if c == SEP {
                break;
            }
            flags |= c;
            i += 1;
        }
        let run = &bytes[start..i];
        if flags & NON_ASCII == 0 {
            if flags & UPPER != 0 {
                word.clear();
                word.extend(run.iter().map(u8::to_ascii_lowercase));
                emit(xxh3_64(word));
            } else {
                emit(xxh3_64(run));
            }
        } else {
            // The run starts and ends at ASCII bytes or the text's ends, so
            // at character boundaries: slicing needs no UTF-8 validation.
            non_ascii_tokens(text.get(start..i).unwrap_or_default(), word, emit);
        }
    }
}

/// Tokens of a run holding non-ASCII characters: NFKC, lower case, CJK
/// characters one token each, other non-alphanumerics separate words.
fn non_ascii_tokens(run: &str, word: &mut Vec<u8>, emit: &mut impl FnMut(u64)) {
    word.clear();
    // Most runs hold only characters whose NFKC form is known without the
    // tables (accented letters, Cyrillic, Greek, Han, kana, hangul, curly
    // quotes, full-width ASCII): they skip decomposition and recomposition.
    if run.chars().all(|c| fast_nfkc(c).is_some()) {
        chars_to_tokens(run.chars().filter_map(fast_nfkc), word, emit);
    } else {
        chars_to_tokens(run.nfkc(), word, emit);
    }
}

/// The NFKC form of a character that is one character and does not combine
/// with its neighbours, for the common scripts; `None` when the tables are
/// needed.
#[inline]
fn fast_nfkc(c: char) -> Option<char> {
    let u = c as u32;
    match u {
        0..=0x7F => Some(c),
        // Compatibility ligatures and forms among the fast letters.
        0x132 | 0x133 | 0x13F | 0x140 | 0x149 | 0x17F => None,
        // No-break and ideographic spaces.
        0xA0 | 0x3000 => Some(' '),
        // Full-width ASCII.
        0xFF01..=0xFF5E => char::from_u32(u - 0xFEE0),
        0xAB | 0xBB | 0xA9 | 0xAE | 0xB0 | 0xA7 | 0xB6 | 0xB7 | 0xD7 | 0xF7 => Some(c),
        0x2013 | 0x2014 | 0x2018 | 0x2019 | 0x201C | 0x201D | 0x2022 | 0x3001 | 0x3002 => Some(c),
        0x300C..=0x300F => Some(c),
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xAC00..=0xD7A3 | 0x3041..=0x3096 | 0x30A1..=0x30FA => {
            Some(c)
        }
        _ => fast_letter(c).map(|_| c),
    }
}

/// Lower case and "is a letter or digit" for the common alphabets without
/// the general Unicode tables (Latin-1, Latin Extended-A, Greek, Cyrillic);
/// `None` elsewhere.
#[inline]
fn fast_letter(c: char) -> Option<Option<char>> {
    let u = c as u32;
    let lower = |d: u32| char::from_u32(u + d);
    Some(match u {
        0xC0..=0xDE if u != 0xD7 => lower(0x20),
        0xDF..=0xFF if u != 0xF7 => Some(c),
        0xD7 | 0xF7 => None,
        0x100..=0x12F | 0x132..=0x137 | 0x14A..=0x177 => {
            Some(if u & 1 == 0 { lower(1)? } else { c })
        }
        0x391..=0x3A9 if u != 0x3A2 => lower(0x20),
        0x3AC..=0x3CE => Some(c),
        0x400..=0x40F => lower(0x50),
        0x410..=0x42F => lower(0x20),
        0x430..=0x45F => Some(c),
        _ => return None,
    })
}

/// Tokens of normalized characters (see [`non_ascii_tokens`]).
fn chars_to_tokens(
    chars: impl Iterator<Item = char>,
    word: &mut Vec<u8>,
    emit: &mut impl FnMut(u64),
) {
    let mut buf = [0u8; 4];
    for c in chars {
        if c.is_ascii() {
            if c.is_ascii_alphanumeric() {
                word.push(c.to_ascii_lowercase() as u8);
                continue;
            }
        } else if let Some(letter) = fast_letter(c) {
            if let Some(l) = letter {
                word.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
                continue;
            }
        } else if is_cjk(c) {
            if !word.is_empty() {
                emit(xxh3_64(word));
                word.clear();
            }
            emit(xxh3_64(c.encode_utf8(&mut buf).as_bytes()));
            continue;
        } else if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                word.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
            continue;
        }
        if !word.is_empty() {
            emit(xxh3_64(word));
            word.clear();
        }
    }
    if !word.is_empty() {
        emit(xxh3_64(word));
        word.clear();
    }
}

/// The token hashes of a text, in order.
pub fn tokens(text: &str) -> Vec<u64> {
    let mut out = Vec::with_capacity(text.len() / 6);
    for_each_token(text, |t| out.push(t));
    out
}

/// Byte lane l set to 1: `(h >> j) & LANE_ONES` holds bit 8l+j of `h` in lane l.
const LANE_ONES: u64 = 0x0101_0101_0101_0101;

/// Weighted bit counts of 64-bit feature hashes.
struct BitCounts {
    /// `lanes[j]` byte l: weight so far with bit 8l+j set, since the last flush.
    lanes: [u64; 8],
    /// Weight added to the lanes since the last flush (must stay ≤ 255).
    pending: u32,
    /// Flushed totals per bit.
    totals: [u32; 64],
    /// Total weight of all features.
    weight: u64,
}

impl BitCounts {
    fn new() -> Self {
        BitCounts {
            lanes: [0; 8],
            pending: 0,
            totals: [0; 64],
            weight: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, h: u64, w: u8) {
        if self.pending + w as u32 > 255 {
            self.flush();
        }
        self.pending += w as u32;
        self.weight += w as u64;
        let w = w as u64;
        // Eight shifts and masks, no branch or table: vectorizes.
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += ((h >> j) & LANE_ONES) * w;
        }
    }

    /// Two features at once (a token and the shingle it ends): one
    /// overflow check and one pass over the lanes.
    #[inline(always)]
    fn add2(&mut self, h1: u64, w1: u8, h2: u64, w2: u8) {
        let w = w1 as u32 + w2 as u32;
        if w > 255 {
            self.add(h1, w1);
            self.add(h2, w2);
            return;
        }
        if self.pending + w > 255 {
            self.flush();
        }
        self.pending += w;
        self.weight += w as u64;
        let (w1, w2) = (w1 as u64, w2 as u64);
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += ((h1 >> j) & LANE_ONES) * w1 + ((h2 >> j) & LANE_ONES) * w2;
        }
    }

    fn flush(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for l in 0..8 {
                self.totals[8 * l + j] += ((*lane >> (8 * l)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.pending = 0;
    }

    /// Bit i set when the weight with bit i set is more than half the total.
    fn simhash(mut self) -> u64 {
        self.flush();
        let mut fp = 0u64;
        for (bit, &t) in self.totals.iter().enumerate() {
            if 2 * t as u64 > self.weight {
                fp |= 1 << bit;
            }
        }
        fp
    }
}

/// Hash of a shingle from its token hashes (order-sensitive), cheaper than
/// hashing their bytes again.
#[inline(always)]
fn shingle_hash(window: impl Iterator<Item = u64>) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for t in window {
        h = (h.rotate_left(23) ^ t).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
    // murmur3's 64-bit finalizer: every input bit reaches every output bit.
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// The fingerprint of a body text, with the [`DEFAULT`] features.
pub fn fingerprint(text: &str) -> Fingerprint {
    fingerprint_with(text, &DEFAULT)
}

/// Feeds token hashes to the bit counts as unigram and shingle features.
struct FeatureSum<'f> {
    features: &'f Features,
    counts: BitCounts,
    /// The last tokens fed, as a ring.
    ring: [u64; MAX_SHINGLE],
    /// Tokens fed so far.
    fed: usize,
}

impl<'f> FeatureSum<'f> {
    fn new(features: &'f Features) -> Self {
        FeatureSum {
            features,
            counts: BitCounts::new(),
            ring: [0; MAX_SHINGLE],
            fed: 0,
        }
    }

    #[inline(always)]
    fn feed(&mut self, t: u64) {
        let f = self.features;
        let n = f.shingle.min(MAX_SHINGLE);
        let at = self.fed;
        self.fed += 1;
        self.ring[at & RING_MASK] = t;
        if n > 0 && at + 1 >= n {
            let ring = &self.ring;
            let h = shingle_hash((at + 1 - n..=at).map(|i| ring[i & RING_MASK]));
            self.counts.add2(t, f.unigram_weight, h, f.shingle_weight);
        } else if f.unigram_weight > 0 {
            self.counts.add(t, f.unigram_weight);
        }
    }
}

/// The fingerprint of a body text with the given features.
pub fn fingerprint_with(text: &str, features: &Features) -> Fingerprint {
    let mut sum = FeatureSum::new(features);
    let mut word = Vec::with_capacity(64);
    let mut count = 0usize;
    // Exact hash of the first MIN_TOKENS tokens, used when there are fewer.
    let mut exact = 0u64;
    let mut exact_hash = |t: u64, count: &mut usize| {
        if *count < MIN_TOKENS {
            exact = xxh3_64_with_seed(&t.to_le_bytes(), exact ^ *count as u64);
        }
        *count += 1;
    };
    if features.min_line_tokens == 0 {
        tokens_into(text, &mut word, &mut |t| {
            exact_hash(t, &mut count);
            sum.feed(t);
        });
    } else {
        // Lines shorter than `min_line_tokens` (share bars, copyright,
        // headings: what templates add) are left out; shingles run on
        // across them.
        let mut line = Vec::with_capacity(256);
        for l in text.split('\n') {
            line.clear();
            tokens_into(l, &mut word, &mut |t| {
                exact_hash(t, &mut count);
                line.push(t);
            });
            if line.len() >= features.min_line_tokens {
                for &t in &line {
                    sum.feed(t);
                }
            }
        }
    }
    if count < MIN_TOKENS {
        return Fingerprint::Exact(exact);
    }
    if sum.fed < MIN_TOKENS && features.min_line_tokens > 0 {
        // Mostly short lines (a list, verse): every line counts.
        return fingerprint_with(
            text,
            &Features {
                min_line_tokens: 0,
                ..*features
            },
        );
    }
    Fingerprint::Sim(sum.counts.simhash())
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

    /// The plain definition: ±weight per bit per feature.
    fn reference(text: &str, f: &Features) -> u64 {
        let toks = tokens(text);
        let mut sums = [0i64; 64];
        let mut add = |h: u64, w: i64| {
            for (bit, s) in sums.iter_mut().enumerate() {
                *s += if (h >> bit) & 1 == 1 { w } else { -w };
            }
        };
        for t in &toks {
            if f.unigram_weight > 0 {
                add(*t, f.unigram_weight as i64);
            }
        }
        if f.shingle > 0 {
            for w in toks.windows(f.shingle) {
                add(shingle_hash(w.iter().copied()), f.shingle_weight as i64);
            }
        }
        sums.iter()
            .enumerate()
            .fold(0, |fp, (bit, &s)| if s > 0 { fp | 1 << bit } else { fp })
    }

    #[test]
    fn lane_counting_matches_the_definition() {
        let text = article(3, 2000);
        for f in [
            DEFAULT,
            Features {
                shingle: 0,
                unigram_weight: 1,
                shingle_weight: 0,
                min_line_tokens: 0,
            },
            Features {
                shingle: 5,
                unigram_weight: 0,
                shingle_weight: 7,
                min_line_tokens: 0,
            },
            Features {
                shingle: 1,
                unigram_weight: 200,
                shingle_weight: 100,
                min_line_tokens: 0,
            },
        ] {
            assert_eq!(
                fingerprint_with(&text, &f),
                Fingerprint::Sim(reference(&text, &f)),
                "{f:?}"
            );
        }
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
    fn eight_byte_masks_agree_with_the_byte_classes() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (alnum, upper) = ascii_alnum_mask(x);
            for (l, b) in x.to_le_bytes().into_iter().enumerate() {
                let bit = |m: u64| (m >> (8 * l + 7)) & 1 == 1;
                assert_eq!(bit(alnum), b.is_ascii_alphanumeric(), "{b:#x}");
                assert_eq!(bit(upper), b.is_ascii_uppercase(), "{b:#x}");
            }
        }
        assert_eq!(
            tokens("Hello WORLD abcdefghijklmnopqrstuvwxyz0123 x"),
            tokens("hello world ABCDEFGHIJKLMNOPQRSTUVWXYZ0123 X")
        );
    }

    #[test]
    fn fast_letters_agree_with_unicode() {
        for u in 0x80..0x500u32 {
            let Some(c) = char::from_u32(u) else { continue };
            if let Some(fast) = fast_letter(c) {
                let slow = c
                    .is_alphanumeric()
                    .then(|| c.to_lowercase().next())
                    .flatten();
                assert_eq!(fast, slow, "U+{u:04X}");
            }
        }
    }

    #[test]
    fn fast_nfkc_agrees_with_nfkc() {
        let ranges = [
            0x80..0x600u32,
            0x2000..0x2100,
            0x3000..0x3100,
            0x4E00..0x4F00,
            0xAC00..0xAD00,
            0xFF00..0xFF70,
        ];
        for u in ranges.into_iter().flatten() {
            let Some(c) = char::from_u32(u) else { continue };
            if let Some(fast) = fast_nfkc(c) {
                let slow: String = c.to_string().nfkc().collect();
                assert_eq!(fast.to_string(), slow, "U+{u:04X}");
            }
        }
    }

    #[test]
    fn cjk_is_tokenized_per_character() {
        assert_eq!(tokens("中文新闻").len(), 4);
        assert_eq!(tokens("hello 世界 world").len(), 4);
        assert_eq!(tokens("hello世界world").len(), 4);
        // Full-width forms fold to ASCII under NFKC.
        assert_eq!(tokens("ＡＢＣ abc"), tokens("abc abc"));
        // Accented words are one token, lower-cased.
        assert_eq!(tokens("Café CAFÉ"), tokens("café café"));
        assert_eq!(tokens("Café").len(), 1);
        // Curly quotes separate words like ASCII punctuation.
        assert_eq!(tokens("“it’s”"), tokens("\"it's\""));
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
        let thirty_nine = article(2, MIN_TOKENS - 1);
        assert!(matches!(fingerprint(&thirty_nine), Fingerprint::Exact(_)));
        let forty = article(2, MIN_TOKENS);
        assert!(matches!(fingerprint(&forty), Fingerprint::Sim(_)));
    }
}
