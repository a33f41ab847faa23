//! The politeness gate: before a request, a fetcher books its host's next
//! slot in the store ([`pipeline::store::Op::HostGate`], atomic, on the
//! store's clock), so any number of fetchers together never start two
//! requests to one host closer than its delay.
//!
//! The frontier's releaser already hands out a host's tasks one delay apart;
//! the gate absorbs the jitter of the fetch queue in between. A host whose
//! turn is far away (a Retry-After backoff) is not waited for here: the task
//! goes back to the frontier ([`Turn::Later`]) so it does not hold a
//! fetcher's slot.

use std::time::Duration;

use pipeline::keys::Keys;
use pipeline::store::{Op, StoreError};
use pipeline::Store;

/// Waits up to this long for a host's turn inside a fetcher.
pub const MAX_GATE_WAIT: Duration = Duration::from_secs(10);

/// Whether the request may go now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Go,
    /// Not within [`MAX_GATE_WAIT`]: try again after this long.
    Later(Duration),
}

/// Books the next request to `origin`, `delay` after the previous one,
/// sleeping for short waits.
pub async fn wait_turn(
    store: &Store,
    keys: &Keys,
    origin: &str,
    delay: Duration,
) -> Result<Turn, StoreError> {
    let mut waited = Duration::ZERO;
    loop {
        let wait = store
            .one(Op::HostGate {
                record: keys.host(origin),
                delay_ms: delay.as_millis() as u64,
            })
            .await?
            .int()?;
        if wait <= 0 {
            return Ok(Turn::Go);
        }
        let wait = Duration::from_millis(wait as u64);
        if waited + wait > MAX_GATE_WAIT {
            return Ok(Turn::Later(wait));
        }
        tokio::time::sleep(wait).await;
        waited += wait;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn spaces_requests_by_the_delay() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let delay = Duration::from_millis(50);
        let start = std::time::Instant::now();
        for _ in 0..3 {
            assert_eq!(
                wait_turn(&store, &keys, "http://h", delay).await.unwrap(),
                Turn::Go
            );
        }
        // Three turns: the second and third each waited a delay.
        assert!(start.elapsed() >= 2 * delay);
        // Another host is not held up.
        let t = std::time::Instant::now();
        wait_turn(&store, &keys, "http://other", delay)
            .await
            .unwrap();
        assert!(t.elapsed() < delay);
    }

    #[tokio::test]
    async fn a_long_backoff_is_not_waited_for() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let far = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
            + 3_600_000;
        store
            .one(Op::HSet {
                key: keys.host("http://h"),
                field: "backoff_until_ms".into(),
                value: far.to_string().into_bytes(),
            })
            .await
            .unwrap();
        let turn = wait_turn(&store, &keys, "http://h", Duration::ZERO)
            .await
            .unwrap();
        assert!(matches!(turn, Turn::Later(d) if d > MAX_GATE_WAIT));
    }
}
