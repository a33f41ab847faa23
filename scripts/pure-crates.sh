#!/usr/bin/env bash
# The pure cores stay pure (issue 34): each builds without its default
# features, and its normal dependencies then name no broker, store, HTTP
# client or runtime (lapin, redis, reqwest, tokio). The compiler enforces
# the rest: code of a pure core cannot call what it does not depend on.
set -euo pipefail
cd "$(dirname "$0")/.."
pure=(script link charset extractor)
forbidden='lapin|redis|reqwest|tokio'
status=0
for crate in "${pure[@]}"; do
    found=$(cargo tree -e normal --no-default-features -p "$crate" --prefix none --format '{p}' \
        | awk '{print $1}' | sort -u | grep -xE "$forbidden" || true)
    if [ -n "$found" ]; then
        echo "pure crate $crate depends on:" $found \
            "(see: cargo tree -e normal --no-default-features -p $crate -i <name>)" >&2
        status=1
    fi
done
cargo check --quiet --no-default-features --all-targets $(printf -- '-p %s ' "${pure[@]}") || status=$?
exit $status
