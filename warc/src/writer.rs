//! Rolling WARC files: a `warcinfo` record at the start of each, a size
//! cap, names unique per writer process, and recovery of the files a
//! killed process left open.
//!
//! A file being written is named `<name>.warc.gz.open` and holds an
//! exclusive `flock` for as long as its writer lives; it is renamed to
//! `<name>.warc.gz` when it reaches [`WriterSettings::max_bytes`] (checked
//! before each write, so a file is at most one page's records over the
//! cap) or when the writer closes. A writer starting in the directory takes
//! every `.open` file whose lock it can get (its writer is dead: a lock
//! dies with its process, also across containers sharing a volume on one
//! host), cuts it after its last complete gzip member and renames it
//! ([`recover_dir`]). Each record is one member and is written in one
//! `write`, so what a `kill -9` tears is the last member only.
//!
//! Durability: [`RollingWriter::write`] returns once the records are in the
//! kernel (a killed process loses nothing that was written); `fsync` runs
//! at every roll and close and, for the file being written, every
//! [`WriterSettings::sync_interval`] from [`SharedWriter`]'s thread, so a
//! machine crash loses at most that interval.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fs4::FileExt;
use texts::open_files::{orphans, sync_dir, Orphan};

use crate::record::{Record, RecordType};

/// Default [`WriterSettings::max_bytes`]: 1 GB, the size the WARC
/// standard's annex suggests and Heritrix writes.
pub const DEFAULT_MAX_BYTES: u64 = 1_000_000_000;
/// Default [`WriterSettings::sync_interval`].
pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_secs(1);
/// The suffix of a finished file.
pub const SUFFIX: &str = ".warc.gz";
/// The suffix of a file being written.
pub const OPEN_SUFFIX: &str = ".warc.gz.open";

/// Writing or recovering a WARC file failed.
#[derive(Debug, thiserror::Error)]
#[error("WARC file {path}: {source}")]
pub struct WarcError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> WarcError + '_ {
    move |source| WarcError {
        path: path.to_path_buf(),
        source,
    }
}

/// Where and how the files are written.
#[derive(Debug, Clone)]
pub struct WriterSettings {
    pub dir: PathBuf,
    /// The start of every file name.
    pub prefix: String,
    /// A file is closed and a new one started once it holds this many bytes.
    pub max_bytes: u64,
    /// How often the file being written is `fsync`ed ([`SharedWriter`]).
    pub sync_interval: Duration,
    /// The `software` of the `warcinfo` records.
    pub software: String,
}

