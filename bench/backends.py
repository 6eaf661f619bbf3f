"""Backends benchmark: what the storage layer costs, side by side in one run.

    PYTHONPATH=py:. .venv/bin/python bench/backends.py [--rows 1000 10000] [--queries 50]

Synthetic data (``recall_latency.Corpus``: normalized 384-d vectors, Zipf texts), one
character. Rows:

- workspace: ``remember_many`` through the engine onto SQLite (``BackendListener``, one
  transaction per memory), then ``open_workspace`` of the filled file (read every record and
  vector, rebuild the engine) and ``recall`` on the reopened engine (hybrid, touch=False);
- in-memory engine: the same ``remember_many`` with no persistence, for comparison;
- SQLiteBackend directly: get, list (page of 100), BM25 search (scans the character);
- HttpBackend -> reference server on loopback (``python -m omoide.server``, same SQLite
  layout): create, get, list, search, health — the cost of the HTTP hop;
- mirroring: ``BackendManager.pump`` of N queued updates to the HTTP fallback.

Writes bench/results/backends.json and .md; p50/p95 in ms.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    PrecomputedEmbedder,
    machine_info,
    md_table,
    percentile_ms,
    write_results,
)
from bench.recall_latency import DIMENSION, Corpus  # noqa: E402
from omoide.backends.http import HttpBackend, HttpConfig  # noqa: E402
from omoide.backends.manager import BackendManager  # noqa: E402
from omoide.backends.sqlite import SQLiteBackend  # noqa: E402
from omoide.engine import MemoryEngine  # noqa: E402
from omoide.server import serve  # noqa: E402
from omoide.workspace import open_workspace  # noqa: E402

PORT = 27699
KEY = "bench-key-0123456789abcdef"
CHUNK = 1_000


def embedder_for(corpus: Corpus) -> PrecomputedEmbedder:
    embedder = PrecomputedEmbedder("bench/synthetic", "fp32", DIMENSION,
                                   "bench/synthetic@fp32#384")
    embedder.add_queries(corpus.query_texts, corpus.query_vectors)
    return embedder


def fill(engine: MemoryEngine, embedder: PrecomputedEmbedder, corpus: Corpus) -> float:
    started = time.perf_counter()
    for at in range(0, len(corpus.texts), CHUNK):
        embedder.stage(corpus.vectors[at : at + CHUNK])
        engine.remember_many("bench", corpus.texts[at : at + CHUNK])
    return time.perf_counter() - started


def timed(call, repeats: int) -> dict[str, float]:
    samples = []
    for i in range(repeats):
        started = time.perf_counter()
        call(i)
        samples.append(time.perf_counter() - started)
    return {"p50": percentile_ms(samples, 50), "p95": percentile_ms(samples, 95)}


def workspace_rows(corpus: Corpus, folder: Path, queries: int) -> dict:
    embedder = embedder_for(corpus)
    memory_only = fill(MemoryEngine(embedder), embedder, corpus)
    ws = open_workspace(folder / "bench.db", embedder=embedder)
    persisted = fill(ws.engine, embedder, corpus)
    ws.close()
    started = time.perf_counter()
    ws = open_workspace(folder / "bench.db", embedder=embedder)
    reopen = time.perf_counter() - started
    recall = timed(lambda i: ws.engine.recall("bench", corpus.query_texts[i], k=10,
                                              touch=False), queries)
    ws.close()
    return {"fill_memory_s": memory_only, "fill_sqlite_s": persisted, "reopen_s": reopen,
            "recall_after_reopen": recall,
            "file_mib": (folder / "bench.db").stat().st_size / 2**20}


def backend_rows(backend, ids: list[str], queries: list[str], repeats: int) -> dict:
    rng = random.Random(3)
    return {
        "get": timed(lambda i: backend.get(rng.choice(ids)), repeats),
        "list_100": timed(lambda i: backend.list(character_id="bench", limit=100,
                                                 offset=rng.randrange(len(ids))), repeats),
        "search_bm25": timed(lambda i: backend.search(queries[i % len(queries)],
                                                      character_id="bench", k=10),
                             max(5, repeats // 10)),
        "health": timed(lambda i: backend.health(), repeats),
    }


def http_rows(db: Path, ids: list[str], queries: list[str], repeats: int) -> dict:
    server = serve(str(db), "127.0.0.1", PORT, api_key=KEY)  # as users run it: with a key
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        http = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key=KEY))
        rows = backend_rows(http, ids, queries, repeats)
        source = SQLiteBackend(db)
        sample = [source.get(i, with_vector=True) for i in ids[:repeats]]
        fresh = [r | {"id": r["id"][:-4] + "ZZZZ"} for r in sample]
        rows["create_with_vector"] = timed(lambda i: http.create(fresh[i]), len(fresh))
        mirror_target = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key=KEY),
                                    name="mirror")
        manager = BackendManager(source, [mirror_target])
        for r in fresh:
            manager.mirror({"op": "update", "id": r["id"], "fields": {"importance": 0.7}})
        started = time.perf_counter()
        done = manager.pump()
        rows["mirror_pump_per_op_ms"] = (time.perf_counter() - started) * 1000 / max(done, 1)
        source.shutdown()
        return rows
    finally:
        server.shutdown()
        server.server_close()


def run(size: int, queries: int) -> dict:
    corpus = Corpus(size, queries, seed=11)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        row = {"rows": size, "workspace": workspace_rows(corpus, folder, queries)}
        sqlite = SQLiteBackend(folder / "bench.db")
        ids = [r["id"] for r in sqlite.list(character_id="bench", limit=size)["items"]]
        row["sqlite"] = backend_rows(sqlite, ids, corpus.query_texts, queries)
        sqlite.shutdown()
        row["http"] = http_rows(folder / "bench.db", ids, corpus.query_texts, queries)
    return row


def markdown(payload: dict) -> str:
    m = payload["machine"]
    out = [f"# Backends, {DIMENSION}-d synthetic memories, one character\n",
           f"{m['date']}, commit {str(m['git_commit'])[:7]}, {m['cpu']} ({m['cpus']} CPUs), "
           f"Python {m['python']}; p50 / p95 ms.\n"]

    def pp(d: dict) -> str:
        return f"{d['p50']:.2f} / {d['p95']:.2f}"

    rows = [[f"{r['rows']:,}", f"{r['workspace']['fill_memory_s']:.2f}",
             f"{r['workspace']['fill_sqlite_s']:.2f}", f"{r['workspace']['reopen_s']:.2f}",
             pp(r["workspace"]["recall_after_reopen"]),
             f"{r['workspace']['file_mib']:.1f}"] for r in payload["results"]]
    out.append(md_table(["rows", "fill, engine only s", "fill, engine + SQLite s",
                         "reopen workspace s", "recall after reopen", "file MiB"], rows))
    out.append("")
    rows = []
    for r in payload["results"]:
        for verb in ("get", "list_100", "search_bm25", "health"):
            rows.append([f"{r['rows']:,}", verb, pp(r["sqlite"][verb]), pp(r["http"][verb])])
        rows.append([f"{r['rows']:,}", "create (with vector)", "-",
                     pp(r["http"]["create_with_vector"])])
        rows.append([f"{r['rows']:,}", "mirror pump, per op", "-",
                     f"{r['http']['mirror_pump_per_op_ms']:.2f}"])
    out.append(md_table(["rows", "verb", "SQLiteBackend", "HttpBackend -> reference server"],
                        rows))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args(argv)
    payload = {"machine": machine_info(), "results": [run(n, args.queries) for n in args.rows]}
    json_path, md_path = write_results("backends", payload, markdown(payload))
    print(markdown(payload))
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
