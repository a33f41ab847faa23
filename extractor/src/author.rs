//! The author: meta tags and JSON-LD, elements marked as the byline (`class=author`,
//! `itemprop=author`, `rel=author`), then Chinese bylines in the text around the body
//! (`作者：`, `记者`, `编辑：`, `来源：`), the labels ranked (an author before a reporter before
//! an editor before a source, which is usually a publication) and, within a rank, the one
//! nearest the date.

use std::sync::OnceLock;

use regex::Regex;

use crate::scan::{flag, Page};

/// Meta names and properties that carry the author, best first.
const META_KEYS: &[&str] = &[
    "author",
    "article:author",
    "byl",
    "dc.creator",
    "dcterms.creator",
    "sailthru.author",
    "parsely-author",
    "citation_author",
    "citation_authors",
    "og:article:author",
];

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
    if let Some(a) = crate::meta(page, META_KEYS).and_then(clean) {
        return Some(a);
    }
    for json in &page.json_ld {
        if let Some(a) = json_author(json).and_then(|a| clean(&a)) {
            return Some(a);
        }
    }
    if issuer.is_some() {
        return issuer;
    }
    if let Some(a) = chinese_byline(page, span, date_pos) {
        return Some(a);
    }
    marked_byline(page).or_else(|| bare_name_line(body))
}

/// Lines of the body's opening looked at for a bare name.
pub const OPENING_LINES: usize = 4;
/// Longest line (chars) that may come before a bare name: the headline and a subtitle.
pub const HEADLINE_CHARS: usize = 40;

/// Words that stand alone on a line at the top of an article and are no name.
const NOT_BARE_NAMES: &[&str] = &[
    "正文",
    "摘要",
    "导读",
    "全文",
    "简介",
    "前言",
    "引言",
    "序言",
    "目录",
    "按语",
    "编者按",
    "打印",
    "关闭",
    "返回",
    "评论",
    "分享",
    "推荐",
    "图片",
    "视频",
    "专题",
    "新闻",
    "首页",
];

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
            return Some(line.to_string());
        }
        if line.chars().count() > HEADLINE_CHARS {
            return None;
        }
    }
    None
}

/// The text of the first short element marked as the author.
fn marked_byline(page: &Page) -> Option<String> {
    page.nodes.iter().enumerate().find_map(|(i, n)| {
        if n.flags & flag::AUTHOR == 0 || n.flags & (flag::SKIPPED | flag::HEAD) != 0 {
            return None;
        }
        let t = page.node_text(i as u32);
        let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > MAX_AUTHOR_CHARS {
            return None;
        }
        clean(&t)
    })
}

/// `"author": {"name": "..."}`, `"author": [{"name": ...}]` or `"author": "..."`.
fn json_author(json: &str) -> Option<String> {
    json_author_raw(json).map(|raw| crate::entities::decode(raw).into_owned())
}

/// The raw name [`json_author`] decodes: what the first match of
/// `"(?:author|creator)"\s*:\s*(?:\[\s*)?(?:\{[^{}]*?"name"\s*:\s*"([^"]{1,100})"|"([^"]{1,100})")`
/// captures, found without a regex (its captures cost a backtracking search per page). Each
/// `"author"` and `"creator"` key is tried in page order; the brace-free stretches after the
/// keys' `{` never overlap, so no byte is searched twice for `"name"`.
fn json_author_raw(json: &str) -> Option<&str> {
    let find = |key: &str, from: usize| {
        json.get(from..)
            .and_then(|rest| rest.find(key))
            .map(|i| from + i)
    };
    let mut next_author = find("\"author\"", 0);
    let mut next_creator = find("\"creator\"", 0);
    loop {
        let (at, key_len) = match (next_author, next_creator) {
            (Some(a), Some(c)) if c < a => (c, 9),
            (Some(a), _) => (a, 8),
            (None, Some(c)) => (c, 9),
            (None, None) => return None,
        };
        if let Some(name) = author_value(json, at + key_len) {
            return Some(name);
        }
        if key_len == 8 {
            next_author = find("\"author\"", at + 1);
        } else {
            next_creator = find("\"creator\"", at + 1);
        }
    }
}

