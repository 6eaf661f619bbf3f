"""The MCP server's streamable HTTP transport is closed by default, like the reference server:
a bearer key, the Host header of this machine, no web page origin, a body limit; and a
configuration that would open it (no key, a public address without --public) is refused
before any workspace is created. Real uvicorn on loopback, raw sockets and the SDK client."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from omoide.errors import OmoideError
from omoide.mcp import build_server
from omoide.mcp.__main__ import http_policy, main, parse_args
from omoide.mcp.http import http_server
from omoide.server.policy import ServerPolicy
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_mcp import data, run_async

KEY = "mcp-test-key-0123456789"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"}}}


@pytest.fixture
def served(tmp_path: Path):
    """(port, workspace) of an in-process MCP HTTP server with the key required."""
    ws = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    policy = ServerPolicy.build("127.0.0.1", api_key=KEY, origins=(), max_body=64 * 1024,
                                body_timeout=1.0)
    server, sock = http_server(build_server(ws), "127.0.0.1", 0, policy)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield sock.getsockname()[1], ws
    server.should_exit = True
    thread.join(10)
    sock.close()
    ws.close()


def post(port: int, headers: dict[str, str], body: bytes | None = None) -> tuple[int, dict]:
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        payload = json.dumps(INIT).encode() if body is None else body
        con.request("POST", "/mcp", body=payload, headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            **headers})
        reply = con.getresponse()
        return reply.status, dict(reply.getheaders())
    finally:
        con.close()


def test_no_key_or_a_wrong_key_is_401(served) -> None:
    port, _ = served
    status, headers = post(port, {})
    assert status == 401 and headers.get("www-authenticate") == "Bearer"
    assert post(port, {"Authorization": "Bearer wrong"})[0] == 401
    assert post(port, {"Authorization": KEY})[0] == 401  # the scheme is part of the check


def test_foreign_host_is_421_and_a_web_page_origin_403(served) -> None:
    port, _ = served
    auth = {"Authorization": f"Bearer {KEY}"}
    assert post(port, {**auth, "Host": "attacker.example"})[0] == 421  # DNS rebinding
    assert post(port, {**auth, "Origin": "http://attacker.example"})[0] == 403
    # the SDK alone would let any loopback page in; a local web app is still a web page
    assert post(port, {**auth, "Origin": "http://127.0.0.1:3000"})[0] == 403
    assert post(port, auth)[0] == 200


def test_body_over_the_limit_is_refused(served) -> None:
    port, _ = served
    huge = json.dumps({**INIT, "pad": "x" * (80 * 1024)}).encode()
    assert post(port, {"Authorization": f"Bearer {KEY}"}, huge)[0] == 413


def test_a_stalled_body_times_out_instead_of_holding_the_server(served) -> None:
    """A request that declares more body than it sends (or trickles it) is answered 408 and
    closed at the body deadline; the SDK waited for the rest forever."""
    port, _ = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Authorization: Bearer " + KEY.encode() + b"\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Accept: application/json, text/event-stream\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"jsonrpc\": ")
        started = time.monotonic()
        for _ in range(3):  # trickling does not extend the deadline
            time.sleep(0.3)
            sock.sendall(b" ")
        reply = http.client.HTTPResponse(sock)
        reply.begin()
        assert reply.status == 408
        assert "error" in json.loads(reply.read())  # the body may come in a later segment
        assert time.monotonic() - started < 5
        assert sock.recv(1) == b""  # closed by the server
    assert post(port, {"Authorization": f"Bearer {KEY}"})[0] == 200


def post_json(port: int, message: object, headers: dict[str, str] | None = None
              ) -> tuple[int, dict, dict]:
    """(status, headers, JSON body: {} when empty or not JSON) of one POST of ``message``,
    with the key."""
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        con.request("POST", "/mcp", body=json.dumps(message).encode(), headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {KEY}", **(headers or {})})
        reply = con.getresponse()
        raw, kind = reply.read(), reply.getheader("content-type", "")
        body = json.loads(raw) if raw and "json" in kind else {}
        return reply.status, dict(reply.getheaders()), body
    finally:
        con.close()


def session_headers(port: int) -> dict[str, str]:
    """The headers of a session that is initialized."""
    status, headers, _ = post_json(port, INIT)
    assert status == 200
    session = {"mcp-session-id": headers["mcp-session-id"],
               "mcp-protocol-version": INIT["params"]["protocolVersion"]}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post_json(port, initialized, session)[0] == 202
    return session


def test_a_request_whose_id_no_answer_can_carry_is_invalid_request(served) -> None:
    """A request whose id was not a string or an integer was read by the SDK as a
    notification: 202 Accepted, no answer, and the client waited for its response. It is
    400 with -32600 Invalid Request (id null), and nothing runs."""
    port, ws = served
    session = session_headers(port)
    for bad in (True, 1.5, {"n": 1}, None):
        status, _, reply = post_json(port, {"jsonrpc": "2.0", "id": bad, "method": "tools/call",
                                            "params": {"name": "remember", "arguments": {
                                                "character": "alice", "text": "note"}}}, session)
        assert status == 400, (bad, status)
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert '"id" is not a string or an integer' in reply["error"]["message"]
    assert ws.engine.characters() == []


def test_a_batch_or_another_jsonrpc_is_invalid_request(served) -> None:
    """A batch (a JSON array) or another ``jsonrpc`` was answered -32602 Invalid params, with a
    pydantic dump of what was sent. The MCP version served has no batches: -32600 Invalid
    Request naming what is wrong (with the request's id where it has one), nothing runs."""
    port, ws = served
    session = session_headers(port)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"character": "alice", "text": "note"}}}
    status, _, reply = post_json(port, [call], session)
    assert status == 400 and reply["id"] is None and reply["error"]["code"] == -32600
    assert "batches (JSON arrays) are not supported" in reply["error"]["message"]
    status, _, reply = post_json(port, {**call, "jsonrpc": "1.0"}, session)
    assert status == 400 and reply["id"] == 7 and reply["error"]["code"] == -32600
    assert '"jsonrpc" is not "2.0"' in reply["error"]["message"]
    assert ws.engine.characters() == []


