//! A `redis-server` of a bench's own: on a free loopback port, nothing
//! saved, in a temporary folder, killed and removed when dropped. The
//! memory and stats benches measure on it so that nothing else in the
//! shared Redis counts.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `redis-server`.
pub struct OwnRedis {
    child: Child,
    pub port: u16,
    pub url: String,
    dir: std::path::PathBuf,
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl OwnRedis {
    /// Starts one with these extra `redis-server` arguments and waits
    /// until it accepts connections (at most 5 s).
    pub fn start(extra: &[&str]) -> Result<OwnRedis, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("a free port: {e}"))?;
        let dir = std::env::temp_dir().join(format!("bench-redis-{port}"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("redis-server (apt-get install redis-server): {e}"))?;
        let redis = OwnRedis {
            child,
            port,
            url: format!("redis://127.0.0.1:{port}/"),
            dir,
        };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(redis);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("redis-server on port {port} did not start"))
    }
}
