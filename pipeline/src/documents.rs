//! Stored documents as the store keeps them: a compact **document record**
//! per URL ([`DocRecord`], in `Keys::document`), and the full document
//! ([`StoredDocument`], the line format of `crawler export`) in a text
//! segment file (`texts`) or, when texts stay in the store, compressed in
//! the record itself ([`Body`]).
//!
//! Written by contentseen; read by `crawler query`, `crawler export` and
//! contentseen (a duplicate's original, a refetched page). The record
//! holds what `crawler query --why`, `--duplicates` and an export's
//! filters need without the text: URL, title, author, date, fingerprint,
//! verdict (the original's URL hash), distance, radius, Jaccard estimate,
//! article flag, tokens, crawl, fetch time, export sequence, the refetch
//! interval, and where the full document is. Records are stored packed
//! with a zstd dictionary trained on the crawl's own records
//! ([`crate::dictionaries`]): [`Documents::pack`] and [`Documents::record_of`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dictionaries::{Dictionaries, DictionaryError};
use crate::keys::{url_hash, Keys};
use crate::messages::{rfc3339_from_unix, unix_of_rfc3339, CodecError, StoredDocument};
use crate::store::{Op, Reply, Store, StoreError};

/// The document record of one URL (MessagePack, by position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocRecord {
    pub url: String,
    pub title: Option<String>,
    pub author: Option<String>,
    pub published: Option<Time>,
    pub simhash: u64,
    /// The URL hash of the original, for a near-duplicate.
    pub duplicate_of: Option<u64>,
    pub distance: Option<u32>,
    pub radius: Option<u32>,
    pub jaccard: Option<f32>,
    pub article: bool,
    pub tokens: u32,
    pub crawl: String,
    /// Unix seconds when the time is whole seconds in UTC, else as written.
    pub fetched_at: Time,
    /// Refetches: the current interval in seconds, how many found it
    /// unchanged in a row, and when one last found it changed.
    pub recrawl: Option<Recrawl>,
    pub body: Body,
}

/// A time as written: Unix seconds (UTC, `Z`), Unix seconds and the
/// offset in minutes that it was written in, or text that is neither.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Time {
    Unix(i64),
    Offset(i64, i16),
    Text(String),
}

impl Time {
    /// The compact form of an RFC 3339 time to the second, or the text.
    pub fn of(text: &str) -> Time {
        if let Some(s) = unix_of_rfc3339(text) {
            return Time::Unix(s);
        }
        let offset = text
            .len()
            .checked_sub(6)
            .and_then(|at| text.get(at..))
            .and_then(|o| {
                let sign = match o.as_bytes().first()? {
                    b'+' => 1,
                    b'-' => -1,
                    _ => return None,
                };
                let h: i16 = o.get(1..3)?.parse().ok()?;
                let m: i16 = o.get(4..6)?.parse().ok()?;
                (o.as_bytes().get(3) == Some(&b':')).then_some(sign * (h * 60 + m))
            });
        match (text.parse::<jiff::Timestamp>(), offset) {
            (Ok(t), Some(off)) => {
                let compact = Time::Offset(t.as_second(), off);
                if compact.text() == text {
                    compact
                } else {
                    Time::Text(text.to_string())
                }
            }
            _ => Time::Text(text.to_string()),
        }
    }

    /// As written.
    pub fn text(&self) -> String {
        match self {
            Time::Unix(s) => rfc3339_from_unix(*s),
            Time::Offset(s, off) => {
                let zone = jiff::tz::Offset::from_seconds(i32::from(*off) * 60)
                    .unwrap_or(jiff::tz::Offset::UTC)
                    .to_time_zone();
                jiff::Timestamp::from_second(*s)
                    .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
                    .to_zoned(zone)
                    .strftime("%Y-%m-%dT%H:%M:%S%:z")
                    .to_string()
            }
            Time::Text(t) => t.clone(),
        }
    }
}

/// What refetches have learned about a stored page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recrawl {
    pub interval_secs: u64,
    pub unchanged: u32,
    pub changed_at: Option<Time>,
}

/// Where the full document is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Body {
    /// A line of a text segment.
    #[serde(rename = "f")]
    File(texts::Location),
    /// The document's JSON, zstd-compressed, in the record.
    #[serde(rename = "i")]
    Inline(#[serde(with = "serde_bytes")] Vec<u8>),
}

