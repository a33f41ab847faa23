//! The worker loop every stage runs, over RabbitMQ or the memory bus.
//!
//! For each delivery: decode it (undecodable → dead-letter queue, logged),
//! hand it to the [`Stage`], publish everything the stage produced and wait
//! for the broker's confirms, and only then ack (at-least-once). A delivery
//! may be a bundle of messages ([`crate::bundle`]): they are handled at once
//! and the bundle is acked when all are done; one unprocessable message
//! goes to the dead-letter queue alone, one that fails transiently sends
//! the whole bundle back. A
//! [`StageError::Transient`] failure requeues the message after a pause; a
//! [`StageError::Malformed`] one, or a panic in the stage, dead-letters it.
//! A lost connection is reopened with backoff; messages that were in flight
//! are redelivered by the broker, so stages are idempotent. A message of a
//! cancelled crawl ([`crate::crawls`], checked against a cache of at most
//! a second) is acked without being handed to the stage.
//!
//! Each worker also keeps a heartbeat in the store with its number of
//! messages in flight ([`crate::live`]), which `crawler stats --wait-idle`
//! reads. Its id names the worker's host ([`host_name`]), so `crawler
//! health` in a container can tell whether the worker of that container is
//! alive.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use tokio::sync::Semaphore;

use crate::backoff::Backoff;
use crate::broker::{Broker, Committed, Delivery, Session};
use crate::crawls::{CrawlState, CrawlStates};
use crate::keys::Keys;
use crate::messages::{decode, OfCrawl, Versioned};
use crate::metrics::{MessageOutcome, Metrics};
use crate::shutdown::Shutdown;
use crate::store::{Op, Store};
use crate::topology::Queue;

/// How long a transiently failed message waits before it is requeued.
const TRANSIENT_RETRY_PAUSE: Duration = Duration::from_secs(1);
pub use crate::live::{HEARTBEAT_EVERY, HEARTBEAT_TTL};
/// At shutdown, how long a worker waits for its in-flight messages.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// What a stage produced from one input message.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Store operations to run before anything is published: records and
    /// counters. Each must be idempotent (a redelivery runs them again;
    /// [`crate::once`] counts a message once), and when they fail the input
    /// is requeued, so what they count is never lost.
    pub store: Vec<Op>,
    /// Messages to publish (confirmed) before the input is acked.
    pub publish: Vec<(Queue, Vec<u8>)>,
    /// Store operations to run after the ack, best effort: hints whose loss
    /// costs nothing but a little politeness (a host's feedback).
    pub after_ack: Vec<Op>,
}

/// Why a stage could not handle a message.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// Worth another try later (a service is unreachable).
    #[error("transient: {0}")]
    Transient(String),
    /// Never going to work: to the dead-letter queue.
    #[error("malformed: {0}")]
    Malformed(String),
}

impl From<crate::store::StoreError> for StageError {
    fn from(e: crate::store::StoreError) -> Self {
        StageError::Transient(e.to_string())
    }
}

impl From<crate::messages::CodecError> for StageError {
    fn from(e: crate::messages::CodecError) -> Self {
        StageError::Malformed(e.to_string())
    }
}

/// One stage of the pipeline: reads one kind of message, writes others.
pub trait Stage: Send + Sync + 'static {
    type Input: DeserializeOwned + Versioned + OfCrawl + Send + 'static;
    /// The queue this stage consumes.
    const QUEUE: Queue;
    /// Messages handled at once unless configured.
    const DEFAULT_CONCURRENCY: usize;

    fn handle(
        &self,
        input: Self::Input,
    ) -> impl Future<Output = Result<Outcome, StageError>> + Send;
}

/// Where a worker runs and how much it takes at once.
#[derive(Clone)]
pub struct WorkerSettings {
    pub broker: Broker,
    pub store: Store,
    pub namespace: String,
    pub concurrency: usize,
    pub prefetch: u16,
    /// Serve Prometheus metrics at this address (`None`: no server).
    pub metrics_addr: Option<std::net::SocketAddr>,
}

