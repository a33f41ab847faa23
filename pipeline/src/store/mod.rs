//! The store: the few key/value operations the stages need, sent as one
//! pipelined batch per call, to Redis or to an in-memory map.
//!
//! A stage builds a `Vec<Op>` and calls [`Store::exec`]: Redis receives them
//! in one round trip (the hot paths pipeline everything, FACTS.md), the memory
//! store applies them in order under one lock. Each op touches one key (or,
//! for [`Op::Claim`], two keys that share a cluster slot), so the same code
//! runs on Redis Cluster. Key names come from [`crate::keys::Keys`].
//!
//! The store knows no stage's policy. A stage that needs several steps done
//! atomically brings its own [`Script`]: Lua for Redis and its twin in Rust
//! for the memory store, run with [`Op::Script`] (the frontier's and the
//! fetchers' politeness, in the `politeness` crate).
//!
//! - this file: [`Store`], [`Op`], [`Reply`], [`Script`], [`StoreError`].
//! - `scripts`: the Lua of the store's own atomic ops ([`Op::Claim`],
//!   [`Op::SetNxWith`], [`Op::Once`], [`Op::ZAddIn`], [`Op::ZPopDue`]).
//! - `redis`: the Redis executor (one pipeline per batch, scripts by SHA).
//! - `memory`: the in-memory store, and the [`Memory`] view a script's
//!   twin works on.
//!
//! The layout of keys and steps that lets the same stages run on one
//! Redis, a Redis Cluster, in memory and on disk: [`design`].

mod memory;
mod redis;
mod scripts;

#[doc = include_str!("DESIGN.md")]
pub mod design {}

use std::sync::OnceLock;

pub use self::memory::{Memory, MemoryStore};
pub use self::redis::RedisStore;

