"""Two CPython costs that grew with the data, measured side by side (session 18).

    PYTHONPATH=py:. .venv/bin/python bench/cpython_costs.py [--name NAME]

1. **A write with a backup configured** (``open_workspace(fallbacks=[...])``, the CLI's
   ``--backup``): ``remember_many`` of N memories into a workspace whose backup server is
   unreachable (its ops stay queued), against the same without a backup. Each op was one
   save of the whole queue file (fsync'd), so N ops cost O(N^2); a verb's ops are now one
   save. Run it at two commits (``git worktree`` + ``PYTHONPATH``) to compare.
2. **A hybrid recall whose query term every memory holds** (a character's own name, a topic
   it always talks about): BM25's loop over postings in Python (``PureScorer``) against
   numpy (``NumpyScorer``, CPython's default now), same engine, same queries, one run.

Hashing embedder (no model: the costs measured are the engine's), one process, best of
``--rounds`` by p50. Writes ``bench/results/NAME.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "py"), str(ROOT)]

from omoide.backends.http import HttpBackend, HttpConfig  # noqa: E402
from omoide.engine import MemoryEngine  # noqa: E402
from omoide.workspace import open_workspace  # noqa: E402
from tests.test_engine_embedder import HashingEmbedder  # noqa: E402


def items(n: int) -> list[dict]:
    return [{"text": f"Alice noted item {i}: tea at {i % 24}:00 with cake number {i * 7}"}
            for i in range(n)]


def timed_import(n: int, backup: bool) -> float:
    with tempfile.TemporaryDirectory() as folder:
        fallbacks = [HttpBackend(HttpConfig("http://127.0.0.1:9", timeout=1),
                                 name="backup")] if backup else []
        ws = open_workspace(Path(folder) / "w.db", embedder=HashingEmbedder(), fallbacks=fallbacks)
        if ws.manager is not None:
            ws.manager.stop()  # nothing is sent: the queue's cost alone
        started = time.perf_counter()
        ws.engine.remember_many("alice", items(n))
        elapsed = time.perf_counter() - started
        ws.close()
    return elapsed


def recall_p50(engine: MemoryEngine, queries: list[str]) -> float:
    times = []
    for query in queries:
        started = time.perf_counter()
        engine.recall("alice", query, k=10, touch=False)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def scorers(n: int, rounds: int) -> dict[str, float]:
    from omoide.engine.bm25 import PURE_SCORER
    from omoide.kernels.numpy_bm25 import NumpyScorer

    out = {}
    queries = [f"Alice tea cake {i}" for i in range(30)]
    engines = {"pure python": MemoryEngine(HashingEmbedder(), bm25_scorer=PURE_SCORER),
               "numpy": MemoryEngine(HashingEmbedder(), bm25_scorer=NumpyScorer())}
    for engine in engines.values():
        for start in range(0, n, 5_000):
            engine.remember_many("alice", items(n)[start:start + 5_000])
        engine.recall("alice", "warm up", k=10, touch=False)
    for name, engine in engines.items():
        out[name] = min(recall_p50(engine, queries) for _ in range(rounds))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="cpython_costs")
    parser.add_argument("--imports", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--recall-sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() \
        else None
    result: dict = {"commit": commit, "code": str(Path(__file__).resolve().parents[1]),
                    "load_before": load, "imports": [], "recall": []}
    for n in args.imports:
        row = {"memories": n, "without_backup_s": timed_import(n, False),
               "with_backup_s": timed_import(n, True)}
        result["imports"].append(row)
        print(row, flush=True)
    try:
        import omoide.kernels.numpy_bm25  # noqa: F401 - absent before this session
        for n in args.recall_sizes:
            row = {"memories": n, **{f"hybrid_p50_ms_{k}": v for k, v in
                                     scorers(n, args.rounds).items()}}
            result["recall"].append(row)
            print(row, flush=True)
    except ImportError:
        pass
    result["load_after"] = Path("/proc/loadavg").read_text().split()[:3] \
        if Path("/proc/loadavg").exists() else None
    out = ROOT / "bench" / "results" / args.name
    out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# {args.name} (commit {commit}, load {load} -> {result['load_after']})", "",
             "| memories | remember_many, no backup | with a backup configured |",
             "|---|---|---|"]
    lines += [f"| {r['memories']:,} | {r['without_backup_s']:.2f} s | {r['with_backup_s']:.2f} s |"
              for r in result["imports"]]
    if result["recall"]:
        lines += ["", "| memories (all hold the query's terms) | hybrid p50, BM25 in Python |"
                  " hybrid p50, BM25 in numpy |", "|---|---|---|"]
        lines += [f"| {r['memories']:,} | {r['hybrid_p50_ms_pure python']:.1f} ms | "
                  f"{r['hybrid_p50_ms_numpy']:.1f} ms |" for r in result["recall"]]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
