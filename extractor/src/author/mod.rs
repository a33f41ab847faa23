//! The author, as a checked candidate rather than the first match.
//!
//! Candidates come from meta tags and JSON-LD, the issuer that signs an official document,
//! Chinese bylines in the text around the body (`作者：`, `记者`, `编辑：`, `来源：`, a
//! line "石佳/中国青年报", a post's "原创 GameForce"; the labels ranked, an author before a
//! reporter before an editor before a source, and within a rank the one nearest the date;
//! a source the page names as an outlet is none), elements marked as the byline
//! (`class=author`, `itemprop=author`, `rel=author`; the one nearest the body, not a related
//! story's, nor a reader's comment's), a visible "By …" line (`By`, `Par`, `Von`, `Por`,
//! `Door`, `Av`, `Oleh`, `Autor:`, `Text & Fotos:`, ...) at the top of the body or a
//! labelled signature under it, the Twitter card's `twitter:creator` handle, and a bare name
//! under the headline.
//!
//! Each candidate is checked ([`names_of`]): cut into names (co-authors joined by `、`, `,`,
//! `and`, `&`, `und`, `et`, `y`), a trailing role or agency dropped (`, Staff writer`,
//! `Associated Press`), and every name must have a name's shape for its script and be no
//! navigation (`Sign In | Subscribe`), organisation (`CBS News`, `新华网`, a JSON-LD
//! `Organization`) or label word. A declared candidate (meta, JSON-LD) whose names the page
//! never shows loses to a visible byline, and so does one the byline names with co-writers
//! beside it; a declared Han name loses to the writer or reporter labelled at the body; a
//! declared first name gives way to the full name the page shows: sources are combined by
//! agreement. When no candidate passes, there is no author: none rather than a wrong one.
//!
//! The files: this one gathers the candidates and picks one; `names` checks a candidate;
//! `chinese` finds the Chinese bylines; `json_ld` reads the author of a JSON-LD block.

mod chinese;
mod json_ld;
mod names;

use script::Script;

use crate::scan::{flag, Page};
use crate::words::{Words, WordsFile};
use chinese::{chinese_byline, floor, han_name, ranked_chinese_byline};
use json_ld::{json_author, json_credit, json_publisher};
use names::clean;
pub use names::{names_of, Checks};

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new("author.txt", include_str!("../words/author.txt"));

/// Meta names and properties that carry the author, best first.
static META_KEYS: Words = WORDS.list("META_KEYS");

/// Longest byline kept (chars).
pub const MAX_AUTHOR_CHARS: usize = 80;
/// A byline this far (bytes) before or after the body's text is not at the body.
pub const NEAR_BODY: u32 = 600;
/// Rank added to bylines that are not at the body.
const FAR_RANK: u8 = 10;
/// Text searched around the body for a Chinese byline (bytes).
pub const SEARCH_AROUND: u32 = 3072;

/// The author of `page`. `span` is the body's text range, `body` its text as extracted,
/// `date_pos` where the date was read, `issuer` the body that signed the document (see
/// [`crate::signature`]): after the declared author, before bylines in the text.
pub fn author(
    page: &Page,
    span: Option<(u32, u32)>,
    body: &str,
    date_pos: Option<u32>,
    issuer: Option<String>,
) -> Option<String> {
    let checks = Checks::of(page);
    // What the markup declares is checked as a name the page's owner chose: a handle or a
    // one-word pen name passes.
    let declared_checks = Checks {
        declared: true,
        ..checks.clone()
    };
    let json = json_credit(&page.json_ld);
    // The site's owner as the JSON-LD names it: a declared author that names it is the
    // publication, not the writer.
    let publisher = json_publisher(&page.json_ld);
    let names_the_site = |a: &str| names_the_site(page, a, publisher.as_deref());
    let declared_all = declared_names(page, json.as_ref(), &declared_checks, &names_the_site);
    // The first the page shows at its article (the writer), else the first (a publisher
    // named in `<meta name=author>` loses to the writer in `article:author`).
    // Among those shown, a full name before one word (a handle, a publication: "Grist"
    // in `parsely-author` beside a JSON-LD `Person` "Nathanael Johnson").
    let shown_declared: Vec<&String> = declared_all
        .iter()
        .take(MAX_DECLARED)
        .filter(|d| shown(page, span, d))
        .collect();
    let declared = shown_declared
        .iter()
        .find(|d| !one_token(d))
        .or(shown_declared.first())
        .copied()
        .or(declared_all.first())
        .cloned();
    if issuer.is_some() && declared.is_none() {
        return issuer;
    }
    let visible = || {
        chinese_byline(page, span, date_pos, &checks).or_else(|| {
            // The nearer of a marked byline and a visible "By" line.
            let marked = marked_byline(page, span, &checks);
            let by = by_line(page, span, &checks);
            [marked, by]
                .into_iter()
                .flatten()
                .min_by_key(|(key, _)| *key)
                .map(|(_, name)| name)
        })
    };
    match declared {
        // A declared one-word name the page does not show at its article is no byline
        // (a place, a section: `Washington`).
        Some(d) if one_latin_word(&d) && !shown(page, span, &d) => visible(),
        // A declared author the page does not show at its article (a decoy or template meta
        // tag, the publisher named in the footer) loses to a byline the reader sees.
        // A web address ("LAOLA1.at") is the site's name, whether it is the site's or not.
        Some(d)
            if !shown(page, span, &d)
                || names_the_site(&d)
                || is_domain(&d)
                || (is_acronym(&d) && names::agency_credit(&d, &checks).is_none()) =>
        {
            visible()
                .or_else(|| login_name(page, span, &d, &checks))
                .or_else(|| dateline_agency(body, &checks))
                .or(Some(d))
        }
        // A declared first name or handle ("Stefanus") and the full name in the byline
        // ("Stefanus Stahl"), or on a line of its own at the article (an author box's
        // "Stefanus Stahl - Maschinenbauer, …"): the full name.
        Some(d) if !d.contains(' ') && !d.chars().any(is_han) => visible()
            .filter(|v| {
                v.split_whitespace().count() > 1 && v.split_whitespace().next() == Some(d.as_str())
            })
            .or_else(|| full_name_line(page, span, &d, &checks))
            .or_else(|| login_name(page, span, &d, &checks))
            .or(Some(d)),
        // A Han name declared by the markup and another under a writer's or reporter's
        // label at the body ("作者：张三", "记者 李四"): the label's (a product, a course or
        // the uploader a CMS records is declared, the writer is labelled).
        Some(d) if d.chars().any(is_han) => ranked_chinese_byline(page, span, date_pos, &checks)
            .filter(|(rank, v)| *rank <= WRITER_RANK && names_differ(v, &d))
            .map(|(_, v)| v)
            .or(Some(d)),
        // A visible byline that names the declared writer and co-writers beside them
        // (`<meta name=author>` "Rudolf Fischer", the byline "von Rudolf Fischer, Simon
        // Kohler"): the byline, every writer.
        Some(d) if listed_with_others(page, span, &d) => {
            visible().filter(|v| names_more(v, &d)).or(Some(d))
        }
        Some(d) => Some(d),
        None => visible()
            .or_else(|| twitter_creator(page, span, &declared_checks))
            .or_else(|| bare_name_line(body))
            .or_else(|| dateline_agency(body, &checks))
            .or_else(|| declared_organisation(page, json.as_ref(), &checks))
            .or_else(|| marked_organisation(page, span, &checks)),
    }
}

/// Every name the page declares as its author, in the order of trust: the meta tags,
/// JSON-LD (`json`, or a block that is no valid JSON, read by hand), a "written by"
/// label; without a portal's or a source's name in Han characters, and a name of the
/// site (`names_the_site`) last.
fn declared_names(
    page: &Page,
    json: Option<&json_ld::JsonCredit>,
    declared_checks: &Checks,
    names_the_site: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut declared_all: Vec<String> = META_KEYS
        .iter()
        .filter_map(|key| Some((*key, crate::meta(page, &[key])?)))
        .filter_map(|(key, a)| Some((key, clean(a, declared_checks)?)))
        // A Han name in `<meta name=author>` that the page never shows is the uploader a
        // CMS records, not a byline (a citation meta names the paper's authors).
        .filter(|(key, a)| *key != "author" || !a.chars().any(is_han) || shown_anywhere(page, a))
        .map(|(_, a)| a)
        .collect();
    match json {
        Some(credit) if !credit.organisation => {
            declared_all.extend(clean(&credit.names.join(", "), declared_checks));
        }
        Some(_) => {}
        // A block that is no valid JSON, read by hand.
        None => declared_all.extend(
            page.json_ld
                .iter()
                .find_map(|json| json_author(json).and_then(|a| clean(&a, declared_checks))),
        ),
    }
    declared_all.extend(written_by_label(page).and_then(|a| clean(a, declared_checks)));
    // A portal's name in Han characters is never the writer; a site's name in other
    // scripts is demoted below the names the page shows (and may stand as its credit).
    // Nor is the source a story was taken from ("来源：央视新闻" and a meta author "央视新闻").
    declared_all.retain(|a| {
        !(a.chars().any(is_han) && (names_the_site(a) || chinese::is_source(&page.text, a)))
    });
    let site_named = declared_all
        .iter()
        .position(|a| names_the_site(a))
        .map(|i| declared_all.remove(i));
    declared_all.extend(site_named);
    declared_all
}

