"""The CPython workspace: the engine persisted in SQLite through BackendListener, reopened
identically; a failing backend vetoes the change; fallbacks get the mirrored changes."""

from __future__ import annotations

import sqlite3

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.errors import OmoideError
from omoide.workspace import open_workspace
from tests.backend_fixtures import running_server
from tests.test_engine_embedder import HashingEmbedder

PORT = 27674


def texts(hits):
    return [(h.memory.id, round(h.score, 9)) for h in hits]


def test_reopen_gives_the_same_memories_trash_and_recall(tmp_path):
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    alice = [ws.engine.remember("alice", t) for t in
             ("Alice loves green tea", "Alice hikes on Sundays", "アリスは猫が好き")]
    ws.engine.remember("bob", "Bob loves green tea too", kind="preference")
    ws.engine.forget("alice", alice[1].id)
    ws.engine.update("alice", alice[0].id, text="Alice loves jasmine tea")
    before = {c: texts(ws.engine.recall(c, "tea", touch=False)) for c in ("alice", "bob")}
    ws.close()

    again = open_workspace(db, embedder=HashingEmbedder())
    # alice: 2 live, the forgotten one and the version the edit replaced in the trash
    assert again.loaded == {"alice": 4, "bob": 1}
    assert {c: texts(again.engine.recall(c, "tea", touch=False)) for c in ("alice", "bob")
            } == before
    assert [e.memory.text for e in again.engine.trash("alice")] == [
        "Alice hikes on Sundays", "Alice loves green tea"]
    assert again.engine.get("alice", alice[0].id).text == "Alice loves jasmine tea"
    again.engine.restore("alice", alice[1].id)
    again.engine.purge_trash("alice")
    again.close()
    third = open_workspace(db, embedder=HashingEmbedder())
    assert third.engine.stats("alice")["memories"] == 3
    third.close()


def test_a_refused_write_changes_nothing(tmp_path):
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    ws.engine.remember("alice", "kept")
    locker = sqlite3.connect(db, timeout=0)
    locker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    ws.backend.db.execute("PRAGMA busy_timeout = 50")
    with pytest.raises(OmoideError) as err:
        ws.engine.remember("alice", "not written")
    assert err.value.code == "BACKEND_WRITE_FAILED" and "locked" in str(err.value)
    assert [m.text for m in ws.engine.memories("alice")] == ["kept"]
    locker.rollback()
    locker.close()
    ws.close()
    assert [m.text for m in open_workspace(db, embedder=HashingEmbedder()).engine.memories(
        "alice")] == ["kept"]


def test_fallback_server_receives_mirrored_changes(tmp_path):
    backup = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", timeout=5), name="backup")
    with running_server(tmp_path / "server.db", PORT):
        ws = open_workspace(tmp_path / "w.db", embedder=HashingEmbedder(), fallbacks=[backup])
        memory = ws.engine.remember("alice", "Alice loves green tea")
        ws.engine.update("alice", memory.id, importance=0.9)  # mirrored: creates it there
        ws.engine.forget("alice", memory.id)
        assert ws.manager.flush(timeout=10)
        copy = backup.get(memory.id, with_vector=True)
        assert copy["importance"] == 0.9 and copy["trashed_at"] is not None
        assert len(copy["vector"]) == 64
        status = ws.manager.status()
        assert [s["role"] for s in status] == ["primary", "fallback"]
        ws.close()


def test_a_version_1_workspace_file_still_opens(tmp_path):
    """tests/fixtures/workspaces/workspace-v1.db was written by the first SQLite layout
    (schema 1); every later version must read it."""
    import shutil
    from pathlib import Path

    from omoide.workspace import stored_model

    fixture = Path(__file__).parent / "fixtures" / "workspaces" / "workspace-v1.db"
    db = tmp_path / "old.db"
    shutil.copy(fixture, db)
    assert stored_model(db) == ("test/hashing-ngram-s0", "f32")
    ws = open_workspace(db, embedder=HashingEmbedder())
    assert ws.loaded == {"alice": 2, "bob": 1}
    hits = ws.engine.recall("alice", "green tea", touch=False)
    assert hits[0].memory.id == "01HF7YAT00KY70X8DPQ5G8VVAF"
    assert hits[0].memory.kind == "preference" and hits[0].memory.key == "drink"
    assert [e.memory.text for e in ws.engine.trash("bob")] == ["Bob hates rain"]
    assert ws.engine.recall("alice", "日曜日", mode="fulltext")[0].memory.text == (
        "アリスは日曜日に山へ行った")
    ws.close()


