//! Files written under an exclusive `flock`, named `<name><open suffix>`
//! while written: the text segments here, the `warc` crate's files. A lock
//! dies with its process, so a writer starting in the directory knows the
//! files a dead writer left by their free lock ([`orphans`]) and recovers
//! them; a live writer's are left alone.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use fs4::FileExt;

/// A file a dead writer left open, opened for reading and writing and
/// locked by the caller, which recovers it.
#[derive(Debug)]
pub struct Orphan {
    pub path: PathBuf,
    /// Its name without the open suffix.
    pub stem: String,
    pub file: File,
}

/// Every file of `dir` named `*{open_suffix}` whose writer is dead (its lock
/// is free). An error comes with the path it is about: `dir`, or a file.
pub fn orphans(dir: &Path, open_suffix: &str) -> Result<Vec<Orphan>, (PathBuf, io::Error)> {
    let at = |path: &Path| {
        let path = path.to_path_buf();
        move |e: io::Error| (path, e)
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(at(dir))? {
        let path = entry.map_err(at(dir))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(open_suffix) else {
            continue;
        };
        let stem = stem.to_string();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(at(&path))?;
        match FileExt::try_lock(&file) {
            Ok(()) => {}
            // Its writer lives: not ours.
            Err(fs4::TryLockError::WouldBlock) => continue,
            Err(fs4::TryLockError::Error(e)) => return Err((path, e)),
        }
        out.push(Orphan { path, stem, file });
    }
    Ok(out)
}

/// `fsync` of a directory, so a rename survives a machine crash; best effort.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
