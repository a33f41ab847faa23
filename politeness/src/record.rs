//! The per-host record `Keys::host(origin)`, a Redis hash: its field names,
//! used by the Lua (through `lua_names`), the twins and the fetcher.

/// The crawl's delay between requests to the host (ms): written by the
/// frontier with each enqueue.
pub const CRAWL_DELAY_MS: &str = "crawl_delay_ms";
/// The robots.txt Crawl-delay for our agent (ms): written by the fetcher.
pub const DELAY_MS: &str = "delay_ms";
/// A 429/503 pause (Unix ms): written by the fetcher.
pub const BACKOFF_UNTIL_MS: &str = "backoff_until_ms";
/// Transient failures in a row: written by the fetcher, 0 on any answer.
pub const FAIL_STREAK: &str = "fail_streak";
/// When the releaser may next hand out a task of the host (Unix ms).
pub const NEXT_MS: &str = "next_ms";
/// Until when a host failing again and again is parked (Unix ms).
pub const PARKED_UNTIL_MS: &str = "parked_until_ms";
/// When the next request to the host may start (Unix ms): the fetchers'
/// turn.
pub const NEXT_FETCH_MS: &str = "next_fetch_ms";

/// The field names as Lua locals (`F_CRAWL_DELAY_MS` and so on), put before
/// each script so the Lua spells no field name itself.
pub(crate) fn lua_names() -> String {
    [
        ("F_CRAWL_DELAY_MS", CRAWL_DELAY_MS),
        ("F_DELAY_MS", DELAY_MS),
        ("F_BACKOFF_UNTIL_MS", BACKOFF_UNTIL_MS),
        ("F_FAIL_STREAK", FAIL_STREAK),
        ("F_NEXT_MS", NEXT_MS),
        ("F_PARKED_UNTIL_MS", PARKED_UNTIL_MS),
        ("F_NEXT_FETCH_MS", NEXT_FETCH_MS),
    ]
    .iter()
    .map(|(local, field)| format!("local {local} = '{field}'\n"))
    .collect()
}
