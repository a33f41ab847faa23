#!/usr/bin/env bash
# A crawl on a fresh machine with no services and no internet: builds the
# binaries, serves the generated test site on 127.0.0.1, crawls it with
# `crawler run` (all four stages in one process), and writes crawl.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p crawler -p testsite
# Where cargo put them (CARGO_TARGET_DIR and cargo configs included).
bin="$(scripts/cargo-target-dir.sh)/release"
out="${1:-crawl.jsonl}"
fifo="$(mktemp -u)"; mkfifo "$fifo"
"$bin/testsite" --port 0 --articles 200 >"$fifo" &
site_pid=$!
trap 'kill $site_pid 2>/dev/null || true; rm -f "$fifo"' EXIT
read -r base <"$fifo"
echo "test site at $base" >&2
"$bin/crawler" run --allow-private --max-depth 3 --delay-ms 0 --out "$out" "$base/"
python3 - "$out" <<'PY' || true
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
dups = [d for d in docs if d["duplicate_of"]]
print(f"{len(docs)} documents in {sys.argv[1]}: {len(docs) - len(dups)} originals, {len(dups)} near-duplicates")
PY
