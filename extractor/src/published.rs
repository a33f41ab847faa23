//! The publish time: meta tags (`article:published_time`, `pubdate`, `datePublished`, ...),
//! JSON-LD `datePublished`, `<time datetime>`, then dates written in the text around the body
//! (`2019-02-20 02:26:00`, `2019年02月20日 02:26`, `Feb 20, 2019`, `20/02/2019`,
//! `31.10.23`), the one nearest the body winning and never one inside a paragraph of the
//! body. The result is
//! RFC 3339: `2019-02-20T02:26:00` (offset only when the page gives one), or `2019-02-20`
//! when the page gives no time.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use crate::scan::{flag, Page, NONE};
use crate::words::{Words, WordsFile};

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new("published.txt", include_str!("words/published.txt"));

/// Meta names and properties that name the publish time, best first.
static META_KEYS: Words = WORDS.list("META_KEYS");

/// Meta names that carry a date of the page without saying which (a template's `date`,
/// Dublin Core's `dc.date`, `last-modified`) or its modification: after the page's own
/// `<time datetime>` elements and its date line, which show the reader the publication
/// (a line up to [`WEAK_META_DAYS`] from it).
static WEAK_META_KEYS: Words = WORDS.list("WEAK_META_KEYS");

/// Text searched before the body's first text for a date line (bytes).
pub const SEARCH_BEFORE: u32 = 4096;
/// Text searched after the body's last text (bytes).
pub const SEARCH_AFTER: u32 = 2048;
/// A date this far (bytes) into a long block is a mention in the prose, not a date line.
pub const LINE_START_SLACK: usize = 48;
/// Blocks longer than this (chars) are prose.
pub const PROSE_CHARS: u32 = 60;

/// A date found on the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// RFC 3339.
    pub value: String,
    /// Byte offset in [`Page::text`], when it was read from the text.
    pub pos: Option<u32>,
}

/// Fewest days between the page's date and the day its address holds for the address to
/// win: a day apart is the same publication told in two time zones; more is a modification
/// or another event.
pub const URL_DAYS: i64 = 2;

/// The publish time of `page`, whose body spans `span` of the text. A day in the page's
/// address (`og:url`, `twitter:url`: `/2017/7/12/…`), fixed when the story was published,
/// wins over a date [`URL_DAYS`] or more from it.
pub fn published(page: &Page, span: Option<(u32, u32)>) -> Option<Found> {
    let found = on_page(page, span);
    let Some(day) = crate::meta(page, &["og:url", "twitter:url"]).and_then(url_day) else {
        return found;
    };
    match found {
        Some(f) if days_apart(&f.value, &day).is_some_and(|d| d < URL_DAYS) => Some(f),
        _ => Some(Found {
            value: day,
            pos: None,
        }),
    }
}

