//! The releaser: hands fetch tasks from the hosts' queues to the fetch queue
//! when each host is due, for the whole cluster.
//!
//! Every frontier process runs one. Each tick it asks the schedule shards
//! that have a host due for their due hosts ([`politeness::schedule::release`],
//! atomic per shard, so two releasers never take the same host's turn;
//! each shard's reply says when its next host is due, and the process's
//! frontier stage names the shards it queued tasks in, so an idle releaser
//! sleeps instead of asking, see `Due`), publishes the
//! tasks taken with confirms, and only then removes them from the shard's
//! `releasing` set. Tasks of a releaser that died before confirming go back
//! to their host queues after [`ReleaseSettings::stale_after`]
//! ([`politeness::schedule::sweep`]).
//!
//! So the fetch queue holds only tasks whose host is due: a slow host cannot
//! fill it while others starve. The fetchers' gate
//! ([`politeness::turn::gate`]) then spaces the requests themselves. And it
//! holds about [`ReleaseSettings::fetch_ahead`] messages waiting at most: the
//! releaser waits while the fetchers have that much work, so the tasks stay
//! in their hosts' queues (in the store, where politeness still orders them)
//! rather than piling up in the broker. Without that wait, a crawl whose
//! hosts are all due at once (no delay, many hosts) moved every task it
//! discovered into the fetch queue: 523,745 tasks after 3.5 minutes of a
//! 1M-page `crawler run --state`, against 13,000 pages done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pipeline::backoff::Backoff;
use pipeline::keys::{Keys, HOST_SHARDS};
use pipeline::shutdown::Shutdown;
use pipeline::store::{Op, Reply, StoreError};
use pipeline::{Broker, Queue, Store};
use politeness::schedule;

/// How the releaser paces itself.
#[derive(Debug, Clone)]
pub struct ReleaseSettings {
    /// Due hosts taken per shard per tick.
    pub hosts_per_shard: u32,
    /// Tasks taken at once from a host with no delay. Small, because a
    /// releaser that dies between publishing a tick's tasks and confirming
    /// them has them released again (at-least-once): the tick is the bound
    /// on repeats.
    pub burst: u32,
    /// Consecutive failures after which a host is parked.
    pub park_after: u32,
    /// How long a parked host waits.
    pub park_for: Duration,
    /// A taken task not confirmed for this long goes back to its queue:
    /// the longest a page waits after its releaser dies between taking and
    /// publishing it (a live releaser confirms within milliseconds, and
    /// keeps what it took across a broker reconnect). 10 s; a task swept
    /// while its releaser still lives may be fetched twice (at-least-once).
    pub stale_after: Duration,
    /// How soon a shard that says a host is due now, yet released
    /// nothing, is asked again.
    pub idle_pause: Duration,
    /// How often every shard is asked, due or not: how late the releaser
    /// sees hosts that another process scheduled (its own frontier stage
    /// wakes it at once, [`Wakeups`]). 250 ms.
    pub full_poll: Duration,
    /// Messages waiting in the fetch queue (not yet handed to a fetcher) at
    /// which the releaser waits before taking more. A message is one task
    /// on the in-process bus and a bundle of up to
    /// [`pipeline::bundle::MAX_ITEMS`] on RabbitMQ (a tick's tasks, bundled).
    /// 2,000: a few seconds of work for this machine's fetchers, so they
    /// never wait for the releaser (it ticks every few ms). A task is about
    /// 130 bytes (it names its crawl's settings, not carries them), so on
    /// the in-process bus this is well under a MB. A tick may pass the mark by
    /// its own tasks, and each frontier's releaser checks on its own.
    pub fetch_ahead: u64,
}

impl Default for ReleaseSettings {
    fn default() -> Self {
        ReleaseSettings {
            hosts_per_shard: 64,
            burst: 8,
            park_after: 8,
            park_for: Duration::from_secs(3600),
            stale_after: Duration::from_secs(10),
            idle_pause: Duration::from_millis(20),
            full_poll: Duration::from_millis(250),
            fetch_ahead: 2_000,
        }
    }
}

/// Tasks taken in one tick: per shard, the `origin\ntask` members.
pub struct Taken {
    pub by_shard: Vec<(u32, Vec<Vec<u8>>)>,
}

