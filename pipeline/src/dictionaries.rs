//! zstd dictionaries for document records: the record of a page (URL,
//! title, author, numbers; about 270 bytes) is too short for zstd alone,
//! but a dictionary trained on the crawl's own records halves it.
//!
//! Owns the keys `<ns>:dicts` (a hash from dictionary id to its bytes,
//! written once per id, never changed) and `<ns>:dictseq` (the counter that
//! numbers them). Both are single keys, read and written by single-key
//! steps, so they work on a Redis Cluster, in memory and on disk alike.
//!
//! - **Writing** (contentseen, through [`Dictionaries::pack`]): every
//!   process keeps a uniform sample of the records it wrote (at most
//!   [`SAMPLES`], each cut at [`SAMPLE_BYTES`]), and trains a dictionary of
//!   [`DICTIONARY_BYTES`] when it has written 1,000, 10,000, 100,000 and
//!   1,000,000 records (so a crawl whose pages change from its first sites
//!   to others gets a dictionary of the later ones too). A new dictionary
//!   is stored (`INCR dictseq`, `HSET dicts`) before any record names it;
//!   records written before the first one stay plain.
//! - **A packed record** is `0xC1` (a byte MessagePack never uses, so a
//!   plain record, a MessagePack array, is never mistaken for one), the
//!   dictionary id and the plain length as LEB128, then a zstd frame
//!   without magic number, checksum, dictionary id or content size. A
//!   record that keeps its text (compressed already) ends with it: only
//!   its head is packed, and the text follows the frame as it is
//!   ([`PACKED_HEAD`]). A record is packed only when that is shorter than
//!   its plain form.
//! - **Reading** ([`Dictionaries::unpack`]): a plain record is returned as
//!   it is; a packed one is decompressed with its dictionary, read from the
//!   store the first time it is needed and kept for the process's life.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rand::RngExt;
use zstd::zstd_safe::{CParameter, DParameter, FrameFormat};

use crate::keys::Keys;
use crate::store::{Op, Store, StoreError};

/// The first byte of a packed record.
pub const PACKED: u8 = 0xC1;

/// The first byte of a record packed up to a tail kept as it is (the
/// compressed text a record kept in the store ends with): `0xC2` (a
/// MessagePack `false`, which a record, an array, never is), the
/// dictionary id, the head's plain length and its frame's length as
/// LEB128, the frame, then the tail.
pub const PACKED_HEAD: u8 = 0xC2;

/// The bytes of each trained dictionary.
pub const DICTIONARY_BYTES: usize = 32 * 1024;

/// How many records a process keeps as its training sample.
pub const SAMPLES: usize = 8192;

/// How much of each record goes into the sample (its start holds the
/// URL, title and author; a text kept in the record comes last and is
/// compressed already).
pub const SAMPLE_BYTES: usize = 512;

/// After how many records written a process trains a dictionary.
const TRAIN_AT: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// The zstd level of packed records (level 3 packs a record in about
/// 15 µs; 19 saves 5% more for 20 times the time).
const LEVEL: i32 = 3;

/// The longest plain record [`Dictionaries::unpack`] accepts: a record
/// that keeps its document's text holds it compressed, up to 64 MB.
const MAX_RECORD_BYTES: usize = 65 << 20;

/// Packing or unpacking a record failed.
#[derive(Debug, thiserror::Error)]
pub enum DictionaryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("packed record: {0}")]
    Corrupt(String),
    #[error("packed record names dictionary {0}, which the store does not hold")]
    Missing(u64),
}

/// The dictionaries of one namespace, shared by the clones of a
/// [`crate::documents::Documents`].
pub struct Dictionaries {
    store: Store,
    keys: Keys,
    state: Mutex<State>,
}

