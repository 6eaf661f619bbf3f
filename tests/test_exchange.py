"""Export / import is faithful: characters (ids, display names, characters without
memories), live memories, the trash with ``trashed_at``, keys, importance, times, recall
counts and vectors survive export -> import -> export into a fresh workspace byte for byte
(hypothesis over random stores, through the CLI's own doors); version 1 files still import."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.cli import main
from omoide.engine import MemoryEngine, exchange
from omoide.engine.memory import KINDS
from omoide.workspace import Workspace, open_workspace
from tests.test_cli import factory as cli_factory
from tests.test_engine_embedder import HashingEmbedder

FIXTURE = Path(__file__).parent / "fixtures" / "exports" / "v1-export.json"
CHARACTERS = ("alice", "bob", "さくら", "diary-girl")


def factory(model_id: str, dtype: str) -> HashingEmbedder:
    """The CLI's test models, and the hashing model the workspaces here are built with."""
    if model_id.startswith("test/hashing-ngram-s"):
        return HashingEmbedder(seed=int(model_id.rsplit("s", 1)[1]))
    return cli_factory(model_id, dtype)


def run(db: Path, *argv: str) -> str:
    import io

    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(db), *argv], embedder_factory=factory, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return out.getvalue()


@contextmanager
def opened(db: Path) -> Iterator[Workspace]:
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        yield ws
    finally:
        ws.close()


def export(db: Path, path: Path, vectors: bool) -> bytes:
    run(db, "export", str(path), *(["--with-vectors"] if vectors else []))
    return path.read_bytes()


visible = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                  min_size=1, max_size=30).filter(lambda s: s.strip())
names = visible.map(str.strip).filter(lambda s: 0 < len(s) <= 80 and s.isprintable())
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6)
memory = st.fixed_dictionaries({
    "character": st.sampled_from(CHARACTERS[:3]),
    "text": visible,
    "kind": st.sampled_from(KINDS),
    "importance": st.floats(0, 1),
    "key": st.none() | visible,
    "meta": st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    "at": st.floats(0, 4_000_000_000),
    "trash": st.booleans(),
    "recalls": st.integers(0, 2),
})


def build_store(db: Path, memories: list[dict], named: dict[str, str]) -> None:
    with opened(db) as ws:
        for m in memories:
            kept = ws.engine.remember(m["character"], m["text"], kind=m["kind"],
                                      importance=m["importance"], key=m["key"],
                                      meta=m["meta"], at=m["at"])
            for _ in range(m["recalls"]):  # recall counts and times (when it is found)
                ws.engine.recall(m["character"], m["text"], k=1000, mode="fulltext")
            if m["trash"]:
                ws.engine.forget(m["character"], kept.id)
        ws.backend.add_character_names(named)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# One live memory per key: a later memory with the same key supersedes the earlier one (see
# test_governance_supersede.py); test_superseded_history_round_trips covers that history here.
@given(memories=st.lists(memory, max_size=8,
                         unique_by=lambda m: (m["character"], m["key"]) if m["key"] else id(m)),
       named=st.dictionaries(st.sampled_from(CHARACTERS), names, max_size=4),
       vectors=st.booleans())
def test_export_import_export_is_byte_identical(tmp_path_factory, memories, named, vectors):
    tmp = tmp_path_factory.mktemp("x")
    build_store(tmp / "w0.db", memories, named)
    first = export(tmp / "w0.db", tmp / "e0.json", vectors)
    run(tmp / "w1.db", "import", str(tmp / "e0.json"))
    second = export(tmp / "w1.db", tmp / "e1.json", vectors)
    assert second == first

    data = json.loads(first)
    assert data["version"] == exchange.EXPORT_VERSION
    by_id = {c["id"]: c for c in data["characters"]}
    assert set(by_id) == {m["character"] for m in memories} | set(named)
    for character, name in named.items():
        assert by_id[character]["name"] == name  # display names, not slugs
    for character in set(named) - {m["character"] for m in memories}:
        assert by_id[character]["memories"] == by_id[character]["trash"] == []
    for m in memories:
        entry = by_id[m["character"]]
        section = entry["trash"] if m["trash"] else entry["memories"]
        found = [r for r in section if r["text"] == m["text"] and r["created_at"] == m["at"]]
        assert found, m
        # Two memories may share text and time: one of those found is this one.
        assert any(r["key"] == m["key"] and r["kind"] == m["kind"] for r in found)
        if m["trash"]:
            assert all(isinstance(r["trashed_at"], float) for r in found)
        if vectors:
            assert all(r["id"] in entry["vectors"] for r in found)


