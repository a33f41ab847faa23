//! A candidate checked ([`names_of`]): cut into names, roles and agencies dropped, each
//! name with a name's shape for its script and no navigation, organisation or label word.

use super::chinese::{LABELS, MAX_PEN_NAME_CHARS, NOT_NAMES};
use super::{is_han, MAX_AUTHOR_CHARS, NOT_BARE_NAMES};
use crate::scan::Page;
use crate::words::{Words, WordsFile};

/// What a candidate is checked against besides its own shape.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    /// A one-word Latin name passes (a forum user name next to a Chinese label, a blog's
    /// handle in a `rel=author` link or a meta author); elsewhere one word is a place, a
    /// section or a handle ("Washington", "subject"), not a byline.
    pub single_word: bool,
    /// The candidate is declared as the author by the page's markup (a meta author, a
    /// JSON-LD `Person`, a `rel=author` or `itemprop=author` element): a handle with digits
    /// (`Bo2man`, `ThE_PaiN`) is its author's name; navigation, organisation and role words
    /// still refuse it.
    pub declared: bool,
    /// Lower-case words (four letters or more) of the site's name: a byline part made of
    /// them names the publication ("Charlie Wood, Business Insider").
    pub site_words: Vec<String>,
}

impl Checks {
    /// Whether every word of four letters or more in `part` (one at least) is a word of the
    /// site's name: `Business Insider` names the site `Business Insider`, `Karoline Herr`
    /// does not name `Frollein Herr`.
    pub(super) fn all_site_words(&self, part: &str) -> bool {
        let lower = part.to_lowercase();
        let mut words = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .peekable();
        words.peek().is_some() && words.all(|w| self.site_words.iter().any(|site| site == w))
    }

    pub(super) fn of(page: &Page) -> Checks {
        let site =
            crate::meta(page, &["og:site_name", "application-name", "twitter:site"]).unwrap_or("");
        Checks {
            single_word: false,
            declared: false,
            site_words: site
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() >= 4)
                .map(str::to_lowercase)
                .collect(),
        }
    }
}

/// A byline without its label, its names checked and joined (Han names by spaces, others
/// by `", "`); `None` when no name passes.
pub(super) fn clean(raw: &str, checks: &Checks) -> Option<String> {
    let names = names_of(raw, checks)?;
    let han = names
        .iter()
        .all(|n| n.chars().all(|c| is_han(c) || c == '·'));
    Some(names.join(if han { " " } else { ", " }))
}

/// Labels and role words a byline opens with (matched ignoring case), in the languages of
/// the sets: `By`, `Von`, `Par`, `Por`, `Door`, `Av`, `Autor:`, `Posted by`, `Gespeichert
/// von`, ...
const BYLINE_PREFIXES: &[&str] = &[
    "written by ",
    "posted by ",
    "published by ",
    "reported by ",
    "story by ",
    "words by ",
    "text by ",
    "geschrieben von ",
    "verfasst von ",
    "erstellt von ",
    "gespeichert von ",
    "veröffentlicht von ",
    "eingestellt von ",
    "interview: ",
    "ein beitrag von ",
    "ein artikel von ",
    "beitrag von ",
    "artikel von ",
    "publié par ",
    "rédigé par ",
    "écrit par ",
    "escrito por ",
    "publicado por ",
    "redactado por ",
    "scritto da ",
    "pubblicato da ",
    "author: ",
    "author:",
    "authors: ",
    "autor: ",
    "autor:",
    "autorin: ",
    "autoren: ",
    "auteur: ",
    "auteur : ",
    "text: ",
    "text & fotos: ",
    "text & foto: ",
    "text und fotos: ",
    "text und foto: ",
    "words: ",
    "texto: ",
    // A lawyer's title before the name ("Autor: Rechtsanwalt Sebastian Einbock").
    "rechtsanwalt ",
    "rechtsanwältin ",
    "redakteur: ",
    "by: ",
    "von: ",
    "por: ",
    "by ",
    "von ",
    "vom ",
    "par ",
    "por ",
    "door ",
    "av ",
    "oleh: ",
    "oleh ",
    "af ",
    "teksti: ",
    "автор: ",
    "yazar: ",
    "szerző: ",
    "作者：",
    "作者:",
];

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new(
    "author_names.txt",
    include_str!("../words/author_names.txt"),
);

