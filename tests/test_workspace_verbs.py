"""A verb's writes are one transaction of the workspace file, decided on the file's latest
state: two processes writing one memory or one key at the same moment never leave two live
holders of a key, never lose an edit, never bring back what the other forgot. Each case
holds one process inside its verb (its embedding) while the other completes a verb: the
moment the race needs, made certain."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from omoide.errors import OmoideError
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder


class HeldEmbedder(HashingEmbedder):
    """Stops inside the embedding of a text holding ``marker`` until released."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker
        self.inside, self.release = threading.Event(), threading.Event()

    def embed_passages(self, texts):
        if any(self.marker in t for t in texts) and not self.release.is_set():
            self.inside.set()
            assert self.release.wait(20)
        return super().embed_passages(texts)


def live(db: Path, character: str = "alice") -> list[str]:
    con = sqlite3.connect(db)
    try:
        import json

        return sorted(json.loads(r[0])["text"] for r in con.execute(
            "SELECT record FROM memories WHERE character_id = ? AND trashed_at IS NULL",
            (character,)))
    finally:
        con.close()


def everything(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    try:
        import json

        return sorted(json.loads(r[0])["text"] for r in con.execute("SELECT record FROM memories"))
    finally:
        con.close()


@pytest.fixture
def held(tmp_path):
    """(db, held workspace, its embedder, other workspace)."""
    db = tmp_path / "shared.db"
    embedder = HeldEmbedder("MARK")
    a = open_workspace(db, embedder=embedder)
    b = open_workspace(db, embedder=HashingEmbedder())
    yield db, a, embedder, b
    embedder.release.set()
    a.close()
    b.close()


def run_held(embedder: HeldEmbedder, verb, meanwhile) -> object:
    """``verb`` in a thread, stopped inside its embedding while ``meanwhile`` runs."""
    out: dict = {}

    def target() -> None:
        try:
            out["result"] = verb()
        except Exception as err:  # noqa: BLE001 - the test reads it
            out["error"] = err

    thread = threading.Thread(target=target)
    thread.start()
    assert embedder.inside.wait(20)
    meanwhile()
    embedder.release.set()
    thread.join(20)
    if "error" in out:
        raise out["error"]
    return out["result"]


def test_two_keyed_remembers_at_once_leave_one_live_holder(held):
    db, a, embedder, b = held
    water = b.engine.remember("alice", "Alice drinks water", key="drink")
    run_held(embedder,
             lambda: a.engine.remember("alice", "Alice drinks green tea MARK", key="drink"),
             lambda: b.engine.remember("alice", "Alice drinks black coffee", key="drink"))
    assert live(db) == ["Alice drinks green tea MARK"]
    assert everything(db) == sorted(["Alice drinks water", "Alice drinks black coffee",
                                     "Alice drinks green tea MARK"])
    for ws in (a, b):  # both engines agree with the file
        assert [m.text for m in ws.engine.find_by_key("alice", "drink")] == [
            "Alice drinks green tea MARK"]
    assert water.id in {t.memory.id for t in a.engine.trash("alice")}


def test_two_edits_of_one_memory_at_once_lose_neither(held):
    db, a, embedder, b = held
    violin = b.engine.remember("alice", "Alice plays the violin")
    run_held(embedder,
             lambda: a.engine.update("alice", violin.id, text="Alice plays the cello MARK"),
             lambda: b.engine.update("alice", violin.id, text="Alice plays the flute"))
    assert live(db) == ["Alice plays the cello MARK"]
    assert everything(db) == sorted(["Alice plays the violin", "Alice plays the flute",
                                     "Alice plays the cello MARK"])


def test_an_edit_racing_a_forget_brings_nothing_back(held):
    db, a, embedder, b = held
    violin = b.engine.remember("alice", "Alice plays the violin", key="instrument")
    with pytest.raises(OmoideError) as err:
        run_held(embedder,
                 lambda: a.engine.update("alice", violin.id, text="Alice plays the cello MARK"),
                 lambda: b.engine.forget("alice", violin.id))
    assert err.value.code == "UNKNOWN_MEMORY"
    assert live(db) == []
    assert everything(db) == ["Alice plays the violin"]


def test_a_verb_that_fails_half_way_writes_nothing(tmp_path):
    """Its first writes are rolled back with the rest, and the engine reads the character
    again: what it holds is the file's."""
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        old = ws.engine.remember("alice", "Alice drinks water", key="drink")
        real = ws.backend.update

        def failing(memory_id, fields, **kw):  # the retire of the old holder fails
            if fields.get("trashed_at") is not None:
                raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(db), reason="disk full")
            return real(memory_id, fields, **kw)

        ws.backend.update = failing
        with pytest.raises(OmoideError):
            ws.engine.remember("alice", "Alice drinks tea", key="drink")
        ws.backend.update = real
        assert live(db) == ["Alice drinks water"]
        assert [m.id for m in ws.engine.memories("alice")] == [old.id]
    finally:
        ws.close()


