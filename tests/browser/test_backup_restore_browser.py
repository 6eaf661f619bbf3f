"""Backup to the reference server and restore from it, end to end in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from buildtools.serve import AppServer
from omoide.backends.sqlite import SQLiteBackend
from tests.backend_fixtures import running_server

from .backup_proxy import FaultProxy
from .conftest import DIST, engine_call, shot, tab, wait_ready
from .faults import fail_writes

APP_PORT = 31521
SERVER_PORT = 31522
SERVER_URL = f"http://127.0.0.1:{SERVER_PORT}"
PROXY_PORT = 31812  # a FaultProxy in front of a reference server on FAULTY_PORT
FAULTY_PORT = 31811
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
OTHER_PORT = 31523  # a second reference server (server B)
OTHER_URL = f"http://127.0.0.1:{OTHER_PORT}"
KEY = "bkup-probe-key-91c2e7"
MINILM = {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"}


@pytest.fixture(scope="module")
def app_url():
    server = AppServer(DIST, port=APP_PORT).start()
    yield server.url
    server.stop()


@pytest.fixture
def backup_db(tmp_path: Path) -> Path:
    return tmp_path / "backup.db"


@pytest.fixture
def ref_server(backup_db, app_url):
    with running_server(backup_db, SERVER_PORT, api_key=KEY, origins=[app_url]) as server:
        yield server


@pytest.fixture
def proxy(backup_db, app_url):
    """The reference server behind a FaultProxy (the app is given PROXY_URL)."""
    with running_server(backup_db, FAULTY_PORT, api_key=KEY, origins=[app_url]):
        fault = FaultProxy(PROXY_PORT, FAULTY_PORT).start()
        yield fault
        fault.stop()


def open_app(launch, profile: Path, app_url: str, url: str = SERVER_URL) -> Page:
    context = launch(profile)
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "select_model", MINILM)
    engine_call(page, "set_settings", {"backup_url": url, "backup_key": KEY})
    return page


def server_holds(db: Path, what: str = "character_names") -> dict:
    """What the backup server's file holds of its characters (``character_names`` or
    ``deleted_characters``)."""
    backend = SQLiteBackend(db)
    try:
        return getattr(backend, what)()
    finally:
        backend.shutdown()


def server_names(db: Path) -> dict:
    return server_holds(db)


def test_a_rename_made_while_a_backup_runs_is_the_name_it_sends(launch, app_url, tmp_path,
                                                             ref_server, backup_db):
    """"Back up now" read the display names once, before its first step, and sent them at
    its last: a character renamed while it ran kept its old name on the server, the backup
    said finished, and a restore brought the old name back."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "remember_many", {"character": "rin", "items": [
        {"text": f"Rin's note {n}"} for n in range(301)]})  # four steps of 100
    result = page.evaluate("""async () => {
      let renamed = null;
      window.omoide.onEvent((e) => {
        if (e.type === 'backup' && e.state === 'running' && !renamed) {
          renamed = window.omoide.call('rename_character',
            {character: 'rin', name: 'Rin Tohsaka'});
        }
      });
      const done = await window.omoide.call('backup_now', {});
      await renamed;
      return done;
    }""")
    assert result["finished"] and result["total"] == 301 and result["named"] == 1
    assert server_names(backup_db) == {"rin": "Rin Tohsaka"}


