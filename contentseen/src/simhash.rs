//! The 64-bit SimHash of a body text.
//!
//! Text is normalized (NFKC for non-ASCII text, lower case, every run of
//! punctuation and whitespace one separator) and cut into tokens: a word
//! for space-separated scripts, one character for Han, kana, hangul, Thai
//! and the other scripts without spaces ([`script`]). Words
//! holding a digit (numbers, dates, times, ids) and URLs are left out: they
//! are the structure feeds and listings repeat, not prose. Lines of fewer than [`Features::min_line_tokens`]
//! tokens are left out (unless that leaves under [`MIN_TOKENS`]). Features
//! are every single token, with weight `unigram_weight` (2), and every run
//! of `shingle` (3) consecutive tokens, with weight `shingle_weight` (1);
//! every occurrence adds its weight, so a feature weighs as often as it
//! occurs. Bit i of the fingerprint is set when the features with bit i set
//! outweigh those without.
//!
//! ## Why 3-token shingles, unigrams of weight 2, lines of ≥ 10 tokens (measured)
//!
//! Measured on the clean-text near-duplicate set of the 181 AEB article
//! bodies (`cargo bench -p evaluation --bench contentseen`; the set and the
//! table of every feature choice: `evaluation::clean_text`) and on HTML
//! pages of four sources through the real stages (`cargo bench -p
//! evaluation --bench neardup`, `contentseen/README.md`).
//!
//! Shingles alone move too many bits per edit (each changed word changes
//! three shingles); unigrams alone hold edits together but merge distinct
//! texts over one vocabulary (10 AEB pairs; the test site's generated
//! articles). Unigrams weighted 2 with 3-shingles keep distinct texts apart
//! and edits together. Leaving out lines of fewer than 10 tokens (share
//! bars, copyright lines, "Related articles" headings: what templates add)
//! takes mirror recall from 0.956 to 1.000. With k = 3 for every body the
//! default found light edits at 0.913 only (0.970 on articles of 300 tokens
//! or more, 0.69 under 300): three changed words in a 100-token text flip
//! 4–9 bits. The search radius by length ([`crate::reach`]) is what takes
//! it to 0.972. The differences between rows near the default are within
//! the set's noise (another draw of the edits moves recall by ±0.01).
//!
//! ## Speed
//!
//! One pass over the bytes, no allocation per token: runs of ASCII letters
//! and digits are lower-cased into one reused buffer and hashed with xxh3;
//! runs holding non-ASCII characters take one pass that classifies each
//! character without the NFKC tables (Latin, Greek, Cyrillic, CJK, common
//! punctuation) and go through NFKC only when a character needs it. Bit
//! counts are kept in packed counters (sixteen 4-bit counters per `u64`,
//! four shift-mask-adds per feature, spread into 8-bit and then 32-bit
//! counters), unweighted per feature kind and weighted once at the end;
//! the shingle size is a constant of the loop. Under valgrind these cut the
//! instructions per byte of the AEB bodies from 75 to 53 (`cargo bench -p evaluation
//! --bench contentseen` prints the MB/s).

use unicode_normalization::UnicodeNormalization;

use crate::minhash::MinHash;
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
    /// How a feature that occurs several times in a body weighs.
    pub weights: Weights,
}

/// How much a feature occurring `c` times in one body weighs (times its
/// kind's weight).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    /// `c`: as often as it occurs.
    Count,
    /// `1 + ⌊log2 c⌋`: sublinear.
    Log,
    /// 1: the body's set of features.
    Once,
}

impl Weights {
    /// The weight of a feature seen `count` (≥ 1) times.
    pub fn of(self, count: u32) -> u32 {
        match self {
            Weights::Count => count,
            Weights::Log => 32 - count.max(1).leading_zeros(),
            Weights::Once => 1,
        }
    }
}

/// The longest shingle a [`Features`] may ask for.
pub const MAX_SHINGLE: usize = 8;

