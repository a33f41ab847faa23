//! The frontier's side: each shard's schedule of hosts, their task queues,
//! and the tasks taken but not yet confirmed published (`releasing`).
//!
//! - [`enqueue`]: append tasks to a host's queue and schedule the host.
//! - [`release`]: take the tasks of the due hosts, one delay apart per host.
//! - [`sweep`]: put back the tasks of a releaser that died before
//!   confirming them (confirming is a plain `ZREM` of the members).
//! - [`drop_crawl`]: remove a cancelled crawl's tasks from a host queue.
//!
//! Crawl control: [`release`] reads the shard's copy of the crawl states
//! ([`pipeline::keys::Keys::crawl_control`]) in the same script, so a
//! paused crawl never has a task released, whatever the releasers do.
//! While no crawl is paused or cancelled, that costs one `HLEN`; otherwise
//! each task looked at is unpacked (`cmsgpack`) for its crawl's name.

use pipeline::crawls::CrawlState;
use pipeline::keys::{host_shard, Keys};
use pipeline::messages::task_crawl;
use pipeline::store::{arg, int_arg, key_arg, Memory, Op, Reply, Script, ScriptCall, StoreError};

use crate::record::{
    lua_names, BACKOFF_UNTIL_MS, CRAWL_DELAY_MS, DELAY_MS, FAIL_STREAK, NEXT_MS, PARKED_UNTIL_MS,
};

/// Stale tasks one [`sweep`] moves back per shard, oldest first: bounds the
/// script's run (Redis runs nothing else meanwhile); the rest go on the
/// next sweep.
pub const SWEEP_BATCH: u32 = 1000;

/// The delay never goes below this once a host fails (ms), so the doubling
/// per failure in a row means something for hosts without a delay.
const FAILING_MIN_DELAY_MS: i64 = 1000;
/// The doubling per failure in a row stops at 2^6.
const MAX_DOUBLINGS: i64 = 6;

/// While some crawl is paused or cancelled, the tasks of one host looked
/// at per release at most: a paused crawl's tasks go to the back of the
/// queue, so the tasks of running crawls behind them come up within a few
/// releases, and one release stays short.
pub const LOOK_AHEAD: i64 = 64;
/// A host whose queue holds only paused tasks is looked at again after
/// this long (ms): how soon a resumed crawl's tasks move again.
pub const PAUSED_RECHECK_MS: i64 = 1000;

/// Lua: `crawl_of(task)`, the crawl name of an encoded fetch task, or ''
/// (the twin is [`task_crawl`]).
const LUA_CRAWL_OF: &str = r#"
local function crawl_of(task)
  local ok, t = pcall(cmsgpack.unpack, task)
  if ok and type(t) == 'table' and type(t.crawl) == 'table' and type(t.crawl.name) == 'string' then
    return t.crawl.name
  end
  return ''
end
"#;

/// Enqueue: append `tasks` to the host's queue, record the crawl's delay,
/// and schedule the host (if not scheduled) at the later of now and its
/// `next_ms`. Reply Int(queue length).
pub fn enqueue(keys: &Keys, origin: &str, crawl_delay_ms: u64, tasks: Vec<Vec<u8>>) -> Op {
    let mut call = ScriptCall::new(&ENQUEUE)
        .key(keys.schedule(host_shard(origin)))
        .key(keys.host_queue(origin))
        .key(keys.host(origin))
        .arg(origin)
        .int(crawl_delay_ms);
    call.args.extend(tasks);
    call.op()
}

/// KEYS = schedule, queue, record; ARGV = origin, crawl delay, tasks...
pub static ENQUEUE: Script = Script::new("HOST_ENQUEUE", enqueue_lua, enqueue_twin);

fn enqueue_lua() -> String {
    lua_names()
        + r#"
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('HSET', KEYS[3], F_CRAWL_DELAY_MS, ARGV[2])
local nxt = tonumber(redis.call('HGET', KEYS[3], F_NEXT_MS) or '0') or 0
redis.call('ZADD', KEYS[1], 'NX', string.format('%.0f', math.max(now, nxt)), ARGV[1])
return redis.call('LLEN', KEYS[2])
"#
}

