"""Records of an intact checked pack of lines made on use at restore
(``omoide.browser.packed.PackedMemory``, ``restore.add_packed``), under CPython.

A pack of lines (``PACK_LINES``: a head line ``[ids, keys]``, one JSON record per line, one
CRC-32) restores without parsing its records: each memory holds its id, key and line until a
field is read. For every record the engine can write, the store it gives, once read, is the
store the validator's answer gives; a pack whose text changed on disk is validated line by
line."""

from __future__ import annotations

import json
import math
import re
import zlib
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from omoide.browser import listing, restore, session
from omoide.browser.packed import (
    RECORD_FIELDS,
    PackedMemory,
    column_lines,
    line_record,
    packed,
)
from omoide.engine.analyzer import analyze
from omoide.engine.memory import Memory
from omoide.engine.neighbourhood import positions
from omoide.errors import OmoideError
from omoide.governance.tiers import tier_of
from tests.test_browser_restore import STAMP, FakeStore, stored, worker  # noqa: F401
from tests.test_restore_trusted_packs import (
    draw_recall_counts,
    engine_records,
    js_json,
    restore_pack,
    state,
)

ROOT = Path(__file__).resolve().parent.parent


def js_head(records: list[dict], columns: bool = False) -> str:
    """A pack's head line: ``[ids, keys]``, as packs were written before the head columns, or
    (``columns``) ``[ids, keys, kinds, created_at]`` as web/store/packs.js writes it now
    (JSON.stringify: a whole-number time written as an integer)."""
    head = [[r["id"] for r in records], [r.get("key") for r in records]]
    if columns:
        head += [[r["kind"] for r in records], [r["created_at"] for r in records]]
    return js_json(head)


def js_lines(records: list[dict], head_columns: bool = False) -> str:
    """A pack's text as web/store/packs.js ``makePack`` writes checked records: the head
    line, then each record as ``JSON.stringify`` writes it."""
    return "\n".join([js_head(records, head_columns),
                      *(js_json([r])[1:-1] for r in records)])


def js_columns(records: list[dict], head_columns: bool = False) -> str:
    """A pack's text in columns (``COLUMNS`` of web/store/packs.js): the head line, then each
    record's values in ``RECORD_FIELDS`` order, as ``JSON.stringify`` writes the array."""
    assert all(set(r) == set(RECORD_FIELDS) for r in records)  # else packs.js writes lines
    return "\n".join([js_head(records, head_columns),
                      *(js_json([[r[f] for f in RECORD_FIELDS]])[1:-1] for r in records)])


def py_columns(records: list[dict]) -> str:
    """A pack's text in columns as an import writes it: the worker's head line, then the lines
    Python handed over (``packed.column_lines``, stored as they are)."""
    head = json.dumps([[r["id"] for r in records], [r.get("key") for r in records]])
    memories = [{f: r[f] for f in RECORD_FIELDS[:-1]} for r in records]
    return "\n".join([head, *column_lines(memories, [r["trashed_at"] for r in records])])


def lines_restore(records: list[dict], text: str | None = None, crc: int | None = None,
                  columns: bool = False, **recalls) -> dict:
    write = js_columns if columns else js_lines
    text = write(records) if text is None else text
    crc = zlib.crc32(write(records).encode()) if crc is None else crc
    return restore_pack(records, text, restore.PACK_COLUMNS if columns else restore.PACK_LINES,
                        crc, **recalls)


def unread(store) -> list[str]:
    return sorted(i for i, m in store.records.items()
                  if isinstance(m, PackedMemory) and not m.loaded)


