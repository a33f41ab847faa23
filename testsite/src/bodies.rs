//! Response bodies, including the streamed bodies of the hostile endpoints.
//!
//! Nothing here holds more than a few hundred kilobytes: a 1 GB page is one
//! 64 KiB filler chunk sent many times, and the gzip bomb is one deflate
//! block sequence for 1 MiB of zeros, repeated, between a header and trailer.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use flate2::{Compress, Compression, FlushCompress, Status};
use hyper::body::{Body, Frame, SizeHint};

/// Size of the filler chunk of `/hostile/huge` and `/hostile/endless`.
const FILLER_CHUNK_BYTES: usize = 64 * 1024;
/// Inflated size of one repeated deflate piece of the gzip bomb.
const BOMB_PIECE_INFLATED_BYTES: u64 = 1024 * 1024;

/// The body of a response, as hyper polls it.
pub enum ResponseBody {
    /// A whole body already in memory (every ordinary page).
    Full(Option<Bytes>),
    /// A sequence of (chunk, repeat count) sent in order; a count of
    /// `u64::MAX` never ends. Used for huge, endless and gzip-bomb bodies.
    Repeated(RepeatedChunks),
    /// One byte per `interval`, forever (`/hostile/drip`).
    Drip(Drip),
}

impl ResponseBody {
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self::Full(Some(bytes.into()))
    }

    pub fn empty() -> Self {
        Self::Full(None)
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Self::Full(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            Self::Repeated(chunks) => {
                Poll::Ready(chunks.next_chunk().map(|bytes| Ok(Frame::data(bytes))))
            }
            Self::Drip(drip) => drip
                .poll_byte(context)
                .map(|bytes| Some(Ok(Frame::data(bytes)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::Full(bytes) => bytes.is_none(),
            Self::Repeated(chunks) => chunks.segments.is_empty(),
            Self::Drip(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |bytes| bytes.len() as u64))
            }
            Self::Repeated(chunks) => chunks
                .remaining_bytes()
                .map_or_else(SizeHint::new, SizeHint::with_exact),
            Self::Drip(_) => SizeHint::new(),
        }
    }
}

/// Chunks each sent a number of times; cheap to clone because `Bytes` is
/// reference counted.
#[derive(Debug, Clone, Default)]
pub struct RepeatedChunks {
    /// (chunk, how many more times to send it); `u64::MAX` means forever.
    segments: VecDeque<(Bytes, u64)>,
}

impl RepeatedChunks {
    pub fn push(mut self, chunk: Bytes, times: u64) -> Self {
        if !chunk.is_empty() && times > 0 {
            self.segments.push_back((chunk, times));
        }
        self
    }

    fn next_chunk(&mut self) -> Option<Bytes> {
        let (chunk, times) = self.segments.front_mut()?;
        let chunk = chunk.clone();
        if *times != u64::MAX {
            *times -= 1;
            if *times == 0 {
                self.segments.pop_front();
            }
        }
        Some(chunk)
    }

    /// Total bytes left, or `None` when the body never ends.
    pub fn remaining_bytes(&self) -> Option<u64> {
        self.segments
            .iter()
            .try_fold(0u64, |total, (chunk, times)| {
                if *times == u64::MAX {
                    None
                } else {
                    total.checked_add((chunk.len() as u64).checked_mul(*times)?)
                }
            })
    }
}

/// Sends one byte every `interval`, forever.
pub struct Drip {
    interval: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// Index into `DRIP_TEXT` of the next byte.
    position: usize,
}

const DRIP_TEXT: &[u8] =
    b"<!DOCTYPE html><html><head><title>Drip</title></head><body><p>still loading...</p>\n";

impl Drip {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            sleep: Box::pin(tokio::time::sleep(interval)),
            position: 0,
        }
    }

    fn poll_byte(&mut self, context: &mut Context<'_>) -> Poll<Bytes> {
        if self.sleep.as_mut().poll(context).is_pending() {
            return Poll::Pending;
        }
        let next_deadline = tokio::time::Instant::now() + self.interval;
        self.sleep.as_mut().reset(next_deadline);
        let byte = DRIP_TEXT[self.position % DRIP_TEXT.len()];
        self.position += 1;
        Poll::Ready(Bytes::copy_from_slice(&[byte]))
    }
}

