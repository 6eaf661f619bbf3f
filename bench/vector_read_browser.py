"""Where a restore's vector bytes could come from: IndexedDB values of several sizes against
one file in the origin-private file system (OPFS), read after a browser restart, in ONE
headless Chromium run (not run by the tests).

    PYTHONPATH=.:py .venv/bin/python bench/vector_read_browser.py [--rows 100000]

Issue 12's restore at 100,000 memories is bound by reading 154 MB of vector segments from
IndexedDB (BENCHMARKS.md, "Browser storage v2"). This measures the read alone, on the same
bytes (rows x 384 float32), each after a fresh start of the browser on the same profile:

- IndexedDB: one ``getAll`` of values ``{key, ids, data}`` holding 256 rows each (the
  segment size of web/store/db.js), 1,024 or 4,096;
- OPFS: ``getFile().arrayBuffer()`` on the page, and a ``FileSystemSyncAccessHandle`` read
  in a worker straight into a ``WebAssembly.Memory`` (where the kernel keeps its rows).

The order of the cases rotates between rounds. Writes bench/results/<name>.json and .md with
the commit and the load average.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from bench.common import md_table
from bench.orama_browser import launch, results_log
from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
RESULTS = ROOT / "bench" / "results"
PORT = 27689
DIMENSION = 384
VALUE_ROWS = (256, 1024, 4096)

HELPERS = """
window.VR = (() => {
  const D = DIMENSION;
  const open = (name) => new Promise((res, rej) => {
    const r = indexedDB.open(name, 1);
    r.onupgradeneeded = () => r.result.createObjectStore("s", { keyPath: "k" });
    r.onsuccess = () => res(r.result);
    r.onerror = () => rej(r.error);
  });
  const done = (t) => new Promise((res, rej) => {
    t.oncomplete = res;
    t.onerror = () => rej(t.error);
  });
  const rows = (n, seed) => {  // filled sparsely: the bytes' values do not matter to a read
    const data = new Float32Array(n * D);
    for (let i = seed % 97; i < data.length; i += 97) data[i] = (i % 13) / 13;
    return data;
  };
  return {
    async fillIdb(name, total, per) {
      const db = await open(name);
      for (let at = 0; at < total; at += per * 16) {
        const t = db.transaction("s", "readwrite");
        for (let b = at; b < Math.min(total, at + per * 16); b += per) {
          const n = Math.min(per, total - b);
          t.objectStore("s").put({ k: b, ids: Array.from({ length: n }, (_, i) => "m" + (b + i)),
                                   data: rows(n, b).buffer });
        }
        await done(t);
      }
      db.close();
    },
    async fillOpfs(total) {
      const root = await navigator.storage.getDirectory();
      const w = await (await root.getFileHandle("vectors.bin", { create: true })).createWritable();
      for (let at = 0; at < total; at += 4096) await w.write(rows(Math.min(4096, total - at), at));
      await w.close();
    },
    async readIdb(name) {
      const t0 = performance.now();
      const db = await open(name);
      const t = db.transaction("s", "readonly");
      const req = t.objectStore("s").getAll();
      await done(t);
      let bytes = 0;
      for (const v of req.result) bytes += v.data.byteLength;
      db.close();
      return { ms: performance.now() - t0, values: req.result.length, bytes };
    },
    async readOpfsPage() {
      const t0 = performance.now();
      const root = await navigator.storage.getDirectory();
      const file = await (await root.getFileHandle("vectors.bin")).getFile();
      const buf = await file.arrayBuffer();
      return { ms: performance.now() - t0, values: 1, bytes: buf.byteLength };
    },
    readOpfsWorker() {
      const source = `onmessage = async () => {
        const t0 = performance.now();
        const root = await navigator.storage.getDirectory();
        const handle = await (await root.getFileHandle("vectors.bin")).createSyncAccessHandle();
        const size = handle.getSize();
        const memory = new WebAssembly.Memory({ initial: Math.ceil(size / 65536) + 1 });
        const bytes = handle.read(new Uint8Array(memory.buffer, 0, size), { at: 0 });
        handle.close();
        postMessage({ ms: performance.now() - t0, values: 1, bytes });
      }`;
      return new Promise((res, rej) => {
        const w = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
        w.onmessage = (e) => { w.terminate(); res(e.data); };
        w.onerror = (e) => rej(new Error(e.message));
        w.postMessage(0);
      });
    },
  };
})();
""".replace("DIMENSION", str(DIMENSION))


def cases() -> list[tuple[str, str]]:
    return ([(f"IndexedDB, {n:,} rows a value", f"VR.readIdb('v{n}')") for n in VALUE_ROWS]
            + [("OPFS, getFile().arrayBuffer() on the page", "VR.readOpfsPage()"),
               ("OPFS, sync access handle in a worker, into WebAssembly memory",
                "VR.readOpfsWorker()")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--name", default="vector_read_browser")
    args = parser.parse_args()
    out, record = results_log(args.name, rows=args.rows, rounds=args.rounds)
    server = AppServer(DIST, port=PORT).start()
    url = server.url + "bench/index.html"
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            context = launch(p, profile)
            page = context.new_page()
            page.goto(url)
            page.evaluate(HELPERS)
            for n in VALUE_ROWS:
                page.evaluate(f"VR.fillIdb('v{n}', {args.rows}, {n})")
            page.evaluate(f"VR.fillOpfs({args.rows})")
            context.close()
            order = cases()
            for round_ in range(args.rounds):
                context = launch(p, profile)  # a fresh start: nothing of the fill in memory
                page = context.new_page()
                page.goto(url)
                page.evaluate(HELPERS)
                for name, expression in order:
                    got = page.evaluate(expression)
                    record({"case": name, "round": round_, "ms": got["ms"],
                            "values": got["values"], "mb": got["bytes"] / 1e6})
                context.close()
                order = order[1:] + order[:1]
    finally:
        server.stop()
    rows = []
    for name, _ in cases():
        times = [r["ms"] for r in out["results"] if r["case"] == name]
        first = next(r for r in out["results"] if r["case"] == name)
        rows.append([name, first["values"], f"{first['mb']:.0f}",
                     f"{statistics.median(times):.0f}", f"{min(times):.0f}",
                     f"{max(times):.0f}",
                     " / ".join(f"{r['load_average'][0]:.1f}" for r in out["results"]
                                if r["case"] == name)])
    meta = out["meta"]
    (RESULTS / f"{args.name}.md").write_text(
        f"# Vector bytes after a browser restart (bench/vector_read_browser.py)\n\n"
        f"{meta['date']}, git {meta['git_commit']}, {meta['cpu']} ({meta['cpus']} CPUs, "
        f"shared), {args.rows:,} rows x {DIMENSION} float32, {args.rounds} restarts, the "
        "order of the cases rotating.\n\n"
        + md_table(["read", "values", "MB", "median ms", "min ms", "max ms", "load (1 min)"],
                   rows))


if __name__ == "__main__":
    main()