/// The features every stored fingerprint uses (see the module doc for why).
pub const DEFAULT: Features = Features {
    shingle: 3,
    unigram_weight: 2,
    shingle_weight: 1,
    min_line_tokens: 10,
    weights: Weights::Count,
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

/// True for characters written without spaces between words (Han, kana,
/// hangul, Thai, Lao, Khmer, Myanmar): a token each, or by pairs for the
/// alphabets (`is_paired`).
pub fn is_cjk(c: char) -> bool {
    script::is_unspaced(c)
}

/// Byte classes of the tokenizer's scan: a separator, or the flags a run
/// collects.
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const NON_ASCII: u8 = 4;
const DIGIT: u8 = 8;
const CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => LOWER | DIGIT,
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
/// letter or digit, the same for upper-case letters, and for digits
/// (non-ASCII bytes count as none; "hasbetween" from Bit Twiddling Hacks).
#[inline(always)]
fn ascii_alnum_mask(x: u64) -> (u64, u64, u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let between = |m: u64, n: u64| {
        // Lanes with m < byte < n, for bytes below 0x80.
        let low = x & (ONES * 127);
        (ONES * (127 + n)).wrapping_sub(low) & !x & (low.wrapping_add(ONES * (127 - m))) & HIGH_BITS
    };
    let upper = between(b'A' as u64 - 1, b'Z' as u64 + 1);
    let digit = between(b'0' as u64 - 1, b'9' as u64 + 1);
    let alnum = upper | between(b'a' as u64 - 1, b'z' as u64 + 1) | digit;
    (alnum, upper, digit)
}

/// Whether a word holds a digit: numbers, dates, times, ids and version
/// strings are left out of the features. They are structure (feeds and
/// listings repeat a date and a number on every line), not prose, and two
/// different texts sharing them look alike.
#[inline(always)]
fn has_digit(word: &[u8]) -> bool {
    word.iter().any(u8::is_ascii_digit)
}

/// The length of a URL starting at `bytes[0]` (`http://`, `https://` or
/// `www.`, up to the next ASCII whitespace or `<>"`), or 0. URLs are left
/// out of the features like numbers: a feed repeats its site's address.
#[inline(always)]
fn url_len(bytes: &[u8]) -> usize {
    let starts = bytes.len() > 8
        && (bytes[..7].eq_ignore_ascii_case(b"http://")
            || bytes[..8].eq_ignore_ascii_case(b"https://")
            || bytes[..4].eq_ignore_ascii_case(b"www."));
    if !starts {
        return 0;
    }
    bytes
        .iter()
        .position(|b| b.is_ascii_whitespace() || matches!(b, b'<' | b'>' | b'"'))
        .unwrap_or(bytes.len())
}

/// Calls `emit` with the hash of every token of `text`, in order.
pub fn for_each_token(text: &str, mut emit: impl FnMut(u64)) {
    tokens_into(text, &mut Scratch::default(), &mut emit);
}

/// Buffers the tokenizer reuses.
#[derive(Default)]
struct Scratch {
    /// The word being built (lower case).
    word: Vec<u8>,
    /// Tokens of a non-ASCII run, held until the run is known to be fast.
    held: Vec<u64>,
    /// Words holding a digit are tokens too (the MinHash's pass,
    /// [`minhash_of`]); the SimHash leaves them out.
    numbers: bool,
}

/// [`for_each_token`] with reusable buffers.
#[inline(always)]
fn tokens_into(text: &str, scratch: &mut Scratch, emit: &mut impl FnMut(u64)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if CLASS[bytes[i] as usize] == SEP {
            i += 1;
            continue;
        }
        if matches!(bytes[i], b'h' | b'H' | b'w' | b'W')
            && (i == 0 || CLASS[bytes[i - 1] as usize] == SEP)
        {
            let n = url_len(&bytes[i..]);
            if n > 0 {
                i += n;
                continue;
            }
        }
        // A run up to the next ASCII separator: eight ASCII bytes at a time
        // while they are letters and digits, then byte by byte.
        let start = i;
        let mut flags = 0;
        while let Some(chunk) = bytes.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            let (alnum, upper, digit) = ascii_alnum_mask(x);
            let stop = !alnum & HIGH_BITS;
            // The lanes before the first stop (all eight when none).
            let before = (stop & stop.wrapping_neg()).wrapping_sub(1);
            if upper & before != 0 {
                flags |= UPPER;
            }
            if digit & before != 0 {
                flags |= DIGIT;
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
            if flags & DIGIT != 0 && !scratch.numbers {
                continue;
            }
            if flags & UPPER != 0 {
                let word = &mut scratch.word;
                word.clear();
                word.extend(run.iter().map(u8::to_ascii_lowercase));
                emit(xxh3_64(word));
            } else {
                emit(xxh3_64(run));
            }
        } else {
            // The run starts and ends at ASCII bytes or the text's ends, so
            // at character boundaries: slicing needs no UTF-8 validation.
            non_ascii_tokens(text.get(start..i).unwrap_or_default(), scratch, emit);
        }
    }
}