/// Reading a stored document failed.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("document record of {url}: {source}")]
    Record {
        url: String,
        #[source]
        source: CodecError,
    },
    #[error("document of {url}: {source}")]
    Text {
        url: String,
        #[source]
        source: texts::TextError,
    },
    #[error(
        "document of {url} is in a text segment, but no text directory is set (CRAWLER_TEXT_DIR)"
    )]
    NoTextDir { url: String },
    #[error("document of {url}: not a stored document: {reason}")]
    Json { url: String, reason: String },
    #[error("document record of {url}: {source}")]
    Packed {
        url: String,
        #[source]
        source: DictionaryError,
    },
}

impl DocRecord {
    pub fn encode(&self) -> Vec<u8> {
        rmp_serde::to_vec(self).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Result<DocRecord, CodecError> {
        Ok(rmp_serde::from_slice(bytes)?)
    }

    /// The record of `doc`, its full document in `body`.
    pub fn of(doc: &StoredDocument, duplicate_of: Option<u64>, body: Body) -> DocRecord {
        DocRecord {
            url: doc.url.clone(),
            title: doc.title.clone(),
            author: doc.author.clone(),
            published: doc.published.as_deref().map(Time::of),
            simhash: u64::from_str_radix(&doc.simhash, 16).unwrap_or(0),
            duplicate_of,
            distance: doc.distance,
            radius: doc.radius,
            jaccard: doc.jaccard,
            article: doc.article,
            tokens: doc.tokens,
            crawl: doc.crawl.clone(),
            fetched_at: Time::of(&doc.fetched_at),
            recrawl: None,
            body,
        }
    }
}

/// A document's full JSON, zstd-compressed, for [`Body::Inline`].
pub fn inline(json: &[u8]) -> Body {
    Body::Inline(crate::zstd_contexts::compress(json, 3).unwrap_or_default())
}

/// Reads the documents of the store: their records, and their full form
/// from the text segments (under `text_dir`) or the records.
#[derive(Clone)]
pub struct Documents {
    store: Store,
    keys: Keys,
    text_dir: Option<PathBuf>,
    dictionaries: std::sync::Arc<Dictionaries>,
}

/// The longest a stored document's JSON may decompress to.
const MAX_DOCUMENT_BYTES: usize = 64 << 20;

impl Documents {
    pub fn new(store: Store, namespace: &str, text_dir: Option<&Path>) -> Documents {
        let keys = Keys::new(namespace);
        Documents {
            dictionaries: std::sync::Arc::new(Dictionaries::new(store.clone(), keys.clone())),
            store,
            keys,
            text_dir: text_dir.map(Path::to_path_buf),
        }
    }

    /// `record` as it is stored: MessagePack, packed with the crawl's
    /// dictionary when that is shorter ([`crate::dictionaries`]).
    pub async fn pack(&self, record: &DocRecord) -> Result<Vec<u8>, DocumentError> {
        let plain = record.encode();
        // A record that keeps its text ends with it, compressed already.
        let raw_tail = match &record.body {
            Body::Inline(z) if plain.ends_with(z) => z.len(),
            _ => 0,
        };
        self.dictionaries
            .pack(plain, raw_tail)
            .await
            .map_err(|source| DocumentError::Packed {
                url: record.url.clone(),
                source,
            })
    }

    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// The op reading the record of URL hash `h`.
    pub fn record_op(&self, h: u64) -> Op {
        let (key, field) = self.keys.document(h);
        Op::HGet { key, field }
    }

    /// A record from its op's reply (`None`: not stored).
    pub async fn record_of(
        &self,
        reply: &Reply,
        what: &str,
    ) -> Result<Option<DocRecord>, DocumentError> {
        let Some(stored) = reply.data()? else {
            return Ok(None);
        };
        let plain =
            self.dictionaries
                .unpack(stored)
                .await
                .map_err(|source| DocumentError::Packed {
                    url: what.to_string(),
                    source,
                })?;
        DocRecord::decode(&plain)
            .map(Some)
            .map_err(|source| DocumentError::Record {
                url: what.to_string(),
                source,
            })
    }

    /// The records of these URL hashes, in order.
    pub async fn records(&self, hashes: &[u64]) -> Result<Vec<Option<DocRecord>>, DocumentError> {
        let ops: Vec<Op> = hashes.iter().map(|&h| self.record_op(h)).collect();
        let replies = self.store.exec(&ops).await?;
        let mut out = Vec::with_capacity(hashes.len());
        for (h, r) in hashes.iter().zip(&replies) {
            out.push(self.record_of(r, &format!("{h:016x}")).await?);
        }
        Ok(out)
    }

