//! Prometheus metrics of a worker: messages handled per stage and outcome,
//! broker deliveries, messages in flight and a latency histogram per
//! stage, kept in a `prometheus-client` registry and served in its text
//! encoding (OpenMetrics) by a small hyper server at
//! `http://0.0.0.0:<port>/metrics` (other paths: 404).
//!
//! The series, named as dashboards and the pipeline bench read them:
//! `crawler_messages_total{stage,outcome}`, `crawler_deliveries_total{stage}`,
//! `crawler_messages_in_flight{stage}` and
//! `crawler_message_seconds_{bucket,sum,count}{stage[,le]}`.

use std::convert::Infallible;
use std::sync::Arc;
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

/// Serves `metrics` on `port` until the task is dropped.
pub async fn serve(metrics: Arc<Metrics>, port: u16) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await?;
    tracing::info!(port, "metrics at /metrics");
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
}
