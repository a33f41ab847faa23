//! # texts: the stored documents in append-only segment files
//!
//! With texts in files (`CRAWLER_TEXT_DIR`, `crawler run --state DIR`),
//! contentseen writes every stored document, in full, as one JSON line
//! into **segment files**, and keeps in the store only a compact record
//! and the document's [`Location`]. The files are the user's: a segment is
//! a plain zstd file of JSON lines (`zstdcat <dir>/<ns>/*.jsonl.zst*` is an
//! export of the crawl), and they outlive the crawl and its store.
//!
//! - A segment is `<dir>/<namespace>/seg-<n>.jsonl.zst`, `n` a number the
//!   caller allocates (contentseen: `INCR segseq`, unique across writers
//!   on a shared volume). While written it is `….jsonl.zst.open` and holds
//!   an exclusive `flock`; it is renamed when it reaches
//!   [`Settings::max_bytes`] or its writer closes.
//! - It is a sequence of zstd **frames** (each with its content checksum),
//!   each holding the lines of one group commit ([`Writer::append`]): the
//!   lines handed in while the last frame was written, up to
//!   [`Settings::frame_bytes`] or [`Settings::frame_wait`]. A line's
//!   [`Location`] is its segment, its frame's offset and length, and its
//!   index in the frame: a read decompresses one frame ([`read`]).
//! - [`Writer::append`] returns once the frame is in the kernel (a killed
//!   process loses nothing written; `fsync` every
//!   [`Settings::sync_interval`], at each roll and at close), so the store
//!   never records a location that is not in the file.
//! - A writer killed mid-frame leaves a torn tail: the next writer opening
//!   the directory takes every `.open` file whose lock it gets (its writer
//!   is dead: [`open_files`], which the `warc` crate's files share), cuts
//!   it after its last whole frame and renames it ([`recover_dir`]). Lines
//!   of a torn frame were never recorded; their documents come back (the
//!   message is redelivered) and are written again.
//!
//! Consumes and produces no message; touches no store key (the caller
//! allocates segment numbers).

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs4::FileExt;
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

pub mod open_files;

use open_files::{sync_dir, Orphan};

/// The suffix of a finished segment.
pub const SUFFIX: &str = ".jsonl.zst";
/// The suffix of a segment being written.
pub const OPEN_SUFFIX: &str = ".jsonl.zst.open";
/// The zstd level of the frames (zstd's default).
pub const LEVEL: i32 = 3;

/// Where a document's line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Location {
    pub segment: u32,
    /// The frame's offset in the segment, and its compressed length.
    pub offset: u64,
    pub len: u32,
    /// The line's index in the frame.
    pub line: u32,
}

/// Writing, reading or recovering a segment failed.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error("text segment {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("text segment {path}: frame at {offset} ({len} bytes) does not decompress: {reason}")]
    Frame {
        path: PathBuf,
        offset: u64,
        len: u32,
        reason: String,
    },
    #[error("text segment {path}: frame at {offset} has no line {line}")]
    NoLine {
        path: PathBuf,
        offset: u64,
        line: u32,
    },
    #[error("text segment {0}: not found (is the text directory the one the crawl wrote to?)")]
    Missing(PathBuf),
    #[error("the text writer has stopped: {0}")]
    Stopped(String),
    #[error("allocating a segment number: {0}")]
    Number(String),
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> TextError + '_ {
    move |source| TextError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// How the segments are written.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The text directory; segments go to `<dir>/<namespace>/`.
    pub dir: PathBuf,
    pub namespace: String,
    /// A segment is closed and a new one started past this many bytes.
    pub max_bytes: u64,
    /// A frame is written once its lines reach this many bytes...
    pub frame_bytes: usize,
    /// ...or this long after its first line came, whichever is first.
    pub frame_wait: Duration,
    /// How often the segment being written is `fsync`ed.
    pub sync_interval: Duration,
}