/// The day a page's address holds as a path segment run `/YYYY/M/D/` (or `-` between
/// them), as `YYYY-MM-DD`.
fn url_day(url: &str) -> Option<String> {
    static DAY: OnceLock<Regex> = OnceLock::new();
    let re = DAY.get_or_init(|| {
        Regex::new(r"/((?:19|20)\d{2})[/-](\d{1,2})[/-](\d{1,2})(?:[/-]|$)").expect("static regex")
    });
    let c = re.captures(url)?;
    let (y, m, d): (u32, u32, u32) = (c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then(|| format!("{y:04}-{m:02}-{d:02}"))
}

/// The publish time the page itself gives (see the module doc).
fn on_page(page: &Page, span: Option<(u32, u32)>) -> Option<Found> {
    let declared = |value: String| Found { value, pos: None };
    let structured = crate::meta(page, &META_KEYS)
        .and_then(parse)
        .or_else(|| {
            page.json_ld.iter().find_map(|json| {
                ["datePublished", "dateCreated", "uploadDate"]
                    .iter()
                    .find_map(|key| json_string(json, key).and_then(|s| parse(&s)))
            })
        })
        .or_else(|| {
            // A `<time>` of the last edit ("Updated: …") is no publication.
            let published = || page.times.iter().filter(|t| !t.modified);
            published()
                .filter(|t| t.node == NONE || page.nodes[t.node as usize].flags & flag::DATE != 0)
                .chain(published())
                .find_map(|t| parse(&t.datetime))
        });
    let Some(value) = structured else {
        // A template's `date`, Dublin Core's or the modification time (a meta's, a
        // `<time class=updated>`) says less than the date line the page shows at its
        // article, when the two are of one period of the page's life (a line years off is
        // another event: a birth in an encyclopedia).
        let weak = crate::meta(page, &WEAK_META_KEYS)
            .and_then(parse)
            .or_else(|| {
                page.times
                    .iter()
                    .filter(|t| t.modified)
                    .find_map(|t| parse(&t.datetime))
            });
        let line = in_text(page, span, &page.text_owners());
        return match (weak, line) {
            (Some(weak), Some(line)) => Some(
                if days_apart(&weak, &line.value).is_some_and(|d| (1..=WEAK_META_DAYS).contains(&d))
                {
                    line
                } else {
                    declared(weak)
                },
            ),
            (weak, line) => line
                .or(weak.map(declared))
                .or_else(|| year_month_line(page, span)),
        };
    };
    // A time given in UTC (or another zone than the page's, or in the server's zone
    // without saying so) can fall on the day before or after the one the page shows its
    // readers: the date line of the page says which day it is in the page's own offset.
    if has_time(&value) {
        if let Some(line) = in_text(page, span, &page.text_owners()) {
            if one_day_apart(&value, &line.value) && an_offset_apart(&value, &line.value) {
                return Some(line);
            }
        }
    }
    Some(declared(local_midnight(&value).unwrap_or(value)))
}

/// Earliest UTC hour taken for a local midnight: zones up to four hours east of UTC
/// (Europe, Africa, the Gulf). Noon (`T12:00:00Z`) is the other common stand-in for a
/// day without a time, and is that day.
const MIDNIGHT_FROM_HOUR: i64 = 20;

/// A date without a time, stored as the midnight that opens it in a zone east of UTC and
/// written in UTC (`2022-11-06T23:00:00Z` for 7 November in Berlin): the day it opens. A
/// whole hour from [`MIDNIGHT_FROM_HOUR`] on, with no minutes or seconds, in UTC, is taken
/// for such a midnight (a time set by hand is rarely to the second on the hour).
fn local_midnight(value: &str) -> Option<String> {
    let (at, offset) = minutes(value)?;
    let time = value.get(11..19)?;
    let hour = at.rem_euclid(MINUTES_A_DAY) / 60;
    if offset != Some(0) || !time.ends_with(":00:00") || hour < MIDNIGHT_FROM_HOUR {
        return None;
    }
    let next = civil_from_days(at.div_euclid(MINUTES_A_DAY) + 1);
    Some(format!("{:04}-{:02}-{:02}", next.0, next.1, next.2))
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm,
/// the inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// An RFC 3339 value with a time of day.
fn has_time(value: &str) -> bool {
    value.len() > 10
}

/// Farthest (days) a date line may be from a weak meta date to replace it: a year.
pub const WEAK_META_DAYS: i64 = 366;

/// Days between the dates of two values (`YYYY-MM-DD...`).
fn days_apart(a: &str, b: &str) -> Option<i64> {
    Some((day_of(a)? - day_of(b)?).abs())
}

/// The days of two values (`YYYY-MM-DD...`) are consecutive.
fn one_day_apart(a: &str, b: &str) -> bool {
    matches!((day_of(a), day_of(b)), (Some(x), Some(y)) if (x - y).abs() == 1)
}

/// Farthest offsets from UTC of the world's time zones (minutes): UTC−12 and UTC+14.
const OFFSET_WEST: i64 = -12 * 60;
/// See [`OFFSET_WEST`].
const OFFSET_EAST: i64 = 14 * 60;

/// Whether the date line `line` can be the declared time `declared` as the page's own
/// offset shows it: a zone's offset (UTC−12 to UTC+14) between the two
/// times when both have one, else a declared UTC time that can fall on the line's day
/// (09:30Z is no evening of the day before anywhere). A related story's date line
/// (`5 de mayo 20:00` beside `2022-05-06T09:30:19Z`) or a comment's is no such thing.
/// Without an offset in the declared value, the server's zone is unknown: two zones apart
/// at most.
fn an_offset_apart(declared: &str, line: &str) -> bool {
    let Some((utc, offset)) = minutes(declared) else {
        return true;
    };
    let (west, east) = match offset {
        Some(o) => (OFFSET_WEST - o, OFFSET_EAST - o),
        None => (OFFSET_WEST - OFFSET_EAST, OFFSET_EAST - OFFSET_WEST),
    };
    let utc = utc - offset.unwrap_or(0);
    match minutes(line) {
        // Both times: the line's local time is the declared one moved by one offset.
        Some((local, None)) => (west..=east).contains(&(local - utc)),
        // The line says its own offset too: the same instant, one day or the other.
        Some((other, Some(o))) => other - o == utc,
        // The line's day alone: some offset in range moves the declared time into it.
        None => {
            let Some(day) = day_of(line) else {
                return true;
            };
            let start = day * MINUTES_A_DAY;
            utc + east >= start && utc + west < start + MINUTES_A_DAY
        }
    }
}

/// Minutes in a day.
const MINUTES_A_DAY: i64 = 24 * 60;

/// An RFC 3339 value's minutes since 1970-01-01 as written (its local time) and its
/// offset in minutes (`Z`: 0; none written: `None`); `None` without a time of day.
fn minutes(value: &str) -> Option<(i64, Option<i64>)> {
    let day = day_of(value)?;
    let h: i64 = value.get(11..13)?.parse().ok()?;
    let m: i64 = value.get(14..16)?.parse().ok()?;
    let zone = value.get(19..).unwrap_or("");
    let offset = match zone {
        "" => None,
        "Z" => Some(0),
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let oh: i64 = z.get(1..3)?.parse().ok()?;
            let om: i64 = z.get(4..6)?.parse().ok()?;
            Some(sign * (oh * 60 + om))
        }
    };
    Some((day * MINUTES_A_DAY + h * 60 + m, offset))
}

/// Days since 1970-01-01 of a value's date (`YYYY-MM-DD...`).
fn day_of(v: &str) -> Option<i64> {
    let y: i64 = v.get(..4)?.parse().ok()?;
    let m: i64 = v.get(5..7)?.parse().ok()?;
    let d: i64 = v.get(8..10)?.parse().ok()?;
    Some(days_from_civil(y, m, d))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Longest line (chars) that counts as a date line for a year and month alone.
pub const YEAR_MONTH_LINE_CHARS: usize = 40;

/// When the page gives no day anywhere: a year and month (`1998年3月`, `March 1998`) on a
/// short line near or at the edges of the body, as an issue line of a magazine reprint
/// ("——《北京之春》1998年3月号"), nearest the body. The value is `YYYY-MM`: RFC 3339 has no
/// form without a day, and inventing the 1st would claim a day the page does not give.
fn year_month_line(page: &Page, span: Option<(u32, u32)>) -> Option<Found> {
    static YM: OnceLock<Regex> = OnceLock::new();
    let re = YM.get_or_init(|| {
        Regex::new(&format!(
            r"(?i)((?:19|20)\d{{2}})\s*年\s*(\d{{1,2}})\s*月|(?-u:\b)({months})(?:\.|(?-u:\b)),?\s+((?:19|20)\d{{2}})(?-u:\b)",
            months = months()
        ))
        .expect("static regex")
    });
    let text = &page.text;
    let (start, end) = span.unwrap_or((0, text.len() as u32));
    let lo = floor(text, start.saturating_sub(SEARCH_BEFORE) as usize);
    let hi = floor(text, (end as usize + SEARCH_AFTER as usize).min(text.len()));
    let mut best: Option<(u32, Found)> = None;
    for c in re.captures_iter(&text[lo..hi]) {
        let Some(m) = c.get(0) else { continue };
        let (at, after) = (lo + m.start(), lo + m.end());
        // A day written after the month (`1998年3月5日`) is a full date the patterns above
        // refused (e.g. in prose); it is no year-month line.
        if text[after..].starts_with(|ch: char| ch.is_ascii_digit()) {
            continue;
        }
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[after..].find('\n').map_or(text.len(), |i| after + i);
        if text[line_start..line_end].trim().chars().count() > YEAR_MONTH_LINE_CHARS {
            continue;
        }
        let (y, mo) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(y), Some(mo), _, _) => (y.as_str(), mo.as_str().parse().unwrap_or(0)),
            (_, _, Some(name), Some(y)) => (y.as_str(), month(name.as_str())),
            _ => continue,
        };
        if !(1..=12).contains(&mo) {
            continue;
        }
        let pos = at as u32;
        let dist = if pos < start {
            start - pos
        } else {
            pos.saturating_sub(end)
        };
        if best.as_ref().is_none_or(|(d, _)| dist < *d) {
            best = Some((
                dist,
                Found {
                    value: format!("{y}-{mo:02}"),
                    pos: Some(pos),
                },
            ));
        }
    }
    best.map(|(_, f)| f)
}

