//! The word lists of the rules, kept as data: `src/words/<module>.txt` holds the lists of
//! one module, each under a `[NAME]` line (the name of its static in the code), one entry a
//! line, matched as written, in the order written; blank lines and `#` comments are
//! skipped. The files are compiled in (`include_str!`) and a list is split out at first use.
//! A `[NAME]` the code asks for and its file lacks fails the build ([`WordsFile::list`]);
//! a malformed line fails the test that reads every file.
//!
//! Lists whose entries hold spaces at their ends (separators, joining words, label
//! prefixes: `" | "`, `" und "`, `"By "`) stay in the code, where the quotes show the
//! spaces.

use std::ops::Deref;
use std::sync::OnceLock;

/// One module's words file.
#[derive(Clone, Copy)]
pub struct WordsFile {
    /// Its name under `src/words/`, for errors.
    name: &'static str,
    text: &'static str,
}

/// One list of a words file: its entries, as a slice.
pub struct Words {
    file: WordsFile,
    /// The `[NAME]` it stands under.
    name: &'static str,
    entries: OnceLock<Vec<&'static str>>,
}

/// A line of a words file that is none of a `[NAME]`, an entry under one, a comment or
/// blank.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("extractor/src/words/{file}:{line}: {reason}")]
pub struct WordsError {
    pub file: &'static str,
    pub line: usize,
    pub reason: String,
}

impl WordsFile {
    /// The file `name` of text `text` (`include_str!("words/<name>")`).
    pub const fn new(name: &'static str, text: &'static str) -> WordsFile {
        WordsFile { name, text }
    }

    /// The list under `[name]`: a build error when the file has no such line.
    pub const fn list(self, name: &'static str) -> Words {
        assert!(
            has_heading(self.text, name),
            "a words file lacks a [NAME] the code asks for"
        );
        Words {
            file: self,
            name,
            entries: OnceLock::new(),
        }
    }

    /// Every list of the file, by `[NAME]`, in the file's order.
    pub fn lists(self) -> Result<Vec<(&'static str, Vec<&'static str>)>, WordsError> {
        let mut lists: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for (i, line) in self.text.lines().enumerate() {
            let error = |reason: String| WordsError {
                file: self.name,
                line: i + 1,
                reason,
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(name) = heading(line) {
                if lists.iter().any(|(n, _)| *n == name) {
                    return Err(error(format!("[{name}] a second time")));
                }
                lists.push((name, Vec::new()));
            } else if line.trim() != line {
                return Err(error(format!(
                    "{line:?} has spaces at its ends (such lists stay in the code)"
                )));
            } else if let Some((_, entries)) = lists.last_mut() {
                entries.push(line);
            } else {
                return Err(error(format!("{line:?} stands under no [NAME]")));
            }
        }
        Ok(lists)
    }
}

impl Deref for Words {
    type Target = [&'static str];

    fn deref(&self) -> &[&'static str] {
        self.entries.get_or_init(|| {
            let lists = self.file.lists().unwrap_or_else(|e| panic!("{e}"));
            lists
                .into_iter()
                .find_map(|(name, entries)| (name == self.name).then_some(entries))
                .unwrap_or_default()
        })
    }
}

/// The `NAME` of a `[NAME]` line.
fn heading(line: &str) -> Option<&str> {
    line.strip_prefix('[')?.strip_suffix(']')
}

/// Whether `text` has the line `[name]` (a `const fn`, so that the build checks it).
const fn has_heading(text: &str, name: &str) -> bool {
    let (text, name) = (text.as_bytes(), name.as_bytes());
    let line_len = name.len() + 2;
    let mut start = 0;
    while start + line_len <= text.len() {
        let end = start + line_len;
        if text[start] == b'[' && text[end - 1] == b']' && (end == text.len() || text[end] == b'\n')
        {
            let mut i = 0;
            while i < name.len() && text[start + 1 + i] == name[i] {
                i += 1;
            }
            if i == name.len() {
                return true;
            }
        }
        // On to the next line.
        while start < text.len() && text[start] != b'\n' {
            start += 1;
        }
        start += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_words_file_reads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/words");
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).expect("src/words") {
            let path = entry.expect("an entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
            let text = std::fs::read_to_string(&path).expect("UTF-8 text");
            let file = WordsFile::new(name.to_string().leak(), text.leak());
            let lists = file.lists().unwrap_or_else(|e| panic!("{e}"));
            assert!(
                lists.iter().all(|(_, entries)| !entries.is_empty()),
                "{name}: an empty list"
            );
            files += 1;
        }
        assert!(files >= 7, "{files} files in {}", dir.display());
    }

    #[test]
    fn a_list_is_its_lines_under_its_name() {
        const FILE: WordsFile = WordsFile::new("t.txt", "# a comment\n[A]\nx\ny y\n\n[B]\nz\n");
        static A: Words = FILE.list("A");
        static B: Words = FILE.list("B");
        assert_eq!(*A, ["x", "y y"]);
        assert_eq!(*B, ["z"]);
        assert!(!has_heading("[AB]\n", "A"));
        assert!(has_heading("x\n[A]", "A"));
    }

    #[test]
    fn a_bad_line_is_named_by_file_and_line() {
        let error = |text: &'static str| WordsFile::new("t.txt", text).lists().unwrap_err();
        assert_eq!(
            error("[A]\nx\n by\n").to_string(),
            "extractor/src/words/t.txt:3: \" by\" has spaces at its ends (such lists stay in the code)"
        );
        assert_eq!(
            error("x\n").to_string(),
            "extractor/src/words/t.txt:1: \"x\" stands under no [NAME]"
        );
        assert_eq!(error("[A]\nx\n[A]\n").line, 3);
    }
}