def test_superseded_history_round_trips(tmp_path):
    """Same key: the old version is history (trash with its supersede marks), and an
    export -> import -> export keeps it byte for byte."""
    db = tmp_path / "w0.db"
    with opened(db) as ws:
        old = ws.engine.remember("rin", "Rin's favourite drink is coffee", key="favorite_drink")
        new = ws.engine.remember("rin", "Rin's favourite drink is green tea",
                                 key="favorite_drink")
        assert [m.id for m in ws.engine.memories("rin")] == [new.id]
        assert [e.memory.id for e in ws.engine.trash("rin")] == [old.id]
    for vectors in (False, True):
        first = export(db, tmp_path / "e0.json", vectors)
        other = tmp_path / f"w1-{vectors}.db"
        run(other, "import", str(tmp_path / "e0.json"))
        assert export(other, tmp_path / "e1.json", vectors) == first
        entry = json.loads(first)["characters"][0]
        assert [m["id"] for m in entry["memories"]] == [new.id]
        assert [m["id"] for m in entry["trash"]] == [old.id]


def test_trash_names_and_empty_characters_survive(tmp_path):
    """The issue's report: 1 live + 1 trashed imported as 1 + 0, "Sakura" became "sakura"
    and characters without memories were left out."""
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    ws.engine.remember("sakura", "Sakura loves mochi")
    gone = ws.engine.remember("sakura", "Sakura used to like melon bread")
    ws.engine.forget("sakura", gone.id)
    ws.backend.add_character_names({"sakura": "Sakura", "diary": "Diary Girl"})
    ws.close()
    first = export(db, tmp_path / "e.json", vectors=False)
    report = json.loads(run(tmp_path / "fresh.db", "--json", "import", str(tmp_path / "e.json")))
    assert (report["imported"], report["trashed"]) == (2, 1)
    assert report["names"] == {"diary": "Diary Girl", "sakura": "Sakura"}
    listed = json.loads(run(tmp_path / "fresh.db", "--json", "characters"))
    assert [(c["id"], c["name"], c["memories"], c["trashed"]) for c in listed] == [
        ("diary", "Diary Girl", 0, 0), ("sakura", "Sakura", 1, 1)]
    again = open_workspace(tmp_path / "fresh.db", embedder=HashingEmbedder())
    try:
        [entry] = again.engine.trash("sakura")
        assert entry.memory.id == gone.id and entry.trashed_at > 0
        again.engine.restore("sakura", gone.id)  # restorable, with its vector
    finally:
        again.close()
    assert export(tmp_path / "fresh.db", tmp_path / "f.json", vectors=False) != first  # restored


def test_a_name_already_there_is_kept(tmp_path):
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    ws.backend.add_character_names({"sakura": "Sakura-chan"})
    ws.backend.add_character_names({"sakura": "Someone else"})
    assert ws.backend.character_names() == {"sakura": "Sakura-chan"}
    ws.close()


def test_version_1_exports_still_import(tmp_path):
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert data["version"] == 1
    report = json.loads(run(tmp_path / "w.db", "--json", "import", str(FIXTURE)))
    live = sum(len(c["memories"]) for c in data["characters"])
    trashed = sum(len(c["trash"]) for c in data["characters"])
    assert (report["imported"], report["trashed"]) == (live + trashed, trashed)
    assert report["reembedded"] == trashed  # v1 carried vectors of live memories only
    assert report["names"] == {"diary": "Diary Girl", "sakura": "Sakura"}
    out = json.loads(export(tmp_path / "w.db", tmp_path / "e.json", vectors=True))
    assert out["version"] == 2
    for old, new in zip(data["characters"], out["characters"], strict=True):
        assert (new["id"], new["name"], new["stamp"]) == (old["id"], old["name"], old["stamp"])
        # Fields added since version 1 come back with their defaults, nothing else changes.
        since_v1 = {"context": None, "conversation": None, "turn": None}
        assert new["memories"] == [since_v1 | m for m in old["memories"]]
        assert new["trash"] == [since_v1 | m for m in old["trash"]]
        for memory_id, vector in old["vectors"].items():
            assert new["vectors"][memory_id] == pytest.approx(vector, abs=1e-6)
        assert set(new["vectors"]) == {m["id"] for m in old["memories"] + old["trash"]}


