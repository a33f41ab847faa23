"""trafilatura on the extraction bench's pages, for `cargo bench -p evaluation --bench extraction`.

Reads jobs on stdin, one JSON object a line: {"key": ..., "path": ..., "url": ...}. Each
page is read from `path` as saved (gunzipped when the name ends in .gz) and given to
trafilatura as bytes, so that it decodes the page itself, as a user's call would. Writes
one JSON object a line on stdout: {"key", "text", "title", "date", "author", "ms"}, where
`ms` times the extraction call alone.

trafilatura is called as its own evaluation calls it for the main text (comments left
out, tables kept), with its metadata (title, date as YYYY-MM-DD, author), and with no
network access.
"""

import gzip
import json
import sys
import time

import trafilatura


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def main():
    for line in sys.stdin:
        job = json.loads(line)
        data = read(job["path"])
        start = time.perf_counter()
        try:
            doc = trafilatura.bare_extraction(
                data,
                url=job["url"],
                with_metadata=True,
                include_comments=False,
                include_tables=True,
            )
            error = None
        except Exception as e:  # one page's failure is that page's empty result
            doc, error = None, repr(e)
        ms = (time.perf_counter() - start) * 1e3
        out = {"key": job["key"], "ms": ms, "error": error}
        for field in ("text", "title", "date", "author"):
            out[field] = getattr(doc, field, None) if doc is not None else None
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
