//! # charset: which encoding a page's bytes are really in, and its text
//!
//! Owns the charset vote: which encoding a fetched page is really in,
//! decided by a vote among independent signals, each recorded with its
//! evidence. Consumes a page's bytes and [`Signals`] (the HTTP header, the
//! host's TLD, a per-site override); produces a [`Decision`] and the text
//! decoded to UTF-8. Used by the fetcher worker on every page, and by
//! `crawler charset`, the charset bench and the fuzz target without it.
//!
//! Real pages lie about their encoding: servers send a default
//! `charset=ISO-8859-1` whatever the bytes are, templates copy a `<meta
//! charset>` from another site, and sometimes the header and the meta tell
//! the same lie. So no single signal is trusted; [`vote`] weighs them:
//!
//! 1. a per-site **override** (configuration, see [`overrides`]) wins over
//!    everything;
//! 2. a **BOM** is decisive;
//! 3. the zero-byte pattern of **UTF-16 without a BOM**;
//! 4. **UTF-8 validity**: bytes with non-ASCII that validate as UTF-8 over
//!    the whole body are UTF-8, whatever the labels say; pure ASCII is read
//!    the same by every ASCII-compatible encoding (unless it holds
//!    ISO-2022-JP escapes);
//! 5. otherwise the **declarations** — the HTTP `Content-Type` charset
//!    ([`header_charset`]) and the page's own (the WHATWG [`prescan()`]) — are
//!    checked by **decoding**: a declared multi-byte encoding that fails to
//!    decode cleanly is a lie. When the surviving declarations agree on one
//!    multi-byte encoding and no other legacy multi-byte encoding reads the
//!    bytes cleanly as well (or only into rare characters, see [`cjk`]; on a
//!    page with too few characters to judge, a `。` or two, when they are
//!    all common in the declared reading and not in any rival's), it is
//!    taken **without running the detector**; likewise a single-byte
//!    declaration whose reading is plausible text in its alphabet (case
//!    pattern, no mixed-script words, see [`alphabet`]). A server-default
//!    `ISO-8859-1` header never takes this path. A multi-byte declaration
//!    that fails only on a few damaged characters (at most one per
//!    [`TOLERATED_CHARS_PER_ERROR`]) and reads as common CJK text is a
//!    damaged page, not a lie, and is taken too;
//! 6. in every other case (labels disagree, all refuted, absent, or
//!    implausible) **chardetng** reads a
//!    bounded window (see [`detector`]) with the TLD as a hint and breaks the
//!    tie: it confirms a declaration it agrees with (one of the Latin
//!    family still meets the [`language`] tie-breaker: chardetng names
//!    windows-1250 for English whose one non-ASCII byte is a `£`), and
//!    otherwise wins if its own guess decodes cleanly.
//!
//! The result is a serializable [`Decision`] (`crawler charset` prints it;
//! the page message carries the chosen encoding's name) that lists every
//! vote and says whether the detector ran. [`decide_and_decode`] is the
//! fetcher's fast path: on UTF-8 pages it validates once and reuses the
//! validation for the text.
//!
//! Pure logic, a leaf crate: no I/O; its dependencies are `encoding_rs`,
//! `chardetng`, `serde` and `thiserror`, and CI checks that no broker, store, HTTP
//! client or runtime creeps in (`scripts/pure-crates.sh`).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod alphabet;
pub mod cjk;
pub mod content_type;
pub mod detector;
pub mod evidence;
pub mod language;
pub mod letter_model;
pub mod overrides;
pub mod prescan;

pub use content_type::header_charset;
pub use prescan::{prescan, prescan_declaration, Declaration};

use encoding_rs::{Encoding, ISO_2022_JP, KOI8_R, KOI8_U, UTF_16BE, UTF_16LE, UTF_8};
use serde::{Deserialize, Serialize};

use evidence::{clean_rivals, decodes_cleanly, is_multibyte, same_decoder};

/// The share of common characters a CJK reading needs before a declaration
/// with rival readings is trusted without the detector (real text: 40-70%).
const COMMON_SHARE_FLOOR: f64 = 0.3;

/// A declared multi-byte encoding may meet at most one malformed sequence
/// per this many non-ASCII characters and still be the page's encoding: a
/// saved page with a few characters cut in half (12 in 14,000 on a real GBK
/// page) is damaged, not lying. A lie breaks far more often: foreign bytes
/// read as GBK or Shift_JIS fail every few words.
pub const TOLERATED_CHARS_PER_ERROR: usize = 500;

