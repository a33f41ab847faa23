//! `crawler health`, the compose healthcheck: healthy while a worker on the
//! host keeps its heartbeat, unhealthy once it is gone, and never for
//! another host's workers.

use std::time::{Duration, Instant};

use crawler_tests::TestEnv;

/// Polls `crawler health` (with `extra` arguments) until it exits with
/// `want`, for at most `limit`.
fn health_becomes(env: &TestEnv, extra: &[&str], want: bool, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        let mut args = vec!["health"];
        args.extend_from_slice(extra);
        if env.crawler(&args).status.success() == want {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_the_workers_heartbeat() {
    let env = TestEnv::new("health");
    assert!(
        !env.crawler(&["health"]).status.success(),
        "healthy with no worker running"
    );
    let mut worker = env.start("extractor", &[]);
    assert!(
        health_becomes(&env, &[], true, Duration::from_secs(20)),
        "not healthy while a worker runs"
    );
    let out = env.crawler_ok(&["health"]);
    assert!(out.contains("alive"), "{out}");
    assert!(
        !env.crawler(&["health", "--host", "another-host"])
            .status
            .success(),
        "healthy for a host with no worker"
    );
    // SIGKILL: no clean removal of the key; it expires with the heartbeat.
    worker.kill();
    assert!(
        health_becomes(
            &env,
            &[],
            false,
            pipeline::worker::HEARTBEAT_TTL + Duration::from_secs(5)
        ),
        "still healthy after the worker died"
    );
    env.cleanup().await;
}
