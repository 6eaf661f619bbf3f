"""Records of a checked record pack made without the validator at restore
(``omoide.browser.restore.trusted_memories``), under CPython.

A pack the engine wrote from records it had checked (``format == PACK_FORMAT``) whose CRC-32
holds is restored straight into Memory objects; any other pack, a pack whose text changed on
disk, and any row that does not fit a Memory go through the record validator (a bad row is
quarantined). For every record the engine can write, both ways give the same store."""

from __future__ import annotations

import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.browser import restore, session
from omoide.engine import validate
from omoide.engine.memory import KINDS, Memory
from tests.test_browser_restore import STAMP, FakeStore, stored, worker  # noqa: F401

MAX_TIME = validate.MAX_TIME


def js_json(records: list[dict]) -> str:
    """JSON as JavaScript's ``JSON.stringify`` writes the records (web/store/packs.js): a
    whole float is written as an integer."""

    def js(value):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, dict):
            return {k: js(v) for k, v in value.items()}
        if isinstance(value, list):
            return [js(v) for v in value]
        return value

    return json.dumps([js(r) for r in records], ensure_ascii=False)


def header(records: list[dict], recalls: dict | None = None, lasts: dict | None = None) -> dict:
    return {"character": "aoi", "stamp": STAMP, "model_id": "omoide/all-MiniLM-L6-v2",
            "dimension": 4, "missing": [], "corrupt_segments": 0, "loose": 0,
            "live_ids": [r["id"] for r in records if r.get("trashed_at") is None],
            "trash_ids": [r["id"] for r in records if r.get("trashed_at") is not None],
            "recalls": recalls or {}, "recalls_last": lasts or {}}


def restore_pack(records: list[dict], text: str, pack_format: int, crc: int,
                 recalls: dict | None = None, lasts: dict | None = None) -> dict:
    head = header(records, recalls, lasts)
    restore.begin(json.dumps(head))
    restore.add_records("aoi", text, "", pack_format, crc)
    live = FakeStore(4, [[float(n), 1, 0, 0] for n in range(len(head["live_ids"]))])
    trash = FakeStore(4, [[1, float(n), 0, 0] for n in range(len(head["trash_ids"]))])
    return restore.finish("aoi", live, trash)


