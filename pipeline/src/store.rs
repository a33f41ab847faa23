//! The store: the few key/value operations the stages need, sent as one
//! pipelined batch per call, to Redis or to an in-memory map.
//!
//! A stage builds a `Vec<Op>` and calls [`Store::exec`]: Redis receives them
//! in one round trip (the hot paths pipeline everything, FACTS.md), the memory
//! store applies them in order under one lock. Each op touches one key (or,
//! for [`Op::Claim`], two keys that share a cluster slot), so the same code
//! runs on Redis Cluster. Key names come from [`crate::keys::Keys`].

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use redis::aio::ConnectionManager;

/// A store operation could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("redis at {url}: {source}")]
    Redis {
        url: String,
        #[source]
        source: redis::RedisError,
    },
    #[error("unexpected reply to {op}: {reply:?}")]
    Reply { op: &'static str, reply: Reply },
    #[error("wrong kind of value at key {0}")]
    WrongType(String),
}

/// One operation. Replies come back in the same order, as [`Reply`].
#[derive(Debug, Clone)]
pub enum Op {
    /// SADD: reply Int(number added).
    SAdd { key: String, members: Vec<i64> },
    /// The members of a set of integers (SMEMBERS): reply Ints. On Redis it
    /// is read as one `DUMP` payload ([`crate::rdb`]), or with SMEMBERS in a
    /// second round trip when that payload is not understood; either way it
    /// sees at least every member added before its place in the batch.
    SMembers { key: String },
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
    /// RPUSH: reply Int(new length).
    RPush { key: String, value: Vec<u8> },
    /// LRANGE: reply Array of Data.
    LRange { key: String, start: i64, stop: i64 },
    /// LLEN: reply Int.
    LLen { key: String },
    /// DEL: reply Int(number deleted).
    Del { key: String },
    /// Politeness, enqueue: append `tasks` to the host's queue, record the
    /// crawl's delay, and schedule the host (if not scheduled) at the later
    /// of now and its `next_ms`. Reply Int(queue length). All keys share a slot.
    HostEnqueue {
        schedule: String,
        queue: String,
        record: String,
        origin: String,
        crawl_delay_ms: u64,
        tasks: Vec<Vec<u8>>,
    },
    /// Politeness, release: for up to `max_hosts` hosts of one schedule
    /// shard that are due now, take the next task (up to `burst` for hosts
    /// with no delay) into the `releasing` set and reschedule the host at
    /// now + its delay (the larger of the crawl's and robots.txt's, doubled
    /// per consecutive failure, never before a Retry-After backoff; a host
    /// failing `park_after` times in a row waits `park_ms`). Reply Array of
    /// Data members `origin\ntask`, to publish and then [`Op::ZRem`].
    HostRelease {
        schedule: String,
        releasing: String,
        queue_prefix: String,
        record_prefix: String,
        max_hosts: u32,
        burst: u32,
        park_after: u32,
        park_ms: u64,
    },
    /// Politeness, recovery: members of `releasing` older than `older_than_ms`
    /// (their frontier died before confirming them) go back to the head of
    /// their host queues. Reply Int(number moved).
    HostSweep {
        schedule: String,
        releasing: String,
        queue_prefix: String,
        older_than_ms: u64,
    },
    /// Politeness, the fetchers' gate: if the host's next request may start
    /// now (and no Retry-After backoff holds), take the turn for `hold_ms`
    /// and reply Int(0); otherwise reply Int(milliseconds to wait). Uses the
    /// server's clock.
    HostGate { record: String, hold_ms: u64 },
    /// Politeness, the end of a turn: the host's next request may start
    /// `delay_ms` from now.
    HostTurnDone { record: String, delay_ms: u64 },
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
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::SAdd { .. } => "SADD",
            Op::SMembers { .. } => "SMEMBERS",
            Op::Incr { .. } => "INCRBY",
            Op::HIncr { .. } => "HINCRBY",
            Op::HSetNx { .. } => "HSETNX",
            Op::HGet { .. } => "HGET",
            Op::HGetAll { .. } => "HGETALL",
            Op::SetNx { .. } => "SETNX",
            Op::Set { .. } => "SET",
            Op::Get { .. } => "GET",
            Op::RPush { .. } => "RPUSH",
            Op::LRange { .. } => "LRANGE",
            Op::LLen { .. } => "LLEN",
            Op::Del { .. } => "DEL",
            Op::Claim { .. } => "CLAIM",
            Op::ClaimFirst { .. } => "CLAIM_FIRST",
            Op::SetNxWith { .. } => "SETNX_WITH",
            Op::Once { .. } => "ONCE",
            Op::HostEnqueue { .. } => "HOST_ENQUEUE",
            Op::HostRelease { .. } => "HOST_RELEASE",
            Op::HostSweep { .. } => "HOST_SWEEP",
            Op::HostGate { .. } => "HOST_GATE",
            Op::HostTurnDone { .. } => "HOST_TURN_DONE",
            Op::ZRem { .. } => "ZREM",
            Op::ZAddIn { .. } => "ZADD_IN",
            Op::ZPopDue { .. } => "ZPOP_DUE",
            Op::ZCard { .. } => "ZCARD",
            Op::HSet { .. } => "HSET",
        }
    }
}

/// A reply to one [`Op`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Nil,
    Int(i64),
    Data(Vec<u8>),
    Array(Vec<Reply>),
    /// The members of a set of integers ([`Op::SMembers`]).
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

