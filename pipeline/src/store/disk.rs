//! The disk store of `crawler run --state DIR`: the Redis data model
//! ([`Data`]) on an embedded key/value engine, so the stages, every
//! generic op and every script's twin run on it unchanged ([`apply`]), one
//! write transaction per [`super::Store::exec`] batch.
//!
//! # The engine: fjall, chosen by measurement
//!
//! The workload is write-heavy and mostly appends: per page about ten
//! small transactions (a URL-seen member, a URL record, a document record,
//! band-table appends, a fingerprint record, an export index entry) plus
//! the in-process bus's messages (a 200 B task, the page, the document),
//! each written when published and deleted when acked, and point lookups.
//! `cargo run --release -p pipeline --example disk_engines -- ENGINE PAGES`
//! replays that pattern as raw key/value transactions on each engine
//! (figures of 2026-11-27 on the shared 2-core machine, busy with other
//! builds; the example built alone; its fjall had a 64 MB write buffer, the
//! store has 32 MB):
//!
//! | engine | commit | pages | pages/s | disk B/page | peak RSS |
//! |---|---|---|---|---|---|
//! | fjall 2.11 (LSM, lz4) | journal to the kernel (`PersistMode::Buffer`) | 50,000 | 1,867 | 873 | 153 MB |
//! | redb 2.6 (copy-on-write B-tree) | `Durability::Eventual` | 3,000 | 29 | 4,390 | 11 MB |
//!
//! (redb's 50,000-page run had not finished after 20 minutes.) Both
//! survive `kill -9` after each commit and recover a prefix of the
//! commits; redb's commit writes its touched pages and waits on the disk,
//! where an LSM appends the commit to its journal, so fjall is 60 times
//! faster here and compresses its blocks. rusqlite was not compared (a C
//! build, and SQL text per op for a key/value model). fjall's disk figure
//! falls as compaction drops the acked messages' tombstones; at 3,000
//! pages it is still the journal (11 KB/page).
//!
//! # The layout
//!
//! Two partitions, `kv` for the crawl's state and `bus` for the in-process bus's
//! messages ([`Parts`] says why); every entry's key starts with a kind byte, then the
//! Redis key with its length (so one key's entries are one prefix):
//!
//! - `m` key: the key's kind and size: a string's bytes (`s`), a hash's,
//!   set's or sorted set's member count (`h`, `S`, `z`), a list's head and
//!   tail index (`l`). Its absence is the key's.
//! - `h` key field: a hash field's value.
//! - `s` key member: a set member (an i64, order-preserving bytes).
//! - `l` key index: a list element.
//! - `z` key member: a sorted-set member's score; `o` key score member:
//!   the same member in score order.
//!
//! Counts live in the `m` entry so that a delete knows at once when a
//! collection empties (and vanishes, as on Redis) without scanning past
//! deleted entries.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fjall::{PartitionCreateOptions, PersistMode, TxKeyspace, TxPartitionHandle, WriteTransaction};

use super::memory::{apply, glob_match, now_ms, parse_int, range_of, Data};
use super::{Op, Reply, StoreError, Stored};

/// The engine's block cache: what the store keeps of its files in memory. A cached block
/// takes about twice these bytes in the heap (its bytes and its decoded entries: a heap
/// profile of a 75,000-page `crawler run --state`, `--features heap-profiling`, held 63 MB
/// of blocks with 32 MB here). 16 MB against 32 MB, `STATE_BENCH_PAGES=30000
/// STATE_BENCH_COMPARE=0 cargo bench -p evaluation --bench state`, two runs each,
/// interleaved, 2026-11-29 on a loaded machine: peak RSS 167.9 and 170.0 against 199.3 and
/// 201.4 MB, 2.17 and 2.31 against 1.98 and 2.04 ms of CPU a page (issue 33's RSS target
/// over its speed; 2026-11-28 at 100,000 pages: 332.6 against 342.3 MB, 7% slower).
pub const CACHE_BYTES: u64 = 16 << 20;
/// The engine's memtables in all: written data not yet flushed to its files.
pub const WRITE_BUFFER_BYTES: u64 = 32 << 20;
/// The engine's journal is rotated (its memtables flushed) past this size: what the
/// journals take on disk at most (128 MB had been 6.7 KB a page of a 20,000-page crawl).
pub const JOURNAL_BYTES: u64 = 32 << 20;

/// The data blocks of the crawl's state (partition `kv`; fixed when the partition is
/// created, so a store made before keeps its 4 KB). Larger blocks compress better and
/// need fewer index entries in memory (the engine keeps a full block index for its two
/// upper levels), and a point read decompresses more. `STATE_BENCH_PAGES=100000
/// STATE_BENCH_COMPARE=0 cargo bench -p evaluation --bench state`, one run each,
/// 2026-11-28: 4 KB (the engine's default) 268.9 pages/s, 6.10 ms CPU a page, peak RSS
/// 513 MB, store 1,893 B a page; 8 KB 252.5, 6.47 ms, 435 MB, 1,376 B; 16 KB 234.5,
/// 7.19 ms, 452 MB, 1,126 B.
pub const KV_BLOCK_BYTES: u32 = 8 << 10;

/// The size compaction cuts the crawl's state's files at (on disk, compressed; the
/// engine's default is 64 MB). A file being written keeps a hash of each of its keys in
/// memory for its Bloom filter, and two compactions run at once: with 64 MB files, the
/// heap profile of the highest heap in the first 7 minutes of a 1M-page crawl
/// (`--features heap-profiling`, `prof_gdump`) held 17.5 MB in one segment writer, and the
/// peak RSS rose in short steps between 10-second samples (VmHWM 333 MB at 250,000 pages,
/// samples at most 274 MB). Not measured at 1M pages yet.
pub const KV_SEGMENT_BYTES: u32 = 16 << 20;

/// The store in a directory; cheap to clone (all share one engine).
#[derive(Clone)]
pub struct DiskStore {
    inner: Arc<Engine>,
}

