"""A memory's place in a conversation (``conversation``, ``turn``) through every entry point a
chat app uses: CLI remember and ingest, the MCP tools, the reference REST server, the
browser's rpc verbs, and a workspace reopened from SQLite. A chat app adding one message at a
time names the conversation it continues and gets the next turn back; a bad value is refused
by name and writes nothing. (Engine, snapshot, export/import and the SQLite backend:
``test_neighbourhood.py``; the JS client through the bridge: ``browser/test_chat_apps.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.errors import OmoideError
from omoide.mcp import build_server
from omoide.workspace import open_workspace
from tests.backend_fixtures import make_record, running_server
from tests.test_cli import Cli
from tests.test_engine_embedder import HashingEmbedder
from tests.test_mcp import data, error_text, run_with_client

PORT = 27741
SAID = ["I love green tea.", "I live in Kyoto.", "I adopted a cat named Biscuit."]


@pytest.fixture
def cli(tmp_path, capsys) -> Cli:
    return Cli(tmp_path / "ws.db", capsys)


def places(db: Path, character: str = "mika") -> dict[str, tuple]:
    """text -> (conversation, turn), read back from a fresh workspace on the SQLite file."""
    ws = open_workspace(db, embedder=HashingEmbedder(seed=0))
    try:
        if character not in ws.engine.stores:
            return {}
        return {m.text: (m.conversation, m.turn) for m in ws.engine.memories(character)}
    finally:
        ws.close()


# -- CLI --------------------------------------------------------------------------------------


def test_cli_remember_places_a_memory_and_appends_to_a_conversation(cli):
    first = cli.json("remember", "mika", "we went to the shelter", "--conversation", "chat-1",
                     "--context", "On 8 May 2023")
    assert (first["conversation"], first["turn"], first["context"]) == ("chat-1", 0,
                                                                        "On 8 May 2023")
    assert cli.json("remember", "mika", "we adopted a cat",
                    "--conversation", "chat-1")["turn"] == 1
    out = cli.ok("remember", "mika", "his name is Biscuit", "--conversation", "chat-1")
    assert "conversation=chat-1 turn=2" in out
    assert cli.json("remember", "mika", "an aside", "--conversation", "chat-1",
                    "--turn", "7")["turn"] == 7
    assert places(cli.db)["his name is Biscuit"] == ("chat-1", 2)  # kept on disk


@pytest.mark.parametrize(("args", "field"), [
    (["--turn", "3"], "turn"),  # a turn without a conversation
    (["--conversation", "chat-1", "--turn", "-1"], "turn"),
    (["--conversation", "   "], "conversation"),
    (["--conversation", "x" * 257], "conversation"),
])
def test_cli_remember_refuses_a_bad_place_by_name(cli, args, field):
    cli.json("remember", "mika", "a first memory")
    err = cli.fails("remember", "mika", "a bad one", *args)
    assert field in err
    assert list(places(cli.db)) == ["a first memory"]


def test_cli_ingest_continues_a_named_conversation(cli, tmp_path):
    for n, text in enumerate(SAID):
        path = tmp_path / f"m{n}.txt"
        path.write_text(f"user: {text}\n", encoding="utf-8")
        report = cli.json("ingest", "mika", str(path), "--conversation", "chat-9")
        assert report["conversation"] == "chat-9"
        assert [i["turn"] for i in report["items"] if i["action"] == "stored"] == [n]
    assert places(cli.db) == {
        t: ("chat-9", n) for n, t in enumerate(SAID)}
    out = cli.ok("ingest", "mika", str(tmp_path / "m0.txt"), "--conversation", "chat-9",
                 "--dry-run")
    assert "conversation chat-9" in out


def test_cli_ingest_names_the_fresh_conversation_of_a_file(cli, tmp_path):
    path = tmp_path / "chat.txt"
    path.write_text("".join(f"user: {t}\n" for t in SAID), encoding="utf-8")
    report = cli.json("ingest", "mika", str(path))
    assert report["conversation"] and report["conversation"].startswith("ingest-")
    assert set(places(cli.db).values()) == {(report["conversation"], n)
                                            for n in range(len(SAID))}
    assert "conversation ingest-" in cli.ok("ingest", "mika", str(path), "--dry-run")


def test_cli_ingest_refuses_a_bad_conversation_and_writes_nothing(cli, tmp_path):
    path = tmp_path / "chat.txt"
    path.write_text("user: I love green tea.\n", encoding="utf-8")
    assert "conversation" in cli.fails("ingest", "mika", str(path), "--conversation", " ")
    assert places(cli.db) == {}


# -- MCP --------------------------------------------------------------------------------------


def test_mcp_remember_and_ingest_carry_the_place(tmp_path):
    workspace = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    server = build_server(workspace)

    async def body(c) -> None:
        first = data(await c.call_tool("remember", {
            "character": "mika", "text": "we went to the shelter", "conversation": "chat-1",
            "context": "On 8 May 2023"}))
        assert (first["conversation"], first["turn"], first["context"]) == (
            "chat-1", 0, "On 8 May 2023")
        report = data(await c.call_tool("ingest", {
            "character": "mika", "conversation": "chat-1",
            "messages": [{"role": "user", "content": "I adopted a cat named Biscuit."}]}))
        assert report["conversation"] == "chat-1"
        assert [i["turn"] for i in report["items"] if i["action"] == "stored"] == [1]
        placed = data(await c.call_tool("remember", {
            "character": "mika", "text": "an aside", "conversation": "chat-1", "turn": 5}))
        assert placed["turn"] == 5
        for args, field in (({"turn": 2}, "turn"), ({"conversation": "c", "turn": -3}, "turn"),
                            ({"conversation": ""}, "conversation")):
            refused = await c.call_tool("remember", {"character": "mika", "text": "bad"} | args)
            assert field in error_text(refused)
        refused = await c.call_tool("ingest", {"character": "mika", "conversation": " ",
                                               "messages": "I hate mornings."})
        assert "conversation" in error_text(refused)

    run_with_client(server, body)
    workspace.close()
    assert places(tmp_path / "mem.db") == {
        "we went to the shelter": ("chat-1", 0), "I adopted a cat named Biscuit.": ("chat-1", 1),
        "an aside": ("chat-1", 5)}


# -- the reference REST server ---------------------------------------------------------------


def test_the_rest_server_keeps_the_place_and_refuses_bad_ones(tmp_path):
    backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}/"))
    with running_server(tmp_path / "s.db", PORT):
        record = backend.create(make_record("mika", "his name is Biscuit",
                                            conversation="chat-1", turn=2))
        got = backend.get(record["id"])
        assert (got["conversation"], got["turn"]) == ("chat-1", 2)
        listed = backend.list(character_id="mika")["items"]
        assert [(r["conversation"], r["turn"]) for r in listed] == [("chat-1", 2)]
        for bad, field in (({"turn": 3}, "turn"), ({"conversation": "c", "turn": "3"}, "turn"),
                           ({"conversation": 7}, "conversation")):
            with pytest.raises(OmoideError) as info:
                backend.create(make_record("mika", "bad", **bad))
            assert field in str(info.value)
        assert backend.list(character_id="mika")["total"] == 1


# -- the browser's rpc verbs (the worker's Python, under CPython here) -----------------------


def browser_session():
    """The worker's session (its IndexedDB listener included) on the hashing embedder."""
    from omoide.browser import session
    from omoide.engine import MemoryEngine
    from omoide.governance.governor import Governor

    s = session.Session("omoide/all-MiniLM-L6-v2", "q8")
    s.engine = MemoryEngine(HashingEmbedder(128), listeners=[s.listener, s.mirror])
    s.governor = Governor(s.engine)
    return s


