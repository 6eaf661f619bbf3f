"""BM25 in the browser worker: the Python scorer (a loop over postings, as before) against
the WebAssembly one (kernel/bm25.c), side by side in ONE headless Chromium run (not run by
the tests).

    PYTHONPATH=.:py .venv/bin/python bench/bm25_browser.py [--rows 10000 100000]

Needs a built dist/ with the MiniLM model. For each size, the same seeded synthetic rows as
bench/orama_browser.py (web/bench/orama.js: Zipf texts, 384-d vectors) are imported with
their vectors (``import_data`` in chunks of 10,000: the binary import path), the BM25 index
is completed (``index_text_step``), then:

- ``bm25_bench``: BM25's top 50 alone (hybrid's depth) and the engine's recall in Python,
  full-text and hybrid, alternating the two
  scorers query by query on the same index (query embeddings cached by a first pass; query
  texts are noisy copies of stored rows' words, so BM25 has real postings);
- the recall verb in the worker, with the default (WebAssembly) scorer, from the worker's
  receipt of the call to its reply less the query embedding (``orama_browser.worker_recall``,
  the figure of BENCHMARKS.md's storage v2 table).

Writes bench/results/<name>.json and .md with the commit and the load average per entry.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.orama_browser import (
    CHARACTER,
    MODEL,
    boot,
    launch,
    load_average,
    results_log,
    worker_recall,
)
from bench.storage_browser import IMPORT, call
from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = Path(os.environ.get("OMOIDE_DIST", ROOT / "dist"))
RESULTS = ROOT / "bench" / "results"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--worker-queries", type=int, default=21)
    parser.add_argument("--name", default="bm25_browser")
    args = parser.parse_args()
    out, record = results_log(args.name)

    server = AppServer(DIST, port=27693).start()
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            context = launch(p, profile)
            page, _ = boot(context, server.url)
            out["meta"]["versions"]["chromium"] = page.evaluate("navigator.userAgent")
            call(page, "select_model", MODEL)
            stamp = call(page, "model_state", {})["stamp"]
            filled = 0
            for rows in args.rows:
                page.evaluate(IMPORT, [CHARACTER, stamp, filled, rows])
                filled = rows
                while call(page, "index_text_step", {"batch": 5_000}) > 0:
                    pass
                queries = page.evaluate("([n, r]) => B.makeQueries(n, r, 384, 11).texts",
                                        [args.queries, rows])
                record({"what": "bm25_bench", **call(page, "bm25_bench", {
                    "character": CHARACTER, "queries": queries})})
                record({"what": "recall_in_worker", "rows": rows, "scorer": "wasm",
                        **worker_recall(page, rows, args.worker_queries)})
                record({"what": "bm25_memory", "rows": rows, **call(page, "bm25_info", {})})
            context.close()
    finally:
        server.stop()
    out["meta"]["load_average_end"] = load_average()
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2) + "\n")
    write_markdown(out, RESULTS / f"{args.name}.md")


def write_markdown(out: dict, path: Path) -> None:
    m = out["meta"]
    lines = ["# BM25 in the browser worker: Python scorer vs WebAssembly scorer", "",
             f"{m['date']}, commit {m['git_commit']}, {m['cpu']} ({m['cpus']} shared vCPUs), "
             f"{m['versions'].get('chromium', '?')}; load average at start "
             f"{m['load_average_start']}, at end {m.get('load_average_end')}.", "",
             "Engine recall in Python (query embedding cached), p50 / p95 ms, the two scorers "
             "alternating query by query on the same index:", "",
             "| rows | postings read per query (p50) | BM25 top 50: Python | BM25 top 50: "
             "WebAssembly | full-text: Python | full-text: WebAssembly | hybrid: Python | "
             "hybrid: WebAssembly | same hits | load avg |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    res = out["results"]

    def pp(d: dict) -> str:
        return f"{d['p50_ms']:.2f} / {d['p95_ms']:.2f}"

    for r in res:
        if r["what"] == "bm25_bench":
            lines.append(f"| {r['rows']:,} | {r['postings_p50']:,.0f} | "
                         f"{pp(r['python']['bm25_top50'])} | {pp(r['wasm']['bm25_top50'])} | "
                         f"{pp(r['python']['fulltext'])} | {pp(r['wasm']['fulltext'])} | "
                         f"{pp(r['python']['hybrid'])} | {pp(r['wasm']['hybrid'])} | "
                         f"{r['same_answers']} | {r['load_average'][0]} |")
    lines += ["", "Recall verb in the worker (receipt to reply, less the query embedding; fresh "
              "query texts), WebAssembly scorer, p50 / p95 ms:", "",
              "| rows | vector | hybrid | full-text | load avg |", "|---|---|---|---|---|"]
    for r in res:
        if r["what"] == "recall_in_worker":
            lines.append(f"| {r['rows']:,} | {pp(r['vector'])} | {pp(r['hybrid'])} | "
                         f"{pp(r['fulltext'])} | {r['load_average'][0]} |")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