/// The worst rank of a Chinese byline that names the writer (`作者`, `记者`; not an editor
/// or a source) at the body.
const WRITER_RANK: u8 = 1;

/// Whether two authors name different people (compared as sets, ignoring case).
fn names_differ(a: &str, b: &str) -> bool {
    let set = |s: &str| {
        let mut names: Vec<String> = split_names(s).iter().map(|n| n.to_lowercase()).collect();
        names.sort();
        names
    };
    set(a) != set(b)
}

/// Words and marks that join co-writers in a byline.
const CO_WRITER_JOINS: &[&str] = &[", ", " und ", " and ", " & ", " y ", " et ", " e "];

/// Whether the page's text at the article writes `author` joined to another name
/// ("Rudolf Fischer, Simon Kohler", "Simon Kohler und Rudolf Fischer"): a cheap test before
/// the visible bylines are looked for.
fn listed_with_others(page: &Page, span: Option<(u32, u32)>, author: &str) -> bool {
    let Some((start, _)) = span else {
        return false;
    };
    let text = &page.text;
    let lo = floor(text, start.saturating_sub(SHOWN_BEFORE) as usize);
    let hi = floor(text, start.saturating_add(BY_LINE_AROUND) as usize);
    let around = &text[lo..hi];
    around.match_indices(author).any(|(at, _)| {
        let (before, after) = (&around[..at], &around[at + author.len()..]);
        CO_WRITER_JOINS
            .iter()
            .any(|j| after.starts_with(j) || before.ends_with(j))
    })
}

/// Whether `more` names every name of `fewer` (ignoring case) and others besides, each of
/// them a person's full name: two or three words, each a capital and small letters
/// ("Simon Kohler"; not a role or a company after the name, "AMP Project Marketing",
/// "Google", "Online-Redaktion").
fn names_more(more: &str, fewer: &str) -> bool {
    let more_names = split_names(more);
    let more: Vec<String> = more_names.iter().map(|n| n.to_lowercase()).collect();
    let fewer: Vec<String> = split_names(fewer)
        .iter()
        .map(|n| n.to_lowercase())
        .collect();
    let full_name = |name: &&String| {
        let words: Vec<&str> = name.split_whitespace().collect();
        (2..=3).contains(&words.len())
            && words.iter().all(|w| {
                w.starts_with(char::is_uppercase)
                    && w.chars()
                        .skip(1)
                        .all(|c| c.is_lowercase() || "'’-".contains(c))
            })
    };
    more.len() > fewer.len()
        && fewer.iter().all(|n| more.contains(n))
        && more_names
            .iter()
            .filter(|n| !fewer.contains(&n.to_lowercase()))
            .all(|n| full_name(&n))
}

/// The handle of the page's Twitter card (`twitter:creator` without an `@`, "delta201"),
/// when the page shows it at its article and it names no site: the writer's handle on a
/// page whose writer is declared nowhere else. (A site's own handle, "@mtbnews", is
/// refused by its `@`.)
fn twitter_creator(page: &Page, span: Option<(u32, u32)>, checks: &Checks) -> Option<String> {
    let raw = crate::meta(page, &["twitter:creator"])?;
    let name = clean(raw, checks)?;
    let publisher = json_publisher(&page.json_ld);
    (shown(page, span, &name) && !names_the_site(page, &name, publisher.as_deref())).then_some(name)
}

/// Lines at the article looked at for a declared first name's full name.
pub const FULL_NAME_LINES: usize = 400;

/// The full name of a declared first name or handle `first` on a line of the page's text at
/// its article that opens with it ("Stefanus Stahl - Maschinenbauer, …"): the first name
/// and the capitalised word after it, checked as a name.
fn full_name_line(
    page: &Page,
    span: Option<(u32, u32)>,
    first: &str,
    checks: &Checks,
) -> Option<String> {
    let (start, end) = span?;
    let text = &page.text;
    let lo = floor(text, start.saturating_sub(SHOWN_BEFORE) as usize);
    let hi = floor(text, end.saturating_add(SHOWN_AFTER) as usize);
    text[lo..hi]
        .split('\n')
        .take(FULL_NAME_LINES)
        .filter_map(|line| line.trim().strip_prefix(first)?.strip_prefix(' '))
        .find_map(|rest| {
            let next = rest.split_whitespace().next()?;
            let surname = next.trim_end_matches([',', ':']);
            // The surname ends the name: the line ends there or goes on after a separator.
            let after = rest[next.len()..].trim_start();
            let ends = after.is_empty()
                || after.starts_with(['-', '–', '—', '|', '(', ','])
                || next.ends_with([',', ':']);
            let shaped = surname.starts_with(char::is_uppercase)
                && surname.chars().skip(1).all(char::is_lowercase);
            (ends && shaped)
                .then(|| clean(&format!("{first} {surname}"), checks))
                .flatten()
                .filter(|name| name.split_whitespace().count() == 2)
        })
}

