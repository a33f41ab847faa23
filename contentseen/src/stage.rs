//! The contentseen stage: a [`Document`] in, a [`StoredDocument`] stored.
//!
//! Per document, in single-slot steps (so the same code runs on a Redis
//! Cluster):
//! 1. already stored under this URL (a redelivery)? — read in the same
//!    round trip as the band inserts and the sequence number
//!    ([`Table::insert`]); a redelivery only rewrites its duplicate entry
//!    from the stored record (idempotent) and stops;
//! 2. record and look up, and read what the matches need
//!    ([`Table::record_and_decide`]); a near-duplicate reads its
//!    original's record (waiting a little for it to be stored);
//! 3. the full document to a text segment ([`texts`], or compressed into
//!    the record when texts stay in the store), then its place under its
//!    original, then last its document record with its export-log entry
//!    and its counter ([`DOC_STORE`], one step): a worker killed between
//!    any two leaves nothing a redelivery does not finish.
//!
//! Short bodies ([`Fingerprint::Exact`]) skip the table: the first
//! document with the same exact hash (`HSETNX exact:<shard>`) is the
//! original.

use pipeline::crawls::Specs;
use pipeline::documents::{duplicate_op, inline, Body, DocRecord, Documents, Recrawl, Time};
use pipeline::keys::{hash_field, url_hash, Keys};
use pipeline::messages::{encode, Document, FetchTask, RawExchange, VERSION};
use pipeline::once::{once_with, Also, RECRAWL_IDS};
use pipeline::store::{arg, int_arg, key_args, Memory, Op, Reply, Script, ScriptCall, StoreError};
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{CrawlRef, Queue, Store, StoredDocument};

use crate::bands::Layout;
use crate::decide::Verdict;
use crate::reach::Reach;
use crate::simhash::{distance, sketch, Fingerprint, Sketch};
use crate::table::Table;

pub struct ContentSeenStage {
    store: Store,
    /// The crawls' settings (their refetch interval).
    specs: Specs,
    keys: Keys,
    table: Table,
    docs: Documents,
    /// How far each document's lookup reaches (short bodies further).
    reach: Reach,
    /// Within this distance a refetched page counts as unchanged.
    max_distance: u32,
    /// Where the pages' WARC records go, when the crawl writes them
    /// (`CRAWLER_WARC_DIR`, `crawler run --warc-dir`).
    warc: Option<warc::SharedWriter>,
    /// Where the documents go in full, when texts are in files
    /// (`CRAWLER_TEXT_DIR`); else into their records.
    texts: Option<texts::Writer>,
}

/// How long a near-duplicate waits for its original to be stored (its
/// URL, and its WARC records' `WARC-Refers-To-*`, come from there): the
/// original was decided first and is being stored by another task or
/// worker; past this, the document goes back to the queue.
pub const ORIGINAL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest adaptive refetch interval.
pub const MAX_RECRAWL_INTERVAL_SECS: u64 = 30 * 24 * 3600;

/// Stores a new document's record and counts it, once: `HSETNX` the
/// record in the URL's document hash; only when it was set, append the
/// URL hash to the slot's export log and bump the counters of the slot's
/// stats shard. Reply Int(1 if stored now). KEYS = documents, export log,
/// stats (one slot); ARGV = field, record, then counter field and by
/// pairs.
pub static DOC_STORE: Script = Script::new("DOC_STORE", doc_store_lua, doc_store_twin);

fn doc_store_lua() -> String {
    r#"
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[1])
for a = 3, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[3], ARGV[a], ARGV[a + 1])
end
return 1
"#
    .to_string()
}

fn doc_store_twin(
    m: &mut Memory<'_>,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<Reply, StoreError> {
    let s = &DOC_STORE;
    let [docs, log, stats] = key_args(s, keys)?;
    let field = String::from_utf8_lossy(arg(s, args, 0)?).into_owned();
    if m.hget(docs, &field)?.is_some() {
        return Ok(Reply::Int(0));
    }
    m.hset(docs, &field, arg(s, args, 1)?)?;
    m.rpush(log, field.as_bytes())?;
    let mut a = 2;
    while a + 1 < args.len() {
        let counter = String::from_utf8_lossy(arg(s, args, a)?).into_owned();
        m.hincr(stats, &counter, int_arg(s, args, a + 1)?)?;
        a += 2;
    }
    Ok(Reply::Int(1))
}

