"""The reference server is safe by default (issue 13, items 1 and 2): each failure found by the
attack review reproduced against a real server on loopback, most over raw sockets (the bytes a
hostile page or client would send), and shown refused without a trace in the database."""

from __future__ import annotations

import http.client
import json
import re
import socket
import sqlite3
import threading
import time

import pytest

from omoide.errors import OmoideError
from omoide.server import ServerPolicy, serve
from omoide.server.__main__ import main as server_main
from omoide.server.policy import origin_of
from tests.backend_fixtures import make_record, running_server

PORT = 27701
KEY = "k" * 24
APP = "http://127.0.0.1:8742"


def request_bytes(method: str, path: str, headers: dict[str, str] | None = None,
                  body: bytes = b"", *, host: str | None = f"127.0.0.1:{PORT}") -> bytes:
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def exchange(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    reply = http.client.HTTPResponse(sock)
    reply.begin()
    body = reply.read()
    return reply.status, {k.lower(): v for k, v in reply.getheaders()}, body


def send(data: bytes, *, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", PORT), timeout=timeout) as sock:
        sock.sendall(data)
        return exchange(sock)


def closed_by_server(sock: socket.socket, within: float = 5) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def json_post(record: dict, **headers: str) -> bytes:
    body = json.dumps(record).encode()
    return request_bytes("POST", "/memories", {"Content-Type": "application/json",
                                               "Content-Length": str(len(body)), **headers},
                         body)


def stored(db) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]


def assert_short_error(status: int, body: bytes, expected: int) -> dict:
    assert status == expected, body
    text = body.decode("utf-8", "replace")
    assert "Traceback" not in text and 'File "' not in text and len(text) < 400
    return json.loads(text)["error"] if text.startswith("{") else {"message": text}


# -- 1. safe by default: key, origins, Host, Content-Type -------------------------------------


def test_no_key_refuses_to_start_and_no_key_pins_loopback(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OMOIDE_SERVER_KEY", raising=False)
    with pytest.raises(OmoideError) as err:
        serve(tmp_path / "s.db", "127.0.0.1", PORT)
    assert err.value.code == "SERVER_CONFIG" and "--no-key" in str(err.value)
    assert server_main(["--db", str(tmp_path / "s.db"), "--port", str(PORT)]) == 2
    assert "SERVER_CONFIG" in capsys.readouterr().err
    for host in ("0.0.0.0", "192.168.1.20", "::"):
        with pytest.raises(OmoideError) as err:
            ServerPolicy.build(host, api_key=None, no_key=True)
        assert "loopback only" in str(err.value)
        with pytest.raises(OmoideError) as err:  # a key is not enough: --public confirms
            ServerPolicy.build(host, api_key=KEY)
        assert "--public" in str(err.value)
        assert ServerPolicy.build(host, api_key=KEY, public=True).api_key == KEY
    with pytest.raises(OmoideError):
        ServerPolicy.build("127.0.0.1", api_key=KEY, no_key=True)
    with pytest.raises(OmoideError):
        ServerPolicy.build("127.0.0.1", api_key="   ")
    assert not (tmp_path / "s.db").exists()  # refused before anything was created


def test_cors_answers_only_listed_origins_and_never_a_wildcard(tmp_path):
    with pytest.raises(OmoideError) as err:
        ServerPolicy.build("127.0.0.1", api_key=KEY, origins=["*"])
    assert "'*'" in str(err.value)
    with pytest.raises(OmoideError):
        ServerPolicy.build("127.0.0.1", api_key=KEY, origins=["http://x.example/path"])
    with running_server(tmp_path / "s.db", PORT):  # keyless: the origin check is the guard
        for origin in (APP, "http://localhost:8742"):
            status, headers, _ = send(request_bytes("GET", "/memories", {"Origin": origin}))
            assert status == 200 and headers["access-control-allow-origin"] == origin
            assert headers["vary"] == "Origin"
        for origin in ("http://evil.example", "null", "http://127.0.0.1:9999"):
            status, headers, body = send(request_bytes("GET", "/memories", {"Origin": origin}))
            assert_short_error(status, body, 403)
            assert "access-control-allow-origin" not in headers
        # a page's write ("simple" request, no preflight) is refused and writes nothing
        status, _, body = send(json_post(make_record("alice", "injected"),
                                         Origin="http://evil.example"))
        assert_short_error(status, body, 403)
        assert stored(tmp_path / "s.db") == 0


def test_cors_origins_can_be_listed(tmp_path):
    mine = "https://omoide.example:8443"
    with running_server(tmp_path / "s.db", PORT, api_key=KEY, origins=[mine]):
        status, headers, _ = send(request_bytes("OPTIONS", "/memories", {
            "Origin": mine, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Private-Network": "true"}))
        assert status == 204 and headers["access-control-allow-origin"] == mine
        assert headers["access-control-allow-private-network"] == "true"
        assert send(request_bytes("OPTIONS", "/memories", {"Origin": APP}))[0] == 403


@pytest.mark.parametrize(("given", "kept"), [
    ("HTTP://Chat.Example", "http://chat.example"),
    ("https://chat.example:443/", "https://chat.example"),
    ("http://chat.example:80", "http://chat.example"),
    ("https://chat.example:8443", "https://chat.example:8443"),
    ("https://bücher.example", "https://xn--bcher-kva.example"),
    ("https://BÜCHER.example:443", "https://xn--bcher-kva.example"),
    ("https://faß.de", "https://xn--fa-hia.de"),  # UTS 46, as browsers: not fass.de
    ("http://[::1]:80", "http://[::1]"),
])
def test_a_cors_origin_is_kept_as_the_browser_sends_it(given, kept):
    """``--cors-origin`` as people copy it (capitals, the default port, a Unicode host) was
    kept as typed, so the browser's ``Origin`` (``event.origin``: lower case, no default
    port, punycode) never matched it: every request of that app refused."""
    assert origin_of(given) == kept
    assert ServerPolicy.build("127.0.0.1", api_key=KEY, origins=[given]).origin_allowed(kept)


@pytest.mark.parametrize("given", [
    "https://chat.example/app", "https://chat.example/?x=1", "https://u:p@chat.example",
    "ftp://chat.example", "chat.example", "https://ex ample.com", "https://a%20b",
    "https://[zz]", "https://chat.example:65536", "",
])
def test_a_cors_origin_that_is_no_origin_is_refused_naming_the_option(given):
    with pytest.raises(OmoideError) as err:
        origin_of(given)
    assert err.value.code == "SERVER_CONFIG" and "--cors-origin" in str(err.value)


def test_host_header_must_name_this_machine(tmp_path):
    """DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 sends
    ``Host: evil.example``; it is refused."""
    with running_server(tmp_path / "s.db", PORT, allow_hosts=["nas.local"]):
        for host in (f"127.0.0.1:{PORT}", f"localhost:{PORT}", "LOCALHOST", f"nas.local:{PORT}"):
            assert send(request_bytes("GET", "/health", host=host))[0] == 200, host
        for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1.evil.example",
                     "localhost.evil.example", ""):
            status, _, body = send(request_bytes("GET", "/memories", host=host))
            assert_short_error(status, body, 421)
        status, _, _ = send(request_bytes("GET", "/health", host=None))  # none at all
        assert status in (400, 421)


def test_writes_need_a_json_content_type(tmp_path):
    """text/plain and form posts are what a page may send cross-origin without a preflight."""
    with running_server(tmp_path / "s.db", PORT):
        body = json.dumps(make_record("alice", "injected")).encode()
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                      None):
            headers = {"Content-Length": str(len(body))}
            if ctype:
                headers["Content-Type"] = ctype
            status, _, answer = send(request_bytes("POST", "/memories", headers, body))
            assert "Content-Type" in assert_short_error(status, answer, 415)["message"]
        assert stored(tmp_path / "s.db") == 0
        status, _, _ = send(json_post(make_record("alice", "fine"),
                                      **{"Content-Type": "application/json; charset=utf-8"}))
        assert status == 201 and stored(tmp_path / "s.db") == 1


def test_the_key_is_required_and_never_echoed(tmp_path):
    with running_server(tmp_path / "s.db", PORT, api_key=KEY):
        for auth in (None, "Bearer wrong", KEY, f"Bearer {KEY[:-1]}", f"Basic {KEY}"):
            headers = {"Authorization": auth} if auth else {}
            status, reply_headers, body = send(request_bytes("GET", "/memories", headers))
            assert_short_error(status, body, 401)
            assert reply_headers["www-authenticate"] == "Bearer"
            assert KEY not in body.decode()
        ok = send(request_bytes("GET", "/memories", {"Authorization": f"Bearer {KEY}"}))
        assert ok[0] == 200
    assert KEY not in repr(ServerPolicy.build("127.0.0.1", api_key=KEY))


# -- 2. limits: Content-Length, chunked, stalls, leftovers, wrong types --------------------


def test_negative_content_length_does_not_read_to_eof(tmp_path):
    """It used to read until EOF and store a 5 MB record past the 4 MiB limit."""
    body = json.dumps(make_record("alice", "x" * (5 * 1024 * 1024))).encode()
    with running_server(tmp_path / "s.db", PORT):
        with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
            sock.sendall(request_bytes("POST", "/memories", {
                "Content-Type": "application/json", "Content-Length": "-1"}))
            status, headers, answer = exchange(sock)  # refused before any body byte
            assert_short_error(status, answer, 400)
            assert headers["connection"] == "close" and closed_by_server(sock)
            with pytest.raises(OSError):  # the body has nowhere to go
                for _ in range(4):
                    sock.sendall(body)
        assert stored(tmp_path / "s.db") == 0


@pytest.mark.parametrize("length", ["abc", "12abc", "0x10", "1e3", "", " ", "5, 6",
                                    "99999999999999999999999"])
def test_malformed_content_length_is_a_400_not_a_traceback(tmp_path, length):
    with running_server(tmp_path / "s.db", PORT):
        status, _, body = send(request_bytes("POST", "/memories", {
            "Content-Type": "application/json", "Content-Length": length}, b"{}"))
        assert status in (400, 413)
        assert_short_error(status, body, status)
        assert send(request_bytes("GET", "/health"))[0] == 200  # still serving
        assert stored(tmp_path / "s.db") == 0


def test_a_body_needs_a_content_length_and_chunked_is_refused(tmp_path):
    chunked = b"7\r\n{\"a\":1}\r\n0\r\n\r\n"
    with running_server(tmp_path / "s.db", PORT):
        status, headers, body = send(request_bytes("POST", "/memories", {
            "Content-Type": "application/json", "Transfer-Encoding": "chunked"}, chunked))
        assert_short_error(status, body, 411)
        assert headers["connection"] == "close"
        status, _, body = send(request_bytes("POST", "/memories", {
            "Content-Type": "application/json"}))  # no length, no body
        assert_short_error(status, body, 411)
        assert stored(tmp_path / "s.db") == 0


def test_bodies_over_the_limit_are_refused_on_every_path(tmp_path):
    limit = 64 * 1024
    big = b'{"text": "' + b"x" * limit + b'"}'
    with running_server(tmp_path / "s.db", PORT, max_body=limit):
        for method, path in (("POST", "/memories"), ("POST", "/memories/search"),
                             ("PATCH", "/memories/01ABC"), ("GET", "/memories"),
                             ("DELETE", "/memories/01ABC"), ("GET", "/health"),
                             ("POST", "/nowhere")):
            status, _, body = send(request_bytes(method, path, {
                "Content-Type": "application/json", "Content-Length": str(len(big))}, big))
            assert_short_error(status, body, 413)
        # declared far over the limit: refused before a byte is read, connection closed
        with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
            sock.sendall(request_bytes("POST", "/memories", {
                "Content-Type": "application/json", "Content-Length": str(10 ** 12)}))
            status, headers, body = exchange(sock)
            assert_short_error(status, body, 413)
            assert headers["connection"] == "close" and closed_by_server(sock)
        assert stored(tmp_path / "s.db") == 0


def test_a_lying_content_length_times_out_instead_of_pinning_the_server(tmp_path):
    """Declares more than it sends: the body deadline answers 408 and closes."""
    with running_server(tmp_path / "s.db", PORT, body_timeout=1.0):
        with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
            sock.sendall(request_bytes("POST", "/memories", {
                "Content-Type": "application/json", "Content-Length": "1000"}, b'{"text": '))
            started = time.monotonic()
            status, _, body = exchange(sock)
            assert_short_error(status, body, 408)
            assert time.monotonic() - started < 5 and closed_by_server(sock)
        assert send(request_bytes("GET", "/health"))[0] == 200


def test_refused_request_bodies_are_never_parsed_as_requests(tmp_path):
    """A refused request whose body is itself a request (smuggling): the server skips the body
    by its length, so the hidden write never happens, on a kept-alive connection too."""
    hidden = json_post(make_record("alice", "smuggled"))
    with running_server(tmp_path / "s.db", PORT, api_key=KEY):
        for headers in ({"Content-Type": "text/plain", "Authorization": f"Bearer {KEY}"},
                        {"Content-Type": "application/json"},  # no key: 401
                        {"Content-Type": "application/json", "Origin": "http://e.example"}):
            with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
                sock.sendall(request_bytes("POST", "/memories", {
                    **headers, "Content-Length": str(len(hidden))}, hidden))
                assert exchange(sock)[0] in (401, 403, 415)
                sock.sendall(request_bytes("GET", "/health",
                                           {"Authorization": f"Bearer {KEY}"}))
                try:  # the next answer on the connection is the health check's, or none
                    status, _, body = exchange(sock)
                    assert status == 200 and json.loads(body)["ok"] is True
                except (http.client.RemoteDisconnected, ConnectionError):
                    pass
        assert stored(tmp_path / "s.db") == 0


def test_stalled_connections_hold_no_thread_and_are_closed(tmp_path):
    """100 connections that send nothing (or half a request head, a byte at a time) used to
    hold 100 threads forever. Now they hold none, the server answers others meanwhile, and
    each is closed at the header deadline."""
    with running_server(tmp_path / "s.db", PORT, header_timeout=1.5):
        threads_before = threading.active_count()
        stalled = [socket.create_connection(("127.0.0.1", PORT), timeout=10)
                   for _ in range(100)]
        for i, sock in enumerate(stalled[:50]):
            sock.sendall(b"POST /memories HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * i)
        started = time.monotonic()
        assert send(request_bytes("GET", "/health"))[0] == 200
        assert time.monotonic() - started < 1.0
        assert threading.active_count() <= threads_before + 2
        for sock in stalled[50:60]:  # trickling does not extend the deadline
            sock.sendall(b"G")
        time.sleep(0.8)
        for sock in stalled[50:60]:
            sock.sendall(b"E")
        assert all(closed_by_server(sock, within=5) for sock in stalled)
        for sock in stalled:
            sock.close()
        assert send(request_bytes("GET", "/health"))[0] == 200


@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/memories?limit=abc", None),
    ("GET", "/memories?limit=-1", None),
    ("GET", "/memories?offset=1.5", None),
    ("GET", "/memories?trashed=maybe", None),
    ("GET", "/memories?vectors=yes", None),
    ("GET", "/memories/01ABC?vectors=2", None),
    ("GET", "/memories?character_id=%ff", None),
    ("POST", "/memories", []),
    ("POST", "/memories", "text"),
    ("POST", "/memories", {"id": 5, "character_id": "alice", "text": "t"}),
    ("POST", "/memories", {"id": "a", "character_id": "alice", "text": "t", "vector": "x"}),
    ("POST", "/memories/search", {"query": "tea", "character_id": "alice", "k": "x"}),
    ("POST", "/memories/search", {"query": "tea", "character_id": "alice", "k": 10 ** 9}),
    ("POST", "/memories/search", {"query": 5, "character_id": "alice"}),
    ("POST", "/memories/search", {"query": "tea", "character_id": ["alice"]}),
    ("POST", "/memories/search", {"query": "tea"}),
    ("POST", "/memories/search", {"query": "tea", "character_id": "alice", "kinds": "fact!"}),
    ("POST", "/memories/search", {"query": "tea", "character_id": "alice", "kinds": [1]}),
    ("POST", "/memories/search", {"query": "tea", "character_id": "alice",
                                  "vector": ["a"], "model": "m"}),
    ("POST", "/memories/search", {"query": "tea", "character_id": "alice", "vector": [1.0]}),
    ("PATCH", "/memories/01ABC", ["text"]),
    ("PATCH", "/memories/%ff%fe", {"text": "x"}),
    ("PUT", "/characters/alice", {"name": 5}),
    ("PUT", "/characters/alice", {"name": " padded "}),
    ("PUT", "/characters/alice", {"name": "a\nb"}),
    ("PUT", "/characters/alice", {"name": "x" * 81}),
    ("PUT", "/characters/alice", {}),
    ("PUT", "/characters/alice", {"name": "Alice", "deleted_at": "yesterday"}),
    ("PUT", "/characters/alice", {"name": "Alice", "deleted_at": -1}),
    ("PUT", "/characters/alice", {"name": "Alice", "deleted_at": True}),
    ("PUT", "/characters/alice", ["Alice"]),
    ("PUT", "/characters/a..b", {"name": "Alice"}),
    ("PUT", "/characters/%ff%fe", {"name": "Alice"}),
])
def test_wrong_parameter_types_are_a_400_with_a_short_message(tmp_path, method, path, body):
    with running_server(tmp_path / "s.db", PORT):
        raw = b"" if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(raw))}
        status, _, answer = send(request_bytes(method, path, headers, raw))
        error = assert_short_error(status, answer, 400)
        for python in ("ValueError", "TypeError", "KeyError", "AttributeError"):
            assert python not in error["message"]


