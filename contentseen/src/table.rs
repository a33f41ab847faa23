//! The banded SimHash table in the store, and the race-free protocol that
//! decides originals over it, for one document or a batch of many.
//!
//! ## Keys (Redis, or the memory store of `crawler run`: same ops, same logic)
//!
//! Every step below touches one key, so the protocol runs on Redis Cluster
//! as on one node ([`pipeline::store::design`]).
//!
//! - `<ns>:bands:<i>:<value>`: for band i of the [`Layout`] and the top
//!   [`Scale::band_key_bits`](pipeline::scale::Scale) bits of the band's
//!   value (all 16 from 10M expected pages), a string: the members of the
//!   fingerprints filed there, in the order they were added
//!   ([`crate::bands::Band::member`]: the 48 bits outside a 16-bit key, 6
//!   bytes each; 7 bytes for a key of 8 to 15 bits). Added with `APPEND`, read with
//!   `MGET`, every lookup of a batch in one command (Redis spends about as
//!   much again on dispatching a command as on a read: at 1M fingerprints
//!   the same 5.1 reads a document took 6.2 µs inside 5.1 `GET`s and 4.1 µs
//!   inside one `MGET` per batch). A plain string is the cheapest thing
//!   Redis can hand back. 4 × 65,536 keys with the default layout at
//!   [`Scale::LARGE`](pipeline::scale::Scale::LARGE), spread
//!   over the whole key space (no hash tag: on a cluster the client splits
//!   the `MGET` by slot). A redelivered document appends its member again
//!   (6 bytes; lookups skip repeats).
//! - `<ns>:fpr:<shard>`: the fingerprint's top
//!   [`Scale::shard_bits`](pipeline::scale::Scale) bits (17 from 10M
//!   expected pages) pick the shard, a hash from fingerprint (i64) to the record of the
//!   first document that had it ([`encode_record`]): its sequence number
//!   and search radius ([`crate::reach`]), its MinHash signature (the
//!   second signal) and its URL hash. At most 49 bytes, so a shard stays a
//!   listpack (about 76 entries a shard at 10M fingerprints). Read only for
//!   the matches.
//! - `<ns>:seq`: the sequence counter.
//! - `<ns>:lsh:<band>:<shard>`: for each of the [`crate::minhash::BANDS`]
//!   MinHash LSH bands, a hash from band value (its 32 bits below the
//!   shard's, as an integer: a 5-byte listpack entry) to the first
//!   fingerprint that had it (`HSETNX`); shard = the value's top
//!   [`Scale::shard_bits`](pipeline::scale::Scale) bits.
//!
//! ## Rounds
//!
//! 1. `APPEND` the fingerprint to its k+1 band tables and `HSETNX` its LSH
//!    slots (the first fingerprint owns a slot); then `INCRBY` the counter
//!    by the batch size: every document of the batch gets a number taken
//!    after its inserts.
//! 2. Record: `HSETNX fpr` (the first document with this fingerprint keeps
//!    its record); then look up the k+1 band tables, and for a short body 2
//!    more ([`Layout::lookup_keys`]), all in one `MGET`; then rewrite at its
//!    exact size each band table that an `APPEND` of round 1 made Redis
//!    double ([`crate::room`], [`COMPACT`]).
//! 3. Only when needed (a match within the radius, a fingerprint recorded
//!    before, or an LSH slot owned by another): `HGET fpr` of those
//!    fingerprints, waiting a little for a record not written yet.
//!
//! On one node (and in memory) the ops of a round's pipeline run in order,
//! so each round is one round trip. On a cluster, where the ops of one
//! pipeline to different nodes run concurrently, the inserts' replies are
//! awaited before the `INCRBY` and the records' before the lookups: two
//! more round trips, the same rule ([`Store::ordered`]).
//!
//! The LSH slots are claimed one by one (no transaction spans their
//! slots), so the owner of a slot may take its number after a document
//! that found the slot taken: that document then counts the owner as later
//! (by number, as every pair), and the owner never looks at it: the pair
//! is missed, never wrongly made. It takes two near-duplicates handled
//! within the same millisecond.
//!
//! ## Cost, measured (`cargo bench -p evaluation --bench contentseen`)
//!
//! See the crate's README for the figures at 1M and 10M fingerprints and
//! the layout for 1 billion.

use std::collections::{HashMap, HashSet};

use pipeline::keys::Keys;
use pipeline::store::{key_args, Memory, Op, Reply, Script, ScriptCall, StoreError};
use pipeline::worker::StageError;
use pipeline::Store;

use crate::bands::{Band, Layout};
use crate::decide::{earliest, near_duplicates, Seen, Verdict};
use crate::minhash::{jaccard, Signature, SIGNATURE_BYTES};
use crate::reach::{Probe, RADIUS_BITS};
use crate::room;
use crate::simhash::distance;

/// How many times, and how long, a lookup waits for the record of a match
/// (an LSH slot's owner, or a fingerprint in its band tables) that is not
/// written yet.
pub const OWNER_WAITS: usize = 20;
pub const OWNER_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The protocol could not complete.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("store replied {got} replies to {sent} ops")]
    Replies { sent: usize, got: usize },
    #[error("band table {key} holds {len} bytes, not whole members: not written by this layout")]
    BadTable { key: String, len: usize },
}

impl From<TableError> for StageError {
    fn from(e: TableError) -> Self {
        StageError::Transient(e.to_string())
    }
}

