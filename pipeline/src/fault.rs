//! Deterministic fault points: named places in the workers where a test can
//! make the process die at once, as `kill -9` would (no shutdown, no ack, no
//! flush), to prove what the next delivery does in the window between two
//! writes.
//!
//! Compiled in only with the `fault-points` feature (the integration tests
//! build the binaries with it); otherwise [`point`] is empty. Armed by the
//! environment: `CRAWLER_FAULT_POINT=<name>` dies the first time the
//! process reaches `<name>`, `<name>@<n>` the n-th time.
//!
//! The points (each is the window between two steps that are durable on
//! their own):
//! - [`STORED_NOT_ACKED`]: a worker has stored and published what a message
//!   produced, and not acked it yet; `stored-not-acked:<stage>><to>` is
//!   the same window for a message that published to stage `<to>` (the
//!   fetcher's retries and redirects: `stored-not-acked:fetch>frontier`);
//! - [`PUBLISHED_NOT_CONFIRMED`]: the frontier's releaser has published
//!   fetch tasks and not yet removed them from its `releasing` set;
//! - [`TAKEN_NOT_PUBLISHED`]: the releaser has taken due tasks out of their
//!   host queues and not published them;
//! - [`TEXT_WRITTEN_NOT_RECORDED`]: contentseen has written a document to
//!   its text segment (and its entry under its original) and not stored
//!   its record.

/// After a message's outputs are stored and published, before its ack.
/// Suffixed by the stage: `stored-not-acked:contentseen`.
pub const STORED_NOT_ACKED: &str = "stored-not-acked";
/// The releaser, between publishing fetch tasks and confirming them.
pub const PUBLISHED_NOT_CONFIRMED: &str = "published-not-confirmed";
/// The releaser, between taking due tasks and publishing them.
pub const TAKEN_NOT_PUBLISHED: &str = "taken-not-published";

/// contentseen, between writing a document's text and storing its record.
pub const TEXT_WRITTEN_NOT_RECORDED: &str = "text-written-not-recorded";

/// The environment variable that arms a point.
pub const ENV: &str = "CRAWLER_FAULT_POINT";

/// Dies here if this point is armed (see the module doc).
#[cfg(feature = "fault-points")]
pub fn point(name: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static ARMED: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);
    let armed = ARMED.get_or_init(|| armed(std::env::var(ENV).ok().as_deref()));
    if let Some((armed, nth)) = armed {
        if armed == name && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *nth {
            eprintln!("fault point {name} reached: the process dies here ({ENV})");
            std::process::abort();
        }
    }
}

/// Dies here if this point is armed: never, in this build.
#[cfg(not(feature = "fault-points"))]
#[inline(always)]
pub fn point(_name: &str) {}

/// `name` or `name@n` → (name, n); `None` for unset or empty.
pub fn armed(value: Option<&str>) -> Option<(String, u64)> {
    let v = value?.trim();
    if v.is_empty() {
        return None;
    }
    match v.rsplit_once('@') {
        Some((name, n)) => Some((name.to_string(), n.parse().ok().filter(|&n| n > 0)?)),
        None => Some((v.to_string(), 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_armed_by_name_and_count() {
        assert_eq!(armed(None), None);
        assert_eq!(armed(Some(" ")), None);
        assert_eq!(armed(Some("x")), Some(("x".into(), 1)));
        assert_eq!(
            armed(Some("stored-not-acked:contentseen@3")),
            Some(("stored-not-acked:contentseen".into(), 3))
        );
        assert_eq!(armed(Some("x@0")), None);
        assert_eq!(armed(Some("x@y")), None);
    }
}
