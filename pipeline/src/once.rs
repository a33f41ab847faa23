//! A message's records and counters applied once, in the slot of the URL
//! it is about: the URL record, and the [`once`] step every stage runs.
//!
//! At-least-once delivery means a stage may see a message again after it
//! stored what the message produced (its worker died before the ack). The
//! stage's effects are written by [`once`], one script in the URL's slot:
//! unless the URL record already lists the message's id under the stage's
//! section, put the id first there, write the stage's record (the
//! fetcher's last fetch) and bump the counters of the slot's stats shard;
//! reply Int(1) if applied, Int(0) for a message seen before.
//!
//! ## The URL record (`Keys::url_record`: one hash field per URL)
//!
//! Sections, each `tag (1 byte), length (2 bytes, little endian),
//! payload`, in the order of [`SECTIONS`] (absent ones left out):
//! - `f`, `e`, `l`, `r`: the last [`HISTORY`] message ids the fetcher,
//!   the extractor, the frontier (batches of links found on this page)
//!   and contentseen's refetch check applied for this URL, newest first,
//!   4 bytes each ([`id`]). Several, because a delivery of an earlier
//!   message can come back after a later one was applied (a retry
//!   succeeded while the first try's ack was lost in a broker restart).
//! - `F`: the fetcher's record of the last fetch (its own encoding).
//!
//! So a URL's idempotence costs a few bytes per stage inside one listpack
//! entry, for as long as the URL is known, instead of a key of its own.

use crate::keys::Keys;
use crate::store::{
    arg, int_arg, key_arg, key_args, Memory, Op, Reply, Script, ScriptCall, StoreError,
};

/// Ids remembered per stage and URL.
pub const HISTORY: usize = 4;

/// The sections of a URL record, in the order they are written.
pub const SECTIONS: &[u8] = b"fFelr";

/// The section of the fetcher's message ids.
pub const FETCH_IDS: u8 = b'f';
/// The section of the fetcher's record of the last fetch.
pub const FETCH_RECORD: u8 = b'F';
/// The section of the extractor's message ids.
pub const EXTRACT_IDS: u8 = b'e';
/// The section of the frontier's batch ids (links found on the page).
pub const LINK_IDS: u8 = b'l';
/// The section of contentseen's refetch ids.
pub const RECRAWL_IDS: u8 = b'r';

/// The 4-byte id of a message id as the URL record keeps it.
pub fn id(message_id: &str) -> [u8; 4] {
    let h = xxhash_rust::xxh3::xxh3_64(message_id.as_bytes());
    (h as u32).to_le_bytes()
}

/// A URL record's sections, by tag.
pub fn sections(record: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 <= record.len() {
        let tag = record[i];
        let len = usize::from(record[i + 1]) | usize::from(record[i + 2]) << 8;
        let end = (i + 3 + len).min(record.len());
        out.push((tag, &record[i + 3..end]));
        i = end;
    }
    out
}

/// The payload of section `tag` of a URL record, if any.
pub fn section(record: &[u8], tag: u8) -> Option<&[u8]> {
    sections(record)
        .into_iter()
        .find(|(t, _)| *t == tag)
        .map(|(_, p)| p)
}

