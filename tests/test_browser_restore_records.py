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


def test_a_memory_forgotten_for_good_during_a_restore_is_not_brought_back(monkeypatch):
    """The restore read the server's list once, at its first step: a memory purged after it
    (here or in another tab; the purge mirrored to the server too) was imported again by a
    later step, the purged secret back and only in this browser."""
    from omoide.browser import session as browser_session

    engine = MemoryEngine(HashingEmbedder())
    kept = engine.remember("alice", "Alice likes rain")
    secret = engine.remember("alice", "my old password is hunter2")
    on_server = [server_copy(engine, "alice", i) for i in (kept.id, secret.id)]
    lost = MemoryEngine(HashingEmbedder()).remember("alice", "only on the server")
    on_server.append(server_copy_of(lost, engine))
    s = SimpleNamespace(engine=engine, jobs={}, mirror=SimpleNamespace(pending=[]))
    monkeypatch.setattr(browser_session, "session", lambda: s)
    monkeypatch.setattr(browser_session, "reload_queue",  # no queued delete
                        lambda s: SimpleNamespace(queue=[], retry=lambda targets=None: None))
    monkeypatch.setattr(browser_session, "server",
                        lambda s: SimpleNamespace(character_names=lambda: {},
                                                  deleted_characters=lambda: {}))
    monkeypatch.setattr(browser_session, "mark", lambda *args: None)
    monkeypatch.setattr(browser_session, "forgotten_ids", set)  # nothing purged before
    monkeypatch.setattr(browser_session, "server_ids",
                        lambda backend, character, with_vectors: list(on_server))
    first = browser_session.restore_step(0, batch=1)  # the list is read here
    engine.forget("alice", secret.id)
    engine.purge_trash("alice")
    cursor = first["done"]
    while True:
        step = browser_session.restore_step(cursor, batch=1)
        cursor = step["done"]
        if step["finished"]:
            break
    texts = sorted(m.text for m in engine.memories("alice"))
    assert texts == ["Alice likes rain", "only on the server"]
    assert engine.trash("alice") == []


def server_copy_of(memory, engine: MemoryEngine) -> dict:
    [vector] = engine.embedder.embed_passages([memory.text])
    return memory.to_dict() | {"trashed_at": None, "vector": list(vector)}


def backing_up(monkeypatch, engine: MemoryEngine, server, primary) -> None:
    """The browser session's backup steps on ``engine``, sending to ``server`` the records
    ``primary`` gives (IndexedDB's), with no mirror op queued."""
    from omoide.browser import session as browser_session

    s = SimpleNamespace(engine=engine, jobs={}, mirror=SimpleNamespace(pending=[]))
    monkeypatch.setattr(browser_session, "session", lambda: s)
    monkeypatch.setattr(browser_session, "reload_queue",  # no queued delete
                        lambda s: SimpleNamespace(queue=[], retry=lambda targets=None: None))
    monkeypatch.setattr(browser_session, "server", lambda s: server)
    monkeypatch.setattr(browser_session, "backends", lambda s: SimpleNamespace(primary=primary))
    monkeypatch.setattr(browser_session, "mark", lambda *args: None)
    monkeypatch.setattr(browser_session, "forgotten_ids", set)  # nothing purged before


def backing_up_one(monkeypatch, tmp_path, character: str, text: str):
    """One memory of ``character`` in the browser session's engine, backed up to a fresh
    reference-server file by the backup steps; returns its record, the server, and a call
    that puts the backup steps' stand-ins back (after a restore's)."""
    from omoide.backends.base import record_of
    from omoide.backends.sqlite import SQLiteBackend

    engine = MemoryEngine(HashingEmbedder())
    memory = engine.remember(character, text)
    record = record_of(memory, list(engine.stores[character].kernel.vector(memory.id)))
    server = SQLiteBackend(tmp_path / "server.db")
    server.initialize()
    primary = SimpleNamespace(get=lambda i, with_vector=False: dict(record))
    backing_up(monkeypatch, engine, server, primary)
    return record, server, lambda: backing_up(monkeypatch, engine, server, primary)



def test_back_up_now_takes_a_memory_mirrored_meanwhile_as_an_update(monkeypatch, tmp_path):
    """"Back up now" read the server's ids at its first step; a memory the mirror pump
    uploaded between two steps failed the whole backup with BACKEND_CONFLICT."""
    from omoide.backends.base import record_of
    from omoide.backends.sqlite import SQLiteBackend
    from omoide.browser import session as browser_session

    engine = MemoryEngine(HashingEmbedder())
    memories = [engine.remember("alice", f"note {n}") for n in range(3)]
    records = {m.id: record_of(m, list(engine.stores["alice"].kernel.vector(m.id)))
               for m in memories}
    server = SQLiteBackend(tmp_path / "server.db")
    server.initialize()
    primary = SimpleNamespace(get=lambda i, with_vector=False: dict(records[i]))
    backing_up(monkeypatch, engine, server, primary)
    first = browser_session.backup_step(0, batch=1)
    # the pump, between two steps, uploads one the first step did not send (the backup
    # goes in id order; ids made in one millisecond are not in the order they were made)
    server.create(records[max(records)])
    step = browser_session.backup_step(first["done"], batch=5)
    assert step["finished"] and (step["created"], step["updated"]) == (2, 1)
    assert server.list(character_id="alice")["total"] == 3