/// Lua for [`Op::SetNxWith`]: KEYS = key, push keys..., count keys...;
/// ARGV = value, number of pushes, push values..., then field and by of
/// each count.
const SETNX_WITH_LUA: &str = r#"
if redis.call('SETNX', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local pushes = tonumber(ARGV[2])
for i = 1, pushes do
  redis.call('RPUSH', KEYS[1 + i], ARGV[2 + i])
end
local a = 3 + pushes
for k = 2 + pushes, #KEYS do
  redis.call('HINCRBY', KEYS[k], ARGV[a], ARGV[a + 1])
  a = a + 2
end
return 1
"#;

/// How many message ids [`Op::Once`] remembers per subject.
pub const ONCE_HISTORY: usize = 4;

/// Lua for [`Op::Once`]: KEYS = mark, set keys..., count keys...; ARGV =
/// field, id, history, number of sets, set values..., then field and by of
/// each count. The mark's value: the ids, newest first, one per line.
const ONCE_LUA: &str = r#"
local seen = redis.call('HGET', KEYS[1], ARGV[1])
local keep = ARGV[2]
if seen then
  local n = 1
  for old in string.gmatch(seen, '[^\n]+') do
    if old == ARGV[2] then
      return 0
    end
    if n < tonumber(ARGV[3]) then
      keep = keep .. '\n' .. old
      n = n + 1
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], keep)
local sets = tonumber(ARGV[4])
for i = 1, sets do
  redis.call('SET', KEYS[1 + i], ARGV[4 + i])
end
local a = 5 + sets
for k = 2 + sets, #KEYS do
  redis.call('HINCRBY', KEYS[k], ARGV[a], ARGV[a + 1])
  a = a + 2
end
return 1
"#;

/// Lua for [`Op::Claim`]: KEYS = seen, claim; ARGV = ttl, members...
const CLAIM_LUA: &str = r#"
for i = 2, #ARGV do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('SADD', KEYS[2], ARGV[i])
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('EXPIRE', KEYS[2], ARGV[1])
  return redis.call('SMEMBERS', KEYS[2])
end
return {}
"#;

/// The server's clock in ms (one clock for every worker).
const NOW_LUA: &str = "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

/// [`Op::HostEnqueue`]: KEYS = schedule, queue, record; ARGV = origin, crawl delay, tasks...
const HOST_ENQUEUE_LUA: &str = r#"
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('HSET', KEYS[3], 'crawl_delay_ms', ARGV[2])
local nxt = tonumber(redis.call('HGET', KEYS[3], 'next_ms') or '0') or 0
redis.call('ZADD', KEYS[1], 'NX', string.format('%.0f', math.max(now, nxt)), ARGV[1])
return redis.call('LLEN', KEYS[2])
"#;

/// [`Op::HostRelease`]: KEYS = schedule, releasing; ARGV = queue prefix,
/// record prefix, max hosts, burst, park after, park ms. Queue and record
/// keys are built from the prefixes; they share the shard's slot.
const HOST_RELEASE_LUA: &str = r#"
local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, h in ipairs(hosts) do
  local q = ARGV[1] .. h
  local rec = ARGV[2] .. h
  local f = redis.call('HMGET', rec, 'crawl_delay_ms', 'delay_ms', 'backoff_until_ms', 'fail_streak')
  local delay = math.max(tonumber(f[1] or '0') or 0, tonumber(f[2] or '0') or 0)
  local streak = tonumber(f[4] or '0') or 0
  if streak > 0 then delay = math.max(delay, 1000) * 2 ^ math.min(streak, 6) end
  local n = 1
  if delay == 0 then n = tonumber(ARGV[4]) end
  local taken = 0
  for _ = 1, n do
    local task = redis.call('LPOP', q)
    if not task then break end
    local m = h .. '\n' .. task
    redis.call('ZADD', KEYS[2], now, m)
    out[#out + 1] = m
    taken = taken + 1
  end
  if taken > 0 then
    local nxt = math.max(now + delay, tonumber(f[3] or '0') or 0)
    if streak >= tonumber(ARGV[5]) then
      nxt = math.max(nxt, now + tonumber(ARGV[6]))
      redis.call('HSET', rec, 'parked_until_ms', string.format('%.0f', nxt))
    end
    redis.call('HSET', rec, 'next_ms', string.format('%.0f', nxt))
    if redis.call('LLEN', q) > 0 then
      redis.call('ZADD', KEYS[1], string.format('%.0f', nxt), h)
    else
      redis.call('ZREM', KEYS[1], h)
    end
  else
    redis.call('ZREM', KEYS[1], h)
  end
end
return out
"#;

/// [`Op::HostSweep`]: KEYS = schedule, releasing; ARGV = queue prefix, age ms.
const HOST_SWEEP_LUA: &str = r#"
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0, 1000)
for _, m in ipairs(stale) do
  local i = string.find(m, '\n', 1, true)
  if i then
    local h = string.sub(m, 1, i - 1)
    redis.call('LPUSH', ARGV[1] .. h, string.sub(m, i + 1))
    redis.call('ZADD', KEYS[1], 'NX', now, h)
  end
  redis.call('ZREM', KEYS[2], m)
end
return #stale
"#;

/// [`Op::HostGate`]: KEYS = record; ARGV = hold ms.
const HOST_GATE_LUA: &str = r#"
local f = redis.call('HMGET', KEYS[1], 'next_fetch_ms', 'backoff_until_ms')
local nxt = math.max(tonumber(f[1] or '0') or 0, tonumber(f[2] or '0') or 0)
if now >= nxt then
  if tonumber(ARGV[1]) > 0 then
    redis.call('HSET', KEYS[1], 'next_fetch_ms', string.format('%.0f', now + tonumber(ARGV[1])))
  end
  return 0
end
return nxt - now
"#;

/// [`Op::HostTurnDone`]: KEYS = record; ARGV = delay ms.
const HOST_TURN_DONE_LUA: &str = r#"
redis.call('HSET', KEYS[1], 'next_fetch_ms', string.format('%.0f', now + tonumber(ARGV[1])))
return 0
"#;

/// [`Op::ZAddIn`]: KEYS = zset; ARGV = member, in ms.
const ZADD_IN_LUA: &str = r#"
return redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
"#;

