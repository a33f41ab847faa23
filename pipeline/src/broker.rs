//! The broker: publish with confirms, consume with explicit acks.
//!
//! [`Broker::Amqp`] is RabbitMQ through lapin: every publish waits for the
//! broker's confirm, messages are persistent, queues durable, and rejected
//! messages go to the stage's dead-letter queue ([`crate::topology`]).
//! [`Broker::Memory`] is the same contract over in-process queues, for
//! `crawler run`; it also knows exactly when the whole pipeline is idle.
//! Over a disk store (`crawler run --state`) the memory bus keeps every
//! message in the store from its publish to its ack, and a bus opened on
//! that store again hands them all out again ([`MemoryBus::persistent`]);
//! a worker then commits a message's store ops, its outputs and its ack as
//! one transaction ([`Delivery::commit_with`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicGetOptions, BasicPublishOptions, BasicQosOptions,
    BasicRejectOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions,
    QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Connection, ConnectionProperties, ExchangeKind};
use tokio::sync::Notify;

use crate::topology::{dead_letter_exchange, Queue, QueueType};

/// A broker operation failed; for RabbitMQ, usually a lost connection.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("rabbitmq at {url}: {source}")]
    Amqp {
        url: String,
        #[source]
        source: lapin::Error,
    },
    #[error("no RabbitMQ URL given (CRAWLER_AMQP_URL is empty)")]
    NoUrl,
    #[error("rabbitmq refused (nacked) a message published to {queue}")]
    Nacked { queue: String },
    #[error("a bundle published to {queue} was not confirmed: {reason}")]
    Unconfirmed { queue: String, reason: String },
    #[error("the in-process bus could not keep messages of {queue} in its store: {source}")]
    Store {
        queue: &'static str,
        #[source]
        source: crate::store::StoreError,
    },
}

/// Where messages go: RabbitMQ, or queues in this process.
#[derive(Clone)]
pub enum Broker {
    /// RabbitMQ: `url` is one `amqp://` URL or several, comma-separated
    /// (the nodes of a cluster, tried in turn).
    Amqp {
        url: String,
        namespace: String,
        queue_type: QueueType,
    },
    Memory(MemoryBus),
}

impl Broker {
    /// RabbitMQ at `url` (one URL, or a cluster's, comma-separated),
    /// classic queues.
    pub fn amqp(url: &str, namespace: &str) -> Broker {
        Broker::Amqp {
            url: url.to_string(),
            namespace: namespace.to_string(),
            queue_type: QueueType::default(),
        }
    }

    /// This broker declaring its queues of type `queue_type`.
    pub fn with_queue_type(self, queue_type: QueueType) -> Broker {
        match self {
            Broker::Amqp { url, namespace, .. } => Broker::Amqp {
                url,
                namespace,
                queue_type,
            },
            memory => memory,
        }
    }

    pub fn memory() -> Broker {
        Broker::Memory(MemoryBus::default())
    }

    /// Opens a session: for RabbitMQ a new connection with the topology
    /// declared (idempotently) and a confirming publish channel.
    pub async fn open(&self) -> Result<Session, BrokerError> {
        match self {
            Broker::Amqp {
                url,
                namespace,
                queue_type,
            } => Ok(Session::Amqp(
                AmqpSession::open(url, namespace, *queue_type).await?,
            )),
            Broker::Memory(bus) => Ok(Session::Memory(bus.clone())),
        }
    }

    /// [`Broker::open`], tried again after each failure (logged as
    /// `failed`, with the error) once `backoff` has waited; `None` when
    /// `shutdown` fires first.
    pub async fn open_until(
        &self,
        failed: &str,
        backoff: &mut crate::backoff::Backoff,
        shutdown: &crate::shutdown::Shutdown,
    ) -> Option<Session> {
        while !shutdown.is_triggered() {
            match self.open().await {
                Ok(session) => return Some(session),
                Err(e) => tracing::warn!(error = %e, "{failed}"),
            }
            tokio::select! {
                _ = backoff.wait() => {}
                _ = shutdown.wait() => break,
            }
        }
        None
    }
}

/// A live connection to the broker. When it is lost, operations fail and the
/// owner opens a new one.
#[derive(Clone)]
pub enum Session {
    Amqp(AmqpSession),
    Memory(MemoryBus),
}

/// The header that carries a dead letter's reason (and [`FAILED_AT_HEADER`]
/// its time, RFC 3339), set by the worker that gave up on it.
pub const REASON_HEADER: &str = "x-crawler-reason";
pub const FAILED_AT_HEADER: &str = "x-crawler-failed-at";
/// Reasons are cut to this many bytes on the message.
const MAX_REASON_BYTES: usize = 2000;

/// `reason`, cut to [`MAX_REASON_BYTES`] on a character boundary.
fn cut_reason(reason: &str) -> String {
    let mut cut = reason.len().min(MAX_REASON_BYTES);
    while !reason.is_char_boundary(cut) {
        cut -= 1;
    }
    reason[..cut].to_string()
}

/// A message in a stage's dead-letter queue.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeadLetter {
    /// The stage that gave up on it (`frontier`, `fetch`, `extract`,
    /// `contentseen`).
    pub stage: &'static str,
    /// Why, as the worker said; `None` for a message dead-lettered before
    /// reasons were recorded (or by the broker itself).
    pub reason: Option<String>,
    pub failed_at: Option<String>,
    pub bytes: usize,
    #[serde(skip)]
    pub payload: Vec<u8>,
}

/// One queue's state as the broker reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueueDepth {
    pub queue: String,
    /// Messages waiting to be delivered.
    pub ready: u64,
    /// Consumers attached (RabbitMQ; the memory bus says 0).
    pub consumers: u64,
}

impl Session {
    /// Publishes `payloads` to `queue`; returns once every one is confirmed.
    pub async fn publish(&self, queue: Queue, payloads: &[Vec<u8>]) -> Result<(), BrokerError> {
        match self {
            Session::Amqp(s) => s.publish_bundled(&queue.name(&s.namespace), payloads).await,
            Session::Memory(bus) => bus.publish(queue, payloads.iter().cloned()),
        }
    }

