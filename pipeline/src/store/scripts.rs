//! The Lua of the store's own atomic ops, and the clock every script
//! starts with. (A stage's scripts live with the stage: [`super::Script`].)

use super::Op;

/// Lua put before the scripts that end with writes and counters:
/// `ARGV[at]` is a number n; `cmd` writes `ARGV[at + i]` to `KEYS[1 + i]`
/// for i in 1..=n; then each key after those has its hash field `ARGV[a]`
/// grown by `ARGV[a + 1]`, `a` from `at + n + 1` on in steps of two.
const WRITES_THEN_COUNTS_LUA: &str = r#"
local function writes_then_counts(cmd, at)
  local n = tonumber(ARGV[at])
  for i = 1, n do
    redis.call(cmd, KEYS[1 + i], ARGV[at + i])
  end
  local a = at + n + 1
  for k = 2 + n, #KEYS do
    redis.call('HINCRBY', KEYS[k], ARGV[a], ARGV[a + 1])
    a = a + 2
  end
end
"#;

/// Lua for [`Op::SetNxWith`]: KEYS = key, push keys..., count keys...;
/// ARGV = value, number of pushes, push values..., then field and by of
/// each count.
const SETNX_WITH_LUA: &str = r#"
if redis.call('SETNX', KEYS[1], ARGV[1]) == 0 then
  return 0
end
writes_then_counts('RPUSH', 2)
return 1
"#;

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
writes_then_counts('SET', 4)
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

/// The server's clock in Unix ms (one clock for every worker), as `now`.
pub(super) const NOW_LUA: &str = "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

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

/// The store's own scripts, compiled once per store.
pub(super) struct Scripts {
    pub(super) claim: redis::Script,
    pub(super) setnx_with: redis::Script,
    pub(super) once: redis::Script,
    pub(super) zadd_in: redis::Script,
    pub(super) zpop_due: redis::Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        let timed = |body: &str| redis::Script::new(&format!("{NOW_LUA}{body}"));
        let counting = |body: &str| redis::Script::new(&format!("{WRITES_THEN_COUNTS_LUA}{body}"));
        Scripts {
            claim: redis::Script::new(CLAIM_LUA),
            setnx_with: counting(SETNX_WITH_LUA),
            once: counting(ONCE_LUA),
            zadd_in: timed(ZADD_IN_LUA),
            zpop_due: timed(ZPOP_DUE_LUA),
        }
    }

    /// The script an op runs, if any.
    pub(super) fn for_op<'a>(&'a self, op: &'a Op) -> Option<&'a redis::Script> {
        match op {
            Op::Claim { .. } => Some(&self.claim),
            Op::SetNxWith { .. } => Some(&self.setnx_with),
            Op::Once { .. } => Some(&self.once),
            Op::ZAddIn { .. } => Some(&self.zadd_in),
            Op::ZPopDue { .. } => Some(&self.zpop_due),
            Op::Script(call) => Some(call.script.compiled()),
            _ => None,
        }
    }
}
