//! Prometheus metrics of a worker: messages handled per stage and outcome,
//! broker deliveries, messages in flight and a latency histogram per
//! stage, kept in a `prometheus-client` registry and served in its text
//! encoding (OpenMetrics) by a small hyper server at
//! `http://<addr>:<port>/metrics` (other paths: 404), the address
//! `--metrics-addr` (127.0.0.1 unless set: [`crate::config::DEFAULT_METRICS_ADDR`]).
//!
//! The series, named as dashboards and the pipeline bench read them, each
//! labelled with the worker's `stage`:
//! - the worker loop's: `crawler_messages_total{outcome}`,
//!   `crawler_deliveries_total`, `crawler_messages_in_flight` and
//!   `crawler_message_seconds_{bucket,sum,count}{le}`;
//! - what the crawl did, mirrored from the counters a stage adds to the
//!   namespace's stats (`crawler stats`), once each, when the store has
//!   applied the step that counts them (the counts a script call says it
//!   makes, [`crate::store::ScriptCall::counting`]): `crawler_fetches_total{outcome}`
//!   (`ok`, `http_error`, `timeout`, ..., by kind), `crawler_fetched_bytes_total`,
//!   `crawler_documents_total{verdict}` (`stored`, `duplicate`, `changed`,
//!   `unchanged`), `crawler_urls_total{outcome}` (the frontier's `seen`,
//!   `out_of_scope`, ...) and `crawler_events_total{event}` (any other);
//! - `crawler_host_backoffs_total{host}`: times a host asked to be left
//!   alone (429/503), for the first [`MAX_HOST_LABELS`] hosts, the rest
//!   under `host="other"`;
//! - `crawler_queue_messages{queue}` and `crawler_queue_consumers{queue}`:
//!   the namespace's queue depths, as this worker last read them (every
//!   [`QUEUE_POLL`]).
//!
//! The crawl's series live in one process-wide set ([`crawl_series`]), so
//! code far from the worker loop (the store, a stage) adds to them without
//! a handle; each worker's registry serves them.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use prometheus_client::encoding::{text::encode, EncodeLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// How a message ended in the worker loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageOutcome {
    /// Handled, outputs confirmed, acked.
    Acked,
    /// A transient failure: back to the queue.
    Requeued,
    /// Malformed or unprocessable: to the dead-letter queue.
    DeadLettered,
    /// Outputs not confirmed or ack failed: the broker redelivers it.
    Redelivered,
}

impl MessageOutcome {
    const ALL: [MessageOutcome; 4] = [
        MessageOutcome::Acked,
        MessageOutcome::Requeued,
        MessageOutcome::DeadLettered,
        MessageOutcome::Redelivered,
    ];

    fn label(self) -> &'static str {
        match self {
            MessageOutcome::Acked => "acked",
            MessageOutcome::Requeued => "requeued",
            MessageOutcome::DeadLettered => "dead_lettered",
            MessageOutcome::Redelivered => "redelivered",
        }
    }
}

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0,
];

/// The label of `crawler_messages_total` besides the stage (a registry
/// constant, so it comes first: `{stage="…",outcome="…"}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

/// The labels of the crawl's series (one each, besides the stage).
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ByOutcome {
    outcome: String,
}
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ByVerdict {
    verdict: String,
}
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ByEvent {
    event: String,
}
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ByHost {
    host: String,
}
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ByQueue {
    queue: String,
}

/// How many hosts get their own `crawler_host_backoffs_total` series.
pub const MAX_HOST_LABELS: usize = 200;

/// How often a worker serving metrics reads the queue depths.
pub const QUEUE_POLL: Duration = Duration::from_secs(5);

/// What the crawl did, process-wide (see the module doc).
#[derive(Debug, Default)]
pub struct CrawlSeries {
    fetches: Family<ByOutcome, Counter>,
    fetched_bytes: Counter,
    documents: Family<ByVerdict, Counter>,
    urls: Family<ByOutcome, Counter>,
    events: Family<ByEvent, Counter>,
    host_backoffs: Family<ByHost, Counter>,
    /// The hosts that have a series of their own.
    labelled_hosts: Mutex<HashSet<String>>,
    queue_messages: Family<ByQueue, Gauge>,
    queue_consumers: Family<ByQueue, Gauge>,
}

