"""The MCP server (``python -m omoide.mcp``), driven by the official SDK's own clients.

- In process (SDK ``Client`` over its in-memory transport), on a workspace with the fake
  hashing embedder: every tool, error results, isolation, persistence across reopen.
- Over stdio and streamable HTTP: the real command in a subprocess with the real default
  model (``models`` marker; skipped when dist/models is not built).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from omoide.mcp import TOOL_NAMES, build_server
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
HTTP_PORT = 27691
HTTP_KEY = "mcp-subprocess-key-0123456789"
TIMEOUT = 45.0  # one subprocess session, model load included


def data(result: Any) -> dict[str, Any]:
    """The JSON a successful tool call answered (structured content, else the text)."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert result.is_error, result
    return " ".join(getattr(c, "text", "") for c in result.content)


# -- in process, fake embedder ---------------------------------------------------------------


@pytest.fixture()
def workspace(tmp_path: Path):
    ws = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    yield ws
    ws.close()


def run_async(main, deadline: float = TIMEOUT) -> Any:
    """``anyio.run(main)`` in a thread of its own: in the full suite the browser tests' sync
    Playwright keeps an asyncio loop running in the main thread, where anyio.run refuses."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = anyio.run(main)
        except BaseException as err:  # noqa: BLE001 - re-raised in the test's thread
            result["error"] = err

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(deadline + 30)
    assert not thread.is_alive(), "the MCP client did not finish"
    if "error" in result:
        raise result["error"]
    return result.get("value")


def run_stdio(params: StdioServerParameters, log: Path, body, deadline: float = TIMEOUT
              ) -> None:
    """``body(session)`` against the MCP server started as a subprocess over stdio; the
    server's stderr goes to ``log``, printed when the scenario fails."""
    async def main() -> None:
        with log.open("w") as errlog, anyio.fail_after(deadline):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as s:
                    await body(s)

    try:
        run_async(main, deadline)
    except BaseException:
        if log.exists():
            print(log.read_text(errors="replace"), file=sys.stderr)
        raise


def run_with_client(server: Any, body) -> Any:
    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with Client(server) as client:
                return await body(client)

    return run_async(main)


def test_every_tool_in_process(tmp_path: Path) -> None:
    workspace = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    server = build_server(workspace)

    async def body(c: Client) -> None:
        names = {t.name for t in (await c.list_tools()).tools}
        assert set(TOOL_NAMES) <= names

        tea = data(await c.call_tool("store_fact", {"character": "alice",
                                                    "text": "Alice loves green tea"}))
        assert tea["character_id"] == "alice" and tea["kind"] == "fact"
        data(await c.call_tool("remember", {"character": "alice", "kind": "diary",
                                            "text": "Alice climbed Mount Takao on Sunday",
                                            "importance": 0.8, "meta": {"src": "test"}}))
        hits = data(await c.call_tool("recall", {"character": "alice",
                                                 "query": "green tea", "k": 3}))["hits"]
        assert hits[0]["memory"]["id"] == tea["id"] and hits[0]["score"] > 0

        stats = data(await c.call_tool("stats", {"character": "alice"}))
        assert stats["memories"] == 2 and stats["by_kind"] == {"diary": 1, "fact": 1}

        trashed = data(await c.call_tool("forget", {"character": "alice",
                                                    "memory_id": tea["id"]}))
        assert trashed["memory"]["id"] == tea["id"] and trashed["trashed_at"] > 0
        assert "vector" not in trashed
        assert data(await c.call_tool("stats", {"character": "alice"}))["trashed"] == 1
        back = data(await c.call_tool("restore", {"character": "alice",
                                                  "memory_id": tea["id"]}))
        assert back["id"] == tea["id"]

        report = data(await c.call_tool("ingest", {
            "character": "alice",
            "messages": [{"role": "user", "content": "I love hiking in the mountains."},
                         {"role": "assistant", "content": "Nice!"}],
            "dry_run": True}))
        assert report["dry_run"] is True and report["items"]
        assert data(await c.call_tool("stats", {"character": "alice"}))["memories"] == 2

        audit = data(await c.call_tool("audit", {"character": "alice"}))
        assert audit["character"] == "alice"
        summary = data(await c.call_tool("summarize", {"character": "alice"}))
        assert summary["dry_run"] is True

    try:
        run_with_client(server, body)
    finally:
        workspace.close()
    # written through to SQLite: a fresh workspace on the same file sees it
    again = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    try:
        assert again.engine.stats("alice")["memories"] == 2
        assert again.engine.stats("alice")["trashed"] == 0
    finally:
        again.close()


