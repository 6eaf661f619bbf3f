"""An import checked a column at a time: ``validate.records`` and
``exchange._Section.check_at_once`` give exactly what the row-by-row checks give (the same
records, with the same types, the same plan) or the same error naming the same row and field,
for any file: good rows, bad rows, unusual but valid rows, ids held by this character,
another character or a quarantined row."""

from __future__ import annotations

import copy
import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine, exchange, validate
from omoide.engine.memory import KINDS
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder
from tests.test_records import BAD

DIM = 8

# changes a row may get: bad ones (each named by the validator) and unusual valid ones
ODD_BUT_GOOD = [
    {"meta": {"source": "chat", "n": 2}},
    {"context": "   "},  # blank: stored as null
    {"context": "the day before"},
    {"conversation": "c1", "turn": 3},
    {"conversation": "c1"},
    {"created_at": 5, "updated_at": 6, "importance": 1},  # whole numbers
    {"last_recalled_at": 7},
    {"key": "colour"},
    {"type": None},  # removed below: the type comes from the kind
    {"created_at": datetime(2024, 1, 1, tzinfo=UTC)},  # a datetime: the per-field path
    {"recall_count": 4},
    {"kind": "diary", "type": "episodic"},
]
BAD_CHANGES = [change for _, change in BAD if "vector" not in change and "model" not in change
               and "character_id" not in change]
BAD_CHANGES += [{"turn": 2}, {"kind": "diary"} | {"type": "factual"}, {"id": 5},
                {"trashed_at": 9.0}, {"vector": [0.5] * DIM}]


def row(n: int, change: dict | None = None) -> dict:
    out = {"id": f"m{n:04d}", "text": f"note {n} about tea", "kind": "fact", "type": "factual",
           "key": None, "importance": 0.5, "created_at": 1_700_000_000.0 + n,
           "updated_at": 1_700_000_000.0 + n, "meta": {}}
    out |= change or {}
    if out.get("type", "") is None:
        del out["type"]
    return out