/// Runs `stage` until `shutdown` fires; reconnects on its own.
pub async fn run<S: Stage>(stage: Arc<S>, settings: WorkerSettings, shutdown: Shutdown) {
    let worker_id =
        crate::live::worker_id(S::QUEUE.stage(), &host_name(), &crate::messages::new_id());
    let keys = Keys::new(&settings.namespace);
    let inflight = Arc::new(AtomicI64::new(0));
    let heartbeat = tokio::spawn(heartbeat(
        settings.store.clone(),
        keys.clone(),
        worker_id.clone(),
        inflight.clone(),
    ));
    let concurrency = settings.concurrency.max(1);
    let crawls = Arc::new(CrawlStates::new(settings.store.clone(), keys.clone()));
    let metrics = Metrics::new(S::QUEUE.stage());
    let metrics_server = settings.metrics_addr.map(|addr| {
        tokio::spawn(serve_metrics(
            metrics.clone(),
            addr,
            settings.broker.clone(),
        ))
    });
    // Deliveries in hand, and messages handled (a bundle holds many).
    let permits = Arc::new(Semaphore::new(concurrency));
    let shared = Arc::new(Shared {
        stage,
        store: settings.store.clone(),
        handling: Semaphore::new(concurrency),
        crawls,
        metrics,
        inflight: inflight.clone(),
    });
    let mut backoff = Backoff::default();
    tracing::info!(worker = %worker_id, concurrency, prefetch = settings.prefetch, "worker started");

    'sessions: while !shutdown.is_triggered() {
        let failed = "cannot open broker session; retrying";
        let Some(session) = settings
            .broker
            .open_until(failed, &mut backoff, &shutdown)
            .await
        else {
            break;
        };
        let mut consumer = match session.consume(S::QUEUE, settings.prefetch).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "cannot start consuming; retrying");
                tokio::select! {
                    _ = backoff.wait() => continue,
                    _ = shutdown.wait() => break,
                }
            }
        };
        backoff.reset();
        loop {
            // Take a permit first, so that at most `concurrency` deliveries are
            // pulled from the consumer and each pulled one is counted in flight.
            let permit = tokio::select! {
                p = permits.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break 'sessions,
                },
                _ = shutdown.wait() => break 'sessions,
            };
            let item = tokio::select! {
                item = consumer.next() => item,
                _ = shutdown.wait() => break 'sessions,
            };
            match item {
                Some(Ok(delivery)) => {
                    shared.inflight.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(shared.clone().deliver(session.clone(), delivery, permit));
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "consumer failed; reconnecting");
                    break;
                }
                None => {
                    tracing::warn!("consumer stream ended (connection lost?); reconnecting");
                    break;
                }
            }
        }
        tokio::select! {
            _ = backoff.wait() => {}
            _ = shutdown.wait() => break,
        }
    }

    // Let in-flight messages finish; what does not finish in time is
    // redelivered by the broker when the connection closes.
    let all = u32::try_from(concurrency).unwrap_or(u32::MAX);
    if tokio::time::timeout(SHUTDOWN_GRACE, permits.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!(
            "shutdown grace period over with messages in flight; they will be redelivered"
        );
    }
    heartbeat.abort();
    if let Some(m) = metrics_server {
        m.abort();
    }
    let _ = settings
        .store
        .exec(&crate::live::leave(&keys, &worker_id))
        .await;
    tracing::info!(worker = %worker_id, "worker stopped");
}

/// What the task of every delivery of a worker shares.
struct Shared<S> {
    stage: Arc<S>,
    store: Store,
    /// Messages being handled (a bundle holds many).
    handling: Semaphore,
    crawls: Arc<CrawlStates>,
    metrics: Arc<Metrics>,
    /// Deliveries in hand, for the heartbeat.
    inflight: Arc<AtomicI64>,
}