def test_invalid_records_are_refused_naming_the_field(workspace) -> None:
    server = build_server(workspace)

    async def body(c: Client) -> None:
        for arguments, name in [({"importance": 5}, "importance"),
                                ({"key": "k" * 300}, "key"), ({"kind": "bogus"}, "kind")]:
            result = await c.call_tool("remember", {"character": "alice", "text": "hi",
                                                    **arguments})
            assert "INVALID_ARGUMENT" in error_text(result) and name in error_text(result)
        bad_id = await c.call_tool("remember", {"character": "../../etc/passwd", "text": "x"})
        assert "INVALID_CHARACTER_ID" in error_text(bad_id)

    run_with_client(server, body)
    assert workspace.engine.characters() == []
    assert workspace.backend.health()["memories"] == 0


def test_an_unknown_argument_or_a_value_of_another_type_is_refused(workspace) -> None:
    """The SDK ignored unknown names and coerced types: ``Key=`` (not ``key``) stored a
    memory with no key beside the one it was meant to replace; ``turn=true`` was 1."""
    server = build_server(workspace)

    async def body(c: Client) -> None:
        for arguments, name in [({"Key": "favorite_drink"}, "Key"),
                                ({"importance_level": 0.9}, "importance_level"),
                                ({"turn": True, "conversation": "c1"}, "turn"),
                                ({"importance": "0.9"}, "importance")]:
            result = await c.call_tool("remember", {"character": "alice", "text": "hi",
                                                    **arguments})
            assert result.is_error and name in error_text(result), (arguments, result)
        bad_k = await c.call_tool("recall", {"character": "alice", "query": "hi", "k": 2.5})
        assert bad_k.is_error
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert tools["remember"].input_schema["additionalProperties"] is False
        fine = data(await c.call_tool("remember", {"character": "alice", "text": "hi",
                                                   "importance": 1}))  # an int for a float
        assert fine["importance"] == 1.0

    run_with_client(server, body)
    assert [m.text for m in workspace.engine.memories("alice")] == ["hi"]


def test_a_string_argument_is_kept_as_the_string_it_is(workspace) -> None:
    """The SDK read string arguments as JSON: ``key="null"`` stored a memory without its
    key, ``context="null"`` without its context, and a context that was JSON text was
    refused as "not a valid string". A list sent as JSON text still reads as the list."""
    server = build_server(workspace)

    async def body(c: Client) -> None:
        held = data(await c.call_tool("remember", {
            "character": "alice", "text": "Alice likes tea", "key": "null",
            "context": "null", "conversation": "null"}))
        assert (held["key"], held["context"], held["conversation"]) == ("null",) * 3
        turns = '["user: hi", "assistant: hello"]'
        noted = data(await c.call_tool("remember", {"character": "alice",
                                                    "text": "Alice has a cat",
                                                    "context": turns}))
        assert noted["context"] == turns
        listed = data(await c.call_tool("ingest", {
            "character": "alice", "messages": '["I love green tea.", "I live in Osaka."]'}))
        assert [i["source"] for i in listed["items"]] == [0, 1]

    run_with_client(server, body)