/// Default [`Settings::max_bytes`]: 256 MB.
pub const DEFAULT_MAX_BYTES: u64 = 256 << 20;
/// Default [`Settings::frame_bytes`]: 64 KB of lines, about a dozen news
/// articles, so that zstd sees a site's repeated phrasing within a frame.
pub const DEFAULT_FRAME_BYTES: usize = 64 << 10;
/// Default [`Settings::frame_wait`].
pub const DEFAULT_FRAME_WAIT: Duration = Duration::from_millis(10);

impl Settings {
    pub fn new(dir: impl Into<PathBuf>, namespace: &str) -> Settings {
        Settings {
            dir: dir.into(),
            namespace: namespace.to_string(),
            max_bytes: DEFAULT_MAX_BYTES,
            frame_bytes: DEFAULT_FRAME_BYTES,
            frame_wait: DEFAULT_FRAME_WAIT,
            sync_interval: Duration::from_secs(1),
        }
    }

    /// `<dir>/<namespace>`.
    pub fn folder(&self) -> PathBuf {
        folder(&self.dir, &self.namespace)
    }
}

/// The folder of a namespace's segments.
pub fn folder(dir: &Path, namespace: &str) -> PathBuf {
    // A namespace is a key prefix: keep it one path component.
    let safe: String = namespace
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == '\0' {
                '_'
            } else {
                c
            }
        })
        .collect();
    dir.join(if safe == "." || safe == ".." {
        format!("_{safe}")
    } else {
        safe
    })
}

/// The path of segment `n`, finished or not (the finished name when
/// neither exists).
pub fn segment_path(dir: &Path, namespace: &str, n: u32) -> PathBuf {
    let base = folder(dir, namespace);
    let done = base.join(format!("seg-{n}{SUFFIX}"));
    if done.exists() {
        return done;
    }
    let open = base.join(format!("seg-{n}{OPEN_SUFFIX}"));
    if open.exists() {
        open
    } else {
        done
    }
}

/// Allocates the next segment number (contentseen: `INCR segseq`).
pub type NextSegment = Arc<dyn Fn() -> BoxFuture<'static, Result<u32, String>> + Send + Sync>;

/// One line to write, and who waits for its location.
type Pending = (Vec<u8>, oneshot::Sender<Result<Location, String>>);

/// The segment writer of one process: a task that writes frames (group
/// commit). Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    lines: mpsc::Sender<Pending>,
    folder: PathBuf,
}

/// The segment being written.
struct Segment {
    file: File,
    number: u32,
    open_path: PathBuf,
    done_path: PathBuf,
    bytes: u64,
    dirty: bool,
}

impl Segment {
    fn start(folder: &Path, number: u32) -> Result<Segment, TextError> {
        let open_path = folder.join(format!("seg-{number}{OPEN_SUFFIX}"));
        let done_path = folder.join(format!("seg-{number}{SUFFIX}"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&open_path)
            .map_err(at(&open_path))?;
        FileExt::try_lock(&file).map_err(|e| at(&open_path)(e.into()))?;
        let bytes = file.metadata().map_err(at(&open_path))?.len();
        Ok(Segment {
            file,
            number,
            open_path,
            done_path,
            bytes,
            dirty: false,
        })
    }

    fn sync(&mut self) -> Result<(), TextError> {
        if self.dirty {
            self.file.sync_data().map_err(at(&self.open_path))?;
            self.dirty = false;
        }
        Ok(())
    }

    fn close(mut self) -> Result<(), TextError> {
        self.sync()?;
        std::fs::rename(&self.open_path, &self.done_path).map_err(at(&self.open_path))?;
        sync_dir(self.done_path.parent().unwrap_or(Path::new(".")));
        Ok(())
    }
}

impl Writer {
    /// A writer in `settings.folder()` (created if missing), after
    /// recovering the segments dead writers left open there. Its task
    /// runs until every clone of the writer is dropped, then closes the
    /// segment.
    pub async fn open(settings: Settings, next: NextSegment) -> Result<Writer, TextError> {
        let folder = settings.folder();
        std::fs::create_dir_all(&folder).map_err(at(&folder))?;
        for r in recover_dir(&folder)? {
            tracing::warn!(segment = %r.path.display(), cut = r.cut, "recovered a text segment a killed writer left open");
        }
        let (tx, rx) = mpsc::channel::<Pending>(4096);
        let writer = Writer {
            lines: tx,
            folder: folder.clone(),
        };
        tokio::spawn(run(settings, folder, next, rx));
        Ok(writer)
    }

