"""One record schema (``validate.record``) at every door, and quarantine of rows that are
already bad on disk.

Issue 13, item 3: via REST (the SQLite backend the server calls), import, a crafted snapshot
or a SQLite row, NaN/Infinity importance, ``recall_count: "lots"``, a dict as key, a record
without a vector, a wrong-dimension vector, a 50 MB text, kind "bogus", blank text and an id
like ``../../etc/passwd`` were accepted, and recall, stats, characters and export then crashed
on that workspace. Each is refused here with an error naming the field; a row already bad on
disk is skipped, kept untouched and reported by ``audit``."""

from __future__ import annotations

import io
import json
import math
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.backends.sqlite import SQLiteBackend
from omoide.cli import main
from omoide.engine import MemoryEngine, validate
from omoide.engine.memory import KIND_TYPES, KINDS
from omoide.errors import OmoideError
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_exchange import factory

STAMP = "test/hashing-ngram-s0@f32#64"
GOOD = {"id": "01HF7YAT00KY70X8DPQ5G8VVAF", "character_id": "alice", "text": "Alice likes tea",
        "kind": "preference", "created_at": 1_700_000_000.0, "updated_at": 1_700_000_000.0,
        "model": STAMP, "vector": [0.125] * 64}
# (field the error names, the bad part of the record)
BAD = [
    ("importance", {"importance": math.nan}),
    ("importance", {"importance": math.inf}),
    ("importance", {"importance": 1.5}),
    ("recall_count", {"recall_count": "lots"}),
    ("recall_count", {"recall_count": -1}),
    ("recall_count", {"recall_count": True}),
    ("recall_count", {"recall_count": 10**30}),  # beyond 2**53: SQLite made it a float
    ("key", {"key": {"a": 1}}),
    ("key", {"key": "k" * 300}),
    ("vector", {"vector": None}),
    ("vector", {"vector": [0.5, 0.5]}),
    ("vector", {"vector": [math.nan] * 64}),
    # finite, but float32 storage makes it infinite: the memory was lost at the next load
    ("vector", {"vector": [3.4028235677973366e38] + [0.125] * 63}),
    ("vector", {"vector": [-1e39] + [0.125] * 63}),
    ("vector", {"vector": [0.0] * 64}),  # no direction: no cosine with anything
    ("text", {"text": "x" * 50_000_000}),
    ("text", {"text": "   "}),
    ("kind", {"kind": "bogus"}),
    ("type", {"type": "episodic"}),
    ("id", {"id": "../../etc/passwd"}),
    ("id", {"id": ""}),
    ("character_id", {"character_id": "../alice"}),
    ("character_id", {"character_id": "a/b"}),
    ("created_at", {"created_at": -5.0}),
    ("updated_at", {"updated_at": "yesterday"}),
    ("last_recalled_at", {"last_recalled_at": math.inf}),
    ("trashed_at", {"trashed_at": 1e30}),
    ("meta", {"meta": {"x": math.nan}}),
    ("meta", {"meta": {"x": {1, 2}}}),
    ("meta", {"meta": ["not", "an", "object"]}),
    ("meta", {"meta": {"big": "x" * 70_000}}),
    ("model", {"model": "no-dimension"}),
    ("model", {"model": ""}),  # a vector needs the stamp of its model
    ("colour", {"colour": "red"}),
]


def test_a_good_record_passes_with_defaults_filled_in():
    record = validate.record(GOOD, require_vector=True, dimension=64)
    assert record["type"] == "factual" and record["recall_count"] == 0
    assert record["trashed_at"] is None and record["meta"] == {}
    assert json.dumps(record, allow_nan=False)


@pytest.mark.parametrize("scale", [1e30, 3.0, 0.25, -2.0, 1e-30])
def test_a_given_vector_of_another_length_is_stored_at_length_1(scale):
    """Every kernel scores by dot product: one row of 1e30s made the standard scores of every
    other memory of its character equal (found by probing an import). Its direction is kept."""
    record = validate.record(GOOD | {"vector": [0.125 * scale] * 63 + [0.0]}, dimension=64)
    norm = 0.125 * math.sqrt(63)
    expected = [math.copysign(0.125 / norm, scale)] * 63 + [0.0]
    assert record["vector"] == pytest.approx(expected, rel=1e-12)
    assert math.hypot(*record["vector"]) == pytest.approx(1.0, rel=1e-12)


def test_a_vector_at_length_1_keeps_its_exact_numbers():
    # a model's row stored as float32 is off length 1 by ~1e-7: left as it was written
    near = [0.125] * 63 + [0.125 * (1 + 5e-4)]
    assert validate.record(GOOD | {"vector": near})["vector"] == near
    assert validate.unit_length([3, 4]) == [0.6, 0.8]  # ints become floats
    # a row read back from storage is the engine's own: kept, whatever its length
    stored = [0.5] * 64
    assert validate.record(GOOD | {"vector": stored}, stored=True)["vector"] == stored
    assert validate.vector(stored, stored=True) == stored