def test_audit_reports_quarantined_rows(tmp_path: Path) -> None:
    import sqlite3

    ws = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    kept = ws.engine.remember("alice", "Alice loves green tea")
    ws.close()
    con = sqlite3.connect(tmp_path / "mem.db")
    with con:  # a row damaged behind Omoide's back: NaN importance
        record = json.dumps(kept.to_dict() | {"id": "01BADROW000000000000000000",
                                              "importance": float("nan")})
        con.execute("INSERT INTO memories SELECT '01BADROW000000000000000000', character_id, "
                    "kind, trashed_at, updated_at, ?, vector FROM memories", (record,))
    con.close()
    workspace = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    server = build_server(workspace)

    async def body(c: Client) -> None:
        audit = data(await c.call_tool("audit", {"character": "alice"}))
        assert [(q["id"], q["field"]) for q in audit["quarantined"]] == [
            ("01BADROW000000000000000000", "importance")]
        hits = data(await c.call_tool("recall", {"character": "alice", "query": "tea"}))
        assert [h["memory"]["id"] for h in hits["hits"]] == [kept.id]
        assert data(await c.call_tool("stats", {"character": "alice"}))["memories"] == 1

    try:
        run_with_client(server, body)
    finally:
        workspace.close()


def test_errors_are_tool_errors_with_the_message(workspace) -> None:
    server = build_server(workspace)

    async def body(c: Client) -> None:
        empty = await c.call_tool("remember", {"character": "alice", "text": "   "})
        assert "Memory text is empty" in error_text(empty)
        assert "EMPTY_TEXT" in error_text(empty) and "Traceback" not in error_text(empty)

        data(await c.call_tool("remember", {"character": "alice", "text": "Alice loves tea"}))
        unknown = await c.call_tool("restore", {"character": "alice", "memory_id": "nope"})
        assert "No memory with id 'nope'" in error_text(unknown)
        bad_id = await c.call_tool("stats", {"character": "x" * 500})
        assert "not valid" in error_text(bad_id)
        no_char = await c.call_tool("stats", {"character": "nobody"})
        assert "No character with id 'nobody'" in error_text(no_char)
        bad_type = await c.call_tool("recall", {"character": "alice", "query": 5})
        assert bad_type.is_error
        missing = await c.call_tool("recall", {"character": "alice"})
        assert missing.is_error
        # every failure reads CODE: message, as the README says (the SDK put "Error
        # executing tool <name>: " first, and a pydantic dump with links for arguments)
        for result in (empty, unknown, bad_id, no_char, bad_type, missing):
            text = error_text(result)
            assert re.match(r"^[A-Z_]+: ", text) and "executing tool" not in text, text
            assert "pydantic" not in text
        assert error_text(missing).startswith("INVALID_ARGUMENT: ") and "query" in \
            error_text(missing)

        # bob never sees alice's memory: error or empty, nothing else
        other = await c.call_tool("recall", {"character": "bob", "query": "Alice loves tea"})
        assert other.is_error or data(other)["hits"] == []

    run_with_client(server, body)


# -- the real command: stdio and streamable HTTP, real model ---------------------------------


def need_model() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    from omoide.embeddings.onnx_provider import find_model_dir
    from omoide.embeddings.registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID

    if find_model_dir(DEFAULT_MODEL_ID, DEFAULT_DTYPE) is None:
        pytest.skip("the default embedding model is not built (python3 build.py)")


def child_env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT / "py"), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


async def store_and_recall(session: ClientSession) -> None:
    await session.initialize()
    names = {t.name for t in (await session.list_tools()).tools}
    assert set(TOOL_NAMES) <= names, names

    tea = data(await session.call_tool("store_fact", {"character": "alice",
                                                      "text": "Alice loves green tea"}))
    for text in ("Alice's cat is called Mochi", "Alice works night shifts at a hospital"):
        data(await session.call_tool("remember", {"character": "alice", "text": text}))
    hits = data(await session.call_tool(
        "recall", {"character": "alice", "query": "what does alice drink"}))["hits"]
    assert hits and hits[0]["memory"]["id"] == tea["id"], hits
    assert hits[0]["memory"]["text"] == "Alice loves green tea"

    # isolation: bob has a memory of his own, and a query about alice finds only bob's
    coffee = data(await session.call_tool("remember", {"character": "bob",
                                                       "text": "Bob drinks black coffee"}))
    other = data(await session.call_tool("recall", {"character": "bob",
                                                    "query": "what does alice drink"}))["hits"]
    assert [h["memory"]["id"] for h in other] == [coffee["id"]], other
    assert other[0]["memory"]["character_id"] == "bob"

    empty = await session.call_tool("remember", {"character": "alice", "text": ""})
    assert "Memory text is empty" in error_text(empty)


