"""The browser's "Restore from the backup server" (``browser.session.restore_records``) puts
the server's records as an import does: one live memory per key (the newest; the other its
history in the trash), and never an id another character holds. It left the backup's holder
of a key live beside this browser's, and would put a record under a second character."""

from __future__ import annotations

from types import SimpleNamespace

from omoide.browser.session import restore_records
from omoide.engine import MemoryEngine
from tests.test_engine_embedder import HashingEmbedder


def job() -> dict:
    return {"imported": 0, "reused": 0, "reembedded": 0, "skipped": 0, "failed": 0,
            "errors": [], "characters": []}


def server_copy(engine: MemoryEngine, character: str, memory_id: str) -> dict:
    memory = engine.get(character, memory_id)
    return memory.to_dict() | {"trashed_at": None,
                               "vector": list(engine.stores[character].kernel.vector(memory_id))}


def test_a_restored_holder_of_a_key_leaves_one_live_memory():
    backup = MemoryEngine(HashingEmbedder())
    old = backup.remember("alice", "Alice works as a nurse", key="fact:job", at=1_700_000_000)
    engine = MemoryEngine(HashingEmbedder())
    new = engine.remember("alice", "Alice works as a doctor", key="fact:job", at=1_800_000_000)
    done = job()
    restore_records(SimpleNamespace(engine=engine), done, "alice",
                    [server_copy(backup, "alice", old.id)])
    assert [m.id for m in engine.memories("alice")] == [new.id]
    [history] = engine.trash("alice")
    assert history.memory.id == old.id and history.memory.meta["superseded_by"] == new.id
    assert done["imported"] == 1 and done["superseded"] == 1


def test_an_id_another_character_holds_is_not_put_twice():
    engine = MemoryEngine(HashingEmbedder())
    mine = engine.remember("bob", "Bob likes rain")
    copy = server_copy(engine, "bob", mine.id)
    done = job()
    restore_records(SimpleNamespace(engine=engine), done, "alice", [copy])
    assert done["failed"] == 1 and done["imported"] == 0
    assert "alice" not in engine.characters() or engine.memories("alice") == []
    assert [m.id for m in engine.memories("bob")] == [mine.id]
