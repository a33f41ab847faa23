//! The body: which subtree holds the article, and its paragraphs in order.
//!
//! Here: the statistics per element ([`stats`]), the scoring and the choice of the body's
//! subtree ([`select`]), the line-density fallback for pages without paragraphs; in
//! `render` the chosen subtree written as lines of text and HTML, in `lines` the
//! boilerplate lines filtered out of it, and in `lead` the article's lead set above the
//! body's container.

use url::Url;

mod lead;
mod lines;
mod render;

use render::{escape_into, Renderer};

use crate::scan::{flag, Event, Page, Tag, NONE};

/// The article body as text, HTML and images.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Body {
    pub text: String,
    /// Empty unless [`body`] was asked for the HTML.
    pub html: String,
    pub images: Vec<String>,
    /// Byte range of [`Page::text`] the body was taken from (first to last text kept).
    pub span: Option<(u32, u32)>,
    /// Whether this is an article: false when the text is empty, when the little text there
    /// is sits only in page chrome or blocks whose class names boilerplate (a footer's
    /// notice on a page with no article), or when most of it is link text (a listing).
    pub article: bool,
}

/// Text found only in chrome and boilerplate blocks is an article from this many bytes on.
pub const NO_ARTICLE_MAX_BYTES: usize = 600;
/// A body of fewer words than this ([`script::word_equivalents`]) is no article:
/// "404 Not Found", "Please enable JavaScript to view this page.", a "Loading…" line.
pub const MIN_ARTICLE_WORDS: usize = 10;

/// The text holds at least [`MIN_ARTICLE_WORDS`] words.
fn enough_words(text: &str) -> bool {
    script::has_words(text, MIN_ARTICLE_WORDS)
}

/// A body whose top block has more linked text than this share is a listing, not an article.
pub const LISTING_LINK_DENSITY: f32 = 0.5;

/// Paragraphs shorter than this (chars) do not vote for their ancestors (Readability: 25).
pub const MIN_PARAGRAPH_CHARS: u32 = 25;
/// Ancestors a paragraph's score reaches (Readability: 5).
pub const SCORE_LEVELS: usize = 5;
/// A sibling counts as a section of the article when a candidate inside it scores at least
/// this share of the top candidate (teasers of other articles score far less).
pub const SECTION_SHARE: f32 = 0.4;
/// Siblings of the top candidate with more linked text than this share are not article
/// sections.
pub const SIBLING_LINK_DENSITY: f32 = 0.3;
/// A body shorter than this (chars) makes the selection retry without the class filter.
pub const MIN_BODY_CHARS: u32 = 250;
/// The line fallback's region replaces a best block too short to be an article from this
/// many chars on: a short reference page (a function's one-line synopsis and two
/// sentences, a syntax diagram's words and what it links to) is an article too. It was
/// [`MIN_BODY_CHARS`] (250); at 100 the real-site evaluation's recall rose from 0.9486 |
/// 0.9449 to 0.9586 | 0.9557 (tuned | held aside, with the words of `<svg>` read),
/// precision unchanged.
pub const FALLBACK_MIN_CHARS: usize = 100;

/// Per-node totals over the subtree, computed once after the scan.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Visible characters of the subtree.
    pub chars: u32,
    /// Characters inside links.
    pub link_chars: u32,
    /// Sentence punctuation (ASCII and CJK).
    pub punct: u32,
    /// `<p>` elements with text.
    pub paras: u32,
    pub imgs: u32,
    pub lis: u32,
    /// Form controls and embeds (input, select, iframe, object).
    pub inputs: u32,
    pub embeds: u32,
    /// Text of the node's own block: its own text and that of its inline descendants.
    pub block_chars: u32,
    pub block_link_chars: u32,
    pub block_punct: u32,
    /// One past the last node of the subtree (nodes are in document order).
    pub end: u32,
    /// Element children.
    pub children: u32,
}

impl Stats {
    pub(crate) fn link_density(&self) -> f32 {
        if self.chars == 0 {
            0.0
        } else {
            self.link_chars as f32 / self.chars as f32
        }
    }
}

/// Totals for every node.
pub fn stats(page: &Page) -> Vec<Stats> {
    let n = page.nodes.len();
    let mut st = vec![Stats::default(); n];
    // Block owner of each node: itself if it is a block, else its parent's owner.
    let mut owner = vec![0u32; n];
    for (i, node) in page.nodes.iter().enumerate() {
        let s = &mut st[i];
        s.chars = node.chars;
        s.punct = node.punct;
        s.end = i as u32 + 1;
        if node.flags & flag::IN_LINK != 0 {
            s.link_chars = node.chars;
        }
        match node.tag {
            Tag::Img => s.imgs = 1,
            Tag::Li => s.lis = 1,
            Tag::Input | Tag::Select | Tag::Textarea => s.inputs = 1,
            Tag::Iframe | Tag::Object => s.embeds = 1,
            _ => {}
        }
        owner[i] = if i == 0 || node.tag.is_block() {
            i as u32
        } else {
            owner[node.parent as usize]
        };
        let o = owner[i] as usize;
        st[o].block_chars += node.chars;
        st[o].block_punct += node.punct;
        if node.flags & flag::IN_LINK != 0 {
            st[o].block_link_chars += node.chars;
        }
    }
    for i in (1..n).rev() {
        let node = &page.nodes[i];
        if node.tag == Tag::P && st[i].chars > 0 {
            st[i].paras += 1;
        }
        let c = st[i];
        let p = &mut st[node.parent as usize];
        p.chars += c.chars;
        p.link_chars += c.link_chars;
        p.punct += c.punct;
        p.paras += c.paras;
        p.imgs += c.imgs;
        p.lis += c.lis;
        p.inputs += c.inputs;
        p.embeds += c.embeds;
        p.end = p.end.max(c.end);
        p.children += 1;
    }
    st
}

