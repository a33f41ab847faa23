//! The frontier's side: each shard's schedule of hosts, their task queues,
//! the URL-seen sets of their URLs, and the tasks taken but not yet
//! confirmed published (`releasing`).
//!
//! - [`admit`]: for a batch's URLs of one shard, add each to the seen set
//!   and, if new, queue its task, count it and schedule its host: one step
//!   (so a redelivered batch finds its URLs seen, and nothing is queued
//!   twice or lost); a retry is admitted once by its own id ([`Check`]);
//!   [`enqueue`] queues without a check (tasks handed back, refetches).
//! - [`release`]: take the tasks of the due hosts, one delay apart per host.
//! - [`sweep`]: put back the tasks of a releaser that died before
//!   confirming them (confirming is a plain `ZREM` of the members).
//! - [`drop_crawl`]: remove a cancelled crawl's tasks from a host queue.
//! - [`schedule_recrawl`], [`release_recrawls`]: refetches of stored pages
//!   by due time, moved into their hosts' queues when due.
//!
//! Every script that queues or takes tasks keeps the shard's indexes in the
//! same step: `queued` (how many tasks wait), `hostlen` (hosts by queue
//! length) and `parked` (hosts parked, by until when), so idle checks and
//! `crawler stats` read them instead of scanning.
//!
//! Crawl control: [`release`] reads the shard's copy of the crawl states
//! ([`pipeline::keys::Keys::crawl_control`]) in the same script, so a
//! paused crawl never has a task released, whatever the releasers do.
//! While no crawl is paused or cancelled, that costs one `HLEN`; otherwise
//! each task looked at is unpacked (`cmsgpack`) for its crawl's name.

use pipeline::crawls::CrawlState;
use pipeline::keys::{host_shard, Keys};
use pipeline::messages::task_crawl;
use pipeline::store::{
    arg, int_arg, key_arg, key_args, Memory, Op, Reply, Script, ScriptCall, StoreError,
};

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

/// Lua: `count_queued(queued, lengths, origin, n)`: `n` tasks of `origin`
/// queued (negative: taken), in the shard's indexes; and
/// `schedule_host(schedule, record, origin)`: the host scheduled (if not
/// already) at the later of now and its `next_ms`. Twins:
/// [`count_queued`], [`schedule_host`].
const LUA_INDEXES: &str = r#"
local function count_queued(queued, lengths, origin, n)
  if n == 0 then return end
  redis.call('INCRBY', queued, n)
  if tonumber(redis.call('ZINCRBY', lengths, n, origin)) <= 0 then
    redis.call('ZREM', lengths, origin)
  end
end
local function schedule_host(schedule, record, origin)
  local nxt = tonumber(redis.call('HGET', record, F_NEXT_MS) or '0') or 0
  redis.call('ZADD', schedule, 'NX', string.format('%.0f', math.max(now, nxt)), origin)
end
"#;

/// The twin of the Lua `count_queued`.
fn count_queued(
    m: &mut Memory<'_>,
    queued: &str,
    lengths: &str,
    origin: &[u8],
    n: i64,
) -> Result<(), StoreError> {
    if n == 0 {
        return Ok(());
    }
    m.incr(queued, n)?;
    if m.zincr(lengths, origin, n)? <= 0 {
        m.zrem(lengths, origin)?;
    }
    Ok(())
}

/// The twin of the Lua `schedule_host`.
fn schedule_host(
    m: &mut Memory<'_>,
    schedule: &str,
    record: &str,
    origin: &[u8],
) -> Result<(), StoreError> {
    let due = m.now().max(m.hash_int(record, NEXT_MS));
    m.zadd(schedule, origin, due, true)?;
    Ok(())
}

/// One URL a batch brings to [`admit`]: its host, its hash (the seen-set
/// member) and its encoded fetch task.
#[derive(Debug, Clone)]
pub struct Admission {
    pub origin: String,
    pub url_hash: u64,
    pub task: Vec<u8>,
}

