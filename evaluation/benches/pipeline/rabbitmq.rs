//! RabbitMQ figures of a run: the workers' AMQP connections' octets
//! (`rabbitmqctl list_connections`) and the deliveries and messages of
//! their `/metrics`.

use super::*;

/// recv_oct and send_oct of every broker connection, by the client's port.
pub(crate) fn amqp_octets() -> HashMap<u16, (u64, u64)> {
    let out = Command::new("rabbitmqctl")
        .args([
            "-q",
            "--no-table-headers",
            "list_connections",
            "peer_port",
            "recv_oct",
            "send_oct",
        ])
        .stderr(Stdio::null())
        .output();
    let mut octets = HashMap::new();
    if let Ok(out) = out {
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<u64> = line
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [port, recv, send] = f[..] {
                octets.insert(port as u16, (recv, send));
            }
        }
    }
    octets
}

/// `crawler_messages_total` by (stage, outcome) from a worker's metrics.
pub(crate) fn scrape_messages(port: u16) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return out;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ =
        stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    for line in text.lines() {
        // Broker deliveries (a bundle of messages is one delivery).
        if let Some(rest) = line.strip_prefix("crawler_deliveries_total{") {
            if let Some((_, value)) = rest.split_once("} ") {
                *out.entry("deliveries".to_string()).or_insert(0) +=
                    value.trim().parse().unwrap_or(0);
            }
        }
        if let Some(rest) = line.strip_prefix("crawler_messages_total{") {
            let Some((labels, value)) = rest.split_once("} ") else {
                continue;
            };
            let outcome = labels
                .split("outcome=\"")
                .nth(1)
                .and_then(|o| o.split('"').next())
                .unwrap_or("?");
            *out.entry(outcome.to_string()).or_insert(0) += value.trim().parse().unwrap_or(0);
        }
    }
    out
}
