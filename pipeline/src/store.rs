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
    /// SMEMBERS: reply Ints.
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

    fn unexpected(&self, op: &'static str) -> StoreError {
        StoreError::Reply {
            op,
            reply: self.clone(),
        }
    }
}

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
            Store::Redis(r) => r.exec(ops).await,
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
    claim: Arc<redis::Script>,
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
            claim: Arc::new(redis::Script::new(CLAIM_LUA)),
        })
    }

    async fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        let mut pipe = redis::pipe();
        let mut invocations = Vec::new();
        if ops.iter().any(|op| matches!(op, Op::Claim { .. })) {
            pipe.load_script(&self.claim).ignore();
        }
        for op in ops {
            match op {
                Op::SAdd { key, members } => {
                    pipe.sadd(key, members);
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
                Op::Claim {
                    seen,
                    claim,
                    members,
                    ttl_secs,
                } => {
                    let mut inv = self.claim.prepare_invoke();
                    inv.key(seen).key(claim).arg(*ttl_secs);
                    for m in members {
                        inv.arg(*m);
                    }
                    invocations.push(inv);
                    if let Some(inv) = invocations.last() {
                        pipe.invoke_script(inv);
                    }
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
        Ok(values.into_iter().map(reply_from_redis).collect())
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

fn set_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut HashSet<i64>, StoreError> {
    match map
        .entry(key.to_string())
        .or_insert_with(|| Value::Set(HashSet::new()))
    {
        Value::Set(s) => Ok(s),
        _ => Err(StoreError::WrongType(key.to_string())),
    }
}

fn hash_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut HashMap<String, Vec<u8>>, StoreError> {
    match map
        .entry(key.to_string())
        .or_insert_with(|| Value::Hash(HashMap::new()))
    {
        Value::Hash(h) => Ok(h),
        _ => Err(StoreError::WrongType(key.to_string())),
    }
}

fn list_mut<'a>(
    map: &'a mut HashMap<String, Value>,
    key: &str,
) -> Result<&'a mut Vec<Vec<u8>>, StoreError> {
    match map
        .entry(key.to_string())
        .or_insert_with(|| Value::List(Vec::new()))
    {
        Value::List(l) => Ok(l),
        _ => Err(StoreError::WrongType(key.to_string())),
    }
}

fn parse_int(bytes: &[u8]) -> i64 {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn ints_reply(members: impl Iterator<Item = i64>) -> Reply {
    Reply::Array(members.map(Reply::Int).collect())
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
            None => Reply::Array(Vec::new()),
        },
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
