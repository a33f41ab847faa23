//! Generates the letter model of the charset vote's Latin tie-breaker
//! (the files of `charset/src/letter_model/`) from the tuned half of the
//! gettext translations ([`evaluation::translations`]), and checks that the
//! files in the source are the ones they give:
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
use charset::letter_model::{LETTERS_FILE, PUNCTUATION_FILE, WORDS_FILE};
use evaluation::translations;

/// Symbols rarer than this per [`LETTER_MODEL_SCALE`] are left out (the
/// tie-breaker gives them the floor).
const MIN_PER_SCALE: u64 = 2;

/// A word is listed when at least this many catalogues of its language
/// hold it ...
const MIN_WORD_DOCUMENTS: u64 = 2;
/// ... and among the commonest this many.
const WORDS_PER_LANGUAGE: usize = 300;

fn generate() -> [(&'static str, String); 3] {
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
        let Some(&first) = translations::encodings_of(document.language).first() else {
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
    let header = |what: &str| {
        format!(
            "# {what}\n\
             # Generated, do not edit: LETTER_MODEL_WRITE=1 cargo test -p evaluation --test letter_model -- --ignored\n"
        )
    };
    let mut punctuation_tsv = header(
        "Punctuation, counted over every language: character, occurrences per scale; by character.",
    );
    write_counts(&mut punctuation_tsv, "", punctuation.iter(), symbols);
    let mut letters_tsv =
        header("Per language: language, letter, occurrences per scale; by language, then letter.");
    for (language, letters) in &counts {
        let total: u64 = letters.values().sum();
        write_counts(
            &mut letters_tsv,
            &format!("{language}\t"),
            letters.iter(),
            total,
        );
    }
    let mut words_tsv =
        header("Per language: language, word; by language, the most widespread words first.");
    for language in counts.keys() {
        let mut listed: Vec<(&String, &u64)> = words
            .get(language)
            .map(|w| w.iter().filter(|(_, &n)| n >= MIN_WORD_DOCUMENTS).collect())
            .unwrap_or_default();
        listed.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        listed.truncate(WORDS_PER_LANGUAGE);
        for (word, _) in listed {
            writeln!(words_tsv, "{language}\t{word}").ok();
        }
    }
    [
        (PUNCTUATION_FILE, punctuation_tsv),
        (LETTERS_FILE, letters_tsv),
        (WORDS_FILE, words_tsv),
    ]
}

/// A `prefix`, a character and its count per scale, a line each, leaving
/// out the rare ones.
fn write_counts<'a>(
    out: &mut String,
    prefix: &str,
    counts: impl Iterator<Item = (&'a char, &'a u64)>,
    total: u64,
) {
    let per_scale = |count: u64| count * u64::from(LETTER_MODEL_SCALE) / total.max(1);
    for (c, count) in counts.filter(|(_, &count)| per_scale(count) >= MIN_PER_SCALE) {
        writeln!(out, "{prefix}{c}\t{}", per_scale(*count)).ok();
    }
}

#[test]
#[ignore = "needs the gettext catalogues under /usr/share/locale; regenerates the letter model"]
fn letter_model_is_generated_from_the_translations() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../charset/src/letter_model");
    for (file, generated) in generate() {
        let path = dir.join(file);
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
}
