//! The politeness gate: before a request, a fetcher takes its host's turn in
//! the store ([`politeness::turn::gate`], atomic, on the store's
//! clock) and holds it until the request has ended ([`release_turn`]); the
//! next request to the host may start one delay after that. So any number of
//! fetchers together never send two requests to one host closer than its
//! delay, as the server sees them, whatever the network's jitter. A turn
//! whose fetcher died is free again after its lease (the delay plus the
//! request timeout). Hosts without a delay are not serialized.
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
use politeness::turn;

/// Waits up to this long for a host's turn inside a fetcher.
pub const MAX_GATE_WAIT: Duration = Duration::from_secs(10);

/// Whether the request may go now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Go,
    /// Not within [`MAX_GATE_WAIT`]: try again after this long.
    Later(Duration),
}

/// Takes the host's turn (for `lease`, or until [`release_turn`]),
/// sleeping for short waits. With no delay the turn is free at once.
pub async fn wait_turn(
    store: &Store,
    keys: &Keys,
    origin: &str,
    delay: Duration,
    lease: Duration,
) -> Result<Turn, StoreError> {
    let mut waited = Duration::ZERO;
    let hold = if delay.is_zero() {
        Duration::ZERO
    } else {
        lease.max(delay)
    };
    loop {
        let wait = store
            .one(turn::gate(keys, origin, hold.as_millis() as u64))
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

/// The store operation that ends a turn: the host's next request may start
/// `delay` from now.
pub fn release_turn(keys: &Keys, origin: &str, delay: Duration) -> Op {
    turn::done(keys, origin, delay.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_lasts_until_released_then_the_delay_runs() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let delay = Duration::from_millis(50);
        let lease = Duration::from_secs(5);
        let start = std::time::Instant::now();
        for _ in 0..3 {
            let turn = wait_turn(&store, &keys, "http://h", delay, lease)
                .await
                .unwrap();
            assert_eq!(turn, Turn::Go);
            // The request takes 20 ms; the next may start a delay after it.
            tokio::time::sleep(Duration::from_millis(20)).await;
            store
                .one(release_turn(&keys, "http://h", delay))
                .await
                .unwrap();
        }
        assert!(start.elapsed() >= 3 * Duration::from_millis(20) + 2 * delay);
        // Another host is not held up.
        let t = std::time::Instant::now();
        wait_turn(&store, &keys, "http://other", delay, lease)
            .await
            .unwrap();
        assert!(t.elapsed() < delay);
        // A turn never released (its fetcher died) is free after the lease.
        let short = Duration::from_millis(80);
        wait_turn(&store, &keys, "http://dead", delay, short)
            .await
            .unwrap();
        let t = std::time::Instant::now();
        wait_turn(&store, &keys, "http://dead", delay, short)
            .await
            .unwrap();
        assert!(t.elapsed() >= Duration::from_millis(60));
    }

    #[tokio::test]
    async fn hosts_without_delay_are_not_serialized() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let t = std::time::Instant::now();
        for _ in 0..5 {
            let turn = wait_turn(
                &store,
                &keys,
                "http://f",
                Duration::ZERO,
                Duration::from_secs(30),
            );
            assert_eq!(turn.await.unwrap(), Turn::Go);
        }
        assert!(t.elapsed() < Duration::from_millis(50));
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
                fields: vec![(
                    politeness::record::BACKOFF_UNTIL_MS.into(),
                    far.to_string().into_bytes(),
                )],
            })
            .await
            .unwrap();
        let turn = wait_turn(&store, &keys, "http://h", Duration::ZERO, Duration::ZERO)
            .await
            .unwrap();
        assert!(matches!(turn, Turn::Later(d) if d > MAX_GATE_WAIT));
    }
}