/// [`Op::ZPopDue`]: KEYS = zset; ARGV = max.
const ZPOP_DUE_LUA: &str = r#"
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
"#;

/// The scripts, loaded once per pipeline that uses them.
struct Scripts {
    claim: redis::Script,
    setnx_with: redis::Script,
    once: redis::Script,
    enqueue: redis::Script,
    release: redis::Script,
    sweep: redis::Script,
    gate: redis::Script,
    turn_done: redis::Script,
    zadd_in: redis::Script,
    zpop_due: redis::Script,
}

impl Scripts {
    fn new() -> Self {
        let timed = |body: &str| redis::Script::new(&format!("{NOW_LUA}{body}"));
        Scripts {
            claim: redis::Script::new(CLAIM_LUA),
            setnx_with: redis::Script::new(SETNX_WITH_LUA),
            once: redis::Script::new(ONCE_LUA),
            enqueue: timed(HOST_ENQUEUE_LUA),
            release: timed(HOST_RELEASE_LUA),
            sweep: timed(HOST_SWEEP_LUA),
            gate: timed(HOST_GATE_LUA),
            turn_done: timed(HOST_TURN_DONE_LUA),
            zadd_in: timed(ZADD_IN_LUA),
            zpop_due: timed(ZPOP_DUE_LUA),
        }
    }

    /// The script an op runs, if any.
    fn for_op(&self, op: &Op) -> Option<&redis::Script> {
        match op {
            Op::Claim { .. } => Some(&self.claim),
            Op::SetNxWith { .. } => Some(&self.setnx_with),
            Op::Once { .. } => Some(&self.once),
            Op::HostEnqueue { .. } => Some(&self.enqueue),
            Op::HostRelease { .. } => Some(&self.release),
            Op::HostSweep { .. } => Some(&self.sweep),
            Op::HostGate { .. } => Some(&self.gate),
            Op::HostTurnDone { .. } => Some(&self.turn_done),
            Op::ZAddIn { .. } => Some(&self.zadd_in),
            Op::ZPopDue { .. } => Some(&self.zpop_due),
            _ => None,
        }
    }
}

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
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Store::Redis(r) => r.exec(ops, false).await,
            Store::Memory(m) => m.exec(ops),
        }
    }

    /// [`Store::exec`] as one transaction (`MULTI`/`EXEC` on Redis; the
    /// memory store applies every batch under one lock): a process killed
    /// around it leaves all of `ops` or none. Not for [`Op::ClaimFirst`]
    /// (a transaction itself) or [`Op::SMembers`] of unknown encoding.
    pub async fn exec_atomic(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Store::Redis(r) => r.exec(ops, true).await,
            Store::Memory(m) => m.exec(ops),
        }
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
        let Store::Redis(r) = self else { return Ok(0) };
        let mut conn = r.conn.clone();
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query_async(&mut conn)
            .await
            .map_err(|source| StoreError::Redis {
                url: r.url.clone(),
                source,
            })?;
        Ok(info
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0))
    }

    /// Every key matching a glob `pattern` (SCAN; not for hot paths).
    pub async fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Redis(r) => r.keys_matching(pattern).await,
            Store::Memory(m) => Ok(m.keys_matching(pattern)),
        }
    }
}

/// Redis through a reconnecting connection manager.
#[derive(Clone)]
pub struct RedisStore {
    /// For error messages (without password).
    url: String,
    conn: ConnectionManager,
    scripts: Arc<Scripts>,
    /// Whether the server answers `DUMP` (a server may disable or rename it,
    /// or an ACL refuse it): sets are read from their payloads, else with
    /// SMEMBERS. Probed on the first set read, not at connect: most stages
    /// never read a set.
    dump: Arc<tokio::sync::OnceCell<bool>>,
}