/// The name after an author key ending at `i`: `\s*:\s*(?:\[\s*)?` then `{...}` holding a
/// `"name"` or a string. Every step is forced (whitespace runs end at a byte that is none),
/// so no other way through the pattern is left untried.
fn author_value(json: &str, i: usize) -> Option<&str> {
    let mut i = skip_whitespace(json, i);
    if json.as_bytes().get(i) != Some(&b':') {
        return None;
    }
    i = skip_whitespace(json, i + 1);
    if json.as_bytes().get(i) == Some(&b'[') {
        i = skip_whitespace(json, i + 1);
    }
    match json.as_bytes().get(i)? {
        b'"' => short_string(json, i),
        b'{' => {
            // `[^{}]*?"name"`: each `"name"` before the next brace, the nearest first.
            let start = i + 1;
            let rest = json.get(start..)?;
            let region = &rest[..rest.find(['{', '}']).unwrap_or(rest.len())];
            let mut from = 0;
            while let Some(k) = region.get(from..).and_then(|r| r.find("\"name\"")) {
                let key_end = start + from + k + 6;
                let j = skip_whitespace(json, key_end);
                if json.as_bytes().get(j) == Some(&b':') {
                    let j = skip_whitespace(json, j + 1);
                    if let Some(name) = short_string(json, j) {
                        return Some(name);
                    }
                }
                from += k + 1;
            }
            None
        }
        _ => None,
    }
}

/// The first byte at or after `i` that does not start a whitespace char (regex `\s`, the
/// Unicode White_Space property, as `char::is_whitespace`).
fn skip_whitespace(s: &str, i: usize) -> usize {
    let rest = s.get(i..).unwrap_or("");
    i + rest
        .find(|c: char| !c.is_whitespace())
        .unwrap_or(rest.len())
}

/// `"([^"]{1,100})"` at byte `i`: the string's text when it holds 1 to 100 chars.
fn short_string(s: &str, i: usize) -> Option<&str> {
    let rest = s.get(i..)?.strip_prefix('"')?;
    // Only the first 101 chars are looked at: a longer string does not match anyway.
    let (len, _) = rest.char_indices().take(101).find(|&(_, c)| c == '"')?;
    let text = rest.get(..len)?;
    (!text.is_empty()).then_some(text)
}

/// A byline without its label; `None` when it does not look like a person's name.
fn clean(raw: &str) -> Option<String> {
    let mut s = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if NOT_BARE_NAMES.contains(&s.as_str()) || NOT_NAMES.contains(&s.as_str()) {
        return None;
    }
    for prefix in [
        "By ",
        "by ",
        "BY ",
        "作者：",
        "作者:",
        "Author:",
        "Posted by ",
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim().to_string();
        }
    }
    let s = s
        .trim_matches(|c: char| c == '|' || c == ',' || c.is_whitespace())
        .to_string();
    let lower = s.to_lowercase();
    let looks_wrong = s.is_empty()
        || s.chars().count() > MAX_AUTHOR_CHARS
        || lower.contains("http")
        || lower.contains("www.")
        || lower.contains(".com")
        || lower.contains("team")
        || s.chars().any(|c| c.is_ascii_digit())
        || s.contains('_')
        || s.contains("出版")
        || s.split([',', '，']).count() > 1
            && s.split([',', '，'])
                .any(|p| ORGANISATION_ENDS.iter().any(|e| p.trim().ends_with(e)));
    if looks_wrong {
        return None;
    }
    // "赵  培" in citation metas: Han names are written without spaces.
    if s.chars().all(|c| crate::eval::is_cjk(c) || c == ' ')
        && s.split(' ').all(|p| p.chars().count() == 1)
    {
        return Some(s.replace(' ', ""));
    }
    Some(s)
}

/// Byline labels, by rank (lower is better).
const LABELS: &[(&str, u8)] = &[
    ("作者", 0),
    ("撰文", 0),
    ("执笔人", 0),
    ("文／", 0),
    ("文/", 0),
    ("本报记者", 1),
    ("记者", 1),
    ("通讯员", 1),
    ("实习生", 1),
    ("发表于", 2),
    ("责任编辑", 3),
    ("编辑", 3),
    ("责编", 3),
    ("来源", 4),
];

/// Common Chinese surnames: after a reporter, editor or source label, a word is taken as a
/// name only when it starts with one (a pen name after `作者` needs no such proof).
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝伊";