/// The name a CMS login declared as the author stands for ("christian.stadtfeld",
/// "jane_roe"), as the page writes it at its article: the two parts capitalised, with a
/// middle initial between them or not ("Christian P. Stadtfeld").
fn login_name(
    page: &Page,
    span: Option<(u32, u32)>,
    login: &str,
    checks: &Checks,
) -> Option<String> {
    let (first, last) = login.split_once(['.', '_'])?;
    let part = |p: &str| p.chars().count() >= 2 && p.chars().all(|c| c.is_lowercase());
    if !part(first) || !part(last) {
        return None;
    }
    let capital = |p: &str| {
        let mut chars = p.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    let (first, last) = (capital(first), capital(last));
    let (start, end) = span?;
    let text = &page.text;
    let lo = floor(text, start.saturating_sub(SHOWN_BEFORE) as usize);
    let hi = floor(text, end.saturating_add(SHOWN_AFTER) as usize);
    let around = &text[lo..hi];
    around.match_indices(last.as_str()).find_map(|(at, _)| {
        let after = &around[at + last.len()..];
        if after.starts_with(char::is_alphabetic) {
            return None;
        }
        let mut before = around[..at].split_whitespace().rev();
        let name = match before.next()? {
            w if w == first => format!("{first} {last}"),
            initial
                if initial.len() == 2
                    && initial.ends_with('.')
                    && initial.starts_with(char::is_uppercase)
                    && before.next()? == first =>
            {
                format!("{first} {initial} {last}")
            }
            _ => return None,
        };
        clean(&name, checks)
    })
}

/// Declared authors weighed against each other at most (each is looked for in the text).
const MAX_DECLARED: usize = 4;

/// An organisation the markup declares as the author (a JSON-LD `Organization`, a meta
/// author or a Twitter card's "Written by" that names the site, a newsroom or a company:
/// `Eurosport`, `Greentech.LIVE Redaktion`, `Deutscher Tennis Bund`): the credit of a page
/// that names no person. Never navigation, a link or a label; never in Han characters
/// (a Chinese portal declares itself, not the writer).
fn declared_organisation(
    page: &Page,
    json: Option<&json_ld::JsonCredit>,
    checks: &Checks,
) -> Option<String> {
    // JSON-LD's names first, typed organisations or not ("Person": "Redaktion"): the
    // most specific credit.
    json.map(|c| (c.names.join(", "), c.organisation))
        .into_iter()
        .chain(
            ["author", "article:author", "dc.creator", "dcterms.creator"]
                .iter()
                .filter_map(|key| crate::meta(page, &[key]).map(str::to_string))
                .chain(written_by_label(page).map(str::to_string))
                .map(|raw| (raw, false)),
        )
        .find_map(|(raw, typed)| names::organisation(&raw, typed, checks))
}

/// One word, not in Han characters: a handle, a first name, a publication.
fn one_token(author: &str) -> bool {
    !author.contains(' ') && !author.chars().any(is_han)
}

/// A web address without its scheme: one word with a dot before a top-level domain of two
/// to four ASCII letters (`LAOLA1.at`, `finanztreff.de`, `wien.ORF.at`; not `J.R.`).
fn is_domain(author: &str) -> bool {
    !author.contains(' ')
        && author.rsplit_once('.').is_some_and(|(host, tld)| {
            host.chars().any(char::is_alphanumeric)
                && (2..=4).contains(&tld.len())
                && tld.chars().all(|c| c.is_ascii_alphabetic())
        })
}

/// One word in capitals, with a digit or a hyphen at most (`L-MAG`, `DITIB`): an
/// organisation's short name, not a writer's (a handle is rarely written so); a wire
/// service's (`PTI`) is its credit.
fn is_acronym(author: &str) -> bool {
    one_token(author)
        && author.chars().filter(|c| c.is_uppercase()).count() >= 2
        && !author.chars().any(char::is_lowercase)
}

/// Where a dateline's agency may start at most in the body (bytes): "Hamburg (dpa/lno) –",
/// "WASHINGTON (AP) —".
pub const DATELINE_LEAD: usize = 120;

/// The wire service a news story credits in its dateline, the body's opening words
/// ("Hamburg (dpa/lno) – …", "WASHINGTON (AP) — …", "(Reuters) -"): the credit of a story
/// that names no writer.
fn dateline_agency(body: &str, checks: &Checks) -> Option<String> {
    // The first lines: a photo's caption may come before the dateline.
    body.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(DATELINE_LINES)
        .find_map(|line| line_dateline_agency(line, checks))
}

/// Lines of the body's opening looked at for a dateline.
pub const DATELINE_LINES: usize = 3;

/// The agency of a dateline that opens `first_line`.
fn line_dateline_agency(first_line: &str, checks: &Checks) -> Option<String> {
    let open = first_line.find('(').filter(|&i| i <= DATELINE_LEAD)?;
    let inner_len = first_line[open + 1..].find(')')?;
    let inner = &first_line[open + 1..open + 1 + inner_len];
    let after = first_line[open + 1 + inner_len + 1..].trim_start();
    // A dash or colon follows a dateline; a parenthesis in a sentence goes on with words.
    if !after.starts_with(['-', '–', '—', ':']) {
        return None;
    }
    names::agency_credit(inner.trim(), checks)
}

/// One word of a script with capitals that names no agency (`Washington`, `Heiko`; not
/// `Reuters`, nor a Korean name written without spaces, `김철수`).
fn one_latin_word(author: &str) -> bool {
    author.chars().all(char::is_alphabetic)
        && author.chars().any(|c| c.is_uppercase() || c.is_lowercase())
        && !author.chars().any(is_han)
        && names::names_of(author, &Checks::default()).is_none()
}

/// Text before the body's start and after its end where a declared author counts as shown
/// at the article (bytes): the header with the headline and byline, the signature under it.
pub const SHOWN_BEFORE: u32 = 4096;
/// See [`SHOWN_BEFORE`].
pub const SHOWN_AFTER: u32 = 2048;

/// Whether every name of `author` is written in the page's visible text at the article
/// (the body and the text around it; anywhere when the page has no body).
fn shown(page: &Page, span: Option<(u32, u32)>, author: &str) -> bool {
    let text = &page.text;
    let around = match span {
        Some((start, end)) => {
            let lo = floor(text, start.saturating_sub(SHOWN_BEFORE) as usize);
            let hi = floor(text, end.saturating_add(SHOWN_AFTER) as usize);
            &text[lo..hi]
        }
        None => text.as_str(),
    };
    split_names(author).iter().all(|name| {
        around.contains(name.as_str()) || around.to_lowercase().contains(&name.to_lowercase())
    })
}

/// Whether every name of `author` is written somewhere in the page's visible text.
fn shown_anywhere(page: &Page, author: &str) -> bool {
    split_names(author)
        .iter()
        .all(|n| page.text.contains(n.as_str()))
}

/// Whether a declared author is the site's name: `og:site_name` holds it, or the last part
/// of `<title>` does ("…_网易财经" for a meta author "网易", "… | L-MAG" for "L-MAG"), or
/// (not in Han characters) the publisher's name, address or handle does, letters and digits
/// compared alone ("Interscenario" for the site `INTERSCENAR.IO`, "El Colombiano" for
/// `www.elcolombiano.com`, "DITIB" for the publisher `https://www.ditib.de`, "Condé Nast"
/// for the JSON-LD `publisher` given as `publisher`).
fn names_the_site(page: &Page, author: &str, publisher: Option<&str>) -> bool {
    let han = author.chars().all(|c| is_han(c) || c == ' ');
    let site = crate::meta(page, &["og:site_name", "application-name"]).unwrap_or("");
    let title_end = page
        .title
        .rsplit(['_', '|', '-', '–', '—'])
        .next()
        .filter(|end| end.len() < page.title.len())
        .unwrap_or("");
    if han {
        return [site, title_end].iter().any(|s| s.contains(author));
    }
    // Other scripts: ignoring case, spaces and punctuation, three letters at least.
    let author = alphanumeric_lower(author);
    author.chars().count() >= 3
        && [site, title_end]
            .into_iter()
            .chain(
                PUBLISHER_KEYS
                    .iter()
                    .filter_map(|key| crate::meta(page, &[key]))
                    .chain(publisher),
            )
            .any(|s| alphanumeric_lower(s).contains(&author))
}

/// Meta names that name the publisher by its name, address or handle, besides the site's
/// name: a declared author found in one is the publication, not its writer.
static PUBLISHER_KEYS: Words = WORDS.list("PUBLISHER_KEYS");

/// The letters and digits of `text`, lower-cased: "INTERSCENAR.IO" is "interscenario".
fn alphanumeric_lower(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The value of a "Written by" label in the page's Twitter card (`twitter:label1` =
/// `Written by`, `twitter:data1` = the name), as blog platforms write it.
fn written_by_label(page: &Page) -> Option<&str> {
    (1..=4).find_map(|i| {
        let label = crate::meta(page, &[&format!("twitter:label{i}")])?;
        let written = [
            "written by",
            "geschrieben von",
            "verfasst von",
            "écrit par",
            "escrito por",
        ]
        .iter()
        .any(|w| label.eq_ignore_ascii_case(w));
        written
            .then(|| crate::meta(page, &[&format!("twitter:data{i}")]))
            .flatten()
    })
}

/// The names of an author value as [`crate::Article::author`] holds it: Han names joined by
/// spaces, others by `", "`.
pub fn split_names(author: &str) -> Vec<String> {
    let parts: Vec<&str> = if author.contains(", ") {
        author.split(", ").collect()
    } else if author.chars().all(|c| is_han(c) || c == ' ' || c == '·') {
        author.split(' ').collect()
    } else {
        vec![author]
    };
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// Han ideographs, by the one script table ([`script`]).
fn is_han(c: char) -> bool {
    script::of(c) == Some(Script::Han)
}

/// Lines of the body's opening looked at for a bare name.
pub const OPENING_LINES: usize = 4;
/// Longest line (chars) that may come before a bare name: the headline and a subtitle.
pub const HEADLINE_CHARS: usize = 40;

/// Words that stand alone on a line at the top of an article and are no name.
static NOT_BARE_NAMES: Words = WORDS.list("NOT_BARE_NAMES");

/// A Chinese article without a label often puts its author alone on the line under the
/// headline ("犬儒病(上)" / "胡平" / the text). A name here is a line of 2–4 Han characters
/// (or a foreign name with `·`) among the first lines of the body, after short lines only.
fn bare_name_line(body: &str) -> Option<String> {
    let name_re = han_name();
    let lines = body
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(OPENING_LINES);
    for (i, line) in lines.enumerate() {
        if i > 0 && name_re.is_match(line) && !NOT_BARE_NAMES.contains(&line) {
            // Checked as every candidate is ("发表评论" is a link, not a name).
            return clean(line, &Checks::default());
        }
        if line.chars().count() > HEADLINE_CHARS {
            return None;
        }
    }
    None
}

/// Where a visible byline stands: after the body's end (a related story's, or an author
/// box) ranks behind every byline before or in the body; then by distance from the body's
/// start.
type BylineKey = (bool, u32);

/// The text of the short element marked as the author that is nearest the body's start
/// (a byline of the page's own story, not of a related story further down); without a
/// body, the first.
fn marked_byline(
    page: &Page,
    span: Option<(u32, u32)>,
    checks: &Checks,
) -> Option<(BylineKey, String)> {
    // One word (a blog's handle, "Tobi", "gnaddrig", "Bo2man") is a name unless it is a
    // byline's label ("Autoreninfo", "Veröffentlicht", "Quelle"), a weekday or a role.
    let handle_checks = Checks {
        declared: true,
        ..checks.clone()
    };
    marked_by(page, span, |candidates| {
        candidates
            .clone()
            .find_map(|t| clean(t, checks))
            .or_else(|| {
                // The whole text is the one word ("World News" is no handle "World").
                candidates
                    .clone()
                    .find_map(|t| {
                        clean(t, &handle_checks).filter(|name| {
                            name.split_whitespace().count()
                                == names::strip_byline(t).split_whitespace().count()
                        })
                    })
                    .filter(|name| !names::is_label_word(name))
            })
    })
}

/// The organisation an element marked as the author credits, nearest the body's start
/// (`By <a rel=author>Wikimedia Foundation</a>`): the credit of a page that names no person.
fn marked_organisation(page: &Page, span: Option<(u32, u32)>, checks: &Checks) -> Option<String> {
    marked_by(page, span, |candidates| {
        candidates
            .clone()
            // A label ("Autor: gnaddrig") says a person is named; a comment's author
            // ("admin sagt") is no credit.
            .filter(|t| !t.contains(':') && !comment_author(t) && !author_box_heading(t))
            .find_map(|t| names::organisation(t, false, checks))
    })
    .map(|(_, name)| name)
}

/// Words after a comment's author's name: "admin sagt", "Mensah James says".
static COMMENT_SAYS: Words = WORDS.list("COMMENT_SAYS");

/// Words of an author box's heading ("Über den Autor", "About the author"): the box names
/// a person, or nobody.
static AUTHOR_BOX_WORDS: Words = WORDS.list("AUTHOR_BOX_WORDS");

/// Whether `text` holds a word of [`AUTHOR_BOX_WORDS`].
fn author_box_heading(text: &str) -> bool {
    text.split_whitespace()
        .any(|w| AUTHOR_BOX_WORDS.contains(&w.to_lowercase().as_str()))
}

/// Whether `text` ends with a word of [`COMMENT_SAYS`].
fn comment_author(text: &str) -> bool {
    text.split_whitespace()
        .last()
        .is_some_and(|w| COMMENT_SAYS.contains(&w.to_lowercase().as_str()))
}

/// The credit `pick` reads from an element marked as the author (given its first line and
/// its whole text, each at most [`MAX_AUTHOR_CHARS`]), of the one nearest the body's start
/// (a byline of the page's own story, not of a related story further down); without a
/// body, the first.
fn marked_by(
    page: &Page,
    span: Option<(u32, u32)>,
    pick: impl Fn(
        &std::iter::Filter<std::array::IntoIter<&str, 2>, fn(&&str) -> bool>,
    ) -> Option<String>,
) -> Option<(BylineKey, String)> {
    let mut best: Option<(BylineKey, String)> = None;
    for (i, n) in page.nodes.iter().enumerate() {
        if n.flags & flag::AUTHOR == 0 || n.flags & (flag::SKIPPED | flag::HEAD) != 0 {
            continue;
        }
        let text = page.node_text(i as u32);
        let whole = text.split_whitespace().collect::<Vec<_>>().join(" ");
        // A forum's author cell holds the name, then the poster's counts on lines of
        // their own: the first line alone may be the name.
        let first_line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        // The first line before the whole: a forum's cell ("路人甲\n帖子 120") holds the
        // poster's counts after the name.
        let short: fn(&&str) -> bool = |t| t.chars().count() <= MAX_AUTHOR_CHARS;
        let candidates = [first_line, whole.as_str()].into_iter().filter(short);
        let Some(name) = pick(&candidates) else {
            continue;
        };
        let Some((start, end)) = span else {
            return Some(((false, 0), name));
        };
        let pos = first_text(page, n).unwrap_or(0);
        // Far after the body, or in a related list, a sidebar or the page's chrome, a byline
        // belongs to another story.
        if pos > end + NEAR_BODY || in_boilerplate(page, i as u32, start) {
            continue;
        }
        let key = (pos > end, start.abs_diff(pos));
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, name));
        }
    }
    best
}

