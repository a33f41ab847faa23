//! The releaser: hands fetch tasks from the hosts' queues to the fetch queue
//! when each host is due, for the whole cluster.
//!
//! Every frontier process runs one. Each tick it asks every schedule shard
//! for its due hosts ([`politeness::schedule::release`], atomic per
//! shard, so two releasers never take the same host's turn), publishes the
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
    /// Pause after a tick that released nothing.
    pub idle_pause: Duration,
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
    let ops: Vec<Op> = (0..HOST_SHARDS)
        .map(|shard| {
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
    let mut by_shard = Vec::new();
    for (shard, reply) in (0..HOST_SHARDS).zip(replies) {
        let members = match reply {
            Reply::Array(items) => items
                .iter()
                .filter_map(|r| r.data().ok().flatten())
                .collect(),
            _ => Vec::new(),
        };
        by_shard.push((shard, members));
    }
    Ok(Taken { by_shard })
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
    shutdown: Shutdown,
) {
    let keys = Keys::new(&namespace);
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
                    Ok(n) if n > 0 => tracing::warn!(
                        tasks = n,
                        "requeued tasks a releaser took and never confirmed"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "sweep failed"),
                }
            }
            if last_recrawl.elapsed() > RECRAWL_EVERY {
                last_recrawl = Instant::now();
                if let Err(e) = release_recrawls(&store, &keys).await {
                    tracing::warn!(error = %e, "cannot read the recrawl schedule");
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
            let taken = match take_due(&store, &keys, &settings).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the schedule; retrying");
                    tokio::select! {
                        _ = backoff.wait() => continue,
                        _ = shutdown.wait() => break 'sessions,
                    }
                }
            };
            if taken.is_empty() {
                tokio::select! {
                    _ = tokio::time::sleep(settings.idle_pause) => continue,
                    _ = shutdown.wait() => break 'sessions,
                }
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
