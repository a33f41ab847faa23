//! Prometheus metrics of a worker: messages handled per stage and outcome,
//! and a latency histogram per stage, served as text on
//! `http://0.0.0.0:<port>/metrics` (any path answers the same).
//!
//! A small hand-rolled registry: a few atomics per stage, no dependency.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// The metrics of one worker (one stage).
#[derive(Debug)]
pub struct Metrics {
    stage: &'static str,
    outcomes: [AtomicU64; 4],
    /// Cumulative counts per bucket, plus +Inf.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    /// Sum of latencies in microseconds.
    sum_micros: AtomicU64,
    in_flight: AtomicU64,
    /// Broker deliveries (a bundle of messages is one).
    deliveries: AtomicU64,
}

impl Metrics {
    pub fn new(stage: &'static str) -> Arc<Metrics> {
        Arc::new(Metrics {
            stage,
            outcomes: Default::default(),
            buckets: Default::default(),
            sum_micros: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            deliveries: AtomicU64::new(0),
        })
    }

    /// A delivery of `messages` messages (one, or a bundle) taken.
    pub fn started(&self, messages: usize) {
        self.deliveries.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(messages as u64, Ordering::Relaxed);
    }

    /// Records the end of `messages` messages (one, or those of a bundle
    /// that ended alike) and how long they took.
    pub fn finished(&self, outcome: MessageOutcome, messages: usize, took: Duration) {
        let n = messages as u64;
        self.in_flight.fetch_sub(n, Ordering::Relaxed);
        let i = MessageOutcome::ALL
            .iter()
            .position(|o| *o == outcome)
            .unwrap_or(0);
        self.outcomes[i].fetch_add(n, Ordering::Relaxed);
        let secs = took.as_secs_f64();
        let b = BUCKETS
            .iter()
            .position(|le| secs <= *le)
            .unwrap_or(BUCKETS.len());
        self.buckets[b].fetch_add(n, Ordering::Relaxed);
        self.sum_micros
            .fetch_add(took.as_micros() as u64 * n, Ordering::Relaxed);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let st = self.stage;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP crawler_messages_total Messages handled, by how they ended."
        );
        let _ = writeln!(out, "# TYPE crawler_messages_total counter");
        for (o, c) in MessageOutcome::ALL.iter().zip(&self.outcomes) {
            let _ = writeln!(
                out,
                "crawler_messages_total{{stage=\"{st}\",outcome=\"{}\"}} {}",
                o.label(),
                c.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            out,
            "# HELP crawler_deliveries_total Broker deliveries taken (a bundle of messages is one)."
        );
        let _ = writeln!(out, "# TYPE crawler_deliveries_total counter");
        let _ = writeln!(
            out,
            "crawler_deliveries_total{{stage=\"{st}\"}} {}",
            self.deliveries.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP crawler_messages_in_flight Messages being handled now."
        );
        let _ = writeln!(out, "# TYPE crawler_messages_in_flight gauge");
        let _ = writeln!(
            out,
            "crawler_messages_in_flight{{stage=\"{st}\"}} {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP crawler_message_seconds Time from delivery to ack."
        );
        let _ = writeln!(out, "# TYPE crawler_message_seconds histogram");
        let mut cumulative = 0;
        for (i, le) in BUCKETS.iter().enumerate() {
            cumulative += self.buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "crawler_message_seconds_bucket{{stage=\"{st}\",le=\"{le}\"}} {cumulative}"
            );
        }
        cumulative += self.buckets[BUCKETS.len()].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "crawler_message_seconds_bucket{{stage=\"{st}\",le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(
            out,
            "crawler_message_seconds_sum{{stage=\"{st}\"}} {}",
            self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(
            out,
            "crawler_message_seconds_count{{stage=\"{st}\"}} {cumulative}"
        );
        out
    }
}

/// Bytes of a request read before answering (the request is not parsed).
const MAX_REQUEST_BYTES: usize = 8192;

/// Serves `metrics` on `port` until the task is dropped.
pub async fn serve(metrics: Arc<Metrics>, port: u16) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await?;
    tracing::info!(port, "metrics at /metrics");
    loop {
        let (mut sock, _) = listener.accept().await?;
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; MAX_REQUEST_BYTES];
            let mut read = 0;
            // Read the request head (bounded in size and time), then answer.
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while read < buf.len() {
                    match sock.read(&mut buf[read..]).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            read += n;
                            if buf[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                                break;
                            }
                        }
                    }
                }
            })
            .await;
            let body = metrics.render();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.write_all(body.as_bytes()).await;
            let _ = sock.shutdown().await;
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
        assert!(text.contains("crawler_message_seconds_bucket{stage=\"fetch\",le=\"30\"} 1"));
        assert!(text.contains("crawler_message_seconds_bucket{stage=\"fetch\",le=\"+Inf\"} 2"));
        assert!(text.contains("crawler_message_seconds_count{stage=\"fetch\"} 2"));
        assert!(text.contains("crawler_messages_in_flight{stage=\"fetch\"} 0"));
    }
}
