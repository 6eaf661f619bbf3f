"""The Python side of a browser restore and import under CPython, profiled (not run by tests).

    PYTHONPATH=.:py .venv/bin/python bench/restore_profile.py [--rows 100000] [--profile]

Feeds ``browser.restore`` (what the worker runs at boot) and ``exchange.check_import``
(what ``import_data`` runs) the rows the browser would: bench/orama_browser.py's synthetic
set (ids ``m0000000``.., 12-24 Zipf words over a 5,000-word vocabulary, kind fact), as
IndexedDB record packs (every ``Memory`` field + ``trashed_at``, 4,096 a pack, with their
CRC-32) and as an export file. The restore runs twice: from checked packs (the engine's
own, as an import or compaction writes them: records made without the validator) and from
unchecked ones (a migrated database: every record validated). Also runs under Pyodide in
node (the browser's interpreter, without a browser): ``node
bench/restore_profile_pyodide.mjs [TREE] --rows N``. The kernel stores are fakes that hold a
row count (the vectors are not Python's work: the worker appends them to WebAssembly
memory). Prints ms per step and us per row; ``--profile`` adds cProfile's top functions.
Peak Python memory (``tracemalloc``) is measured in a separate pass.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import random
import sys
import time
import tracemalloc
import types
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "py")]

from omoide.browser import restore, session, text_blocks  # noqa: E402
from omoide.engine import MemoryEngine, exchange, validate  # noqa: E402
from omoide.engine.analyzer import analyze  # noqa: E402
from tests.test_engine_embedder import HashingEmbedder  # noqa: E402

CHARACTER = "bench"
STAMP = "omoide/all-MiniLM-L6-v2@q8#384"
PACK_ROWS = 4_096  # PACK_ROWS of web/store/packs.js


class FakeStore:
    """What ``WasmKernel`` needs of a kernel/vectors.js store, without vectors."""

    def __init__(self, dimension: int, count: int) -> None:
        self.dimension, self.count = dimension, count
        self.implementation, self.memoryBytes = "fake", 0

    def remove(self, slot: int) -> int:
        self.count -= 1
        return -1 if slot == self.count else slot


# the worker's kernel module, for the stores the engine makes itself (empty ones)
# (createTextScorer None: full-text scored by PureScorer, as a plain-JavaScript build does)
sys.modules["omoide_vectors"] = types.SimpleNamespace(createStore=lambda d: FakeStore(d, 0),
                                                      createTextScorer=lambda: None)


def texts(rows: int) -> list[str]:
    rng = random.Random(1)
    words = ["the", "and", "to", "of", "a", "i", "in", "was", "it", "that"]
    letters = "abcdefghijklmnopqrstuvwxyz"
    while len(words) < 5000:
        words.append("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    weights = [1 / (i + 1) for i in range(len(words))]
    return [" ".join(rng.choices(words, weights, k=rng.randint(12, 24))) for _ in range(rows)]


def stored_rows(rows: int) -> list[dict]:
    """IndexedDB records as web/store/db.js ``recordSlices`` hands them over (a pack's JSON)."""
    now = 1_700_000_000
    return [{"id": f"m{n:07d}", "character_id": CHARACTER, "text": t, "kind": "fact",
             "type": "factual", "key": None, "importance": 0.5, "created_at": now + n,
             "updated_at": now + n, "last_recalled_at": None, "recall_count": 0,
             "model": STAMP, "meta": {}, "context": None, "trashed_at": None}
            for n, t in enumerate(texts(rows))]


def worker_payload(rows: list[dict], checked: bool = True, lines: bool = False
                   ) -> tuple[str, list, int]:
    """What the worker hands Python (JavaScript's work, not timed): a header, record packs
    of PACK_ROWS with their CRC. ``checked``: packs the engine wrote (their records skip the
    validator when the CRC holds); else packs of a migrated database (all validated).
    ``lines``: checked packs as web/store/packs.js writes them now (a head line of ids and
    keys, a line per record: made on use)."""
    header = {"character": CHARACTER, "stamp": STAMP, "model_id": "omoide/all-MiniLM-L6-v2",
              "dimension": 384, "live_ids": [r["id"] for r in rows], "trash_ids": [],
              "missing": [], "recalls": {}, "corrupt_segments": 0, "loose": 0}
    packs = []
    for start in range(0, len(rows), PACK_ROWS):
        chunk = rows[start:start + PACK_ROWS]
        if lines:
            head = json.dumps([[r["id"] for r in chunk], [r["key"] for r in chunk]])
            text = "\n".join([head, *map(json.dumps, chunk)])
        else:
            text = json.dumps(chunk)
        data = text.encode()  # the worker sends each text's UTF-8 bytes
        packs.append((data, zlib.crc32(data)))
    pack_format = (restore.PACK_LINES if lines else restore.PACK_FORMAT) if checked else 0
    return json.dumps(header), packs, pack_format


def restore_once(payload: tuple[str, list, int]) -> dict:
    """One character restored the way the worker does it: a header, then record packs."""
    header, packs, pack_format = payload
    session.SESSION = None
    session.start("omoide/all-MiniLM-L6-v2", "q8")
    restore.begin(header)
    rows = len(json.loads(header)["live_ids"])
    for number, (text, crc) in enumerate(packs):
        restore.add_records(CHARACTER, text, "", pack_format, crc, number)
    return restore.finish(CHARACTER, FakeStore(384, rows), FakeStore(384, 0))


def touch_all(payload: tuple[str, list, int]) -> int:
    """A restore, then every memory read once (what the BM25 pass after ready does)."""
    restore_once(payload)
    store = session.session().engine.stores[CHARACTER]
    return sum(len(m.text) for m in store.records.values())


def text_index_after_restore(payload: tuple[str, list, int]) -> None:
    """The full-text index after a restore, completed as the first full-text recall does:
    every text parsed and analyzed (no stored postings), then, on a second restore of the
    same packs, the blocks the first one made (``text_blocks.take``: what the worker
    persists) absorbed instead; the same hits for a few queries, or it raises."""
    restore_once(payload)
    store = session.session().engine.stores[CHARACTER]
    started = time.perf_counter()
    index = store.text_index
    built = time.perf_counter() - started
    queries = [analyze(q) for q in ("the cat and tea", "river train", "zqx")] + [
        index.term_frequencies(next(iter(store.records))).keys()]
    want = [index.search(list(q), 10) for q in queries]
    started = time.perf_counter()
    blocks = text_blocks.take()
    taken = time.perf_counter() - started
    restore_once(payload)
    started = time.perf_counter()
    absorbed = sum(text_blocks.absorb(CHARACTER, pack, data) for _, pack, _, data in blocks)
    index = session.session().engine.stores[CHARACTER].text_index
    absorb = time.perf_counter() - started
    got = [index.search(list(q), 10) for q in queries]
    if [(r.ids, r.scores) for r in got] != [(r.ids, r.scores) for r in want]:
        raise AssertionError("the absorbed index answers otherwise than a full build")
    size = sum(len(data) for *_, data in blocks)
    print(f"full-text index after a restore: analyzed {built * 1000:,.0f} ms; blocks made "
          f"and serialized {taken * 1000:,.0f} ms ({len(blocks)} blocks, {size / 2**20:.1f} "
          f"MiB); {absorbed} blocks absorbed {absorb * 1000:,.0f} ms")


EMBEDDER = HashingEmbedder(dimension=384)


def export_file(rows: list[dict]) -> str:
    """An export file as bench/orama.js ``exportChunk`` makes it (vectors taken out)."""
    memories = [{k: r[k] for k in ("id", "text", "kind", "type", "key", "importance",
                                   "created_at", "updated_at")} for r in rows]
    return json.dumps({"format": exchange.EXPORT_FORMAT, "version": 1, "characters": [
        {"id": CHARACTER, "stamp": EMBEDDER.stamp, "memories": memories}]})


def import_once(text: str) -> int:
    """``import_data``'s check of the whole file (parse included: Python's work)."""
    engine = MemoryEngine(EMBEDDER)
    data = json.loads(text)
    ids = [m["id"] for m in data["characters"][0]["memories"]]
    pack = exchange.PackedVectors(ids, 384)
    plan = exchange.check_import(  # as the browser's import_data: the text read once
        engine, data, {CHARACTER: pack},
        surrogate_free=validate.json_text_holds_no_lone_surrogate(text))
    return len(plan.characters[0].records)


def timed(fn, *args) -> float:
    gc.collect()
    started = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--text-index", action="store_true",
                        help="only the full-text index after a restore, with and without "
                             "stored postings blocks")
    args = parser.parse_args()
    rows = stored_rows(args.rows)
    n = args.rows
    if args.text_index:
        text_index_after_restore(worker_payload(rows, lines=True))
        return
    cases = (("restore, checked packs of lines (records made on use)", restore_once,
              worker_payload(rows, lines=True)),
             ("the same, then every record read once", touch_all,
              worker_payload(rows, lines=True)),
             ("restore, checked packs of one JSON", restore_once, worker_payload(rows)),
             ("restore, every record validated", restore_once, worker_payload(rows, False)),
             ("import check", import_once, export_file(rows)))
    for name, fn, given in cases:
        best = min(timed(fn, given) for _ in range(3))
        print(f"{name}: {best:,.0f} ms for {n:,} rows ({best * 1000 / n:.1f} us a row)")
    for name, _, payload in (cases[0], cases[2]):
        tracemalloc.start()
        restore_once(worker_payload([]))  # the session and engine themselves
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        restore_once(payload)
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"{name}: memory ({sys.platform}, tracemalloc): peak "
              f"{(peak - base) / 2**20:.1f} MiB, held after {(held - base) / 2**20:.1f} MiB")
    if args.profile:
        for name, fn, given in cases:
            profiler = cProfile.Profile()
            profiler.runcall(fn, given)
            print(f"\n-- {name}")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