def test_json_that_is_not_json_is_refused(tmp_path):
    with running_server(tmp_path / "s.db", PORT):
        for raw in (b"{", b'{"text": NaN}', b"\xff\xfe", b'{"a": Infinity}', b""):
            headers = {"Content-Type": "application/json", "Content-Length": str(len(raw))}
            status, _, answer = send(request_bytes("POST", "/memories", headers, raw))
            assert_short_error(status, answer, 400)
        assert stored(tmp_path / "s.db") == 0


def test_backend_errors_keep_their_code_and_never_become_500(tmp_path):
    with running_server(tmp_path / "s.db", PORT):
        record = make_record("alice", "once")
        assert send(json_post(record))[0] == 201
        status, _, body = send(json_post(record))
        assert assert_short_error(status, body, 409)["code"] == "BACKEND_CONFLICT"
        status, _, body = send(json_post({**record, "id": "other", "kind": "bogus"}))
        assert assert_short_error(status, body, 400)["code"] == "INVALID_RECORD"
        assert send(request_bytes("GET", "/nowhere"))[0] == 404
        assert send(request_bytes("PUT", "/memories"))[0] == 405
        assert send(request_bytes("DELETE", f"/memories/{record['id']}"))[0] == 204
        assert send(request_bytes("DELETE", f"/memories/{record['id']}"))[0] == 404