/// Rewrites a band table at its exact size ([`crate::room`]): `COPY` to
/// a scratch key, then `RENAME` back, in one script so that no member
/// appended meanwhile is lost. (A `COPY` keeps the room of the copy's size
/// class for later `APPEND`s; a `SET` of the same value would not: Redis
/// trims a stored value whose room exceeds a tenth of it to its bare
/// length, and the next `APPEND` doubles it again.) KEYS = the table, the
/// scratch key ([`Table::compaction_keys`]: same slot). Reply Int(1; 0 when
/// the table is absent). The memory store has no allocator to tidy: its
/// twin changes nothing.
pub static COMPACT: Script = Script::new("BAND_COMPACT", compact_lua, compact_twin);

fn compact_lua() -> String {
    r#"
if redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE') == 0 then
  return 0
end
redis.call('RENAME', KEYS[2], KEYS[1])
return 1
"#
    .to_string()
}

fn compact_twin(m: &mut Memory<'_>, keys: &[String], _: &[Vec<u8>]) -> Result<Reply, StoreError> {
    // The scratch key is required as the script requires it; the twin does
    // not touch it.
    let [key, _scratch] = key_args(&COMPACT, keys)?;
    Ok(Reply::Int(i64::from(m.get(key)?.is_some())))
}

/// The `fpr` number of a document: its sequence number and search radius.
pub fn record(seq: i64, radius: u32) -> i64 {
    (seq << RADIUS_BITS) | i64::from(radius & ((1 << RADIUS_BITS) - 1))
}

/// The sequence number and search radius of an `fpr` number.
pub fn parse_record(value: i64) -> (i64, u32) {
    (
        value >> RADIUS_BITS,
        (value & ((1 << RADIUS_BITS) - 1)) as u32,
    )
}

/// The first byte of a record with a signature, and of one without (a
/// record of the layout before the URL hash, or of the signature before
/// issue 31, starts otherwise and is not read).
const SIGNED: u8 = 0xFD;
const UNSIGNED: u8 = 0xFC;

/// A stored record: sequence number, radius, MinHash signature, and the
/// URL hash of the document that had the fingerprint first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub seq: i64,
    pub radius: u32,
    pub signature: Option<Signature>,
    pub url: u64,
}

/// The `fpr` value of a document: `SIGNED`, the [`record`] number as 8
/// bytes little endian, the [`SIGNATURE_BYTES`] of the signature and the
/// URL hash (8 bytes): 49 bytes, so a shard stays a listpack (values up to
/// 64 bytes); without a signature `UNSIGNED`, the number and the URL hash.
pub fn encode_record(seq: i64, radius: u32, signature: Option<&Signature>, url: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 8 + SIGNATURE_BYTES + 8);
    out.push(if signature.is_some() {
        SIGNED
    } else {
        UNSIGNED
    });
    out.extend_from_slice(&record(seq, radius).to_le_bytes());
    if let Some(sig) = signature {
        out.extend_from_slice(sig);
    }
    out.extend_from_slice(&url.to_le_bytes());
    out
}

/// The [`Record`] of an `fpr` value; `None` for a value it cannot read.
pub fn decode_record(value: &[u8]) -> Option<Record> {
    let number = i64::from_le_bytes(value.get(1..9)?.try_into().ok()?);
    let (seq, radius) = parse_record(number);
    let (signature, rest) = match *value.first()? {
        SIGNED => (
            Some(value.get(9..9 + SIGNATURE_BYTES)?.try_into().ok()?),
            9 + SIGNATURE_BYTES,
        ),
        UNSIGNED => (None, 9),
        _ => return None,
    };
    let url = u64::from_le_bytes(value.get(rest..rest + 8)?.try_into().ok()?);
    Some(Record {
        seq,
        radius,
        signature,
        url,
    })
}

/// A record reply: `None` for a missing field.
fn opt_record(r: &Reply) -> Result<Option<Record>, StoreError> {
    match r.data()? {
        None => Ok(None),
        Some(v) => decode_record(&v).map(Some).ok_or(StoreError::Reply {
            op: "HGET",
            reply: r.clone(),
        }),
    }
}

/// Where the lookup of a document whose fingerprint it did not record
/// starts: the record of the document that did (its number, distance 0, and
/// the two signatures' estimate) when both signals agree that they are
/// near-duplicates, as for any other match ([`near_duplicates`] at
/// distance 0); else its own number `seq`. The same SimHash is no proof of
/// the same text: long texts on one subject drift to one fingerprint (two
/// release notes of one project, exact word 3-shingle Jaccard 0.03, were
/// marked at distance 0 before). Such a document is an original, and later
/// copies of it find the first record of the fingerprint, not its own: the
/// cost, where a mirror is then stored twice, is measured by `cargo bench
/// -p evaluation --bench neardup_sites`. A record not readable yet cannot
/// happen on one server (records are never deleted): counted as its own.
pub fn own_record(
    probe: &Probe,
    seq: i64,
    record_of: &HashMap<u64, Option<Record>>,
) -> (i64, Option<f64>) {
    let Some(r) = record_of.get(&probe.fingerprint).copied().flatten() else {
        return (seq, None);
    };
    let (mine, theirs) = (probe.signature.as_ref(), r.signature.as_ref());
    if near_duplicates(0, probe.radius.min(r.radius), mine, theirs) {
        (r.seq, mine.zip(theirs).map(|(a, b)| jaccard(a, b)))
    } else {
        (seq, None)
    }
}

/// What round 1 of the protocol left for the others ([`Table::inserted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    /// One sequence number per document, in order.
    pub seqs: Vec<i64>,
    /// Per document, the LSH bands whose slot was owned already.
    pub taken: Vec<Vec<usize>>,
    /// The band tables to rewrite at their exact size.
    pub compact: Vec<String>,
}

/// A stored fingerprint near a queried one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Near {
    pub fingerprint: u64,
    pub distance: u32,
    /// The URL hash of the first document that had it (`None` while not
    /// yet recorded).
    pub url: Option<u64>,
}

