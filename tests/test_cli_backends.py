"""The CLI with a backup server: --backup mirrors changes, `backup` copies everything,
`backends` shows the state of each backend."""

from __future__ import annotations

import io
import json

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.cli.main import main
from tests.backend_fixtures import running_server
from tests.test_engine_embedder import HashingEmbedder

PORT = 27675
URL = f"http://127.0.0.1:{PORT}"
OTHER_PORT = 27676
OTHER_URL = f"http://127.0.0.1:{OTHER_PORT}"


def run(db, *args, backup=True, url=URL):
    out, err = io.StringIO(), io.StringIO()
    server = ["--backup", url, "--backup-key", "k"] if backup else []
    code = main(["--db", str(db), *server, "--json", *args],
                embedder_factory=lambda model, dtype: HashingEmbedder(), stdout=out, stderr=err)
    return code, (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()


def test_backup_mirror_and_state(tmp_path):
    db = tmp_path / "w.db"
    server_side = HttpBackend(HttpConfig(URL, api_key="k"))
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        # written without the server: `backup` copies them
        code, tea, _ = run(db, "remember", "alice", "Alice loves green tea", backup=False)
        assert code == 0
        run(db, "remember", "bob", "Bob likes rain", backup=False)
        code, counts, _ = run(db, "backup")
        assert (code, counts["created"], counts["updated"]) == (0, 2, 0)
        assert server_side.list(character_id="alice")["items"][0]["text"] == (
            "Alice loves green tea")
        # written with the server: mirrored (vector included) before the command ends
        code, cat, _ = run(db, "remember", "alice", "Alice has a cat")
        assert server_side.get(cat["id"], with_vector=True)["vector"] is not None
        code, _, _ = run(db, "forget", "alice", tea["id"])  # an update: mirrored
        assert code == 0
        assert server_side.get(tea["id"])["trashed_at"] is not None
        code, states, _ = run(db, "backends")
        assert code == 0 and [(s["role"], s["ok"]) for s in states] == [
            ("primary", True), ("fallback", True)]
        code, counts, _ = run(db, "backup")
        assert (counts["created"], counts["updated"]) == (0, 3)

    code, tea2, _ = run(db, "restore", "alice", tea["id"])  # server down: queued, kept
    assert code == 0
    assert json.loads((tmp_path / "w.db.mirror-queue.json").read_text())[0]["id"] == tea["id"]
    code, states, _ = run(db, "backends")
    assert code == 2 and states[1]["ok"] is False and states[1]["queued"] == 1
    assert "Cannot reach the backend" in states[1]["last_error"]
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        code, _, _ = run(db, "stats", "alice")  # any later run drains the queue on close
        assert code == 0
        assert server_side.get(tea["id"])["trashed_at"] is None
    assert json.loads((tmp_path / "w.db.mirror-queue.json").read_text()) == []


def test_backup_without_a_server_is_a_clear_error(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    code = main(["--db", str(tmp_path / "w.db"), "backup"],
                embedder_factory=lambda model, dtype: HashingEmbedder(), stdout=out, stderr=err)
    assert code == 2 and "no backup server" in err.getvalue()


def test_a_backup_server_that_never_answers_holds_a_command_for_seconds_not_a_minute(tmp_path):
    """It accepts connections and never answers: each command waited for the health check
    (30 s), the mirror thread (10 s) and a last pump (30 s more). The change stays queued
    for the next run."""
    import socket
    import time

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(64)  # accepted by the kernel, never read nor answered
    try:
        started = time.monotonic()
        code, memory, _ = run(tmp_path / "w.db", "remember", "fay", "Fay collects stamps")
        took = time.monotonic() - started
    finally:
        listener.close()
    assert code == 0 and took < 15, took
    queue = json.loads((tmp_path / "w.db.mirror-queue.json").read_text())
    assert [op["id"] for op in queue] == [memory["id"]]


def test_an_invalid_stored_record_is_left_out_of_backup_and_export_and_said(tmp_path):
    """One damaged row stopped `backup` part way (the server refused it: 4 of 9 copied, or
    none when it sorted first); `export` left it out without a word."""
    import sqlite3

    db = tmp_path / "w.db"
    ids = [run(db, "remember", "alice", f"Alice note {n} about tea", backup=False)[1]["id"]
           for n in range(5)]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE memories SET record = json_set(record, '$.kind', 'bogus') "
                     "WHERE id = ?", (min(ids),))
    server_side = HttpBackend(HttpConfig(URL, api_key="k"))
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        code, counts, _ = run(db, "backup")
        assert code == 0 and (counts["created"], counts["invalid"]) == (4, [min(ids)])
        assert server_side.list(character_id="alice")["total"] == 4
    out, err = io.StringIO(), io.StringIO()
    assert main(["--db", str(db), "export", str(tmp_path / "e.json")],
                embedder_factory=lambda model, dtype: HashingEmbedder(), stdout=out,
                stderr=err) == 0
    assert "exported 4 memories" in out.getvalue()
    assert "1 invalid stored record" in out.getvalue() + err.getvalue()


def test_display_names_reach_the_backup_server(tmp_path):
    """Names given by an import (or a card) were kept in the workspace only: the REST
    contract had no place for them, so the backup held every memory of "alice" but not
    that she is "Alice Liddell", and a restore from it came back without names."""
    db = tmp_path / "w.db"
    export = {"format": "omoide-export", "version": 2, "characters": [
        {"id": "alice", "name": "Alice Liddell", "stamp": None, "memories": [], "trash": []}]}
    (tmp_path / "e.json").write_text(json.dumps(export))
    run(db, "remember", "bob", "Bob likes rain", backup=False)
    export["characters"] = [{"id": "bob", "name": "Bob Ross", "stamp": None, "memories": [],
                             "trash": []}]
    (tmp_path / "b.json").write_text(json.dumps(export))
    assert run(db, "import", str(tmp_path / "b.json"), backup=False)[0] == 0
    server_side = HttpBackend(HttpConfig(URL, api_key="k"))
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        code, counts, _ = run(db, "backup")  # named before the server was set: copied
        assert code == 0 and counts["named"] == 1
        assert server_side.character_names()["bob"] == "Bob Ross"
        code, _, _ = run(db, "import", str(tmp_path / "e.json"))  # mirrored as it happens
        assert code == 0
        assert server_side.character_names()["alice"] == "Alice Liddell"
        server_side.set_character_name("bob", "Robert Ross")  # a rename replaces the name
        assert server_side.character_names()["bob"] == "Robert Ross"


def before_names(app):
    """The reference app as a server written to the REST contract before it had the names
    routes: /characters is no route there (404)."""

    async def older(scope, receive, send):
        if scope["path"].startswith("/characters"):
            scope = scope | {"raw_path": b"/no-route", "path": "/no-route"}
        await app(scope, receive, send)

    return older


def bob_ross(tmp_path):
    """A workspace (no backup server) holding one memory of "bob", named "Bob Ross" by an
    import; returns its path and the export that named him."""
    db = tmp_path / "w.db"
    export = {"format": "omoide-export", "version": 2, "characters": [
        {"id": "bob", "name": "Bob Ross", "stamp": None, "memories": [], "trash": []}]}
    (tmp_path / "b.json").write_text(json.dumps(export))
    run(db, "remember", "bob", "Bob likes rain", backup=False)
    assert run(db, "import", str(tmp_path / "b.json"), backup=False)[0] == 0
    return db, export


def test_a_server_without_the_names_routes_gets_every_memory_and_no_names(tmp_path):
    """Such a server answers 404 there: the backup failed at its end, and a queued name op
    held up every later change to it (per-server order), for good."""
    db, export = bob_ross(tmp_path)
    server_side = HttpBackend(HttpConfig(URL, api_key="k"))
    with running_server(tmp_path / "server.db", PORT, api_key="k", wrap_app=before_names):
        code, counts, err = run(db, "backup")
        assert (code, counts["created"], counts["named"]) == (0, 1, 0), err
        export["characters"][0] |= {"id": "carol", "name": "Carol King"}
        (tmp_path / "c.json").write_text(json.dumps(export))
        assert run(db, "import", str(tmp_path / "c.json"))[0] == 0  # a name op, mirrored
        code, snow, _ = run(db, "remember", "bob", "Bob likes snow")  # after it
        assert code == 0 and server_side.get(snow["id"])["text"] == "Bob likes snow"
        assert server_side.character_names() == {}
    assert json.loads((tmp_path / "w.db.mirror-queue.json").read_text()) == []


def test_a_backup_from_the_cli_never_makes_a_deleted_character_live_again(tmp_path):
    """A character the app deleted is held deleted by the backup server (memories kept).
    The CLI cannot delete or restore a character: its `backup` of the same named
    character sends the name and leaves the server's deletion as it is."""
    db, _ = bob_ross(tmp_path)
    server_side = HttpBackend(HttpConfig(URL, api_key="k"))
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        server_side.set_character_name("bob", "Bob", deleted_at=1700000000.0)
        code, counts, _ = run(db, "backup")
        assert code == 0 and counts["named"] == 1
        assert server_side.character_names()["bob"] == "Bob Ross"
        assert server_side.deleted_characters() == {"bob": 1700000000.0}


def test_a_bad_backup_key_names_the_backup_flags_and_writes_nothing(tmp_path):
    """A backup key with a space was refused as "Invalid --key": no such CLI flag (the
    user's was --backup-key)."""
    db = tmp_path / "w.db"
    for key in (["--backup-key", "two words"],
                ["--backup-key", "k", "--backup-key-file", str(tmp_path / "k")]):
        out, err = io.StringIO(), io.StringIO()
        code = main(["--db", str(db), "--backup", URL, *key, "remember", "alice", "tea"],
                    embedder_factory=lambda model, dtype: HashingEmbedder(), stdout=out,
                    stderr=err)
        assert code == 2 and "--backup-key" in err.getvalue(), err.getvalue()
        assert "words" not in err.getvalue()
    assert not db.exists()


def test_changes_queued_for_one_backup_server_go_to_that_server_only(tmp_path):
    """Changes queued while server A was down went to server B the next time the workspace
    was opened with --backup B: A's backup silently missed them, and B got ops for records
    it may never have had. They wait for A (said on every run and by `backends`) and reach
    A when it is named again (its URL written another way too)."""
    db = tmp_path / "w.db"
    code, tea, _ = run(db, "remember", "alice", "Alice loves green tea")  # A down: queued
    assert code == 0
    a_side = HttpBackend(HttpConfig(URL, api_key="k"))
    b_side = HttpBackend(HttpConfig(OTHER_URL, api_key="k"))
    with running_server(tmp_path / "b.db", OTHER_PORT, api_key="k"):
        code, rain, err = run(db, "remember", "bob", "Bob likes rain", url=OTHER_URL)
        assert code == 0 and b_side.get(rain["id"]) is not None  # B gets its run's change
        assert b_side.get(tea["id"]) is None  # never A's change
        assert f"1 change(s) wait for backup {URL}" in err
        code, states, _ = run(db, "backends", url=OTHER_URL)
        assert code == 2  # B is up; changes wait for A
    assert [(s["role"], s["name"], s["queued"]) for s in states[1:]] == [
        ("fallback", f"backup {OTHER_URL}", 0), ("waiting", f"backup {URL}", 1)]
    assert "Cannot reach the backend" in states[2]["last_error"]
    with running_server(tmp_path / "a.db", PORT, api_key="k"):
        code, _, err = run(db, "stats", "alice", url=f"{URL}/")
        assert code == 0 and "wait for" not in err
        assert a_side.get(tea["id"])["text"] == "Alice loves green tea"
        assert a_side.get(rain["id"]) is None  # B's change stays B's
    assert json.loads((tmp_path / "w.db.mirror-queue.json").read_text()) == []


def test_changes_waiting_for_a_server_gone_for_good_can_be_dropped(tmp_path):
    """Changes queued for a server the user left for good waited for it forever: every
    command said so and `backends` exited 2, with no way out but editing the queue file.
    `backends --drop-waiting` drops them (every memory stays in the workspace)."""
    db = tmp_path / "w.db"
    code, tea, _ = run(db, "remember", "alice", "Alice loves green tea")  # A down: queued
    assert code == 0
    with running_server(tmp_path / "b.db", OTHER_PORT, api_key="k"):
        code, _, err = run(db, "backends", "--drop-waiting", url=OTHER_URL)
        assert code == 0, err
        assert f"dropped 1 change(s) queued for backup {URL}" in err
        code, states, err = run(db, "backends", url=OTHER_URL)
        assert code == 0 and "wait for" not in err
        assert [s["role"] for s in states] == ["primary", "fallback"]
    assert json.loads((tmp_path / "w.db.mirror-queue.json").read_text()) == []
    code, stats, _ = run(db, "stats", "alice", backup=False)
    assert code == 0 and stats["memories"] == 1


def test_a_memory_purged_while_no_server_was_set_is_erased_by_the_next_backup(tmp_path):
    """A memory forgotten for good while the workspace ran without its backup server (or
    with another one): the server was never told, and `backup` only created and updated,
    so the forgotten text stayed there for good. `backup` now deletes the server's copies of
    what the workspace purged (its change feed keeps the ids, never the text)."""
    from omoide.workspace import open_workspace

    db = tmp_path / "w.db"
    server_side = HttpBackend(HttpConfig(URL, api_key="k"))
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        code, secret, _ = run(db, "remember", "alice", "Alice's bank PIN is 4321")
        code, note, _ = run(db, "remember", "alice", "Alice loves green tea")
        assert server_side.get(secret["id"]) is not None
    ws = open_workspace(db, embedder=HashingEmbedder())  # no backup server set
    ws.engine.forget("alice", secret["id"])
    assert ws.engine.purge_trash("alice") == [secret["id"]]
    ws.close()
    with running_server(tmp_path / "server.db", PORT, api_key="k"):
        assert server_side.get(secret["id"]) is not None  # stale: never told
        code, counts, _ = run(db, "backup")
        assert server_side.get(secret["id"]) is None
        assert code == 0 and counts["deleted"] == 1 and counts["updated"] == 1
        assert server_side.get(note["id"])["text"] == "Alice loves green tea"
        out = io.StringIO()
        code = main(["--db", str(db), "--backup", URL, "--backup-key", "k", "backup"],
                    embedder_factory=lambda model, dtype: HashingEmbedder(), stdout=out)
        assert code == 0 and "erased" not in out.getvalue()  # nothing left to erase