/// The chosen body: the children of `parent` that belong to the article (or `parent` alone).
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub top: u32,
    pub parent: u32,
    pub include: Vec<u32>,
    /// The article's lead above the body's container ([`lead::lead_before`]), written
    /// before `include`.
    pub lead: Option<u32>,
}

/// Finds and renders the body of `page`: its text, and its HTML too when `html`.
pub fn body(page: &Page, base: &Url, html: bool) -> Body {
    let st = stats(page);
    let filtered = select(page, &st, true);
    // No scored block outside page chrome and boilerplate classes, or too few words in
    // the one found: the little text found below (a footer's notice, a share bar, or
    // the table of contents of two links above a "Generated by" footer) is no article.
    // (A long text is: class filters also hit real article containers.)
    let filtered_chars =
        |s: &Selection| s.include.iter().map(|&i| st[i as usize].chars).sum::<u32>();
    let outside_boilerplate = filtered.as_ref().is_some_and(|f| {
        filtered_chars(f) >= MIN_BODY_CHARS
            || enough_words(&render(page, &st, f, base, false).finish().text)
    });
    let sel = filtered
        .filter(|s| filtered_chars(s) >= MIN_BODY_CHARS)
        .or_else(|| select(page, &st, false));
    let Some(sel) = sel else {
        // Nothing scored anywhere (no filter excluded anything): lines of text. As
        // above, a little text that is an article only with the boilerplate blocks'
        // (a table of contents of two links over a "Generated by" footer) is none.
        let mut lines = line_density_fallback(page, base, false, html);
        if lines.article && lines.text.len() < NO_ARTICLE_MAX_BYTES {
            lines.article = line_density_fallback(page, base, true, false).article;
        }
        return lines;
    };
    let out = render(page, &st, &sel, base, html);
    let listing = (st[sel.top as usize].link_density() > LISTING_LINK_DENSITY
        || mostly_links(&out.lines))
        && !has_prose(&out.lines);
    let mut body = out.finish();
    body.article = (outside_boilerplate || body.text.len() >= NO_ARTICLE_MAX_BYTES)
        && enough_words(&body.text)
        && !listing;
    // The best block is too short to be an article (a site's tagline, "Small. Fast.
    // Reliable.", beside paragraphs held loose in `<body>`, which no container scores): the
    // page's densest region of lines outside chrome and boilerplate blocks, when
    // that is an article of [`FALLBACK_MIN_CHARS`] or more (Readability keeps trying
    // until an attempt holds enough text). A "404 Not Found" in a template whose footer
    // and notices hold the page's only lines stays no article.
    if !body.article && !enough_words(&body.text) {
        let lines = line_density_fallback(page, base, true, html);
        if lines.article && lines.text.chars().count() >= FALLBACK_MIN_CHARS {
            return lines;
        }
    }
    body
}

/// The lines of a selection (its lead first), not yet filtered.
fn render<'a>(
    page: &Page,
    st: &[Stats],
    sel: &Selection,
    base: &'a Url,
    html: bool,
) -> Renderer<'a> {
    let top_chars = st[sel.top as usize].chars;
    let keep = |n: u32| keep_inside(page, st, n, top_chars);
    let mut out = Renderer::new(base, html);
    if let Some(lead) = sel.lead {
        out.subtree(page, lead, &keep);
        // The body's span is the article's own text: the date line and the byline are
        // looked for around it, as on a page without a lead.
        out.body.span = None;
    }
    for &root in &sel.include {
        out.subtree(page, root, &keep);
    }
    out
}

/// Whether more than [`LISTING_LINK_DENSITY`] of the body as rendered (its
/// lines, every included block) is link text: a table of contents, a class
/// hierarchy or an index whose top block alone reads as prose (a chapter
/// page's one sentence above the links of its sections, or the tree
/// drawing between the links of a hierarchy).
fn mostly_links(lines: &[render::Line]) -> bool {
    let (chars, link_chars) = lines.iter().fold((0u32, 0u32), |(c, l), line| {
        (c + line.chars, l + line.link_chars)
    });
    link_chars as f32 > LISTING_LINK_DENSITY * chars.max(1) as f32
}