/// Words that end a list of names.
const NOT_NAMES: &[&str] = &[
    "扫一扫",
    "分享",
    "来源",
    "编辑",
    "责任",
    "发布",
    "点击",
    "打印",
    "返回",
    "关闭",
    "报道",
    "发表",
    "时间",
    "日期",
    "字号",
    "评论",
    "原标题",
    "摄影",
    "图片",
    "专栏",
    "简介",
    "相关",
    "个人",
    "作者",
    "全文",
    "更多",
];

/// Publication words: a "source" ending with one of these is not a person.
const ORGANISATION_ENDS: &[&str] = &[
    "网", "报", "社", "刊", "台", "站", "部", "局", "厅", "委", "院", "会", "司", "端", "道", "心",
    "府", "组", "处", "室", "所", "馆", "团", "频", "章",
];

fn chinese_byline(page: &Page, span: Option<(u32, u32)>, date_pos: Option<u32>) -> Option<String> {
    let name_re = han_name();
    let text = &page.text;
    let (start, end) = span.unwrap_or((0, text.len() as u32));
    let lo = floor(text, start.saturating_sub(SEARCH_AROUND) as usize);
    let hi = floor(
        text,
        (end as usize + SEARCH_AROUND as usize).min(text.len()),
    );
    let window = &text[lo..hi];
    // Every label starts with, and every bracketed name needs (its surname), a character of
    // U+4E00..U+9FFF, encoded in UTF-8 with a lead byte in 0xE4..=0xE9: a window without one
    // (an English page) can hold no byline, and is not searched.
    if !has_han_lead_byte(window) {
        return None;
    }
    let anchor = date_pos.unwrap_or(start) as i64;
    let mut best: Option<((u8, i64), String)> = None;
    // Every label at once: one automaton pass instead of one search per label.
    static AUTOMATON: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();
    let automaton = AUTOMATON.get_or_init(|| {
        aho_corasick::AhoCorasick::new(LABELS.iter().map(|(l, _)| l)).expect("static labels")
    });
    for found in automaton.find_overlapping_iter(window) {
        let (label, rank) = LABELS[found.pattern().as_usize()];
        let at = found.start();
        let pos = lo + at;
        let after = &window[at + label.len()..];
        let names = if rank == 2 {
            // "ggjjzhzz 发表于 2005-9-15": the name comes before.
            let before = &window[floor(window, at.saturating_sub(40))..at];
            let last = before.split_whitespace().last().unwrap_or("");
            let latin_start = last
                .char_indices()
                .rev()
                .take_while(|(_, c)| c.is_ascii_alphanumeric())
                .last()
                .map_or(last.len(), |(i, _)| i);
            let latin = &last[latin_start..];
            if latin.len() >= 3 {
                vec![latin.to_string()]
            } else if name_re.is_match(last) {
                vec![last.to_string()]
            } else {
                Vec::new()
            }
        } else if rank == 0 && !after.starts_with(['：', ':', '/', '／']) {
            // "作者须知", "作者手记": not a byline.
            Vec::new()
        } else {
            let names = names_after(after, name_re, rank > 0, rank != 4);
            if names.is_empty() && rank == 0 {
                pen_name(after).into_iter().collect()
            } else {
                names
            }
        };
        if names.is_empty() {
            continue;
        }
        let joined = names.join(" ");
        if rank == 4 && ORGANISATION_ENDS.iter().any(|e| joined.ends_with(e)) {
            continue;
        }
        // A byline far from the body (a blog's sidebar "作者：owner") ranks after every
        // byline at the body.
        let far = (pos as u32) + NEAR_BODY < start || pos as u32 > end + NEAR_BODY;
        let key = (
            rank + if far { FAR_RANK } else { 0 },
            (pos as i64 - anchor).abs(),
        );
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, joined));
        }
    }
    // "[ 黄宇 ]" after the date, "（常书香 马丹阳 ）" or "（姚峰 上海报道）" after the body.
    static BRACKETS: OnceLock<Regex> = OnceLock::new();
    let brackets = BRACKETS.get_or_init(|| {
        Regex::new(r"[\[（(【]\s*([\p{Han} ]{2,24}?)\s*[\]）)】]").expect("static regex")
    });
    for c in brackets.captures_iter(window) {
        let (Some(all), Some(m)) = (c.get(0), c.get(1)) else {
            continue;
        };
        // "[关注] 性问题成了民工之痛": a tag in front of a headline, not a byline.
        let line_start = window[..all.start()].rfind('\n').map_or(0, |i| i + 1);
        let rest_of_line = window[all.end()..].split('\n').next().unwrap_or("");
        if window[line_start..all.start()].trim().is_empty()
            && rest_of_line.trim().chars().count() >= 6
        {
            continue;
        }
        let words: Vec<&str> = m.as_str().split_whitespace().collect();
        let names: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| {
                !NOT_NAMES.contains(w)
                    && name_re.is_match(w)
                    && w.chars().count() <= 3
                    && w.chars().next().is_some_and(|c| SURNAMES.contains(c))
            })
            .collect();
        let others_ok = words
            .iter()
            .all(|w| names.contains(w) || w.ends_with("报道") || *w == "摄");
        if names.is_empty() || !others_ok {
            continue;
        }
        // "刘欢的家(组图)</a>(房产)": a tag after a linked headline, not a byline.
        // (Checked last: it walks the events.)
        if after_link(page, (lo + all.start()) as u32) {
            continue;
        }

        // Far from the body, a bracket is a tag in a list of headlines ("(房产)").
        let pos = (lo + m.start()) as u32;
        let far = pos + NEAR_BODY < start || pos > end + NEAR_BODY;
        let key = (
            2 + if far { FAR_RANK } else { 0 },
            (pos as i64 - anchor).abs(),
        );
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, names.join(" ")));
        }
    }
    best.and_then(|(_, n)| clean(&n))
}