/// The step of [`DOC_STORE`] for URL hash `h`, its record as stored
/// (`Documents::pack`).
pub fn doc_store(keys: &Keys, h: u64, record: Vec<u8>, counts: Vec<(String, i64)>) -> Op {
    let (key, field) = keys.document(h);
    let mut call = ScriptCall::new(&DOC_STORE)
        .key(key)
        .key(keys.document_log(h))
        .key(keys.stats_of_url(h))
        .arg(field)
        .arg(record);
    for (counter, by) in &counts {
        call = call.arg(counter.as_bytes()).int(by);
    }
    call.counting(pipeline::crawls::namespace_counts(&counts))
        .op()
}

/// What the first round found: the document stored already (a
/// redelivery), or its verdict.
enum Decided {
    Stored(Box<DocRecord>),
    New(Verdict),
}

impl ContentSeenStage {
    pub fn new(store: Store, namespace: &str, layout: Layout) -> Self {
        ContentSeenStage {
            max_distance: layout.max_distance(),
            table: Table::new(store.clone(), namespace, layout),
            docs: Documents::new(store.clone(), namespace, None),
            reach: Reach::default(),
            specs: Specs::new(store.clone(), Keys::new(namespace)),
            store,
            keys: Keys::new(namespace),
            warc: None,
            texts: None,
        }
    }

    /// This stage with its namespace's scale (`pipeline::scale`): the
    /// shards of its fingerprint records, LSH and exact tables, and the
    /// keys of its band tables.
    pub fn with_scale(mut self, scale: pipeline::scale::Scale) -> Self {
        self.keys = self.keys.with_scale(scale);
        self.table = self.table.with_scale(scale);
        self
    }

    /// This stage, writing each new page's WARC records to `writer`
    /// (pages that carry their raw HTTP exchange, [`Document::raw`]).
    pub fn with_warc(mut self, writer: Option<warc::SharedWriter>) -> Self {
        self.warc = writer;
        self
    }

    /// This stage, writing documents in full to text segments (and
    /// reading them back from the writer's directory).
    pub fn with_texts(
        mut self,
        writer: Option<texts::Writer>,
        dir: Option<&std::path::Path>,
    ) -> Self {
        self.docs = Documents::new(self.store.clone(), self.keys.namespace(), dir);
        self.texts = writer;
        self
    }