/// Whether the lines of a body that is mostly links hold text of its own: the lines
/// that are not themselves mostly links (a section index's introduction above the
/// links of its pages, the descriptions beside the names of a module index) hold
/// [`MIN_ARTICLE_WORDS`] words or more. Such a page is an article with a table of
/// contents, not a listing: a listing is navigation text alone, its links and the
/// few words between them. Before, every section index of the real sites' manuals
/// came out no article (`cargo bench -p evaluation --bench neardup_sites`).
fn has_prose(lines: &[render::Line]) -> bool {
    let mut prose = lines
        .iter()
        .filter(|l| !mostly_links(std::slice::from_ref(*l)))
        .map(|l| l.text.as_str());
    let mut words = 0;
    prose.any(|text| {
        words += script::word_equivalents(text);
        words >= MIN_ARTICLE_WORDS
    })
}

/// Lines whose window of [`LINE_WINDOW`] lines holds fewer chars than this end a text region.
pub const LINE_REGION_CHARS: usize = 100;
/// Lines per window of the line-density fallback.
pub const LINE_WINDOW: usize = 3;

/// Html2Article for pages without paragraph structure: all visible lines, then the region of
/// consecutive lines with the most text, where a region ends when a window of
/// [`LINE_WINDOW`] lines holds fewer than [`LINE_REGION_CHARS`] chars. An article when it
/// holds text and most of it is not link text (a page whose only text is a menu is none).
/// Skipped, head and chrome blocks are never read; with `no_boilerplate`, neither are blocks
/// named as boilerplate (a negative class hint) or as comments and consent notices.
fn line_density_fallback(page: &Page, base: &Url, no_boilerplate: bool, html: bool) -> Body {
    let mut out = Renderer::new(base, html);
    let keep = |n: u32| {
        let node = &page.nodes[n as usize];
        node.flags & (flag::SKIPPED | flag::HEAD | flag::CHROME) == 0
            && !(no_boilerplate && (node.hint < 0 || node.flags & flag::DISCUSSION != 0))
    };
    out.subtree(page, 0, &keep);
    let mut lines = std::mem::take(&mut out.lines);
    if lines.len() > LINE_WINDOW {
        let len: Vec<usize> = lines.iter().map(|l| l.text.chars().count()).collect();
        let window = |i: usize| {
            len[i..(i + LINE_WINDOW).min(len.len())]
                .iter()
                .sum::<usize>()
        };
        let (mut best, mut best_chars) = ((0, lines.len()), 0);
        let mut i = 0;
        while i < lines.len() {
            if window(i) < LINE_REGION_CHARS {
                i += 1;
                continue;
            }
            let start = i;
            while i < lines.len() && window(i) >= LINE_REGION_CHARS {
                i += 1;
            }
            let end = (i + LINE_WINDOW - 1).min(lines.len());
            let chars: usize = len[start..end].iter().sum();
            if chars > best_chars {
                (best, best_chars) = ((start, end), chars);
            }
        }
        if best_chars > 0 {
            lines.truncate(best.1);
            lines.drain(..best.0);
            // The region is text only: its images were counted from the whole page.
            out.body.images.clear();
            for l in &mut lines {
                l.html.clear();
                if html {
                    escape_into(&mut l.html, &l.text);
                }
                l.tag = "p";
            }
            lines.retain(|l| !l.text.is_empty());
        }
    }
    let listing = mostly_links(&lines) && !has_prose(&lines);
    out.lines = lines;
    let mut body = out.finish();
    body.article = enough_words(&body.text) && !listing;
    body
}

/// The scores of [`select`]: which nodes are out of the running, and the
/// candidates' scores (their paragraphs' own scores, shared with their
/// ancestors up to [`SCORE_LEVELS`] levels, less with each level).
struct Scores {
    /// Nodes out of the running: skipped, chrome, and (first try) negative class names.
    out: Vec<bool>,
    score: Vec<f32>,
    scored: Vec<bool>,
    /// The scored nodes (sorted by [`select`]).
    candidates: Vec<u32>,
}

