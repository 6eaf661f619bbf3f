"""The OpenAI-compatible remote provider against a real loopback HTTP server."""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from omoide.embeddings.base import Embedder
from omoide.embeddings.remote import RemoteEmbedder, parse_retry_after
from omoide.errors import OmoideError

KEY = "sk-test-123"


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # The timeout test hangs up before the answer; the broken pipe is expected.
        pass


class Server:
    """Speaks POST /v1/embeddings; behaviour per request is scripted by the test."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.script: list[dict] = []  # consumed one per request; default: answer normally
        self.dimension = 4
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                step = outer.script.pop(0) if outer.script else {}
                if "sleep" in step:
                    time.sleep(step["sleep"])
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": "not found"})
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self._send(401, {"error": {"message": "bad key"}})
                if "status" in step:
                    return self._send(step["status"], step.get("json", {}), step.get("headers"))
                dim = step.get("dimension", outer.dimension)
                data = [
                    # Not normalised, and answered in reverse order: the client must fix both.
                    {"object": "embedding", "index": i, "embedding": _vec(t, dim)}
                    for i, t in enumerate(body["input"])
                ][::-1]
                if step.get("drop_one"):
                    data = data[1:]
                for item, index in zip(data, step.get("indexes", ()), strict=False):
                    item["index"] = index
                data = step.get("data", data)
                self._send(200, {"object": "list", "data": data, "model": body["model"]})

            def _send(self, status, payload, headers=None):
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _vec(text: str, dim: int) -> list[float]:
    return [float(len(text) + i) for i in range(dim)]


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def client(server: Server, **kw) -> tuple[RemoteEmbedder, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("api_key", KEY)
    kw.setdefault("dimension", 4)
    return RemoteEmbedder(server.url, "e5-test", sleep=sleeps.append, **kw), sleeps


def test_embeds_in_order_normalised_with_prefixes(server):
    emb, _ = client(server, query_prefix="query: ", passage_prefix="passage: ")
    assert isinstance(emb, Embedder)
    assert emb.stamp == "remote:e5-test@remote#4"
    out = emb.embed_passages(["a", "bbb"])
    want = [_vec("passage: a", 4), _vec("passage: bbb", 4)]
    for got, w in zip(out, want, strict=True):
        n = math.sqrt(sum(x * x for x in w))
        assert got == pytest.approx([x / n for x in w])
    req = server.requests[0]
    assert req["path"] == "/v1/embeddings" and req["auth"] == f"Bearer {KEY}"
    assert req["body"] == {
        "model": "e5-test",
        "input": ["passage: a", "passage: bbb"],
        "encoding_format": "float",
    }
    emb.embed_queries(["q"])
    assert server.requests[1]["body"]["input"] == ["query: q"]
    assert emb.embed_queries([]) == [] and len(server.requests) == 2


def test_base_url_with_v1_and_batching(server):
    emb = RemoteEmbedder(server.url + "/v1/", "m", api_key=KEY, dimension=4, batch_size=2)
    assert len(emb.embed_passages(["a", "b", "c", "d", "e"])) == 5
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}


def test_wrong_key_is_remote_auth_and_never_shows_the_key(server):
    emb, _ = client(server, api_key="sk-wrong-secret")
    with pytest.raises(OmoideError) as e:
        emb.embed_queries(["x"])
    assert e.value.code == "REMOTE_AUTH" and "401" in str(e.value)
    assert "sk-wrong-secret" not in str(e.value) + repr(emb) + json.dumps(e.value.to_dict())


def test_429_retries_after_the_announced_delay_then_succeeds(server):
    server.script = [
        {"status": 429, "headers": {"Retry-After": "2"}},
        {"status": 429, "headers": {"Retry-After": "1.5"}},
    ]
    emb, sleeps = client(server)
    assert len(emb.embed_passages(["x", "y"])) == 2
    assert sleeps == [2.0, 1.5] and len(server.requests) == 3


def test_429_gives_up_after_max_retries_with_retry_after(server):
    server.script = [{"status": 429, "headers": {"Retry-After": "3"}}] * 5
    emb, sleeps = client(server, max_retries=2)
    with pytest.raises(OmoideError) as e:
        emb.embed_passages(["x"])
    assert e.value.code == "REMOTE_RATE_LIMITED" and "retry after 3 s" in str(e.value)
    assert sleeps == [3.0, 3.0] and len(server.requests) == 3


def test_429_with_a_long_retry_after_fails_at_once(server):
    server.script = [{"status": 429, "headers": {"Retry-After": "600"}}]
    emb, sleeps = client(server, max_retry_wait=30)
    with pytest.raises(OmoideError) as e:
        emb.embed_passages(["x"])
    assert e.value.code == "REMOTE_RATE_LIMITED" and "600" in str(e.value)
    assert sleeps == []


def test_timeout_is_remote_timeout(server):
    server.script = [{"sleep": 1.0}]
    emb, _ = client(server, timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(OmoideError) as e:
        emb.embed_queries(["slow"])
    assert e.value.code == "REMOTE_TIMEOUT" and time.monotonic() - t0 < 0.9


def test_server_error_carries_status_and_body(server):
    server.script = [{"status": 500, "json": {"error": "model crashed"}}]
    emb, _ = client(server)
    with pytest.raises(OmoideError) as e:
        emb.embed_queries(["x"])
    assert e.value.code == "REMOTE_ERROR" and "500" in str(e.value) and "crashed" in str(e.value)


def test_wrong_dimension_and_missing_vectors(server):
    server.script = [{"dimension": 3}, {"drop_one": True}]
    emb, _ = client(server)
    with pytest.raises(OmoideError) as e:
        emb.embed_passages(["x"])
    assert e.value.code == "DIMENSION_MISMATCH" and "3-d" in str(e.value)
    with pytest.raises(OmoideError) as e:
        emb.embed_passages(["x", "y"])
    assert e.value.code == "EMBEDDING_FAILED" and "1 vectors for 2 texts" in str(e.value)


def test_an_answer_whose_indexes_do_not_name_each_text_once_is_refused(server):
    """An answer with an index given twice (or one out of range) was sorted by it and
    taken: a text got another text's vector, stored as its own. Items that are not objects
    raised an AttributeError (a traceback) instead of the provider's error."""
    emb, _ = client(server)
    server.script = [{"indexes": [0, 0]}, {"indexes": [1, 2]}, {"data": [1, 2]}]
    for _ in range(3):
        with pytest.raises(OmoideError) as e:
            emb.embed_passages(["x", "yy"])
        assert e.value.code == "EMBEDDING_FAILED" and "malformed answer" in str(e.value)
    server.script = [{"data": [{"embedding": [1, 0, 0, 0]}, {"embedding": [0, 1, 0, 0]}]}]
    assert emb.embed_passages(["x", "yy"]) == [[1, 0, 0, 0], [0, 1, 0, 0]]  # no index: in order


def test_connection_refused_is_a_clear_error():
    s = Server()
    url = s.url
    s.close()
    emb = RemoteEmbedder(url, "m", dimension=4, timeout=2)
    with pytest.raises(OmoideError) as e:
        emb.embed_queries(["x"])
    assert e.value.code == "EMBEDDING_FAILED" and "cannot connect" in str(e.value)


def test_parse_retry_after_forms():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
