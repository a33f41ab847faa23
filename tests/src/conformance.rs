//! One harness for every store op written twice (Lua or a transaction on
//! Redis, a twin in the memory store of `crawler run`): run the same steps
//! on Redis, on the memory store and on the disk store (`crawler run
//! --state`, the same twins over its engine), then compare their replies
//! and everything they left under the namespace
//! ([`pipeline::Store::snapshot`]).
//!
//! Both stores stamp times from their own clock (Redis's `TIME`, the
//! memory store's `SystemTime`), a few milliseconds apart, so what looks
//! like a time is compared to the second: a value within a day of the run
//! becomes `now+Ns` (its distance from the run's start, rounded), and the
//! replies of a step marked [`Step::timed`] (waits in milliseconds) are
//! rounded to the second. Cases keep their delays whole seconds.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use pipeline::store::{Op, Reply, Stored};
use pipeline::Store;

use crate::TestEnv;

/// One `exec` of ops.
pub struct Step {
    pub ops: Vec<Op>,
    /// Its integer replies are waits, compared to the second.
    pub timed: bool,
    /// The members of its array replies are compared as sets: their order
    /// follows clock ticks between earlier ops, which differ between runs.
    pub unordered: bool,
}

impl Step {
    pub fn new(ops: Vec<Op>) -> Step {
        Step {
            ops,
            timed: false,
            unordered: false,
        }
    }

    pub fn timed(ops: Vec<Op>) -> Step {
        Step {
            timed: true,
            ..Step::new(ops)
        }
    }

    pub fn unordered(ops: Vec<Op>) -> Step {
        Step {
            unordered: true,
            ..Step::new(ops)
        }
    }
}

/// An array reply with its members in one order.
fn sorted(reply: Reply) -> Reply {
    match reply {
        Reply::Array(mut items) => {
            items.sort_by_cached_key(|r| format!("{r:?}"));
            Reply::Array(items)
        }
        other => other,
    }
}

/// A key's value as compared: bytes shown escaped, times as `now+Ns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Str(String),
    List(Vec<String>),
    Set(Vec<i64>),
    Hash(Vec<(String, String)>),
    /// (score, member), sorted after the scores are rounded.
    ZSet(Vec<(String, String)>),
}

/// What one store replied and held after the steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub replies: Vec<Vec<Reply>>,
    pub state: BTreeMap<String, Seen>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

const DAY_MS: i64 = 86_400_000;

fn shown(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

/// `v` as compared: a time near `start` as its distance in seconds.
fn clock(v: i64, start: i64) -> String {
    if (start - DAY_MS..=start + DAY_MS).contains(&v) {
        format!("now{:+}s", (v - start + 500).div_euclid(1000))
    } else {
        v.to_string()
    }
}

fn value(bytes: &[u8], start: i64) -> String {
    match std::str::from_utf8(bytes).ok().and_then(|s| s.parse().ok()) {
        Some(v) => clock(v, start),
        None => shown(bytes),
    }
}

fn seen(stored: Stored, start: i64) -> Seen {
    match stored {
        Stored::Str(s) => Seen::Str(value(&s, start)),
        Stored::List(l) => Seen::List(l.iter().map(|v| shown(v)).collect()),
        Stored::Set(s) => Seen::Set(s),
        Stored::Hash(h) => Seen::Hash(h.into_iter().map(|(f, v)| (f, value(&v, start))).collect()),
        Stored::ZSet(z) => {
            let mut z: Vec<(String, String)> = z
                .into_iter()
                .map(|(m, s)| (clock(s, start), shown(&m)))
                .collect();
            z.sort();
            Seen::ZSet(z)
        }
    }
}

/// A reply as compared: Redis sends a sorted set's scores and an
/// integer set's members as strings where the memory store has numbers
/// (both read alike through `Reply::int`): a string that is an integer is
/// compared as one.
fn plain(r: Reply) -> Reply {
    match r {
        Reply::Data(d) => match std::str::from_utf8(&d)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
        {
            Some(i) if i.to_string().as_bytes() == d.as_slice() => Reply::Int(i),
            _ => Reply::Data(d),
        },
        Reply::Array(items) => Reply::Array(items.into_iter().map(plain).collect()),
        other => other,
    }
}

/// A timed reply, its waits rounded to the second; a negative integer
/// (no wait: `-1` for "nothing scheduled") stays as it is, and a wait of
/// a day or more (until a fixed date: it shrinks by the seconds between
/// the runs on the stores) is compared as a day.
fn rounded(r: Reply) -> Reply {
    match r {
        Reply::Int(v) if v >= DAY_MS => Reply::Int(DAY_MS),
        Reply::Int(v) if v >= 0 => Reply::Int((v + 500).div_euclid(1000) * 1000),
        Reply::Array(items) => Reply::Array(items.into_iter().map(rounded).collect()),
        other => other,
    }
}

/// Runs `steps` on `store`, then reads every key of namespace `ns`.
pub async fn run(store: &Store, ns: &str, steps: &[Step]) -> Run {
    let start = now_ms();
    let mut replies = Vec::new();
    for step in steps {
        let got = store.exec(&step.ops).await.expect("exec");
        let got: Vec<Reply> = got.into_iter().map(plain).collect();
        let got: Vec<Reply> = match step.timed {
            true => got.into_iter().map(rounded).collect(),
            false => got,
        };
        replies.push(match step.unordered {
            true => got.into_iter().map(sorted).collect(),
            false => got,
        });
    }
    let state = store
        .snapshot(&format!("{ns}:*"))
        .await
        .expect("snapshot")
        .into_iter()
        .map(|(k, v)| (k, seen(v, start)))
        .collect();
    Run { replies, state }
}

/// [`agree`] for a `case` that builds its steps from the namespace's keys.
pub async fn agree_on_keys(name: &str, case: impl Fn(&pipeline::keys::Keys) -> Vec<Step>) -> Run {
    agree(name, |ns| case(&pipeline::keys::Keys::new(ns))).await
}

/// Runs the steps `case` builds for a namespace on the real Redis, on a
/// fresh memory store and on a fresh disk store, asserts all three gave
/// the same replies and left the same state, and returns that.
pub async fn agree(name: &str, case: impl Fn(&str) -> Vec<Step>) -> Run {
    let env = TestEnv::in_process(name);
    let ns = env.namespace.clone();
    let steps = case(&ns);
    let redis = crate::shared_store().await;
    let on_redis = run(&redis, &ns, &steps).await;
    env.cleanup().await;
    let on_memory = run(&Store::memory(), &ns, &steps).await;
    // Namespaces differ between runs of the test, not between the stores.
    same(name, &on_redis, &on_memory, "memory");
    let dir = std::env::temp_dir().join(format!("conformance-disk-{ns}"));
    let _ = std::fs::remove_dir_all(&dir);
    let on_disk = run(&Store::disk(&dir).expect("disk store"), &ns, &steps).await;
    let _ = std::fs::remove_dir_all(&dir);
    same(name, &on_redis, &on_disk, "disk");
    on_redis
}

/// Asserts the store named `other` replied as Redis did and was left in
/// the same state.
fn same(name: &str, on_redis: &Run, on_other: &Run, other: &str) {
    assert_eq!(
        on_redis.replies, on_other.replies,
        "{name}: Redis and {other} replied differently"
    );
    assert_eq!(
        on_redis.state, on_other.state,
        "{name}: Redis and {other} hold different state"
    );
}