/// The process-wide [`CrawlSeries`].
pub fn crawl_series() -> &'static CrawlSeries {
    static SERIES: LazyLock<CrawlSeries> = LazyLock::new(CrawlSeries::default);
    &SERIES
}

/// The frontier's stats counters (URLs by what became of them).
const URL_COUNTERS: [&str; 6] = [
    "seen",
    "invalid_url",
    "out_of_scope",
    "too_deep",
    "over_limit",
    "retried",
];

/// contentseen's stats counters (documents by verdict).
const DOCUMENT_COUNTERS: [&str; 4] = ["stored", "duplicate", "changed", "unchanged"];

/// The stats counter of body bytes fetched (the fetcher's).
pub const FETCHED_BYTES: &str = "fetched_bytes";

impl CrawlSeries {
    /// One stats-hash counter added: to its series.
    pub fn count(&self, field: &str, by: i64) {
        let Ok(by) = u64::try_from(by) else {
            return;
        };
        let field = field.to_string();
        let counter = if field == FETCHED_BYTES {
            self.fetched_bytes.clone()
        } else if let Some(kind) = field.strip_prefix("fetch_") {
            self.fetches.get_or_create_owned(&ByOutcome {
                outcome: kind.into(),
            })
        } else if DOCUMENT_COUNTERS.contains(&field.as_str()) {
            self.documents
                .get_or_create_owned(&ByVerdict { verdict: field })
        } else if URL_COUNTERS.contains(&field.as_str()) {
            self.urls.get_or_create_owned(&ByOutcome { outcome: field })
        } else {
            self.events.get_or_create_owned(&ByEvent { event: field })
        };
        counter.inc_by(by);
    }

    /// The counters a store step says it counted
    /// ([`crate::store::ScriptCall::counting`]), each to its series.
    pub fn count_all(&self, counts: &[(String, i64)]) {
        for (field, by) in counts {
            self.count(field, *by);
        }
    }

    /// A host asked to be left alone (429/503, or Retry-After).
    pub fn host_backed_off(&self, host: &str) {
        let label = {
            let mut hosts = self
                .labelled_hosts
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if hosts.contains(host) || hosts.len() < MAX_HOST_LABELS {
                hosts.insert(host.to_string());
                host
            } else {
                "other"
            }
        };
        self.host_backoffs
            .get_or_create(&ByHost { host: label.into() })
            .inc();
    }

    /// The queue depths just read.
    pub fn queue_depths(&self, depths: &[crate::broker::QueueDepth]) {
        for d in depths {
            let name = ByQueue {
                queue: d.queue.clone(),
            };
            self.queue_messages
                .get_or_create(&name)
                .set(i64::try_from(d.ready).unwrap_or(i64::MAX));
            self.queue_consumers
                .get_or_create(&name)
                .set(i64::try_from(d.consumers).unwrap_or(i64::MAX));
        }
    }

    /// Registers the series in `registry`. The known kinds of documents,
    /// URLs and fetches exist from the start, at zero (a rate needs a
    /// first sample).
    fn register(&self, registry: &mut Registry) {
        for field in DOCUMENT_COUNTERS.iter().chain(&URL_COUNTERS) {
            self.count(field, 0);
        }
        self.count("fetch_ok", 0);
        registry.register(
            "crawler_fetches",
            "Fetches by outcome: final ones, redirects, and retried (a transient failure sent back for another try)",
            self.fetches.clone(),
        );
        registry.register(
            "crawler_fetched_bytes",
            "Body bytes of the pages fetched",
            self.fetched_bytes.clone(),
        );
        registry.register(
            "crawler_documents",
            "Documents by verdict: stored (an original), duplicate (a near-duplicate), changed or unchanged (a recrawl)",
            self.documents.clone(),
        );
        registry.register(
            "crawler_urls",
            "URLs the frontier handled, by what became of them",
            self.urls.clone(),
        );
        registry.register(
            "crawler_events",
            "Other stats counters",
            self.events.clone(),
        );
        registry.register(
            "crawler_host_backoffs",
            "Times a host asked to be left alone (429/503)",
            self.host_backoffs.clone(),
        );
        registry.register(
            "crawler_queue_messages",
            "Messages waiting in a queue of the namespace",
            self.queue_messages.clone(),
        );
        registry.register(
            "crawler_queue_consumers",
            "Consumers of a queue of the namespace",
            self.queue_consumers.clone(),
        );
    }
}