    /// The folder its segments are in.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Writes `line` (one JSON document, without its newline) and returns
    /// where it is, once its frame is in the kernel.
    pub async fn append(&self, line: Vec<u8>) -> Result<Location, TextError> {
        let (tx, rx) = oneshot::channel();
        self.lines
            .send((line, tx))
            .await
            .map_err(|_| TextError::Stopped("its task ended".into()))?;
        rx.await
            .map_err(|_| TextError::Stopped("its task ended".into()))?
            .map_err(TextError::Stopped)
    }
}

/// The writer's task: takes the lines waiting, writes them as one frame,
/// tells each its location.
async fn run(
    settings: Settings,
    folder: PathBuf,
    next: NextSegment,
    mut rx: mpsc::Receiver<Pending>,
) {
    let mut segment: Option<Segment> = None;
    let mut last_sync = Instant::now();
    while let Some(first) = rx.recv().await {
        let started = Instant::now();
        let mut batch = vec![first];
        let mut bytes = batch[0].0.len();
        while bytes < settings.frame_bytes {
            let left = settings.frame_wait.saturating_sub(started.elapsed());
            match tokio::time::timeout(left, rx.recv()).await {
                Ok(Some(p)) => {
                    bytes += p.0.len() + 1;
                    batch.push(p);
                }
                Ok(None) | Err(_) => break,
            }
        }
        let result = write_frame(&settings, &folder, &next, &mut segment, &batch).await;
        if last_sync.elapsed() >= settings.sync_interval {
            if let Some(s) = segment.as_mut() {
                if let Err(e) = s.sync() {
                    tracing::warn!(error = %e, "fsync of a text segment failed");
                }
            }
            last_sync = Instant::now();
        }
        match result {
            Ok((number, offset, len)) => {
                for (i, (_, tx)) in batch.into_iter().enumerate() {
                    let _ = tx.send(Ok(Location {
                        segment: number,
                        offset,
                        len,
                        line: i as u32,
                    }));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "writing a text frame failed");
                // The segment may be torn: start a new one next time.
                segment = None;
                for (_, tx) in batch {
                    let _ = tx.send(Err(e.to_string()));
                }
            }
        }
    }
    if let Some(s) = segment {
        if let Err(e) = s.close() {
            tracing::warn!(error = %e, "closing a text segment failed");
        }
    }
}

/// Writes one frame of `batch`'s lines (rolling the segment first when
/// needed): its segment number, offset and length.
async fn write_frame(
    settings: &Settings,
    folder: &Path,
    next: &NextSegment,
    segment: &mut Option<Segment>,
    batch: &[Pending],
) -> Result<(u32, u64, u32), TextError> {
    if segment
        .as_ref()
        .is_some_and(|s| s.bytes >= settings.max_bytes)
    {
        if let Some(s) = segment.take() {
            s.close()?;
        }
    }
    if segment.is_none() {
        let n = next().await.map_err(TextError::Number)?;
        *segment = Some(Segment::start(folder, n)?);
    }
    let Some(s) = segment.as_mut() else {
        return Err(TextError::Stopped("no segment".into()));
    };
    let mut plain = Vec::with_capacity(batch.iter().map(|(l, _)| l.len() + 1).sum());
    for (line, _) in batch {
        plain.extend_from_slice(line);
        plain.push(b'\n');
    }
    let frame = compress(&plain).map_err(at(&s.open_path))?;
    let offset = s.bytes;
    // One write: a kill tears at most this frame.
    s.file.write_all(&frame).map_err(at(&s.open_path))?;
    s.bytes += frame.len() as u64;
    s.dirty = true;
    Ok((s.number, offset, frame.len() as u32))
}

/// One zstd frame of `plain`, with its content checksum.
fn compress(plain: &[u8]) -> io::Result<Vec<u8>> {
    let mut enc = zstd::stream::Encoder::new(Vec::with_capacity(plain.len() / 3), LEVEL)?;
    enc.include_checksum(true)?;
    enc.include_contentsize(true)?;
    enc.set_pledged_src_size(Some(plain.len() as u64))?;
    enc.write_all(plain)?;
    enc.finish()
}

/// The lines of one frame.
fn decompress(frame: &[u8]) -> io::Result<Vec<u8>> {
    zstd::stream::decode_all(frame)
}

/// Reads the line at `loc` from the segments of `namespace` under `dir`.
pub fn read(dir: &Path, namespace: &str, loc: &Location) -> Result<Vec<u8>, TextError> {
    let mut reader = Reader::new(dir, namespace);
    reader.read(loc)
}

/// Reads lines by location, keeping the last frame read (an export reads
/// the lines of a frame one after another).
pub struct Reader {
    dir: PathBuf,
    namespace: String,
    /// The frame held.
    frame: Option<Frame>,
}

/// A frame read: its segment and offset, and its lines.
type Frame = ((u32, u64), Vec<Vec<u8>>);

impl Reader {
    pub fn new(dir: &Path, namespace: &str) -> Reader {
        Reader {
            dir: dir.to_path_buf(),
            namespace: namespace.to_string(),
            frame: None,
        }
    }

