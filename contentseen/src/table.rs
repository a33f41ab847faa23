//! The banded SimHash table in the store, and the race-free protocol that
//! decides originals over it, for one document or a batch of many.
//!
//! ## Keys (Redis, or the memory store of `crawler run`: same ops, same logic)
//!
//! - `<ns>:bands:<i>:<value>`: for band i of the [`Layout`] and the band's
//!   value, a string: the members of the fingerprints filed there, in the
//!   order they were added ([`crate::bands::Band::member`]: the 48 bits
//!   outside a 16-bit band, 6 bytes each). Added with `APPEND`, read with
//!   `MGET`, every lookup of a batch in one command (Redis spends about as
//!   much again on dispatching a command as on a read: at 1M fingerprints
//!   the same 5.1 reads a document took 6.2 µs inside 5.1 `GET`s and 4.1 µs
//!   inside one `MGET` per batch, and Redis's whole CPU per document fell
//!   from 35–40 µs to 27–31 µs). A plain string is
//!   the cheapest thing Redis can hand back (a set's `DUMP` compresses its
//!   payload with LZF first, which cost 2.5 µs a call at 15 members and
//!   grows with the set; `SMEMBERS` formats every member). The hot path:
//!   every lookup reads k+1 of them. 4 × 65,536 keys with the default
//!   layout, spread over the whole key space (no hash tag); the `MGET`,
//!   like the transaction below, spans cluster slots, so this layout is
//!   for one server. A redelivered document appends its member again (6
//!   bytes; lookups skip repeats).
//! - `<ns>:fpr:<shard>`: the fingerprint's top [`SEQUENCE_SHARD_BITS`] bits
//!   pick the shard, a hash from fingerprint (i64) to the record of the
//!   first document that had it: its sequence number and its search radius
//!   ([`crate::reach`]), as `seq << RADIUS_BITS | radius` ([`record`]).
//!   Integers only: a listpack of about 15 bytes per entry while a shard
//!   holds at most 128 entries (10M fingerprints give 76 per shard on
//!   average). Read only for the matches within the radius.
//! - `<ns>:sequrl:<block>`: sequence number >> [`URL_BLOCK_BITS`] picks the
//!   block, a hash from sequence number to the URL that took it. Read only
//!   for the original a duplicate points at.
//! - `<ns>:fpseq`: the sequence counter.
//! - `<ns>:lsh:<band>:<shard>`: for each of the [`crate::minhash::BANDS`]
//!   MinHash LSH bands, a hash from band value to the first fingerprint
//!   that had it (`HSETNX`); shard = the value's top
//!   [`SEQUENCE_SHARD_BITS`] bits. The records in `fpr` also carry the
//!   MinHash signature ([`encode_record`]): the second signal.
//!
//! ## Rounds (each op touches one key)
//!
//! 1. `APPEND` the fingerprint to its k+1 band tables, then one transaction
//!    ([`Op::ClaimFirst`], `MULTI`/`EXEC`): `HSETNX` its LSH slots, then
//!    `INCRBY` the counter by the batch size: every document of the batch
//!    gets a number taken after its insert, and the owner of an LSH slot is
//!    numbered before every document that finds it taken (so only the later
//!    one needs to see the pair; it waits up to [`OWNER_WAITS`] ×
//!    [`OWNER_WAIT`] for the owner's record). The transaction's keys span
//!    cluster slots: on Redis Cluster the LSH slots would need a hash tag
//!    per batch's shard, which this single-node layout does not have.
//!    (A transaction of native commands costs Redis about 5 µs less per
//!    document than the same claims in a Lua script: measured with 8 slots.)
//! 2. Record: `HSETNX fpr` (fingerprint → number and radius; the first
//!    document with this fingerprint keeps it), `HSET sequrl` (number →
//!    URL; one command per block of numbers the batch took); then look up
//!    the k+1 band tables, and for a short body 2 more
//!    ([`Layout::lookup_keys`]), all in one `MGET`; then rewrite at its
//!    exact size each band table that an `APPEND` of round 1 made Redis
//!    double ([`crate::room`], [`COMPACT`]; about one `APPEND` in 15 to 30
//!    once tables pass 512 bytes).
//! 3. Only when needed (a match within the radius, or a fingerprint
//!    recorded before): `HGET fpr` of those fingerprints. Then, for a
//!    document that found LSH slots taken and that no earlier SimHash
//!    match confirmed by the second signal already makes a duplicate:
//!    `HGET` the slots' owners (a slot never changes once claimed) and
//!    their records.
//! 4. Only for duplicates: `HGET sequrl` of the earliest match's number.
//!
//! Within one pipeline Redis runs the commands of a connection in order, so
//! each insert precedes the counter and each record precedes the lookups
//! (the memory store applies a batch in order under one lock). On Redis
//! Cluster, where a pipeline's commands to different nodes run
//! concurrently, a client must wait for round 1's `APPEND` replies before the
//! `INCRBY`, and for the records before the lookups: two more round trips,
//! the same rule. A document that sees a match recorded in `fpr` but no URL
//! for its number (only possible on a cluster) retries later
//! ([`TableError::MissingUrl`]).
//!
//! ## Cost, measured (`cargo bench -p evaluation --bench contentseen`)
//!
//! See the crate's README for the figures at 1M and 10M fingerprints and
//! the layout for 1 billion.