/// The engine and where it is.
struct Engine {
    /// For errors.
    path: PathBuf,
    keyspace: TxKeyspace,
    parts: Parts,
    /// `<dir>/LOCK`, locked (`flock`) while this process has the store
    /// open: the engine assumes one process, so a second `crawler run` or
    /// `crawler query` on the same directory is refused, not let in to
    /// write its own journal beside the first's. The kernel releases the
    /// lock when the process ends, `kill -9` included.
    _lock: std::fs::File,
    /// What is known in memory of the committed state; held for a whole
    /// [`DiskStore::exec`], which so runs one batch at a time.
    known: std::sync::Mutex<Known>,
}

/// What the store keeps in memory of its committed state. Only this process writes
/// to the store (`_lock`), one batch at a time, so it stays true.
struct Known {
    /// Per sorted set, a score no live member is below (see [`Floors`]).
    floors: Floors,
    /// The `m` entries (counts and list ends, not strings) of the collections lately
    /// read or written ([`META_CACHE_KEYS`]).
    metas: quick_cache::unsync::Cache<String, Option<Meta>>,
}

/// How many keys' `m` entries [`Known::metas`] holds: each collection op reads its
/// key's count first, a point read through the engine's levels when not known, and
/// the keys a page touches are touched again soon (its URL record by every stage, the
/// counters' shards, the bus's queues). About 2 MB.
pub const META_CACHE_KEYS: usize = 16_384;

impl Known {
    fn new(keys: usize) -> Known {
        Known {
            floors: Floors::new(),
            metas: quick_cache::unsync::Cache::new(keys),
        }
    }
}

/// Where a score-ordered read of a sorted set may start. An LSM keeps a deleted entry as a
/// tombstone until compaction reaches its last level, and a read in key order walks past
/// every tombstone in its range: a set whose members keep moving to later scores (the
/// politeness schedule: each release moves its host on) would leave one tombstone per move
/// below its live members, and each `ZRANGEBYSCORE -inf now` would walk them all, ever more
/// of them (a 1M-page crawl slowed to 25 pages/s). So each set has a floor, a score below
/// which it has no live member: raised to the first live score a read from the floor finds,
/// lowered by a `ZADD` below it. A set without a floor (after the store is opened) starts at
/// the lowest score.
type Floors = std::collections::HashMap<String, i64>;

/// Locks `<dir>/LOCK` for this process, or says who holds the directory.
fn lock_dir(dir: &Path) -> Result<std::fs::File, StoreError> {
    let path = dir.join("LOCK");
    let err = |error: String| StoreError::Disk {
        path: dir.display().to_string(),
        error,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| err(format!("{}: {e}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(err(
            "in use by another process (a `crawler run --state` or a `crawler` subcommand reading \
             the same directory): wait until it ends, or give another directory"
                .into(),
        )),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(err(format!("locking {}: {e}", path.display())))
        }
    }
}

impl DiskStore {
    /// Opens (or creates) the store in `dir`, recovering what was committed
    /// before a crash.
    pub fn open(dir: &Path) -> Result<DiskStore, StoreError> {
        let err = |e: fjall::Error| StoreError::Disk {
            path: dir.display().to_string(),
            error: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Disk {
            path: dir.display().to_string(),
            error: e.to_string(),
        })?;
        let lock = lock_dir(dir)?;
        let keyspace = fjall::Config::new(dir)
            .cache_size(CACHE_BYTES)
            .max_write_buffer_size(WRITE_BUFFER_BYTES)
            .max_journaling_size(JOURNAL_BYTES)
            .open_transactional()
            .map_err(err)?;
        let parts = Parts {
            kv: keyspace
                .open_partition(
                    "kv",
                    PartitionCreateOptions::default()
                        .block_size(KV_BLOCK_BYTES)
                        .compaction_strategy(fjall::compaction::Strategy::Leveled(
                            fjall::compaction::Leveled {
                                target_size: KV_SEGMENT_BYTES,
                                ..Default::default()
                            },
                        )),
                )
                .map_err(err)?,
            bus: keyspace
                .open_partition("bus", PartitionCreateOptions::default())
                .map_err(err)?,
        };
        move_bus_entries(&keyspace, &parts).map_err(err)?;
        Ok(DiskStore {
            inner: Arc::new(Engine {
                path: dir.to_path_buf(),
                keyspace,
                parts,
                _lock: lock,
                known: std::sync::Mutex::new(Known::new(META_CACHE_KEYS)),
            }),
        })
    }

    /// Whether `other` is this store (a clone of it: one engine).
    pub fn same_as(&self, other: &DiskStore) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    fn error(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Disk {
            path: self.inner.path.display().to_string(),
            error: e.to_string(),
        }
    }

