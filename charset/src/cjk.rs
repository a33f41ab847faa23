//! Does a CJK reading of the bytes look like text in its language? Big5
//! bytes are valid GBK, EUC-KR and EUC-JP bytes often are too, so a clean
//! decode cannot tell these encodings apart; but only the right one turns
//! the bytes into the characters that fill running text (的, 是, の, 이, 。).
//! A wrong reading scatters over rare characters instead. This is the
//! cheap check that lets the vote trust a CJK declaration without the detector.

use std::collections::HashSet;
use std::sync::OnceLock;

use encoding_rs::{Encoding, BIG5, EUC_JP, EUC_KR, GB18030, GBK, ISO_2022_JP, SHIFT_JIS};

/// How many bytes, from the first non-ASCII byte, the check decodes.
const WINDOW: usize = 16 * 1024;

/// Below this many non-ASCII characters there is too little text to judge.
const MIN_CHARACTERS: usize = 20;

/// Frequent hanzi/kanji, simplified and traditional (Chinese and Japanese
/// text both use them): together they are a third or more of running text.
const COMMON_HAN: &str = "的一是不了在人有我他这這个個们們中来來上大为為和国國地到以说說时時要就出会會\
    可也你对對生能而子那得于於着著下自之年过過发發后後作里裡用道行所然家种種事成方多经經么麼去法学學\
    如都同现現当當没沒动動面起看定天分还還进進好小部其些主样樣理心她本前开開但因只从從想实實日月新\
    文高长長三已明见見问問力外电電通信网網站此将將重两兩点點最业業它公司市无無全间間关關工程与與\
    内內名美教提期手题題合体體入次制品女元更加政治情报報员員区區东東西南北水书書气氣物今回四五\
    见者场場社员意本语語京業化画畫店车車体話言思記话记会社事務員料金週間見出円時代入私";

/// Frequent Hangul syllables.
const COMMON_HANGUL: &str = "이다는의에하고을가한지로서기사리자어대도를수정일아나시인게으있해보부주제\
    전요라들구스장상과여면적그우니화성국되세만까위것말내경원동없문학무회할했거저후간였년중오방모생소\
    신관실비연계데와안분마때개용공음행조금발물당습법감더터치명드히업역선미통르체심야월날습니다";

fn set(chars: &'static str) -> HashSet<char> {
    chars.chars().filter(|c| !c.is_whitespace()).collect()
}

fn common_han() -> &'static HashSet<char> {
    static SET: OnceLock<HashSet<char>> = OnceLock::new();
    SET.get_or_init(|| set(COMMON_HAN))
}

fn common_hangul() -> &'static HashSet<char> {
    static SET: OnceLock<HashSet<char>> = OnceLock::new();
    SET.get_or_init(|| set(COMMON_HANGUL))
}

/// The language whose text an encoding carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Chinese,
    Japanese,
    Korean,
}

fn language(encoding: &'static Encoding) -> Option<Language> {
    if encoding == GBK || encoding == GB18030 || encoding == BIG5 {
        Some(Language::Chinese)
    } else if encoding == SHIFT_JIS || encoding == EUC_JP || encoding == ISO_2022_JP {
        Some(Language::Japanese)
    } else if encoding == EUC_KR {
        Some(Language::Korean)
    } else {
        None
    }
}

/// The share of non-ASCII characters, in `encoding`'s reading of the bytes,
/// that are the common characters of its language (plus CJK punctuation);
/// `None` for a non-CJK encoding or too little text.
pub fn common_share(encoding: &'static Encoding, bytes: &[u8]) -> Option<f64> {
    let (common, total) = common_count(encoding, bytes)?;
    (total >= MIN_CHARACTERS).then(|| common as f64 / total as f64)
}

/// True when `encoding` reads the bytes as too few non-ASCII characters for
/// [`common_share`] to judge (fewer than `MIN_CHARACTERS`), but every one
/// of them is a common character or CJK punctuation: a short page whose
/// only CJK is a `。` or two. Foreign bytes read as CJK land on one of
/// these few hundred characters among twenty thousand now and then, not
/// every time.
pub fn few_and_all_common(encoding: &'static Encoding, bytes: &[u8]) -> bool {
    common_count(encoding, bytes)
        .is_some_and(|(common, total)| total > 0 && total < MIN_CHARACTERS && common == total)
}

/// The common and all non-ASCII characters of `encoding`'s reading of the
/// window; `None` for a non-CJK encoding.
fn common_count(encoding: &'static Encoding, bytes: &[u8]) -> Option<(usize, usize)> {
    let language = language(encoding)?;
    let start = Encoding::ascii_valid_up_to(bytes);
    let end = start.saturating_add(WINDOW).min(bytes.len());
    let (text, _) = encoding.decode_without_bom_handling(&bytes[start..end]);
    let (mut total, mut common) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_ascii()) {
        total += 1;
        let is_common = match c {
            '\u{3000}'..='\u{303F}' | '\u{FF01}'..='\u{FF5E}' => true,
            '\u{3040}'..='\u{30FF}' => language == Language::Japanese,
            '\u{AC00}'..='\u{D7A3}' => language == Language::Korean && common_hangul().contains(&c),
            _ => language != Language::Korean && common_han().contains(&c),
        };
        common += usize::from(is_common);
    }
    Some((common, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHINESE: &str = "我們的網站提供最新的新聞和評論。今天的天氣很好，很多人出去散步。這是一個關於文化和歷史的討論。";
    const JAPANESE: &str =
        "日本語のページです。ひらがなとカタカナと漢字が混ざっています。今日は天気がいいですね。";
    const KOREAN: &str =
        "한국어 웹 페이지입니다. 오늘 날씨가 아주 좋습니다. 우리는 공원에 가서 산책을 했습니다.";

    #[test]
    fn right_reading_is_common_text_wrong_reading_is_not() {
        for (encoding, text) in [(BIG5, CHINESE), (EUC_KR, KOREAN), (EUC_JP, JAPANESE)] {
            let (bytes, _, _) = encoding.encode(text);
            let right = common_share(encoding, &bytes).expect("enough text");
            let wrong = common_share(GBK, &bytes).expect("enough text");
            assert!(
                right > 0.4 && wrong < right / 2.0,
                "{}: right {right}, wrong {wrong}",
                encoding.name()
            );
        }
    }

    #[test]
    fn a_lone_full_stop_is_few_and_common() {
        let (big5, _, _) = BIG5.encode("Hello world。");
        assert!(few_and_all_common(BIG5, &big5));
        let (latin, _, _) = encoding_rs::WINDOWS_1252.encode("Le fédéral");
        assert!(!few_and_all_common(GBK, &latin));
        let (chinese, _, _) = BIG5.encode(CHINESE);
        assert!(!few_and_all_common(BIG5, &chinese));
    }

    #[test]
    fn non_cjk_or_short_text_has_no_share() {
        assert_eq!(common_share(encoding_rs::WINDOWS_1251, b"\xE0\xE1"), None);
        assert_eq!(common_share(GBK, b"\xB5\xC4"), None);
    }
}