/// The banded table of one namespace.
#[derive(Clone)]
pub struct Table {
    store: Store,
    keys: Keys,
    layout: Layout,
}

fn get(replies: &[Reply], i: usize) -> Result<&Reply, TableError> {
    replies.get(i).ok_or(TableError::Replies {
        sent: i + 1,
        got: replies.len(),
    })
}

/// What a batch's round 2 found, per document, before the records of the
/// matches are read: plain data, decided on by [`Lookups::verdicts`].
struct Lookups<'a> {
    docs: &'a [(Probe, u64)],
    seqs: &'a [i64],
    /// Its own number, if its record was written now (else its
    /// fingerprint was recorded before: read in round 3).
    own: Vec<Option<i64>>,
    /// Its SimHash matches within its radius.
    matches: Vec<Vec<u64>>,
    /// The owners of the LSH slots it found taken (read in round 3).
    owners: Vec<Vec<u64>>,
}

impl Lookups<'_> {
    /// The fingerprints whose records round 3 reads, each once.
    fn wanted(&self) -> Vec<u64> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (i, (probe, _)) in self.docs.iter().enumerate() {
            let mine = (self.own[i].is_none()).then_some(probe.fingerprint);
            for c in mine
                .into_iter()
                .chain(self.matches[i].iter().copied())
                .chain(self.owners[i].iter().copied())
            {
                if seen.insert(c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// Where document `i`'s lookup starts: its own number when it recorded
    /// its fingerprint; else the record of the document that did, when
    /// both signals agree ([`own_record`]), or its own number.
    fn own_seq(&self, i: usize, record_of: &HashMap<u64, Option<Record>>) -> (i64, Option<f64>) {
        match self.own[i] {
            Some(seq) => (seq, None),
            None => own_record(&self.docs[i].0, self.seqs[i], record_of),
        }
    }

    /// The verdict of each document, from the records read.
    fn verdicts(&self, record_of: &HashMap<u64, Option<Record>>) -> Vec<Verdict> {
        let seen_of = |cands: &[u64]| -> Vec<Seen> {
            cands
                .iter()
                .map(|&c| {
                    let r = record_of.get(&c).copied().flatten();
                    Seen {
                        fingerprint: c,
                        seq: r.map(|r| r.seq),
                        radius: r.map_or(0, |r| r.radius),
                        signature: r.and_then(|r| r.signature),
                    }
                })
                .collect()
        };
        let url_of = |seq: i64, cands: &[u64], own_fp: u64| -> Option<u64> {
            cands
                .iter()
                .chain(std::iter::once(&own_fp))
                .filter_map(|c| record_of.get(c).copied().flatten())
                .find(|r| r.seq == seq)
                .map(|r| r.url)
        };
        self.docs
            .iter()
            .enumerate()
            .map(|(i, &(probe, me))| {
                let mine = self.own_seq(i, record_of);
                // The SimHash matches first; the LSH owners only when no
                // SimHash match already makes it a duplicate.
                let mut e = earliest(&probe, mine, &seen_of(&self.matches[i]));
                let mut cands: Vec<u64> = self.matches[i].clone();
                if e.seq == mine.0 && !self.owners[i].is_empty() {
                    cands.extend(&self.owners[i]);
                    e = earliest(&probe, mine, &seen_of(&cands));
                }
                match url_of(e.seq, &cands, probe.fingerprint) {
                    // Its own record (or a redelivery's).
                    Some(u) if u == me => Verdict::Original,
                    Some(u) => Verdict::Duplicate {
                        of: u,
                        distance: e.distance,
                        jaccard: e.jaccard,
                        radius: e.radius,
                    },
                    // Its own number, recorded now.
                    None => Verdict::Original,
                }
            })
            .collect()
    }
}

/// Round 2's lookups for a batch ([`Table::lookup_ops`]).
struct LookupOps {
    /// The `MGET` of every band table, then the reads of the taken LSH
    /// slots' owners.
    ops: Vec<Op>,
    /// Each `MGET` key's band and value.
    tables: Vec<(usize, u64)>,
    /// Where each document's tables start in the `MGET` (and the end).
    starts: Vec<usize>,
    /// Per document, the ops reading its taken slots' owners.
    owner_ops: Vec<Vec<usize>>,
}

impl Table {
    pub fn new(store: Store, namespace: &str, layout: Layout) -> Self {
        Table {
            store,
            keys: Keys::new(namespace),
            layout,
        }
    }

    /// This table at its namespace's scale (`pipeline::scale`).
    pub fn with_scale(mut self, scale: pipeline::scale::Scale) -> Self {
        self.keys = self.keys.with_scale(scale);
        self
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The part of band `band` that names its tables: the band's top
    /// [`pipeline::scale::Scale::band_key_bits`] bits (all of it when it
    /// is no wider). Its members are the fingerprint's other bits, the
    /// rest of the band among them, so a table may hold fingerprints of
    /// other values of the band: a lookup keeps those of its own value
    /// ([`Table::band_members`]), and finds what it would with a table
    /// per value.
    fn stored_band(&self, band: usize) -> Band {
        let b = self.layout.bands()[band];
        let bits = self.keys.scale().band_key_bits.clamp(1, b.bits.max(1));
        Band {
            shift: b.shift + b.bits - bits,
            bits,
        }
    }

    /// The stored part of band `band` and, for band value `value`, the
    /// value that names its table.
    fn stored_value(&self, band: usize, value: u64) -> (Band, u64) {
        let b = self.layout.bands()[band];
        let stored = self.stored_band(band);
        (stored, value >> (b.bits - stored.bits))
    }

    /// The key of band `band`'s table for band value `value`.
    fn band_key(&self, band: usize, value: u64) -> String {
        self.keys.band(band, self.stored_value(band, value).1)
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The `fpr` shard key of a fingerprint.
    pub fn sequence_key(&self, fp: u64) -> String {
        self.keys.fingerprint_sequence(self.keys.shard_of(fp))
    }

    /// The band tables of a fingerprint, each with the member it adds there
    /// ([`crate::bands::Band::member`]).
    pub fn band_entries(&self, fp: u64) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
        self.layout.keys(fp).map(move |(band, value)| {
            (
                self.band_key(band, value),
                self.stored_band(band).member(fp),
            )
        })
    }

    /// The band tables a lookup reads ([`Layout::lookup_keys`]): each key,
    /// with the band and value it belongs to.
    fn lookup_keys(&self, probe: &Probe) -> impl Iterator<Item = ((usize, u64), String)> + '_ {
        self.layout
            .lookup_keys(probe)
            .map(|(band, value)| ((band, value), self.band_key(band, value)))
    }

    /// The replies of an `MGET` of `n` keys.
    fn mget_replies(reply: &Reply, n: usize) -> Result<&[Reply], TableError> {
        match reply {
            Reply::Array(items) if items.len() == n => Ok(items),
            Reply::Array(items) => Err(TableError::Replies {
                sent: n,
                got: items.len(),
            }),
            other => Err(StoreError::Reply {
                op: "MGET",
                reply: other.clone(),
            }
            .into()),
        }
    }

    /// The fingerprints in a band table's value (its reply in an `MGET`).
    fn band_members(
        &self,
        (band, value): (usize, u64),
        reply: &Reply,
    ) -> Result<Vec<u64>, TableError> {
        let bytes: &[u8] = match reply {
            Reply::Nil => return Ok(Vec::new()),
            Reply::Data(d) => d,
            other => {
                return Err(StoreError::Reply {
                    op: "MGET",
                    reply: other.clone(),
                }
                .into())
            }
        };
        let Some(whole) = self.layout.bands().get(band) else {
            return Err(TableError::BadTable {
                key: format!("band {band}"),
                len: bytes.len(),
            });
        };
        let (stored, key_value) = self.stored_value(band, value);
        let members = stored
            .members(key_value, bytes)
            .ok_or_else(|| TableError::BadTable {
                key: self.band_key(band, value),
                len: bytes.len(),
            })?;
        Ok(if stored == *whole {
            members
        } else {
            members
                .into_iter()
                .filter(|&c| whole.value(c) == value)
                .collect()
        })
    }

    /// The MinHash LSH key and field of band `band`'s value `value`: the
    /// shard of its top bits, and the 32 bits below them as the field
    /// (two values sharing both only add a candidate, which the MinHash
    /// check weighs like any other).
    pub fn lsh_slot(&self, band: usize, value: u64) -> (String, String) {
        let shard = self.keys.shard_of(value);
        let field = (value >> (64 - self.keys.scale().shard_bits - 32)) as u32;
        (
            self.keys.minhash_band(band, shard),
            (field as i32).to_string(),
        )
    }

    /// Round 1's inserts for a batch: every fingerprint into its bands, and
    /// a claim of each of its MinHash LSH slots (the first fingerprint owns
    /// a slot). Then [`Table::number_op`].
    pub fn insert_ops(&self, probes: &[Probe]) -> Vec<Op> {
        let mut ops: Vec<Op> = probes
            .iter()
            .flat_map(|p| {
                self.band_entries(p.fingerprint)
                    .map(|(key, value)| Op::Append { key, value })
            })
            .collect();
        for p in probes {
            for (band, &value) in p.lsh.iter().flatten().enumerate() {
                let (key, field) = self.lsh_slot(band, value);
                ops.push(Op::HSetNx {
                    key,
                    field,
                    value: (p.fingerprint as i64).to_string().into_bytes(),
                });
            }
        }
        ops
    }

    /// The numbers of a batch of `n`, taken after its inserts.
    pub fn number_op(&self, n: usize) -> Op {
        Op::Incr {
            key: self.keys.sequence(),
            by: n as i64,
        }
    }

    /// What round 1 left for the others, from the replies to
    /// [`Table::insert_ops`] and to [`Table::number_op`]: the sequence
    /// numbers, per document the LSH bands whose slot another fingerprint
    /// (or an earlier delivery of this one) owned already, and the band
    /// tables its `APPEND`s made Redis double ([`room::outgrew`]). The
    /// slots' owners are read in round 2: a slot never changes once
    /// claimed, so reading it later reads the owner the claim found.
    pub fn inserted(
        &self,
        probes: &[Probe],
        inserts: &[Reply],
        counter: &Reply,
    ) -> Result<Inserted, TableError> {
        // The APPEND replies, in the order of `insert_ops`; a key is built
        // only for a table to compact.
        let mut compact = Vec::new();
        let mut at = 0;
        for p in probes {
            for (band, value) in self.layout.keys(p.fingerprint) {
                let len = get(inserts, at)?.int()?;
                let added = self.stored_band(band).member_bytes();
                if room::outgrew(usize::try_from(len).unwrap_or(0), added) {
                    compact.push(self.band_key(band, value));
                }
                at += 1;
            }
        }
        let mut taken = Vec::with_capacity(probes.len());
        for p in probes {
            let mut mine = Vec::new();
            for (band, _) in p.lsh.iter().flatten().enumerate() {
                if get(inserts, at)?.int()? == 0 {
                    mine.push(band);
                }
                at += 1;
            }
            taken.push(mine);
        }
        let seqs = Self::sequences(probes.len(), counter)?;
        self.warn_when_outgrown(&seqs);
        Ok(Inserted {
            seqs,
            taken,
            compact,
        })
    }

    /// Warns when a batch's numbers cross a multiple of the fingerprints
    /// the namespace's scale keeps compact (128 a shard, Redis's listpack
    /// limit): past it the `fpr` and `lsh` shards become hash tables and
    /// each page costs more Redis memory. The worker whose batch crosses
    /// warns, once a multiple.
    fn warn_when_outgrown(&self, seqs: &[i64]) {
        let scale = self.keys.scale();
        let compact = scale.compact_fingerprints();
        if let (Some(&first), Some(&last)) = (seqs.first(), seqs.last()) {
            if first > 0 && (first - 1) / compact != last / compact {
                tracing::warn!(
                    fingerprints = last,
                    scale = %scale.encode(),
                    "the namespace holds more fingerprints than its scale keeps compact \
                     (pipeline::scale): Redis memory per page grows from here; raise \
                     hash-max-listpack-entries, or crawl into a new namespace with a \
                     larger --expected-pages"
                );
            }
        }
    }

    /// The sequence numbers of a batch of `n`, from the counter's reply.
    pub fn sequences(n: usize, counter: &Reply) -> Result<Vec<i64>, StoreError> {
        let last = counter.int()?;
        Ok((0..n as i64).map(|i| last - n as i64 + 1 + i).collect())
    }

    /// Runs `first`, then `then` after it: one round trip where the store
    /// keeps a batch's order ([`Store::ordered`]), two on a cluster.
    /// `confirmed`: `first` holds reads whose answer may ack a message
    /// ([`Store::exec_confirmed`]).
    async fn in_order(
        &self,
        first: Vec<Op>,
        then: Vec<Op>,
        confirmed: bool,
    ) -> Result<Vec<Reply>, TableError> {
        let n = first.len() + then.len();
        let exec = |ops: Vec<Op>| async move {
            if confirmed {
                self.store.exec_confirmed(&ops).await
            } else {
                self.store.exec(&ops).await
            }
        };
        let replies = if self.store.ordered() {
            let mut ops = first;
            ops.extend(then);
            exec(ops).await?
        } else {
            let mut replies = exec(first).await?;
            replies.extend(self.store.exec(&then).await?);
            replies
        };
        if replies.len() != n {
            return Err(TableError::Replies {
                sent: n,
                got: replies.len(),
            });
        }
        Ok(replies)
    }

    /// Round 1 for a batch, with `before` (reads of the caller's, whose
    /// answer may ack its message: confirmed, [`Store::exec_confirmed`])
    /// in the same first round trip: their replies, and what round 1
    /// left.
    pub async fn insert(
        &self,
        before: Vec<Op>,
        probes: &[Probe],
    ) -> Result<(Vec<Reply>, Inserted), TableError> {
        let skip = before.len();
        let mut first = before;
        first.extend(self.insert_ops(probes));
        let mut replies = self
            .in_order(first, vec![self.number_op(probes.len())], skip > 0)
            .await?;
        let counter = replies.pop().unwrap_or(Reply::Nil);
        let inserted = self.inserted(probes, replies.get(skip..).unwrap_or_default(), &counter)?;
        replies.truncate(skip);
        Ok((replies, inserted))
    }

    /// The keys of a band table's compaction ([`COMPACT`]): the table, and
    /// its scratch key `<table>~{<table>}` (the table's name as its hash
    /// tag: the same slot).
    pub fn compaction_keys(key: &str) -> [String; 2] {
        [key.to_string(), format!("{key}~{{{key}}}")]
    }

    /// The op that rewrites a band table at its exact size ([`COMPACT`]).
    pub fn compaction(key: &str) -> Op {
        let [table, scratch] = Self::compaction_keys(key);
        ScriptCall::new(&COMPACT).key(table).key(scratch).op()
    }

    /// All rounds for a batch of (lookup, URL hash): one verdict each.
    pub async fn decide(&self, docs: &[(Probe, u64)]) -> Result<Vec<Verdict>, TableError> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let probes: Vec<Probe> = docs.iter().map(|d| d.0).collect();
        let (_, inserted) = self.insert(Vec::new(), &probes).await?;
        self.record_and_decide(docs, &inserted).await
    }

    /// The records of fingerprints `fps` (`None` for one not recorded),
    /// into `into`.
    async fn read_records(
        &self,
        fps: &[u64],
        into: &mut HashMap<u64, Option<Record>>,
    ) -> Result<(), TableError> {
        let ops: Vec<Op> = fps
            .iter()
            .map(|&c| Op::HGet {
                key: self.sequence_key(c),
                field: (c as i64).to_string(),
            })
            .collect();
        let replies = self.store.exec(&ops).await?;
        for (i, &c) in fps.iter().enumerate() {
            into.insert(c, opt_record(get(&replies, i)?)?);
        }
        Ok(())
    }

    /// Round 2's records: each document's `HSETNX fpr`.
    fn record_ops(&self, docs: &[(Probe, u64)], seqs: &[i64]) -> Vec<Op> {
        docs.iter()
            .zip(seqs)
            .map(|(&(probe, url), &seq)| Op::HSetNx {
                key: self.sequence_key(probe.fingerprint),
                field: (probe.fingerprint as i64).to_string(),
                value: encode_record(seq, probe.radius, probe.signature.as_ref(), url),
            })
            .collect()
    }

    /// Round 2's lookups: every band table of the batch in one `MGET`, and
    /// the owners of the LSH slots found taken; where each document's
    /// tables start in the `MGET`.
    fn lookup_ops(&self, docs: &[(Probe, u64)], taken: &[Vec<usize>]) -> LookupOps {
        let mut starts = Vec::with_capacity(docs.len() + 1);
        let mut tables = Vec::new();
        let mut keys = Vec::new();
        for (probe, _) in docs {
            starts.push(keys.len());
            for (table, key) in self.lookup_keys(probe) {
                tables.push(table);
                keys.push(key);
            }
        }
        starts.push(keys.len());
        let mut ops = vec![Op::MGet { keys }];
        // Per document, the ops reading its taken slots' owners.
        let mut owner_ops = Vec::with_capacity(docs.len());
        for (i, (probe, _)) in docs.iter().enumerate() {
            let mut mine = Vec::new();
            for &band in taken.get(i).map(Vec::as_slice).unwrap_or_default() {
                if let Some(&value) = probe.lsh.as_ref().and_then(|v| v.get(band)) {
                    let (key, field) = self.lsh_slot(band, value);
                    mine.push(ops.len());
                    ops.push(Op::HGet { key, field });
                }
            }
            owner_ops.push(mine);
        }
        LookupOps {
            ops,
            tables,
            starts,
            owner_ops,
        }
    }

    /// Rounds 2 and 3 for a batch whose round 1 ([`Table::insert`]) is done.
    /// Round 2 also compacts the band tables round 1 made Redis double.
    pub async fn record_and_decide(
        &self,
        docs: &[(Probe, u64)],
        inserted: &Inserted,
    ) -> Result<Vec<Verdict>, TableError> {
        let seqs = &inserted.seqs[..];
        // 2. Record every document, then look every one up.
        let records = self.record_ops(docs, seqs);
        let n_records = records.len();
        let LookupOps {
            ops: mut lookups,
            tables,
            starts,
            owner_ops,
        } = self.lookup_ops(docs, &inserted.taken);
        let n_lookups = lookups.len();
        lookups.extend(inserted.compact.iter().map(|k| Self::compaction(k)));
        let replies = self.in_order(records, lookups, false).await?;
        let (recorded, looked) = replies.split_at(n_records);
        let values = Self::mget_replies(get(looked, 0)?, tables.len())?;
        let mut found = Lookups {
            docs,
            seqs,
            own: Vec::with_capacity(docs.len()),
            matches: Vec::with_capacity(docs.len()),
            owners: Vec::with_capacity(docs.len()),
        };
        for (i, (&(probe, _), &seq)) in docs.iter().zip(seqs).enumerate() {
            let fp = probe.fingerprint;
            found
                .own
                .push((get(recorded, i)?.int()? == 1).then_some(seq));
            let mut near = Vec::new();
            for at in starts[i]..starts[i + 1] {
                for c in self.band_members(tables[at], &values[at])? {
                    if c != fp && distance(fp, c) <= probe.radius && !near.contains(&c) {
                        near.push(c);
                    }
                }
            }
            found.matches.push(near);
            let mut owners = Vec::new();
            for &at in &owner_ops[i] {
                if at >= n_lookups {
                    continue;
                }
                let owner = get(looked, at)?
                    .string()?
                    .and_then(|s| s.parse::<i64>().ok())
                    .map(|v| v as u64);
                if let Some(c) = owner.filter(|&c| c != fp) {
                    if !found.matches[i].contains(&c) && !owners.contains(&c) {
                        owners.push(c);
                    }
                }
            }
            found.owners.push(owners);
        }

        // 3. The records of the matches (and of fingerprints another
        //    document recorded first). A match whose record is not written
        //    yet (its worker is between rounds 1 and 2) may hold a lower
        //    number than this document's and be late only with its record:
        //    its own lookup then sees this document recorded with a higher
        //    number, so wait a little for the record. One that never comes
        //    (its worker died and the message went elsewhere) counts as
        //    later than everything.
        let wanted = found.wanted();
        let mut record_of: HashMap<u64, Option<Record>> = HashMap::with_capacity(wanted.len());
        self.read_records(&wanted, &mut record_of).await?;
        for _ in 0..OWNER_WAITS {
            let missing: Vec<u64> = wanted
                .iter()
                .copied()
                .filter(|c| record_of.get(c).copied().flatten().is_none())
                .collect();
            if missing.is_empty() {
                break;
            }
            tokio::time::sleep(OWNER_WAIT).await;
            self.read_records(&missing, &mut record_of).await?;
        }
        Ok(found.verdicts(&record_of))
    }

    /// Read-only: every stored fingerprint the lookup `probe` reaches
    /// (within its radius and the fingerprint's own; within k for one not
    /// recorded yet) that the second signal confirms, with the first
    /// document that had it, nearest first.
    pub async fn near(&self, probe: &Probe) -> Result<Vec<Near>, TableError> {
        let fp = probe.fingerprint;
        let (tables, keys): (Vec<_>, Vec<String>) = self.lookup_keys(probe).unzip();
        let n = keys.len();
        let reply = self.store.one(Op::MGet { keys }).await?;
        let mut found: Vec<u64> = Vec::new();
        for (&table, r) in tables.iter().zip(Self::mget_replies(&reply, n)?) {
            for c in self.band_members(table, r)? {
                if distance(fp, c) <= probe.radius && !found.contains(&c) {
                    found.push(c);
                }
            }
        }
        let mut record_of: HashMap<u64, Option<Record>> = HashMap::with_capacity(found.len());
        self.read_records(&found, &mut record_of).await?;
        let mut out = Vec::with_capacity(found.len());
        for &c in &found {
            let r = record_of.get(&c).copied().flatten();
            let radius = r.map_or(self.layout.max_distance(), |r| r.radius);
            let agrees = near_duplicates(
                distance(fp, c),
                probe.radius.min(radius),
                probe.signature.as_ref(),
                r.and_then(|r| r.signature).as_ref(),
            );
            if agrees {
                out.push(Near {
                    fingerprint: c,
                    distance: distance(fp, c),
                    url: r.map(|r| r.url),
                });
            }
        }
        out.sort_by_key(|n| (n.distance, n.fingerprint));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table::new(Store::memory(), "t", Layout::default())
    }

    /// The URL hash of a test document's name.
    fn h(url: &str) -> u64 {
        pipeline::keys::url_hash(url)
    }

    /// [`Table::decide`] of documents named by URL.
    async fn decide(t: &Table, docs: &[(Probe, &str)]) -> Result<Vec<Verdict>, TableError> {
        let docs: Vec<(Probe, u64)> = docs.iter().map(|(p, u)| (*p, h(u))).collect();
        t.decide(&docs).await
    }

    /// A duplicate of `of` at `distance`, without the second signal.
    fn dup(of: &str, distance: u32) -> Verdict {
        Verdict::Duplicate {
            of: h(of),
            distance,
            jaccard: None,
            radius: if distance > 3 { 7 } else { 3 },
        }
    }

    /// An exact lookup (radius k = 3).
    fn p(fp: u64) -> Probe {
        Probe::exact(&Layout::default(), fp)
    }

    #[tokio::test]
    async fn first_is_original_and_near_ones_point_at_it() {
        let t = table();
        let fp = 0x0123_4567_89ab_cdefu64;
        let v = decide(
            &t,
            &[
                (p(fp), "a"),
                (p(fp ^ 0b111), "b"),
                (p(fp ^ 0b1111), "c"),
                (p(fp), "d"),
            ],
        )
        .await
        .unwrap();
        assert_eq!(v[0], Verdict::Original);
        assert_eq!(v[1], dup("a", 3));
        // 4 bits from a, 1 from b: b is earlier than c, so c points at b.
        assert_eq!(v[2], dup("b", 1));
        assert_eq!(v[3], dup("a", 0));
        // A redelivery of a stays the original; of d stays a duplicate.
        let v = decide(&t, &[(p(fp), "a"), (p(fp), "d")]).await.unwrap();
        assert_eq!(v[0], Verdict::Original);
        assert!(matches!(&v[1], Verdict::Duplicate { of, .. } if *of == h("a")));
        // Far fingerprints are originals, high bits as well as low.
        let v = decide(&t, &[(p(!fp), "far"), (p(fp ^ (0b1111 << 60)), "high")])
            .await
            .unwrap();
        assert_eq!(v, vec![Verdict::Original, Verdict::Original]);
    }

    /// Every scale files the same fingerprints under fewer or more keys:
    /// the verdicts and the read-only lookups are the same at each.
    #[tokio::test]
    async fn a_small_scale_decides_as_the_large_one() {
        use pipeline::scale::Scale;
        let small = Scale::for_pages(1_000);
        assert!(small.band_key_bits < 16 && small.shard_bits < Scale::LARGE.shard_bits);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x
        };
        // 60 originals, each with near copies 1 to 6 bits away (some as
        // short bodies probing flipped keys, radius 7).
        let mut docs = Vec::new();
        for i in 0..60 {
            let fp = next();
            docs.push((p(fp), format!("o{i}")));
            for j in 0..4 {
                let mut near = fp;
                for _ in 0..=(next() % 6) {
                    near ^= 1 << (next() % 64);
                }
                let probe = if j % 2 == 0 {
                    p(near)
                } else {
                    Probe {
                        radius: 7,
                        flips: (1 << (next() % 16)) | (1 << (16 + next() % 16)),
                        ..p(near)
                    }
                };
                docs.push((probe, format!("o{i}-{j}")));
            }
        }
        let mut verdicts = Vec::new();
        let mut nears = Vec::new();
        for scale in [Scale::LARGE, small] {
            let t = table().with_scale(scale);
            let mut v = Vec::new();
            for chunk in docs.chunks(7) {
                let batch: Vec<(Probe, &str)> =
                    chunk.iter().map(|(p, u)| (*p, u.as_str())).collect();
                v.extend(decide(&t, &batch).await.unwrap());
            }
            let mut n = Vec::new();
            for (probe, _) in &docs {
                let found = t.near(probe).await.unwrap();
                n.push(
                    found
                        .iter()
                        .map(|m| (m.fingerprint, m.url))
                        .collect::<Vec<_>>(),
                );
            }
            verdicts.push(v);
            nears.push(n);
        }
        let duplicates = verdicts[0]
            .iter()
            .filter(|v| matches!(v, Verdict::Duplicate { .. }))
            .count();
        assert!(
            duplicates > 100,
            "the set has near-duplicates: {duplicates}"
        );
        assert_eq!(verdicts[0], verdicts[1]);
        assert_eq!(nears[0], nears[1]);
        // The small scale names fewer band tables: 2^8 a band.
        let t = table().with_scale(small);
        let keys: HashSet<String> = docs
            .iter()
            .flat_map(|(p, _)| t.band_entries(p.fingerprint).map(|(k, _)| k))
            .collect();
        assert!(keys.len() <= 4 << small.band_key_bits, "{}", keys.len());
    }

    #[tokio::test]
    async fn near_lists_matches_within_k_with_their_urls() {
        let t = table();
        let fp = u64::MAX - 5; // negative as i64
        decide(
            &t,
            &[
                (p(fp), "a"),
                (p(fp ^ (1 << 63)), "b"),
                (p(fp ^ 0xF0), "far"),
            ],
        )
        .await
        .unwrap();
        let near = t.near(&p(fp ^ 0b11)).await.unwrap();
        let got: Vec<(u32, Option<u64>)> = near.iter().map(|n| (n.distance, n.url)).collect();
        assert_eq!(got, vec![(2, Some(h("a"))), (3, Some(h("b")))]);
    }

    #[tokio::test]
    async fn short_bodies_reach_past_k_within_both_radii() {
        let t = table();
        let fp = 0x0123_4567_89ab_cdefu64;
        // Differs in 2 bits of every band but band 0, where it differs in
        // bit 5 only: the probe of band 0 with bit 5 flipped finds it.
        let near = fp ^ (1 << 5) ^ (0b11 << 20) ^ (0b11 << 36) ^ (0b11 << 50);
        let short = |fp, radius| Probe {
            radius,
            flips: (1 << 5) | (1 << 16) | (1 << 32) | (1 << 48),
            ..p(fp)
        };
        let v = decide(&t, &[(short(fp, 7), "a")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        let v = decide(&t, &[(short(near, 7), "b")]).await.unwrap();
        assert_eq!(v, vec![dup("a", 7)]);
        // Not within the stored document's radius: a long article stored
        // with radius 3 is no match at 7.
        let t = table();
        decide(&t, &[(p(fp), "long")]).await.unwrap();
        let v = decide(&t, &[(short(near, 7), "short")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        // Read-only lookups apply the same rule: only the short one itself.
        let found = t.near(&short(near, 7)).await.unwrap();
        let urls: Vec<Option<u64>> = found.iter().map(|n| n.url).collect();
        assert_eq!(urls, vec![Some(h("short"))]);
        // Without the flipped key it is not seen at all.
        let t = table();
        decide(&t, &[(short(fp, 7), "a")]).await.unwrap();
        let blind = Probe {
            flips: 0,
            ..short(near, 7)
        };
        assert_eq!(
            decide(&t, &[(blind, "c")]).await.unwrap(),
            vec![Verdict::Original]
        );
    }

    /// The same fingerprint is no proof of the same text: at distance 0 the
    /// second signal must agree too, as at any other distance.
    #[tokio::test]
    async fn the_same_fingerprint_needs_the_second_signal_too() {
        let t = table();
        let fp = 0x0123_4567_89ab_cdefu64;
        let signed = |sig: [u8; crate::minhash::SIGNATURE_BYTES]| Probe {
            signature: Some(sig),
            ..p(fp)
        };
        let a = [0b0110_1100u8; crate::minhash::SIGNATURE_BYTES];
        let other: [u8; crate::minhash::SIGNATURE_BYTES] = std::array::from_fn(|i| i as u8);
        let v = decide(
            &t,
            &[
                (signed(a), "a"),
                (signed(other), "other"),
                (signed(a), "copy"),
            ],
        )
        .await
        .unwrap();
        assert_eq!(v[0], Verdict::Original);
        // Another text that landed on the same fingerprint is an original.
        assert_eq!(v[1], Verdict::Original);
        // The same text is a duplicate, with the estimate that confirmed it.
        assert_eq!(
            v[2],
            Verdict::Duplicate {
                of: h("a"),
                distance: 0,
                jaccard: Some(1.0),
                radius: 3
            }
        );
        // A redelivery of the first stays the original.
        assert_eq!(
            decide(&t, &[(signed(a), "a")]).await.unwrap(),
            vec![Verdict::Original]
        );
    }

    #[tokio::test]
    async fn an_unrecorded_match_is_waited_for_then_counts_as_later() {
        let t = table();
        let fp = 42u64;
        // Inserted in the bands but never recorded (its worker died).
        let ops = t.insert_ops(&[p(fp ^ 1)]);
        t.store().exec(&ops).await.unwrap();
        let started = std::time::Instant::now();
        let v = decide(&t, &[(p(fp), "me")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        assert!(started.elapsed() >= OWNER_WAIT * OWNER_WAITS as u32);
    }

    /// A match that took its number before this document but records it
    /// late: its own lookup will see this document recorded with a higher
    /// number and keep itself as the original, so this one must wait for
    /// the record and be the duplicate, not a second original.
    #[tokio::test]
    async fn a_match_numbered_first_and_recorded_late_is_waited_for() {
        let t = table();
        let early = p(42 ^ 1);
        // Round 1 of the early document: inserted and numbered (1) ...
        let (_, inserted) = t.insert(Vec::new(), &[early]).await.unwrap();
        // ... and its round 2 comes while the late one waits.
        let late = {
            let t = t.clone();
            tokio::spawn(async move { decide(&t, &[(p(42), "late")]).await.unwrap() })
        };
        tokio::time::sleep(OWNER_WAIT * 3).await;
        let early_verdict = t
            .record_and_decide(&[(early, h("early"))], &inserted)
            .await
            .unwrap();
        assert_eq!(early_verdict, vec![Verdict::Original]);
        assert_eq!(late.await.unwrap(), vec![dup("early", 1)]);
    }

    #[tokio::test]
    async fn an_lsh_owner_that_never_records_is_waited_for_then_counts_as_later() {
        let t = table();
        let lsh = Some([7u64; crate::minhash::BANDS]);
        let sig = Some([1u8; crate::minhash::SIGNATURE_BYTES]);
        let with = |fp| Probe {
            lsh,
            signature: sig,
            ..p(fp)
        };
        // The owner claimed the slots and took its number, then died.
        t.insert(Vec::new(), &[with(1 << 40)]).await.unwrap();
        let started = std::time::Instant::now();
        // Beyond the SimHash radius (3) but within MAX_PAIR_DISTANCE.
        let beyond = (1 << 40) | 0xFFF;
        let v = decide(&t, &[(with(beyond), "me")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        assert!(started.elapsed() >= OWNER_WAIT * OWNER_WAITS as u32);
        // A recorded owner is found at once, beyond the SimHash radius.
        let t = table();
        decide(&t, &[(with(1 << 40), "owner")]).await.unwrap();
        let v = decide(&t, &[(with(beyond), "later")]).await.unwrap();
        assert!(
            matches!(&v[0], Verdict::Duplicate { of, .. } if *of == h("owner")),
            "{v:?}"
        );
    }
}