/// The same for a declared UTF-8: at most one malformed sequence per this
/// many valid non-ASCII characters. Legacy bytes read as UTF-8 give the
/// opposite proportion (nearly every non-ASCII byte is malformed), so a
/// short damaged page (one cut character among a few hundred) is not taken
/// for a lie.
pub const TOLERATED_UTF8_CHARS_PER_ERROR: usize = 20;

/// What the fetcher knows about a page besides its bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signals<'a> {
    /// The charset the HTTP `Content-Type` header claims: either the label
    /// alone (`gb2312`) or the whole header value (`text/html; charset=gb2312`).
    pub header: Option<&'a str>,
    /// The host's top-level domain (`ru`, or a whole hostname), a hint for
    /// the detector: `.jp` pages lean Japanese, `.tw` Big5, ...
    pub tld: Option<&'a [u8]>,
    /// A per-site override from configuration, for sites known to lie in
    /// ways the vote cannot see through.
    pub override_encoding: Option<&'static Encoding>,
}

impl<'a> Signals<'a> {
    /// The signals of a page with nothing known of it but what its HTTP
    /// header claims (if anything).
    pub fn from_header(header: Option<&'a str>) -> Signals<'a> {
        Signals {
            header,
            ..Signals::default()
        }
    }
}

/// The top-level domain of a host (`example.ru` gives `ru`), the
/// detector's hint ([`Signals::tld`]); `None` when the last label is not
/// all letters (an IP address).
pub fn tld(host: &str) -> Option<&str> {
    host.rsplit('.')
        .next()
        .filter(|t| t.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// One signal's say in the vote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// Which signal: `override`, `bom`, `utf16-pattern`, `utf8-valid`,
    /// `ascii`, `iso-2022-jp-escapes`, `header`, `meta`, `detector`.
    pub signal: String,
    /// The label as declared (header and meta only).
    pub label: Option<String>,
    /// The WHATWG name the signal points to; `None` for an unknown label.
    pub encoding: Option<String>,
    /// Whether that encoding decodes the bytes without errors, when checked.
    pub decodes_cleanly: Option<bool>,
    /// Whether the decision went this signal's way.
    pub accepted: bool,
}

/// The outcome of [`vote`]: the encoding, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The chosen encoding's WHATWG name (`UTF-8`, `GBK`, `Shift_JIS`, ...).
    pub encoding: String,
    /// Every signal that spoke, in the order they were considered.
    pub votes: Vec<Vote>,
    /// Whether chardetng ran; the benchmark measures how often it is skipped.
    pub detector_ran: bool,
    /// One sentence on what decided it.
    pub reason: String,
}

impl Decision {
    /// The chosen encoding (UTF-8 if the name is not one, e.g. after a bad deserialization).
    pub fn encoding(&self) -> &'static Encoding {
        Encoding::for_label_no_replacement(self.encoding.as_bytes()).unwrap_or(UTF_8)
    }
}

/// Decides the encoding of `bytes` from all the signals.
pub fn vote(bytes: &[u8], signals: &Signals) -> Decision {
    Ballot::new(bytes, signals).decide().0
}

/// Decodes `bytes` with the decided encoding: a BOM of that encoding is
/// stripped, malformed sequences become U+FFFD.
pub fn decode(bytes: &[u8], decision: &Decision) -> String {
    let (text, _) = decision.encoding().decode_with_bom_removal(bytes);
    text.into_owned()
}

/// [`vote`] then [`decode`], validating UTF-8 only once: the fetcher's path.
pub fn decide_and_decode(bytes: &[u8], signals: &Signals) -> (Decision, String) {
    let (decision, utf8_text) = Ballot::new(bytes, signals).decide();
    match utf8_text {
        Some(text) => (decision, text.to_owned()),
        None => {
            let text = decode(bytes, &decision);
            (decision, text)
        }
    }
}

/// A declaration (header or meta) and what the checks found about it.
struct Declared {
    signal: &'static str,
    label: String,
    encoding: Option<&'static Encoding>,
    decodes_cleanly: Option<bool>,
    /// A server default (bare ISO-8859-1/windows-1252 in the header) that
    /// carries no information; it does not count as disagreement.
    weak: bool,
}