fn enqueue_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &ENQUEUE;
    let (schedule, queue, record) = (
        key_arg(s, keys, 0)?,
        key_arg(s, keys, 1)?,
        key_arg(s, keys, 2)?,
    );
    let origin = arg(s, args, 0)?;
    let delay = int_arg(s, args, 1)?;
    m.rpush(queue, &args[2..])?;
    m.hash_set_int(record, CRAWL_DELAY_MS, delay)?;
    let due = m.now().max(m.hash_int(record, NEXT_MS));
    m.zadd(schedule, origin, due, true)?;
    Ok(Reply::Int(m.llen(queue)?))
}

/// Release, for one schedule shard: for up to `max_hosts` hosts that are
/// due now, take the next task (up to `burst`, at least one, for hosts with
/// no delay) into the `releasing` set and reschedule the host at now + its
/// delay (the larger of the crawl's and robots.txt's, doubled per
/// consecutive failure, never before a Retry-After backoff; a host failing
/// `park_after` times in a row waits `park_ms`). A host whose queue is empty
/// leaves the schedule (an enqueue puts it back). Reply Array of Data
/// members `origin\ntask`, to publish and then `ZREM` from `releasing`.
///
/// When the shard's crawl control hash is not empty, up to [`LOOK_AHEAD`]
/// tasks of a host are looked at: a paused crawl's go to the back of the
/// queue, a cancelled crawl's are dropped, and the first of a running crawl
/// is taken. A host with only paused tasks keeps its turn (its `next_ms`)
/// and is looked at again after [`PAUSED_RECHECK_MS`].
pub fn release(
    keys: &Keys,
    shard: u32,
    max_hosts: u32,
    burst: u32,
    park_after: u32,
    park_ms: u64,
) -> Op {
    ScriptCall::new(&RELEASE)
        .key(keys.schedule(shard))
        .key(keys.releasing(shard))
        .key(keys.crawl_control(shard))
        .arg(keys.host_queue_prefix(shard))
        .arg(keys.host_prefix(shard))
        .int(max_hosts)
        .int(burst)
        .int(park_after)
        .int(park_ms)
        .op()
}

/// KEYS = schedule, releasing, crawl control; ARGV = queue prefix, record
/// prefix, max hosts, burst, park after, park ms. Queue and record keys are built from
/// the prefixes; they share the shard's slot.
pub static RELEASE: Script = Script::new("HOST_RELEASE", release_lua, release_twin);

