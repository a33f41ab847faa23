#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets) for a bounded time and
# exits non-zero if any of them crashes, hangs (an input over 10 s) or runs
# out of memory (over 2 GB).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Default: 60 seconds for each target. The seeds in fuzz/corpus/<target> (and,
# for extract and charset_vote, the pages of ../shared/bench/cwced and gne) are
# read, never written: what libFuzzer finds goes to fuzz/target/corpus/<target>
# (kept between runs, not in git). A failing input is saved under
# fuzz/artifacts/<target>/; replay it with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>
# Environment: FUZZ_BUILD_JOBS (default 2) bounds the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
    echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]" >&2
    exit 2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(url_normalize charset_vote extract robots message_decode)
fi

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

export CARGO_BUILD_JOBS="${FUZZ_BUILD_JOBS:-2}"
cargo +nightly fuzz build

mkdir -p fuzz/target/logs
failed=0
summary=()
for t in "${targets[@]}"; do
    work="fuzz/target/corpus/$t"
    log="fuzz/target/logs/$t.log"
    mkdir -p "$work" "fuzz/corpus/$t"
    echo "fuzz.sh: $t for ${seconds}s (log: $log)"
    start=$(date +%s)
    rc=0
    # Real pages as seeds too, read from ../shared/bench where it is (the
    # project keeps no copy of them).
    shared=()
    if [ "$t" = extract ] || [ "$t" = charset_vote ]; then
        for d in ../shared/bench/cwced/original ../shared/bench/gne/pages; do
            if [ -d "$d" ]; then shared+=("$d"); fi
        done
    fi
    cargo +nightly fuzz run "$t" "$work" "fuzz/corpus/$t" "${shared[@]}" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"$log" 2>&1 || rc=$?
    took=$(($(date +%s) - start))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    units=$(find "$work" -type f | wc -l)
    if [ "$rc" -eq 0 ]; then
        line="$t: ok, ${execs:-?} executions in ${took}s, ${units} corpus inputs found"
    else
        failed=1
        what=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|panicked at [^ ]+|deadly signal' "$log" || echo "exit $rc")
        artifact=$(grep -m1 -oE 'Test unit written to [^ ]+' "$log" | sed 's/.* //' || true)
        line="$t: FAILED ($what) after ${took}s, input: ${artifact:-see $log}"
    fi
    echo "$line"
    summary+=("$line")
done

echo
echo "fuzz.sh summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
