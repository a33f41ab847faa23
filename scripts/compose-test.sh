#!/usr/bin/env bash
# The compose test: deploy/docker-compose.yml on a real Docker engine. Builds
# the images with deploy/local-images.sh (no registry needed), then runs
# tests/tests/deploy_compose.rs::compose_stack_crawls_and_survives_faults:
# `up --scale fetcher=3 --scale extractor=2`, a crawl of the `testsite`
# service checked page by page (Redis refusing clients without its
# password, the texts read back from their segment files, no password in
# any log), then the same crawl on a fresh stack with SIGKILLed workers, a
# RabbitMQ restart, Redis paused, Redis SIGKILLed and started again, and a
# fetcher cut off. Then compose_cluster_crawls_and_survives_node_loss: the
# `cluster` profile (a 3+3 Redis Cluster, 3 RabbitMQ nodes, quorum queues)
# crawls the site while a Redis master and a RabbitMQ node are SIGKILLed.
#
# Installs docker.io, docker-compose and mmdebstrap with apt-get if missing
# and starts dockerd if none answers (it keeps running afterwards). Fails,
# never skips, when the engine cannot run. Everything the test creates is in
# its own compose project, removed at the end (also on failure). Publishes
# only free ports on 127.0.0.1. Run as root. `.ci/run` runs it after
# scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "compose-test: $*" >&2; }
t_start=$SECONDS

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
    log "no Docker engine answers: starting dockerd (log: /var/log/dockerd.log)"
    nohup dockerd >>/var/log/dockerd.log 2>&1 &
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi
if ! docker info >/dev/null 2>&1; then
    log "the Docker engine did not start:"
    tail -n 20 /var/log/dockerd.log >&2 || true
    exit 1
fi

t0=$SECONDS
images="$(deploy/local-images.sh)"
log "images ready in $((SECONDS - t0)) s: $(echo "$images" | tr '\n' ' ')"
while IFS='=' read -r key value; do
    case "$key" in
        RABBITMQ_IMAGE | REDIS_IMAGE | CRAWLER_IMAGE | PROMETHEUS_IMAGE) export "$key=$value" ;;
        *) log "unexpected line from local-images.sh: $key"; exit 1 ;;
    esac
done <<<"$images"

# The test's own project; `down -v` here too in case the test cannot.
COMPOSE_PROJECT_NAME="crawlertest$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
export COMPOSE_PROJECT_NAME
cleanup() {
    RABBITMQ_USER=cleanup RABBITMQ_PASS=cleanup REDIS_PASSWORD=cleanup COMPOSE_PROFILES=testsite,monitoring,cluster \
        docker-compose -f deploy/docker-compose.yml -p "$COMPOSE_PROJECT_NAME" \
        down -v --remove-orphans -t 5 >/dev/null 2>&1 || true
    left="$(docker ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")"
    if [ -n "$left" ]; then
        log "removing leftover containers: $left"
        # shellcheck disable=SC2086
        docker rm -f $left >/dev/null || true
    fi
}
trap cleanup EXIT

t0=$SECONDS
# One stack at a time (they share the project name).
tests=(compose_stack_crawls_and_survives_faults compose_cluster_crawls_and_survives_node_loss)
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run -p crawler-tests --test deploy_compose --run-ignored only \
        --no-capture --no-fail-fast --test-threads 1 "${tests[@]}"
else
    cargo test -p crawler-tests --test deploy_compose -- --ignored --nocapture \
        --test-threads 1 "${tests[@]}"
fi
log "test passed in $((SECONDS - t0)) s; $((SECONDS - t_start)) s in all"
