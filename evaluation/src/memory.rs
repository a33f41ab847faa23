//! Redis memory per page, by key kind: what `cargo bench -p evaluation
//! --bench memory` prints for N synthetic pages, and the pipeline bench for
//! its real crawl.
//!
//! The kind of a key is its first name after the namespace (`doc`, `url`,
//! `bands`, ...); its bytes are Redis's `MEMORY USAGE` (the value, its key
//! and their allocator overhead), summed over every key of the namespace
//! (SCAN: a benchmark, not an operational path).

use std::collections::BTreeMap;

use pipeline::Store;

/// One key kind's share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kind {
    pub keys: u64,
    pub bytes: u64,
}

/// Every key kind of namespace `ns` on the Redis at `url`, by kind.
pub async fn by_kind(url: &str, ns: &str) -> Result<BTreeMap<String, Kind>, String> {
    let store = Store::redis(url).await.map_err(|e| e.to_string())?;
    let keys = store
        .keys_matching(&pipeline::keys::Keys::new(ns).namespace_pattern())
        .await
        .map_err(|e| e.to_string())?;
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    let mut out: BTreeMap<String, Kind> = BTreeMap::new();
    for chunk in keys.chunks(2000) {
        let mut pipe = redis::pipe();
        for k in chunk {
            pipe.cmd("MEMORY").arg("USAGE").arg(k).arg("SAMPLES").arg(0);
        }
        let sizes: Vec<Option<u64>> = pipe
            .query_async(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
        for (k, size) in chunk.iter().zip(sizes) {
            let kind = kind_of(k, ns);
            let e = out.entry(kind).or_default();
            e.keys += 1;
            e.bytes += size.unwrap_or(0);
        }
    }
    Ok(out)
}

/// A key's kind: its first name after the namespace.
pub fn kind_of(key: &str, ns: &str) -> String {
    key.strip_prefix(ns)
        .and_then(|k| k.strip_prefix(':'))
        .and_then(|k| k.split(':').next())
        .unwrap_or(key)
        .to_string()
}

/// The table: per kind, its keys, bytes and bytes per page, and the total;
/// `used` is Redis's `used_memory` growth over the run, per page below.
pub fn table(kinds: &BTreeMap<String, Kind>, pages: u64, used: Option<i64>) -> String {
    let pages = pages.max(1);
    let mut rows: Vec<(&String, &Kind)> = kinds.iter().collect();
    rows.sort_by_key(|(_, k)| std::cmp::Reverse(k.bytes));
    let mut out = format!(
        "{:<12} {:>10} {:>14} {:>10}\n",
        "kind", "keys", "bytes", "B/page"
    );
    let mut total = 0;
    for (name, k) in rows {
        total += k.bytes;
        out += &format!(
            "{:<12} {:>10} {:>14} {:>10.1}\n",
            name,
            k.keys,
            k.bytes,
            k.bytes as f64 / pages as f64
        );
    }
    out += &format!(
        "{:<12} {:>10} {:>14} {:>10.1}\n",
        "total",
        kinds.values().map(|k| k.keys).sum::<u64>(),
        total,
        total as f64 / pages as f64
    );
    if let Some(used) = used {
        out += &format!(
            "{:<12} {:>10} {:>14} {:>10.1}\n",
            "used_memory",
            "",
            used,
            used as f64 / pages as f64
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_the_first_name_after_the_namespace() {
        assert_eq!(kind_of("crawler:doc:{u3}:17", "crawler"), "doc");
        assert_eq!(kind_of("crawler:stats:{h2}", "crawler"), "stats");
        assert_eq!(kind_of("other", "crawler"), "other");
    }
}