/// The signals gathered for one page, and the votes cast so far.
struct Ballot<'b> {
    bytes: &'b [u8],
    tld: Option<&'b [u8]>,
    override_encoding: Option<&'static Encoding>,
    declared: Vec<Declared>,
    /// Votes from the bytes themselves and the detector (declarations are
    /// added when the decision is made, so they can say whether they won).
    evidence: Vec<Vote>,
    detector_ran: bool,
}

impl<'b> Ballot<'b> {
    fn new(bytes: &'b [u8], signals: &Signals<'b>) -> Self {
        let mut declared = Vec::new();
        if let Some(raw) = signals.header {
            let label = if raw.contains(';') || raw.contains('/') {
                header_charset(raw)
            } else {
                Some(raw.trim())
            };
            if let Some(label) = label.filter(|label| !label.is_empty()) {
                let encoding = Encoding::for_label(label.as_bytes());
                declared.push(Declared {
                    signal: "header",
                    label: label.to_owned(),
                    encoding,
                    decodes_cleanly: None,
                    weak: encoding.is_some_and(content_type::is_default_label),
                });
            }
        }
        if let Some(found) = prescan_declaration(bytes) {
            declared.push(Declared {
                signal: "meta",
                label: found.label,
                encoding: Some(found.encoding),
                decodes_cleanly: None,
                weak: false,
            });
        }
        Ballot {
            bytes,
            tld: signals.tld,
            override_encoding: signals.override_encoding,
            declared,
            evidence: Vec::new(),
            detector_ran: false,
        }
    }

    /// The decision, and the text when the bytes were validated as UTF-8
    /// and UTF-8 was chosen (so the caller need not validate again).
    fn decide(mut self) -> (Decision, Option<&'b str>) {
        let bytes = self.bytes;
        if let Some(encoding) = self.override_encoding {
            self.cast("override", encoding, None);
            return (self.finish(encoding, "per-site override".into()), None);
        }
        if let Some((encoding, _)) = Encoding::for_bom(bytes) {
            self.cast("bom", encoding, None);
            return (
                self.finish(encoding, format!("byte order mark of {}", encoding.name())),
                None,
            );
        }
        if let Some(encoding) = evidence::sniff_utf16(bytes) {
            self.cast("utf16-pattern", encoding, Some(true));
            let reason = format!(
                "zero bytes in the pattern of {} without a BOM",
                encoding.name()
            );
            return (self.finish(encoding, reason), None);
        }
        let ascii_prefix = Encoding::ascii_valid_up_to(bytes);
        if ascii_prefix == bytes.len() {
            return (self.decide_ascii(), None);
        }
        if let Ok(rest) = std::str::from_utf8(&bytes[ascii_prefix..]) {
            self.cast("utf8-valid", UTF_8, Some(true));
            let decision = self.finish(
                UTF_8,
                "non-ASCII bytes validate as UTF-8 over the whole body".into(),
            );
            // The ASCII prefix is valid UTF-8 too, so the whole body is.
            let text = std::str::from_utf8(bytes).ok();
            debug_assert!(text.is_some() && !rest.is_empty());
            return (decision, text);
        }
        (self.decide_legacy(), None)
    }

    /// Bytes below 0x80 only: every ASCII-compatible encoding reads them the
    /// same, so keep a declared one (or UTF-8) — unless ISO-2022-JP escapes
    /// say the page is seven-bit Japanese.
    fn decide_ascii(mut self) -> Decision {
        if self.bytes.contains(&0x1B) && evidence::looks_like_iso_2022_jp(self.bytes) {
            self.cast("iso-2022-jp-escapes", ISO_2022_JP, Some(true));
            return self.finish(ISO_2022_JP, "ASCII bytes with ISO-2022-JP escapes".into());
        }
        for declared in &mut self.declared {
            declared.decodes_cleanly = declared
                .encoding
                .map(|encoding| encoding.is_ascii_compatible());
        }
        let chosen = self
            .declared
            .iter()
            .filter_map(|declared| declared.encoding)
            .find(|encoding| encoding.is_ascii_compatible())
            .unwrap_or(UTF_8);
        self.cast("ascii", chosen, Some(true));
        self.finish(
            chosen,
            "ASCII only: every ASCII-compatible encoding reads it the same".into(),
        )
    }

