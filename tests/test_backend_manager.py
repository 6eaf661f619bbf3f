"""BackendManager routing: create/list on the primary only; get/search fall back on a miss or
an error; update/delete mirrored asynchronously with retry through a persisted queue."""

from __future__ import annotations

import threading
import time

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.backends.manager import BackendManager, JsonFileQueueStore
from omoide.backends.sqlite import SQLiteBackend
from omoide.errors import OmoideError
from tests.backend_fixtures import make_record, running_server

PORT = 27673


def said(text: str) -> dict:
    """Fields of an edit: a new text travels with the vector of its words."""
    return {"text": text, "vector": make_record("alice", text)["vector"]}


class Switchable:
    """A real SQLite backend that can be switched off (every call raises OSError)."""

    def __init__(self, path, name):
        self.inner = SQLiteBackend(path, name=name)
        self.name = name
        self.down = False
        self.calls: list[str] = []

    def __getattr__(self, verb):
        method = getattr(self.inner, verb)

        def call(*args, **kwargs):
            self.calls.append(verb)
            if self.down:
                raise OSError(f"{self.name} is down")
            return method(*args, **kwargs)

        return call


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def trio(tmp_path):
    primary = Switchable(tmp_path / "p.db", "primary")
    first = Switchable(tmp_path / "f1.db", "fallback-1")
    second = Switchable(tmp_path / "f2.db", "fallback-2")
    clock = Clock()
    manager = BackendManager(primary, [first, second], clock=clock,
                             queue_store=JsonFileQueueStore(tmp_path / "queue.json"))
    manager.initialize()
    return manager, primary, first, second, clock


def test_create_and_list_touch_the_primary_only(trio):
    manager, primary, first, second, _ = trio
    record = manager.create(make_record("alice", "Alice loves tea"))
    assert primary.inner.get(record["id"]) is not None
    assert first.inner.get(record["id"]) is None and second.inner.get(record["id"]) is None
    assert manager.list(character_id="alice")["total"] == 1
    assert "list" not in first.calls and "create" not in first.calls
    primary.down = True
    with pytest.raises(OSError):
        manager.create(make_record("alice", "never stored elsewhere"))
    with pytest.raises(OSError):
        manager.list()
    assert first.inner.list(trashed=None)["total"] == 0


def test_search_is_served_by_a_fallback_when_the_primary_is_down(trio):
    manager, primary, first, second, _ = trio
    second.inner.create(make_record("alice", "Alice loves green tea"))
    primary.down = True
    first.down = True
    hits = manager.search("green tea", character_id="alice")
    assert [h["memory"]["text"] for h in hits] == ["Alice loves green tea"]
    states = {s["name"]: s for s in manager.status()}
    assert states["primary"]["ok"] is False and "primary is down" in states["primary"][
        "last_error"]
    assert states["fallback-2"]["ok"] is True


def test_get_and_search_fall_back_on_a_miss(trio):
    manager, primary, first, _, _ = trio
    only_in_fallback = first.inner.create(make_record("alice", "kept on the backup"))
    assert manager.get(only_in_fallback["id"])["text"] == "kept on the backup"
    assert manager.search("backup", character_id="alice")[0]["memory"]["id"] == (
        only_in_fallback["id"])
    assert manager.get("01NOWHERE0000000000000000") is None
    assert manager.search("nothing like this", character_id="alice") == []


def test_every_backend_failing_is_one_clear_error(trio):
    manager, primary, first, second, _ = trio
    primary.down = first.down = second.down = True
    with pytest.raises(OmoideError) as err:
        manager.search("tea", character_id="alice")
    assert err.value.code == "BACKEND_UNAVAILABLE"
    for name in ("primary", "fallback-1", "fallback-2"):
        assert f"{name} is down" in str(err.value)


def test_update_and_delete_are_mirrored_asynchronously(trio):
    manager, primary, first, second, _ = trio
    record = make_record("alice", "Alice likes coffee")
    for b in (primary, first, second):
        b.inner.create(record)
    assert manager.update(record["id"], said("Alice likes tea now"))["text"] == (
        "Alice likes tea now")
    assert first.inner.get(record["id"])["text"] == "Alice likes coffee"  # not yet
    assert [s["queued"] for s in manager.status()] == [0, 1, 1]
    assert manager.pump() == 2
    assert first.inner.get(record["id"])["text"] == "Alice likes tea now"
    assert second.inner.get(record["id"])["text"] == "Alice likes tea now"
    assert manager.delete(record["id"]) is True
    manager.pump()
    assert first.inner.get(record["id"]) is None and second.inner.get(record["id"]) is None
    assert manager.queue == []