def test_a_change_is_in_the_mirror_queue_before_it_is_committed(tmp_path):
    """A process killed between its commit and its mirror op left the backup without the
    change for good (the queue never heard of it). The op is now queued inside the verb,
    before its one commit: a crash before the commit loses the change and its op together,
    one after it loses neither."""
    import json as _json

    from omoide.backends.sqlite import SQLiteBackend

    backup = SQLiteBackend(tmp_path / "backup.db", name="backup")
    ws = open_workspace(tmp_path / "w.db", embedder=HashingEmbedder(), fallbacks=[backup])
    ws.manager.stop()  # nothing is sent: the test reads the queue as the commit saw it
    queue_file = tmp_path / "w.db.mirror-queue.json"
    seen: list[list[str]] = []
    committed = ws.backend.on_commit

    def on_commit(before: int, after: int) -> None:
        seen.append([op["id"] for op in _json.loads(queue_file.read_text("utf-8"))])
        committed(before, after)

    ws.backend.on_commit = on_commit
    try:
        memory = ws.engine.remember("alice", "Alice adopted a cat named Mochi")
        assert seen == [[memory.id]]
    finally:
        ws.close()


def test_an_import_that_fails_half_way_writes_nothing(tmp_path, capsys, monkeypatch):
    """The CLI's import wrote each record (a replaced version's copy, the file's version,
    the retire of the copy) in its own transaction: killed or failing in between, it left
    the copy live for good, beside the new version (a rerun skipped both as present). It
    is one verb now: all of it commits, or none."""
    import json as _json

    from omoide.backends.sqlite import SQLiteBackend
    from tests.test_cli import Cli

    here, there = Cli(tmp_path / "a.db", capsys), Cli(tmp_path / "b.db", capsys)
    memory_id = here.json("remember", "alice", "Alice keeps a red notebook")["id"]
    here.ok("export", str(tmp_path / "a.json"))
    there.ok("import", str(tmp_path / "a.json"))
    other = open_workspace(tmp_path / "b.db", embedder=HashingEmbedder())
    other.engine.clock = lambda: 1_900_000_000.0  # edited later, on the other device
    other.engine.update("alice", memory_id, text="Alice keeps a blue notebook")
    other.close()
    there.ok("export", str(tmp_path / "b.json"))

    real = SQLiteBackend.update

    def failing(self, memory_id, fields, **kw):  # the retire of the held version's copy
        if fields.get("trashed_at") is not None:
            raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(self.path), reason="full")
        return real(self, memory_id, fields, **kw)

    monkeypatch.setattr(SQLiteBackend, "update", failing)
    assert "full" in here.fails("import", str(tmp_path / "b.json"))
    assert everything(tmp_path / "a.db") == ["Alice keeps a red notebook"]
    monkeypatch.setattr(SQLiteBackend, "update", real)
    report = here.json("import", str(tmp_path / "b.json"))
    assert report["updated"] == 1
    assert live(tmp_path / "a.db") == ["Alice keeps a blue notebook"]
    con = sqlite3.connect(tmp_path / "a.db")
    trashed = [_json.loads(r[0]) for r in con.execute(
        "SELECT record FROM memories WHERE trashed_at IS NOT NULL")]
    con.close()
    # the other device's history copy and this one's: both the red version, both linked
    assert {(r["text"], r["meta"]["superseded_by"]) for r in trashed} == {
        ("Alice keeps a red notebook", memory_id)}