def test_sdk_client_with_the_key_works(served) -> None:
    port, ws = served

    async def main_() -> None:
        with anyio.fail_after(30):
            client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"})
            async with client, streamable_http_client(f"http://127.0.0.1:{port}/mcp",
                                                      http_client=client) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    made = data(await s.call_tool("remember", {"character": "alice",
                                                               "text": "Alice loves tea"}))
                    assert made["character_id"] == "alice"

    run_async(main_)
    assert ws.engine.stats("alice")["memories"] == 1


@pytest.mark.parametrize("argv, reason", [
    (["--transport", "http"], "no key"),
    (["--transport", "http", "--host", "0.0.0.0", "--key", KEY], "--public"),
    (["--transport", "http", "--host", "0.0.0.0", "--no-key", "--public"], "loopback only"),
])
def test_an_open_configuration_is_refused_before_the_workspace(
        tmp_path: Path, monkeypatch, capsys, argv, reason) -> None:
    monkeypatch.delenv("OMOIDE_MCP_KEY", raising=False)
    db = tmp_path / "never.db"
    with pytest.raises(OmoideError, match=reason):
        http_policy(parse_args(["--db", str(db), *argv]))
    assert main(["--db", str(db), *argv]) == 2
    assert "SERVER_CONFIG" in capsys.readouterr().err
    assert not db.exists()


def test_key_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OMOIDE_MCP_KEY", KEY)
    policy = http_policy(parse_args(["--transport", "http"]))
    assert policy.key_accepted(f"Bearer {KEY}") and not policy.key_accepted(None)
    assert KEY not in repr(policy)