def test_a_mirrored_update_creates_the_record_a_fallback_lacks(trio):
    manager, primary, first, _, _ = trio
    record = primary.inner.create(make_record("alice", "only on the primary",
                                              vector=[0.0, 0.0, 1.0]))
    manager.update(record["id"], {"importance": 0.9})
    manager.pump()
    copy = first.inner.get(record["id"], with_vector=True)
    assert copy["importance"] == 0.9 and copy["vector"] == [0.0, 0.0, 1.0]


def test_a_failed_mirror_is_retried_with_backoff_and_keeps_order(trio):
    manager, primary, first, second, clock = trio
    record = make_record("alice", "v0")
    for b in (primary, first, second):
        b.inner.create(record)
    first.down = True
    manager.update(record["id"], said("v1"))
    manager.update(record["id"], said("v2"))
    manager.pump()
    assert second.inner.get(record["id"])["text"] == "v2"
    assert [op["target"] for op in manager.queue] == ["fallback-1", "fallback-1"]
    assert manager.queue[0]["attempts"] == 1 and "fallback-1 is down" in manager.queue[0][
        "last_error"]
    first.down = False
    manager.pump()  # not due yet: backoff
    assert first.inner.get(record["id"])["text"] == "v0"
    clock.now += 1.5
    manager.pump()
    assert first.inner.get(record["id"])["text"] == "v2" and manager.queue == []


def test_the_mirror_queue_survives_a_restart(tmp_path):
    """Primary SQLite; fallback = the reference server over HTTP, stopped while changes
    happen. A new manager (process restart) over the same queue file drains it once the
    server is back."""
    primary = SQLiteBackend(tmp_path / "primary.db")
    queue_file = tmp_path / "queue.json"
    fallback = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key="k", timeout=2),
                           name="home-server")
    record = make_record("alice", "Alice likes coffee")
    primary.create(record)
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        fallback.create(record)
    manager = BackendManager(primary, [fallback], queue_store=JsonFileQueueStore(queue_file))
    manager.update(record["id"], said("Alice likes tea"))
    gone = primary.create(make_record("alice", "to be deleted"))
    manager.delete(gone["id"])
    assert manager.pump() == 0
    assert [s["ok"] for s in manager.status()] == [None, False]
    assert len(JsonFileQueueStore(queue_file).load()) == 2
    del manager  # "restart"

    # a restart retries at once, whatever backoff the last run had reached
    restarted = BackendManager(primary, [fallback], queue_store=JsonFileQueueStore(queue_file))
    assert len(restarted.queue) == 2
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        assert restarted.pump() == 2
        assert fallback.get(record["id"])["text"] == "Alice likes tea"
        assert fallback.get(gone["id"]) is None
    assert JsonFileQueueStore(queue_file).load() == []


def test_the_background_thread_mirrors_and_checks_health(trio):
    manager, primary, first, second, _ = trio
    manager.clock = time.time
    manager.pump_interval = 0.05
    record = make_record("alice", "before")
    for b in (primary, first, second):
        b.inner.create(record)
    manager.start()
    try:
        manager.update(record["id"], said("after"))
        deadline = time.monotonic() + 10
        while manager.queue and time.monotonic() < deadline:
            time.sleep(0.05)
        assert second.inner.get(record["id"])["text"] == "after"
        assert all(s["last_checked"] is not None for s in manager.status())
    finally:
        manager.stop()
    health = manager.health()
    assert health["ok"] is True and [b["role"] for b in health["backends"]] == [
        "primary", "fallback", "fallback"]


