//! The store: the few key/value operations the stages need, sent as one
//! pipelined batch per call, to Redis or to an in-memory map.
//!
//! A stage builds a `Vec<Op>` and calls [`Store::exec`]: Redis receives them
//! in one round trip (the hot paths pipeline everything), the memory store
//! applies them in order under one lock. Each op touches one cluster slot
//! (a script's keys share a hash tag), so the same code runs on Redis
//! Cluster. Key names come from [`crate::keys::Keys`].
//!
//! The store knows no stage's policy. A stage that needs several steps done
//! atomically brings its own [`Script`]: Lua for Redis and its twin in Rust
//! for the memory store, run with [`Op::Script`] (the frontier's and the
//! fetchers' politeness, in the `politeness` crate).
//!
//! - this file: [`Store`], [`Op`], [`Reply`], [`Script`], [`StoreError`].
//! - `redis`: the Redis executor (one pipeline per batch, scripts by SHA).
//! - `memory`: the in-memory store, and the [`Memory`] view a script's
//!   twin works on.
//! - `disk`: the same data model on disk ([`DiskStore`], `crawler run
//!   --state`), one engine transaction per batch.
//!
//! The layout of keys and steps that lets the same stages run on one
//! Redis, a Redis Cluster, in memory and on disk: [`design`].

mod disk;
mod memory;
mod redis;

#[doc = include_str!("DESIGN.md")]
pub mod design {}

use std::sync::OnceLock;

pub use self::disk::{DiskStore, BUS_KEY_PREFIX};
pub use self::memory::{apply, glob_match, now_ms, parse_int, range_of, Data, Memory, MemoryStore};
/// The Redis settings the per-URL hashes are sized for (`redis-server`
/// arguments; the README and compose use them): a document record (URL,
/// title, author, ... and where its text is) is 150–400 bytes, over
/// Redis's default `hash-max-listpack-value` of 64, and one longer value
/// turns its whole hash from a listpack (about 10 bytes of overhead per
/// field) into a hash table (about 70). With 512, the `doc`, `url` and
/// `fpr` hashes stay listpacks up to `hash-max-listpack-entries` fields,
/// 512 here (Redis's default is 128): the namespace's scale
/// ([`crate::scale`]) sizes its keys for about 90 entries at the pages it
/// expects, and 512 leaves a crawl that outgrows it compact to about
/// five times as many pages (the per-URL hashes, whose count is fixed,
/// to about 200M pages).
pub const RECOMMENDED_REDIS_CONFIG: [&str; 4] = [
    "--hash-max-listpack-value",
    "512",
    "--hash-max-listpack-entries",
    "512",
];

pub use self::redis::{RedisConfig, RedisStore, DEFAULT_WAIT_TIMEOUT};

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
    #[error("a script does not load: {error}")]
    Script { error: String },
    #[error("disk store at {path}: {error}")]
    Disk { path: String, error: String },
    #[error("redis at {url}: only {acked} of {wanted} replica(s) acknowledged in time")]
    Replicas {
        url: String,
        wanted: u32,
        acked: i64,
    },
}