/// Levels (the node and its ancestors) in which a readers' comment mark makes a marked
/// byline a commenter's.
pub const COMMENT_LEVELS: usize = 4;

/// Whether the node or an ancestor is page chrome: `nav`, `aside`, a `footer` outside an
/// `article` (a byline's own class may read as boilerplate to the body scorer, so hints are
/// not asked), readers' comments (`class=comment-author`: a commenter, not the writer), or
/// someone else's words and pictures: a `figure` (a photo's credit) or a `blockquote` (a
/// quoted post's author).
fn in_boilerplate(page: &Page, mut node: u32, body_start: u32) -> bool {
    use crate::scan::Tag;
    // A `footer` inside the `article` that holds the body is the article's own (its byline,
    // its date); a comment's `article` and footer are not.
    let mut footer = false;
    let mut level = 0;
    while let Some(n) = page.nodes.get(node as usize) {
        // A comment's author sits a few levels inside its comment; further up, a class
        // such as `no-cookie` on a page's wrapper says nothing of the byline.
        if level < COMMENT_LEVELS && n.flags & flag::DISCUSSION != 0 {
            return true;
        }
        level += 1;
        match n.tag {
            Tag::Nav | Tag::Aside | Tag::Figure | Tag::Figcaption | Tag::Blockquote => return true,
            Tag::Footer => footer = true,
            Tag::Article if footer => return !holds(page, n, body_start),
            _ => {}
        }
        if n.parent == node {
            break;
        }
        node = n.parent;
    }
    footer
}

/// Whether the node's text runs over text offset `pos`.
fn holds(page: &Page, n: &crate::scan::Node, pos: u32) -> bool {
    let Some(events) = page.events.get(n.open as usize..=n.close as usize) else {
        return false;
    };
    let first = events.iter().find_map(|ev| match *ev {
        crate::scan::Event::Text(a, _) => Some(a),
        _ => None,
    });
    let last = events.iter().rev().find_map(|ev| match *ev {
        crate::scan::Event::Text(_, b) => Some(b),
        _ => None,
    });
    matches!((first, last), (Some(a), Some(b)) if a <= pos && pos <= b)
}

/// Where a node's first text starts in [`Page::text`].
fn first_text(page: &Page, n: &crate::scan::Node) -> Option<u32> {
    page.events
        .get(n.open as usize..=n.close as usize)?
        .iter()
        .find_map(|ev| match *ev {
            crate::scan::Event::Text(a, _) => Some(a),
            _ => None,
        })
}

/// Words that open a visible byline, in the languages of the sets, besides the
/// [`BY_PHRASES`] (both together: [`by_words`]).
const BY_LABELS: &[&str] = &[
    "By ",
    "BY ",
    "by ",
    "von ",
    "Par ",
    "PAR ",
    "Von ",
    "VON ",
    "Por ",
    "POR ",
    "Door ",
    "Av ",
    "Autor: ",
    "Autorin: ",
    "Autor:",
    "Text: ",
    "Text & Fotos: ",
    "Text & Foto: ",
    "Text und Fotos: ",
    "Text und Foto: ",
    "Words: ",
    "Texto: ",
    "Author: ",
    "Auteur : ",
    "Auteur: ",
    // Further languages of the news read: Indonesian and Malay, Danish, Finnish, Russian,
    // Turkish, Hungarian.
    "Oleh ",
    "Oleh: ",
    "Af ",
    "Teksti: ",
    "Автор: ",
    "Yazar: ",
    "Szerző: ",
];

/// Phrases that open a byline and say it is one, in the languages of the sets: after them
/// one word is a name (a blog's handle).
const BY_PHRASES: &[&str] = &[
    "Written by ",
    "Posted by ",
    "Geschrieben von ",
    "Verfasst von ",
    "Erstellt von ",
    "Gespeichert von ",
    "Eingestellt von ",
    "Ein Beitrag von ",
    "Ein Artikel von ",
    "Beitrag von ",
    "Écrit par ",
    "Publié par ",
    "Escrito por ",
    "Publicado por ",
];

/// Everything that opens a visible byline: the phrases, then the labels.
fn by_words() -> impl Iterator<Item = &'static &'static str> {
    BY_PHRASES.iter().chain(BY_LABELS)
}

/// Lines after a label alone on its line looked at for the name (empty ones skipped).
const LABEL_LOOKAHEAD: usize = 3;

/// The byline a line of text may hold, as a line that opens with one of [`by_words`]:
/// the line itself; a phrase with a colon ("Verfasst von: Olga"); a label alone on its
/// line ("Autor:", "Von:", "By") joined to the next
/// line that is not empty; a label glued to the name ("ByAlex Roe"); the name after a
/// date line's date ("06.11.2023 13:30 von Olga", "25.10.2022 - Reiner Nagel", "Posted on
/// September 21, 2020 by Adi Tzlil"). `None` when the line has no byline's shape.
fn byline_text<'a>(
    line: &'a str,
    lines: &mut std::iter::Peekable<std::str::Split<'a, char>>,
) -> Option<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    let bare = line.trim_end_matches([':', ' ']);
    if let Some(label) =
        by_words().find(|w| !bare.is_empty() && w.trim().trim_end_matches(':') == bare)
    {
        let next = lines
            .clone()
            .take(LABEL_LOOKAHEAD)
            .map(str::trim)
            .find(|l| !l.is_empty())?;
        return Some(Cow::Owned(format!("{} {next}", label.trim())));
    }
    if let Some(by) = kind_by(line) {
        return Some(Cow::Owned(by));
    }
    // "Verfasst von: mitundvoneinander", "Written by: Jane Roe": the phrase with a colon.
    if let Some((phrase, rest)) = BY_PHRASES.iter().find_map(|p| {
        line.strip_prefix(p.trim_end())
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|rest| (p, rest.trim_start()))
    }) {
        return (!rest.is_empty()).then(|| Cow::Owned(format!("{phrase}{rest}")));
    }
    if let Some(spaced) = glued_label(line) {
        return Some(Cow::Owned(spaced));
    }
    if by_words().any(|w| line.starts_with(w)) {
        return Some(Cow::Borrowed(line));
    }
    after_date(line).map(Cow::Owned)
}