def rpc(method: str, **params) -> dict:
    from omoide.browser import rpc as rpc_module

    return json.loads(rpc_module.dispatch(method, json.dumps(params)))


def test_the_browser_rpc_verbs_carry_the_place(monkeypatch):
    from omoide.browser import session

    fake = browser_session()
    monkeypatch.setattr(session, "SESSION", fake)
    first = rpc("remember", character="mika", text="we went to the shelter",
                conversation="chat-1", context="On 8 May 2023")["result"]
    assert (first["conversation"], first["turn"], first["context"]) == ("chat-1", 0,
                                                                        "On 8 May 2023")
    from omoide.browser.persistence import change_payload

    row = change_payload(fake.listener.pending[-1])["memory"]  # what IndexedDB is given
    assert (row["conversation"], row["turn"]) == ("chat-1", 0)
    fake.listener.discard()
    report = rpc("ingest", character="mika", dry_run=False, conversation="chat-1",
                 at=1_683_500_000,
                 messages=[{"role": "user", "content": "I adopted a cat named Biscuit."}])
    assert report["result"]["conversation"] == "chat-1"
    stored = [i for i in report["result"]["items"] if i["action"] == "stored"]
    assert [i["turn"] for i in stored] == [1]
    memory = fake.engine.get("mika", stored[0]["memory_id"])
    assert (memory.conversation, memory.turn, memory.created_at) == ("chat-1", 1, 1_683_500_000)
    items = [{"text": "his name is Biscuit", "conversation": "chat-1"}]
    assert rpc("remember_many", character="mika", items=items)["result"][0]["turn"] == 2
    before = len(fake.engine.memories("mika"))
    for verb, params, field in (
            ("remember", {"text": "bad", "turn": 1}, "turn"),
            ("remember", {"text": "bad", "conversation": ["x"]}, "conversation"),
            ("ingest", {"messages": "I hate mornings.", "dry_run": False,
                        "conversation": 3}, "conversation")):
        reply = rpc(verb, character="mika", **params)
        assert not reply["ok"] and reply["error"]["code"] == "INVALID_ARGUMENT"
        assert field in reply["error"]["message"], reply
    assert len(fake.engine.memories("mika")) == before

