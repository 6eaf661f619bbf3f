"""The backup mirror's queue costs what a verb writes, not what the queue holds: a verb's ops
are queued in one save of the queue file, before the verb's commit; a pump writes its results
back in batches. An import of 2,000 memories with a backup configured took 76 s (1.5 s
without): every memory saved the whole queue again, and the pump saved it after every op."""

from __future__ import annotations

import json

import pytest

from omoide.backends.manager import SETTLE_EVERY, BackendManager, JsonFileQueueStore
from omoide.backends.sqlite import SQLiteBackend
from omoide.workspace import open_workspace
from tests.backend_fixtures import make_record
from tests.test_cli import Cli
from tests.test_engine_embedder import HashingEmbedder


@pytest.fixture
def saves(monkeypatch) -> list[int]:
    """The number of ops in each save of any queue file."""
    counted: list[int] = []
    save = JsonFileQueueStore.save

    def counting(self, ops):
        counted.append(len(ops))
        save(self, ops)

    monkeypatch.setattr(JsonFileQueueStore, "save", counting)
    return counted


@pytest.fixture
def mirrored(tmp_path):
    backup = SQLiteBackend(tmp_path / "backup.db", name="backup")
    ws = open_workspace(tmp_path / "w.db", embedder=HashingEmbedder(), fallbacks=[backup])
    ws.manager.stop()  # the test pumps itself: its thread's saves would blur the counts
    yield ws, backup
    ws.close()


def test_a_verb_queues_its_ops_in_one_save(mirrored, saves):
    ws, backup = mirrored
    memories = ws.engine.remember_many(
        "alice", [{"text": f"Alice's note number {i} about tea"} for i in range(300)])
    assert saves == [300]
    assert sorted(op["id"] for op in ws.manager.queue) == sorted(m.id for m in memories)
    assert ws.manager.flush(timeout=30)
    assert backup.list(character_id="alice")["total"] == 300


def test_a_verbs_ops_are_queued_before_its_commit(mirrored, monkeypatch):
    """A kill between the commit and the queue's save would leave a backup without the
    change for good; the other way round, an op for an uncommitted change copies nothing."""
    ws, _ = mirrored
    seen: list[bool] = []
    mirror_many = BackendManager.mirror_many

    def watching(self, ops):
        seen.append(ws.backend.db.in_transaction)
        mirror_many(self, ops)

    monkeypatch.setattr(BackendManager, "mirror_many", watching)
    ws.engine.remember("alice", "Alice loves green tea")
    assert seen == [True]


def test_a_failed_verb_queues_nothing(mirrored, saves):
    ws, backup = mirrored
    with pytest.raises(RuntimeError), ws.engine.fresh():
        ws.engine.remember("alice", "Alice loves green tea")
        raise RuntimeError("the verb fails after its first write")
    assert saves == [] and ws.manager.queue == []
    assert "alice" not in ws.engine.characters()
    assert ws.backend.list(character_id="alice")["total"] == 0


def test_a_shared_pump_writes_its_results_back_in_batches(tmp_path, saves):
    primary = SQLiteBackend(tmp_path / "p.db", name="primary")
    backup = SQLiteBackend(tmp_path / "b.db", name="backup")
    manager = BackendManager(primary, [backup],
                             queue_store=JsonFileQueueStore(tmp_path / "queue.json"))
    manager.initialize()
    ops = []
    for i in range(600):
        record = primary.create(make_record("alice", f"Alice's note number {i}"))
        ops.append({"op": "upsert", "id": record["id"]})
    manager.mirror_many(ops)
    saves.clear()
    assert manager.pump() == 600
    assert len(saves) <= 600 // SETTLE_EVERY + 2  # the take, the batches, the close
    assert saves[-1] == 0 and manager.queue_store.load() == []
    assert backup.list(character_id="alice")["total"] == 600


def test_a_shared_pump_keeps_the_ops_that_failed(tmp_path):
    primary = SQLiteBackend(tmp_path / "p.db", name="primary")
    backup = SQLiteBackend(tmp_path / "b.db", name="backup")
    manager = BackendManager(primary, [backup],
                             queue_store=JsonFileQueueStore(tmp_path / "queue.json"))
    manager.initialize()
    first = primary.create(make_record("alice", "Alice loves green tea"))
    second = primary.create(make_record("alice", "Alice plays the violin"))
    manager.mirror_many([{"op": "upsert", "id": first["id"]},
                         {"op": "update", "id": second["id"], "fields": {"importance": 0.9}},
                         {"op": "update", "id": second["id"],
                          "fields": {"meta": {"mood": "calm"}}}])
    queued = manager.queue_store.load()
    assert [op["op"] for op in queued] == ["upsert", "update"]  # the updates merged
    assert queued[1]["fields"] == {"importance": 0.9, "meta": {"mood": "calm"}}
    create = backup.create

    def failing_second(record):
        if record["id"] == second["id"]:
            raise OSError("the backup is down")
        return create(record)

    backup.create = failing_second
    assert manager.pump() == 1
    left = manager.queue_store.load()
    assert [(op["op"], op["id"], op["attempts"]) for op in left] == [
        ("update", second["id"], 1)]
    assert "down" in left[0]["last_error"] and "sending" not in left[0]


def test_revectorize_queues_every_rows_copy_inside_its_switch(tmp_path, capsys, monkeypatch):
    """The switch's transaction commits inside the verb; its copies for the backup were
    queued only after it (a kill in between left the backup on the old model's vectors)."""
    cli = Cli(tmp_path / "ws.db", capsys)
    backup = ["--backup", "http://127.0.0.1:9", "--backup-key", "k"]
    ids = [cli.json("remember", "alice", text)["id"]
           for text in ("Alice loves green tea", "Alice plays the violin")]
    seen: list[tuple[bool, list[str]]] = []
    mirror_many = BackendManager.mirror_many

    def watching(self, ops):
        seen.append((self.primary.db.in_transaction, sorted(op["id"] for op in ops)))
        mirror_many(self, ops)

    monkeypatch.setattr(BackendManager, "mirror_many", watching)
    cli.json("revectorize", "--model", "omoide/all-MiniLM-L6-v2", *backup)
    assert (True, sorted(ids)) in seen
    queue = json.loads((tmp_path / "ws.db.mirror-queue.json").read_text())
    assert {op["id"] for op in queue if op["op"] == "upsert"} == set(ids)
