//! Chinese bylines in the text around the body: labels (`作者：`, `记者`, `编辑：`,
//! `来源：`) ranked, the names after them (surname and shape, or a pen name); credit lines
//! without a label ("石佳/中国青年报", "原创 GameForce"); a source the page names as an
//! outlet ("据金融界报道") is no person.

use std::sync::OnceLock;

use regex::Regex;

use super::names::{clean, Checks};
use super::{FAR_RANK, NEAR_BODY, SEARCH_AROUND};
use crate::scan::{flag, Page};
use crate::words::{Words, WordsFile};

/// Byline labels, by rank (lower is better).
pub(super) const LABELS: &[(&str, u8)] = &[
    ("作者", 0),
    ("撰文", 0),
    ("执笔人", 0),
    ("文／", 0),
    ("文/", 0),
    ("文／图", 0),
    ("文/图", 0),
    ("文：", 0),
    ("文:", 0),
    ("文丨", 0),
    ("文｜", 0),
    ("文|", 0),
    ("文 |", 0),
    ("文 丨", 0),
    ("文图", 0),
    ("图文", 0),
    ("撰稿", 0),
    ("文字", 0),
    ("主笔", 0),
    ("采写", 1),
    ("本报记者", 1),
    ("记者", 1),
    ("通讯员", 1),
    ("实习生", 1),
    ("发表于", 2),
    ("责任编辑", 3),
    ("编辑", 3),
    ("责编", 3),
    (SOURCE, 4),
];

/// Common Chinese surnames: after a reporter, editor or source label, a word is taken as a
/// name only when it starts with one (a pen name after `作者` needs no such proof).
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝伊傅赖萧阎洪郁揭鄢晋蔺粟屠竺逯冼郦练满仝荆隆祖匡茅冀郜钮厉帅燕慕皮嵇寿鞠扈奚储伏幸";

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new(
    "author_chinese.txt",
    include_str!("../words/author_chinese.txt"),
);

/// Words that end a list of names.
pub(super) static NOT_NAMES: Words = WORDS.list("NOT_NAMES");

/// Publication words: a "source" ending with one of these is not a person.
static ORGANISATION_ENDS: Words = WORDS.list("ORGANISATION_ENDS");

/// The Chinese byline of the text around the body: the best-ranked label's names, the
/// nearest the date within a rank.
pub(super) fn chinese_byline(
    page: &Page,
    span: Option<(u32, u32)>,
    date_pos: Option<u32>,
    checks: &Checks,
) -> Option<String> {
    ranked_chinese_byline(page, span, date_pos, checks).map(|(_, names)| names)
}

/// [`chinese_byline`] with its rank ([`LABELS`]; [`FAR_RANK`] added when it is not at the
/// body).
pub(super) fn ranked_chinese_byline(
    page: &Page,
    span: Option<(u32, u32)>,
    date_pos: Option<u32>,
    checks: &Checks,
) -> Option<(u8, String)> {
    // Forums and blogs sign with a one-word Latin user name ("ggjjzhzz 发表于").
    let checks = &Checks {
        single_word: true,
        declared: false,
        site_words: checks.site_words.clone(),
    };
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
        let names = names_at_label(window, at, label, rank, name_re);
        if names.is_empty() {
            continue;
        }
        let joined = names.join(" ");
        if rank == 4
            && (ORGANISATION_ENDS.iter().any(|e| joined.ends_with(e))
                || named_as_outlet(text, &joined))
        {
            continue;
        }
        // A candidate that fails the check leaves the place to the next one.
        if clean(&joined, checks).is_none() {
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
        let Some(names) = bracket_names(page, window, lo, all, m, name_re) else {
            continue;
        };
        // Far from the body, a bracket is a tag in a list of headlines ("(房产)").
        let pos = (lo + m.start()) as u32;
        let far = pos + NEAR_BODY < start || pos > end + NEAR_BODY;
        let key = (
            2 + if far { FAR_RANK } else { 0 },
            (pos as i64 - anchor).abs(),
        );
        let joined = names.join(" ");
        if clean(&joined, checks).is_some() && best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, joined));
        }
    }
    // A blog platform's notice "本文为CSDN博主「kingname」的原创文章": the blogger wrote it.
    static BLOGGER: OnceLock<Regex> = OnceLock::new();
    let blogger =
        BLOGGER.get_or_init(|| Regex::new(r"博主「([^」\n]{2,30})」的原创").expect("static regex"));
    if let Some(m) = blogger.captures(window).and_then(|c| c.get(1)) {
        let name = m.as_str().trim();
        let handle_checks = Checks {
            declared: true,
            ..checks.clone()
        };
        if let Some(name) = clean(name, &handle_checks) {
            let key = (0, (((lo + m.start()) as i64) - anchor).abs());
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                // Checked as a handle already ("Bo2man").
                return Some((0, name));
            }
        }
    }
    for (pos, names, rank) in credit_lines(window) {
        let pos = (lo + pos) as u32;
        let far = pos + NEAR_BODY < start || pos > end + NEAR_BODY;
        let key = (
            rank + if far { FAR_RANK } else { 0 },
            (i64::from(pos) - anchor).abs(),
        );
        if clean(&names, checks).is_some() && best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, names));
        }
    }
    best.and_then(|((rank, _), n)| Some((rank, clean(&n, checks)?)))
}