impl RedisStore {
    async fn connect(url: &str) -> Result<Self, StoreError> {
        let shown = crate::config::redact_url(url);
        let err = |source| StoreError::Redis {
            url: shown.clone(),
            source,
        };
        let client = redis::Client::open(url).map_err(err)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(5)))
            .set_response_timeout(Some(std::time::Duration::from_secs(30)))
            .set_number_of_retries(6)
            .set_max_delay(std::time::Duration::from_secs(5));
        let conn = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(err)?;
        Ok(RedisStore {
            url: shown.clone(),
            conn,
            scripts: Arc::new(Scripts::new()),
            dump: Arc::default(),
        })
    }

    /// Whether sets are read with `DUMP`: probed once, with `DUMP` of a key
    /// that does not exist (nil). An error reply from the server means no;
    /// a connection error is returned and the probe runs again next time.
    async fn dump_allowed(&self) -> Result<bool, StoreError> {
        self.dump
            .get_or_try_init(|| async {
                let mut conn = self.conn.clone();
                match redis::cmd("DUMP")
                    .arg("crawler:probe:dump")
                    .query_async::<redis::Value>(&mut conn)
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(e) if e.code().is_some() => {
                        tracing::warn!(redis = %self.url, error = %e, "DUMP refused: sets are read with SMEMBERS (slower)");
                        Ok(false)
                    }
                    Err(source) => Err(StoreError::Redis {
                        url: self.url.clone(),
                        source,
                    }),
                }
            })
            .await
            .copied()
    }

    async fn exec(&self, ops: &[Op], atomic: bool) -> Result<Vec<Reply>, StoreError> {
        let dump = if ops.iter().any(|op| matches!(op, Op::SMembers { .. })) {
            self.dump_allowed().await?
        } else {
            false
        };
        let mut pipe = redis::pipe();
        if atomic {
            pipe.atomic();
        }
        let mut loaded: Vec<&str> = Vec::new();
        for op in ops {
            if let Some(script) = self.scripts.for_op(op) {
                if !loaded.contains(&script.get_hash()) {
                    pipe.load_script(script).ignore();
                    loaded.push(script.get_hash());
                }
            }
        }
        let mut invocations = Vec::new();
        for op in ops {
            match op {
                Op::SAdd { key, members } => {
                    pipe.sadd(key, members);
                }
                Op::SMembers { key } if dump => {
                    pipe.cmd("DUMP").arg(key);
                }
                Op::SMembers { key } => {
                    pipe.smembers(key);
                }
                Op::Incr { key, by } => {
                    pipe.incr(key, *by);
                }
                Op::HIncr { key, field, by } => {
                    pipe.hincr(key, field, *by);
                }
                Op::HSetNx { key, field, value } => {
                    pipe.hset_nx(key, field, value);
                }
                Op::HGet { key, field } => {
                    pipe.hget(key, field);
                }
                Op::HGetAll { key } => {
                    pipe.cmd("HGETALL").arg(key);
                }
                Op::SetNx { key, value } => {
                    pipe.set_nx(key, value);
                }
                Op::Set {
                    key,
                    value,
                    expire_ms,
                } => match expire_ms {
                    Some(ms) => {
                        pipe.pset_ex(key, value, *ms);
                    }
                    None => {
                        pipe.set(key, value);
                    }
                },
                Op::Get { key } => {
                    pipe.get(key);
                }
                Op::RPush { key, value } => {
                    pipe.rpush(key, value);
                }
                Op::LRange { key, start, stop } => {
                    pipe.lrange(key, *start as isize, *stop as isize);
                }
                Op::LLen { key } => {
                    pipe.llen(key);
                }
                Op::Del { key } => {
                    pipe.del(key);
                }
                Op::ZRem { key, members } => {
                    pipe.zrem(key, members);
                }
                Op::ZCard { key } => {
                    pipe.zcard(key);
                }
                Op::HSet { key, fields } => {
                    // HSET with many fields (HMSET would reply OK, not the
                    // number of new fields as the memory store does).
                    let cmd = pipe.cmd("HSET").arg(key);
                    for (field, value) in fields {
                        cmd.arg(field).arg(value.as_slice());
                    }
                }
                Op::Claim {
                    seen,
                    claim,
                    members,
                    ttl_secs,
                } => {
                    let mut inv = self.scripts.claim.prepare_invoke();
                    inv.key(seen).key(claim).arg(*ttl_secs);
                    for m in members {
                        inv.arg(*m);
                    }
                    invocations.push(inv);
                }
                Op::Once {
                    mark,
                    field,
                    id,
                    sets,
                    counts,
                } => {
                    let mut inv = self.scripts.once.prepare_invoke();
                    inv.key(mark)
                        .arg(field)
                        .arg(id)
                        .arg(ONCE_HISTORY)
                        .arg(sets.len());
                    for (k, v) in sets {
                        inv.key(k).arg(v.as_slice());
                    }
                    count_args(&mut inv, counts);
                    invocations.push(inv);
                }
                Op::SetNxWith {
                    key,
                    value,
                    pushes,
                    counts,
                } => {
                    let mut inv = self.scripts.setnx_with.prepare_invoke();
                    inv.key(key).arg(value.as_slice()).arg(pushes.len());
                    for (k, v) in pushes {
                        inv.key(k).arg(v.as_slice());
                    }
                    count_args(&mut inv, counts);
                    invocations.push(inv);
                }
                Op::ClaimFirst { slots, counter, by } => {
                    // One reply, EXEC's: MULTI's OK and the QUEUED replies
                    // are dropped.
                    pipe.cmd("MULTI").ignore();
                    for (key, field, value) in slots {
                        pipe.hset_nx(key, field, value.as_slice()).ignore();
                    }
                    pipe.incr(counter, *by).ignore();
                    pipe.cmd("EXEC");
                }
                Op::HostEnqueue {
                    schedule,
                    queue,
                    record,
                    origin,
                    crawl_delay_ms,
                    tasks,
                } => {
                    let mut inv = self.scripts.enqueue.prepare_invoke();
                    inv.key(schedule).key(queue).key(record);
                    inv.arg(origin).arg(*crawl_delay_ms);
                    for t in tasks {
                        inv.arg(t.as_slice());
                    }
                    invocations.push(inv);
                }
                Op::HostRelease {
                    schedule,
                    releasing,
                    queue_prefix,
                    record_prefix,
                    max_hosts,
                    burst,
                    park_after,
                    park_ms,
                } => {
                    let mut inv = self.scripts.release.prepare_invoke();
                    inv.key(schedule).key(releasing);
                    inv.arg(queue_prefix)
                        .arg(record_prefix)
                        .arg(*max_hosts)
                        .arg(*burst)
                        .arg(*park_after)
                        .arg(*park_ms);
                    invocations.push(inv);
                }
                Op::HostSweep {
                    schedule,
                    releasing,
                    queue_prefix,
                    older_than_ms,
                } => {
                    let mut inv = self.scripts.sweep.prepare_invoke();
                    inv.key(schedule).key(releasing);
                    inv.arg(queue_prefix).arg(*older_than_ms);
                    invocations.push(inv);
                }
                Op::HostGate { record, hold_ms } => {
                    let mut inv = self.scripts.gate.prepare_invoke();
                    inv.key(record).arg(*hold_ms);
                    invocations.push(inv);
                }
                Op::HostTurnDone { record, delay_ms } => {
                    let mut inv = self.scripts.turn_done.prepare_invoke();
                    inv.key(record).arg(*delay_ms);
                    invocations.push(inv);
                }
                Op::ZAddIn { key, member, in_ms } => {
                    let mut inv = self.scripts.zadd_in.prepare_invoke();
                    inv.key(key).arg(member.as_slice()).arg(*in_ms);
                    invocations.push(inv);
                }
                Op::ZPopDue { key, max } => {
                    let mut inv = self.scripts.zpop_due.prepare_invoke();
                    inv.key(key).arg(*max);
                    invocations.push(inv);
                }
            }
            if self.scripts.for_op(op).is_some() {
                if let Some(inv) = invocations.last() {
                    pipe.invoke_script(inv);
                }
            }
        }
        let mut conn = self.conn.clone();
        let values: Vec<redis::Value> =
            pipe.query_async(&mut conn)
                .await
                .map_err(|source| StoreError::Redis {
                    url: self.url.clone(),
                    source,
                })?;
        let mut replies: Vec<Reply> = values.into_iter().map(reply_from_redis).collect();
        self.read_set_payloads(ops, &mut replies, dump).await?;
        Ok(replies)
    }

    /// Turns the `DUMP` payloads of [`Op::SMembers`] into their members;
    /// the sets whose payload is not understood are read with SMEMBERS, in
    /// one more round trip.
    async fn read_set_payloads(
        &self,
        ops: &[Op],
        replies: &mut [Reply],
        dump: bool,
    ) -> Result<(), StoreError> {
        let mut fallback: Vec<(usize, &str)> = Vec::new();
        for (i, (op, reply)) in ops.iter().zip(replies.iter_mut()).enumerate() {
            let Op::SMembers { key } = op else { continue };
            if !dump {
                *reply = Reply::Ints(reply.ints()?);
                continue;
            }
            match reply {
                Reply::Nil => *reply = Reply::Ints(Vec::new()),
                Reply::Data(payload) => match crate::rdb::set_members(payload) {
                    Some(members) => *reply = Reply::Ints(members),
                    None => fallback.push((i, key)),
                },
                _ => {
                    return Err(StoreError::Reply {
                        op: "DUMP",
                        reply: reply.clone(),
                    })
                }
            }
        }
        if fallback.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (_, key) in &fallback {
            pipe.smembers(*key);
        }
        let mut conn = self.conn.clone();
        let sets: Vec<Vec<i64>> =
            pipe.query_async(&mut conn)
                .await
                .map_err(|source| StoreError::Redis {
                    url: self.url.clone(),
                    source,
                })?;
        for ((i, _), members) in fallback.into_iter().zip(sets) {
            replies[i] = Reply::Ints(members);
        }
        Ok(())
    }

    async fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conn.clone();
        let mut cursor: u64 = 0;
        let mut keys = Vec::new();
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await
                .map_err(|source| StoreError::Redis {
                    url: self.url.clone(),
                    source,
                })?;
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        Ok(keys)
    }
}

