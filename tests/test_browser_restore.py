"""The browser's restore in slices (``omoide.browser.restore``) under CPython: the worker's
kernel stores are fakes holding rows, the records come as JSON slices as web/engine-worker.js
sends them. Whatever the slice size, the restored store is the same; bad rows are
quarantined and their vector rows leave the kernel; trashed memories keep their time."""

from __future__ import annotations

import gc
import json
import sys
import types
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.browser import restore, session
from omoide.engine import validate
from omoide.engine.bulk import acyclic_bulk
from omoide.engine.memory import Memory

STAMP = "omoide/all-MiniLM-L6-v2@q8#4"


class FakeStore:
    """The part of a kernel/vectors.js store ``WasmKernel`` uses at restore."""

    def __init__(self, dimension: int, rows: list[list[float]] | None = None) -> None:
        self.dimension = dimension
        self.rows = list(rows or [])
        self.implementation, self.memoryBytes = "fake", 0

    @property
    def count(self) -> int:
        return len(self.rows)

    def remove(self, slot: int) -> int:
        last = self.rows.pop()
        if slot == len(self.rows):
            return -1
        self.rows[slot] = last
        return slot

    def row(self, slot: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(to_py=lambda: array("f", self.rows[slot]))

    def append(self, flat: array) -> int:  # rows given one after another; the first's slot
        first = len(self.rows)
        d = self.dimension
        self.rows.extend(list(flat[at:at + d]) for at in range(0, len(flat), d))
        return first


@pytest.fixture(autouse=True)
def worker(monkeypatch):
    monkeypatch.setitem(sys.modules, "omoide_vectors",
                        types.SimpleNamespace(createStore=lambda d: FakeStore(d)))
    monkeypatch.setattr(session, "SESSION", None)
    session.start("omoide/all-MiniLM-L6-v2", "q8")
    yield
    restore.LOADING.clear()


def stored(n: int, trashed: frozenset[int] = frozenset()) -> list[dict]:
    """IndexedDB records as the worker hands them over (every field + trashed_at)."""
    return [{"id": f"m{i:04d}", "character_id": "aoi", "text": f"note {i} about tea",
             "kind": "fact", "type": "factual", "key": None, "importance": 0.5,
             "created_at": 1_700_000_000 + i, "updated_at": 1_700_000_000 + i,
             "last_recalled_at": None, "recall_count": i % 3, "model": STAMP, "meta": {},
             "context": None, "trashed_at": 1_800_000_000.0 if i in trashed else None}
            for i in range(n)]


def run(records: list[dict], slice_rows: int, recalls: dict | None = None) -> dict:
    live_ids = [r["id"] for r in records if r.get("trashed_at") is None]
    trash_ids = [r["id"] for r in records if r.get("trashed_at") is not None]
    header = {"character": "aoi", "stamp": STAMP, "model_id": "omoide/all-MiniLM-L6-v2",
              "dimension": 4, "live_ids": live_ids, "trash_ids": trash_ids, "missing": [],
              "recalls": recalls or {}, "corrupt_segments": 0, "loose": 0}
    restore.begin(json.dumps(header))
    for start in range(0, len(records), slice_rows):
        restore.add_records("aoi", json.dumps(records[start:start + slice_rows]))
    live = FakeStore(4, [[float(n), 0, 0, 0] for n in range(len(live_ids))])
    trash = FakeStore(4, [[0, float(n), 0, 0] for n in range(len(trash_ids))])
    return restore.finish("aoi", live, trash)


def snapshot() -> tuple:
    store = session.session().engine.stores["aoi"]
    return (sorted((m.id, repr(m.to_dict())) for m in store.records.values()),
            sorted((e.memory.id, e.trashed_at, tuple(e.vector)) for e in store.trash.values()),
            sorted(store.kernel.ids()), sorted(store.trash_kernel.ids()))


def test_a_restore_keeps_every_good_row_and_quarantines_the_bad_ones():
    records = stored(9, trashed=frozenset({2, 7}))
    records[4]["importance"] = 3.0  # live and bad
    records[7]["text"] = " "  # trashed and bad
    result = run(records, 4)
    assert result == {"character": "aoi", "loaded": 7, "repaired": 0, "corrupt_segments": 0,
                      "quarantined": 2, "trusted": 0}
    store = session.session().engine.stores["aoi"]
    assert sorted(store.records) == [f"m{i:04d}" for i in (0, 1, 3, 5, 6, 8)]
    assert list(store.trash) == ["m0002"]
    assert store.trash["m0002"].trashed_at == 1_800_000_000.0
    # the bad rows' vectors are not searchable without their memory
    assert "m0004" not in store.kernel.ids() and "m0007" not in store.trash_kernel.ids()
    assert len(store.kernel) == 6
    engine = session.session().engine
    assert {q["id"]: q["field"] for q in engine.quarantine.values()} == {
        "m0004": "importance", "m0007": "text"}
    # a restored memory is what the validator answers for its row, as a Memory
    row = stored(1)[0]
    assert store.records["m0000"] == Memory.from_dict(validate.record(row, stored=True))
    assert type(store.records["m0000"].created_at) is float


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.frozensets(st.integers(0, 29), max_size=6))
def test_the_slice_size_changes_nothing(slice_rows, trashed):
    records = stored(30, trashed)
    run(records, 30)
    whole = snapshot()
    run(stored(30, trashed), slice_rows)
    assert snapshot() == whole