/// Tokens of a run holding non-ASCII characters: NFKC, lower case, CJK
/// characters one token each, other non-alphanumerics separate words.
fn non_ascii_tokens(run: &str, scratch: &mut Scratch, emit: &mut impl FnMut(u64)) {
    // Most runs hold only characters whose NFKC form is known without the
    // tables (accented letters, Cyrillic, Greek, Han, kana, hangul, curly
    // quotes, full-width ASCII): one pass over them, its tokens held back
    // until the run ends, and the run done again through the tables if a
    // character needs them.
    let Scratch {
        word,
        held,
        numbers,
    } = scratch;
    let numbers = *numbers;
    word.clear();
    held.clear();
    let mut buf = [0u8; 4];
    let end_word = |word: &mut Vec<u8>, held: &mut Vec<u64>| {
        if !word.is_empty() {
            if numbers || !has_digit(word) {
                held.push(xxh3_64(word));
            }
            word.clear();
        }
    };
    for c in run.chars() {
        match fast_class(c) {
            Fast::Letter(l) => {
                // Byte by byte: a two-byte copy is no call to memcpy.
                for &b in l.encode_utf8(&mut buf).as_bytes() {
                    word.push(b);
                }
            }
            Fast::Cjk => {
                end_word(word, held);
                held.push(xxh3_64(c.encode_utf8(&mut buf).as_bytes()));
            }
            Fast::Separator => end_word(word, held),
            Fast::Slow => {
                word.clear();
                held.clear();
                return chars_to_tokens(run.nfkc(), word, numbers, emit);
            }
        }
    }
    end_word(word, held);
    for &t in held.iter() {
        emit(t);
    }
}

/// What a character is to the tokenizer, when that is known without the
/// NFKC tables.
enum Fast {
    /// Part of a word: its NFKC, lower-cased form.
    Letter(char),
    /// Han, kana or hangul: a token of its own.
    Cjk,
    Separator,
    /// Needs the tables.
    Slow,
}

#[inline(always)]
fn fast_class(c: char) -> Fast {
    let u = c as u32;
    match u {
        // Latin-1 letters, Latin Extended-A, Greek, Cyrillic tested first (the
        // common non-ASCII letters of space-separated text; the same answer
        // as the last arm, reached in fewer compares).
        0xC0..=0x12F
        | 0x134..=0x13E
        | 0x141..=0x148
        | 0x14A..=0x17E
        | 0x391..=0x3CE
        | 0x400..=0x45F => letter_class(c),
        0..=0x7F if c.is_ascii_alphanumeric() => Fast::Letter(c.to_ascii_lowercase()),
        0..=0x7F => Fast::Separator,
        // Full-width ASCII.
        0xFF01..=0xFF5E => match char::from_u32(u - 0xFEE0) {
            Some(a) if a.is_ascii_alphanumeric() => Fast::Letter(a.to_ascii_lowercase()),
            _ => Fast::Separator,
        },
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xAC00..=0xD7A3 | 0x3041..=0x3096 | 0x30A1..=0x30FA => {
            Fast::Cjk
        }
        // Compatibility ligatures and forms among the fast letters.
        0x132 | 0x133 | 0x13F | 0x140 | 0x149 | 0x17F => Fast::Slow,
        // Spaces, quotes, dashes, signs and CJK punctuation that NFKC keeps.
        0xA0 | 0x3000 | 0xAB | 0xBB | 0xA9 | 0xAE | 0xB0 | 0xA7 | 0xB6 | 0xB7 => Fast::Separator,
        0x2013 | 0x2014 | 0x2018 | 0x2019 | 0x201C | 0x201D | 0x2022 | 0x3001 | 0x3002 => {
            Fast::Separator
        }
        0x300C..=0x300F => Fast::Separator,
        _ => letter_class(c),
    }
}