struct State {
    /// Decompressors by dictionary id.
    readers: HashMap<u64, Arc<Mutex<zstd::bulk::Decompressor<'static>>>>,
    /// The dictionary this process packs with, and its id.
    writer: Option<(u64, zstd::bulk::Compressor<'static>)>,
    /// The training sample (reservoir) and how many records were offered.
    samples: Vec<Vec<u8>>,
    written: u64,
}

impl Dictionaries {
    pub fn new(store: Store, keys: Keys) -> Dictionaries {
        Dictionaries {
            store,
            keys,
            state: Mutex::new(State {
                readers: HashMap::new(),
                writer: None,
                samples: Vec::new(),
                written: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held leaves nothing half-done that a
        // later use could trip on: every field is replaced whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `plain` (a record's MessagePack) as it is stored: packed with this
    /// process's dictionary when that is shorter. Trains and stores a new
    /// dictionary when the records written reach the next step of
    /// `TRAIN_AT`; a training that fails leaves records plain until the
    /// next step.
    ///
    /// Its last `raw_tail` bytes (already compressed: the text of a record
    /// that keeps it) are kept as they are, after the packed head: running
    /// the dictionary's compressor over them cost contentseen 13% of its
    /// CPU and saved nothing.
    pub async fn pack(&self, plain: Vec<u8>, raw_tail: usize) -> Result<Vec<u8>, DictionaryError> {
        let head = plain.len().saturating_sub(raw_tail);
        let due = {
            let mut s = self.state();
            s.written += 1;
            let n = s.written;
            let sample = plain[..head.min(SAMPLE_BYTES)].to_vec();
            if s.samples.len() < SAMPLES {
                s.samples.push(sample);
            } else {
                let at = rand::rng().random_range(0..n) as usize;
                if let Some(slot) = s.samples.get_mut(at) {
                    *slot = sample;
                }
            }
            TRAIN_AT.contains(&n).then(|| s.samples.clone())
        };
        if let Some(samples) = due {
            if let Err(e) = self.train(samples).await {
                tracing::warn!(error = %e, "training a record dictionary failed; records stay as they are");
            }
        }
        let mut s = self.state();
        let Some((id, compressor)) = s.writer.as_mut() else {
            return Ok(plain);
        };
        let id = *id;
        match compressor.compress(&plain[..head]) {
            Ok(frame) => {
                let tail = &plain[head..];
                let mut out = Vec::with_capacity(frame.len() + tail.len() + 12);
                if tail.is_empty() {
                    out.push(PACKED);
                    leb128(&mut out, id);
                    leb128(&mut out, plain.len() as u64);
                } else {
                    out.push(PACKED_HEAD);
                    leb128(&mut out, id);
                    leb128(&mut out, head as u64);
                    leb128(&mut out, frame.len() as u64);
                }
                out.extend_from_slice(&frame);
                out.extend_from_slice(tail);
                Ok(if out.len() < plain.len() { out } else { plain })
            }
            Err(_) => Ok(plain),
        }
    }

    /// Trains a dictionary on `samples`, stores it and packs with it from
    /// now on.
    async fn train(&self, samples: Vec<Vec<u8>>) -> Result<(), DictionaryError> {
        let dictionary = tokio::task::spawn_blocking(move || {
            zstd::dict::from_samples(&samples, DICTIONARY_BYTES)
        })
        .await
        .map_err(|e| DictionaryError::Corrupt(format!("training task: {e}")))?
        .map_err(|e| DictionaryError::Corrupt(format!("training: {e}")))?;
        let id = self
            .store
            .one(Op::Incr {
                key: self.keys.dictionary_sequence(),
                by: 1,
            })
            .await?
            .int()? as u64;
        // Stored before any record names it.
        self.store
            .one(Op::HSet {
                key: self.keys.dictionaries(),
                fields: vec![(id.to_string(), dictionary.clone())],
            })
            .await?;
        let compressor = compressor(&dictionary)?;
        let reader = decompressor(&dictionary)?;
        let mut s = self.state();
        s.writer = Some((id, compressor));
        s.readers.insert(id, Arc::new(Mutex::new(reader)));
        Ok(())
    }

    /// A stored record's MessagePack: `stored` itself when it is plain,
    /// else unpacked with its dictionary.
    pub async fn unpack(&self, stored: Vec<u8>) -> Result<Vec<u8>, DictionaryError> {
        let with_tail = match stored.first() {
            Some(&PACKED) => false,
            Some(&PACKED_HEAD) => true,
            _ => return Ok(stored),
        };
        let corrupt = |what: &str| DictionaryError::Corrupt(what.to_string());
        let mut at = 1;
        let id = read_leb128(&stored, &mut at).ok_or_else(|| corrupt("no dictionary id"))?;
        let len = read_leb128(&stored, &mut at).ok_or_else(|| corrupt("no length"))? as usize;
        if len > MAX_RECORD_BYTES {
            return Err(corrupt(&format!("a length of {len} bytes")));
        }
        let (frame, tail) = match with_tail {
            false => (
                stored.get(at..).ok_or_else(|| corrupt("no frame"))?,
                &[][..],
            ),
            true => {
                let n = read_leb128(&stored, &mut at).ok_or_else(|| corrupt("no frame length"))?;
                let end = usize::try_from(n)
                    .ok()
                    .and_then(|n| at.checked_add(n))
                    .filter(|&end| end <= stored.len())
                    .ok_or_else(|| corrupt("a frame past the record's end"))?;
                (&stored[at..end], &stored[end..])
            }
        };
        if tail.len() > MAX_RECORD_BYTES {
            return Err(corrupt(&format!("a tail of {} bytes", tail.len())));
        }
        let reader = self.reader(id).await?;
        let mut out = Vec::with_capacity(len);
        let got = reader
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .decompress_to_buffer(frame, &mut out)
            .map_err(|e| corrupt(&e.to_string()))?;
        if got != len {
            return Err(corrupt(&format!("{got} bytes where {len} were written")));
        }
        out.extend_from_slice(tail);
        Ok(out)
    }

    /// The decompressor of dictionary `id`, read from the store the first
    /// time.
    async fn reader(
        &self,
        id: u64,
    ) -> Result<Arc<Mutex<zstd::bulk::Decompressor<'static>>>, DictionaryError> {
        if let Some(r) = self.state().readers.get(&id) {
            return Ok(r.clone());
        }
        let dictionary = self
            .store
            .one(Op::HGet {
                key: self.keys.dictionaries(),
                field: id.to_string(),
            })
            .await?
            .data()?
            .ok_or(DictionaryError::Missing(id))?;
        let reader = Arc::new(Mutex::new(decompressor(&dictionary)?));
        Ok(self.state().readers.entry(id).or_insert(reader).clone())
    }
}

fn compressor(dictionary: &[u8]) -> Result<zstd::bulk::Compressor<'static>, DictionaryError> {
    let bad = |e: std::io::Error| DictionaryError::Corrupt(format!("dictionary: {e}"));
    let mut c = zstd::bulk::Compressor::with_dictionary(LEVEL, dictionary).map_err(bad)?;
    c.set_parameter(CParameter::Format(FrameFormat::Magicless))
        .map_err(bad)?;
    c.include_checksum(false).map_err(bad)?;
    c.include_dictid(false).map_err(bad)?;
    c.include_contentsize(false).map_err(bad)?;
    Ok(c)
}

fn decompressor(dictionary: &[u8]) -> Result<zstd::bulk::Decompressor<'static>, DictionaryError> {
    let bad = |e: std::io::Error| DictionaryError::Corrupt(format!("dictionary: {e}"));
    let mut d = zstd::bulk::Decompressor::with_dictionary(dictionary).map_err(bad)?;
    d.set_parameter(DParameter::Format(FrameFormat::Magicless))
        .map_err(bad)?;
    Ok(d)
}

fn leb128(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_leb128(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64) -> Vec<u8> {
        // Records alike in shape and words, as a crawl's are.
        let words = [
            "market", "city", "council", "report", "season", "club", "price",
        ];
        let w = |k: u64| words[(k % words.len() as u64) as usize];
        rmp_serde::to_vec(&(
            format!(
                "https://www.news-{}.example/2026/11/{}-{}-{i}.html",
                i % 50,
                w(i),
                w(i / 7)
            ),
            format!(
                "The {} {} and the {} of the {}",
                w(i / 3),
                w(i),
                w(i / 11),
                w(i / 5)
            ),
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            true,
        ))
        .unwrap_or_default()
    }

    #[tokio::test]
    async fn records_are_packed_after_training_and_read_back_by_another_process() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let writer = Dictionaries::new(store.clone(), keys.clone());
        let mut stored = Vec::new();
        for i in 0..1_500 {
            stored.push((record(i), writer.pack(record(i), 0).await.unwrap()));
        }
        // Plain before the first dictionary (trained as the 1,000th is
        // written), packed and shorter from then on.
        assert!(stored[..999].iter().all(|(p, s)| p == s));
        let (plain, packed): (usize, usize) = stored[999..]
            .iter()
            .map(|(p, s)| (p.len(), s.len()))
            .fold((0, 0), |(a, b), (p, s)| (a + p, b + s));
        assert!(stored[999..].iter().all(|(_, s)| s[0] == PACKED));
        assert!(packed * 3 < plain * 2, "{packed} of {plain} bytes");
        // A reader that did not train reads the dictionary from the store.
        let reader = Dictionaries::new(store, keys);
        for (p, s) in &stored {
            assert_eq!(&reader.unpack(s.clone()).await.unwrap(), p);
        }
    }