/// One command. Replies come back in the same order, as [`Reply`]. The
/// store knows commands only: a stage's atomic step of several commands is
/// a [`Script`] of its own ([`Op::Script`]).
#[derive(Debug, Clone)]
pub enum Op {
    /// GET: reply Data or Nil.
    Get { key: String },
    /// SET with an optional expiry in milliseconds: reply Nil.
    Set {
        key: String,
        value: Vec<u8>,
        expire_ms: Option<u64>,
    },
    /// SETNX: reply Int(1 if set).
    SetNx { key: String, value: Vec<u8> },
    /// MGET of one or more keys: reply Array of one Data or Nil per key, in
    /// order. One command for many reads: Redis spends on each command
    /// about as much again as on the read itself (parsing, dispatch,
    /// statistics). On a cluster the client splits it by slot (a read, so
    /// it needs no atomicity).
    MGet { keys: Vec<String> },
    /// APPEND `value` to a string (created empty when absent): reply
    /// Int(new length).
    Append { key: String, value: Vec<u8> },
    /// INCRBY: reply Int(new value).
    Incr { key: String, by: i64 },
    /// DEL: reply Int(number deleted).
    Del { key: String },
    /// UNLINK (DEL, the memory freed in the background): reply Int(number
    /// deleted).
    Unlink { key: String },
    /// HGET: reply Data or Nil.
    HGet { key: String, field: String },
    /// HGETALL: reply Array of alternating field and value Data.
    HGetAll { key: String },
    /// HSET of one or more fields: reply Int(number of new fields).
    HSet {
        key: String,
        fields: Vec<(String, Vec<u8>)>,
    },
    /// HSETNX: reply Int(1 if set).
    HSetNx {
        key: String,
        field: String,
        value: Vec<u8>,
    },
    /// HINCRBY: reply Int(new value).
    HIncr { key: String, field: String, by: i64 },
    /// HDEL of one field: reply Int(1 if it was there).
    HDel { key: String, field: String },
    /// SADD: reply Int(number added).
    SAdd { key: String, members: Vec<i64> },
    /// SMISMEMBER: reply Array of Int(1 if a member, else 0), in order.
    SMIsMember { key: String, members: Vec<i64> },
    /// RPUSH of one or more values: reply Int(new length).
    RPush { key: String, values: Vec<Vec<u8>> },
    /// LRANGE: reply Array of Data.
    LRange { key: String, start: i64, stop: i64 },
    /// LLEN: reply Int.
    LLen { key: String },
    /// ZADD of (score, member) pairs: reply Int(number of new members).
    ZAdd {
        key: String,
        members: Vec<(i64, Vec<u8>)>,
    },
    /// ZREM: reply Int(number removed).
    ZRem { key: String, members: Vec<Vec<u8>> },
    /// ZCARD: reply Int.
    ZCard { key: String },
    /// `ZRANGE key min max BYSCORE [LIMIT 0 limit] WITHSCORES`: reply Array
    /// of alternating member Data and score Int, by score (ties by member
    /// bytes).
    ZRangeByScore {
        key: String,
        min: i64,
        max: i64,
        limit: Option<u32>,
    },
    /// `ZRANGE key start stop REV WITHSCORES`: the members of the highest
    /// scores first (ties by member bytes, highest first): reply Array of
    /// alternating member Data and score Int.
    ZRevRange { key: String, start: i64, stop: i64 },
    /// A stage's own atomic step: `call.script` on `call.keys` and
    /// `call.args` (Lua on Redis, its twin in the memory store). The reply
    /// is the script's.
    Script(ScriptCall),
}