/// The counters of [`Op::SetNxWith`] and [`Op::Once`] as their scripts
/// read them: a key each, then field and by.
fn count_args(inv: &mut redis::ScriptInvocation<'_>, counts: &[(String, String, i64)]) {
    for (k, field, by) in counts {
        inv.key(k).arg(field).arg(*by);
    }
}

fn reply_from_redis(v: redis::Value) -> Reply {
    match v {
        redis::Value::Nil => Reply::Nil,
        redis::Value::Int(i) => Reply::Int(i),
        redis::Value::BulkString(d) => Reply::Data(d),
        redis::Value::SimpleString(s) => Reply::Data(s.into_bytes()),
        redis::Value::Okay => Reply::Nil,
        redis::Value::Array(items) | redis::Value::Set(items) => {
            Reply::Array(items.into_iter().map(reply_from_redis).collect())
        }
        redis::Value::Map(pairs) => Reply::Array(
            pairs
                .into_iter()
                .flat_map(|(k, v)| [reply_from_redis(k), reply_from_redis(v)])
                .collect(),
        ),
        redis::Value::Boolean(b) => Reply::Int(b as i64),
        redis::Value::Double(d) => Reply::Data(d.to_string().into_bytes()),
        redis::Value::BigNumber(n) => Reply::Data(n.to_string().into_bytes()),
        redis::Value::VerbatimString { text, .. } => Reply::Data(text.into_bytes()),
        _ => Reply::Nil,
    }
}

/// The in-memory store of `crawler run`: the same operations on a map.
#[derive(Clone, Default)]
pub struct MemoryStore {
    map: Arc<Mutex<HashMap<String, Value>>>,
}

