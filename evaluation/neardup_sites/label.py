#!/usr/bin/env python3
"""The labels of the near-duplicate evaluation on real sites, made without
the crawler's help (scripts/neardup-sites.sh runs this in a throwaway
virtualenv with trafilatura and readability-lxml).

For every page of every site in sites.tsv: the main text by an extractor
other than ours (trafilatura), or the hand-cleaned text where the set has
one (AEB's ground truth, CWCED's cleaned texts), and the share of that text
inside links (trafilatura's <ref> elements): the evaluation calls a page a
listing when its text is mostly link text or under ten words.

    label.py SITES_TSV SHARED_BENCH_DIR OUT_JSONL

Writes one JSON object per page: {"site", "path", "text", "link_share",
"text_alt"}. "text_alt" is a second opinion by another extractor
(readability-lxml, Mozilla Readability's port; the hand-cleaned text where
there is one): a pair of other pages is required to be found only when
this text does not call it distinct, so that one extractor's failure does
not become a pair to find (trafilatura took SQLite's release notes for one
31-word notice that every release page shares).
A site of more than MAX_PER_SITE pages is sampled (every k-th page in path
order, so that neighbours such as consecutive release notes stay
together): the evaluation takes the labelled pages.
"path" is the URL path the evaluation serves the page under (a .gz file is
served decompressed, without the .gz).
"""

import gzip
import json
import multiprocessing
import os
import sys

import lxml.html
import trafilatura
from lxml import etree
from readability import Document

# Pages labelled per site, at most (trafilatura takes 20-50 ms a page).
MAX_PER_SITE = int(os.environ.get("NEARDUP_SITES_MAX_PER_SITE", "600"))


def read_sites(tsv, shared):
    out = []
    with open(tsv, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, source, root, only, _held, _package = line.rstrip("\n").split("\t")
            if source != "doc":
                root = os.path.join(shared, root)
            out.append((name, source, root, None if only == "-" else only.split(",")))
    return out


def pages(name, source, root, only):
    """(site, source, URL path, file) of every page, sorted by path."""
    found = []
    tops = [os.path.join(root, o) for o in only] if only else [root]
    for top in tops:
        for folder, _dirs, files in os.walk(top, followlinks=True):
            for f in files:
                if not (f.endswith(".html") or f.endswith(".html.gz")):
                    continue
                path = os.path.join(folder, f)
                url_path = "/" + os.path.relpath(path, root)
                if url_path.endswith(".gz"):
                    url_path = url_path[:-3]
                found.append((name, source, url_path, path))
    found.sort(key=lambda p: p[2])
    step = -(-len(found) // MAX_PER_SITE)
    return found[::step]


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def extract(html):
    """trafilatura's main text and the share of it inside links."""
    xml = trafilatura.extract(
        html,
        output_format="xml",
        include_links=True,
        include_tables=True,
        include_comments=False,
    )
    if not xml:
        return "", 0.0
    try:
        root = etree.fromstring(xml.encode("utf-8"))
    except etree.XMLSyntaxError:
        return trafilatura.extract(html) or "", 0.0
    main = root.find("main")
    if main is None:
        main = root
    text = "\n".join(t.strip() for t in main.itertext() if t.strip())
    link_chars = sum(len("".join(r.itertext())) for r in main.iter("ref"))
    chars = sum(len(t) for t in main.itertext())
    return text, (link_chars / chars if chars else 0.0)


def readability_text(html):
    """Readability's main text: the text of the content it keeps."""
    summary = Document(html).summary(html_partial=True)
    if not summary.strip():
        return ""
    return lxml.html.fromstring(summary).text_content()


def truths(shared):
    """Hand-cleaned texts: AEB's ground truth and CWCED's cleaned files, by
    (site, URL path)."""
    out = {}
    with open(os.path.join(shared, "aeb", "ground-truth.json"), encoding="utf-8") as f:
        for page_id, truth in json.load(f).items():
            out[("aeb", "/" + page_id + ".html")] = truth.get("articleBody") or ""
    cleaned = os.path.join(shared, "cwced", "cleaned")
    for f in os.listdir(cleaned):
        if f.endswith(".txt"):
            with open(os.path.join(cleaned, f), encoding="utf-8", errors="replace") as t:
                out[("cwced", "/" + f[:-4] + ".html")] = t.read()
    return out


TRUTHS = {}


def label(page):
    site, _source, url_path, path = page
    truth = TRUTHS.get((site, url_path))
    if truth is not None:
        return {"site": site, "path": url_path, "text": truth, "link_share": 0.0, "text_alt": truth}
    # One bad page must not stop the labels.
    try:
        html = read(path)
    except Exception as e:
        print(f"{site}{url_path}: {e}", file=sys.stderr)
        html = None
    try:
        text, share = extract(html) if html else ("", 0.0)
    except Exception as e:
        print(f"{site}{url_path}: {e}", file=sys.stderr)
        text, share = "", 0.0
    try:
        alt = readability_text(html) if html else ""
    except Exception as e:
        print(f"{site}{url_path}: readability: {e}", file=sys.stderr)
        alt = ""
    return {"site": site, "path": url_path, "text": text, "link_share": share, "text_alt": alt}


def main():
    tsv, shared, out = sys.argv[1:4]
    TRUTHS.update(truths(shared))
    todo = []
    for site in read_sites(tsv, shared):
        todo.extend(pages(*site))
    print(f"labelling {len(todo)} pages", file=sys.stderr)
    tmp = out + ".part"
    with multiprocessing.Pool(2) as pool, open(tmp, "w", encoding="utf-8") as f:
        for i, row in enumerate(pool.imap(label, todo, chunksize=8)):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            if i % 500 == 0:
                print(f"{i}/{len(todo)}", file=sys.stderr)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
