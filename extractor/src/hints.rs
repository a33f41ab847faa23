//! What an element's `id` and `class` say about it: the Readability lessons. Words such as
//! `article`, `content`, `post` mark content; `comment`, `sidebar`, `share`, `related` mark
//! boilerplate; `author`/`byline` (and `editor`, not in `editorial`) and `date`/`time` mark
//! the byline and the date line;
//! `lead`, `intro`, `standfirst` mark the article's lead.

use crate::scan::flag;
use crate::words::{Words, WordsFile};

/// Weight of one positive or negative class word, on the scale of a paragraph's score.
pub const CLASS_WEIGHT: i16 = 25;

/// The verdict on one `id` + `class` string.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// Positive for content, negative for boilerplate.
    pub weight: i16,
    /// [`flag`] bits the names imply (`AUTHOR`, `DATE`).
    pub flags: u16,
}

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new("hints.txt", include_str!("words/hints.txt"));

/// Substrings that mark content.
static POSITIVE: Words = WORDS.list("POSITIVE");

/// Substrings that mark boilerplate.
static NEGATIVE: Words = WORDS.list("NEGATIVE");

/// Whole words (between `-`, `_`, spaces) that mark boilerplate; too short for substrings.
static NEGATIVE_WORDS: Words = WORDS.list("NEGATIVE_WORDS");

/// Substrings that mark readers' comments or a consent notice ([`flag::DISCUSSION`]).
static DISCUSSION: Words = WORDS.list("DISCUSSION");

/// Substrings that mark an author byline (besides `editor`, [`Kind::Editor`]).
static AUTHOR: Words = WORDS.list("AUTHOR");
/// `editor` marks a byline, but not inside `editorial` (an editorial module, a newsroom's
/// content block: `editorial-module-info-content` holds a photo's caption).
static EDITOR: Words = WORDS.list("EDITOR");
/// See [`EDITOR`].
static EDITORIAL: Words = WORDS.list("EDITORIAL");
/// Substrings that mark a headline's kicker, or text for screen readers only
/// ([`flag::KICKER`]).
static KICKER: Words = WORDS.list("KICKER");
/// Substrings that mark an article's lead or standfirst ([`flag::LEAD`]), in the
/// languages of the pages we read.
static LEAD: Words = WORDS.list("LEAD");
/// Whole words that mark a lead; too short (or too common inside other words: `leader`,
/// `leading`) for substrings.
static LEAD_WORDS: Words = WORDS.list("LEAD_WORDS");
/// Substrings that mark a date line.
static DATE: Words = WORDS.list("DATE");

/// What a pattern of the automaton stands for.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Positive,
    Negative,
    Author,
    /// `editor`: a byline unless it is the start of an `editorial`.
    Editor,
    /// `editorial`: cancels the `editor` it starts with.
    Editorial,
    Date,
    Kicker,
    /// One of [`DISCUSSION`]: boilerplate, and a [`flag::DISCUSSION`] block.
    Discussion,
    /// One of [`NEGATIVE_WORDS`]: boilerplate when it is a whole word.
    NegativeWord,
    /// One of [`LEAD`]: the article's lead.
    Lead,
    /// One of [`LEAD_WORDS`]: the article's lead when it is a whole word.
    LeadWord,
}

/// All substring lists in one automaton: one pass over the class string finds every match.
struct Matcher {
    /// Aho-Corasick with standard semantics: the match states of a position list every
    /// pattern that ends there, so a walk over its states sees all (overlapping) matches.
    dfa: aho_corasick::dfa::DFA,
    kinds: Vec<Kind>,
}

/// The patterns of the automaton, each with its kind.
fn patterns() -> impl Iterator<Item = (&'static str, Kind)> {
    [
        (&POSITIVE, Kind::Positive),
        (&NEGATIVE, Kind::Negative),
        (&AUTHOR, Kind::Author),
        (&EDITOR, Kind::Editor),
        (&EDITORIAL, Kind::Editorial),
        (&DATE, Kind::Date),
        (&KICKER, Kind::Kicker),
        (&DISCUSSION, Kind::Discussion),
        (&NEGATIVE_WORDS, Kind::NegativeWord),
        (&LEAD, Kind::Lead),
        (&LEAD_WORDS, Kind::LeadWord),
    ]
    .into_iter()
    .flat_map(|(list, kind)| list.iter().map(move |p| (*p, kind)))
}

fn matcher() -> &'static Matcher {
    static M: std::sync::OnceLock<Matcher> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        let dfa = aho_corasick::dfa::DFA::new(patterns().map(|(p, _)| p)).expect("static patterns");
        let kinds = patterns().map(|(_, k)| k).collect();
        Matcher { dfa, kinds }
    })
}

/// What the matches in one class string have said so far.
#[derive(Default)]
struct Seen {
    hint: Hint,
    positive: bool,
    negative: bool,
    discussion: bool,
    /// `editor` matches, and `editorial` matches (each also an `editor` match).
    editors: u16,
    editorials: u16,
}

impl Seen {
    /// Notes a match of a substring kind; the whole-word kinds are the caller's to judge
    /// ([`Kind::NegativeWord`] sets `negative`, [`Kind::LeadWord`] the lead flag).
    fn note(&mut self, kind: Kind) {
        match kind {
            Kind::Positive => self.positive = true,
            Kind::Negative => self.negative = true,
            Kind::Author => self.hint.flags |= flag::AUTHOR,
            Kind::Editor => self.editors = self.editors.saturating_add(1),
            Kind::Editorial => self.editorials = self.editorials.saturating_add(1),
            Kind::Date => self.hint.flags |= flag::DATE,
            Kind::Kicker => self.hint.flags |= flag::KICKER,
            Kind::Discussion => self.discussion = true,
            Kind::Lead => self.hint.flags |= flag::LEAD,
            Kind::NegativeWord | Kind::LeadWord => {}
        }
    }

