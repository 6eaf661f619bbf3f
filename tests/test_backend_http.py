"""HttpBackend specifics: configurable paths and parameter names, bearer key, timeout, and
errors carrying status and body. Everything against real loopback servers."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.errors import OmoideError
from tests.backend_fixtures import make_record, running_server

PORT = 27672


LAYOUT = (("/api/v2/notes/item/", "/memories/"), ("/api/v2/notes", "/memories"),
          ("/api/v2/find", "/memories/search"), ("/api/v2/ping", "/health"))


def custom_layout(app, seen: list[str]):
    """The reference app behind another layout: /api/v2/notes, /api/v2/notes/item/{id},
    /api/v2/find, /api/v2/ping, and ``who`` instead of ``character_id``."""

    async def layout(scope, receive, send):
        raw = scope["raw_path"].decode()
        query = scope["query_string"].decode()
        seen.append(raw + ("?" + query if query else ""))
        for theirs, ours in LAYOUT:
            if raw.startswith(theirs):
                raw = ours + raw[len(theirs):]
                break
        else:
            raw = "/not-our-layout"
        query = query.replace("who=", "character_id=")
        scope = scope | {"raw_path": raw.encode(), "path": raw, "query_string": query.encode()}
        await app(scope, receive, send)

    return layout


def test_paths_and_parameter_names_are_configurable(tmp_path):
    config = HttpConfig(f"http://127.0.0.1:{PORT}/", memories_path="/api/v2/notes",
                        memory_path="/api/v2/notes/item/{id}", search_path="/api/v2/find",
                        health_path="/api/v2/ping", params={"character_id": "who"},
                        headers={"X-Tenant": "me"})
    backend = HttpBackend(config)
    seen: list[str] = []
    with running_server(tmp_path / "s.db", PORT, wrap_app=lambda app: custom_layout(app, seen)):
        record = backend.create(make_record("alice", "Alice loves green tea"))
        assert backend.get(record["id"])["text"] == "Alice loves green tea"
        assert backend.list(character_id="alice")["total"] == 1
        assert backend.list(character_id="bob")["total"] == 0
        assert backend.search("tea", character_id="alice")[0]["memory"]["id"] == record["id"]
        assert backend.health()["ok"] is True
        assert backend.delete(record["id"]) is True
    assert any(p.startswith("/api/v2/notes?") and "who=alice" in p for p in seen)
    assert any(p.startswith("/api/v2/notes/item/") for p in seen)


def test_wrong_key_is_an_error_with_status_and_body(tmp_path):
    with running_server(tmp_path / "s.db", PORT, api_key="right"):
        for key in ("wrong", None):
            backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key=key))
            with pytest.raises(OmoideError) as err:
                backend.list()
            assert err.value.code == "BACKEND_HTTP" and err.value.fields["status"] == 401
            assert "bearer key" in str(err.value)


def test_unreachable_server_is_a_clear_error(tmp_path):
    backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", timeout=2))
    with pytest.raises(OmoideError) as err:
        backend.health()
    assert err.value.code == "BACKEND_UNREACHABLE"
    assert f"127.0.0.1:{PORT}" in str(err.value)


class SlowHandler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        time.sleep(1.5)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


class BrokenHandler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = b"<html>proxy error</html>" if "health" in self.path else b"database is down"
        self.send_response(200 if "health" in self.path else 503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_plain(handler):
    server = ThreadingHTTPServer(("127.0.0.1", PORT), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_timeout_is_honoured():
    server = serve_plain(SlowHandler)
    try:
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", timeout=0.3))
        started = time.monotonic()
        with pytest.raises(OmoideError) as err:
            backend.get("01ABC")
        assert err.value.code == "BACKEND_TIMEOUT" and "0.3 s" in str(err.value)
        assert time.monotonic() - started < 1.4
    finally:
        server.shutdown()
        server.server_close()


def test_server_errors_and_non_json_answers_are_raised_with_the_body():
    server = serve_plain(BrokenHandler)
    try:
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}"))
        with pytest.raises(OmoideError) as err:
            backend.list()
        assert err.value.fields["status"] == 503 and "database is down" in str(err.value)
        with pytest.raises(OmoideError) as err:
            backend.health()
        assert "not JSON" in str(err.value)
    finally:
        server.shutdown()
        server.server_close()


def test_default_timeout_is_30_seconds_and_bad_config_is_refused():
    assert HttpConfig("http://127.0.0.1:1").timeout == 30.0
    for kwargs in ({"base_url": "ftp://x"}, {"base_url": "http://x", "memory_path": "/m"},
                   {"base_url": "http://x", "timeout": 0}):
        with pytest.raises(OmoideError) as err:
            HttpConfig(**kwargs)
        assert err.value.code == "BACKEND_CONFIG"


def test_reference_server_refuses_oversized_bodies_and_unknown_routes(tmp_path):
    import urllib.error
    import urllib.request

    with running_server(tmp_path / "s.db", PORT):
        big = b'{"text": "' + b"x" * (5 * 1024 * 1024) + b'"}'
        request = urllib.request.Request(f"http://127.0.0.1:{PORT}/memories", data=big,
                                         method="POST",
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=10)
        assert err.value.code == 413
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/nowhere", timeout=10)
        assert err.value.code == 404
        # CORS: only the app's origins (the default allow-list), never "*"
        app = "http://127.0.0.1:8742"
        preflight = urllib.request.Request(f"http://127.0.0.1:{PORT}/memories",
                                           method="OPTIONS", headers={"Origin": app})
        with urllib.request.urlopen(preflight, timeout=10) as reply:
            assert reply.status == 204
            assert reply.headers["Access-Control-Allow-Origin"] == app
            assert "Authorization" in reply.headers["Access-Control-Allow-Headers"]
        for origin in ("http://evil.example", "null", "http://127.0.0.1:8743"):
            preflight = urllib.request.Request(f"http://127.0.0.1:{PORT}/memories",
                                               method="OPTIONS", headers={"Origin": origin})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(preflight, timeout=10)
            assert err.value.code == 403
            assert err.value.headers["Access-Control-Allow-Origin"] is None


def test_a_refused_request_leaves_a_kept_alive_connection_usable(tmp_path):
    """401 before the body is read: the body is skipped, so the next request on the same
    connection (browsers keep them alive) is parsed correctly."""
    import http.client

    with running_server(tmp_path / "s.db", PORT, api_key="right") as server:
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
        body = json.dumps(make_record("alice", "refused"))
        json_type = {"Content-Type": "application/json"}
        conn.request("POST", "/memories", body=body,
                     headers={"Authorization": "Bearer no", **json_type})
        first = conn.getresponse()
        first.read()
        assert first.status == 401
        conn.request("POST", "/memories", body=body,
                     headers={"Authorization": "Bearer right", **json_type})
        second = conn.getresponse()
        assert second.status == 201 and json.loads(second.read())["text"] == "refused"
        server.server_close()  # stopping drops kept-alive connections too
        with pytest.raises((OSError, http.client.HTTPException)):
            conn.request("GET", "/health", headers={"Authorization": "Bearer right"})
            conn.getresponse().read()


class NotFoundHandler(BaseHTTPRequestHandler):
    """A server where no route of the contract is (a backup URL with a wrong prefix)."""

    def reply(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(404)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"not found")

    do_GET = do_POST = do_PATCH = do_DELETE = reply  # noqa: N815

    def log_message(self, *args):
        pass


def test_a_404_of_a_route_is_an_error_not_a_success():
    """404 means "no such memory" on a memory's own URL only. A create answered 404 was taken
    as stored: with a wrong prefix every mirrored change left the queue and reached no one."""
    server = serve_plain(NotFoundHandler)
    try:
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}/v1"))
        record = make_record("alice", "Alice likes tea")
        for call in (lambda: backend.create(record), lambda: backend.list(),
                     lambda: backend.search("tea", character_id="alice"), backend.health):
            with pytest.raises(OmoideError) as err:
                call()
            assert err.value.code == "BACKEND_HTTP" and err.value.fields["status"] == 404
        assert backend.get("m1") is None and backend.delete("m1") is False
    finally:
        server.shutdown()
        server.server_close()


SEEN_KEYS: list[str | None] = []


class RedirectHandler(BaseHTTPRequestHandler):
    """Sends every request on to another origin (a compromised or misconfigured proxy)."""

    def reply(self):
        SEEN_KEYS.append(self.headers.get("Authorization"))
        if self.server.server_address[1] == PORT:
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{PORT + 1}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = reply  # noqa: N815

    def log_message(self, *args):
        pass


def test_a_redirect_is_refused_and_the_key_goes_nowhere_else():
    first = serve_plain(RedirectHandler)
    second = ThreadingHTTPServer(("127.0.0.1", PORT + 1), RedirectHandler)
    threading.Thread(target=second.serve_forever, daemon=True).start()
    SEEN_KEYS.clear()
    try:
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", api_key="k" * 32))
        record = make_record("alice", "Alice likes tea")
        for call in (backend.health, lambda: backend.create(record)):
            with pytest.raises(OmoideError) as err:
                call()
            assert err.value.fields.get("status") == 302
        assert SEEN_KEYS == ["Bearer " + "k" * 32] * 2  # the first server's two requests only
    finally:
        for server in (first, second):
            server.shutdown()
            server.server_close()


class HugeHandler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.end_headers()
        chunk = b"x" * (1 << 20)
        try:
            for _ in range(200):
                self.wfile.write(chunk)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_an_answer_larger_than_the_limit_is_cut_and_refused(monkeypatch):
    import omoide.transport as transport

    monkeypatch.setattr(transport, "MAX_REPLY_BYTES", 8 << 20)
    server = serve_plain(HugeHandler)
    try:
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}", timeout=20))
        with pytest.raises(OmoideError) as err:
            backend.health()
        assert err.value.code == "BACKEND_UNREACHABLE" and "larger than" in str(err.value)
    finally:
        server.shutdown()
        server.server_close()


def test_a_deleted_character_is_kept_deleted_by_the_server_until_it_is_restored(tmp_path):
    """The REST contract had no place for a character the user deleted (memories kept):
    the server held it as live and a restore brought it back. ``deleted_at`` travels with
    the name; a name sent without it leaves the character as the server holds it."""
    with running_server(tmp_path / "s.db", PORT):
        backend = HttpBackend(HttpConfig(f"http://127.0.0.1:{PORT}"))
        backend.set_character_name("rei", "Rei", deleted_at=1700000000.25)
        assert backend.deleted_characters() == {"rei": 1700000000.25}
        backend.set_character_name("rei", "Rei Ayanami")  # a rename from an older client
        assert backend.deleted_characters() == {"rei": 1700000000.25}
        assert backend.character_names() == {"rei": "Rei Ayanami"}
        backend.set_character_name("rei", "Rei Ayanami", deleted_at=None)  # restored
        assert backend.deleted_characters() == {}
        with pytest.raises(OmoideError) as err:
            backend.set_character_name("rei", "Rei", deleted_at=float("nan"))
        assert err.value.fields.get("name") == "deleted_at"
