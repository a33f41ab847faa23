//! The memory log of `crawler run`: with `CRAWLER_MEMORY_LOG=SECS`, a line to standard
//! error every SECS seconds with the process's resident memory, what the allocator holds
//! (live heap, pages in use, resident, kept back for reuse) and, with `--state`, what the
//! store's engine holds (memtables, journals, segments, compactions). It tells the live
//! data from the allocator's retention and the engine's buffers when the RSS of a long
//! crawl rises (`cargo bench -p evaluation --bench state` sets it and keeps the log).

use std::time::Duration;

/// The environment variable: seconds between two lines (none when unset, empty or 0).
pub const ENV: &str = "CRAWLER_MEMORY_LOG";

/// Starts the log on a thread of its own, if [`ENV`] asks for it.
pub fn start(store: Option<pipeline::store::DiskStore>) {
    let secs = std::env::var(ENV)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0);
    let Some(secs) = secs else { return };
    let every = Duration::from_secs_f64(secs);
    let started = std::time::Instant::now();
    let spawned = std::thread::Builder::new()
        .name("memory-log".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            let mut line = format!(
                "memory: {:.0} s, rss {} MB, {}",
                started.elapsed().as_secs_f64(),
                rss_kib().map_or_else(|| "?".into(), |k| (k >> 10).to_string()),
                allocator()
            );
            if let Some(store) = &store {
                line.push_str("; store: ");
                line.push_str(&store.engine_figures());
            }
            eprintln!("{line}");
        });
    if let Err(e) = spawned {
        eprintln!("the memory log did not start: {e}");
    }
}

/// The process's resident memory (`VmRSS`), in KiB.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// jemalloc's statistics, in MB: allocated (live heap), active (its pages in use),
/// resident, retained (address space kept for reuse), metadata.
#[cfg(not(feature = "system-allocator"))]
fn allocator() -> String {
    // Statistics are refreshed by writing the epoch.
    let mut epoch: u64 = 1;
    let mut len = std::mem::size_of::<u64>();
    // SAFETY: "epoch" is a u64 that jemalloc reads and writes; the pointers are to locals
    // of that size.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"epoch".as_ptr(),
            (&raw mut epoch).cast(),
            &raw mut len,
            (&raw mut epoch).cast(),
            len,
        );
    }
    let mb = |name: &std::ffi::CStr| read::<usize>(name).map(|v| v >> 20);
    let fig = |name: &std::ffi::CStr| mb(name).map_or_else(|| "?".into(), |v| v.to_string());
    format!(
        "heap {} MB (active {}, resident {}, retained {}, metadata {})",
        fig(c"stats.allocated"),
        fig(c"stats.active"),
        fig(c"stats.resident"),
        fig(c"stats.retained"),
        fig(c"stats.metadata")
    )
}

/// One of jemalloc's values by name (`mallctl`), `None` if it has none of that name.
/// `T` must be the value's type in jemalloc's documentation.
#[cfg(not(feature = "system-allocator"))]
pub fn read<T: Default>(name: &std::ffi::CStr) -> Option<T> {
    let mut value = T::default();
    let mut len = std::mem::size_of::<T>();
    // SAFETY: `name` is NUL-terminated, and `value` is of the size and type that
    // jemalloc's documentation gives the value (`len` says so).
    let status = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            (&raw mut value).cast(),
            &raw mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (status == 0).then_some(value)
}

#[cfg(feature = "system-allocator")]
fn allocator() -> String {
    "heap ? (the system's allocator)".into()
}
