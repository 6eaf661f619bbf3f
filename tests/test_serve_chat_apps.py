"""The headers that let other origins use Omoide (``buildtools.serve``): ``client.js`` with
CORS, ``bridge.html`` without COOP (a cross-site app's Omoide window keeps its opener), the
rest of the app isolated; the demo server is a plain origin with its own ``client.js``."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest

from buildtools.serve import AppServer, demo_server

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def app(tmp_path) -> Iterator[AppServer]:
    for name in ("index.html", "bridge.html", "client.js"):
        (tmp_path / name).write_text(f"// {name}\n")
    server = AppServer(tmp_path).start()
    yield server
    server.stop()


def get(url: str) -> tuple[Message, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers, response.read()  # header names case-insensitive


def test_app_headers(app):
    headers, _ = get(app.url + "index.html")
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert headers["Cross-Origin-Resource-Policy"] == "same-origin"
    assert "Access-Control-Allow-Origin" not in headers
    headers, _ = get(app.url + "client.js")
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert headers["Content-Type"].startswith("text/javascript")
    headers, _ = get(app.url + "bridge.html?window=1")
    assert "Cross-Origin-Opener-Policy" not in headers
    assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    assert "Access-Control-Allow-Origin" not in headers  # a page, never read by others


def test_demo_server_is_a_plain_origin_with_the_client():
    server = demo_server().start()
    try:
        headers, body = get(server.url)
        assert b"Chat with memory" in body
        assert "Cross-Origin-Opener-Policy" not in headers
        assert "Cross-Origin-Embedder-Policy" not in headers
        headers, body = get(server.url + "client.js")
        assert body == (ROOT / "web" / "client.js").read_bytes()
    finally:
        server.stop()
