//! The contentseen stage: a [`Document`] in, a [`StoredDocument`] stored.
//!
//! Per document, in pipelined round trips:
//! 1. already stored under this URL (a redelivery)? — in the same pipeline
//!    as the band inserts and the sequence number ([`Table::insert_ops`]);
//! 2. record and look up, and read what the matches need
//!    ([`Table::record_and_decide`], one round when nothing is within k);
//! 3. store the document (a duplicate without its text), then append it to
//!    the export log and link it from its original.
//!
//! Short bodies ([`Fingerprint::Exact`]) skip the table: the first document
//! with the same exact hash (`SETNX exact:<hash>`) is the original.

use pipeline::keys::Keys;
use pipeline::messages::{encode, Document, FetchTask, RawExchange, VERSION};
use pipeline::store::{Op, Reply, StoreError};
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::CrawlSpec;
use pipeline::{Queue, Store, StoredDocument};

use crate::bands::Layout;
use crate::decide::Verdict;
use crate::reach::Reach;
use crate::simhash::{distance, sketch, Fingerprint, Sketch};
use crate::table::Table;

pub struct ContentSeenStage {
    store: Store,
    keys: Keys,
    table: Table,
    /// How far each document's lookup reaches (short bodies further).
    reach: Reach,
    /// Within this distance a refetched page counts as unchanged.
    max_distance: u32,
    /// Where the pages' WARC records go, when the crawl writes them
    /// (`CRAWLER_WARC_DIR`, `crawler run --warc-dir`).
    warc: Option<warc::SharedWriter>,
}

/// How long a near-duplicate's WARC records wait for its original to be
/// stored (its `WARC-Refers-To-*` come from there): the original was
/// decided first and is being stored by another task or worker; past
/// this, the document goes back to the queue.
pub const WARC_ORIGINAL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest adaptive refetch interval.
pub const MAX_RECRAWL_INTERVAL_SECS: u64 = 30 * 24 * 3600;

impl ContentSeenStage {
    pub fn new(store: Store, namespace: &str, layout: Layout) -> Self {
        ContentSeenStage {
            max_distance: layout.max_distance(),
            table: Table::new(store.clone(), namespace, layout),
            reach: Reach::default(),
            store,
            keys: Keys::new(namespace),
            warc: None,
        }
    }

    /// This stage, writing each new page's WARC records to `writer`
    /// (pages that carry their raw HTTP exchange, [`Document::raw`]).
    pub fn with_warc(mut self, writer: Option<warc::SharedWriter>) -> Self {
        self.warc = writer;
        self
    }

    /// Writes the WARC records of a page about to be stored: request,
    /// response and metadata for an original; request, revisit and metadata
    /// for a near-duplicate. Returns the response record's id (`None` for a
    /// near-duplicate). Runs before the document is stored, so a document
    /// found stored has its records written; a worker that dies between
    /// the two writes them again when the document is redelivered.
    async fn write_warc(
        &self,
        writer: &warc::SharedWriter,
        raw: &RawExchange,
        stored: &StoredDocument,
    ) -> Result<Option<String>, StageError> {
        let original = match &stored.duplicate_of {
            Some(of) => Some(self.original_for_warc(of).await?),
            None => None,
        };
        let body = raw
            .body()
            .map_err(|e| StageError::Malformed(format!("raw body of {}: {e}", stored.url)))?;
        let metadata = serde_json::to_vec(stored)
            .map_err(|e| StageError::Malformed(format!("cannot serialize {}: {e}", stored.url)))?;
        let capture = warc::Capture {
            target_uri: &stored.final_url,
            date: &stored.fetched_at,
            request_head: &raw.request,
            response_head: &raw.response,
            body: &body,
            metadata: &metadata,
        };
        let duplicate = original.as_ref().map(|orig| warc::NearDuplicate {
            original: warc::Original {
                target_uri: &orig.final_url,
                date: &orig.fetched_at,
                record_id: orig.warc_record_id.as_deref(),
            },
            distance: stored.distance.unwrap_or(0),
            simhash: &stored.simhash,
            radius: stored.radius,
            jaccard: stored.jaccard,
        });
        let records = warc::records(&capture, duplicate.as_ref());
        let response_id = duplicate.is_none().then(|| records[1].id.clone());
        let writer = writer.clone();
        tokio::task::spawn_blocking(move || writer.write(records))
            .await
            .map_err(|e| StageError::Transient(format!("WARC writer task: {e}")))?
            .map_err(|e| StageError::Transient(e.to_string()))?;
        Ok(response_id)
    }