/// The value of the first `"key": "value"` in a JSON text, its escapes decoded (no full
/// parse: pages put invalid JSON in these scripts often enough).
pub(crate) fn json_string(json: &str, key: &str) -> Option<String> {
    let at = json.find(&format!("\"{key}\""))?;
    let rest = json[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let rest = rest.strip_prefix('"')?;
    // The closing quote: the first one no backslash escapes.
    let mut escaped = false;
    let end = rest.char_indices().find_map(|(i, c)| {
        let close = c == '"' && !escaped;
        escaped = c == '\\' && !escaped;
        close.then_some(i)
    })?;
    let raw = &rest[..end];
    // JSON escapes (`\u00e4`, `\"`, `\/`) decoded; a string JSON refuses is kept as written.
    Some(if raw.contains('\\') {
        serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string())
    } else {
        raw.to_string()
    })
}

/// The date line nearest the body.
fn in_text(page: &Page, span: Option<(u32, u32)>, owners: &[(u32, u32, u32)]) -> Option<Found> {
    let text = &page.text;
    let (start, end) = span.unwrap_or((0, text.len() as u32));
    let lo = floor(text, start.saturating_sub(SEARCH_BEFORE) as usize);
    let hi = floor(text, (end as usize + SEARCH_AFTER as usize).min(text.len()));
    let window = &text[lo..hi];
    let mut best: Option<(i64, Found)> = None;
    for (m_start, value, has_time) in dates_in(window) {
        let pos = (lo + m_start) as u32;
        let owner = owner_at(owners, pos);
        let block = block_of(page, owner);
        let (block_start, block_chars, block_bytes) =
            line_extent(text, pos, block_extent(page, owners, block));
        // A date in the prose of a paragraph: far into it, or in a sentence of the body.
        let inside_body = pos >= start && pos <= end;
        let block_text =
            &text[block_start as usize..floor(text, block_start as usize + block_bytes as usize)];
        // A dateline opens the story's first paragraph: "27.1.2022 - Bei der Erinnerung …".
        let head = &text[pos as usize..floor(text, pos as usize + DATELINE_CHARS)];
        let dateline = pos == block_start && [" - ", " – ", " — "].iter().any(|d| head.contains(d));
        let in_prose = !dateline
            && ((block_chars > PROSE_CHARS
                && (pos as usize) > block_start as usize + LINE_START_SLACK)
                || (inside_body && block_chars > 30 && is_sentence(block_text)));
        if in_prose {
            continue;
        }
        let mut dist: i64 = if pos < start {
            (start - pos) as i64
        } else if pos <= end {
            (pos - start) as i64
        } else {
            (pos - end) as i64 + 2000
        };
        if has_time {
            dist -= 300;
        }
        if owner != NONE && page.nodes[owner as usize].flags & flag::DATE != 0 {
            dist -= 1000;
        }
        let before = &text[floor(text, (pos as usize).saturating_sub(24))..pos as usize];
        if has_label(before) {
            dist -= 1000;
        }
        if best.as_ref().is_none_or(|(d, _)| dist < *d) {
            best = Some((
                dist,
                Found {
                    value,
                    pos: Some(pos),
                },
            ));
        }
    }
    best.map(|(_, f)| f)
}

/// The line of the block's text that holds `pos` (a date line set off by `<br>` in a
/// long block is a line of its own): where it starts, its chars and bytes.
fn line_extent(text: &str, pos: u32, (start, _, bytes): (u32, u32, u32)) -> (u32, u32, u32) {
    let (start, end) = (start as usize, floor(text, start as usize + bytes as usize));
    let pos = (pos as usize).clamp(start, end);
    let line_start = text[start..pos]
        .rfind('\n')
        .map_or(start, |i| start + i + 1);
    let line_end = text[pos..end].find('\n').map_or(end, |i| pos + i);
    let line = &text[line_start..line_end];
    (
        line_start as u32,
        line.chars().count() as u32,
        line.len() as u32,
    )
}