/// A store operation could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis at {url}: {source}")]
    Redis {
        url: String,
        #[source]
        source: ::redis::RedisError,
    },
    #[error("unexpected reply to {op}: {reply:?}")]
    Reply { op: &'static str, reply: Reply },
    #[error("wrong kind of value at key {0}")]
    WrongType(String),
    #[error("script {script}: key or argument {index} is missing or not a number")]
    ScriptArg { script: &'static str, index: usize },
}

/// One operation. Replies come back in the same order, as [`Reply`].
#[derive(Debug, Clone)]
pub enum Op {
    /// SADD: reply Int(number added).
    SAdd { key: String, members: Vec<i64> },
    /// INCRBY: reply Int(new value).
    Incr { key: String, by: i64 },
    /// HINCRBY: reply Int(new value).
    HIncr { key: String, field: String, by: i64 },
    /// HSETNX: reply Int(1 if set).
    HSetNx {
        key: String,
        field: String,
        value: Vec<u8>,
    },
    /// HGET: reply Data or Nil.
    HGet { key: String, field: String },
    /// HGETALL: reply Array of alternating field and value Data.
    HGetAll { key: String },
    /// SETNX: reply Int(1 if set).
    SetNx { key: String, value: Vec<u8> },
    /// SET with an optional expiry in milliseconds: reply Nil.
    Set {
        key: String,
        value: Vec<u8>,
        expire_ms: Option<u64>,
    },
    /// GET: reply Data or Nil.
    Get { key: String },
    /// MGET of one or more keys: reply Array of one Data or Nil per key, in
    /// order. One command for many reads: Redis spends on each command
    /// about as much again as on the read itself (parsing, dispatch,
    /// statistics). The keys may span cluster slots: single node only.
    MGet { keys: Vec<String> },
    /// APPEND `value` to a string (created empty when absent): reply
    /// Int(new length).
    Append { key: String, value: Vec<u8> },
    /// RPUSH: reply Int(new length).
    RPush { key: String, value: Vec<u8> },
    /// LRANGE: reply Array of Data.
    LRange { key: String, start: i64, stop: i64 },
    /// LLEN: reply Int.
    LLen { key: String },
    /// DEL: reply Int(number deleted).
    Del { key: String },
    /// UNLINK (DEL, the memory freed in the background): reply Int(number
    /// deleted).
    Unlink { key: String },
    /// HDEL of one field: reply Int(1 if it was there).
    HDel { key: String, field: String },
    /// ZADD `member` scored `in_ms` from now (the server's clock): reply Int.
    ZAddIn {
        key: String,
        member: Vec<u8>,
        in_ms: u64,
    },
    /// Atomically removes and replies (Array of Data) up to `max` members
    /// whose score is due (≤ now, the server's clock).
    ZPopDue { key: String, max: u32 },
    /// ZREM: reply Int(number removed).
    ZRem { key: String, members: Vec<Vec<u8>> },
    /// ZCARD: reply Int.
    ZCard { key: String },
    /// HSET of one or more fields: reply Int(number of new fields).
    HSet {
        key: String,
        fields: Vec<(String, Vec<u8>)>,
    },
    /// Atomically, for each member: add it to `seen`; if it was new, add it to
    /// `claim` too. Then (re)set `claim`'s expiry and reply Ints with every
    /// member of `claim`: the members this claimant added now or on an earlier
    /// attempt. `seen` and `claim` must share a cluster slot.
    Claim {
        seen: String,
        claim: String,
        members: Vec<i64>,
        ttl_secs: u64,
    },
    /// First owners, then a number, atomically (a `MULTI`/`EXEC`
    /// transaction): for each slot (hash key, field, value) `HSETNX`; then
    /// `INCRBY counter by`. Reply Array of one Int per slot (1: claimed now,
    /// 0: owned already; the owner is read with `HGET`, a slot never
    /// changes), then Int(the counter). Because it is atomic, whoever owns a
    /// slot took its number before anyone who found the slot taken.
    /// (contentseen's MinHash LSH slots.)
    ClaimFirst {
        slots: Vec<(String, String, Vec<u8>)>,
        counter: String,
        by: i64,
    },
    /// A value and its bookkeeping in one atomic step: `SETNX key value`,
    /// and only when it was set, `RPUSH` each of `pushes` and `HINCRBY` each
    /// of `counts` (key, field, by). Reply Int(1 if set). A worker killed
    /// around it leaves all or nothing, and a redelivery that finds the key
    /// set has nothing left to do. (contentseen's documents, their export
    /// log, duplicate lists and counters.)
    SetNxWith {
        key: String,
        value: Vec<u8>,
        pushes: Vec<(String, Vec<u8>)>,
        counts: Vec<(String, String, i64)>,
    },
    /// Records and counters of one message, once per message: unless the
    /// hash `mark` holds `id` among the last [`ONCE_HISTORY`] ids under
    /// `field` (this message was counted by an earlier delivery), put `id`
    /// first in that list, `SET` each of `sets` and `HINCRBY` each of
    /// `counts` (key, field, by), atomically. Reply Int(1 if applied).
    /// `field` is the subject (a URL), so the mark costs one entry per URL.
    /// It keeps several ids because a delivery of an earlier message can
    /// come back after a later one was applied (a retry succeeded while the
    /// first try's ack was lost in a broker restart). Ids hold no newline.
    /// (The fetcher's fetch records and counters, the extractor's counter.)
    Once {
        mark: String,
        field: String,
        id: String,
        sets: Vec<(String, Vec<u8>)>,
        counts: Vec<(String, String, i64)>,
    },
    /// A stage's own atomic step: `call.script` on `call.keys` and
    /// `call.args` (Lua on Redis, its twin in the memory store). The reply
    /// is the script's.
    Script(ScriptCall),
}

impl Op {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Op::SAdd { .. } => "SADD",
            Op::Incr { .. } => "INCRBY",
            Op::HIncr { .. } => "HINCRBY",
            Op::HSetNx { .. } => "HSETNX",
            Op::HGet { .. } => "HGET",
            Op::HGetAll { .. } => "HGETALL",
            Op::SetNx { .. } => "SETNX",
            Op::Set { .. } => "SET",
            Op::Get { .. } => "GET",
            Op::MGet { .. } => "MGET",
            Op::Append { .. } => "APPEND",
            Op::RPush { .. } => "RPUSH",
            Op::LRange { .. } => "LRANGE",
            Op::LLen { .. } => "LLEN",
            Op::Del { .. } => "DEL",
            Op::Unlink { .. } => "UNLINK",
            Op::HDel { .. } => "HDEL",
            Op::Claim { .. } => "CLAIM",
            Op::ClaimFirst { .. } => "CLAIM_FIRST",
            Op::SetNxWith { .. } => "SETNX_WITH",
            Op::Once { .. } => "ONCE",
            Op::ZRem { .. } => "ZREM",
            Op::ZAddIn { .. } => "ZADD_IN",
            Op::ZPopDue { .. } => "ZPOP_DUE",
            Op::ZCard { .. } => "ZCARD",
            Op::HSet { .. } => "HSET",
            Op::Script(call) => call.script.name,
        }
    }
}

/// A key's value as [`Store::snapshot`] reads it, ordered so that equal
/// contents compare equal on both stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    /// Sorted.
    Set(Vec<i64>),
    /// Sorted by field.
    Hash(Vec<(String, Vec<u8>)>),
    /// In Redis's order: by score, ties by member bytes.
    ZSet(Vec<(Vec<u8>, i64)>),
}