def test_a_queue_damaged_under_the_mirror_thread_is_set_aside_and_mirroring_goes_on(
        trio, tmp_path):
    """The mirror thread lives on when the queue file is damaged: the file is set aside (it
    stayed, failing every pump and every command using a backup) and new ops are mirrored."""
    manager, primary, first, *_ = trio
    manager.pump_interval = 0.05
    (tmp_path / "queue.json").write_text("{ not json", "utf-8")
    manager.start()
    try:
        deadline = time.monotonic() + 10
        while not list(tmp_path.glob("queue.json.damaged-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob("queue.json.damaged-*"))
        assert [s["queue_error"] for s in manager.status()] == [None, None, None]
    finally:
        manager.stop()
    record = manager.create(make_record("alice", "after the damage"))
    manager.update(record["id"], {"importance": 0.9})  # an op queued and mirrored again
    assert manager.flush(timeout=2)
    assert first.inner.get(record["id"])["importance"] == 0.9


def test_temporary_queue_files_of_dead_processes_are_removed(tmp_path):
    """A process killed between writing the queue's temporary file and renaming it left the
    file for ever; the next queue store sweeps those of processes that are gone."""
    import os
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    left = tmp_path / f"queue.json.{dead}.140000.tmp"
    left.write_text("[]", "utf-8")
    alive = tmp_path / f"queue.json.{os.getppid()}.140000.tmp"  # a live writer's: kept
    alive.write_text("[]", "utf-8")
    other = tmp_path / "other.json.1.2.tmp"
    other.write_text("[]", "utf-8")
    JsonFileQueueStore(tmp_path / "queue.json")
    assert not left.exists() and alive.exists() and other.exists()


class Gate(Switchable):
    """A fallback whose update waits until the test opens the gate (a slow server)."""

    def __init__(self, path, name):
        super().__init__(path, name)
        self.entered = threading.Event()
        self.release = threading.Event()

    def update(self, memory_id, fields):
        self.entered.set()
        assert self.release.wait(10)
        return self.inner.update(memory_id, fields)


def test_a_slow_fallback_never_blocks_writes_and_in_flight_ops_are_not_merged(tmp_path):
    primary = SQLiteBackend(tmp_path / "p.db")
    slow = Gate(tmp_path / "slow.db", "slow")
    record = make_record("alice", "v0")
    primary.create(record)
    slow.inner.create(record)
    manager = BackendManager(primary, [slow])
    manager.mirror({"op": "update", "id": record["id"], "fields": said("v1")})
    pumping = threading.Thread(target=manager.pump)
    pumping.start()
    assert slow.entered.wait(10)  # the pump is inside the network call now
    writer = threading.Thread(target=manager.mirror, args=(
        {"op": "update", "id": record["id"], "fields": said("v2")},))
    writer.start()
    writer.join(5)
    assert not writer.is_alive(), "queueing a mirror op waited for the slow fallback"
    assert len(manager.queue) == 2  # v2 was not merged into the op being sent
    slow.release.set()
    pumping.join(10)
    manager.pump()
    assert slow.inner.get(record["id"])["text"] == "v2" and manager.queue == []


def test_ops_queued_for_a_server_no_longer_configured_wait_for_it(tmp_path):
    """The backup URL changed while ops were queued: they followed the new server, so the
    one they were queued for never got them (a memory purged while it was down stayed
    live there, and a restore from it brought it back). They wait for their own server,
    shown by ``status``, also with no server configured, and go to it when it is named
    again; the new server gets none of them. A manager given no ``server_key`` (the
    browser's had none) takes a backend's name as its server."""
    primary = SQLiteBackend(tmp_path / "p.db")
    old_server = Switchable(tmp_path / "old.db", "old-server")
    new_server = Switchable(tmp_path / "new.db", "new-server")
    store = JsonFileQueueStore(tmp_path / "queue.json")
    record = primary.create(make_record("alice", "Alice likes tea"))
    old_server.inner.create(record)
    old_server.down = True
    before = BackendManager(primary, [old_server], queue_store=store)
    before.delete(record["id"])
    before.pump()
    assert len(store.load()) == 1

    alone = BackendManager(primary, [], queue_store=store)
    assert alone.pump() == 0 and len(alone.queue) == 1  # no server: the op waits

    after = BackendManager(primary, [new_server], queue_store=store)
    assert [op["target"] for op in after.queue] == ["old-server"]
    assert after.pump() == 0 and new_server.calls == []
    waiting = [s for s in after.status() if s["role"] == "waiting"]
    assert [(s["name"], s["server"], s["queued"]) for s in waiting] == [
        ("old-server", "old-server", 1)]
    assert old_server.inner.get(record["id"]) is not None  # not yet: it waits

    old_server.down = False
    back = BackendManager(primary, [old_server], queue_store=store)
    assert back.pump() == 1 and store.load() == []
    assert old_server.inner.get(record["id"]) is None  # the delete reached its server


def test_browser_ops_wait_for_their_server_however_its_url_is_written(tmp_path):
    """The browser names its backup ``server:<URL>``: its ops wait for that server while
    another is set, go to it when its URL is set again written another way, and
    ``drop_waiting(server)`` drops those of one server (``status``'s ``server``: the URL
    without user, password or query) and keeps the others'."""
    from omoide.backends.http import server_key
    from omoide.backends.manager import MemoryQueueStore

    primary = SQLiteBackend(tmp_path / "p.db")
    store = MemoryQueueStore()
    record = primary.create(make_record("alice", "Alice likes tea"))

    def manager(url: str, db: str) -> tuple[BackendManager, Switchable]:
        backend = Switchable(tmp_path / db, f"server:{url}")
        return BackendManager(primary, [backend], queue_store=store,
                              server_key=server_key), backend

    a, server_a = manager("http://127.0.0.1:8750", "a.db")
    server_a.inner.create(record)
    server_a.down = True
    a.delete(record["id"])
    a.pump()
    c, server_c = manager("http://c.example:8000/base", "c.db")
    server_c.down = True
    c.mirror({"op": "name", "id": "alice"})
    c.pump()
    b, server_b = manager("https://b.example", "b.db")
    assert b.pump() == 0 and server_b.calls == []
    waiting = {s["server"]: s["queued"] for s in b.status() if s["role"] == "waiting"}
    assert waiting == {"http://127.0.0.1:8750": 1, "http://c.example:8000/base": 1}
    assert b.drop_waiting("http://c.example:8000/base") == {
        "server:http://c.example:8000/base": 1}
    assert [op["target"] for op in store.ops] == ["server:http://127.0.0.1:8750"]

    again, server_a2 = manager("HTTP://127.0.0.1:8750/", "a.db")  # A, written another way
    assert [op["target"] for op in again.queue] == ["server:HTTP://127.0.0.1:8750/"]
    assert again.pump() == 1 and store.ops == []
    assert server_a2.inner.get(record["id"]) is None


def test_two_processes_on_one_queue_file_lose_none_of_each_others_ops(tmp_path):
    """Each process kept its own copy of the queue and saved it whole: the CLI's save
    dropped an MCP server's queued ops (a memory never reached the backup, a purged one
    stayed live there), and an op one process had sent was replayed by the other after
    later ones. Two managers over one file stand for the two processes (a flock is held per
    open file, so they exclude each other as processes do)."""
    primary = SQLiteBackend(tmp_path / "primary.db")
    queue_file = tmp_path / "queue.json"
    fallback = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key="k", timeout=2),
                           name="home-server")
    kept, doomed = make_record("alice", "Alice likes coffee"), make_record("alice", "a note")
    for record in (kept, doomed):
        primary.create(record)
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        fallback.create(kept)
        fallback.create(doomed)
    a = BackendManager(primary, [fallback], queue_store=JsonFileQueueStore(queue_file))
    b = BackendManager(primary, [fallback], queue_store=JsonFileQueueStore(queue_file))
    a.update(kept["id"], {"importance": 0.9})  # server down: both stay queued
    b.delete(doomed["id"])
    a.update(kept["id"], said("Alice likes tea"))
    assert [op["op"] for op in JsonFileQueueStore(queue_file).load()] == [
        "update", "delete", "update"]  # b's delete kept between a's two updates
    with b.queue_store.pumping() as held:  # b is sending: a does not send beside it
        assert held and a.pump() == 0
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        assert b.pump() == 3
        assert b.pump() == 0 and a.pump() == 0  # nothing sent twice
        assert fallback.get(doomed["id"]) is None
        mirrored = fallback.get(kept["id"])
        assert (mirrored["text"], mirrored["importance"]) == ("Alice likes tea", 0.9)
    assert JsonFileQueueStore(queue_file).load() == []


