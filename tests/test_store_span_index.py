"""A recall naming a time span ("last week", 先週) or a kind filter asks the store for the
matching ids (``ids_created_between``, ``ids_of_kinds``; ``count_by_kind`` for stats): both
come from indexes that every write keeps current (days, kinds), so a query scans no records.
By property: through any history of writes they answer what a scan of the live records
answers, for any span (one that cuts a day, spans many, is empty or unbounded)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.store import DAY_SECONDS
from omoide.kernels.pure_kernel import PureKernel
from tests.test_engine_embedder import HashingEmbedder
from tests.write_history import VERBS, apply_write

BASE = 1_700_000_000.0  # 2023-11-14, a few days either side
KINDS = ["fact", "preference", "pattern", "decision"]
times = st.floats(BASE - 5 * DAY_SECONDS, BASE + 5 * DAY_SECONDS, allow_nan=False)
writes = st.lists(st.tuples(st.sampled_from(VERBS),
                            st.integers(0, 10_000), times, st.sampled_from(KINDS)),
                  min_size=1, max_size=30)
spans = st.lists(st.tuples(st.floats(BASE - 7 * DAY_SECONDS, BASE + 7 * DAY_SECONDS),
                           st.floats(0, 12 * DAY_SECONDS)), min_size=1, max_size=6)


def scan(store, start: float, end: float) -> set[str]:
    return {i for i, m in store.records.items() if start <= m.created_at < end}


@settings(max_examples=60, deadline=None)
@given(writes, spans)
def test_the_indexes_answer_what_a_scan_of_the_records_answers(plan, queries):
    engine = MemoryEngine(HashingEmbedder(8), kernel=PureKernel)
    engine.remember("mika", "first note", at=BASE)
    store = engine.stores["mika"]
    store.ids_created_between(0.0, 1.0)  # the indexes exist before the writes: kept current
    store.ids_of_kinds(["fact"])
    for n, (verb, pick, at, kind) in enumerate(plan):
        apply_write(engine, "mika", verb, pick, remember={"text": f"note {n}", "at": at,
                                                          "kind": kind},
                    update={"text": f"changed {n}", "kind": kind})
    for start, length in queries:
        assert store.ids_created_between(start, start + length) == scan(store, start,
                                                                         start + length)
    assert store.ids_created_between(-math.inf, math.inf) == set(store.records)
    assert store.ids_created_between(BASE, BASE) == set()
    counted: dict[str, int] = {}
    for m in store.records.values():
        counted[m.kind] = counted.get(m.kind, 0) + 1
    assert store.count_by_kind() == dict(sorted(counted.items()))
    for n in range(len(KINDS) + 1):
        kinds = KINDS[:n]
        assert store.ids_of_kinds(kinds) == {i for i, m in store.records.items()
                                             if m.kind in kinds}


def test_a_span_reads_only_the_days_it_covers():
    engine = MemoryEngine(HashingEmbedder(8), kernel=PureKernel)
    for day in range(30):
        engine.remember("mika", f"day {day}", at=BASE + day * DAY_SECONDS)
    store = engine.stores["mika"]
    first = store.records[min(store.records, key=lambda i: store.records[i].created_at)]
    store.ids_created_between(0.0, 1.0)  # build the day index
    read = []

    class Watched(dict):
        def __getitem__(self, key):
            read.append(key)
            return super().__getitem__(key)

    store.records = Watched(store.records)
    # a span that cuts the first day and covers the second whole: only the cut day's
    # memories are read; the other 28 days are not touched
    got = store.ids_created_between(BASE + 1.0, BASE + 2 * DAY_SECONDS)
    assert got == {i for i, m in dict.items(store.records)
                   if BASE + 1.0 <= m.created_at < BASE + 2 * DAY_SECONDS}
    assert first.id not in got and len(got) == 1
    assert len(read) <= 2