use std::collections::HashMap;

use pipeline::keys::Keys;
use pipeline::store::{key_arg, Memory, Op, Reply, Script, ScriptCall, StoreError};
use pipeline::worker::StageError;
use pipeline::Store;

use crate::bands::Layout;
use crate::decide::{earliest, near_duplicates, Seen, Verdict};
use crate::minhash::{Signature, SIGNATURE_BYTES};
use crate::reach::{Probe, RADIUS_BITS};
use crate::room;
use crate::simhash::distance;

/// Shards of the fingerprint → sequence number hash: 2^17, so 10M
/// fingerprints leave each shard a listpack of about 76 entries.
pub const SEQUENCE_SHARD_BITS: u32 = 17;

/// How many times, and how long, a lookup waits for the record of a match
/// (an LSH slot's owner, or a fingerprint in its band tables) that is not
/// written yet.
pub const OWNER_WAITS: usize = 20;
pub const OWNER_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Sequence numbers per URL block: 2^7 = 128, a listpack when URLs are
/// short (Redis keeps a hash a listpack up to 128 entries of ≤ 64 bytes).
pub const URL_BLOCK_BITS: u32 = 7;

/// The protocol could not complete.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("store replied {got} replies to {sent} ops")]
    Replies { sent: usize, got: usize },
    #[error("sequence number {seq} (fingerprint {fingerprint:016x}) has no URL recorded yet")]
    MissingUrl { seq: i64, fingerprint: u64 },
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
/// scratch key ([`Table::compaction_keys`]). Reply Int(1; 0 when the table is
/// absent). The memory store has no allocator to tidy: its twin changes
/// nothing.
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
    let key = key_arg(&COMPACT, keys, 0)?;
    key_arg(&COMPACT, keys, 1)?;
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

/// The first byte of a record that carries a signature (a decimal record
/// never starts with it).
const SIGNED: u8 = 0xFF;

/// A stored record: sequence number, radius and MinHash signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub seq: i64,
    pub radius: u32,
    pub signature: Option<Signature>,
}

