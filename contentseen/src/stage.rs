//! The contentseen stage: a [`Document`] in, a [`StoredDocument`] stored.
//!
//! Per document, in pipelined round trips (each op touches one key):
//! 1. already stored under this URL (a redelivery)? done;
//! 2. add the fingerprint to its k+1 band sets, then take a sequence number;
//! 3. record "seq url" as the fingerprint's owner unless it has one, read
//!    the owner back, and read the k+1 band sets;
//! 4. read the owners of the candidates within distance k;
//! 5. [`crate::decide::verdict`]; store the document (a duplicate without
//!    its text), append it to the export log, link it from its original.

use std::collections::BTreeSet;

use pipeline::keys::Keys;
use pipeline::messages::Document;
use pipeline::store::{Op, Reply};
use pipeline::worker::{Outcome, Stage, StageError};
use pipeline::{Queue, Store, StoredDocument};

use crate::bands::Layout;
use crate::decide::{verdict, Seen, Verdict};
use crate::simhash::{distance, fingerprint, Fingerprint};

/// Fingerprint-owner hash shards: spread over many keys for Redis Cluster.
const OWNER_SHARDS: u64 = 1 << 16;

pub struct ContentSeenStage {
    store: Store,
    keys: Keys,
    layout: Layout,
}

impl ContentSeenStage {
    pub fn new(store: Store, namespace: &str, layout: Layout) -> Self {
        ContentSeenStage {
            store,
            keys: Keys::new(namespace),
            layout,
        }
    }

    fn owner_key(&self, fp: u64) -> String {
        self.keys.fingerprint_owner(fp % OWNER_SHARDS)
    }

    /// Steps 2–4 for a SimHash fingerprint.
    async fn near_duplicate_verdict(&self, fp: u64, url: &str) -> Result<Verdict, StageError> {
        let member = fp as i64;
        // 2. Insert into every band, then take a sequence number.
        let mut ops: Vec<Op> = self
            .layout
            .keys(fp)
            .map(|(band, value)| Op::SAdd {
                key: self.keys.band(band, value),
                members: vec![member],
            })
            .collect();
        ops.push(Op::Incr {
            key: self.keys.fingerprint_seq(),
            by: 1,
        });
        let replies = self.store.exec(&ops).await?;
        let seq = replies.last().map(Reply::int).transpose()?.unwrap_or(0);

        // 3. Claim ownership of the fingerprint (first document wins), read
        //    the owner, then look up the bands.
        let mut ops = vec![
            Op::HSetNx {
                key: self.owner_key(fp),
                field: member.to_string(),
                value: format!("{seq} {url}").into_bytes(),
            },
            Op::HGet {
                key: self.owner_key(fp),
                field: member.to_string(),
            },
        ];
        ops.extend(self.layout.keys(fp).map(|(band, value)| Op::SMembers {
            key: self.keys.band(band, value),
        }));
        let replies = self.store.exec(&ops).await?;
        let (own_seq, own_url) = replies
            .get(1)
            .map(Reply::string)
            .transpose()?
            .flatten()
            .and_then(|s| parse_owner(&s))
            .unwrap_or((seq, url.to_string()));
        let mut candidates = BTreeSet::new();
        for r in &replies[2..] {
            for m in r.ints()? {
                let c = m as u64;
                if c != fp && distance(fp, c) <= self.layout.max_distance() {
                    candidates.insert(c);
                }
            }
        }

        // 4. The owners of the candidates.
        let candidates: Vec<u64> = candidates.into_iter().collect();
        let ops: Vec<Op> = candidates
            .iter()
            .map(|&c| Op::HGet {
                key: self.owner_key(c),
                field: (c as i64).to_string(),
            })
            .collect();
        let replies = self.store.exec(&ops).await?;
        let mut seen = Vec::with_capacity(candidates.len());
        for (c, r) in candidates.iter().zip(&replies) {
            let owner = r.string()?.and_then(|s| parse_owner(&s));
            seen.push(Seen {
                fingerprint: *c,
                seq: owner.as_ref().map(|o| o.0),
                url: owner.map(|o| o.1),
            });
        }
        Ok(verdict(
            fp,
            own_seq,
            &own_url,
            url,
            &seen,
            self.layout.max_distance(),
        ))
    }

