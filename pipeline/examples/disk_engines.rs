//! The disk store's workload on two embedded engines (redb, fjall): what
//! `crawler run --state` asks per page, as raw key/value writes. One
//! transaction per store batch or bus step (about 10 per page); per page:
//! a seen-set member (looked up, then added), a URL record (45 B), a
//! document record (200 B), four band-table appends (read, append 6 B,
//! write), a fingerprint record (70 B), an export index entry, and three bus
//! messages (a 200 B task, a 30 KB page, a 5 KB document) each written when
//! published and removed when acked 64 pages later. Prints pages/s, disk
//! bytes per page and peak RSS.
//!
//! Usage: `cargo run --release -p pipeline --example disk_engines -- redb|fjall [pages] [dir]`
//! (the choice and its figures: `pipeline::store::DiskStore`).
use redb::ReadableTable;
use std::time::Instant;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

/// One engine's transaction: what the disk store needs of it.
trait Tx {
    fn get(&mut self, k: &[u8]) -> Option<Vec<u8>>;
    fn put(&mut self, k: &[u8], v: &[u8]);
    fn del(&mut self, k: &[u8]);
}

/// The ops of one transaction.
type Step<'a> = &'a mut dyn FnMut(&mut dyn Tx);

/// Bus messages stay this many pages before they are acked.
const ACK_LAG: u64 = 64;

/// A bus step: the message of page `i` published on `queue`.
fn publish(run: &mut dyn FnMut(Step), queue: &[u8], i: u64, message: &[u8]) {
    run(&mut |t| t.put(&[queue, &i.to_be_bytes()].concat(), message));
}

/// A bus step: the message of page `i` - [`ACK_LAG`] on `queue` acked (removed).
fn ack(run: &mut dyn FnMut(Step), queue: &[u8], i: u64) {
    run(&mut |t| t.del(&[queue, &i.saturating_sub(ACK_LAG).to_be_bytes()].concat()));
}

/// A store batch: the record of URL hash `h` under `prefix` written unless
/// there is one (looked up first, as the store does).
fn record_once(run: &mut dyn FnMut(Step), prefix: &[u8], h: u64, record: &[u8]) {
    run(&mut |t| {
        let k = [
            prefix,
            &(h >> 56).to_be_bytes(),
            &((h >> 45) & 0x7ff).to_be_bytes(),
            b"\0",
            &h.to_be_bytes(),
        ]
        .concat();
        if t.get(&k).is_none() {
            t.put(&k, record);
        }
    });
}

/// The ops of page `i`, through `run` (one call per transaction).
fn page(i: u64, run: &mut dyn FnMut(Step)) {
    let h = mix(i);
    let body = vec![(h & 0xff) as u8; 30_000];
    let doc = vec![b'd'; 5_000];
    // frontier: seen + the task message
    run(&mut |t| {
        let k = [
            b"local:seen:{h".as_slice(),
            &(h % 64).to_be_bytes(),
            b"\0",
            &h.to_be_bytes(),
        ]
        .concat();
        if t.get(&k).is_none() {
            t.put(&k, b"");
        }
    });
    publish(run, b"bus:fetch:", i, &[7u8; 200]);
    // fetcher: URL record, the page message, ack of the task
    record_once(run, b"local:url:{u", h, &[1u8; 45]);
    publish(run, b"bus:extract:", i, &body);
    ack(run, b"bus:fetch:", i);
    // extractor: the document message, ack of the page
    publish(run, b"bus:contentseen:", i, &doc);
    ack(run, b"bus:extract:", i);
    // contentseen: bands, fingerprint, export index, document record
    run(&mut |t| {
        for b in 0..4u64 {
            let k = [
                b"local:bands:".as_slice(),
                &b.to_be_bytes(),
                &((h >> (16 * b)) & 0xffff).to_be_bytes(),
            ]
            .concat();
            let mut v = t.get(&k).unwrap_or_default();
            v.extend_from_slice(&h.to_le_bytes()[..6]);
            t.put(&k, &v);
        }
    });
    run(&mut |t| {
        t.put(
            &[
                b"local:fpr:".as_slice(),
                &(h % 1024).to_be_bytes(),
                b"\0",
                &h.to_be_bytes(),
            ]
            .concat(),
            &[3u8; 70],
        );
        t.put(
            &[
                b"local:docs:".as_slice(),
                &(i / 1000).to_be_bytes(),
                b"\0",
                &i.to_be_bytes(),
            ]
            .concat(),
            &h.to_be_bytes(),
        );
    });
    record_once(run, b"local:doc:{u", h, &[5u8; 200]);
    ack(run, b"bus:contentseen:", i);
}