def test_version_2_exports_import_unchanged(tmp_path):
    """tests/fixtures/exports/v2-export.json, written by the CLI at 4a2060d (made with
    tests/fixtures/workspaces/make_v2.py): trash with its vectors, a superseded preference's
    history link, an index context with its conversation turn, counted recalls. Every later
    version imports it into the very records and vectors it holds."""
    path = FIXTURE.with_name("v2-export.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 2
    report = json.loads(run(tmp_path / "w.db", "--json", "import", str(path)))
    assert (report["imported"], report["trashed"], report["reembedded"]) == (7, 2, 0)
    out = json.loads(export(tmp_path / "w.db", tmp_path / "e.json", vectors=True))
    for old, new in zip(data["characters"], out["characters"], strict=True):
        assert {k: v for k, v in new.items() if k != "vectors"} == {
            k: v for k, v in old.items() if k != "vectors"}
        assert new["vectors"].keys() == old["vectors"].keys()
        for memory_id, vector in old["vectors"].items():
            assert new["vectors"][memory_id] == pytest.approx(vector, abs=1e-6)
    alice = out["characters"][0]
    assert alice["memories"][0]["meta"]["supersedes"] == [alice["trash"][0]["id"]]
    turn = next(m for m in alice["memories"] if m["conversation"] == "chat-1")
    assert (turn["turn"], turn["context"].startswith("2023-05-07")) == (3, True)


def test_an_import_with_a_bad_record_writes_nothing(tmp_path):
    """The issue's report: an import with a bad key wrote a row and THEN failed."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["characters"][1]["memories"][2]["key"] = {"not": "a string"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    db = tmp_path / "w.db"
    run(db, "remember", "zoe", "Zoe keeps a diary")
    import io

    err = io.StringIO()
    code = main(["--db", str(db), "import", str(path)], embedder_factory=factory,
                stdout=io.StringIO(), stderr=err)
    assert code == 2
    assert "key" in err.getvalue() and "sakura" in err.getvalue()
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1
        assert con.execute("SELECT id FROM characters").fetchall() == [("zoe",)]  # its own


class FailingOnText(HashingEmbedder):
    """A model that fails on one text (out of memory, a lost device) mid-import."""

    def embed_passages(self, texts):
        if any("boom" in t for t in texts):
            raise RuntimeError("the model failed")
        return super().embed_passages(texts)


def test_an_embedding_that_fails_writes_no_character_of_the_import():
    """Each character was embedded and stored in turn: the first character of a file was
    written before the second one's embedding failed."""
    from omoide.engine import MemoryEngine

    def character(cid: str, texts: list[str]) -> dict:
        return {"id": cid, "name": cid.title(), "memories": [
            {"id": f"{cid}-{n}", "text": t, "kind": "fact", "importance": 0.5,
             "created_at": 1.7e9 + n, "updated_at": 1.7e9 + n} for n, t in enumerate(texts)]}

    engine = MemoryEngine(FailingOnText(32))
    data = {"format": "omoide-export", "version": 2, "characters": [
        character("alpha", ["alpha likes tea", "alpha walks"]),
        character("beta", ["beta reads", "boom"])]}
    with pytest.raises(RuntimeError):
        exchange.import_data(engine, data)
    assert all(engine.memories(c) == [] for c in engine.characters())


def test_an_id_of_another_character_is_refused(tmp_path):
    db = tmp_path / "w.db"
    run(db, "import", str(FIXTURE))
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["characters"][0]["id"] = "someone-else"
    for section in ("memories", "trash"):
        for record in data["characters"][0].get(section, []):
            if "character_id" in record:
                record["character_id"] = "someone-else"
    with opened(db) as ws:
        with pytest.raises(Exception) as err:
            exchange.check_import(ws.engine, data)
        assert getattr(err.value, "code", None) == "MALFORMED_IMPORT"
        assert "already belongs to 'diary'" in str(err.value)


def test_an_imported_vector_of_another_length_scores_as_its_direction(tmp_path):
    """A file's row of 1e30s was kept as it was: its dot products dwarfed every cosine, and the
    standard scores of the character's other memories all became equal. The row is stored at
    length 1 (validate.unit_length), so it scores as the memory with its direction."""
    from omoide.engine import MemoryEngine

    source = MemoryEngine(HashingEmbedder())
    notes = ["I love spicy ramen", "My sister is called Yuki", "I walk every morning",
             "Tea over coffee, always"]
    for text in notes:
        source.remember("alice", text)
    data = exchange.export_data(source, with_vectors=True)
    character = data["characters"][0]
    twin = dict(next(m for m in character["memories"] if m["text"] == notes[0]))
    twin["id"] = "01HUGE0000000000000000TWIN"
    character["memories"].append(twin)
    original = character["vectors"][next(m["id"] for m in character["memories"]
                                         if m["text"] == notes[0])]
    character["vectors"][twin["id"]] = [x * 1e30 for x in original]
    target = MemoryEngine(HashingEmbedder())
    assert exchange.import_data(target, data)["imported"] == len(notes) + 1
    hits = target.recall("alice", "spicy ramen", mode="vector", touch=False, min_relevance=0)
    assert all(-1.0 - 1e-6 <= h.vector_cosine <= 1.0 + 1e-6 for h in hits)
    by_text = {}
    for h in hits:
        by_text.setdefault(h.memory.text, []).append(h.vector_cosine)
    assert by_text[notes[0]] == pytest.approx([by_text[notes[0]][0]] * 2, abs=1e-6)
    first = source.recall("alice", "spicy ramen", mode="vector", touch=False, min_relevance=0)
    for h in first:  # every memory scores as it did before, the twin as its original
        assert by_text[h.memory.text] == pytest.approx(
            [h.vector_cosine] * len(by_text[h.memory.text]), abs=1e-6)
    stored = exchange.export_data(target, with_vectors=True)["characters"][0]["vectors"]
    assert sum(x * x for x in stored[twin["id"]]) == pytest.approx(1.0, abs=1e-6)


def _history_export(tmp_path: Path) -> Path:
    """An export of one memory and the version before its edit (history in the trash)."""
    db = tmp_path / "src.db"
    with opened(db) as ws:
        first = ws.engine.remember("rin", "Rin likes coffee", key="drink")
        ws.engine.update("rin", first.id, text="Rin likes tea")
    path = tmp_path / "e.json"
    export(db, path, True)
    return path


def _interrupted_import(db: Path, path: Path, monkeypatch) -> None:
    """An import stopped (Ctrl-C) right after a trashed record's first write, as an earlier
    version left it: it wrote each record in a transaction of its own, so the record is
    live. The CLI's import is one verb now: stopped there, it writes nothing."""
    import io

    from omoide.engine.store import CharacterStore

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(CharacterStore, "move_to_trash", stop)
        code = main(["--db", str(db), "import", str(path)], embedder_factory=factory,
                    stdout=io.StringIO(), stderr=io.StringIO())
        assert code == 130
        with opened(db) as ws:
            assert ws.engine.characters() == [] or ws.engine.memories("rin") == []
            with pytest.raises(KeyboardInterrupt):  # outside a verb: a commit per write
                exchange.import_data(ws.engine, json.loads(path.read_text("utf-8")))


def test_an_interrupted_import_run_again_puts_the_trash_back(tmp_path, monkeypatch):
    """The history copy an interrupted import left live (beside the memory that replaced it,
    same key) goes to the trash when the import runs again, as the file has it."""
    path = _history_export(tmp_path)
    db = tmp_path / "dst.db"
    _interrupted_import(db, path, monkeypatch)
    with opened(db) as ws:
        assert sorted(m.text for m in ws.engine.memories("rin")) == [
            "Rin likes coffee", "Rin likes tea"]  # the fault: two live versions of "drink"
    out = run(db, "import", str(path))
    assert "1 moved to the trash that an interrupted import had left live" in out
    with opened(db) as ws:
        assert [m.text for m in ws.engine.memories("rin")] == ["Rin likes tea"]
        assert [e.memory.text for e in ws.engine.trash("rin")] == ["Rin likes coffee"]
    assert export(db, tmp_path / "again.json", True) == path.read_bytes()
    assert "interrupted" not in run(db, "import", str(path))  # a third run: nothing to do


def test_a_record_changed_since_the_interrupted_import_is_left_as_it_is(tmp_path,
                                                                        monkeypatch):
    """Only a record still saying exactly what the file says is moved: the user's later
    change of it (here a new importance) is not undone by a re-run. It holds the file's
    key, so the key is settled: the holder changed last stays, the other is its history."""
    path = _history_export(tmp_path)
    db = tmp_path / "dst.db"
    _interrupted_import(db, path, monkeypatch)
    with opened(db) as ws:
        left = next(m for m in ws.engine.memories("rin") if m.text == "Rin likes coffee")
        ws.engine.update("rin", left.id, importance=0.9)
    out = run(db, "import", str(path))
    assert "interrupted" not in out and "2 already present" in out
    with opened(db) as ws:
        assert [(m.text, m.importance) for m in ws.engine.memories("rin")] == [
            ("Rin likes coffee", 0.9)]
        assert [e.memory.text for e in ws.engine.trash("rin")] == ["Rin likes tea"]


def test_a_character_named_twice_is_exported_once(tmp_path):
    """``export --character rin --character rin`` wrote rin twice: a file import refused."""
    db = tmp_path / "w.db"
    run(db, "remember", "rin", "Rin likes tea")
    path = tmp_path / "e.json"
    run(db, "export", str(path), "--character", "rin", "--character", "rin")
    assert [c["id"] for c in json.loads(path.read_text())["characters"]] == ["rin"]
    run(tmp_path / "other.db", "import", str(path))


def test_an_export_never_writes_over_the_workspace(tmp_path):
    """``--db mem.db export mem.db`` replaced the database with the JSON (the model setting
    and any quarantined rows gone)."""
    import io

    db = tmp_path / "mem.db"
    run(db, "remember", "rin", "Rin likes tea")
    before = db.read_bytes()[:16]
    for target in (db, tmp_path / "mem.db-wal"):
        err = io.StringIO()
        code = main(["--db", str(db), "export", str(target)], embedder_factory=factory,
                    stdout=io.StringIO(), stderr=err)
        assert code == 2 and "the workspace itself" in err.getvalue()
    assert db.read_bytes()[:16] == before == b"SQLite format 3\x00"
    assert "Rin likes tea" in run(db, "export", "-")


def test_an_import_leaves_one_live_memory_per_key(tmp_path):
    """A file holding a key the workspace holds too (a backup of another device) added a
    second live holder: recall ranked both, the next keyed write retired both. The newest
    stays; the other becomes its history, restorable."""
    import io

    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    run(dst, "remember", "rin", "Rin's favourite drink is black coffee",
        "--key", "favorite_drink")
    run(src, "remember", "rin", "Rin's favourite drink is green tea",
        "--key", "favorite_drink")  # written after: the newer one
    path = tmp_path / "e.json"
    export(src, path, True)
    out = run(dst, "import", str(path))
    assert "1 older holders of a key kept as history" in out
    with opened(dst) as ws:
        [live] = ws.engine.find_by_key("rin", "favorite_drink")
        assert live.text == "Rin's favourite drink is green tea"
        [old] = ws.engine.trash("rin")
        assert old.memory.text == "Rin's favourite drink is black coffee"
        assert old.memory.meta["superseded_by"] == live.id
        assert live.meta["supersedes"] == [old.memory.id]
        ws.engine.restore("rin", old.memory.id)  # restorable: it takes the key back
        assert [m.text for m in ws.engine.find_by_key("rin", "favorite_drink")] == [
            "Rin's favourite drink is black coffee"]
    err = io.StringIO()
    assert main(["--db", str(dst), "import", str(path)], embedder_factory=factory,
                stdout=io.StringIO(), stderr=err) == 0, err.getvalue()


def test_a_newer_version_in_the_file_replaces_the_held_one_which_becomes_history(tmp_path):
    """An edit made on another device: the file's version of a held id is later and says
    something else. It was skipped as "already present" and the edit existed nowhere here;
    now it replaces the held version, which is kept as history (restorable), as an edit
    keeps it. An older or identical version in a file is still skipped."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with opened(a) as ws:
        first = ws.engine.remember("rin", "Rin likes coffee", key="drink")
    old_file = tmp_path / "old.json"
    export(a, old_file, True)
    run(b, "import", str(old_file))
    with opened(a) as ws:
        ws.engine.update("rin", first.id, text="Rin likes tea now", importance=0.9)
    new_file = tmp_path / "new.json"
    export(a, new_file, True)
    out = run(b, "import", str(new_file))
    assert "1 replaced by the file's newer version" in out
    with opened(b) as ws:
        [live] = ws.engine.memories("rin")
        assert (live.id, live.text, live.importance) == (first.id, "Rin likes tea now", 0.9)
        texts = sorted(e.memory.text for e in ws.engine.trash("rin"))
        assert texts == ["Rin likes coffee", "Rin likes coffee"]  # a's history and b's copy
        hits = ws.engine.recall("rin", "Rin likes tea now", mode="vector", k=1, touch=False)
        assert hits[0].memory.id == first.id and hits[0].vector_cosine > 0.99
    assert "replaced" not in run(b, "import", str(new_file))  # the same file again: nothing
    assert "replaced" not in run(b, "import", str(old_file))  # an older file: nothing


def test_bookkeeping_alone_is_not_a_newer_version(tmp_path):
    """Recall counts, the stamp and the tier governance files a memory in change without
    an edit: a file that differs only there (and in ``updated_at``) replaces nothing."""
    db = tmp_path / "w.db"
    with opened(db) as ws:
        kept = ws.engine.remember("rin", "Rin likes tea", meta={"tier": "hot"})
    path = tmp_path / "e.json"
    export(db, path, False)
    data = json.loads(path.read_text())
    [m] = data["characters"][0]["memories"]
    m.update(updated_at=m["updated_at"] + 60, recall_count=7,
             last_recalled_at=m["updated_at"] + 60, meta={"tier": "cold"})
    path.write_text(json.dumps(data))
    assert "replaced" not in run(db, "import", str(path))
    with opened(db) as ws:
        assert [x.id for x in ws.engine.memories("rin")] == [kept.id]
        assert ws.engine.trash("rin") == []


def test_a_character_on_another_model_refuses_the_whole_import_first(tmp_path):
    """The model check ran only for characters with new records: one whose records were all
    held (a later version, or trash an interrupted import left live) passed the check, and
    the import wrote the characters before it, then failed on it (found in the browser)."""
    from omoide.engine import MemoryEngine
    from omoide.errors import OmoideError

    e = MemoryEngine(HashingEmbedder())
    held = e.remember("bob", "Bob likes green tea")
    data = exchange.export_data(e, ["bob"])
    [bob] = data["characters"]
    bob["memories"][0] |= {"text": "Bob likes black tea", "updated_at": held.updated_at + 9}
    data["characters"].insert(0, {"id": "alice", "memories": [
        {"id": "alice1", "text": "Alice loves the sea", "created_at": 1.7e9,
         "updated_at": 1.7e9}]})
    e.select_embedder(HashingEmbedder(seed=3))  # bob's index is another model's now
    with pytest.raises(OmoideError) as caught:
        exchange.import_data(e, data)
    assert caught.value.code == "MODEL_MISMATCH"
    assert "alice" not in e.stores or e.stores["alice"].is_empty()
    assert [m.text for m in e.memories("bob")] == ["Bob likes green tea"]


def test_a_newer_version_keeps_the_held_versions_own_history_linked(tmp_path):
    """The file's version replaced the held one's ``supersedes`` with its own: restoring a
    version edited away on THIS device then retired nothing, and two versions were live."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with opened(a) as ws:
        first = ws.engine.remember("rin", "Rin lives in Osaka")
    run(b, "import", str(export_to(a, tmp_path / "old.json")))
    with opened(b) as ws:  # an edit here: its history copy is linked from the memory
        ws.engine.update("rin", first.id, text="Rin lives in Kyoto")
        [local] = ws.engine.trash("rin")
    with opened(a) as ws:  # a later edit on the other device
        ws.engine.update("rin", first.id, text="Rin lives in Nara")
    assert "replaced by the file's newer version" in run(
        b, "import", str(export_to(a, tmp_path / "new.json")))
    with opened(b) as ws:
        assert [m.text for m in ws.engine.memories("rin")] == ["Rin lives in Nara"]
        ws.engine.restore("rin", local.memory.id)
        assert [m.text for m in ws.engine.memories("rin")] == ["Rin lives in Osaka"]


def test_a_memory_restored_after_an_import_is_not_sent_back_by_the_next_one(tmp_path):
    """The file has it in the trash; the user restored it here. Only a retired history copy
    left live is an interrupted import's write; this one is the user's choice."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with opened(a) as ws:
        gone = ws.engine.remember("rin", "Rin's old address")
        ws.engine.forget("rin", gone.id)
    path = export_to(a, tmp_path / "e.json")
    run(b, "import", str(path))
    with opened(b) as ws:
        ws.engine.restore("rin", gone.id)
    assert "interrupted" not in run(b, "import", str(path))
    with opened(b) as ws:
        assert [m.id for m in ws.engine.memories("rin")] == [gone.id]


def export_to(db: Path, path: Path) -> Path:
    export(db, path, True)
    return path


def test_a_newer_version_of_a_memory_forgotten_here_takes_its_place_in_the_trash(tmp_path):
    """Device B edited a memory that device A then forgot; A's import of B's export skipped
    the edit as "already present" (only live memories were compared): the edited text was
    nowhere. It now replaces the forgotten version, still in the trash (the forget holds),
    and a restore brings back the edit; the version it replaced is its history."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    memory_id = json.loads(run(a, "remember", "alice", "Alice keeps a red notebook",
                               "--json"))["id"]
    run(a, "export", str(tmp_path / "base.json"))
    run(b, "import", str(tmp_path / "base.json"))
    run(b, "update", "alice", memory_id, "--text", "Alice keeps a blue notebook")
    run(a, "forget", "alice", memory_id)
    run(b, "export", str(tmp_path / "b.json"))
    out = run(a, "import", str(tmp_path / "b.json"))
    assert "1 replaced by the file's newer version" in out
    with opened(a) as ws:
        assert ws.engine.memories("alice") == []
        trash = {e.memory.id: e.memory for e in ws.engine.trash("alice")}
        assert trash[memory_id].text == "Alice keeps a blue notebook"
        history = [m for m in trash.values() if m.id != memory_id]
        assert {m.text for m in history} == {"Alice keeps a red notebook"}
        assert all(m.meta["superseded_by"] == memory_id for m in history)
        ws.engine.restore("alice", memory_id)
        assert [m.text for m in ws.engine.memories("alice")] == ["Alice keeps a blue notebook"]
    assert "already present" in run(a, "import", str(tmp_path / "b.json"))  # settled