/// The `fpr` value of a document: the decimal [`record`] number alone
/// (without a signature), or `SIGNED`, the number as 8 bytes little
/// endian and the [`SIGNATURE_BYTES`] of the signature: 41 bytes, so a
/// shard stays a listpack (values up to 64 bytes).
pub fn encode_record(seq: i64, radius: u32, signature: Option<&Signature>) -> Vec<u8> {
    let number = record(seq, radius);
    match signature {
        None => number.to_string().into_bytes(),
        Some(sig) => {
            let mut out = Vec::with_capacity(1 + 8 + SIGNATURE_BYTES);
            out.push(SIGNED);
            out.extend_from_slice(&number.to_le_bytes());
            out.extend_from_slice(sig);
            out
        }
    }
}

/// The [`Record`] of an `fpr` value; `None` for a value it cannot read.
pub fn decode_record(value: &[u8]) -> Option<Record> {
    if value.first() == Some(&SIGNED) {
        let number = i64::from_le_bytes(value.get(1..9)?.try_into().ok()?);
        let signature: Signature = value.get(9..9 + SIGNATURE_BYTES)?.try_into().ok()?;
        let (seq, radius) = parse_record(number);
        return Some(Record {
            seq,
            radius,
            signature: Some(signature),
        });
    }
    let number: i64 = std::str::from_utf8(value).ok()?.parse().ok()?;
    let (seq, radius) = parse_record(number);
    Some(Record {
        seq,
        radius,
        signature: None,
    })
}

