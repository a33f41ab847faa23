#!/usr/bin/env bash
# The pipeline benchmark of issue 19, in one command:
#
#   scripts/bench-pipeline.sh
#
# Builds the release binaries, makes a throwaway virtualenv with Scrapy in a
# temporary directory (removed at the end; Scrapy is not a project
# dependency), and runs `cargo bench -p evaluation --bench pipeline`, which
# serves a generated 5,000-page site on 50 loopback hosts and crawls it with
# the four workers over RabbitMQ and Redis, with `crawler run`, and with
# Scrapy. Needs RabbitMQ on 127.0.0.1:5672 and Redis on 127.0.0.1:6379
# (CRAWLER_AMQP_URL / CRAWLER_REDIS_URL to change) and rabbitmqctl.
#
# Env: PIPELINE_BENCH_PAGES, PIPELINE_BENCH_HOSTS, PIPELINE_BENCH_SKIP_SCRAPY=1,
# PIPELINE_BENCH_SKIP_RUN=1, PIPELINE_BENCH_SKIP_DISTRIBUTED=1,
# PIPELINE_BENCH_TIMEOUT_SECS; PIPELINE_BENCH_BIN_DIR=DIR crawls with the
# binaries in DIR (another build, to compare); SCRAPY_BIN=/path/to/scrapy
# uses that Scrapy instead of making a virtualenv.
set -euo pipefail

cd "$(dirname "$0")/.."

echo "== building the release binaries" >&2
cargo build --release -p frontier -p fetcher -p extractor -p contentseen -p crawler

venv_dir=""
cleanup() {
    if [[ -n "$venv_dir" ]]; then
        rm -rf "$venv_dir"
    fi
}
trap cleanup EXIT

if [[ "${PIPELINE_BENCH_SKIP_SCRAPY:-}" != "1" && -z "${SCRAPY_BIN:-}" ]]; then
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        echo "== installing python3-venv" >&2
        apt-get install -y -qq python3-venv >/dev/null
    fi
    venv_dir="$(mktemp -d -t pipeline-bench-venv.XXXXXX)"
    echo "== making a throwaway virtualenv with Scrapy in $venv_dir" >&2
    python3 -m venv "$venv_dir/venv"
    "$venv_dir/venv/bin/pip" install --quiet --disable-pip-version-check scrapy
    export SCRAPY_BIN="$venv_dir/venv/bin/scrapy"
    "$SCRAPY_BIN" version >&2
fi

echo "== running the benchmark ($(uptime))" >&2
cargo bench -p evaluation --bench pipeline
echo "== done ($(uptime))" >&2
