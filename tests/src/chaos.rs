//! The chaos test's fault schedule (`tests/tests/chaos.rs`): which worker,
//! broker and Redis faults happen when, from a seed, so a failing seed
//! replays its schedule.

use std::time::Duration;

use testsite::prng::SplitMix64;

/// The worker processes: one of each kind, two contentseen.
pub const INSTANCES: [&str; 5] = [
    "frontier",
    "fetcher",
    "extractor",
    "contentseen",
    "contentseen",
];

pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The seeds to run: `CHAOS_SEEDS`, or `runs_var` (default `runs`) seeds
/// from a random base.
pub fn seeds(runs_var: &str, runs: u64) -> Vec<u64> {
    if let Ok(list) = std::env::var("CHAOS_SEEDS") {
        let seeds: Vec<u64> = list
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("CHAOS_SEEDS: not a number: {s}"))
            })
            .collect();
        assert!(!seeds.is_empty(), "CHAOS_SEEDS is empty");
        return seeds;
    }
    let runs = env_u64(runs_var, runs).max(1);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut rng = SplitMix64::new(nanos ^ u64::from(std::process::id()).rotate_left(32));
    // Small numbers, easy to type back.
    (0..runs).map(|_| rng.next_u64() % 1_000_000).collect()
}

/// One thing the schedule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// SIGKILL to worker instance `i` (an index into [`INSTANCES`]).
    Kill(usize),
    /// Start worker instance `i` again.
    Start(usize),
    BrokerStopApp,
    BrokerStartApp,
    BrokerKill,
    BrokerLaunch,
    RedisKill,
    RedisLaunch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    Workers,
    Broker,
    Redis,
}

#[derive(Debug, Clone)]
pub struct Step {
    pub at: Duration,
    pub lane: Lane,
    pub action: Action,
}

/// The fault schedule of `seed`, over `window` (from when the crawl is
/// seeded). Per lane, no step starts before the previous one of its lane has
/// ended in the plan: a worker is killed, restarted after 0–1 s, and killed
/// again only in a later slot.
pub fn schedule(seed: u64, window: Duration) -> Vec<Step> {
    let mut rng = SplitMix64::new(seed);
    let w = window.as_millis() as usize;
    let start = 500;
    let mut steps = Vec::new();
    // Kills per worker kind: 3 or 4 of frontier, fetcher and extractor, 6 of
    // contentseen (spread over its two processes).
    let kinds: [(&[usize], usize); 4] = [
        (&[0], 3 + rng.below(2)),
        (&[1], 3 + rng.below(2)),
        (&[2], 3 + rng.below(2)),
        (&[3, 4], 6),
    ];
    for (instances, n) in kinds {
        let slot = (w - start) / n;
        for k in 0..n {
            let at = start + k * slot + rng.below(slot - 1_200);
            let i = instances[rng.below(instances.len())];
            let pause = rng.below(1_001);
            steps.push(Step {
                at: Duration::from_millis(at as u64),
                lane: Lane::Workers,
                action: Action::Kill(i),
            });
            steps.push(Step {
                at: Duration::from_millis((at + pause) as u64),
                lane: Lane::Workers,
                action: Action::Start(i),
            });
        }
    }
    // One broker restart: the application stopped and started, or the whole
    // node killed and started again.
    let at = w / 5 + rng.below(w / 2);
    let pause = rng.below(1_001);
    let (down, up) = if rng.below(2) == 0 {
        (Action::BrokerStopApp, Action::BrokerStartApp)
    } else {
        (Action::BrokerKill, Action::BrokerLaunch)
    };
    for (a, action) in [(at, down), (at + pause, up)] {
        steps.push(Step {
            at: Duration::from_millis(a as u64),
            lane: Lane::Broker,
            action,
        });
    }
    // One Redis crash: SIGKILL, restarted from its append-only file.
    let at = w / 7 + rng.below(w * 2 / 3);
    let pause = rng.below(1_001);
    for (a, action) in [(at, Action::RedisKill), (at + pause, Action::RedisLaunch)] {
        steps.push(Step {
            at: Duration::from_millis(a as u64),
            lane: Lane::Redis,
            action,
        });
    }
    steps.sort_by_key(|s| (s.at, s.lane));
    steps
}