@pytest.mark.parametrize(("field", "change"), BAD, ids=[f"{f}-{i}" for i, (f, _) in
                                                         enumerate(BAD)])
def test_every_bad_field_is_named(field, change):
    with pytest.raises(OmoideError) as err:
        validate.record(GOOD | change, require_vector=True, dimension=64)
    assert err.value.code == "INVALID_RECORD"
    assert err.value.fields["field"] == field
    assert field in str(err.value) and len(str(err.value)) < 400  # a 50 MB text is not echoed


@pytest.mark.parametrize(("field", "change"), BAD, ids=[f"{f}-{i}" for i, (f, _) in
                                                         enumerate(BAD)])
def test_the_sqlite_backend_writes_none_of_them(tmp_path, field, change):
    """REST create/update reach the backend: refused, nothing written."""
    backend = SQLiteBackend(tmp_path / "b.db")
    with pytest.raises(OmoideError) as err:
        backend.create(GOOD | change)
    assert err.value.code == "INVALID_RECORD" and err.value.fields["field"] == field
    assert backend.health()["memories"] == 0
    backend.create(GOOD)
    if field not in ("id", "character_id"):  # the owner never changes in an update
        with pytest.raises(OmoideError):
            backend.update(GOOD["id"], change)
    assert backend.get(GOOD["id"], with_vector=True) == validate.record(GOOD)
    backend.shutdown()


def test_an_update_of_kind_brings_its_type(tmp_path):
    backend = SQLiteBackend(tmp_path / "b.db")
    backend.create(GOOD)
    assert backend.update(GOOD["id"], {"kind": "diary"})["type"] == "episodic"
    backend.shutdown()


def test_engine_verbs_use_the_same_rules():
    engine = MemoryEngine(HashingEmbedder())
    for kwargs, name in [({"importance": math.nan}, "importance"),
                         ({"key": "k" * 300}, "key"), ({"key": {"a": 1}}, "key"),
                         ({"meta": {"x": math.inf}}, "meta"), ({"at": -1}, "at"),
                         ({"kind": "bogus"}, "kind")]:
        with pytest.raises(OmoideError) as err:
            engine.remember("alice", "hi", **kwargs)
        assert err.value.fields["name"] == name
    with pytest.raises(OmoideError) as err:
        engine.remember("../../etc/passwd", "hi")
    assert err.value.code == "INVALID_CHARACTER_ID"
    assert engine.characters() == []


def test_character_ids_are_letters_digits_and_a_little_punctuation():
    for good in ("alice", "さくら", "Diary Girl", "agent_7", "o'brien", "x.y@z+1", "é"):
        assert validate.character_id(good) == good
    for bad in ("a/b", "..", "a..b", "a\\b", "<script>", "a;b", " a"):
        with pytest.raises(OmoideError):
            validate.character_id(bad)


def test_a_crafted_snapshot_is_refused_naming_the_field():
    engine = MemoryEngine(HashingEmbedder())
    engine.remember("alice", "Alice likes tea")
    index, records_json = engine.snapshot("alice")
    records = json.loads(records_json)
    records["memories"][0]["importance"] = "very"
    other = MemoryEngine(HashingEmbedder())
    with pytest.raises(OmoideError) as err:
        other.load_snapshot("alice", index, json.dumps(records))
    assert err.value.code == "CORRUPT_SNAPSHOT" and "importance" in str(err.value)
    assert other.characters() == []


# -- rows already bad on disk ----------------------------------------------------------------


def plant(db: Path, record: dict, vector_blob: bytes | None, trashed_at=None) -> None:
    """A row written behind Omoide's back (another tool, an old bug, a hand edit)."""
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO memories VALUES (?,?,?,?,?,?,?)",
                    (str(record.get("id")), str(record.get("character_id")), "fact",
                     trashed_at, 0.0, json.dumps(record), vector_blob))
    con.close()


def cli(db: Path, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(db), *argv], embedder_factory=factory, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert "Traceback" not in err.getvalue()
    return out.getvalue()