    /// Writes the WARC records of a page about to be stored: request,
    /// response and metadata for an original; request, revisit and metadata
    /// for a near-duplicate. Returns the response record's id (`None` for a
    /// near-duplicate). Runs before the document is stored, so a document
    /// found stored has its records written; a worker that dies between
    /// the two writes them again when the document is redelivered.
    async fn write_warc(
        writer: &warc::SharedWriter,
        raw: &RawExchange,
        stored: &StoredDocument,
        original: Option<&StoredDocument>,
    ) -> Result<Option<String>, StageError> {
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
        let duplicate = original.map(|orig| warc::NearDuplicate {
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

    /// The stored record of the original `h` of a near-duplicate, waiting
    /// up to [`ORIGINAL_WAIT`] for it to be stored.
    async fn original(&self, h: u64) -> Result<DocRecord, StageError> {
        let deadline = tokio::time::Instant::now() + ORIGINAL_WAIT;
        loop {
            if let Some(Some(r)) = self
                .docs
                .records(&[h])
                .await
                .map_err(|e| StageError::Transient(e.to_string()))?
                .pop()
            {
                return Ok(r);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StageError::Transient(format!(
                    "original {h:016x} not stored yet: its near-duplicate needs its URL"
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The full document in its record's body: a line of a text segment,
    /// or compressed in the record.
    async fn body(&self, json: Vec<u8>) -> Result<Body, StageError> {
        match &self.texts {
            Some(w) => Ok(Body::File(
                w.append(json)
                    .await
                    .map_err(|e| StageError::Transient(e.to_string()))?,
            )),
            None => Ok(inline(&json)),
        }
    }

    /// The crawl's refetch interval (its settings' `recrawl_secs`), when
    /// it refetches its pages.
    async fn recrawl_of(&self, doc: &Document) -> Result<Option<(CrawlRef, u64)>, StageError> {
        let Some(crawl) = &doc.spec else {
            return Ok(None);
        };
        let spec = self.specs.get(crawl).await?;
        Ok(spec.recrawl_secs.map(|secs| (crawl.clone(), secs)))
    }

    /// The next refetch of a stored page, `in_secs` from now.
    fn schedule_op(
        &self,
        doc: &Document,
        crawl: &CrawlRef,
        in_secs: u64,
    ) -> Result<Op, StageError> {
        let task = FetchTask {
            v: VERSION,
            crawl: crawl.clone(),
            url: doc.url.clone(),
            depth: doc.depth,
            redirects: 0,
            attempt: 0,
            recrawl: true,
            // The same for a redelivery of this document (the schedule's
            // member stays one), new for the next version of the page.
            id: FetchTask::derive_id(&["recrawl", &doc.url, &doc.fetched_at]),
        };
        let origin = url::Url::parse(&doc.url)
            .map(|u| u.origin().ascii_serialization())
            .map_err(|e| StageError::Malformed(format!("document URL {:?}: {e}", doc.url)))?;
        Ok(politeness::schedule::schedule_recrawl(
            &self.keys,
            &origin,
            &encode(&task)?,
            in_secs.saturating_mul(1000),
        ))
    }

    /// A refetch of a stored page: unchanged (within the near-duplicate
    /// distance, or the same exact hash) doubles its interval; changed
    /// updates the stored document (a new version in the export order)
    /// and halves it. `None` when the page is not stored (it is then
    /// handled as new).
    ///
    /// The changed text's new fingerprint is not added to the band tables:
    /// near-duplicates of the new version are found against the old one.
    async fn refetched(
        &self,
        doc: &Document,
        fp: Fingerprint,
        me: u64,
    ) -> Result<Option<Outcome>, StageError> {
        let stage = |e: pipeline::documents::DocumentError| StageError::Transient(e.to_string());
        let Some(mut rec) = self.docs.record(&doc.url).await.map_err(stage)? else {
            return Ok(None);
        };
        let recrawls = self.recrawl_of(doc).await?;
        let base = recrawls.as_ref().map_or(3600, |(_, secs)| *secs).max(1);
        let mut recrawl = rec.recrawl.clone().unwrap_or(Recrawl {
            interval_secs: base,
            unchanged: 0,
            changed_at: None,
        });
        if rec.fetched_at == Time::of(&doc.fetched_at) {
            // A redelivery of a refetch already applied (the document, its
            // counter and its new interval): schedule it again, nothing more.
            if let Some((crawl, _)) = &recrawls {
                self.store
                    .exec(&[self.schedule_op(doc, crawl, recrawl.interval_secs)?])
                    .await?;
            }
            return Ok(Some(Outcome::default()));
        }
        let unchanged = match fp {
            Fingerprint::Sim(v) => distance(v, rec.simhash) <= self.max_distance,
            Fingerprint::Exact(h) => h == rec.simhash,
        };
        if unchanged {
            recrawl.unchanged += 1;
            recrawl.interval_secs = recrawl
                .interval_secs
                .saturating_mul(2)
                .min(MAX_RECRAWL_INTERVAL_SECS);
        } else {
            let mut stored = self.docs.full(&rec, &mut None).map_err(stage)?;
            recrawl.unchanged = 0;
            recrawl.changed_at = Some(Time::of(&doc.fetched_at));
            recrawl.interval_secs = (recrawl.interval_secs / 2).max((base / 4).max(1));
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
            stored.fetched_at = doc.fetched_at.clone();
            stored.changed_at = Some(doc.fetched_at.clone());
            stored.unchanged = 0;
            let json = serde_json::to_vec(&stored)
                .map_err(|e| StageError::Malformed(format!("cannot serialize {}: {e}", doc.url)))?;
            let duplicate_of = rec.duplicate_of;
            rec = DocRecord::of(&stored, duplicate_of, self.body(json).await?);
        }
        rec.fetched_at = Time::of(&doc.fetched_at);
        rec.recrawl = Some(recrawl.clone());
        // The record and its counter in one step, once per refetch; a
        // changed page goes on its export log again, so an export that
        // resumes from a cursor takes the new version.
        let (key, field) = self.keys.document(me);
        let packed = self.docs.pack(&rec).await.map_err(stage)?;
        let mut also = vec![Also::HSet(key, field, packed)];
        if !unchanged {
            also.push(Also::RPush(
                self.keys.document_log(me),
                hash_field(me).into_bytes(),
            ));
        }
        let mut ops = vec![once_with(
            &self.keys,
            me,
            RECRAWL_IDS,
            &doc.fetched_at,
            None,
            also,
            pipeline::crawls::counts(
                &doc.crawl,
                &[(if unchanged { "unchanged" } else { "changed" }, 1)],
            ),
        )];
        if let Some((crawl, _)) = &recrawls {
            ops.push(self.schedule_op(doc, crawl, recrawl.interval_secs)?);
        }
        self.store.exec(&ops).await?;
        Ok(Some(Outcome::default()))
    }

    /// Round 1 (and the rest of the decision for a new document): the
    /// stored record if this document is stored already, else its verdict.
    async fn decide(&self, sketch: &Sketch, article: bool, me: u64) -> Result<Decided, StageError> {
        let stored_op = self.docs.record_op(me);
        let what = format!("{me:016x}");
        let stored = |r: Reply| {
            let what = &what;
            async move {
                self.docs
                    .record_of(&r, what)
                    .await
                    .map_err(|e| StageError::Transient(e.to_string()))
            }
        };
        // A page without an article (a listing, navigation, an empty
        // extraction) is stored as it is and never matched: nothing in it
        // to judge a near-duplicate by.
        if !article {
            // Confirmed: a "stored already" answer acks the message with
            // no write of its own (`Store::exec_confirmed`).
            let reply = self
                .store
                .exec_confirmed(std::slice::from_ref(&stored_op))
                .await?
                .pop()
                .unwrap_or(Reply::Nil);
            return Ok(match stored(reply).await? {
                Some(r) => Decided::Stored(Box::new(r)),
                None => Decided::New(Verdict::Original),
            });
        }
        match self.reach.probe(self.table.layout(), sketch) {
            Some(probe) => {
                let (replies, inserted) = self.table.insert(vec![stored_op], &[probe]).await?;
                if let Some(r) = stored(replies.first().cloned().unwrap_or(Reply::Nil)).await? {
                    return Ok(Decided::Stored(Box::new(r)));
                }
                let verdict = self
                    .table
                    .record_and_decide(&[(probe, me)], &inserted)
                    .await?
                    .into_iter()
                    .next()
                    .unwrap_or(Verdict::Original);
                Ok(Decided::New(verdict))
            }
            None => {
                let h = sketch.fingerprint.value();
                let key = self.keys.exact(self.keys.shard_of(h));
                let field = hash_field(h);
                // Confirmed, as above: the record's read may ack.
                let replies = self
                    .store
                    .exec_confirmed(&[
                        stored_op,
                        Op::HSetNx {
                            key: key.clone(),
                            field: field.clone(),
                            value: hash_field(me).into_bytes(),
                        },
                        Op::HGet { key, field },
                    ])
                    .await?;
                if let Some(r) = stored(replies.first().cloned().unwrap_or(Reply::Nil)).await? {
                    return Ok(Decided::Stored(Box::new(r)));
                }
                let owner = replies
                    .get(2)
                    .map(Reply::int)
                    .transpose()?
                    .map(|o| o as u64);
                let verdict = match owner {
                    Some(o) if o != me => Verdict::Duplicate {
                        of: o,
                        distance: 0,
                        jaccard: None,
                        radius: 0,
                    },
                    _ => Verdict::Original,
                };
                Ok(Decided::New(verdict))
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
        let me = url_hash(&doc.url);
        let sketch = sketch(&doc.text);
        let fp = sketch.fingerprint;
        if doc.recrawl {
            if let Some(outcome) = self.refetched(&doc, fp, me).await? {
                return Ok(outcome);
            }
        }
        let recrawl = self.recrawl_of(&doc).await?;
        let mut scheduled = Vec::new();
        if let Some((crawl, secs)) = &recrawl {
            scheduled.push(self.schedule_op(&doc, crawl, *secs)?);
        }
        let article = doc.article && sketch.tokens > 0;
        let verdict = match self.decide(&sketch, article, me).await? {
            Decided::Stored(rec) => {
                // A redelivery of a stored document: its entry under its
                // original again (idempotent; written before the record, so
                // it is there, but cheap to be sure of), and its refetch.
                let mut ops = Vec::new();
                if let Some(of) = rec.duplicate_of {
                    ops.push(duplicate_op(&self.keys, of, me));
                }
                ops.extend(scheduled);
                self.store.exec(&ops).await?;
                return Ok(Outcome::default());
            }
            Decided::New(verdict) => verdict,
        };
        let of = verdict.original();
        let original = match of {
            Some(h) => Some(self.original(h).await?),
            None => None,
        };
        let mut stored = stored_document(
            doc,
            &verdict,
            original.as_ref().map(|o| o.url.clone()),
            format!("{:016x}", fp.value()),
            sketch.tokens,
            article,
        );
        if let (Some(writer), Some(raw)) = (&self.warc, &raw) {
            let original_doc = match &original {
                Some(r) => Some(
                    self.docs
                        .full(r, &mut None)
                        .map_err(|e| StageError::Transient(e.to_string()))?,
                ),
                None => None,
            };
            stored.warc_record_id =
                Self::write_warc(writer, raw, &stored, original_doc.as_ref()).await?;
        }
        let json = serde_json::to_vec(&stored)
            .map_err(|e| StageError::Malformed(format!("cannot serialize {}: {e}", stored.url)))?;
        let mut record = DocRecord::of(&stored, of, self.body(json).await?);
        if let Some((_, secs)) = &recrawl {
            record.recrawl = Some(Recrawl {
                interval_secs: *secs,
                unchanged: 0,
                changed_at: None,
            });
        }
        // Its entry under its original first (idempotent), then the record
        // with its export-log entry and its counter in one step: a worker
        // killed around it leaves the record or nothing, and a redelivery
        // finds it stored.
        let mut first = Vec::new();
        if let Some(of) = of {
            first.push(duplicate_op(&self.keys, of, me));
        }
        first.extend(scheduled);
        let counter = if of.is_some() { "duplicate" } else { "stored" };
        let packed = self
            .docs
            .pack(&record)
            .await
            .map_err(|e| StageError::Transient(e.to_string()))?;
        let store_op = doc_store(
            &self.keys,
            me,
            packed,
            pipeline::crawls::counts(&stored.crawl, &[(counter, 1)]),
        );
        if !first.is_empty() {
            self.store.exec(&first).await?;
        }
        pipeline::fault::point(pipeline::fault::TEXT_WRITTEN_NOT_RECORDED);
        self.store.exec(&[store_op]).await?;
        Ok(Outcome::default())
    }
}

/// The document as stored: its fields, its verdict's, and its text unless
/// it is a near-duplicate (whose text is not stored again).
fn stored_document(
    doc: Document,
    verdict: &Verdict,
    duplicate_of: Option<String>,
    simhash: String,
    tokens: usize,
    article: bool,
) -> StoredDocument {
    let (distance, radius, jaccard) = match verdict {
        Verdict::Original => (None, None, None),
        Verdict::Duplicate {
            distance,
            jaccard,
            radius,
            ..
        } => (Some(*distance), Some(*radius), jaccard.map(|j| j as f32)),
    };
    StoredDocument {
        url: doc.url,
        final_url: doc.final_url,
        status: doc.status,
        encoding: doc.encoding,
        charset_override: doc.charset_override,
        title: doc.title,
        published: doc.published,
        author: doc.author,
        authors: doc.authors,
        // A near-duplicate's text is not stored again.
        text: if verdict.original().is_some() {
            String::new()
        } else {
            doc.text
        },
        simhash,
        duplicate_of,
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
        tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
        radius,
        jaccard,
        warc_record_id: None,
    }
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
        Documents::new(store.clone(), "t", None)
            .document(url)
            .await
            .unwrap()
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
        // Every document once in the export logs, the cluster under its
        // original.
        let docs = Documents::new(store.clone(), "t", None);
        let (logged, _) = docs
            .logged(&pipeline::documents::Cursor::default(), 100)
            .await
            .unwrap();
        assert_eq!(logged.len(), 7);
        let mut dups = pipeline::documents::duplicates_of(&store, docs.keys(), url_hash("a"))
            .await
            .unwrap();
        dups.sort();
        let mut want = vec![url_hash("copy"), url_hash("edit")];
        want.sort();
        assert_eq!(dups, want);
        let counters = pipeline::crawls::read_counters(&store, docs.keys())
            .await
            .unwrap();
        assert_eq!(counters.get("stored"), 4);
        assert_eq!(counters.get("duplicate"), 3);
    }
}
