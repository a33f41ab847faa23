#!/usr/bin/env bash
# Runs every test of the workspace: unit tests, and integration tests that
# start the real binaries against the real Redis and RabbitMQ (started here
# if needed) and a test web site on 127.0.0.1. Then the store's tests
# again on a Redis Cluster (3 masters, 3 replicas on 7101-7106, started by
# scripts/redis-cluster.sh): conformance, race, exactness and fault points.
# Arguments go to the first run (a filter, say) and skip the second.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-services.sh
cluster_tests=(store_conformance contentseen_race contentseen_exactness fault_points)
status=0
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "$@" || status=$?
    if [ $# -eq 0 ]; then
        filter=$(printf 'binary(%s) | ' "${cluster_tests[@]}")
        CRAWLER_TEST_REDIS_CLUSTER=$(scripts/redis-cluster.sh start) \
            cargo nextest run --workspace --no-fail-fast -E "${filter% | }" || status=$?
    fi
else
    cargo test --workspace --no-fail-fast "$@" || status=$?
    if [ $# -eq 0 ]; then
        CRAWLER_TEST_REDIS_CLUSTER=$(scripts/redis-cluster.sh start) \
            cargo test -p crawler-tests --no-fail-fast $(printf -- '--test %s ' "${cluster_tests[@]}") || status=$?
    fi
fi
exit $status