def test_bad_rows_are_quarantined_never_crash_and_stay_on_disk(tmp_path):
    from array import array

    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    kept = ws.engine.remember("alice", "Alice loves green tea")
    ws.close()
    good_blob = array("f", [0.125] * 64).tobytes()
    bad_rows = {
        "01BAD00000000000000000000A": ({"importance": math.nan}, good_blob),
        "01BAD00000000000000000000B": ({"recall_count": "lots"}, good_blob),
        "01BAD00000000000000000000C": ({"key": {"a": 1}}, good_blob),
        "01BAD00000000000000000000D": ({}, None),  # no vector
        "01BAD00000000000000000000E": ({}, array("f", [0.5, 0.5]).tobytes()),
        "01BAD00000000000000000000F": ({"kind": "bogus"}, good_blob),
        "01BAD00000000000000000000G": ({"text": " "}, good_blob),
        "01BAD00000000000000000000H": ({"model": "other@f32#2"}, array("f", [1, 0]).tobytes()),
    }
    for memory_id, (change, blob) in bad_rows.items():
        plant(db, GOOD | {"id": memory_id, "vector": None} | change, blob)
    plant(db, GOOD | {"id": "../../etc/passwd"}, good_blob)
    con = sqlite3.connect(db)
    with con:
        con.execute("INSERT INTO memories VALUES ('01BAD00000000000000000000J', 'alice', "
                    "'fact', NULL, 0, '{not json', NULL)")
    before = con.execute("SELECT * FROM memories ORDER BY id").fetchall()
    con.close()

    for argv in (("recall", "alice", "tea"), ("stats",), ("stats", "alice"), ("characters",),
                 ("export", "-", "--with-vectors"), ("audit", "alice")):
        json.loads(cli(db, "--json", *argv))  # valid JSON: no NaN anywhere
    report = json.loads(cli(db, "--json", "audit", "alice"))
    quarantined = {q["id"]: q for q in report["quarantined"]}
    assert set(quarantined) == set(bad_rows) | {"../../etc/passwd",
                                                "01BAD00000000000000000000J"}
    assert quarantined["01BAD00000000000000000000A"]["field"] == "importance"
    assert quarantined["01BAD00000000000000000000B"]["field"] == "recall_count"
    assert quarantined["01BAD00000000000000000000D"]["field"] == "vector"
    assert quarantined["../../etc/passwd"]["field"] == "id"
    assert "quarantined" in cli(db, "audit", "alice")
    hits = json.loads(cli(db, "--json", "recall", "alice", "tea"))["hits"]
    assert [h["id"] for h in hits] == [kept.id]
    exported = json.loads(cli(db, "--json", "export", "-"))
    assert [m["id"] for c in exported["characters"] for m in c["memories"]] == [kept.id]
    cli(db, "remember", "alice", "Alice also likes jasmine tea")  # writes still work
    con = sqlite3.connect(db)
    after = con.execute("SELECT * FROM memories WHERE id LIKE '01BAD%' OR id LIKE '../%' "
                        "ORDER BY id").fetchall()
    con.close()
    assert after == [r for r in before if r[0] != kept.id]  # untouched on disk


def test_a_character_whose_rows_are_all_bad_is_still_audited(tmp_path):
    db = tmp_path / "w.db"
    SQLiteBackend(db).initialize()
    plant(db, GOOD | {"character_id": "zoe", "importance": math.inf, "vector": None}, None)
    listed = json.loads(cli(db, "--json", "characters"))
    assert [(c["id"], c["memories"]) for c in listed] == [("zoe", 0)]
    [q] = json.loads(cli(db, "--json", "audit", "zoe"))["quarantined"]
    assert q["field"] == "importance"


# -- hypothesis: the schema accepts every valid record and nothing that breaks JSON ------------

def visible(text: str) -> bool:
    """A memory text the text field's own check takes: a visible character (not only
    spaces, nor only format characters such as a bidi control, U+202A)."""
    try:
        validate.text(text, validate.MAX_TEXT_LENGTH)
    except OmoideError:
        return False
    return True


valid_records = st.fixed_dictionaries({
    "id": st.text("0123456789ABCDEFGHJKMNPQRSTVWXYZ_-", min_size=1, max_size=40),
    "character_id": st.text(st.characters(categories=("L", "N")), min_size=1, max_size=20),
    "text": st.text(min_size=1, max_size=50).filter(visible),
    "kind": st.sampled_from(KINDS),
    "importance": st.floats(0, 1),
    "created_at": st.floats(0, validate.MAX_TIME),
    "recall_count": st.integers(0, 10**9),
    "key": st.none() | st.text(min_size=1, max_size=20).filter(str.strip),
})


@settings(max_examples=200, deadline=None)
@given(valid_records)
def test_valid_records_pass_and_serialize(record):
    out = validate.record(record)
    assert out["type"] == KIND_TYPES[record["kind"]]
    assert json.loads(json.dumps(out, allow_nan=False)) == out


junk = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=5)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(validate.RECORD_FIELDS), junk, max_size=6))
def test_any_junk_is_accepted_whole_or_refused_by_name(change):
    try:
        out = validate.record(GOOD | change)
    except OmoideError as err:
        assert err.code == "INVALID_RECORD" and err.fields["field"]
        return
    json.dumps(out, allow_nan=False)  # anything accepted is plain JSON