/// The crawl a batch of [`admit`] belongs to, as the step needs it.
#[derive(Debug, Clone)]
pub struct AdmitCrawl<'a> {
    pub name: &'a str,
    pub delay_ms: u64,
    /// `--max-pages-per-host`.
    pub max_per_host: Option<u64>,
}

/// What [`admit`] checks before it queues a URL's task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// New URLs: the URL's hash added to the URL-seen set, and its task
    /// queued only if it was new and the crawl's per-host limit is not
    /// reached (then it is dropped, seen); what was queued is counted
    /// (`seen`, also the crawl's own) and what was dropped (`over_limit`).
    New,
    /// A retry (a transient failure sent back, [`Admission::url_hash`] the
    /// hash of the retry's own id, not of its URL): that hash added to the
    /// seen set, and the task queued only if it was new, so a retry
    /// delivered again (its sender or the frontier died before the ack) is
    /// queued once. Neither counted nor counted against the per-host
    /// limit: the URL was, when it was first admitted.
    Retry,
    /// Nothing: tasks handed back or refetched, queued as they are.
    Nothing,
}

impl Check {
    /// The step's argument for it.
    fn arg(self) -> i64 {
        match self {
            Check::Nothing => 0,
            Check::New => 1,
            Check::Retry => 2,
        }
    }
}

/// Admit: for each URL (all of shard `shard`'s hosts), as `check` says
/// ([`Check`]): queue its task, record the crawl's delay and schedule the
/// host. A URL with an empty task is only marked seen (the caller dropped
/// it for the crawl's page limit and counts it). Reply Array [queued, over
/// the per-host limit].
pub fn admit(
    keys: &Keys,
    shard: u32,
    crawl: &AdmitCrawl<'_>,
    urls: &[Admission],
    check: Check,
) -> Op {
    let counted = check == Check::New;
    let seen_fields: Vec<String> = if counted {
        pipeline::crawls::counts(crawl.name, &[("seen", 1)])
            .into_iter()
            .map(|(f, _)| f)
            .collect()
    } else {
        Vec::new()
    };
    let mut call = ScriptCall::new(&ADMIT)
        .key(keys.schedule(shard))
        .key(keys.queued(shard))
        .key(keys.host_lengths(shard))
        .key(keys.stats_of_shard(shard))
        .key(keys.crawl_host_pages(shard))
        .arg(keys.seen_prefix(shard))
        .arg(keys.host_queue_prefix(shard))
        .arg(keys.host_prefix(shard))
        .arg(crawl.name)
        .int(crawl.delay_ms)
        .int(crawl.max_per_host.map_or(-1, |m| m as i64))
        .int(check.arg())
        .int(seen_fields.len());
    for f in &seen_fields {
        call = call.arg(f.as_str());
    }
    call = call.arg(if counted { "over_limit" } else { "" });
    for u in urls {
        call = call
            .arg(u.origin.as_str())
            .arg(pipeline::keys::hash_field(u.url_hash))
            .arg(keys.seen_sub(u.url_hash).to_string())
            .arg(u.task.clone());
    }
    let call = if counted {
        call.counting_replies(&["seen", "over_limit"])
    } else {
        call
    };
    call.op()
}

/// Enqueue without the seen check: `tasks` appended to the host's queue
/// (retries, tasks handed back, refetches), the crawl's delay recorded and
/// the host scheduled. Reply Array [queued, 0].
pub fn enqueue(keys: &Keys, origin: &str, crawl_delay_ms: u64, tasks: Vec<Vec<u8>>) -> Op {
    let crawl = AdmitCrawl {
        name: "",
        delay_ms: crawl_delay_ms,
        max_per_host: None,
    };
    let urls: Vec<Admission> = tasks
        .into_iter()
        .map(|task| Admission {
            origin: origin.to_string(),
            url_hash: 0,
            task,
        })
        .collect();
    admit(keys, host_shard(origin), &crawl, &urls, Check::Nothing)
}