@pytest.mark.parametrize("columns", [False, True], ids=["lines", "columns"])
@settings(max_examples=60, deadline=None)
@given(engine_records())
def test_a_pack_of_lines_restores_what_the_validator_would(columns, records):
    answer = lines_restore(records, columns=columns)
    store = session.session().engine.stores["aoi"]
    live = [r["id"] for r in records if r["trashed_at"] is None]
    assert unread(store) == sorted(live)  # nothing parsed yet; the trashed made at once
    assert {i: store.records[i].key for i in live} == {
        r["id"]: r["key"] for r in records if r["trashed_at"] is None}
    made_on_use = state()  # reads every field
    session.session().engine.quarantine.clear()
    validated = restore_pack(records, js_json(records), 0, 0)
    assert made_on_use == state()
    assert answer["trusted"] == len(records) and validated["trusted"] == 0
    assert answer["quarantined"] == validated["quarantined"] == 0
    assert answer["loaded"] == validated["loaded"] == len(records)


@settings(max_examples=60, deadline=None)
@given(engine_records())
def test_the_lines_an_import_hands_over_restore_what_the_validator_would(records):
    """An import's records reach IndexedDB as the lines Python wrote (``column_lines``), not
    as JSON.stringify writes them (3.0 stays 3.0, non-ASCII is not escaped): the pack they
    make restores unparsed, and once read it is the store the validator's answer makes."""
    text = py_columns(records)
    answer = lines_restore(records, text=text, crc=zlib.crc32(text.encode()), columns=True)
    store = session.session().engine.stores["aoi"]
    live = [r["id"] for r in records if r["trashed_at"] is None]
    assert unread(store) == sorted(live)
    made_on_use = state()
    session.session().engine.quarantine.clear()
    restore_pack(records, json.dumps(records), 0, 0)  # the same values, validated
    assert made_on_use == state()
    assert answer["trusted"] == len(records) and answer["quarantined"] == 0


class CountedParses:
    """Counts the lines parsed (``packed.line_record``) while in effect."""

    def __init__(self, monkeypatch) -> None:
        import omoide.browser.packed as packed_module

        self.lines: list[bytes] = []
        real = packed_module.line_record
        monkeypatch.setattr(packed_module, "line_record",
                            lambda line: self.lines.append(line) or real(line))


@pytest.mark.parametrize("columns", [False, True], ids=["lines", "columns"])
@settings(max_examples=40, deadline=None)
@given(engine_records())
def test_kinds_and_times_in_the_head_line_build_the_indexes_without_a_parse(columns, records):
    # the memories tab's first page (newest first), the kind counts, a recall naming a time
    # span: each read every memory's line once after a start (~2 s at 100,000 in the browser)
    write = js_columns if columns else js_lines
    text = write(records, head_columns=True)
    lines_restore(records, text=text, crc=zlib.crc32(text.encode()), columns=columns)
    store = session.session().engine.stores["aoi"]
    live = sorted(r["id"] for r in records if r["trashed_at"] is None)
    with pytest.MonkeyPatch.context() as patch:
        parses = CountedParses(patch)
        answers = (store.count_by_kind(), sorted(store.ids_created_between(0, 1.7e9)),
                   store.newest_first(0, 50, None))
        for memory_id in live:
            memory = store.records[memory_id]
            expected = records_by_id(records)[memory_id]
            assert (memory.peek("kind"), memory.peek("created_at")) == (
                expected["kind"], expected["created_at"])
            assert type(memory.peek("created_at")) is float
        assert parses.lines == [] and unread(store) == live
    made_on_use = state()
    session.session().engine.quarantine.clear()
    restore_pack(records, js_json(records), 0, 0)  # the validator's store
    store = session.session().engine.stores["aoi"]
    assert answers == (store.count_by_kind(), sorted(store.ids_created_between(0, 1.7e9)),
                       store.newest_first(0, 50, None))
    assert made_on_use == state()


def peek_head_fields(memory: PackedMemory) -> None:
    assert memory.peek("kind") == "fact" and type(memory.peek("created_at")) is float


def set_the_stamp(memory: PackedMemory) -> None:
    memory.model = STAMP  # the restore's ``finish`` sets every memory's model