/// A line that says what the text is and who wrote it, "Eine Kolumne von Nils Pickert",
/// "Ein Gastbeitrag von …" (German: an article, one capitalised noun, `von`), as the
/// byline "Von Nils Pickert".
fn kind_by(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("Eine ")
        .or_else(|| line.strip_prefix("Ein "))?;
    let (noun, name) = rest.split_once(" von ")?;
    // "Ein Interview von Eugen Zentner mit Sonja Silberhorn": the one interviewed is no
    // writer.
    let name = name.split_once(" mit ").map_or(name, |(name, _)| name);
    (noun.starts_with(char::is_uppercase)
        && noun.chars().all(char::is_alphabetic)
        && !name.is_empty())
    .then(|| format!("Von {name}"))
}

/// Where a date line's date may start at most (bytes): "Posted on ", "Publié le ".
pub const DATE_LINE_LEAD: usize = 16;

/// The name after the date of a date line, as a byline: "Posted by Olga", "Posted by Adi
/// Tzlil" after "von"/"by", "Von Reiner Nagel" after ` - `, ` | `, ` · `.
fn after_date(line: &str) -> Option<String> {
    if line.chars().count() > MAX_AUTHOR_CHARS + DATE_LINE_LEAD
        || !line.starts_with(|c: char| c.is_alphanumeric())
    {
        return None;
    }
    let date = crate::published::first_date(line).filter(|&at| at <= DATE_LINE_LEAD)?;
    let rest = &line[date..];
    let by = [" von ", " by ", " By ", " Von ", " par ", " por "]
        .iter()
        .filter_map(|w| rest.rfind(w).map(|i| (i + w.len(), true)));
    let separator = [" - ", " | ", " · ", " – ", " — "]
        .iter()
        .filter_map(|w| rest.rfind(w).map(|i| (i + w.len(), false)));
    let (at, by_word) = by.chain(separator).max_by_key(|(i, _)| *i)?;
    let name = rest[at..].trim();
    // The date itself after the last separator ("Von Jane Roe | 27.01.2022"): no name.
    // After "von"/"by" one word is a name (a phrase of `BY_PHRASES` says so), after a
    // separator it takes two.
    let label = if by_word { "Posted by" } else { "Von" };
    (!name.is_empty() && !crate::published::has_date(name)).then(|| format!("{label} {name}"))
}

/// A byline label glued to the name by the markup (`<span>By</span><a>Alex Roe</a>` reads
/// "ByAlex Roe"): the line with a space put back; `None` when the line is no such thing.
fn glued_label(line: &str) -> Option<String> {
    ["By", "Von", "Par", "Por"].iter().find_map(|label| {
        let rest = line.strip_prefix(label)?;
        let mut chars = rest.chars();
        let (first, second) = (chars.next()?, chars.next()?);
        // "ByAlex Roe", "ByJ.R. Stone".
        (first.is_uppercase() && (second.is_lowercase() || second == '.'))
            .then(|| format!("{label} {rest}"))
    })
}

/// Whether a byline is one word, then a word that comes before a date and the date ("by
/// oz on December 4, 2006", "von Olga am 06.11.2023").
fn dated_handle(line: &str) -> bool {
    let mut words = line.split_whitespace().skip(1);
    let (Some(_), Some(before)) = (words.next(), words.next()) else {
        return false;
    };
    let rest = words.collect::<Vec<_>>().join(" ");
    ["on", "am", "at", "le", "el", "il"].contains(&before.to_lowercase().as_str())
        && crate::published::first_date(&rest) == Some(0)
}

/// Text around the body's start searched for a visible "By …" line (bytes).
pub const BY_LINE_AROUND: u32 = 1500;

