//! Which workers are alive, and how many messages each has in flight:
//! an index read in one step, without a scan.
//!
//! Each worker refreshes its heartbeat every [`HEARTBEAT_EVERY`]
//! ([`beat`]): its id goes into the sorted set [`Keys::live`] scored by
//! when the heartbeat expires (the server's clock + [`HEARTBEAT_TTL`]),
//! its in-flight count into the hash [`Keys::in_flight`]; the same script
//! forgets the workers whose heartbeat expired. [`read`] lists the live
//! ones (O(live workers)); a worker that stops cleanly leaves ([`leave`]).
//! Worker ids are `<stage>:<host>:<id>` ([`crate::worker::host_name`]), so
//! `crawler health` finds the workers of its own container.

use std::time::Duration;

use crate::keys::Keys;
use crate::store::{
    arg, int_arg, key_args, Memory, Op, Reply, Script, ScriptCall, Store, StoreError,
};

/// How often a worker refreshes its heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_millis(250);
/// A heartbeat expires after this long without refresh (worker gone).
pub const HEARTBEAT_TTL: Duration = Duration::from_secs(3);
/// Expired workers one heartbeat forgets at most.
const PRUNE: usize = 100;

/// A worker's id, `<stage>:<host>:<id>`.
pub fn worker_id(stage: &str, host: &str, id: &str) -> String {
    format!("{stage}:{host}:{id}")
}

/// The stage of a worker id ([`worker_id`]).
pub fn stage_of(worker: &str) -> Option<&str> {
    worker.split(':').next()
}

/// The host of a worker id ([`worker_id`]).
pub fn host_of(worker: &str) -> Option<&str> {
    worker.split(':').nth(1)
}

/// One worker's heartbeat with `in_flight` messages in hand.
pub fn beat(keys: &Keys, worker: &str, in_flight: i64) -> Op {
    ScriptCall::new(&BEAT)
        .key(keys.live())
        .key(keys.in_flight())
        .arg(worker)
        .int(in_flight)
        .int(HEARTBEAT_TTL.as_millis())
        .op()
}

/// KEYS = live, in flight; ARGV = worker, in flight, ttl ms.
pub static BEAT: Script = Script::new("LIVE_BEAT", beat_lua, beat_twin);

fn beat_lua() -> String {
    format!(
        r#"
local gone = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, {PRUNE})
for _, w in ipairs(gone) do
  redis.call('ZREM', KEYS[1], w)
  redis.call('HDEL', KEYS[2], w)
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[3])), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return #gone
"#
    )
}

fn beat_twin(m: &mut Memory<'_>, keys: &[String], args: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let s = &BEAT;
    let [live, in_flight] = key_args(s, keys)?;
    let worker = arg(s, args, 0)?.to_vec();
    let n = int_arg(s, args, 1)?;
    let ttl = int_arg(s, args, 2)?;
    let now = m.now();
    let gone = m.zrange_upto(live, now, PRUNE)?;
    for w in &gone {
        m.zrem(live, w)?;
        m.hdel(in_flight, &String::from_utf8_lossy(w))?;
    }
    m.zadd(live, &worker, now + ttl, false)?;
    m.hset(
        in_flight,
        &String::from_utf8_lossy(&worker),
        n.to_string().as_bytes(),
    )?;
    Ok(Reply::Int(gone.len() as i64))
}

/// The live workers and their messages in flight: reply Array of
/// alternating worker id and count.
pub fn read_op(keys: &Keys) -> Op {
    ScriptCall::new(&READ)
        .key(keys.live())
        .key(keys.in_flight())
        .op()
}

/// KEYS = live, in flight.
pub static READ: Script = Script::new("LIVE_READ", read_lua, read_twin);

fn read_lua() -> String {
    r#"
local live = redis.call('ZRANGE', KEYS[1], now, '+inf', 'BYSCORE')
local out = {}
for _, w in ipairs(live) do
  out[#out + 1] = w
  out[#out + 1] = tonumber(redis.call('HGET', KEYS[2], w) or '0') or 0
end
return out
"#
    .to_string()
}

fn read_twin(m: &mut Memory<'_>, keys: &[String], _: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let s = &READ;
    let [live, in_flight] = key_args(s, keys)?;
    let now = m.now();
    let mut out = Vec::new();
    for (w, _) in m.zrange_by_score(live, now, i64::MAX, usize::MAX)? {
        let n = m.hash_int(in_flight, &String::from_utf8_lossy(&w));
        out.push(Reply::Data(w));
        out.push(Reply::Int(n));
    }
    Ok(Reply::Array(out))
}

/// The live workers (id, messages in flight), from [`read_op`]'s reply.
pub async fn read(store: &Store, keys: &Keys) -> Result<Vec<(String, i64)>, StoreError> {
    store.one(read_op(keys)).await?.int_pairs()
}

/// A worker that stops: out of the index.
pub fn leave(keys: &Keys, worker: &str) -> Vec<Op> {
    vec![
        Op::ZRem {
            key: keys.live(),
            members: vec![worker.as_bytes().to_vec()],
        },
        Op::HDel {
            key: keys.in_flight(),
            field: worker.to_string(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_id_gives_back_its_stage_and_host() {
        let id = worker_id("contentseen", "box-1", "abc");
        assert_eq!(id, "contentseen:box-1:abc");
        assert_eq!(stage_of(&id), Some("contentseen"));
        assert_eq!(host_of(&id), Some("box-1"));
        assert_eq!(host_of("lonely"), None);
    }

    #[tokio::test]
    async fn live_workers_are_listed_and_expired_ones_forgotten() {
        let store = Store::memory();
        let keys = Keys::new("t");
        store.one(beat(&keys, "fetch:h:1", 3)).await.unwrap();
        store.one(beat(&keys, "extract:h:2", 0)).await.unwrap();
        let mut live = read(&store, &keys).await.unwrap();
        live.sort();
        assert_eq!(
            live,
            vec![("extract:h:2".to_string(), 0), ("fetch:h:1".to_string(), 3)]
        );
        store.exec(&leave(&keys, "fetch:h:1")).await.unwrap();
        assert_eq!(read(&store, &keys).await.unwrap().len(), 1);
        // An expired heartbeat (scored in the past) is not live, and the
        // next heartbeat forgets it.
        store
            .one(Op::ZAdd {
                key: keys.live(),
                members: vec![(1, b"dead".to_vec())],
            })
            .await
            .unwrap();
        assert_eq!(read(&store, &keys).await.unwrap().len(), 1);
        assert_eq!(
            store.one(beat(&keys, "extract:h:2", 1)).await.unwrap(),
            Reply::Int(1)
        );
    }
}
