//! The publish time: meta tags (`article:published_time`, `pubdate`, `datePublished`, ...),
//! JSON-LD `datePublished`, `<time datetime>`, then dates written in the text around the body
//! (`2019-02-20 02:26:00`, `2019年02月20日 02:26`, `Feb 20, 2019`, `20/02/2019`), the one
//! nearest the body winning and never one inside a paragraph of the body. The result is
//! RFC 3339: `2019-02-20T02:26:00` (offset only when the page gives one), or `2019-02-20`
//! when the page gives no time.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use crate::scan::{flag, Page, NONE};

/// Meta names and properties that carry the publish time, best first.
const META_KEYS: &[&str] = &[
    "article:published_time",
    "og:published_time",
    "article:published",
    "datepublished",
    "og:release_date",
    "publishdate",
    "publish-date",
    "publish_date",
    "pubdate",
    "pubtime",
    "og:time",
    "sailthru.date",
    "parsely-pub-date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.created",
    "dc.date.created",
    "citation_publication_date",
    "citation_date",
    "article.published",
    "originalpublicationdate",
    "date",
    "article:modified_time",
];

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

/// The publish time of `page`, whose body spans `span` of the text.
pub fn published(page: &Page, span: Option<(u32, u32)>) -> Option<Found> {
    if let Some(v) = crate::meta(page, META_KEYS).and_then(parse) {
        return Some(Found {
            value: v,
            pos: None,
        });
    }
    for json in &page.json_ld {
        for key in ["datePublished", "dateCreated", "uploadDate"] {
            if let Some(v) = json_string(json, key).and_then(|s| parse(&s)) {
                return Some(Found {
                    value: v,
                    pos: None,
                });
            }
        }
    }
    if let Some(v) = page
        .times
        .iter()
        .filter(|(n, _)| *n == NONE || page.nodes[*n as usize].flags & flag::DATE != 0)
        .chain(page.times.iter())
        .find_map(|(_, dt)| parse(dt))
    {
        return Some(Found {
            value: v,
            pos: None,
        });
    }
    in_text(page, span, &page.text_owners()).or_else(|| year_month_line(page, span))
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
            r"(?i)((?:19|20)\d{{2}})\s*年\s*(\d{{1,2}})\s*月|(?-u:\b)({MONTHS})[a-z]*\.?,?\s+((?:19|20)\d{{2}})(?-u:\b)"
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

/// The value of the first `"key": "value"` in a JSON text (no full parse: pages put
/// invalid JSON in these scripts often enough).
pub(crate) fn json_string(json: &str, key: &str) -> Option<String> {
    let at = json.find(&format!("\"{key}\""))?;
    let rest = json[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string())
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
        let (block_start, block_chars, block_bytes) = block_extent(page, owners, block);
        // A date in the prose of a paragraph: far into it, or in a sentence of the body.
        let inside_body = pos >= start && pos <= end;
        let block_text =
            &text[block_start as usize..floor(text, block_start as usize + block_bytes as usize)];
        let in_prose = (block_chars > PROSE_CHARS
            && (pos as usize) > block_start as usize + LINE_START_SLACK)
            || (inside_body && block_chars > 30 && is_sentence(block_text));
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

/// Parses the first date in `s` (a meta value, a `datetime`, or text).
pub fn parse(s: &str) -> Option<String> {
    dates_in(s).into_iter().next().map(|(_, v, _)| v)
}

const TIME: &str = r"(?:\s*(?:T|at|,|-|\|)?\s*(?:(?:上午|下午|早上|晚上|中午|凌晨)\s*)?(\d{1,2})\s*[:：时]\s*(\d{2})(?:\s*[:：分]\s*(\d{2}))?(?:\.\d+)?\s*(?i:(am|pm|a\.m\.|p\.m\.))?\s*(Z|[+-]\d{2}:?\d{2}|GMT|UTC)?)?";
const MONTHS: &str = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec";

struct Patterns {
    ymd: Regex,
    dmy: Regex,
    mdy_words: Regex,
    dmy_words: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let build = |p: String| Regex::new(&p).expect("static regex");
        Patterns {
            ymd: build(format!(r"((?:19|20)\d{{2}})\s*[-/.年]\s*(\d{{1,2}})\s*[-/.月]\s*(\d{{1,2}})(?:\s*日)?{TIME}")),
            dmy: build(format!(r"(\d{{1,2}})/(\d{{1,2}})/((?:19|20)\d{{2}}){TIME}")),
            mdy_words: build(format!(
                r"(?i)(?-u:\b)({MONTHS})[a-z]*\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}}){TIME}"
            )),
            dmy_words: build(format!(
                r"(?i)(?-u:\b)(\d{{1,2}})(?:st|nd|rd|th)?\s+({MONTHS})[a-z]*\.?,?\s+((?:19|20)\d{{2}}){TIME}"
            )),
        }
    })
}

/// Every date in `s`: (byte offset, RFC 3339 value, has a time of day).
fn dates_in(s: &str) -> Vec<(usize, String, bool)> {
    let p = patterns();
    let mut out = Vec::new();
    let digit_before = |at: usize| {
        s[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_digit())
    };
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
        // Day first unless that cannot be (9/17/2004); pages here write 7/5/2005 for 7 May.
        let (d, mo) = if b > 12 { (b, a) } else { (a, b) };
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

fn month(name: &str) -> u32 {
    let lower = name.to_ascii_lowercase();
    MONTHS
        .split('|')
        .position(|m| lower.starts_with(m))
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
        let url = url::Url::parse("http://example.cn/a.html").unwrap();
        assert_eq!(
            crate::extract(&html, &url).published.as_deref(),
            Some("2019-02-20T14:05:00")
        );
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
        ] {
            assert_eq!(parse(written).as_deref(), Some(read), "{written}");
        }
        assert_eq!(parse("12019-02-30"), None);
        assert_eq!(parse("2019-13-01"), None);
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
    fn json_ld_value() {
        let j = r#"{"@type":"NewsArticle", "datePublished" : "2019-11-19T08:00:00+08:00"}"#;
        assert_eq!(
            json_string(j, "datePublished").as_deref(),
            Some("2019-11-19T08:00:00+08:00")
        );
    }
}