/// The metrics of one worker (one stage).
#[derive(Debug)]
pub struct Metrics {
    /// Owns the series below, each labelled with the stage; what
    /// `/metrics` encodes.
    registry: Registry,
    messages: Family<OutcomeLabel, Counter>,
    /// Broker deliveries (a bundle of messages is one).
    deliveries: Counter,
    in_flight: Gauge,
    /// Time from delivery to ack, one observation per message.
    seconds: Histogram,
}

impl Metrics {
    pub fn new(stage: &'static str) -> Arc<Metrics> {
        let messages = Family::<OutcomeLabel, Counter>::default();
        // Every outcome's series exists from the start, at zero.
        for outcome in MessageOutcome::ALL {
            let _ = messages.get_or_create(&OutcomeLabel {
                outcome: outcome.label(),
            });
        }
        let deliveries = Counter::default();
        let in_flight = Gauge::default();
        let seconds = Histogram::new(BUCKETS);
        let mut registry = Registry::default();
        let staged = registry.sub_registry_with_label(("stage".into(), stage.into()));
        // Counters are registered without `_total`: the encoding adds it.
        staged.register(
            "crawler_messages",
            "Messages handled, by how they ended",
            messages.clone(),
        );
        staged.register(
            "crawler_deliveries",
            "Broker deliveries taken (a bundle of messages is one)",
            deliveries.clone(),
        );
        staged.register(
            "crawler_messages_in_flight",
            "Messages being handled now",
            in_flight.clone(),
        );
        staged.register(
            "crawler_message_seconds",
            "Time from delivery to ack",
            seconds.clone(),
        );
        crawl_series().register(staged);
        Arc::new(Metrics {
            registry,
            messages,
            deliveries,
            in_flight,
            seconds,
        })
    }

    /// A delivery of `messages` messages (one, or a bundle) taken.
    pub fn started(&self, messages: usize) {
        self.deliveries.inc();
        self.in_flight
            .inc_by(i64::try_from(messages).unwrap_or(i64::MAX));
    }

    /// Records the end of `messages` messages (one, or those of a bundle
    /// that ended alike) and how long they took.
    pub fn finished(&self, outcome: MessageOutcome, messages: usize, took: Duration) {
        self.in_flight
            .dec_by(i64::try_from(messages).unwrap_or(i64::MAX));
        self.messages
            .get_or_create(&OutcomeLabel {
                outcome: outcome.label(),
            })
            .inc_by(messages as u64);
        let secs = took.as_secs_f64();
        for _ in 0..messages {
            self.seconds.observe(secs);
        }
    }

    /// The text exposition (OpenMetrics, ending in `# EOF`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// The media type of [`Metrics::render`].
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long a connection may take to send its request head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// `/metrics` answers the exposition; any other path 404.
fn respond(metrics: &Metrics, request: &Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    if request.uri().path() == "/metrics" {
        *response.body_mut() = Full::new(Bytes::from(metrics.render()));
        if let Ok(value) = hyper::header::HeaderValue::from_str(CONTENT_TYPE) {
            response
                .headers_mut()
                .insert(hyper::header::CONTENT_TYPE, value);
        }
    } else {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    response
}

/// Serves `metrics` at `addr` until the task is dropped.
pub async fn serve(metrics: Arc<Metrics>, addr: std::net::SocketAddr) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "metrics at /metrics");
    loop {
        let (sock, _) = listener.accept().await?;
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let response = respond(&metrics, &request);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(sock), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_a_cumulative_histogram() {
        let m = Metrics::new("fetch");
        m.started(1);
        m.finished(MessageOutcome::Acked, 1, Duration::from_millis(3));
        m.started(1);
        m.finished(MessageOutcome::DeadLettered, 1, Duration::from_secs(60));
        let text = m.render();
        assert!(text.contains("crawler_messages_total{stage=\"fetch\",outcome=\"acked\"} 1"));
        assert!(
            text.contains("crawler_messages_total{stage=\"fetch\",outcome=\"dead_lettered\"} 1")
        );
        assert!(text.contains("crawler_message_seconds_bucket{stage=\"fetch\",le=\"0.005\"} 1"));
        assert!(text.contains("crawler_message_seconds_bucket{stage=\"fetch\",le=\"30.0\"} 1"));
        assert!(text.contains("crawler_message_seconds_bucket{stage=\"fetch\",le=\"+Inf\"} 2"));
        assert!(text.contains("crawler_message_seconds_count{stage=\"fetch\"} 2"));
        assert!(text.contains("crawler_messages_in_flight{stage=\"fetch\"} 0"));
    }

    /// The value of the sample line starting with `series` (0 when absent).
    fn sample(text: &str, series: &str) -> f64 {
        text.lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0)
    }