/// A reply to one [`Op`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Nil,
    Int(i64),
    Data(Vec<u8>),
    Array(Vec<Reply>),
    /// The members of a set of integers (the memory store's reply to
    /// [`Op::Claim`]; Redis replies with an Array of strings, which
    /// [`Reply::ints`] reads alike).
    Ints(Vec<i64>),
}

impl Reply {
    pub fn int(&self) -> Result<i64, StoreError> {
        match self {
            Reply::Int(i) => Ok(*i),
            Reply::Data(d) => std::str::from_utf8(d)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| self.unexpected("int")),
            Reply::Nil => Ok(0),
            _ => Err(self.unexpected("int")),
        }
    }

    /// An array of integers (set members are sent back as strings by Redis).
    pub fn ints(&self) -> Result<Vec<i64>, StoreError> {
        match self {
            Reply::Ints(v) => Ok(v.clone()),
            Reply::Array(items) => items.iter().map(Reply::int).collect(),
            Reply::Nil => Ok(Vec::new()),
            _ => Err(self.unexpected("array of ints")),
        }
    }

    pub fn data(&self) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            Reply::Data(d) => Ok(Some(d.clone())),
            Reply::Nil => Ok(None),
            Reply::Int(i) => Ok(Some(i.to_string().into_bytes())),
            _ => Err(self.unexpected("data")),
        }
    }

    pub fn string(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .data()?
            .map(|d| String::from_utf8_lossy(&d).into_owned()))
    }

    pub fn strings(&self) -> Result<Vec<String>, StoreError> {
        match self {
            Reply::Array(items) => Ok(items
                .iter()
                .filter_map(|r| r.string().ok().flatten())
                .collect()),
            Reply::Nil => Ok(Vec::new()),
            _ => Err(self.unexpected("array")),
        }
    }

    fn unexpected(&self, op: &'static str) -> StoreError {
        StoreError::Reply {
            op,
            reply: self.clone(),
        }
    }
}

/// How many message ids [`Op::Once`] remembers per subject.
pub const ONCE_HISTORY: usize = 4;

/// Redis or memory; cheap to clone (both share their connection or map).
#[derive(Clone)]
pub enum Store {
    Redis(RedisStore),
    Memory(MemoryStore),
}

impl Store {
    /// Connects to Redis (the connection manager reconnects on its own).
    pub async fn redis(url: &str) -> Result<Store, StoreError> {
        Ok(Store::Redis(RedisStore::connect(url).await?))
    }

    pub fn memory() -> Store {
        Store::Memory(MemoryStore::default())
    }

    /// Runs `ops` in order, in one round trip; one reply per op.
    pub async fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        self.exec_as(ops, false).await
    }

    /// [`Store::exec`] as one transaction (`MULTI`/`EXEC` on Redis; the
    /// memory store applies every batch under one lock): a process killed
    /// around it leaves all of `ops` or none. Not for [`Op::ClaimFirst`]
    /// (a transaction itself).
    pub async fn exec_atomic(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        self.exec_as(ops, true).await
    }

    /// [`Store::exec`], or as one transaction when `atomic`
    /// ([`Store::exec_atomic`]).
    async fn exec_as(&self, ops: &[Op], atomic: bool) -> Result<Vec<Reply>, StoreError> {
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        let replies = match self {
            Store::Redis(r) => r.exec(ops, atomic).await,
            Store::Memory(m) => m.exec(ops),
        }?;
        crate::metrics::mirror_counts(ops, &replies);
        Ok(replies)
    }

    /// Runs one op.
    pub async fn one(&self, op: Op) -> Result<Reply, StoreError> {
        let mut replies = self.exec(std::slice::from_ref(&op)).await?;
        replies.pop().ok_or(StoreError::Reply {
            op: op.name(),
            reply: Reply::Nil,
        })
    }

    /// Deletes every key matching a glob `pattern` (SCAN, then DEL in
    /// batches); returns how many. For tests, benchmarks and resets.
    pub async fn delete_matching(&self, pattern: &str) -> Result<usize, StoreError> {
        let keys = self.keys_matching(pattern).await?;
        let ops: Vec<Op> = keys.iter().map(|k| Op::Del { key: k.clone() }).collect();
        for chunk in ops.chunks(2000) {
            self.exec(chunk).await?;
        }
        Ok(keys.len())
    }

    /// Redis's `used_memory` (INFO memory) in bytes; 0 for the memory store.
    pub async fn used_memory(&self) -> Result<i64, StoreError> {
        match self {
            Store::Redis(r) => r.used_memory().await,
            Store::Memory(_) => Ok(0),
        }
    }

    /// Every key matching a glob `pattern` with its value, in an order both
    /// stores share (SCAN, TYPE and a read per key: for tests, which
    /// compare what Redis and the memory store hold after the same ops).
    pub async fn snapshot(
        &self,
        pattern: &str,
    ) -> Result<std::collections::BTreeMap<String, Stored>, StoreError> {
        match self {
            Store::Redis(r) => r.snapshot(pattern).await,
            Store::Memory(m) => Ok(m.snapshot(pattern)),
        }
    }

    /// Every key matching a glob `pattern` (SCAN; not for hot paths).
    pub async fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Redis(r) => r.keys_matching(pattern).await,
            Store::Memory(m) => Ok(m.keys_matching(pattern)),
        }
    }
}

