#!/usr/bin/env bash
# A local Redis Cluster for the tests that run against a cluster (issue 32):
# 3 masters and 3 replicas on 127.0.0.1:7101-7106 (REDIS_CLUSTER_BASE
# changes the first port), data under /tmp/crawler-redis-cluster-<base>.
#
#   scripts/redis-cluster.sh start   # starts it (a no-op when it is up)
#   scripts/redis-cluster.sh seeds   # prints CRAWLER_REDIS_CLUSTER's value
#   scripts/redis-cluster.sh stop    # stops it and removes its data
#
# `start` returns once the cluster is `ok` and every replica is in sync (a
# master killed before its replica synced is never replaced).
set -euo pipefail
base=${REDIS_CLUSTER_BASE:-7101}
ports=$(seq "$base" $((base + 5)))
dir=/tmp/crawler-redis-cluster-$base
seeds() { for p in $ports; do printf 'redis://127.0.0.1:%s,' "$p"; done | sed 's/,$//'; echo; }
up() { [ "$(redis-cli -p "$base" cluster info 2>/dev/null | tr -d '\r' | grep -c '^cluster_state:ok')" = 1 ]; }

case "${1:-}" in
start)
    if up; then seeds; exit 0; fi
    command -v redis-server >/dev/null || { echo "redis-server is not installed (scripts/ensure-services.sh)" >&2; exit 1; }
    # A node started again on its nodes.conf rejoins the cluster it was in;
    # only a cluster never made is created.
    made=$( (ls "$dir"/*/nodes.conf 2>/dev/null || true) | wc -l)
    for p in $ports; do
        mkdir -p "$dir/$p"
        redis-cli -p "$p" ping >/dev/null 2>&1 && continue
        # The settings the README recommends for a crawl's Redis
        # (pipeline::store::RECOMMENDED_REDIS_CONFIG).
        redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
            --cluster-config-file "$dir/$p/nodes.conf" --cluster-node-timeout 2000 \
            --appendonly yes --save "" --dir "$dir/$p" --hash-max-listpack-value 512 --hash-max-listpack-entries 512 \
            --logfile "$dir/$p/redis.log" --daemonize yes
    done
    for p in $ports; do
        for _ in $(seq 1 50); do [ "$(redis-cli -p "$p" ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
    done
    if [ "$made" = 0 ]; then
        redis-cli --cluster create $(for p in $ports; do printf '127.0.0.1:%s ' "$p"; done) \
            --cluster-replicas 1 --cluster-yes >"$dir/create.log"
    fi
    for _ in $(seq 1 150); do
        synced=0
        for p in $ports; do
            redis-cli -p "$p" info replication | tr -d '\r' | grep -q '^master_link_status:up' && synced=$((synced + 1))
        done
        up && [ "$synced" = 3 ] && { seeds; exit 0; }
        sleep 0.2
    done
    echo "the Redis Cluster on $base-$((base + 5)) did not come up (logs in $dir)" >&2
    exit 1
    ;;
seeds) seeds ;;
stop)
    for p in $ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
    ;;
*) echo "usage: $0 start|seeds|stop" >&2; exit 2 ;;
esac
