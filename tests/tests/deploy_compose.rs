//! The compose file: every service's command names a binary the workspace
//! builds, and a compose implementation accepts the file (Debian's
//! `docker-compose` validates without an engine; `.ci/run` installs it).

use std::process::Command;

const COMPOSE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/docker-compose.yml");
const ENV_EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/.env.example");

/// The first word of the `command: [...]` of every service built from our
/// image (the services that merge the `*worker` template).
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut ours = false;
    for line in text.lines() {
        // A service starts at two spaces of indent.
        if line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with(':') {
            ours = false;
        }
        let t = line.trim();
        if t == "<<: *worker" {
            ours = true;
        }
        if let (true, Some(rest)) = (ours, t.strip_prefix("command:")) {
            let rest = rest.trim().trim_start_matches('[').trim();
            if let Some(first) = rest.split(',').next() {
                out.push(
                    first
                        .trim()
                        .trim_end_matches(']')
                        .trim_matches('"')
                        .to_string(),
                );
            }
        }
    }
    out
}

#[test]
fn every_service_runs_a_binary_of_the_workspace() {
    let text = std::fs::read_to_string(COMPOSE).expect("deploy/docker-compose.yml");
    let cmds = commands(&text);
    for worker in ["frontier", "fetcher", "extractor", "contentseen", "crawler"] {
        assert!(
            cmds.iter().any(|c| c == worker),
            "no service runs {worker}: {cmds:?}"
        );
    }
    let dir = crawler_tests::bin_dir();
    for c in &cmds {
        assert!(
            dir.join(c).is_file(),
            "compose runs {c}, which the workspace does not build"
        );
    }
}

#[test]
fn the_compose_file_validates() {
    if Command::new("docker-compose")
        .arg("version")
        .output()
        .is_err()
    {
        panic!(
            "docker-compose is not installed: the compose file cannot be validated \
             (scripts/ensure-services.sh installs Debian's package)"
        );
    }
    let out = Command::new("docker-compose")
        .args(["--env-file", ENV_EXAMPLE, "-f", COMPOSE, "config", "-q"])
        .output()
        .expect("running docker-compose");
    assert!(
        out.status.success(),
        "docker-compose config: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