/// The text just before byte `pos` of the page's text (spaces aside) is link text.
fn after_link(page: &Page, pos: u32) -> bool {
    let text = &page.text;
    let before = text[..floor(text, pos as usize)].trim_end_matches(' ');
    if before.is_empty() || before.ends_with('\n') {
        return false;
    }
    let at = before.len() as u32 - 1;
    // The text event holding `at`, and the element open around it.
    let mut stack: Vec<u32> = Vec::new();
    for ev in &page.events {
        match *ev {
            crate::scan::Event::Open(n) => stack.push(n),
            crate::scan::Event::Close(_) => {
                stack.pop();
            }
            crate::scan::Event::Text(a, b) if a <= at && at < b => {
                return stack
                    .last()
                    .is_some_and(|&n| page.nodes[n as usize].flags & flag::IN_LINK != 0);
            }
            crate::scan::Event::Text(..) => {}
        }
    }
    false
}

/// The names after a label: `：张三 李四`, `记者 张三`.
/// Longest pen name (chars) taken after `作者：` when it is no plain name.
pub const MAX_PEN_NAME_CHARS: usize = 12;

/// A forum or blog pen name after `作者：` ("放飞&心情"): the first word of the line, when
/// it is short and holds a letter.
fn pen_name(after: &str) -> Option<String> {
    let line = after.split('\n').next().unwrap_or("");
    let rest = line.trim_start_matches([' ', '：', ':', '/', '／', '　']);
    let word = rest.split([' ', '　']).next()?.trim();
    let n = word.chars().count();
    let ok = (2..=MAX_PEN_NAME_CHARS).contains(&n)
        && word.chars().any(char::is_alphabetic)
        && !NOT_NAMES.iter().any(|w| word.contains(w))
        && !LABELS.iter().any(|(l, _)| word.contains(l));
    ok.then(|| word.to_string())
}