/// [`fast_letter`] as a [`Fast`] class: a letter, a separator, or the tables.
#[inline(always)]
fn letter_class(c: char) -> Fast {
    match fast_letter(c) {
        Some(Some(l)) => Fast::Letter(l),
        Some(None) => Fast::Separator,
        None => Fast::Slow,
    }
}

/// The NFKC form of a character that is one character and does not combine
/// with its neighbours, for the common scripts; `None` when the tables are
/// needed.
#[cfg(test)]
fn fast_nfkc(c: char) -> Option<char> {
    match fast_class(c) {
        Fast::Slow => None,
        Fast::Letter(_) | Fast::Cjk | Fast::Separator => match c as u32 {
            0xA0 | 0x3000 => Some(' '),
            u @ 0xFF01..=0xFF5E => char::from_u32(u - 0xFEE0),
            _ => Some(c),
        },
    }
}

/// Lower case and "is a letter or digit" for the common alphabets without
/// the general Unicode tables (Latin-1, Latin Extended-A, Greek, Cyrillic);
/// `None` elsewhere.
#[inline(always)]
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

/// Tokens of normalized characters (see [`non_ascii_tokens`]). Han, kana
/// and hangul characters are a token each; the letters of the alphabets
/// written without spaces (Thai, Lao, Khmer, Myanmar) are tokens by
/// overlapping pairs ([`pair_token`]).
fn chars_to_tokens(
    chars: impl Iterator<Item = char>,
    word: &mut Vec<u8>,
    numbers: bool,
    emit: &mut impl FnMut(u64),
) {
    let mut buf = [0u8; 4];
    // The run of unspaced-alphabet letters going on: its last letter, and
    // whether it has given a pair yet.
    let mut pair: Option<(char, bool)> = None;
    for c in chars {
        if is_paired(c) {
            end_word(word, numbers, emit);
            pair = Some(match pair {
                Some((last, _)) => {
                    emit(pair_token(last, c));
                    (c, true)
                }
                None => (c, false),
            });
            continue;
        }
        end_pairs(&mut pair, emit);
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
            end_word(word, numbers, emit);
            emit(xxh3_64(c.encode_utf8(&mut buf).as_bytes()));
            continue;
        } else if c.is_numeric() {
            // A digit of another script: the word is a number.
            word.push(b'0');
            continue;
        } else if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                word.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
            }
            continue;
        }
        end_word(word, numbers, emit);
    }
    end_pairs(&mut pair, emit);
    end_word(word, numbers, emit);
}

/// Ends a run of unspaced-alphabet letters: a run of one letter, which
/// gave no pair, is that letter's token.
fn end_pairs(pair: &mut Option<(char, bool)>, emit: &mut impl FnMut(u64)) {
    if let Some((last, false)) = pair.take() {
        let mut buf = [0u8; 4];
        emit(xxh3_64(last.encode_utf8(&mut buf).as_bytes()));
    }
}

/// Ends the word being built: its token, unless it holds a digit (a
/// number, not a SimHash feature) and `numbers` is false.
fn end_word(word: &mut Vec<u8>, numbers: bool, emit: &mut impl FnMut(u64)) {
    if !word.is_empty() {
        if numbers || !has_digit(word) {
            emit(xxh3_64(word));
        }
        word.clear();
    }
}

/// True for the letters (and signs) of the alphabets written without
/// spaces: Thai, Lao, Khmer, Myanmar. Their characters are letters of an
/// alphabet of some 50–70, not words or syllables as Han, kana and hangul
/// characters are: one character a token, two unrelated Thai texts shared
/// most of their features (on the tuned part of the near-duplicate
/// evaluation, distinct Thai articles were 16.9 SimHash bits apart on
/// average and 44% of them within 16 bits, against 28.7 and 6% for Latin
/// texts). So they are tokens by overlapping pairs, as Lucene's CJK
/// bigrams, and a shingle of three spans four letters.
fn is_paired(c: char) -> bool {
    script::of(c) == Some(script::Script::SoutheastAsian)
}

/// The token of two consecutive letters of an unspaced alphabet.
fn pair_token(a: char, b: char) -> u64 {
    let mut buf = [0u8; 8];
    let n = a.encode_utf8(&mut buf).len();
    let m = b.encode_utf8(&mut buf[n..]).len();
    xxh3_64(&buf[..n + m])
}