/// Scores paragraphs into their ancestors (Readability, with punctuation as the symbol
/// density).
fn scores(page: &Page, st: &[Stats], filter_unlikely: bool) -> Scores {
    let n = page.nodes.len();
    let mut out = vec![false; n];
    for i in 1..n {
        let node = &page.nodes[i];
        out[i] = out[node.parent as usize]
            || node.flags & (flag::SKIPPED | flag::HEAD) != 0
            || (filter_unlikely && (node.flags & flag::CHROME != 0 || node.hint < 0));
    }
    let mut score = vec![0f32; n];
    let mut scored = vec![false; n];
    // The scored nodes, listed (sorted below): the loops over candidates visit them alone, not
    // every node of the page.
    let mut candidates: Vec<u32> = Vec::new();
    for i in 1..n {
        let node = &page.nodes[i];
        let s = &st[i];
        if out[i]
            || !node.tag.is_block()
            || node.tag.is_heading()
            || s.block_chars < MIN_PARAGRAPH_CHARS
        {
            continue;
        }
        let own = 1.0 + s.block_punct.min(30) as f32 + (s.block_chars as f32 / 100.0).min(3.0);
        let own = own * (1.0 - s.block_link_chars as f32 / s.block_chars as f32);
        // A container holding its text directly (`<div>text<br>text</div>`) is a candidate too.
        let mut level = if node.tag == Tag::P { 1 } else { 0 };
        let mut a = if level == 1 { node.parent } else { i as u32 };
        while a != NONE && a != 0 && level <= SCORE_LEVELS {
            let ai = a as usize;
            if out[ai] {
                break;
            }
            if !scored[ai] {
                scored[ai] = true;
                score[ai] = initial_score(page, st, ai);
                candidates.push(a);
            }
            let divider = match level {
                0 | 1 => 1.0,
                2 => 2.0,
                l => (l - 1) as f32 * 3.0,
            };
            score[ai] += own / divider;
            a = page.nodes[ai].parent;
            level += 1;
        }
    }
    Scores {
        out,
        score,
        scored,
        candidates,
    }
}

/// The children of the top's parent that [`select`] keeps: the top, strong
/// candidates and sections holding one, plain paragraphs, and short
/// paragraphs in the template of kept ones.
fn siblings(page: &Page, st: &[Stats], scores: &Scores, top: u32, top_score: f32) -> Vec<u32> {
    let Scores {
        out,
        score,
        scored,
        candidates,
    } = scores;
    let parent = page.nodes[top as usize].parent;
    let threshold = (top_score * 0.2).max(10.0);
    let mut include = Vec::new();
    let mut c = parent + 1;
    while c < st[parent as usize].end {
        let s = &st[c as usize];
        let node = &page.nodes[c as usize];
        // A sibling wrapping a candidate as strong as the top's own text: an article split
        // into sections around figures or ads (`<section><div><div class=content><p>`).
        let strong_inside = || {
            // The candidates of the subtree `c..s.end`, found in the sorted list.
            let from = candidates.partition_point(|&d| d < c);
            let to = candidates.partition_point(|&d| d < s.end);
            top != c
                && s.link_density() < SIBLING_LINK_DENSITY
                && candidates
                    .get(from..to)
                    .unwrap_or_default()
                    .iter()
                    .any(|&d| score[d as usize] >= top_score * SECTION_SHARE)
        };
        let keep = c == top
            || (!out[c as usize]
                && (scored[c as usize] && score[c as usize] >= threshold
                    || strong_inside()
                    || (node.tag == Tag::P && s.chars > 80 && s.link_density() < 0.25)
                    || (node.tag == Tag::P
                        && s.chars > 0
                        && s.link_density() == 0.0
                        && ends_sentence(page, c))));
        if keep {
            include.push(c);
        }
        c = s.end;
    }
    // Short paragraphs in the template of kept ones (`<div class=body__paragraph>`): their
    // class name counts for little on so little text, but the template says what they are.
    // A paragraph: its text its own (no blocks inside), ending like a sentence.
    let mut c = parent + 1;
    let kept = include.clone();
    while c < st[parent as usize].end {
        let (s, node) = (&st[c as usize], &page.nodes[c as usize]);
        let twin_of_kept = || {
            kept.iter().any(|&k| {
                let kn = &page.nodes[k as usize];
                kn.class == node.class && kn.tag == node.tag
            })
        };
        if node.class != 0
            && !out[c as usize]
            && s.chars > 0
            && s.block_chars == s.chars
            && s.link_density() < SIBLING_LINK_DENSITY
            && ends_sentence(page, c)
            && !kept.contains(&c)
            && twin_of_kept()
        {
            include.push(c);
        }
        c = s.end;
    }
    include
}

/// Scores paragraphs into their ancestors (Readability, with punctuation as the symbol
/// density) and picks the best subtree and the siblings that continue it.
pub fn select(page: &Page, st: &[Stats], filter_unlikely: bool) -> Option<Selection> {
    let mut scores = scores(page, st, filter_unlikely);
    // In document order: the first of equal scores wins, as in a walk over all nodes.
    scores.candidates.sort_unstable();
    let score = &mut scores.score;
    let mut best: Option<(u32, f32)> = None;
    for &c in &scores.candidates {
        let i = c as usize;
        score[i] *= 1.0 - st[i].link_density();
        if best.is_none_or(|(_, b)| score[i] > b) {
            best = Some((c, score[i]));
        }
    }
    let (mut top, top_score) = best?;
    let score = &scores.score;
    let twins = Twins::of(page, st, &scores.candidates, &scores.out, top);
    let mut chunks = Vec::new();
    let posts = twins.are_posts();
    if posts {
        if let Some(&first) = twins
            .nodes
            .iter()
            .find(|&&j| score[j as usize] >= top_score * SECTION_SHARE)
        {
            top = first;
        }
    } else {
        let threshold = (top_score * 0.2).max(10.0);
        chunks.extend(twins.nodes.iter().copied().filter(|&j| {
            j != top
                && score[j as usize] >= threshold
                && st[j as usize].link_density() < SIBLING_LINK_DENSITY
        }));
    }
    // A top candidate alone in its parent: the parent is the article.
    loop {
        let p = page.nodes[top as usize].parent;
        if p == NONE
            || p == 0
            || matches!(page.nodes[p as usize].tag, Tag::Body | Tag::Html)
            || st[p as usize].children != 1
        {
            break;
        }
        top = p;
    }
    if !posts {
        top = whole_document(page, st, &scores.out, top);
    }
    let parent = page.nodes[top as usize].parent;
    if parent == NONE || parent == 0 {
        return Some(Selection {
            top,
            parent: top,
            include: vec![top],
            lead: None,
        });
    }
    let mut include = siblings(page, st, &scores, top, top_score);
    // Chunks of the article outside the top's parent (each chunk in its own grid row).
    let inside = |j: u32, roots: &[u32]| roots.iter().any(|&r| j >= r && j < st[r as usize].end);
    for j in chunks {
        if !inside(j, &include) {
            include.push(j);
        }
    }
    include.sort_unstable();
    let lead = include
        .first()
        .and_then(|&first| lead::lead_before(page, st, first));
    Some(Selection {
        top,
        parent,
        include,
        lead,
    })
}

