//! What the fetchers tell the frontier about a host: the per-host record
//! `Keys::host(origin)` (a Redis hash) that the frontier's schedule reads.
//!
//! - `delay_ms`: the robots.txt Crawl-delay for our agent (written by
//!   [`crate::robots`] when it fetches the rules), at most [`MAX_CRAWL_DELAY`].
//! - `backoff_until_ms` (Unix ms): after a 429 or 503, from `Retry-After`
//!   (seconds or an HTTP date) or, without one, [`backoff_after`] the attempt;
//!   at most [`MAX_HOST_BACKOFF`] ahead.
//! - `fail_streak`: transient failures in a row (timeouts, connection errors,
//!   5xx, 429); back to 0 when the host answers anything else.
//!
//! Pure: this module builds store operations and parses headers; the stage
//! runs them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pipeline::keys::Keys;
use pipeline::store::Op;
// The record's field names: one set, in the politeness crate.
use ::politeness::record::{BACKOFF_UNTIL_MS, DELAY_MS, FAIL_STREAK};

/// The longest Crawl-delay obeyed: a robots.txt asking for more (some ask for
/// a day) gets this, so a host still makes progress.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(60);
/// The longest a host is paused by one 429/503, whatever its Retry-After says.
pub const MAX_HOST_BACKOFF: Duration = Duration::from_secs(3600);
/// The pause after a 429/503 without Retry-After on a first attempt; it
/// doubles with each further attempt.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_secs(5);

/// Now as Unix milliseconds.
pub fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The wait a `Retry-After` header asks for: delay-seconds or an HTTP date
/// (RFC 9110 §10.2.3), measured from `now`. `None` if unparseable.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The default pause after a 429/503 without Retry-After: doubling with the
/// attempt, capped.
pub fn backoff_after(attempt: u32) -> Duration {
    DEFAULT_BACKOFF_BASE
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(MAX_HOST_BACKOFF)
}

/// A robots.txt Crawl-delay (seconds, as parsed) as obeyed: at most
/// [`MAX_CRAWL_DELAY`], and 0 for nonsense (negative, NaN).
pub fn crawl_delay(seconds: f32) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f32(seconds)
        .unwrap_or(MAX_CRAWL_DELAY)
        .min(MAX_CRAWL_DELAY)
}

/// Builds the host-record operations for one origin.
pub struct HostFeedback<'a> {
    keys: &'a Keys,
    origin: &'a str,
}

impl<'a> HostFeedback<'a> {
    pub fn new(keys: &'a Keys, origin: &'a str) -> Self {
        HostFeedback { keys, origin }
    }

    fn set(&self, field: &str, value: u64) -> Op {
        Op::HSet {
            key: self.keys.host(self.origin),
            fields: vec![(field.to_string(), value.to_string().into_bytes())],
        }
    }

    /// The robots.txt Crawl-delay (seconds, as parsed), capped.
    pub fn crawl_delay(&self, seconds: f32) -> Op {
        self.set(DELAY_MS, crawl_delay(seconds).as_millis() as u64)
    }

    /// The host answered normally: its failure streak is over.
    pub fn answered(&self) -> Op {
        self.set(FAIL_STREAK, 0)
    }

    /// A transient failure (timeout, connection error, 5xx, 429).
    pub fn failed(&self) -> Op {
        Op::HIncr {
            key: self.keys.host(self.origin),
            field: FAIL_STREAK.into(),
            by: 1,
        }
    }

    /// A 429 or 503: pause the host until `now_ms + wait` (capped).
    pub fn back_off(&self, now_ms: u64, wait: Duration) -> Op {
        let wait = wait.min(MAX_HOST_BACKOFF).as_millis() as u64;
        self.set(BACKOFF_UNTIL_MS, now_ms.saturating_add(wait))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_480); // Wed, 21 Oct 2015 07:28:00 GMT
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::from_secs(0)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:29:30 GMT", now),
            Some(Duration::from_secs(90))
        );
        // A date in the past: retry now.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
    }

    #[test]
    fn default_backoff_doubles_and_is_capped() {
        assert_eq!(backoff_after(0), Duration::from_secs(5));
        assert_eq!(backoff_after(1), Duration::from_secs(10));
        assert_eq!(backoff_after(3), Duration::from_secs(40));
        assert_eq!(backoff_after(40), MAX_HOST_BACKOFF);
    }

    #[test]
    fn host_record_ops() {
        let keys = Keys::new("ns");
        let fb = HostFeedback::new(&keys, "http://h:1");
        let value = |op: Op| match op {
            Op::HSet { mut fields, .. } if fields.len() == 1 => {
                let (field, value) = fields.remove(0);
                (field, String::from_utf8(value).unwrap())
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(value(fb.crawl_delay(2.5)), (DELAY_MS.into(), "2500".into()));
        assert_eq!(value(fb.crawl_delay(86_400.0)).1, "60000");
        assert_eq!(value(fb.crawl_delay(f32::INFINITY)).1, "60000");
        assert_eq!(value(fb.crawl_delay(-1.0)).1, "0");
        assert_eq!(value(fb.crawl_delay(f32::NAN)).1, "0");
        assert_eq!(
            value(fb.back_off(1_000, Duration::from_secs(2))),
            (BACKOFF_UNTIL_MS.into(), "3000".into())
        );
        assert_eq!(
            value(fb.back_off(0, Duration::from_secs(1 << 30))).1,
            "3600000"
        );
        assert_eq!(value(fb.answered()), (FAIL_STREAK.into(), "0".into()));
        assert!(matches!(fb.failed(), Op::HIncr { by: 1, .. }));
    }
}