@pytest.mark.models
def test_stdio_transport(tmp_path: Path) -> None:
    need_model()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "omoide.mcp", "--db", str(tmp_path / "x.db")],
        env=child_env(), cwd=str(ROOT),
    )
    run_stdio(params, tmp_path / "server.log", store_and_recall)
    # a new workspace records the model it was created with, as the CLI's do
    from omoide.embeddings.registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID
    from omoide.workspace import stored_model

    assert stored_model(tmp_path / "x.db") == (DEFAULT_MODEL_ID, DEFAULT_DTYPE)


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}})


class StdioPipe:
    """Raw stdin lines for ``serve_stdio`` (after an initialize), held open until
    ``expected`` replies came (at the end of stdin the server drops what is in flight); the
    replies written, as JSON."""

    def __init__(self, lines: list[str], expected: int) -> None:
        self.lines, self.expected = [INITIALIZE, *lines], expected + 1
        self.replies: list[dict[str, Any]] = []
        self.done = anyio.Event()

    async def __aiter__(self):
        for line in self.lines:
            yield line + "\n"
        with anyio.fail_after(TIMEOUT):
            await self.done.wait()

    async def write(self, text: str) -> None:
        self.replies.append(json.loads(text))
        if len(self.replies) >= self.expected:
            self.done.set()

    async def flush(self) -> None:
        pass


def stdio_replies(server: Any, lines: list[str], expected: int) -> dict[Any, Any]:
    """The replies ``serve_stdio`` writes for raw stdin ``lines``, by id (those with id null
    in a list under None)."""
    from omoide.mcp.stdio import serve_stdio

    pipe = StdioPipe(lines, expected)

    async def main() -> None:
        await serve_stdio(server, pipe, pipe)

    run_async(main)
    replies: dict[Any, Any] = {None: []}
    for reply in pipe.replies:
        if reply["id"] is None:
            replies[None].append(reply)
        else:
            replies[reply["id"]] = reply
    return replies


def test_stdio_answers_a_line_that_is_not_a_message(workspace) -> None:
    """A line that was not JSON, a batch, another jsonrpc version got no answer at all (the
    SDK only logged it): the client waited for ever. Now -32700 / -32600, and the server
    goes on serving."""
    replies = stdio_replies(build_server(workspace), [
        "not json",
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x\\ud800"}}',
        '[{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]',
        '{"jsonrpc": "1.0", "id": 3, "method": "tools/list"}',
        '{"jsonrpc": "2.0", "id": "four", "method": "tools/call", "params": 5}',
        '{"jsonrpc": "2.0", "method": 5}',
        '{"jsonrpc": "2.0", "id": 5, "method": "ping"}',
    ], expected=7)
    parse_errors, invalid = replies[None][:2], replies[None][2:]
    assert [r["error"]["code"] for r in parse_errors] == [-32700, -32700]  # a lone surrogate
    assert [r["error"]["code"] for r in invalid] == [-32600, -32600]
    assert "batch" in invalid[0]["error"]["message"]
    # a notification whose method is no string: named, not the id it has no need of
    assert '"method" is not valid' in invalid[1]["error"]["message"]
    assert replies[3]["error"]["code"] == -32600 and "jsonrpc" in replies[3]["error"]["message"]
    assert replies["four"]["error"]["code"] == -32600
    assert '"params"' in replies["four"]["error"]["message"]
    assert replies[5]["result"] == {}
    assert workspace.engine.characters() == []