#[derive(Debug, Clone)]
enum Value {
    Str(Vec<u8>),
    Set(HashSet<i64>),
    Hash(HashMap<String, Vec<u8>>),
    List(Vec<Vec<u8>>),
    /// Sorted set: member → score (scans are linear; the memory store is for
    /// one-process crawls).
    ZSet(HashMap<Vec<u8>, i64>),
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// An integer field of a hash (0 when absent).
fn hash_int(map: &HashMap<String, Value>, key: &str, field: &str) -> i64 {
    match map.get(key) {
        Some(Value::Hash(h)) => h.get(field).map(|v| parse_int(v)).unwrap_or(0),
        _ => 0,
    }
}

fn hash_set_int(
    map: &mut HashMap<String, Value>,
    key: &str,
    field: &str,
    v: i64,
) -> Result<(), StoreError> {
    hash_mut(map, key)?.insert(field.to_string(), v.to_string().into_bytes());
    Ok(())
}

/// Removes empty collections, as Redis does.
fn drop_if_empty(map: &mut HashMap<String, Value>, key: &str) {
    let empty = match map.get(key) {
        Some(Value::List(l)) => l.is_empty(),
        Some(Value::ZSet(z)) => z.is_empty(),
        Some(Value::Set(s)) => s.is_empty(),
        _ => false,
    };
    if empty {
        map.remove(key);
    }
}

/// The memory store's [`Op::HostRelease`], step for step like the Lua.
#[allow(clippy::too_many_arguments)]
fn host_release(
    map: &mut HashMap<String, Value>,
    schedule: &str,
    releasing: &str,
    queue_prefix: &str,
    record_prefix: &str,
    max_hosts: u32,
    burst: u32,
    park_after: u32,
    park_ms: u64,
) -> Result<Reply, StoreError> {
    let now = now_ms();
    let mut due: Vec<(i64, Vec<u8>)> = match map.get(schedule) {
        Some(Value::ZSet(z)) => z
            .iter()
            .filter(|(_, s)| **s <= now)
            .map(|(m, s)| (*s, m.clone()))
            .collect(),
        _ => Vec::new(),
    };
    due.sort();
    due.truncate(max_hosts as usize);
    let mut out = Vec::new();
    for (_, host) in due {
        let h = String::from_utf8_lossy(&host).into_owned();
        let q = format!("{queue_prefix}{h}");
        let rec = format!("{record_prefix}{h}");
        let mut delay = hash_int(map, &rec, "crawl_delay_ms").max(hash_int(map, &rec, "delay_ms"));
        let streak = hash_int(map, &rec, "fail_streak");
        if streak > 0 {
            delay = delay.max(1000) * (1 << streak.min(6));
        }
        let n = if delay == 0 { burst.max(1) } else { 1 };
        let mut taken = 0;
        for _ in 0..n {
            let task = match map.get_mut(&q) {
                Some(Value::List(l)) if !l.is_empty() => l.remove(0),
                _ => break,
            };
            let mut m = host.clone();
            m.push(b'\n');
            m.extend_from_slice(&task);
            zset_mut(map, releasing)?.insert(m.clone(), now);
            out.push(Reply::Data(m));
            taken += 1;
        }
        drop_if_empty(map, &q);
        if taken > 0 {
            let mut next = (now + delay).max(hash_int(map, &rec, "backoff_until_ms"));
            if streak >= i64::from(park_after) {
                next = next.max(now + park_ms as i64);
                hash_set_int(map, &rec, "parked_until_ms", next)?;
            }
            hash_set_int(map, &rec, "next_ms", next)?;
            let more = matches!(map.get(&q), Some(Value::List(l)) if !l.is_empty());
            if more {
                zset_mut(map, schedule)?.insert(host, next);
            } else {
                zset_mut(map, schedule)?.remove(&host);
            }
        } else {
            zset_mut(map, schedule)?.remove(&host);
        }
        drop_if_empty(map, schedule);
    }
    Ok(Reply::Array(out))
}

impl MemoryStore {
    fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        ops.iter().map(|op| apply(&mut map, op)).collect()
    }

    fn keys_matching(&self, pattern: &str) -> Vec<String> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.keys()
            .filter(|k| glob_match(pattern, k))
            .cloned()
            .collect()
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob_match(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// The value at `key` as the kind `get` extracts, created with `new` if
/// absent; a value of another kind is a [`StoreError::WrongType`].
fn typed_mut<'a, T>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
    new: fn() -> Value,
    get: fn(&mut Value) -> Option<&mut T>,
) -> Result<&'a mut T, StoreError> {
    get(map.entry(key.to_string()).or_insert_with(new))
        .ok_or_else(|| StoreError::WrongType(key.to_string()))
}

fn set_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut HashSet<i64>, StoreError> {
    typed_mut(
        map,
        key,
        || Value::Set(HashSet::new()),
        |v| match v {
            Value::Set(s) => Some(s),
            _ => None,
        },
    )
}

/// The counters of [`Op::SetNxWith`] and [`Op::Once`] (key, field, by), in
/// the memory store: `HINCRBY` each.
fn apply_counts(
    map: &mut HashMap<String, Value>,
    counts: &[(String, String, i64)],
) -> Result<(), StoreError> {
    for (k, field, by) in counts {
        apply(
            map,
            &Op::HIncr {
                key: k.clone(),
                field: field.clone(),
                by: *by,
            },
        )?;
    }
    Ok(())
}

fn hash_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut HashMap<String, Vec<u8>>, StoreError> {
    typed_mut(
        map,
        key,
        || Value::Hash(HashMap::new()),
        |v| match v {
            Value::Hash(h) => Some(h),
            _ => None,
        },
    )
}

fn list_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut Vec<Vec<u8>>, StoreError> {
    typed_mut(
        map,
        key,
        || Value::List(Vec::new()),
        |v| match v {
            Value::List(l) => Some(l),
            _ => None,
        },
    )
}

fn zset_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut HashMap<Vec<u8>, i64>, StoreError> {
    typed_mut(
        map,
        key,
        || Value::ZSet(HashMap::new()),
        |v| match v {
            Value::ZSet(z) => Some(z),
            _ => None,
        },
    )
}