/// Words that stand after a name in a byline and before its date or time ("MORITZ
/// GATHMANN am 21. April 2020", "Günter W. Kienitz at 18:52"): the byline is cut there.
static BEFORE_DATE_WORDS: Words = WORDS.list("BEFORE_DATE_WORDS");

/// Words a byline box holds beside the name, alone on a line or in an element of their
/// own: never a one-word name.
static LABEL_WORDS: Words = WORDS.list("LABEL_WORDS");

/// Whether a one-word candidate is a byline's label, a weekday or a role rather than a
/// name.
pub(super) fn is_label_word(word: &str) -> bool {
    let lower = word.to_lowercase();
    // A wire service alone is its story's credit ("BY AP").
    !AGENCIES.contains(&lower.as_str())
        && (LABEL_WORDS.contains(&lower.as_str())
            || SECTION_WORDS.contains(&lower.as_str())
            || BEFORE_DATE_WORDS.contains(&lower.as_str())
            || NOT_PERSON_WORDS.contains(&lower.as_str())
            || TRAILING_ROLE_WORDS.contains(&lower.as_str()))
}

/// Sections of a news site, in the languages of the sets: a byline element that holds one
/// alone names where the story is filed, not who wrote it ("Opinion", "Politik").
static SECTION_WORDS: Words = WORDS.list("SECTION_WORDS");

/// Wire services and press agencies: the credit of a story they wrote, an author when no
/// person is named (compared in lower case, the whole part).
static AGENCIES: Words = WORDS.list("AGENCIES");

/// Navigation and interface words: never in a name, however declared.
static NAVIGATION_WORDS: Words = WORDS.list("NAVIGATION_WORDS");

/// Words that make a Latin-script candidate no person: organisations, agencies, roles,
/// navigation (compared in lower case, word by word).
static NOT_PERSON_WORDS: Words = WORDS.list("NOT_PERSON_WORDS");

/// Legal forms and publisher words: a name holding one is a company's, however declared
/// (`Frankfurter Allgemeine Zeitung GmbH`, `NATURSTROM AG`).
static COMPANY_WORDS: Words = WORDS.list("COMPANY_WORDS");

/// Trailing words of an agency or role after the names ("ERIC TUCKER Associated Press",
/// "Paul Takahashi, Staff writer"), dropped before the names are checked.
static TRAILING_ROLE_WORDS: Words = WORDS.list("TRAILING_ROLE_WORDS");

/// Lower-case particles of Latin-script names (`Ludwig van Beethoven`).
static NAME_PARTICLES: Words = WORDS.list("NAME_PARTICLES");

/// Endings of Chinese organisation names (a publication, a company, an office, a course or
/// column): never a person's name.
static HAN_ORGANISATION_ENDS: Words = WORDS.list("HAN_ORGANISATION_ENDS");