    /// Runs `ops` in order in one write transaction: all of them are
    /// committed (to the kernel: a killed process loses none of it) or, on
    /// an error, none.
    pub fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        let mut known = self
            .inner
            .known
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut txn = self.txn(&known);
        let now = now_ms();
        let mut replies = Vec::with_capacity(ops.len());
        for op in ops {
            replies.push(apply(&mut txn, op, now)?);
            if let Some(e) = txn.failed.take() {
                return Err(self.error(e));
            }
        }
        let Txn {
            tx,
            wrote,
            moved_floors,
            metas,
            ..
        } = txn;
        if wrote {
            tx.durability(Some(PersistMode::Buffer))
                .commit()
                .map_err(|e| self.error(e))?;
        }
        // The floors and counts this batch saw or wrote hold for what it committed
        // (nothing else committed meanwhile: the lock is held).
        known.floors.extend(moved_floors.into_inner());
        for (key, meta) in metas.into_inner() {
            // A string's value is not kept: the key is forgotten.
            if let Some(Meta::Str(_)) = meta {
                known.metas.remove(&key);
            } else {
                known.metas.insert(key, meta);
            }
        }
        Ok(replies)
    }

    /// A new transaction, on what `known` knows of the committed state.
    fn txn<'f>(&self, known: &'f Known) -> Txn<'_, 'f> {
        Txn {
            tx: self.inner.keyspace.write_tx(),
            parts: &self.inner.parts,
            failed: None,
            wrote: false,
            known,
            moved_floors: RefCell::new(Floors::new()),
            metas: RefCell::default(),
        }
    }

    /// Writes everything committed to the disk itself (`fsync`), for a clean
    /// stop.
    pub fn sync(&self) -> Result<(), StoreError> {
        self.inner
            .keyspace
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.error(e))
    }

    /// Every key matching `pattern` (a scan of the key entries: tests and
    /// `crawler reset` only).
    pub fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        let tx = self.inner.keyspace.read_tx();
        let mut keys = Vec::new();
        for part in self.inner.parts.both() {
            for item in tx.prefix(part, [META]) {
                let (k, _) = item.map_err(|e| self.error(e))?;
                if let Some(key) = decode_key(&k[1..]) {
                    if glob_match(pattern, &key) {
                        keys.push(key);
                    }
                }
            }
        }
        Ok(keys)
    }

    /// Every key matching `pattern` with its value (tests).
    pub fn snapshot(
        &self,
        pattern: &str,
    ) -> Result<std::collections::BTreeMap<String, Stored>, StoreError> {
        let keys = self.keys_matching(pattern)?;
        let nothing = Known::new(1);
        let txn = self.txn(&nothing);
        let mut out = std::collections::BTreeMap::new();
        for key in keys {
            let stored = match txn.meta(&key)? {
                Some(Meta::Str(s)) => Stored::Str(s),
                Some(Meta::Hash(_)) => {
                    let mut h = txn.hgetall(&key)?;
                    h.sort();
                    Stored::Hash(h)
                }
                Some(Meta::Set(_)) => {
                    let mut s = txn.smembers(&key)?;
                    s.sort_unstable();
                    Stored::Set(s)
                }
                Some(Meta::List { .. }) => Stored::List(txn.lrange(&key, 0, -1)?),
                Some(Meta::ZSet(_)) => {
                    Stored::ZSet(txn.zrange_by_score(&key, i64::MIN, i64::MAX, usize::MAX)?)
                }
                None => continue,
            };
            out.insert(key, stored);
        }
        Ok(out)
    }

    /// The live entries by key family (the key's first part after the namespace, or
    /// `bus:<stage>`) and entry kind: (entries, key bytes, value bytes), uncompressed. A
    /// scan of the whole store: benches only.
    pub fn usage(&self) -> Result<std::collections::BTreeMap<String, (u64, u64, u64)>, StoreError> {
        let tx = self.inner.keyspace.read_tx();
        let mut out = std::collections::BTreeMap::<String, (u64, u64, u64)>::new();
        for item in self.inner.parts.both().into_iter().flat_map(|p| tx.iter(p)) {
            let (k, v) = item.map_err(|e| self.error(e))?;
            let key = k.get(1..).and_then(decode_key).unwrap_or_default();
            let mut parts = key.split(':');
            let first = parts.next().unwrap_or("");
            let family = match (first, parts.next()) {
                (bus, Some(stage)) if BUS_KEY_PREFIX.strip_suffix(':') == Some(bus) => {
                    format!("{BUS_KEY_PREFIX}{stage}")
                }
                (_, Some(second)) => second.to_string(),
                _ => first.to_string(),
            };
            let kind = k.first().map_or('?', |b| char::from(*b));
            let e = out.entry(format!("{family} {kind}")).or_default();
            e.0 += 1;
            e.1 += k.len() as u64;
            e.2 += v.len() as u64;
        }
        Ok(out)
    }

    /// What the engine holds in memory and has queued, for a memory log: its memtables'
    /// bytes, journals, segments and compactions running.
    pub fn engine_figures(&self) -> String {
        let k = &self.inner.keyspace;
        let segments: Vec<String> = self
            .inner
            .parts
            .both()
            .iter()
            .map(|p| p.inner().segment_count().to_string())
            .collect();
        format!(
            "memtables {} MB, journals {}, segments {} (kv, bus), compactions {}",
            k.write_buffer_size() >> 20,
            k.journal_count(),
            segments.join(", "),
            k.inner().active_compactions()
        )
    }

    /// Bytes the store's files take on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.inner.keyspace.disk_space()
    }
}

/// The store's two partitions. The in-process bus's messages (keys `bus:*`) live apart
/// from the crawl's state: each is written when published and deleted when acked, so
/// nearly all their bytes are garbage soon. In one partition with the state, the
/// messages flushed before their ack (a page written to a file, then its tombstone to
/// the next) were carried down the levels of the crawl's growing state until compaction
/// met both: 87% of the files, 6.7 KB a page against 0.9 KB of live entries at 20,000
/// pages (`cargo bench -p evaluation --bench state`). In a partition of their own, the
/// engine's own compaction drops them among a few live entries: 47 B a page at 100,000
/// pages, the whole store 1.7 KB a page from 9.3.
///
/// The partition is never compacted by hand: `major_compact` (tried every time the
/// bus's files doubled, and at a clean stop) brought acked messages back, a few of
/// 5,000 pages in every crawl, found by the bench's listing of live entries. It drops
/// a tombstone at the last level while the value it hid can still be in a segment that
/// another compaction holds.
struct Parts {
    kv: TxPartitionHandle,
    bus: TxPartitionHandle,
}

/// What the in-process bus's keys start with: their entries go to the store's `bus` partition
/// (the bus names its keys with it, [`crate::broker`]).
pub const BUS_KEY_PREFIX: &str = "bus:";

impl Parts {
    /// The partition of an entry (or of a prefix of one key's entries).
    fn of(&self, entry: &[u8]) -> &TxPartitionHandle {
        let key = entry.get(KEY_START..).unwrap_or_default();
        if key.starts_with(BUS_KEY_PREFIX.as_bytes()) {
            &self.bus
        } else {
            &self.kv
        }
    }