fn names_after(after: &str, name_re: &Regex, need_surname: bool, pen_names: bool) -> Vec<String> {
    let line = after.split('\n').next().unwrap_or("");
    let rest = line.trim_start_matches([' ', '：', ':', '/', '／', ']', '】', '　']);
    let mut names = Vec::new();
    for (i, word) in rest.split([' ', '　', '、']).enumerate() {
        if i > 6 {
            break;
        }
        if word.is_empty() {
            if names.is_empty() {
                continue;
            }
            break;
        }
        // "王燕平本报记者": cut at the next label.
        let word = NOT_NAMES
            .iter()
            .chain(LABELS.iter().map(|(l, _)| l))
            .filter_map(|w| word.find(w))
            .min()
            .map_or(word, |cut| &word[..cut]);
        let word = word.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '·');
        // A word alone after the label, to the end of its line ("编辑：山石"), is the
        // editor's (pen) name whatever its first character, unless it names a publication.
        let alone = i == 0 && rest.trim_end() == word;
        let pen_name = pen_names
            && alone
            && word.chars().count() <= 3
            && !ORGANISATION_ENDS.iter().any(|e| word.ends_with(e));
        let surname_ok = !need_surname
            || pen_name
            || (word.chars().next().is_some_and(|c| SURNAMES.contains(c))
                && word.chars().count() <= 3);
        if name_re.is_match(word) && surname_ok {
            names.push(word.to_string());
        } else if names.is_empty()
            && word.chars().all(|c| c.is_ascii_alphanumeric())
            && word.len() >= 3
        {
            // Latin user names on blogs and forums.
            names.push(word.to_string());
            break;
        } else {
            break;
        }
    }
    names
}

/// UTF-8 lead bytes of U+4000..U+9FFF, the block of the labels' and surnames' characters.
const HAN_LEAD_BYTES: std::ops::RangeInclusive<u8> = 0xE4..=0xE9;

