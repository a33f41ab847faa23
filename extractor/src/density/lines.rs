//! Line-level boilerplate inside the chosen block: what class names and block statistics
//! cannot see because it shares a block with the article (trafilatura and jusText filter
//! the same lines).

use super::render::Line;
use crate::words::{Words, WordsFile};

/// Lines this long (chars) or longer are prose, never boilerplate lines.
pub const SHORT_LINE_CHARS: usize = 60;
/// A "related" heading ends the article only past this share of its text.
pub const TAIL_SHARE: f32 = 0.3;
/// Consecutive fully linked short lines that make a link list.
pub const LINK_LIST_RUN: usize = 3;

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new(
    "density_lines.txt",
    include_str!("../words/density_lines.txt"),
);

/// Headings after which a page lists other articles, not this one.
static TAIL_HEADINGS: Words = WORDS.list("TAIL_HEADINGS");

/// Lines that are boilerplate whole (compared lowercased, trailing punctuation cut).
static BOILERPLATE: Words = WORDS.list("BOILERPLATE");

/// Labels that open a line pointing at another article ("Lesen Sie auch: …"): the line
/// is boilerplate whole, up to [`READ_ALSO_LINE_CHARS`].
static READ_ALSO: Words = WORDS.list("READ_ALSO");
/// Longest line (chars) that a [`READ_ALSO`] label makes boilerplate.
pub const READ_ALSO_LINE_CHARS: usize = 200;

/// Drops the boilerplate lines of a body.
pub fn filter(lines: Vec<Line>) -> Vec<Line> {
    let total: u32 = lines.iter().map(|l| l.chars).sum();
    let mut seen = 0u32;
    let mut cut = lines.len();
    // Each short line bared once, for the tail-heading test here and the boilerplate
    // test below (`None` for a line too long for either).
    let mut bares: Vec<Option<String>> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let b = is_short(&l.text).then(|| bare(&l.text));
        if seen as f32 > total as f32 * TAIL_SHARE
            && b.as_deref().is_some_and(|b| TAIL_HEADINGS.contains(&b))
        {
            cut = i;
            break;
        }
        bares.push(b);
        seen += l.chars;
    }
    let mut lines: Vec<Line> = lines.into_iter().take(cut).collect();
    let linked: Vec<bool> = lines
        .iter()
        .zip(&bares)
        .map(|(l, b)| l.chars > 0 && l.link_chars * 10 >= l.chars * 9 && b.is_some())
        .collect();
    let mut keep = vec![true; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let run = linked[i..].iter().take_while(|&&b| b).count();
        if run >= LINK_LIST_RUN {
            keep[i..i + run].iter_mut().for_each(|k| *k = false);
        }
        i += run.max(1);
    }
    for ((k, b), l) in keep.iter_mut().zip(&bares).zip(&lines) {
        if b.as_deref().is_some_and(is_boilerplate) || points_elsewhere(&l.text) {
            *k = false;
        }
    }
    let mut keep = keep.into_iter();
    lines.retain(|_| keep.next().unwrap_or(true));
    lines
}

fn is_short(text: &str) -> bool {
    // A char takes one to four bytes: the byte length alone settles most lines.
    match text.len() {
        n if n < SHORT_LINE_CHARS => true,
        n if n >= 4 * SHORT_LINE_CHARS => false,
        _ => text.chars().count() < SHORT_LINE_CHARS,
    }
}

/// The line lowercased, without trailing colons, arrows and spaces.
fn bare(text: &str) -> String {
    text.trim()
        .trim_end_matches([':', '：', '»', '›', '>', '.', '…', ' '])
        .trim_start_matches(['·', '•', '【', '['])
        .trim_end_matches(['】', ']'])
        .trim()
        .to_lowercase()
}

/// A line that opens with a [`READ_ALSO`] label and a colon ("Lea también: …").
fn points_elsewhere(text: &str) -> bool {
    let t = text.trim_start();
    // A label of at most 40 bytes, then the colon.
    let Some(colon) = t
        .char_indices()
        .take_while(|&(i, _)| i < 40)
        .find(|&(_, c)| matches!(c, ':' | '：'))
        .map(|(i, _)| i)
    else {
        return false;
    };
    let label = t[..colon]
        .trim()
        .trim_start_matches(['»', '›', '>', '•', '·'])
        .trim();
    t.chars().count() <= READ_ALSO_LINE_CHARS && READ_ALSO.contains(&label.to_lowercase().as_str())
}

/// A short line, [`bare`]d, is boilerplate whole.
fn is_boilerplate(b: &str) -> bool {
    BOILERPLATE.contains(&b)
        || b.starts_with('©')
        || b.starts_with("copyright")
        || b.starts_with("(c) ")
        || b.contains("all rights reserved")
        || b.contains("版权所有")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, linked: bool) -> Line {
        let chars = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
        Line {
            text: text.to_string(),
            html: String::new(),
            tag: "p",
            chars,
            link_chars: if linked { chars } else { 0 },
        }
    }

    fn texts(lines: Vec<Line>) -> Vec<String> {
        filter(lines).into_iter().map(|l| l.text).collect()
    }

    #[test]
    fn related_heading_ends_the_article() {
        let prose = "A long paragraph of the article itself, with enough words in it to count.";
        let lines = vec![
            line(prose, false),
            line(prose, false),
            line("Related articles:", false),
            line("Another story about something else entirely", false),
        ];
        assert_eq!(texts(lines), [prose, prose]);
        // At the top it is a sidebar heading, not the end.
        let lines = vec![line("相关报道：", false), line(prose, false)];
        assert_eq!(texts(lines).len(), 2);
    }

    #[test]
    fn link_lists_share_bars_and_copyright_dropped() {
        let prose = "A long paragraph of the article itself, with enough words in it to count.";
        let lines = vec![
            line(prose, false),
            line("Share", false),
            line("One linked headline", true),
            line("Two linked headline", true),
            line("Three linked headline", true),
            line(prose, false),
            line("A single linked line stays", true),
            line(
                "Lea también: Impiden ingreso a Nicaragua a un reportero",
                false,
            ),
            line("Lesen Sie auch: Der Stadtrat und die Bibliothek", true),
            line("Teilen", false),
            line("© 2019 Example News. All rights reserved.", false),
        ];
        assert_eq!(texts(lines), [prose, prose, "A single linked line stays"]);
    }
}
