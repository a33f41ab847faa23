//! trafilatura (Python) on the same pages, in the same run, as a user would call it: the
//! script `evaluation/trafilatura/extract.py` run by the Python of a virtualenv.
//!
//! The virtualenv is `$TRAFILATURA_PYTHON` when set (an existing one's `python`), else a
//! throwaway one made in a temporary directory (`python3 -m venv`, then `pip install` of
//! [`PIP_PACKAGES`]), removed when the run ends. trafilatura is no project dependency.
//! `$TRAFILATURA_OUTPUT=FILE` keeps its output: read from `FILE` when it exists, else
//! written there (for reruns of our side only; delete it to run trafilatura again).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::sets::Page;
use super::Output;

/// What the throwaway virtualenv installs: trafilatura at the version measured, and the
/// lxml cleaner its readability fallback imports (a separate package since lxml 5.2).
pub const PIP_PACKAGES: &[&str] = &["trafilatura==2.3.1", "lxml_html_clean==0.4.6"];

/// The runner script, beside this crate's sources.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("trafilatura/extract.py")
}

/// A Python with trafilatura, and the throwaway directory to remove after it.
pub struct Python {
    pub python: PathBuf,
    throwaway: Option<PathBuf>,
}

impl Drop for Python {
    fn drop(&mut self) {
        if let Some(dir) = &self.throwaway {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Python {
    /// `$TRAFILATURA_PYTHON`, or a throwaway virtualenv made now (progress on stderr).
    pub fn get() -> Result<Python, String> {
        if let Some(python) = std::env::var_os("TRAFILATURA_PYTHON") {
            return Ok(Python {
                python: python.into(),
                throwaway: None,
            });
        }
        let dir = std::env::temp_dir().join(format!(
            "extraction-bench-venv-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        // Removed on every way out from here on.
        let made = Python {
            python: dir.join("venv/bin/python"),
            throwaway: Some(dir.clone()),
        };
        eprintln!(
            "== making a throwaway virtualenv with {} in {}",
            PIP_PACKAGES.join(" "),
            dir.display()
        );
        run(Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(dir.join("venv")))?;
        run(Command::new(&made.python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PIP_PACKAGES))?;
        Ok(made)
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?}: {status}"))
    }
}

/// trafilatura's output on one page and the time of its call.
#[derive(Debug, Clone, Default)]
pub struct Extracted {
    pub output: Output,
    pub ms: f64,
    /// The exception trafilatura raised, if it did.
    pub error: Option<String>,
}

/// trafilatura over `pages`, by [`Page::key`]; from `$TRAFILATURA_OUTPUT` when that file is
/// there.
pub fn extract_all(pages: &[Page]) -> Result<HashMap<String, Extracted>, String> {
    let saved = std::env::var_os("TRAFILATURA_OUTPUT").map(PathBuf::from);
    if let Some(file) = saved.as_ref().filter(|f| f.exists()) {
        eprintln!("== trafilatura's output read from {}", file.display());
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        return parse(text.lines());
    }
    let python = Python::get()?;
    eprintln!("== trafilatura on {} pages", pages.len());
    let mut child = Command::new(&python.python)
        .arg(script())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", python.python.display()))?;
    let mut stdin = child.stdin.take().ok_or("trafilatura: no stdin")?;
    let jobs: String = pages
        .iter()
        .map(|p| {
            serde_json::json!({"key": p.key(), "path": p.path, "url": p.url}).to_string() + "\n"
        })
        .collect();
    // Written from another thread, so that neither pipe fills while the other waits.
    let writer = std::thread::spawn(move || stdin.write_all(jobs.as_bytes()));
    let stdout = child.stdout.take().ok_or("trafilatura: no stdout")?;
    let lines: Vec<String> = BufReader::new(stdout)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("trafilatura output: {e}"))?;
    writer
        .join()
        .map_err(|_| "trafilatura: the writer panicked")?
        .map_err(|e| format!("trafilatura input: {e}"))?;
    let status = child.wait().map_err(|e| format!("trafilatura: {e}"))?;
    if !status.success() {
        return Err(format!("trafilatura's runner failed: {status}"));
    }
    if let Some(file) = saved {
        std::fs::write(&file, lines.join("\n") + "\n")
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let out = parse(lines.iter().map(String::as_str))?;
    if out.len() != pages.len() {
        return Err(format!(
            "trafilatura answered for {} of {} pages",
            out.len(),
            pages.len()
        ));
    }
    Ok(out)
}

fn parse<'a>(lines: impl Iterator<Item = &'a str>) -> Result<HashMap<String, Extracted>, String> {
    let mut out = HashMap::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("trafilatura output: {e}"))?;
        let s = |k: &str| v[k].as_str().map(str::to_string);
        let key = s("key").ok_or("trafilatura output: a line without a key")?;
        out.insert(
            key,
            Extracted {
                output: Output {
                    text: s("text").unwrap_or_default(),
                    title: s("title"),
                    date: s("date"),
                    author: s("author"),
                },
                ms: v["ms"].as_f64().unwrap_or(0.0),
                error: s("error"),
            },
        );
    }
    Ok(out)
}