/// `s` holds a byte of [`HAN_LEAD_BYTES`]. Scanned by blocks of 64 bytes without an early
/// exit inside a block, so the comparison vectorises.
fn has_han_lead_byte(s: &str) -> bool {
    let (lo, span) = (
        *HAN_LEAD_BYTES.start(),
        HAN_LEAD_BYTES.end() - HAN_LEAD_BYTES.start(),
    );
    s.as_bytes().chunks(64).any(|block| {
        block
            .iter()
            .fold(false, |seen, &b| seen | (b.wrapping_sub(lo) <= span))
    })
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A bare Chinese name: 2–4 Han characters (or the middle dot of
/// transliterated names), nothing else.
fn han_name() -> &'static Regex {
    static NAME: OnceLock<Regex> = OnceLock::new();
    NAME.get_or_init(|| Regex::new(r"^[\p{Han}·]{2,4}$").expect("static regex"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The regex [`json_author_raw`] stands for.
    fn json_author_by_regex(json: &str) -> Option<&str> {
        static RE: OnceLock<Regex> = OnceLock::new();
        let re = RE.get_or_init(|| Regex::new(r#""(?:author|creator)"\s*:\s*(?:\[\s*)?(?:\{[^{}]*?"name"\s*:\s*"([^"]{1,100})"|"([^"]{1,100})")"#).unwrap());
        let c = re.captures(json)?;
        c.get(1).or_else(|| c.get(2)).map(|m| m.as_str())
    }

    /// The hand-written matcher agrees with the regex over generated JSON-like text made of
    /// the pieces the pattern turns on.
    #[test]
    fn json_author_agrees_with_the_regex() {
        const PIECES: &[&str] = &[
            "\"author\"",
            "\"creator\"",
            "\"name\"",
            "\"nam",
            "\"author",
            ":",
            " ",
            "\n",
            "\t",
            "\u{3000}",
            "\u{a0}",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "\"",
            ",",
            "x",
            "é",
            "日本",
            "Jane Doe",
            "\"@type\"",
            "\\",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ];
        let mut next = crate::test_rng::xorshift();
        let mut found = 0;
        for _ in 0..100_000 {
            let mut json = String::new();
            for _ in 0..next() % 24 {
                json.push_str(crate::test_rng::pick(&mut next, PIECES));
            }
            let fast = json_author_raw(&json);
            found += usize::from(fast.is_some());
            assert_eq!(fast, json_author_by_regex(&json), "{json:?}");
        }
        for json in [
            r#"{"author": {"@type": "Person", "name": "Jane Doe"}}"#,
            r#"{"author": [ {"name" : "A"}, {"name": "B"}]}"#,
            r#"{"creator": "C", "author": "D"}"#,
            r#"{"author": {"url": "x"}, "author": "E"}"#,
        ] {
            assert!(json_author_raw(json).is_some());
            assert_eq!(json_author_raw(json), json_author_by_regex(json), "{json}");
        }
        assert!(found > 1_000, "a name was found {found} times only");
    }

    #[test]
    fn pen_name_after_the_author_label() {
        assert_eq!(
            pen_name("： 放飞&心情\n振威将军").as_deref(),
            Some("放飞&心情")
        );
        assert_eq!(pen_name("：责任编辑 张三"), None);
        assert_eq!(pen_name("：-- \n"), None);
    }

    #[test]
    fn bare_name_under_the_headline() {
        let html = "<body><div><p>犬儒病(上)</p><p>胡平<br>人心不会熄灭，但它可能蒙上灰烬而不再燃烧。\
                    灰烬本来是燃烧的产物，但它反过来又抑制了燃烧。拨开灰烬，你会看到重新燃烧的人心。</p>\
                    <p>当今中国最流行的是什么？是犬儒主义，这是一段很长的正文，用来让正文足够长。</p></div></body>";
        let url = url::Url::parse("http://example.com/a.html").unwrap();
        assert_eq!(crate::extract(html, &url).author.as_deref(), Some("胡平"));
        // A short word under the headline that is a heading, not a name.
        let html = html.replace("胡平", "摘要");
        assert_eq!(crate::extract(&html, &url).author, None);
    }
    use crate::scan::scan;

    fn byline(html: &str) -> Option<String> {
        let page = scan(html);
        author(&page, None, "", None, None)
    }

    #[test]
    fn meta_json_and_marked() {
        assert_eq!(
            byline("<meta name=author content='By Jane Doe'>").as_deref(),
            Some("Jane Doe")
        );
        assert_eq!(
            byline("<meta name=author content='L_104485'><p>x</p>"),
            None
        );
        assert_eq!(
            byline(r#"<script type="application/ld+json">{"author":[{"@type":"Person","name":"Ann Lee"}]}</script>"#)
                .as_deref(),
            Some("Ann Lee")
        );
        assert_eq!(
            byline("<span class=byline>By Tom Smith</span>").as_deref(),
            Some("Tom Smith")
        );
        assert_eq!(
            byline("<meta name=citation_authors content='赵  培'>").as_deref(),
            Some("赵培")
        );
    }

    #[test]
    fn bracket_after_a_linked_headline_is_a_tag() {
        assert_eq!(
            byline("<p>正文很长的一段话。</p><p>编辑：山石</p><div><a href=/a>歌坛大哥大刘欢的家(组图)</a>\
                    <span>(房产)</span></div>")
            .as_deref(),
            Some("山石")
        );
        assert_eq!(
            byline("<p>正文很长的一段话，最后一句。（姚峰 上海报道）</p>").as_deref(),
            Some("姚峰")
        );
    }

    #[test]
    fn labels_and_surnames_start_with_a_han_lead_byte() {
        // The early return of `chinese_byline` on windows without such a byte relies on it.
        let first_bytes = LABELS
            .iter()
            .map(|(l, _)| l.as_bytes()[0])
            .chain(SURNAMES.chars().map(|c| c.to_string().as_bytes()[0]));
        for b in first_bytes {
            assert!(HAN_LEAD_BYTES.contains(&b), "{b:#x}");
        }
        assert!(has_han_lead_byte(&("a".repeat(200) + "记者")));
        assert!(!has_han_lead_byte(&"é ü — “x” ".repeat(50)));
        assert!(!has_han_lead_byte("ア한"));
    }

    #[test]
    fn chinese_labels_ranked() {
        assert_eq!(
            byline("<p>来源：新华网 作者：李四</p>").as_deref(),
            Some("李四")
        );
        assert_eq!(
            byline("<p>光明日报记者 王建宏 张文攀</p>").as_deref(),
            Some("王建宏 张文攀")
        );
        assert_eq!(
            byline("<p>来源：巴彦淖尔日报 编辑：苏亮 扫一扫在手机打开</p>").as_deref(),
            Some("苏亮")
        );
        assert_eq!(
            byline("<p>来源: 尹娟 【发表评论】</p>").as_deref(),
            Some("尹娟")
        );
        assert_eq!(byline("<p>来源：新华网</p>"), None);
        // A pen name alone after the label, with no common surname.
        assert_eq!(
            byline("<p>来源：新闻晨报</p><p>编辑：山石</p>").as_deref(),
            Some("山石")
        );
        assert_eq!(byline("<p>编辑：本报</p>"), None);
        assert_eq!(byline("<p>来源：央视</p>"), None);
        assert_eq!(byline("<p>记者 山石流水 报道</p>"), None);
    }
}