/// Longest line (chars) read as a credit line of its own ([`credit_lines`]).
pub const CREDIT_LINE_CHARS: usize = 40;

/// Bylines that are a short line of their own with no label, as the byte where each starts
/// in `window`, the names, and their rank among [`LABELS`]:
/// - the writer and the paper that first ran the story, "石佳/中国青年报", "张三 李四／新华社"
///   (a reporter's rank);
/// - a post marked original and the account or writer that posted it, "原创 GameForce
///   2019-09-04 22:18", "原创 kingname 未闻Code" (after a reporter, before an editor: a
///   newspaper's account that reposts its reporter's story is no person and fails the check).
fn credit_lines(window: &str) -> Vec<(usize, String, u8)> {
    let mut found = Vec::new();
    let mut at = 0;
    for raw in window.split('\n') {
        let pos = at;
        at += raw.len() + 1;
        let line = raw.trim();
        if line.is_empty() || line.chars().count() > CREDIT_LINE_CHARS {
            continue;
        }
        if let Some(rest) = line.strip_prefix("原创") {
            // The first word after the mark: a name, not the date.
            let word = rest
                .trim_start()
                .split([' ', '　'])
                .next()
                .unwrap_or("")
                .trim();
            let shaped = (2..=MAX_PEN_NAME_CHARS).contains(&word.chars().count())
                && word.chars().any(char::is_alphabetic)
                && !word.starts_with(|c: char| c.is_ascii_digit());
            if rest.starts_with([' ', '　']) && shaped {
                found.push((pos, word.to_string(), 2));
            }
            continue;
        }
        let Some((names, paper)) = line.split_once(['/', '／']) else {
            continue;
        };
        let paper = paper.trim();
        let names: Vec<&str> = names
            .split([' ', '　', '、'])
            .filter(|w| !w.is_empty())
            .collect();
        let people = !names.is_empty()
            && names.iter().all(|w| {
                han_name().is_match(w)
                    && w.chars().count() <= 3
                    && w.chars().next().is_some_and(|c| SURNAMES.contains(c))
            });
        let publication = (2..=MAX_PEN_NAME_CHARS).contains(&paper.chars().count())
            && paper.chars().all(super::is_han)
            && ORGANISATION_ENDS.iter().any(|e| paper.ends_with(e));
        if people && publication {
            found.push((pos, names.join(" "), 1));
        }
    }
    found
}

/// The names a label found at byte `at` of `window` introduces: after it,
/// or (rank 2, "发表于") the user name before it.
fn names_at_label(window: &str, at: usize, label: &str, rank: u8, name_re: &Regex) -> Vec<String> {
    let after = &window[at + label.len()..];
    if rank == 2 {
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
    } else if label.starts_with('文')
        && window[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric())
    {
        // "人文/历史", "中文|English": the character is a word's, not "text by".
        Vec::new()
    } else if rank == 0 && after.starts_with([' ', '　']) && !label.ends_with(LABEL_SEPARATORS) {
        // "《棱镜》作者 周纯", "专栏作者 王文": a name with a surname after a space.
        names_after(after, name_re, true, false)
    } else if rank == 0
        && !label.ends_with(LABEL_SEPARATORS)
        && !after.starts_with(['：', ':'])
        && !after.starts_with(LABEL_SEPARATORS)
    {
        // "作者须知", "作者手记": not a byline.
        Vec::new()
    } else {
        let names = names_after(after, name_re, rank > 0, rank != 4);
        if names.is_empty() && rank == 0 {
            pen_name(after).into_iter().collect()
        } else {
            names
        }
    }
}

/// Marks between a label and its names: "文/张三", "作者丨张三", "文｜张三", "作者|张三",
/// "文：张三".
const LABEL_SEPARATORS: [char; 7] = ['/', '／', '|', '｜', '丨', '：', ':'];