    fn both(&self) -> [&TxPartitionHandle; 2] {
        [&self.kv, &self.bus]
    }
}

/// Moves the bus's entries that a store of an earlier version kept among the others to
/// their partition, in one transaction (a no-op on a store made by this version).
fn move_bus_entries(keyspace: &TxKeyspace, parts: &Parts) -> Result<(), fjall::Error> {
    let mut tx = keyspace.write_tx();
    let mut moved = Vec::new();
    // The bus's keys are hashes (`m` and `h` entries) with names under 64 bytes.
    for kind in [META, HASH] {
        for len in BUS_KEY_PREFIX.len() as u32..64 {
            let mut p = vec![kind];
            p.extend_from_slice(&len.to_be_bytes());
            p.extend_from_slice(BUS_KEY_PREFIX.as_bytes());
            for item in tx.prefix(&parts.kv, p) {
                moved.push(item?);
            }
        }
    }
    if moved.is_empty() {
        return Ok(());
    }
    for (k, v) in moved {
        tx.remove(&parts.kv, k.clone());
        tx.insert(&parts.bus, k, v);
    }
    tx.durability(Some(PersistMode::SyncAll)).commit()?;
    Ok(())
}

/// Kind bytes of the entries.
const META: u8 = b'm';
const HASH: u8 = b'h';
const SET: u8 = b's';
const LIST: u8 = b'l';
const ZMEMBER: u8 = b'z';
const ZORDER: u8 = b'o';

/// A key's `m` entry.
#[derive(Debug, Clone, PartialEq)]
enum Meta {
    Str(Vec<u8>),
    Hash(u64),
    Set(u64),
    /// Elements are at indexes `head..tail`.
    List {
        head: i64,
        tail: i64,
    },
    ZSet(u64),
}

impl Meta {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(17);
        match self {
            Meta::Str(s) => {
                out.push(b's');
                out.extend_from_slice(s);
            }
            Meta::Hash(n) | Meta::Set(n) | Meta::ZSet(n) => {
                out.push(match self {
                    Meta::Hash(_) => b'h',
                    Meta::Set(_) => b'S',
                    _ => b'z',
                });
                out.extend_from_slice(&n.to_be_bytes());
            }
            Meta::List { head, tail } => {
                out.push(b'l');
                out.extend_from_slice(&head.to_be_bytes());
                out.extend_from_slice(&tail.to_be_bytes());
            }
        }
        out
    }

    fn decode(bytes: &[u8]) -> Option<Meta> {
        let (kind, rest) = bytes.split_first()?;
        let n = |r: &[u8]| r.get(..8).and_then(|b| b.try_into().ok());
        Some(match kind {
            b's' => Meta::Str(rest.to_vec()),
            b'h' => Meta::Hash(u64::from_be_bytes(n(rest)?)),
            b'S' => Meta::Set(u64::from_be_bytes(n(rest)?)),
            b'z' => Meta::ZSet(u64::from_be_bytes(n(rest)?)),
            b'l' => Meta::List {
                head: i64::from_be_bytes(n(rest)?),
                tail: i64::from_be_bytes(n(rest.get(8..)?)?),
            },
            _ => return None,
        })
    }
}

/// Where the key starts in an entry: after its kind byte and its length (a u32).
const KEY_START: usize = 1 + 4;

/// `kind`, the key's length and the key: the prefix of one key's entries.
fn prefix(kind: u8, key: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + KEY_START + 16);
    out.push(kind);
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(key.as_bytes());
    out
}

fn entry(kind: u8, key: &str, rest: &[u8]) -> Vec<u8> {
    let mut out = prefix(kind, key);
    out.extend_from_slice(rest);
    out
}

/// The key of a prefix without its kind byte.
fn decode_key(bytes: &[u8]) -> Option<String> {
    let len = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    String::from_utf8(bytes.get(4..4 + len)?.to_vec()).ok()
}

/// An i64 as bytes that sort as the numbers do.
fn ordered(n: i64) -> [u8; 8] {
    ((n as u64) ^ (1 << 63)).to_be_bytes()
}

fn from_ordered(bytes: &[u8]) -> Option<i64> {
    Some((u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?) ^ (1 << 63)) as i64)
}

/// One batch's write transaction, as [`Data`].
struct Txn<'a, 'f> {
    tx: WriteTransaction<'a>,
    parts: &'a Parts,
    /// An engine error met where [`Data`] has no error to return (`set`,
    /// `del`, `exists`): the batch fails with it and nothing is committed.
    failed: Option<String>,
    /// Whether anything was written (a read-only batch commits nothing).
    wrote: bool,
    /// The committed state's floors and counts.
    known: &'f Known,
    /// The floors this batch moved: kept when it commits.
    moved_floors: RefCell<Floors>,
    /// The `m` entries this batch has read or written, by key (those committed before,
    /// strings aside, are in [`Known::metas`]).
    metas: RefCell<std::collections::HashMap<String, Option<Meta>>>,
}

impl Txn<'_, '_> {
    fn io(&self, e: fjall::Error) -> StoreError {
        StoreError::Disk {
            path: String::new(),
            error: e.to_string(),
        }
    }