/// A record reply: `None` for a missing field.
fn opt_record(r: &Reply) -> Result<Option<Record>, StoreError> {
    match r {
        Reply::Nil => Ok(None),
        Reply::Int(n) => Ok(Some({
            let (seq, radius) = parse_record(*n);
            Record {
                seq,
                radius,
                signature: None,
            }
        })),
        r => match r.data()? {
            None => Ok(None),
            Some(v) => decode_record(&v).map(Some).ok_or(StoreError::Reply {
                op: "HGET",
                reply: r.clone(),
            }),
        },
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
    /// The first document that had it (`None` while not yet recorded).
    pub url: Option<String>,
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

impl Table {
    pub fn new(store: Store, namespace: &str, layout: Layout) -> Self {
        Table {
            store,
            keys: Keys::new(namespace),
            layout,
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The `fpr` shard key of a fingerprint.
    pub fn sequence_key(&self, fp: u64) -> String {
        self.keys
            .fingerprint_sequence(fp >> (64 - SEQUENCE_SHARD_BITS))
    }

    /// The `sequrl` block key of a sequence number.
    pub fn url_key(&self, seq: i64) -> String {
        self.keys.sequence_url(seq as u64 >> URL_BLOCK_BITS)
    }

    /// The band tables of a fingerprint, each with the member it adds there
    /// ([`crate::bands::Band::member`]).
    pub fn band_entries(&self, fp: u64) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
        self.layout.keys(fp).map(move |(band, value)| {
            (
                self.keys.band(band, value),
                self.layout.bands()[band].member(fp),
            )
        })
    }

    /// The band tables a lookup reads ([`Layout::lookup_keys`]): each key,
    /// with the band and value it belongs to.
    fn lookup_keys(&self, probe: &Probe) -> impl Iterator<Item = ((usize, u64), String)> + '_ {
        self.layout
            .lookup_keys(probe)
            .map(|(band, value)| ((band, value), self.keys.band(band, value)))
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
        self.layout
            .bands()
            .get(band)
            .and_then(|b| b.members(value, bytes))
            .ok_or_else(|| TableError::BadTable {
                key: self.keys.band(band, value),
                len: bytes.len(),
            })
    }

    /// The MinHash LSH key and field of band `band`'s value `value`.
    pub fn lsh_slot(&self, band: usize, value: u64) -> (String, String) {
        (
            self.keys
                .minhash_band(band, value >> (64 - SEQUENCE_SHARD_BITS)),
            (value as i64).to_string(),
        )
    }

    /// Round 1 for a batch: insert every fingerprint into its bands, then
    /// in one atomic op ([`Op::ClaimFirst`]) claim its MinHash LSH slots
    /// (the first fingerprint owns a slot) and take one sequence number per
    /// document: the owner of a slot is numbered before
    /// every document that finds it there, and every number is taken after
    /// the band inserts (ops of one pipeline run in order). The last op;
    /// callers may prepend ops of their own to the same pipeline.
    pub fn insert_ops(&self, probes: &[Probe]) -> Vec<Op> {
        let mut ops: Vec<Op> = probes
            .iter()
            .flat_map(|p| {
                self.band_entries(p.fingerprint)
                    .map(|(key, value)| Op::Append { key, value })
            })
            .collect();
        let mut slots = Vec::new();
        for p in probes {
            for (band, &value) in p.lsh.iter().flatten().enumerate() {
                let (key, field) = self.lsh_slot(band, value);
                slots.push((key, field, (p.fingerprint as i64).to_string().into_bytes()));
            }
        }
        ops.push(Op::ClaimFirst {
            slots,
            counter: self.keys.fingerprint_seq(),
            by: probes.len() as i64,
        });
        ops
    }

    /// The counter's value in the reply to the last op of
    /// [`Table::insert_ops`].
    pub fn counter(claimed: &Reply) -> Result<&Reply, TableError> {
        match claimed {
            Reply::Array(items) => items.last().ok_or(TableError::Replies { sent: 1, got: 0 }),
            other => Ok(other),
        }
    }

    /// What round 1 left for the others, from the replies to
    /// [`Table::insert_ops`] (exactly those, in order): the sequence
    /// numbers, per document the LSH bands whose slot another fingerprint
    /// (or an earlier delivery of this one) owned already, and the band
    /// tables its `APPEND`s made Redis double ([`room::outgrew`]). The
    /// slots' owners are read in round 2 ([`Table::record_and_decide`]): a
    /// slot never changes once claimed, so reading it later reads the owner
    /// the claim found.
    pub fn inserted(&self, probes: &[Probe], replies: &[Reply]) -> Result<Inserted, TableError> {
        let claimed = replies
            .last()
            .ok_or(TableError::Replies { sent: 1, got: 0 })?;
        // The APPEND replies, in the order of `insert_ops`; a key is built
        // only for a table to compact.
        let mut compact = Vec::new();
        let mut at = 0;
        for p in probes {
            for (band, value) in self.layout.keys(p.fingerprint) {
                let len = get(replies, at)?.int()?;
                let added = self.layout.bands()[band].member_bytes();
                if room::outgrew(usize::try_from(len).unwrap_or(0), added) {
                    compact.push(self.keys.band(band, value));
                }
                at += 1;
            }
        }
        let items: &[Reply] = match claimed {
            Reply::Array(items) => items,
            _ => &[],
        };
        let mut i = 0;
        let mut taken = Vec::with_capacity(probes.len());
        for p in probes {
            let mut mine = Vec::new();
            for (band, _) in p.lsh.iter().flatten().enumerate() {
                if get(items, i)?.int()? == 0 {
                    mine.push(band);
                }
                i += 1;
            }
            taken.push(mine);
        }
        Ok(Inserted {
            seqs: Self::sequences(probes.len(), Self::counter(claimed)?)?,
            taken,
            compact,
        })
    }

    /// The sequence numbers of a batch of `n`, from the counter's reply.
    pub fn sequences(n: usize, counter: &Reply) -> Result<Vec<i64>, StoreError> {
        let last = counter.int()?;
        Ok((0..n as i64).map(|i| last - n as i64 + 1 + i).collect())
    }

    /// The keys of a band table's compaction ([`COMPACT`]): the table, and
    /// its scratch key `<table>~`.
    pub fn compaction_keys(key: &str) -> [String; 2] {
        [key.to_string(), format!("{key}~")]
    }

    /// The op that rewrites a band table at its exact size ([`COMPACT`]).
    pub fn compaction(key: &str) -> Op {
        let [table, scratch] = Self::compaction_keys(key);
        ScriptCall::new(&COMPACT).key(table).key(scratch).op()
    }

    /// All rounds for a batch of (lookup, URL): one verdict each.
    pub async fn decide(&self, docs: &[(Probe, &str)]) -> Result<Vec<Verdict>, TableError> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let probes: Vec<Probe> = docs.iter().map(|d| d.0).collect();
        let ops = self.insert_ops(&probes);
        let replies = self.store.exec(&ops).await?;
        let inserted = self.inserted(&probes, &replies)?;
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

    /// Rounds 2–4 for a batch whose round 1 ([`Table::insert_ops`]) is
    /// done ([`Table::inserted`]). Round 2 also compacts the band tables
    /// round 1 made Redis double.
    pub async fn record_and_decide(
        &self,
        docs: &[(Probe, &str)],
        inserted: &Inserted,
    ) -> Result<Vec<Verdict>, TableError> {
        let seqs = &inserted.seqs[..];
        let taken = &inserted.taken[..];
        let nbands = self.layout.bands().len();
        // 2. Record every document, then look every one up.
        let mut ops = Vec::with_capacity(docs.len() * (2 + nbands));
        // Numbers are taken once, so the URL records of a batch (consecutive
        // numbers) need no NX: one HSET per block they fall in.
        let mut url_blocks: Vec<Op> = Vec::new();
        for (&(probe, url), &seq) in docs.iter().zip(seqs) {
            let fp = probe.fingerprint;
            ops.push(Op::HSetNx {
                key: self.sequence_key(fp),
                field: (fp as i64).to_string(),
                value: encode_record(seq, probe.radius, probe.signature.as_ref()),
            });
            let key = self.url_key(seq);
            let entry = (seq.to_string(), url.as_bytes().to_vec());
            match url_blocks.last_mut() {
                Some(Op::HSet { key: k, fields }) if *k == key => fields.push(entry),
                _ => url_blocks.push(Op::HSet {
                    key,
                    fields: vec![entry],
                }),
            }
        }
        ops.extend(url_blocks);
        // Every lookup of the batch in one `MGET` (the last op), and where
        // each document's keys start in it.
        let mut lookups = Vec::with_capacity(docs.len() + 1);
        let mut tables = Vec::with_capacity(docs.len() * (nbands + 2));
        let mut keys = Vec::with_capacity(docs.len() * (nbands + 2));
        for (probe, _) in docs {
            lookups.push(keys.len());
            for (table, key) in self.lookup_keys(probe) {
                tables.push(table);
                keys.push(key);
            }
        }
        lookups.push(keys.len());
        let n = keys.len();
        let mget = ops.len();
        ops.push(Op::MGet { keys });
        ops.extend(inserted.compact.iter().map(|k| Self::compaction(k)));
        let replies = self.store.exec(&ops).await?;
        if replies.len() != ops.len() {
            return Err(TableError::Replies {
                sent: ops.len(),
                got: replies.len(),
            });
        }
        let values = Self::mget_replies(get(&replies, mget)?, n)?;

        // Fingerprints whose records round 3 reads, deduplicated.
        let mut order: Vec<u64> = Vec::new();
        let mut wanted: std::collections::HashSet<u64> = std::collections::HashSet::new();
        let mut want = |fp: u64| {
            if wanted.insert(fp) {
                order.push(fp);
            }
        };
        // Per document: its own number if it recorded it, and its SimHash
        // matches within its radius.
        let mut own: Vec<Option<i64>> = Vec::with_capacity(docs.len());
        let mut matches: Vec<Vec<u64>> = Vec::with_capacity(docs.len());
        for (i, (&(probe, _), &seq)) in docs.iter().zip(seqs).enumerate() {
            let fp = probe.fingerprint;
            let recorded = replies[i].int()? == 1;
            own.push(recorded.then_some(seq));
            if !recorded {
                want(fp);
            }
            let mut near = Vec::new();
            for at in lookups[i]..lookups[i + 1] {
                for c in self.band_members(tables[at], &values[at])? {
                    if c != fp && distance(fp, c) <= probe.radius && !near.contains(&c) {
                        near.push(c);
                        want(c);
                    }
                }
            }
            matches.push(near);
        }

        // 3. The records of the matches (and of fingerprints another
        //    document recorded first).
        let mut record_of: HashMap<u64, Option<Record>> = HashMap::with_capacity(order.len());
        self.read_records(&order, &mut record_of).await?;
        let own_seq = |i: usize, record_of: &HashMap<u64, Option<Record>>| {
            // A fingerprint recorded by another document that is not
            // readable yet cannot happen on one server (records are never
            // deleted); count it as ours.
            own[i]
                .or_else(|| {
                    let fp = docs[i].0.fingerprint;
                    record_of.get(&fp).copied().flatten().map(|r| r.seq)
                })
                .unwrap_or(seqs[i])
        };
        let seen_of = |near: &[u64], record_of: &HashMap<u64, Option<Record>>| -> Vec<Seen> {
            near.iter()
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

        // The owners of the LSH slots a document found taken, read only
        // when its SimHash matches do not already make it a duplicate (an
        // earlier match that both signals confirm): then it is one whatever
        // the owners are, and most near-duplicates are found so, one read
        // per taken slot fewer each. An owner found this way is the earliest of its slot.
        let no_slots = Vec::new();
        let mut reads: Vec<(usize, Op)> = Vec::new();
        for (i, (probe, _)) in docs.iter().enumerate() {
            let slots = taken.get(i).unwrap_or(&no_slots);
            if slots.is_empty() {
                continue;
            }
            let mine = own_seq(i, &record_of);
            if earliest(probe, mine, &seen_of(&matches[i], &record_of)).seq < mine {
                continue;
            }
            for &band in slots {
                if let Some(&value) = probe.lsh.as_ref().and_then(|v| v.get(band)) {
                    let (key, field) = self.lsh_slot(band, value);
                    reads.push((i, Op::HGet { key, field }));
                }
            }
        }
        if !reads.is_empty() {
            let (who, ops): (Vec<usize>, Vec<Op>) = reads.into_iter().unzip();
            let replies = self.store.exec(&ops).await?;
            let mut unread = Vec::new();
            for (at, &i) in who.iter().enumerate() {
                let fp = docs[i].0.fingerprint;
                let owner = get(&replies, at)?
                    .string()?
                    .and_then(|s| s.parse::<i64>().ok())
                    .map(|v| v as u64);
                if let Some(c) = owner.filter(|&c| c != fp) {
                    if !matches[i].contains(&c) {
                        matches[i].push(c);
                    }
                    if !record_of.contains_key(&c) && !unread.contains(&c) {
                        unread.push(c);
                    }
                }
            }
            self.read_records(&unread, &mut record_of).await?;
        }
        // A match whose record is not written yet (its worker is between
        // rounds 1 and 2) may hold a lower number than this document's: an
        // LSH owner always does (round 1 is atomic) and only this document
        // sees that pair; a SimHash match may have taken its number first
        // and be late only with its record, and then its own lookup sees
        // this document recorded with a higher number. Either way, wait a
        // little for the record. One that never comes (its worker died and
        // the message went elsewhere) counts as later than everything.
        // (The owners read above are among the matches.)
        let awaited: Vec<u64> = {
            let mut seen = std::collections::HashSet::new();
            matches
                .iter()
                .flatten()
                .copied()
                .filter(|c| seen.insert(*c))
                .collect()
        };
        for _ in 0..OWNER_WAITS {
            let missing: Vec<u64> = awaited
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

        // The earliest per document; URLs to read for the others.
        let mut picks = Vec::with_capacity(docs.len());
        let mut urls_wanted: Vec<(i64, u64)> = Vec::new();
        for (i, (&(probe, _), &seq)) in docs.iter().zip(seqs).enumerate() {
            let seen = seen_of(&matches[i], &record_of);
            let e = earliest(&probe, own_seq(i, &record_of), &seen);
            if e.seq != seq && !urls_wanted.iter().any(|u| u.0 == e.seq) {
                let owner_fp = seen
                    .iter()
                    .find(|s| s.seq == Some(e.seq))
                    .map_or(probe.fingerprint, |s| s.fingerprint);
                urls_wanted.push((e.seq, owner_fp));
            }
            picks.push(e);
        }

        // 4. The URLs of the earliest matches.
        let ops: Vec<Op> = urls_wanted
            .iter()
            .map(|&(s, _)| Op::HGet {
                key: self.url_key(s),
                field: s.to_string(),
            })
            .collect();
        let replies = self.store.exec(&ops).await?;
        let mut url_of: HashMap<i64, String> = HashMap::with_capacity(urls_wanted.len());
        for (i, &(s, owner_fp)) in urls_wanted.iter().enumerate() {
            let url = get(&replies, i)?.string()?.ok_or(TableError::MissingUrl {
                seq: s,
                fingerprint: owner_fp,
            })?;
            url_of.insert(s, url);
        }
        Ok(docs
            .iter()
            .zip(seqs)
            .zip(picks)
            .map(|((&(_, me), &seq), e)| {
                if e.seq == seq {
                    return Verdict::Original;
                }
                match url_of.get(&e.seq) {
                    // The first document with this fingerprint was this one
                    // (a redelivery).
                    Some(u) if u == me => Verdict::Original,
                    Some(u) => Verdict::Duplicate {
                        of: u.clone(),
                        distance: e.distance,
                        jaccard: e.jaccard,
                        radius: e.radius,
                    },
                    None => Verdict::Original,
                }
            })
            .collect())
    }

    /// Read-only: every stored fingerprint the lookup `probe` reaches
    /// (within its radius and the fingerprint's own; within k for one not
    /// recorded yet), with the first document that had it, nearest first.
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
        let mut records = Vec::with_capacity(found.len());
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
                records.push((c, r.map(|r| r.seq)));
            }
        }
        let ops: Vec<Op> = records
            .iter()
            .filter_map(|r| r.1)
            .map(|s| Op::HGet {
                key: self.url_key(s),
                field: s.to_string(),
            })
            .collect();
        let mut urls = self.store.exec(&ops).await?.into_iter();
        let mut out = Vec::with_capacity(records.len());
        for (c, seq) in records {
            let url = match seq {
                Some(_) => urls.next().map(|r| r.string()).transpose()?.flatten(),
                None => None,
            };
            out.push(Near {
                fingerprint: c,
                distance: distance(fp, c),
                url,
            });
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

    /// A duplicate of `of` at `distance`, without the second signal.
    fn dup(of: &str, distance: u32) -> Verdict {
        Verdict::Duplicate {
            of: of.into(),
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
        let v = t
            .decide(&[
                (p(fp), "a"),
                (p(fp ^ 0b111), "b"),
                (p(fp ^ 0b1111), "c"),
                (p(fp), "d"),
            ])
            .await
            .unwrap();
        assert_eq!(v[0], Verdict::Original);
        assert_eq!(v[1], dup("a", 3));
        // 4 bits from a, 1 from b: b is earlier than c, so c points at b.
        assert_eq!(v[2], dup("b", 1));
        assert_eq!(v[3], dup("a", 0));
        // A redelivery of a stays the original; of d stays a duplicate.
        let v = t.decide(&[(p(fp), "a"), (p(fp), "d")]).await.unwrap();
        assert_eq!(v[0], Verdict::Original);
        assert!(matches!(&v[1], Verdict::Duplicate { of, .. } if of == "a"));
        // Far fingerprints are originals, high bits as well as low.
        let v = t
            .decide(&[(p(!fp), "far"), (p(fp ^ (0b1111 << 60)), "high")])
            .await
            .unwrap();
        assert_eq!(v, vec![Verdict::Original, Verdict::Original]);
    }

    #[tokio::test]
    async fn near_lists_matches_within_k_with_their_urls() {
        let t = table();
        let fp = u64::MAX - 5; // negative as i64
        t.decide(&[
            (p(fp), "a"),
            (p(fp ^ (1 << 63)), "b"),
            (p(fp ^ 0xF0), "far"),
        ])
        .await
        .unwrap();
        let near = t.near(&p(fp ^ 0b11)).await.unwrap();
        let got: Vec<(u32, Option<&str>)> = near
            .iter()
            .map(|n| (n.distance, n.url.as_deref()))
            .collect();
        assert_eq!(got, vec![(2, Some("a")), (3, Some("b"))]);
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
        let v = t.decide(&[(short(fp, 7), "a")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        let v = t.decide(&[(short(near, 7), "b")]).await.unwrap();
        assert_eq!(v, vec![dup("a", 7)]);
        // Not within the stored document's radius: a long article stored
        // with radius 3 is no match at 7.
        let t = table();
        t.decide(&[(p(fp), "long")]).await.unwrap();
        let v = t.decide(&[(short(near, 7), "short")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        // Read-only lookups apply the same rule: only the short one itself.
        let found = t.near(&short(near, 7)).await.unwrap();
        let urls: Vec<Option<&str>> = found.iter().map(|n| n.url.as_deref()).collect();
        assert_eq!(urls, vec![Some("short")]);
        // Without the flipped key it is not seen at all.
        let t = table();
        t.decide(&[(short(fp, 7), "a")]).await.unwrap();
        let blind = Probe {
            flips: 0,
            ..short(near, 7)
        };
        assert_eq!(
            t.decide(&[(blind, "c")]).await.unwrap(),
            vec![Verdict::Original]
        );
    }

    #[tokio::test]
    async fn an_unrecorded_match_is_waited_for_then_counts_as_later() {
        let t = table();
        let fp = 42u64;
        // Inserted in the bands but never recorded (its worker died).
        let ops = t.insert_ops(&[p(fp ^ 1)]);
        t.store().exec(&ops[..ops.len() - 1]).await.unwrap();
        let started = std::time::Instant::now();
        let v = t.decide(&[(p(fp), "me")]).await.unwrap();
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
        let ops = t.insert_ops(&[early]);
        let replies = t.store().exec(&ops).await.unwrap();
        let inserted = t.inserted(&[early], &replies).unwrap();
        // ... and its round 2 comes while the late one waits.
        let late = {
            let t = t.clone();
            tokio::spawn(async move { t.decide(&[(p(42), "late")]).await.unwrap() })
        };
        tokio::time::sleep(OWNER_WAIT * 3).await;
        let early_verdict = t
            .record_and_decide(&[(early, "early")], &inserted)
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
        let ops = t.insert_ops(&[with(1 << 40)]);
        t.store().exec(&ops).await.unwrap();
        let started = std::time::Instant::now();
        // Beyond the SimHash radius (3) but within MAX_PAIR_DISTANCE.
        let beyond = (1 << 40) | 0xFFF;
        let v = t.decide(&[(with(beyond), "me")]).await.unwrap();
        assert_eq!(v, vec![Verdict::Original]);
        assert!(started.elapsed() >= OWNER_WAIT * OWNER_WAITS as u32);
        // A recorded owner is found at once, beyond the SimHash radius.
        let t = table();
        t.decide(&[(with(1 << 40), "owner")]).await.unwrap();
        let v = t.decide(&[(with(beyond), "later")]).await.unwrap();
        assert!(
            matches!(&v[0], Verdict::Duplicate { of, .. } if of == "owner"),
            "{v:?}"
        );
    }
}
