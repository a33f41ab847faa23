#!/usr/bin/env bash
# What Redis's durability costs the distributed crawl: the same crawl with
# Redis's append-only file off, fsynced every second (`everysec`) and
# fsynced before every reply (`always`, the compose default), printing
# pages/s and Redis CPU ms per page for each:
#
#   scripts/bench-redis-durability.sh [ROUNDS]
#
# Each run starts a Redis of its own (redis-server on DURABILITY_BENCH_PORT,
# 6391 by default, its files in a fresh directory under TMPDIR, so the
# fsyncs hit that disk), the four workers against it and the machine's
# RabbitMQ (CRAWLER_AMQP_URL, default guest on 127.0.0.1:5672) in a
# namespace of its own, and crawls DURABILITY_BENCH_SITES generated test
# sites (testsite on loopback ports, one politeness host each) of
# DURABILITY_BENCH_ARTICLES articles each, seeded with --delay-ms 0 and
# --exclude /error/ (the sites' 429/500/503 pages back off for minutes). The
# modes alternate within each round (ROUNDS, default 2) so a noisy machine
# hurts them alike; the summary gives each mode's median.
#
# pages/s: pages fetched / seconds from the seed to the last move of the
# counters (`crawler stats --json`, polled every 0.5 s). Redis CPU ms per
# page: Redis's user + system CPU (INFO cpu, every thread, the fsync
# thread of `everysec` included) from the seed to `crawler stats
# --wait-idle`, over the pages fetched.
#
# Env: DURABILITY_BENCH_MODES (default "none everysec always"),
# DURABILITY_BENCH_PROFILE (cargo profile of the binaries, default release;
# `docker` is the same code without debug info), DURABILITY_BENCH_SITES (40),
# DURABILITY_BENCH_ARTICLES (50), DURABILITY_BENCH_PORT (6391). Needs
# redis-server, redis-cli, jq and a RabbitMQ. Touches neither the shared
# Redis nor other namespaces; deletes its namespace's queues at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${1:-2}"
modes="${DURABILITY_BENCH_MODES:-none everysec always}"
profile="${DURABILITY_BENCH_PROFILE:-release}"
sites="${DURABILITY_BENCH_SITES:-40}"
articles="${DURABILITY_BENCH_ARTICLES:-50}"
port="${DURABILITY_BENCH_PORT:-6391}"
amqp="${CRAWLER_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/%2f}"
log() { echo "bench-redis-durability: $*" >&2; }

for tool in redis-server redis-cli jq; do
    command -v "$tool" >/dev/null || { log "$tool is not installed"; exit 1; }
done
if redis-cli -p "$port" ping >/dev/null 2>&1; then
    log "something already answers on port $port: set DURABILITY_BENCH_PORT"
    exit 1
fi

log "building the binaries (cargo build --profile $profile)"
cargo build --quiet --locked --profile "$profile" \
    -p frontier -p fetcher -p extractor -p contentseen -p crawler -p testsite --bins
case "$profile" in
    dev | test) sub=debug ;;
    bench) sub=release ;;
    *) sub="$profile" ;;
esac
bin="$(scripts/cargo-target-dir.sh)/$sub"