@pytest.mark.parametrize("touch", [peek_head_fields, set_the_stamp])
def test_a_field_read_or_set_at_restore_leaves_the_memory_as_small_as_it_was(touch):
    # reading ``__dict__`` gave each instance a dict of its own (Python 3.11 on; under
    # Pyodide's 3.14 the first start after an import grew the heap 108 -> 130 MiB)
    import gc
    import tracemalloc

    from omoide.browser.packed import packed_with_head

    line = json.dumps(["x"] * len(RECORD_FIELDS)).encode()
    memories = [packed_with_head(f"m{i}", None, line, "fact", float(i)) for i in range(2000)]
    gc.collect()
    tracemalloc.start()
    try:
        for memory in memories:
            touch(memory)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 8 * 1024, held  # a dict per memory: ~125 KiB for 2,000
    assert not any(m.loaded for m in memories)


@pytest.mark.parametrize("form", ["lines", "columns", "head", "validated"])
def test_a_record_stamped_before_a_re_vectorization_restores_with_the_stores_stamp(form):
    # the worker's re-vectorization moved every record to the new segments with its old
    # `model`: after a restart the audit listed every memory as off-stamp
    old = "omoide/multilingual-e5-small@q8#4"
    records = [r | {"model": old, "conversation": None, "turn": None}
               for r in stored(6, trashed=frozenset({4}))]
    columns = form != "lines"
    text = (js_columns if columns else js_lines)(records, head_columns=form == "head")
    crc = zlib.crc32(text.encode()) if form != "validated" else 0  # 0: not trusted
    lines_restore(records, text=text, crc=crc, columns=columns)
    store = session.session().engine.stores["aoi"]
    assert store.stamp == STAMP
    live = [store.records[r["id"]] for r in records if r["trashed_at"] is None]
    peeked = [(m.peek("model"), m.peek_many(("model", "turn"))[0]) for m in live]
    assert peeked == [(STAMP, STAMP)] * 5
    assert unread(store) == ([] if form == "validated" else sorted(m.id for m in live))
    assert {m.model for m in live} == {STAMP}  # made from their lines
    assert store.trash["m0004"].memory.model == STAMP
    # the audit's off-stamp test (governance/audit.py), over every memory
    assert [m.id for m in store.records.values() if m.model != store.stamp] == []


def test_a_stamp_set_on_an_unmade_memory_survives_its_load():
    # swap_index (a re-vectorization) sets every memory's model in place; an unmade memory's
    # load then wrote its line's old model back over it
    record = stored(1)[0]
    del record["trashed_at"]
    memory = packed(record["id"], record["key"], js_json([record])[1:-1].encode())
    memory.model = "omoide/multilingual-e5-small@q8#4"
    assert memory.text == record["text"] and memory.loaded
    assert memory.model == "omoide/multilingual-e5-small@q8#4"


@pytest.mark.parametrize("bad", [
    lambda h: [*h[:2], h[2] + ["fact"], h[3]],  # one kind too many
    lambda h: [*h[:2], ["gossip"] * len(h[2]), h[3]],  # not a kind
    lambda h: [*h[:2], h[2], ["yesterday"] * len(h[3])],  # a time not a number
    lambda h: [*h[:2], h[2], [-1] * len(h[3])],  # a time before 1970
    lambda h: [*h[:2], h[2], [1e300] * len(h[3])],  # beyond the year 9999
    lambda h: [*h[:2], [["fact"]] * len(h[2]), h[3]],  # a kind not even hashable
], ids=["length", "kind", "type", "negative", "far", "unhashable"])
def test_head_columns_that_do_not_pass_are_read_from_the_lines(bad, monkeypatch):
    records = [r | {"conversation": None, "turn": None} for r in stored(3)]
    head = json.loads(js_head(records, columns=True))
    lines = js_columns(records).split("\n")[1:]
    text = "\n".join([json.dumps(bad(head)), *lines])
    answer = lines_restore(records, text=text, crc=zlib.crc32(text.encode()), columns=True)
    assert answer["trusted"] == len(records) and answer["quarantined"] == 0
    store = session.session().engine.stores["aoi"]
    parses = CountedParses(monkeypatch)
    for memory_id in unread(store):
        expected = records_by_id(records)[memory_id]
        assert store.records[memory_id].peek("kind") == expected["kind"]
    assert len(parses.lines) == len(unread(store)) > 0  # read from each line