    /// Starts consuming `queue`, at most `prefetch` unacknowledged at once.
    pub async fn consume(&self, queue: Queue, prefetch: u16) -> Result<Consumer, BrokerError> {
        match self {
            Session::Amqp(s) => s.consume(queue, prefetch).await,
            Session::Memory(bus) => Ok(Consumer::Memory {
                bus: bus.clone(),
                queue,
            }),
        }
    }

    /// Sends one message of a bundle (taken from `queue`) to the stage's
    /// dead-letter queue with `reason` on it, confirmed; the bundle itself
    /// is acked by the caller once the rest of it is done.
    pub async fn dead_letter_message(
        &self,
        queue: Queue,
        payload: &[u8],
        reason: &str,
    ) -> Result<(), BrokerError> {
        let reason = cut_reason(reason);
        match self {
            Session::Amqp(s) => {
                s.publish_dead(&queue.dead_letter_name(&s.namespace), payload, &reason)
                    .await
            }
            Session::Memory(bus) => {
                bus.bury(queue, payload.to_vec(), Some(reason));
                Ok(())
            }
        }
    }

    /// Sends `delivery` (taken from `queue`) to the stage's dead-letter
    /// queue with `reason` on it ([`REASON_HEADER`]), confirmed, then acks
    /// it. When that publish fails the message is rejected instead (the
    /// broker dead-letters it without a reason) and the error returned.
    pub async fn dead_letter(
        &self,
        queue: Queue,
        delivery: Delivery,
        reason: &str,
    ) -> Result<(), BrokerError> {
        let reason = cut_reason(reason);
        match (self, delivery.acker) {
            (Session::Amqp(s), acker) => {
                let published = s
                    .publish_dead(
                        &queue.dead_letter_name(&s.namespace),
                        &delivery.data,
                        &reason,
                    )
                    .await;
                let rejected = Delivery {
                    data: Vec::new(),
                    redelivered: delivery.redelivered,
                    acker,
                };
                match published {
                    Ok(()) => rejected.ack().await.map_err(|e| s.err(e)),
                    Err(e) => {
                        let _ = rejected.dead_letter().await;
                        Err(e)
                    }
                }
            }
            (Session::Memory(_), Acker::Memory { bus, queue, id }) => {
                bus.dead_letter(queue, id, delivery.data, Some(reason));
                Ok(())
            }
            (Session::Memory(bus), Acker::Amqp(_)) => {
                bus.bury(queue, delivery.data, Some(reason));
                Ok(())
            }
        }
    }

    /// The dead letters of `queue`, oldest first. Without `replay` they stay
    /// where they are; with it, each is published back to the stage's work
    /// queue (confirmed) and only then removed from the dead-letter queue.
    pub async fn dead_letters(
        &self,
        queue: Queue,
        replay: bool,
    ) -> Result<Vec<DeadLetter>, BrokerError> {
        match self {
            Session::Amqp(s) => s.dead_letters(queue, replay).await,
            Session::Memory(bus) => {
                let letters = bus.take_dead(queue, replay);
                if replay {
                    bus.publish(queue, letters.iter().map(|d| d.payload.clone()))?;
                }
                Ok(letters)
            }
        }
    }

    /// Messages of `queue` waiting to be handed out (not those delivered and
    /// not yet acked): one passive declare on RabbitMQ, a length in memory.
    pub async fn ready(&self, queue: Queue) -> Result<u64, BrokerError> {
        match self {
            Session::Amqp(s) => s.ready(&queue.name(&s.namespace)).await,
            Session::Memory(bus) => Ok(bus.ready(queue)),
        }
    }

    /// The depth of every work and dead-letter queue.
    pub async fn queue_depths(&self) -> Result<Vec<QueueDepth>, BrokerError> {
        match self {
            Session::Amqp(s) => s.queue_depths().await,
            Session::Memory(bus) => Ok(bus.depths()),
        }
    }

    /// Deletes every queue and the dead-letter exchange of the namespace
    /// (tests, and resetting a crawl). Messages in them are lost.
    pub async fn delete_topology(&self) -> Result<(), BrokerError> {
        match self {
            Session::Amqp(s) => s.delete_topology().await,
            Session::Memory(_) => Ok(()),
        }
    }

    pub fn is_connected(&self) -> bool {
        match self {
            Session::Amqp(s) => s.conn.status().connected(),
            Session::Memory(_) => true,
        }
    }
}

/// A RabbitMQ connection with its confirming publish channel.
#[derive(Clone)]
pub struct AmqpSession {
    /// For error messages, without password.
    url: String,
    namespace: String,
    conn: Arc<Connection>,
    publisher: lapin::Channel,
    /// Messages waiting to be bundled, and who waits for their confirms.
    outbox: Arc<Mutex<Outbox>>,
}

/// How long the first message published into an empty outbox waits for
/// others to share its bundle ([`crate::bundle`]). A delivery's outputs
/// arrive together anyway; this gathers those of concurrent deliveries.
pub const LINGER: std::time::Duration = std::time::Duration::from_millis(4);

/// Messages waiting for the next flush of a session's publisher.
#[derive(Default)]
struct Outbox {
    /// Per queue name, the messages in the order they were published.
    queues: Vec<(String, Vec<Vec<u8>>)>,
    messages: usize,
    /// Whoever published them, told the flush's result.
    waiters: Vec<tokio::sync::oneshot::Sender<Result<(), String>>>,
    /// A flush task runs (it takes whatever is here when it wakes).
    flushing: bool,
}

impl AmqpSession {
    /// A session on the first of `urls` (comma-separated) that accepts
    /// one. Each open starts one node further along the list than the
    /// last, so the workers of one process spread over a cluster's nodes,
    /// and a worker whose node died reconnects to the next.
    async fn open(urls: &str, namespace: &str, queue_type: QueueType) -> Result<Self, BrokerError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let urls = crate::config::url_list(urls);
        let first = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut last = None;
        for i in 0..urls.len() {
            let url = &urls[(first + i) % urls.len()];
            match AmqpSession::open_one(url, namespace, queue_type).await {
                Ok(session) => return Ok(session),
                Err(e) => {
                    if urls.len() > 1 {
                        tracing::warn!(error = %e, "rabbitmq node refused a session; trying the next");
                    }
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| BrokerError::NoUrl))
    }