    /// The verdict: the class weight for content, against it for boilerplate or a
    /// discussion, and the discussion flag when nothing marked content.
    fn hint(self) -> Hint {
        let mut hint = self.hint;
        if self.editors > self.editorials {
            hint.flags |= flag::AUTHOR;
        }
        if self.positive {
            hint.weight += CLASS_WEIGHT;
        }
        if self.negative || self.discussion {
            hint.weight -= CLASS_WEIGHT;
        }
        if self.discussion && !self.positive {
            hint.flags |= flag::DISCUSSION;
        }
        hint
    }
}

/// Reads a lowercased `id class` string.
pub fn classify(id_class: &str) -> Hint {
    use aho_corasick::automaton::Automaton;
    use aho_corasick::Anchored;

    let mut seen = Seen::default();
    if id_class.trim().is_empty() {
        return seen.hint;
    }
    let m = matcher();
    // The search loop of `find_overlapping_iter` without its per-match bookkeeping: the
    // states are walked by hand and only the kinds of their matches are kept.
    let Ok(mut state) = m.dfa.start_state(Anchored::No) else {
        return seen.hint;
    };
    let bytes = id_class.as_bytes();
    // Words are the runs of ASCII letters and digits (a non-ASCII character separates
    // them, and each of its bytes is not ASCII).
    let in_word = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_alphanumeric);
    for (at, &b) in bytes.iter().enumerate() {
        state = m.dfa.next_state(Anchored::No, state, b);
        if !m.dfa.is_match(state) {
            continue;
        }
        for i in 0..m.dfa.match_len(state) {
            let pattern = m.dfa.match_pattern(state, i);
            match m.kinds[pattern.as_usize()] {
                kind @ (Kind::NegativeWord | Kind::LeadWord) => {
                    let start = (at + 1).saturating_sub(m.dfa.pattern_len(pattern));
                    let whole = start.checked_sub(1).is_none_or(|before| !in_word(before))
                        && !in_word(at + 1);
                    if kind == Kind::LeadWord {
                        seen.hint.flags |= if whole { flag::LEAD } else { 0 };
                    } else {
                        seen.negative |= whole;
                    }
                }
                kind => seen.note(kind),
            }
        }
    }
    seen.hint()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `classify` as it was first written, with the automaton's own overlapping search and
    /// words split by chars: the hand-walked version must agree with it.
    fn reference(automaton: &aho_corasick::AhoCorasick, id_class: &str) -> Hint {
        let mut seen = Seen::default();
        if id_class.trim().is_empty() {
            return seen.hint;
        }
        let kinds: Vec<Kind> = patterns().map(|(_, k)| k).collect();
        for found in automaton.find_overlapping_iter(id_class) {
            seen.note(kinds[found.pattern().as_usize()]);
        }
        if id_class
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| LEAD_WORDS.contains(&w))
        {
            seen.hint.flags |= flag::LEAD;
        }
        seen.negative = seen.negative
            || id_class
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| NEGATIVE_WORDS.contains(&w));
        seen.hint()
    }

    #[test]
    fn agrees_with_the_overlapping_search() {
        let mut pieces: Vec<&str> = patterns().map(|(p, _)| p).collect();
        pieces.extend(NEGATIVE_WORDS.iter());
        pieces.extend(LEAD_WORDS.iter());
        pieces.extend([
            " ", "-", "_", "x", "é", "中", "1", "a", "", "  ", "col-md-6",
        ]);
        let mut next = crate::test_rng::sequence();
        let automaton = aho_corasick::AhoCorasick::new(patterns().map(|(p, _)| p)).unwrap();
        for _ in 0..50_000 {
            let mut s = String::new();
            for _ in 0..next() % 6 {
                let piece = crate::test_rng::pick(&mut next, &pieces);
                // Cut pieces too, so that partial patterns and words show up.
                let cut = (next() % (piece.len() as u64 + 1)) as usize;
                s.push_str(piece.get(..cut).unwrap_or(piece));
                if next().is_multiple_of(2) {
                    s.push([' ', '-', '_', 'é'][(next() % 4) as usize]);
                }
            }
            assert_eq!(classify(&s), reference(&automaton, &s), "{s:?}");
        }
    }

    #[test]
    fn content_and_boilerplate() {
        assert_eq!(classify("article-body ").weight, CLASS_WEIGHT);
        assert_eq!(classify("sidebar ").weight, -CLASS_WEIGHT);
        assert_eq!(classify("top-ad box ").weight, -CLASS_WEIGHT);
        assert_eq!(classify("header ").weight, -CLASS_WEIGHT);
        assert_eq!(classify("shadow ").weight, 0);
        assert_eq!(classify("story-lead-text ").flags, flag::LEAD);
        assert_eq!(classify("article__intro ").flags, flag::LEAD);
        assert_eq!(classify("leaderboard ").flags, 0);
        assert_eq!(classify("post comments ").weight, 0);
        assert_eq!(classify("byline author ").flags, flag::AUTHOR);
        assert_eq!(classify("article-editor").flags, flag::AUTHOR);
        assert_eq!(
            classify("editorial-module-info-content").flags & flag::AUTHOR,
            0
        );
        assert_eq!(
            classify("editorial editor-name").flags & flag::AUTHOR,
            flag::AUTHOR
        );
        assert_eq!(classify("pubtime ").flags, flag::DATE);
    }
}