/// Ancestors of the top looked at by [`whole_document`].
pub const DOCUMENT_LEVELS: usize = 4;
/// A top of fewer chars is never a section of a longer document ([`whole_document`]): a
/// short article's template holds blocks of text as long as it (a site's notice, an
/// "about us").
pub const DOCUMENT_MIN_CHARS: u32 = 2_000;
/// The share of link text under which the text an ancestor adds to the top is more of
/// the document, not navigation or teasers.
pub const DOCUMENT_LINK_DENSITY: f32 = 0.05;
/// The text an ancestor adds must be at least this share of the top's for the ancestor
/// to be the document: as much again. (0.5 measured the same on the real sites and the
/// extraction bench's tuned parts within 0.001; 1.0 is the stricter.)
pub const DOCUMENT_MORE_TEXT: f32 = 1.0;

/// The highest ancestor of a long `top` ([`DOCUMENT_MIN_CHARS`]; within
/// [`DOCUMENT_LEVELS`], below `<body>`, none of them out of the running) whose text beyond the top's is at least
/// [`DOCUMENT_MORE_TEXT`] of the top's and almost no link text
/// ([`DOCUMENT_LINK_DENSITY`]): a long document cut in sections, each its own
/// container (a manual page's NAME, SYNOPSIS, DESCRIPTION, OPTIONS), whose best
/// candidate is one section's block (the option list a family of manual pages shares)
/// is the whole document.
fn whole_document(page: &Page, st: &[Stats], out: &[bool], top: u32) -> u32 {
    let (chars, links) = (st[top as usize].chars, st[top as usize].link_chars);
    let mut best = top;
    if chars < DOCUMENT_MIN_CHARS {
        return best;
    }
    let mut a = page.nodes[top as usize].parent;
    for _ in 0..DOCUMENT_LEVELS {
        if a == NONE
            || a == 0
            || out[a as usize]
            || matches!(page.nodes[a as usize].tag, Tag::Body | Tag::Html)
        {
            break;
        }
        let s = &st[a as usize];
        let (more, more_links) = (s.chars - chars, s.link_chars - links);
        if more as f32 >= DOCUMENT_MORE_TEXT * chars as f32
            && (more_links as f32) <= DOCUMENT_LINK_DENSITY * more as f32
        {
            best = a;
        }
        a = page.nodes[a as usize].parent;
    }
    best
}

/// Blocks in one template with the best candidate: the same tag, class and depth, scoring
/// as text too. Either the posts of a page of posts (a blog's front page, a forum thread),
/// each under its own date line, or the chunks of one article cut apart by ads and rails.
struct Twins {
    /// The twins and the top, in document order.
    nodes: Vec<u32>,
    /// Text between consecutive twins holds a date: each block is a post of its own.
    dated_gaps: bool,
}

/// Bytes of text read between two twins when looking for a date line.
pub const TWIN_GAP_BYTES: usize = 1024;

impl Twins {
    /// `candidates`: the scored nodes, in document order (`top` among them).
    fn of(page: &Page, st: &[Stats], candidates: &[u32], out: &[bool], top: u32) -> Twins {
        let t = &page.nodes[top as usize];
        let mut nodes = vec![top];
        if t.class != 0 {
            let (top_start, top_end) = (top, st[top as usize].end);
            nodes = candidates
                .iter()
                .copied()
                .filter(|&j| {
                    let (n, ji) = (&page.nodes[j as usize], j as usize);
                    j == top
                        || (!out[ji]
                            && n.tag == t.tag
                            && n.class == t.class
                            && n.depth == t.depth
                            && (st[ji].end <= top_start || j >= top_end))
                })
                .collect();
        }
        let dated_gaps = nodes
            .windows(2)
            .any(|w| crate::published::has_date(&gap_text(page, w[0], w[1])));
        Twins { nodes, dated_gaps }
    }