def test_a_head_of_another_shape_means_every_line_is_validated():
    records = [r | {"conversation": None, "turn": None} for r in stored(3)]
    head = json.loads(js_head(records, columns=True))
    text = "\n".join([json.dumps(head[:3]), *js_columns(records).split("\n")[1:]])
    answer = lines_restore(records, text=text, crc=zlib.crc32(text.encode()), columns=True)
    assert (answer["trusted"], answer["quarantined"], answer["loaded"]) == (0, 0, 3)


def test_a_line_holding_a_lone_surrogate_is_written_escaped():
    # valid in a Python or JS string, not as UTF-8 text: escaped as JSON.stringify escapes it
    record = {f: None for f in RECORD_FIELDS[:-1]} | {
        "id": "m1", "character_id": "aoi", "text": "tea \udc80 緑茶\u2028", "kind": "fact",
        "type": "factual", "importance": 0.5, "created_at": 3.0, "updated_at": 3.0,
        "recall_count": 0, "model": STAMP, "meta": {}}
    plain = record | {"id": "m2", "text": "plain 緑茶"}
    lines = column_lines([record, plain], [None, 7.0])
    assert "\\udc80" in lines[0] and "緑茶" in lines[1]  # only the line that needs it
    for line, source, at in zip(lines, (record, plain), (None, 7.0), strict=True):
        assert "\n" not in line
        assert line_record(line.encode()) == source | {"trashed_at": at}


@pytest.mark.parametrize("columns", [False, True], ids=["lines", "columns"])
@settings(max_examples=30, deadline=None)
@given(engine_records(), st.data())
def test_counted_recalls_are_folded_in_from_a_pack_of_lines(columns, records, data):
    recalls, lasts = draw_recall_counts(data, records)
    recalled = list(recalls)
    lines_restore(records, columns=columns, recalls=recalls, lasts=lasts)
    store = session.session().engine.stores["aoi"]
    assert not set(unread(store)) & set(recalled)  # their counts are folded in at once
    made_on_use = state()
    validated = restore_pack(records, js_json(records), 0, 0, recalls=recalls, lasts=lasts)
    assert made_on_use == state() and validated["quarantined"] == 0


def store_indexes(store) -> tuple:
    """What the store's indexes over every memory answer: kinds, days, newest first, tiers,
    conversation positions."""
    return (store.count_by_kind(), sorted(store.ids_created_between(-math.inf, math.inf)),
            sorted(store.ids_created_between(0, 1.7e9)), store.newest_first(0, 50, None),
            {t: sorted(ids) for t, ids in store.index("tier", tier_of).items()},
            {p: sorted(ids) for p, ids in positions(store).items()})


@pytest.mark.parametrize("columns", [False, True], ids=["lines", "columns"])
@settings(max_examples=40, deadline=None)
@given(engine_records())
def test_the_stores_indexes_read_fields_without_making_the_memories(columns, records):
    # the memories tab's first page (newest first), a kind or tier filter, a recall about a
    # time or a conversation build an index over every memory: at 100,000 memories, making
    # each one (every field its own object) grew the browser's heap by ~40 MiB
    assume(records)  # every drawn record may be refused by the validator: none to read
    lines_restore(records, columns=columns)
    store = session.session().engine.stores["aoi"]
    live = sorted(r["id"] for r in records if r["trashed_at"] is None)
    got = store_indexes(store)
    assert unread(store) == live  # none made
    # the memories tab's text filter reads every text: only the page's rows are made
    needle = records[0]["text"].split()[0]
    page = listing.memories_page("aoi", text=needle, limit=2)
    shown = [m["id"] for m in page["items"]]
    assert unread(store) == sorted(set(live) - set(shown))
    for memory_id in live:
        for name in ("kind", "created_at", "meta", "conversation", "turn"):
            assert store.records[memory_id].peek(name) == records_by_id(records)[memory_id][
                name]
    assert unread(store) == sorted(set(live) - set(shown))
    session.session().engine.quarantine.clear()
    restore_pack(records, js_json(records), 0, 0)  # made by the validator
    assert store_indexes(session.session().engine.stores["aoi"]) == got
    assert listing.memories_page("aoi", text=needle, limit=2) == page