/// KEYS = schedule, queued, host lengths, stats, per-host pages; ARGV =
/// seen prefix, queue prefix, record prefix, crawl, delay, max per host
/// (-1: none), the check (0 nothing, 1 new URLs, 2 retries: [`Check`]),
/// number of seen counters, those counters, the over-limit counter, then
/// origin, hash, seen sub-key and task of each URL.
pub static ADMIT: Script = Script::new("HOST_ADMIT", admit_lua, admit_twin);

fn admit_lua() -> String {
    lua_names()
        + LUA_INDEXES
        + r#"
local crawl, delay, maxh = ARGV[4], ARGV[5], tonumber(ARGV[6])
local check, fresh = ARGV[7] ~= '0', ARGV[7] == '1'
local nfields = tonumber(ARGV[8])
local over_field = ARGV[9 + nfields]
local queued, over = 0, 0
local hosts, per_host = {}, {}
for i = 10 + nfields, #ARGV, 4 do
  local origin, h, sub, task = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local new = true
  if check then new = redis.call('SADD', ARGV[1] .. sub, h) == 1 end
  -- An empty task: seen, never queued (over the crawl's page limit).
  if task == '' then new = false end
  if new and fresh and maxh >= 0 then
    if redis.call('HINCRBY', KEYS[5], crawl .. '\n' .. origin, 1) > maxh then
      new = false
      over = over + 1
    end
  end
  if new then
    redis.call('RPUSH', ARGV[2] .. origin, task)
    queued = queued + 1
    if not per_host[origin] then
      per_host[origin] = 0
      hosts[#hosts + 1] = origin
    end
    per_host[origin] = per_host[origin] + 1
  end
end
for _, origin in ipairs(hosts) do
  local rec = ARGV[3] .. origin
  redis.call('HSET', rec, F_CRAWL_DELAY_MS, delay)
  schedule_host(KEYS[1], rec, origin)
  count_queued(KEYS[2], KEYS[3], origin, per_host[origin])
end
if fresh then
  for f = 1, nfields do
    if queued > 0 then redis.call('HINCRBY', KEYS[4], ARGV[8 + f], queued) end
  end
  if over > 0 then redis.call('HINCRBY', KEYS[4], over_field, over) end
end
return {queued, over}
"#
}

fn admit_twin(m: &mut Memory<'_>, keys: &[String], args: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let s = &ADMIT;
    let [schedule, queued_key, lengths, stats, host_pages] = key_args(s, keys)?;
    let text = |i: usize| -> Result<String, StoreError> {
        Ok(String::from_utf8_lossy(arg(s, args, i)?).into_owned())
    };
    let (seen_prefix, queue_prefix, record_prefix, crawl) =
        (text(0)?, text(1)?, text(2)?, text(3)?);
    let delay = int_arg(s, args, 4)?;
    let max_per_host = int_arg(s, args, 5)?;
    let mode = int_arg(s, args, 6)?;
    let (check, fresh) = (mode != 0, mode == 1);
    let nfields = int_arg(s, args, 7)?.max(0) as usize;
    let over_field = text(8 + nfields)?;
    let (mut queued, mut over) = (0, 0);
    let mut hosts: Vec<(String, i64)> = Vec::new();
    let mut i = 9 + nfields;
    while i + 3 < args.len() {
        let origin = text(i)?;
        let h = int_arg(s, args, i + 1)?;
        let sub = text(i + 2)?;
        let task = arg(s, args, i + 3)?;
        let mut new = !check || m.sadd(&format!("{seen_prefix}{sub}"), h)?;
        // An empty task: seen, never queued (over the crawl's page limit).
        if task.is_empty() {
            new = false;
        }
        if new
            && fresh
            && max_per_host >= 0
            && m.hincr(
                host_pages,
                &format!(
                    "{crawl}
{origin}"
                ),
                1,
            )? > max_per_host
        {
            new = false;
            over += 1;
        }
        if new {
            m.rpush(&format!("{queue_prefix}{origin}"), task)?;
            queued += 1;
            match hosts.iter_mut().find(|(o, _)| *o == origin) {
                Some((_, n)) => *n += 1,
                None => hosts.push((origin, 1)),
            }
        }
        i += 4;
    }
    for (origin, n) in &hosts {
        let rec = format!("{record_prefix}{origin}");
        m.hash_set_int(&rec, CRAWL_DELAY_MS, delay)?;
        schedule_host(m, schedule, &rec, origin.as_bytes())?;
        count_queued(m, queued_key, lengths, origin.as_bytes(), *n)?;
    }
    if fresh {
        for f in 0..nfields {
            if queued > 0 {
                m.hincr(stats, &text(8 + f)?, queued)?;
            }
        }
        if over > 0 {
            m.hincr(stats, &over_field, over)?;
        }
    }
    Ok(Reply::Array(vec![Reply::Int(queued), Reply::Int(over)]))
}

/// Release, for one schedule shard: for up to `max_hosts` hosts that are
/// due now, take the next task (up to `burst`, at least one, for hosts with
/// no delay) into the `releasing` set and reschedule the host at now + its
/// delay (the larger of the crawl's and robots.txt's, doubled per
/// consecutive failure, never before a Retry-After backoff; a host failing
/// `park_after` times in a row waits `park_ms`). A host whose queue is empty
/// leaves the schedule (an enqueue puts it back). Reply Array: first Int,
/// the ms until the shard's next scheduled host is due (0: one is due now,
/// over `max_hosts`; -1: the schedule is empty), so a releaser need not
/// ask a shard again before then; then the Data members `origin\ntask`,
/// to publish and then `ZREM` from `releasing`.
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
        .key(keys.queued(shard))
        .key(keys.host_lengths(shard))
        .key(keys.parked(shard))
        .arg(keys.host_queue_prefix(shard))
        .arg(keys.host_prefix(shard))
        .int(max_hosts)
        .int(burst)
        .int(park_after)
        .int(park_ms)
        .op()
}

/// KEYS = schedule, releasing, crawl control, queued, host lengths,
/// parked; ARGV = queue prefix, record prefix, max hosts, burst, park
/// after, park ms. Queue and record keys are built from the prefixes; they
/// share the shard's slot.
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
        + LUA_INDEXES
        + r#"
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
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
  local taken, gone = 0, 0
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
    else
      gone = gone + 1
      if state ~= CANCELLED then
        local m = h .. '\n' .. task
        redis.call('ZADD', KEYS[2], now, m)
        out[#out + 1] = m
        taken = taken + 1
      end
    end
  end
  count_queued(KEYS[4], KEYS[5], h, -gone)
  if taken == 0 and redis.call('LLEN', q) > 0 then
    redis.call('ZADD', KEYS[1], string.format('%.0f', now + PAUSED_RECHECK_MS), h)
  elseif taken > 0 then
    local nxt = math.max(now + delay, tonumber(f[3] or '0') or 0)
    if streak >= tonumber(ARGV[5]) then
      nxt = math.max(nxt, now + tonumber(ARGV[6]))
      redis.call('HSET', rec, F_PARKED_UNTIL_MS, string.format('%.0f', nxt))
      redis.call('ZADD', KEYS[6], string.format('%.0f', nxt), h)
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
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = -1
if first[2] then wait = math.max(0, tonumber(first[2]) - now) end
table.insert(out, 1, wait)
return out
"#
}

fn release_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &RELEASE;
    let [schedule, releasing, control, queued, lengths, parked] = key_args(s, keys)?;
    let queue_prefix = String::from_utf8_lossy(arg(s, args, 0)?).into_owned();
    let record_prefix = String::from_utf8_lossy(arg(s, args, 1)?).into_owned();
    let max_hosts = int_arg(s, args, 2)?.max(0) as usize;
    let burst = int_arg(s, args, 3)?;
    let park_after = int_arg(s, args, 4)?;
    let park_ms = int_arg(s, args, 5)?;
    let now = m.now();
    for (host, _) in m.zrange_by_score(parked, i64::MIN, now, usize::MAX)? {
        m.zrem(parked, &host)?;
    }
    let gated = m.hlen(control)? > 0;
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
        let (mut taken, mut gone) = (0, 0);
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
                m.hget(control, &crawl)?.map(|v| CrawlState::parse(&v))
            } else {
                None
            };
            if state != Some(CrawlState::Paused) {
                gone += 1;
            }
            match state {
                Some(CrawlState::Paused) => {
                    m.rpush(&q, &task)?;
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
        count_queued(m, queued, lengths, &host, -gone)?;
        if taken == 0 && m.llen(&q)? > 0 {
            m.zadd(schedule, &host, now + PAUSED_RECHECK_MS, false)?;
        } else if taken > 0 {
            let mut next = (now + delay).max(m.hash_int(&rec, BACKOFF_UNTIL_MS));
            if streak >= park_after {
                next = next.max(now + park_ms);
                m.hash_set_int(&rec, PARKED_UNTIL_MS, next)?;
                m.zadd(parked, &host, next, false)?;
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
    let wait = match m.zfirst(schedule)? {
        Some((_, due)) => (due - now).max(0),
        None => -1,
    };
    out.insert(0, Reply::Int(wait));
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
        .key(keys.queued(shard))
        .key(keys.host_lengths(shard))
        .arg(keys.host_queue_prefix(shard))
        .int(older_than_ms)
        .int(SWEEP_BATCH)
        .op()
}

/// KEYS = schedule, releasing, queued, host lengths; ARGV = queue
/// prefix, age ms, batch.
pub static SWEEP: Script = Script::new("HOST_SWEEP", sweep_lua, sweep_twin);

fn sweep_lua() -> String {
    lua_names()
        + LUA_INDEXES
        + r#"
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(stale) do
  local i = string.find(m, '\n', 1, true)
  if i then
    local h = string.sub(m, 1, i - 1)
    redis.call('LPUSH', ARGV[1] .. h, string.sub(m, i + 1))
    redis.call('ZADD', KEYS[1], 'NX', now, h)
    count_queued(KEYS[3], KEYS[4], h, 1)
  end
  redis.call('ZREM', KEYS[2], m)
end
return #stale
"#
}

fn sweep_twin(m: &mut Memory<'_>, keys: &[String], args: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let s = &SWEEP;
    let [schedule, releasing, queued, lengths] = key_args(s, keys)?;
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
            count_queued(m, queued, lengths, host, 1)?;
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
    let shard = host_shard(origin);
    ScriptCall::new(&DROP_CRAWL)
        .key(keys.schedule(shard))
        .key(keys.host_queue(origin))
        .key(keys.queued(shard))
        .key(keys.host_lengths(shard))
        .arg(origin)
        .arg(crawl)
        .op()
}

/// KEYS = schedule, queue, queued, host lengths; ARGV = origin, crawl.
pub static DROP_CRAWL: Script = Script::new("HOST_DROP_CRAWL", drop_crawl_lua, drop_crawl_twin);

fn drop_crawl_lua() -> String {
    lua_names()
        + LUA_CRAWL_OF
        + LUA_INDEXES
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
count_queued(KEYS[3], KEYS[4], ARGV[1], -dropped)
return dropped
"#
}

fn drop_crawl_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &DROP_CRAWL;
    let [schedule, queue, queued, lengths] = key_args(s, keys)?;
    let origin = arg(s, args, 0)?;
    let crawl = String::from_utf8_lossy(arg(s, args, 1)?).into_owned();
    let tasks = m.lrange(queue, 0, -1)?;
    let total = tasks.len();
    let kept: Vec<Vec<u8>> = tasks
        .into_iter()
        .filter(|t| task_crawl(t).unwrap_or_default() != crawl)
        .collect();
    let dropped = total - kept.len();
    if dropped > 0 {
        m.del(queue);
        for t in &kept {
            m.rpush(queue, t)?;
        }
    }
    if kept.is_empty() {
        m.zrem(schedule, origin)?;
    }
    count_queued(m, queued, lengths, origin, -(dropped as i64))?;
    Ok(Reply::Int(dropped as i64))
}

/// Schedules a refetch: `task` (an encoded fetch task for a URL of
/// `origin`) due `in_ms` from now (the server's clock), one member per
/// URL's task (a later schedule of the same task moves it). Reply Int(1
/// if new).
pub fn schedule_recrawl(keys: &Keys, origin: &str, task: &[u8], in_ms: u64) -> Op {
    let mut member = origin.as_bytes().to_vec();
    member.push(b'\n');
    member.extend_from_slice(task);
    ScriptCall::new(&RECRAWL_AT)
        .key(keys.recrawl_schedule(host_shard(origin)))
        .arg(member)
        .int(in_ms)
        .op()
}

/// KEYS = recrawl schedule; ARGV = member, in ms.
pub static RECRAWL_AT: Script = Script::new("RECRAWL_AT", recrawl_at_lua, recrawl_at_twin);

fn recrawl_at_lua() -> String {
    r#"
return redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
"#
    .to_string()
}

fn recrawl_at_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &RECRAWL_AT;
    let schedule = key_arg(s, keys, 0)?;
    let member = arg(s, args, 0)?;
    let due = m.now() + int_arg(s, args, 1)?;
    Ok(Reply::Int(i64::from(m.zadd(schedule, member, due, false)?)))
}

/// Release refetches, for one shard: up to `max` refetches that are due
/// leave the recrawl schedule for their hosts' queues (counted, the hosts
/// scheduled), in one step. Reply Int(number moved).
pub fn release_recrawls(keys: &Keys, shard: u32, max: u32) -> Op {
    ScriptCall::new(&RELEASE_RECRAWLS)
        .key(keys.recrawl_schedule(shard))
        .key(keys.schedule(shard))
        .key(keys.queued(shard))
        .key(keys.host_lengths(shard))
        .arg(keys.host_queue_prefix(shard))
        .arg(keys.host_prefix(shard))
        .int(max)
        .op()
}

/// KEYS = recrawl schedule, schedule, queued, host lengths; ARGV = queue
/// prefix, record prefix, max.
pub static RELEASE_RECRAWLS: Script = Script::new(
    "RELEASE_RECRAWLS",
    release_recrawls_lua,
    release_recrawls_twin,
);

fn release_recrawls_lua() -> String {
    lua_names()
        + LUA_INDEXES
        + r#"
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(due) do
  redis.call('ZREM', KEYS[1], m)
  local i = string.find(m, '\n', 1, true)
  if i then
    local h = string.sub(m, 1, i - 1)
    redis.call('RPUSH', ARGV[1] .. h, string.sub(m, i + 1))
    schedule_host(KEYS[2], ARGV[2] .. h, h)
    count_queued(KEYS[3], KEYS[4], h, 1)
  end
end
return #due
"#
}

fn release_recrawls_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &RELEASE_RECRAWLS;
    let [recrawl, schedule, queued, lengths] = key_args(s, keys)?;
    let queue_prefix = String::from_utf8_lossy(arg(s, args, 0)?).into_owned();
    let record_prefix = String::from_utf8_lossy(arg(s, args, 1)?).into_owned();
    let max = int_arg(s, args, 2)?.max(0) as usize;
    let now = m.now();
    let due = m.zrange_upto(recrawl, now, max)?;
    for member in &due {
        m.zrem(recrawl, member)?;
        if let Some(i) = member.iter().position(|b| *b == b'\n') {
            let host = &member[..i];
            let h = String::from_utf8_lossy(host);
            m.rpush(&format!("{queue_prefix}{h}"), &member[i + 1..])?;
            schedule_host(m, schedule, &format!("{record_prefix}{h}"), host)?;
            count_queued(m, queued, lengths, host, 1)?;
        }
    }
    Ok(Reply::Int(due.len() as i64))
}
