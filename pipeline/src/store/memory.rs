//! The Redis data model without Redis: the [`Data`] a backend holds (the
//! commands every generic op and every script's twin is made of), the
//! in-memory store of `crawler run` over a map, and the [`Memory`] view a
//! stage's [`super::Script`] twin works on. Every [`Op`] is applied here
//! once, on any [`Data`] ([`apply`]): the memory store and the disk store
//! share it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use super::{Op, Reply, StoreError, Stored};

/// What a key holds, as Redis would hold it, command by command. Missing
/// keys read as empty, emptied collections vanish, and a key of another
/// kind is a [`StoreError::WrongType`], as on Redis.
pub trait Data {
    /// GET.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// SET (whatever the key held).
    fn set(&mut self, key: &str, value: &[u8]);
    /// APPEND: reply the new length.
    fn append(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError>;
    /// INCRBY: reply the new value.
    fn incr(&mut self, key: &str, by: i64) -> Result<i64, StoreError>;
    /// EXISTS.
    fn exists(&self, key: &str) -> bool;
    /// DEL: whether it was there.
    fn del(&mut self, key: &str) -> bool;
    /// HGET.
    fn hget(&self, key: &str, field: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// HSET of one field: whether the field is new.
    fn hset(&mut self, key: &str, field: &str, value: &[u8]) -> Result<bool, StoreError>;
    /// HDEL of one field: whether it was there.
    fn hdel(&mut self, key: &str, field: &str) -> Result<bool, StoreError>;
    /// HLEN.
    fn hlen(&self, key: &str) -> Result<i64, StoreError>;
    /// HGETALL, in no particular order.
    fn hgetall(&self, key: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError>;
    /// SADD of one member: whether it is new.
    fn sadd(&mut self, key: &str, member: i64) -> Result<bool, StoreError>;
    /// SISMEMBER.
    fn sismember(&self, key: &str, member: i64) -> Result<bool, StoreError>;
    /// SMEMBERS, in no particular order.
    fn smembers(&self, key: &str) -> Result<Vec<i64>, StoreError>;
    /// RPUSH of one value: the new length.
    fn rpush(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError>;
    /// LPUSH of one value: the new length.
    fn lpush(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError>;
    /// LPOP.
    fn lpop(&mut self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// LLEN.
    fn llen(&self, key: &str) -> Result<i64, StoreError>;
    /// LRANGE (negative indexes from the end, as Redis).
    fn lrange(&self, key: &str, start: i64, stop: i64) -> Result<Vec<Vec<u8>>, StoreError>;
    /// ZADD of one member (`nx`: only if it is new): whether it is new.
    fn zadd(&mut self, key: &str, member: &[u8], score: i64, nx: bool) -> Result<bool, StoreError>;
    /// ZREM of one member: whether it was there.
    fn zrem(&mut self, key: &str, member: &[u8]) -> Result<bool, StoreError>;
    /// ZSCORE.
    fn zscore(&self, key: &str, member: &[u8]) -> Result<Option<i64>, StoreError>;
    /// ZCARD.
    fn zcard(&self, key: &str) -> Result<i64, StoreError>;
    /// `ZRANGE key min max BYSCORE LIMIT 0 limit WITHSCORES`: by score,
    /// ties by member bytes.
    fn zrange_by_score(
        &self,
        key: &str,
        min: i64,
        max: i64,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError>;
    /// `ZRANGE key start stop REV WITHSCORES`.
    fn zrevrange(
        &self,
        key: &str,
        start: i64,
        stop: i64,
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError>;
}

/// The store as a [`super::Script`]'s twin sees it: the [`Data`] commands
/// (through `Deref`), with the clock stopped at the call's start (the
/// Lua's `now`), and the few readings the twins share.
pub struct Memory<'a> {
    data: &'a mut dyn Data,
    now: i64,
}

impl<'a> std::ops::Deref for Memory<'a> {
    type Target = dyn Data + 'a;
    fn deref(&self) -> &Self::Target {
        self.data
    }
}

impl std::ops::DerefMut for Memory<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.data
    }
}

impl<'a> Memory<'a> {
    /// A view of `data` whose clock reads `now` (Unix ms).
    pub fn new(data: &'a mut dyn Data, now: i64) -> Memory<'a> {
        Memory { data, now }
    }

    /// The call's clock, Unix ms.
    pub fn now(&self) -> i64 {
        self.now
    }

    /// An integer field of a hash; 0 when absent or not a number (Lua's
    /// `tonumber(HGET or '0') or 0`).
    pub fn hash_int(&self, key: &str, field: &str) -> i64 {
        self.data
            .hget(key, field)
            .ok()
            .flatten()
            .map_or(0, |v| parse_int(&v))
    }

    /// HSET of one integer field.
    pub fn hash_set_int(&mut self, key: &str, field: &str, v: i64) -> Result<(), StoreError> {
        self.data.hset(key, field, v.to_string().as_bytes())?;
        Ok(())
    }

    /// HINCRBY: the new value.
    pub fn hincr(&mut self, key: &str, field: &str, by: i64) -> Result<i64, StoreError> {
        let new = self
            .data
            .hget(key, field)?
            .map_or(0, |v| parse_int(&v))
            .saturating_add(by);
        self.data.hset(key, field, new.to_string().as_bytes())?;
        Ok(new)
    }

    /// `ZRANGEBYSCORE key -inf max LIMIT 0 limit`: the members.
    pub fn zrange_upto(
        &self,
        key: &str,
        max: i64,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        Ok(self
            .data
            .zrange_by_score(key, i64::MIN, max, limit)?
            .into_iter()
            .map(|(m, _)| m)
            .collect())
    }

    /// `ZRANGE key 0 0 WITHSCORES`: the lowest-scored member and its score.
    pub fn zfirst(&self, key: &str) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
        Ok(self
            .data
            .zrange_by_score(key, i64::MIN, i64::MAX, 1)?
            .into_iter()
            .next())
    }

    /// ZINCRBY: the new score.
    pub fn zincr(&mut self, key: &str, member: &[u8], by: i64) -> Result<i64, StoreError> {
        let new = self.data.zscore(key, member)?.unwrap_or(0) + by;
        self.data.zadd(key, member, new, false)?;
        Ok(new)
    }
}

/// A Redis integer reply of stored bytes (0 when not a number).
pub fn parse_int(bytes: &[u8]) -> i64 {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The current time in Unix ms (the memory store's clock).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Applies one op to `data`, as Redis would: the one implementation of
/// every generic op, for every backend but Redis.
pub fn apply(data: &mut dyn Data, op: &Op, now: i64) -> Result<Reply, StoreError> {
    let bool_int = |b: bool| Reply::Int(i64::from(b));
    let pairs = |items: Vec<(Vec<u8>, i64)>| {
        Reply::Array(
            items
                .into_iter()
                .flat_map(|(m, s)| [Reply::Data(m), Reply::Int(s)])
                .collect(),
        )
    };
    Ok(match op {
        Op::Get { key } => data.get(key)?.map_or(Reply::Nil, Reply::Data),
        Op::Set { key, value, .. } => {
            data.set(key, value);
            Reply::Nil
        }
        Op::SetNx { key, value } => {
            let new = !data.exists(key);
            if new {
                data.set(key, value);
            }
            bool_int(new)
        }
        // Redis answers nil for a key of another type.
        Op::MGet { keys } => Reply::Array(
            keys.iter()
                .map(|k| data.get(k).ok().flatten().map_or(Reply::Nil, Reply::Data))
                .collect(),
        ),
        Op::Append { key, value } => Reply::Int(data.append(key, value)?),
        Op::Incr { key, by } => Reply::Int(data.incr(key, *by)?),
        Op::Del { key } | Op::Unlink { key } => bool_int(data.del(key)),
        Op::HGet { key, field } => data.hget(key, field)?.map_or(Reply::Nil, Reply::Data),
        Op::HGetAll { key } => Reply::Array(
            data.hgetall(key)?
                .into_iter()
                .flat_map(|(f, v)| [Reply::Data(f.into_bytes()), Reply::Data(v)])
                .collect(),
        ),
        Op::HSet { key, fields } => {
            let mut new = 0;
            for (f, v) in fields {
                new += i64::from(data.hset(key, f, v)?);
            }
            Reply::Int(new)
        }
        Op::HSetNx { key, field, value } => {
            let new = data.hget(key, field)?.is_none();
            if new {
                data.hset(key, field, value)?;
            }
            bool_int(new)
        }
        Op::HIncr { key, field, by } => Reply::Int(Memory::new(data, now).hincr(key, field, *by)?),
        Op::HDel { key, field } => bool_int(data.hdel(key, field)?),
        Op::SAdd { key, members } => {
            let mut new = 0;
            for m in members {
                new += i64::from(data.sadd(key, *m)?);
            }
            Reply::Int(new)
        }
        Op::SMIsMember { key, members } => Reply::Array(
            members
                .iter()
                .map(|m| Ok(bool_int(data.sismember(key, *m)?)))
                .collect::<Result<_, StoreError>>()?,
        ),
        Op::RPush { key, values } => {
            let mut len = data.llen(key)?;
            for v in values {
                len = data.rpush(key, v)?;
            }
            Reply::Int(len)
        }
        Op::LRange { key, start, stop } => Reply::Array(
            data.lrange(key, *start, *stop)?
                .into_iter()
                .map(Reply::Data)
                .collect(),
        ),
        Op::LLen { key } => Reply::Int(data.llen(key)?),
        Op::ZAdd { key, members } => {
            let mut new = 0;
            for (score, m) in members {
                new += i64::from(data.zadd(key, m, *score, false)?);
            }
            Reply::Int(new)
        }
        Op::ZRem { key, members } => {
            let mut gone = 0;
            for m in members {
                gone += i64::from(data.zrem(key, m)?);
            }
            Reply::Int(gone)
        }
        Op::ZCard { key } => Reply::Int(data.zcard(key)?),
        Op::ZRangeByScore {
            key,
            min,
            max,
            limit,
        } => pairs(data.zrange_by_score(
            key,
            *min,
            *max,
            limit.map_or(usize::MAX, |l| l as usize),
        )?),
        Op::ZRevRange { key, start, stop } => pairs(data.zrevrange(key, *start, *stop)?),
        Op::Script(call) => {
            (call.script.twin)(&mut Memory::new(data, now), &call.keys, &call.args)?
        }
    })
}

/// The in-memory store of `crawler run`: the [`Data`] of a map, under one
/// lock for every batch.
#[derive(Clone, Default)]
pub struct MemoryStore {
    map: Arc<Mutex<Values>>,
}

/// One key's value.
#[derive(Debug, Clone)]
enum Value {
    Str(Vec<u8>),
    Set(HashSet<i64>),
    Hash(HashMap<String, Vec<u8>>),
    List(VecDeque<Vec<u8>>),
    ZSet(ZSet),
}

/// A sorted set: members by score (Redis's order: score, then member
/// bytes), and each member's score.
#[derive(Debug, Clone, Default)]
struct ZSet {
    by_score: BTreeSet<(i64, Vec<u8>)>,
    score: HashMap<Vec<u8>, i64>,
}

/// The hash a value is, if it is one.
fn hash_in(v: &mut Value) -> Option<&mut HashMap<String, Vec<u8>>> {
    match v {
        Value::Hash(h) => Some(h),
        _ => None,
    }
}

/// The list a value is, if it is one.
fn list_in(v: &mut Value) -> Option<&mut VecDeque<Vec<u8>>> {
    match v {
        Value::List(l) => Some(l),
        _ => None,
    }
}

/// The zset a value is, if it is one.
fn zset_in(v: &mut Value) -> Option<&mut ZSet> {
    match v {
        Value::ZSet(z) => Some(z),
        _ => None,
    }
}

/// The map of keys of the memory store.
#[derive(Default)]
struct Values(HashMap<String, Value>);

impl Values {
    /// The value of one kind at `key`, created if absent.
    fn kind_mut<T>(
        &mut self,
        key: &str,
        new: fn() -> Value,
        get: fn(&mut Value) -> Option<&mut T>,
    ) -> Result<&mut T, StoreError> {
        get(self.0.entry(key.to_string()).or_insert_with(new))
            .ok_or_else(|| StoreError::WrongType(key.to_string()))
    }

    fn hash_mut(&mut self, key: &str) -> Result<&mut HashMap<String, Vec<u8>>, StoreError> {
        self.kind_mut(key, || Value::Hash(HashMap::new()), hash_in)
    }

    fn list_mut(&mut self, key: &str) -> Result<&mut VecDeque<Vec<u8>>, StoreError> {
        self.kind_mut(key, || Value::List(VecDeque::new()), list_in)
    }

    fn zset_mut(&mut self, key: &str) -> Result<&mut ZSet, StoreError> {
        self.kind_mut(key, || Value::ZSet(ZSet::default()), zset_in)
    }

    fn str_mut(&mut self, key: &str) -> Result<&mut Vec<u8>, StoreError> {
        self.kind_mut(
            key,
            || Value::Str(Vec::new()),
            |v| match v {
                Value::Str(s) => Some(s),
                _ => None,
            },
        )
    }

    /// Takes from the collection at `key` as `take` does (an error when the
    /// value there is of another kind than `get` picks; `T::default()`
    /// when there is none), then drops it if emptied, as Redis does.
    fn take<C, T: Default>(
        &mut self,
        key: &str,
        get: fn(&mut Value) -> Option<&mut C>,
        take: impl FnOnce(&mut C) -> T,
    ) -> Result<T, StoreError> {
        let taken = match self.0.get_mut(key) {
            Some(v) => take(get(v).ok_or_else(|| StoreError::WrongType(key.to_string()))?),
            None => T::default(),
        };
        self.drop_if_empty(key);
        Ok(taken)
    }

    /// Removes an emptied collection, as Redis does.
    fn drop_if_empty(&mut self, key: &str) {
        let empty = match self.0.get(key) {
            Some(Value::List(l)) => l.is_empty(),
            Some(Value::ZSet(z)) => z.score.is_empty(),
            Some(Value::Set(s)) => s.is_empty(),
            Some(Value::Hash(h)) => h.is_empty(),
            _ => false,
        };
        if empty {
            self.0.remove(key);
        }
    }

    /// The value at `key` read as `get` extracts it: `None` when absent, an
    /// error when of another kind.
    fn read<'a, T>(
        &'a self,
        key: &str,
        get: fn(&'a Value) -> Option<T>,
    ) -> Result<Option<T>, StoreError> {
        match self.0.get(key) {
            None => Ok(None),
            Some(v) => get(v)
                .map(Some)
                .ok_or_else(|| StoreError::WrongType(key.to_string())),
        }
    }

    fn hash(&self, key: &str) -> Result<Option<&HashMap<String, Vec<u8>>>, StoreError> {
        self.read(key, |v| match v {
            Value::Hash(h) => Some(h),
            _ => None,
        })
    }

    fn list(&self, key: &str) -> Result<Option<&VecDeque<Vec<u8>>>, StoreError> {
        self.read(key, |v| match v {
            Value::List(l) => Some(l),
            _ => None,
        })
    }

    fn zset(&self, key: &str) -> Result<Option<&ZSet>, StoreError> {
        self.read(key, |v| match v {
            Value::ZSet(z) => Some(z),
            _ => None,
        })
    }
}

/// `start..=stop` of a sequence of `len` as Redis reads a range (negative
/// from the end), or `None` when empty.
pub fn range_of(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let norm = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let (s, e) = (norm(start), norm(stop).min(len - 1));
    (s <= e && s < len).then_some((s as usize, e as usize))
}

impl Data for Values {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .read(key, |v| match v {
                Value::Str(s) => Some(s),
                _ => None,
            })?
            .cloned())
    }

    fn set(&mut self, key: &str, value: &[u8]) {
        self.0.insert(key.to_string(), Value::Str(value.to_vec()));
    }

    fn append(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError> {
        let s = self.str_mut(key)?;
        s.extend_from_slice(value);
        Ok(s.len() as i64)
    }

    fn incr(&mut self, key: &str, by: i64) -> Result<i64, StoreError> {
        let s = self.str_mut(key)?;
        let new = parse_int(s) + by;
        *s = new.to_string().into_bytes();
        Ok(new)
    }

    fn exists(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    fn del(&mut self, key: &str) -> bool {
        self.0.remove(key).is_some()
    }

    fn hget(&self, key: &str, field: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.hash(key)?.and_then(|h| h.get(field)).cloned())
    }

    fn hset(&mut self, key: &str, field: &str, value: &[u8]) -> Result<bool, StoreError> {
        Ok(self
            .hash_mut(key)?
            .insert(field.to_string(), value.to_vec())
            .is_none())
    }

    fn hdel(&mut self, key: &str, field: &str) -> Result<bool, StoreError> {
        self.take(key, hash_in, |h| h.remove(field).is_some())
    }

    fn hlen(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.hash(key)?.map_or(0, |h| h.len() as i64))
    }

    fn hgetall(&self, key: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        Ok(self
            .hash(key)?
            .map(|h| h.iter().map(|(f, v)| (f.clone(), v.clone())).collect())
            .unwrap_or_default())
    }

    fn sadd(&mut self, key: &str, member: i64) -> Result<bool, StoreError> {
        Ok(self
            .kind_mut(
                key,
                || Value::Set(HashSet::new()),
                |v| match v {
                    Value::Set(s) => Some(s),
                    _ => None,
                },
            )?
            .insert(member))
    }

    fn sismember(&self, key: &str, member: i64) -> Result<bool, StoreError> {
        Ok(self
            .read(key, |v| match v {
                Value::Set(s) => Some(s),
                _ => None,
            })?
            .is_some_and(|s| s.contains(&member)))
    }

    fn smembers(&self, key: &str) -> Result<Vec<i64>, StoreError> {
        Ok(self
            .read(key, |v| match v {
                Value::Set(s) => Some(s),
                _ => None,
            })?
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default())
    }

    fn rpush(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError> {
        let l = self.list_mut(key)?;
        l.push_back(value.to_vec());
        Ok(l.len() as i64)
    }

    fn lpush(&mut self, key: &str, value: &[u8]) -> Result<i64, StoreError> {
        let l = self.list_mut(key)?;
        l.push_front(value.to_vec());
        Ok(l.len() as i64)
    }

    fn lpop(&mut self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.take(key, list_in, VecDeque::pop_front)
    }

    fn llen(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.list(key)?.map_or(0, |l| l.len() as i64))
    }

    fn lrange(&self, key: &str, start: i64, stop: i64) -> Result<Vec<Vec<u8>>, StoreError> {
        let Some(l) = self.list(key)? else {
            return Ok(Vec::new());
        };
        Ok(match range_of(l.len(), start, stop) {
            Some((s, e)) => l.range(s..=e).cloned().collect(),
            None => Vec::new(),
        })
    }

    fn zadd(&mut self, key: &str, member: &[u8], score: i64, nx: bool) -> Result<bool, StoreError> {
        let z = self.zset_mut(key)?;
        match z.score.get(member).copied() {
            Some(_) if nx => Ok(false),
            Some(old) => {
                z.by_score.remove(&(old, member.to_vec()));
                z.by_score.insert((score, member.to_vec()));
                z.score.insert(member.to_vec(), score);
                Ok(false)
            }
            None => {
                z.by_score.insert((score, member.to_vec()));
                z.score.insert(member.to_vec(), score);
                Ok(true)
            }
        }
    }

    fn zrem(&mut self, key: &str, member: &[u8]) -> Result<bool, StoreError> {
        self.take(key, zset_in, |z| match z.score.remove(member) {
            Some(score) => z.by_score.remove(&(score, member.to_vec())),
            None => false,
        })
    }

    fn zscore(&self, key: &str, member: &[u8]) -> Result<Option<i64>, StoreError> {
        Ok(self.zset(key)?.and_then(|z| z.score.get(member).copied()))
    }

    fn zcard(&self, key: &str) -> Result<i64, StoreError> {
        Ok(self.zset(key)?.map_or(0, |z| z.score.len() as i64))
    }

    fn zrange_by_score(
        &self,
        key: &str,
        min: i64,
        max: i64,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError> {
        let Some(z) = self.zset(key)? else {
            return Ok(Vec::new());
        };
        Ok(z.by_score
            .range((min, Vec::new())..)
            .take_while(|(s, _)| *s <= max)
            .take(limit)
            .map(|(s, m)| (m.clone(), *s))
            .collect())
    }

    fn zrevrange(
        &self,
        key: &str,
        start: i64,
        stop: i64,
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError> {
        let Some(z) = self.zset(key)? else {
            return Ok(Vec::new());
        };
        Ok(match range_of(z.by_score.len(), start, stop) {
            Some((s, e)) => z
                .by_score
                .iter()
                .rev()
                .skip(s)
                .take(e - s + 1)
                .map(|(sc, m)| (m.clone(), *sc))
                .collect(),
            None => Vec::new(),
        })
    }
}

impl MemoryStore {
    pub(super) fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let now = now_ms();
        ops.iter().map(|op| apply(&mut *map, op, now)).collect()
    }

    pub(super) fn snapshot(&self, pattern: &str) -> BTreeMap<String, Stored> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.0
            .iter()
            .filter(|(k, _)| glob_match(pattern, k))
            .map(|(k, v)| {
                let stored = match v {
                    Value::Str(s) => Stored::Str(s.clone()),
                    Value::List(l) => Stored::List(l.iter().cloned().collect()),
                    Value::Set(s) => {
                        let mut s: Vec<i64> = s.iter().copied().collect();
                        s.sort_unstable();
                        Stored::Set(s)
                    }
                    Value::Hash(h) => {
                        let mut h: Vec<(String, Vec<u8>)> =
                            h.iter().map(|(f, v)| (f.clone(), v.clone())).collect();
                        h.sort();
                        Stored::Hash(h)
                    }
                    Value::ZSet(z) => {
                        Stored::ZSet(z.by_score.iter().map(|(s, m)| (m.clone(), *s)).collect())
                    }
                };
                (k.clone(), stored)
            })
            .collect()
    }

    pub(super) fn keys_matching(&self, pattern: &str) -> Vec<String> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.0
            .keys()
            .filter(|k| glob_match(pattern, k))
            .cloned()
            .collect()
    }
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob_match(pattern: &str, s: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn globs() {
        assert!(glob_match("ns:live:*", "ns:live:fetch:1"));
        assert!(!glob_match("ns:live:*", "ns:dead:fetch:1"));
        assert!(glob_match("a*c*e", "abcde"));
        assert!(glob_match("exact", "exact"));
    }

    #[tokio::test]
    async fn memory_lists_hashes_and_sorted_sets() {
        let store = Store::memory();
        let replies = store
            .exec(&[
                Op::RPush {
                    key: "l".into(),
                    values: vec![b"a".to_vec(), b"b".to_vec()],
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
                Op::ZAdd {
                    key: "z".into(),
                    members: vec![(3, b"c".to_vec()), (1, b"a".to_vec()), (1, b"b".to_vec())],
                },
                Op::ZRevRange {
                    key: "z".into(),
                    start: 0,
                    stop: 1,
                },
                Op::ZRangeByScore {
                    key: "z".into(),
                    min: 0,
                    max: 2,
                    limit: Some(5),
                },
            ])
            .await
            .unwrap();
        assert_eq!(replies[1].strings().unwrap(), vec!["a", "b"]);
        assert_eq!(replies[2], Reply::Int(1));
        assert_eq!(replies[3], Reply::Int(0));
        assert_eq!(replies[4].string().unwrap().as_deref(), Some("1"));
        assert_eq!(
            replies[6].int_pairs().unwrap(),
            vec![("c".to_string(), 3), ("b".to_string(), 1)]
        );
        assert_eq!(
            replies[7].int_pairs().unwrap(),
            vec![("a".to_string(), 1), ("b".to_string(), 1)]
        );
    }
}
