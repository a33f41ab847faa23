//! The fetchers' side: a host's turn. Before a request a fetcher takes the
//! turn ([`gate`]) and holds it until the request has ended ([`done`]); the
//! next request may start one delay after that, on the store's clock.

use pipeline::keys::Keys;
use pipeline::store::{int_arg, key_arg, Memory, Op, Reply, Script, ScriptCall, StoreError};

use crate::record::{lua_names, BACKOFF_UNTIL_MS, NEXT_FETCH_MS};

/// Gate: if the host's next request may start now (and no Retry-After
/// backoff holds), take the turn for `hold_ms` and reply Int(0); otherwise
/// reply Int(milliseconds to wait).
pub fn gate(keys: &Keys, origin: &str, hold_ms: u64) -> Op {
    on_host(&GATE, keys, origin, hold_ms)
}

/// A call of `script` (both scripts of a turn) on the host record of
/// `origin`, with one number of milliseconds.
fn on_host(script: &'static Script, keys: &Keys, origin: &str, ms: u64) -> Op {
    ScriptCall::new(script).key(keys.host(origin)).int(ms).op()
}

/// KEYS = record; ARGV = hold ms.
pub static GATE: Script = Script::new("HOST_GATE", gate_lua, gate_twin);

fn gate_lua() -> String {
    lua_names()
        + r#"
local f = redis.call('HMGET', KEYS[1], F_NEXT_FETCH_MS, F_BACKOFF_UNTIL_MS)
local nxt = math.max(tonumber(f[1] or '0') or 0, tonumber(f[2] or '0') or 0)
if now >= nxt then
  if tonumber(ARGV[1]) > 0 then
    redis.call('HSET', KEYS[1], F_NEXT_FETCH_MS, string.format('%.0f', now + tonumber(ARGV[1])))
  end
  return 0
end
return nxt - now
"#
}

fn gate_twin(m: &mut Memory<'_>, keys: &[String], args: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let record = key_arg(&GATE, keys, 0)?;
    let hold = int_arg(&GATE, args, 0)?;
    let now = m.now();
    let next = m
        .hash_int(record, NEXT_FETCH_MS)
        .max(m.hash_int(record, BACKOFF_UNTIL_MS));
    if now < next {
        return Ok(Reply::Int(next - now));
    }
    if hold > 0 {
        m.hash_set_int(record, NEXT_FETCH_MS, now + hold)?;
    }
    Ok(Reply::Int(0))
}

/// Turn done: the host's next request may start `delay_ms` from now.
/// Reply Int(0).
pub fn done(keys: &Keys, origin: &str, delay_ms: u64) -> Op {
    on_host(&TURN_DONE, keys, origin, delay_ms)
}

/// KEYS = record; ARGV = delay ms.
pub static TURN_DONE: Script = Script::new("HOST_TURN_DONE", turn_done_lua, turn_done_twin);

fn turn_done_lua() -> String {
    lua_names()
        + r#"
redis.call('HSET', KEYS[1], F_NEXT_FETCH_MS, string.format('%.0f', now + tonumber(ARGV[1])))
return 0
"#
}

fn turn_done_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let record = key_arg(&TURN_DONE, keys, 0)?;
    let delay = int_arg(&TURN_DONE, args, 0)?;
    let next = m.now() + delay;
    m.hash_set_int(record, NEXT_FETCH_MS, next)?;
    Ok(Reply::Int(0))
}