fn parse_int(bytes: &[u8]) -> i64 {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn ints_reply(members: impl Iterator<Item = i64>) -> Reply {
    Reply::Ints(members.collect())
}

fn apply(map: &mut HashMap<String, Value>, op: &Op) -> Result<Reply, StoreError> {
    Ok(match op {
        Op::SAdd { key, members } => {
            let set = set_mut(map, key)?;
            Reply::Int(members.iter().filter(|m| set.insert(**m)).count() as i64)
        }
        Op::SMembers { key } => match map.get(key) {
            Some(Value::Set(s)) => ints_reply(s.iter().copied()),
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Ints(Vec::new()),
        },
        Op::SetNxWith {
            key,
            value,
            pushes,
            counts,
        } => {
            if map.contains_key(key) {
                return Ok(Reply::Int(0));
            }
            map.insert(key.clone(), Value::Str(value.clone()));
            for (k, v) in pushes {
                apply(
                    map,
                    &Op::RPush {
                        key: k.clone(),
                        value: v.clone(),
                    },
                )?;
            }
            apply_counts(map, counts)?;
            Reply::Int(1)
        }
        Op::Once {
            mark,
            field,
            id,
            sets,
            counts,
        } => {
            let h = hash_mut(map, mark)?;
            let seen: Vec<Vec<u8>> = h
                .get(field)
                .map(|v| {
                    v.split(|&b| b == b'\n')
                        .filter(|s| !s.is_empty())
                        .map(<[u8]>::to_vec)
                        .collect()
                })
                .unwrap_or_default();
            if seen.iter().any(|old| old == id.as_bytes()) {
                return Ok(Reply::Int(0));
            }
            let mut keep = id.as_bytes().to_vec();
            for old in seen.iter().take(ONCE_HISTORY - 1) {
                keep.push(b'\n');
                keep.extend_from_slice(old);
            }
            h.insert(field.clone(), keep);
            for (k, v) in sets {
                apply(
                    map,
                    &Op::Set {
                        key: k.clone(),
                        value: v.clone(),
                        expire_ms: None,
                    },
                )?;
            }
            apply_counts(map, counts)?;
            Reply::Int(1)
        }
        Op::ClaimFirst { slots, counter, by } => {
            let mut out = Vec::with_capacity(slots.len() + 1);
            for (key, field, value) in slots {
                let h = hash_mut(map, key)?;
                let claimed = !h.contains_key(field);
                if claimed {
                    h.insert(field.clone(), value.clone());
                }
                out.push(Reply::Int(claimed as i64));
            }
            out.push(apply(
                map,
                &Op::Incr {
                    key: counter.clone(),
                    by: *by,
                },
            )?);
            Reply::Array(out)
        }
        Op::Incr { key, by } => {
            let cur = match map.get(key) {
                Some(Value::Str(s)) => parse_int(s),
                Some(_) => return Err(StoreError::WrongType(key.clone())),
                None => 0,
            };
            let new = cur + by;
            map.insert(key.clone(), Value::Str(new.to_string().into_bytes()));
            Reply::Int(new)
        }
        Op::HIncr { key, field, by } => {
            let h = hash_mut(map, key)?;
            let new = h.get(field).map(|v| parse_int(v)).unwrap_or(0) + by;
            h.insert(field.clone(), new.to_string().into_bytes());
            Reply::Int(new)
        }
        Op::HSetNx { key, field, value } => {
            let h = hash_mut(map, key)?;
            if h.contains_key(field) {
                Reply::Int(0)
            } else {
                h.insert(field.clone(), value.clone());
                Reply::Int(1)
            }
        }
        Op::HGet { key, field } => match map.get(key) {
            Some(Value::Hash(h)) => h.get(field).cloned().map_or(Reply::Nil, Reply::Data),
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Nil,
        },
        Op::HGetAll { key } => match map.get(key) {
            Some(Value::Hash(h)) => Reply::Array(
                h.iter()
                    .flat_map(|(k, v)| {
                        [Reply::Data(k.clone().into_bytes()), Reply::Data(v.clone())]
                    })
                    .collect(),
            ),
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Array(Vec::new()),
        },
        Op::SetNx { key, value } => {
            if map.contains_key(key) {
                Reply::Int(0)
            } else {
                map.insert(key.clone(), Value::Str(value.clone()));
                Reply::Int(1)
            }
        }
        Op::Set { key, value, .. } => {
            map.insert(key.clone(), Value::Str(value.clone()));
            Reply::Nil
        }
        Op::Get { key } => match map.get(key) {
            Some(Value::Str(s)) => Reply::Data(s.clone()),
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Nil,
        },
        Op::RPush { key, value } => {
            let l = list_mut(map, key)?;
            l.push(value.clone());
            Reply::Int(l.len() as i64)
        }
        Op::LRange { key, start, stop } => match map.get(key) {
            Some(Value::List(l)) => {
                let len = l.len() as i64;
                let norm = |i: i64| if i < 0 { (len + i).max(0) } else { i };
                let (s, e) = (norm(*start), norm(*stop).min(len - 1));
                if s > e || s >= len {
                    Reply::Array(Vec::new())
                } else {
                    Reply::Array(
                        l[s as usize..=e as usize]
                            .iter()
                            .cloned()
                            .map(Reply::Data)
                            .collect(),
                    )
                }
            }
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Array(Vec::new()),
        },
        Op::LLen { key } => match map.get(key) {
            Some(Value::List(l)) => Reply::Int(l.len() as i64),
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Int(0),
        },
        Op::Del { key } => Reply::Int(map.remove(key).is_some() as i64),
        Op::ZRem { key, members } => {
            let n = match map.get_mut(key) {
                Some(Value::ZSet(z)) => members.iter().filter(|m| z.remove(*m).is_some()).count(),
                Some(_) => return Err(StoreError::WrongType(key.clone())),
                None => 0,
            };
            drop_if_empty(map, key);
            Reply::Int(n as i64)
        }
        Op::ZCard { key } => match map.get(key) {
            Some(Value::ZSet(z)) => Reply::Int(z.len() as i64),
            Some(_) => return Err(StoreError::WrongType(key.clone())),
            None => Reply::Int(0),
        },
        Op::HSet { key, fields } => {
            let h = hash_mut(map, key)?;
            let new = fields
                .iter()
                .filter(|(f, v)| h.insert(f.clone(), v.clone()).is_none())
                .count();
            Reply::Int(new as i64)
        }
        Op::HostEnqueue {
            schedule,
            queue,
            record,
            origin,
            crawl_delay_ms,
            tasks,
        } => {
            let l = list_mut(map, queue)?;
            l.extend(tasks.iter().cloned());
            let len = l.len() as i64;
            hash_set_int(map, record, "crawl_delay_ms", *crawl_delay_ms as i64)?;
            let due = now_ms().max(hash_int(map, record, "next_ms"));
            zset_mut(map, schedule)?
                .entry(origin.as_bytes().to_vec())
                .or_insert(due);
            Reply::Int(len)
        }
        Op::HostRelease {
            schedule,
            releasing,
            queue_prefix,
            record_prefix,
            max_hosts,
            burst,
            park_after,
            park_ms,
        } => host_release(
            map,
            schedule,
            releasing,
            queue_prefix,
            record_prefix,
            *max_hosts,
            *burst,
            *park_after,
            *park_ms,
        )?,
        Op::HostSweep {
            schedule,
            releasing,
            queue_prefix,
            older_than_ms,
        } => {
            let cutoff = now_ms() - *older_than_ms as i64;
            let stale: Vec<Vec<u8>> = match map.get(releasing) {
                Some(Value::ZSet(z)) => z
                    .iter()
                    .filter(|(_, s)| **s <= cutoff)
                    .map(|(m, _)| m.clone())
                    .collect(),
                _ => Vec::new(),
            };
            for m in &stale {
                if let Some(i) = m.iter().position(|b| *b == b'\n') {
                    let host = m[..i].to_vec();
                    let q = format!("{queue_prefix}{}", String::from_utf8_lossy(&host));
                    list_mut(map, &q)?.insert(0, m[i + 1..].to_vec());
                    zset_mut(map, schedule)?.entry(host).or_insert(now_ms());
                }
                zset_mut(map, releasing)?.remove(m);
            }
            drop_if_empty(map, releasing);
            Reply::Int(stale.len() as i64)
        }
        Op::HostGate { record, hold_ms } => {
            let now = now_ms();
            let next = hash_int(map, record, "next_fetch_ms").max(hash_int(
                map,
                record,
                "backoff_until_ms",
            ));
            if now >= next {
                if *hold_ms > 0 {
                    hash_set_int(map, record, "next_fetch_ms", now + *hold_ms as i64)?;
                }
                Reply::Int(0)
            } else {
                Reply::Int(next - now)
            }
        }
        Op::HostTurnDone { record, delay_ms } => {
            hash_set_int(map, record, "next_fetch_ms", now_ms() + *delay_ms as i64)?;
            Reply::Int(0)
        }
        Op::ZAddIn { key, member, in_ms } => {
            let z = zset_mut(map, key)?;
            let new = z.insert(member.clone(), now_ms() + *in_ms as i64).is_none();
            Reply::Int(new as i64)
        }
        Op::ZPopDue { key, max } => {
            let now = now_ms();
            let mut due: Vec<(i64, Vec<u8>)> = match map.get(key) {
                Some(Value::ZSet(z)) => z
                    .iter()
                    .filter(|(_, s)| **s <= now)
                    .map(|(m, s)| (*s, m.clone()))
                    .collect(),
                Some(_) => return Err(StoreError::WrongType(key.clone())),
                None => Vec::new(),
            };
            due.sort();
            due.truncate(*max as usize);
            let z = zset_mut(map, key)?;
            for (_, m) in &due {
                z.remove(m);
            }
            drop_if_empty(map, key);
            Reply::Array(due.into_iter().map(|(_, m)| Reply::Data(m)).collect())
        }
        Op::Claim {
            seen,
            claim,
            members,
            ..
        } => {
            let added: Vec<i64> = {
                let set = set_mut(map, seen)?;
                members.iter().copied().filter(|m| set.insert(*m)).collect()
            };
            if added.is_empty() && !map.contains_key(claim) {
                Reply::Array(Vec::new())
            } else {
                let c = set_mut(map, claim)?;
                c.extend(added);
                ints_reply(c.iter().copied())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_claim_is_idempotent_per_claimant() {
        let store = Store::memory();
        let claim = |claim: &str, members: Vec<i64>| Op::Claim {
            seen: "s".into(),
            claim: claim.into(),
            members,
            ttl_secs: 60,
        };
        let mut r = store
            .one(claim("a", vec![1, 2, 3]))
            .await
            .unwrap()
            .ints()
            .unwrap();
        r.sort();
        assert_eq!(r, vec![1, 2, 3]);
        // Another batch with overlapping URLs claims only the new one.
        let r = store
            .one(claim("b", vec![3, 4]))
            .await
            .unwrap()
            .ints()
            .unwrap();
        assert_eq!(r, vec![4]);
        // A redelivery of batch a gets its own claims back.
        let mut r = store
            .one(claim("a", vec![1, 2, 3]))
            .await
            .unwrap()
            .ints()
            .unwrap();
        r.sort();
        assert_eq!(r, vec![1, 2, 3]);
    }

    #[test]
    fn globs() {
        assert!(glob_match("ns:live:*", "ns:live:fetch:1"));
        assert!(!glob_match("ns:live:*", "ns:dead:fetch:1"));
        assert!(glob_match("a*c*e", "abcde"));
        assert!(glob_match("exact", "exact"));
    }

    #[tokio::test]
    async fn memory_lists_and_hashes() {
        let store = Store::memory();
        let replies = store
            .exec(&[
                Op::RPush {
                    key: "l".into(),
                    value: b"a".to_vec(),
                },
                Op::RPush {
                    key: "l".into(),
                    value: b"b".to_vec(),
                },
                Op::LRange {
                    key: "l".into(),
                    start: 0,
                    stop: -1,
                },
                Op::HSetNx {
                    key: "h".into(),
                    field: "f".into(),
                    value: b"1".to_vec(),
                },
                Op::HSetNx {
                    key: "h".into(),
                    field: "f".into(),
                    value: b"2".to_vec(),
                },
                Op::HGet {
                    key: "h".into(),
                    field: "f".into(),
                },
            ])
            .await
            .unwrap();
        assert_eq!(replies[2].strings().unwrap(), vec!["a", "b"]);
        assert_eq!(replies[3], Reply::Int(1));
        assert_eq!(replies[4], Reply::Int(0));
        assert_eq!(replies[5].string().unwrap().as_deref(), Some("1"));
    }
}