const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("kv");

struct RedbTx<'a>(redb::Table<'a, &'static [u8], &'static [u8]>);
impl Tx for RedbTx<'_> {
    fn get(&mut self, k: &[u8]) -> Option<Vec<u8>> {
        self.0.get(k).unwrap().map(|v| v.value().to_vec())
    }
    fn put(&mut self, k: &[u8], v: &[u8]) {
        self.0.insert(k, v).unwrap();
    }
    fn del(&mut self, k: &[u8]) {
        self.0.remove(k).unwrap();
    }
}

struct FjallTx<'a, 'b>(
    &'a mut fjall::WriteTransaction<'b>,
    &'a fjall::TxPartitionHandle,
);
impl Tx for FjallTx<'_, '_> {
    fn get(&mut self, k: &[u8]) -> Option<Vec<u8>> {
        self.0.get(self.1, k).unwrap().map(|v| v.to_vec())
    }
    fn put(&mut self, k: &[u8], v: &[u8]) {
        self.0.insert(self.1, k, v);
    }
    fn del(&mut self, k: &[u8]) {
        self.0.remove(self.1, k.to_vec());
    }
}

fn dir_bytes(p: &std::path::Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(p).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        n += if m.is_dir() {
            dir_bytes(&e.path())
        } else {
            m.len()
        };
    }
    n
}

fn peak_rss_mb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("VmHWM"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let engine = args.get(1).map(String::as_str).unwrap_or("fjall");
    let pages: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let dir = std::path::PathBuf::from(
        args.get(3)
            .cloned()
            .unwrap_or_else(|| format!("/tmp/enginebench-{engine}")),
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let start = Instant::now();
    match engine {
        "redb" => {
            let db = redb::Builder::new()
                .set_cache_size(64 << 20)
                .create(dir.join("state.redb"))
                .unwrap();
            for i in 0..pages {
                page(i, &mut |f| {
                    let mut tx = db.begin_write().unwrap();
                    tx.set_durability(redb::Durability::Eventual);
                    {
                        let mut t = RedbTx(tx.open_table(TABLE).unwrap());
                        f(&mut t);
                    }
                    tx.commit().unwrap();
                });
            }
        }
        "fjall" => {
            let ks = fjall::Config::new(&dir)
                .cache_size(32 << 20)
                .max_write_buffer_size(64 << 20)
                .open_transactional()
                .unwrap();
            let part = ks
                .open_partition("kv", fjall::PartitionCreateOptions::default())
                .unwrap();
            for i in 0..pages {
                page(i, &mut |f| {
                    let mut tx = ks.write_tx();
                    f(&mut FjallTx(&mut tx, &part));
                    tx.commit().unwrap();
                });
            }
            ks.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        other => panic!("unknown engine {other}"),
    }
    let secs = start.elapsed().as_secs_f64();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let bytes = dir_bytes(&dir);
    println!(
        "{engine}: {pages} pages, {:.0} pages/s, {:.0} disk bytes/page, peak RSS {} MB",
        pages as f64 / secs,
        bytes as f64 / pages as f64,
        peak_rss_mb()
    );
}