def test_pipelined_requests_are_answered_in_order_then_idle_connections_close(tmp_path):
    """The head deadline is per request: pipelined requests on one connection are all
    answered, and a kept-alive connection that then sends nothing is closed."""
    with running_server(tmp_path / "s.db", PORT, header_timeout=1.0):
        with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
            sock.sendall(request_bytes("GET", "/health") + json_post(make_record("a", "one"))
                         + request_bytes("GET", "/memories?character_id=a"))
            time.sleep(0.3)
            answers = b""
            while answers.count(b"HTTP/1.1 ") < 3 or not answers.endswith(b"}"):
                answers += sock.recv(65536)
            assert re.findall(rb"HTTP/1\.1 (\d{3})", answers) == [b"200", b"201", b"200"]
            assert b'"total": 1' in answers
            assert closed_by_server(sock, within=5)  # idle after the answers: closed


def test_a_server_bug_is_a_bare_500_and_logged_not_shown(tmp_path, caplog):
    with running_server(tmp_path / "s.db", PORT) as server:
        def broken() -> dict:
            raise RuntimeError("internal detail /home/me/secret.db")

        server.backend.health = broken
        status, _, body = send(request_bytes("GET", "/health"))
        error = assert_short_error(status, body, 500)
        assert error == {"code": "INTERNAL", "message": "internal server error"}
        assert send(request_bytes("GET", "/memories"))[0] == 200  # and it goes on serving
    assert "internal detail" in caplog.text  # for the operator, in the server's log


