//! A test's own RabbitMQ node and Redis, on other ports under a temporary
//! directory, for tests that kill or restart their services (the shared
//! services on 5672 and 6379 must never be disturbed).
//!
//! Both are the machine's installed servers (`scripts/ensure-services.sh`
//! installs them); a service that cannot be started is an error for the
//! caller to fail on, never a reason to pass.
//!
//! Dropping a handle stops its service and removes its directory.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

/// How long a RabbitMQ node may take to start (about 5 s here; a cold CI
/// machine is slower).
const RABBIT_START: Duration = Duration::from_secs(120);
/// How long a Redis may take to start and load its append-only file.
const REDIS_START: Duration = Duration::from_secs(30);
/// Bound of one `rabbitmqctl` / `rabbitmq-diagnostics` / `redis-cli` call.
const CLI_TIMEOUT: Duration = Duration::from_secs(60);

/// Ports handed out by this process so far (several services in one test
/// binary, or tests side by side, never get the same port).
static NEXT_PORT: AtomicU16 = AtomicU16::new(0);

/// A port on 127.0.0.1 that is free now: derived from the process id (so
/// test processes side by side start from different places), below the
/// kernel's ephemeral range (32768+) so that no client connection takes it
/// while the service is down, and checked free by binding it.
pub fn free_port() -> Result<u16, String> {
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    let base = (std::process::id().wrapping_mul(37)) % SPAN;
    for _ in 0..SPAN {
        let n = u32::from(NEXT_PORT.fetch_add(1, Ordering::SeqCst));
        let port = (LOW + (base + n) % SPAN) as u16;
        if port_free(port) {
            return Ok(port);
        }
    }
    Err("no free port between 20000 and 32000 on 127.0.0.1".into())
}

fn port_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok() && !port_open(port)
}

/// Whether something accepts connections on 127.0.0.1:`port`.
pub fn port_open(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok()
}

/// A fresh directory for one service, under the system's temporary directory.
fn service_dir(kind: &str) -> Result<PathBuf, String> {
    let n = NEXT_PORT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "crawler-{kind}-{}-{n}-{}",
        std::process::id(),
        &uuid::Uuid::new_v4().simple().to_string()[..6]
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

/// What a command printed, when it ran to its end within its bound.
pub struct CmdOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to its end, for at most `timeout` (then kills it: an error).
pub fn run_bounded(cmd: &mut Command, timeout: Duration) -> Result<CmdOutput, String> {
    let what = format!("{cmd:?}");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(out)) => Ok(CmdOutput {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            Err(format!("{what}: no answer within {timeout:?}"))
        }
    }
}