/// The token hashes of a text, in order.
pub fn tokens(text: &str) -> Vec<u64> {
    let mut out = Vec::with_capacity(text.len() / 6);
    for_each_token(text, |t| out.push(t));
    out
}

/// Nibble lane m set to 1: `(h >> j) & NIBBLE_ONES` holds bit 4m+j of `h`
/// in nibble m.
const NIBBLE_ONES: u64 = 0x1111_1111_1111_1111;

/// Low nibble of every byte.
const LOW_NIBBLES: u64 = 0x0F0F_0F0F_0F0F_0F0F;

/// Bit counts of 64-bit feature hashes, unweighted, in two levels of
/// packed counters: four `u64` of sixteen 4-bit counters take each hash
/// (four shift-mask-adds, no multiply and no branch per bit); every 15
/// hashes they are spread into eight `u64` of 8-bit counters, and those into
/// 32-bit totals every 255.
struct LaneCounts {
    /// `nibbles[j]` nibble m: hashes with bit 4m+j set, since the last spread.
    nibbles: [u64; 4],
    /// Hashes in the nibbles (≤ 15).
    in_nibbles: u32,
    /// `bytes[j]` byte l: hashes with bit 8l+j set, since the last flush.
    bytes: [u64; 8],
    /// Hashes in the bytes (≤ 255).
    in_bytes: u32,
    /// Flushed totals per bit.
    totals: [u32; 64],
    /// Hashes added in all.
    count: u64,
}

