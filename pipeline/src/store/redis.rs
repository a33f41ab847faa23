//! The Redis executor, for one node or a Redis Cluster: a batch of ops as
//! one pipeline per cluster slot (one round trip, the slots' pipelines
//! sent at once), scripts run by SHA, and on request a `WAIT` for
//! replicas at the end of every pipeline that wrote.
//!
//! Within one slot the ops of a batch run in order; across slots (on a
//! cluster) they run concurrently, so a stage that needs one step done
//! before another in another slot sends them in two batches. A script
//! that a node does not know (a restarted or newly promoted node) fails
//! with `NOSCRIPT` without running: it is loaded and sent again alone.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::Slot;

use super::{Op, Reply, ScriptCall, StoreError, Stored};

/// How long a `WAIT` for replicas may take before the write counts as
/// failed (the message is then requeued and its steps redone).
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_millis(2000);

/// Where the store is: one Redis, or a cluster, and how writes are made
/// safe from a master's loss.
#[derive(Debug, Clone, Default)]
pub struct RedisConfig {
    /// One node's URL (used when `cluster` is empty).
    pub url: String,
    /// Seed nodes of a Redis Cluster (`redis://host:port`); when given,
    /// the cluster is used and `url` is ignored.
    pub cluster: Vec<String>,
    /// Replicas every batch that writes must reach (`WAIT`) before it
    /// returns: what a stage acks is then on a replica too, and survives
    /// its master's failover. Reads that decide an ack wait too
    /// ([`super::Store::exec_confirmed`]). 0: no wait.
    pub wait_replicas: u32,
    /// The longest wait for them.
    pub wait_timeout: Option<Duration>,
}

/// Redis through a reconnecting connection (a connection manager for one
/// node, the cluster client's connection for a cluster).
#[derive(Clone)]
pub struct RedisStore {
    /// For error messages (without password).
    url: String,
    conn: Conn,
    /// The scripts each slot's node has loaded (their SHAs; one node: all
    /// under `None`).
    loaded: Arc<Mutex<HashSet<Loaded>>>,
    /// `WAIT replicas timeout-ms` after each pipeline that wrote or is
    /// confirmed.
    wait: Option<(u32, u64)>,
}

#[derive(Clone)]
enum Conn {
    Node(ConnectionManager),
    Cluster(Arc<ClusterHandle>),
}

/// How long a rebuilt cluster connection is kept before a failure may
/// replace it again.
const REBUILD_EVERY: Duration = Duration::from_secs(2);

/// How long a cluster command may take before it fails (and the
/// connection is rebuilt, [`ClusterHandle::healed`]). Seen in the chaos
/// test on clusters: a worker started during a master's failover had its
/// commands queued behind the client's slot refresh until this timeout
/// (it was 30 s: a 12-17 s stall after the cluster was whole again). No
/// command of the crawler takes long on a healthy node; a `WAIT` takes at
/// most [`DEFAULT_WAIT_TIMEOUT`].
const CLUSTER_RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The cluster client's connection, replaced by a fresh one when it fails
/// in a way that says it may be broken (a timeout, a lost or refused
/// connection, the cluster down). Seen here: after a master was killed and
/// failed over, one worker's connection stayed in "slot refresh" and timed
/// out on every command for minutes while the others went on; a new
/// connection from the same client answered at once.
struct ClusterHandle {
    client: redis::cluster::ClusterClient,
    conn: Mutex<(ClusterConnection, std::time::Instant)>,
}

impl ClusterHandle {
    /// The connection and when it was made (a panic elsewhere while the
    /// lock was held leaves both whole: they are replaced in one move).
    fn slot(&self) -> std::sync::MutexGuard<'_, (ClusterConnection, std::time::Instant)> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self) -> ClusterConnection {
        self.slot().0.clone()
    }

    /// `result` as it is, after replacing the connection when its error
    /// may mean the connection is broken and it is older than
    /// [`REBUILD_EVERY`]. Every command sent through [`ClusterHandle::get`]
    /// passes its result through here.
    async fn healed<T>(&self, result: redis::RedisResult<T>) -> redis::RedisResult<T> {
        let Err(e) = &result else {
            return result;
        };
        let broken = e.is_timeout()
            || e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || matches!(
                e.kind(),
                redis::ErrorKind::Server(
                    redis::ServerErrorKind::ClusterDown | redis::ServerErrorKind::MasterDown
                )
            );
        if !broken || self.slot().1.elapsed() < REBUILD_EVERY {
            return result;
        }
        match self.client.get_async_connection().await {
            Ok(fresh) => {
                let mut slot = self.slot();
                if slot.1.elapsed() >= REBUILD_EVERY {
                    *slot = (fresh, std::time::Instant::now());
                    tracing::warn!(error = %e, "redis cluster connection rebuilt after a failure");
                }
            }
            Err(again) => {
                tracing::warn!(error = %again, "redis cluster connection could not be rebuilt yet")
            }
        }
        result
    }
}

