//! The article's lead (standfirst, summary, `chapo`): sentences that many templates set
//! above the body's container, beside the headline, under a class that names them
//! ([`flag::LEAD`]). Readers and the hand-made truths count them as the article's first
//! paragraph; the scoring alone leaves them out, being a block of their own outside the
//! body's subtree.

use super::{Stats, SIBLING_LINK_DENSITY};
use crate::scan::{flag, Page, Tag, NONE};

/// The lead and the body share an ancestor at most this many levels above the lead.
pub const LEAD_LEVELS: usize = 4;
/// Fewer visible characters than this is no lead: a label, a date, or a one-line deck
/// under an English headline ("The fourth in the series of films"), which the article's
/// text does not hold (the AEB truths leave decks out; the German, French and Polish
/// leads of the trafilatura set run to two sentences and more, and are the article's
/// first paragraph).
pub const MIN_LEAD_CHARS: u32 = 140;
/// A lead block of more lines than this is the article's header (a kicker, the headline,
/// the byline and the date) or a breadcrumb, not a lead; so is one with a date line.
pub const MAX_LEAD_LINES: usize = 3;

/// The last block before `first` (the body's first block) marked as a lead, outside the
/// body, near it in the tree (a common ancestor within [`LEAD_LEVELS`] levels), with
/// prose's share of link text, and in no boilerplate, comment or navigation block on the
/// way up to that ancestor.
pub fn lead_before(page: &Page, st: &[Stats], first: u32) -> Option<u32> {
    let mut found = None;
    let mut c = 1u32;
    while c < first {
        let (node, s) = (&page.nodes[c as usize], &st[c as usize]);
        if s.end > first {
            // An ancestor of the body: its lead is among its children.
            c += 1;
            continue;
        }
        if node.flags & flag::LEAD != 0 && is_lead(page, st, c, first) {
            found = Some(c);
        }
        c = if node.flags & flag::LEAD != 0 {
            s.end
        } else {
            c + 1
        };
    }
    found
}

/// Whether node `n` (ending before `first`) can be the body's lead.
fn is_lead(page: &Page, st: &[Stats], n: u32, first: u32) -> bool {
    let (node, s) = (&page.nodes[n as usize], &st[n as usize]);
    if node.tag.is_heading()
        || node.flags & (flag::SKIPPED | flag::HEAD | flag::AUTHOR | flag::DATE) != 0
        || s.chars < MIN_LEAD_CHARS
        || s.link_density() >= SIBLING_LINK_DENSITY
    {
        return false;
    }
    let text = page.node_text(n);
    let mut lines = text.trim().lines();
    // A short line with a date in it is the header's date line: this is the header.
    let date_line = |l: &str| {
        l.chars().count() < crate::published::PROSE_CHARS as usize && crate::published::has_date(l)
    };
    if lines.clone().count() > MAX_LEAD_LINES || lines.any(date_line) {
        return false;
    }
    let mut a = n;
    for _ in 0..=LEAD_LEVELS {
        let an = &page.nodes[a as usize];
        if an.hint < 0
            || an.flags & flag::DISCUSSION != 0
            || (an.flags & flag::CHROME != 0 && an.tag != Tag::Header)
        {
            return false;
        }
        let p = an.parent;
        if p == NONE || p == 0 {
            return false;
        }
        if st[p as usize].end > first {
            // `p` holds both the lead and the body's first block.
            return !matches!(page.nodes[p as usize].tag, Tag::Body | Tag::Html);
        }
        a = p;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::density::body;
    use crate::scan::scan;
    use url::Url;

    fn text_of(html: &str) -> String {
        let base = Url::parse("http://example.com/").unwrap();
        body(&scan(html), &base, true).text
    }

    const LEAD: &str = "Der Stadtrat hat am Dienstag den neuen Haushalt für die Bibliothek \
        beschlossen. Viele Bürger kamen zur Sitzung, und die Debatte dauerte bis in den späten \
        Abend hinein.";

    fn page(lead_class: &str, lead: &str) -> String {
        let p = "<p>Die Bibliothek bekommt mehr Geld für neue Bücher, längere Öffnungszeiten und \
                 ein Lesecafé, sagte die Bürgermeisterin nach der Abstimmung.</p>"
            .repeat(4);
        format!(
            "<body><article><h1>Mehr Geld für die Bibliothek</h1>\
             <div class=\"{lead_class}\"><p>{lead}</p></div>\
             <div class=wrap><div class=article-body>{p}</div><div class=rail>Anzeige</div>\
             </div></article></body>"
        )
    }

    #[test]
    fn a_lead_above_the_body_is_its_first_paragraph() {
        let text = text_of(&page("article__intro", LEAD));
        assert!(text.starts_with("Der Stadtrat hat am Dienstag"), "{text}");
        assert!(text.contains("Lesecafé"), "{text}");
    }

    #[test]
    fn no_lead_without_its_class_or_its_length_or_with_a_date_line() {
        // Unmarked, a one-line deck, a header block with its date line.
        for html in [
            page("box", LEAD),
            page("lead", "The fourth in the series of films"),
            page(
                "lead",
                &format!("Lokales<br>25. Januar 2022, Berlin<br>{LEAD}"),
            ),
        ] {
            let text = text_of(&html);
            assert!(text.starts_with("Die Bibliothek"), "{text}");
        }
    }
}