    /// A record that ends with compressed bytes (its text) has its head
    /// packed and its tail kept as it is, and reads back whole.
    #[tokio::test]
    async fn a_raw_tail_is_kept_after_the_packed_head() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let writer = Dictionaries::new(store.clone(), keys.clone());
        let with_tail = |i: u64| {
            let mut r = record(i);
            let tail: Vec<u8> = (0..2_000u64)
                .map(|k| (k.wrapping_add(i).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
                .collect();
            r.extend_from_slice(&tail);
            r
        };
        let mut stored = Vec::new();
        for i in 0..1_200 {
            stored.push((
                with_tail(i),
                writer.pack(with_tail(i), 2_000).await.unwrap(),
            ));
        }
        assert!(stored[..999].iter().all(|(p, s)| p == s));
        for (p, s) in &stored[999..] {
            assert_eq!(s[0], PACKED_HEAD);
            assert!(s.ends_with(&p[p.len() - 2_000..]));
            assert!(s.len() + 40 < p.len(), "{} of {} bytes", s.len(), p.len());
        }
        let reader = Dictionaries::new(store, keys);
        for (p, s) in &stored {
            assert_eq!(&reader.unpack(s.clone()).await.unwrap(), p);
        }
    }

    #[tokio::test]
    async fn broken_packed_records_are_clear_errors() {
        let d = Dictionaries::new(Store::memory(), Keys::new("t"));
        for bad in [
            vec![PACKED],
            vec![PACKED, 0x80],
            vec![PACKED, 5, 10, 1, 2, 3],
            vec![PACKED, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 1],
            vec![PACKED_HEAD],
            vec![PACKED_HEAD, 1, 10],
            vec![PACKED_HEAD, 1, 10, 50, 1, 2],
            vec![
                PACKED_HEAD,
                1,
                10,
                0xFF,
                0xFF,
                0xFF,
                0xFF,
                0xFF,
                0xFF,
                0xFF,
                0xFF,
                0xFF,
                0x01,
            ],
            vec![PACKED_HEAD, 5, 10, 2, 1, 2, 9],
        ] {
            assert!(d.unpack(bad.clone()).await.is_err(), "{bad:?}");
        }
        // A plain record is itself.
        assert_eq!(
            d.unpack(vec![0x93, 1, 2, 3]).await.unwrap(),
            vec![0x93, 1, 2, 3]
        );
    }

    #[test]
    fn leb128_round_trips() {
        for v in [0, 1, 127, 128, 300, 1 << 40, u64::MAX] {
            let mut b = Vec::new();
            leb128(&mut b, v);
            let mut at = 0;
            assert_eq!(read_leb128(&b, &mut at), Some(v));
            assert_eq!(at, b.len());
        }
    }
}
