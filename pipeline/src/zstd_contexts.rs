//! zstd contexts kept per thread: making one allocates and clears hundreds of KB, which
//! cost 2% of the pipeline's CPU when every message body made its own (`ZSTD_createCCtx`
//! in the fetcher and contentseen, `ZSTD_createDCtx` in the extractor).

use std::cell::RefCell;
use std::io;

use zstd::zstd_safe::{DCtx, ResetDirective};

thread_local! {
    /// One compressor per level used, made on first use.
    static COMPRESSORS: RefCell<Vec<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(Vec::new()) };
    static DECOMPRESSOR: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
}

/// `bytes` as one zstd frame at `level`, with its content size (as `zstd::bulk::compress`).
pub fn compress(bytes: &[u8], level: i32) -> io::Result<Vec<u8>> {
    COMPRESSORS.with(|cell| {
        let mut compressors = cell.borrow_mut();
        let at = match compressors.iter().position(|(l, _)| *l == level) {
            Some(at) => at,
            None => {
                compressors.push((level, zstd::bulk::Compressor::new(level)?));
                compressors.len() - 1
            }
        };
        compressors[at].1.compress(bytes)
    })
}

/// Runs `read` on a streaming decoder of the zstd frames in `bytes`, on this thread's
/// decompression context, reset first (a read stopped early leaves it mid-frame).
pub fn with_decoder<T>(
    bytes: &[u8],
    read: impl FnOnce(&mut zstd::stream::read::Decoder<'_, &[u8]>) -> io::Result<T>,
) -> io::Result<T> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let context = match slot.as_mut() {
            Some(context) => context,
            None => {
                slot.insert(DCtx::try_create().ok_or_else(|| io::Error::other("no zstd context"))?)
            }
        };
        context
            .reset(ResetDirective::SessionOnly)
            .map_err(|code| io::Error::other(zstd::zstd_safe::get_error_name(code)))?;
        let mut decoder = zstd::stream::read::Decoder::with_context(bytes, context);
        read(&mut decoder)
    })
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    /// The kept contexts give the bytes of a fresh one, and a read stopped mid-frame
    /// leaves nothing behind for the next.
    #[test]
    fn kept_contexts_match_fresh_ones() {
        let text = "a page of html ".repeat(5_000).into_bytes();
        for level in [1, 3, 1] {
            let ours = super::compress(&text, level).unwrap();
            assert_eq!(ours, zstd::bulk::compress(&text, level).unwrap());
        }
        let frame = super::compress(&text, 1).unwrap();
        let mut head = vec![0; 100];
        super::with_decoder(&frame, |d| d.read_exact(&mut head)).unwrap();
        let mut whole = Vec::new();
        super::with_decoder(&frame, |d| d.read_to_end(&mut whole)).unwrap();
        assert_eq!(whole, text);
        assert!(super::with_decoder(b"not zstd", |d| d.read_to_end(&mut Vec::new())).is_err());
        let mut again = Vec::new();
        super::with_decoder(&frame, |d| d.read_to_end(&mut again)).unwrap();
        assert_eq!(again, text);
    }
}