def typed(value):
    if isinstance(value, dict):
        return tuple((k, typed(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(typed(v) for v in value)
    return type(value).__name__, value


def outcome(fn):
    try:
        return "ok", typed(fn())
    except OmoideError as e:
        return "error", e.code, str(e), e.fields.get("field"), e.fields.get("memory_id")


rows_strategy = st.lists(st.tuples(
    st.sampled_from(["good", "odd", "bad"]), st.integers(0, len(ODD_BUT_GOOD) - 1),
    st.integers(0, len(BAD_CHANGES) - 1)), min_size=0, max_size=12)


def make_rows(spec) -> list[dict]:
    out = []
    for n, (what, odd, bad) in enumerate(spec):
        change = {"good": None, "odd": ODD_BUT_GOOD[odd], "bad": BAD_CHANGES[bad]}[what]
        out.append(row(n, copy.deepcopy(change)) | {"character_id": "aoi",
                                                     "model": f"t/m@f32#{DIM}"})
    return out


@settings(max_examples=200, deadline=None)
@given(rows_strategy, st.booleans())
def test_records_at_once_equal_record_by_record(spec, stored):
    rows = make_rows(spec)
    before = copy.deepcopy(rows)
    at_once = outcome(lambda: validate.records(rows, dimension=DIM, stored=stored))
    assert rows == before  # the caller's rows are never changed
    one_by_one = outcome(lambda: [validate.record(r, dimension=DIM, stored=stored)
                                  for r in rows])
    assert at_once == one_by_one


def test_a_non_finite_number_anywhere_sends_the_batch_row_by_row():
    for bad in (math.nan, math.inf, -math.inf, 10**400):
        rows = [row(0) | {"character_id": "a", "model": ""},
                row(1, {"created_at": bad}) | {"character_id": "a", "model": ""}]
        with pytest.raises(OmoideError) as err:
            validate.records(rows)
        assert err.value.fields["field"] == "created_at"
        assert err.value.fields["memory_id"] == "m0001"


# -- the whole check of a file ----------------------------------------------------------------


def engine_with_state() -> tuple[MemoryEngine, dict[str, str]]:
    """A store for ``aoi`` holding one live and one trashed memory, ``ren`` holding one, and
    a quarantined row; returns the engine and those ids."""
    e = MemoryEngine(HashingEmbedder(DIM))
    held = e.remember("aoi", "held note 1").id
    trashed = e.remember("aoi", "held note 2").id
    e.forget("aoi", trashed)
    owned = e.remember("ren", "held note 3").id
    e.quarantine["Q0004"] = {"id": "Q0004", "field": "text"}
    return e, {"held": held, "trashed": trashed, "owned": owned, "quarantined": "Q0004"}


def export(spec, trash_spec, stamp: str, with_vectors: bool, duplicate: bool) -> dict:
    memories = make_rows(spec)
    trash = [r | {"trashed_at": 1_800_000_000.0} for r in make_rows(trash_spec)]
    for r in trash:
        if isinstance(r["id"], str):
            r["id"] = "t" + r["id"][1:]
    for r in memories + trash:
        r.pop("character_id")
        r.pop("model")
    if duplicate and memories:
        trash.append(memories[0] | {"trashed_at": 1.0})
    character = {"id": "aoi", "name": "Aoi", "stamp": stamp, "memories": memories,
                 "trash": trash}
    if with_vectors:
        character["vectors"] = {r["id"]: [0.25] * DIM for r in memories + trash
                                if isinstance(r.get("id"), str)}
    return {"format": "omoide-export", "version": 2, "characters": [character]}


def plan_of(engine: MemoryEngine, data: dict, packed) -> object:
    plan = exchange.check_import(engine, data, packed)
    return [(c.id, c.name, c.records, c.skipped, c.packed_rows) for c in plan.characters]


@settings(max_examples=150, deadline=None)
@given(rows_strategy, rows_strategy, st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from(["held", "trashed", "owned", "quarantined", None]))
def test_a_file_checked_at_once_gives_the_plan_or_error_of_one_by_one(
        spec, trash_spec, same_stamp, vectors_given, duplicate, collide):
    e, ids = engine_with_state()
    stamp = e.embedder.stamp if same_stamp else f"other/model@f32#{DIM}"
    data = export(spec, trash_spec, stamp, vectors_given, duplicate)
    memories = data["characters"][0]["memories"]
    if collide and memories:
        memories[-1]["id"] = ids[collide]
    packed = None
    if not vectors_given:
        ids = [r["id"] for r in memories + data["characters"][0]["trash"]
               if isinstance(r.get("id"), str)]
        packed = {"aoi": exchange.PackedVectors(sorted(set(ids)), DIM)}
    at_once = outcome(lambda: plan_of(e, copy.deepcopy(data), packed))
    original = exchange._Section.check_at_once
    try:
        exchange._Section.check_at_once = lambda self, section, rows: False
        one_by_one = outcome(lambda: plan_of(e, copy.deepcopy(data), packed))
    finally:
        exchange._Section.check_at_once = original
    assert at_once == one_by_one


def test_the_at_once_path_is_the_one_taken_for_a_plain_file():
    e, _ = engine_with_state()
    data = export([("good", 0, 0)] * 5, [("good", 0, 0)] * 2, e.embedder.stamp, True, False)
    calls = []
    original = exchange._Section.check_one_by_one
    try:
        exchange._Section.check_one_by_one = lambda self, *a: calls.append(a)
        plan = exchange.check_import(e, data)
    finally:
        exchange._Section.check_one_by_one = original
    assert calls == []
    [c] = plan.characters
    assert len(c.records) == 7 and all(type(r["created_at"]) is float for r in c.records)
    assert [r["kind"] for r in c.records] == [KINDS[2]] * 7  # "fact"
