//! The distributed run: the four release worker binaries as processes
//! over the real RabbitMQ and Redis, in a fresh namespace deleted at the
//! end.

use super::*;

pub(crate) fn distributed(env: &Env, rt: &tokio::runtime::Runtime, timeout: Duration) -> Outcome {
    let ns = format!(
        "pbench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    );
    let mut outcome = Outcome {
        label: "distributed",
        ..Outcome::default()
    };
    let result = distributed_in(env, &ns, timeout, &mut outcome);
    if let Err(e) = result {
        outcome.notes.push(format!("FAILED: {e}"));
        eprintln!("distributed run failed: {e}");
    }
    // Redis memory per page of this real crawl, by key kind (texts in
    // Redis: the workers' default); then delete the namespace: its queues,
    // then its keys.
    rt.block_on(async {
        // On a cluster the by-kind table is not measured (it reads one node).
        let cluster: Vec<String> =
            pipeline::config::url_list(&std::env::var("CRAWLER_REDIS_CLUSTER").unwrap_or_default());
        if cluster.is_empty() {
            match evaluation::memory::by_kind(&env.redis_url, &ns).await {
                Ok(kinds) if outcome.pages > 0 => println!(
                    "Redis memory of the distributed crawl, by key kind ({} pages, texts in Redis):\n{}",
                    outcome.pages,
                    evaluation::memory::table(&kinds, outcome.pages, None)
                ),
                Ok(_) => {}
                Err(e) => eprintln!("could not measure the memory of {ns}: {e}"),
            }
        }
        if let Ok(session) = pipeline::Broker::amqp(&env.amqp_url, &ns).open().await {
            if let Err(e) = session.delete_topology().await {
                eprintln!("could not delete the queues of {ns}: {e}");
            }
        }
        let config = pipeline::store::RedisConfig {
            url: env.redis_url.clone(),
            cluster,
            ..Default::default()
        };
        match pipeline::Store::connect(&config).await {
            Ok(store) => match store.delete_matching(&format!("{ns}:*")).await {
                Ok(n) => eprintln!("namespace {ns} deleted ({n} keys)"),
                Err(e) => eprintln!("could not delete the keys of {ns}: {e}"),
            },
            Err(e) => eprintln!("could not delete the keys of {ns}: {e}"),
        }
    });
    outcome
}

/// Each Redis Cluster node's share of the commands and of Redis CPU over
/// the crawl (masters as they were at the start; the target is no master
/// above 40%).
fn cluster_spread(redis: &Redises, start: &Snapshot, end: &Snapshot, ticks: f64) -> String {
    let calls: Vec<u64> = (0..redis.nodes.len())
        .map(|i| end.node_calls[i].saturating_sub(start.node_calls[i]))
        .collect();
    let cpu: Vec<u64> = (0..redis.nodes.len())
        .map(|i| end.nodes[i].saturating_sub(start.nodes[i]))
        .collect();
    let masters: Vec<usize> = (0..redis.nodes.len())
        .filter(|&i| redis.nodes[i].2)
        .collect();
    let (all_calls, all_cpu): (u64, u64) = (calls.iter().sum(), cpu.iter().sum());
    let (m_calls, m_cpu): (u64, u64) = (
        masters.iter().map(|&i| calls[i]).sum(),
        masters.iter().map(|&i| cpu[i]).sum(),
    );
    let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
    let mut lines = vec![format!(
        "Redis Cluster spread over the crawl ({} masters; shares among the masters, then of all nodes): ",
        masters.len()
    )];
    for (i, (port, _, master)) in redis.nodes.iter().enumerate() {
        let share = if *master {
            format!(
                "commands {:.1}%, CPU {:.1}% of the masters'; ",
                pct(calls[i], m_calls),
                pct(cpu[i], m_cpu)
            )
        } else {
            String::new()
        };
        lines.push(format!(
            "{} {port}: {share}{} commands ({:.1}% of all), {:.2} s CPU ({:.1}% of all)",
            if *master { "master" } else { "replica" },
            calls[i],
            pct(calls[i], all_calls),
            cpu[i] as f64 / ticks,
            pct(cpu[i], all_cpu)
        ));
    }
    lines.join("\n  ")
}

pub(crate) struct Snapshot {
    at: Instant,
    workers: Vec<u64>,
    rabbit: u64,
    self_cpu: (u64, u64),
    machine: (u64, u64),
    /// Per Redis node (one, or the cluster's): CPU ticks and total calls.
    nodes: Vec<u64>,
    node_calls: Vec<u64>,
}

impl Snapshot {
    /// Redis's CPU ticks, all nodes.
    fn redis(&self) -> u64 {
        self.nodes.iter().sum()
    }

    /// Redis's calls (INFO commandstats), all nodes.
    fn redis_calls(&self) -> u64 {
        self.node_calls.iter().sum()
    }
}

pub(crate) fn distributed_in(
    env: &Env,
    ns: &str,
    timeout: Duration,
    out: &mut Outcome,
) -> Result<(), String> {
    let mut redis = Redises::connect(&env.redis_url).map_err(|e| format!("Redis: {e}"))?;
    let node_pids: Vec<Vec<(u32, String)>> = redis
        .nodes
        .iter()
        .map(|(port, _, _)| pids_listening_on(*port))
        .collect();
    let redis_pids: Vec<(u32, String)> = node_pids.iter().flatten().cloned().collect();
    let rabbit_pids = pids_listening_on(AMQP_PORT);
    eprintln!("Redis processes {redis_pids:?}, RabbitMQ processes {rabbit_pids:?}");
    let ticks_of =
        |pids: &[(u32, String)]| -> u64 { pids.iter().filter_map(|(p, _)| cpu_ticks(*p)).sum() };
    let workers = instances();
    let metrics_ports: Vec<u16> = workers.iter().map(|_| free_port()).collect();
    let mut children: Vec<Child> = Vec::new();
    for ((name, binary), port) in workers.iter().zip(&metrics_ports) {
        let mut worker = env.command(binary, ns);
        worker.env("CRAWLER_METRICS_PORT", port.to_string());
        children.push(env.start(worker, name)?);
    }
    let result = (|| {
        // Ready: every work queue has a consumer.
        let ready_by = Instant::now() + Duration::from_secs(60);
        loop {
            if env.attached(ns) == WORKERS.len() {
                break;
            }
            for ((name, _), c) in workers.iter().zip(children.iter_mut()) {
                if !matches!(c.try_wait(), Ok(None)) {
                    return Err(format!("{name} exited at start: {}", env.tail(name, 20)));
                }
            }
            if Instant::now() > ready_by {
                return Err("the workers did not attach to their queues in 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let worker_ports: Vec<Vec<u16>> = children
            .iter()
            .map(|c| connection_ports(c.id(), AMQP_PORT))
            .collect();
        let octets_before = amqp_octets();
        let stats_key = pipeline::keys::Keys::new(ns).stats_shards();
        let snapshot = |redis: &mut Redises, children: &[Child]| Snapshot {
            nodes: node_pids.iter().map(|p| ticks_of(p)).collect(),
            node_calls: redis.calls(),
            at: Instant::now(),
            workers: children
                .iter()
                .map(|c| cpu_ticks(c.id()).unwrap_or(0))
                .collect(),
            rabbit: ticks_of(&rabbit_pids),
            self_cpu: self_ticks(),
            machine: machine_ticks(),
        };
        // The background over 3 s before the seed: idle workers and any
        // other client of the shared services.
        let quiet = snapshot(&mut redis, &children);
        std::thread::sleep(Duration::from_secs(3));
        let start = snapshot(&mut redis, &children);
        let secs = start.at.duration_since(quiet.at).as_secs_f64();
        let background = format!(
            "background before the seed (idle workers + other clients, {:.1} s): Redis {:.0} commands/s, {:.1} ms CPU/s; RabbitMQ {:.1} ms CPU/s; {} Redis clients connected",
            secs,
            (start.redis_calls().saturating_sub(quiet.redis_calls() + 1)) as f64 / secs,
            (start.redis() - quiet.redis()) as f64 / env.ticks * 1000.0 / secs,
            (start.rabbit - quiet.rabbit) as f64 / env.ticks * 1000.0 / secs,
            redis.connected_clients(),
        );
        eprintln!("{background}");
        out.notes.push(background);
        let bg_redis_rate =
            (start.redis_calls().saturating_sub(quiet.redis_calls() + 1)) as f64 / secs;
        let polls_before = redis.sent();

        let mut seed = env.command("crawler", ns);
        seed.arg("seed").args(CRAWL_SETTINGS).args(&env.seeds);
        env.run_crawler(seed, "seed", 10)?;
        // Poll the counters until they stand still, then confirm with
        // `crawler stats --wait-idle`.
        let mut last = BTreeMap::new();
        let mut last_change = Instant::now();
        let mut confirmations = 0;
        let (end, idle_json) = loop {
            let now = redis.counters(&stats_key);
            if now != last {
                last = now;
                last_change = Instant::now();
            } else if last_change.elapsed() >= STILL_FOR
                && last.get("stored").copied().unwrap_or(0) > 0
            {
                let end = snapshot(&mut redis, &children);
                confirmations += 1;
                let idle = env.stats_json(ns, &["--wait-idle", "--timeout-secs", "300"])?;
                let after = redis.counters(&stats_key);
                if after == last {
                    break (end, idle);
                }
                eprintln!(
                    "the counters moved after they stood still for {STILL_FOR:?}: waiting again"
                );
                last = after;
                last_change = Instant::now();
            }
            if start.at.elapsed() > timeout {
                let stats = env
                    .stats_json(ns, &[])
                    .map(|v| v.to_string())
                    .unwrap_or_else(|e| e);
                let mut logs = String::new();
                for (name, _) in &workers {
                    logs.push_str(&format!("--- {name}\n{}\n", env.tail(name, 15)));
                }
                return Err(format!(
                    "STALL: not idle after {timeout:?}; counters {last:?}\nstats: {stats}\n{logs}"
                ));
            }
            std::thread::sleep(POLL);
        };
        let octets_after = amqp_octets();
        let hwm: Vec<Option<u64>> = children.iter().map(|c| peak_rss_kib(c.id())).collect();
        let messages: Vec<BTreeMap<String, u64>> =
            metrics_ports.iter().map(|p| scrape_messages(*p)).collect();

        let stored = last.get("stored").copied().unwrap_or(0);
        let duplicate = last.get("duplicate").copied().unwrap_or(0);
        out.pages = (stored + duplicate) as u64;
        out.wall_secs = last_change.duration_since(start.at).as_secs_f64();
        let t = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / env.ticks;
        for (i, (name, _)) in workers.iter().enumerate() {
            out.procs.push(Proc {
                name: name.clone(),
                cpu_secs: t(start.workers[i], end.workers[i]),
                peak_rss_kib: hwm[i],
            });
        }
        out.procs.push(Proc {
            name: "redis-server".into(),
            cpu_secs: t(start.redis(), end.redis()),
            peak_rss_kib: None,
        });
        out.procs.push(Proc {
            name: "rabbitmq (beam.smp)".into(),
            cpu_secs: t(start.rabbit, end.rabbit),
            peak_rss_kib: None,
        });
        out.procs.push(Proc {
            name: "crawler seed".into(),
            cpu_secs: t(start.self_cpu.1, end.self_cpu.1),
            peak_rss_kib: None,
        });
        out.server_cpu_secs = t(start.self_cpu.0, end.self_cpu.0);
        let ours: f64 = out.procs.iter().map(|p| p.cpu_secs).sum::<f64>() + out.server_cpu_secs;
        out.notes
            .push(machine_note(start.machine, end.machine, ours, env.ticks));
        let window = end.at.duration_since(start.at).as_secs_f64();
        let own = redis.sent() - polls_before;
        if redis.is_cluster() {
            out.notes
                .push(cluster_spread(&redis, &start, &end, env.ticks));
        }
        let calls = end.redis_calls().saturating_sub(start.redis_calls() + own);
        out.redis_commands = Some(calls);
        let tail = bg_redis_rate * (window - out.wall_secs).max(0.0);
        out.notes.push(format!(
            "Redis commands/page without the idle tail (the background rate × the {:.1} s after the counters last moved, ≈ {tail:.0} commands): {:.1}",
            window - out.wall_secs,
            (calls as f64 - tail).max(0.0) / out.pages.max(1) as f64
        ));
        // Broker messages: deliveries (bundles count once), not the
        // messages inside them.
        let delivered: u64 = messages.iter().filter_map(|m| m.get("deliveries")).sum();
        out.amqp_messages = Some(delivered);
        let (mut recv, mut send, mut found) = (0, 0, 0);
        for ports in &worker_ports {
            for p in ports {
                if let (Some(a), Some(b)) = (octets_before.get(p), octets_after.get(p)) {
                    recv += b.0 - a.0;
                    send += b.1 - a.1;
                    found += 1;
                }
            }
        }
        if found > 0 {
            out.amqp_bytes = Some((recv, send));
        }
        out.notes.push(format!(
            "seed → counters last moved: {:.2} s; CPU window seed → still for {:.1} s: {:.2} s; idle confirmed by `crawler stats --wait-idle` ({} time(s)); counters {}",
            out.wall_secs,
            STILL_FOR.as_secs_f64(),
            window,
            confirmations,
            serde_json::to_string(&last).unwrap_or_default()
        ));
        out.notes
            .push(format!("queues at idle: {}", idle_json["queues"]));
        out.notes.push(format!(
            "Redis commands: INFO commandstats delta over the CPU window minus the bench's own {own} HGETALL/INFO; the shared Redis counts every client, and the background rate before the seed (idle workers polling, and anyone else) × the window ≈ {:.0} commands",
            bg_redis_rate * window
        ));
        out.notes.push(format!(
            "RabbitMQ: broker deliveries are the workers' crawler_deliveries_total, the messages in them by outcome (crawler_messages_total) {}; bytes are the {} worker connections' socket octets (AMQP frames both ways, acks and confirms included): {} B in, {} B out",
            workers
                .iter()
                .map(|(name, _)| name)
                .zip(&messages)
                .map(|(n, m)| format!("{n} {m:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            found,
            recv,
            send
        ));
        Ok(())
    })();
    evaluation::bins::stop(&mut children);
    result
}
