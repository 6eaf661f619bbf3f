"""Recall counts in the browser (``omoide.browser.recall_stats``): a recall changes memory
only; a record written back stores its base count, so base + the ``recalls`` rows is always
the count the engine shows, whatever the order of recalls, flushes, loads and updates."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.browser.persistence import change_payload
from omoide.browser.recall_stats import RecallStats
from omoide.engine import MemoryEngine
from omoide.engine.listener import Journal
from tests.test_engine_embedder import HashingEmbedder


def engine_with(n: int) -> tuple[MemoryEngine, Journal, list[str]]:
    journal = Journal()
    engine = MemoryEngine(HashingEmbedder(8), listeners=[journal])
    ids = [m.id for m in engine.remember_many("c", [f"memory {i} about tea" for i in range(n)])]
    journal.changes.clear()
    return engine, journal, ids


def test_counting_a_recall_announces_no_change():
    engine, journal, _ = engine_with(3)
    stats = RecallStats()
    hits = engine.recall("c", "tea", mode="fulltext", touch=False)
    counted = stats.count(engine.stores["c"], hits, engine.now())
    assert journal.changes == []
    assert all(h.memory.recall_count == 1 for h in counted)
    assert all(engine.get("c", h.memory.id).recall_count == 1 for h in counted)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["recall", "update", "flush"]),
                          st.integers(0, 4)), max_size=30),
       st.lists(st.integers(0, 5), min_size=5, max_size=5))
def test_stored_base_plus_recall_rows_is_the_count(ops, loaded):
    """Simulates the worker: ``disk`` holds each record's stored count, ``rows`` the recalls
    table, ``pending`` the counts not flushed yet."""
    engine, journal, ids = engine_with(5)
    stats = RecallStats()
    store = engine.stores["c"]
    disk = dict.fromkeys(ids, 0)
    rows = dict(zip(ids, loaded, strict=True))
    pending = dict.fromkeys(ids, 0)
    # boot: the records come with their recalls rows folded in
    for i in ids:
        store.put(replace(engine.get("c", i), recall_count=rows[i]), None, emit=False)
    stats.loaded("c", rows)
    for op, n in ops:
        memory_id = ids[n]
        if op == "recall":
            hit = next(h for h in engine.recall("c", f"memory {n} about tea", mode="fulltext",
                                                k=5, touch=False) if h.memory.id == memory_id)
            stats.count(store, [hit], engine.now())
            pending[memory_id] += 1
        elif op == "update":
            engine.update("c", memory_id, importance=0.1 + n / 10)
            for change in journal.changes:
                payload = change_payload(change, stats)
                disk[change.memory_id] = payload["memory"]["recall_count"]
            journal.changes.clear()
        else:
            for i in ids:
                rows[i] += pending[i]
                pending[i] = 0
        for i in ids:
            assert disk[i] >= 0
            assert disk[i] + rows[i] + pending[i] == engine.get("c", i).recall_count
