//! The letter model of the Latin tie-breaker ([`super::language`]): how
//! often each language writes each letter, per
//! [`super::language::LETTER_MODEL_SCALE`] letters, and its commonest words
//! that hold a non-ASCII letter, counted from the tuned half of the gettext
//! translations installed on a Debian machine.
//!
//! The counts are data, in the files of `letter_model/` beside this one
//! (compiled in, read at first use), generated, not edited:
//! `LETTER_MODEL_WRITE=1 cargo test -p evaluation --test letter_model -- --ignored`.
//! - `punctuation.tsv`: a symbol and its count, over every language;
//! - `letters.tsv`: a language, a letter and its count;
//! - `words.tsv`: a language and a word (as `language::word_key` folds
//!   it), the most widespread first.
//!
//! Lines are tab-separated; blank lines and `#` comments are skipped.
//! Symbols and letters stand by character within a language, languages by
//! code, the words' languages in the letters' order.

use std::sync::OnceLock;

/// The punctuation file's name (for errors and its generator).
pub const PUNCTUATION_FILE: &str = "punctuation.tsv";
/// The letters file's name.
pub const LETTERS_FILE: &str = "letters.tsv";
/// The words file's name.
pub const WORDS_FILE: &str = "words.tsv";

/// One language of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    /// Its code (`pl`).
    pub code: &'static str,
    /// (letter, occurrences per scale), by letter (for binary search).
    pub letters: Vec<(char, u32)>,
    /// Its commonest words that hold a non-ASCII letter, the most
    /// widespread first.
    pub words: Vec<&'static str>,
}

/// The model: what the files say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// (symbol, occurrences per scale) over every language, by symbol.
    pub punctuation: Vec<(char, u32)>,
    /// The languages, by code.
    pub languages: Vec<Language>,
}

/// A line of the model's files that does not say what it should.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("charset/src/letter_model/{file}:{line}: {reason}")]
pub struct ModelError {
    pub file: &'static str,
    pub line: usize,
    pub reason: String,
}

/// The model of the files in the source.
pub fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        parse(
            include_str!("letter_model/punctuation.tsv"),
            include_str!("letter_model/letters.tsv"),
            include_str!("letter_model/words.tsv"),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The model the three files' texts give.
pub fn parse(
    punctuation: &'static str,
    letters: &'static str,
    words: &'static str,
) -> Result<Model, ModelError> {
    let mut symbols = Vec::new();
    for (at, [symbol, count]) in rows(PUNCTUATION_FILE, punctuation)? {
        symbols.push(counted(at, symbol, count, symbols.last())?);
    }
    let mut languages: Vec<Language> = Vec::new();
    for (at, [code, letter, count]) in rows(LETTERS_FILE, letters)? {
        let language = match languages.last_mut() {
            Some(last) if last.code == code => last,
            last => {
                if last.is_some_and(|l| l.code >= code) {
                    return Err(at.error(format!("language {code} out of order")));
                }
                languages.push(Language {
                    code,
                    letters: Vec::new(),
                    words: Vec::new(),
                });
                languages.last_mut().expect("pushed")
            }
        };
        let entry = counted(at, letter, count, language.letters.last())?;
        language.letters.push(entry);
    }
    let mut next = 0;
    for (at, [code, word]) in rows(WORDS_FILE, words)? {
        // The words' languages come in the letters' order, each once.
        while languages.get(next).is_some_and(|l| l.code != code) {
            next += 1;
        }
        let Some(language) = languages.get_mut(next) else {
            return Err(at.error(format!(
                "language {code} is not in {LETTERS_FILE}, or out of order"
            )));
        };
        language.words.push(word);
    }
    Ok(Model {
        punctuation: symbols,
        languages,
    })
}

/// Where a line stands, for its errors.
#[derive(Clone, Copy)]
struct At {
    file: &'static str,
    line: usize,
}

impl At {
    fn error(self, reason: String) -> ModelError {
        ModelError {
            file: self.file,
            line: self.line,
            reason,
        }
    }
}

/// The lines of `text` (the file `file`) as `N` tab-separated fields each.
fn rows<const N: usize>(
    file: &'static str,
    text: &'static str,
) -> Result<Vec<(At, [&'static str; N])>, ModelError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = At { file, line: i + 1 };
        let fields: Vec<&'static str> = line.split('\t').collect();
        let fields = <[&str; N]>::try_from(fields)
            .map_err(|f| at.error(format!("{} fields, not {N}: {line:?}", f.len())))?;
        out.push((at, fields));
    }
    Ok(out)
}

/// A (character, count) entry, which must stand after `previous`.
fn counted(
    at: At,
    symbol: &str,
    count: &str,
    previous: Option<&(char, u32)>,
) -> Result<(char, u32), ModelError> {
    let mut chars = symbol.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(at.error(format!("{symbol:?} is not one character")));
    };
    let count = count
        .parse()
        .map_err(|_| at.error(format!("{count:?} is not a count")))?;
    if previous.is_some_and(|&(p, _)| p >= c) {
        return Err(at.error(format!("{symbol:?} out of order")));
    }
    Ok((c, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_give_the_model() {
        let model = model();
        assert_eq!(model.punctuation.len(), 11);
        assert_eq!(model.punctuation[0], ('«', 165));
        assert_eq!(model.languages.len(), 33);
        let afrikaans = &model.languages[0];
        assert_eq!(afrikaans.code, "af");
        assert_eq!(afrikaans.letters[..2], [('a', 6526), ('b', 1746)]);
        let letters: usize = model.languages.iter().map(|l| l.letters.len()).sum();
        let words: usize = model.languages.iter().map(|l| l.words.len()).sum();
        assert_eq!((letters, words), (1204, 7873));
    }

    #[test]
    fn a_bad_line_is_named_by_file_and_line() {
        let error = |letters: &'static str| parse("", letters, "").unwrap_err().to_string();
        assert_eq!(
            error("# header\naf\ta\t1\naf\tb\n"),
            "charset/src/letter_model/letters.tsv:3: 2 fields, not 3: \"af\\tb\""
        );
        assert_eq!(
            error("af\tb\t1\naf\ta\t2\n"),
            "charset/src/letter_model/letters.tsv:2: \"a\" out of order"
        );
        assert_eq!(
            error("af\tab\t1\n"),
            "charset/src/letter_model/letters.tsv:1: \"ab\" is not one character"
        );
        assert_eq!(
            parse("", "af\ta\t1\n", "pl\tż\n").unwrap_err().to_string(),
            "charset/src/letter_model/words.tsv:1: language pl is not in letters.tsv, or out of order"
        );
    }
}