def test_a_backup_holding_the_id_under_another_character_is_never_overwritten(trio):
    """Two workspaces backing up to one server can hold one id under two characters (an
    export edited and imported): the mirrored update of bob's memory overwrote alice's."""
    manager, primary, first, second, _ = trio
    alices = make_record("alice", "Alice keeps her spare key under the blue pot")
    first.inner.create(alices)
    bobs = manager.create({**make_record("bob", "Bob's copy"), "id": alices["id"]})
    manager.update(bobs["id"], said("Bob: meeting moved to Friday"))
    manager.update(bobs["id"], {"trashed_at": 7.0})
    manager.flush(timeout=2)
    kept = first.inner.get(alices["id"])
    assert (kept["character_id"], kept["text"], kept["trashed_at"]) == (
        "alice", alices["text"], None)
    errors = " ".join(str(op.get("last_error")) for op in manager.queue)
    assert "belongs to another character" in errors
    assert second.inner.get(alices["id"])["character_id"] == "bob"  # the other backup took it


def test_a_damaged_queue_file_is_set_aside_with_a_warning(tmp_path, caplog):
    """A damaged mirror-queue file failed every command using a backup with a traceback."""
    path = tmp_path / "w.db.mirror-queue.json"
    path.write_text('[{"op": "delete", "id": "x"}, {broken')
    with caplog.at_level("WARNING", logger="omoide.backends"):
        assert JsonFileQueueStore(path).load() == []
    [aside] = tmp_path.glob("w.db.mirror-queue.json.damaged-*")
    assert aside.read_text().startswith('[{"op"') and not path.exists()
    assert "omoide backup" in caplog.text
    path.write_text('{"not": "a list"}')
    assert JsonFileQueueStore(path).load() == []


