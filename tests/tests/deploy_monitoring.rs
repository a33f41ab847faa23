//! The `monitoring` profile's files agree with what the workers serve:
//! every series the Grafana dashboard queries is one a worker exposes,
//! Prometheus scrapes every worker service of the compose file on the port
//! the compose file gives them, and the dashboard uses the provisioned
//! datasource.

use std::collections::BTreeSet;

const DEPLOY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy");

fn read(path: &str) -> String {
    let full = format!("{DEPLOY}/{path}");
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// The metric names in a PromQL expression (`crawler_...` and `up`).
fn names_in(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("crawler_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        out.push(name);
    }
    out
}

/// Every sample name a worker's `/metrics` can carry: each `# TYPE` line's
/// name, with the suffixes its type adds.
fn exposed() -> BTreeSet<String> {
    // Series with labels appear once they have a value: give each one.
    let series = pipeline::metrics::crawl_series();
    series.host_backed_off("https://a.example");
    series.queue_depths(&[pipeline::broker::QueueDepth {
        queue: "ns.fetch".into(),
        ready: 1,
        consumers: 1,
    }]);
    series.count("extracted", 1);
    let text = pipeline::metrics::Metrics::new("fetch").render();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#") || words.next() != Some("TYPE") {
            continue;
        }
        let (Some(name), Some(kind)) = (words.next(), words.next()) else {
            continue;
        };
        let suffixes: &[&str] = match kind {
            "counter" => &["_total"],
            "histogram" => &["_bucket", "_sum", "_count"],
            _ => &[""],
        };
        for s in suffixes {
            out.insert(format!("{name}{s}"));
        }
    }
    out
}

#[test]
fn the_dashboard_queries_only_series_the_workers_serve() {
    let dashboard: serde_json::Value =
        serde_json::from_str(&read("monitoring/grafana/dashboards/crawler.json"))
            .expect("the dashboard is JSON");
    let exposed = exposed();
    let mut queried = BTreeSet::new();
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() >= 8, "a dashboard of a few panels");
    for panel in panels {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            for name in names_in(expr) {
                assert!(
                    exposed.contains(&name),
                    "panel {:?} queries {name}, which no worker serves; served: {exposed:?}",
                    panel["title"]
                );
                queried.insert(name);
            }
        }
    }
    // The series the operators asked for are on it.
    for name in [
        "crawler_fetches_total",
        "crawler_fetched_bytes_total",
        "crawler_documents_total",
        "crawler_host_backoffs_total",
        "crawler_queue_messages",
        "crawler_message_seconds_bucket",
    ] {
        assert!(queried.contains(name), "no panel shows {name}");
    }
    let datasource = read("monitoring/grafana/provisioning/datasources/prometheus.yml");
    for panel in panels {
        let uid = panel["datasource"]["uid"].as_str().expect("datasource uid");
        assert!(
            datasource.contains(&format!("uid: {uid}")),
            "the dashboard's datasource {uid} is provisioned"
        );
    }
}

#[test]
fn prometheus_scrapes_every_worker_on_its_metrics_port() {
    let compose = read("docker-compose.yml");
    let prometheus = read("monitoring/prometheus.yml");
    let port = compose
        .lines()
        .find_map(|l| l.trim().strip_prefix("CRAWLER_METRICS_PORT:"))
        .map(|v| v.trim().trim_matches('"').to_string())
        .expect("the workers' CRAWLER_METRICS_PORT in the compose file");
    assert!(
        prometheus.contains(&format!("port: {port}")),
        "Prometheus scrapes port {port}:\n{prometheus}"
    );
    for worker in ["frontier", "fetcher", "extractor", "contentseen"] {
        assert!(
            compose.contains(&format!("  {worker}:\n    <<: *worker")),
            "{worker} is a compose service"
        );
        let names = prometheus
            .lines()
            .find(|l| l.trim().starts_with("- names:"))
            .expect("dns_sd names");
        assert!(
            names.contains(worker),
            "Prometheus scrapes {worker}: {names}"
        );
    }
    for service in ["prometheus", "grafana"] {
        assert!(
            compose.contains(&format!(
                "  {service}:\n    image: ${{{}_IMAGE:-",
                service.to_uppercase()
            )),
            "{service}'s image is a variable"
        );
    }
    assert_eq!(
        compose.matches("profiles: [\"monitoring\"]").count(),
        2,
        "both under the monitoring profile"
    );
}