    fn read(&self, k: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.read_slice(k)?.map(|v| v.to_vec()))
    }

    /// An entry's value as the engine holds it (no copy).
    fn read_slice(&self, k: &[u8]) -> Result<Option<fjall::Slice>, StoreError> {
        self.tx.get(self.parts.of(k), k).map_err(|e| self.io(e))
    }

    /// Whether an entry is there (its value not read out).
    fn present(&self, k: &[u8]) -> Result<bool, StoreError> {
        self.tx
            .contains_key(self.parts.of(k), k)
            .map_err(|e| self.io(e))
    }

    fn put(&mut self, k: Vec<u8>, v: Vec<u8>) {
        self.wrote = true;
        self.tx.insert(self.parts.of(&k), k, v);
    }

    fn remove(&mut self, k: Vec<u8>) {
        self.wrote = true;
        self.tx.remove(self.parts.of(&k), k);
    }

    /// The floor of sorted set `key` ([`Floors`]): `i64::MIN` when none is known.
    fn floor(&self, key: &str) -> i64 {
        let moved = self.moved_floors.borrow().get(key).copied();
        moved
            .or_else(|| self.known.floors.get(key).copied())
            .unwrap_or(i64::MIN)
    }

    fn set_floor(&self, key: &str, floor: i64) {
        self.moved_floors
            .borrow_mut()
            .insert(key.to_string(), floor);
    }

    fn meta(&self, key: &str) -> Result<Option<Meta>, StoreError> {
        if let Some(meta) = self.metas.borrow().get(key) {
            return Ok(meta.clone());
        }
        if let Some(meta) = self.known.metas.get(key) {
            return Ok(meta.clone());
        }
        let meta = match self.read_slice(&prefix(META, key))? {
            None => None,
            Some(bytes) => {
                Some(Meta::decode(&bytes).ok_or_else(|| StoreError::WrongType(key.to_string()))?)
            }
        };
        self.metas
            .borrow_mut()
            .insert(key.to_string(), meta.clone());
        Ok(meta)
    }

    fn set_meta(&mut self, key: &str, meta: &Meta) {
        self.put(prefix(META, key), meta.encode());
        self.metas
            .borrow_mut()
            .insert(key.to_string(), Some(meta.clone()));
    }

    /// Deletes `key`'s `m` entry: the key is gone.
    fn remove_meta(&mut self, key: &str) {
        self.remove(prefix(META, key));
        self.metas.borrow_mut().insert(key.to_string(), None);
    }

    /// The entries of one key of `kind`, as (the rest of the entry key,
    /// value), in key order from `from` on (or all of them backwards when
    /// `rev`), until `take` says stop.
    fn scan(
        &self,
        kind: u8,
        key: &str,
        from: &[u8],
        rev: bool,
        take: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), StoreError> {
        let p = prefix(kind, key);
        let start = entry(kind, key, from);
        let mut go = |item: fjall::Result<fjall::KvPair>| -> Result<bool, StoreError> {
            let (k, v) = item.map_err(|e| self.io(e))?;
            match k.strip_prefix(p.as_slice()) {
                Some(rest) => Ok(take(rest, &v)),
                None => Ok(false),
            }
        };
        if rev {
            for item in self.tx.prefix(self.parts.of(&p), p.clone()).rev() {
                if !go(item)? {
                    break;
                }
            }
        } else {
            for item in self.tx.range(self.parts.of(&p), start..) {
                if !go(item)? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The count of a collection of the kind `pick` reads, 0 when absent.
    fn count(&self, key: &str, pick: fn(&Meta) -> Option<u64>) -> Result<u64, StoreError> {
        match self.meta(key)? {
            None => Ok(0),
            Some(m) => pick(&m).ok_or_else(|| StoreError::WrongType(key.to_string())),
        }
    }

    /// Adds `by` to the count of a collection, writing its `m` entry (or
    /// deleting it when the collection empties).
    fn bump(&mut self, key: &str, now: u64, by: i64, make: fn(u64) -> Meta) {
        let n = (now as i64 + by).max(0) as u64;
        if n == 0 {
            self.remove_meta(key);
        } else {
            self.set_meta(key, &make(n));
        }
    }

    fn hash_count(m: &Meta) -> Option<u64> {
        match m {
            Meta::Hash(n) => Some(*n),
            _ => None,
        }
    }

    fn set_count(m: &Meta) -> Option<u64> {
        match m {
            Meta::Set(n) => Some(*n),
            _ => None,
        }
    }

    fn zset_count(m: &Meta) -> Option<u64> {
        match m {
            Meta::ZSet(n) => Some(*n),
            _ => None,
        }
    }

    /// A list's head and tail (0, 0 when absent).
    fn list_ends(&self, key: &str) -> Result<(i64, i64), StoreError> {
        match self.meta(key)? {
            None => Ok((0, 0)),
            Some(Meta::List { head, tail }) => Ok((head, tail)),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
        }
    }

    fn set_list_ends(&mut self, key: &str, head: i64, tail: i64) {
        if head >= tail {
            self.remove_meta(key);
        } else {
            self.set_meta(key, &Meta::List { head, tail });
        }
    }

    /// A string's bytes (None when absent).
    fn string(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.meta(key)? {
            None => Ok(None),
            Some(Meta::Str(s)) => Ok(Some(s)),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
        }
    }

    /// Deletes every entry of `key`; whether it was there.
    fn delete(&mut self, key: &str) -> Result<bool, StoreError> {
        let Some(meta) = self.meta(key)? else {
            return Ok(false);
        };
        let kinds: &[u8] = match meta {
            Meta::Str(_) => &[],
            Meta::Hash(_) => &[HASH],
            Meta::Set(_) => &[SET],
            Meta::List { .. } => &[LIST],
            Meta::ZSet(_) => &[ZMEMBER, ZORDER],
        };
        for &kind in kinds {
            let mut gone = Vec::new();
            self.scan(kind, key, &[], false, &mut |rest, _| {
                gone.push(entry(kind, key, rest));
                true
            })?;
            for k in gone {
                self.remove(k);
            }
        }
        self.remove_meta(key);
        Ok(true)
    }

    fn note(&mut self, r: Result<(), StoreError>) {
        if let Err(e) = r {
            self.failed.get_or_insert(e.to_string());
        }
    }
}

impl Data for Txn<'_, '_> {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.string(key)
    }

    fn set(&mut self, key: &str, value: &[u8]) {
        let r = self.delete(key).map(|_| ());
        self.note(r);
        self.set_meta(key, &Meta::Str(value.to_vec()));
    }

    fn append(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError> {
        let mut s = self.string(key)?.unwrap_or_default();
        s.extend_from_slice(value);
        let len = s.len() as i64;
        self.set_meta(key, &Meta::Str(s));
        Ok(len)
    }

    fn incr(&mut self, key: &str, by: i64) -> Result<i64, StoreError> {
        let new = self.string(key)?.map_or(0, |s| parse_int(&s)) + by;
        self.set_meta(key, &Meta::Str(new.to_string().into_bytes()));
        Ok(new)
    }

    fn exists(&self, key: &str) -> bool {
        // An engine error reads as present: the batch fails on it anyway
        // at its next read.
        self.meta(key).map_or(true, |m| m.is_some())
    }

    fn del(&mut self, key: &str) -> bool {
        match self.delete(key) {
            Ok(gone) => gone,
            Err(e) => {
                self.failed.get_or_insert(e.to_string());
                false
            }
        }
    }

    fn hget(&self, key: &str, field: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if self.count(key, Self::hash_count)? == 0 {
            return Ok(None);
        }
        self.read(&entry(HASH, key, field.as_bytes()))
    }

    fn hset(&mut self, key: &str, field: &str, value: &[u8]) -> Result<bool, StoreError> {
        let n = self.count(key, Self::hash_count)?;
        let k = entry(HASH, key, field.as_bytes());
        let new = n == 0 || !self.present(&k)?;
        self.put(k, value.to_vec());
        if new {
            self.bump(key, n, 1, Meta::Hash);
        }
        Ok(new)
    }

    fn hdel(&mut self, key: &str, field: &str) -> Result<bool, StoreError> {
        let n = self.count(key, Self::hash_count)?;
        if n == 0 {
            return Ok(false);
        }
        let k = entry(HASH, key, field.as_bytes());
        if !self.present(&k)? {
            return Ok(false);
        }
        self.remove(k);
        self.bump(key, n, -1, Meta::Hash);
        Ok(true)
    }

    fn hlen(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.count(key, Self::hash_count)? as i64)
    }

    fn hgetall(&self, key: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut out = Vec::new();
        if self.count(key, Self::hash_count)? == 0 {
            return Ok(out);
        }
        self.scan(HASH, key, &[], false, &mut |field, value| {
            out.push((String::from_utf8_lossy(field).into_owned(), value.to_vec()));
            true
        })?;
        Ok(out)
    }

    fn sadd(&mut self, key: &str, member: i64) -> Result<bool, StoreError> {
        let n = self.count(key, Self::set_count)?;
        let k = entry(SET, key, &ordered(member));
        if n > 0 && self.present(&k)? {
            return Ok(false);
        }
        self.put(k, Vec::new());
        self.bump(key, n, 1, Meta::Set);
        Ok(true)
    }

    fn sismember(&self, key: &str, member: i64) -> Result<bool, StoreError> {
        if self.count(key, Self::set_count)? == 0 {
            return Ok(false);
        }
        self.present(&entry(SET, key, &ordered(member)))
    }

    fn smembers(&self, key: &str) -> Result<Vec<i64>, StoreError> {
        let mut out = Vec::new();
        if self.count(key, Self::set_count)? == 0 {
            return Ok(out);
        }
        self.scan(SET, key, &[], false, &mut |m, _| {
            out.extend(from_ordered(m));
            true
        })?;
        Ok(out)
    }

    fn rpush(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError> {
        let (head, tail) = self.list_ends(key)?;
        self.put(entry(LIST, key, &ordered(tail)), value.to_vec());
        self.set_list_ends(key, head, tail + 1);
        Ok(tail + 1 - head)
    }

    fn lpush(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError> {
        let (head, tail) = self.list_ends(key)?;
        let (head, tail) = if head == tail { (0, 0) } else { (head, tail) };
        self.put(entry(LIST, key, &ordered(head - 1)), value.to_vec());
        self.set_list_ends(key, head - 1, tail);
        Ok(tail - head + 1)
    }

    fn lpop(&mut self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let (head, tail) = self.list_ends(key)?;
        if head >= tail {
            return Ok(None);
        }
        let k = entry(LIST, key, &ordered(head));
        let first = self.read(&k)?;
        self.remove(k);
        self.set_list_ends(key, head + 1, tail);
        Ok(first)
    }

    fn llen(&self, key: &str) -> Result<i64, StoreError> {
        let (head, tail) = self.list_ends(key)?;
        Ok(tail - head)
    }

    fn lrange(&self, key: &str, start: i64, stop: i64) -> Result<Vec<Vec<u8>>, StoreError> {
        let (head, tail) = self.list_ends(key)?;
        let Some((s, e)) = range_of((tail - head) as usize, start, stop) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(e - s + 1);
        let want = e - s + 1;
        self.scan(LIST, key, &ordered(head + s as i64), false, &mut |_, v| {
            out.push(v.to_vec());
            out.len() < want
        })?;
        Ok(out)
    }

    fn zadd(&mut self, key: &str, member: &[u8], score: i64, nx: bool) -> Result<bool, StoreError> {
        let n = self.count(key, Self::zset_count)?;
        let k = entry(ZMEMBER, key, member);
        let old = if n == 0 {
            None
        } else {
            self.read_slice(&k)?.and_then(|s| from_ordered(&s))
        };
        if !(old.is_some() && nx) && score < self.floor(key) {
            self.set_floor(key, score);
        }
        match old {
            Some(_) if nx => Ok(false),
            Some(old) => {
                self.remove(entry(ZORDER, key, &[&ordered(old)[..], member].concat()));
                self.put(
                    entry(ZORDER, key, &[&ordered(score)[..], member].concat()),
                    Vec::new(),
                );
                self.put(k, ordered(score).to_vec());
                Ok(false)
            }
            None => {
                self.put(
                    entry(ZORDER, key, &[&ordered(score)[..], member].concat()),
                    Vec::new(),
                );
                self.put(k, ordered(score).to_vec());
                self.bump(key, n, 1, Meta::ZSet);
                Ok(true)
            }
        }
    }

    fn zrem(&mut self, key: &str, member: &[u8]) -> Result<bool, StoreError> {
        let n = self.count(key, Self::zset_count)?;
        if n == 0 {
            return Ok(false);
        }
        let k = entry(ZMEMBER, key, member);
        let Some(score) = self.read_slice(&k)?.and_then(|s| from_ordered(&s)) else {
            return Ok(false);
        };
        self.remove(k);
        self.remove(entry(ZORDER, key, &[&ordered(score)[..], member].concat()));
        self.bump(key, n, -1, Meta::ZSet);
        Ok(true)
    }

    fn zscore(&self, key: &str, member: &[u8]) -> Result<Option<i64>, StoreError> {
        if self.count(key, Self::zset_count)? == 0 {
            return Ok(None);
        }
        Ok(self
            .read_slice(&entry(ZMEMBER, key, member))?
            .and_then(|s| from_ordered(&s)))
    }

    fn zcard(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.count(key, Self::zset_count)? as i64)
    }

    fn zrange_by_score(
        &self,
        key: &str,
        min: i64,
        max: i64,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError> {
        let mut out = Vec::new();
        if limit == 0 || self.count(key, Self::zset_count)? == 0 {
            return Ok(out);
        }
        // From the floor when it is above `min`: no live member is below it.
        let floor = self.floor(key);
        let start = min.max(floor);
        let mut lowest = None;
        self.scan(ZORDER, key, &ordered(start), false, &mut |rest, _| {
            let score = from_ordered(rest);
            lowest = lowest.or(score);
            match score {
                Some(score) if score <= max => {
                    out.push((rest[8..].to_vec(), score));
                    out.len() < limit
                }
                _ => false,
            }
        })?;
        // A read from the floor found the lowest live score: the new floor.
        if let Some(lowest) = lowest.filter(|&l| start == floor && l > floor) {
            self.set_floor(key, lowest);
        }
        Ok(out)
    }

    fn zrevrange(
        &self,
        key: &str,
        start: i64,
        stop: i64,
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError> {
        let n = self.count(key, Self::zset_count)?;
        let Some((s, e)) = range_of(n as usize, start, stop) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut i = 0usize;
        self.scan(ZORDER, key, &[], true, &mut |rest, _| {
            if i >= s {
                if let Some(score) = from_ordered(rest) {
                    out.push((rest[8..].to_vec(), score));
                }
            }
            i += 1;
            i <= e
        })?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_bytes_sort_as_numbers() {
        let mut ns = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        let mut bytes: Vec<[u8; 8]> = ns.iter().map(|&n| ordered(n)).collect();
        bytes.sort();
        ns.sort();
        let back: Vec<i64> = bytes.iter().map(|b| from_ordered(b).unwrap()).collect();
        assert_eq!(back, ns);
    }

    /// The counts known in memory ([`Known::metas`]) are the committed ones: a batch that
    /// added fields and then failed leaves them as they were, the next batches count
    /// from there, and a key known absent and then written reads as written.
    #[test]
    fn a_failed_batch_leaves_the_known_counts_as_committed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let store = DiskStore::open(dir).unwrap();
        let hset = |field: &str| Op::HSet {
            key: "h".into(),
            fields: vec![(field.into(), b"1".to_vec())],
        };
        let hlen = |store: &DiskStore| {
            let replies = store.exec(&[Op::HGetAll { key: "h".into() }]).unwrap();
            replies[0].pairs().unwrap().len()
        };
        store.exec(&[hset("a")]).unwrap();
        let failed = store.exec(&[
            hset("b"),
            hset("c"),
            Op::RPush {
                key: "h".into(),
                values: vec![b"x".to_vec()],
            },
        ]);
        assert!(matches!(failed, Err(StoreError::WrongType(_))));
        assert_eq!(hlen(&store), 1);
        // Deleting the one field empties the hash (its count read from memory): it is gone.
        store
            .exec(&[Op::HDel {
                key: "h".into(),
                field: "a".into(),
            }])
            .unwrap();
        assert_eq!(store.keys_matching("*").unwrap(), Vec::<String>::new());
        store.exec(&[hset("d"), hset("d"), hset("e")]).unwrap();
        assert_eq!(hlen(&store), 2);
        // A key known absent, then written as a string in a later batch, reads as written.
        let get = |store: &DiskStore| {
            let replies = store.exec(&[Op::Get { key: "s".into() }]).unwrap();
            replies[0].data().unwrap()
        };
        assert_eq!(get(&store), None);
        store
            .exec(&[Op::Set {
                key: "s".into(),
                value: b"v".to_vec(),
                expire_ms: None,
            }])
            .unwrap();
        assert_eq!(get(&store), Some(b"v".to_vec()));
    }

    #[test]
    fn a_commit_is_there_after_reopening_and_a_failed_batch_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        {
            let store = DiskStore::open(dir).unwrap();
            store
                .exec(&[
                    Op::HSet {
                        key: "h".into(),
                        fields: vec![("f".into(), b"1".to_vec())],
                    },
                    Op::RPush {
                        key: "l".into(),
                        values: vec![b"a".to_vec(), b"b".to_vec()],
                    },
                ])
                .unwrap();
            // The second op meets a hash where it wants a list: the batch
            // fails and its first op is not committed.
            let failed = store.exec(&[
                Op::Set {
                    key: "s".into(),
                    value: b"x".to_vec(),
                    expire_ms: None,
                },
                Op::RPush {
                    key: "h".into(),
                    values: vec![b"c".to_vec()],
                },
            ]);
            assert!(matches!(failed, Err(StoreError::WrongType(_))));
        }
        let store = DiskStore::open(dir).unwrap();
        // One process at a time: a second open of the directory is refused
        // while this one holds it, with a message that says why.
        match DiskStore::open(dir) {
            Err(StoreError::Disk { error, .. }) => {
                assert!(error.contains("in use by another process"), "{error}")
            }
            Err(e) => panic!("a second open failed otherwise: {e}"),
            Ok(_) => panic!("a second open of the same directory was let in"),
        }
        let all = store.snapshot("*").unwrap();
        assert_eq!(
            all.get("h"),
            Some(&Stored::Hash(vec![("f".into(), b"1".to_vec())]))
        );
        assert_eq!(
            all.get("l"),
            Some(&Stored::List(vec![b"a".to_vec(), b"b".to_vec()]))
        );
        assert_eq!(all.get("s"), None);
    }

    /// The bus's keys live in their own partition, the rest in `kv`; a store of the earlier
    /// layout (one partition) opens with its bus entries moved there, none lost, the rest
    /// untouched.
    #[test]
    fn bus_entries_live_apart_and_an_older_store_is_moved() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let message = |i: u32| (format!("{i:016x}"), vec![i as u8; 100]);
        {
            // The earlier layout: every entry in `kv`.
            let keyspace = fjall::Config::new(dir).open_transactional().unwrap();
            let kv = keyspace
                .open_partition("kv", PartitionCreateOptions::default())
                .unwrap();
            let mut tx = keyspace.write_tx();
            for key in ["bus:page", "bus:frontier.dead"] {
                tx.insert(&kv, prefix(META, key), Meta::Hash(3).encode());
                for i in 0..3 {
                    let (f, v) = message(i);
                    tx.insert(&kv, entry(HASH, key, f.as_bytes()), v);
                }
            }
            tx.insert(&kv, prefix(META, "busy"), Meta::Str(b"x".to_vec()).encode());
            tx.commit().unwrap();
            keyspace.persist(PersistMode::SyncAll).unwrap();
        }
        let store = DiskStore::open(dir).unwrap();
        let all = store.snapshot("*").unwrap();
        let three = Stored::Hash((0..3).map(message).collect());
        assert_eq!(all.get("bus:page"), Some(&three));
        assert_eq!(all.get("bus:frontier.dead"), Some(&three));
        assert_eq!(all.get("busy"), Some(&Stored::Str(b"x".to_vec())));
        let tx = store.inner.keyspace.read_tx();
        let count = |part: &TxPartitionHandle| tx.iter(part).count();
        // 2 keys of 3 fields and their `m` entries in `bus`, only `busy` in `kv`.
        assert_eq!(count(&store.inner.parts.bus), 8);
        assert_eq!(count(&store.inner.parts.kv), 1);
        drop(tx);
        // New writes go where they belong too.
        store
            .exec(&[
                Op::HDel {
                    key: "bus:page".into(),
                    field: message(0).0,
                },
                Op::HSet {
                    key: "bus:fetch".into(),
                    fields: vec![message(9)],
                },
                Op::HSet {
                    key: "doc".into(),
                    fields: vec![message(9)],
                },
            ])
            .unwrap();
        let tx = store.inner.keyspace.read_tx();
        assert_eq!(tx.iter(&store.inner.parts.bus).count(), 9);
        assert_eq!(tx.iter(&store.inner.parts.kv).count(), 3);
        drop(tx);
    }

    /// The sorted sets' floors never hide a member: a set whose members keep moving to
    /// later scores (tombstones below them), members added below the floor, reads from a
    /// `min` above and below it, and a batch that raised a floor and then failed, all read
    /// as the memory store reads the same ops.
    #[test]
    fn score_reads_from_the_floor_see_every_member() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let disk = DiskStore::open(dir).unwrap();
        let memory = super::super::memory::MemoryStore::default();
        let range = |min: i64, max: i64| Op::ZRangeByScore {
            key: "z".into(),
            min,
            max,
            limit: Some(3),
        };
        let add = |score: i64, member: &str| Op::ZAdd {
            key: "z".into(),
            members: vec![(score, member.as_bytes().to_vec())],
        };
        let mut state = 12345u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut compared = 0;
        for step in 0..4_000i64 {
            let member = format!("m{}", next(8));
            let ops = match next(6) {
                // Moves on to a later score, as a released host does.
                0..=2 => vec![
                    add(step * 10 + next(5) as i64, &member),
                    range(i64::MIN, step * 10),
                ],
                // Added below everything.
                3 => vec![
                    add(next(50) as i64 - 25, &member),
                    range(i64::MIN, i64::MAX),
                ],
                4 => vec![
                    Op::ZRem {
                        key: "z".into(),
                        members: vec![member.into_bytes()],
                    },
                    range(next(40_000) as i64 - 100, i64::MAX),
                ],
                // Removes the lowest, reads (raising the floor past it), then fails: the
                // removal and the raised floor are both undone.
                _ => vec![
                    Op::ZRem {
                        key: "z".into(),
                        members: vec![member.into_bytes()],
                    },
                    range(i64::MIN, i64::MAX),
                    Op::RPush {
                        key: "z".into(),
                        values: vec![b"x".to_vec()],
                    },
                ],
            };
            let (d, m) = (disk.exec(&ops), memory.exec(&ops));
            match (d, m) {
                (Ok(d), Ok(m)) => {
                    assert_eq!(d, m, "step {step}: {ops:?}");
                    compared += 1;
                }
                (Err(_), Err(_)) => {
                    // The memory store applied the ops before the failing one; the disk
                    // store applied none. Undo the memory store's by the disk's truth.
                    memory.exec(&[Op::Del { key: "z".into() }]).unwrap();
                    let whole = disk.snapshot("z").unwrap();
                    if let Some(Stored::ZSet(members)) = whole.get("z") {
                        let members = members.iter().map(|(m, s)| (*s, m.clone())).collect();
                        memory
                            .exec(&[Op::ZAdd {
                                key: "z".into(),
                                members,
                            }])
                            .unwrap();
                    }
                }
                (d, m) => panic!("step {step}: disk {d:?}, memory {m:?}"),
            }
        }
        assert!(compared > 3_000, "{compared} batches compared");
    }
}