    /// Short bodies: the first document with the same exact hash is the original.
    async fn exact_verdict(&self, hash: u64, url: &str) -> Result<Verdict, StageError> {
        let key = self.keys.exact(hash);
        let replies = self
            .store
            .exec(&[
                Op::SetNx {
                    key: key.clone(),
                    value: url.as_bytes().to_vec(),
                },
                Op::Get { key },
            ])
            .await?;
        match replies.get(1).map(Reply::string).transpose()?.flatten() {
            Some(owner) if owner != url => Ok(Verdict::Duplicate {
                of: owner,
                distance: 0,
            }),
            _ => Ok(Verdict::Original),
        }
    }
}

/// Parses an owner record `"seq url"`.
fn parse_owner(s: &str) -> Option<(i64, String)> {
    let (seq, url) = s.split_once(' ')?;
    Some((seq.parse().ok()?, url.to_string()))
}

impl Stage for ContentSeenStage {
    type Input = Document;
    const QUEUE: Queue = Queue::ContentSeen;
    const DEFAULT_CONCURRENCY: usize = 32;

    async fn handle(&self, doc: Document) -> Result<Outcome, StageError> {
        let doc_key = self.keys.document(&doc.url);
        // 1. A redelivery of a document already stored: nothing to do.
        if self
            .store
            .one(Op::Get {
                key: doc_key.clone(),
            })
            .await?
            .data()?
            .is_some()
        {
            return Ok(Outcome::default());
        }
        let fp = fingerprint(&doc.text);
        let verdict = match fp {
            Fingerprint::Sim(v) => self.near_duplicate_verdict(v, &doc.url).await?,
            Fingerprint::Exact(h) => self.exact_verdict(h, &doc.url).await?,
        };
        let (duplicate_of, distance) = match &verdict {
            Verdict::Original => (None, None),
            Verdict::Duplicate { of, distance } => (Some(of.clone()), Some(*distance)),
        };
        let stored = StoredDocument {
            url: doc.url.clone(),
            final_url: doc.final_url,
            status: doc.status,
            encoding: doc.encoding,
            title: doc.title,
            published: doc.published,
            author: doc.author,
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
        };
        let json = serde_json::to_vec(&stored)
            .map_err(|e| StageError::Malformed(format!("cannot serialize {}: {e}", doc.url)))?;
        let created = self
            .store
            .one(Op::SetNx {
                key: doc_key,
                value: json,
            })
            .await?
            .int()?;
        if created == 1 {
            let mut ops = vec![
                Op::RPush {
                    key: self.keys.document_log(),
                    value: doc.url.as_bytes().to_vec(),
                },
                Op::HIncr {
                    key: self.keys.stats(),
                    field: if duplicate_of.is_some() {
                        "duplicate"
                    } else {
                        "stored"
                    }
                    .into(),
                    by: 1,
                },
            ];
            if let Some(orig) = &duplicate_of {
                ops.push(Op::RPush {
                    key: self.keys.duplicates(orig),
                    value: doc.url.as_bytes().to_vec(),
                });
            }
            self.store.exec(&ops).await?;
        }
        Ok(Outcome::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipeline::messages::VERSION;

    fn doc(url: &str, text: &str) -> Document {
        Document {
            v: VERSION,
            crawl: "t".into(),
            url: url.into(),
            final_url: url.into(),
            status: 200,
            encoding: "UTF-8".into(),
            title: None,
            published: None,
            author: None,
            text: text.into(),
            fetched_at: "2026-01-01T00:00:00Z".into(),
            depth: 0,
            lang: None,
            site_name: None,
            images: vec![],
        }
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
                format!("w{}", r * r / 2000)
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
        let edited = a.replacen("w", "x", 1);
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
