#!/usr/bin/env bash
# Fills the Redis the tests use (127.0.0.1:6379, or $REDIS_PORT) with N keys
# of another namespace (`foreign:<i>`, default 1,000,000) unless it holds
# them already, so that the suite runs where a keyspace scan would show:
# no operational path may depend on an empty Redis. `.ci/run` calls it
# before the tests. Idempotent; takes a few seconds.
set -euo pipefail
n="${1:-1000000}"
port="${REDIS_PORT:-6379}"
cli=(redis-cli -p "$port")
have="$("${cli[@]}" exists "foreign:$n")"
if [ "$have" = "1" ]; then
    echo "foreign-keys: the Redis on port $port holds foreign:1..$n already" >&2
    exit 0
fi
done=0
while [ "$done" -lt "$n" ]; do
    to=$(( done + 200000 < n ? done + 200000 : n ))
    "${cli[@]}" eval "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call('SET', 'foreign:' .. i, i) end" 0 "$((done + 1))" "$to" >/dev/null
    done=$to
done
echo "foreign-keys: the Redis on port $port holds $("${cli[@]}" dbsize) keys ($n foreign)" >&2
