//! The in-memory store of `crawler run`: every op on a map under one lock,
//! step for step as Redis does it, and the [`Memory`] view a stage's
//! [`super::Script`] twin works on.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::{Op, Reply, StoreError, Stored, ONCE_HISTORY};

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

/// The memory store as a [`super::Script`]'s twin sees it: the Redis commands its
/// Lua calls, on the map, with the clock stopped at the call's start (the
/// Lua's `now`). Missing keys read as empty, emptied collections vanish,
/// and a key of another kind is a [`StoreError::WrongType`], as on Redis.
pub struct Memory<'a> {
    map: &'a mut HashMap<String, Value>,
    now: i64,
}

impl Memory<'_> {
    /// The call's clock, Unix ms.
    pub fn now(&self) -> i64 {
        self.now
    }

    /// An integer field of a hash; 0 when absent or not a number (Lua's
    /// `tonumber(HGET or '0') or 0`).
    pub fn hash_int(&self, key: &str, field: &str) -> i64 {
        hash_int(self.map, key, field)
    }

    /// HSET of one integer field.
    pub fn hash_set_int(&mut self, key: &str, field: &str, v: i64) -> Result<(), StoreError> {
        hash_set_int(self.map, key, field, v)
    }

    /// HGET: a hash field's value, if any.
    pub fn hash_get(&self, key: &str, field: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.map.get(key) {
            Some(Value::Hash(h)) => Ok(h.get(field).cloned()),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
            None => Ok(None),
        }
    }

    /// HLEN.
    pub fn hash_len(&self, key: &str) -> Result<i64, StoreError> {
        match self.map.get(key) {
            Some(Value::Hash(h)) => Ok(h.len() as i64),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
            None => Ok(0),
        }
    }

    /// `LRANGE key 0 -1`: every value of a list.
    pub fn lrange_all(&self, key: &str) -> Result<Vec<Vec<u8>>, StoreError> {
        match self.map.get(key) {
            Some(Value::List(l)) => Ok(l.clone()),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
            None => Ok(Vec::new()),
        }
    }

    /// GET: a string's value, if any.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.map.get(key) {
            Some(Value::Str(s)) => Ok(Some(s.clone())),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
            None => Ok(None),
        }
    }

    /// DEL of one key.
    pub fn del(&mut self, key: &str) {
        self.map.remove(key);
    }

    /// RPUSH: reply the new length.
    pub fn rpush(&mut self, key: &str, values: &[Vec<u8>]) -> Result<i64, StoreError> {
        let l = list_mut(self.map, key)?;
        l.extend(values.iter().cloned());
        let len = l.len() as i64;
        drop_if_empty(self.map, key);
        Ok(len)
    }

    /// LPUSH of one value.
    pub fn lpush(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        list_mut(self.map, key)?.insert(0, value.to_vec());
        Ok(())
    }

    /// LPOP: the list's first value, if any.
    pub fn lpop(&mut self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let first = match self.map.get_mut(key) {
            Some(Value::List(l)) if !l.is_empty() => Some(l.remove(0)),
            Some(Value::List(_)) | None => None,
            Some(_) => return Err(StoreError::WrongType(key.to_string())),
        };
        drop_if_empty(self.map, key);
        Ok(first)
    }

    /// LLEN.
    pub fn llen(&self, key: &str) -> Result<i64, StoreError> {
        match self.map.get(key) {
            Some(Value::List(l)) => Ok(l.len() as i64),
            Some(_) => Err(StoreError::WrongType(key.to_string())),
            None => Ok(0),
        }
    }

    /// `ZRANGEBYSCORE key -inf max LIMIT 0 limit`: in score order, ties in
    /// the members' byte order.
    pub fn zrange_upto(
        &self,
        key: &str,
        max: i64,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        due(self.map, key, max, limit)
    }

    /// ZADD (`nx`: only if the member is new).
    pub fn zadd(
        &mut self,
        key: &str,
        member: &[u8],
        score: i64,
        nx: bool,
    ) -> Result<(), StoreError> {
        let z = zset_mut(self.map, key)?;
        if nx {
            z.entry(member.to_vec()).or_insert(score);
        } else {
            z.insert(member.to_vec(), score);
        }
        Ok(())
    }

    /// ZREM of one member.
    pub fn zrem(&mut self, key: &str, member: &[u8]) -> Result<(), StoreError> {
        match self.map.get_mut(key) {
            Some(Value::ZSet(z)) => {
                z.remove(member);
            }
            Some(_) => return Err(StoreError::WrongType(key.to_string())),
            None => {}
        }
        drop_if_empty(self.map, key);
        Ok(())
    }
}

/// The members of the sorted set at `key` scored at most `max`, in Redis's
/// order (score, then member bytes), the first `limit`.
fn due(
    map: &HashMap<String, Value>,
    key: &str,
    max: i64,
    limit: usize,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut due: Vec<(i64, &Vec<u8>)> = match map.get(key) {
        Some(Value::ZSet(z)) => z
            .iter()
            .filter(|(_, s)| **s <= max)
            .map(|(m, s)| (*s, m))
            .collect(),
        Some(_) => return Err(StoreError::WrongType(key.to_string())),
        None => Vec::new(),
    };
    due.sort();
    due.truncate(limit);
    Ok(due.into_iter().map(|(_, m)| m.clone()).collect())
}