@pytest.mark.parametrize("header, name", [
    ("127.0.0.1:8750", "127.0.0.1"), ("[::1]:8750", "::1"), ("[::1]", "::1"),
    ("LOCALHOST", "localhost"), ("[::1]evil.example", ""), ("[::1]:80evil", ""),
    ("[::1", ""), ("[::1]:", ""),
])
def test_the_host_header_name(header, name):
    """An IPv6 literal is followed by nothing or ``:port``: ``[::1]evil.example`` was read
    as ``::1`` and let through the Host check."""
    from omoide.server.policy import host_name

    assert host_name(header) == name


def test_a_page_offset_beyond_sqlite_integers_is_refused():
    from omoide.backends.base import page_args

    assert page_args(10, 2**53 - 1) == (10, 2**53 - 1)
    with pytest.raises(OmoideError) as caught:
        page_args(10, 10**20)  # was an OverflowError: HTTP 500 INTERNAL
    assert caught.value.code == "INVALID_ARGUMENT"


def test_a_blank_character_filter_is_refused_not_dropped(tmp_path):
    """``?character_id=`` was parsed as no filter at all: every character's memories were
    listed to a caller that asked for one; ``/memories/`` (an empty id) was the listing,
    which ``HttpBackend.get("")`` returned as a record."""
    from omoide.backends.http import HttpBackend, HttpConfig

    with running_server(tmp_path / "s.db", PORT, api_key=KEY):
        auth = {"Authorization": f"Bearer {KEY}"}
        for character, text in (("alice", "Alice loves tea"), ("bob", "Bob hates rain")):
            assert send(json_post(make_record(character, text), **auth))[0] == 201
        status, _, body = send(request_bytes("GET", "/memories?character_id=", auth))
        assert assert_short_error(status, body, 400)["code"] == "INVALID_CHARACTER_ID"
        status, _, body = send(request_bytes("GET", "/memories?character_id=alice", auth))
        assert [r["character_id"] for r in json.loads(body)["items"]] == ["alice"]
        assert send(request_bytes("GET", "/memories/", auth))[0] == 404
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key=KEY))
        with pytest.raises(OmoideError) as caught:
            backend.get("")
        assert caught.value.code == "INVALID_ARGUMENT"
        with pytest.raises(OmoideError):
            backend.list(character_id="")