def typed(value):
    """A value with the types of everything in it (1 == 1.0, but an export tells them apart)."""
    if isinstance(value, dict):
        return tuple((k, typed(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(typed(v) for v in value)
    return type(value).__name__, value


def state() -> tuple:
    s = session.session()
    store = s.engine.stores["aoi"]
    return (typed([m.to_dict() for m in sorted(store.records.values(), key=lambda m: m.id)]),
            typed([(e.memory.to_dict(), e.trashed_at, list(e.vector))
                   for e in sorted(store.trash.values(), key=lambda e: e.memory.id)]),
            sorted(store.kernel.ids()), sorted(store.trash_kernel.ids()),
            sorted((i, q["field"]) for i, q in s.engine.quarantine.items()))


def both_ways(records: list[dict], **recalls) -> tuple[tuple, tuple, dict, dict]:
    """The store restored from a checked pack with its CRC and from the same text validated
    (format 0), with each answer."""
    text = js_json(records)
    checked = restore_pack(records, text, restore.PACK_FORMAT, zlib.crc32(text.encode()),
                           **recalls)
    fast = state()
    session.session().engine.quarantine.clear()
    validated = restore_pack(records, text, 0, 0, **recalls)
    return fast, state(), checked, validated


times = st.one_of(st.integers(0, int(MAX_TIME)), st.floats(0, MAX_TIME))
words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=30)
meta = st.one_of(st.just({}), st.dictionaries(st.text(max_size=5), st.one_of(
    st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
    st.booleans(), st.none()), max_size=3))


@st.composite
def engine_records(draw) -> list[dict]:
    """Records as the engine holds and writes them: any valid input, as the validator
    answers it (``Memory`` fields + ``trashed_at``), ids distinct."""
    n = draw(st.integers(1, 8))
    out = []
    for i in range(n):
        raw = {"id": f"m{i}-{draw(st.from_regex(r'[A-Za-z0-9_-]{0,8}', fullmatch=True))}",
               "character_id": "aoi", "text": draw(words.filter(str.strip)),
               "kind": draw(st.sampled_from(KINDS)), "key": draw(st.none() | words),
               "importance": draw(st.one_of(st.floats(0, 1), st.integers(0, 1))),
               "created_at": draw(times), "updated_at": draw(times),
               "last_recalled_at": draw(st.none() | times),
               "recall_count": draw(st.integers(0, 10**6)), "model": STAMP,
               "meta": draw(meta), "context": draw(st.none() | words),
               "trashed_at": draw(st.none() | times)}
        if draw(st.booleans()):
            raw |= {"conversation": draw(words), "turn": draw(st.none() | st.integers(0, 99))}
        try:
            record = validate.record(raw, stored=True)
        except Exception:  # noqa: BLE001 - a blank key or context: not a record to write
            continue
        at = record["trashed_at"]
        out.append(Memory.from_record(record).to_dict() | {"trashed_at": at})
    return out


@settings(max_examples=60, deadline=None)
@given(engine_records())
def test_a_checked_pack_restores_what_the_validator_would(records):
    fast, validated, checked_answer, validated_answer = both_ways(records)
    assert fast == validated
    assert checked_answer["trusted"] == len(records) and validated_answer["trusted"] == 0
    assert checked_answer["quarantined"] == validated_answer["quarantined"] == 0


def draw_recall_counts(data, records: list[dict]) -> tuple[dict, dict]:
    """Recall counts and last-recalled times for some of the records (the stats store's)."""
    recalled = data.draw(st.lists(st.sampled_from([r["id"] for r in records]), unique=True))
    recalls = {i: data.draw(st.integers(1, 50)) for i in recalled}
    lasts = {i: data.draw(st.floats(0, MAX_TIME)) for i in recalled}
    return recalls, lasts


@settings(max_examples=30, deadline=None)
@given(engine_records(), st.data())
def test_counted_recalls_are_folded_in_the_same_either_way(records, data):
    recalls, lasts = draw_recall_counts(data, records)
    fast, validated, _, _ = both_ways(records, recalls=recalls, lasts=lasts)
    assert fast == validated


def test_a_pack_changed_on_disk_is_validated_and_its_bad_row_quarantined():
    records = stored(6, trashed=frozenset({3}))
    text = js_json(records)
    crc = zlib.crc32(text.encode())
    # the same length, still JSON: only the CRC tells the change
    damaged = text.replace('"importance": 0.5', '"importance": 7.5', 1)
    assert damaged != text
    answer = restore_pack(records, damaged, restore.PACK_FORMAT, crc)
    assert (answer["trusted"], answer["quarantined"], answer["loaded"]) == (0, 1, 5)
    store = session.session().engine.stores["aoi"]
    assert "m0000" not in store.records and "m0000" not in store.kernel.ids()
    assert session.session().engine.quarantine["m0000"]["field"] == "importance"


@pytest.mark.parametrize("pack_format", [0, restore.PACK_COLUMNS + 1])
def test_a_pack_of_another_format_is_validated(pack_format):
    records = stored(4)
    records[1]["importance"] = 3.0
    text = js_json(records)
    answer = restore_pack(records, text, pack_format, zlib.crc32(text.encode()))
    assert (answer["trusted"], answer["quarantined"], answer["loaded"]) == (0, 1, 3)


def test_a_row_that_is_no_memory_goes_to_the_validator_even_in_an_intact_pack():
    records = stored(5)
    del records[1]["type"]  # the validator fills it in from the kind
    records[2]["vector"] = [1.0, 0.0]  # a field a Memory has not: the validator names it
    records[3]["unknown"] = 1
    text = js_json(records)
    answer = restore_pack(records, text, restore.PACK_FORMAT, zlib.crc32(text.encode()))
    assert (answer["quarantined"], answer["loaded"]) == (2, 3)
    store = session.session().engine.stores["aoi"]
    assert store.records["m0001"].type == "factual"
    assert {i: q["field"] for i, q in session.session().engine.quarantine.items()} == {
        "m0002": "vector", "m0003": "unknown"}
    assert sorted(store.kernel.ids()) == ["m0000", "m0001", "m0004"]