impl<S: Stage> Shared<S> {
    /// One delivery handled to its end ([`process`]), counted in the
    /// metrics; then it is no longer in flight and its permit is free.
    async fn deliver(
        self: Arc<Self>,
        session: Session,
        delivery: Delivery,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) {
        let messages = crate::bundle::count(&delivery.data);
        self.metrics.started(messages);
        let t = std::time::Instant::now();
        let (outcome, buried) = process(
            &*self.stage,
            &session,
            &self.store,
            delivery,
            &self.handling,
            &self.crawls,
        )
        .await;
        let took = t.elapsed();
        self.metrics
            .finished(outcome, messages.saturating_sub(buried), took);
        if buried > 0 {
            self.metrics
                .finished(MessageOutcome::DeadLettered, buried, took);
        }
        self.inflight.fetch_sub(1, Ordering::SeqCst);
        drop(permit);
    }
}

/// Serves the metrics at `addr`, with the queue depths polled beside.
async fn serve_metrics(metrics: Arc<Metrics>, addr: std::net::SocketAddr, broker: Broker) {
    let depths = tokio::spawn(poll_queue_depths(broker));
    if let Err(e) = crate::metrics::serve(metrics, addr).await {
        tracing::error!(%addr, error = %e, "cannot serve metrics");
    }
    depths.abort();
}

/// Reads the namespace's queue depths into the metrics every
/// [`crate::metrics::QUEUE_POLL`], on a session of its own (reopened when
/// lost), until aborted.
async fn poll_queue_depths(broker: Broker) {
    let mut session = None;
    loop {
        if session.is_none() {
            session = broker.open().await.ok();
        }
        if let Some(s) = &session {
            match s.queue_depths().await {
                Ok(depths) => crate::metrics::crawl_series().queue_depths(&depths),
                Err(e) => {
                    tracing::debug!(error = %e, "queue depths not read; reconnecting");
                    session = None;
                }
            }
        }
        tokio::time::sleep(crate::metrics::QUEUE_POLL).await;
    }
}

/// Handles one delivery from decode to ack: one message, or a bundle of
/// them ([`crate::bundle`]) handled at once (each holding a permit of
/// `handling`, so a worker handles at most its concurrency of messages) and
/// acked when all are done. Returns how the delivery ended, and how many
/// messages of a bundle went to the dead-letter queue alone.
async fn process<S: Stage>(
    stage: &S,
    session: &Session,
    store: &Store,
    delivery: Delivery,
    handling: &Semaphore,
    crawls: &CrawlStates,
) -> (MessageOutcome, usize) {
    let queue = S::QUEUE.stage();
    let items: Vec<Vec<u8>> = match crate::bundle::unpack(&delivery.data) {
        Ok(items) if items.len() > 1 => items.into_iter().map(<[u8]>::to_vec).collect(),
        // One message (or bytes that are no bundle: no message either, as
        // its decoding will say).
        unpacked => {
            let one = match unpacked {
                Ok(items) => items.first().map(|m| m.to_vec()).unwrap_or_default(),
                Err(_) => delivery.data.clone(),
            };
            let outcome = match handle(stage, &one, handling, crawls).await {
                Ok(outcome) => finish(session, store, delivery, vec![outcome], queue).await,
                Err(StageError::Transient(reason)) => requeue(delivery, queue, &reason).await,
                Err(StageError::Malformed(reason)) => {
                    tracing::error!(queue, %reason, bytes = delivery.data.len(), "unprocessable message sent to the dead-letter queue");
                    dead_letter(session, S::QUEUE, delivery, &reason).await
                }
            };
            return (outcome, 0);
        }
    };
    let mut handled = Vec::with_capacity(items.len());
    for raw in &items {
        handled.push(handle(stage, raw, handling, crawls));
    }
    let results = futures_util::future::join_all(handled).await;
    // One message to try again later: the whole bundle goes back (what the
    // others did is done again on redelivery; stages are idempotent).
    if let Some(reason) = results.iter().find_map(|r| match r {
        Err(StageError::Transient(reason)) => Some(reason.clone()),
        _ => None,
    }) {
        return (requeue(delivery, queue, &reason).await, 0);
    }
    let mut outcomes = Vec::with_capacity(items.len());
    let mut buried = 0;
    for (raw, result) in items.iter().zip(results) {
        match result {
            Ok(outcome) => outcomes.push(outcome),
            Err(StageError::Malformed(reason)) | Err(StageError::Transient(reason)) => {
                tracing::error!(queue, %reason, bytes = raw.len(), "unprocessable message of a bundle sent to the dead-letter queue");
                if let Err(e) = session.dead_letter_message(S::QUEUE, raw, &reason).await {
                    tracing::warn!(queue, error = %e, "dead letter not confirmed; the bundle will be redelivered");
                    let _ = delivery.requeue().await;
                    return (MessageOutcome::Redelivered, 0);
                }
                buried += 1;
            }
        }
    }
    (
        finish(session, store, delivery, outcomes, queue).await,
        buried,
    )
}