/// Bytes after a date at a paragraph's start searched for the dash of a dateline.
pub const DATELINE_CHARS: usize = 32;

/// Prose, not a date line: sentences with commas or full stops.
fn is_sentence(block: &str) -> bool {
    block.contains('，') || block.contains('。') || block.contains(", ") || block.contains(". ")
}

/// Words that introduce a publish date.
fn has_label(before: &str) -> bool {
    let lower = before.to_lowercase();
    [
        "发布",
        "发表",
        "时间",
        "日期",
        "published",
        "posted",
        "updated",
        "date",
    ]
    .iter()
    .any(|l| lower.contains(l))
}

/// The element holding text offset `pos`.
fn owner_at(owners: &[(u32, u32, u32)], pos: u32) -> u32 {
    let i = owners.partition_point(|&(a, _, _)| a <= pos);
    if i == 0 {
        return NONE;
    }
    owners[i - 1].2
}

/// The nearest block element at or above `n`.
fn block_of(page: &Page, mut n: u32) -> u32 {
    while n != NONE && n != 0 && !page.nodes[n as usize].tag.is_block() {
        n = page.nodes[n as usize].parent;
    }
    n
}

/// Where the block's text starts, how many chars and bytes it holds.
fn block_extent(page: &Page, owners: &[(u32, u32, u32)], block: u32) -> (u32, u32, u32) {
    let Some(node) = page.nodes.get(block as usize) else {
        return (0, 0, 0);
    };
    let open = node.open;
    let close = node.close;
    let mut first = None;
    let mut last = 0;
    // Text events of the block lie between its open and close; find them by offsets.
    for ev in &page.events[open as usize..=close as usize] {
        if let crate::scan::Event::Text(a, b) = *ev {
            first.get_or_insert(a);
            last = b;
        }
    }
    let _ = owners;
    match first {
        Some(f) => (
            f,
            page.text[f as usize..last as usize].chars().count() as u32,
            last - f,
        ),
        None => (0, 0, 0),
    }
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s` holds a date (any of the forms [`parse`] reads).
pub(crate) fn has_date(s: &str) -> bool {
    !dates_in(s).is_empty()
}

/// Where the first date in `s` starts (byte offset).
pub(crate) fn first_date(s: &str) -> Option<usize> {
    dates_in(s).first().map(|(at, _, _)| *at)
}

/// Parses the first date in `s` (a meta value, a `datetime`, or text).
pub fn parse(s: &str) -> Option<String> {
    dates_in(s).into_iter().next().map(|(_, v, _)| v)
}

const TIME: &str = r"(?:\s*(?:T|at|um|à|,|-|\|)?\s*(?:(?:上午|下午|早上|晚上|中午|凌晨)\s*)?(\d{1,2})\s*[:：时]\s*(\d{2})(?:\s*[:：分]\s*(\d{2}))?(?:\.\d+)?\s*(?i:(am|pm|a\.m\.|p\.m\.))?\s*(Z|[+-]\d{2}:?\d{2}|GMT|UTC)?)?";
/// Month names and abbreviations (lower case) in the languages of the sets: English, German,
/// French, Spanish, Portuguese, Italian, Dutch, Polish and Czech (genitive forms too), and
/// the genitives of Russian and Ukrainian ("15 августа 2016").
const MONTH_NAMES: [&[&str]; 12] = [
    &[
        "января",
        "січня",
        "january",
        "jan",
        "januar",
        "jänner",
        "janvier",
        "enero",
        "ene",
        "janeiro",
        "gennaio",
        "januari",
        "stycznia",
        "styczeń",
        "leden",
        "ledna",
    ],
    &[
        "февраля",
        "лютого",
        "february",
        "feb",
        "februar",
        "feber",
        "février",
        "fevrier",
        "févr",
        "fév",
        "febrero",
        "fevereiro",
        "fev",
        "febbraio",
        "februari",
        "lutego",
        "luty",
        "únor",
        "února",
    ],
    &[
        "марта",
        "березня",
        "march",
        "mar",
        "märz",
        "maerz",
        "mrz",
        "mär",
        "mars",
        "marzo",
        "março",
        "marco",
        "maart",
        "marca",
        "marzec",
        "březen",
        "března",
    ],
    &[
        "апреля",
        "квітня",
        "april",
        "apr",
        "avril",
        "avr",
        "abril",
        "abr",
        "aprile",
        "kwietnia",
        "kwiecień",
        "duben",
        "dubna",
    ],
    &[
        "мая",
        "травня",
        "may",
        "mai",
        "mayo",
        "maio",
        "maggio",
        "mei",
        "maja",
        "maj",
        "květen",
        "května",
    ],
    &[
        "июня",
        "червня",
        "june",
        "jun",
        "juni",
        "juin",
        "junio",
        "junho",
        "giugno",
        "czerwca",
        "czerwiec",
        "červen",
        "června",
    ],
    &[
        "июля",
        "липня",
        "july",
        "jul",
        "juli",
        "juillet",
        "juil",
        "julio",
        "julho",
        "luglio",
        "lipca",
        "lipiec",
        "červenec",
        "července",
    ],
    &[
        "августа",
        "серпня",
        "augusti",
        "august",
        "aug",
        "août",
        "aout",
        "agosto",
        "ago",
        "augustus",
        "sierpnia",
        "sierpień",
        "srpen",
        "srpna",
    ],
    &[
        "сентября",
        "вересня",
        "september",
        "sep",
        "sept",
        "septembre",
        "septiembre",
        "setiembre",
        "setembro",
        "set",
        "settembre",
        "września",
        "wrzesień",
        "září",
    ],
    &[
        "октября",
        "жовтня",
        "october",
        "oct",
        "oktober",
        "okt",
        "octobre",
        "octubre",
        "outubro",
        "out",
        "ottobre",
        "ott",
        "października",
        "październik",
        "říjen",
        "října",
    ],
    &[
        "ноября",
        "листопада",
        "november",
        "nov",
        "novembre",
        "noviembre",
        "novembro",
        "listopada",
        "listopad",
        "listopadu",
    ],
    &[
        "декабря",
        "грудня",
        "desember",
        "december",
        "dec",
        "dezember",
        "dez",
        "décembre",
        "decembre",
        "déc",
        "diciembre",
        "dic",
        "dezembro",
        "dicembre",
        "grudnia",
        "grudzień",
        "prosinec",
        "prosince",
    ],
];

/// The regex alternation of every month name, longest first (so `september` is tried
/// before `sep`).
fn months() -> &'static str {
    static ALTERNATION: OnceLock<String> = OnceLock::new();
    ALTERNATION.get_or_init(|| {
        let mut names: Vec<&str> = MONTH_NAMES.iter().flat_map(|m| m.iter().copied()).collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.chars().count()));
        names
            .iter()
            .map(|n| regex::escape(n))
            .collect::<Vec<_>>()
            .join("|")
    })
}

struct Patterns {
    ymd: Regex,
    dmy: Regex,
    dmy_short: Regex,
    mdy_words: Regex,
    dmy_words: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let build = |p: String| Regex::new(&p).expect("static regex");
        Patterns {
            ymd: build(format!(r"((?:19|20)\d{{2}})\s*[-/.年]\s*(\d{{1,2}})\s*[-/.月]\s*(\d{{1,2}})(?:\s*日)?{TIME}")),
            dmy: build(format!(
                r"(\d{{1,2}})\s?[/.]\s?(\d{{1,2}})\s?[/.]\s?((?:19|20)\d{{2}})(?-u:\b){TIME}"
            )),
            dmy_short: build(format!(r"(?-u:\b)(\d{{2}})\.(\d{{2}})\.(\d{{2}})(?-u:\b){TIME}")),
            mdy_words: build(format!(
                r"(?i)(?-u:\b)({months})(?:\.|(?-u:\b)|\s)\s*(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}}){TIME}",
                months = months()
            )),
            dmy_words: build(format!(
                r"(?i)(?-u:\b)(\d{{1,2}})(?:st|nd|rd|th|er|º|\.)?\s*(?:de\s+)?({months})(?:\.|(?-u:\b)|\s),?\s*(?:de\s+|del\s+)?((?:19|20)\d{{2}}){TIME}",
                months = months()
            )),
        }
    })
}

/// Every date in `s`: (byte offset, RFC 3339 value, has a time of day).
fn dates_in(s: &str) -> Vec<(usize, String, bool)> {
    let mut out = Vec::new();
    let p = patterns();
    let digit_before = |at: usize| {
        s[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_digit())
    };
    // "31.10.23": day, month and a year of two digits, as German and Swiss sites write a
    // date line; never part of a longer run of numbers (a version, an address).
    if s.contains('.') {
        for c in p.dmy_short.captures_iter(s) {
            let Some(m) = c.get(0) else { continue };
            let dot_or_digit = |c: char| c == '.' || c.is_ascii_digit();
            let numbers_go_on = s[m.end()..].starts_with('.')
                && s[m.end() + 1..].starts_with(|c: char| c.is_ascii_digit())
                || s[..m.start()].ends_with(dot_or_digit);
            if numbers_go_on {
                continue;
            }
            let year = num(&c, 3) + if num(&c, 3) < 50 { 2000 } else { 1900 };
            if let Some(v) = build(year, num(&c, 2), num(&c, 1), &c) {
                out.push((m.start(), v.0, v.1));
            }
        }
    }
    // Every other pattern holds a year, `19` or `20` and two digits: a text without either
    // pair is not searched four times.
    if !(s.contains("19") || s.contains("20")) {
        out.sort_by_key(|(m, _, _)| *m);
        return out;
    }
    for c in p.ymd.captures_iter(s) {
        let m = c.get(0).map_or(0, |m| m.start());
        if digit_before(m) {
            continue;
        }
        if let Some(v) = build(num(&c, 1), num(&c, 2), num(&c, 3), &c) {
            out.push((m, v.0, v.1));
        }
    }
    for c in p.dmy.captures_iter(s) {
        let m = c.get(0).map_or(0, |m| m.start());
        if digit_before(m) {
            continue;
        }
        let (a, b) = (num(&c, 1), num(&c, 2));
        // Day first unless that cannot be (9/17/2004); pages here write 7/5/2005 for 7 May,
        // and dots (`21.01.2022`) always put the day first.
        let dotted = c.get(0).is_some_and(|m| m.as_str().contains('.'));
        let (d, mo) = if b > 12 && !dotted { (b, a) } else { (a, b) };
        if let Some(v) = build(num(&c, 3), mo, d, &c) {
            out.push((m, v.0, v.1));
        }
    }
    for c in p.mdy_words.captures_iter(s) {
        let m = c.get(0).map_or(0, |m| m.start());
        if let Some(v) = build(num(&c, 3), month(&c[1]), num(&c, 2), &c) {
            out.push((m, v.0, v.1));
        }
    }
    for c in p.dmy_words.captures_iter(s) {
        let m = c.get(0).map_or(0, |m| m.start());
        if digit_before(m) {
            continue;
        }
        if let Some(v) = build(num(&c, 3), month(&c[2]), num(&c, 1), &c) {
            out.push((m, v.0, v.1));
        }
    }
    out.sort_by_key(|(m, _, _)| *m);
    out
}

fn num(c: &Captures, i: usize) -> u32 {
    c.get(i).and_then(|m| m.as_str().parse().ok()).unwrap_or(0)
}

/// The month (1–12) a name of [`MONTH_NAMES`] stands for, 0 for none.
fn month(name: &str) -> u32 {
    let lower = name.to_lowercase();
    MONTH_NAMES
        .iter()
        .position(|names| names.contains(&lower.as_str()))
        .map_or(0, |i| i as u32 + 1)
}

/// Formats a validated date; the time comes from capture groups 4–8 (hour, minute, second,
/// am/pm, offset).
fn build(y: u32, mo: u32, d: u32, c: &Captures) -> Option<(String, bool)> {
    if !(1970..=2100).contains(&y) || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let date = format!("{y:04}-{mo:02}-{d:02}");
    let Some(h) = c.get(4).and_then(|m| m.as_str().parse::<u32>().ok()) else {
        return Some((date, false));
    };
    let mi = num(c, 5);
    let sec = num(c, 6);
    let mut h = h;
    // 下午 9:30 is 21:30 (上午, 早上 and 凌晨 are morning hours as written).
    let chinese_pm = c.get(0).is_some_and(|m| {
        ["下午", "晚上", "中午"]
            .iter()
            .any(|w| m.as_str().contains(w))
    });
    if chinese_pm && h < 12 {
        h += 12;
    }
    if let Some(ap) = c.get(7) {
        let pm = ap.as_str().to_ascii_lowercase().starts_with('p');
        if h == 12 {
            h = if pm { 12 } else { 0 };
        } else if pm {
            h += 12;
        }
    }
    if h > 23 || mi > 59 || sec > 59 {
        return Some((date, false));
    }
    let offset = match c.get(8).map(|m| m.as_str()) {
        Some("Z") | Some("GMT") | Some("UTC") => "Z".to_string(),
        Some(o) if o.len() == 5 => format!("{}:{}", &o[..3], &o[3..]),
        Some(o) => o.to_string(),
        None => String::new(),
    };
    Some((format!("{date}T{h:02}:{mi:02}:{sec:02}{offset}"), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`crate::extract`] dates `html` at `url`.
    fn published_on(html: &str, url: &str) -> Option<String> {
        let url = url::Url::parse(url).unwrap();
        crate::extract(html, &url).published
    }

    #[test]
    fn russian_and_ukrainian_months() {
        for (text, want) in [
            ("Германия 15 августа 2016, 13:43", "2016-08-15T13:43:00"),
            ("3 листопада 2021", "2021-11-03"),
        ] {
            assert_eq!(parse(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn the_day_in_the_address() {
        for (address, want) in [
            (
                "https://www.befifty.de/home/2017/7/12/unter-uns",
                Some("2017-07-12"),
            ),
            ("https://x.de/2017/13/12/a", None),
            ("https://x.de/a-2017-7", None),
        ] {
            assert_eq!(url_day(address).as_deref(), want, "{address}");
        }
        // A modification date months after the day in the address loses to it; a day
        // apart is the same publication in another time zone.
        let page = |date: &str| {
            format!(
                r#"<html><head><meta property="og:url" content="https://x.de/2017/07/12/a">
<meta property="article:published_time" content="{date}"></head><body><p>Text.</p></body></html>"#
            )
        };
        for (date, want) in [
            ("2019-06-17T18:28:00+02:00", "2017-07-12"),
            ("2017-07-13T01:00:00+02:00", "2017-07-13T01:00:00+02:00"),
        ] {
            let got = published_on(&page(date), "https://x.de/2017/07/12/a");
            assert_eq!(got.as_deref(), Some(want), "{date}");
        }
    }

    #[test]
    fn a_time_of_the_last_edit_is_no_publication() {
        let prose = "The council voted on Tuesday to close the old bridge to cars, after engineers found cracks in two of its piers during the spring inspection.";
        let page = |times: &str| {
            format!(
                "<html><body><h1>Bridge closes</h1><div class=meta>{times}</div><div><p>{prose}</p><p>{prose}</p><p>{prose}</p></div></body></html>"
            )
        };
        for (times, want) in [
            // The edit's time first: the publication's is the date.
            (
                r#"<time class="updated" datetime="2021-06-03T10:00:00+02:00">3 June</time> <time class="entry-date published" datetime="2021-05-28T09:00:00+02:00">28 May</time>"#,
                Some("2021-05-28T09:00:00+02:00"),
            ),
            (
                r#"<time itemprop="dateModified" datetime="2021-06-03">3 June</time> <time datetime="2021-05-28">28 May</time>"#,
                Some("2021-05-28"),
            ),
            // WordPress marks one time both ways when the two are one.
            (
                r#"<time class="entry-date published updated" datetime="2021-05-28T09:00:00+02:00">28 May</time>"#,
                Some("2021-05-28T09:00:00+02:00"),
            ),
            // The edit's time alone still dates the page, as a modification meta does.
            (
                r#"<time class="updated" datetime="2021-06-03">Updated</time>"#,
                Some("2021-06-03"),
            ),
        ] {
            let got = published_on(&page(times), "https://example.com/a");
            assert_eq!(got.as_deref(), want, "{times}");
        }
    }

    #[test]
    fn a_dateline_opens_the_first_paragraph() {
        let prose = "Bei der Erinnerung an die Verfolgten waren queere Opfer oft unsichtbar, was erst recht für lesbische Frauen gilt. Erst seit wenigen Jahren ändert sich das, und es ist ein langer Weg.";
        let html = format!(
            "<html><body><h1>Gedenken</h1><div><p>27.1.2022 - {prose}</p><p>{prose}</p><p>{prose}</p></div></body></html>"
        );
        let got = published_on(&html, "https://x.de/a");
        assert_eq!(got.as_deref(), Some("2022-01-27"));
    }

    #[test]
    fn chinese_forms_with_and_without_time() {
        for (text, want) in [
            ("发布时间：2019年2月20日", "2019-02-20"),
            ("2019年02月20日09:30", "2019-02-20T09:30:00"),
            ("2019年2月20日 9时30分", "2019-02-20T09:30:00"),
            ("2019年02月20日 上午9:30 来源：本报", "2019-02-20T09:30:00"),
            ("2019年02月20日 下午2:05", "2019-02-20T14:05:00"),
            ("2019年02月20日 中午12:10", "2019-02-20T12:10:00"),
            ("2019.2.20 21:03:09", "2019-02-20T21:03:09"),
        ] {
            assert_eq!(parse(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn the_publish_line_beats_dates_elsewhere_on_the_page() {
        let body = "今天我们讨论一下城市交通的问题。最近几年，随着汽车数量的快速增加，很多城市都出现了严重的交通拥堵，上下班高峰期尤其明显。";
        let html = format!(
            r#"<html><body><div class="top">今天是2019年3月1日 星期五 <a href="/">首页</a></div>
<div class="side"><ul><li><a href="/a/1">旧闻一则 2018-12-01</a></li></ul></div>
<div class="main"><h1>城市交通</h1><div class="info">2019年02月20日 下午2:05 来源：本报</div>
<div class="content"><p>{body}</p><p>{body}</p><p>{body}</p></div></div></body></html>"#
        );
        let got = published_on(&html, "http://example.cn/a.html");
        assert_eq!(got.as_deref(), Some("2019-02-20T14:05:00"));
    }

    #[test]
    fn json_strings_are_unescaped() {
        assert_eq!(
            json_string(
                r#"{"headline": "Tubeless umr\u00fcsten: \"so\" einfach\/schnell"}"#,
                "headline"
            )
            .as_deref(),
            Some("Tubeless umrüsten: \"so\" einfach/schnell")
        );
        assert_eq!(
            json_string(r#"{"headline":"plain"}"#, "headline").as_deref(),
            Some("plain")
        );
        // An escape JSON refuses: the text as written.
        assert_eq!(
            json_string(r#"{"headline":"a \x b"}"#, "headline").as_deref(),
            Some("a \\x b")
        );
    }

    #[test]
    fn a_date_line_set_off_by_br_in_a_long_block() {
        // The block holds the headline, the date line and more text; the date starts its
        // own line, not a sentence of prose.
        let body = "Die Vereine der Region durften am Wochenende wieder Zuschauer in die Hallen lassen, und viele kamen.";
        let html = format!(
            r#"<html><body><div class="wrap"><a href="/">Start</a> Login Zuschauerrückkehr bei den Proficlubs der Region<br>
02.02.2022 • HVW-Verband, Presse, Allgemein<br>
<article><p>{body}</p><p>{body}</p><p>{body}</p></article></div></body></html>"#
        );
        let url = "http://example.de/a.html";
        assert_eq!(published_on(&html, url).as_deref(), Some("2022-02-02"));
        // Far into a line of prose, a date is a mention.
        let prose = html.replace(
            "02.02.2022 • HVW-Verband",
            "Die Saison hatte für alle Vereine schwierig begonnen, bis am 02.02.2022 endlich",
        );
        assert_eq!(published_on(&prose, url), None);
    }

    #[test]
    fn formats() {
        for (written, read) in [
            ("2019-11-19T17:49:12.000Z", "2019-11-19T17:49:12Z"),
            ("2019-11-19T12:49:12-0500", "2019-11-19T12:49:12-05:00"),
            ("2019-02-20 02:26:00", "2019-02-20T02:26:00"),
            ("2019年02月20日 02:26", "2019-02-20T02:26:00"),
            ("2004年7月16日08:19", "2004-07-16T08:19:00"),
            ("Feb 20, 2019", "2019-02-20"),
            ("Updated 20 February 2019, 4:05 pm", "2019-02-20T16:05:00"),
            ("Tue, 19 Nov 2019 17:49:12 GMT", "2019-11-19T17:49:12Z"),
            ("发布日期： 9/17/2004 5:54:13 AM", "2004-09-17T05:54:13"),
            ("7/5/2005 9:23:57 PM", "2005-05-07T21:23:57"),
            ("2022.01.20 16:31", "2022-01-20T16:31:00"),
            ("21.01.2022 - 13:30", "2022-01-21T13:30:00"),
            ("09.03.2022", "2022-03-09"),
            ("Freitag, 21. Januar 2022", "2022-01-21"),
            ("29. Juni 2017, 23:39", "2017-06-29T23:39:00"),
            ("31. Oktober 2023", "2023-10-31"),
            ("1. März 2020 um 14:30 Uhr", "2020-03-01T14:30:00"),
            ("21 juin 2018", "2018-06-21"),
            ("le 3 décembre 2019", "2019-12-03"),
            ("3 de mayo de 2022", "2022-05-03"),
            ("12 de setembro de 2021", "2021-09-12"),
            ("5 września 2020", "2020-09-05"),
            ("Sept. 4, 2019", "2019-09-04"),
        ] {
            assert_eq!(parse(written).as_deref(), Some(read), "{written}");
        }
        assert_eq!(parse("12019-02-30"), None);
        assert_eq!(parse("2019-13-01"), None);
    }

    #[test]
    fn a_year_of_two_digits_after_day_and_month() {
        assert_eq!(parse("31.10.23").as_deref(), Some("2023-10-31"));
        assert_eq!(
            parse("Von: Björn Jahner | 31.10.23 13:30").as_deref(),
            Some("2023-10-31T13:30:00")
        );
        assert_eq!(parse("09.03.98").as_deref(), Some("1998-03-09"));
        // A longer run of numbers (a version, an address), or no day and month.
        assert_eq!(parse("Version 1.10.11.23"), None);
        assert_eq!(parse("10.11.12.4"), None);
        assert_eq!(parse("192.31.10.23"), None);
        assert_eq!(parse("45.13.22"), None);
        let page = crate::scan::scan(
            "<body><h1>Grab-Bote fliegt nach Singapur</h1><div>Von: Björn Jahner | 31.10.23</div>\
             <p>Ein Fahrer eines Lieferdienstes ist nach Singapur geflogen, um eine Bestellung \
             auszuliefern, die ein Kunde aufgegeben hatte, so die Geschichte im Netz.</p></body>",
        );
        let span = Some((
            page.text.find("Ein Fahrer").unwrap_or(0) as u32,
            page.text.len() as u32,
        ));
        assert_eq!(
            published(&page, span).map(|f| f.value).as_deref(),
            Some("2023-10-31")
        );
    }

    #[test]
    fn year_and_month_alone_on_an_issue_line() {
        let page = crate::scan::scan(
            "<body><p>犬儒病</p><p>正文很长的一段话，写了很多内容，讲到了一九九八年三月的事情。<br>\
             ——《北京之春》1998年3月号</p></body>",
        );
        let found = published(&page, None).map(|f| f.value);
        assert_eq!(found.as_deref(), Some("1998-03"));
        // In prose, or with a day, it is not taken as a year-month line.
        let page = crate::scan::scan(
            "<body><p>In March 2019 the council met again and talked for many hours about it.</p></body>",
        );
        assert_eq!(published(&page, None), None);
    }

    #[test]
    fn a_utc_time_is_dated_as_the_page_shows_it() {
        let body =
            "<p>The council met on Tuesday and approved the new budget, after a long debate.</p>"
                .repeat(4);
        let page = |meta: &str| {
            format!(
                "<html><head><meta property='article:published_time' content='{meta}'></head>\
                 <body><article><h1>Budget</h1><p class=date>3 de mayo de 2022</p>{body}</article></body></html>"
            )
        };
        let url = url::Url::parse("http://example.com/a.html").unwrap();
        // 02:41 UTC is still the evening of the 3rd in the page's own offset.
        let late = crate::extract(&page("2022-05-04T02:41:00Z"), &url);
        assert_eq!(late.published.as_deref(), Some("2022-05-03"));
        // The same day, or a day far off, leaves the declared time as it is.
        for meta in ["2022-05-03T12:00:00Z", "2022-05-09T02:41:00Z"] {
            let a = crate::extract(&page(meta), &url);
            assert_eq!(a.published.as_deref(), parse(meta).as_deref());
        }
        // A related story's evening or a comment's night is no offset of the declared time.
        assert!(an_offset_apart("2022-05-04T02:41:00Z", "2022-05-03"));
        assert!(an_offset_apart(
            "2022-05-06T09:30:19Z",
            "2022-05-06T05:30:00"
        ));
        assert!(!an_offset_apart(
            "2022-05-06T09:30:19Z",
            "2022-05-05T20:00:00"
        ));
        assert!(!an_offset_apart(
            "2015-12-12T05:00:37Z",
            "2015-12-13T01:10:00"
        ));
        assert!(!an_offset_apart("2022-05-06T13:30:00Z", "2022-05-05"));
        assert!(an_offset_apart(
            "2022-05-06T09:30:00-04:00",
            "2022-05-06T05:30:00"
        ));
        assert!(one_day_apart("2021-12-31T23:00:00Z", "2022-01-01"));
        // A day stored as its midnight east of UTC, written in UTC.
        for (utc, day) in [
            ("2021-12-31T23:00:00Z", "2022-01-01"),
            ("2024-02-28T22:00:00Z", "2024-02-29"),
        ] {
            assert_eq!(local_midnight(utc).as_deref(), Some(day), "{utc}");
        }
        for kept in [
            "2022-11-06T23:00:12Z",
            "2022-11-06T12:00:00Z",
            "2022-11-06T23:00:00+01:00",
            "2022-11-06T23:00:00",
        ] {
            assert_eq!(local_midnight(kept), None, "{kept}");
        }
        assert!(!one_day_apart("2022-03-01", "2022-02-27"));
        assert!(one_day_apart("2024-03-01", "2024-02-29"));
    }

    #[test]
    fn a_time_element_beats_a_template_date_meta() {
        let body = "<p>Die Gemeinde hat am Dienstag den neuen Haushalt beschlossen, nach langer Debatte.</p>"
            .repeat(4);
        let html = format!(
            "<html><head><meta name=date content='2021-12-20T11:02:44+01:00'></head><body><article>\
             <h1>Haushalt</h1><time datetime='2022-01-21'>21.01.2022</time>{body}</article></body></html>"
        );
        let url = "http://example.com/a.html";
        assert_eq!(published_on(&html, url).as_deref(), Some("2022-01-21"));
        // A date line shown at the article beats it too, unless years off (another event).
        let page = |line: &str| {
            format!(
                "<html><head><meta name=date content='2021-12-20T11:02:44+01:00'></head><body><article>\
                 <h1>Haushalt</h1><p class=date>{line}</p>{body}</article></body></html>"
            )
        };
        for (line, want) in [
            ("27.01.2022", "2022-01-27"),
            ("27.01.1975", "2021-12-20T11:02:44+01:00"),
            ("20.12.2021", "2021-12-20T11:02:44+01:00"),
        ] {
            let got = published_on(&page(line), url);
            assert_eq!(got.as_deref(), Some(want), "{line}");
        }
    }

    #[test]
    fn json_ld_value() {
        let j = r#"{"@type":"NewsArticle", "datePublished" : "2019-11-19T08:00:00+08:00"}"#;
        assert_eq!(
            json_string(j, "datePublished").as_deref(),
            Some("2019-11-19T08:00:00+08:00")
        );
    }
}