impl LaneCounts {
    fn new() -> Self {
        LaneCounts {
            nibbles: [0; 4],
            in_nibbles: 0,
            bytes: [0; 8],
            in_bytes: 0,
            totals: [0; 64],
            count: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, h: u64) {
        if self.in_nibbles == 15 {
            self.spread();
        }
        self.in_nibbles += 1;
        for (j, nibble) in self.nibbles.iter_mut().enumerate() {
            *nibble += (h >> j) & NIBBLE_ONES;
        }
    }

    /// Nibble counters into byte counters: nibble m of `nibbles[j]` counts
    /// bit 4m+j, which is byte m/2 of `bytes[j]` (m even) or of `bytes[j+4]`.
    fn spread(&mut self) {
        if self.in_bytes + self.in_nibbles > 255 {
            self.flush_bytes();
        }
        for (j, nibble) in self.nibbles.iter_mut().enumerate() {
            self.bytes[j] += *nibble & LOW_NIBBLES;
            self.bytes[j + 4] += (*nibble >> 4) & LOW_NIBBLES;
            *nibble = 0;
        }
        self.in_bytes += self.in_nibbles;
        self.in_nibbles = 0;
    }

    fn flush_bytes(&mut self) {
        for (j, lane) in self.bytes.iter_mut().enumerate() {
            for l in 0..8 {
                self.totals[8 * l + j] += ((*lane >> (8 * l)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.count += self.in_bytes as u64;
        self.in_bytes = 0;
    }

    /// Every count into the totals.
    fn flush(&mut self) {
        self.spread();
        self.flush_bytes();
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

/// Feeds lines of token hashes to the bit counts as unigram features and
/// shingles of `N` tokens (`N` = 0: none).
struct FeatureSum<const N: usize> {
    unigram_weight: u8,
    shingle_weight: u8,
    weights: Weights,
    /// Bit counts of the unigram features, and of the shingles; weighted
    /// only at the end.
    unigrams: LaneCounts,
    shingles: LaneCounts,
    /// With weights other than [`Weights::Count`]: the features fed, counted
    /// (and weighted) per distinct feature at the end.
    unigram_list: Vec<u64>,
    shingle_list: Vec<u64>,
    /// The last `N - 1` tokens fed, then the line being fed: shingles run on
    /// across lines.
    window: Vec<u64>,
    /// Tokens fed so far.
    fed: usize,
}

impl<const N: usize> FeatureSum<N> {
    fn new(features: &Features) -> Self {
        FeatureSum {
            unigram_weight: features.unigram_weight,
            shingle_weight: features.shingle_weight,
            weights: features.weights,
            unigrams: LaneCounts::new(),
            shingles: LaneCounts::new(),
            unigram_list: Vec::new(),
            shingle_list: Vec::new(),
            window: Vec::with_capacity(256),
            fed: 0,
        }
    }

    fn feed(&mut self, line: &[u64]) {
        self.fed += line.len();
        let counted = self.weights == Weights::Count;
        if self.unigram_weight > 0 {
            if counted {
                for &t in line {
                    self.unigrams.add(t);
                }
            } else {
                self.unigram_list.extend_from_slice(line);
            }
        }
        if N > 0 && self.shingle_weight > 0 {
            let keep = self.window.len().min(N - 1);
            self.window.drain(..self.window.len() - keep);
            self.window.extend_from_slice(line);
            for w in self.window.windows(N) {
                let h = shingle_hash(w.iter().copied());
                if counted {
                    self.shingles.add(h);
                } else {
                    self.shingle_list.push(h);
                }
            }
        }
    }

    /// Bit i set when the weight of the features with bit i set is more
    /// than half the total weight; with each bit's margin.
    fn simhash(mut self) -> (u64, [u32; 64]) {
        let weights = self.weights;
        for (list, counts) in [
            (&mut self.unigram_list, &mut self.unigrams),
            (&mut self.shingle_list, &mut self.shingles),
        ] {
            // Each distinct feature once per unit of its weight.
            list.sort_unstable();
            for run in list.chunk_by(|a, b| a == b) {
                for _ in 0..weights.of(run.len() as u32) {
                    counts.add(run[0]);
                }
            }
        }
        self.unigrams.flush();
        self.shingles.flush();
        let (wu, ws) = (self.unigram_weight as u64, self.shingle_weight as u64);
        let total = wu * self.unigrams.count + ws * self.shingles.count;
        let mut fp = 0u64;
        let mut margins = [0u32; 64];
        for (bit, margin) in margins.iter_mut().enumerate() {
            let set = wu * self.unigrams.totals[bit] as u64 + ws * self.shingles.totals[bit] as u64;
            if 2 * set > total {
                fp |= 1 << bit;
            }
            *margin = (2 * set).abs_diff(total).min(u32::MAX as u64) as u32;
        }
        (fp, margins)
    }
}

/// The fingerprint of a body text with the given features.
pub fn fingerprint_with(text: &str, features: &Features) -> Fingerprint {
    sketch_with(text, features).fingerprint
}

/// A body's fingerprint with what a lookup needs beyond its bits: how long
/// the body is (short bodies are searched further, [`crate::reach`]) and
/// how firmly each bit is set (an edit flips the weakest bits first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sketch {
    pub fingerprint: Fingerprint,
    /// Tokens in the whole body (every line).
    pub tokens: usize,
    /// Per bit, how far the weight of the features that set it is from
    /// half the total weight, in the features' weight units (0: a tie).
    /// All 0 for an [`Fingerprint::Exact`] body.
    pub margins: [u32; 64],
    /// The MinHash of the body's shingles, numbers and short lines
    /// included ([`minhash_of`]; empty for an [`Fingerprint::Exact`]
    /// body): the second signal ([`crate::minhash`]).
    pub minhash: MinHash,
}

/// The [`Sketch`] of a body text, with the [`DEFAULT`] features.
pub fn sketch(text: &str) -> Sketch {
    sketch_with(text, &DEFAULT)
}

/// The [`Sketch`] of a body text with the given features.
pub fn sketch_with(text: &str, features: &Features) -> Sketch {
    // The shingle size as a constant: the window loop unrolls.
    match features.shingle.min(MAX_SHINGLE) {
        0 => sketch_n::<0>(text, features),
        1 => sketch_n::<1>(text, features),
        2 => sketch_n::<2>(text, features),
        3 => sketch_n::<3>(text, features),
        4 => sketch_n::<4>(text, features),
        5 => sketch_n::<5>(text, features),
        6 => sketch_n::<6>(text, features),
        7 => sketch_n::<7>(text, features),
        _ => sketch_n::<MAX_SHINGLE>(text, features),
    }
}

fn sketch_n<const N: usize>(text: &str, features: &Features) -> Sketch {
    let mut sum = FeatureSum::<N>::new(features);
    let mut scratch = Scratch::default();
    let mut count = 0usize;
    // Exact hash of the first MIN_TOKENS tokens, used when there are fewer.
    let mut exact = 0u64;
    let mut line = Vec::with_capacity(256);
    // Lines shorter than `min_line_tokens` (share bars, copyright, headings:
    // what templates add) are left out; shingles run on across them. With
    // no minimum the whole text is one line.
    let lines = text.split(if features.min_line_tokens == 0 {
        '\0'
    } else {
        '\n'
    });
    for l in lines {
        line.clear();
        tokens_into(l, &mut scratch, &mut |t| {
            if count < MIN_TOKENS {
                exact = xxh3_64_with_seed(&t.to_le_bytes(), exact ^ count as u64);
            }
            count += 1;
            line.push(t);
        });
        if line.len() >= features.min_line_tokens {
            sum.feed(&line);
        }
    }
    if count < MIN_TOKENS {
        return Sketch {
            fingerprint: Fingerprint::Exact(exact),
            tokens: count,
            margins: [0; 64],
            minhash: MinHash::default(),
        };
    }
    if sum.fed < MIN_TOKENS && features.min_line_tokens > 0 {
        // Mostly short lines (a list, verse): every line counts.
        return sketch_n::<N>(
            text,
            &Features {
                min_line_tokens: 0,
                ..*features
            },
        );
    }
    let (fp, margins) = sum.simhash();
    Sketch {
        fingerprint: Fingerprint::Sim(fp),
        tokens: count,
        margins,
        minhash: minhash_of(text),
    }
}

/// The MinHash of a body (the second signal, [`crate::minhash`]): every
/// run of [`SHINGLE`] tokens of the whole text, every line and numbers
/// included, as a set. The SimHash leaves out short lines and numbers to
/// hold a text together across templates and feeds; the MinHash estimates
/// the Jaccard similarity of the texts as a reader compares them: two
/// release notes of one project that differ only in their version numbers
/// and dates, or two man pages that share their long paragraphs but not
/// their short option lines, are other texts (on the real sites of `cargo
/// bench -p evaluation --bench neardup_sites`, such pairs of exact word
/// 3-shingle Jaccard 0.34–0.45 were estimated at 0.66–1.0 from the
/// SimHash's features).
pub fn minhash_of(text: &str) -> MinHash {
    let mut minhash = MinHash::default();
    let mut scratch = Scratch {
        numbers: true,
        ..Scratch::default()
    };
    let mut window = [0u64; SHINGLE];
    let mut seen = 0usize;
    tokens_into(text, &mut scratch, &mut |t| {
        minhash.add_word(t);
        window.rotate_left(1);
        window[SHINGLE - 1] = t;
        seen += 1;
        if seen >= SHINGLE {
            minhash.add(shingle_hash(window.iter().copied()));
        }
    });
    if (1..SHINGLE).contains(&seen) {
        // Fewer tokens than a shingle: one shingle of them all.
        minhash.add(shingle_hash(window[SHINGLE - seen..].iter().copied()));
    }
    minhash
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

    /// The plain definition: ±weight per bit per distinct feature, its
    /// kind's weight times [`Weights::of`] its count.
    fn reference(text: &str, f: &Features) -> u64 {
        let toks = tokens(text);
        let mut sums = [0i64; 64];
        let mut add = |features: Vec<u64>, w: i64| {
            let mut counts: std::collections::BTreeMap<u64, u32> = Default::default();
            for h in features {
                *counts.entry(h).or_default() += 1;
            }
            for (h, c) in counts {
                let w = w * i64::from(f.weights.of(c));
                for (bit, s) in sums.iter_mut().enumerate() {
                    *s += if (h >> bit) & 1 == 1 { w } else { -w };
                }
            }
        };
        if f.unigram_weight > 0 {
            add(toks.clone(), f.unigram_weight as i64);
        }
        if f.shingle > 0 {
            let shingles = toks
                .windows(f.shingle)
                .map(|w| shingle_hash(w.iter().copied()))
                .collect();
            add(shingles, f.shingle_weight as i64);
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
                weights: Weights::Count,
            },
            Features {
                shingle: 5,
                unigram_weight: 0,
                shingle_weight: 7,
                min_line_tokens: 0,
                weights: Weights::Count,
            },
            Features {
                shingle: 1,
                unigram_weight: 200,
                shingle_weight: 100,
                min_line_tokens: 0,
                weights: Weights::Count,
            },
            Features {
                min_line_tokens: 0,
                weights: Weights::Log,
                ..DEFAULT
            },
            Features {
                min_line_tokens: 0,
                weights: Weights::Once,
                ..DEFAULT
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
    fn the_second_signal_counts_numbers_and_short_lines() {
        let body = article(5, 120);
        let notes = |v: &str| format!("Release {v} notes\n{body}\nfixed in {v} and {v}.1");
        let sig = |t: &str| sketch(t).minhash.signature().expect("a signature");
        // The SimHash leaves the version numbers out; the MinHash does not.
        assert_eq!(fingerprint(&notes("3.1.14")), fingerprint(&notes("2.2.25")));
        let j = crate::minhash::jaccard(&sig(&notes("3.1.14")), &sig(&notes("2.2.25")));
        assert!(j < 1.0, "{j}");
        assert_eq!(
            crate::minhash::jaccard(&sig(&notes("3.1.14")), &sig(&notes("3.1.14"))),
            1.0
        );
    }

    #[test]
    fn sublinear_weights() {
        let w: Vec<u32> = (1..=9).map(|c| Weights::Log.of(c)).collect();
        assert_eq!(w, [1, 2, 2, 3, 3, 3, 3, 4, 4]);
        assert_eq!(Weights::Once.of(7), 1);
        assert_eq!(Weights::Count.of(7), 7);
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
            let (alnum, upper, digit) = ascii_alnum_mask(x);
            for (l, b) in x.to_le_bytes().into_iter().enumerate() {
                let bit = |m: u64| (m >> (8 * l + 7)) & 1 == 1;
                assert_eq!(bit(alnum), b.is_ascii_alphanumeric(), "{b:#x}");
                assert_eq!(bit(upper), b.is_ascii_uppercase(), "{b:#x}");
                assert_eq!(bit(digit), b.is_ascii_digit(), "{b:#x}");
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
    fn fast_paths_agree_with_nfkc_of_the_whole_text() {
        // Characters of every fast class, and some that need the tables
        // (ligatures, a combining accent, Roman numerals, a circled digit).
        let pool: Vec<char> =
            "aZ9 ,.-\n\tÀéßÿĀĳŉſΑωЖяё中文のカ한“”«»—・、。「」ＡＺ０ａ\u{a0}\u{3000}ﬁ\u{301}Ⅻⅻ①İıǅ"
                .chars()
                .collect();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3000 {
            let len = 1 + (x % 40) as usize;
            let text: String = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    pool[(x % pool.len() as u64) as usize]
                })
                .collect();
            let mut slow = Vec::new();
            chars_to_tokens(text.nfkc(), &mut Vec::new(), false, &mut |t| slow.push(t));
            assert_eq!(tokens(&text), slow, "{text:?}");
        }
    }

    #[test]
    fn numbers_and_urls_are_not_features() {
        assert_eq!(
            tokens("posted 2005-12-19T19:11:10+09:00 by hiro"),
            tokens("posted by hiro")
        );
        assert_eq!(
            tokens("see http://blog.example.jp/archives/1234.html and www.example.com/x now"),
            tokens("see and now")
        );
        assert_eq!(tokens("２０１９年 v2 mp3 ①"), tokens("年"));
        assert_eq!(tokens("٢٠١٩ كتاب"), tokens("كتاب"));
        // Words that merely start like a URL stay.
        assert_eq!(tokens("https www what http: whatever").len(), 5);
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
    fn unspaced_alphabets_are_tokenized_by_overlapping_pairs() {
        // Five Thai letters: four pairs; a space ends a run.
        let t = tokens("สวัสดี");
        assert_eq!(t.len(), 5);
        assert_eq!(t[0], pair_token('ส', 'ว'));
        assert_eq!(tokens("สวัส ดี").len(), 3 + 1);
        // A letter alone is a token of its own; words around stay words.
        assert_eq!(tokens("ก").len(), 1);
        assert_eq!(tokens("abc ก def").len(), 3);
        assert_eq!(tokens("abcกข").len(), 2);
        // Han, kana and hangul stay one character a token.
        assert_eq!(tokens("中文กข新闻").len(), 5);
        // Two texts of common Thai letters in another order share few
        // tokens, where single letters would be all the same.
        let a: std::collections::HashSet<u64> = tokens("กขคง").into_iter().collect();
        let b: std::collections::HashSet<u64> = tokens("งคขก").into_iter().collect();
        assert!(a.is_disjoint(&b));
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