def records_by_id(records: list[dict]) -> dict[str, dict]:
    return {r["id"]: r for r in records}


def test_a_peeked_float_is_a_float_and_an_odd_line_makes_the_memory():
    record = stored(1)[0]
    del record["trashed_at"]
    memory = packed(record["id"], record["key"], js_json([record])[1:-1].encode())
    assert type(memory.peek("created_at")) is float and not memory.loaded
    # a line written before a field with a default: the default, as the made memory has it
    older = {k: v for k, v in record.items()
             if k not in ("conversation", "turn", "meta", "context", "recall_count")}
    memory = packed(record["id"], record["key"], js_json([older])[1:-1].encode())
    peeked = {f: memory.peek(f) for f in ("conversation", "turn", "meta", "context",
                                          "recall_count", "kind")}
    assert not memory.loaded
    assert peeked == {f: getattr(memory, f) for f in peeked} and memory.loaded
    odd = packed(record["id"], None, js_json([record | {"mood": "calm"}])[1:-1].encode())
    with pytest.raises(OmoideError):  # not a record as the engine writes it: the validator
        odd.peek("kind")


@pytest.mark.parametrize("columns", [False, True], ids=["lines", "columns"])
@settings(max_examples=30, deadline=None)
@given(engine_records())
def test_fields_peeked_together_read_the_line_once(columns, records):
    # the positions index (conversation, turn) parsed every line twice to build
    lines_restore(records, columns=columns)
    store = session.session().engine.stores["aoi"]
    names = ("conversation", "turn", "created_at", "kind")
    with pytest.MonkeyPatch.context() as patch:
        parses = CountedParses(patch)
        for memory_id in unread(store):
            memory = store.records[memory_id]
            before = len(parses.lines)
            together = memory.peek_many(names)
            assert len(parses.lines) == before + 1 and not memory.loaded
            assert together == tuple(memory.peek(n) for n in names)
            assert together == tuple(getattr(memory, n) for n in names)  # made: the same
            assert memory.peek_many(names) == together


@pytest.mark.parametrize("field", ["context", "recall_count", "model", "turn", "meta"])
def test_a_field_with_a_default_is_read_from_the_line_first_time(field):
    record = stored(1)[0] | {"context": "at the station", "recall_count": 7, "turn": 3,
                             "conversation": "c1", "meta": {"tier": "hot"}}
    del record["trashed_at"]
    memory = packed(record["id"], record["key"], js_json([record])[1:-1].encode())
    assert getattr(memory, field) == record[field]  # not the dataclass default
    assert memory.loaded and memory == Memory(**record) and Memory(**record) == memory


def test_a_line_is_parsed_only_when_a_field_is_read():
    lines_restore(stored(5))
    store = session.session().engine.stores["aoi"]
    assert unread(store) == [f"m000{i}" for i in range(5)]
    hit = store.records["m0002"]
    assert (hit.id, hit.key) == ("m0002", None) and not hit.loaded  # known without parsing
    assert hit.text == "note 2 about tea" and hit.importance == 0.5
    assert type(hit.created_at) is float  # JavaScript wrote a whole number
    assert unread(store) == ["m0000", "m0001", "m0003", "m0004"]
    assert "_line" not in hit.to_dict()
    # loaded, it keeps the id string the store's maps hold (not a second copy from the line)
    assert next(k for k in store.records if k == "m0002") is hit.id
    # the kernel's ids are the records' own strings, not the restore header's copies
    own = {id(memory_id) for memory_id in store.records}
    assert len(store.kernel.ids()) == 5 and all(id(i) in own for i in store.kernel.ids())