impl Taken {
    pub fn is_empty(&self) -> bool {
        self.by_shard.iter().all(|(_, m)| m.is_empty())
    }

    /// The encoded fetch tasks.
    pub fn tasks(&self) -> Vec<Vec<u8>> {
        self.by_shard
            .iter()
            .flat_map(|(_, ms)| ms.iter())
            .filter_map(|m| {
                m.iter()
                    .position(|b| *b == b'\n')
                    .map(|i| m[i + 1..].to_vec())
            })
            .collect()
    }
}

/// Takes the due tasks of every shard (one round trip).
pub async fn take_due(
    store: &Store,
    keys: &Keys,
    s: &ReleaseSettings,
) -> Result<Taken, StoreError> {
    let all: Vec<u32> = (0..HOST_SHARDS).collect();
    Ok(take_due_of(store, keys, s, &all).await?.0)
}

/// Takes the due tasks of `shards` (one round trip), and for each of them
/// how long until its next scheduled host is due (`None`: its schedule is
/// empty), as [`schedule::release`] replies.
pub async fn take_due_of(
    store: &Store,
    keys: &Keys,
    s: &ReleaseSettings,
    shards: &[u32],
) -> Result<(Taken, Vec<Option<Duration>>), StoreError> {
    let ops: Vec<Op> = shards
        .iter()
        .map(|&shard| {
            schedule::release(
                keys,
                shard,
                s.hosts_per_shard,
                s.burst,
                s.park_after,
                s.park_for.as_millis() as u64,
            )
        })
        .collect();
    let replies = store.exec(&ops).await?;
    let mut by_shard = Vec::with_capacity(shards.len());
    let mut waits = Vec::with_capacity(shards.len());
    for (&shard, reply) in shards.iter().zip(replies) {
        let mut wait = None;
        let mut members = Vec::new();
        if let Reply::Array(items) = reply {
            for item in items {
                match item {
                    Reply::Int(ms) => wait = u64::try_from(ms).ok().map(Duration::from_millis),
                    other => members.extend(other.data().ok().flatten()),
                }
            }
        }
        by_shard.push((shard, members));
        waits.push(wait);
    }
    Ok((Taken { by_shard }, waits))
}

/// Which schedule shards the releaser asks on its next tick: those whose
/// next host is due, those this process's frontier stage just queued
/// tasks in ([`Wakeups`]), and all of them every
/// [`ReleaseSettings::full_poll`] (hosts scheduled by another process or
/// by the sweep). So an idle releaser asks 64 shards four times a second,
/// not fifty (the Redis of an idle crawl ran 13,750 commands a second for
/// it), and a busy one only the shards with a host due.
struct Due {
    /// Per shard, when to ask it next.
    at: Vec<Instant>,
    /// When every shard was last asked.
    last_full: Instant,
}

impl Due {
    fn new() -> Due {
        let now = Instant::now();
        Due {
            at: vec![now; HOST_SHARDS as usize],
            last_full: now,
        }
    }

    /// The shards to ask now.
    fn shards(&mut self, touched: &[bool], full_poll: Duration) -> Vec<u32> {
        let now = Instant::now();
        let full = now >= self.last_full + full_poll;
        if full {
            self.last_full = now;
        }
        (0..HOST_SHARDS)
            .filter(|&s| {
                let i = s as usize;
                full || touched.get(i).copied().unwrap_or(false) || self.at[i] <= now
            })
            .collect()
    }

    /// What asking `shards` told: each one's wait, and whether it released
    /// anything (a shard that released nothing yet says a host is due now
    /// is asked again after `idle_pause`, not at once).
    fn learn(&mut self, taken: &Taken, waits: &[Option<Duration>], s: &ReleaseSettings) {
        let now = Instant::now();
        for ((shard, members), wait) in taken.by_shard.iter().zip(waits) {
            let Some(at) = self.at.get_mut(*shard as usize) else {
                continue;
            };
            *at = match wait {
                Some(w) if w.is_zero() && members.is_empty() => now + s.idle_pause,
                Some(w) => now + *w,
                None => now + s.full_poll,
            };
        }
    }

