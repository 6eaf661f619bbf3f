"""Benchmark the browser vector kernel in headless Chromium (not run by the tests).

    PYTHONPATH=.:py .venv/bin/python bench/kernel_browser.py [--rows 10000 100000]

Needs a built dist/ (``python3 build.py build``). Measures ms/query (top-10, 384-d) for each
implementation and mode on the kernel lab page (JavaScript callers), and the engine's real
path, ``WasmKernel.top_k`` called from Python in the Pyodide worker (rpc ``kernel_bench``).
Writes bench/results/kernel_browser.json and kernel_browser.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
RESULTS = ROOT / "bench" / "results"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
CASES = [("wasm-simd", "exact"), ("wasm-simd", "int8"), ("wasm", "exact"), ("wasm", "int8"),
         ("js", "exact")]

JS_BENCH = """
async ([rows, dim, queries, cases]) => {
  const V = await import("./vectors.js");
  let a = 12345;
  const rnd = () => {  // mulberry32
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 * 2 - 1;
  };
  const unit = (n) => {
    const out = new Float32Array(n * dim);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < dim; j++) { const v = rnd(); out[i * dim + j] = v; s += v * v; }
      s = Math.sqrt(s);
      for (let j = 0; j < dim; j++) out[i * dim + j] /= s;
    }
    return out;
  };
  const data = unit(rows), qs = unit(queries);
  const ids = Array.from({ length: rows }, (_, i) => i);
  const out = [];
  for (const [impl, mode] of cases) {
    const index = await V.VectorIndex.create(dim, { implementation: impl });
    let t = performance.now();
    index.load(data, ids);
    const loadMs = performance.now() - t;
    for (let i = 0; i < 5; i++) index.search(qs.subarray(0, dim), 10, { mode });
    const times = [];
    for (let q = 0; q < queries; q++) {
      t = performance.now();
      index.search(qs.subarray(q * dim, (q + 1) * dim), 10, { mode });
      times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    out.push({ implementation: impl, mode, rows, load_ms: loadMs,
               p50_ms: times[times.length >> 1],
               p95_ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.95))],
               memory_bytes: index.memoryBytes });
    index.clear();
  }
  return out;
}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--dimension", type=int, default=384)
    args = parser.parse_args()
    server = AppServer(DIST, port=27688).start()
    results: list[dict] = []
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            context = p.chromium.launch_persistent_context(
                profile, executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            page = context.new_page()
            page.goto(server.url + "kernel/lab.html")
            page.wait_for_selector("#impl:not(:empty)")
            for rows in args.rows:
                for result in page.evaluate(JS_BENCH, [rows, args.dimension, args.queries,
                                                       CASES]):
                    result["caller"] = "js"
                    results.append(result)
                    print(result, flush=True)
            app = context.new_page()
            app.goto(server.url)
            app.wait_for_selector("#boot[data-boot-state='ready']", timeout=120_000)
            for rows in args.rows:
                for mode in ("exact", "int8"):
                    result = app.evaluate(
                        "(p) => window.omoide.call('kernel_bench', p)",
                        {"rows": rows, "dimension": args.dimension, "queries": args.queries,
                         "mode": mode})
                    result["caller"] = "python"
                    results.append(result)
                    print(result, flush=True)
            context.close()
    finally:
        server.stop()
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.machine(), "cpus": __import__("os").cpu_count(),
            "dimension": args.dimension, "k": 10, "queries": args.queries}
    (RESULTS / "kernel_browser.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    lines = [
        f"# Browser vector kernel, top-10, {args.dimension}-d, headless Chromium",
        "",
        "| caller | implementation | mode | rows | p50 ms | p95 ms | load ms | memory MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['caller']} | {r['implementation']} | {r['mode']} | {r['rows']:,} | "
            f"{r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {r['load_ms']:.0f} | "
            f"{r['memory_bytes'] / 2**20:.0f} |")
    (RESULTS / "kernel_browser.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
