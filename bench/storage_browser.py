"""The write side of browser storage v2 (issue 12), side by side with Orama in ONE headless
Chromium run (not run by the tests).

    PYTHONPATH=.:py .venv/bin/python bench/storage_browser.py [--rows 10000 100000]

Needs a built dist/ (``python3 build.py build``) with the MiniLM model. For each size, on the
same seeded synthetic rows (web/bench/orama.js: L2-normalized 384-d vectors, Zipf texts):

- Orama 3.x ``insertMultiple`` (main thread of web/bench/index.html, a second tab);
- Omoide's bulk import with vectors given (``import_data`` in chunks of 10,000 through
  ``window.omoide.call``, as a user's export file arrives: vectors as JSON numbers; the
  calls are timed, not the making of the data, as for Orama), with the worker's breakdown
  of the last chunk (Python: parse + validation + kernel; commit: the IndexedDB write);
- ``remember`` of one memory into that store with its embedding cached, once the import's
  full-text pass has settled (its steps hold the worker; a remember timed during them
  waited for them: 17.8 ms p50 at 100,000 in s30_storage_base) (each text was remembered,
  forgotten and purged once before, so the embedding cache answers): the time of
  remember beyond its embedding, in the page (worker round trip included), with the worker's
  own breakdown of the call (``storage_info.calls.remember``: lock wait, catch-up, Python
  verb, commit = JSON + IndexedDB transaction, compaction check + post).

Writes bench/results/<name>.json and .md with the commit and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.orama_browser import MODEL, boot, launch, load_average, results_log, settled_text_index
from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = Path(os.environ.get("OMOIDE_DIST", ROOT / "dist"))
RESULTS = ROOT / "bench" / "results"
CHARACTER = "bench"
STEPS = ("lock_ms", "catch_up_ms", "python_ms", "commit_ms", "indexeddb_ms", "finish_ms")


# The engine's import of the rows filled..rows, in chunks of 10,000 (an export file each, as a
# user's file arrives: vectors as JSON numbers); only the calls are timed, like Orama's
# insertMultiple without its data preparation.
IMPORT = """async ([character, stamp, from, rows]) => {
  let ms = 0;
  for (let at = from; at < rows; at += 10000) {
    const data = B.exportChunk(character, stamp, at, Math.min(rows, at + 10000));
    const t = performance.now();
    await window.omoide.call("import_data", { data });
    ms += performance.now() - t;
  }
  return ms;
}"""


def call(page, method: str, params: dict):
    return page.evaluate("([m, p]) => window.omoide.call(m, p)", [method, params])


def timed_call(page, method: str, params: dict) -> float:
    return page.evaluate("""async ([m, p]) => {
      const t = performance.now();
      await window.omoide.call(m, p);
      return performance.now() - t;
    }""", [method, params])


def remember_cached(page, rows: int, n: int) -> dict:
    texts = [f"a memory remembered twice, number {i} of {rows}" for i in range(n)]
    for text in texts:  # embed once: the cache answers below
        memory = call(page, "remember", {"character": CHARACTER, "text": text})
        call(page, "forget", {"character": CHARACTER, "id": memory["id"]})
    call(page, "purge_trash", {"character": CHARACTER})
    totals, steps = [], {k: [] for k in STEPS}
    for text in texts:
        totals.append(timed_call(page, "remember", {"character": CHARACTER, "text": text}))
        times = call(page, "storage_info", {})["calls"].get("remember", {})
        for k in STEPS:
            if k in times:
                steps[k].append(times[k])
    return {"p50_ms": statistics.median(totals), "max_ms": max(totals), "n": n,
            "steps_p50_ms": {k: round(statistics.median(v), 2) for k, v in steps.items() if v}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000])
    parser.add_argument("--remembers", type=int, default=21)
    parser.add_argument("--name", default="storage_browser")
    args = parser.parse_args()
    out, record = results_log(args.name)

    server = AppServer(DIST, port=27691).start()
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            context = launch(p, profile)
            page, _ = boot(context, server.url)
            out["meta"]["versions"]["chromium"] = page.evaluate("navigator.userAgent")
            lab = context.new_page()
            lab.goto(server.url + "bench/index.html")
            lab.wait_for_selector("#ready:not(:empty)")
            call(page, "select_model", MODEL)
            stamp = call(page, "model_state", {})["stamp"]
            filled = 0
            for rows in args.rows:
                orama = lab.evaluate("([n, o]) => B.orama(n, o)",
                                     [rows, {"queries": 2, "rounds": 1}])
                lab.evaluate("() => globalThis.gc?.()")
                import_ms = page.evaluate(IMPORT, [CHARACTER, stamp, filled, rows])
                filled = rows
                record({"what": "bulk_import", "rows": rows, "orama_insert_ms":
                        orama["insert_ms"], "omoide_import_ms": import_ms,
                        "count": call(page, "stats", {"character": CHARACTER})["memories"],
                        "import_steps": call(page, "storage_info", {})["calls"]
                        .get("import_data")})
                # the import's full-text pass runs after it, in steps that hold the worker:
                # a remember timed meanwhile waits for them, which is not its own cost
                record({"what": "text_index_settled", "rows": rows,
                        "after_import_s": settled_text_index(page)})
                record({"what": "remember_cached_embedding", "rows": rows,
                        **remember_cached(page, rows, args.remembers)})
            context.close()
    finally:
        server.stop()
    out["meta"]["load_average_end"] = load_average()
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2) + "\n")
    write_markdown(out, RESULTS / f"{args.name}.md")


def write_markdown(out: dict, path: Path) -> None:
    m = out["meta"]
    lines = [f"# Browser storage v2, the write side: Omoide vs Orama {m['versions']['orama']}",
             "", f"{m['date']}, commit {m['git_commit']}, {m['cpu']} ({m['cpus']} shared vCPUs),"
             f" {m['versions'].get('chromium', '?')}; load average at start "
             f"{m['load_average_start']}, at end {m.get('load_average_end')}.", "",
             "| rows | Orama insertMultiple s | Omoide import_data (vectors given) s | ratio | "
             "load avg |", "|---|---|---|---|---|"]
    res = out["results"]
    for r in res:
        if r["what"] == "bulk_import":
            lines.append(f"| {r['rows']:,} | {r['orama_insert_ms'] / 1000:.2f} | "
                         f"{r['omoide_import_ms'] / 1000:.2f} | "
                         f"{r['omoide_import_ms'] / r['orama_insert_ms']:.2f}x | "
                         f"{r['load_average'][0]} |")
    lines += ["", "| rows | remember one, embedding cached: p50 / max ms | worker steps p50 ms "
              "(lock, catch-up, Python verb, commit, of which IndexedDB, finish) | load avg |",
              "|---|---|---|---|"]
    for r in res:
        if r["what"] == "remember_cached_embedding":
            s = r["steps_p50_ms"]
            lines.append(f"| {r['rows']:,} | {r['p50_ms']:.1f} / {r['max_ms']:.1f} | "
                         + " / ".join(f"{s.get(k, float('nan')):.1f}" for k in STEPS)
                         + f" | {r['load_average'][0]} |")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
