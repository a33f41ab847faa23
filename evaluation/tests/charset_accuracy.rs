//! Accuracy floors of the charset vote on the labelled sets in
//! `shared/bench/charset/` (a test fails when they are absent: a floor that
//! is not checked is not a floor).
//! Floors only: the benchmark measures speed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use charset::{detector, prescan, vote, Signals};
use evaluation::charset::{corpus_encoding, decodes_right, without_declarations, LyingPage};

/// Every lying scenario must be decoded right this often.
const LYING_FLOOR: f64 = 0.995;

fn charset_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/bench/charset");
    assert!(
        dir.is_dir(),
        "{} is absent: the charset floors cannot be checked (it sits beside the project, in ../shared/bench)",
        dir.display()
    );
    Some(dir)
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    evaluation::sources::sorted_entries(dir).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_lying_scenario_is_decoded_right() {
    let Some(dir) = charset_dir() else { return };
    let lying = dir.join("lying");
    let labels = std::fs::read_to_string(lying.join("labels.tsv")).expect("labels.tsv is readable");
    let mut scenarios: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for page in labels.lines().filter_map(LyingPage::parse) {
        let bytes = std::fs::read(lying.join(&page.file)).expect("a listed page is readable");
        let truth = page
            .truth_encoding()
            .expect("the true encoding is a WHATWG label");
        let decision = vote(&bytes, &Signals::from_header(page.header.as_deref()));
        let right = decodes_right(&bytes, decision.encoding(), truth);
        let entry = scenarios.entry(page.scenario.clone()).or_default();
        entry.0 += usize::from(right);
        entry.1 += 1;
        if !right {
            wrong.push(format!(
                "{}: chose {} ({})",
                page.file, decision.encoding, decision.reason
            ));
        }
    }
    assert_eq!(scenarios.len(), 8, "eight scenarios in labels.tsv");
    for (scenario, (right, total)) in &scenarios {
        let share = *right as f64 / *total as f64;
        if scenario == "control_both_right" {
            assert_eq!(
                right, total,
                "labels right must always decode right; wrong: {wrong:?}"
            );
        }
        assert!(
            share >= LYING_FLOOR,
            "{scenario}: {right}/{total} right; wrong: {wrong:?}"
        );
    }
}

struct CorpusFile {
    label: String,
    bytes: Vec<u8>,
}

fn corpus(dir: &Path) -> Vec<CorpusFile> {
    let mut files = Vec::new();
    for folder in sorted_entries(&dir.join("corpus"))
        .into_iter()
        .filter(|p| p.is_dir())
    {
        let label = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for path in sorted_entries(&folder) {
            let bytes = std::fs::read(&path).expect("a corpus file is readable");
            files.push(CorpusFile {
                label: label.clone(),
                bytes,
            });
        }
    }
    files
}

#[test]
fn corpus_vote_is_at_least_as_accurate_as_chardetng_alone() {
    let Some(dir) = charset_dir() else { return };
    let files = corpus(&dir);
    let (mut vote_right, mut chardetng_right) = (0usize, 0usize);
    for file in &files {
        let truth = corpus_encoding(&file.label, &file.bytes)
            .expect("every corpus label maps to an encoding");
        let bytes = without_declarations(&file.bytes);
        let chosen = vote(&bytes, &Signals::default()).encoding();
        vote_right += usize::from(decodes_right(&bytes, chosen, truth));
        let guessed = detector::guess_within(&bytes, None, true, usize::MAX);
        chardetng_right += usize::from(decodes_right(&bytes, guessed, truth));
    }
    println!(
        "corpus: vote {vote_right}/{} right, chardetng alone {chardetng_right}",
        files.len()
    );
    assert!(
        vote_right >= chardetng_right,
        "vote {vote_right} < chardetng {chardetng_right} of {}",
        files.len()
    );
}

#[test]
fn corpus_pages_with_right_declarations_are_all_decoded_right() {
    let Some(dir) = charset_dir() else { return };
    let mut checked = 0;
    for file in corpus(&dir) {
        let truth = corpus_encoding(&file.label, &file.bytes)
            .expect("every corpus label maps to an encoding");
        let Some(declared) = prescan(&file.bytes) else {
            continue;
        };
        if !decodes_right(&file.bytes, declared, truth) {
            continue;
        }
        checked += 1;
        for header in [None, Some(declared.name())] {
            let decision = vote(&file.bytes, &Signals::from_header(header));
            assert!(
                decodes_right(&file.bytes, decision.encoding(), truth),
                "{} declared {} (header {header:?}): chose {} ({})",
                file.label,
                declared.name(),
                decision.encoding,
                decision.reason
            );
        }
    }
    assert!(checked > 0, "the corpus has files with right declarations");
}