def test_a_name_op_is_mirrored_and_never_merged_with_a_memory_of_the_same_id(trio):
    """A character id may also be a memory id ("alice"): an update queued after the
    character's name op was merged into it (a KeyError: nothing queued at all)."""
    manager, primary, first, second, _ = trio
    record = primary.create(make_record("bob", "Bob likes rain") | {"id": "alice"})
    primary.add_character_names({"alice": "Alice Liddell"})
    manager.mirror_many([{"op": "upsert", "id": "alice"}])
    manager.pump()
    manager.mirror_many([{"op": "name", "id": "alice"},
                         {"op": "update", "id": "alice", "fields": {"importance": 0.9}}])
    assert [op["op"] for op in manager.queue] == ["name", "name", "update", "update"]
    manager.pump()
    for fallback in (first, second):
        assert fallback.inner.character_names()["alice"] == "Alice Liddell"
        assert fallback.inner.get(record["id"])["importance"] == 0.9


def test_a_name_op_carries_whether_the_character_is_deleted(trio):
    """A character the user deleted (the browser's character trash: its memories kept) was
    mirrored as a live one: the backup server never knew, and a restore from it brought the
    character back live. A workspace file (which cannot delete or restore a character, only
    hold what a restore brought) never makes one live again on the fallback."""
    manager, primary, first, _, _ = trio
    primary.inner.set_character_name("rei", "Rei", deleted_at=1700000000.0)
    manager.mirror_many([{"op": "name", "id": "rei"}])
    manager.pump()
    assert first.inner.deleted_characters() == {"rei": 1700000000.0}
    assert first.inner.character_names()["rei"] == "Rei"
    primary.inner.set_character_name("mio", "Mio")  # live here: the fallback's state stays
    first.inner.set_character_name("mio", "Mio", deleted_at=1700000001.0)
    manager.mirror_many([{"op": "name", "id": "mio"}])
    manager.pump()
    assert first.inner.deleted_characters() == {"rei": 1700000000.0, "mio": 1700000001.0}