impl MemoryStore {
    pub(super) fn exec(&self, ops: &[Op]) -> Result<Vec<Reply>, StoreError> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        ops.iter().map(|op| apply(&mut map, op)).collect()
    }

    pub(super) fn snapshot(&self, pattern: &str) -> BTreeMap<String, Stored> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.iter()
            .filter(|(k, _)| glob_match(pattern, k))
            .map(|(k, v)| {
                let stored = match v {
                    Value::Str(s) => Stored::Str(s.clone()),
                    Value::List(l) => Stored::List(l.clone()),
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
                        let mut z: Vec<(i64, Vec<u8>)> =
                            z.iter().map(|(m, s)| (*s, m.clone())).collect();
                        z.sort();
                        Stored::ZSet(z.into_iter().map(|(s, m)| (m, s)).collect())
                    }
                };
                (k.clone(), stored)
            })
            .collect()
    }

    pub(super) fn keys_matching(&self, pattern: &str) -> Vec<String> {
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

/// The accessors `fn name(map, key)`: the value of one kind at `key`, by
/// [`typed_mut`].
macro_rules! kind_mut {
    ($($name:ident: $kind:ident($t:ty)),* $(,)?) => {$(
        fn $name<'a>(
            map: &'a mut HashMap<String, Value>,
            key: &str,
        ) -> Result<&'a mut $t, StoreError> {
            typed_mut(
                map,
                key,
                || Value::$kind(<$t>::default()),
                |v| match v {
                    Value::$kind(x) => Some(x),
                    _ => None,
                },
            )
        }
    )*};
}
kind_mut!(
    str_mut: Str(Vec<u8>),
    set_mut: Set(HashSet<i64>),
    hash_mut: Hash(HashMap<String, Vec<u8>>),
    list_mut: List(Vec<Vec<u8>>),
    zset_mut: ZSet(HashMap<Vec<u8>, i64>),
);

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

fn parse_int(bytes: &[u8]) -> i64 {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn apply(map: &mut HashMap<String, Value>, op: &Op) -> Result<Reply, StoreError> {
    Ok(match op {
        Op::SAdd { key, members } => {
            let set = set_mut(map, key)?;
            Reply::Int(members.iter().filter(|m| set.insert(**m)).count() as i64)
        }
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
        Op::MGet { keys } => Reply::Array(
            keys.iter()
                .map(|key| match map.get(key) {
                    Some(Value::Str(s)) => Reply::Data(s.clone()),
                    // Redis answers nil for a key of another type.
                    _ => Reply::Nil,
                })
                .collect(),
        ),
        Op::Append { key, value } => {
            let s = str_mut(map, key)?;
            s.extend_from_slice(value);
            Reply::Int(s.len() as i64)
        }
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
        Op::Del { key } | Op::Unlink { key } => Reply::Int(map.remove(key).is_some() as i64),
        Op::HDel { key, field } => {
            let n = match map.get_mut(key) {
                Some(Value::Hash(h)) => h.remove(field).is_some() as i64,
                Some(_) => return Err(StoreError::WrongType(key.clone())),
                None => 0,
            };
            if matches!(map.get(key), Some(Value::Hash(h)) if h.is_empty()) {
                map.remove(key);
            }
            Reply::Int(n)
        }
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
        Op::Script(call) => {
            let mut view = Memory { map, now: now_ms() };
            (call.script.twin)(&mut view, &call.keys, &call.args)?
        }
        Op::ZAddIn { key, member, in_ms } => {
            let z = zset_mut(map, key)?;
            let new = z.insert(member.clone(), now_ms() + *in_ms as i64).is_none();
            Reply::Int(new as i64)
        }
        Op::ZPopDue { key, max } => {
            let due = due(map, key, now_ms(), *max as usize)?;
            if !due.is_empty() {
                let z = zset_mut(map, key)?;
                for m in &due {
                    z.remove(m);
                }
                drop_if_empty(map, key);
            }
            Reply::Array(due.into_iter().map(Reply::Data).collect())
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
                // In order, as Redis replies for a set of integers (an
                // intset); a claim holds one batch's URLs.
                let mut members: Vec<i64> = c.iter().copied().collect();
                members.sort_unstable();
                Reply::Ints(members)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[tokio::test]
    async fn memory_claim_is_idempotent_per_claimant() {
        let store = Store::memory();
        let claim = |claim: &str, members: Vec<i64>| Op::Claim {
            seen: "s".into(),
            claim: claim.into(),
            members,
            ttl_secs: 60,
        };
        // The members a claim took, sorted.
        let claimed = async |batch: &str, members: Vec<i64>| {
            let mut r = store
                .one(claim(batch, members))
                .await
                .unwrap()
                .ints()
                .unwrap();
            r.sort();
            r
        };
        assert_eq!(claimed("a", vec![1, 2, 3]).await, vec![1, 2, 3]);
        // Another batch with overlapping URLs claims only the new one.
        assert_eq!(claimed("b", vec![3, 4]).await, vec![4]);
        // A redelivery of batch a gets its own claims back.
        assert_eq!(claimed("a", vec![1, 2, 3]).await, vec![1, 2, 3]);
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