    /// Non-ASCII bytes that are not UTF-8: check the declarations by
    /// decoding, and run the detector unless one multi-byte declaration
    /// stands alone.
    fn decide_legacy(mut self) -> Decision {
        let bytes = self.bytes;
        for declared in &mut self.declared {
            declared.decodes_cleanly = declared.encoding.map(|encoding| match encoding {
                e if e == UTF_8 => false,
                // UTF-16 without the zero-byte pattern is not UTF-16.
                e if e == UTF_16LE || e == UTF_16BE => false,
                e => decodes_cleanly(e, bytes),
            });
        }
        if let Some((encoding, reason)) = self
            .unrivalled_declaration()
            .or_else(|| self.plausible_single_byte_declaration())
            .or_else(|| self.damaged_declaration())
        {
            return self.finish(encoding, reason);
        }
        if let Some(encoding) = evidence::sniff_utf16_text(bytes) {
            self.cast("utf16-pattern", encoding, Some(true));
            let reason = format!(
                "bytes read as {} without a BOM give CJK text",
                encoding.name()
            );
            return self.finish(encoding, reason);
        }

        let guess = detector::refine_cyrillic(detector::guess(bytes, self.tld, false), bytes);
        self.detector_ran = true;
        let clean_declared: Vec<&'static Encoding> = self
            .declared
            .iter()
            .filter(|declared| declared.decodes_cleanly == Some(true))
            .filter_map(|declared| declared.encoding)
            .collect();
        let guess_is_clean =
            clean_declared.iter().any(|&d| same_decoder(d, guess)) || decodes_cleanly(guess, bytes);
        self.cast("detector", guess, Some(guess_is_clean));

        if let Some(&confirmed) = clean_declared
            .iter()
            .find(|&&d| detector_confirms(guess, d, bytes))
        {
            let reason = format!("the detector confirms the declared {}", confirmed.name());
            return self.finish_latin_checked(confirmed, reason);
        }
        if let Some(&same_text) = clean_declared
            .iter()
            .find(|&&d| d.is_single_byte() && guess.is_single_byte() && same_text(d, guess, bytes))
        {
            let reason = format!(
                "the declared {} reads the same text as the detected {}",
                same_text.name(),
                guess.name()
            );
            return self.finish_latin_checked(same_text, reason);
        }
        if let Some((chosen, reason)) = self.latin_declaration(guess) {
            return self.finish(chosen, reason);
        }
        if let Some(&unknown_to_detector) = clean_declared.iter().find(|&&d| {
            d.is_single_byte()
                && !detector_can_guess(d)
                && guess.is_single_byte()
                && alphabet::reads_plausibly(d, is_latin_script(d), bytes)
                && detector::cyrillic_rival(d, bytes).is_none()
        }) {
            let reason = format!(
                "the declared {} is one the detector cannot tell",
                unknown_to_detector.name()
            );
            return self.finish(unknown_to_detector, reason);
        }
        self.detector_or_declared(guess, guess_is_clean, &clean_declared)
    }

    /// A strong Latin-script declaration that decodes cleanly, against a
    /// Latin-script guess: the detector's disagreement alone does not refute
    /// it; the language tie-breaker may.
    fn latin_declaration(&self, guess: &'static Encoding) -> Option<(&'static Encoding, String)> {
        let bytes = self.bytes;
        let latin = self
            .declared
            .iter()
            .find(|declared| {
                !declared.weak
                    && declared.decodes_cleanly == Some(true)
                    && declared.encoding.is_some_and(is_latin_script)
            })
            .and_then(|declared| declared.encoding)
            .filter(|_| is_latin_script(guess))?;
        let chosen = language::best_latin(bytes, &[latin, guess], language::MARGIN)
            .map_or(latin, |(e, _)| e);
        let reason = if same_decoder(chosen, latin) {
            format!(
                "the declared {} and the detected {} are both Latin-script: a few accented letters cannot refute the declaration",
                latin.name(),
                guess.name()
            )
        } else {
            format!(
                "the declared {} and the detected {} are both Latin-script; {} reads as one language's letters, clearly better",
                latin.name(),
                guess.name(),
                chosen.name()
            )
        };
        Some((chosen, reason))
    }