    fn are_posts(&self) -> bool {
        self.nodes.len() > 1 && self.dated_gaps
    }
}

/// The text between the end of node `a` and the start of node `b` (at most
/// [`TWIN_GAP_BYTES`] of it, nearest `b`).
fn gap_text(page: &Page, a: u32, b: u32) -> String {
    let (from, to) = (
        page.nodes[a as usize].close as usize,
        page.nodes[b as usize].open as usize,
    );
    let mut pieces = Vec::new();
    let mut bytes = 0;
    for ev in page.events[from.min(to)..to].iter().rev() {
        if let Event::Text(x, y) = *ev {
            pieces.push(&page.text[x as usize..y as usize]);
            bytes += (y - x) as usize;
            if bytes >= TWIN_GAP_BYTES {
                break;
            }
        }
    }
    pieces.reverse();
    pieces.join(" ")
}

/// Readability's starting score: the tag's prior plus what the class names say. A class
/// name counts in full only on a block holding an article's worth of text
/// ([`MIN_BODY_CHARS`]): on a short one (`<div class=floor_text>` over a forum post, a
/// `<div class=post-info>` beside the article) it would outweigh the block's own text.
fn initial_score(page: &Page, st: &[Stats], i: usize) -> f32 {
    let node = &page.nodes[i];
    let tag = match node.tag {
        Tag::Div | Tag::Article | Tag::Main | Tag::Section => 5.0,
        Tag::Pre | Tag::Td | Tag::Blockquote => 3.0,
        Tag::Address | Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form => {
            -3.0
        }
        Tag::Th => -5.0,
        _ => 0.0,
    };
    let markup = if node.flags & flag::ARTICLE_BODY != 0 {
        25.0
    } else {
        0.0
    };
    let text_share = (st[i].chars as f32 / MIN_BODY_CHARS as f32).min(1.0);
    tag + node.hint as f32 * text_share + markup
}

/// The node's text ends like a sentence.
fn ends_sentence(page: &Page, n: u32) -> bool {
    let t = page.node_text(n);
    let t = t.trim_end();
    t.ends_with(['.', '!', '?', '。', '！', '？', '"', '”'])
}

