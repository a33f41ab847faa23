#!/usr/bin/env bash
# Runs every test of the workspace: unit tests, and integration tests that
# start the real binaries against the real Redis and RabbitMQ (started here
# if needed) and a test web site on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-services.sh
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --no-fail-fast "$@"
else
    cargo test --workspace --no-fail-fast "$@"
fi