fn release_lua() -> String {
    lua_names()
        + &format!(
            "local FAILING_MIN_DELAY_MS, MAX_DOUBLINGS = {FAILING_MIN_DELAY_MS}, {MAX_DOUBLINGS}\n\
             local LOOK_AHEAD, PAUSED_RECHECK_MS = {LOOK_AHEAD}, {PAUSED_RECHECK_MS}\n\
             local PAUSED, CANCELLED = '{}', '{}'\n",
            CrawlState::Paused.as_str(),
            CrawlState::Cancelled.as_str()
        )
        + LUA_CRAWL_OF
        + r#"
local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local gated = redis.call('HLEN', KEYS[3]) > 0
local out = {}
for _, h in ipairs(hosts) do
  local q = ARGV[1] .. h
  local rec = ARGV[2] .. h
  local f = redis.call('HMGET', rec, F_CRAWL_DELAY_MS, F_DELAY_MS, F_BACKOFF_UNTIL_MS, F_FAIL_STREAK)
  local delay = math.max(tonumber(f[1] or '0') or 0, tonumber(f[2] or '0') or 0)
  local streak = tonumber(f[4] or '0') or 0
  if streak > 0 then delay = math.max(delay, FAILING_MIN_DELAY_MS) * 2 ^ math.min(streak, MAX_DOUBLINGS) end
  local n = 1
  if delay == 0 then n = math.max(tonumber(ARGV[4]), 1) end
  local taken = 0
  local look = n
  if gated then look = math.min(redis.call('LLEN', q), LOOK_AHEAD) end
  for _ = 1, look do
    if taken >= n then break end
    local task = redis.call('LPOP', q)
    if not task then break end
    local state = false
    if gated then state = redis.call('HGET', KEYS[3], crawl_of(task)) end
    if state == PAUSED then
      redis.call('RPUSH', q, task)
    elseif state ~= CANCELLED then
      local m = h .. '\n' .. task
      redis.call('ZADD', KEYS[2], now, m)
      out[#out + 1] = m
      taken = taken + 1
    end
  end
  if taken == 0 and redis.call('LLEN', q) > 0 then
    redis.call('ZADD', KEYS[1], string.format('%.0f', now + PAUSED_RECHECK_MS), h)
  elseif taken > 0 then
    local nxt = math.max(now + delay, tonumber(f[3] or '0') or 0)
    if streak >= tonumber(ARGV[5]) then
      nxt = math.max(nxt, now + tonumber(ARGV[6]))
      redis.call('HSET', rec, F_PARKED_UNTIL_MS, string.format('%.0f', nxt))
    end
    redis.call('HSET', rec, F_NEXT_MS, string.format('%.0f', nxt))
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
"#
}

fn release_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &RELEASE;
    let (schedule, releasing, control) = (
        key_arg(s, keys, 0)?,
        key_arg(s, keys, 1)?,
        key_arg(s, keys, 2)?,
    );
    let queue_prefix = String::from_utf8_lossy(arg(s, args, 0)?).into_owned();
    let record_prefix = String::from_utf8_lossy(arg(s, args, 1)?).into_owned();
    let max_hosts = int_arg(s, args, 2)?.max(0) as usize;
    let burst = int_arg(s, args, 3)?;
    let park_after = int_arg(s, args, 4)?;
    let park_ms = int_arg(s, args, 5)?;
    let now = m.now();
    let gated = m.hash_len(control)? > 0;
    let mut out = Vec::new();
    for host in m.zrange_upto(schedule, now, max_hosts)? {
        let h = String::from_utf8_lossy(&host);
        let q = format!("{queue_prefix}{h}");
        let rec = format!("{record_prefix}{h}");
        let mut delay = m
            .hash_int(&rec, CRAWL_DELAY_MS)
            .max(m.hash_int(&rec, DELAY_MS));
        let streak = m.hash_int(&rec, FAIL_STREAK);
        if streak > 0 {
            delay = delay.max(FAILING_MIN_DELAY_MS) * (1 << streak.min(MAX_DOUBLINGS));
        }
        let n = if delay == 0 { burst.max(1) } else { 1 };
        let mut taken = 0;
        let look = if gated {
            m.llen(&q)?.min(LOOK_AHEAD)
        } else {
            n
        };
        for _ in 0..look {
            if taken >= n {
                break;
            }
            let Some(task) = m.lpop(&q)? else { break };
            let state = if gated {
                let crawl = task_crawl(&task).unwrap_or_default();
                m.hash_get(control, &crawl)?.map(|v| CrawlState::parse(&v))
            } else {
                None
            };
            match state {
                Some(CrawlState::Paused) => {
                    m.rpush(&q, &[task])?;
                }
                Some(CrawlState::Cancelled) => {}
                _ => {
                    let mut member = host.clone();
                    member.push(b'\n');
                    member.extend_from_slice(&task);
                    m.zadd(releasing, &member, now, false)?;
                    out.push(Reply::Data(member));
                    taken += 1;
                }
            }
        }
        if taken == 0 && m.llen(&q)? > 0 {
            m.zadd(schedule, &host, now + PAUSED_RECHECK_MS, false)?;
        } else if taken > 0 {
            let mut next = (now + delay).max(m.hash_int(&rec, BACKOFF_UNTIL_MS));
            if streak >= park_after {
                next = next.max(now + park_ms);
                m.hash_set_int(&rec, PARKED_UNTIL_MS, next)?;
            }
            m.hash_set_int(&rec, NEXT_MS, next)?;
            if m.llen(&q)? > 0 {
                m.zadd(schedule, &host, next, false)?;
            } else {
                m.zrem(schedule, &host)?;
            }
        } else {
            m.zrem(schedule, &host)?;
        }
    }
    Ok(Reply::Array(out))
}

