"""Omoide vs Orama 3.x side by side in ONE headless Chromium run (not run by the tests).

    PYTHONPATH=.:py .venv/bin/python bench/orama_browser.py [--rows 1000 10000 100000]

Needs a built dist/ (``python3 build.py build``: it vendors Orama into dist/vendor/orama and
copies web/bench/orama.js) with the MiniLM model. Everything runs in one browser: the same
seeded synthetic data (L2-normalized 384-d vectors, Zipf texts; web/bench/orama.js) goes to

- Orama (main thread of web/bench/index.html, a second tab): insertMultiple, vector /
  hybrid / full-text search (k = 10, similarity 0 so every row is a candidate), JS heap
  growth, save()+JSON / JSON+load();
- Omoide's kernel alone (web/kernel/vectors.js VectorIndex in that tab), exact and int8;
- Omoide's Python path in the engine worker: ``kernel_bench`` (``WasmKernel.top_k`` from
  Python, no embedding) and the real ``recall`` verb through ``window.omoide.call`` (query
  embedding with MiniLM q8, Python engine, kernel, touch + IndexedDB commit), after filling a
  character with ``import_data`` (vectors given, nothing embedded).

Then the browser is restarted on the same profile to time the full restore (boot with every
memory in IndexedDB). Writes bench/results/<name>.json and .md; p50/p95 are the best of
``--rounds`` rounds (the box is shared: noise only ever adds time).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from bench.common import cpu_model
from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = Path(os.environ.get("OMOIDE_DIST", ROOT / "dist"))  # another build: A/B
RESULTS = ROOT / "bench" / "results"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--js-flags=--expose-gc",
                 "--enable-blink-features=ForceEagerMeasureMemory"]
MODEL = {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"}
CHARACTER = "bench"
BOOT_READY = "#boot[data-boot-state='ready']"


def launch(p, profile: str):
    return p.chromium.launch_persistent_context(
        profile, executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)


def boot(context, url: str) -> tuple[object, float]:
    page = context.pages[0] if context.pages else context.new_page()
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(BOOT_READY, timeout=600_000)
    boot_ms = (time.perf_counter() - started) * 1000
    page.evaluate("async () => { window.B = await import('./bench/orama.js'); }")
    return page, boot_ms


def call(page, method: str, params: dict):
    return page.evaluate("([m, p]) => window.omoide.call(m, p)", [method, params])


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def results_log(name: str, **meta) -> tuple[dict, Callable[[dict], None]]:
    """A browser run's JSON (bench/results/<name>.json: the machine, the commit, Orama's
    version, ``meta``) and ``record(entry)``, which stamps the entry with the load average,
    prints it and rewrites the file, so a run cut short keeps what it measured."""
    out: dict = {"meta": {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git_commit": git_commit(), "machine": platform.machine(), "cpu": cpu_model(),
        "cpus": os.cpu_count(), "dimension": 384, "model": MODEL,
        "load_average_start": load_average(),
        "versions": {"orama": json.loads((ROOT / "node_modules/@orama/orama/package.json")
                                         .read_text())["version"]},
        **meta,
    }, "results": []}
    path = RESULTS / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)

    def record(entry: dict) -> None:
        entry["load_average"] = load_average()
        out["results"].append(entry)
        print(json.dumps(entry), flush=True)
        path.write_text(json.dumps(out, indent=2) + "\n")

    return out, record


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine-queries", type=int, default=20)
    parser.add_argument("--no-restart", action="store_true")
    parser.add_argument("--name", default="orama_browser")
    parser.add_argument("--also-validated", action="store_true",
                        help="restart once more with the record packs marked unchecked")
    parser.add_argument("--recall-after-restore", action="store_true",
                        help="after the restart: recall in the worker and remember, timed")
    parser.add_argument("--also-one-json", action="store_true",
                        help="restart once more with the record packs rewritten as one JSON "
                             "text each, still checked (the restore before records made on "
                             "use), side by side")
    parser.add_argument("--restore-only", action="store_true",
                        help="fill the engine and time the restore only (no Orama, no recall)")
    parser.add_argument("--restarts", type=int, default=1,
                        help="restarts after the fill; from the second on, each after the "
                             "full-text index and its stored postings are complete, with its "
                             "first recall full-text, then hybrid, alternately")
    parser.add_argument("--without-blocks", type=int, nargs="*", default=[],
                        help="restarts (2..) before which the stored full-text postings are "
                             "deleted: their first recall analyzes every text (the path "
                             "before stored postings), side by side")
    args = parser.parse_args()
    out, record = results_log(args.name, k=10, queries=args.queries, rounds=args.rounds)

    server = AppServer(DIST, port=27690).start()
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            context = launch(p, profile)
            page, boot_ms = boot(context, server.url)
            out["meta"]["versions"]["chromium"] = page.evaluate("navigator.userAgent")
            record({"engine": "omoide", "what": "boot_empty", "ms": boot_ms})
            out["meta"]["kernel"] = call(page, "kernel_info", {})
            # Orama and the kernel alone run in a second tab, web/bench/index.html: the app
            # page's CSP forbids WebAssembly on its main thread.
            lab = context.new_page()
            lab.goto(server.url + "bench/index.html")
            lab.wait_for_selector("#ready:not(:empty)")
            started = time.perf_counter()
            call(page, "select_model", MODEL)
            stamp = call(page, "model_state", {})["stamp"]
            record({"engine": "omoide", "what": "select_model", "stamp": stamp,
                    "ms": (time.perf_counter() - started) * 1000})
            times = []
            for i in range(6):
                started = time.perf_counter()
                call(page, "remember", {"character": "bench-one",
                                        "text": f"persist one new memory number {i}"})
                times.append((time.perf_counter() - started) * 1000)
            times = sorted(times[1:])  # the first one warms the model
            record({"engine": "omoide", "what": "persist_one", "p50_ms": times[len(times) // 2],
                    "max_ms": times[-1], "n": len(times)})
            filled = 0
            for rows in args.rows:
                opts = {"queries": args.queries, "rounds": args.rounds}
                if not args.restore_only:
                    try:
                        r = lab.evaluate("([n, o]) => B.orama(n, o)", [rows, opts])
                        r["memory"] = lab.evaluate("B.measureMemory()")
                    except PlaywrightError as err:
                        r = {"engine": "orama", "rows": rows, "error": str(err).splitlines()[0]}
                    record(r)
                    for r in lab.evaluate("([n, o]) => B.kernel(n, o)", [rows, opts]):
                        record(r)
                    for mode in ("exact", "int8"):
                        best = None
                        for _ in range(2):
                            r = call(page, "kernel_bench", {"rows": rows, "queries": args.queries,
                                                            "mode": mode})
                            if best is None or r["p50_ms"] < best["p50_ms"]:
                                best = r
                        best["engine"] = "omoide-python-kernel"
                        record(best)
                fill = page.evaluate("([c, s, a, b]) => B.engineFill(c, s, a, b)",
                                     [CHARACTER, stamp, filled, rows])
                fill_ms = fill["ms"]
                # Orama's insert builds its full-text index; ours analyzes the texts after
                # each call (in steps between calls): the import with its index complete too
                settled_ms = fill_ms + settled_text_index(page) * 1000
                fill_extra = {"prep_ms": fill["prep_ms"], "with_text_index_ms": settled_ms}
                filled = rows
                if args.restore_only:
                    record({"engine": "omoide-engine", "rows": rows, "import_ms": fill_ms,
                            **fill_extra})
                    continue
                started = time.perf_counter()
                call(page, "recall", {"character": CHARACTER, "query": "probe", "k": 10,
                                      "mode": "vector"})
                slow = time.perf_counter() - started > 0.5  # fewer queries when it is slow
                r = page.evaluate("([c, n, o]) => B.engineRecall(c, n, o)",
                                  [CHARACTER, rows, {"queries": 8 if slow else args.engine_queries,
                                                     "rounds": 1 if slow else args.rounds}])
                r.update({"engine": "omoide-engine", "rows": rows, "import_ms": fill_ms,
                          **fill_extra,
                          "count": call(page, "stats", {"character": CHARACTER}).get("memories"),
                          "memory": page.evaluate("B.measureMemory()")})
                record(r)
                record({"engine": "omoide-engine", "what": "recall_cached_embedding",
                        "rows": rows, **cached_recall(page, rows, args.engine_queries)})
                record({"engine": "omoide-engine", "what": "recall_in_worker", "rows": rows,
                        "load": os.getloadavg(),
                        **worker_recall(page, rows, args.engine_queries)})
            if not args.restore_only:
                record({"engine": "omoide", "what": "persist_one_big", "rows": filled,
                        **timed_remembers(page, "one more memory in the big store")})
                # the same texts again: the embedding cache answers, so this is remember beyond
                # its embedding (engine + IndexedDB commit)
                for i in range(4):
                    call(page, "forget", {"character": CHARACTER, "id": call(page, "remember", {
                        "character": CHARACTER, "text": f"a memory remembered twice {i}"})["id"]})
                    call(page, "purge_trash", {"character": CHARACTER})
                record({"engine": "omoide", "what": "remember_cached_embedding", "rows": filled,
                        **timed_remembers(page, "a memory remembered twice")})
                # fixed cost of the engine's recall (embedding + rpc + touch) on a 6-memory store
                r = page.evaluate("([c, n, o]) => B.engineRecall(c, n, o)",
                                  ["bench-one", 6, {"queries": args.engine_queries, "rounds": 2}])
                r.update({"engine": "omoide-engine", "rows": 6, "what": "fixed_cost"})
                record(r)
            context.close()
            if not args.no_restart:
                context = launch(p, profile)
                page, boot_ms = boot(context, server.url)
                info = call(page, "storage_info", {})
                stats = call(page, "stats", {"character": CHARACTER})
                record({"engine": "omoide", "what": "restore_after_restart", "ms": boot_ms,
                        "rows": stats.get("memories"), "stats": stats,
                        "breakdown": info["loads"].get(CHARACTER), "boot": info["boot"],
                        "pyodide_heap_bytes": info["pyodide_heap_bytes"],
                        "kernel_bytes": call(page, "memory_info", {})["kernel_bytes"],
                        "memory": page.evaluate("B.measureMemory()")})
                started = time.perf_counter()
                hits = call(page, "recall", {"character": CHARACTER, "query": FIRST_QUERY,
                                             "k": 10, "mode": "fulltext", "count": False})
                record({"engine": "omoide", "what": "first_fulltext_after_restore",
                        "rows": stats.get("memories"),
                        "ms": (time.perf_counter() - started) * 1000,
                        "hits": [(h["memory"]["id"], h["bm25"]) for h in hits],
                        "call": call(page, "call_timings", {"method": "recall", "last": 1}),
                        "text_blocks": call(page, "storage_info", {}).get("text_blocks"),
                        # the BM25 index is complete now: what it costs in the Pyodide heap
                        "pyodide_heap_bytes": call(page, "storage_info",
                                                   {})["pyodide_heap_bytes"],
                        "memory": page.evaluate("B.measureMemory()")})
                if args.recall_after_restore:
                    record({"engine": "omoide-engine", "what": "recall_in_worker",
                            "rows": filled, "load": os.getloadavg(), "after_restore": True,
                            **worker_recall(page, filled, args.engine_queries)})
                    # the same once the restore's work after ready (the full-text index
                    # and its stored postings, in steps between calls) is done
                    waited = settled_text_index(page)
                    record({"engine": "omoide-engine", "what": "recall_in_worker",
                            "rows": filled, "load": os.getloadavg(), "after_restore": True,
                            "settled_after_s": waited,
                            **worker_recall(page, filled, args.engine_queries)})
                    for i in range(4):  # the texts' embeddings cached, as above
                        call(page, "forget", {"character": CHARACTER, "id": call(
                            page, "remember", {"character": CHARACTER,
                                               "text": f"a memory remembered twice {i}"})["id"]})
                        call(page, "purge_trash", {"character": CHARACTER})
                    record({"engine": "omoide", "what": "remember_cached_embedding",
                            "rows": filled, "after_restore": True,
                            "pyodide_heap_bytes": call(page, "storage_info",
                                                       {})["pyodide_heap_bytes"],
                            **timed_remembers(page, "a memory remembered twice")})
                for restart in range(2, args.restarts + 1):
                    context = restart_after_text_index(p, profile, context, page, server.url,
                                                       restart, record,
                                                       restart in args.without_blocks)
                    page = context.pages[0]
                variants = [(name, fmt) for name, fmt, wanted in (
                    ("restore_after_restart_one_json", 1, args.also_one_json),
                    ("restore_after_restart_validated", 0, args.also_validated)) if wanted]
                for what, pack_format in variants:
                    # the same database with its record packs rewritten as one JSON text each
                    # (format 1: checked, made at once, as before the lines) or marked
                    # unchecked (format 0, as a migrated one: every record validated)
                    page.evaluate(REPACK, pack_format)
                    context.close()
                    context = launch(p, profile)
                    page, boot_ms = boot(context, server.url)
                    info = call(page, "storage_info", {})
                    record({"engine": "omoide", "what": what,
                            "ms": boot_ms, "rows": call(page, "stats", {
                                "character": CHARACTER}).get("memories"),
                            "breakdown": info["loads"].get(CHARACTER), "boot": info["boot"],
                            "pyodide_heap_bytes": info["pyodide_heap_bytes"]})
                context.close()
    finally:
        server.stop()
    write_markdown(out, RESULTS / f"{args.name}.md")


# Rewrite every record pack as one JSON text of its records, with ``format`` (1: checked,
# with its CRC, as packs were written before the lines; 0: unchecked, as the packs of a
# migrated database, every record validated at boot). Bench only; the app never does this.
REPACK = """async (format) => {
  const { packRecords, textChecksum } = await import("./store/packs.js");
  const db = await new Promise((ok, fail) => { const r = indexedDB.open("omoide");
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  const read = db.transaction("record_packs", "readonly").objectStore("record_packs");
  const packs = await new Promise((ok) => { const r = read.getAll();
    r.onsuccess = () => ok(r.result); });
  // strict durability and the transaction's completion: the browser is closed right after
  const tx = db.transaction("record_packs", "readwrite", { durability: "strict" });
  const store = tx.objectStore("record_packs");
  const done = new Promise((ok, fail) => { tx.oncomplete = ok; tx.onabort = fail; });
  for (const pack of packs) {
    pack.json = JSON.stringify(packRecords(pack));
    pack.format = format;
    pack.crc = format ? textChecksum(pack.json) : undefined;
    store.put(pack);
  }
  await done;
  db.close();
  return packs.length;
}"""


FIRST_QUERY = "the first question after a restore"


DROP_BLOCKS = """async () => {
  const store = await import("./store/db.js");
  const db = store.openDatabase();
  await db.open();
  const n = await db.text_postings.count();
  await db.text_postings.clear();
  db.close();
  return n;
}"""


def restart_after_text_index(p, profile: str, context, page, url: str, restart: int,
                             record: Callable[[dict], None], without_blocks: bool = False):
    """Close the browser once the full-text index is complete and its postings blocks are
    stored (a build that has none: once complete), start it again, and time the restore and
    its first recall (full-text on even restarts, hybrid on odd ones) from the page, with the
    worker's breakdown of that call and of the blocks' read and absorption."""
    try:
        status = call(page, "text_index_status", {})
    except PlaywrightError:  # a build without stored postings
        status = None
        call(page, "recall", {"character": CHARACTER, "query": "complete", "k": 1,
                              "mode": "fulltext", "count": False})
    dropped = page.evaluate(DROP_BLOCKS) if without_blocks else 0
    context.close()
    context = launch(p, profile)
    page, boot_ms = boot(context, url)
    mode = "fulltext" if restart % 2 == 0 else "hybrid"
    started = time.perf_counter()
    hits = call(page, "recall", {"character": CHARACTER, "query": FIRST_QUERY, "k": 10,
                                 "mode": mode, "count": False})
    first_ms = (time.perf_counter() - started) * 1000
    info = call(page, "storage_info", {})
    record({"engine": "omoide", "what": f"first_{mode}_after_restore", "restart": restart,
            "restore_ms": boot_ms, "ms": first_ms,
            "hits": [(h["memory"]["id"], h.get("bm25")) for h in hits],
            "call": call(page, "call_timings", {"method": "recall", "last": 1}),
            "text_blocks": info.get("text_blocks"), "before_close": status,
            "blocks_deleted_before": dropped,
            "breakdown": info["loads"].get(CHARACTER), "boot": info["boot"],
            "pyodide_heap_bytes": info["pyodide_heap_bytes"]})
    return context


def timed_remembers(page, text: str, n: int = 4) -> dict:
    """p50 / max ms of ``n`` remembers of ``text {i}`` into the bench character, timed in
    the page around ``omoide.call`` (the app's round trip to the engine worker; the DevTools
    round trip of ``page.evaluate``, several ms here, is left out), each after the page's
    refresh of the previous change has settled (a user does not remember twice within
    ms). ``worker_p50_ms``: the same calls from the worker's receipt to its reply."""
    times = []
    for i in range(n):
        page.wait_for_timeout(300)
        times.append(page.evaluate("""async ([c, text]) => { const t = performance.now();
          await window.omoide.call("remember", { character: c, text });
          return performance.now() - t; }""", [CHARACTER, f"{text} {i}"]))
    worker = [t["total_ms"] for t in call(page, "call_timings", {"method": "remember",
                                                                  "last": n})]
    times.sort()
    return {"p50_ms": times[len(times) // 2], "max_ms": times[-1], "n": n,
            "worker_p50_ms": percentile(worker, 0.5)}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def worker_recall(page, rows: int, queries: int) -> dict:
    """Recall p50 / p95 per mode timed INSIDE the engine worker, without the query embedding:
    from the worker's receipt of the call to its reply (lock, catch-up, Python verb, JSON),
    less the time Python waited for the embedding worker (the worker's ``call_timings``).
    Fresh query texts (noisy copies of stored rows' words), so nothing is cached; the
    median of each phase is kept too. Then the same queries once more (``cached``): their
    embeddings are cached, so no inference runs at all, and the figure is the engine's
    recall alone, without the embedding worker's threads still busy beside it."""
    texts = page.evaluate("([n, r]) => B.makeQueries(n, r, 384, 7).texts", [queries * 3, rows])
    out: dict = {}
    for m, mode in enumerate(("vector", "hybrid", "fulltext")):
        batch = [f"{q} {mode}" for q in texts[m * queries:(m + 1) * queries]]
        out[mode] = timed_worker_recalls(page, batch, mode)
        out[mode]["cached"] = timed_worker_recalls(page, batch, mode)
    return out


def settled_text_index(page, limit_s: float = 300.0) -> float:
    """Seconds until the full-text index has no text left to analyze and its postings
    blocks are written (``text_index_status`` waits for the blocks)."""
    started = time.perf_counter()
    while call(page, "text_index_status", {})["left"] > 0:
        if time.perf_counter() - started > limit_s:
            raise TimeoutError("the full-text index did not settle")
        page.wait_for_timeout(500)
    call(page, "text_index_status", {})
    return time.perf_counter() - started


def timed_worker_recalls(page, batch: list[str], mode: str) -> dict:
    page.evaluate("""async ([c, qs, mode]) => { for (const query of qs)
      await window.omoide.call("recall", { character: c, query, k: 10, mode,
        count: false }); }""", [CHARACTER, batch, mode])
    timings = call(page, "call_timings", {"method": "recall", "last": len(batch)})
    verb = [t["total_ms"] - t["phases"].get("embed", 0.0) for t in timings]
    phases = {k: sorted(t.get(k, 0.0) for t in timings)[len(timings) // 2]
              for k in ("lock_ms", "catch_up_ms", "python_ms", "commit_ms")}
    for name in ("verb", "json", "embed"):
        phases[f"python_{name}_ms"] = sorted(t["phases"].get(name, 0.0)
                                             for t in timings)[len(timings) // 2]
    return {"p50_ms": percentile(verb, 0.5), "p95_ms": percentile(verb, 0.95),
            "n": len(verb), "median_phases": phases}


def cached_recall(page, rows: int, queries: int) -> dict:
    """Recall p50 per mode with the query embeddings cached (each query asked once before):
    the engine's recall without the embedding, timed in the page (includes the worker
    round trip). Query texts are stored rows' words, so BM25 has postings to score."""
    return page.evaluate("""async ([c, n, rows]) => {
      const out = {};
      const texts = B.makeQueries(n, rows, 384, 5).texts;
      for (const mode of ["vector", "hybrid", "fulltext"]) {
        const qs = texts.map((t, i) => `${t} ${mode} ${i}`);
        for (const query of qs) await window.omoide.call("recall", { character: c, query,
          k: 10, mode, count: false });
        const times = [];
        for (const query of qs) {
          const t = performance.now();
          await window.omoide.call("recall", { character: c, query, k: 10, mode,
            count: false });
          times.push(performance.now() - t);
        }
        times.sort((a, b) => a - b);
        out[mode] = { p50_ms: times[times.length >> 1],
          p95_ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))] };
      }
      return out;
    }""", [CHARACTER, queries, rows])


def js_memory(measured: dict | None) -> str:
    """MiB per scope (page, engine worker, embedding worker) of a ``B.measureMemory()``."""
    if not measured or "breakdown" not in measured:
        return "-"
    per_scope: dict[str, float] = {}
    for part in measured["breakdown"]:
        for scope in part["scopes"] or ["?"]:
            per_scope[scope] = per_scope.get(scope, 0) + part["bytes"] / len(part["scopes"] or [1])
    return ", ".join(f"{scope} {size / 2**20:.0f} MiB"
                     for scope, size in sorted(per_scope.items(), key=lambda kv: -kv[1]))


def fmt(p: dict | None) -> str:
    return f"{p['p50_ms']:.2f} / {p['p95_ms']:.2f}" if p else "-"


def write_markdown(out: dict, path: Path) -> None:
    m = out["meta"]
    lines = [f"# Omoide vs Orama {m['versions']['orama']} in headless Chromium, "
             f"{m['dimension']}-d, k = {m['k']}", "",
             f"{m['date']}, commit {m['git_commit']}, {m['cpu']} ({m['cpus']} shared vCPUs), "
             f"{m['versions'].get('chromium', '?')}; kernel {m.get('kernel')}; "
             f"p50 / p95 ms, best of {m['rounds']} rounds of {m['queries']} queries.", ""]
    res = out["results"]
    lines += ["| rows | Orama insert s | Orama vector | Orama hybrid | Orama full-text | "
              "Orama heap MiB | kernel exact (JS) | kernel int8 (JS) | "
              "Python kernel exact | Python kernel int8 | engine vector | engine hybrid |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for rows in sorted({r["rows"] for r in res if r.get("engine") == "orama"}):
        def find(engine, mode=None, rows=rows):
            for r in res:
                if r.get("engine") == engine and r.get("rows") == rows and \
                        (mode is None or r.get("mode") == mode) and "what" not in r:
                    return r
            return {}
        o = find("orama")
        e = find("omoide-engine")
        if "insert_ms" not in o:
            o = {"insert_ms": float("nan")}
        heap = f"{o['heap_bytes'] / 2**20:.0f}" if o.get("heap_bytes") is not None else "-"
        lines.append(
            f"| {rows:,} | {o['insert_ms'] / 1000:.1f} | {fmt(o.get('vector'))} | "
            f"{fmt(o.get('hybrid'))} | {fmt(o.get('fulltext'))} | {heap} | "
            f"{fmt(find('omoide-kernel', 'exact') or None)} | "
            f"{fmt(find('omoide-kernel', 'int8') or None)} | "
            f"{fmt(find('omoide-python-kernel', 'exact') or None)} | "
            f"{fmt(find('omoide-python-kernel', 'int8') or None)} | "
            f"{fmt(e.get('vector'))} | {fmt(e.get('hybrid'))} |")
    lines += ["", "| other | value |", "|---|---|"]
    for r in res:
        if r.get("what") in ("boot_empty", "select_model", "restore_after_restart",
                             "restore_after_restart_validated",
                             "restore_after_restart_one_json"):
            extra = f" ({r['rows']:,} memories)" if r.get("rows") else ""
            lines.append(f"| Omoide {r['what']}{extra} | {r['ms'] / 1000:.2f} s |")
            if r.get("breakdown"):
                b = r["breakdown"]
                heap = (r.get("pyodide_heap_bytes") or 0) / 2**20
                lines.append(f"| restore breakdown: IndexedDB read / kernel load + records / "
                             f"Python (records, ids; BM25 deferred) | "
                             f"{b['indexeddb_ms']:.0f} / {b['kernel_ms']:.0f} / "
                             f"{b['python_ms']:.0f} ms"
                             + (f" (records {b['records_ms']:.0f} ms)" if "records_ms" in b
                                else "") + " |")
                marks = r.get("boot") or {}
                if "read_ahead" in marks:
                    lines.append(
                        f"| boot marks, ms on the worker's clock (read ahead used: "
                        f"{b.get('ahead')}) | IndexedDB read done {marks.get('read')}, vectors "
                        f"placed {marks.get('placed')}, Python engine imported "
                        f"{marks.get('engine')}, read ahead awaited {marks.get('read_ahead')}"
                        f" -> ready {marks.get('ready')} |")
                if b.get("trusted") is not None:
                    lines.append(f"| records made without the validator (checked packs) / "
                                 f"quarantined | {b['trusted']:,} / {b.get('quarantined', 0)} |")
                if "kernel_bytes" in r:
                    lines.append(f"| engine worker memory after restore: Pyodide heap / "
                                 f"kernels | {heap:.0f} MiB / "
                                 f"{r['kernel_bytes'] / 2**20:.0f} MiB |")
                if "memory" in r:
                    lines.append(f"| JS memory per scope after restore (measureUserAgentSpecific"
                                 f"Memory, no WebAssembly memories) | "
                                 f"{js_memory(r.get('memory'))} |")
        elif r.get("what") == "recall_cached_embedding":
            lines.append(f"| Omoide recall at {r['rows']:,}, query embedding cached | "
                         f"vector {fmt(r['vector'])}, hybrid {fmt(r['hybrid'])}, "
                         f"full-text {fmt(r['fulltext'])} ms |")
        elif r.get("what") == "recall_in_worker":
            settled = (f", the full-text index settled ({r['settled_after_s']:.1f} s)"
                       if "settled_after_s" in r else "")
            lines.append(f"| Omoide recall at {r['rows']:,} in the worker, without the query "
                         f"embedding (load {r['load'][0]:.1f}{settled}) | vector "
                         f"{fmt(r['vector'])}, "
                         f"hybrid {fmt(r['hybrid'])}, full-text {fmt(r['fulltext'])} ms |")
            if "cached" in r["vector"]:
                lines.append(f"| Omoide recall at {r['rows']:,} in the worker, the same "
                             f"queries again (embedding cached: no inference) | vector "
                             f"{fmt(r['vector']['cached'])}, hybrid "
                             f"{fmt(r['hybrid']['cached'])}, full-text "
                             f"{fmt(r['fulltext']['cached'])} ms |")
        elif r.get("what") == "remember_cached_embedding":
            worker = (f"; in the worker {r['worker_p50_ms']:.1f} ms"
                      if "worker_p50_ms" in r else "")
            lines.append(f"| Omoide remember one into the {r['rows']:,}-memory store, "
                         f"embedding cached, page | p50 {r['p50_ms']:.1f} ms, "
                         f"max {r['max_ms']:.1f} ms{worker} |")
        elif r.get("what") == "first_fulltext_after_restore" and "restart" not in r:
            lines.append(f"| Omoide first full-text recall after restore ({r['rows']:,}; "
                         f"completes the BM25 index) | {r['ms']:.0f} ms; then Pyodide heap "
                         f"{(r.get('pyodide_heap_bytes') or 0) / 2**20:.0f} MiB |")
        elif r.get("what") in ("first_fulltext_after_restore", "first_hybrid_after_restore"):
            c = (r.get("call") or [{}])[-1]
            b = r.get("text_blocks") or {}
            ready = (r.get("boot") or {}).get("ready")
            lines.append(
                f"| Omoide restart {r['restart']}"
                f"{' (stored postings deleted before)' if r.get('blocks_deleted_before') else ''}"
                f": restore, then the first "
                f"{r['what'].split('_')[1]} recall (page) | restore {r['restore_ms']:.0f} ms; "
                f"recall {r['ms']:.0f} ms (waiting for the stored postings "
                f"{c.get('text_blocks_wait_ms', 0):.0f} ms, Python {c.get('python_ms', 0):.0f}"
                f" ms); blocks {b.get('absorbed', '-')}/{b.get('blocks', '-')} absorbed, read "
                f"{b.get('read_ms', '-')} ms, Python {b.get('python_ms', '-')} ms, lock waits "
                f"{b.get('lock_ms', '-')} ms, all {b.get('total_ms', '-')} ms, done "
                f"{(b.get('done_at') or 0) - (ready or 0)} ms after ready |")
        elif r.get("what") == "persist_one_big":
            lines.append(f"| Omoide persist one new memory into the {r['rows']:,}-memory store | "
                         f"p50 {r['p50_ms']:.0f} ms, max {r['max_ms']:.0f} ms |")
        elif r.get("what") == "persist_one":
            lines.append(f"| Omoide persist one new memory (remember, MiniLM q8) | "
                         f"p50 {r['p50_ms']:.0f} ms, max {r['max_ms']:.0f} ms |")
        elif r.get("what") == "fixed_cost":
            lines.append(f"| Omoide engine recall on 6 memories (embedding + rpc + touch) | "
                         f"vector {fmt(r['vector'])}, hybrid {fmt(r['hybrid'])} ms |")
        elif r.get("engine") == "orama":
            if "error" in r:
                lines.append(f"| Orama {r['rows']:,} | failed: {r['error']} |")
                continue
            json_part = (f"JSON.stringify {r['json_ms'] / 1000:.1f} s "
                         f"({r['json_bytes'] / 2**20:.0f} MiB)" if r.get("json_bytes")
                         else f"JSON.stringify fails ({r.get('json_error')})")
            lines.append(f"| Orama {r['rows']:,}: save() / {json_part} / load() from "
                         f"{r['load_from']} | {r['save_ms'] / 1000:.1f} s / "
                         f"{r['load_ms'] / 1000:.1f} s (load) |")
            lines.append(f"| Orama {r['rows']:,}: insert one more | {r['insert_one_ms']:.1f} ms |")
        elif r.get("engine") == "omoide-engine" and "import_ms" in r:
            more = (f"; with the full-text index complete {r['with_text_index_ms'] / 1000:.1f}"
                    f" s; making the chunks {r['prep_ms'] / 1000:.1f} s, not counted"
                    if "with_text_index_ms" in r else "")
            lines.append(f"| Omoide engine fill to {r['rows']:,} (import_data with vectors) | "
                         f"{r['import_ms'] / 1000:.1f} s{more} |")
    path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