/// The names of a bracket (`all`, its inside `m`) of `window` (at byte
/// `lo` of the page's text), when it is a byline: not a tag before a
/// headline or after a linked one, not a bracket inside a sentence, not a
/// photographer's credit; names with a surname, and nothing else but
/// "报道" and "摄".
fn bracket_names<'a>(
    page: &Page,
    window: &'a str,
    lo: usize,
    all: regex::Match<'a>,
    m: regex::Match<'a>,
    name_re: &Regex,
) -> Option<Vec<&'a str>> {
    // "[关注] 性问题成了民工之痛": a tag in front of a headline, not a byline.
    let line_start = window[..all.start()].rfind('\n').map_or(0, |i| i + 1);
    let rest_of_line = window[all.end()..].split('\n').next().unwrap_or("");
    if window[line_start..all.start()].trim().is_empty() && rest_of_line.trim().chars().count() >= 6
    {
        return None;
    }
    // "各级党委（党组）要按照…": a bracket inside a sentence, not a byline.
    let before = window[line_start..all.start()].trim_end();
    if before.chars().next_back().is_some_and(super::is_han)
        && rest_of_line.trim().chars().count() >= 6
    {
        return None;
    }
    let words: Vec<&str> = m.as_str().split_whitespace().collect();
    // "（刘通摄）": a photographer's credit.
    if words.iter().any(|w| w.ends_with('摄')) {
        return None;
    }
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
        return None;
    }
    // "刘欢的家(组图)</a>(房产)": a tag after a linked headline, not a byline.
    // (Checked last: it walks the events.)
    if after_link(page, (lo + all.start()) as u32) {
        return None;
    }
    Some(names)
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

/// The label of the source a story was taken from.
const SOURCE: &str = "来源";

/// Whether `name` is written in `text` as a source, right after [`SOURCE`] and a colon or
/// spaces ("来源：央视新闻", "来源: 央视新闻"): where a story was taken from, not who wrote it.
pub(super) fn is_source(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].trim_end_matches([' ', '　', '：', ':', '\n']);
        // "来源于：东区办事处" as well.
        before.ends_with(SOURCE)
            || before
                .strip_suffix('于')
                .is_some_and(|b| b.ends_with(SOURCE))
    })
}

/// Whether the page writes `name` as a news outlet: its reporter ("金融界记者"), its
/// dateline ("金融界讯", "据金融界报道"), its title in book marks ("《金融界》"): a source
/// so named is the outlet the story was taken from, not a person.
fn named_as_outlet(text: &str, name: &str) -> bool {
    ["记者", "讯", "报道", "消息", "客户端"]
        .iter()
        .any(|after| text.contains(&format!("{name}{after}")))
        || text.contains(&format!("据{name}"))
        || text.contains(&format!("《{name}》"))
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
    let mut lines = after.split('\n');
    let mut line = lines.next().unwrap_or("");
    // "编辑" and the name in elements of their own: the label alone on its line.
    if line
        .trim_start_matches([' ', '：', ':', '　', '|'])
        .is_empty()
    {
        line = lines.next().unwrap_or("");
    }
    let rest =
        line.trim_start_matches([' ', '：', ':', '/', '／', ']', '】', '　', '|', '｜', '丨']);
    let mut names = Vec::new();
    let words: Vec<&str> = rest.split([' ', '　', '、']).collect();
    // "责编：Demi Xia": a Latin name of capitalised words after a Chinese label.
    let latin: Vec<&str> = words
        .iter()
        .take_while(|w| {
            w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && w.chars().all(|c| c.is_ascii_alphabetic())
        })
        .take(3)
        .copied()
        .collect();
    if latin.len() >= 2 {
        return vec![latin.join(" ")];
    }
    for (i, word) in words.into_iter().enumerate() {
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
        // "（记者唐霁）法国9日…": the name ends at the bracket or punctuation after it.
        let word = word
            .find([
                '）', ')', '】', ']', '，', ',', '。', '；', ';', '：', ':', '（', '(',
            ])
            .map_or(word, |cut| &word[..cut]);
        let word = word.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '·');
        // "刘通摄", "黎旭阳、李妍摄", "张蕊 摄": photographers' credits, not the writer's.
        if word.ends_with('摄') {
            return Vec::new();
        }
        // "杨倩_NF4425": an editor's name with the portal's staff code, as the page shows it.
        let (word, code) = match word.split_once('_') {
            Some((name, code))
                if !code.is_empty() && code.chars().all(|c| c.is_ascii_alphanumeric()) =>
            {
                (name, &word[name.len()..])
            }
            _ => (word, ""),
        };
        // A word alone after the label, to the end of its line ("编辑：山石"), is the
        // editor's (pen) name whatever its first character, unless it names a publication.
        let alone = i == 0 && rest.trim_end().strip_suffix(code) == Some(word);
        let pen_name = pen_names
            && alone
            && word.chars().count() <= 3
            && !ORGANISATION_ENDS.iter().any(|e| word.ends_with(e));
        let surname_ok = !need_surname
            || pen_name
            || (word.chars().next().is_some_and(|c| SURNAMES.contains(c))
                && word.chars().count() <= 3);
        if name_re.is_match(word) && surname_ok {
            names.push(format!("{word}{code}"));
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

pub(super) fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A bare Chinese name: 2–4 Han characters (or the middle dot of
/// transliterated names), nothing else.
pub(super) fn han_name() -> &'static Regex {
    static NAME: OnceLock<Regex> = OnceLock::new();
    NAME.get_or_init(|| Regex::new(r"^[\p{Han}·]{2,4}$").expect("static regex"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