/// A URL record of these sections, in the order of [`SECTIONS`]. A
/// payload is cut at 65,535 bytes.
pub fn pack(parts: &[(u8, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for &tag in SECTIONS {
        if let Some((_, p)) = parts.iter().find(|(t, _)| *t == tag) {
            let p = &p[..p.len().min(u16::MAX as usize)];
            out.push(tag);
            out.extend_from_slice(&(p.len() as u16).to_le_bytes());
            out.extend_from_slice(p);
        }
    }
    out
}

/// The step: `ids` is the section of the stage's message ids, `message`
/// the message's id, `record` the stage's record to write with it (its
/// section and payload), `counts` the slot's counters to bump (stats
/// fields, see [`crate::crawls::counts`]). The metrics count the same
/// when it applies.
pub fn once(
    keys: &Keys,
    url_hash: u64,
    ids: u8,
    message: &str,
    record: Option<(u8, Vec<u8>)>,
    counts: Vec<(String, i64)>,
) -> Op {
    once_with(keys, url_hash, ids, message, record, Vec::new(), counts)
}

/// A write [`once_with`] makes too, in the URL's slot, when it applies.
#[derive(Debug, Clone)]
pub enum Also {
    /// `HSET key field value` (the URL's document record).
    HSet(String, String, Vec<u8>),
    /// `RPUSH key value` (the export log).
    RPush(String, Vec<u8>),
}

/// [`once`], also making the writes `also` (keys in the URL's slot) when
/// it applies.
pub fn once_with(
    keys: &Keys,
    url_hash: u64,
    ids: u8,
    message: &str,
    record: Option<(u8, Vec<u8>)>,
    also: Vec<Also>,
    counts: Vec<(String, i64)>,
) -> Op {
    let (key, field) = keys.url_record(url_hash);
    let (record_tag, payload) = match record {
        Some((tag, p)) => (vec![tag], p),
        None => (Vec::new(), Vec::new()),
    };
    let mut call = ScriptCall::new(&ONCE)
        .key(key)
        .key(keys.stats_of_url(url_hash))
        .arg(field)
        .arg(vec![ids])
        .arg(id(message).to_vec())
        .int(HISTORY)
        .arg(record_tag)
        .arg(payload)
        .int(also.len());
    for a in also {
        call = match a {
            Also::HSet(k, f, v) => call.key(k).arg("h").arg(f).arg(v),
            Also::RPush(k, v) => call.key(k).arg("l").arg("").arg(v),
        };
    }
    for (field, by) in &counts {
        call = call.arg(field.as_bytes()).int(by);
    }
    call.counting(crate::crawls::namespace_counts(&counts)).op()
}

/// KEYS = URL records, stats, then the key of each extra write; ARGV =
/// field, ids tag, id, history, record tag (empty: none), record, the
/// number of extra writes, then kind (`h`: HSET, `l`: RPUSH), field and
/// value of each, then counter field and by pairs.
pub static ONCE: Script = Script::new("ONCE", once_lua, once_twin);

/// Lua: `sections(v)` (a table by tag) and `pack(t)` (in [`SECTIONS`]
/// order), as [`sections`] and [`pack`] do.
fn sections_lua() -> String {
    format!(
        r#"
local ORDER = '{}'
local function sections(v)
  local out = {{}}
  local i = 1
  while i + 2 <= #v do
    local len = string.byte(v, i + 1) + 256 * string.byte(v, i + 2)
    out[string.sub(v, i, i)] = string.sub(v, i + 3, i + 2 + len)
    i = i + 3 + len
  end
  return out
end
local function pack(t)
  local parts = {{}}
  for k = 1, #ORDER do
    local tag = string.sub(ORDER, k, k)
    local p = t[tag]
    if p then
      p = string.sub(p, 1, 65535)
      parts[#parts + 1] = tag .. string.char(#p % 256, math.floor(#p / 256)) .. p
    end
  end
  return table.concat(parts)
end
"#,
        String::from_utf8_lossy(SECTIONS)
    )
}

fn once_lua() -> String {
    sections_lua()
        + r#"
local s = sections(redis.call('HGET', KEYS[1], ARGV[1]) or '')
local ids = s[ARGV[2]] or ''
for j = 1, #ids, 4 do
  if string.sub(ids, j, j + 3) == ARGV[3] then return 0 end
end
s[ARGV[2]] = ARGV[3] .. string.sub(ids, 1, 4 * (tonumber(ARGV[4]) - 1))
if ARGV[5] ~= '' then s[ARGV[5]] = ARGV[6] end
redis.call('HSET', KEYS[1], ARGV[1], pack(s))
local extra = tonumber(ARGV[7])
for e = 1, extra do
  local a = 5 + 3 * e
  if ARGV[a] == 'h' then
    redis.call('HSET', KEYS[2 + e], ARGV[a + 1], ARGV[a + 2])
  else
    redis.call('RPUSH', KEYS[2 + e], ARGV[a + 2])
  end
end
for a = 8 + 3 * extra, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[a], ARGV[a + 1])
end
return 1
"#
}

fn once_twin(m: &mut Memory<'_>, keys: &[String], args: &[Vec<u8>]) -> Result<Reply, StoreError> {
    let s = &ONCE;
    let [records, stats] = key_args(s, keys)?;
    let field = String::from_utf8_lossy(arg(s, args, 0)?).into_owned();
    let ids_tag = arg(s, args, 1)?.first().copied().unwrap_or(b'?');
    let id = arg(s, args, 2)?.to_vec();
    let history = int_arg(s, args, 3)?.max(1) as usize;
    let record_tag = arg(s, args, 4)?.first().copied();
    let record = arg(s, args, 5)?.to_vec();
    let old = m.hget(records, &field)?.unwrap_or_default();
    let mut parts: Vec<(u8, Vec<u8>)> = sections(&old)
        .into_iter()
        .map(|(t, p)| (t, p.to_vec()))
        .collect();
    let ids = parts
        .iter()
        .find(|(t, _)| *t == ids_tag)
        .map(|(_, p)| p.clone())
        .unwrap_or_default();
    if ids.chunks(4).any(|c| c == id.as_slice()) {
        return Ok(Reply::Int(0));
    }
    let mut new_ids = id;
    new_ids.extend_from_slice(&ids[..ids.len().min(4 * (history - 1))]);
    let mut put = |tag: u8, payload: Vec<u8>| match parts.iter_mut().find(|(t, _)| *t == tag) {
        Some(p) => p.1 = payload,
        None => parts.push((tag, payload)),
    };
    put(ids_tag, new_ids);
    if let Some(tag) = record_tag {
        put(tag, record);
    }
    let borrowed: Vec<(u8, &[u8])> = parts.iter().map(|(t, p)| (*t, p.as_slice())).collect();
    m.hset(records, &field, &pack(&borrowed))?;
    let extra = int_arg(s, args, 6)?.max(0) as usize;
    for e in 0..extra {
        let key = key_arg(s, keys, 2 + e)?;
        let a = 7 + 3 * e;
        if arg(s, args, a)? == b"h" {
            let f = String::from_utf8_lossy(arg(s, args, a + 1)?).into_owned();
            m.hset(key, &f, arg(s, args, a + 2)?)?;
        } else {
            m.rpush(key, arg(s, args, a + 2)?)?;
        }
    }
    let mut a = 7 + 3 * extra;
    while a + 1 < args.len() {
        let counter = String::from_utf8_lossy(arg(s, args, a)?).into_owned();
        m.hincr(stats, &counter, int_arg(s, args, a + 1)?)?;
        a += 2;
    }
    Ok(Reply::Int(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn sections_pack_and_read_back() {
        let r = pack(&[
            (EXTRACT_IDS, b"abcd"),
            (FETCH_IDS, b"1234"),
            (FETCH_RECORD, b""),
        ]);
        // In the fixed order, whatever the order given.
        assert_eq!(r[0], FETCH_IDS);
        assert_eq!(section(&r, EXTRACT_IDS), Some(&b"abcd"[..]));
        assert_eq!(section(&r, FETCH_RECORD), Some(&b""[..]));
        assert_eq!(section(&r, LINK_IDS), None);
        // A torn record reads as far as it goes.
        assert_eq!(sections(&r[..5]).len(), 1);
    }

    #[tokio::test]
    async fn a_message_counts_once_and_keeps_the_newest_ids() {
        let store = Store::memory();
        let keys = Keys::new("t");
        let h = crate::keys::url_hash("http://a/");
        let step = |msg: &str, rec: &[u8]| {
            once(
                &keys,
                h,
                FETCH_IDS,
                msg,
                Some((FETCH_RECORD, rec.to_vec())),
                vec![("fetched".into(), 1)],
            )
        };
        assert_eq!(store.one(step("m1", b"one")).await.unwrap(), Reply::Int(1));
        assert_eq!(
            store.one(step("m1", b"again")).await.unwrap(),
            Reply::Int(0)
        );
        for m in ["m2", "m3", "m4", "m5"] {
            assert_eq!(
                store.one(step(m, m.as_bytes())).await.unwrap(),
                Reply::Int(1)
            );
        }
        // m1 fell out of the history: counted again (the history's bound).
        assert_eq!(store.one(step("m1", b"m1")).await.unwrap(), Reply::Int(1));
        let (key, field) = keys.url_record(h);
        let record = store
            .one(Op::HGet { key, field })
            .await
            .unwrap()
            .data()
            .unwrap()
            .unwrap();
        assert_eq!(section(&record, FETCH_RECORD), Some(&b"m1"[..]));
        assert_eq!(section(&record, FETCH_IDS).map(<[u8]>::len), Some(16));
        let stats = store
            .one(Op::HGet {
                key: keys.stats_of_url(h),
                field: "fetched".into(),
            })
            .await
            .unwrap()
            .int()
            .unwrap();
        assert_eq!(stats, 6);
    }
}