    /// Every shard asked on the next tick.
    fn all_now(&mut self) {
        let now = Instant::now();
        self.at.iter_mut().for_each(|a| *a = now);
    }

    /// When the releaser next has a shard to ask, whatever it is told.
    fn next(&self, full_poll: Duration) -> Instant {
        let full = self.last_full + full_poll;
        self.at.iter().copied().min().map_or(full, |a| a.min(full))
    }
}

/// The frontier stage's word to its process's releaser: the shards in
/// which it queued tasks, so the releaser asks them at once.
pub struct Wakeups {
    touched: Vec<AtomicBool>,
    notify: tokio::sync::Notify,
}

impl Default for Wakeups {
    fn default() -> Self {
        Wakeups {
            touched: (0..HOST_SHARDS).map(|_| AtomicBool::new(false)).collect(),
            notify: tokio::sync::Notify::new(),
        }
    }
}

impl Wakeups {
    /// Tasks were queued in `shards`.
    pub fn touch(&self, shards: impl IntoIterator<Item = u32>) {
        for shard in shards {
            if let Some(t) = self.touched.get(shard as usize) {
                t.store(true, Ordering::Release);
            }
        }
        self.notify.notify_one();
    }

    /// Whether a shard was touched since the last [`Wakeups::take`].
    fn any(&self) -> bool {
        self.touched.iter().any(|t| t.load(Ordering::Acquire))
    }

    /// The shards touched since the last call, cleared.
    fn take(&self) -> Vec<bool> {
        self.touched
            .iter()
            .map(|t| t.swap(false, Ordering::AcqRel))
            .collect()
    }
}

/// Removes confirmed tasks from the `releasing` sets.
pub async fn confirm(store: &Store, keys: &Keys, taken: &Taken) -> Result<(), StoreError> {
    let ops: Vec<Op> = taken
        .by_shard
        .iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(shard, members)| Op::ZRem {
            key: keys.releasing(*shard),
            members: members.clone(),
        })
        .collect();
    store.exec(&ops).await.map(|_| ())
}

/// Puts back tasks whose releaser died before confirming them.
pub async fn sweep(store: &Store, keys: &Keys, s: &ReleaseSettings) -> Result<i64, StoreError> {
    let ops: Vec<Op> = (0..HOST_SHARDS)
        .map(|shard| schedule::sweep(keys, shard, s.stale_after.as_millis() as u64))
        .collect();
    let mut moved = 0;
    for r in store.exec(&ops).await? {
        moved += r.int()?;
    }
    Ok(moved)
}

/// Tasks waiting in host queues or taken and unconfirmed (for idle
/// checks): each shard's `queued` counter and `releasing` set, one round
/// trip, O(shards) whatever the store holds.
pub async fn waiting(store: &Store, keys: &Keys) -> Result<i64, StoreError> {
    let ops: Vec<Op> = (0..HOST_SHARDS)
        .flat_map(|shard| {
            [
                Op::Get {
                    key: keys.queued(shard),
                },
                Op::ZCard {
                    key: keys.releasing(shard),
                },
            ]
        })
        .collect();
    let mut n = 0;
    for r in store.exec(&ops).await? {
        n += r.int()?;
    }
    Ok(n)
}

/// How often the releaser moves due refetches into their hosts' queues.
const RECRAWL_EVERY: Duration = Duration::from_millis(500);

/// Refetches moved per shard per call, at most.
const RECRAWL_BATCH: u32 = 1000;

/// Moves the refetches that are due (contentseen schedules them) into their
/// hosts' queues, where politeness applies to them like to any task, one
/// step per shard. Returns how many.
pub async fn release_recrawls(store: &Store, keys: &Keys) -> Result<i64, StoreError> {
    let ops: Vec<Op> = (0..HOST_SHARDS)
        .map(|shard| schedule::release_recrawls(keys, shard, RECRAWL_BATCH))
        .collect();
    let mut n = 0;
    for r in store.exec(&ops).await? {
        n += r.int()?;
    }
    Ok(n)
}