def test_stdio_answers_a_request_whose_id_no_answer_can_carry(workspace) -> None:
    """A request whose id was not a string or an integer (true, 1.5, an object, null) was
    read by the SDK as a notification, never answered: the client waited for ever. It is
    answered -32600 Invalid Request with id null, nothing runs, and serving goes on."""
    calls = [json.dumps({"jsonrpc": "2.0", "id": bad, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"character": "alice", "text": "note"}}})
        for bad in (True, 1.5, {"n": 1}, None)]
    replies = stdio_replies(build_server(workspace), [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), *calls,
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"})], expected=5)
    assert [r["error"]["code"] for r in replies[None]] == [-32600] * 4
    assert all('"id" is not a string or an integer' in r["error"]["message"]
               for r in replies[None])
    assert replies[5]["result"] == {}
    assert workspace.engine.characters() == []


def test_invalid_params_are_answered_naming_the_field(workspace) -> None:
    """-32602 said "Invalid request parameters" and nothing more (data ""): the client could
    not tell which field was wrong. It names each field and the problem, never the value."""
    replies = stdio_replies(build_server(workspace), [
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "arguments": {"character": "alice", "text": "note"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "remember", "arguments": "secret text"}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {}}),
    ], expected=3)
    errors = [replies[n]["error"] for n in (1, 2, 3)]
    assert [e["code"] for e in errors] == [-32602] * 3
    assert "(name: Field required)" in errors[0]["message"]
    assert "(arguments: Input should be a valid dictionary)" in errors[1]["message"]
    assert "secret" not in json.dumps(errors[1])
    assert "(uri: Field required)" in errors[2]["message"]
    assert workspace.engine.characters() == []


def test_a_request_before_initialize_says_what_to_send_first(workspace) -> None:
    """A request before the client's ``initialize`` was answered -32602 "Invalid request
    parameters" (data ""), as if its params were wrong: the client could not tell that the
    session was not initialized. Same code (the SDK's), worded: send ``initialize`` first.
    A ping is still answered, and nothing runs."""
    from omoide.mcp.stdio import serve_stdio

    pipe = StdioPipe([
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "remember", "arguments": {"character": "alice", "text": "note"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    ], expected=3)
    pipe.lines, pipe.expected = pipe.lines[1:], 3  # no initialize this time

    async def main() -> None:
        await serve_stdio(build_server(workspace), pipe, pipe)

    run_async(main)
    replies = {r["id"]: r for r in pipe.replies}
    for n in (1, 2):
        error = replies[n]["error"]
        assert error["code"] == -32602
        assert "not initialized" in error["message"]
        assert '"initialize"' in error["message"]
        assert "Invalid request parameters" not in error["message"]
    assert replies[3]["result"] == {}
    assert workspace.engine.characters() == []


def test_the_end_of_stdin_waits_for_the_answers_in_flight(workspace) -> None:
    """``echo requests | python -m omoide.mcp``: at the end of stdin the SDK cancelled the
    requests still being served, so their answers never came (the tools' writes were
    done all the same). Every request read is answered before the server stops."""
    calls = [json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"character": "alice", "text": f"note {n}"}}})
        for n in range(1, 9)]
    replies = stdio_replies(build_server(workspace), [*calls, json.dumps(
        {"jsonrpc": "2.0", "id": 9, "method": "ping"})], expected=0)  # stdin not held open
    assert sorted(k for k in replies if k is not None) == [0, *range(1, 10)]
    assert not any(replies[n]["result"].get("isError") for n in range(1, 9))
    assert len(workspace.engine.memories("alice")) == 8


