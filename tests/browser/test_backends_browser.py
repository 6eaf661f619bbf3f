"""The browser app backed up to the user's own machine: the reference server
(``omoide.server``) on loopback with a key, IndexedDB as the primary, every engine change
mirrored through a queue kept in IndexedDB.

The first tests run the browser pieces under CPython (``IndexedDBBackend`` over a plain
engine, ``MirrorListener`` feeding a ``BackendManager`` with a SQLite fallback); the last ones
drive Chromium against a real reference server that is stopped and started again.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from omoide.backends.manager import BackendManager, MemoryQueueStore
from omoide.backends.sqlite import SQLiteBackend
from omoide.browser.backends import (
    IndexedDBBackend,
    IndexedDBQueueStore,
    MirrorListener,
)
from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from omoide.server import serve
from tests.test_engine_embedder import HashingEmbedder

from .conftest import engine_call, shot, wait_ready

SERVER_PORT = 27692
SERVER_URL = f"http://127.0.0.1:{SERVER_PORT}"
KEY = "omoide-test-key-7f3a"
MINILM = {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"}


# -- under CPython --------------------------------------------------------------------------


def mirrored_engine(tmp_path: Path):
    engine = MemoryEngine(HashingEmbedder())
    listener = MirrorListener()
    engine.add_listener(listener)
    server = SQLiteBackend(tmp_path / "server.db")
    manager = BackendManager(IndexedDBBackend(lambda: engine), [server],
                             queue_store=MemoryQueueStore())

    def commit() -> None:  # what the session's flush does after each call
        for op in listener.take():
            manager.mirror(op)

    return engine, manager, server, commit


def server_state(server: SQLiteBackend) -> dict[str, tuple[str, float | None]]:
    items = server.list(trashed=None, limit=1000)["items"]
    return {r["id"]: (r["text"], r["trashed_at"]) for r in items}


def test_mirror_listener_turns_engine_changes_into_queue_ops(tmp_path: Path) -> None:
    engine, manager, server, commit = mirrored_engine(tmp_path)
    a = engine.remember("rin", "Rin likes green tea")
    b = engine.remember("mio", "Mio plays the violin")
    commit()
    assert [(op["op"], op["id"]) for op in manager.queue] == [("upsert", a.id), ("upsert", b.id)]
    engine.recall("rin", "tea")  # counters: an update, covered by the pending upsert
    commit()
    assert len(manager.queue) == 2
    assert manager.pump() == 2 and manager.queue == []
    record = server.get(a.id, with_vector=True)
    assert record["text"] == a.text and len(record["vector"]) == 64
    assert record["recall_count"] == 1

    engine.forget("rin", a.id)
    engine.update("mio", b.id, importance=0.9)
    engine.update("mio", b.id, key="violin")  # merged into the pending update
    commit()
    assert [op["op"] for op in manager.queue] == ["update", "update"]
    assert manager.queue[1]["fields"]["importance"] == 0.9
    assert manager.queue[1]["fields"]["key"] == "violin"
    manager.pump()
    assert server.get(a.id)["trashed_at"] is not None
    assert server.get(b.id)["key"] == "violin"
    engine.restore("rin", a.id)
    commit()
    manager.pump()
    assert server.get(a.id)["trashed_at"] is None
    engine.forget("rin", a.id)
    engine.purge_trash("rin")
    commit()
    assert [op["op"] for op in manager.queue] == ["update", "delete"]
    manager.pump()
    assert server.get(a.id) is None and set(server_state(server)) == {b.id}


def test_swap_is_mirrored_as_upserts_with_the_new_vectors(tmp_path: Path) -> None:
    engine, manager, server, commit = mirrored_engine(tmp_path)
    ids = [m.id for m in engine.remember_many("rin", ["one thing", "another thing"])]
    commit()
    manager.pump()
    other = HashingEmbedder(32, seed=1)
    engine.select_embedder(other)
    engine.revectorize("rin", other)
    assert manager.queue == []  # nothing reaches the queue before the call commits
    commit()
    assert sorted(op["id"] for op in manager.queue) == sorted(ids)
    manager.pump()
    for i in ids:
        record = server.get(i, with_vector=True)
        assert record["model"] == other.stamp and len(record["vector"]) == 32


def test_indexeddb_backend_keeps_the_backend_contract(tmp_path: Path) -> None:
    engine = MemoryEngine(HashingEmbedder())
    backend = IndexedDBBackend(lambda: engine)
    memory = engine.remember("rin", "Rin's cat is called Tama")
    got = backend.get(memory.id, with_vector=True)
    assert got["text"] == memory.text and got["trashed_at"] is None and len(got["vector"]) == 64
    assert backend.get("nope") is None and backend.update("nope", {"importance": 1}) is None
    assert backend.delete("nope") is False

    # create: another model's vector is never reused (the text is embedded again)
    record = got | {"id": "01TESTID0000000000000000AA", "text": "Rin hates natto",
                    "model": "other@f32#3", "vector": [1.0, 0.0, 0.0]}
    created = backend.create(record)
    assert created["model"] == engine.embedder.stamp
    with pytest.raises(OmoideError) as err:
        backend.create(record)
    assert err.value.code == "BACKEND_CONFLICT"
    trashed = backend.create(record | {"id": "01TESTID0000000000000000AB",
                                       "trashed_at": 1234.0})
    assert trashed["trashed_at"] == 1234.0
    assert [e.memory.id for e in engine.trash("rin")] == ["01TESTID0000000000000000AB"]

    page = backend.list(character_id="rin")
    assert page["total"] == 2 and page["totals_by_kind"] == {"fact": 2}
    assert backend.list(character_id="rin", trashed=None)["total"] == 3
    assert backend.list(character_id="mio")["items"] == []
    assert backend.list(character_id="rin", limit=1, offset=1)["items"][0]["id"] == max(
        memory.id, "01TESTID0000000000000000AA")

    hits = backend.search("natto", character_id="rin", k=1)
    assert hits[0]["memory"]["id"] == "01TESTID0000000000000000AA"
    by_vector = backend.search("", character_id="rin", k=1, vector=got["vector"],
                               model=got["model"])
    assert by_vector[0]["memory"]["id"] == memory.id and by_vector[0]["score"] > 0.99
    assert backend.search("", character_id="rin", vector=got["vector"],
                          model="another/model@q8#" + str(len(got["vector"]))) == []
    assert backend.search("cat", character_id="mio") == []

    updated = backend.update(memory.id, {"text": "Rin's cat is called Kuro", "importance": 0.8})
    assert updated["text"].endswith("Kuro") and updated["importance"] == 0.8
    assert backend.search("Kuro", character_id="rin", k=1)[0]["memory"]["id"] == memory.id
    assert backend.update(memory.id, {"trashed_at": 99.0})["trashed_at"] == 99.0
    assert backend.update(memory.id, {"trashed_at": None})["trashed_at"] is None
    assert backend.delete(memory.id) is True and backend.get(memory.id) is None
    assert backend.health()["ok"] is True


def test_queue_store_writes_only_a_changed_queue() -> None:
    written = []
    store = IndexedDBQueueStore(lambda: [{"op": "delete", "id": "x"}], written.append)
    assert store.load() == [{"op": "delete", "id": "x"}]
    store.save([{"op": "delete", "id": "x"}])
    assert store.take_dirty() is None  # unchanged: nothing to write
    store.save([])
    assert store.take_dirty() == [] and store.take_dirty() is None


# -- in Chromium ------------------------------------------------------------------------------


class ReferenceServer:
    """The reference server on a fixed loopback port, stoppable and restartable."""

    def __init__(self, db: Path, port: int, key: str, app_origin: str | None) -> None:
        self.db, self.port, self.key, self.app_origin = db, port, key, app_origin
        self.server = None

    def start(self) -> ReferenceServer:
        # safe defaults: a key, and CORS for the app's origin only (the test app's port)
        self.server = serve(str(self.db), "127.0.0.1", self.port, api_key=self.key,
                            origins=[self.app_origin] if self.app_origin else None)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Like the server process going away: server_close also drops kept-alive
        connections."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def records(self) -> dict[str, dict]:
        backend = SQLiteBackend(self.db)
        try:
            items = backend.list(trashed=None, limit=10_000, with_vectors=True)["items"]
        finally:
            backend.shutdown()
        return {r["id"]: r for r in items}


@pytest.fixture
def ref_server(tmp_path: Path, app_url: str):
    server = ReferenceServer(tmp_path / "backup.db", SERVER_PORT, KEY, app_url).start()
    yield server
    server.stop()


def open_app(launch, profile: Path, app_url: str) -> Page:
    context = launch(profile)
    page = context.pages[0] if context.pages else context.new_page()
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "select_model", MINILM)
    return page


def fallback(page: Page) -> dict:
    status = engine_call(page, "backends_status")
    assert [b["role"] for b in status] == ["primary", "fallback"]
    assert status[0]["name"] == "indexeddb"
    return status[1]


def local_ids(page: Page, character: str) -> set[str]:
    live = {m["id"] for m in engine_call(page, "memories", {"character": character})}
    return live | {e["memory"]["id"] for e in engine_call(page, "trash",
                                                          {"character": character})}


def pump(page: Page) -> dict:
    return engine_call(page, "backends_pump", {"force": True})


def test_backup_mirror_outage_reload_and_restore(launch, app_url, tmp_path, ref_server):
    page = open_app(launch, tmp_path / "profile", app_url)
    saved = engine_call(page, "set_settings", {"backup_url": SERVER_URL, "backup_key": KEY})
    assert saved["backup_url"] == SERVER_URL
    assert saved["backup_key"] != KEY and saved["backup_key"].endswith(KEY[-4:])
    assert engine_call(page, "settings")["backup_key"] == saved["backup_key"]
    code = page.evaluate("() => window.omoide.call('set_settings', {backup_url: 'ftp://x'})"
                         ".then(() => null, e => e.name)")
    assert code == "INVALID_ARGUMENT"
    # The mask sent back (as a form would) leaves the key as it is.
    engine_call(page, "set_settings", {"backup_key": saved["backup_key"]})

    rin = ["Rin likes green tea", "Rin's cat is called Tama", "Rin was born in Kyoto"]
    mio = ["Mio plays the violin", "Mio hates natto"]
    engine_call(page, "remember_many", {"character": "rin",
                                        "items": [{"text": t} for t in rin]})
    engine_call(page, "remember_many", {"character": "mio",
                                        "items": [{"text": t} for t in mio]})
    result = engine_call(page, "backup_now")
    assert result["finished"] and result["total"] == 5
    assert result["created"] + result["updated"] == 5
    records = ref_server.records()
    assert set(records) == local_ids(page, "rin") | local_ids(page, "mio")
    assert sorted(r["text"] for r in records.values()) == sorted(rin + mio)
    assert all(len(r["vector"]) == 384 and r["model"].startswith(MINILM["model"])
               for r in records.values())
    assert {r["character_id"] for r in records.values()} == {"rin", "mio"}

    # An update (forget, then restore) is mirrored by the pump.
    tea = next(m for m in engine_call(page, "memories", {"character": "rin"})
               if "tea" in m["text"])
    engine_call(page, "forget", {"character": "rin", "id": tea["id"]})
    pump(page)
    assert ref_server.records()[tea["id"]]["trashed_at"] is not None
    engine_call(page, "restore", {"character": "rin", "id": tea["id"]})
    assert pump(page)["queued"] == 0
    assert ref_server.records()[tea["id"]]["trashed_at"] is None
    assert fallback(page)["ok"] is True

    # The server goes away: changes queue up, the status says so.
    ref_server.stop()
    new = engine_call(page, "remember", {"character": "mio", "text": "Mio's birthday is in May"})
    natto = next(m for m in engine_call(page, "memories", {"character": "mio"})
                 if "natto" in m["text"])
    engine_call(page, "forget", {"character": "mio", "id": natto["id"]})
    engine_call(page, "update", {"character": "rin", "id": tea["id"], "importance": 0.9})
    pump(page)
    down = fallback(page)
    assert down["ok"] is False and down["queued"] >= 3
    assert "Cannot reach" in down["last_error"]

    # The queue lives in IndexedDB: a reload keeps it.
    page.reload()
    wait_ready(page)
    assert fallback(page)["queued"] == down["queued"]
    ref_server.start()
    drained = pump(page)
    assert drained["queued"] == 0 and fallback(page)["ok"] is True
    records = ref_server.records()
    assert records[new["id"]]["text"] == "Mio's birthday is in May"
    assert records[natto["id"]]["trashed_at"] is not None
    assert records[tea["id"]]["importance"] == 0.9 and records[tea["id"]]["trashed_at"] is None
    assert set(records) == local_ids(page, "rin") | local_ids(page, "mio")

    # A wrong key: a clear 401 in the status, the change stays queued, nothing is lost.
    engine_call(page, "set_settings", {"backup_key": "not-the-key"})
    late = engine_call(page, "remember", {"character": "rin", "text": "Rin reads manga at night"})
    pump(page)
    wrong = fallback(page)
    assert wrong["ok"] is False and "401" in wrong["last_error"] and wrong["queued"] >= 1
    checked = engine_call(page, "backends_check")[1]
    assert checked["ok"] is False and "401" in checked["last_error"]
    failure = page.evaluate("() => window.omoide.call('backup_now', {}).then(() => null,"
                            " e => [e.name, e.message])")
    assert failure[0] == "BACKEND_HTTP" and "401" in failure[1]
    assert late["id"] not in ref_server.records()
    engine_call(page, "set_settings", {"backup_key": KEY})
    assert pump(page)["queued"] == 0
    assert ref_server.records()[late["id"]]["text"] == late["text"]

    # The maintenance tab shows both backends and their state.
    page.click("#tab-maintenance")
    engine_call(page, "backends_check")
    row = page.locator("#backends-body tr[data-role='fallback']")
    expect(row).to_have_attribute("data-state", "ok", timeout=15_000)
    expect(row.locator("td").first).to_have_text(f"server:{SERVER_URL}")
    expect(page.locator("#backends-body tr[data-role='primary']")).to_have_attribute(
        "data-state", "ok")
    expect(page.locator("#backup-url")).to_have_value(SERVER_URL)
    expect(page.locator("#backup-key")).to_have_value("")
    expect(page.locator("#backup-key-note")).to_contain_text(KEY[-4:])
    assert KEY not in page.content()
    page.locator("#backup-box").scroll_into_view_if_needed()
    shot(page, "backup-server")
    page.click("#backup-now")
    expect(page.locator("#backup-out")).to_have_attribute("data-state", "done")
    expect(page.locator("#backup-out")).to_contain_text("7")
    everything = ref_server.records()

    # A fresh profile (empty IndexedDB) gets everything back from the server.
    fresh = open_app(launch, tmp_path / "fresh-profile", app_url)
    assert engine_call(fresh, "memories", {"character": "rin"}) == []
    engine_call(fresh, "set_settings", {"backup_url": SERVER_URL, "backup_key": KEY})
    only_rin = engine_call(fresh, "backup_restore", {"characters": ["rin"]})
    rin_count = sum(r["character_id"] == "rin" for r in everything.values())
    assert only_rin["imported"] == rin_count and only_rin["reused"] == rin_count
    report = engine_call(fresh, "backup_restore")
    assert report["skipped"] == rin_count and report["failed"] == 0
    assert report["imported"] == len(everything) - rin_count
    assert local_ids(fresh, "rin") | local_ids(fresh, "mio") == set(everything)
    trashed = {e["memory"]["id"] for e in engine_call(fresh, "trash", {"character": "mio"})}
    assert trashed == {natto["id"]}
    hits = engine_call(fresh, "recall", {"character": "rin", "query": "What does Rin drink?",
                                         "k": 1, "mode": "vector"})
    assert hits[0]["memory"]["id"] == tea["id"]
    hits = engine_call(fresh, "recall", {"character": "mio", "query": "birthday", "k": 1})
    assert hits[0]["memory"]["id"] == new["id"]
    # Restored memories are the server's own: nothing to mirror back.
    assert fallback(fresh)["queued"] == 0
    # ...and they survive a reload of the fresh profile (written to its IndexedDB).
    fresh.reload()
    wait_ready(fresh)
    assert local_ids(fresh, "rin") | local_ids(fresh, "mio") == set(everything)
    characters = {c["id"] for c in engine_call(fresh, "characters")}
    assert {"rin", "mio"} <= characters

    # The same server started with its defaults answers CORS for the app's usual origin
    # (127.0.0.1:8742) only: this app (another port) can no longer read it.
    ref_server.stop()
    ref_server.app_origin = None
    ref_server.start()
    checked = engine_call(fresh, "backends_check")[1]
    assert checked["ok"] is False and checked["last_error"]