def test_a_copy_racing_another_writer_of_the_same_id_updates_it_instead_of_failing(tmp_path):
    """``backup`` (``sync.copy_all``) and the mirror pump (its own thread, or another
    process's) both copy a record: the pump created it between the copy's update (404) and
    its create (409), and the whole backup failed with BACKEND_CONFLICT."""
    from omoide.backends.sync import copy_all

    source, target = SQLiteBackend(tmp_path / "s.db"), SQLiteBackend(tmp_path / "t.db")
    record = source.create(make_record("alice", "Alice loves green tea"))
    update = target.update

    def raced(memory_id, fields, **kw):
        found = update(memory_id, fields, **kw)
        if found is None and target.get(memory_id) is None:
            target.create(record | {"text": "the pump's older copy"})  # the other writer
        return found

    target.update = raced
    assert copy_all(source, target)["updated"] == 1
    assert target.get(record["id"])["text"] == "Alice loves green tea"


class Refusing(Switchable):
    """A fallback that answers, and refuses (a 413, as a server does for a record over its
    size limit) the creates and updates ``refuses(verb, args)`` picks."""

    def __init__(self, path, name, refuses=lambda verb, args: False):
        super().__init__(path, name)
        self.refuses = refuses
        self.refusals = 0

    def __getattr__(self, verb):
        call = super().__getattr__(verb)

        def refusing(*args, **kwargs):
            if verb in ("create", "update") and args and self.refuses(verb, args):
                self.refusals += 1
                raise OmoideError.of("BACKEND_HTTP", url="http://b/memories", status=413,
                                     body="too large")
            return call(*args, **kwargs)

        return refusing


@pytest.mark.parametrize("shared", [True, False])
def test_a_record_the_server_refuses_holds_no_later_change_up(tmp_path, shared):
    """One op the server refused (a 4xx that will not change: a record over its size limit)
    stayed first in the queue, retried with backoff, and held every later change of that
    server back: the backup stopped taking anything, silently but for "queued". Now it is
    kept aside (shown with why, refused), the later changes go, and a retry sends it."""
    primary = Switchable(tmp_path / "p.db", "primary")
    refuse: set[str] = set()
    fallback = Refusing(tmp_path / "f.db", "fallback", lambda verb, args: (
        args[0]["id"] if verb == "create" else args[0]) in refuse)
    store = JsonFileQueueStore(tmp_path / "queue.json") if shared else None
    manager = BackendManager(primary, [fallback], clock=Clock(), queue_store=store)
    manager.initialize()
    big = primary.create(make_record("alice", "a record the server refuses"))
    small = primary.create(make_record("alice", "Alice likes rain"))
    refuse.add(big["id"])
    manager.mirror_many([{"op": "upsert", "id": big["id"]}, {"op": "upsert", "id": small["id"]}])
    manager.pump()
    assert fallback.inner.get(small["id"]) is not None  # not held up by the refused one
    assert [(op["id"], op.get("refused")) for op in manager.queue] == [(big["id"], True)]
    [row] = [s for s in manager.status() if s["role"] == "fallback"]
    assert row["ok"] and row["refused"] == 1 and "413" in row["refused_error"]
    # a later change of the refused record is its own op, never folded into the refused one
    primary.inner.update(big["id"], {"importance": 0.9})  # as the engine writes, then queues
    manager.mirror_many([{"op": "update", "id": big["id"], "fields": {"importance": 0.9}}])
    later = primary.create(make_record("alice", "Alice has a cat"))
    manager.mirror_many([{"op": "upsert", "id": later["id"]}])
    manager.pump()
    assert fallback.inner.get(later["id"]) is not None
    assert len(manager.queue) == 2 and all(op.get("refused") for op in manager.queue)
    assert fallback.refusals == 2  # the upsert, then the update: each refused once
    manager.pump()  # refused ones are not sent again by themselves
    assert fallback.refusals == 2
    refuse.clear()  # e.g. the server's limit raised
    manager.retry()
    manager.pump()
    assert manager.queue == [] and fallback.inner.get(big["id"])["importance"] == 0.9


