"""The one HTTP transport (omoide.transport) keeps the invariants its clients rely on:
every HTTP status is a Reply (with headers), a slow server is TimeoutError, a refused
connection is OSError; and each client (REST backend, LLM, remote embedder) goes through it."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from omoide.backends.http import HttpBackend, HttpConfig
from omoide.embeddings.remote import RemoteEmbedder
from omoide.errors import OmoideError
from omoide.governance.llm import ChatClient
from omoide.transport import Reply, urllib_transport


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server API
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/slow":
            time.sleep(1.5)
        self.send_response(503 if self.path == "/busy" else 200)
        self.send_header("Retry-After", "7")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # the timeout test hangs up early
        pass


@pytest.fixture
def base_url():
    httpd = _Quiet(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def refused_url() -> str:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_status_is_a_reply_with_headers(base_url):
    reply = urllib_transport("POST", base_url + "/busy", {}, b"{}", 5)
    assert isinstance(reply, Reply)
    assert (reply.status, reply.body) == (503, b"{}")
    assert {k.lower(): v for k, v in reply.headers.items()}["retry-after"] == "7"


def test_slow_server_is_timeout(base_url):
    with pytest.raises(TimeoutError):
        urllib_transport("POST", base_url + "/slow", {}, b"{}", 0.3)


def test_refused_connection_is_oserror():
    with pytest.raises(OSError) as err:
        urllib_transport("POST", refused_url() + "/x", {}, b"{}", 2)
    assert not isinstance(err.value, TimeoutError)


def test_every_client_uses_the_given_transport():
    calls: list[tuple[str, str]] = []

    def transport(method, url, headers, body, timeout):
        calls.append((method, url))
        return Reply(500, b"nope")

    with pytest.raises(OmoideError) as e1:
        HttpBackend(HttpConfig("http://x.test"), transport=transport).get("m1")
    with pytest.raises(OmoideError) as e2:
        ChatClient("http://x.test", "m", transport=transport).complete(
            [{"role": "user", "content": "hi"}])
    with pytest.raises(OmoideError) as e3:
        RemoteEmbedder("http://x.test", "m", dimension=4, transport=transport).embed_queries(["q"])
    assert [e.value.code for e in (e1, e2, e3)] == ["BACKEND_HTTP", "REMOTE_ERROR",
                                                   "REMOTE_ERROR"]
    assert calls == [("GET", "http://x.test/memories/m1"),
                     ("POST", "http://x.test/v1/chat/completions"),
                     ("POST", "http://x.test/v1/embeddings")]