    /// The record of `url`.
    pub async fn record(&self, url: &str) -> Result<Option<DocRecord>, DocumentError> {
        let reply = self.store.one(self.record_op(url_hash(url))).await?;
        self.record_of(&reply, url).await
    }

    /// The full document of a record (`reader` keeps the last segment
    /// frame it read, for reads in export order).
    pub fn full(
        &self,
        record: &DocRecord,
        reader: &mut Option<texts::Reader>,
    ) -> Result<StoredDocument, DocumentError> {
        let json = match &record.body {
            Body::File(loc) => {
                let dir = self
                    .text_dir
                    .as_deref()
                    .ok_or_else(|| DocumentError::NoTextDir {
                        url: record.url.clone(),
                    })?;
                let r =
                    reader.get_or_insert_with(|| texts::Reader::new(dir, self.keys.namespace()));
                r.read(loc).map_err(|source| DocumentError::Text {
                    url: record.url.clone(),
                    source,
                })?
            }
            Body::Inline(z) => {
                zstd::bulk::decompress(z, MAX_DOCUMENT_BYTES).map_err(|e| DocumentError::Json {
                    url: record.url.clone(),
                    reason: e.to_string(),
                })?
            }
        };
        let mut doc: StoredDocument =
            serde_json::from_slice(&json).map_err(|e| DocumentError::Json {
                url: record.url.clone(),
                reason: e.to_string(),
            })?;
        // What refetches changed since the document was written.
        doc.fetched_at = record.fetched_at.text();
        if let Some(r) = &record.recrawl {
            doc.unchanged = r.unchanged;
            doc.changed_at = r.changed_at.as_ref().map(Time::text);
        }
        Ok(doc)
    }

    /// The stored document of `url`, in full.
    pub async fn document(&self, url: &str) -> Result<Option<StoredDocument>, DocumentError> {
        match self.record(url).await? {
            Some(r) => Ok(Some(self.full(&r, &mut None)?)),
            None => Ok(None),
        }
    }

    /// The next `n` URL hashes of each export log from its position in
    /// `cursor`, in tag order, and the cursor past them.
    pub async fn logged(
        &self,
        cursor: &Cursor,
        n: i64,
    ) -> Result<(Vec<u64>, Cursor), DocumentError> {
        let logs = self.keys.document_logs();
        let ops: Vec<Op> = logs
            .iter()
            .enumerate()
            .map(|(t, key)| Op::LRange {
                key: key.clone(),
                start: cursor.at(t),
                stop: cursor.at(t) + n - 1,
            })
            .collect();
        let mut next = cursor.clone();
        let mut out = Vec::new();
        for (t, reply) in self.store.exec(&ops).await?.into_iter().enumerate() {
            let hashes = reply.ints()?;
            next.advance(t, hashes.len() as i64);
            out.extend(hashes.into_iter().map(|h| h as u64));
        }
        next.trim();
        Ok((out, next))
    }
}

/// Where an export stopped: a position in each export log. Written and read
/// as the text `crawler export` prints: `v1:` and `log.position` of each
/// log past its start, commas between (`v1:0.12,7.3`); `0` or empty is
/// the start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor(Vec<i64>);

impl Cursor {
    fn at(&self, log: usize) -> i64 {
        self.0.get(log).copied().unwrap_or(0)
    }

    fn advance(&mut self, log: usize, by: i64) {
        if self.0.len() <= log {
            self.0.resize(log + 1, 0);
        }
        self.0[log] += by;
    }

    /// Without the positions at 0 at its end (as it is written).
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// Whether it is the start.
    pub fn is_start(&self) -> bool {
        self.0.iter().all(|&p| p == 0)
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, p)| **p > 0)
            .map(|(log, p)| format!("{log}.{p}"))
            .collect();
        if parts.is_empty() {
            return f.write_str("0");
        }
        write!(f, "v1:{}", parts.join(","))
    }
}

impl std::str::FromStr for Cursor {
    type Err = String;
    fn from_str(s: &str) -> Result<Cursor, String> {
        let s = s.trim();
        if s.is_empty() || s == "0" {
            return Ok(Cursor::default());
        }
        let Some(rest) = s.strip_prefix("v1:") else {
            return Err(format!(
                "{s:?} is not a cursor: give the one `crawler export` printed (or 0)"
            ));
        };
        let bad = || format!("{s:?} is not a cursor: give the one `crawler export` printed");
        let mut c = Cursor::default();
        for part in rest.split(',') {
            let (log, at) = part.split_once('.').ok_or_else(bad)?;
            let log: usize = log.parse().map_err(|_| bad())?;
            let at: i64 = at.parse().map_err(|_| bad())?;
            if log >= 1 << pipeline_tag_bits() || at < 0 {
                return Err(bad());
            }
            c.advance(log, at);
        }
        c.trim();
        Ok(c)
    }
}

