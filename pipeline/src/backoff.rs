//! Exponential backoff with a cap, for reconnecting to RabbitMQ and Redis and
//! for retrying transient failures.

use std::time::Duration;

/// Doubles the delay after each failure, from `initial` up to `max`; `reset`
/// after a success.
#[derive(Debug, Clone)]
pub struct Backoff {
    /// First delay after a failure.
    initial: Duration,
    /// Upper bound, so a long outage still retries every `max`.
    max: Duration,
    /// The delay the next `wait` sleeps.
    next: Duration,
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            next: initial,
        }
    }

    /// The delay to wait now; doubles the next one.
    pub fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        d
    }

    /// Sleeps the next delay, jittered ([`jittered`]).
    pub async fn wait(&mut self) {
        tokio::time::sleep(jittered(self.next_delay())).await;
    }

    pub fn reset(&mut self) {
        self.next = self.initial;
    }
}

/// `d` with "equal jitter": half of it, plus a uniform share of the other
/// half, so workers that lost a service at the same moment do not all come
/// back at the same moment.
pub fn jittered(d: Duration) -> Duration {
    d / 2 + d.mul_f64(rand::random_range(0.0..0.5))
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(Duration::from_millis(200), Duration::from_secs(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_half_and_whole_and_varies() {
        let d = Duration::from_millis(1000);
        let got: Vec<Duration> = (0..200).map(|_| jittered(d)).collect();
        assert!(got.iter().all(|j| *j >= d / 2 && *j <= d));
        assert!(got.iter().any(|j| *j != got[0]));
    }

    #[test]
    fn doubles_up_to_the_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(350));
        assert_eq!(b.next_delay(), Duration::from_millis(100));
        assert_eq!(b.next_delay(), Duration::from_millis(200));
        assert_eq!(b.next_delay(), Duration::from_millis(350));
        assert_eq!(b.next_delay(), Duration::from_millis(350));
        b.reset();
        assert_eq!(b.next_delay(), Duration::from_millis(100));
    }
}
