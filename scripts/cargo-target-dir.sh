#!/usr/bin/env bash
# Prints the directory cargo builds this workspace into: target/ in the
# clone unless CARGO_TARGET_DIR, `build.target-dir` in a cargo config, or
# the like say otherwise (what `cargo metadata` reports, as an absolute
# path). The scripts find binaries with it instead of assuming ./target:
#
#   target="$(scripts/cargo-target-dir.sh)"
#   "$target/release/crawler" --help
#
# A relative CARGO_TARGET_DIR is taken from the caller's directory, as
# cargo itself takes it.
set -euo pipefail
manifest="$(cd "$(dirname "$0")/.." && pwd)/Cargo.toml"
meta="$(cargo metadata --format-version 1 --no-deps --manifest-path "$manifest")"
# The one string field; cargo writes the JSON on one line, and a path with
# a quote or backslash in it (escaped in JSON) is refused below.
dir="$(printf '%s' "$meta" | grep -o '"target_directory":"[^"\\]*"' | head -n 1 | cut -d'"' -f4 || true)"
if [ -z "$dir" ]; then
    echo "cargo-target-dir: no target_directory in \`cargo metadata\` (a path with a quote or a backslash?)" >&2
    exit 1
fi
printf '%s\n' "$dir"
