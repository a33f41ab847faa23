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

    pub async fn wait(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }

    pub fn reset(&mut self) {
        self.next = self.initial;
    }
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