/// A script a slot's node has loaded: the slot (`None` on one node) and
/// the script's SHA.
type Loaded = (Option<Slot>, String);

/// The keys of a split `MGET` in one slot, each with its place in the
/// whole reply.
type MGetPart = Vec<(usize, String)>;

/// One slot's share of a batch: the ops (their index in the batch, and
/// for a split `MGET` this slot's part).
struct Group {
    slot: Option<Slot>,
    ops: Vec<(usize, Option<MGetPart>)>,
}

impl RedisStore {
    /// A Redis error, with the (redacted) URL of this store.
    fn error(&self, source: redis::RedisError) -> StoreError {
        StoreError::Redis {
            url: self.url.clone(),
            source,
        }
    }

    pub(super) async fn connect(config: &RedisConfig) -> Result<Self, StoreError> {
        let shown = if config.cluster.is_empty() {
            crate::config::redact_url(&config.url)
        } else {
            let seeds: Vec<String> = config
                .cluster
                .iter()
                .map(|u| crate::config::redact_url(u))
                .collect();
            format!("cluster {}", seeds.join(","))
        };
        let err = |source| StoreError::Redis {
            url: shown.clone(),
            source,
        };
        let conn = if config.cluster.is_empty() {
            // No `CLIENT SETINFO` after connecting: Redis before 7.2 answers
            // it with an error, and a short `crawler query` pays for it.
            let info = redis::IntoConnectionInfo::into_connection_info(config.url.as_str())
                .map_err(err)?;
            let settings = info.redis_settings().clone().set_skip_set_lib_name();
            let client = redis::Client::open(info.set_redis_settings(settings)).map_err(err)?;
            let manager = redis::aio::ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_secs(5)))
                .set_response_timeout(Some(Duration::from_secs(30)))
                .set_number_of_retries(6)
                .set_max_delay(Duration::from_secs(5));
            Conn::Node(
                client
                    .get_connection_manager_with_config(manager)
                    .await
                    .map_err(err)?,
            )
        } else {
            let client = redis::cluster::ClusterClientBuilder::new(config.cluster.clone())
                .connection_timeout(Duration::from_secs(5))
                .response_timeout(CLUSTER_RESPONSE_TIMEOUT)
                .retries(8)
                .max_retry_wait(2000)
                .build()
                .map_err(err)?;
            let conn = client.get_async_connection().await.map_err(err)?;
            Conn::Cluster(Arc::new(ClusterHandle {
                client,
                conn: Mutex::new((conn, std::time::Instant::now())),
            }))
        };
        let wait = (config.wait_replicas > 0).then(|| {
            let ms = config
                .wait_timeout
                .unwrap_or(DEFAULT_WAIT_TIMEOUT)
                .as_millis();
            (config.wait_replicas, u64::try_from(ms).unwrap_or(u64::MAX))
        });
        Ok(RedisStore {
            url: shown,
            conn,
            loaded: Arc::default(),
            wait,
        })
    }

    /// Whether this is a cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.conn, Conn::Cluster(_))
    }

    /// The batch split by slot, in the order each slot first appears (one
    /// group for one node). An `MGET` whose keys span slots is split too.
    fn groups(&self, ops: &[Op]) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        let at = |slot: Option<Slot>, groups: &mut Vec<Group>| match groups
            .iter()
            .position(|g| g.slot == slot)
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    slot,
                    ops: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let cluster = self.is_cluster();
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::MGet { keys } if cluster && !keys.is_empty() => {
                    let mut by_slot: Vec<(Slot, MGetPart)> = Vec::new();
                    for (k, key) in keys.iter().enumerate() {
                        let slot = Slot::for_key(key);
                        match by_slot.iter_mut().find(|(s, _)| *s == slot) {
                            Some((_, part)) => part.push((k, key.clone())),
                            None => by_slot.push((slot, vec![(k, key.clone())])),
                        }
                    }
                    for (slot, part) in by_slot {
                        let g = at(Some(slot), &mut groups);
                        groups[g].ops.push((i, Some(part)));
                    }
                }
                _ => {
                    let slot = if cluster {
                        op.key().map(Slot::for_key)
                    } else {
                        None
                    };
                    let g = at(slot, &mut groups);
                    groups[g].ops.push((i, None));
                }
            }
        }
        groups
    }

    /// The batch, each slot's group waiting for replicas (when the store
    /// waits) if it wrote or is `confirmed` ([`super::Store::exec_confirmed`]).
    pub(super) async fn exec(&self, ops: &[Op], confirmed: bool) -> Result<Vec<Reply>, StoreError> {
        let groups = self.groups(ops);
        let mut replies: Vec<Option<Reply>> = vec![None; ops.len()];
        // A split MGET's parts, gathered per op.
        let mut parts: BTreeMap<usize, Vec<(usize, Reply)>> = BTreeMap::new();
        let mut retry: Vec<Group> = Vec::new();
        let results = futures_util::future::join_all(
            groups
                .iter()
                .map(|g| self.run_group(ops, g, confirmed, false)),
        )
        .await;
        for (g, result) in groups.into_iter().zip(results) {
            let values = result?;
            let mut again = Vec::new();
            for ((i, part), value) in g.ops.iter().cloned().zip(values) {
                match value {
                    Err(e)
                        if e.kind()
                            == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                    {
                        again.push((i, part));
                    }
                    Err(e) => return Err(self.error(e)),
                    Ok(v) => place(&mut replies, &mut parts, i, part, v),
                }
            }
            if !again.is_empty() {
                retry.push(Group {
                    slot: g.slot,
                    ops: again,
                });
            }
        }
        if !retry.is_empty() {
            // The node lost its scripts (restarted, or a replica took over):
            // load them and send those ops again (they did not run).
            self.forget_scripts();
            for g in &retry {
                for ((i, part), value) in g
                    .ops
                    .iter()
                    .cloned()
                    .zip(self.run_group(ops, g, confirmed, true).await?)
                {
                    let v = value.map_err(|e| self.error(e))?;
                    place(&mut replies, &mut parts, i, part, v);
                }
            }
        }
        for (i, mut got) in parts {
            got.sort_by_key(|(k, _)| *k);
            replies[i] = Some(Reply::Array(got.into_iter().map(|(_, r)| r).collect()));
        }
        replies
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.ok_or(StoreError::Reply {
                    op: ops.get(i).map_or("?", Op::name),
                    reply: Reply::Nil,
                })
            })
            .collect()
    }

    /// Forgets which scripts the nodes hold (they are loaded again).
    fn forget_scripts(&self) {
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// One slot's pipeline: its scripts loaded first where the node may
    /// not have them, then its ops, then (if the store waits, and the
    /// group wrote or is `confirmed`) `WAIT`. One result per op of the
    /// group.
    async fn run_group(
        &self,
        ops: &[Op],
        g: &Group,
        confirmed: bool,
        reload: bool,
    ) -> Result<Vec<redis::RedisResult<redis::Value>>, StoreError> {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        let mut skip = 0;
        {
            let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
            for (i, _) in &g.ops {
                if let Some(Op::Script(call)) = ops.get(*i) {
                    let script = call.script.compiled();
                    let sha = script.get_hash().to_string();
                    if reload || loaded.insert((g.slot, sha)) {
                        pipe.load_script(script);
                        skip += 1;
                    }
                }
            }
        }
        let mut wrote = false;
        for (i, part) in &g.ops {
            let Some(op) = ops.get(*i) else { continue };
            wrote |= op.writes();
            match part {
                Some(keys) => {
                    pipe.cmd("MGET")
                        .arg(keys.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>());
                }
                None => add(&mut pipe, op),
            }
        }
        let waits = match self.wait {
            Some((replicas, timeout_ms)) if wrote || confirmed => {
                pipe.cmd("WAIT").arg(replicas).arg(timeout_ms);
                Some(replicas)
            }
            _ => None,
        };
        let values: Vec<redis::Value> = match &self.conn {
            Conn::Node(c) => pipe.query_async(&mut c.clone()).await,
            Conn::Cluster(c) => c.healed(pipe.query_async(&mut c.get()).await).await,
        }
        .map_err(|e| {
            // A lost connection may have lost the node's scripts too.
            self.forget_scripts();
            self.error(e)
        })?;
        // A script that does not load (a Lua error) is a bug: say which.
        for v in values.iter().take(skip) {
            if let redis::Value::ServerError(e) = v {
                return Err(StoreError::Script {
                    error: format!("{e:?}"),
                });
            }
        }
        let mut values = values.into_iter().skip(skip).map(|v| match v {
            redis::Value::ServerError(e) => Err(redis::RedisError::from(e)),
            v => Ok(v),
        });
        let out: Vec<_> = values.by_ref().take(g.ops.len()).collect();
        if let Some(replicas) = waits {
            let acked = match values.next() {
                Some(Ok(redis::Value::Int(n))) => n,
                _ => 0,
            };
            if acked < i64::from(replicas) {
                return Err(StoreError::Replicas {
                    url: self.url.clone(),
                    wanted: replicas,
                    acked,
                });
            }
        }
        Ok(out)
    }

    /// The master nodes' addresses (one node: its own connection).
    async fn masters(&self) -> Result<Vec<(String, u16)>, StoreError> {
        let Conn::Cluster(c) = &self.conn else {
            return Ok(Vec::new());
        };
        let nodes: String = c
            .healed(
                redis::cmd("CLUSTER")
                    .arg("NODES")
                    .query_async(&mut c.get())
                    .await,
            )
            .await
            .map_err(|e| self.error(e))?;
        Ok(nodes
            .lines()
            .filter(|l| {
                let flags = l.split(' ').nth(2).unwrap_or("");
                flags.contains("master") && !flags.contains("fail")
            })
            .filter_map(|l| {
                let addr = l.split(' ').nth(1)?.split('@').next()?;
                let (host, port) = addr.rsplit_once(':')?;
                Some((host.to_string(), port.parse().ok()?))
            })
            .collect())
    }

    /// `cmd` on every master (one node: on it), each answer.
    async fn on_every_master(&self, cmd: &redis::Cmd) -> Result<Vec<redis::Value>, StoreError> {
        match &self.conn {
            Conn::Node(c) => Ok(vec![cmd
                .query_async(&mut c.clone())
                .await
                .map_err(|e| self.error(e))?]),
            Conn::Cluster(c) => {
                let mut out = Vec::new();
                for (host, port) in self.masters().await? {
                    let route = redis::cluster_routing::RoutingInfo::SingleNode(
                        redis::cluster_routing::SingleNodeRoutingInfo::ByAddress { host, port },
                    );
                    out.push(
                        c.healed(c.get().route_command(cmd.clone(), route).await)
                            .await
                            .map_err(|e| self.error(e))?,
                    );
                }
                Ok(out)
            }
        }
    }

    /// `used_memory` of INFO memory, in bytes (summed over the masters).
    pub(super) async fn used_memory(&self) -> Result<i64, StoreError> {
        let mut total = 0;
        for info in self
            .on_every_master(&redis::cmd("INFO").arg("memory").clone())
            .await?
        {
            let info: String = redis::from_redis_value(info).unwrap_or_default();
            total += info
                .lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or(0);
        }
        Ok(total)
    }

    /// `INFO <section>` of every master, as text (one node: one).
    pub async fn info(&self, section: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .on_every_master(redis::cmd("INFO").arg(section))
            .await?
            .into_iter()
            .map(|v| redis::from_redis_value::<String>(v).unwrap_or_default())
            .collect())
    }

    /// One command, routed by its key (one node: on it).
    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, StoreError> {
        match &self.conn {
            Conn::Node(c) => cmd.query_async(&mut c.clone()).await,
            Conn::Cluster(c) => c.healed(cmd.query_async(&mut c.get()).await).await,
        }
        .map_err(|e| self.error(e))
    }

    pub(super) async fn snapshot(
        &self,
        pattern: &str,
    ) -> Result<BTreeMap<String, Stored>, StoreError> {
        let mut out = BTreeMap::new();
        for key in self.keys_matching(pattern).await? {
            let kind: String = self.query(redis::cmd("TYPE").arg(&key)).await?;
            let stored = match kind.as_str() {
                "string" => Stored::Str(self.query(redis::cmd("GET").arg(&key)).await?),
                "list" => Stored::List(
                    self.query(redis::cmd("LRANGE").arg(&key).arg(0).arg(-1))
                        .await?,
                ),
                "set" => {
                    let mut s: Vec<i64> = self.query(redis::cmd("SMEMBERS").arg(&key)).await?;
                    s.sort_unstable();
                    Stored::Set(s)
                }
                "hash" => {
                    let mut h: Vec<(String, Vec<u8>)> =
                        self.query(redis::cmd("HGETALL").arg(&key)).await?;
                    h.sort();
                    Stored::Hash(h)
                }
                "zset" => {
                    let z: Vec<(Vec<u8>, f64)> = self
                        .query(
                            redis::cmd("ZRANGE")
                                .arg(&key)
                                .arg(0)
                                .arg(-1)
                                .arg("WITHSCORES"),
                        )
                        .await?;
                    Stored::ZSet(z.into_iter().map(|(m, s)| (m, s as i64)).collect())
                }
                // Gone since the scan, or a kind the crawler never writes.
                _ => continue,
            };
            out.insert(key, stored);
        }
        Ok(out)
    }

    pub(super) async fn keys_matching(&self, pattern: &str) -> Result<Vec<String>, StoreError> {
        let mut keys = Vec::new();
        let scan = |cursor: u64| {
            redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(1000)
                .clone()
        };
        match &self.conn {
            Conn::Node(c) => {
                let mut cursor = 0;
                loop {
                    let (next, batch): (u64, Vec<String>) = scan(cursor)
                        .query_async(&mut c.clone())
                        .await
                        .map_err(|e| self.error(e))?;
                    keys.extend(batch);
                    if next == 0 {
                        break;
                    }
                    cursor = next;
                }
            }
            Conn::Cluster(c) => {
                for (host, port) in self.masters().await? {
                    let route = redis::cluster_routing::RoutingInfo::SingleNode(
                        redis::cluster_routing::SingleNodeRoutingInfo::ByAddress {
                            host: host.clone(),
                            port,
                        },
                    );
                    let mut cursor = 0;
                    loop {
                        let v = c
                            .healed(c.get().route_command(scan(cursor), route.clone()).await)
                            .await
                            .map_err(|e| self.error(e))?;
                        let (next, batch): (u64, Vec<String>) =
                            redis::from_redis_value(v).map_err(|e| self.error(e.into()))?;
                        keys.extend(batch);
                        if next == 0 {
                            break;
                        }
                        cursor = next;
                    }
                }
            }
        }
        Ok(keys)
    }
}