def test_display_names_are_kept_and_a_bad_one_writes_nothing(tmp_path):
    with running_server(tmp_path / "s.db", PORT, api_key=KEY):
        auth = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}

        def put(character: str, body: bytes) -> tuple[int, bytes]:
            status, _, answer = send(request_bytes(
                "PUT", f"/characters/{character}", auth | {"Content-Length": str(len(body))},
                body))
            return status, answer

        assert put("%E3%81%82%E3%81%8A%E3%81%84", '{"name": "葵"}'.encode())[0] == 200
        assert put("alice", b'{"name": "Alice Liddell"}')[0] == 200
        status, answer = put("alice", b'{"name": "\\ud800"}')
        assert_short_error(status, answer, 400)
        assert put("bob", b'{"name": "Bob"}')[0] == 200
        assert put("bob", b'{"name": "Bob", "name": null}')[0] == 400  # the last key wins
        status, _, answer = send(request_bytes("GET", "/characters", auth))
        assert status == 200
        names = json.loads(answer)["names"]
        assert names == {"alice": "Alice Liddell", "bob": "Bob", "あおい": "葵"}
        assert send(request_bytes("GET", "/characters"))[0] == 401  # the key is needed
        assert send(request_bytes("DELETE", "/characters/bob", auth))[0] == 405