/// Tasks this releaser took and has not finished handing out: it keeps
/// them across a reconnect, so a broker restart delays them by the
/// reconnect, not by the sweep's [`ReleaseSettings::stale_after`].
enum Unfinished {
    /// Not confirmed by the broker: publish (again), then confirm.
    Publish(Taken),
    /// Confirmed by the broker, still in `releasing`: confirm.
    Confirm(Taken),
}

/// Publishes and confirms `u`; what is left when a step fails.
async fn finish(
    store: &Store,
    keys: &Keys,
    session: &pipeline::broker::Session,
    u: Unfinished,
) -> Result<(), (Unfinished, String)> {
    let taken = match u {
        Unfinished::Publish(taken) => {
            pipeline::fault::point(pipeline::fault::TAKEN_NOT_PUBLISHED);
            if let Err(e) = session.publish(Queue::Fetch, &taken.tasks()).await {
                return Err((Unfinished::Publish(taken), e.to_string()));
            }
            pipeline::fault::point(pipeline::fault::PUBLISHED_NOT_CONFIRMED);
            taken
        }
        Unfinished::Confirm(taken) => taken,
    };
    match confirm(store, keys, &taken).await {
        Ok(()) => Ok(()),
        Err(e) => Err((Unfinished::Confirm(taken), e.to_string())),
    }
}

/// Runs the releaser until shutdown; reconnects on its own.
pub async fn run(
    store: Store,
    broker: Broker,
    namespace: String,
    settings: ReleaseSettings,
    wakeups: Arc<Wakeups>,
    shutdown: Shutdown,
) {
    let keys = Keys::new(&namespace);
    let mut due = Due::new();
    let mut backoff = Backoff::default();
    let mut last_sweep = Instant::now();
    let mut last_recrawl = Instant::now() - RECRAWL_EVERY;
    let mut unfinished: Option<Unfinished> = None;
    'sessions: while !shutdown.is_triggered() {
        let failed = "releaser cannot open a broker session; retrying";
        let Some(session) = broker.open_until(failed, &mut backoff, &shutdown).await else {
            break;
        };
        backoff.reset();
        loop {
            // What the last session or the last tick left: before anything
            // new (and before a shutdown), so a host's tasks keep their
            // order and none waits for the sweep.
            if let Some(u) = unfinished.take() {
                if let Err((left, error)) = finish(&store, &keys, &session, u).await {
                    let publish = matches!(left, Unfinished::Publish(_));
                    unfinished = Some(left);
                    if publish {
                        tracing::warn!(%error, "publishing fetch tasks failed; reconnecting (they are kept and published again)");
                        break;
                    }
                    tracing::warn!(%error, "confirming released tasks failed; retrying");
                    tokio::select! {
                        _ = backoff.wait() => continue,
                        _ = shutdown.wait() => break 'sessions,
                    }
                }
            }
            if shutdown.is_triggered() {
                break 'sessions;
            }
            if last_sweep.elapsed() > settings.stale_after / 4 {
                last_sweep = Instant::now();
                match sweep(&store, &keys, &settings).await {
                    Ok(n) if n > 0 => {
                        tracing::warn!(
                            tasks = n,
                            "requeued tasks a releaser took and never confirmed"
                        );
                        due.all_now();
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "sweep failed"),
                }
            }
            if last_recrawl.elapsed() > RECRAWL_EVERY {
                last_recrawl = Instant::now();
                match release_recrawls(&store, &keys).await {
                    Ok(n) if n > 0 => due.all_now(),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "cannot read the recrawl schedule"),
                }
            }
            // Nothing to ask yet: wait for the next due shard, the full
            // poll, or the frontier stage's word.
            let next = due.next(settings.full_poll);
            if !wakeups.any() && next > Instant::now() {
                tokio::select! {
                    _ = tokio::time::sleep_until(next.into()) => continue,
                    _ = wakeups.notify.notified() => continue,
                    _ = shutdown.wait() => break 'sessions,
                }
            }
            match session.ready(Queue::Fetch).await {
                Ok(n) if n >= settings.fetch_ahead => {
                    tokio::select! {
                        _ = tokio::time::sleep(settings.idle_pause) => continue,
                        _ = shutdown.wait() => break 'sessions,
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the fetch queue's depth; reconnecting");
                    break;
                }
            }
            let shards = due.shards(&wakeups.take(), settings.full_poll);
            if shards.is_empty() {
                continue;
            }
            let taken = match take_due_of(&store, &keys, &settings, &shards).await {
                Ok((taken, waits)) => {
                    due.learn(&taken, &waits, &settings);
                    taken
                }
                Err(e) => {
                    // Asked again once the store answers.
                    due.all_now();
                    tracing::warn!(error = %e, "cannot read the schedule; retrying");
                    tokio::select! {
                        _ = backoff.wait() => continue,
                        _ = shutdown.wait() => break 'sessions,
                    }
                }
            };
            if taken.is_empty() {
                continue;
            }
            // Published and confirmed at the top of the next turn (or,
            // after a failure, of the next session). Were this process to
            // die first, the sweep puts them back.
            unfinished = Some(Unfinished::Publish(taken));
        }
        tokio::select! {
            _ = backoff.wait() => {}
            _ = shutdown.wait() => break,
        }
    }
}