@pytest.mark.parametrize("columns", [False, True], ids=["lines", "columns"])
def test_the_full_text_pass_reads_texts_without_making_the_memories(columns):
    records = [r | {"conversation": None, "turn": None,
                    "context": "at the harbour" if i % 2 else None}
               for i, r in enumerate(stored(6))]
    lines_restore(records, columns=columns)
    store = session.session().engine.stores["aoi"]
    index = store.text_index  # completes the full-text index from the lines
    assert unread(store) == [f"m000{i}" for i in range(6)]  # none made
    for r in records:
        want = (analyze(r["text"]), analyze(r["context"]) if r["context"] else [])
        assert store.index_terms(store.records[r["id"]]) == want
        assert index.document_length(r["id"]) == tuple(map(len, want))
    assert unread(store) == [f"m000{i}" for i in range(6)]
    # a line that would not make a Memory as it is makes it (and the validator speaks)
    records[1]["mood"] = "calm"
    lines_restore(records)
    memory = session.session().engine.stores["aoi"].records["m0001"]
    with pytest.raises(OmoideError):
        memory.indexed_texts()


def test_a_line_that_is_no_record_is_refused_where_it_is_read():
    records = stored(3)
    records[1]["mood"] = "calm"  # not a Memory field (an engine bug): the validator names it
    lines_restore(records)
    memory = session.session().engine.stores["aoi"].records["m0001"]
    with pytest.raises(OmoideError) as refused:
        _ = memory.text
    assert refused.value.fields.get("field") == "mood"
    assert not memory.loaded  # never a half-made or silently changed memory


def test_a_pack_of_lines_changed_on_disk_is_validated_line_by_line():
    records = stored(6, trashed=frozenset({3}))
    text = js_lines(records)
    damaged = text.replace('"importance": 0.5', '"importance": 7.5', 1)
    damaged = damaged.replace('"text": "note 4', '"text" "note 4', 1)  # no JSON any more
    answer = lines_restore(records, damaged)
    assert (answer["trusted"], answer["quarantined"], answer["loaded"]) == (0, 2, 4)
    store = session.session().engine.stores["aoi"]
    assert "m0000" not in store.records and "m0000" not in store.kernel.ids()
    assert session.session().engine.quarantine["m0000"]["field"] == "importance"
    assert unread(store) == []


def test_a_pack_in_columns_changed_on_disk_is_validated_line_by_line():
    records = [r | {"conversation": None, "turn": None} for r in stored(6, frozenset({3}))]
    lines = js_columns(records).split("\n")
    lines[1] = lines[1].replace(", 0.5, ", ", 7.5, ", 1)  # m0000's importance
    lines[5] = lines[5].rsplit(",", 1)[0] + "]"  # m0004: a value short, no record any more
    answer = lines_restore(records, "\n".join(lines), columns=True)
    assert (answer["trusted"], answer["quarantined"], answer["loaded"]) == (0, 2, 4)
    engine = session.session().engine
    assert engine.quarantine["m0000"]["field"] == "importance"
    assert len(engine.quarantine) == 2  # m0004's line is no record: quarantined as it is
    assert sorted(engine.stores["aoi"].records) == ["m0001", "m0002", "m0005"]


def test_the_record_fields_of_a_pack_in_columns_are_the_writers():
    """packs.js writes the values in its RECORD_FIELDS order and Python reads them in
    ``packed.RECORD_FIELDS`` order: the two lists must be the same, in the same order."""
    source = (ROOT / "web" / "store" / "packs.js").read_text()
    listed = re.search(r"RECORD_FIELDS = \[(.*?)\];", source, re.S).group(1)
    assert tuple(re.findall(r'"(\w+)"', listed)) == RECORD_FIELDS
    assert set(RECORD_FIELDS) == set(Memory.__dataclass_fields__) | {"trashed_at"}