/// A byline without its label and without what follows the names: a date or time, a
/// separator (`|`, `·`, `•`, ` – `), and the word before the date (`am`, `at`, `on`).
pub(super) fn strip_byline(raw: &str) -> String {
    let mut s = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    // A section's link before the label in one element ("Business By Jane Roe"): from the
    // label on.
    if let Some(at) = [
        " By ", " BY ", " Von ", " VON ", " Par ", " PAR ", " Por ", " POR ",
    ]
    .iter()
    .filter_map(|label| s.find(label))
    .min()
    {
        s = s[at + 1..].to_string();
    }
    // Labels, as often as they are stacked ("Von: Autor: ...").
    // (Compared on the same bytes of `s`: lower-casing may change a text's length.)
    while let Some(rest) = BYLINE_PREFIXES.iter().find_map(|p| {
        s.get(..p.len())
            .filter(|head| lowercases_to(head, p))
            .and_then(|_| s.get(p.len()..))
    }) {
        s = rest.trim().to_string();
    }
    // A bracket after the name holds a role, a place or an agency ("Samuel Diekmann
    // (Sponsored Post)", "Jane Roe (AP)").
    let cut = [
        " | ", "|", " · ", "·", " • ", "•", " – ", " — ", " - ", " (",
    ]
    .iter()
    .filter_map(|sep| s.find(sep))
    .chain(crate::published::first_date(&s))
    .chain(s.find(|c: char| c.is_ascii_digit()).filter(|&i| {
        // A digit starts a time or a date ("at 18:52", "01.12.2021"), not a handle's.
        s[i..].starts_with(|c: char| c.is_ascii_digit()) && s[..i].ends_with([' ', ','])
    }))
    .min();
    if let Some(cut) = cut.filter(|&c| c > 0) {
        s.truncate(cut);
    }
    let mut words: Vec<&str> = s.split_whitespace().collect();
    // A button glued to the name by the markup ("Inga HoeltmannFollow"): the name alone.
    if let Some(last) = words.last_mut() {
        *last = unglued_button(last);
    }
    while words.len() > 1
        && words.last().is_some_and(|w| {
            let w = w.trim_end_matches([',', ':', ';']).to_lowercase();
            BEFORE_DATE_WORDS.contains(&w.as_str()) || w.is_empty()
        })
    {
        words.pop();
    }
    words
        .join(" ")
        .trim_end_matches([',', ';', ':', '-', '(', ' '])
        .to_string()
}

/// Whether `text` lower-cased is `lower` (`text.to_lowercase() == lower` without making
/// the string: a byline is tried against every label). The two differ only on a capital
/// sigma (its lower case depends on its place in a word), and no label holds a sigma.
fn lowercases_to(text: &str, lower: &str) -> bool {
    text.chars().flat_map(char::to_lowercase).eq(lower.chars())
}

/// Buttons a byline box puts right after the writer's name, read glued to it when the
/// markup leaves no space (`<a>Inga Hoeltmann</a><button>Follow</button>`).
static GLUED_BUTTONS: Words = WORDS.list("GLUED_BUTTONS");

/// A word without a [`GLUED_BUTTONS`] word glued after a lower-case letter
/// ("HoeltmannFollow" → "Hoeltmann"); the word itself otherwise.
fn unglued_button(word: &str) -> &str {
    GLUED_BUTTONS
        .iter()
        .find_map(|b| {
            let rest = word.strip_suffix(b)?;
            rest.chars()
                .last()
                .is_some_and(char::is_lowercase)
                .then_some(rest)
        })
        .unwrap_or(word)
}