/// A short line "By Jane Roe" (or Par, Von, Por, Door, Av) just before or at the top of the
/// body: the byline readability finds and our marked elements miss.
fn by_line(page: &Page, span: Option<(u32, u32)>, checks: &Checks) -> Option<(BylineKey, String)> {
    let (start, end) = span?;
    let text = &page.text;
    let mut best: Option<(BylineKey, String)> = None;
    // Around the body's start; then its last lines, a signature ("Von Cosima Künzel"),
    // ranked after every byline at the top.
    let regions = [
        (
            start.saturating_sub(BY_LINE_AROUND),
            start + BY_LINE_AROUND,
            false,
        ),
        (
            end.saturating_sub(BY_LINE_AROUND / 3)
                .max(start + BY_LINE_AROUND),
            end.saturating_add(NEAR_BODY),
            true,
        ),
    ];
    for (lo, hi, after) in regions {
        let lo = floor(text, lo as usize);
        let hi = floor(text, hi as usize);
        if lo >= hi {
            continue;
        }
        let mut at = lo;
        let mut lines = text[lo..hi].split('\n').peekable();
        while let Some(line) = lines.next() {
            let pos = at as u32;
            at += line.len() + 1;
            let Some(line) = byline_text(line.trim(), &mut lines) else {
                continue;
            };
            let line = line.as_ref();
            if line.chars().count() > MAX_AUTHOR_CHARS || !by_words().any(|w| line.starts_with(w)) {
                continue;
            }
            // After the body's end, a signature says it is one ("Autor: …", "Written by …");
            // a bare "By …" there is a related story's.
            if pos > end
                && !BY_PHRASES
                    .iter()
                    .chain(BY_LABELS.iter().filter(|l| l.contains(':')))
                    .any(|w| line.starts_with(w))
            {
                continue;
            }
            // After a phrase that says so ("Geschrieben von", "Posted by"), or before the
            // date ("by oz on December 4, 2006"), one word is the writer's handle.
            let phrase_checks;
            let line_checks =
                if BY_PHRASES.iter().any(|w| line.starts_with(w)) || dated_handle(line) {
                    phrase_checks = Checks {
                        single_word: true,
                        ..checks.clone()
                    };
                    &phrase_checks
                } else {
                    checks
                };
            let Some(name) = clean(line, line_checks).filter(|n| !names::is_label_word(n)) else {
                continue;
            };
            let key = (
                after,
                if after {
                    end.abs_diff(pos)
                } else {
                    start.abs_diff(pos)
                },
            );
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, name));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The address the whole-page tests extract their pages at.
    const PAGE_URL: &str = "http://example.com/a.html";

    /// The author the whole extraction ([`crate::extract`]) names for `html`
    /// at [`PAGE_URL`].
    fn author_of(html: &str) -> Option<String> {
        crate::extract(html, &url::Url::parse(PAGE_URL).unwrap()).author
    }

    #[test]
    fn bare_name_under_the_headline() {
        let html = "<body><div><p>犬儒病(上)</p><p>胡平<br>人心不会熄灭，但它可能蒙上灰烬而不再燃烧。\
                    灰烬本来是燃烧的产物，但它反过来又抑制了燃烧。拨开灰烬，你会看到重新燃烧的人心。</p>\
                    <p>当今中国最流行的是什么？是犬儒主义，这是一段很长的正文，用来让正文足够长。</p></div></body>";
        assert_eq!(author_of(html).as_deref(), Some("胡平"));
        // A short word under the headline that is a heading, not a name.
        let html = html.replace("胡平", "摘要");
        assert_eq!(author_of(&html), None);
    }
    use crate::scan::scan;

    #[test]
    fn wire_service_in_the_dateline() {
        let checks = Checks::default();
        for (text, want) in [
            ("Hamburg (dpa/lno) – Trotz eines Gespräches", Some("dpa/lno")),
            ("WASHINGTON (AP) — The Senate voted", Some("AP")),
            (
                "Bernd Lucke verlässt den Hörsaal. Foto: Markus Scholz/dpa\nHamburg (dpa/lno) – Trotz",
                Some("dpa/lno"),
            ),
            // A parenthesis in a sentence, or a name that is no agency.
            ("Die Partei (AfD) fordert", None),
            ("Berlin (Jane Roe) – Text", None),
        ] {
            assert_eq!(dateline_agency(text, &checks).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn domains_acronyms_and_kinds_of_text() {
        assert!(is_domain("LAOLA1.at") && is_domain("wien.ORF.at"));
        assert!(!is_domain("J.R.") && !is_domain("C.Habermueller") && !is_domain("Jane Roe"));
        assert!(is_acronym("L-MAG") && is_acronym("DITIB"));
        assert!(!is_acronym("Grist") && !is_acronym("A"));
        for (text, want) in [
            ("Eine Kolumne von Nils Pickert", Some("Von Nils Pickert")),
            ("Eine von vielen", None),
        ] {
            assert_eq!(kind_by(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn a_writer_beside_a_wire_service_and_a_glued_button() {
        for (text, name) in [
            ("Von David Hutzler, dpa", "David Hutzler"),
            ("Inga HoeltmannFollow", "Inga Hoeltmann"),
        ] {
            let names = names_of(text, &Checks::default());
            assert_eq!(names, Some(vec![name.to_string()]), "{text}");
        }
    }

    fn byline(html: &str) -> Option<String> {
        let page = scan(html);
        author(&page, None, "", None, None)
    }

    /// Each page's byline is the name given (`None`: no author).
    fn assert_bylines(cases: &[(&str, Option<&str>)]) {
        for &(html, name) in cases {
            assert_eq!(byline(html).as_deref(), name, "{html}");
        }
    }

    #[test]
    fn meta_json_and_marked() {
        assert_bylines(&[
            ("<meta name=author content='By Jane Doe'>", Some("Jane Doe")),
            ("<meta name=author content='L_104485'><p>x</p>", None),
            (
                r#"<script type="application/ld+json">{"author":[{"@type":"Person","name":"Ann Lee"}]}</script>"#,
                Some("Ann Lee"),
            ),
            ("<span class=byline>By Tom Smith</span>", Some("Tom Smith")),
            (
                "<meta name=citation_authors content='赵  培'>",
                Some("赵培"),
            ),
        ]);
    }

    #[test]
    fn navigation_organisations_and_roles_are_no_author() {
        let none = [
            "<span class=author>Sign In| Sign Up| Subscribe Show Menu</span>",
            "<meta name=author content='Editorial'>",
            "<meta name=author content='The Water Coolest'>",
            "<meta name=author content='Washington'>",
            "<span class=author>Гость</span>",
            "<p>来源：人民网 作者：环球时报</p>",
            "<p>作者：市场营销课程</p>",
            "<p>访问统计 首页 博客</p>",
        ];
        for html in none {
            assert_eq!(byline(html), None, "{html}");
        }
        assert_bylines(&[
            // A newsroom, a company or a wire service declared as the author of a page that
            // names no person is the credit.
            ("<meta name=author content='Staff Reports'>", Some("Staff Reports")),
            // A section's name or link in the byline element is no credit; a wire
            // service alone is.
            ("<span class=author>Opinion</span>", None),
            ("<div class=byline><a href=/world>World News</a></div>", None),
            (
                "<div class=byline><a href=/business>Business</a> <span>By Jane Roe</span></div>",
                Some("Jane Roe"),
            ),
            ("<span class=byline>BY AP</span>", Some("AP")),
            ("<meta name=author content='HNN Staff'>", Some("HNN Staff")),
            (
                r#"<script type="application/ld+json">{"author":{"@type":"Organization","name":"CBS News"}}</script>"#,
                Some("CBS News"),
            ),
            (
                r#"<script type="application/ld+json">{"author":[{"@type":"Person","name":"Redaktion"}]}</script>"#,
                Some("Redaktion"),
            ),
            // A person named beside it is the author.
            (
                r#"<meta name=author content='HNN Staff'><script type="application/ld+json">{"author":{"@type":"Person","name":"Jane Roe"}}</script>"#,
                Some("Jane Roe"),
            ),
            ("<meta name=author content='Reuters'>", Some("Reuters")),
            ("<meta name=author content='det/dpa'>", Some("det/dpa")),
            ("<meta property=og:site_name content='The Local'><meta name=author content='AFP/The Local'>", Some("AFP/The Local")),
            ("<p class=author>APA/AP</p>", Some("APA/AP")),
            ("<meta name=author content='By Paul Takahashi, Staff writer'>", Some("Paul Takahashi")),
            ("<meta name=author content='Rachael Link, MS, RD'>", Some("Rachael Link")),
            (
                "<meta property=og:site_name content='INTERSCENAR.IO'><meta name=author content='Interscenario'>\
                 <p class=author>Author: Jane Roe</p><p>Interscenario</p>",
                Some("Jane Roe"),
            ),
            ("<meta property=og:site_name content='Business Insider'><meta name=author content='Charlie Wood, Business Insider'>", Some("Charlie Wood")),
            ("<meta property=og:site_name content='CNN'><meta name=author content='Jill Disis, CNN Business'>", Some("Jill Disis")),
        ]);
    }

    #[test]
    fn declared_handles_labels_and_dates_around_the_name() {
        assert_bylines(&[
            // A blog's handle, declared by the markup.
            ("<meta name=author content='karstenruppert'><p>karstenruppert</p>", Some("karstenruppert")),
            ("<a rel=author href=/author/bo2man>Bo2man</a>", Some("Bo2man")),
            ("<span class=author>vom <a href=/krimiblogger>Krimiblogger</a></span>", Some("Krimiblogger")),
            // A lone word in an author box without a link by it is its label.
            ("<div class=author-info>Autoreninfo</div>", None),
            // A name in JSON-LD after its id, and the Twitter card's "Written by".
            (
                r#"<script type="application/ld+json">{"author":{"@id":"x#author","name":"Heike Buchter"}}</script>"#,
                Some("Heike Buchter"),
            ),
            (
                "<meta name=twitter:label1 content='Written by'><meta name=twitter:data1 content='Fatima'><p>von Fatima</p>",
                Some("Fatima"),
            ),
            // The date and its connecting word after the name are no part of it.
            ("<p class=byline__author>VON MORITZ GATHMANN am 21. April 2020</p>", Some("MORITZ GATHMANN")),
            ("<p class=date-author>Janic Cathomen, 01.12.2021</p>", Some("Janic Cathomen")),
            ("<span class=author>Posted by Günter W. Kienitz at 18:52</span>", Some("Günter W. Kienitz")),
            ("<span class=autor>Autor: Peter Maahn</span>", Some("Peter Maahn")),
            // Labels and navigation stay refused, declared or not.
            ("<span class=author>Über den Autor</span>", None),
            // An organisation credited by the byline, where no person is named; never a
            // comment's author.
            (
                "<span>By <a rel=author href=/author/wf>Wikimedia Foundation</a></span>",
                Some("Wikimedia Foundation"),
            ),
            ("<span class=author>Acme Verband sagt</span>", None),
            ("<meta name=author content='Play Video'>", None),
            ("<meta name=author content='Frankfurter Allgemeine Zeitung GmbH'>", None),
        ]);
    }

    #[test]
    fn json_ld_lists_references_and_the_writer_shown() {
        assert_bylines(&[
            // Every name of the list.
            (
                r#"<script type="application/ld+json">{"author":[{"@type":"Person","name":"Benjamin Fischer","url":"x"},{"@type":"Person","name":"Marcus Theurer"}]}</script>"#,
                Some("Benjamin Fischer, Marcus Theurer"),
            ),
            // Yoast's graph: the author is an @id, the name on the Person with that id.
            (
                r#"<script type="application/ld+json">{"@graph":[{"@type":"Article","author":{"@id":"https://x.example/#/schema/person/1"}},{"@type":"Person","@id":"https://x.example/#/schema/person/1","name":"Frau Sabienes"}]}</script>"#,
                Some("Frau Sabienes"),
            ),
            // A URL as the author, the Person with that id in another block.
            (
                r#"<script type="application/ld+json">{"author":"https://x.example/author/k/#author"}</script><script type="application/ld+json">{"@type":"Person","@id":"https://x.example/author/k/#author","name":"Karoline Herr"}</script>"#,
                Some("Karoline Herr"),
            ),
            // A blogger whose surname is a word of the blog's name is no site.
            (
                "<meta property=og:site_name content='Frollein Herr'><meta name=author content='Karoline Herr'>",
                Some("Karoline Herr"),
            ),
        ]);
        // The publisher in `author`, the writers in `article:author` and in the text.
        let body = "<p>Die Hotels liegen in den Bergen und am See, mit Blick auf das Wasser und die Gipfel dahinter.</p>".repeat(4);
        let html = format!(
            "<html><head><meta name=author content='Condé Nast'>\
             <meta property=article:author content='Fiona Bornhöft,Mariam Hofbeck'></head>\
             <body><article><h1>Wellness</h1><p>Von Fiona Bornhöft und Mariam Hofbeck</p>{body}</article></body></html>"
        );
        assert_eq!(
            author_of(&html).as_deref(),
            Some("Fiona Bornhöft, Mariam Hofbeck")
        );
    }

    #[test]
    fn visible_bylines_in_their_many_shapes() {
        let body = "<p>The council voted on Tuesday to extend the library's opening hours, after a long campaign by residents.</p>".repeat(4);
        let cases = [
            // A label glued to the name by the markup.
            (
                "<div><span>By</span><a href=/a>Alex Bozarjian</a></div>",
                Some("Alex Bozarjian"),
            ),
            (
                "<div><span>By</span><a href=/a>J.R. Stone</a></div>",
                Some("J.R. Stone"),
            ),
            // A label alone on its line, empty lines after it.
            (
                "<div><b>Von:</b><br><br>Götz Warnke</div>",
                Some("Götz Warnke"),
            ),
            ("<h5>Autor: </h5>Peter Maahn/SP-X", Some("Peter Maahn")),
            // A phrase with a colon, then a handle and the date.
            (
                "<p>Verfasst von: mitundvoneinander | 31. Dezember 2008</p>",
                Some("mitundvoneinander"),
            ),
            // After a phrase, a handle.
            (
                "<p>Geschrieben von <a href=/u>Cooper</a> am 25.08.2015</p>",
                Some("Cooper"),
            ),
            // After a date line's date.
            (
                "<small>04.02.2022 | 13:10 Uhr | Uta Helkenberg</small>",
                Some("Uta Helkenberg"),
            ),
            ("<span>06.11.2023 13:30 von Olga</span>", Some("Olga")),
            (
                "<div>Posted on September 21, 2020 by Adi Tzlil</div>",
                Some("Adi Tzlil"),
            ),
            // Lower case, in a list of facts.
            (
                "<span>von Alexander Rosenkranz</span>",
                Some("Alexander Rosenkranz"),
            ),
            // A date alone after the separator names no one; one word after a separator
            // is no name.
            ("<small>04.02.2022 | 13:10 Uhr</small>", None),
            ("<small>04.02.2022 - Politik</small>", None),
        ];
        for (byline, want) in cases {
            let html = format!(
                "<html><body><article><h1>Library hours</h1>{byline}{body}</article></body></html>"
            );
            assert_eq!(author_of(&html).as_deref(), want, "{byline}");
        }
    }

    #[test]
    fn a_signature_after_the_body_says_it_is_one() {
        let body = "<p>Die Trauung fand im Garten statt, unter alten Bäumen und bei strahlendem Wetter.</p>".repeat(4);
        let page = |after: &str| {
            author_of(&format!(
                "<html><body><article><h1>Hochzeit</h1>{body}</article>{after}</body></html>"
            ))
        };
        assert_eq!(
            page("<p>Autor: Samuel Diekmann</p>").as_deref(),
            Some("Samuel Diekmann")
        );
        // A bare "By" line there is a related story's.
        assert_eq!(page("<div><h3>Mehr</h3><p>By Jane Roe</p></div>"), None);
    }

    #[test]
    fn the_article_footer_holds_the_byline_a_comment_footer_does_not() {
        let body = "<p>Schulnoten sagen wenig darüber, was ein Kind kann, und noch weniger darüber, was aus ihm wird.</p>".repeat(4);
        let html = format!(
            "<html><body><article><h1>Schulnoten</h1>{body}<footer class=post-footer>\
             <span class=author>Posted by <a rel=author href=/a/g>Günter W. Kienitz</a> at 18:52</span>\
             </footer></article></body></html>"
        );
        assert_eq!(author_of(&html).as_deref(), Some("Günter W. Kienitz"));
        // The same footer in a comment's own article, after the story: no author.
        let comment = format!(
            "<html><body><main><h1>Schulnoten</h1>{body}</main><section class=replies>\
             <article><footer><span class=author>Gabi sagt</span></footer><p>Gut!</p></article>\
             </section></body></html>"
        );
        assert_eq!(author_of(&comment), None);
        // A commenter right under a short story is no byline either.
        let commenter = format!(
            "<html><body><main><h1>Schulnoten</h1>{body}</main><div class=comment-head>\
             <span class=comment-author>Philipp Ther</span> <span>11. Februar 2020</span>\
             </div></body></html>"
        );
        assert_eq!(author_of(&commenter), None);
        // A photo's credit and a quoted post's author are not the writer's byline.
        for credit in [
            "<figure><img src=a.jpg><figcaption><span class=author>Peter Ferst</span></figcaption></figure>",
            "<blockquote class=tweet><p>So true.</p><span class=author>Jane Roe</span></blockquote>",
        ] {
            let html = format!("<html><body><main><h1>Schulnoten</h1>{credit}{body}</main></body></html>");
            assert_eq!(author_of(&html), None, "{credit}");
        }
    }

    #[test]
    fn job_titles_handles_and_first_names() {
        assert_bylines(&[
            (
                "<meta name=author content='TOM KRISHER, AP Auto Writer'>",
                Some("TOM KRISHER"),
            ),
            (
                "<meta name=author content='Williams Perdomo @wperdomod'>",
                Some("Williams Perdomo"),
            ),
            // A generational suffix is the name's; in capitals it is a code.
            (
                "<meta name=author content='Perry Bacon Jr.'>",
                Some("Perry Bacon Jr"),
            ),
            (
                "<meta name=author content='Robert Cline SR'>",
                Some("Robert Cline"),
            ),
            (
                "<meta name=author content='Frankfurter Allgemeine Zeitung GmbH'>",
                None,
            ),
            // A declared name with its surname in lower case; a label whose name is
            // elsewhere; a comment's author.
            (
                "<meta name=author content='Mobasir hassan'>",
                Some("Mobasir hassan"),
            ),
            ("<span class=author>Artikel von</span>", None),
            ("<span class=author>Gabi sagt</span>", None),
        ]);
        let body = "<p>The council voted on Tuesday to extend the library's opening hours, after a long campaign by residents.</p>".repeat(4);
        let html = format!(
            "<html><head><meta name=author content='Todd'></head><body><article><h1>Robots</h1>\
             <p>By Todd Bates</p>{body}</article></body></html>"
        );
        assert_eq!(author_of(&html).as_deref(), Some("Todd Bates"));
    }

    #[test]
    fn names_in_scripts_without_capitals() {
        assert_bylines(&[
            ("<meta name=author content='محمد علي'>", Some("محمد علي")),
            ("<meta name=author content='김철수'>", Some("김철수")),
            ("<meta name=author content='יוסי כהן'>", Some("יוסי כהן")),
            ("<meta name=author content='สมชาย ใจดี'>", Some("สมชาย ใจดี")),
            ("<meta name=author content='राहुल शर्मा'>", Some("राहुल शर्मा")),
            // Navigation stays refused whatever the script of the rest.
            ("<meta name=author content='الرئيسية Home'>", None),
        ]);
    }

    #[test]
    fn chinese_photographers_columns_and_separators() {
        assert_bylines(&[
            // A photographer is never the writer; the editor is, when no one else is named.
            ("<p>图片来源：每经记者 张蕊 摄</p><p>本文来源：每日经济新闻 责任编辑：荀建国_NN7379</p>", Some("荀建国_NN7379")),
            ("<p>▲广州日报全媒体图片记者黎旭阳、李妍摄</p><p>编辑|禤志杰</p>", Some("禤志杰")),
            ("<p>图为启动仪式。（刘通摄）</p><p>南美站活动将先后在巴西举行。（张巨峰）</p>", Some("张巨峰")),
            // 作者 after a column's name and a space; 文/图.
            ("<p>《棱镜》作者 周纯</p><p>责任编辑：biaoffeng</p>", Some("周纯")),
            ("<p>让金融的发展更好地满足需要。(文/图 刘玺东 易赛楠)</p>", Some("刘玺东 易赛楠")),
            // A Latin name after a Chinese label; "compiled from the web" is no one.
            ("<p>作者：网络整理</p><p>责编：Demi Xia</p>", Some("Demi Xia")),
            // A bracket inside a sentence.
            ("<p>习近平要求，各级党委（党组）要按照党中央部署，精心组织好全会精神宣讲。</p>", None),
        ]);
    }

    #[test]
    fn co_authors_are_kept_as_a_list() {
        let joined = byline(
            "<meta name=author content='LISA MASCARO, MARY CLARE JALONICK and ERIC TUCKER Associated Press'>",
        );
        assert_eq!(
            joined.as_deref(),
            Some("LISA MASCARO, MARY CLARE JALONICK, ERIC TUCKER")
        );
        assert_eq!(
            split_names(joined.as_deref().unwrap_or("")),
            ["LISA MASCARO", "MARY CLARE JALONICK", "ERIC TUCKER"]
        );
        assert_eq!(
            byline("<p>作者： 流泉 访问统计： 2005年08月30日</p>").as_deref(),
            Some("流泉")
        );
        let han = byline("<p>作者：张三、李四</p>");
        assert_eq!(han.as_deref(), Some("张三 李四"));
        assert_eq!(split_names(han.as_deref().unwrap_or("")), ["张三", "李四"]);
    }

    #[test]
    fn a_visible_byline_beats_a_decoy_meta_and_a_related_story() {
        let body = "<p>The council voted on Tuesday to extend the library's opening hours,                     after a long campaign by residents who wanted a quiet place to study.</p>"
            .repeat(4);
        let html = format!(
            "<html><head><meta name=author content='Site Owner Name'></head><body><article>             <h1>Library hours</h1><p>By Jane Roe</p>{body}</article>             <aside><h3>Related</h3><p>Another story <span class=author>John Related</span></p></aside>             </body></html>"
        );
        let a = crate::extract(&html, &url::Url::parse(PAGE_URL).unwrap());
        assert_eq!(a.author.as_deref(), Some("Jane Roe"));
        assert_eq!(a.authors, ["Jane Roe"]);
        // Par, Von: the same in French and German.
        let fr = html.replace("By Jane Roe", "Par Marie Dupont");
        assert_eq!(author_of(&fr).as_deref(), Some("Marie Dupont"));
        // With the body's own byline marked, the related story's is not taken.
        let marked = html
            .replace(
                "<p>By Jane Roe</p>",
                "<p class=byline><span class=author>Jane Roe</span></p>",
            )
            .replace("<meta name=author content='Site Owner Name'>", "");
        assert_eq!(author_of(&marked).as_deref(), Some("Jane Roe"));
        let unmarked = marked.replace("<p class=byline><span class=author>Jane Roe</span></p>", "");
        assert_eq!(author_of(&unmarked), None);
    }

    #[test]
    fn bracket_after_a_linked_headline_is_a_tag() {
        assert_bylines(&[
            ("<p>正文很长的一段话。</p><p>编辑：山石</p><div><a href=/a>歌坛大哥大刘欢的家(组图)</a>\
                    <span>(房产)</span></div>", Some("山石")),
            ("<p>正文很长的一段话，最后一句。（姚峰 上海报道）</p>", Some("姚峰")),
        ]);
    }

    #[test]
    fn chinese_credits_told_apart() {
        assert_bylines(&[
            // The site as the meta author, the editor with the portal's staff code.
            (
                "<title>龙湖集团暗伤曝露_网易财经</title><meta name=author content='网易'>\
                 <p>本文来源：证券市场红周刊 责任编辑：杨倩_NF4425</p>",
                Some("杨倩_NF4425"),
            ),
            // A reporter in the dateline's brackets.
            (
                "<p>新华社巴黎12月9日电（记者唐霁）法国9日再次爆发全国跨行业大罢工。</p>",
                Some("唐霁"),
            ),
            // A photographer is not the writer.
            ("<p>记者 刘通摄</p>", None),
        ]);
    }

    #[test]
    fn chinese_credit_lines_outlets_and_declared_names() {
        assert_bylines(&[
            // The writer and the paper that ran the story first, on a line of their own.
            ("<p>石佳/中国青年报</p><p>责任编辑：张珺</p>", Some("石佳")),
            // A post marked original: its account, unless the account is a newspaper.
            ("<p>原创 GameForce 2019-09-04 22:18:34</p>", Some("GameForce")),
            ("<p>原创 南方都市报 2019-09-09 16:01:46</p>", None),
            // A source the page names as an outlet is no person.
            ("<p>来源：金融界</p><p>据金融界报道，市场震荡。</p>", None),
            ("<p>来源：金融界</p><p>编辑：山石</p>", Some("山石")),
            // The editor declared as the meta author, the reporter labelled at the body.
            (
                "<meta name=author content='孔德明'><p>半月谈记者 史卫燕</p><p>责任编辑：孔德明</p>",
                Some("史卫燕"),
            ),
            ("<p>文字：张三 图片：李四</p>", Some("张三")),
            ("<p>文：张三 图：李四</p>", Some("张三")),
            ("<p>原文：见附件</p>", None),
            // A blog platform's notice names the blogger.
            (
                "<p>版权声明：本文为CSDN博主「kingname」的原创文章，遵循CC 4.0 BY-SA版权协议。</p>",
                Some("kingname"),
            ),
            // The source, however introduced, is not the writer.
            (
                "<meta name=author content='东区办事处'><p>来源于：东区办事处</p><p>责任编辑：龙慧</p>",
                Some("龙慧"),
            ),
        ]);
    }

    #[test]
    fn co_writers_interviews_and_declared_handles() {
        let body = "<p>Die Hechte stehen im Winter tief, und wer sie fangen will, braucht Geduld und schwere Köder.</p>".repeat(4);
        let page = |head: &str, byline: &str| {
            author_of(&format!(
                "<html><head>{head}</head><body><article><h1>Hechte</h1>{byline}{body}</article></body></html>"
            ))
        };
        // The byline names the declared writer and a co-writer: both.
        assert_eq!(
            page(
                "<meta name=author content='Rudolf Fischer'>",
                "<p>von Rudolf Fischer, Simon Kohler</p>"
            )
            .as_deref(),
            Some("Rudolf Fischer, Simon Kohler")
        );
        // A role or a company after the name is no co-writer.
        assert_eq!(
            page(
                "<meta name=author content='Alex Duran'>",
                "<p class=author>Alex Duran, AMP Project Marketing, Google</p>"
            )
            .as_deref(),
            Some("Alex Duran")
        );
        // The publisher as the meta author, the writer under a "Text & Fotos" label.
        assert_eq!(
            page(
                "<meta name=author content='Auto Illustrierte'><meta name=dc.publisher content='Auto Illustrierte'>",
                "<p>Text &amp; Fotos: Ivan Valetny</p>"
            )
            .as_deref(),
            Some("Ivan Valetny")
        );
        // The interviewer, not the one interviewed.
        assert_eq!(
            page(
                "",
                "<p>Ein Interview von Eugen Zentner mit Sonja Silberhorn.</p>"
            )
            .as_deref(),
            Some("Eugen Zentner")
        );
        // A declared first name and the full name opening a line of the author box.
        assert_eq!(
            page(
                r#"<script type="application/ld+json">{"author":{"@type":"Person","name":"Stefanus"}}</script>"#,
                "<div>Stefanus Stahl - Maschinenbauer und Abenteurer</div><p>Stefanus</p>"
            )
            .as_deref(),
            Some("Stefanus Stahl")
        );
        // The Twitter card's handle, shown at the article and declared nowhere else; a
        // site's handle with its `@` is none.
        assert_eq!(
            page(
                "<meta name=twitter:creator content='delta201'>",
                "<p>delta201</p>"
            )
            .as_deref(),
            Some("delta201")
        );
        assert_eq!(
            page(
                "<meta name=twitter:creator content='@mtbnews'>",
                "<p>mtbnews</p>"
            ),
            None
        );
        // One word before the date is a handle; a bracket after the name is no part of it.
        assert_eq!(
            page("", "<p>by Olga on December 4, 2006</p>").as_deref(),
            Some("Olga")
        );
        assert_eq!(page("", "<p>by Olga</p>"), None);
        for (byline, name) in [
            ("Oleh Siti Rahma", "Siti Rahma"),
            ("Автор: Иван Петров", "Иван Петров"),
            ("Teksti: Matti Virtanen", "Matti Virtanen"),
        ] {
            assert_eq!(
                page("", &format!("<p>{byline}</p>")).as_deref(),
                Some(name),
                "{byline}"
            );
        }
        assert_eq!(
            page("", "<p>Von Samuel Diekmann (Sponsored Post)</p>").as_deref(),
            Some("Samuel Diekmann")
        );
        // The paper written for is no part of the names.
        assert_eq!(
            page(
                "",
                "<p>By Glen Owen And Brendan Carlin For The Mail On Sunday</p>"
            )
            .as_deref(),
            Some("Glen Owen, Brendan Carlin")
        );
        assert_eq!(
            page(
                "<meta name=author content='Jane Roe For Dailymail.com'>",
                ""
            )
            .as_deref(),
            Some("Jane Roe")
        );
        // A CMS login declared, the name it stands for written at the article.
        assert_eq!(
            page(
                r#"<script type="application/ld+json">{"author":{"@type":"Person","name":"christian.stadtfeld"}}</script>"#,
                "<p>Chefredakteur Christian P. Stadtfeld bewertet den Wahlausgang.</p>"
            )
            .as_deref(),
            Some("Christian P. Stadtfeld")
        );
        // A lawyer's title is no part of the name.
        assert_eq!(
            page("", "<p>Autor: Rechtsanwalt Sebastian Einbock</p>").as_deref(),
            Some("Sebastian Einbock")
        );
    }

    #[test]
    fn chinese_labels_ranked() {
        assert_bylines(&[
            ("<p>来源：新华网 作者：李四</p>", Some("李四")),
            ("<p>光明日报记者 王建宏 张文攀</p>", Some("王建宏 张文攀")),
            (
                "<p>来源：巴彦淖尔日报 编辑：苏亮 扫一扫在手机打开</p>",
                Some("苏亮"),
            ),
            ("<p>来源: 尹娟 【发表评论】</p>", Some("尹娟")),
            ("<p>来源：新华网</p>", None),
            // The many marks between a writer's label and the name.
            ("<p>文丨张三</p>", Some("张三")),
            ("<p>文 | 张三</p>", Some("张三")),
            ("<p>作者丨张三</p>", Some("张三")),
            ("<p>作者|张三</p>", Some("张三")),
            ("<p>撰稿：张三</p>", Some("张三")),
            ("<p>采写：南都记者 张三</p>", Some("张三")),
            ("<p>编辑丨李四</p>", Some("李四")),
            ("<p>人文|历史</p>", None),
            ("<p>图文直播</p>", None),
            // The name right after the slash of "文/".
            ("<p>文/张三</p>", Some("张三")),
            ("<p>文／记者 李四</p>", Some("李四")),
            // The source named in the meta author is not the writer.
            (
                "<meta name=author content='央视新闻'><p>2019-09-07 来源： 央视新闻</p>",
                None,
            ),
            (
                "<meta name=author content='王大明'><p>来源：王大明</p><p>编辑：山石</p>",
                Some("山石"),
            ),
            // A pen name alone after the label, with no common surname.
            ("<p>来源：新闻晨报</p><p>编辑：山石</p>", Some("山石")),
            ("<p>编辑：本报</p>", None),
            ("<p>来源：央视</p>", None),
            ("<p>记者 山石流水 报道</p>", None),
        ]);
    }
}