def test_a_record_naming_another_character_than_its_section_is_refused():
    """It was filed under the section's character: bob's memory became alice's."""
    from omoide.engine.core import MemoryEngine
    from omoide.errors import OmoideError

    source = MemoryEngine(HashingEmbedder())
    source.remember("alice", "Alice loves green tea")
    data = json.loads(json.dumps(exchange.export_data(source)))
    data["characters"][0]["memories"][0]["character_id"] = "bob"
    target = MemoryEngine(HashingEmbedder())
    with pytest.raises(OmoideError) as caught:
        exchange.import_data(target, data)
    assert caught.value.fields["field"] == "character_id"
    assert target.characters() == []


@pytest.mark.parametrize("version", [True, False, 1.5, "1", None])
def test_a_version_that_is_no_readable_number_is_refused(version):
    """JSON true equals 1 in Python: a file saying "version": true was read as version 1."""
    from omoide.errors import OmoideError

    with pytest.raises(OmoideError) as caught:
        exchange.check_format({"format": exchange.EXPORT_FORMAT, "version": version,
                               "characters": []})
    assert caught.value.code == "MALFORMED_IMPORT" and caught.value.fields["field"] == "version"


def test_a_newer_version_forgotten_in_the_file_replaces_the_one_held_here(tmp_path):
    """Device A edited a memory, then forgot it; B's import of A's export skipped the
    file's trashed version as "already present" (only live ones of the file were compared)
    and the edited text was nowhere on B. It now replaces B's version, which keeps B's
    state (live: an import never forgets, as a forget here holds against a file's live
    one); B's old text is its history in the trash, and the same file again changes
    nothing."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    memory_id = json.loads(run(a, "remember", "alice", "Alice keeps a red notebook",
                               "--json"))["id"]
    run(b, "import", str(export_to(a, tmp_path / "base.json")))
    run(a, "update", "alice", memory_id, "--text", "Alice keeps a blue notebook")
    run(a, "forget", "alice", memory_id)
    path = export_to(a, tmp_path / "a.json")
    assert "1 replaced by the file's newer version" in run(b, "import", str(path))
    with opened(b) as ws:
        assert [(m.id, m.text) for m in ws.engine.memories("alice")] == [
            (memory_id, "Alice keeps a blue notebook")]
        history = [e.memory for e in ws.engine.trash("alice")]
        assert "Alice keeps a red notebook" in {m.text for m in history}
        assert all(m.meta.get("superseded_by") == memory_id for m in history)
    assert "replaced" not in run(b, "import", str(path))


def test_a_newer_version_changing_only_the_importance_makes_no_copy_and_keeps_recalls(
        tmp_path):
    """As an edit of the importance alone makes no history copy, neither does its import;
    and the recalls counted here are this device's use of the memory: kept (the file's
    smaller count replaced them)."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    memory_id = json.loads(run(a, "remember", "alice", "Alice keeps a red notebook",
                               "--json"))["id"]
    run(b, "import", str(export_to(a, tmp_path / "base.json")))
    with opened(b) as ws:
        for _ in range(5):
            ws.engine.recall("alice", "red notebook", k=1)
        counted = ws.engine.get("alice", memory_id).recall_count
    assert counted >= 5
    run(a, "update", "alice", memory_id, "--importance", "0.9")
    assert "1 replaced by the file's newer version" in run(
        b, "import", str(export_to(a, tmp_path / "a.json")))
    with opened(b) as ws:
        [live] = ws.engine.memories("alice")
        assert (live.id, live.importance, live.recall_count) == (memory_id, 0.9, counted)
        assert ws.engine.trash("alice") == []