impl WriterSettings {
    pub fn new(dir: impl Into<PathBuf>) -> WriterSettings {
        WriterSettings {
            dir: dir.into(),
            prefix: "crawler".into(),
            max_bytes: DEFAULT_MAX_BYTES,
            sync_interval: DEFAULT_SYNC_INTERVAL,
            software: format!("dedup-crawler/{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// A file left `.open` by a dead writer, and what recovery did with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The `.warc.gz` it became, or `None` when it held no complete record
    /// and was deleted.
    pub path: Option<PathBuf>,
    /// Bytes of the torn tail cut off.
    pub cut: u64,
}

/// The file being written.
struct OpenFile {
    file: File,
    /// `<name>.warc.gz.open`.
    path: PathBuf,
    /// `<name>.warc.gz`, once closed.
    done: PathBuf,
    bytes: u64,
    warcinfo_id: String,
    /// Written since the last fsync.
    dirty: bool,
}

/// Writes records to rolling files in one directory.
pub struct RollingWriter {
    settings: WriterSettings,
    current: Option<OpenFile>,
    /// Files started by this writer: part of every name.
    serial: u64,
    /// `<host>-<pid>`: part of every name, so writers never collide.
    origin: String,
}

impl RollingWriter {
    /// A writer in `settings.dir` (created if missing), after recovering
    /// the files dead writers left open there.
    pub fn open(settings: WriterSettings) -> Result<(RollingWriter, Vec<Recovered>), WarcError> {
        std::fs::create_dir_all(&settings.dir).map_err(at(&settings.dir))?;
        let recovered = recover_dir(&settings.dir)?;
        let writer = RollingWriter {
            origin: format!("{}-{}", host_name(), std::process::id()),
            settings,
            current: None,
            serial: 0,
        };
        Ok((writer, recovered))
    }

    /// Writes the records of one page to one file (a `WARC-Warcinfo-ID`
    /// added to each), rolling to a new file first when the current one is
    /// full. Returns once they are in the kernel. On a failed write the
    /// file is cut back to its last record.
    pub fn write(&mut self, records: Vec<Record>) -> Result<(), WarcError> {
        if self
            .current
            .as_ref()
            .is_some_and(|f| f.bytes >= self.settings.max_bytes)
        {
            self.close()?;
        }
        if self.current.is_none() {
            self.current = Some(self.start_file()?);
        }
        let Some(file) = self.current.as_mut() else {
            unreachable!("a file was just started")
        };
        let mut buf = Vec::new();
        for mut rec in records {
            rec.set_field("WARC-Warcinfo-ID", &file.warcinfo_id);
            buf.extend_from_slice(&rec.to_gzip_member().map_err(at(&file.path))?);
        }
        if let Err(e) = file.file.write_all(&buf) {
            // A torn member would make every later one unreadable.
            let _ = file.file.set_len(file.bytes);
            let _ = file.file.seek(SeekFrom::Start(file.bytes));
            return Err(at(&file.path)(e));
        }
        file.bytes += buf.len() as u64;
        file.dirty = true;
        Ok(())
    }

    /// `fsync`s the file being written, if anything was written since.
    pub fn sync(&mut self) -> Result<(), WarcError> {
        if let Some(file) = self.current.as_mut().filter(|f| f.dirty) {
            file.file.sync_data().map_err(at(&file.path))?;
            file.dirty = false;
        }
        Ok(())
    }

    /// Closes the file being written: `fsync`, then renamed to `.warc.gz`.
    pub fn close(&mut self) -> Result<(), WarcError> {
        let Some(file) = self.current.take() else {
            return Ok(());
        };
        file.file.sync_all().map_err(at(&file.path))?;
        std::fs::rename(&file.path, &file.done).map_err(at(&file.path))?;
        sync_dir(&self.settings.dir);
        tracing::info!(file = %file.done.display(), bytes = file.bytes, "WARC file closed");
        Ok(())
    }

    /// The path of the file being written, if any.
    pub fn current_path(&self) -> Option<&Path> {
        self.current.as_ref().map(|f| f.path.as_path())
    }

    /// A new `.open` file, locked, starting with its `warcinfo` record.
    fn start_file(&mut self) -> Result<OpenFile, WarcError> {
        self.serial += 1;
        let name = format!(
            "{}-{}-{:05}-{}",
            self.settings.prefix,
            timestamp_now(),
            self.serial,
            self.origin
        );
        let done = self.settings.dir.join(format!("{name}{SUFFIX}"));
        let path = self.settings.dir.join(format!("{name}{OPEN_SUFFIX}"));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(at(&path))?;
        FileExt::try_lock(&file).map_err(|e| at(&path)(e.into()))?;
        let info = warcinfo(&self.settings, &format!("{name}{SUFFIX}"));
        let warcinfo_id = info.id.clone();
        let member = info.to_gzip_member().map_err(at(&path))?;
        file.write_all(&member).map_err(at(&path))?;
        sync_dir(&self.settings.dir);
        Ok(OpenFile {
            file,
            path,
            done,
            bytes: member.len() as u64,
            warcinfo_id,
            dirty: true,
        })
    }
}

impl Drop for RollingWriter {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!("closing the WARC file: {e}");
        }
    }
}

/// The `warcinfo` record at the start of the file called `filename`.
fn warcinfo(settings: &WriterSettings, filename: &str) -> Record {
    let fields = format!(
        "software: {}\r\nformat: WARC File Format 1.1\r\n\
         conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
         hostname: {}\r\n",
        settings.software,
        host_name()
    );
    Record::new(RecordType::Warcinfo, &pipeline::messages::now_rfc3339())
        .field("WARC-Filename", filename)
        .block("application/warc-fields", fields.into_bytes(), None)
}

/// A [`RollingWriter`] for concurrent tasks, with a thread that `fsync`s
/// the file being written every [`WriterSettings::sync_interval`] (it ends
/// with the last handle).
#[derive(Clone)]
pub struct SharedWriter {
    inner: Arc<Mutex<RollingWriter>>,
}

impl SharedWriter {
    pub fn new(writer: RollingWriter) -> SharedWriter {
        let interval = writer.settings.sync_interval;
        let inner = Arc::new(Mutex::new(writer));
        let weak: Weak<Mutex<RollingWriter>> = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("warc-sync".into())
            .spawn(move || loop {
                std::thread::sleep(interval);
                let Some(writer) = weak.upgrade() else { break };
                let mut w = writer.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(e) = w.sync() {
                    tracing::error!("{e}");
                }
            })
            .ok();
        SharedWriter { inner }
    }