def test_a_head_that_does_not_match_its_lines_means_every_line_is_validated():
    records = stored(4)
    text = js_lines(records)
    head, rest = text.split("\n", 1)
    wrong = json.dumps([[r["id"] for r in records[:3]], [None] * 3]) + "\n" + rest
    answer = lines_restore(records, wrong, zlib.crc32(wrong.encode()))
    assert (answer["trusted"], answer["quarantined"], answer["loaded"]) == (0, 0, 4)
    assert unread(session.session().engine.stores["aoi"]) == []


def test_skipped_ids_of_a_pack_of_lines_stay_out():
    records = stored(5)
    text = js_lines(records)
    head = {"character": "aoi", "stamp": records[0]["model"], "model_id": "m", "dimension": 4,
            "missing": [], "corrupt_segments": 0, "loose": 0, "recalls": {},
            "live_ids": ["m0000", "m0002", "m0003", "m0004"], "trash_ids": []}
    restore.begin(json.dumps(head))
    restore.add_records("aoi", text, json.dumps(["m0001"]), restore.PACK_LINES,
                        zlib.crc32(text.encode()))
    assert sorted(restore.LOADING["aoi"].memories) == head["live_ids"]
    assert restore.LOADING["aoi"].rows == restore.LOADING["aoi"].trusted == 4
    restore.LOADING.clear()


def test_the_character_list_after_a_restore_reads_no_record():
    # the page lists the characters after every change: counts and the model only
    records = stored(40)
    lines_restore(records)
    store = session.session().engine.stores["aoi"]
    (listed,) = session.engine_characters()
    assert listed["memories"] == 40 and "by_kind" not in listed
    assert len(unread(store)) == 40  # nothing parsed
    assert session.stats("aoi")["by_kind"] == {"fact": 40}  # the full stats read each kind


def test_a_trashed_memory_whose_vector_was_lost_is_repaired_into_the_trash(monkeypatch):
    """A damaged segment held the vector of a memory its pack of lines calls trashed: the
    repair re-embeds it back into the trash, never into the live memories. ``begin`` is given
    what the records say (web/store/db.js ``recordsHeader``); the placement, which found no
    vector for it, comes at ``finish``. (Given the placement's trash ids at ``begin``, as the
    worker did before, the memory came back live: checked.)"""
    records = stored(4, trashed=frozenset({2}))
    text = js_lines(records)
    head = {"character": "aoi", "stamp": STAMP, "model_id": "omoide/all-MiniLM-L6-v2",
            "dimension": 4, "trash_ids": ["m0002"], "recalls": {}, "recalls_last": {}}
    placement = {"live_ids": ["m0000", "m0001", "m0003"], "trash_ids": [],
                 "missing": ["m0002"], "corrupt_segments": 1}
    monkeypatch.setattr(restore, "embed_memories",
                        lambda embedder, items: [[0.0, 0.0, 1.0, 0.0] for _ in items])
    monkeypatch.setattr(restore, "flush", lambda: 0)
    restore.begin(json.dumps(head))
    restore.add_records("aoi", text, "", restore.PACK_LINES, zlib.crc32(text.encode()))
    answer = restore.finish("aoi", FakeStore(4, [[float(n), 1, 0, 0] for n in range(3)]),
                            FakeStore(4), json.dumps(placement))
    store = session.session().engine.stores["aoi"]
    assert (answer["repaired"], answer["corrupt_segments"]) == (1, 1)
    assert sorted(store.kernel.ids()) == ["m0000", "m0001", "m0003"]
    assert list(store.trash) == ["m0002"]
    assert store.trash["m0002"].trashed_at == records[2]["trashed_at"]
    assert list(store.trash["m0002"].vector) == [0.0, 0.0, 1.0, 0.0]
