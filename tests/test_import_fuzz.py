"""Fuzz: hypothesis-mutated export files through ``import``, random records through the
SQLite backend's create/update (the REST server's backend). Invariant afterwards: recall,
stats, characters, export and audit still succeed (valid JSON, no traceback), and every
acknowledged write is there; a refused import wrote nothing."""

from __future__ import annotations

import copy
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.backends.sqlite import SQLiteBackend
from omoide.cli import main
from omoide.errors import OmoideError
from tests.test_exchange import FIXTURE, factory
from tests.test_records import GOOD

BASE = json.loads(FIXTURE.read_text(encoding="utf-8"))
BASE_V2 = copy.deepcopy(BASE) | {"version": 2}
BASE_V2["characters"].append({"id": "empty", "name": "Nobody Yet", "stamp": None,
                              "memories": [], "trash": []})
FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=12)
    | st.sampled_from(["../../etc/passwd", "", "   ", "bogus", "x" * 9000, "fact",
                       "test/hashing-ngram-s0@f32#64"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6)


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):  # the first rows and numbers are enough
            out += paths(v, (*prefix, i))
    return out


@st.composite
def mutated_exports(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from([BASE, BASE_V2])))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(doc)))
        if not path:
            return draw(junk)
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(junk)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(junk)
        else:
            parent.append(draw(junk))
    return doc


def cli(db: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(db), *argv], embedder_factory=factory, stdout=out, stderr=err)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def every_command_works(db: Path) -> dict[str, Any]:
    """recall, stats, characters, export and audit on the workspace: valid JSON each time
    (no workspace, when nothing was ever written: a clear error, and none is created)."""
    if not db.exists():
        code, _, err = cli(db, "--json", "stats")
        assert code == 2 and "there is no workspace there" in err and not db.exists()
        return {"format": "omoide-export", "version": 2, "characters": []}
    code, out, err = cli(db, "--json", "characters")
    assert code == 0, err
    for c in json.loads(out):
        code, _, err = cli(db, "--json", "audit", c["id"])
        assert code == 0, err
        json.loads(_)
        if c["memories"]:
            code, out2, err = cli(db, "--json", "recall", c["id"], "tea")
            assert code == 0, err
            json.loads(out2)
    code, out, err = cli(db, "--json", "stats")
    assert code == 0, err
    json.loads(out)
    code, out, err = cli(db, "export", "-", "--with-vectors")
    assert code == 0, err
    return json.loads(out)


def rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        con.close()


def exported_ids(data: dict[str, Any]) -> set[str]:
    return {m["id"] for c in data["characters"] for m in c["memories"] + c["trash"]}


@FUZZ
@given(doc=mutated_exports())
def test_fuzzed_imports_never_break_the_workspace(tmp_path_factory, doc):
    db = tmp_path_factory.mktemp("f") / "w.db"
    code, out, err = cli(db, "--json", "remember", "alice", "Alice drinks green tea")
    assert code == 0, err
    acknowledged = {json.loads(out)["id"]}
    before = rows(db)
    path = db.with_name("in.json")
    path.write_text(json.dumps(doc), encoding="utf-8")  # NaN/Infinity too, as Python writes
    code, out, err = cli(db, "--json", "import", str(path))
    if code == 0:
        report = json.loads(out)
        ids = {m.get("id") for c in doc["characters"] for m in c.get("memories", [])
               + c.get("trash", [])}
        acknowledged |= ids
        assert report["imported"] + report["skipped"] == len(ids)
    else:
        assert code == 2 and err.startswith("error: ")
        assert rows(db) == before  # validated whole: nothing written
    data = every_command_works(db)
    assert acknowledged <= exported_ids(data)


def test_a_vector_float32_cannot_hold_is_refused_and_nothing_written(tmp_path):
    # found by the fuzz above: 3.4028235677973366e38 is finite, so the import took it; as
    # float32 it is infinite, and the next load dropped the acknowledged memory
    db = tmp_path / "w.db"
    assert cli(db, "--json", "remember", "alice", "Alice drinks green tea")[0] == 0
    before = rows(db)
    doc = copy.deepcopy(BASE)
    character = next(c for c in doc["characters"] if c.get("vectors"))
    memory_id = next(iter(character["vectors"]))
    character["vectors"][memory_id][0] = 3.4028235677973366e38
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, _, err = cli(db, "--json", "import", str(path))
    assert code == 2 and "float32" in err and memory_id in err
    assert rows(db) == before
    character["vectors"][memory_id][0] = 3.4028234663852886e38  # the largest float32: kept
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert cli(db, "--json", "import", str(path))[0] == 0
    assert memory_id in exported_ids(every_command_works(db))


record_changes = st.dictionaries(
    st.sampled_from(["id", "character_id", "text", "kind", "type", "key", "importance",
                     "created_at", "updated_at", "last_recalled_at", "recall_count", "model",
                     "meta", "trashed_at", "vector", "colour"]),
    junk | st.lists(st.floats(-1, 1), min_size=2, max_size=3).map(lambda v: v * 32),
    max_size=3)


@FUZZ
@given(creates=st.lists(record_changes, min_size=1, max_size=5),
       updates=st.lists(record_changes, max_size=4))
def test_fuzzed_backend_writes_never_break_the_workspace(tmp_path_factory, creates, updates):
    db = tmp_path_factory.mktemp("b") / "w.db"
    backend = SQLiteBackend(db)
    acknowledged: dict[str, dict] = {}
    for n, change in enumerate(creates):
        record = GOOD | {"id": f"01FUZZ{n:020d}", "model": "test/hashing-ngram-s0@f32#64"} \
            | change
        try:
            acknowledged[record["id"]] = backend.create(record)
        except OmoideError as err:
            assert err.code in ("INVALID_RECORD", "BACKEND_CONFLICT")
    for n, change in enumerate(updates):
        if not acknowledged:
            break
        memory_id = sorted(acknowledged)[n % len(acknowledged)]
        try:
            answer = backend.update(memory_id, change)
        except OmoideError as err:
            # a change naming another character is refused too (the owner guard)
            assert err.code in ("INVALID_RECORD", "MEMORY_OWNER_CONFLICT")
            continue
        assert answer is not None
        acknowledged[memory_id] = answer
    backend.shutdown()
    data = every_command_works(db)
    assert set(acknowledged) <= exported_ids(data)
    listed = {m["id"]: m for c in data["characters"] for m in c["memories"] + c["trash"]}
    for memory_id, record in acknowledged.items():
        assert listed[memory_id]["text"] == record["text"]
        assert listed[memory_id]["importance"] == record["importance"]