/// One message: decoded and handed to the stage; a panic in the stage is a
/// malformed message. A message of a cancelled crawl is done without work.
async fn handle<S: Stage>(
    stage: &S,
    raw: &[u8],
    handling: &Semaphore,
    crawls: &CrawlStates,
) -> Result<Outcome, StageError> {
    // Closed only when the worker is gone.
    let _permit = handling
        .acquire()
        .await
        .map_err(|_| StageError::Transient("worker stopping".into()))?;
    let input = decode::<S::Input>(raw).map_err(|e| {
        StageError::Malformed(format!("undecodable {} message: {e}", S::QUEUE.stage()))
    })?;
    // A message of a cancelled crawl is acked without being handed to the
    // stage ([`crate::crawls`]).
    let crawl = input.crawl_name();
    if crawls.state(crawl).await == CrawlState::Cancelled {
        tracing::debug!(crawl, "message of a cancelled crawl dropped");
        return Ok(Outcome::default());
    }
    std::panic::AssertUnwindSafe(stage.handle(input))
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(StageError::Malformed(format!("stage panicked: {what}")))
        })
}

/// Back to the queue after a pause.
async fn requeue(delivery: Delivery, queue: &str, reason: &str) -> MessageOutcome {
    tracing::warn!(queue, %reason, "transient failure; requeueing");
    tokio::time::sleep(TRANSIENT_RETRY_PAUSE).await;
    let _ = delivery.requeue().await;
    MessageOutcome::Requeued
}

/// What the delivery's messages produced: their store ops (one pipeline),
/// then their messages (confirmed), then the ack, then the hints.
async fn finish(
    session: &Session,
    store: &Store,
    delivery: Delivery,
    outcomes: Vec<Outcome>,
    queue: &str,
) -> MessageOutcome {
    let ops: Vec<Op> = outcomes
        .iter()
        .flat_map(|o| o.store.iter().cloned())
        .collect();
    let mut by_queue: BTreeMap<Queue, Vec<Vec<u8>>> = BTreeMap::new();
    let mut after_ack = Vec::new();
    for outcome in outcomes {
        for (q, payload) in outcome.publish {
            by_queue.entry(q).or_default().push(payload);
        }
        after_ack.extend(outcome.after_ack);
    }
    // On a bus that keeps its messages in this store (`crawler run --state`), the three
    // steps below are one transaction.
    let (delivery, ops) = match delivery.commit_with(store, ops, &by_queue).await {
        Committed::Done => {
            hint(store, &after_ack, queue).await;
            return MessageOutcome::Acked;
        }
        Committed::Failed(delivery, e) => return store_failed(delivery, &e, queue).await,
        Committed::Elsewhere(delivery, ops) => (delivery, ops),
    };
    if !ops.is_empty() {
        if let Err(e) = store.exec(&ops).await {
            return store_failed(delivery, &e, queue).await;
        }
    }
    // Every queue's messages at once: one bundle window for all of them.
    let published = futures_util::future::join_all(
        by_queue
            .iter()
            .map(|(q, payloads)| async move { (q, session.publish(*q, payloads).await) }),
    )
    .await;
    for (q, result) in published {
        if let Err(e) = result {
            tracing::warn!(queue, to = q.stage(), error = %e, "publish not confirmed; the input will be redelivered");
            let _ = delivery.requeue().await;
            return MessageOutcome::Redelivered;
        }
    }
    #[cfg(feature = "fault-points")]
    {
        crate::fault::point(&format!("{}:{queue}", crate::fault::STORED_NOT_ACKED));
        for q in by_queue.keys() {
            let point = format!("{}:{queue}>{}", crate::fault::STORED_NOT_ACKED, q.stage());
            crate::fault::point(&point);
        }
    }
    if let Err(e) = delivery.ack().await {
        tracing::warn!(queue, error = %e, "ack failed; the input will be redelivered");
        return MessageOutcome::Redelivered;
    }
    hint(store, &after_ack, queue).await;
    MessageOutcome::Acked
}