def test_indexeddb_rows_pass_the_same_schema_at_browser_load():
    """``browser.restore`` keeps only rows that pass; the rest is quarantined
    (the browser's audit lists them; IndexedDB is not touched)."""
    from omoide.browser.restore import checked_memories

    engine = MemoryEngine(HashingEmbedder())
    good = {k: v for k, v in GOOD.items() if k != "vector"} | {"trashed_at": None}
    rows = [good,
            good | {"id": "01BAD00000000000000000000A", "importance": math.nan},
            good | {"id": "01BAD00000000000000000000B", "key": {"a": 1}},
            good | {"id": "01BAD00000000000000000000C", "text": ""},
            "not even a record"]
    # Vectors are not part of the rows: the worker loads them into the kernels in bulk.
    kept = list(checked_memories(engine, rows))
    assert [(m.id, at) for m, at in kept] == [(GOOD["id"], None)]
    assert {q["id"]: q["field"] for q in engine.quarantine.values()} == {
        "01BAD00000000000000000000A": "importance", "01BAD00000000000000000000B": "key",
        "01BAD00000000000000000000C": "text", "None": "record"}


# -- the straight-line path for common rows says exactly what the per-field table says -------

def _typed(record: dict) -> list:
    """Fields with their exact types (1 == 1.0 would hide an int where a float belongs)."""
    return [(k, type(v).__name__, v) for k, v in record.items()]


def _table_answer(full: dict) -> dict | None:
    try:
        return validate.record_fields(full, stored=False)
    except OmoideError:
        return None


near_valid = st.dictionaries(
    st.sampled_from(validate.RECORD_FIELDS),
    junk | st.sampled_from([None, 0, 1, 0.25, True, "", " ", "fact", "factual", "episodic",
                            -1, validate.MAX_TIME + 1, math.inf, math.nan, {}, {"a": 1},
                            [0.5, 0.5], "m@q8#2", "m@q8#x", "x" * 300]), max_size=4)


@settings(max_examples=600, deadline=None)
@given(valid_records, near_valid)
def test_plain_row_path_equals_the_field_table(base, change):
    full = validate.RECORD_DEFAULTS | base | {"type": KIND_TYPES[base["kind"]]} | change
    table = _table_answer(dict(full))
    given_row = _typed(full)
    plain = validate._plain_fields(full, validate.MAX_TEXT_LENGTH, False)
    if plain is not None:  # taken only when the table accepts, with the very same answer
        assert table is not None and _typed(plain) == _typed(table)
    else:  # refused: the row goes to the table untouched
        assert _typed(full) == given_row


def _record_answer(data: dict) -> tuple:
    try:
        out = validate.record(data)
    except OmoideError as err:
        return ("error", err.code, err.fields.get("field"), err.fields.get("memory_id"))
    return ("ok", _typed(out))


@settings(max_examples=600, deadline=None)
@given(valid_records, near_valid | st.dictionaries(
    st.sampled_from((*validate.RECORD_FIELDS, "bogus")), junk, max_size=4))
def test_record_answers_the_same_with_and_without_the_straight_path(base, change):
    """The one validator, two ways to run it: ``record`` with its straight-line path and
    with every row sent to the per-field table give the same record or the same named
    error, for valid and invalid records alike."""
    data = base | change
    fast = _record_answer(dict(data))
    straight = validate._plain_fields
    validate._plain_fields = lambda full, limit, stored: None
    try:
        slow = _record_answer(dict(data))
    finally:
        validate._plain_fields = straight
    assert fast == slow


def test_records_never_share_a_meta_dict():
    """The straight path fills in a fresh ``meta``: never RECORD_DEFAULTS' nor the input's."""
    given_meta: dict = {}
    a = validate.record({k: v for k, v in GOOD.items() if k != "vector"})
    b = validate.record({k: v for k, v in GOOD.items() if k != "vector"} | {"meta": given_meta})
    assert a["meta"] == {} and a["meta"] is not validate.RECORD_DEFAULTS["meta"]
    assert b["meta"] is not given_meta
    a["meta"]["x"] = 1
    assert validate.RECORD_DEFAULTS["meta"] == {}


def test_plain_row_path_takes_the_common_rows():
    """Not vacuous: a typical stored row (ints for times, a vector, a context) goes the
    straight way, and a row it refuses still gets the table's named error."""
    row = validate.RECORD_DEFAULTS | GOOD | {"type": KIND_TYPES[GOOD["kind"]], "created_at": 5,
                                             "context": "  ", "trashed_at": 7}
    plain = validate._plain_fields(row, validate.MAX_TEXT_LENGTH, False)
    assert plain is not None and _typed(plain) == _typed(validate.record_fields(row))
    assert plain["created_at"] == 5.0 and type(plain["created_at"]) is float
    assert plain["context"] is None
    with pytest.raises(OmoideError) as err:
        validate.record(row | {"importance": True})
    assert err.value.fields["field"] == "importance"