// Tested in `tests/tests/politeness_ops.rs`, on the memory store and on the
// real Redis alike (the Lua scripts and their memory twins must agree).

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ReleaseSettings {
        ReleaseSettings {
            idle_pause: Duration::from_millis(20),
            full_poll: Duration::from_millis(200),
            ..ReleaseSettings::default()
        }
    }

    /// What asking `shards` told: (shard, its wait, whether it released).
    fn told(due: &mut Due, shards: &[(u32, Option<Duration>, bool)]) {
        let by_shard = shards
            .iter()
            .map(|&(s, _, taken)| {
                (
                    s,
                    if taken {
                        vec![b"h\nt".to_vec()]
                    } else {
                        Vec::new()
                    },
                )
            })
            .collect();
        let waits: Vec<_> = shards.iter().map(|&(_, w, _)| w).collect();
        due.learn(&Taken { by_shard }, &waits, &settings());
    }

    /// A new releaser asks every shard; then only the shards whose host is
    /// due, the shards its stage touched, and all of them at the full poll.
    #[test]
    fn only_due_or_touched_shards_are_asked_between_full_polls() {
        let s = settings();
        let none = vec![false; HOST_SHARDS as usize];
        let mut due = Due::new();
        assert_eq!(due.shards(&none, s.full_poll).len(), HOST_SHARDS as usize);
        // Shard 0 released and has a host due again at once; shard 1 has
        // one due in 50 ms; shard 2 in an hour; the rest are empty.
        let mut all: Vec<_> = (0..HOST_SHARDS).map(|s| (s, None, false)).collect();
        all[0] = (0, Some(Duration::ZERO), true);
        all[1] = (1, Some(Duration::from_millis(50)), false);
        all[2] = (2, Some(Duration::from_secs(3600)), false);
        told(&mut due, &all);
        assert_eq!(due.shards(&none, s.full_poll), vec![0]);
        let mut touched = none.clone();
        touched[7] = true;
        assert_eq!(due.shards(&touched, s.full_poll), vec![0, 7]);
        // Shard 0 now says a host is due yet released nothing: asked again
        // after the idle pause, not in a loop.
        told(&mut due, &[(0, Some(Duration::ZERO), false)]);
        assert!(due.shards(&none, s.full_poll).is_empty());
        let next = due.next(s.full_poll);
        assert!(next > Instant::now() && next <= Instant::now() + s.idle_pause);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(due.shards(&none, s.full_poll), vec![0, 1]);
        // The full poll asks them all, the one due in an hour too.
        std::thread::sleep(s.full_poll);
        assert_eq!(due.shards(&none, s.full_poll).len(), HOST_SHARDS as usize);
        due.all_now();
        assert!(due.next(s.full_poll) <= Instant::now());
    }

    #[test]
    fn wakeups_name_the_touched_shards_once() {
        let w = Wakeups::default();
        assert!(!w.any());
        w.touch([3, 5, HOST_SHARDS + 1]);
        assert!(w.any());
        let taken = w.take();
        assert!(taken[3] && taken[5] && taken.iter().filter(|t| **t).count() == 2);
        assert!(!w.any() && !w.take().iter().any(|t| *t));
    }
}