/// A stage's atomic step, written twice: Lua for Redis and a twin in Rust
/// for the memory store, which must give the same replies and leave the
/// same state (`tests/tests/store_conformance.rs` proves each pair). Define
/// one as a `static` and run it with [`Op::Script`].
pub struct Script {
    /// For errors and logs.
    pub name: &'static str,
    /// The Lua source. The store puts `now` (the server's clock in Unix ms,
    /// one clock for every worker) before it; KEYS and ARGV are the call's.
    lua: fn() -> String,
    /// The memory store's twin, on the keys and args of the call.
    twin: Twin,
    /// The Lua with its clock, compiled (and its SHA taken) once.
    compiled: OnceLock<::redis::Script>,
}

/// The memory store's twin of a [`Script`]: the same steps on [`Memory`],
/// whose clock stands still for the call as the Lua's `now` does.
pub type Twin = fn(&mut Memory<'_>, &[String], &[Vec<u8>]) -> Result<Reply, StoreError>;

impl Script {
    pub const fn new(name: &'static str, lua: fn() -> String, twin: Twin) -> Script {
        Script {
            name,
            lua,
            twin,
            compiled: OnceLock::new(),
        }
    }

    /// The Lua as Redis runs it: the clock, then the body.
    pub fn source(&self) -> String {
        format!("{}{}", scripts::NOW_LUA, (self.lua)())
    }

    fn compiled(&self) -> &::redis::Script {
        self.compiled
            .get_or_init(|| ::redis::Script::new(&self.source()))
    }
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// One run of a [`Script`]: its keys (all in one cluster slot) and args.
#[derive(Debug, Clone)]
pub struct ScriptCall {
    pub script: &'static Script,
    pub keys: Vec<String>,
    pub args: Vec<Vec<u8>>,
}

impl ScriptCall {
    pub fn new(script: &'static Script) -> ScriptCall {
        ScriptCall {
            script,
            keys: Vec::new(),
            args: Vec::new(),
        }
    }

    pub fn key(mut self, key: impl Into<String>) -> ScriptCall {
        self.keys.push(key.into());
        self
    }

    pub fn arg(mut self, arg: impl Into<Vec<u8>>) -> ScriptCall {
        self.args.push(arg.into());
        self
    }

    /// A number, as Lua's `tonumber` reads it.
    pub fn int(self, n: impl std::fmt::Display) -> ScriptCall {
        self.arg(n.to_string())
    }

    /// The op that runs it.
    pub fn op(self) -> Op {
        Op::Script(self)
    }
}

/// Argument `index` of a script call as a number (what the Lua reads with
/// `tonumber`); for twins.
pub fn int_arg(script: &Script, args: &[Vec<u8>], index: usize) -> Result<i64, StoreError> {
    args.get(index)
        .and_then(|a| std::str::from_utf8(a).ok())
        .and_then(|s| s.trim().parse().ok())
        .ok_or(StoreError::ScriptArg {
            script: script.name,
            index,
        })
}

/// Argument `index` of a script call as bytes; for twins.
pub fn arg<'a>(script: &Script, args: &'a [Vec<u8>], index: usize) -> Result<&'a [u8], StoreError> {
    args.get(index)
        .map(Vec::as_slice)
        .ok_or(StoreError::ScriptArg {
            script: script.name,
            index,
        })
}

/// Key `index` of a script call; for twins.
pub fn key_arg<'a>(
    script: &Script,
    keys: &'a [String],
    index: usize,
) -> Result<&'a str, StoreError> {
    keys.get(index)
        .map(String::as_str)
        .ok_or(StoreError::ScriptArg {
            script: script.name,
            index,
        })
}