def test_a_version_2_workspace_file_still_opens(tmp_path):
    """tests/fixtures/workspaces/workspace-v2.db was written by the CLI at 4a2060d in the
    SQLite layout of schema 2 (the change feed: ``seq``, tombstones, triggers), made with
    tests/fixtures/workspaces/make_v2.py; every later version must read it as it was."""
    import shutil
    from pathlib import Path

    from omoide.workspace import stored_model

    fixture = Path(__file__).parent / "fixtures" / "workspaces" / "workspace-v2.db"
    db = tmp_path / "old.db"
    shutil.copy(fixture, db)
    assert stored_model(db) == ("test/hashing-ngram-s0", "f32")
    purged = "01M8VSF64HAD37GDYHAQ6R7X1T"  # Bob's cat: forgotten, then purged
    with sqlite3.connect(db) as con:  # its tombstone is in the change feed, its row gone
        assert con.execute("SELECT COUNT(*) FROM changes WHERE id = ?", (purged,)
                           ).fetchone()[0] == 1
        assert con.execute("SELECT COUNT(*) FROM memories WHERE id = ?", (purged,)
                           ).fetchone()[0] == 0
    with sqlite3.connect(db) as con:
        names = dict(con.execute("SELECT id, name FROM characters"))
    ws = open_workspace(db, embedder=HashingEmbedder())
    assert ws.loaded == {"alice": 5, "bob": 2}
    with sqlite3.connect(db) as con:  # schema 3 in place: the characters' deleted_at
        assert con.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("3",)
        assert dict(con.execute("SELECT id, name FROM characters")) == names
    assert ws.backend.deleted_characters() == {}
    engine = ws.engine
    new = engine.get("alice", "01M8VSF60230KD6T53PVRK34N0")
    assert (new.text, new.key, new.meta) == ("Alice loves jasmine tea now", "drink",
                                            {"supersedes": ["01M8VSF5YZ0PFJS3QD94GAFFBZ"]})
    assert new.recall_count == 2
    assert [e.memory.text for e in engine.trash("alice")] == ["Alice loves green tea"]
    assert [e.memory.text for e in engine.trash("bob")] == ["Bob hates rain"]
    assert engine.get("alice", "01M8VSF60YT4SFP2E7M19FJ2CE").text == (
        "Alice hikes on Sundays and Saturdays")
    turn = engine.get("alice", "01M8VSF62FS9PMYAJDXZVN5113")
    assert (turn.conversation, turn.turn) == ("chat-1", 3)
    assert turn.context.startswith("2023-05-07: Bob")
    assert engine.recall("alice", "日曜日", mode="fulltext", touch=False)[0].memory.text == (
        "アリスは日曜日に山へ行った")
    assert all(m.id != purged for m in engine.memories("bob"))
    engine.restore("alice", "01M8VSF5YZ0PFJS3QD94GAFFBZ")  # the superseded version
    ws.close()
    again = open_workspace(db, embedder=HashingEmbedder())
    assert again.engine.get("alice", "01M8VSF5YZ0PFJS3QD94GAFFBZ").text == (
        "Alice loves green tea")
    again.close()


def test_a_row_of_another_model_never_locks_the_character_out(tmp_path):
    """A REST PATCH gave one memory a vector of another model and size: the engine
    quarantines that row, and the file's check of a new vector compared it with that row
    (the first of the character's): every later remember was refused."""
    from omoide.backends.sqlite import SQLiteBackend

    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    odd = ws.engine.remember("alice", "Alice lives in Osaka")
    kept = ws.engine.remember("alice", "Alice loves green tea")
    stamp = kept.model
    ws.close()
    backend = SQLiteBackend(db)
    backend.initialize()
    backend.update(odd.id, {"vector": [1.0, 0.0], "model": "x/y@q8#2"})  # as a PATCH does
    backend.update(kept.id, {"importance": 0.7})  # a row rewritten goes after the odd one
    with pytest.raises(OmoideError) as caught:  # a wrong size under the character's model
        backend.update(kept.id, {"vector": [1.0, 0.0]})
    assert caught.value.code == "INVALID_RECORD" and "64" in str(caught.value)
    backend.shutdown()
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        later = ws.engine.remember("alice", "Alice plays the violin")
        assert later.model == stamp
        assert {m.text for m in ws.engine.memories("alice")} == {
            "Alice loves green tea", "Alice plays the violin"}
    finally:
        ws.close()