    /// The end of the legacy path: the detector's guess when it decodes
    /// cleanly (or a Latin-script relative that reads clearly better),
    /// else a declaration that decodes cleanly, else the guess.
    fn detector_or_declared(
        self,
        guess: &'static Encoding,
        guess_is_clean: bool,
        clean_declared: &[&'static Encoding],
    ) -> Decision {
        let bytes = self.bytes;
        if guess_is_clean {
            if is_latin_script(guess) {
                // chardetng names few of the Latin family: the language
                // tie-breaker may find a member that reads clearly better.
                if let Some((better, _)) =
                    language::best_latin(bytes, &[guess], language::DETECTOR_MARGIN)
                        .filter(|(e, _)| !same_decoder(e, guess))
                {
                    let reason = format!(
                        "the detector's {} is Latin-script; {} reads as one language's letters, clearly better",
                        guess.name(),
                        better.name()
                    );
                    return self.finish(better, reason);
                }
            }
            let reason = if self.declared.is_empty() {
                format!("no declaration; the detector reads {}", guess.name())
            } else {
                format!(
                    "the detector's {} decodes cleanly and overrules the declarations",
                    guess.name()
                )
            };
            return self.finish(guess, reason);
        }
        let fallback = clean_declared
            .iter()
            .copied()
            .find(|&d| is_multibyte(d))
            .or_else(|| clean_declared.first().copied());
        match fallback {
            Some(declared) => {
                let reason = format!(
                    "the detector's {} fails to decode; the declared {} does",
                    guess.name(),
                    declared.name()
                );
                self.finish(declared, reason)
            }
            None => {
                let reason = format!(
                    "nothing decodes cleanly; the detector's {} is the best guess",
                    guess.name()
                );
                self.finish(guess, reason)
            }
        }
    }

    /// The detector-free path: the strong declarations that decode cleanly
    /// all name one multi-byte encoding, no other legacy multi-byte encoding
    /// reads the bytes cleanly, and the text is not mostly oddities.
    fn unrivalled_declaration(&self) -> Option<(&'static Encoding, String)> {
        let mut clean = self
            .declared
            .iter()
            .filter(|declared| declared.decodes_cleanly == Some(true) && !declared.weak)
            .filter_map(|declared| declared.encoding);
        let first = clean.next()?;
        if !clean.all(|other| same_decoder(other, first)) || !is_multibyte(first) {
            return None;
        }
        if !evidence::reads_as_text(first, self.bytes) {
            return None;
        }
        let rivals = clean_rivals(first, self.bytes);
        if rivals.is_empty() {
            let reason = format!(
                "the declared {} decodes cleanly and no other multi-byte encoding does; detector skipped",
                first.name()
            );
            return Some((first, reason));
        }
        // Other encodings read the bytes too: the declaration stands alone
        // only if its reading is clearly the one made of common characters.
        let Some(declared_share) = cjk::common_share(first, self.bytes) else {
            // Too few characters for a share (a short page with a `。`):
            // the detector has as little to go on, so the declaration
            // stands if its few characters are all common and no rival's are.
            let stands = cjk::few_and_all_common(first, self.bytes)
                && !rivals
                    .iter()
                    .any(|r| cjk::few_and_all_common(r, self.bytes));
            let reason = format!(
                "the declared {} decodes cleanly into a few characters, all common, as no other \
                 multi-byte encoding does; detector skipped",
                first.name()
            );
            return stands.then_some((first, reason));
        };
        if !self.commoner_than_rivals(declared_share, rivals) {
            return None;
        }
        let reason = format!(
            "the declared {} decodes cleanly and reads as common {} text ({:.0}% common characters, \
             rivals under half that); detector skipped",
            first.name(),
            if first == encoding_rs::EUC_KR { "Korean" } else { "CJK" },
            declared_share * 100.0
        );
        Some((first, reason))
    }

    /// Whether a reading with `share` common characters is common text (at
    /// least [`COMMON_SHARE_FLOOR`]) and every rival's reading has under
    /// half that share.
    fn commoner_than_rivals(
        &self,
        share: f64,
        rivals: impl IntoIterator<Item = &'static Encoding>,
    ) -> bool {
        share >= COMMON_SHARE_FLOOR
            && !rivals.into_iter().any(|rival| {
                cjk::common_share(rival, self.bytes).is_some_and(|other| other * 2.0 >= share)
            })
    }

    /// A page damaged in a few places: no declaration decodes cleanly, but
    /// the strong ones agree on one multi-byte encoding that meets at most one
    /// malformed sequence per [`TOLERATED_CHARS_PER_ERROR`] characters and
    /// reads as common CJK text, far more common than any rival's reading
    /// (UTF-8 needs no such reading: legacy bytes break it everywhere).
    /// chardetng drops a CJK candidate at its first error, so it would answer
    /// a single-byte encoding and the whole page would become mojibake.
    fn damaged_declaration(&self) -> Option<(&'static Encoding, String)> {
        let mut strong = self
            .declared
            .iter()
            .filter(|declared| !declared.weak)
            .filter_map(|declared| declared.encoding.map(|e| (e, declared.decodes_cleanly)));
        let (first, _) = strong.next()?;
        let agreeing = strong.all(|(other, _)| same_decoder(other, first));
        let any_clean = self
            .declared
            .iter()
            .any(|declared| declared.decodes_cleanly == Some(true));
        if !agreeing || any_clean || !is_multibyte(first) {
            return None;
        }
        let (malformed, characters) = evidence::malformed_sequences(first, self.bytes);
        if malformed == 0 {
            return None;
        }
        if first == UTF_8 {
            // Legacy bytes break UTF-8 at nearly every non-ASCII character
            // (a valid multi-byte sequence is rare in them); a few malformed
            // sequences among many valid ones are damage, even on a short
            // page.
            if malformed.saturating_mul(TOLERATED_UTF8_CHARS_PER_ERROR) > characters {
                return None;
            }
            let reason = format!(
                "the declared UTF-8 meets {malformed} malformed sequences in {characters} \
                 characters (a damaged page, not a lie); detector skipped"
            );
            return Some((UTF_8, reason));
        }
        if malformed.saturating_mul(TOLERATED_CHARS_PER_ERROR) > characters {
            return None;
        }
        let declared_share = cjk::common_share(first, self.bytes)?;
        let rivals = evidence::CJK_ENCODINGS
            .into_iter()
            .filter(|rival| !same_decoder(rival, first));
        if !self.commoner_than_rivals(declared_share, rivals) {
            return None;
        }
        let reason = format!(
            "the declared {} meets {malformed} malformed sequences in {characters} characters \
             (a damaged page, not a lie) and reads as common text ({:.0}% common characters, \
             rivals under half that); detector skipped",
            first.name(),
            declared_share * 100.0
        );
        Some((first, reason))
    }

    /// The detector-free path for single-byte labels: the strong
    /// declarations agree on one single-byte encoding whose reading passes
    /// its alphabet's check (see [`alphabet`]).
    fn plausible_single_byte_declaration(&self) -> Option<(&'static Encoding, String)> {
        let mut strong = self
            .declared
            .iter()
            .filter(|declared| !declared.weak && declared.decodes_cleanly == Some(true))
            .filter_map(|declared| declared.encoding);
        let first = strong.next()?;
        if !strong.all(|other| same_decoder(other, first)) || !first.is_single_byte() {
            return None;
        }
        let latin = is_latin_script(first);
        if !alphabet::reads_plausibly(first, latin, self.bytes) {
            return None;
        }
        if latin {
            // Every Latin reading of Latin bytes is plausible: the language
            // tie-breaker says whether another member of the family reads
            // them clearly better (the header and the meta told one lie).
            if let Some(better) = self.reads_clearly_better(first) {
                let reason = format!(
                    "the declared {} reads as plausible Latin text, but {} reads as one language's letters, clearly better; detector skipped",
                    first.name(),
                    better.name()
                );
                return Some((better, reason));
            }
        } else if let Some(rival) = detector::cyrillic_rival(first, self.bytes)
            .filter(|&rival| alphabet::reads_plausibly(rival, false, self.bytes))
        {
            let reason = format!(
                "the declared {} reads as plausible Cyrillic, but {} reads clearly more Cyrillic letters; detector skipped",
                first.name(),
                rival.name()
            );
            return Some((rival, reason));
        }
        let reason = format!(
            "the declared {} reads as plausible text in its alphabet; detector skipped",
            first.name()
        );
        Some((first, reason))
    }

    /// Finishes with the declared `declared`, which the detector backs,
    /// unless it is of the Latin family and another member reads the bytes
    /// clearly better: the detector's agreement is no evidence inside the
    /// family (chardetng names windows-1250 for English whose one non-ASCII
    /// byte is a `£`), so the declaration is held to the tie-breaker as
    /// when the detector is skipped.
    fn finish_latin_checked(self, declared: &'static Encoding, reason: String) -> Decision {
        if let Some(better) = self.reads_clearly_better(declared) {
            let reason = format!(
                "{reason}, but {} reads as one language's letters, clearly better",
                better.name()
            );
            return self.finish(better, reason);
        }
        self.finish(declared, reason)
    }

    /// When `declared` is of the Latin family: another member that reads
    /// the bytes clearly better ([`language::best_latin`] with the
    /// declaration's [`language::MARGIN`]), and into other text.
    fn reads_clearly_better(&self, declared: &'static Encoding) -> Option<&'static Encoding> {
        if !is_latin_script(declared) {
            return None;
        }
        language::best_latin(self.bytes, &[declared], language::MARGIN)
            .map(|(e, _)| e)
            .filter(|&e| !same_decoder(e, declared) && !same_text(e, declared, self.bytes))
    }

    fn cast(&mut self, signal: &str, encoding: &'static Encoding, decodes_cleanly: Option<bool>) {
        self.evidence.push(Vote {
            signal: signal.to_owned(),
            label: None,
            encoding: Some(encoding.name().to_owned()),
            decodes_cleanly,
            accepted: false,
        });
    }

    fn finish(self, chosen: &'static Encoding, reason: String) -> Decision {
        let declared = self.declared.into_iter().map(|declared| Vote {
            signal: declared.signal.to_owned(),
            label: Some(declared.label),
            encoding: declared.encoding.map(|encoding| encoding.name().to_owned()),
            decodes_cleanly: declared.decodes_cleanly,
            accepted: declared
                .encoding
                .is_some_and(|encoding| same_decoder(encoding, chosen)),
        });
        let evidence = self.evidence.into_iter().map(|mut vote| {
            vote.accepted = vote.encoding.as_deref() == Some(chosen.name());
            vote
        });
        Decision {
            encoding: chosen.name().to_owned(),
            votes: declared.chain(evidence).collect(),
            detector_ran: self.detector_ran,
            reason,
        }
    }
}

/// The detector's guess agrees with a declaration: the same decoder, or
/// the KOI8 pair (chardetng names the whole family KOI8-U) when the bytes
/// are not Ukrainian (see [`detector::koi8_u_reads_more`]).
fn detector_confirms(guess: &'static Encoding, declared: &'static Encoding, bytes: &[u8]) -> bool {
    same_decoder(guess, declared)
        || (guess == KOI8_U && declared == KOI8_R && !detector::koi8_u_reads_more(bytes))
}

/// Two single-byte encodings give the same text for these bytes.
fn same_text(a: &'static Encoding, b: &'static Encoding, bytes: &[u8]) -> bool {
    let (text_a, _) = a.decode_without_bom_handling(bytes);
    let (text_b, _) = b.decode_without_bom_handling(bytes);
    text_a == text_b
}

/// Single-byte encodings for Latin-script languages: they share ASCII
/// letters and differ in a few accented ones, which is too little evidence
/// for the detector to overrule a page that names one of them; the
/// [`language`] tie-breaker chooses among them.
fn is_latin_script(encoding: &'static Encoding) -> bool {
    language::LATIN_FAMILY.contains(&encoding)
}

/// Whether chardetng can ever answer `encoding`: a declaration it cannot
/// name is not refuted by its disagreeing.
fn detector_can_guess(encoding: &'static Encoding) -> bool {
    use encoding_rs::*;
    [
        GBK,
        EUC_JP,
        EUC_KR,
        SHIFT_JIS,
        BIG5,
        WINDOWS_1252,
        WINDOWS_1251,
        WINDOWS_1250,
        ISO_8859_2,
        WINDOWS_1256,
        WINDOWS_1254,
        WINDOWS_874,
        WINDOWS_1255,
        WINDOWS_1253,
        ISO_8859_7,
        WINDOWS_1257,
        ISO_8859_13,
        KOI8_U,
        KOI8_R,
        IBM866,
        ISO_8859_6,
        WINDOWS_1258,
        ISO_8859_4,
        ISO_8859_5,
        ISO_8859_8,
        ISO_2022_JP,
    ]
    .contains(&encoding)
}

#[cfg(test)]
mod tests;