/// Puts one op's reply (or a split `MGET`'s part) in its place.
fn place(
    replies: &mut [Option<Reply>],
    parts: &mut BTreeMap<usize, Vec<(usize, Reply)>>,
    i: usize,
    part: Option<MGetPart>,
    value: redis::Value,
) {
    let reply = reply_from_redis(value);
    match part {
        None => {
            if let Some(r) = replies.get_mut(i) {
                *r = Some(reply);
            }
        }
        Some(keys) => {
            let items = match reply {
                Reply::Array(items) => items,
                other => vec![other],
            };
            let got = parts.entry(i).or_default();
            for ((k, _), r) in keys.into_iter().zip(items) {
                got.push((k, r));
            }
        }
    }
}

/// The command of one op, added to `pipe`.
fn add(pipe: &mut redis::Pipeline, op: &Op) {
    match op {
        Op::Get { key } => {
            pipe.get(key);
        }
        Op::Set {
            key,
            value,
            expire_ms,
        } => match expire_ms {
            Some(ms) => {
                pipe.pset_ex(key, value, *ms);
            }
            None => {
                pipe.set(key, value);
            }
        },
        Op::SetNx { key, value } => {
            pipe.set_nx(key, value);
        }
        Op::MGet { keys } => mget(pipe, keys),
        Op::Append { key, value } => {
            pipe.append(key, value);
        }
        Op::Incr { key, by } => {
            pipe.incr(key, *by);
        }
        Op::Del { key } => {
            pipe.del(key);
        }
        Op::Unlink { key } => {
            pipe.unlink(key);
        }
        Op::HGet { key, field } => {
            pipe.hget(key, field);
        }
        Op::HGetAll { key } => {
            pipe.cmd("HGETALL").arg(key);
        }
        Op::HSet { key, fields } => {
            // HSET with many fields (HMSET would reply OK, not the number
            // of new fields as the memory store does).
            let cmd = pipe.cmd("HSET").arg(key);
            for (field, value) in fields {
                cmd.arg(field).arg(value.as_slice());
            }
        }
        Op::HSetNx { key, field, value } => {
            pipe.hset_nx(key, field, value);
        }
        Op::HIncr { key, field, by } => {
            pipe.hincr(key, field, *by);
        }
        Op::HDel { key, field } => {
            pipe.hdel(key, field);
        }
        Op::SAdd { key, members } => {
            pipe.sadd(key, members);
        }
        Op::SMIsMember { key, members } => {
            pipe.cmd("SMISMEMBER").arg(key).arg(members);
        }
        Op::RPush { key, values } => {
            let cmd = pipe.cmd("RPUSH").arg(key);
            for v in values {
                cmd.arg(v.as_slice());
            }
        }
        Op::LRange { key, start, stop } => {
            pipe.lrange(key, *start as isize, *stop as isize);
        }
        Op::LLen { key } => {
            pipe.llen(key);
        }
        Op::ZAdd { key, members } => {
            let cmd = pipe.cmd("ZADD").arg(key);
            for (score, member) in members {
                cmd.arg(*score).arg(member.as_slice());
            }
        }
        Op::ZRem { key, members } => {
            pipe.zrem(key, members);
        }
        Op::ZCard { key } => {
            pipe.zcard(key);
        }
        Op::ZRangeByScore {
            key,
            min,
            max,
            limit,
        } => zrange_by_score(pipe, key, (*min, *max), *limit),
        Op::ZRevRange { key, start, stop } => {
            pipe.cmd("ZRANGE")
                .arg(key)
                .arg(*start)
                .arg(*stop)
                .arg("REV")
                .arg("WITHSCORES");
        }
        Op::Script(call) => script(pipe, call),
    }
}