/// Calls `ready` every 250 ms until it says yes or `timeout` passes; the
/// error names `what` and the last reason given.
fn wait_until(
    what: &str,
    timeout: Duration,
    mut ready: impl FnMut() -> Result<(), String>,
) -> Result<Duration, String> {
    let start = Instant::now();
    loop {
        let why = match ready() {
            Ok(()) => return Ok(start.elapsed()),
            Err(why) => why,
        };
        if start.elapsed() > timeout {
            return Err(format!("{what} not ready after {timeout:?}: {why}"));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The last `n` lines of a file (for error messages).
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A RabbitMQ node of its own: name `<name>@localhost`, AMQP on 127.0.0.1
/// `port`, distribution on `dist_port`, its database and logs under `dir`
/// (owned by the `rabbitmq` user, as the server scripts run as that user).
pub struct RabbitNode {
    pub name: String,
    pub port: u16,
    pub dist_port: u16,
    dir: PathBuf,
}

impl RabbitNode {
    /// Starts a node and waits until it answers.
    pub fn start() -> Result<RabbitNode, String> {
        for t in ["rabbitmq-server", "rabbitmqctl", "rabbitmq-diagnostics"] {
            tool(t)?;
        }
        let dir = service_dir("rabbitmq")?;
        let port = free_port()?;
        let dist_port = free_port()?;
        let name = format!(
            "crawlertest{}x{}@localhost",
            std::process::id(),
            NEXT_PORT.fetch_add(1, Ordering::SeqCst)
        );
        let node = RabbitNode {
            name,
            port,
            dist_port,
            dir,
        };
        for sub in ["mnesia", "log"] {
            std::fs::create_dir_all(node.dir.join(sub)).map_err(|e| e.to_string())?;
        }
        // The machine's /etc/rabbitmq/rabbitmq.conf pins 5672: without a
        // config of its own the node fails with eaddrinuse.
        std::fs::write(
            node.dir.join("rabbitmq.conf"),
            format!("listeners.tcp.local = 127.0.0.1:{port}\n"),
        )
        .map_err(|e| e.to_string())?;
        std::fs::write(node.dir.join("enabled_plugins"), "[].\n").map_err(|e| e.to_string())?;
        let chown = run_bounded(
            Command::new("chown")
                .args(["-R", "rabbitmq:rabbitmq"])
                .arg(&node.dir),
            CLI_TIMEOUT,
        )?;
        if !chown.success {
            return Err(format!(
                "chown rabbitmq {}: {}",
                node.dir.display(),
                chown.stderr
            ));
        }
        node.launch()?;
        Ok(node)
    }

    /// `amqp://guest:guest@127.0.0.1:<port>/%2f`.
    pub fn amqp_url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port)
    }

    /// Where the node writes its logs.
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("log")
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(tool(program).unwrap_or_else(|_| program.into()));
        c.env("RABBITMQ_NODENAME", &self.name)
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", self.port.to_string())
            .env("RABBITMQ_DIST_PORT", self.dist_port.to_string())
            .env("RABBITMQ_MNESIA_BASE", self.dir.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", self.dir.join("log"))
            .env("RABBITMQ_PID_FILE", self.dir.join("node.pid"))
            .env(
                "RABBITMQ_ENABLED_PLUGINS_FILE",
                self.dir.join("enabled_plugins"),
            )
            // Without the extension: the server adds `.conf`.
            .env("RABBITMQ_CONFIG_FILE", self.dir.join("rabbitmq"));
        c
    }

    fn ctl(&self, args: &[&str]) -> Result<CmdOutput, String> {
        run_bounded(
            self.command("rabbitmqctl")
                .args(["-n", &self.name])
                .args(args),
            CLI_TIMEOUT,
        )
    }

    /// Starts the node's operating-system process (`rabbitmq-server
    /// -detached`) and waits until it answers.
    pub fn launch(&self) -> Result<Duration, String> {
        let start = Instant::now();
        let out = run_bounded(
            self.command("rabbitmq-server").arg("-detached"),
            CLI_TIMEOUT,
        )?;
        if !out.success {
            return Err(format!(
                "rabbitmq-server -detached ({}) failed: {}{}",
                self.name, out.stdout, out.stderr
            ));
        }
        self.wait_ready(RABBIT_START)
            .map_err(|e| format!("{e}\nnode log:\n{}", self.log_tail()))?;
        Ok(start.elapsed())
    }

    fn log_tail(&self) -> String {
        let file = self.log_dir().join(format!("{}.log", self.name));
        tail(&file, 30)
    }

    /// Waits for the AMQP port, then for `rabbitmq-diagnostics ping`.
    pub fn wait_ready(&self, timeout: Duration) -> Result<Duration, String> {
        let start = Instant::now();
        wait_until(&format!("RabbitMQ port {}", self.port), timeout, || {
            if port_open(self.port) {
                Ok(())
            } else {
                Err("port closed".into())
            }
        })?;
        let left = timeout
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(5));
        wait_until(&format!("RabbitMQ node {}", self.name), left, || {
            let out = run_bounded(
                self.command("rabbitmq-diagnostics")
                    .args(["-n", &self.name, "-q", "ping"]),
                CLI_TIMEOUT,
            )?;
            if out.success {
                Ok(())
            } else {
                Err(format!("ping: {}{}", out.stdout, out.stderr))
            }
        })?;
        Ok(start.elapsed())
    }

    /// `rabbitmqctl stop_app`: the broker closes every connection and stops
    /// (the Erlang node stays up).
    pub fn stop_app(&self) -> Result<(), String> {
        let out = self.ctl(&["stop_app"])?;
        if out.success {
            Ok(())
        } else {
            Err(format!("stop_app: {}{}", out.stdout, out.stderr))
        }
    }

    /// `rabbitmqctl start_app`, then waits until the broker answers.
    pub fn start_app(&self) -> Result<Duration, String> {
        let start = Instant::now();
        let out = self.ctl(&["start_app"])?;
        if !out.success {
            return Err(format!("start_app: {}{}", out.stdout, out.stderr));
        }
        self.wait_ready(RABBIT_START)?;
        Ok(start.elapsed())
    }

    /// The node's operating-system process id (from its pid file).
    pub fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.dir.join("node.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// SIGKILL to the node's process (the broker dies mid-write); waits
    /// until the AMQP port is closed. [`RabbitNode::launch`] starts it again
    /// on the same database.
    pub fn kill9(&self) -> Result<(), String> {
        let pid = self
            .pid()
            .ok_or_else(|| format!("no pid file for {}", self.name))?;
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        wait_until("RabbitMQ to die", Duration::from_secs(30), || {
            let alive = Path::new(&format!("/proc/{pid}")).exists();
            if alive || port_open(self.port) {
                Err(format!("pid {pid} alive: {alive}"))
            } else {
                Ok(())
            }
        })?;
        Ok(())
    }
}

impl Drop for RabbitNode {
    fn drop(&mut self) {
        let pid = self.pid();
        let stopped = self.ctl(&["stop"]).map(|o| o.success).unwrap_or(false);
        if let Some(pid) = pid {
            if !stopped || Path::new(&format!("/proc/{pid}")).exists() {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
        if std::env::var_os("KEEP_SERVICE_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A Redis of its own, a child process on 127.0.0.1 `port` with its
/// append-only file under `dir`, that can be killed with SIGKILL and started
/// again on the same file.
///
/// It runs with `--appendfsync always`: a write is acknowledged only once it
/// is on disk, so a SIGKILL loses nothing that was acknowledged. Under the
/// default `everysec` a SIGKILL legitimately loses up to the last second of
/// acknowledged writes, and a test that kills Redis would see losses that are
/// the configuration's, not the crawler's.
pub struct RedisServer {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
    starts: usize,
    /// Further `redis-server` arguments (a cluster node's).
    extra: Vec<String>,
}

impl RedisServer {
    /// Starts a Redis and waits until it answers `PING`.
    pub fn start() -> Result<RedisServer, String> {
        RedisServer::start_with(&[])
    }

    /// [`RedisServer::start`] with further `redis-server` arguments.
    pub fn start_with(extra: &[&str]) -> Result<RedisServer, String> {
        tool("redis-server")?;
        tool("redis-cli")?;
        let mut redis = RedisServer {
            port: free_port()?,
            dir: service_dir("redis")?,
            child: None,
            starts: 0,
            extra: extra.iter().map(|a| a.to_string()).collect(),
        };
        redis.launch()?;
        Ok(redis)
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The log file of the current process.
    pub fn log_file(&self) -> PathBuf {
        self.dir.join(format!("redis-{}.log", self.starts))
    }

    /// Starts the process (again, on the same directory: it loads its
    /// append-only file) and waits until it answers `PING`.
    pub fn launch(&mut self) -> Result<Duration, String> {
        let start = Instant::now();
        self.starts += 1;
        let log = std::fs::File::create(self.log_file()).map_err(|e| e.to_string())?;
        let child = Command::new(tool("redis-server")?)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(&self.dir)
            .args(["--appendonly", "yes"])
            // See the type's comment: nothing acknowledged is lost on SIGKILL.
            .args(["--appendfsync", "always"])
            .args(["--save", "", "--daemonize", "no", "--protected-mode", "no"])
            .args(pipeline::store::RECOMMENDED_REDIS_CONFIG)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting redis-server: {e}"))?;
        self.child = Some(child);
        let ready = wait_until(&format!("Redis on port {}", self.port), REDIS_START, || {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    return Err(format!("redis-server exited: {status}"));
                }
            }
            let out = run_bounded(
                Command::new(tool("redis-cli")?).args(["-p", &self.port.to_string(), "ping"]),
                CLI_TIMEOUT,
            )?;
            if out.stdout.trim() == "PONG" {
                Ok(())
            } else {
                Err(format!("ping: {}{}", out.stdout.trim(), out.stderr.trim()))
            }
        });
        ready.map_err(|e| format!("{e}\nlog:\n{}", tail(&self.log_file(), 20)))?;
        Ok(start.elapsed())
    }

    /// SIGKILL, and waits for the exit.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill9();
        if std::env::var_os("KEEP_SERVICE_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Where `tool` is: on the PATH or in /usr/sbin (Debian puts the RabbitMQ
/// scripts there); an error with a hint how to install it otherwise.
pub fn tool(tool: &str) -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "{tool} is not installed (scripts/ensure-services.sh installs RabbitMQ and Redis)"
            )
        })
}

/// `redis-cli -p <port> <args>`, its output (bounded in time).
fn redis_cli(port: u16, args: &[&str]) -> Result<String, String> {
    let out = run_bounded(
        Command::new(tool("redis-cli")?)
            .args(["-p", &port.to_string()])
            .args(args),
        CLI_TIMEOUT,
    )?;
    if out.success {
        Ok(out.stdout.replace('\r', ""))
    } else {
        Err(format!(
            "redis-cli -p {port} {args:?}: {}",
            out.stderr.trim()
        ))
    }
}

/// How long a Redis Cluster may take to form, or to fail a master over
/// (node timeout 2 s; about 7 s here).
const CLUSTER_READY: Duration = Duration::from_secs(90);

/// A Redis Cluster of its own: 3 masters and 3 replicas, child processes
/// on free ports, each with its append-only file (`appendfsync always`, as
/// [`RedisServer`]) and a node timeout of 2 s.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
    /// The node killed by [`RedisCluster::kill_master`], until relaunched.
    killed: Option<usize>,
}

impl RedisCluster {
    /// Starts six nodes, creates the cluster, and waits until it is `ok`
    /// and every replica is in sync with its master (a master killed
    /// before its replica synced is never replaced).
    pub fn start() -> Result<RedisCluster, String> {
        let args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
        ];
        // Each node's cluster bus on a port of its own choosing too: by default Redis takes
        // the node's port + 10000, which lands in the kernel's ephemeral range (32768+),
        // where a client connection of another test may hold it ("bind: Address already
        // in use", seen with a crawl running beside the tests).
        let nodes = (0..6)
            .map(|_| {
                let bus = free_port()?.to_string();
                let mut node_args = args.to_vec();
                node_args.extend(["--cluster-port", bus.as_str()]);
                RedisServer::start_with(&node_args)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let mut create: Vec<&str> = vec!["--cluster", "create"];
        create.extend(addrs.iter().map(String::as_str));
        create.extend(["--cluster-replicas", "1", "--cluster-yes"]);
        redis_cli(nodes[0].port, &create)?;
        let cluster = RedisCluster {
            nodes,
            killed: None,
        };
        cluster.wait_healthy()?;
        Ok(cluster)
    }

    /// The seed URLs, comma-separated (`CRAWLER_REDIS_CLUSTER`).
    pub fn seeds(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("redis://127.0.0.1:{}", n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The indexes of the running nodes that are masters now.
    pub fn masters(&mut self) -> Vec<usize> {
        let mut ports: Vec<(usize, u16)> = Vec::new();
        for (i, n) in self.nodes.iter_mut().enumerate() {
            if n.is_running() {
                ports.push((i, n.port));
            }
        }
        ports
            .into_iter()
            .filter(|(_, port)| {
                redis_cli(*port, &["role"]).is_ok_and(|r| r.lines().next() == Some("master"))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The ports of the nodes that are up (all but a killed one).
    fn up_ports(&self) -> Vec<u16> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.killed)
            .map(|(_, n)| n.port)
            .collect()
    }

    /// Whether every node of `ports` sees the cluster `ok`.
    fn all_ok(ports: &[u16]) -> Result<(), String> {
        for &port in ports {
            let info = redis_cli(port, &["cluster", "info"])?;
            if !info.contains("cluster_state:ok") {
                return Err(format!("node {port}: not ok"));
            }
        }
        Ok(())
    }

    /// Waits until every running node sees the cluster `ok` with 3 masters
    /// that each have a replica in sync (`master_link_status:up`).
    pub fn wait_healthy(&self) -> Result<Duration, String> {
        let running = self.up_ports();
        wait_until("the Redis Cluster", CLUSTER_READY, || {
            RedisCluster::all_ok(&running)?;
            let mut synced = 0;
            for &port in &running {
                let repl = redis_cli(port, &["info", "replication"])?;
                if repl.contains("master_link_status:up") {
                    synced += 1;
                }
            }
            if synced >= 3 {
                Ok(())
            } else {
                Err(format!("{synced} replicas in sync"))
            }
        })
    }

    /// SIGKILL to master number `pick` (modulo the masters there are);
    /// its replica takes over (see [`RedisCluster::relaunch_killed`]).
    /// Returns the killed node's port.
    pub fn kill_master(&mut self, pick: usize) -> Result<u16, String> {
        if self.killed.is_some() {
            return Err("a node is already down".into());
        }
        let masters = self.masters();
        if masters.is_empty() {
            return Err("no master answers".into());
        }
        let i = masters[pick % masters.len()];
        self.nodes[i].kill9();
        self.killed = Some(i);
        Ok(self.nodes[i].port)
    }

    /// Waits until the killed master's replica has taken over (3 masters
    /// among the other nodes, and the cluster `ok` on each), then starts
    /// the killed node again on its files: it rejoins as a replica.
    /// Returns how long the cluster took to be whole again.
    ///
    /// The promotion is what is waited for: right after the kill the other
    /// nodes still say `ok` (they notice a dead master only after the node
    /// timeout), and a master started again before that is no failover.
    pub fn relaunch_killed(&mut self) -> Result<Duration, String> {
        let i = self.killed.ok_or("no node is down")?;
        let start = Instant::now();
        let others = self.up_ports();
        wait_until("the failover", CLUSTER_READY, || {
            let masters = self.masters().len();
            if masters < 3 {
                return Err(format!("{masters} masters among the other nodes"));
            }
            RedisCluster::all_ok(&others)
        })?;
        self.nodes[i].launch()?;
        self.killed = None;
        self.wait_healthy()?;
        Ok(start.elapsed())
    }
}

/// A RabbitMQ cluster of its own: three [`RabbitNode`]s, the second and
/// third joined to the first (about 40 s here).
pub struct RabbitCluster {
    pub nodes: Vec<RabbitNode>,
}

impl RabbitCluster {
    pub fn start() -> Result<RabbitCluster, String> {
        let nodes = (0..3)
            .map(|_| RabbitNode::start())
            .collect::<Result<Vec<_>, _>>()?;
        for node in &nodes[1..] {
            node.stop_app()?;
            let out = node.ctl(&["join_cluster", &nodes[0].name])?;
            if !out.success {
                return Err(format!(
                    "{} join_cluster {}: {}{}",
                    node.name, nodes[0].name, out.stdout, out.stderr
                ));
            }
            node.start_app()?;
        }
        Ok(RabbitCluster { nodes })
    }

    /// The nodes' AMQP URLs, comma-separated (`CRAWLER_AMQP_URL`).
    pub fn amqp_urls(&self) -> String {
        self.nodes
            .iter()
            .map(RabbitNode::amqp_url)
            .collect::<Vec<_>>()
            .join(",")
    }
}