def test_a_new_or_renamed_character_is_mirrored_without_back_up_now(launch, app_url, tmp_path,
                                                                    ref_server, backup_db):
    """Memories were mirrored at once, display names only by "Back up now": with the mirror
    drained (nothing queued) the server still named a new character by its id and a
    renamed one by its old name, and a restore brought those back."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "remember", {"character": "rin", "text": "Rin likes green tea"})
    engine_call(page, "create_character", {"name": "Mio Named", "id": "mio"})
    engine_call(page, "rename_character", {"character": "rin", "name": "Rin Tohsaka"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    assert server_names(backup_db) == {"rin": "Rin Tohsaka", "mio": "Mio Named"}


def server_deleted(db: Path) -> dict:
    return server_holds(db, "deleted_characters")


def test_a_deleted_character_is_restored_deleted_and_a_restored_one_live(
        launch, app_url, tmp_path, ref_server, backup_db):
    """A character deleted in the app (in the character trash, memories kept) was held as
    live by the backup server: a restore into a new browser brought it back live, each of
    its memories in sight again. Now the deletion is mirrored like a rename, the restore
    makes it deleted (memories kept, restorable), and restoring it there makes it live on
    the server again."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rei", "id": "rei"})
    engine_call(page, "remember", {"character": "rei", "text": "Rei keeps a secret diary"})
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "remember", {"character": "rin", "text": "Rin likes green tea"})
    engine_call(page, "delete_character", {"character": "rei"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    assert set(server_deleted(backup_db)) == {"rei"}
    page.context.close()

    fresh = open_app(launch, tmp_path / "fresh", app_url)
    result = engine_call(fresh, "backup_restore", {})
    assert result["finished"] and result["imported"] == 2
    live = {c["id"] for c in engine_call(fresh, "characters", {})}
    assert "rin" in live and "rei" not in live
    rei = [c for c in engine_call(fresh, "characters", {"include_deleted": True})
           if c["id"] == "rei"]
    assert rei and rei[0]["deleted_at"] and rei[0]["name"] == "Rei"
    assert [m["text"] for m in engine_call(fresh, "memories", {"character": "rei"})] == [
        "Rei keeps a secret diary"]  # kept, as in the character trash it was deleted to
    engine_call(fresh, "restore_character", {"character": "rei"})
    assert engine_call(fresh, "backends_pump", {"force": True})["queued"] == 0
    assert server_deleted(backup_db) == {}


def test_a_memory_purged_while_the_server_was_down_is_not_restored(launch, app_url, tmp_path,
                                                                   proxy, backup_db):
    """A memory forgotten for good while the server refused writes (its delete still
    queued) came back live from the server's stale copy on a restore, and stayed in the
    browser after the queued delete reached the server."""
    page = open_app(launch, tmp_path / "profile", app_url, PROXY_URL)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "remember", {"character": "rin", "text": "an ordinary note"})
    secret = engine_call(page, "remember", {"character": "rin", "text": "my bank PIN is 4321"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    proxy.rule = lambda method, path, n: ("status", 503) if method != "GET" else None
    engine_call(page, "forget", {"character": "rin", "id": secret["id"]})
    assert engine_call(page, "purge_trash", {"character": "rin"}) == [secret["id"]]
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 2
    result = engine_call(page, "backup_restore", {})
    assert result["finished"] and result["imported"] == 0 and result["skipped"] == 2

    def texts() -> list[str]:
        return [m["text"] for m in engine_call(page, "memories", {"character": "rin"})]

    assert texts() == ["an ordinary note"]
    assert engine_call(page, "trash", {"character": "rin"}) == []
    proxy.rule = None
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    page.reload()
    wait_ready(page)
    assert texts() == ["an ordinary note"]


def test_a_deletion_or_rename_whose_op_cannot_be_queued_is_never_lost(
        launch, app_url, tmp_path, ref_server, backup_db):
    """A character deleted or renamed while its ``name`` op could not be queued (the
    mirror queue's write refused) was only logged: the app held it deleted (or renamed),
    the backup server live under its old name for good, and a restore brought it back
    live. The character's row and its op are now written together: both or neither."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rei", "id": "rei"})
    engine_call(page, "remember", {"character": "rei", "text": "Rei keeps a secret diary"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    assert server_names(backup_db) == {"rei": "Rei"}

    def held() -> dict:
        return next(c for c in engine_call(page, "characters", {"include_deleted": True})
                    if c["id"] == "rei")

    for verb, params in [("delete_character", {}), ("rename_character", {"name": "Rei A."})]:
        fail_writes(page, 1, store="settings")  # the queue's write (a full quota)
        page.evaluate("([v, p]) => window.omoide.call(v, p).then(() => null, e => e.name)",
                      [verb, {"character": "rei", **params}])
        assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
        here = held()
        assert server_names(backup_db) == {"rei": here["name"]}
        assert ("rei" in server_deleted(backup_db)) == (here["deleted_at"] is not None)
    # and once the quota allows it, the deletion and the rename reach the server
    engine_call(page, "rename_character", {"character": "rei", "name": "Rei A."})
    if held()["deleted_at"] is None:
        engine_call(page, "delete_character", {"character": "rei"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    assert server_names(backup_db) == {"rei": "Rei A."}
    assert set(server_deleted(backup_db)) == {"rei"}


def test_a_character_deleted_at_time_zero_stays_deleted(launch, app_url, tmp_path,
                                                        ref_server, backup_db):
    """A deletion time of 0 (1970, a valid time another client or an export may give) was
    read as "live" wherever the app tested ``deleted_at`` for truth: restored from the
    server, the character came back in sight with its memories, reachable by chat apps,
    and the next mirror of its name told the server it was live again."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rei", "id": "rei"})
    engine_call(page, "remember", {"character": "rei", "text": "Rei keeps a secret diary"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    page.context.close()
    backend = SQLiteBackend(backup_db)
    try:
        backend.set_character_name("rei", "Rei", 0.0)
    finally:
        backend.shutdown()

    fresh = open_app(launch, tmp_path / "fresh", app_url)
    result = engine_call(fresh, "backup_restore", {})
    assert result["finished"] and result["imported"] == 1
    assert "rei" not in {c["id"] for c in engine_call(fresh, "characters", {})}
    rei = [c for c in engine_call(fresh, "characters", {"include_deleted": True})
           if c["id"] == "rei"]
    assert rei and rei[0]["deleted_at"] == 0
    # a name op of it (a rename in the character trash) keeps the server's deletion
    engine_call(fresh, "rename_character", {"character": "rei", "name": "Rei B."})
    assert engine_call(fresh, "backends_pump", {"force": True})["queued"] == 0
    assert server_deleted(backup_db) == {"rei": 0.0}
    assert server_names(backup_db) == {"rei": "Rei B."}
    fresh.reload()  # the app's pickers: the live characters only
    wait_ready(fresh)
    fresh.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    fresh.wait_for_function("() => document.querySelector('#current-character').options"
                            ".length > 0")
    assert "Rei" not in fresh.locator("#current-character").inner_text()


def test_a_server_that_answers_again_gets_its_queue_at_once(launch, app_url, tmp_path,
                                                            proxy, backup_db):
    """A health check that found the server up again made its queued changes due in
    memory only: the next call read the queue back from IndexedDB with each op's backoff
    (up to 5 minutes), so the pump sent nothing until then."""
    page = open_app(launch, tmp_path / "profile", app_url, PROXY_URL)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    proxy.rule = lambda method, path, n: ("status", 503)
    made = engine_call(page, "remember", {"character": "rin", "text": "Rin likes green tea"})
    for _ in range(6):  # each forced try fails: the backoff grows to 32 s
        assert engine_call(page, "backends_pump", {"force": True})["queued"] >= 1
    proxy.rule = None
    assert engine_call(page, "backends_check", {})[1]["ok"] is True
    assert engine_call(page, "backends_pump", {})["queued"] == 0
    backend = SQLiteBackend(backup_db)
    try:
        assert backend.get(made["id"])["text"] == "Rin likes green tea"
    finally:
        backend.shutdown()


def server_records(db: Path) -> dict:
    backend = SQLiteBackend(db)
    try:
        return {r["id"]: r for r in backend.list(trashed=None, limit=1000)["items"]}
    finally:
        backend.shutdown()


def test_changes_queued_for_a_server_wait_for_it_when_another_is_set(
        launch, app_url, tmp_path, proxy, backup_db):
    """Changes queued for backup server A while it was down followed the backup URL to
    server B: A never got the forget (nor the trashing, nor the character's deletion),
    and after pointing back at A a restore brought the forgotten memory back live. They
    now wait for A, shown as waiting while B is set, reach A when it is set again, B gets
    none of them, and a restore from A meanwhile skips the memory whose delete waits."""
    page = open_app(launch, tmp_path / "profile", app_url, PROXY_URL)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "create_character", {"name": "Rei", "id": "rei"})
    note = engine_call(page, "remember", {"character": "rin", "text": "an ordinary note"})
    secret = engine_call(page, "remember", {"character": "rin", "text": "my bank PIN is 4321"})
    engine_call(page, "remember", {"character": "rei", "text": "Rei keeps a secret diary"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    assert len(server_records(backup_db)) == 3

    proxy.rule = lambda method, path, n: ("status", 503)  # A is down
    engine_call(page, "forget", {"character": "rin", "id": secret["id"]})
    assert engine_call(page, "purge_trash", {"character": "rin"}) == [secret["id"]]
    engine_call(page, "forget", {"character": "rin", "id": note["id"]})
    engine_call(page, "delete_character", {"character": "rei"})
    queued = engine_call(page, "backends_pump", {"force": True})["queued"]
    assert queued >= 3

    other_db = tmp_path / "other.db"
    with running_server(other_db, OTHER_PORT, api_key=KEY, origins=[app_url]):
        engine_call(page, "set_settings", {"backup_url": OTHER_URL})
        status = engine_call(page, "backends_pump", {"force": True})
        assert status["mirrored"] == 0 and status["queued"] == queued
        rows = [(b["role"], b["name"], b.get("server"), b["queued"])
                for b in status["backends"]]
        assert rows == [("primary", "indexeddb", None, 0),
                        ("fallback", f"server:{OTHER_URL}", None, 0),
                        ("waiting", f"server:{PROXY_URL}", PROXY_URL, queued)]
        assert server_records(other_db) == {}
        assert server_holds(other_db) == {} and server_deleted(other_db) == {}

    # A again, written another way, still refusing writes: a restore from it skips the
    # memory whose delete waits for it (its copy there is stale)
    proxy.rule = lambda method, path, n: ("status", 503) if method != "GET" else None
    engine_call(page, "set_settings", {"backup_url": PROXY_URL.upper() + "/"})
    status = engine_call(page, "backends_status")
    assert [(b["role"], b["queued"]) for b in status] == [("primary", 0), ("fallback", queued)]
    result = engine_call(page, "backup_restore", {})
    assert result["finished"] and result["imported"] == 0 and result["failed"] == 0
    assert engine_call(page, "memories", {"character": "rin"}) == []
    assert [e["memory"]["id"] for e in engine_call(page, "trash", {"character": "rin"})] == [
        note["id"]]

    proxy.rule = None  # A is up: the forget, the trashing and the deletion reach it
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    records = server_records(backup_db)
    assert secret["id"] not in records
    assert records[note["id"]]["trashed_at"] is not None
    assert set(server_deleted(backup_db)) == {"rei"}


HOSTILE_URL = "http://127.0.0.1:31524/<img/src=x/onerror=window.__pwned=1>"


def test_changes_waiting_for_another_server_are_shown_and_can_be_dropped(
        launch, app_url, tmp_path, ref_server, backup_db):
    """The maintenance tab lists the changes waiting for a server no longer set (its URL
    as text, never the key), says what dropping them means before it does, drops them at
    the user's word, and after a switch to a new server suggests "Back up now"."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "remember", {"character": "rin", "text": "Rin likes green tea"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    tab(page, "maintenance")

    def save_url(url: str) -> None:
        page.fill("#backup-url", url)
        page.click("#backup-save")

    save_url(HOSTILE_URL)  # nothing answers there: its changes stay queued
    out = page.locator("#backup-out")
    expect(out).to_have_attribute("data-state", "switched")
    expect(out).to_contain_text("Back up now")
    late = engine_call(page, "remember", {"character": "rin", "text": "Rin reads at night"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 1
    save_url(SERVER_URL)
    expect(out).to_have_attribute("data-state", "switched")

    row = page.locator("#backends-body tr[data-role='waiting']")
    expect(row).to_have_count(1)
    expect(row.locator("td").first).to_have_text(HOSTILE_URL)  # as text, not markup
    expect(row.locator("td[data-queued]")).to_have_attribute("data-queued", "1")
    assert page.locator("#backup-box img").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert KEY not in page.content()
    drop = row.get_by_role("button", name=f"Drop the changes waiting for {HOSTILE_URL}")
    confirm = page.locator("#backup-drop")
    expect(confirm).to_be_hidden()
    drop.click()
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text(HOSTILE_URL)
    expect(confirm).to_contain_text("will not get it")
    expect(confirm).to_contain_text("Back up now")
    page.locator("#backup-box").scroll_into_view_if_needed()
    shot(page, "backup-waiting")
    page.click("#backup-drop-no")  # cancelled: nothing is dropped
    expect(confirm).to_be_hidden()
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 1
    expect(row).to_have_count(1)

    drop.click()
    page.click("#backup-drop-yes")
    expect(row).to_have_count(0)
    expect(confirm).to_be_hidden()
    status = engine_call(page, "backends_pump", {"force": True})
    assert status["queued"] == 0 and [b["role"] for b in status["backends"]] == [
        "primary", "fallback"]
    # the server set now got nothing of the dropped change; "Back up now" fills it
    assert late["id"] not in server_records(backup_db)
    page.click("#backup-now")
    expect(out).to_have_attribute("data-state", "done")
    assert server_records(backup_db)[late["id"]]["text"] == "Rin reads at night"


def stored_setting(page: Page, key: str):
    """A row of IndexedDB's ``settings`` store, read raw (not through the app)."""
    return page.evaluate("""(key) => new Promise((ok, fail) => {
        const open = indexedDB.open("omoide");
        open.onerror = () => fail(open.error);
        open.onsuccess = () => {
            const get = open.result.transaction("settings").objectStore("settings").get(key);
            get.onsuccess = () => { open.result.close(); ok(get.result ?? null); };
            get.onerror = () => fail(get.error);
        };
    })""", key)


def test_a_memory_forgotten_while_another_server_was_set_never_comes_back_from_the_first(
        launch, app_url, tmp_path, ref_server, backup_db):
    """A memory forgotten for good while backup server B was set: its delete went to B,
    server A kept its copy, and after pointing back at A a restore brought the forgotten
    memory back live. The browser now keeps the id of each purged memory (never its text):
    a restore from any server skips it, and "Back up now" erases the server's copy."""
    page = open_app(launch, tmp_path / "profile", app_url)
    engine_call(page, "create_character", {"name": "Rin", "id": "rin"})
    engine_call(page, "remember", {"character": "rin", "text": "an ordinary note"})
    secret = engine_call(page, "remember", {"character": "rin", "text": "my bank PIN is 4321"})
    assert engine_call(page, "backends_pump", {"force": True})["queued"] == 0
    assert secret["id"] in server_records(backup_db)

    with running_server(tmp_path / "other.db", OTHER_PORT, api_key=KEY, origins=[app_url]):
        engine_call(page, "set_settings", {"backup_url": OTHER_URL})
        engine_call(page, "forget", {"character": "rin", "id": secret["id"]})
        assert engine_call(page, "purge_trash", {"character": "rin"}) == [secret["id"]]
        engine_call(page, "backends_pump", {"force": True})
    assert secret["id"] in server_records(backup_db)  # A was not set: its copy is stale

    engine_call(page, "set_settings", {"backup_url": SERVER_URL})
    page.reload()  # what is kept is in IndexedDB, not in this page's memory
    wait_ready(page)
    result = engine_call(page, "backup_restore", {})
    assert [m["text"] for m in engine_call(page, "memories", {"character": "rin"})] == [
        "an ordinary note"]
    assert result["finished"] and result["imported"] == 0 and result["failed"] == 0
    assert engine_call(page, "trash", {"character": "rin"}) == []
    tombstone = stored_setting(page, f"forgotten:{secret['id']}")  # the id, not the text
    assert set(tombstone["value"]) == {"character", "at"}
    assert tombstone["value"]["character"] == "rin" and "4321" not in str(tombstone)

    tab(page, "maintenance")
    page.click("#backup-now")
    out = page.locator("#backup-out")
    expect(out).to_have_attribute("data-state", "done")
    expect(out).to_contain_text("1 that were forgotten here for good were erased")
    assert set(server_records(backup_db)) == {
        m["id"] for m in engine_call(page, "memories", {"character": "rin"})}
    backed = engine_call(page, "backup_now")  # erased once: nothing left to erase
    assert backed["finished"] and backed["deleted"] == 0
