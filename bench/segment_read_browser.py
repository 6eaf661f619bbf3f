"""How long IndexedDB takes to hand back a character's vectors by segment size (one headless
Chromium, not run by the tests).

    PYTHONPATH=.:py .venv/bin/python bench/segment_read_browser.py [--rows 102400]
        [--sizes 256 1024 4096] [--rounds 2] [--name segment_read]

For each size, one database holds ``rows`` random 384-d float32 rows in segments of that
many rows (each value ``{character, stamp, seg, ids, data}`` as web/store/db.js writes
them); after a browser restart the page reads them back with the query boot makes
(``[character+stamp]``, ``toArray``) and the time is reported, sizes alternated per round.
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

from bench.orama_browser import launch, load_average, results_log
from buildtools.serve import AppServer

ROOT = Path(__file__).resolve().parent.parent
DIST = Path(os.environ.get("OMOIDE_DIST", ROOT / "dist"))
RESULTS = ROOT / "bench" / "results"
SCHEMA = '{ segments: "[character+stamp+seg], [character+stamp]" }'

WRITE = """async ([rows, size, name]) => {
  const Dexie = (await import("/vendor/dexie/dexie.mjs")).default;
  const db = new Dexie(name);
  db.version(1).stores(SCHEMA);
  await db.open();
  const d = 384;
  const block = new Float32Array(size * d);
  for (let i = 0; i < block.length; i++) block[i] = Math.random() - 0.5;
  for (let s = 0; s < rows / size; s++) {
    const ids = Array.from({ length: size }, (_, i) => `m${s}_${i}`);
    await db.segments.put({ character: "c", stamp: "st", seg: s, ids, data: block.slice() });
  }
  db.close();
  return rows / size;
}""".replace("SCHEMA", SCHEMA)

READ = """async ([name]) => {
  const Dexie = (await import("/vendor/dexie/dexie.mjs")).default;
  const db = new Dexie(name);
  db.version(1).stores(SCHEMA);
  await db.open();
  const started = performance.now();
  const values = await db.segments.where("[character+stamp]").equals(["c", "st"]).toArray();
  const ms = performance.now() - started;
  const rows = values.reduce((sum, v) => sum + v.ids.length, 0);
  db.close();
  return { values: values.length, rows, ms };
}""".replace("SCHEMA", SCHEMA)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=102_400)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--name", default="segment_read")
    args = parser.parse_args()
    out, record = results_log(args.name)
    server = AppServer(DIST, port=27693).start()
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            for size in args.sizes:
                context = launch(p, profile)
                page = context.new_page()
                page.goto(server.url + "bench/index.html")
                page.evaluate(WRITE, [args.rows, size, f"segments{size}"])
                context.close()
            for n in range(args.rounds):
                for size in args.sizes:
                    context = launch(p, profile)  # a restart: nothing of the write cached
                    page = context.new_page()
                    page.goto(server.url + "bench/index.html")
                    record({"what": "read", "size": size, "round": n,
                            **page.evaluate(READ, [f"segments{size}"])})
                    context.close()
    finally:
        server.stop()
    out["meta"]["load_average_end"] = load_average()
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = [f"# IndexedDB read of {args.rows:,} vectors (384-d float32) by segment size", "",
             f"{out['meta']['date']}, commit {out['meta']['git_commit']}, "
             f"{out['meta']['cpus']} vCPUs; load average at start "
             f"{out['meta']['load_average_start']}, at end {out['meta']['load_average_end']}.",
             "", "| rows a segment | values | read ms (each round) | median ms |",
             "|---|---|---|---|"]
    for size in args.sizes:
        runs = [r for r in out["results"] if r["size"] == size]
        times = [r["ms"] for r in runs]
        each = " / ".join(f"{t:,.0f}" for t in times)
        lines.append(f"| {size:,} | {runs[0]['values']:,} | {each} | "
                     f"{statistics.median(times):,.0f} |")
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