impl Op {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Op::Get { .. } => "GET",
            Op::Set { .. } => "SET",
            Op::SetNx { .. } => "SETNX",
            Op::MGet { .. } => "MGET",
            Op::Append { .. } => "APPEND",
            Op::Incr { .. } => "INCRBY",
            Op::Del { .. } => "DEL",
            Op::Unlink { .. } => "UNLINK",
            Op::HGet { .. } => "HGET",
            Op::HGetAll { .. } => "HGETALL",
            Op::HSet { .. } => "HSET",
            Op::HSetNx { .. } => "HSETNX",
            Op::HIncr { .. } => "HINCRBY",
            Op::HDel { .. } => "HDEL",
            Op::SAdd { .. } => "SADD",
            Op::SMIsMember { .. } => "SMISMEMBER",
            Op::RPush { .. } => "RPUSH",
            Op::LRange { .. } => "LRANGE",
            Op::LLen { .. } => "LLEN",
            Op::ZAdd { .. } => "ZADD",
            Op::ZRem { .. } => "ZREM",
            Op::ZCard { .. } => "ZCARD",
            Op::ZRangeByScore { .. } => "ZRANGEBYSCORE",
            Op::ZRevRange { .. } => "ZREVRANGE",
            Op::Script(call) => call.script.name,
        }
    }

    /// The first key the op touches (every op touches one slot).
    pub fn key(&self) -> Option<&str> {
        match self {
            Op::Get { key }
            | Op::Set { key, .. }
            | Op::SetNx { key, .. }
            | Op::Append { key, .. }
            | Op::Incr { key, .. }
            | Op::Del { key }
            | Op::Unlink { key }
            | Op::HGet { key, .. }
            | Op::HGetAll { key }
            | Op::HSet { key, .. }
            | Op::HSetNx { key, .. }
            | Op::HIncr { key, .. }
            | Op::HDel { key, .. }
            | Op::SAdd { key, .. }
            | Op::SMIsMember { key, .. }
            | Op::RPush { key, .. }
            | Op::LRange { key, .. }
            | Op::LLen { key }
            | Op::ZAdd { key, .. }
            | Op::ZRem { key, .. }
            | Op::ZCard { key }
            | Op::ZRangeByScore { key, .. }
            | Op::ZRevRange { key, .. } => Some(key),
            Op::MGet { keys } => keys.first().map(String::as_str),
            Op::Script(call) => call.keys.first().map(String::as_str),
        }
    }

    /// Whether the op may change what the store holds (a batch of reads
    /// waits for replicas only when confirmed: [`Store::exec_confirmed`]).
    pub fn writes(&self) -> bool {
        !matches!(
            self,
            Op::Get { .. }
                | Op::MGet { .. }
                | Op::HGet { .. }
                | Op::HGetAll { .. }
                | Op::SMIsMember { .. }
                | Op::LRange { .. }
                | Op::LLen { .. }
                | Op::ZCard { .. }
                | Op::ZRangeByScore { .. }
                | Op::ZRevRange { .. }
        )
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

    /// An array of alternating names and values (`HGETALL`, a sorted
    /// set's members `WITHSCORES`), as pairs of bytes and the reply of the
    /// value.
    pub fn pairs(&self) -> Result<Vec<(Vec<u8>, Reply)>, StoreError> {
        match self {
            Reply::Array(items) => items
                .chunks(2)
                .map(|pair| match pair {
                    [name, value] => Ok((name.data()?.unwrap_or_default(), value.clone())),
                    _ => Err(self.unexpected("pairs")),
                })
                .collect(),
            Reply::Nil => Ok(Vec::new()),
            _ => Err(self.unexpected("pairs")),
        }
    }

    /// [`Reply::pairs`] whose values are integers (a hash of counters, a
    /// sorted set with its scores), names as text.
    pub fn int_pairs(&self) -> Result<Vec<(String, i64)>, StoreError> {
        self.pairs()?
            .into_iter()
            .map(|(name, value)| Ok((String::from_utf8_lossy(&name).into_owned(), value.int()?)))
            .collect()
    }

    fn unexpected(&self, op: &'static str) -> StoreError {
        StoreError::Reply {
            op,
            reply: self.clone(),
        }
    }
}

/// Redis (one node or a cluster), memory, or disk; cheap to clone (all
/// share their connection, map or engine).
#[derive(Clone)]
pub enum Store {
    Redis(RedisStore),
    Memory(MemoryStore),
    Disk(DiskStore),
}

impl Store {
    /// Connects to one Redis (the connection manager reconnects on its own).
    pub async fn redis(url: &str) -> Result<Store, StoreError> {
        Self::connect(&RedisConfig {
            url: url.to_string(),
            ..RedisConfig::default()
        })
        .await
    }

    /// Connects to one Redis or a Redis Cluster, as `config` says.
    pub async fn connect(config: &RedisConfig) -> Result<Store, StoreError> {
        Ok(Store::Redis(RedisStore::connect(config).await?))
    }

    pub fn memory() -> Store {
        Store::Memory(MemoryStore::default())
    }

    /// The disk store in `dir` (created when absent).
    pub fn disk(dir: &std::path::Path) -> Result<Store, StoreError> {
        Ok(Store::Disk(DiskStore::open(dir)?))
    }

    /// Whether the ops of one batch run in order whatever keys they touch
    /// (one Redis node, memory): on a cluster only the ops of one slot do,
    /// and a step that must follow another in another slot waits for its
    /// reply.
    pub fn ordered(&self) -> bool {
        match self {
            Store::Redis(r) => !r.is_cluster(),
            Store::Memory(_) | Store::Disk(_) => true,
        }
    }

