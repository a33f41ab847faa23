//! The allocator of every binary that links this crate (the four workers, `crawler`, the
//! tests and benches): mimalloc, tuned by [`tune`]. The stages hand page-sized buffers
//! between threads all the time; glibc's per-thread arenas kept a third of
//! `crawler run --state`'s resident memory as free fragments, and mimalloc is faster at it
//! (`cargo bench -p evaluation --bench state`, 30,000 pages: peak RSS 366 MB against
//! 401 MB with glibc's allocator, 741 against 602 pages/s; see the README).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Makes mimalloc give freed memory back to the system at once, and commit an arena's
/// memory as it is used rather than when it is reserved (with its defaults the same crawl
/// peaked at 453 MB). Called first thing by each binary; options set later still hold for
/// what is allocated after.
pub fn tune() {
    // mimalloc's option numbers (`mi_option_e` in its `mimalloc.h`, the same in v2 and v3).
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets two of mimalloc's options, plain integers it reads when it next needs
    // them; any value is valid for both.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}