    /// The line at `loc`.
    pub fn read(&mut self, loc: &Location) -> Result<Vec<u8>, TextError> {
        let key = (loc.segment, loc.offset);
        if self.frame.as_ref().map(|(k, _)| *k) != Some(key) {
            let path = segment_path(&self.dir, &self.namespace, loc.segment);
            let mut file = match File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(TextError::Missing(path))
                }
                Err(e) => return Err(at(&path)(e)),
            };
            file.seek(SeekFrom::Start(loc.offset)).map_err(at(&path))?;
            let mut frame = vec![0u8; loc.len as usize];
            file.read_exact(&mut frame).map_err(at(&path))?;
            let plain = decompress(&frame).map_err(|e| TextError::Frame {
                path: path.clone(),
                offset: loc.offset,
                len: loc.len,
                reason: e.to_string(),
            })?;
            let lines = plain.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            self.frame = Some((key, lines));
        }
        let lines = self.frame.as_ref().map(|(_, l)| l);
        lines
            .and_then(|l| l.get(loc.line as usize))
            .cloned()
            .ok_or_else(|| TextError::NoLine {
                path: segment_path(&self.dir, &self.namespace, loc.segment),
                offset: loc.offset,
                line: loc.line,
            })
    }
}

/// A segment left `.open` by a dead writer, and what recovery did with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The segment it became (or the `.open` file, deleted when it held
    /// no whole frame).
    pub path: PathBuf,
    /// Bytes of the torn tail cut off.
    pub cut: u64,
}

/// Recovers every `.open` segment in `folder` whose writer is dead (its
/// lock is free): cut after its last whole frame, renamed.
pub fn recover_dir(folder: &Path) -> Result<Vec<Recovered>, TextError> {
    let orphans = match open_files::orphans(folder, OPEN_SUFFIX) {
        Ok(o) => o,
        Err((path, e)) if e.kind() == io::ErrorKind::NotFound && path == folder => {
            return Ok(Vec::new())
        }
        Err((path, e)) => return Err(at(&path)(e)),
    };
    let mut out = Vec::new();
    for Orphan { path, stem, file } in orphans {
        let cut = cut_torn_tail(&file, &path)?;
        let done = path.with_file_name(format!("{stem}{SUFFIX}"));
        std::fs::rename(&path, &done).map_err(at(&path))?;
        out.push(Recovered { path: done, cut });
    }
    sync_dir(folder);
    Ok(out)
}