/// The names of a byline, checked: `None` when none passes (see the module doc).
pub fn names_of(raw: &str, checks: &Checks) -> Option<Vec<String>> {
    let s = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if NOT_BARE_NAMES.contains(&s.as_str()) || NOT_NAMES.contains(&s.as_str()) {
        return None;
    }
    let mut s = strip_byline(&s);
    if let Some(agency) = agency_credit(&s, checks) {
        return Some(vec![agency]);
    }
    // The paper a writer wrote for, after the names ("Brendan Carlin For The Mail On
    // Sunday", "Jane Roe for Dailymail.com"): the names alone.
    if let Some(at) = [" for ", " For ", " FOR "]
        .iter()
        .filter_map(|w| s.find(w))
        .min()
        .filter(|&at| s[..at].split_whitespace().count() >= 2)
    {
        s.truncate(at);
    }
    // A handle or an agency's code after the name ("Williams Perdomo @wperdomod",
    // "Peter Maahn/SP-X", "Jane Roe/dpa"): the name alone.
    if let Some((name, tail)) = s.rsplit_once([' ', '/']) {
        let tail = tail.trim();
        let handle = tail.starts_with('@') && s.as_bytes().get(name.len()) == Some(&b' ');
        let code = s.as_bytes().get(name.len()) == Some(&b'/')
            && !name.contains('/')
            && name.contains(' ')
            && (1..=MAX_CODE_CHARS).contains(&tail.chars().count())
            && !tail.contains(' ')
            && (agency_credit(tail, checks).is_some()
                || tail
                    .chars()
                    .all(|c| c.is_uppercase() || c == '-' || c.is_ascii_digit())
                || tail.chars().all(|c| c.is_lowercase()));
        if handle || code {
            s = name.trim().to_string();
        }
    }
    let lower = s.to_lowercase();
    // Navigation and links, not a byline.
    let navigation = ['|', '丨', '»', '›', '<', '>', '@', '#', '=', '/']
        .iter()
        .any(|c| s.contains(*c))
        || lower.contains("http")
        || lower.contains("www.")
        || lower.contains(".com");
    // A declared handle (one word) may hold digits and underscores (`Bo2man`, `ThE_PaiN`),
    // and so may a Han name with a portal's staff code (`杨倩_NF4425`).
    let handle = (checks.declared && !s.contains(' ') && is_handle(&s)) || han_with_code(&s);
    let looks_wrong = s.is_empty()
        || s.chars().count() > MAX_AUTHOR_CHARS
        || navigation
        || (!handle && (s.chars().any(|c| c.is_ascii_digit()) || s.contains('_')))
        || s.contains("出版");
    if looks_wrong {
        return None;
    }
    // "赵  培" in citation metas: Han names are written without spaces.
    if s.chars().all(|c| is_han(c) || c == ' ') && s.split(' ').all(|p| p.chars().count() == 1) {
        s = s.replace(' ', "");
    }
    let han_text = s.chars().any(is_han);
    let mut names: Vec<String> = Vec::new();
    for part in split_byline(&s, han_text) {
        // A role, credential or agency after the names ("Staff writer", "MS, RD").
        if is_role_or_agency(part) {
            continue;
        }
        let names_the_site = checks.all_site_words(part);
        let Some(name) = checked_name(part, checks).filter(|_| !names_the_site) else {
            // A part that is no name: an organisation among names is a wrong candidate,
            // a role, a credential, an agency or the site after them is dropped.
            if is_role_or_agency(part) || (names_the_site && !names.is_empty()) {
                continue;
            }
            return None;
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (!names.is_empty()).then_some(names)
}

/// The parts of a byline that may each be one name.
fn split_byline(s: &str, han_text: bool) -> Vec<&str> {
    let mut parts = vec![s];
    let mut separators: Vec<&str> = vec![
        "、", "，", ",", ";", " & ", " and ", " And ", " AND ", " und ", " et ", " y ", " e ",
    ];
    if han_text {
        separators.extend([" ", "　", "/", "／"]);
    }
    for sep in separators {
        parts = parts.iter().flat_map(|p| p.split(sep)).collect();
    }
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// A part that holds only role or agency words ("Staff writer", "Associated Press"), or a
/// short job title that ends with a role ("AP Auto Writer", "Senior Political Reporter").
fn is_role_or_agency(part: &str) -> bool {
    // A wire service after the writer's name ("Von David Hutzler, dpa").
    if AGENCIES.contains(&part.trim().to_lowercase().as_str()) {
        return true;
    }
    let words: Vec<String> = part.split_whitespace().map(str::to_lowercase).collect();
    let job_title = words.len() <= MAX_JOB_TITLE_WORDS
        && words
            .last()
            .is_some_and(|w| ROLE_WORDS.contains(&w.as_str()));
    // An outlet and its section after the names ("CNN Business", "BBC Sport").
    job_title
        || words.iter().all(|w| {
            TRAILING_ROLE_WORDS.contains(&w.as_str())
                || NOT_PERSON_WORDS.contains(&w.as_str())
                || SECTION_WORDS.contains(&w.as_str())
        })
}

/// Words that end a job title after a name.
static ROLE_WORDS: Words = WORDS.list("ROLE_WORDS");

/// Longest job title (words) dropped after a name.
pub const MAX_JOB_TITLE_WORDS: usize = 4;

/// A user's handle rather than a code: three letters at least, more letters than digits
/// (`Bo2man`, `Marianne1`; not `L_104485`).
fn is_handle(word: &str) -> bool {
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    let digits = word.chars().filter(char::is_ascii_digit).count();
    letters >= 3 && letters > digits
}

/// Han names each followed by a portal's staff code (`杨倩_NF4425`), separated by spaces.
fn han_with_code(s: &str) -> bool {
    s.split(' ').all(|word| {
        word.split_once('_').is_some_and(|(name, code)| {
            (2..=4).contains(&name.chars().count())
                && name.chars().all(is_han)
                && !code.is_empty()
                && code.chars().all(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// The agencies a byline credits when it names only agencies ("Associated Press",
/// "APA/AP", "dpa"), with an editor's code or the site beside them ("det/dpa", "AFP/The
/// Local"), as written; `None` when no part is an agency or a part is something else.
pub(super) fn agency_credit(s: &str, checks: &Checks) -> Option<String> {
    let parts: Vec<&str> = s
        .split(['/', ',', '&'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let agency = |p: &&str| AGENCIES.contains(&p.to_lowercase().as_str());
    let code = |p: &&str| {
        (2..=MAX_EDITOR_CODE_CHARS).contains(&p.chars().count())
            && p.chars().all(|c| c.is_ascii_lowercase())
    };
    let beside = |p: &&str| agency(p) || code(p) || checks.all_site_words(p);
    (parts.iter().any(agency) && parts.iter().all(beside)).then(|| parts.join("/"))
}

/// Longest editor's code beside an agency ("det/dpa", "dpa/lno").
pub const MAX_EDITOR_CODE_CHARS: usize = 4;

/// One name, checked for its script's shape; a trailing agency or role is dropped.
fn checked_name(part: &str, checks: &Checks) -> Option<String> {
    let single_word = checks.single_word || checks.declared;
    let part = part.trim_matches(|c: char| !c.is_alphanumeric() && c != '·' && c != '&');
    if part.is_empty() || NOT_NAMES.contains(&part) || NOT_BARE_NAMES.contains(&part) {
        return None;
    }
    if LABELS.iter().any(|(label, _)| part == *label) {
        return None;
    }
    if han_with_code(part) {
        return Some(part.to_string());
    }
    if part.chars().any(is_han) {
        let organisation = HAN_ORGANISATION_ENDS.iter().any(|e| part.ends_with(e))
            || NOT_NAMES.iter().any(|w| part.contains(w));
        // One Han character is a forum's "乙", a label's remnant, not a name.
        let length = part.chars().count();
        let shaped = (2..=MAX_PEN_NAME_CHARS).contains(&length);
        return (!organisation && shaped).then(|| part.to_string());
    }
    let mut words: Vec<&str> = part.split_whitespace().collect();
    // A generational suffix is the name's ("Perry Bacon Jr."); in capitals ("SR") it is
    // a code after the name.
    let code_suffix = |w: &str| ["JR", "SR"].contains(&w.trim_end_matches('.'));
    while words.len() > 1
        && words.last().is_some_and(|w| {
            TRAILING_ROLE_WORDS.contains(&w.to_lowercase().as_str()) || code_suffix(w)
        })
    {
        words.pop();
    }
    // "The Water Coolest": a publication; no name starts with the article. "Artikel von":
    // a label whose name is elsewhere.
    if words.is_empty()
        || words.len() > 5
        || words[0].eq_ignore_ascii_case("the")
        || words.last().is_some_and(|w| {
            // "Gabi sagt", "Mensah James says": a comment's author.
            [
                "von", "by", "par", "por", "de", "sagt", "says", "schreibt", "writes", "meint",
                "dit",
            ]
            .contains(&w.to_lowercase().as_str())
        })
    {
        return None;
    }
    // A declared name of two words may write its last in lower case ("Mobasir hassan").
    let declared_name = checks.declared && words.len() == 2;
    let person = words.iter().enumerate().all(|(i, w)| {
        let lower = w.to_lowercase();
        let bare = lower.trim_end_matches('.');
        let first = w.chars().next().unwrap_or(' ');
        // A declared handle: letters, digits, `_`, `-`, `.` (`ThE_PaiN`, `Marianne1`).
        let handle = checks.declared
            && words.len() == 1
            && is_handle(w)
            && w.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c));
        !NAVIGATION_WORDS.contains(&bare)
            && !COMPANY_WORDS.contains(&bare)
            && !NOT_PERSON_WORDS.contains(&bare)
            && (handle || w.chars().all(|c| is_name_char(c) || "'’.-&".contains(c)))
            && (first.is_uppercase()
                // A script without capitals (Arabic, Hebrew, Hangul, Thai, Devanagari):
                // "محمد علي", "김철수".
                || (w.chars().count() >= 2 && !w.chars().any(|c| c.is_uppercase() || c.is_lowercase()))
                || NAME_PARTICLES.contains(&lower.as_str())
                || (declared_name && i > 0)
                // A forum user name alone ("ggjjzhzz").
                || (words.len() == 1 && w.chars().count() >= 3))
    });
    (person && (single_word || words.len() >= 2)).then(|| words.join(" "))
}

/// A letter of a name, or a mark joined to one (the vowel signs of Thai and Devanagari,
/// Arabic's diacritics: combining marks that `char::is_alphabetic` does not hold).
fn is_name_char(c: char) -> bool {
    c.is_alphabetic()
        || matches!(c, '\u{0300}'..='\u{036F}' | '\u{064B}'..='\u{065F}' | '\u{0E31}' | '\u{0E34}'..='\u{0E3A}' | '\u{0E47}'..='\u{0E4E}' | '\u{0900}'..='\u{0903}' | '\u{093A}'..='\u{094F}')
}

/// Words that make a credit an organisation's (besides [`NOT_PERSON_WORDS`] and
/// [`COMPANY_WORDS`]): newsrooms, associations, federations.
static ORGANISATION_WORDS: Words = WORDS.list("ORGANISATION_WORDS");

/// Legal forms and publishing houses: the company that publishes or owns the page
/// (`Frankfurter Allgemeine Zeitung GmbH`), not the credit of an article.
static LEGAL_FORMS: Words = WORDS.list("LEGAL_FORMS");

/// Longest agency code cut after a name ("Peter Maahn/SP-X").
pub const MAX_CODE_CHARS: usize = 6;

/// Longest organisation credit kept (chars).
pub const MAX_ORGANISATION_CHARS: usize = 60;

/// An organisation credited as the author (`raw` as the markup declares it, `typed` when
/// JSON-LD types it `Organization`), as written without a label or what follows it;
/// `None` for navigation, a link, a label word, a date or anything with no mark of an
/// organisation (a word of [`NOT_PERSON_WORDS`], [`COMPANY_WORDS`], [`ORGANISATION_WORDS`],
/// a wire service, the site's name), for a company's legal form ([`LEGAL_FORMS`]: the
/// publisher) and for Han text.
pub(super) fn organisation(raw: &str, typed: bool, checks: &Checks) -> Option<String> {
    let s = strip_byline(raw);
    let s = s.trim_matches(|c: char| !c.is_alphanumeric() && c != '.');
    let lower = s.to_lowercase();
    if let Some(agency) = agency_credit(s, checks) {
        return Some(agency);
    }
    let link_or_navigation = lower.contains("http")
        || lower.contains("www.")
        || ['|', '<', '>', '@', '#', '=', '/', '»', '›']
            .iter()
            .any(|c| s.contains(*c));
    if s.is_empty()
        || s.chars().count() > MAX_ORGANISATION_CHARS
        || s.chars().any(is_han)
        || link_or_navigation
        || !s.chars().any(char::is_alphabetic)
    {
        return None;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '.')
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .any(|w| NAVIGATION_WORDS.contains(w) || LEGAL_FORMS.contains(w))
        // One word: a label or a role ("Editorial", "Staff", "Admin") unless it names a
        // newsroom ("Redaktion").
        || (words.len() == 1
            && (LABEL_WORDS.contains(&words[0])
                || BEFORE_DATE_WORDS.contains(&words[0])
                || NOT_PERSON_WORDS.contains(&words[0]))
            && !ORGANISATION_WORDS.contains(&words[0]))
    {
        return None;
    }
    // A section's name ("World News", "Sports"): where the story is filed.
    if words
        .iter()
        .all(|w| SECTION_WORDS.contains(w) || *w == "news")
    {
        return None;
    }
    let marked = typed
        || agency_credit(s, checks).is_some()
        || checks.all_site_words(s)
        || words.iter().any(|w| {
            NOT_PERSON_WORDS.contains(w)
                || COMPANY_WORDS.contains(w)
                || ORGANISATION_WORDS.contains(w)
        });
    marked.then(|| s.to_string())
}