/// `MGET`; of no key it is a syntax error, so the memory store's answer,
/// an empty Array, comes from a script that touches nothing.
fn mget(pipe: &mut redis::Pipeline, keys: &[String]) {
    if keys.is_empty() {
        pipe.cmd("EVAL").arg("return {}").arg(0);
    } else {
        pipe.cmd("MGET").arg(keys);
    }
}

/// `ZRANGE key min max BYSCORE [LIMIT 0 n] WITHSCORES`, `i64::MIN` and
/// `i64::MAX` standing for the infinities.
fn zrange_by_score(
    pipe: &mut redis::Pipeline,
    key: &str,
    (min, max): (i64, i64),
    limit: Option<u32>,
) {
    let bound = |v: i64| match v {
        i64::MIN => "-inf".to_string(),
        i64::MAX => "+inf".to_string(),
        v => v.to_string(),
    };
    let cmd = pipe
        .cmd("ZRANGE")
        .arg(key)
        .arg(bound(min))
        .arg(bound(max))
        .arg("BYSCORE");
    if let Some(n) = limit {
        cmd.arg("LIMIT").arg(0).arg(n);
    }
    cmd.arg("WITHSCORES");
}

/// A script's invocation with its keys and arguments.
fn script(pipe: &mut redis::Pipeline, call: &ScriptCall) {
    let mut inv = call.script.compiled().prepare_invoke();
    for k in &call.keys {
        inv.key(k);
    }
    for a in &call.args {
        inv.arg(a.as_slice());
    }
    pipe.invoke_script(&inv);
}

fn reply_from_redis(v: redis::Value) -> Reply {
    match v {
        redis::Value::Nil => Reply::Nil,
        redis::Value::Int(i) => Reply::Int(i),
        redis::Value::BulkString(d) => Reply::Data(d),
        redis::Value::SimpleString(s) => Reply::Data(s.into_bytes()),
        redis::Value::Okay => Reply::Nil,
        redis::Value::Array(items) | redis::Value::Set(items) => {
            Reply::Array(items.into_iter().map(reply_from_redis).collect())
        }
        redis::Value::Map(pairs) => Reply::Array(
            pairs
                .into_iter()
                .flat_map(|(k, v)| [reply_from_redis(k), reply_from_redis(v)])
                .collect(),
        ),
        redis::Value::Boolean(b) => Reply::Int(b as i64),
        // A score (RESP2 sends it as a string, RESP3 as a double): whole
        // milliseconds here.
        redis::Value::Double(d) => Reply::Int(d as i64),
        redis::Value::BigNumber(n) => Reply::Data(n.to_string().into_bytes()),
        redis::Value::VerbatimString { text, .. } => Reply::Data(text.into_bytes()),
        _ => Reply::Nil,
    }
}
