#!/usr/bin/env bash
# Checks the WARC files of a crawl with a reader this project did not write:
# Python's warcio, installed in a throwaway virtualenv (python3 -m venv in a
# temporary directory, deleted on exit; pip needs the package index).
#
#   scripts/warcio-check.sh DIR [--replay]
#
# - `warcio check` on every DIR/*.warc.gz (digests verified), and every
#   gzip member whole (warcio stops quietly at a torn last record);
# - every record read to its end with warcio's ArchiveIterator, digests
#   checked again, counted by type;
# - each revisit record replayed: its original response is found (by
#   WARC-Refers-To, else by WARC-Refers-To-Target-URI and -Date), its
#   payload must be non-empty and match its WARC-Payload-Digest.
#
# Prints one JSON line of counts last ({"files":..,"response":..,"revisit":..,
# "replayed":..}). Exits non-zero on any failure, when DIR holds no
# .warc.gz file or still holds a .open one, and with --replay when no
# revisit record was found.
set -euo pipefail

dir="${1:-}"
replay=0
case "${2:-}" in
  "") ;;
  --replay) replay=1 ;;
  *) echo "usage: $0 DIR [--replay]" >&2; exit 2 ;;
esac
if [[ -z "$dir" || ! -d "$dir" ]]; then
  echo "usage: $0 DIR [--replay]  (DIR: a directory of .warc.gz files)" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "python3 is needed (for warcio)" >&2; exit 1; }

shopt -s nullglob
files=("$dir"/*.warc.gz)
open=("$dir"/*.warc.gz.open)
if (( ${#open[@]} )); then
  echo "FAIL: files still being written (or left by a writer nobody recovered): ${open[*]}" >&2
  exit 1
fi
if (( ${#files[@]} == 0 )); then
  echo "FAIL: no .warc.gz file in $dir" >&2
  exit 1
fi

venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check warcio >&2
echo "warcio $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("warcio"))')" >&2

for f in "${files[@]}"; do
  if ! "$venv/bin/warcio" check "$f" >&2; then
    echo "FAIL: warcio check $f" >&2
    "$venv/bin/warcio" check -v "$f" | grep -v "digest pass" | head -20 >&2 || true
    exit 1
  fi
done

"$venv/bin/python" - "$replay" "${files[@]}" <<'PY'
import base64, collections, gzip, hashlib, json, sys, zlib
from warcio.archiveiterator import ArchiveIterator

want_replay = sys.argv[1] == "1"
files = sys.argv[2:]
counts = collections.Counter()
responses = {}       # record id -> (uri, date, payload length, payload digest ok)
by_uri_date = {}     # (uri, date) -> record id
revisits = []
failures = []

def sha1_b32(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()

for path in files:
    # warcio stops quietly at a torn last record: every gzip member must
    # be whole.
    try:
        with gzip.open(path, "rb") as whole:
            while whole.read(1 << 20):
                pass
    except (EOFError, OSError, zlib.error) as e:
        failures.append(f"{path}: not whole gzip members: {e}")
        continue
    with open(path, "rb") as stream:
        for rec in ArchiveIterator(stream, check_digests="raise"):
            kind = rec.rec_type
            counts[kind] += 1
            h = rec.rec_headers
            rid = h.get_header("WARC-Record-ID")
            # The payload as stored: after the HTTP headers, not decoded.
            payload = rec.raw_stream.read()
            if kind == "response":
                uri, date = h.get_header("WARC-Target-URI"), h.get_header("WARC-Date")
                ok = sha1_b32(payload) == h.get_header("WARC-Payload-Digest")
                responses[rid] = (uri, date, len(payload), ok)
                by_uri_date[(uri, date)] = rid
            elif kind == "revisit":
                if payload:
                    failures.append(f"revisit {rid} carries a payload of {len(payload)} bytes")
                revisits.append({
                    "id": rid,
                    "uri": h.get_header("WARC-Target-URI"),
                    "profile": h.get_header("WARC-Profile"),
                    "refers_to": h.get_header("WARC-Refers-To"),
                    "ref_uri": h.get_header("WARC-Refers-To-Target-URI"),
                    "ref_date": h.get_header("WARC-Refers-To-Date"),
                    "distance": h.get_header("WARC-Simhash-Distance"),
                })

replayed = 0
for r in revisits:
    if not (r["ref_uri"] and r["ref_date"] and r["profile"] and r["distance"] is not None):
        failures.append(f"revisit {r['id']} of {r['uri']} lacks a WARC-Refers-To-*, profile or distance field")
        continue
    target = r["refers_to"] if r["refers_to"] in responses else by_uri_date.get((r["ref_uri"], r["ref_date"]))
    if target is None:
        failures.append(f"revisit {r['id']} of {r['uri']}: no response record of {r['ref_uri']} at {r['ref_date']}")
        continue
    uri, date, length, digest_ok = responses[target]
    if (uri, date) != (r["ref_uri"], r["ref_date"]):
        failures.append(f"revisit {r['id']}: WARC-Refers-To {target} is {uri} at {date}, not {r['ref_uri']} at {r['ref_date']}")
    elif length == 0:
        failures.append(f"revisit {r['id']}: its original {uri} has an empty payload")
    elif not digest_ok:
        failures.append(f"revisit {r['id']}: its original {uri} does not match its WARC-Payload-Digest")
    else:
        replayed += 1

if want_replay and not revisits:
    failures.append("no revisit record found, and one was expected (--replay)")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
summary = {"files": len(files), **{k: counts[k] for k in ("warcinfo", "request", "response", "revisit", "metadata")}, "replayed": replayed}
print(json.dumps(summary))
sys.exit(1 if failures else 0)
PY