/// An HTML page of exactly `total_bytes` bytes made of one repeated chunk.
pub fn huge_html(total_bytes: u64) -> RepeatedChunks {
    let prefix = Bytes::from_static(b"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Huge page</title></head><body>\n");
    let suffix = Bytes::from_static(b"</body></html>\n");
    let filler = filler_chunk();
    let fixed = (prefix.len() + suffix.len()) as u64;
    if total_bytes <= fixed {
        return RepeatedChunks::default().push(prefix, 1);
    }
    let filler_bytes = total_bytes - fixed;
    let whole_chunks = filler_bytes / filler.len() as u64;
    let rest = (filler_bytes % filler.len() as u64) as usize;
    RepeatedChunks::default()
        .push(prefix, 1)
        .push(filler.clone(), whole_chunks)
        .push(filler.slice(..rest), 1)
        .push(suffix, 1)
}

/// An HTML page that never ends (served chunked).
pub fn endless_html() -> RepeatedChunks {
    RepeatedChunks::default()
        .push(
            Bytes::from_static(
                b"<!DOCTYPE html>\n<html><head><title>Endless page</title></head><body>\n",
            ),
            1,
        )
        .push(filler_chunk(), u64::MAX)
}

/// 64 KiB of paragraphs.
fn filler_chunk() -> Bytes {
    let sentence = b"<p>This paragraph repeats until the crawler gives up on the page.</p>\n";
    let mut chunk = Vec::with_capacity(FILLER_CHUNK_BYTES);
    while chunk.len() < FILLER_CHUNK_BYTES {
        let take = sentence.len().min(FILLER_CHUNK_BYTES - chunk.len());
        chunk.extend_from_slice(&sentence[..take]);
    }
    Bytes::from(chunk)
}

/// A gzip member that inflates to a large number of zero bytes, kept as a
/// few precomputed pieces (about 1 KiB compressed per MiB inflated).
#[derive(Debug, Clone)]
pub struct GzipBomb {
    /// Gzip header and the deflate blocks of the first MiB of zeros.
    head: Bytes,
    /// Deflate blocks for one more MiB of zeros; valid after any zeros.
    repeated_piece: Bytes,
    repeats: u64,
    /// Final empty deflate block, CRC-32 and size.
    tail: Bytes,
}

impl GzipBomb {
    /// A bomb inflating to at least `min_inflated_bytes` (rounded up to MiB).
    pub fn new(min_inflated_bytes: u64) -> Self {
        let pieces = min_inflated_bytes
            .div_ceil(BOMB_PIECE_INFLATED_BYTES)
            .max(1);
        let inflated_bytes = pieces * BOMB_PIECE_INFLATED_BYTES;
        let zeros = vec![0u8; BOMB_PIECE_INFLATED_BYTES as usize];
        let mut compressor = Compress::new(Compression::best(), false);
        let first = deflate_all(&mut compressor, &zeros, FlushCompress::Sync);
        let repeated_piece = deflate_all(&mut compressor, &zeros, FlushCompress::Sync);
        let final_block = deflate_all(&mut compressor, &[], FlushCompress::Finish);

        // Gzip header: magic, deflate, no flags, no mtime, max compression, unknown OS.
        let mut head = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
        head.extend_from_slice(&first);
        let mut tail = final_block;
        tail.extend_from_slice(&crc32_of_zeros(inflated_bytes).to_le_bytes());
        tail.extend_from_slice(&(inflated_bytes as u32).to_le_bytes());
        Self {
            head: head.into(),
            repeated_piece: repeated_piece.into(),
            repeats: pieces - 1,
            tail: tail.into(),
        }
    }

    pub fn body(&self) -> RepeatedChunks {
        RepeatedChunks::default()
            .push(self.head.clone(), 1)
            .push(self.repeated_piece.clone(), self.repeats)
            .push(self.tail.clone(), 1)
    }
}