/// A delivery whose store update failed: back to its queue after a pause.
async fn store_failed(
    delivery: Delivery,
    e: &crate::store::StoreError,
    queue: &str,
) -> MessageOutcome {
    tracing::warn!(queue, error = %e, "store update failed; requeueing");
    tokio::time::sleep(TRANSIENT_RETRY_PAUSE).await;
    let _ = delivery.requeue().await;
    MessageOutcome::Requeued
}

/// The hints a delivery leaves after its ack (best effort).
async fn hint(store: &Store, after_ack: &[Op], queue: &str) {
    if !after_ack.is_empty() {
        if let Err(e) = store.exec(after_ack).await {
            tracing::warn!(queue, error = %e, "post-ack hint not stored (best effort)");
        }
    }
}

/// To the stage's dead-letter queue, with the reason on the message.
async fn dead_letter(
    session: &Session,
    queue: crate::Queue,
    delivery: Delivery,
    reason: &str,
) -> MessageOutcome {
    match session.dead_letter(queue, delivery, reason).await {
        Ok(()) => MessageOutcome::DeadLettered,
        Err(e) => {
            tracing::warn!(queue = queue.stage(), error = %e, "the reason could not go on the dead letter (rejected without it, or redelivered)");
            MessageOutcome::DeadLettered
        }
    }
}

/// This machine's (or container's) host name, as it appears in the worker's
/// heartbeat key (`<ns>:live:<stage>:<host>:<id>`): `:` and glob characters
/// are replaced, so the name can be matched with a pattern; `unknown` where
/// the kernel does not say.
pub fn host_name() -> String {
    host_name_as(
        |c| match c {
            ':' | '*' | '?' | '[' | ']' | '\\' => Some('_'),
            c => Some(c),
        },
        "unknown",
    )
}

/// This machine's (or container's) host name as the kernel (or else
/// `HOSTNAME`) says it, each character as `map` maps it (`None` drops it);
/// `unknown` where that leaves nothing.
pub fn host_name_as(map: impl FnMut(char) -> Option<char>, unknown: &str) -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let name: String = name.trim().chars().filter_map(map).collect();
    if name.is_empty() {
        unknown.into()
    } else {
        name
    }
}

async fn heartbeat(store: Store, keys: Keys, worker: String, inflight: Arc<AtomicI64>) {
    if matches!(store, Store::Memory(_)) {
        return;
    }
    let mut tick = tokio::time::interval(HEARTBEAT_EVERY);
    loop {
        tick.tick().await;
        let n = inflight.load(Ordering::SeqCst);
        let _ = store.one(crate::live::beat(&keys, &worker, n)).await;
    }
}

/// Connects to Redis, retrying with backoff until it answers (a worker that
/// starts before Redis waits instead of crash-looping); `None` on shutdown.
pub async fn connect_store(
    config: &crate::store::RedisConfig,
    shutdown: &Shutdown,
) -> Option<Store> {
    let always = |_: &crate::store::StoreError| true;
    waited_out(
        shutdown,
        "redis not reachable yet",
        || Store::connect(config),
        always,
    )
    .await
    .ok()
    .flatten()
}

/// `attempt` until it succeeds, again with backoff after each error that
/// `retry` accepts (logged as `what`); another error is returned, and
/// `Ok(None)` means shut down first.
async fn waited_out<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(
    shutdown: &Shutdown,
    what: &str,
    mut attempt: impl FnMut() -> F,
    retry: impl Fn(&E) -> bool,
) -> Result<Option<T>, E> {
    let mut backoff = Backoff::default();
    loop {
        match attempt().await {
            Ok(v) => return Ok(Some(v)),
            Err(e) if retry(&e) => tracing::warn!(error = %e, "{what}; retrying"),
            Err(e) => return Err(e),
        }
        tokio::select! {
            _ = backoff.wait() => {}
            _ = shutdown.wait() => return Ok(None),
        }
    }
}