@pytest.mark.models
def test_stdio_command_answers_a_line_that_is_not_json(tmp_path: Path) -> None:
    need_model()
    proc = subprocess.Popen(
        [sys.executable, "-m", "omoide.mcp", "--db", str(tmp_path / "x.db")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=child_env(), cwd=str(ROOT))
    watchdog = threading.Timer(TIMEOUT, proc.kill)  # a reply that never comes: no hang
    watchdog.start()
    try:
        proc.stdin.write(f'{INITIALIZE}\nnot json\n{{"jsonrpc": "2.0", "id": true, "method": '
                         '"ping"}\n{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(4)]
    finally:
        proc.stdin.close()
        proc.wait(TIMEOUT)
        watchdog.cancel()
    assert sorted(((r["id"], r.get("error", {}).get("code")) for r in replies), key=str) == [
        (0, None), (1, None), (None, -32600), (None, -32700)]


def wait_for_port(proc: subprocess.Popen, port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after the deadline")


@pytest.mark.models
def test_streamable_http_transport(tmp_path: Path) -> None:
    need_model()
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", HTTP_PORT)) == 0:
            pytest.fail(f"port {HTTP_PORT} is already in use on 127.0.0.1")
    log = tmp_path / "server.log"
    with log.open("w") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", "omoide.mcp", "--db", str(tmp_path / "x.db"),
             "--transport", "http", "--port", str(HTTP_PORT)],
            cwd=ROOT, env={**os.environ, **child_env(), "OMOIDE_MCP_KEY": HTTP_KEY},
            stdin=subprocess.DEVNULL,
            stdout=errlog, stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(proc, HTTP_PORT, time.monotonic() + TIMEOUT)

        async def main() -> None:
            with anyio.fail_after(TIMEOUT):
                url = f"http://127.0.0.1:{HTTP_PORT}/mcp"
                client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {HTTP_KEY}"})
                async with client, streamable_http_client(url, http_client=client) as (
                        read, write):
                    async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as s:
                        await store_and_recall(s)

        run_async(main)
        # loopback only: the default bind is 127.0.0.1, never a wildcard address
        listening = Path("/proc/net/tcp").read_text() if Path("/proc/net/tcp").exists() else ""
        if listening:
            port_hex = f":{HTTP_PORT:04X}"
            binds = [line.split()[1] for line in listening.splitlines()[1:]
                     if line.split()[1].endswith(port_hex) and line.split()[3] == "0A"]
            assert binds == [f"0100007F{port_hex}"], binds
    except BaseException:
        print(log.read_text(errors="replace"), file=sys.stderr)
        raise
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_command_line_defaults_to_stdio_and_loopback() -> None:
    from omoide.mcp.__main__ import DEFAULT_PORT, parse_args

    args = parse_args(["--db", "x.db"])
    assert (args.transport, args.host, args.port, args.db) == ("stdio", "127.0.0.1",
                                                               DEFAULT_PORT, "x.db")
    args = parse_args(["--transport", "http", "--port", "9000", "--dtype", "f32"])
    assert (args.transport, args.port, args.dtype) == ("http", 9000, "f32")
    with pytest.raises(SystemExit):
        parse_args(["--transport", "sse"])


def test_an_existing_workspace_keeps_its_model(tmp_path: Path, capsys) -> None:
    from omoide.mcp.__main__ import main
    from omoide.workspace import save_model

    ws = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    save_model(ws.backend, "omoide/multilingual-e5-small", "q8")
    ws.close()
    assert main(["--db", str(tmp_path / "mem.db"), "--model", "omoide/all-MiniLM-L6-v2"]) == 1
    err = capsys.readouterr().err
    assert "WORKSPACE_MODEL_MISMATCH" in err and "revectorize" in err


@pytest.mark.models
def test_backup_option_mirrors_the_mcp_workspace(tmp_path) -> None:
    from omoide.backends.http import HttpBackend, HttpConfig
    from omoide.mcp.__main__ import open_with_model, parse_args
    from tests.backend_fixtures import running_server

    url = "http://127.0.0.1:27694"
    with running_server(tmp_path / "backup.db", 27694, api_key="k"):
        args = parse_args(["--db", str(tmp_path / "m.db"), "--backup", url,
                           "--backup-key", "k"])
        workspace, _ = open_with_model(args)
        memory = workspace.engine.remember("alice", "Alice loves green tea")
        workspace.close()
        copy = HttpBackend(HttpConfig(url, api_key="k")).get(memory.id, with_vector=True)
    assert copy["text"] == "Alice loves green tea" and len(copy["vector"]) == 384