def test_a_damaged_row_is_left_out_of_the_files_searches(tmp_path):
    """A row whose record lost its text (damaged outside Omoide) made every text search of
    its character raise KeyError: the reference server answered 500 until it was fixed."""
    import json as _json

    from omoide.backends.sqlite import SQLiteBackend

    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    kept = ws.engine.remember("alice", "Alice loves green tea")
    ws.close()
    con = sqlite3.connect(db)
    with con:
        record = {k: v for k, v in kept.to_dict().items() if k != "text"} | {"id": "BADROW"}
        con.execute("INSERT INTO memories SELECT 'BADROW', character_id, kind, trashed_at, "
                    "updated_at, ?, vector FROM memories", (_json.dumps(record),))
        con.execute("INSERT INTO memories SELECT 'NOTJSON', character_id, kind, trashed_at, "
                    "updated_at, '{not json', vector FROM memories WHERE id = ?", (kept.id,))
    con.close()
    backend = SQLiteBackend(db)
    backend.initialize()
    try:
        found = backend.search("green tea", character_id="alice")
        assert [r["memory"]["id"] for r in found] == [kept.id]
        vector = backend.get(kept.id, with_vector=True)["vector"]
        found = backend.search("", character_id="alice", vector=vector, model=kept.model)
        assert [r["memory"]["id"] for r in found] == [kept.id]
    finally:
        backend.shutdown()


def test_a_purged_text_is_gone_from_every_file_of_the_workspace_while_it_is_open(tmp_path):
    """Forget for good erases: the deleted row's text stayed in the WAL (and, where SQLite
    is built without secure_delete, in the file's free pages) until a checkpoint, which a
    long-running MCP or reference server may not reach for hours."""
    db = tmp_path / "w.db"
    secret = "my bank PIN is 4921 zebra-unique"
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        ws.engine.remember("alice", "a harmless note")
        memory = ws.engine.remember("alice", secret)
        assert any(secret.encode() in p.read_bytes() for p in tmp_path.glob("w.db*"))
        ws.engine.forget("alice", memory.id)
        assert ws.engine.purge_trash("alice") == [memory.id]
        assert ws.backend.db.execute("PRAGMA secure_delete").fetchone()[0] == 1
        for path in tmp_path.glob("w.db*"):
            assert secret.encode() not in path.read_bytes(), path.name
    finally:
        ws.close()


def test_a_commit_is_on_disk_before_the_verb_returns(tmp_path):
    """A power cut right after a command said "remembered" (exit 0, an MCP answer) must not
    lose the memory: with ``synchronous = NORMAL`` a WAL commit is not synced, and the last
    commits before a power loss rolled back (the mirror queue, synced, then named changes the
    file never held)."""
    ws = open_workspace(tmp_path / "w.db", embedder=HashingEmbedder())
    try:
        assert ws.backend.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert ws.backend.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        ws.close()


def test_a_character_whose_memories_were_all_purged_is_still_there_after_a_reopen(tmp_path):
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    memory = ws.engine.remember("carol", "Carol likes rain")
    ws.engine.forget("carol", memory.id)
    ws.engine.purge_trash("carol")
    assert ws.engine.characters() == ["carol"]
    ws.close()
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        assert ws.engine.characters() == ["carol"]
        assert ws.engine.stats("carol")["memories"] == 0
        ws.backend.add_character_names({"carol": "Carol"})  # a name still comes
        assert ws.backend.character_names() == {"carol": "Carol"}
    finally:
        ws.close()


def test_a_file_damaged_inside_is_one_clear_error(tmp_path):
    """Its first pages read, its memories' pages garbage: open_workspace (so every command
    and the MCP server) ended in a sqlite3 traceback."""
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    for n in range(200):
        ws.engine.remember("alice", f"Alice note {n} about green tea and long walks " * 4)
    ws.close()
    data = bytearray(db.read_bytes())
    data[len(data) // 2:len(data) // 2 + 16384] = b"\xab" * 16384
    db.write_bytes(bytes(data))
    with pytest.raises(OmoideError) as err:
        open_workspace(db, embedder=HashingEmbedder())
    assert err.value.code == "FILE_UNREADABLE" and str(db) in str(err.value)


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path):
    """A --db naming another program's SQLite file (a browser's history, an app's store)
    was taken as a new workspace: Omoide's tables were written into it and it was switched
    to WAL for good; one with another 'memories' table got WAL before the error."""
    for tables in ("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)",
                   "CREATE TABLE memories (a, b)"):
        db = tmp_path / f"other-{len(tables)}.sqlite"
        with sqlite3.connect(db) as conn:
            conn.execute(tables)
        before = db.read_bytes()
        with pytest.raises(OmoideError) as err:
            open_workspace(db, embedder=HashingEmbedder())
        assert err.value.code == "FILE_UNREADABLE" and "not an Omoide workspace" in str(
            err.value)
        assert db.read_bytes() == before
