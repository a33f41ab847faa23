//! The Redis executor: a batch of ops as one pipeline (one round trip),
//! scripts loaded and run by SHA.

use std::collections::BTreeMap;
use std::sync::Arc;

use redis::aio::ConnectionManager;

use super::scripts::Scripts;
use super::{Op, Reply, StoreError, Stored, ONCE_HISTORY};

/// Redis through a reconnecting connection manager.
#[derive(Clone)]
pub struct RedisStore {
    /// For error messages (without password).
    url: String,
    conn: ConnectionManager,
    scripts: Arc<Scripts>,
}

impl RedisStore {
    /// A Redis error, with the (redacted) URL of this store.
    fn error(&self, source: redis::RedisError) -> StoreError {
        StoreError::Redis {
            url: self.url.clone(),
            source,
        }
    }

    pub(super) async fn connect(url: &str) -> Result<Self, StoreError> {
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
        })
    }

    pub(super) async fn exec(&self, ops: &[Op], atomic: bool) -> Result<Vec<Reply>, StoreError> {
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
                Op::MGet { keys } => {
                    // `MGET` of no key is a syntax error; the memory store's
                    // answer, an empty Array, from a script that touches
                    // nothing.
                    if keys.is_empty() {
                        pipe.cmd("EVAL").arg("return {}").arg(0);
                    } else {
                        pipe.cmd("MGET").arg(keys);
                    }
                }
                Op::Append { key, value } => {
                    pipe.append(key, value);
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
                Op::Unlink { key } => {
                    pipe.unlink(key);
                }
                Op::HDel { key, field } => {
                    pipe.hdel(key, field);
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
                Op::Script(call) => {
                    let mut inv = call.script.compiled().prepare_invoke();
                    for k in &call.keys {
                        inv.key(k);
                    }
                    for a in &call.args {
                        inv.arg(a.as_slice());
                    }
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
        let values: Vec<redis::Value> = pipe
            .query_async(&mut conn)
            .await
            .map_err(|e| self.error(e))?;
        Ok(values.into_iter().map(reply_from_redis).collect())
    }

    /// `used_memory` of INFO memory, in bytes.
    pub(super) async fn used_memory(&self) -> Result<i64, StoreError> {
        let mut conn = self.conn.clone();
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query_async(&mut conn)
            .await
            .map_err(|e| self.error(e))?;
        Ok(info
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0))
    }

    pub(super) async fn snapshot(
        &self,
        pattern: &str,
    ) -> Result<BTreeMap<String, Stored>, StoreError> {
        let keys = self.keys_matching(pattern).await?;
        let err = |source| self.error(source);
        let mut conn = self.conn.clone();
        let mut pipe = redis::pipe();
        for k in &keys {
            pipe.cmd("TYPE").arg(k);
        }
        let types: Vec<String> = pipe.query_async(&mut conn).await.map_err(err)?;
        let mut out = BTreeMap::new();
        for (key, kind) in keys.into_iter().zip(types) {
            let stored = match kind.as_str() {
                "string" => Stored::Str(
                    redis::cmd("GET")
                        .arg(&key)
                        .query_async(&mut conn)
                        .await
                        .map_err(err)?,
                ),
                "list" => Stored::List(
                    redis::cmd("LRANGE")
                        .arg(&key)
                        .arg(0)
                        .arg(-1)
                        .query_async(&mut conn)
                        .await
                        .map_err(err)?,
                ),
                "set" => {
                    let mut s: Vec<i64> = redis::cmd("SMEMBERS")
                        .arg(&key)
                        .query_async(&mut conn)
                        .await
                        .map_err(err)?;
                    s.sort_unstable();
                    Stored::Set(s)
                }
                "hash" => {
                    let mut h: Vec<(String, Vec<u8>)> = redis::cmd("HGETALL")
                        .arg(&key)
                        .query_async(&mut conn)
                        .await
                        .map_err(err)?;
                    h.sort();
                    Stored::Hash(h)
                }
                "zset" => {
                    let z: Vec<(Vec<u8>, f64)> = redis::cmd("ZRANGE")
                        .arg(&key)
                        .arg(0)
                        .arg(-1)
                        .arg("WITHSCORES")
                        .query_async(&mut conn)
                        .await
                        .map_err(err)?;
                    Stored::ZSet(z.into_iter().map(|(m, s)| (m, s as i64)).collect())
                }
                // Gone since the scan, or a kind the crawler never writes.
                _ => continue,
            };
            out.insert(key, stored);
        }
        Ok(out)
    }

    pub(super) async fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
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
                .map_err(|e| self.error(e))?;
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