def test_display_names_go_to_the_server_and_come_back_with_a_restore(monkeypatch, tmp_path):
    """"Back up now" sent memories only and the restore brought memories only: a browser
    restored from the server showed every character by its id."""
    from omoide.browser import session as browser_session

    record, server, _ = backing_up_one(monkeypatch, tmp_path, "alice", "Alice likes rain")
    step = browser_session.backup_step(0, names={"alice": "Alice Liddell", "bob": "bob"})
    assert step["finished"] and step["named"] == 1
    assert server.character_names() == {"alice": "Alice Liddell"}

    bulk: list[dict] = []
    fresh = SimpleNamespace(engine=MemoryEngine(HashingEmbedder()), jobs={},
                            mirror=SimpleNamespace(pending=[]),
                            listener=SimpleNamespace(add_bulk=lambda p, first: bulk.append(p)))
    monkeypatch.setattr(browser_session, "session", lambda: fresh)
    monkeypatch.setattr(browser_session, "reload_queue",  # no queued delete
                        lambda s: SimpleNamespace(queue=[], retry=lambda targets=None: None))
    monkeypatch.setattr(browser_session, "server_ids",
                        lambda backend, character, with_vectors: [dict(record)])
    step = browser_session.restore_step(0)
    assert step["finished"] and step["imported"] == 1 and step["named"] == 1
    assert bulk == [{"op": "name", "character": "alice", "name": "Alice Liddell",
                     "deleted_at": None}]


def test_a_deleted_character_goes_to_the_server_deleted_and_comes_back_deleted(
        monkeypatch, tmp_path):
    """A character the user deleted in the app (its memories kept, restorable from the
    character trash) was backed up as a live one: a restore into a new browser brought it
    back live, every memory of it in sight again. A character restored in the app is live
    on the server again."""
    from omoide.browser import session as browser_session

    record, server, again = backing_up_one(monkeypatch, tmp_path, "rei",
                                           "Rei keeps a secret diary")
    names = {"rei": "rei", "alice": "Alice Liddell"}  # rei: named by its id, and deleted
    step = browser_session.backup_step(0, names=names, deleted={"rei": 1700000000.5})
    assert step["finished"] and step["named"] == 2
    assert server.deleted_characters() == {"rei": 1700000000.5}

    bulk: list[dict] = []
    fresh = SimpleNamespace(engine=MemoryEngine(HashingEmbedder()), jobs={},
                            mirror=SimpleNamespace(pending=[]),
                            listener=SimpleNamespace(add_bulk=lambda p, first: bulk.append(p)))
    monkeypatch.setattr(browser_session, "session", lambda: fresh)
    monkeypatch.setattr(browser_session, "server_ids",
                        lambda backend, character, with_vectors=False: [dict(record)])
    step = browser_session.restore_step(0)
    assert step["finished"] and step["imported"] == 1  # the memories kept, as in the app
    assert {"op": "name", "character": "rei", "name": "rei",
            "deleted_at": 1700000000.5} in bulk

    again()
    browser_session.backup_step(0, names=names, deleted={})  # restored in the app
    assert server.deleted_characters() == {}


def test_a_garbage_answer_of_the_server_is_a_clear_error_and_one_bad_record_is_one_failure(
        monkeypatch):
    """The server's listing is input: a page that was not one (a list, a total in words, an
    item that is no object) crashed the restore with a KeyError / AttributeError / ValueError
    (an INTERNAL error, or one naming the call's params), and one record without a
    ``character_id`` made the whole restore fail, nothing restored."""
    import json

    import pytest

    from omoide.backends.http import HttpBackend, HttpConfig
    from omoide.browser import session as browser_session
    from omoide.errors import OmoideError

    backup = MemoryEngine(HashingEmbedder())
    good = [server_copy(backup, "alice", backup.remember("alice", t).id)
            for t in ("Alice likes rain", "Alice has a cat")]
    answer: list = []

    def transport(method, url, headers, body, timeout):
        if "/characters" in url:
            return 200, b'{"names": {}}', {}
        return 200, json.dumps(answer[0] if "offset=0" in url else
                               {"items": [], "total": 0}).encode(), {}

    backend = HttpBackend(HttpConfig("http://127.0.0.1:1"), transport=transport)
    engine = MemoryEngine(HashingEmbedder())
    s = SimpleNamespace(engine=engine, jobs={}, mirror=SimpleNamespace(pending=[]),
                        listener=SimpleNamespace(add_bulk=lambda p, first: None))
    monkeypatch.setattr(browser_session, "session", lambda: s)
    monkeypatch.setattr(browser_session, "reload_queue",  # no queued delete
                        lambda s: SimpleNamespace(queue=[], retry=lambda targets=None: None))
    monkeypatch.setattr(browser_session, "server", lambda s: backend)
    monkeypatch.setattr(browser_session, "mark", lambda *args: None)
    monkeypatch.setattr(browser_session, "forgotten_ids", set)  # nothing purged before
    for page in ([good[0]], "oops", {"items": good, "total": "two"},
                 {"items": [good[0], "junk"], "total": 2}, {"total": 1}):
        answer[:] = [page]
        with pytest.raises(OmoideError) as err:
            browser_session.restore_step(0)
        assert err.value.code == "BACKEND_HTTP" and "not a page" in str(err.value)
        assert engine.characters() == []
    orphan = {k: v for k, v in good[0].items() if k != "character_id"} | {"id": "01" + "A" * 24}
    answer[:] = [{"items": [orphan, *good], "total": 3}]
    step = browser_session.restore_step(0)
    assert step["finished"] and step["imported"] == 2 and step["failed"] == 1
    assert sorted(m.text for m in engine.memories("alice")) == ["Alice has a cat",
                                                                 "Alice likes rain"]