@pytest.mark.parametrize("shared", [True, False])
def test_a_refused_edit_sent_again_never_overwrites_a_later_one(tmp_path, shared):
    """An edit the server refused, then a later edit of the same memory that it took: the
    retry ("Back up now", `backup`) sent the refused edit's old fields after the newer
    one, so the backup held the old text and a restore lost the user's last edit."""
    primary = Switchable(tmp_path / "p.db", "primary")
    limit = {"word": "HUGE"}  # an update whose text holds it is over the server's limit
    fallback = Refusing(tmp_path / "f.db", "fallback", lambda verb, args: (
        verb == "update" and bool(limit["word"]) and limit["word"] in args[1].get("text", "")))
    store = JsonFileQueueStore(tmp_path / "queue.json") if shared else None
    manager = BackendManager(primary, [fallback], clock=Clock(), queue_store=store)
    record = make_record("alice", "Alice likes coffee")
    primary.inner.create(record)
    fallback.inner.create(record)
    manager.update(record["id"], said("HUGE text the server refuses"))
    manager.pump()
    assert [op.get("refused") for op in manager.queue] == [True]
    manager.update(record["id"], said("Alice likes tea"))  # the user's last edit
    manager.pump()
    assert fallback.inner.get(record["id"])["text"] == "Alice likes tea"
    limit["word"] = ""  # the server's limit raised
    manager.retry()
    manager.pump()
    assert manager.queue == []
    assert fallback.inner.get(record["id"])["text"] == "Alice likes tea"


def test_a_process_naming_the_server_another_way_never_reorders_its_changes(tmp_path):
    """Two processes on one workspace name one backup server in two spellings. Opening the
    second renamed the first's queued ops to its spelling (``adopt``); the first, still
    running, then left them to it, sent its later edit first, and the older edit reached
    the server after it (at the next open): the backup held the old text."""
    from omoide.backends.http import server_key

    primary = SQLiteBackend(tmp_path / "p.db")
    queue_file = tmp_path / "queue.json"
    record = primary.create(make_record("alice", "v0"))
    server = Switchable(tmp_path / "server.db", "backup http://host:8000")
    server.inner.create(record)
    server.down = True
    first = BackendManager(primary, [server], queue_store=JsonFileQueueStore(queue_file),
                           server_key=server_key)
    first.update(record["id"], said("v1"))
    first.pump()  # down: stays queued
    other = Switchable(tmp_path / "server.db", "backup HTTP://Host:8000/")  # the same one
    other.down = True
    BackendManager(primary, [other], queue_store=JsonFileQueueStore(queue_file),
                   server_key=server_key)  # opened and closed while the server was down
    server.down = False
    first.update(record["id"], said("v2"))
    first.pump()
    later = BackendManager(primary, [server], queue_store=JsonFileQueueStore(queue_file),
                           server_key=server_key)
    later.pump()
    assert server.inner.get(record["id"])["text"] == "v2"
    assert JsonFileQueueStore(queue_file).load() == []


def test_dropping_waiting_changes_keeps_those_another_live_process_sends(tmp_path):
    """`backends --drop-waiting --backup B` beside a running process (an MCP server) whose
    backup is A: A's queued changes looked 'waiting' to the CLI and were dropped, so A's
    backup silently missed them while A was in use. Those of a server that a live process
    names are kept; those of a server no process names any more are dropped."""
    from omoide.backends.http import server_key

    primary = SQLiteBackend(tmp_path / "p.db")
    queue_file = tmp_path / "queue.json"
    record = primary.create(make_record("alice", "v0"))
    gone = Switchable(tmp_path / "gone.db", "backup http://gone:8000")
    gone.down = True
    old = BackendManager(primary, [gone], queue_store=JsonFileQueueStore(queue_file),
                         server_key=server_key)
    old.update(record["id"], said("v1"))
    old.shutdown()  # that process ended: its server is left for good
    a = Switchable(tmp_path / "a.db", "backup http://a:8000")
    a.down = True
    running = BackendManager(primary, [a], queue_store=JsonFileQueueStore(queue_file),
                             server_key=server_key)
    running.update(record["id"], said("v2"))  # A down a moment: queued
    b = Switchable(tmp_path / "b.db", "backup http://b:8000")
    cli = BackendManager(primary, [b], queue_store=JsonFileQueueStore(queue_file),
                         server_key=server_key)
    assert cli.drop_waiting() == {"backup http://gone:8000": 1}
    assert [op["target"] for op in JsonFileQueueStore(queue_file).load()] == [
        "backup http://a:8000"]
    a.down = False
    assert running.pump() == 1
    assert a.inner.get(record["id"])["text"] == "v2"