impl crate::config::WorkerConfig {
    /// Worker settings for a stage over RabbitMQ and `store`.
    pub fn worker_settings(&self, store: Store, default_concurrency: usize) -> WorkerSettings {
        let concurrency = self.concurrency.unwrap_or(default_concurrency).max(1);
        WorkerSettings {
            broker: self.service.broker(),
            store,
            namespace: self.service.namespace.clone(),
            concurrency,
            prefetch: self
                .prefetch
                .unwrap_or_else(|| u16::try_from(concurrency).unwrap_or(u16::MAX)),
            metrics_addr: self.metrics_listen(),
        }
    }
}

/// The whole `main` of a worker binary after its settings and logs: connects
/// to Redis (waiting for it), settles the namespace's scale
/// ([`crate::scale::Scale::settle`]), builds the stage with the store and
/// the namespace's keys at that scale, and runs it over RabbitMQ until
/// SIGTERM/SIGINT.
pub async fn serve<S: Stage>(
    config: &crate::config::WorkerConfig,
    build: impl FnOnce(Store, Keys) -> S,
) -> anyhow::Result<()> {
    serve_with(config, build, |_, _, _| async {}).await
}

/// [`serve`], with a companion task that runs beside the worker until
/// shutdown (the frontier's releaser).
pub async fn serve_with<S: Stage, F>(
    config: &crate::config::WorkerConfig,
    build: impl FnOnce(Store, Keys) -> S,
    companion: impl FnOnce(Store, Broker, Shutdown) -> F,
) -> anyhow::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    serve_built(
        config,
        |store, keys| async move { Ok(Arc::new(build(store, keys))) },
        companion,
    )
    .await
}

/// [`serve`], the stage built by an async step that may fail (contentseen
/// opens its text segments).
pub async fn serve_async<S: Stage, B>(
    config: &crate::config::WorkerConfig,
    build: impl FnOnce(Store, Keys) -> B,
) -> anyhow::Result<()>
where
    B: Future<Output = anyhow::Result<Arc<S>>>,
{
    serve_built(config, build, |_, _, _| async {}).await
}

async fn serve_built<S: Stage, B, F>(
    config: &crate::config::WorkerConfig,
    build: impl FnOnce(Store, Keys) -> B,
    companion: impl FnOnce(Store, Broker, Shutdown) -> F,
) -> anyhow::Result<()>
where
    B: Future<Output = anyhow::Result<Arc<S>>>,
    F: Future<Output = ()> + Send + 'static,
{
    // (Logs were started with the settings: `config::start_worker`.)
    tracing::info!(stage = S::QUEUE.stage(), config = %config.redacted(), "starting");
    let shutdown = Shutdown::on_signals();
    let Some(store) = connect_store(&config.service.redis_config(), &shutdown).await else {
        return Ok(());
    };
    let settings = config.worker_settings(store.clone(), S::DEFAULT_CONCURRENCY);
    // A store error is waited out as the connection is: a worker started
    // while a cluster master fails over (its successor has no replica yet,
    // so a waiting store's writes there fail) starts once it is whole. A
    // stored scale that cannot be read is an error.
    let settle = || {
        crate::scale::Scale::settle(
            &store,
            Keys::new(&config.service.namespace),
            config.service.expected_pages,
        )
    };
    let store_error =
        |e: &crate::scale::ScaleError| matches!(e, crate::scale::ScaleError::Store(_));
    let Some(keys) = waited_out(
        &shutdown,
        "cannot settle the namespace's scale yet",
        settle,
        store_error,
    )
    .await?
    else {
        return Ok(());
    };
    let stage = build(store.clone(), keys).await?;
    let side = tokio::spawn(companion(
        store.clone(),
        settings.broker.clone(),
        shutdown.clone(),
    ));
    run(stage, settings, shutdown).await;
    let _ = side.await;
    Ok(())
}