    /// [`RollingWriter::write`], from any thread (blocks while another
    /// write runs).
    pub fn write(&self, records: Vec<Record>) -> Result<(), WarcError> {
        self.lock().write(records)
    }

    /// [`RollingWriter::close`]: the next write starts a new file.
    pub fn close(&self) -> Result<(), WarcError> {
        self.lock().close()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RollingWriter> {
        // A panic while holding the lock leaves the writer usable: each
        // write cuts its file back to its last record when it fails.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A [`SharedWriter`] in `dir` with files of at most `max_bytes`, after
/// recovering the files dead writers left open there (each logged).
pub fn open_shared(dir: &Path, max_bytes: u64) -> Result<SharedWriter, WarcError> {
    let settings = WriterSettings {
        max_bytes,
        ..WriterSettings::new(dir)
    };
    let (writer, recovered) = RollingWriter::open(settings)?;
    tracing::info!(
        dir = %dir.display(),
        max_bytes,
        recovered = recovered.len(),
        "writing WARC files"
    );
    Ok(SharedWriter::new(writer))
}

/// Recovers every `.open` file in `dir` whose writer is dead (its lock is
/// free); files of live writers are left alone.
pub fn recover_dir(dir: &Path) -> Result<Vec<Recovered>, WarcError> {
    let mut done = Vec::new();
    let dead = orphans(dir, OPEN_SUFFIX).map_err(|(path, source)| WarcError { path, source })?;
    for Orphan { path, file, .. } in dead {
        let recovered = recover_file(file, &path)?;
        tracing::warn!(
            file = %path.display(),
            cut = recovered.cut,
            "recovered a WARC file a dead writer left open"
        );
        done.push(recovered);
    }
    Ok(done)
}

/// Cuts `file` (at `path`, `*.warc.gz.open`) after its last complete gzip
/// member and renames it `*.warc.gz`; deletes it when no member is complete.
fn recover_file(mut file: File, path: &Path) -> Result<Recovered, WarcError> {
    let len = file.metadata().map_err(at(path))?.len();
    file.seek(SeekFrom::Start(0)).map_err(at(path))?;
    let good = complete_members(BufReader::new(&file)).map_err(at(path))?;
    if good == 0 {
        std::fs::remove_file(path).map_err(at(path))?;
        return Ok(Recovered {
            path: None,
            cut: len,
        });
    }
    if good < len {
        file.set_len(good).map_err(at(path))?;
    }
    file.sync_all().map_err(at(path))?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".open"))
        .ok_or_else(|| at(path)(io::Error::other("not a .open file name")))?;
    let done = path.with_file_name(name);
    std::fs::rename(path, &done).map_err(at(path))?;
    if let Some(dir) = path.parent() {
        sync_dir(dir);
    }
    Ok(Recovered {
        path: Some(done),
        cut: len - good,
    })
}

/// The length of the longest prefix of `input` made of complete gzip
/// members (each inflated to its end and its CRC checked).
pub fn complete_members(input: impl BufRead) -> io::Result<u64> {
    let mut input = Counted {
        inner: input,
        at: 0,
    };
    let mut good = 0;
    loop {
        if input.fill_buf()?.is_empty() {
            return Ok(good);
        }
        let mut member = flate2::bufread::GzDecoder::new(&mut input);
        if io::copy(&mut member, &mut io::sink()).is_err() {
            return Ok(good);
        }
        good = input.at;
    }
}

/// A reader that counts what its user consumed.
struct Counted<R> {
    inner: R,
    at: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.at += amt as u64;
        self.inner.consume(amt);
    }
}

/// This machine's name for file names: letters, digits, `.` and `-` only.
fn host_name() -> String {
    pipeline::worker::host_name_as(
        |c| (c.is_ascii_alphanumeric() || c == '.' || c == '-').then_some(c),
        "host",
    )
}

/// Now as `YYYYMMDDhhmmssmmm` (UTC), for file names.
fn timestamp_now() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let date = pipeline::messages::rfc3339_from_unix(now.as_secs() as i64);
    let digits: String = date.chars().filter(char::is_ascii_digit).collect();
    format!("{digits}{:03}", now.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::new_record_id;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "warc-{name}-{}",
            new_record_id()[10..18].to_owned()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn page(n: usize) -> Vec<Record> {
        vec![
            Record::new(RecordType::Metadata, "2026-11-25T17:00:00Z").block(
                "application/json",
                format!("{{\"n\":{n},\"pad\":\"{}\"}}", "x".repeat(n % 7 * 100)).into_bytes(),
                None,
            ),
        ]
    }

    fn members(path: &Path) -> Vec<String> {
        let bytes = std::fs::read(path).unwrap();
        let mut out = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut out)
            .unwrap();
        out.split("WARC/1.1\r\n")
            .skip(1)
            .map(str::to_string)
            .collect()
    }

    fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_str().unwrap().ends_with(suffix))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn complete_members_stop_at_a_torn_one() {
        let a = page(1)[0].to_gzip_member().unwrap();
        let b = page(2)[0].to_gzip_member().unwrap();
        let whole = [a.clone(), b.clone()].concat();
        assert_eq!(complete_members(&whole[..]).unwrap(), whole.len() as u64);
        for cut in [1, 10, b.len() - 4, b.len() - 1] {
            let torn = &whole[..whole.len() - cut];
            assert_eq!(complete_members(torn).unwrap(), a.len() as u64, "cut {cut}");
        }
        assert_eq!(complete_members(&b"garbage"[..]).unwrap(), 0);
        assert_eq!(complete_members(&b""[..]).unwrap(), 0);
    }

    #[test]
    fn files_roll_at_the_cap_each_with_its_warcinfo() {
        let dir = temp_dir("roll");
        let mut settings = WriterSettings::new(&dir);
        settings.max_bytes = 2_000;
        let (mut w, recovered) = RollingWriter::open(settings).unwrap();
        assert!(recovered.is_empty());
        for n in 0..40 {
            w.write(page(n)).unwrap();
            assert!(w
                .current_path()
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with(OPEN_SUFFIX));
        }
        drop(w);
        assert!(files(&dir, OPEN_SUFFIX).is_empty());
        let done = files(&dir, SUFFIX);
        assert!(done.len() > 2, "{done:?}");
        let mut seen = 0;
        for f in &done {
            let recs = members(f);
            assert!(recs[0].starts_with("WARC-Type: warcinfo\r\n"));
            let info_id = recs[0]
                .lines()
                .find_map(|l| l.strip_prefix("WARC-Record-ID: "))
                .unwrap()
                .to_string();
            for r in &recs[1..] {
                assert!(r.contains(&format!("WARC-Warcinfo-ID: {info_id}\r\n")));
                seen += 1;
            }
            let name = f.file_name().unwrap().to_str().unwrap();
            assert!(recs[0].contains(&format!("WARC-Filename: {name}\r\n")));
            assert!(
                name.starts_with("crawler-") && name.contains(&format!("-{}", std::process::id()))
            );
        }
        assert_eq!(seen, 40);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_killed_writers_open_file_is_cut_to_its_last_record_and_closed() {
        let dir = temp_dir("recover");
        let (mut w, _) = RollingWriter::open(WriterSettings::new(&dir)).unwrap();
        for n in 0..5 {
            w.write(page(n)).unwrap();
        }
        let open = w.current_path().unwrap().to_path_buf();
        // What a kill -9 leaves: the file open (no rename), a torn record
        // at its end. The writer is forgotten (no close, lock released as
        // a dead process's would be, by closing its descriptor).
        let torn = page(99)[0].to_gzip_member().unwrap();
        let whole_len = std::fs::metadata(&open).unwrap().len();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&open)
            .unwrap()
            .write_all(&torn[..torn.len() / 2])
            .unwrap();
        let file = w.current.take().unwrap();
        drop(file);
        std::mem::forget(w);
        // Another live writer's open file is left alone.
        let (live, _) = RollingWriter::open(WriterSettings::new(&dir)).unwrap();
        let mut live = live;
        live.write(page(7)).unwrap();
        let live_open = live.current_path().unwrap().to_path_buf();

        let recovered = recover_dir(&dir).unwrap();
        // `open()` of `live` already recovered the dead file: nothing left.
        assert!(recovered.is_empty());
        assert!(live_open.exists(), "a live writer's file was taken");
        let done = PathBuf::from(open.to_str().unwrap().strip_suffix(".open").unwrap());
        assert!(!open.exists());
        assert_eq!(std::fs::metadata(&done).unwrap().len(), whole_len);
        let recs = members(&done);
        assert_eq!(recs.len(), 6); // warcinfo and five pages
        drop(live);
        assert!(files(&dir, OPEN_SUFFIX).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_open_file_without_a_complete_record_is_deleted() {
        let dir = temp_dir("empty");
        let path = dir.join(format!("crawler-x-00001-h-1{OPEN_SUFFIX}"));
        std::fs::write(&path, [0x1f, 0x8b, 8, 0]).unwrap();
        let recovered = recover_dir(&dir).unwrap();
        assert_eq!(recovered, vec![Recovered { path: None, cut: 4 }]);
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