    /// The stored original `url` of a near-duplicate, waiting up to
    /// [`WARC_ORIGINAL_WAIT`] for it to be stored.
    async fn original_for_warc(&self, url: &str) -> Result<StoredDocument, StageError> {
        let deadline = tokio::time::Instant::now() + WARC_ORIGINAL_WAIT;
        loop {
            let json = self
                .store
                .one(Op::Get {
                    key: self.keys.document(url),
                })
                .await?
                .data()?;
            if let Some(json) = json {
                return serde_json::from_slice(&json)
                    .map_err(|e| StageError::Malformed(format!("stored document {url}: {e}")));
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StageError::Transient(format!(
                    "original {url} not stored yet: the near-duplicate's WARC revisit record needs it"
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Schedules the next refetch of a stored page `in_secs` from now.
    fn schedule_ops(
        &self,
        doc: &Document,
        spec: &CrawlSpec,
        in_secs: u64,
    ) -> Result<Vec<Op>, StageError> {
        let task = FetchTask {
            v: VERSION,
            crawl: spec.clone(),
            url: doc.url.clone(),
            depth: doc.depth,
            redirects: 0,
            attempt: 0,
            recrawl: true,
            // The same for a redelivery of this document (the schedule's
            // member stays one), new for the next version of the page.
            id: FetchTask::derive_id(&["recrawl", &doc.url, &doc.fetched_at]),
        };
        Ok(vec![
            Op::ZAddIn {
                key: self.keys.recrawl_schedule(),
                member: encode(&task)?,
                in_ms: in_secs.saturating_mul(1000),
            },
            Op::HSet {
                key: self.keys.recrawl_interval(),
                fields: vec![(doc.url.clone(), in_secs.to_string().into_bytes())],
            },
        ])
    }

    /// A refetch of a stored page: unchanged (within the near-duplicate
    /// distance, or the same exact hash) doubles its interval; changed
    /// updates the stored document and halves it. `None` when the page is
    /// not stored (it is then handled as new).
    ///
    /// The changed text's new fingerprint is not added to the band tables:
    /// near-duplicates of the new version are found against the old one.
    async fn refetched(
        &self,
        doc: &Document,
        fp: Fingerprint,
        doc_key: &str,
    ) -> Result<Option<Outcome>, StageError> {
        let replies = self
            .store
            .exec(&[
                Op::Get {
                    key: doc_key.to_string(),
                },
                Op::HGet {
                    key: self.keys.recrawl_interval(),
                    field: doc.url.clone(),
                },
            ])
            .await?;
        let Some(json) = replies.first().map(Reply::data).transpose()?.flatten() else {
            return Ok(None);
        };
        let mut stored: StoredDocument = serde_json::from_slice(&json)
            .map_err(|e| StageError::Malformed(format!("stored document {}: {e}", doc.url)))?;
        let base = doc
            .spec
            .as_ref()
            .and_then(|s| s.recrawl_secs)
            .unwrap_or(3600)
            .max(1);
        let interval: u64 = replies
            .get(1)
            .map(Reply::string)
            .transpose()?
            .flatten()
            .and_then(|s| s.parse().ok())
            .unwrap_or(base);
        if stored.fetched_at == doc.fetched_at {
            // A redelivery of a refetch already applied (the document, its
            // counter and its new interval): schedule it again, nothing more.
            if let Some(spec) = &doc.spec {
                self.store
                    .exec(&self.schedule_ops(doc, spec, interval)?)
                    .await?;
            }
            return Ok(Some(Outcome::default()));
        }
        let unchanged = match (fp, u64::from_str_radix(&stored.simhash, 16)) {
            (Fingerprint::Sim(v), Ok(old)) => distance(v, old) <= self.max_distance,
            (Fingerprint::Exact(h), Ok(old)) => h == old,
            _ => false,
        };
        let next = if unchanged {
            stored.unchanged += 1;
            interval.saturating_mul(2).min(MAX_RECRAWL_INTERVAL_SECS)
        } else {
            stored.unchanged = 0;
            stored.changed_at = Some(doc.fetched_at.clone());
            if stored.duplicate_of.is_none() {
                stored.text = doc.text.clone();
            }
            stored.simhash = format!("{:016x}", fp.value());
            stored.title = doc.title.clone();
            stored.published = doc.published.clone();
            stored.author = doc.author.clone();
            stored.authors = doc.authors.clone();
            stored.final_url = doc.final_url.clone();
            stored.status = doc.status;
            stored.encoding = doc.encoding.clone();
            stored.charset_override = doc.charset_override.clone();
            (interval / 2).max((base / 4).max(1))
        };
        stored.fetched_at = doc.fetched_at.clone();
        let json = serde_json::to_vec(&stored)
            .map_err(|e| StageError::Malformed(format!("cannot serialize {}: {e}", doc.url)))?;
        // A changed page goes on the export log again, so an export that
        // resumes from a cursor takes the new version; before the document
        // itself, so a crash between the two repeats the entry (an export
        // writes a URL once) rather than losing it.
        let mut ops = Vec::new();
        if !unchanged {
            ops.push(Op::RPush {
                key: self.keys.document_log(),
                value: doc.url.as_bytes().to_vec(),
            });
        }
        // The document and its counter in one step, once per refetch.
        let (mark, field) = self.keys.once("recrawl", &doc.url);
        ops.push(Op::Once {
            mark,
            field,
            id: doc.fetched_at.clone(),
            sets: vec![(doc_key.to_string(), json)],
            counts: pipeline::crawls::counts(
                &self.keys,
                &doc.crawl,
                &[(if unchanged { "unchanged" } else { "changed" }, 1)],
            ),
        });
        if let Some(spec) = &doc.spec {
            ops.extend(self.schedule_ops(doc, spec, next)?);
        }
        self.store.exec(&ops).await?;
        Ok(Some(Outcome::default()))
    }

    /// The verdict for a document not stored yet, or `None` when it is
    /// stored already (a redelivery).
    async fn verdict(
        &self,
        sketch: &Sketch,
        url: &str,
        doc_key: &str,
    ) -> Result<Option<Verdict>, StageError> {
        let stored = Op::Get {
            key: doc_key.to_string(),
        };
        // A lookup for a SimHash; none for a body too short for one.
        match self.reach.probe(self.table.layout(), sketch) {
            Some(probe) => {
                let mut ops = vec![stored];
                ops.extend(self.table.insert_ops(&[probe]));
                let replies = self.store.exec(&ops).await?;
                if already_stored(&replies)? {
                    return Ok(None);
                }
                let inserted = self
                    .table
                    .inserted(&[probe], replies.get(1..).unwrap_or_default())?;
                let verdicts = self
                    .table
                    .record_and_decide(&[(probe, url)], &inserted)
                    .await?;
                Ok(verdicts.into_iter().next())
            }
            None => {
                let key = self.keys.exact(sketch.fingerprint.value());
                let replies = self
                    .store
                    .exec(&[
                        stored,
                        Op::SetNx {
                            key: key.clone(),
                            value: url.as_bytes().to_vec(),
                        },
                        Op::Get { key },
                    ])
                    .await?;
                if already_stored(&replies)? {
                    return Ok(None);
                }
                Ok(Some(
                    match replies.get(2).map(Reply::string).transpose()?.flatten() {
                        Some(owner) if owner != url => Verdict::Duplicate {
                            of: owner,
                            distance: 0,
                            jaccard: None,
                            radius: 0,
                        },
                        _ => Verdict::Original,
                    },
                ))
            }
        }
    }
}

impl Stage for ContentSeenStage {
    type Input = Document;
    const QUEUE: Queue = Queue::ContentSeen;
    const DEFAULT_CONCURRENCY: usize = 32;

    async fn handle(&self, mut doc: Document) -> Result<Outcome, StageError> {
        let raw = doc.raw.take();
        let doc_key = self.keys.document(&doc.url);
        let sketch = sketch(&doc.text);
        let fp = sketch.fingerprint;
        if doc.recrawl {
            if let Some(outcome) = self.refetched(&doc, fp, &doc_key).await? {
                return Ok(outcome);
            }
        }
        let recrawl = doc
            .spec
            .as_ref()
            .and_then(|s| s.recrawl_secs.map(|secs| (s.clone(), secs)));
        let scheduled = match &recrawl {
            Some((spec, secs)) => self.schedule_ops(&doc, spec, *secs)?,
            None => Vec::new(),
        };
        // A page without an article (a listing, navigation, an empty
        // extraction) is stored as it is and never matched: nothing in it
        // to judge a near-duplicate by.
        let article = doc.article && sketch.tokens > 0;
        let verdict = if article {
            // None: a redelivery of a document already stored, nothing to do.
            let Some(verdict) = self.verdict(&sketch, &doc.url, &doc_key).await? else {
                return Ok(Outcome::default());
            };
            verdict
        } else {
            Verdict::Original
        };
        let (duplicate_of, distance, radius, jaccard) = match &verdict {
            Verdict::Original => (None, None, None, None),
            Verdict::Duplicate {
                of,
                distance,
                jaccard,
                radius,
            } => (
                Some(of.clone()),
                Some(*distance),
                Some(*radius),
                jaccard.map(|j| j as f32),
            ),
        };
        let mut stored = StoredDocument {
            url: doc.url.clone(),
            final_url: doc.final_url,
            status: doc.status,
            encoding: doc.encoding,
            charset_override: doc.charset_override,
            title: doc.title,
            published: doc.published,
            author: doc.author,
            authors: doc.authors,
            // A near-duplicate's text is not stored again.
            text: if duplicate_of.is_some() {
                String::new()
            } else {
                doc.text
            },
            simhash: format!("{:016x}", fp.value()),
            duplicate_of: duplicate_of.clone(),
            distance,
            fetched_at: doc.fetched_at,
            crawl: doc.crawl,
            depth: doc.depth,
            lang: doc.lang,
            site_name: doc.site_name,
            images: doc.images,
            changed_at: None,
            unchanged: 0,
            article,
            tokens: u32::try_from(sketch.tokens).unwrap_or(u32::MAX),
            radius,
            jaccard,
            warc_record_id: None,
        };
        if let (Some(writer), Some(raw)) = (&self.warc, &raw) {
            stored.warc_record_id = self.write_warc(writer, raw, &stored).await?;
        }
        let json = serde_json::to_vec(&stored)
            .map_err(|e| StageError::Malformed(format!("cannot serialize {}: {e}", doc.url)))?;
        // The document, its export-log entry, its counter and its place in
        // its original's list in one atomic step: a worker killed around it
        // leaves all or nothing, and a redelivery finds it done. The
        // refetch schedule is idempotent and always (re)written first.
        if !scheduled.is_empty() {
            self.store.exec(&scheduled).await?;
        }
        let mut pushes = vec![(self.keys.document_log(), doc.url.as_bytes().to_vec())];
        if let Some(orig) = &duplicate_of {
            pushes.push((self.keys.duplicates(orig), doc.url.as_bytes().to_vec()));
        }
        let counter = if duplicate_of.is_some() {
            "duplicate"
        } else {
            "stored"
        };
        self.store
            .one(Op::SetNxWith {
                key: doc_key,
                value: json,
                pushes,
                counts: pipeline::crawls::counts(&self.keys, &stored.crawl, &[(counter, 1)]),
            })
            .await?
            .int()?;
        Ok(Outcome::default())
    }
}

/// Whether the first reply (the read of the document's stored record that
/// leads every lookup) found it stored: a redelivery, nothing to decide.
fn already_stored(replies: &[Reply]) -> Result<bool, StoreError> {
    Ok(replies
        .first()
        .map(Reply::data)
        .transpose()?
        .flatten()
        .is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(url: &str, text: &str) -> Document {
        Document::new("t", url, text)
    }

    /// Pseudo-text whose word frequencies are skewed like real text's.
    fn text(seed: u64) -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..400)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let r = x % 1000;
                // Letters, not digits: numbers are not features.
                let mut n = r * r / 2000;
                let mut w = String::from("w");
                loop {
                    w.push((b'a' + (n % 26) as u8) as char);
                    n /= 26;
                    if n == 0 {
                        break w;
                    }
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    async fn stored(store: &Store, url: &str) -> StoredDocument {
        let data = store
            .one(Op::Get {
                key: Keys::new("t").document(url),
            })
            .await
            .unwrap()
            .data()
            .unwrap()
            .unwrap();
        serde_json::from_slice(&data).unwrap()
    }

    #[tokio::test]
    async fn marks_copies_and_edits_and_keeps_distinct_texts() {
        let store = Store::memory();
        let stage = ContentSeenStage::new(store.clone(), "t", Layout::default());
        let a = text(1);
        let edited = a.replacen("w", "v", 1);
        for (url, t) in [("a", &a), ("copy", &a), ("edit", &edited), ("b", &text(2))] {
            stage.handle(doc(url, t)).await.unwrap();
        }
        assert_eq!(stored(&store, "a").await.duplicate_of, None);
        assert_eq!(
            stored(&store, "copy").await.duplicate_of.as_deref(),
            Some("a")
        );
        assert_eq!(stored(&store, "copy").await.text, "");
        assert_eq!(
            stored(&store, "edit").await.duplicate_of.as_deref(),
            Some("a")
        );
        assert_eq!(stored(&store, "b").await.duplicate_of, None);
        // A redelivered original stays the original.
        stage.handle(doc("a", &a)).await.unwrap();
        assert_eq!(stored(&store, "a").await.duplicate_of, None);
        // Short bodies match exactly only.
        stage.handle(doc("s1", "Not found")).await.unwrap();
        stage.handle(doc("s2", "not found!")).await.unwrap();
        stage.handle(doc("s3", "Found")).await.unwrap();
        assert_eq!(
            stored(&store, "s2").await.duplicate_of.as_deref(),
            Some("s1")
        );
        assert_eq!(stored(&store, "s3").await.duplicate_of, None);
    }
}