/// Cuts `file` after its last whole frame; the bytes cut.
fn cut_torn_tail(mut file: &File, path: &Path) -> Result<u64, TextError> {
    let mut data = Vec::new();
    file.read_to_end(&mut data).map_err(at(path))?;
    let whole = whole_frames(&data);
    let cut = data.len() as u64 - whole;
    if cut > 0 {
        file.set_len(whole).map_err(at(path))?;
        file.sync_all().map_err(at(path))?;
    }
    Ok(cut)
}

/// The length of the run of whole, readable frames at the start of `data`.
pub fn whole_frames(data: &[u8]) -> u64 {
    let mut at = 0usize;
    while at < data.len() {
        let Ok(len) = zstd::zstd_safe::find_frame_compressed_size(&data[at..]) else {
            break;
        };
        let end = at + len;
        if end > data.len() || decompress(&data[at..end]).is_err() {
            break;
        }
        at = end;
    }
    at as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("texts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn counter() -> NextSegment {
        let n = Arc::new(AtomicU32::new(0));
        Arc::new(move || {
            let n = n.clone();
            Box::pin(async move { Ok(n.fetch_add(1, Ordering::SeqCst) + 1) })
        })
    }

    #[tokio::test]
    async fn lines_come_back_from_their_location_and_segments_roll() {
        let dir = temp_dir("roll");
        let mut settings = Settings::new(&dir, "ns");
        settings.max_bytes = 2000;
        let w = Writer::open(settings, counter()).await.unwrap();
        let mut locs = Vec::new();
        for i in 0..200 {
            let line = format!("{{\"n\":{i},\"text\":\"{}\"}}", "word ".repeat(i % 50));
            locs.push((line.clone(), w.append(line.into_bytes()).await.unwrap()));
        }
        // Lines appended at once share frames.
        let many: Vec<_> = (0..20)
            .map(|i| {
                let w = w.clone();
                tokio::spawn(async move { w.append(format!("together {i}").into_bytes()).await })
            })
            .collect();
        let mut frames = std::collections::HashSet::new();
        for h in many {
            let loc = h.await.unwrap().unwrap();
            frames.insert((loc.segment, loc.offset));
        }
        assert!(frames.len() < 20, "{} frames for 20 lines", frames.len());
        assert!(locs.last().unwrap().1.segment > 1, "segments roll");
        let mut reader = Reader::new(&dir, "ns");
        for (line, loc) in &locs {
            assert_eq!(reader.read(loc).unwrap(), line.as_bytes());
        }
        drop(w);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_torn_segment_is_cut_to_its_last_whole_frame() {
        let dir = temp_dir("torn");
        let folder = folder(&dir, "ns");
        std::fs::create_dir_all(&folder).unwrap();
        let a = compress(b"one\ntwo\n").unwrap();
        let b = compress(b"three\n").unwrap();
        let mut data = a.clone();
        data.extend_from_slice(&b[..b.len() - 3]);
        let open = folder.join(format!("seg-7{OPEN_SUFFIX}"));
        std::fs::write(&open, &data).unwrap();
        let got = recover_dir(&folder).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].cut, (b.len() - 3) as u64);
        let done = folder.join(format!("seg-7{SUFFIX}"));
        assert_eq!(std::fs::read(&done).unwrap(), a);
        let loc = Location {
            segment: 7,
            offset: 0,
            len: a.len() as u32,
            line: 1,
        };
        assert_eq!(read(&dir, "ns", &loc).unwrap(), b"two");
        // A missing segment says so.
        let gone = Location { segment: 8, ..loc };
        assert!(matches!(
            read(&dir, "ns", &gone),
            Err(TextError::Missing(_))
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}
