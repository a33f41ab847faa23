//! The bench's own few Redis commands over a plain connection (RESP),
//! counted so that the commandstats delta leaves them out.

use super::*;

/// One Redis command over a fresh connection (the bench's own few calls).
pub(crate) struct Redis {
    reader: BufReader<TcpStream>,
    /// Commands this client sent (subtracted from the commandstats delta).
    pub(crate) sent: u64,
}

pub(crate) enum Reply {
    Nil,
    Int(i64),
    Text(String),
    Array(Vec<Reply>),
}

impl Redis {
    pub(crate) fn connect(url: &str) -> std::io::Result<Redis> {
        let address = url
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .rsplit('@')
            .next()
            .unwrap_or("127.0.0.1:6379")
            .to_string();
        let stream = TcpStream::connect(address)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Redis {
            reader: BufReader::new(stream),
            sent: 0,
        })
    }

    fn command(&mut self, args: &[&str]) -> std::io::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.reader.get_mut().write_all(out.as_bytes())?;
        self.sent += 1;
        self.read_reply()
    }

    fn read_reply(&mut self) -> std::io::Result<Reply> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let line = line.trim_end_matches("\r\n");
        let bad = || std::io::Error::other(format!("bad Redis reply {line:?}"));
        let (kind, rest) = line.split_at(1.min(line.len()));
        match kind {
            "+" => Ok(Reply::Text(rest.to_string())),
            "-" => Err(std::io::Error::other(rest.to_string())),
            ":" => Ok(Reply::Int(rest.parse().map_err(|_| bad())?)),
            "$" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                if n < 0 {
                    return Ok(Reply::Nil);
                }
                let mut buf = vec![0; n as usize + 2];
                self.reader.read_exact(&mut buf)?;
                buf.truncate(n as usize);
                Ok(Reply::Text(String::from_utf8_lossy(&buf).into_owned()))
            }
            "*" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                let mut items = Vec::new();
                for _ in 0..n.max(0) {
                    items.push(self.read_reply()?);
                }
                Ok(Reply::Array(items))
            }
            _ => Err(bad()),
        }
    }

    /// Total calls over every command (INFO commandstats).
    pub(crate) fn total_calls(&mut self) -> u64 {
        match self.command(&["INFO", "commandstats"]) {
            Ok(Reply::Text(text)) => text
                .lines()
                .filter_map(|l| l.split("calls=").nth(1))
                .filter_map(|c| c.split(',').next()?.parse::<u64>().ok())
                .sum(),
            _ => 0,
        }
    }

    /// Hashes of integers, summed (the namespace's stats shards).
    pub(crate) fn counters(&mut self, keys: &[String]) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        for key in keys {
            if let Ok(Reply::Array(items)) = self.command(&["HGETALL", key]) {
                for pair in items.chunks(2) {
                    if let [Reply::Text(k), Reply::Text(v)] = pair {
                        *out.entry(k.clone()).or_default() += v.parse::<i64>().unwrap_or(0);
                    }
                }
            }
        }
        out
    }

    pub(crate) fn connected_clients(&mut self) -> u64 {
        match self.command(&["INFO", "clients"]) {
            Ok(Reply::Text(text)) => text
                .lines()
                .find_map(|l| l.strip_prefix("connected_clients:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            Ok(Reply::Int(n)) => n as u64,
            _ => 0,
        }
    }
}

/// The Redis of the crawl: one node, or every node of the cluster named by
/// `CRAWLER_REDIS_CLUSTER` (whose workers inherit the variable). Reads go
/// to every node; a key's slot answers on its master only (the others
/// reply `MOVED`, skipped), so sums count each key once.
pub(crate) struct Redises {
    /// (port, connection, whether a master at connect time).
    pub(crate) nodes: Vec<(u16, Redis, bool)>,
}

/// The ports of the cluster's seed nodes, when `CRAWLER_REDIS_CLUSTER` is set.
pub(crate) fn cluster_ports() -> Vec<u16> {
    std::env::var("CRAWLER_REDIS_CLUSTER")
        .unwrap_or_default()
        .split(',')
        .filter_map(|u| {
            u.trim()
                .trim_end_matches('/')
                .rsplit(':')
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

impl Redises {
    pub(crate) fn connect(url: &str) -> std::io::Result<Redises> {
        let ports = cluster_ports();
        if ports.is_empty() {
            let port = url
                .trim_end_matches('/')
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(REDIS_PORT);
            return Ok(Redises {
                nodes: vec![(port, Redis::connect(url)?, true)],
            });
        }
        let mut nodes = Vec::new();
        for port in ports {
            let mut r = Redis::connect(&format!("redis://127.0.0.1:{port}"))?;
            let master = matches!(
                r.command(&["ROLE"]),
                Ok(Reply::Array(items)) if matches!(items.first(), Some(Reply::Text(t)) if t == "master")
            );
            nodes.push((port, r, master));
        }
        Ok(Redises { nodes })
    }

    pub(crate) fn is_cluster(&self) -> bool {
        self.nodes.len() > 1
    }

    pub(crate) fn sent(&self) -> u64 {
        self.nodes.iter().map(|(_, r, _)| r.sent).sum()
    }

    /// Every node's total calls (INFO commandstats), in node order.
    pub(crate) fn calls(&mut self) -> Vec<u64> {
        self.nodes
            .iter_mut()
            .map(|(_, r, _)| r.total_calls())
            .collect()
    }

    pub(crate) fn counters(&mut self, keys: &[String]) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        for (_, r, _) in &mut self.nodes {
            for (k, v) in r.counters(keys) {
                *out.entry(k).or_default() += v;
            }
        }
        out
    }

    pub(crate) fn connected_clients(&mut self) -> u64 {
        self.nodes
            .iter_mut()
            .map(|(_, r, _)| r.connected_clients())
            .sum()
    }
}
