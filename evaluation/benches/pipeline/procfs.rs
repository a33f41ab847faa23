//! What /proc says about the processes of a run: CPU ticks, peak RSS,
//! the machine's other load, and which process holds which socket.

use super::*;

/// Clock ticks per second of /proc/<pid>/stat.
pub(crate) fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Fields of /proc/<pid>/stat after the command name (index 0 = state).
pub(crate) fn stat_fields(pid: &str) -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime of a process, in ticks.
pub(crate) fn cpu_ticks(pid: u32) -> Option<u64> {
    let f = stat_fields(&pid.to_string())?;
    Some(f[11] + f[12])
}

/// (own utime + stime, waited-for children's cutime + cstime) of this process.
pub(crate) fn self_ticks() -> (u64, u64) {
    let f = stat_fields("self").unwrap_or_default();
    (f[11] + f[12], f[13] + f[14])
}

/// (busy, all) ticks of the whole machine, every core (/proc/stat).
pub(crate) fn machine_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = text
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let all: u64 = f.iter().take(8).sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (all - idle, all)
}

/// "the machine: 1.73 of 2 cores busy, 0.11 of them outside the measured
/// processes" over a window.
pub(crate) fn machine_note(
    before: (u64, u64),
    after: (u64, u64),
    ours_secs: f64,
    ticks: f64,
) -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let busy = (after.0 - before.0) as f64;
    let all = (after.1 - before.1).max(1) as f64;
    let wall = all / cores / ticks;
    let busy_cores = busy / all * cores;
    format!(
        "the whole machine over the window: {busy_cores:.2} of {cores:.0} cores busy, {:.2} of them outside the processes measured here (other engineers' builds and tests, the kernel's softirqs)",
        (busy_cores - ours_secs / wall.max(1e-9)).max(0.0)
    )
}

/// Peak resident memory (VmHWM) in KiB.
pub(crate) fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// (local port, remote port, state, inode) of every TCP socket.
pub(crate) fn tcp_sockets() -> Vec<(u16, u16, String, u64)> {
    let mut out = Vec::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 {
                continue;
            }
            let port = |a: &str| {
                a.rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    .unwrap_or(0)
            };
            out.push((
                port(f[1]),
                port(f[2]),
                f[3].to_string(),
                f[9].parse().unwrap_or(0),
            ));
        }
    }
    out
}

/// The socket inodes a process holds open.
pub(crate) fn socket_inodes(pid: u32) -> HashSet<u64> {
    let mut out = HashSet::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for entry in dir.flatten() {
            if let Ok(target) = std::fs::read_link(entry.path()) {
                let t = target.to_string_lossy();
                if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    if let Ok(inode) = inode.parse() {
                        out.insert(inode);
                    }
                }
            }
        }
    }
    out
}

/// The processes listening on TCP `port` (the Redis server, RabbitMQ's
/// beam.smp).
pub(crate) fn pids_listening_on(port: u16) -> Vec<(u32, String)> {
    let inodes: HashSet<u64> = tcp_sockets()
        .into_iter()
        .filter(|(local, _, state, _)| *local == port && state == "0A")
        .map(|(_, _, _, inode)| inode)
        .collect();
    let mut pids = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if !socket_inodes(pid).is_disjoint(&inodes) {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                pids.push((pid, comm));
            }
        }
    }
    pids
}

/// Local ports of a process's connections to `remote_port`.
pub(crate) fn connection_ports(pid: u32, remote_port: u16) -> Vec<u16> {
    let inodes = socket_inodes(pid);
    tcp_sockets()
        .into_iter()
        .filter(|(_, remote, state, inode)| {
            *remote == remote_port && state == "01" && inodes.contains(inode)
        })
        .map(|(local, ..)| local)
        .collect()
}

pub(crate) fn uptime() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            format!("load average {} {} {}", f[0], f[1], f[2])
        })
        .unwrap_or_default()
}