    /// A step that applies once: its count the first time, nothing the
    /// second (the memory store's twin of a counting script).
    static ONCE_FLAG: crate::store::Script = crate::store::Script::new(
        "METRICS_TEST_ONCE",
        || "return redis.call('SETNX', KEYS[1], '1')".to_string(),
        |m, keys, _| {
            let key = crate::store::key_arg(&ONCE_FLAG, keys, 0)?;
            let new = !m.exists(key);
            if new {
                m.set(key, b"1");
            }
            Ok(crate::store::Reply::Int(i64::from(new)))
        },
    );

    #[tokio::test]
    async fn applied_counts_are_mirrored_once_and_others_not() {
        // The series are process-wide: this test's counters have names of
        // their own.
        let store = crate::store::Store::memory();
        let step = |counter: &str| {
            crate::store::ScriptCall::new(&ONCE_FLAG)
                .key("flag")
                .counting(vec![(counter.to_string(), 2)])
                .op()
        };
        store.one(step("mirror_test_applied")).await.unwrap();
        // The same step again (a redelivery): replies 0, counts nothing.
        store.one(step("mirror_test_redelivered")).await.unwrap();
        let text = Metrics::new("fetch").render();
        let event = |e: &str| {
            sample(
                &text,
                &format!("crawler_events_total{{stage=\"fetch\",event=\"{e}\"}}"),
            )
        };
        assert_eq!(event("mirror_test_applied"), 2.0, "{text}");
        assert_eq!(event("mirror_test_redelivered"), 0.0);
    }

    #[test]
    fn stats_counters_land_in_their_named_series() {
        let s = CrawlSeries::default();
        for (field, by) in [
            ("fetch_ok", 3),
            ("fetch_timeout", 1),
            (FETCHED_BYTES, 4096),
            ("stored", 2),
            ("duplicate", 1),
            ("seen", 7),
            ("extracted", 2),
            ("fetch_negative", -1),
        ] {
            s.count(field, by);
        }
        s.host_backed_off("https://a.example");
        s.queue_depths(&[crate::broker::QueueDepth {
            queue: "fetch".into(),
            ready: 12,
            consumers: 2,
        }]);
        let mut registry = Registry::default();
        s.register(&mut registry);
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        for (series, want) in [
            ("crawler_fetches_total{outcome=\"ok\"}", 3.0),
            ("crawler_fetches_total{outcome=\"timeout\"}", 1.0),
            ("crawler_fetches_total{outcome=\"negative\"}", 0.0),
            ("crawler_fetched_bytes_total", 4096.0),
            ("crawler_documents_total{verdict=\"stored\"}", 2.0),
            ("crawler_documents_total{verdict=\"duplicate\"}", 1.0),
            ("crawler_urls_total{outcome=\"seen\"}", 7.0),
            ("crawler_events_total{event=\"extracted\"}", 2.0),
            (
                "crawler_host_backoffs_total{host=\"https://a.example\"}",
                1.0,
            ),
            ("crawler_queue_messages{queue=\"fetch\"}", 12.0),
            ("crawler_queue_consumers{queue=\"fetch\"}", 2.0),
        ] {
            assert_eq!(sample(&text, series), want, "{series} in\n{text}");
        }
    }

    #[test]
    fn hosts_past_the_label_cap_share_one_series() {
        let s = CrawlSeries::default();
        for i in 0..MAX_HOST_LABELS + 5 {
            s.host_backed_off(&format!("https://h{i}.example"));
        }
        s.host_backed_off("https://h0.example");
        let mut registry = Registry::default();
        s.register(&mut registry);
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert_eq!(
            sample(&text, "crawler_host_backoffs_total{host=\"other\"}"),
            5.0
        );
        assert_eq!(
            sample(
                &text,
                "crawler_host_backoffs_total{host=\"https://h0.example\"}"
            ),
            2.0
        );
    }
}
