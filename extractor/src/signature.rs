//! The signature block (落款) of an official document: a Chinese notice, decision or letter
//! ends with its issuer on a line of its own and the date it was signed on the next line
//! ("吉林省人民政府" / "2022年1月27日"). The issuer is the document's author, and the
//! signing date its date, whatever day the web site posted it on.

use std::sync::OnceLock;

use regex::Regex;

use crate::scan::Page;
use crate::words::{Words, WordsFile};

/// Text read before the body's end (bytes): the block may close the body itself.
pub const BEFORE_END: usize = 160;
/// Text read after the body's end (bytes): the block often sits in small right-aligned
/// blocks that the body leaves out.
pub const AFTER_END: usize = 400;
/// Lines after the body's end the issuer may start on ("特此通告。" and blank lines come
/// first).
pub const MAX_LINES_AFTER: usize = 3;
/// Longest date line (chars): the date alone ("2022年1月27日"), nothing else.
pub const MAX_DATE_LINE_CHARS: usize = 16;

/// The word lists of this module ([`crate::words`]).
const WORDS: WordsFile = WordsFile::new("signature.txt", include_str!("words/signature.txt"));

/// Endings of issuing bodies: governments, their offices, committees, courts, companies.
static ISSUER_ENDS: Words = WORDS.list("ISSUER_ENDS");

/// A signature block found on the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The issuing body.
    pub issuer: String,
    /// The signing date, RFC 3339 (a date without time).
    pub date: String,
}

/// The signature block closing the body spanning `span` of the text, if there is one.
pub fn signature(page: &Page, span: Option<(u32, u32)>) -> Option<Signature> {
    let (_, end) = span?;
    let text = &page.text;
    let end = end as usize;
    let lo = floor(text, end.saturating_sub(BEFORE_END));
    let hi = floor(text, end.saturating_add(AFTER_END));
    let before: Vec<&str> = lines(&text[lo..floor(text, end)]).collect();
    let after: Vec<&str> = lines(&text[floor(text, end)..hi])
        .take(MAX_LINES_AFTER + 1)
        .collect();
    // The last two lines of the body, then the lines after it, in order.
    let tail = &before[before.len().saturating_sub(2)..];
    let all: Vec<&str> = tail.iter().chain(after.iter()).copied().collect();
    all.windows(2).find_map(|pair| {
        let (issuer, date) = (pair[0], pair[1]);
        if !is_issuer(issuer) || date.chars().count() > MAX_DATE_LINE_CHARS {
            return None;
        }
        let date = crate::published::parse(date)?;
        Some(Signature {
            issuer: issuer.to_string(),
            date,
        })
    })
}

/// The non-empty lines of `s`, trimmed of spaces (ideographic and no-break ones too).
fn lines(s: &str) -> impl Iterator<Item = &str> {
    s.split('\n')
        .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c == '\u{3000}' || c == '\u{a0}'))
        .filter(|l| !l.is_empty())
}

/// A line that is only the name of an issuing body: 4 to 30 Han characters ending as one.
fn is_issuer(line: &str) -> bool {
    static NAME: OnceLock<Regex> = OnceLock::new();
    let name = NAME.get_or_init(|| Regex::new(r"^\p{Han}{4,30}$").expect("static regex"));
    name.is_match(line) && ISSUER_ENDS.iter().any(|e| line.ends_with(e))
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan;

    const NOTICE: &str = "<body><div class=content><p>为做好嫩江干流补充治理工程建设，确保工程前期建设征地\
        实物调查工作顺利进行，维护相关单位和人民群众合法权益，现就有关事项通告如下。</p>\
        <p>自本通告发布之日起，上述区域内新迁入的人口不享有相关补偿政策，各地政府要切实履行属地管理责任。</p></div>\
        <div>特此通告。</div><div>&nbsp;</div><div style='text-align:right'>吉林省人民政府</div>\
        <div style='text-align:right'>2022年1月27日</div><div class=footer>网站地图 联系我们</div></body>";

    #[test]
    fn issuer_and_date_after_the_body() {
        let url = url::Url::parse("http://www.example.gov.cn/a.html").unwrap();
        let html = NOTICE.replace(
            "<body>",
            "<head><meta name=PubDate content='2022-01-28 00:00:00'></head><body>",
        );
        let a = crate::extract(&html, &url);
        assert_eq!(a.author.as_deref(), Some("吉林省人民政府"));
        assert_eq!(a.published.as_deref(), Some("2022-01-27"));
    }

    #[test]
    fn no_signature_without_an_issuer_line() {
        let found = |html: &str| {
            let page = scan(html);
            let span = Some((0, page.text.find("特此").unwrap_or(0) as u32));
            signature(&page, span)
        };
        assert!(found(NOTICE).is_some());
        assert_eq!(
            found(&NOTICE.replace("吉林省人民政府", "欢迎访问本网站")),
            None
        );
        // A date in a sentence is no date line.
        assert_eq!(
            found(&NOTICE.replace("2022年1月27日", "本通告自2022年1月27日起施行。")),
            None
        );
        assert!(is_issuer("国务院办公厅"));
        assert!(!is_issuer("相关部门要立即停止办理有关证照。"));
    }
}