def test_a_newer_version_forgotten_in_the_file_and_kept_live_here_keeps_one_holder_per_key():
    """A memory keyed here lost its key (an edit) and a new memory took the key; the other
    device, holding the old keyed version, edited it and forgot it. The import keeps it
    live here in the file's version (an import never forgets), key included, and the key
    was left with two live holders: the file's trashed records' keys were never settled,
    and the next export -> import retired one of them (not a faithful round trip)."""
    ticks = iter(range(1_750_000_000, 1_750_001_000))
    here = MemoryEngine(HashingEmbedder(), clock=lambda: float(next(ticks)))
    device = MemoryEngine(HashingEmbedder(), clock=here.clock)
    nurse = here.remember("rin", "Rin works as a nurse", key="fact:job")
    exchange.import_data(device, exchange.export_data(here))
    here.update("rin", nurse.id, key=None)
    doctor = here.remember("rin", "Rin works as a doctor", key="fact:job")
    device.update("rin", nurse.id, text="Rin works as a night nurse")
    device.forget("rin", nurse.id)
    exchange.import_data(here, json.loads(json.dumps(exchange.export_data(device))))
    [holder] = here.find_by_key("rin", "fact:job")  # one live memory per key
    assert holder.id == nurse.id and holder.text == "Rin works as a night nurse"
    [retired] = [e.memory for e in here.trash("rin") if e.memory.id == doctor.id]
    assert retired.meta["superseded_by"] == nurse.id  # history, restorable
    assert {m.text for m in here.memories("rin")} == {"Rin works as a night nurse"}
    data = exchange.export_data(here, with_vectors=True)
    fresh = MemoryEngine(HashingEmbedder(), clock=here.clock)
    assert exchange.import_data(fresh, json.loads(json.dumps(data)))["superseded"] == 0
    assert exchange.export_data(fresh, with_vectors=True) == data