/// Runs the compressor over all of `input` and the flush, returning its output.
fn deflate_all(compressor: &mut Compress, mut input: &[u8], flush: FlushCompress) -> Vec<u8> {
    let mut output = Vec::with_capacity(16 * 1024);
    loop {
        if output.capacity() - output.len() < 1024 {
            output.reserve(16 * 1024);
        }
        let consumed_before = compressor.total_in();
        let status = compressor
            .compress_vec(input, &mut output, flush)
            .expect("deflating an in-memory buffer cannot fail");
        input = &input[(compressor.total_in() - consumed_before) as usize..];
        let output_has_room = output.len() < output.capacity();
        match status {
            Status::StreamEnd => break,
            _ if input.is_empty() && output_has_room && !matches!(flush, FlushCompress::Finish) => {
                break
            }
            _ => {}
        }
    }
    output
}

/// CRC-32 (IEEE) of `length` zero bytes, computed in O(log length) with the
/// GF(2) matrix method of zlib's `crc32_combine`.
pub fn crc32_of_zeros(length: u64) -> u32 {
    type Matrix = [u32; 32];
    fn times(matrix: &Matrix, mut vector: u32) -> u32 {
        let mut sum = 0;
        let mut row = 0;
        while vector != 0 {
            if vector & 1 != 0 {
                sum ^= matrix[row];
            }
            vector >>= 1;
            row += 1;
        }
        sum
    }
    fn square(matrix: &Matrix) -> Matrix {
        let mut result = [0; 32];
        for (row, cell) in result.iter_mut().enumerate() {
            *cell = times(matrix, matrix[row]);
        }
        result
    }
    // The operator for one zero bit through the reflected register.
    let mut operator: Matrix = [0; 32];
    operator[0] = 0xedb8_8320;
    for (row, cell) in operator.iter_mut().enumerate().skip(1) {
        *cell = 1 << (row - 1);
    }
    // Up to one zero byte (8 bits).
    for _ in 0..3 {
        operator = square(&operator);
    }
    let mut register = 0xffff_ffffu32;
    let mut remaining = length;
    while remaining != 0 {
        if remaining & 1 != 0 {
            register = times(&operator, register);
        }
        remaining >>= 1;
        if remaining != 0 {
            operator = square(&operator);
        }
    }
    register ^ 0xffff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn collect(chunks: RepeatedChunks) -> Vec<u8> {
        let mut chunks = chunks;
        let mut all = Vec::new();
        while let Some(chunk) = chunks.next_chunk() {
            all.extend_from_slice(&chunk);
        }
        all
    }

    #[test]
    fn crc_of_zeros_matches_direct_computation() {
        for length in [0u64, 1, 7, 1000, 65_536, 1_048_577] {
            let mut crc = flate2::Crc::new();
            crc.update(&vec![0u8; length as usize]);
            assert_eq!(crc32_of_zeros(length), crc.sum(), "length {length}");
        }
    }

    #[test]
    fn gzip_bomb_inflates_to_the_promised_size_with_a_valid_trailer() {
        let bomb = GzipBomb::new(16 * 1024 * 1024);
        let compressed = collect(bomb.body());
        assert!(
            compressed.len() < 64 * 1024,
            "{} compressed bytes",
            compressed.len()
        );
        let mut decoder = flate2::read::GzDecoder::new(&compressed[..]);
        let mut buffer = vec![0u8; 1 << 16];
        let mut inflated = 0u64;
        loop {
            let read = decoder
                .read(&mut buffer)
                .expect("valid gzip with matching CRC");
            if read == 0 {
                break;
            }
            assert!(buffer[..read].iter().all(|byte| *byte == 0));
            inflated += read as u64;
        }
        assert_eq!(inflated, 16 * 1024 * 1024);
    }

    #[test]
    fn huge_body_has_exactly_the_requested_size() {
        let body = huge_html(1_000_000);
        assert_eq!(body.remaining_bytes(), Some(1_000_000));
        let bytes = collect(body);
        assert_eq!(bytes.len(), 1_000_000);
        assert!(bytes.ends_with(b"</body></html>\n"));
    }

    #[test]
    fn endless_body_has_no_size() {
        assert_eq!(endless_html().remaining_bytes(), None);
    }
}
