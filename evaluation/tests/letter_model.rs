//! Generates the letter model of the charset vote's Latin tie-breaker
//! (`charset/src/letter_model.rs`) from the tuned half of the
//! gettext translations ([`evaluation::translations`]), and checks that the
//! file in the source is the one they give:
//!
//! ```text
//! cargo test -p evaluation --test letter_model -- --ignored
//! LETTER_MODEL_WRITE=1 cargo test -p evaluation --test letter_model -- --ignored
//! ```
//!
//! Ignored by default: it needs the catalogues under `/usr/share/locale`
//! (or `CHARSET_TRANSLATIONS_DIR`), which CI need not have.

use std::collections::BTreeMap;
use std::fmt::Write;

use charset::language::{is_separator, model_symbol, word_key, Symbol, LETTER_MODEL_SCALE};
use encoding_rs::Encoding;
use evaluation::translations::{self, LANGUAGES};

/// Symbols rarer than this per [`LETTER_MODEL_SCALE`] are left out (the
/// tie-breaker gives them the floor).
const MIN_PER_SCALE: u64 = 2;

/// A word is listed when at least this many catalogues of its language
/// hold it ...
const MIN_WORD_DOCUMENTS: u64 = 2;
/// ... and among the commonest this many.
const WORDS_PER_LANGUAGE: usize = 300;

fn generate() -> String {
    let root = translations::locale_dir();
    let documents = translations::documents_within(&root, usize::MAX)
        .unwrap_or_else(|e| panic!("{e}: the letter model cannot be generated"));
    let mut counts: BTreeMap<&str, BTreeMap<char, u64>> = BTreeMap::new();
    // Per language: in how many documents each word holding a non-ASCII
    // letter occurs.
    let mut words: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
    let mut punctuation: BTreeMap<char, u64> = BTreeMap::new();
    let mut symbols = 0u64;
    for document in documents.iter().filter(|d| !d.held) {
        let Some(&(_, encodings)) = LANGUAGES.iter().find(|(l, _)| *l == document.language) else {
            continue;
        };
        let Some(first) = encodings
            .first()
            .and_then(|label| Encoding::for_label(label.as_bytes()))
        else {
            continue;
        };
        if !charset::language::LATIN_FAMILY.contains(&first) {
            continue;
        }
        let language = counts.entry(document.language).or_default();
        let mut in_document = std::collections::BTreeSet::new();
        for line in document.text.lines() {
            let line = translations::representable(line, first);
            in_document.extend(line.split(is_separator).filter_map(word_key));
            for c in line.chars() {
                match model_symbol(c) {
                    Some(Symbol::Letter(letter)) => {
                        *language.entry(letter).or_default() += 1;
                        symbols += 1;
                    }
                    Some(Symbol::Punctuation(p)) => {
                        *punctuation.entry(p).or_default() += 1;
                        symbols += 1;
                    }
                    Some(Symbol::Other) | None => {}
                }
            }
        }
        let listed = words.entry(document.language).or_default();
        for word in in_document {
            *listed.entry(word).or_default() += 1;
        }
    }
    let mut out = String::from(
        "//! The letter model of the Latin tie-breaker ([`super::language`]): how\n\
         //! often each language writes each letter, per\n\
         //! [`super::language::LETTER_MODEL_SCALE`] letters, counted from the tuned\n\
         //! half of the gettext translations installed on a Debian machine.\n\
         //! Generated, do not edit:\n\
         //! `LETTER_MODEL_WRITE=1 cargo test -p evaluation --test letter_model -- --ignored`.\n\n",
    );
    out.push_str(
        "/// Punctuation, counted over every language, per scale characters.\n\
         #[rustfmt::skip]\npub const PUNCTUATION: &[(char, u32)] = &[",
    );
    write_table(&mut out, punctuation.iter(), symbols);
    out.push_str("\n];\n\n");
    out.push_str("/// Per language: its code and (letter, occurrences per scale), by letter.\n");
    out.push_str("#[rustfmt::skip]\npub const LANGUAGES: &[(&str, &[(char, u32)])] = &[\n");
    for (language, letters) in &counts {
        let total: u64 = letters.values().sum();
        write!(out, "    (\"{language}\", &[").ok();
        write_table(&mut out, letters.iter(), total);
        out.push_str("\n    ]),\n");
    }
    out.push_str("];\n\n");
    out.push_str(
        "/// Per language (in the order of [`LANGUAGES`]): its commonest words that\n\
         /// hold a non-ASCII letter, as `language::word_key` folds them (those in\n\
         /// at least two catalogues, the most widespread first).\n",
    );
    out.push_str("#[rustfmt::skip]\npub const WORDS: &[(&str, &[&str])] = &[\n");
    for language in counts.keys() {
        let mut listed: Vec<(&String, &u64)> = words
            .get(language)
            .map(|w| w.iter().filter(|(_, &n)| n >= MIN_WORD_DOCUMENTS).collect())
            .unwrap_or_default();
        listed.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        listed.truncate(WORDS_PER_LANGUAGE);
        write!(out, "    (\"{language}\", &[").ok();
        for (i, (word, _)) in listed.iter().enumerate() {
            out.push_str(if i % 8 == 0 { "\n        " } else { " " });
            write!(out, "{word:?},").ok();
        }
        out.push_str("\n    ]),\n");
    }
    out.push_str("];\n");
    out
}

/// `(char, count per scale)` entries, eight a line, leaving out the rare ones.
fn write_table<'a>(
    out: &mut String,
    counts: impl Iterator<Item = (&'a char, &'a u64)>,
    total: u64,
) {
    let per_scale = |count: u64| count * u64::from(LETTER_MODEL_SCALE) / total.max(1);
    for (i, (c, count)) in counts
        .filter(|(_, &count)| per_scale(count) >= MIN_PER_SCALE)
        .enumerate()
    {
        out.push_str(if i % 8 == 0 { "\n        " } else { " " });
        write!(out, "({c:?}, {}),", per_scale(*count)).ok();
    }
}

#[test]
#[ignore = "needs the gettext catalogues under /usr/share/locale; regenerates the letter model"]
fn letter_model_is_generated_from_the_translations() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../charset/src/letter_model.rs");
    let generated = generate();
    if std::env::var_os("LETTER_MODEL_WRITE").is_some() {
        std::fs::write(&path, &generated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let in_source = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        in_source == generated,
        "{} is not what the translations give: regenerate it with LETTER_MODEL_WRITE=1",
        path.display()
    );
}