/// How many export logs there are, as bits (one per URL tag).
fn pipeline_tag_bits() -> u32 {
    crate::keys::URL_TAG_BITS
}

/// The op that logs document `h` for export (its record's step does it
/// when it stores the record; a changed refetch logs it again).
pub fn log_op(keys: &Keys, h: u64) -> Op {
    Op::RPush {
        key: keys.document_log(h),
        values: vec![(h as i64).to_string().into_bytes()],
    }
}

/// The op that lists `duplicate` under its `original` (idempotent; in the
/// original's slot).
pub fn duplicate_op(keys: &Keys, original: u64, duplicate: u64) -> Op {
    Op::HSet {
        key: keys.duplicates(original),
        fields: vec![(
            crate::keys::hash_field(duplicate),
            (original as i64).to_string().into_bytes(),
        )],
    }
}

/// The URL hashes listed as near-duplicates of `original`.
pub async fn duplicates_of(
    store: &Store,
    keys: &Keys,
    original: u64,
) -> Result<Vec<u64>, StoreError> {
    let reply = store
        .one(Op::HGetAll {
            key: keys.duplicates(original),
        })
        .await?;
    let mut out = Vec::new();
    for (dup, orig) in reply.pairs()? {
        if orig.int()? as u64 == original {
            out.push(String::from_utf8_lossy(&dup).parse::<i64>().unwrap_or(0) as u64);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(url: &str) -> StoredDocument {
        serde_json::from_value(serde_json::json!({
            "url": url, "final_url": url, "status": 200, "encoding": "UTF-8",
            "title": "A title of the kind news sites give their articles", "published": "2026-11-27T08:00:00+01:00",
            "author": "Ann Writer", "text": "body ".repeat(1000),
            "simhash": "00000000000000ff", "duplicate_of": null, "distance": null,
            "fetched_at": "2026-11-27T10:00:00Z", "crawl": "news", "tokens": 1000
        }))
        .expect("a stored document")
    }

    #[test]
    fn times_keep_their_offset_compactly() {
        for text in [
            "2026-11-27T08:00:00+01:00",
            "2026-11-27T08:00:00-05:30",
            "2026-11-27T08:00:00Z",
            "2026-11-27",
            "2026-11-27T08:00:00.250+01:00",
            "yesterday",
        ] {
            assert_eq!(Time::of(text).text(), text);
        }
        assert!(matches!(
            Time::of("2026-11-27T08:00:00+08:00"),
            Time::Offset(_, 480)
        ));
    }

    #[tokio::test]
    async fn records_are_compact_and_give_the_document_back() {
        let d = doc("https://www.example-news.com/2026/11/27/a-story-of-the-day-123456.html");
        let json = serde_json::to_vec(&d).unwrap();
        let file = DocRecord::of(
            &d,
            None,
            Body::File(texts::Location {
                segment: 3,
                offset: 123_456,
                len: 20_000,
                line: 7,
            }),
        );
        let bytes = file.encode().len();
        // URL (70) and title (51) are most of it.
        assert!(bytes < 190, "{bytes} bytes");
        let store = Store::memory();
        let docs = Documents::new(store.clone(), "t", None);
        let rec = DocRecord::of(&d, None, inline(&json));
        let (key, field) = docs.keys().document(url_hash(&d.url));
        store
            .one(Op::HSet {
                key,
                fields: vec![(field, rec.encode())],
            })
            .await
            .unwrap();
        assert_eq!(docs.document(&d.url).await.unwrap(), Some(d.clone()));
        store
            .exec(&[log_op(docs.keys(), url_hash(&d.url))])
            .await
            .unwrap();
        let (got, cursor) = docs.logged(&Cursor::default(), 10).await.unwrap();
        assert_eq!(got, vec![url_hash(&d.url)]);
        let again: Cursor = cursor.to_string().parse().unwrap();
        assert_eq!(again, cursor);
        assert!(docs.logged(&again, 10).await.unwrap().0.is_empty());
        assert!("12".parse::<Cursor>().is_err());
        // A record in a file, with no text directory: a clear error.
        assert!(matches!(
            docs.full(&file, &mut None),
            Err(DocumentError::NoTextDir { .. })
        ));
    }
}
