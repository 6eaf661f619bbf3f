"""Several processes on one workspace: what the change feed costs (``backends/follower.py``).

    PYTHONPATH=py:. .venv/bin/python bench/processes.py [--rows 1000 10000] [--repeats 200]

Synthetic data (``recall_latency.Corpus``, precomputed 384-d vectors: no model time), one
character, two ``open_workspace`` on one file (two SQLite connections, as two processes):

- fill: ``remember_many`` through the workspace, with the change-feed triggers and with
  them dropped (ablation on a second file; alternated rounds, median): the feed's cost per
  written memory;
- SQLite create: ``SQLiteBackend.create`` with and without the triggers, no engine (the
  feed's own cost with less noise around it);
- idle check: ``engine.get`` with the follower installed vs without it, when nobody else
  wrote (the price of ``PRAGMA data_version`` before every verb);
- catch-up: workspace A updates N memories, then B's next ``engine.get`` takes them over;
  it should follow N, not the number of rows.

Writes bench/results/processes.json and .md; p50/p95 in ms.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.backends import CHUNK, embedder_for, fill, timed  # noqa: E402
from bench.common import machine_info, md_table, write_results  # noqa: E402
from bench.recall_latency import Corpus  # noqa: E402
from omoide.backends.sqlite import SQLiteBackend  # noqa: E402
from omoide.workspace import open_workspace  # noqa: E402

TRIGGERS = ("memories_inserted", "memories_changed", "memories_deleted")
CATCH_UP = (1, 10, 100)


def fill_time(corpus: Corpus, db: Path, *, feed: bool) -> float:
    embedder = embedder_for(corpus)
    ws = open_workspace(db, embedder=embedder)
    if not feed:
        for name in TRIGGERS:
            ws.backend.db.execute(f"DROP TRIGGER {name}")
    seconds = fill(ws.engine, embedder, corpus)
    ws.close()
    return seconds


def create_time(corpus: Corpus, db: Path, *, feed: bool, count: int) -> float:
    """``SQLiteBackend.create`` of ``count`` records (one transaction each), no engine."""
    backend = SQLiteBackend(db)
    backend.initialize()
    if not feed:
        for name in TRIGGERS:
            backend.db.execute(f"DROP TRIGGER {name}")
    records = [{"id": f"M{i:08d}", "character_id": "bench", "text": corpus.texts[i],
                "model": "bench/synthetic@fp32#384", "vector": corpus.vectors[i].tolist()}
               for i in range(count)]
    started = time.perf_counter()
    for record in records:
        backend.create(record)
    seconds = time.perf_counter() - started
    backend.shutdown()
    return seconds


def rows_for(size: int, folder: Path, repeats: int, rounds: int) -> dict:
    corpus = Corpus(size, 10, seed=7)
    with_feed, without = [], []
    for round_ in range(rounds):  # alternated, median: the machine's load drifts
        with_feed.append(fill_time(corpus, folder / f"feed-{size}-{round_}.db", feed=True))
        without.append(fill_time(corpus, folder / f"plain-{size}-{round_}.db", feed=False))
    with_feed, without = statistics.median(with_feed), statistics.median(without)
    creates = min(size, 2000)
    create_feed, create_plain = [], []
    for round_ in range(rounds):
        create_feed.append(create_time(corpus, folder / f"cf-{size}-{round_}.db", feed=True,
                                       count=creates))
        create_plain.append(create_time(corpus, folder / f"cp-{size}-{round_}.db",
                                        feed=False, count=creates))
    create_ms = (statistics.median(create_feed) / creates * 1000,
                 statistics.median(create_plain) / creates * 1000)
    db = folder / f"feed-{size}-0.db"
    a = open_workspace(db, embedder=embedder_for(corpus))
    b = open_workspace(db, embedder=embedder_for(corpus))
    ids = [m.id for m in a.engine.memories("bench")]
    probe = ids[0]
    checked = timed(lambda i: b.engine.get("bench", probe), repeats)
    saved = list(b.engine.refreshers)
    b.engine.refreshers.clear()
    unchecked = timed(lambda i: b.engine.get("bench", probe), repeats)
    b.engine.refreshers.extend(saved)
    catch_up = {}
    for n in CATCH_UP:
        samples = []
        for round_ in range(5):
            for j in range(n):
                a.engine.update("bench", ids[(round_ * n + j) % len(ids)],
                                importance=(round_ + 1) / 10)
            started = time.perf_counter()
            b.engine.get("bench", probe)
            samples.append(time.perf_counter() - started)
        catch_up[n] = sorted(samples)[len(samples) // 2] * 1000
    a.close()
    b.close()
    return {"rows": size, "fill_feed_s": with_feed, "fill_no_feed_s": without,
            "feed_ms_per_memory": (with_feed - without) / size * 1000,
            "create_ms_feed": create_ms[0], "create_ms_no_feed": create_ms[1],
            "get_checked": checked, "get_unchecked": unchecked,
            "catch_up_ms": catch_up, "chunk": CHUNK, "fill_rounds": rounds}


def markdown(results: list[dict], info: dict) -> str:
    header = ["rows", "fill with feed / without", "feed per memory (ms)",
              "SQLite create with feed / without (ms)",
              "get p50: checked / unchecked (ms)",
              *[f"catch up {n} change(s) (ms)" for n in CATCH_UP]]
    table = [[f"{r['rows']:,}", f"{r['fill_feed_s']:.2f} s / {r['fill_no_feed_s']:.2f} s",
              r["feed_ms_per_memory"],
              f"{r['create_ms_feed']:.3f} / {r['create_ms_no_feed']:.3f}",
              f"{r['get_checked']['p50']:.4f} / {r['get_unchecked']['p50']:.4f}",
              *[r["catch_up_ms"][n] for n in CATCH_UP]] for r in results]
    return (f"# Several processes on one workspace\n\n{info['cpu']}, {info['date']}\n\n"
            + md_table(header, table) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="fills per variant (median)")
    args = parser.parse_args()
    info = machine_info()
    with tempfile.TemporaryDirectory() as folder:
        results = [rows_for(size, Path(folder), args.repeats, args.rounds)
                   for size in args.rows]
    md = markdown(results, info)
    json_path, _ = write_results("processes", {"machine": info, "results": results,
                                               "sqlite": sqlite3.sqlite_version}, md)
    print(md)
    print(f"wrote {json_path}")


if __name__ == "__main__":
    main()