    /// Runs `ops` in order (per slot on a cluster: [`Store::ordered`]), in
    /// one round trip; one reply per op. The counts of the scripts that
    /// say they applied ([`ScriptCall::counting`]) go to the metrics.
    pub async fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        self.exec_as(ops, false).await
    }

    /// [`Store::exec`] for reads whose answer lets a stage ack a message
    /// without writing ("done already"): on Redis with a replica wait
    /// ([`RedisConfig::wait_replicas`]) they wait for the replicas as
    /// writes do. An old master started again after its failover answers
    /// as a master, without replicas, until it hears it is a replica, and
    /// what it holds beyond its successor is dropped then: a "done" read
    /// there would lose the message; the wait finds no replica and fails
    /// instead. Other reads do not wait (on a cluster with waits they
    /// cost 10% of the pages/s when they all did).
    pub async fn exec_confirmed(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        self.exec_as(ops, true).await
    }

    async fn exec_as(&self, ops: &[Op], confirmed: bool) -> Result<Vec<Reply>, StoreError> {
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        let replies = match self {
            Store::Redis(r) => r.exec(ops, confirmed).await,
            Store::Memory(m) => m.exec(ops),
            Store::Disk(d) => d.exec(ops),
        }?;
        for (op, reply) in ops.iter().zip(&replies) {
            if let Op::Script(call) = op {
                if !call.counts.is_empty() && reply == &Reply::Int(1) {
                    crate::metrics::crawl_series().count_all(&call.counts);
                }
                let numbers = match reply {
                    Reply::Int(n) => vec![*n],
                    Reply::Array(items) => items.iter().map(|r| r.int().unwrap_or(0)).collect(),
                    _ => Vec::new(),
                };
                for (counter, n) in call.counts_by_reply.iter().zip(numbers) {
                    crate::metrics::crawl_series().count(counter, n);
                }
            }
        }
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

    /// Deletes every key matching a glob `pattern` (SCAN, then UNLINK in
    /// batches); returns how many. For `crawler reset` (its own namespace
    /// only), tests and benchmarks: never on an operational path.
    pub async fn delete_matching(&self, pattern: &str) -> Result<usize, StoreError> {
        let keys = self.keys_matching(pattern).await?;
        let ops: Vec<Op> = keys.iter().map(|k| Op::Unlink { key: k.clone() }).collect();
        for chunk in ops.chunks(1000) {
            self.exec(chunk).await?;
        }
        Ok(keys.len())
    }

    /// Redis's `used_memory` (INFO memory) in bytes, summed over the
    /// masters of a cluster; 0 for the memory store.
    pub async fn used_memory(&self) -> Result<i64, StoreError> {
        match self {
            Store::Redis(r) => r.used_memory().await,
            Store::Memory(_) | Store::Disk(_) => Ok(0),
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
            Store::Disk(d) => d.snapshot(pattern),
        }
    }

    /// Every key matching a glob `pattern` (SCAN over the whole keyspace:
    /// for `crawler reset`, tests and benchmarks only; no operational path
    /// calls it, `tests/tests/no_scan.rs`).
    pub async fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Redis(r) => r.keys_matching(pattern).await,
            Store::Memory(m) => Ok(m.keys_matching(pattern)),
            Store::Disk(d) => d.keys_matching(pattern),
        }
    }
}

/// The server's clock in Unix ms (one clock for every worker), as `now`:
/// put before every script.
const NOW_LUA: &str = "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

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
        format!("{NOW_LUA}{}", (self.lua)())
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
    /// What the call counts when it replies Int(1) (it applied): the
    /// metrics' counters (name, by), said by the op, not inferred from
    /// its keys.
    pub counts: Vec<(String, i64)>,
    /// The metrics' counters that the call's reply gives the numbers of:
    /// an Int reply counts the first by its value, an Array of Ints each
    /// by its own.
    pub counts_by_reply: Vec<String>,
}

impl ScriptCall {
    pub fn new(script: &'static Script) -> ScriptCall {
        ScriptCall {
            script,
            keys: Vec::new(),
            args: Vec::new(),
            counts: Vec::new(),
            counts_by_reply: Vec::new(),
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

    /// The metrics' counters this call adds to when it applies (replies
    /// Int(1)): see [`ScriptCall::counts`].
    pub fn counting(mut self, counts: Vec<(String, i64)>) -> ScriptCall {
        self.counts = counts;
        self
    }

    /// The metrics' counters whose numbers the call replies: see
    /// [`ScriptCall::counts_by_reply`].
    pub fn counting_replies(mut self, counters: &[&str]) -> ScriptCall {
        self.counts_by_reply = counters.iter().map(|c| c.to_string()).collect();
        self
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

/// The first `N` keys of a script call, in order; for twins.
pub fn key_args<'a, const N: usize>(
    script: &Script,
    keys: &'a [String],
) -> Result<[&'a str; N], StoreError> {
    let mut out = [""; N];
    for (index, key) in out.iter_mut().enumerate() {
        *key = key_arg(script, keys, index)?;
    }
    Ok(out)
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