/// Sweep, for one schedule shard: members of `releasing` taken at least
/// `older_than_ms` ago (their releaser died before confirming them) go
/// back to the head of their host queues, oldest first, at most
/// [`SWEEP_BATCH`], and their hosts are scheduled (if not scheduled) now.
/// Reply Int(number moved).
pub fn sweep(keys: &Keys, shard: u32, older_than_ms: u64) -> Op {
    ScriptCall::new(&SWEEP)
        .key(keys.schedule(shard))
        .key(keys.releasing(shard))
        .arg(keys.host_queue_prefix(shard))
        .int(older_than_ms)
        .int(SWEEP_BATCH)
        .op()
}

/// KEYS = schedule, releasing; ARGV = queue prefix, age ms, batch.
pub static SWEEP: Script = Script::new("HOST_SWEEP", sweep_lua, sweep_twin);

fn sweep_lua() -> String {
    r#"
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0, tonumber(ARGV[3]))
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
"#
    .to_string()
}

fn sweep_twin(m: &mut Memory<'_>, keys: &[String], args: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let s = &SWEEP;
    let (schedule, releasing) = (key_arg(s, keys, 0)?, key_arg(s, keys, 1)?);
    let queue_prefix = String::from_utf8_lossy(arg(s, args, 0)?).into_owned();
    let older_than = int_arg(s, args, 1)?;
    let batch = int_arg(s, args, 2)?.max(0) as usize;
    let now = m.now();
    let stale = m.zrange_upto(releasing, now - older_than, batch)?;
    for member in &stale {
        if let Some(i) = member.iter().position(|b| *b == b'\n') {
            let host = &member[..i];
            let q = format!("{queue_prefix}{}", String::from_utf8_lossy(host));
            m.lpush(&q, &member[i + 1..])?;
            m.zadd(schedule, host, now, true)?;
        }
        m.zrem(releasing, member)?;
    }
    Ok(Reply::Int(stale.len() as i64))
}

/// Drop crawl: remove every task of `crawl` from the host's queue (a
/// cancelled crawl's), keeping the order of the others; a host left with
/// none leaves the schedule. Reply Int(number dropped). One script per
/// host, so Redis is held for one queue's length at a time.
pub fn drop_crawl(keys: &Keys, origin: &str, crawl: &str) -> Op {
    ScriptCall::new(&DROP_CRAWL)
        .key(keys.schedule(host_shard(origin)))
        .key(keys.host_queue(origin))
        .arg(origin)
        .arg(crawl)
        .op()
}

/// KEYS = schedule, queue; ARGV = origin, crawl.
pub static DROP_CRAWL: Script = Script::new("HOST_DROP_CRAWL", drop_crawl_lua, drop_crawl_twin);

fn drop_crawl_lua() -> String {
    LUA_CRAWL_OF.to_string()
        + r#"
local tasks = redis.call('LRANGE', KEYS[2], 0, -1)
local kept = {}
for _, t in ipairs(tasks) do
  if crawl_of(t) ~= ARGV[2] then kept[#kept + 1] = t end
end
local dropped = #tasks - #kept
if dropped > 0 then
  redis.call('DEL', KEYS[2])
  for i = 1, #kept, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(kept, i, math.min(i + 999, #kept)))
  end
end
if #kept == 0 then redis.call('ZREM', KEYS[1], ARGV[1]) end
return dropped
"#
}

fn drop_crawl_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &DROP_CRAWL;
    let (schedule, queue) = (key_arg(s, keys, 0)?, key_arg(s, keys, 1)?);
    let origin = arg(s, args, 0)?;
    let crawl = String::from_utf8_lossy(arg(s, args, 1)?).into_owned();
    let tasks = m.lrange_all(queue)?;
    let total = tasks.len();
    let kept: Vec<Vec<u8>> = tasks
        .into_iter()
        .filter(|t| task_crawl(t).unwrap_or_default() != crawl)
        .collect();
    let dropped = total - kept.len();
    if dropped > 0 {
        m.del(queue);
        m.rpush(queue, &kept)?;
    }
    if kept.is_empty() {
        m.zrem(schedule, origin)?;
    }
    Ok(Reply::Int(dropped as i64))
}
