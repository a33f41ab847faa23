#!/usr/bin/env bash
# The near-duplicate evaluation on real sites (issue 31), in one command:
#
#   scripts/neardup-sites.sh
#
# 1. installs the Debian documentation packages that are the sites
#    (evaluation/neardup_sites/sites.tsv, last column) with apt-get;
# 2. labels every page without the crawler's help: trafilatura's main text
#    (or the hand-cleaned text where ../shared/bench has one), and a second
#    opinion by readability-lxml, made in a
#    throwaway virtualenv (deleted at the end) into
#    <cargo's target dir>/neardup-sites/labels.jsonl (kept: labelling takes minutes;
#    NEARDUP_SITES_RELABEL=1 makes it again);
# 3. builds the release binaries and runs `cargo bench -p evaluation
#    --bench neardup_sites`: every site and a byte-identical mirror on
#    loopback hosts, crawled with `crawler run` and with the four workers
#    over RabbitMQ and Redis, every verdict scored against the labels.
#
# Needs RabbitMQ on 127.0.0.1:5672 and Redis on 127.0.0.1:6379
# (CRAWLER_AMQP_URL / CRAWLER_REDIS_URL to change) and python3.
# Env passed on to the bench: NEARDUP_SITES_SKIP_DISTRIBUTED=1,
# NEARDUP_SITES_SKIP_RUN=1, NEARDUP_SITES_ONLY=site,site.
set -euo pipefail

cd "$(dirname "$0")/.."
sites=evaluation/neardup_sites/sites.tsv
# In cargo's target directory (CARGO_TARGET_DIR and cargo configs included).
out="$(scripts/cargo-target-dir.sh)/neardup-sites"
mkdir -p "$out"

packages=$(grep -v '^#' "$sites" | awk -F'\t' 'NF >= 6 && $6 != "-" { print $6 }' | sort -u)
missing=""
for p in $packages; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [[ -n "$missing" ]]; then
    echo "== installing$missing" >&2
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

venv_dir=""
cleanup() {
    if [[ -n "$venv_dir" ]]; then
        rm -rf "$venv_dir"
    fi
}
trap cleanup EXIT

# Labels of an older label.py (no second opinion) are made again.
if [[ ! -s "$out/labels.jsonl" || "${NEARDUP_SITES_RELABEL:-}" == "1" ]] \
    || ! head -n 1 "$out/labels.jsonl" | grep -q '"text_alt"'; then
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        apt-get install -y -qq python3-venv >/dev/null
    fi
    venv_dir="$(mktemp -d -t neardup-sites-venv.XXXXXX)"
    echo "== labelling the pages with trafilatura (virtualenv in $venv_dir)" >&2
    python3 -m venv "$venv_dir/venv"
    "$venv_dir/venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip
    "$venv_dir/venv/bin/pip" install --quiet --disable-pip-version-check trafilatura lxml_html_clean readability-lxml
    "$venv_dir/venv/bin/python" evaluation/neardup_sites/label.py "$sites" ../shared/bench "$out/labels.jsonl"
fi

echo "== building the release binaries" >&2
cargo build --release -p frontier -p fetcher -p extractor -p contentseen -p crawler
echo "== running the evaluation ($(uptime))" >&2
NEARDUP_SITES_LABELS="$out/labels.jsonl" cargo bench -p evaluation --bench neardup_sites