    async fn open_one(
        url: &str,
        namespace: &str,
        queue_type: QueueType,
    ) -> Result<Self, BrokerError> {
        let shown = crate::config::redact_url(url);
        let err = |source| BrokerError::Amqp {
            url: shown.clone(),
            source,
        };
        let props = ConnectionProperties::default()
            .with_connection_name(format!("crawler-{}", std::process::id()).into());
        let conn = Connection::connect(url, props).await.map_err(err)?;
        let publisher = conn.create_channel().await.map_err(err)?;
        publisher
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(err)?;
        declare_topology(&publisher, namespace, queue_type)
            .await
            .map_err(err)?;
        Ok(AmqpSession {
            url: shown,
            namespace: namespace.to_string(),
            conn: Arc::new(conn),
            publisher,
            outbox: Arc::default(),
        })
    }

    fn err(&self, source: lapin::Error) -> BrokerError {
        BrokerError::Amqp {
            url: self.url.clone(),
            source,
        }
    }

    /// Publishes `payloads` to `queue` in bundles with what other tasks
    /// publish on this session within [`LINGER`]; returns once the bundles
    /// that carry them are confirmed (or with the error that failed them).
    async fn publish_bundled(&self, queue: &str, payloads: &[Vec<u8>]) -> Result<(), BrokerError> {
        if payloads.is_empty() {
            return Ok(());
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let start = {
            let mut outbox = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
            match outbox.queues.iter_mut().find(|(q, _)| q == queue) {
                Some((_, msgs)) => msgs.extend(payloads.iter().cloned()),
                None => outbox.queues.push((queue.to_string(), payloads.to_vec())),
            }
            outbox.messages += payloads.len();
            outbox.waiters.push(tx);
            !std::mem::replace(&mut outbox.flushing, true)
        };
        if start {
            let me = self.clone();
            tokio::spawn(async move { me.flush_outbox().await });
        }
        match rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(reason)) => Err(BrokerError::Unconfirmed {
                queue: queue.to_string(),
                reason,
            }),
            Err(_) => Err(BrokerError::Unconfirmed {
                queue: queue.to_string(),
                reason: "the publishing task ended".into(),
            }),
        }
    }

    /// Flushes the outbox until it is empty: waits up to [`LINGER`] (less
    /// when a bundle is full already), publishes everything in it as
    /// bundles, tells its publishers, and goes on while more came in.
    async fn flush_outbox(&self) {
        let mut linger = true;
        loop {
            if linger {
                let deadline = tokio::time::Instant::now() + LINGER;
                while tokio::time::Instant::now() < deadline {
                    let full = self
                        .outbox
                        .lock()
                        .map_or(true, |o| o.messages >= crate::bundle::MAX_ITEMS);
                    if full {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                }
            }
            let (queues, waiters) = {
                let mut outbox = self.outbox.lock().unwrap_or_else(|p| p.into_inner());
                if outbox.waiters.is_empty() {
                    outbox.flushing = false;
                    return;
                }
                outbox.messages = 0;
                (
                    std::mem::take(&mut outbox.queues),
                    std::mem::take(&mut outbox.waiters),
                )
            };
            let mut result = Ok(());
            for (queue, messages) in &queues {
                if let Err(e) = self.publish(queue, &crate::bundle::pack(messages)).await {
                    result = Err(crate::config::error_chain(&e));
                    break;
                }
            }
            for w in waiters {
                let _ = w.send(result.clone());
            }
            // What came in during the publish goes at once: it waited already.
            linger = false;
        }
    }

    async fn publish(&self, queue: &str, payloads: &[Vec<u8>]) -> Result<(), BrokerError> {
        // Publish the whole window first, then wait for the confirms: one
        // round trip per batch, not per message (waiting for each confirm
        // in turn costs a broker round trip per message).
        let mut confirms = Vec::with_capacity(payloads.len());
        for payload in payloads {
            let confirm = self
                .publisher
                .basic_publish(
                    "".into(),
                    queue.into(),
                    BasicPublishOptions::default(),
                    payload,
                    BasicProperties::default().with_delivery_mode(2),
                )
                .await
                .map_err(|e| self.err(e))?;
            confirms.push(confirm);
        }
        for confirm in confirms {
            let confirmation = confirm.await.map_err(|e| self.err(e))?;
            if confirmation.is_nack() {
                return Err(BrokerError::Nacked {
                    queue: queue.to_string(),
                });
            }
        }
        Ok(())
    }

    async fn publish_dead(
        &self,
        dead: &str,
        payload: &[u8],
        reason: &str,
    ) -> Result<(), BrokerError> {
        let mut headers = FieldTable::default();
        headers.insert(REASON_HEADER.into(), AMQPValue::LongString(reason.into()));
        headers.insert(
            FAILED_AT_HEADER.into(),
            AMQPValue::LongString(crate::messages::now_rfc3339().as_str().into()),
        );
        let confirm = self
            .publisher
            .basic_publish(
                "".into(),
                dead.into(),
                BasicPublishOptions::default(),
                payload,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_headers(headers),
            )
            .await
            .map_err(|e| self.err(e))?;
        if confirm.await.map_err(|e| self.err(e))?.is_nack() {
            return Err(BrokerError::Nacked {
                queue: dead.to_string(),
            });
        }
        Ok(())
    }

    async fn dead_letters(
        &self,
        queue: Queue,
        replay: bool,
    ) -> Result<Vec<DeadLetter>, BrokerError> {
        // Taken unacked on a channel of our own: a message held there is not
        // handed out again, so the loop ends; closing the channel puts back
        // whatever was not replayed.
        let channel = self.conn.create_channel().await.map_err(|e| self.err(e))?;
        let dead = queue.dead_letter_name(&self.namespace);
        let header = |props: &BasicProperties, name: &str| -> Option<String> {
            match props.headers().as_ref()?.inner().get(name)? {
                AMQPValue::LongString(s) => {
                    Some(String::from_utf8_lossy(s.as_bytes()).into_owned())
                }
                AMQPValue::ShortString(s) => Some(s.as_str().to_string()),
                _ => None,
            }
        };
        let mut out = Vec::new();
        while let Some(msg) = channel
            .basic_get(dead.as_str().into(), BasicGetOptions { no_ack: false })
            .await
            .map_err(|e| self.err(e))?
        {
            let delivery = msg.delivery;
            let letter = DeadLetter {
                stage: queue.stage(),
                reason: header(&delivery.properties, REASON_HEADER),
                failed_at: header(&delivery.properties, FAILED_AT_HEADER),
                bytes: delivery.data.len(),
                payload: delivery.data.clone(),
            };
            if replay {
                self.publish(
                    &queue.name(&self.namespace),
                    std::slice::from_ref(&letter.payload),
                )
                .await?;
                delivery
                    .acker
                    .ack(BasicAckOptions::default())
                    .await
                    .map_err(|e| self.err(e))?;
            }
            out.push(letter);
        }
        let _ = channel.close(200, "listed".into()).await;
        Ok(out)
    }

    async fn consume(&self, queue: Queue, prefetch: u16) -> Result<Consumer, BrokerError> {
        let channel = self.conn.create_channel().await.map_err(|e| self.err(e))?;
        channel
            .basic_qos(prefetch, BasicQosOptions::default())
            .await
            .map_err(|e| self.err(e))?;
        let tag = format!("{}-{}", queue.stage(), crate::messages::new_id());
        let consumer = channel
            .basic_consume(
                queue.name(&self.namespace).into(),
                tag.into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| self.err(e))?;
        Ok(Consumer::Amqp {
            consumer: Box::new(consumer),
            _channel: channel,
            url: self.url.clone(),
        })
    }

    async fn delete_topology(&self) -> Result<(), BrokerError> {
        for q in Queue::ALL {
            for name in [q.name(&self.namespace), q.dead_letter_name(&self.namespace)] {
                self.publisher
                    .queue_delete(
                        name.as_str().into(),
                        lapin::options::QueueDeleteOptions::default(),
                    )
                    .await
                    .map_err(|e| self.err(e))?;
            }
        }
        self.publisher
            .exchange_delete(
                dead_letter_exchange(&self.namespace).as_str().into(),
                lapin::options::ExchangeDeleteOptions::default(),
            )
            .await
            .map_err(|e| self.err(e))
    }

    /// A queue's counts by a passive declare (reads them, creates nothing).
    async fn counts(&self, name: &str) -> Result<lapin::Queue, BrokerError> {
        self.publisher
            .queue_declare(
                name.into(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(|e| self.err(e))
    }

    async fn ready(&self, name: &str) -> Result<u64, BrokerError> {
        Ok(self.counts(name).await?.message_count() as u64)
    }

    async fn queue_depths(&self) -> Result<Vec<QueueDepth>, BrokerError> {
        let mut out = Vec::new();
        for q in Queue::ALL {
            for name in [q.name(&self.namespace), q.dead_letter_name(&self.namespace)] {
                let info = self.counts(&name).await?;
                out.push(QueueDepth {
                    queue: name,
                    ready: info.message_count() as u64,
                    consumers: info.consumer_count() as u64,
                });
            }
        }
        Ok(out)
    }
}

/// Declares the dead-letter exchange, and for every stage its dead-letter
/// queue and its durable work queue. Safe to repeat.
async fn declare_topology(
    ch: &lapin::Channel,
    ns: &str,
    queue_type: QueueType,
) -> Result<(), lapin::Error> {
    // Classic queues are declared without the argument, as they always
    // were: a namespace declared before the setting existed stays valid.
    let typed = |mut args: FieldTable| {
        if queue_type != QueueType::Classic {
            args.insert(
                "x-queue-type".into(),
                AMQPValue::LongString(queue_type.name().into()),
            );
        }
        args
    };
    let dlx = dead_letter_exchange(ns);
    ch.exchange_declare(
        dlx.as_str().into(),
        ExchangeKind::Direct,
        ExchangeDeclareOptions {
            durable: true,
            ..ExchangeDeclareOptions::default()
        },
        FieldTable::default(),
    )
    .await?;
    for q in Queue::ALL {
        let dead = q.dead_letter_name(ns);
        ch.queue_declare(
            dead.as_str().into(),
            QueueDeclareOptions::durable(),
            typed(FieldTable::default()),
        )
        .await?;
        ch.queue_bind(
            dead.as_str().into(),
            dlx.as_str().into(),
            dead.as_str().into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
        let mut args = FieldTable::default();
        args.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString(dlx.as_str().into()),
        );
        args.insert(
            "x-dead-letter-routing-key".into(),
            AMQPValue::LongString(dead.as_str().into()),
        );
        ch.queue_declare(
            q.name(ns).as_str().into(),
            QueueDeclareOptions::durable(),
            typed(args),
        )
        .await?;
    }
    Ok(())
}

/// A stream of deliveries from one queue.
pub enum Consumer {
    Amqp {
        consumer: Box<lapin::Consumer>,
        /// Keeps the consuming channel open.
        _channel: lapin::Channel,
        url: String,
    },
    Memory {
        bus: MemoryBus,
        queue: Queue,
    },
}

impl Consumer {
    /// The next delivery; `None` when the consumer was cancelled or the
    /// connection closed (the caller reconnects).
    pub async fn next(&mut self) -> Option<Result<Delivery, BrokerError>> {
        match self {
            Consumer::Amqp { consumer, url, .. } => {
                let item = consumer.next().await?;
                Some(
                    item.map(|d| Delivery {
                        data: d.data,
                        redelivered: d.redelivered,
                        acker: Acker::Amqp(d.acker),
                    })
                    .map_err(|source| BrokerError::Amqp {
                        url: url.clone(),
                        source,
                    }),
                )
            }
            Consumer::Memory { bus, queue } => {
                let (id, data) = bus.pop(*queue).await;
                Some(Ok(Delivery {
                    data,
                    redelivered: false,
                    acker: Acker::Memory {
                        bus: bus.clone(),
                        queue: *queue,
                        id,
                    },
                }))
            }
        }
    }
}

/// One message handed to a worker; it must end in exactly one of `ack`,
/// `dead_letter` or `requeue` (dropping it unacked leaves it to the broker to
/// redeliver after the connection closes).
pub struct Delivery {
    pub data: Vec<u8>,
    /// The broker delivered this message before (a worker died or gave it back).
    pub redelivered: bool,
    acker: Acker,
}

enum Acker {
    Amqp(lapin::Acker),
    Memory {
        bus: MemoryBus,
        queue: Queue,
        /// The message's number on the bus (its entry in a persistent
        /// bus's store).
        id: u64,
    },
}

impl Delivery {
    /// Done: everything it produced is confirmed.
    pub async fn ack(self) -> Result<(), lapin::Error> {
        match self.acker {
            Acker::Amqp(a) => a.ack(BasicAckOptions::default()).await.map(|_| ()),
            Acker::Memory { bus, queue, id } => {
                bus.finish(queue, id);
                Ok(())
            }
        }
    }

    /// `ops`, the messages `outputs` and this delivery's ack in one store transaction,
    /// where the bus keeps its messages in `store` itself (a persistent in-process bus:
    /// `crawler run --state`). One commit instead of one per step, and no window
    /// between them for a kill to fall in. [`Committed::Elsewhere`] gives the delivery
    /// and `ops` back when the bus is not such, for the usual steps: store, publish, ack.
    pub async fn commit_with(
        self,
        store: &crate::store::Store,
        ops: Vec<crate::store::Op>,
        outputs: &std::collections::BTreeMap<Queue, Vec<Vec<u8>>>,
    ) -> Committed {
        let (bus, queue, id) = match &self.acker {
            Acker::Memory { bus, queue, id } if bus.keeps_in(store) => (bus.clone(), *queue, *id),
            _ => return Committed::Elsewhere(self, ops),
        };
        match bus.commit(store, ops, outputs, queue, id).await {
            Ok(()) => Committed::Done,
            Err(e) => Committed::Failed(self, e),
        }
    }

    /// Unprocessable: to the stage's dead-letter queue.
    pub async fn dead_letter(self) -> Result<(), lapin::Error> {
        self.reject(false).await
    }

    /// Not now: back to the queue for another try.
    pub async fn requeue(self) -> Result<(), lapin::Error> {
        self.reject(true).await
    }

    /// Rejected: back to the queue when `requeue`, else to the dead-letter
    /// queue.
    async fn reject(self, requeue: bool) -> Result<(), lapin::Error> {
        match self.acker {
            Acker::Amqp(a) => a.reject(BasicRejectOptions { requeue }).await.map(|_| ()),
            Acker::Memory { bus, queue, id } => {
                if requeue {
                    bus.requeue(queue, id, self.data);
                } else {
                    bus.dead_letter(queue, id, self.data, None);
                }
                Ok(())
            }
        }
    }
}

/// What [`Delivery::commit_with`] did.
pub enum Committed {
    /// The store ops, the outputs and the ack are committed.
    Done,
    /// The transaction failed: nothing of it is committed.
    Failed(Delivery, crate::store::StoreError),
    /// The bus does not keep its messages in that store: nothing done.
    Elsewhere(Delivery, Vec<crate::store::Op>),
}

/// Messages of a persistent bus's queue kept in memory with their payload; a message
/// published past them waits by its number alone, its payload read back from the store
/// when it is handed out. So a backlog (a million outlink batches waiting for the
/// frontier) takes 16 bytes a message of memory, not its size.
pub const MEMORY_BUS_WINDOW: usize = 1_000;

/// The queue whose backlog holds back the consumers of `queue` on a bus that holds back
/// ([`MemoryBus::hold_back`]): the fetcher, cheap per page, would otherwise run ahead of
/// the extractor, which costs most of a page's CPU, and pile pages up between them (a
/// 100,000-page `crawler run --state` had 30,000 pages, hundreds of MB, waiting for the
/// extractor).
fn held_back_by(queue: Queue) -> Option<Queue> {
    match queue {
        Queue::Fetch => Some(Queue::Extract),
        _ => None,
    }
}

/// The messages waiting in one queue of the memory bus, in order: each with its number and
/// its payload, or (spilled: a persistent bus past [`MEMORY_BUS_WINDOW`]) without it.
#[derive(Default)]
struct Waiting {
    items: VecDeque<(u64, Option<Vec<u8>>)>,
    /// How many of `items` hold their payload.
    held: usize,
}

impl Waiting {
    /// Appends a message; with `spill`, without its payload once the window is full.
    fn push(&mut self, id: u64, payload: Vec<u8>, spill: bool) {
        if spill && self.held >= MEMORY_BUS_WINDOW {
            self.items.push_back((id, None));
        } else {
            self.held += 1;
            self.items.push_back((id, Some(payload)));
        }
    }

    fn pop(&mut self) -> Option<(u64, Option<Vec<u8>>)> {
        let item = self.items.pop_front()?;
        self.held -= usize::from(item.1.is_some());
        Some(item)
    }
}

/// A dead letter of the memory bus: its queue, payload and reason.
type MemoryDeadLetter = (Queue, Vec<u8>, Option<String>);

/// In-process queues with the broker's contract, and an exact count of
/// messages not yet finished (queued or in flight): the pipeline is idle when
/// it is zero, because a stage publishes its outputs before it acks.
#[derive(Clone, Default)]
pub struct MemoryBus {
    inner: Arc<MemoryInner>,
}

#[derive(Default)]
struct MemoryInner {
    /// Per queue, the messages waiting, with their numbers.
    queues: Mutex<HashMap<Queue, Waiting>>,
    dead: Mutex<Vec<MemoryDeadLetter>>,
    /// Wakes consumers when a message arrives.
    arrived: Notify,
    /// Messages published and not yet acked or dead-lettered.
    unfinished: AtomicI64,
    /// Wakes `wait_idle` when `unfinished` drops.
    finished: Notify,
    /// The number of the next message published.
    next_id: std::sync::atomic::AtomicU64,
    /// Where a persistent bus keeps its unfinished messages.
    disk: Option<crate::store::DiskStore>,
    /// With a limit (not 0), a consumer of a queue [`held_back_by`] another waits while that
    /// other has this many messages waiting ([`MemoryBus::hold_back`]).
    hold_back: std::sync::atomic::AtomicUsize,
    /// Wakes the consumers held back when a message is handed out.
    taken: Notify,
}

/// The hash of a persistent bus's unfinished messages of `queue` (field:
/// the message's number, 16 hex digits, so fields sort as published).
fn bus_key(queue: Queue) -> String {
    format!("{}{}", crate::store::BUS_KEY_PREFIX, queue.stage())
}

/// The hash of a persistent bus's dead letters of `queue`.
fn dead_key(queue: Queue) -> String {
    format!("{}.dead", bus_key(queue))
}

/// Messages with their numbers on the bus.
type Numbered = Vec<(u64, Vec<u8>)>;

fn field(id: u64) -> String {
    format!("{id:016x}")
}

impl MemoryBus {
    /// A bus that keeps each message in `store` from its publish (one
    /// transaction for the messages of one publish) to its ack (or dead
    /// letter), and starts with every message `store` kept: those waiting
    /// and those in flight when the last process died, in the order they
    /// were published. A message acked by a stage that was killed before
    /// the ack was committed is handed out again (at least once, as with
    /// RabbitMQ).
    pub fn persistent(store: crate::store::DiskStore) -> Result<MemoryBus, BrokerError> {
        use crate::store::Op;
        let inner = MemoryInner {
            disk: Some(store.clone()),
            ..MemoryInner::default()
        };
        let mut last = 0u64;
        {
            let mut queues = inner.queues.lock().unwrap_or_else(|p| p.into_inner());
            let mut dead = inner.dead.lock().unwrap_or_else(|p| p.into_inner());
            for q in Queue::ALL {
                let err = |source| BrokerError::Store {
                    queue: q.stage(),
                    source,
                };
                let replies = store
                    .exec(&[
                        Op::HGetAll { key: bus_key(q) },
                        Op::HGetAll { key: dead_key(q) },
                    ])
                    .map_err(err)?;
                let mut kept: Vec<(u64, Vec<u8>)> = Vec::new();
                for (f, v) in replies[0].pairs().map_err(err)? {
                    let id = u64::from_str_radix(&String::from_utf8_lossy(&f), 16).unwrap_or(0);
                    last = last.max(id);
                    kept.push((id, v.data().map_err(err)?.unwrap_or_default()));
                }
                kept.sort_by_key(|(id, _)| *id);
                inner
                    .unfinished
                    .fetch_add(kept.len() as i64, Ordering::SeqCst);
                let waiting = queues.entry(q).or_default();
                for (id, payload) in kept {
                    waiting.push(id, payload, true);
                }
                for (f, v) in replies[1].pairs().map_err(err)? {
                    let id = u64::from_str_radix(&String::from_utf8_lossy(&f), 16).unwrap_or(0);
                    last = last.max(id);
                    dead.push((q, v.data().map_err(err)?.unwrap_or_default(), None));
                }
            }
        }
        inner.next_id.store(last + 1, Ordering::SeqCst);
        Ok(MemoryBus {
            inner: Arc::new(inner),
        })
    }

    /// From now on, a consumer of the fetch queue waits while `limit` pages wait for the
    /// extractor (`held_back_by`): the pages in flight between them, in memory or in the
    /// state, stay bounded, and the extractor still never waits for work. For a bus whose
    /// stages all run (`crawler run`): a test that consumes no pages would wait forever.
    pub fn hold_back(&self, limit: usize) {
        self.inner.hold_back.store(limit, Ordering::SeqCst);
    }

    /// Whether a consumer of `queue` must wait now ([`MemoryBus::hold_back`]).
    fn held_back(&self, queue: Queue, queues: &HashMap<Queue, Waiting>) -> bool {
        let limit = self.inner.hold_back.load(Ordering::SeqCst);
        match held_back_by(queue) {
            Some(next) if limit > 0 => queues.get(&next).is_some_and(|w| w.items.len() >= limit),
            _ => false,
        }
    }

    /// Runs `ops` on the bus's store, if it has one; a failure is logged
    /// (the message stays kept and comes back after a restart).
    fn keep(&self, ops: &[crate::store::Op]) {
        if let Some(disk) = &self.inner.disk {
            if let Err(e) = disk.exec(ops) {
                tracing::warn!(error = %e, "the in-process bus could not update its store");
            }
        }
    }

    fn publish(
        &self,
        queue: Queue,
        payloads: impl Iterator<Item = Vec<u8>>,
    ) -> Result<(), BrokerError> {
        let numbered = self.number(payloads);
        if let Some(disk) = &self.inner.disk {
            disk.exec(&[Self::keep_op(queue, &numbered)])
                .map_err(|source| BrokerError::Store {
                    queue: queue.stage(),
                    source,
                })?;
        }
        self.enqueue(queue, numbered);
        Ok(())
    }

    /// `payloads` with their numbers on the bus.
    fn number(&self, payloads: impl Iterator<Item = Vec<u8>>) -> Numbered {
        payloads
            .map(|p| (self.inner.next_id.fetch_add(1, Ordering::SeqCst), p))
            .collect()
    }

    /// The op that keeps `numbered` messages of `queue` in the store.
    fn keep_op(queue: Queue, numbered: &[(u64, Vec<u8>)]) -> crate::store::Op {
        crate::store::Op::HSet {
            key: bus_key(queue),
            fields: numbered
                .iter()
                .map(|(id, p)| (field(*id), p.clone()))
                .collect(),
        }
    }

    /// Hands out `numbered` messages of `queue` (kept in the store already, if the bus
    /// keeps them).
    fn enqueue(&self, queue: Queue, numbered: Numbered) {
        let spill = self.inner.disk.is_some();
        let mut queues = self.inner.queues.lock().unwrap_or_else(|p| p.into_inner());
        let q = queues.entry(queue).or_default();
        for (id, payload) in numbered {
            self.inner.unfinished.fetch_add(1, Ordering::SeqCst);
            q.push(id, payload, spill);
        }
        drop(queues);
        self.inner.arrived.notify_waiters();
    }

    /// Whether this bus keeps its messages in `store` itself.
    fn keeps_in(&self, store: &crate::store::Store) -> bool {
        match (&self.inner.disk, store) {
            (Some(mine), crate::store::Store::Disk(theirs)) => mine.same_as(theirs),
            _ => false,
        }
    }

    /// [`Delivery::commit_with`] on this bus: `ops`, the outputs kept and message `id`
    /// of `queue` finished, in one transaction of the store; then the outputs handed
    /// out.
    async fn commit(
        &self,
        store: &crate::store::Store,
        mut ops: Vec<crate::store::Op>,
        outputs: &std::collections::BTreeMap<Queue, Vec<Vec<u8>>>,
        queue: Queue,
        id: u64,
    ) -> Result<(), crate::store::StoreError> {
        let numbered: Vec<(Queue, Numbered)> = outputs
            .iter()
            .map(|(q, payloads)| (*q, self.number(payloads.iter().cloned())))
            .collect();
        ops.extend(numbered.iter().map(|(q, n)| Self::keep_op(*q, n)));
        ops.push(Self::finish_op(queue, id));
        store.exec(&ops).await?;
        for (q, n) in numbered {
            self.enqueue(q, n);
        }
        self.finished();
        Ok(())
    }

    async fn pop(&self, queue: Queue) -> (u64, Vec<u8>) {
        loop {
            let notified = self.inner.arrived.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let taken = self.inner.taken.notified();
            tokio::pin!(taken);
            if held_back_by(queue).is_some() {
                taken.as_mut().enable();
            }
            let popped = {
                let mut queues = self.inner.queues.lock().unwrap_or_else(|p| p.into_inner());
                if self.held_back(queue, &queues) {
                    Err(())
                } else {
                    Ok(queues.get_mut(&queue).and_then(Waiting::pop))
                }
            };
            let Ok(popped) = popped else {
                taken.await;
                continue;
            };
            if popped.is_some()
                && self.inner.hold_back.load(Ordering::SeqCst) > 0
                && Queue::ALL.iter().any(|q| held_back_by(*q) == Some(queue))
            {
                self.inner.taken.notify_waiters();
            }
            match popped {
                Some((id, Some(payload))) => return (id, payload),
                Some((id, None)) => match self.read_back(queue, id) {
                    Ok(payload) => return (id, payload),
                    // Kept from its publish to its ack, so only a failing store loses it:
                    // a dead letter that says so, and the crawl goes on.
                    Err(reason) => {
                        tracing::error!(queue = queue.stage(), id, %reason, "a spilled message could not be read back");
                        self.dead_letter(queue, id, Vec::new(), Some(reason));
                        continue;
                    }
                },
                None => {}
            }
            notified.await;
        }
    }

    /// The payload of spilled message `id` of `queue`, from the store.
    fn read_back(&self, queue: Queue, id: u64) -> Result<Vec<u8>, String> {
        let disk = self.inner.disk.as_ref().ok_or("no store to read it from")?;
        let replies = disk
            .exec(&[crate::store::Op::HGet {
                key: bus_key(queue),
                field: field(id),
            }])
            .map_err(|e| format!("reading it from the state: {e}"))?;
        match replies.first().map(|r| r.data()) {
            Some(Ok(Some(payload))) => Ok(payload),
            Some(Err(e)) => Err(format!("reading it from the state: {e}")),
            _ => Err("the state no longer holds it".into()),
        }
    }

    fn finish(&self, queue: Queue, id: u64) {
        self.keep(&[Self::finish_op(queue, id)]);
        self.finished();
    }

    /// The op that drops finished message `id` of `queue` from the store.
    fn finish_op(queue: Queue, id: u64) -> crate::store::Op {
        crate::store::Op::HDel {
            key: bus_key(queue),
            field: field(id),
        }
    }

    /// One message fewer unfinished.
    fn finished(&self) {
        self.inner.unfinished.fetch_sub(1, Ordering::SeqCst);
        self.inner.finished.notify_waiters();
    }

    fn dead_letter(&self, queue: Queue, id: u64, data: Vec<u8>, reason: Option<String>) {
        self.keep(&[
            crate::store::Op::HSet {
                key: dead_key(queue),
                fields: vec![(field(id), data.clone())],
            },
            crate::store::Op::HDel {
                key: bus_key(queue),
                field: field(id),
            },
        ]);
        self.inner
            .dead
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((queue, data, reason));
        self.inner.unfinished.fetch_sub(1, Ordering::SeqCst);
        self.inner.finished.notify_waiters();
    }

    /// Into the dead letters, without finishing a delivery (one message of
    /// a bundle whose delivery goes on).
    fn bury(&self, queue: Queue, data: Vec<u8>, reason: Option<String>) {
        let id = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        self.keep(&[crate::store::Op::HSet {
            key: dead_key(queue),
            fields: vec![(field(id), data.clone())],
        }]);
        self.inner
            .dead
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((queue, data, reason));
    }

    /// The dead letters of `queue`; with `take`, removed from the list.
    fn take_dead(&self, queue: Queue, take: bool) -> Vec<DeadLetter> {
        let mut dead = self.inner.dead.lock().unwrap_or_else(|p| p.into_inner());
        let letters = dead
            .iter()
            .filter(|(q, _, _)| *q == queue)
            .map(|(q, data, reason)| DeadLetter {
                stage: q.stage(),
                reason: reason.clone(),
                failed_at: None,
                bytes: data.len(),
                payload: data.clone(),
            })
            .collect();
        if take {
            dead.retain(|(q, _, _)| *q != queue);
            self.keep(&[crate::store::Op::Del {
                key: dead_key(queue),
            }]);
        }
        letters
    }

    fn requeue(&self, queue: Queue, id: u64, data: Vec<u8>) {
        // Still unfinished (and still kept): it goes back to the queue.
        let spill = self.inner.disk.is_some();
        let mut queues = self.inner.queues.lock().unwrap_or_else(|p| p.into_inner());
        queues.entry(queue).or_default().push(id, data, spill);
        drop(queues);
        self.inner.arrived.notify_waiters();
    }

    /// Messages published and not yet finished.
    pub fn unfinished(&self) -> i64 {
        self.inner.unfinished.load(Ordering::SeqCst)
    }

    /// Messages rejected as unprocessable, with their queue and reason.
    pub fn dead_letters(&self) -> Vec<DeadLetter> {
        Queue::ALL
            .iter()
            .flat_map(|q| self.take_dead(*q, false))
            .collect()
    }

    /// Returns once every published message has been acked or dead-lettered.
    pub async fn wait_idle(&self) {
        loop {
            let notified = self.inner.finished.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.unfinished() <= 0 {
                return;
            }
            notified.await;
        }
    }

    /// Messages of `queue` waiting to be handed out.
    fn ready(&self, queue: Queue) -> u64 {
        let queues = self.inner.queues.lock().unwrap_or_else(|p| p.into_inner());
        queues.get(&queue).map_or(0, |d| d.items.len() as u64)
    }

    fn depths(&self) -> Vec<QueueDepth> {
        let mut out = Vec::new();
        for q in Queue::ALL {
            out.push(QueueDepth {
                queue: q.stage().to_string(),
                ready: self.ready(q),
                consumers: 0,
            });
            out.push(QueueDepth {
                queue: format!("{}.dead", q.stage()),
                ready: self
                    .inner
                    .dead
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .filter(|(dq, _, _)| *dq == q)
                    .count() as u64,
                consumers: 0,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bus_that_holds_back_hands_out_no_fetch_while_pages_wait() {
        let broker = Broker::memory();
        let Broker::Memory(bus) = &broker else {
            unreachable!()
        };
        bus.hold_back(2);
        let session = broker.open().await.unwrap();
        for (queue, bodies) in [
            (Queue::Extract, vec![b"p1".to_vec(), b"p2".to_vec()]),
            (Queue::Fetch, vec![b"t".to_vec()]),
        ] {
            session.publish(queue, &bodies).await.unwrap();
        }
        let mut fetches = session.consume(Queue::Fetch, 10).await.unwrap();
        let wait = std::time::Duration::from_millis(100);
        assert!(
            tokio::time::timeout(wait, fetches.next()).await.is_err(),
            "a fetch task was handed out with 2 pages waiting"
        );
        // The extractor takes a page: one waits, under the limit, so the task goes out.
        let mut pages = session.consume(Queue::Extract, 10).await.unwrap();
        let page = pages.next().await.unwrap().unwrap();
        let task = tokio::time::timeout(wait, fetches.next())
            .await
            .expect("the task still held back with 1 page waiting")
            .unwrap()
            .unwrap();
        assert_eq!(task.data, b"t");
        // Other queues are never held back.
        for (queue, body) in [(Queue::Extract, &b"p3"[..]), (Queue::Frontier, b"u")] {
            session.publish(queue, &[body.to_vec()]).await.unwrap();
        }
        let mut frontier = session.consume(Queue::Frontier, 10).await.unwrap();
        assert!(tokio::time::timeout(wait, frontier.next()).await.is_ok());
        page.ack().await.unwrap();
        task.ack().await.unwrap();
    }

    #[tokio::test]
    async fn memory_bus_counts_unfinished_until_acked() {
        let broker = Broker::memory();
        let session = broker.open().await.unwrap();
        session
            .publish(Queue::Fetch, &[b"a".to_vec(), b"b".to_vec()])
            .await
            .unwrap();
        let Broker::Memory(bus) = &broker else {
            unreachable!()
        };
        assert_eq!(bus.unfinished(), 2);
        let mut consumer = session.consume(Queue::Fetch, 10).await.unwrap();
        let d = consumer.next().await.unwrap().unwrap();
        assert_eq!(d.data, b"a");
        d.requeue().await.unwrap();
        assert_eq!(bus.unfinished(), 2);
        let d = consumer.next().await.unwrap().unwrap();
        assert_eq!(d.data, b"b");
        d.ack().await.unwrap();
        let d = consumer.next().await.unwrap().unwrap();
        assert_eq!(d.data, b"a");
        d.dead_letter().await.unwrap();
        bus.wait_idle().await;
        assert_eq!(bus.dead_letters().len(), 1);
    }

    /// A persistent bus holds at most its window of payloads in memory: a backlog three
    /// times as long is handed out in order, every payload read back whole, and the same
    /// after the bus is opened again on the store (a resumed crawl).
    #[tokio::test]
    async fn persistent_bus_spills_past_its_window() {
        let dir = std::env::temp_dir().join(format!("bus-spill-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let n = MEMORY_BUS_WINDOW * 3;
        let payload = |i: usize| format!("message {i} ").repeat(1 + i % 7).into_bytes();
        {
            let disk = crate::store::DiskStore::open(&dir).unwrap();
            let bus = MemoryBus::persistent(disk).unwrap();
            let broker = Broker::Memory(bus.clone());
            let session = broker.open().await.unwrap();
            let all: Vec<Vec<u8>> = (0..n).map(payload).collect();
            for chunk in all.chunks(100) {
                session.publish(Queue::Frontier, chunk).await.unwrap();
            }
            let held = |bus: &MemoryBus| {
                let queues = bus.inner.queues.lock().unwrap();
                queues.get(&Queue::Frontier).map_or(0, |w| w.held)
            };
            assert_eq!(held(&bus), MEMORY_BUS_WINDOW, "payloads held in memory");
            let mut consumer = session.consume(Queue::Frontier, 10).await.unwrap();
            for i in 0..n / 2 {
                let d = consumer.next().await.unwrap().unwrap();
                assert_eq!(d.data, payload(i), "message {i}");
                d.ack().await.unwrap();
            }
            assert!(held(&bus) <= MEMORY_BUS_WINDOW);
        }
        // Opened again: the other half, in order, from the store.
        let disk = crate::store::DiskStore::open(&dir).unwrap();
        let bus = MemoryBus::persistent(disk).unwrap();
        assert_eq!(bus.unfinished(), (n - n / 2) as i64);
        let broker = Broker::Memory(bus.clone());
        let session = broker.open().await.unwrap();
        let mut consumer = session.consume(Queue::Frontier, 10).await.unwrap();
        for i in n / 2..n {
            let d = consumer.next().await.unwrap().unwrap();
            assert_eq!(d.data, payload(i), "message {i} after reopening");
            d.ack().await.unwrap();
        }
        bus.wait_idle().await;
        assert!(bus.dead_letters().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