/// Readability's "clean conditionally": inside the body, drops the blocks that look like
/// boilerplate (link lists, share bars, forms, image galleries without text).
fn keep_inside(page: &Page, st: &[Stats], n: u32, top_chars: u32) -> bool {
    let node = &page.nodes[n as usize];
    let s = &st[n as usize];
    if node.flags & (flag::SKIPPED | flag::HEAD) != 0 {
        return false;
    }
    // Readers' comments and consent notices are not the article, however long.
    if node.flags & flag::DISCUSSION != 0 {
        return false;
    }
    // A big share of the article is never boilerplate, whatever its class says.
    let major = s.chars as u64 * 2 > top_chars as u64;
    if major {
        return true;
    }
    if node.flags & flag::CHROME != 0 || node.hint < 0 {
        return false;
    }
    if !matches!(
        node.tag,
        Tag::Div
            | Tag::Section
            | Tag::Table
            | Tag::Ul
            | Tag::Ol
            | Tag::Form
            | Tag::Figure
            | Tag::Dl
            | Tag::Center
            | Tag::Details
    ) {
        return true;
    }
    let is_list = matches!(node.tag, Tag::Ul | Tag::Ol);
    let weight = node.hint as f32
        + if node.flags & flag::ARTICLE_BODY != 0 {
            25.0
        } else {
            0.0
        };
    if s.punct >= 10 {
        return true;
    }
    let ld = s.link_density();
    let p = s.paras as f32;
    let img = s.imgs as f32;
    let li = s.lis as f32 - 100.0;
    let figure = node.tag == Tag::Figure;
    let remove = (img > 1.0 && p / img < 0.5 && !figure)
        || (!is_list && li > p)
        || (s.inputs as f32 > (p / 3.0).floor())
        || (!is_list && !figure && s.chars < 25 && (s.imgs == 0 || s.imgs > 2))
        || (!is_list && weight < 25.0 && ld > 0.2)
        || (weight >= 25.0 && ld > 0.5)
        || (s.embeds == 1 && s.chars < 75)
        || s.embeds > 1;
    !remove
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    fn section(words: &str) -> String {
        let p = format!("<p>{words}, and the researchers said more about it, in detail.</p>");
        format!(
            "<section class=outer><div><div class=post-content>{}</div></div></section>",
            p.repeat(4)
        )
    }

    #[test]
    fn article_split_into_sections_around_figures() {
        let html = format!(
            "<body><nav><a href=/>Home</a></nav><main>{}<section><figure><img src=a.jpg>\
             <figcaption>A cell</figcaption></figure></section>{}</main>\
             <aside><p>Teaser of another story, short.</p></aside></body>",
            section("First part of the story"),
            section("Second part of the story")
        );
        let base = Url::parse("http://example.com/").unwrap();
        let b = body(&scan(&html), &base, true);
        assert!(b.text.contains("First part"), "{}", b.text);
        assert!(b.text.contains("Second part"), "{}", b.text);
        assert!(!b.text.contains("Teaser"));
    }

    fn text_of(html: &str) -> String {
        let base = Url::parse("http://example.com/").unwrap();
        body(&scan(html), &base, true).text
    }

    #[test]
    fn a_comments_block_longer_than_a_short_article_is_not_its_text() {
        let notice = "We use cookies and similar technologies to improve your experience, to show \
                      you personalised content and advertising, and to analyse our traffic. By \
                      continuing to browse this site you agree to our use of cookies.";
        let html = format!(
            "<body><div class=col-main><h1>A short note</h1><div class=article-content>\
             <p>The council met on Tuesday and approved the new budget for the library.</p></div>\
             <div class=comments><h4>Comments</h4><p>{notice}</p></div></div></body>"
        );
        let text = text_of(&html);
        assert!(text.contains("approved the new budget"), "{text}");
        assert!(!text.contains("cookies"), "{text}");
    }

    #[test]
    fn a_few_words_are_no_article() {
        let base = Url::parse("http://example.com/").unwrap();
        for (html, article) in [
            ("<body><div class=text><p>404 Not Found</p></div></body>", false),
            (
                "<body><div class=post><p>Please enable JavaScript to view this page.</p></div></body>",
                false,
            ),
            ("<body><p>加载中……</p></body>", false),
            (
                "<body><div class=post><p>The council met on Tuesday and approved the new budget.</p></div></body>",
                true,
            ),
            ("<body><div class=post><p>他按掉后再打给我。口气很愉悦。只说我想唱歌给你听。</p></div></body>", true),
            // Lines without paragraphs, all of them links: a menu, no article.
            (
                "<body><a href=/a>Home</a> <a href=/b>News</a> <a href=/c>World</a> <a href=/d>Business</a> \
                 <a href=/e>Technology</a> <a href=/f>Sport</a> <a href=/g>Culture</a> <a href=/h>Opinion</a> \
                 <a href=/i>Science</a> <a href=/j>Health</a> <a href=/k>Travel</a></body>",
                false,
            ),
        ] {
            assert_eq!(body(&scan(html), &base, true).article, article, "{html}");
        }
    }

    #[test]
    fn paragraphs_loose_in_body_beat_a_tagline() {
        // SQLite's documentation: a header with a tagline and menus, then the text straight
        // in <body>, no container (issue 31: these pages were no article, their tagline the
        // body).
        let html = "<body><div class=nosearch><a href=/><img src=logo.gif alt=SQLite></a>\
             <div class=\"tagline desktoponly\">Small. Fast. Reliable.<br>Choose any three.</div>\
             <div class=\"menu mainmenu\"><ul><li><a href=/>Home</a><li><a href=/about>About</a>\
             <li><a href=/docs>Documentation</a><li><a href=/download>Download</a></ul></div></div>\
             <h2>Online Backup Object</h2><blockquote><pre>typedef struct sqlite3_backup sqlite3_backup;</pre></blockquote>\
             <p>The sqlite3_backup object records state information about an ongoing online backup \
             operation. The sqlite3_backup object is created by a call to \
             <a href=/init>sqlite3_backup_init()</a> and is destroyed by a call to \
             <a href=/finish>sqlite3_backup_finish()</a>.</p>\
             <p>See Also: <a href=/backup>Using the SQLite Online Backup API</a></p></body>";
        let base = Url::parse("http://example.com/").unwrap();
        let b = body(&scan(html), &base, true);
        assert!(b.article, "{}", b.text);
        assert!(b.text.contains("records state information"), "{}", b.text);
    }

    #[test]
    fn a_manual_page_is_all_its_sections() {
        // A manual page (AsciiDoc): each section its own block; the long option list (shared
        // by a family of pages) scores best, the page is every section (issue 31: `git log`,
        // `git show` and `git diff-tree` were each their shared list, at distance 0).
        let para = |t: &str| format!("<div class=paragraph><p>{t}</p></div>");
        let sect = |name: &str, body: String| {
            format!("<div class=sect1><h2>{name}</h2><div class=sectionbody>{body}</div></div>")
        };
        let option = |o: usize| {
            format!(
                "<dt class=hdlist1>--option-{o}</dt><dd>{}</dd>",
                para(&format!(
                    "Show the part {o} of each commit, with its parents, its author, its date, \
                     its message, and its changes, in the format, described below, unless, \
                     the configuration, says otherwise."
                ))
            )
        };
        let options: String = (0..50).map(option).collect();
        let prose = |what: &str| {
            (0..26)
                .map(|i| {
                    para(&format!(
                        "The {what} of the command, told in sentence {i} of its section of the \
                         manual page, which explains it in plain words to the reader."
                    ))
                })
                .collect::<String>()
        };
        let html = format!(
            "<body><div id=header><h1>git-log(1) Manual Page</h1></div><div id=content>{}{}{}{}</div>\
             <div id=footer><div id=footer-text>Last updated 2023-01-01</div></div></body>",
            sect("DESCRIPTION", prose("description")),
            sect(
                "OPTIONS",
                format!(
                    "<div class=openblock><div class=content><div class=dlist><dl>{options}</dl>\
                     </div></div></div>"
                )
            ),
            sect("EXAMPLES", prose("examples")),
            sect("SEE ALSO", prose("related commands")),
        );
        let text = text_of(&html);
        assert!(text.contains("Show the part 49 of each commit"), "{text}");
        assert!(text.contains("The description of the command"), "{text}");
        assert!(
            text.contains("The related commands of the command"),
            "{text}"
        );
        assert!(!text.contains("Last updated"), "{text}");
        // A short article is no section: the notice its template holds beside it (as long,
        // without links) stays out.
        let notice = "this site is run by volunteers of the association who write and check and \
                      publish every story on their own time and answer every letter they get ";
        let story = "The council met on Tuesday, late, and approved the new budget, after a long, \
                     loud, debate about the opening hours, the staff, and the books.";
        let html = format!(
            "<body><div class=page><div class=story><h1>A short note</h1>{}</div>\
             <div class=about>{}</div></div></body>",
            [story; 3].map(para).concat(),
            para(&notice.repeat(4))
        );
        let text = text_of(&html);
        assert!(text.contains("approved the new budget"), "{text}");
        assert!(!text.contains("volunteers"), "{text}");
    }

    #[test]
    fn short_block_with_a_content_class_does_not_beat_the_post() {
        let post = "《太行山上》主要讲述八路军总司令朱德率领刚刚改编完的八路军三个主力师东渡黄河，\
                    挺进抗日前线，开辟建立太行山根据地的光辉历程。"
            .repeat(6);
        let html = format!(
            "<body><div class=floor_wrap><div class=div_floor><div class=div_floor_text>楼层： 第 1 楼，时间：2005-08-28，分数：100。</div>\
             <div class=div_floor_score>分数：100</div></div></div>\
             <div><div><table><tr><td>◎译　名　太行山上<br>◎链　接　<a href=/x>http://image.bbs.example.com/UploadFile/2005-8/20058242234839669.jpg</a>\
             <br>{post}<br>看点</td></tr></table></div></div></body>"
        );
        let text = text_of(&html);
        assert!(text.contains("主要讲述八路军"), "{text}");
    }

    #[test]
    fn on_a_page_of_dated_posts_the_first_post_is_the_article() {
        let post = |title: &str, date: &str, words: &str, n: usize| {
            format!(
                "<table><tr><td class=post-title>{title}</td><td class=post-title>{date}</td></tr>\
                 <tr><td class=post-body>{}</td></tr></table>",
                format!("{words}，这是博客文章的正文，写了很多内容。").repeat(n)
            )
        };
        let html = format!(
            "<body><div class=posts>{}{}{}</div></body>",
            post("湘菜粤菜", "2005-06-14 03:25:55", "湘菜粤菜兵分两路", 8),
            post("我真的累了", "2005-06-13 15:00:14", "当斑竹半年来", 12),
            post("旧文", "2005-06-12 10:00:00", "旧的文章", 6),
        );
        let text = text_of(&html);
        assert!(text.contains("湘菜粤菜兵分两路"), "{text}");
        assert!(!text.contains("当斑竹半年来"), "{text}");
    }

    #[test]
    fn chunks_of_one_article_in_separate_rows_are_joined() {
        let chunk = |words: &str| {
            format!(
                "<div class=grid><div class=\"grid-item article__body\">{}</div>\
                 <div class=rail><div class=ad>Advertisement</div></div></div>",
                format!("<p>{words}, and the reporter explained more about it, at length.</p>")
                    .repeat(4)
            )
        };
        let html = format!(
            "<body><div class=chunks>{}<div class=full-bleed-ad>Advertisement</div>{}</div></body>",
            chunk("The first part of the story"),
            chunk("The second part of the story")
        );
        let text = text_of(&html);
        assert!(text.contains("first part"), "{text}");
        assert!(text.contains("second part"), "{text}");
        assert!(!text.contains("Advertisement"), "{text}");
    }

    #[test]
    fn short_paragraphs_in_the_template_of_kept_ones_are_kept() {
        let sentence = "The president made an unscheduled trip to the hospital on Saturday, which \
                        the White House called a quick exam, and reporters asked many questions. ";
        let html = format!(
            "<body><table><tr><td>\
             <div class=body__paragraph>You should not believe them, not at all.</div>\
             <div class=body__paragraph>{}</div>\
             <div class=body__paragraph>And neither should you, the reader.</div>\
             <div class=byline-box>Chris Cillizza is an editor at large</div></td></tr></table></body>",
            sentence.repeat(8)
        );
        let text = text_of(&html);
        assert!(text.contains("You should not believe them"), "{text}");
        assert!(text.contains("And neither should you"), "{text}");
        assert!(!text.contains("editor at large"), "{text}");
    }
}
