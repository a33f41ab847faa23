#!/usr/bin/env bash
# Makes sure Redis (127.0.0.1:6379) and RabbitMQ (127.0.0.1:5672) are up:
# starts them if installed but stopped, installs them with apt-get if absent.
# Also installs Debian's docker-compose, which the tests use to validate the
# compose file (no Docker engine needed for that).
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; APT_UPDATED=1; fi
    apt-get install -y -qq "$@" >/dev/null
}

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    command -v redis-server >/dev/null || apt_install redis-server redis-tools
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log
    for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null || { echo "redis did not start" >&2; exit 1; }
echo "redis: up"

if ! port_open 5672; then
    command -v rabbitmq-server >/dev/null || apt_install rabbitmq-server
    rabbitmq-server -detached || true
    # The node takes a few seconds to register; wait for the port, then for the app.
    for _ in $(seq 1 120); do port_open 5672 && break; sleep 0.5; done
    for _ in $(seq 1 30); do rabbitmqctl await_startup >/dev/null 2>&1 && break; sleep 1; done
fi
port_open 5672 || { echo "rabbitmq did not start" >&2; exit 1; }
echo "rabbitmq: up"

command -v docker-compose >/dev/null || apt_install docker-compose
echo "docker-compose: $(docker-compose version --short 2>/dev/null || echo installed)"