work="$(mktemp -d -t redis-durability.XXXXXX)"
pids=()
redis_pid=""
idle_pid=""
ns=""
stop_workers() {
    if [ -n "$idle_pid" ]; then kill "$idle_pid" 2>/dev/null || true; idle_pid=""; fi
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}
stop_redis() {
    if [ -n "$redis_pid" ]; then
        redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$redis_pid" 2>/dev/null || true
        while kill -0 "$redis_pid" 2>/dev/null; do sleep 0.1; done
        redis_pid=""
    fi
}
forget_namespace() {
    # The namespace's queues on the shared broker (its keys go with Redis).
    if [ -n "$ns" ] && [ -n "$redis_pid" ]; then
        CRAWLER_NAMESPACE="$ns" "$bin/crawler" reset --yes --force >/dev/null 2>&1 || true
    fi
    ns=""
}
cleanup() {
    stop_workers
    forget_namespace
    stop_redis
    for p in "${site_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
site_pids=()
trap cleanup EXIT
trap 'exit 130' INT TERM

# The sites, served for the whole bench (each its own politeness host).
bases=()
for i in $(seq 1 "$sites"); do
    fifo="$work/site-$i"
    mkfifo "$fifo"
    "$bin/testsite" --port 0 --articles "$articles" --seed "$i" >"$fifo" 2>"$work/site-$i.log" &
    site_pids+=($!)
    read -r base <"$fifo"
    bases+=("$base/")
done
log "${#bases[@]} test sites of $articles articles: ${bases[0]} ..."

# Redis's CPU seconds so far (every thread).
redis_cpu() {
    redis-cli -p "$port" info cpu |
        awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.6f\n", s }'
}
stats_json() { CRAWLER_NAMESPACE="$ns" "$bin/crawler" stats --json 2>/dev/null || echo '{}'; }

# One crawl with Redis in mode $1 (round $2): appends "mode pages seconds
# cpu_seconds" to $results and prints the run's figures.
run_once() {
    local mode="$1" round="$2"
    local dir="$work/redis-$mode-$round"
    mkdir -p "$dir"
    local aof=(--appendonly no)
    [ "$mode" != none ] && aof=(--appendonly yes --appendfsync "$mode")
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" "${aof[@]}" \
        --logfile "$dir/redis.log" >/dev/null 2>&1 &
    redis_pid=$!
    for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    ns="durability-$mode-$round-$$"
    export CRAWLER_REDIS_URL="redis://127.0.0.1:$port/" CRAWLER_AMQP_URL="$amqp"
    export CRAWLER_NAMESPACE="$ns" CRAWLER_ALLOW_PRIVATE=1 RUST_LOG=warn
    for w in frontier fetcher extractor contentseen; do
        "$bin/$w" >"$dir/$w.log" 2>&1 &
        pids+=($!)
    done
    # Every worker's heartbeat in Redis: they are connected and consuming.
    local live=0
    for _ in $(seq 1 100); do
        live="$(redis-cli -p "$port" zcard "$ns:live:{w}")"
        [ "$live" -ge 4 ] && break
        sleep 0.1
    done
    [ "$live" -ge 4 ] || { log "$mode: only $live of 4 workers live (logs in $dir)"; exit 1; }
    sleep 1
    local cpu0 t0
    cpu0="$(redis_cpu)"
    t0="$(date +%s.%N)"
    # The sites' /error/ pages answer 429, 500 and 503: their retries and
    # host backoffs would keep the crawl waiting for minutes, idle.
    "$bin/crawler" seed --crawl bench --max-depth 6 --delay-ms 0 --exclude /error/ \
        "${bases[@]}" >"$dir/seed.log" 2>&1 || { cat "$dir/seed.log" >&2; exit 1; }
    "$bin/crawler" stats --wait-idle --timeout-secs 900 >/dev/null &
    idle_pid=$!
    local last="" t_last="$t0" now counts
    while kill -0 "$idle_pid" 2>/dev/null; do
        counts="$(stats_json | jq -c '[.counters.fetched, .counters.stored, .counters.duplicate]')"
        now="$(date +%s.%N)"
        if [ "$counts" != "$last" ]; then last="$counts"; t_last="$now"; fi
        sleep 0.5
    done
    wait "$idle_pid"
    idle_pid=""
    local cpu1 pages
    cpu1="$(redis_cpu)"
    pages="$(stats_json | jq '.counters.fetched // 0')"
    stop_workers
    forget_namespace
    stop_redis
    [ "$pages" -gt 0 ] || { log "$mode: no page fetched (logs in $dir)"; exit 1; }
    awk -v m="$mode" -v p="$pages" -v t0="$t0" -v t1="$t_last" -v c0="$cpu0" -v c1="$cpu1" \
        'BEGIN { printf "%s %d %.3f %.6f\n", m, p, t1 - t0, c1 - c0 }' >>"$results"
    tail -n 1 "$results" |
        awk '{ printf "%-9s %6d %8.2f %9.0f %18.3f\n", $1, $2, $3, $2 / $3, $4 * 1000 / $2 }'
}

results="$work/results"
: >"$results"
log "$rounds round(s) of: $modes ($(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-9s %6s %8s %9s %18s\n' mode pages seconds pages/s "Redis CPU ms/page"
for round in $(seq 1 "$rounds"); do
    for mode in $modes; do
        run_once "$mode" "$round"
    done
done

echo
echo "median of $rounds round(s) ($(cut -d' ' -f1-3 /proc/loadavg) load at the end):"
for mode in $modes; do
    rate="$(awk -v m="$mode" '$1 == m { print $2 / $3 }' "$results" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
    cpu="$(awk -v m="$mode" '$1 == m { print $4 * 1000 / $2 }' "$results" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
    printf '%-9s %6.0f pages/s  %.3f ms Redis CPU per page\n' "$mode" "$rate" "$cpu"
done