def test_a_memory_from_its_checked_record():
    record = validate.record(stored(1)[0], stored=True)
    expected = Memory.from_dict(record)
    memory = Memory.from_record(record)
    assert memory == expected
    # what is left of the record is exactly the Memory's fields (the import's payload)
    assert record == expected.to_dict()
    # a dict that is not a checked record still makes a Memory, through from_dict
    odd = validate.record(stored(1)[0], stored=True) | {"extra": 1}
    assert Memory.from_record(odd) == expected


def test_acyclic_bulk_turns_the_collector_back_on_even_after_an_error():
    assert gc.isenabled()
    with pytest.raises(ValueError), acyclic_bulk():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with acyclic_bulk():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_a_packed_copy_overridden_later_is_skipped_and_recalls_are_folded_in():
    """A record pack's JSON comes as stored, with the ids a later copy overrides (``skip``);
    the override rows follow. The ``recalls`` table's counts are added to the records."""
    old = stored(6)
    newer = [dict(old[2], text="note 2, rewritten"), dict(old[4], trashed_at=1_900_000_000.0)]
    header = {"character": "aoi", "stamp": STAMP, "model_id": "omoide/all-MiniLM-L6-v2",
              "dimension": 4, "live_ids": [f"m{i:04d}" for i in (0, 1, 2, 3, 5)],
              "trash_ids": ["m0004"], "missing": [], "corrupt_segments": 0, "loose": 0,
              "recalls": {"m0001": 5, "m0002": 2}, "recalls_last": {"m0001": 1_750_000_000.0,
                                                                     "m0002": 1.0}}
    restore.begin(json.dumps(header))
    assert restore.add_records("aoi", json.dumps(old), json.dumps(["m0002", "m0004"])) == 4
    assert restore.add_records("aoi", json.dumps(newer)) == 2
    result = restore.finish("aoi", FakeStore(4, [[float(n), 0, 0, 0] for n in range(5)]),
                            FakeStore(4, [[0, 1.0, 0, 0]]))
    assert (result["loaded"], result["quarantined"]) == (6, 0)
    store = session.session().engine.stores["aoi"]
    assert store.records["m0002"].text == "note 2, rewritten"
    assert list(store.trash) == ["m0004"] and store.trash["m0004"].trashed_at == 1_900_000_000.0
    assert store.records["m0001"].recall_count == 1 + 5
    assert store.records["m0001"].last_recalled_at == 1_750_000_000.0
    assert store.records["m0002"].recall_count == 2 + 2
    assert store.records["m0002"].last_recalled_at == 1.0
    assert store.records["m0000"].recall_count == 0
