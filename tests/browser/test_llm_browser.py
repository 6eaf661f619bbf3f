"""The optional LLM path of ingest, from the browser: the engine worker calls a real loopback
HTTP server that speaks the OpenAI chat protocol (with CORS, as a local LLM server would);
a failing endpoint degrades to the pattern path with a visible reason and loses nothing."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import engine_call, wait_ready

JUDGEMENT = {"keep": True, "reason": "a lasting preference",
             "memories": [{"kind": "preference", "subject": "typescript", "polarity": "like",
                           "text": "The user prefers TypeScript.", "importance": 0.8}]}
NOTE = "Today they told me they prefer TypeScript; I will remember that."


class ChatHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "Content-Type, Authorization, Accept")
        self.send_header("Access-Control-Allow-Methods", "POST")

    def do_OPTIONS(self):
        self.send_response(204)
        self.cors()
        self.end_headers()

    def send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.cors()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, self.headers.get("Authorization"), payload))
        if self.server.mode == "500":
            return self.send(500, b"upstream exploded")
        system = payload["messages"][0]["content"]
        content = json.dumps(JUDGEMENT) if "memory judge" in system else NOTE
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        self.send(200, json.dumps(body).encode())


@pytest.fixture
def chat_server():
    server = ThreadingHTTPServer(("127.0.0.1", 27681), ChatHandler)
    server.mode, server.seen = "ok", []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


MESSAGES = [{"role": "user", "content": "I prefer TypeScript for web projects."}]


def test_ingest_uses_the_configured_llm_and_degrades_when_it_fails(launch, app_url, tmp_path,
                                                                  chat_server):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "select_model", {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"})
    shown = engine_call(page, "set_settings", {"llm_endpoint": "http://127.0.0.1:27681/v1",
                                               "llm_model": "local-model",
                                               "llm_api_key": "sk-test"})
    # the page never gets the key back: masked in the answer and in `settings`
    assert shown["llm_api_key"] == "••••" and "sk-test" not in json.dumps(shown)
    assert engine_call(page, "settings")["llm_api_key"] == "••••"
    # the maintenance form saves another setting: the masked key field is left as it is,
    # and the key stored in the worker still reaches the chat endpoint (below)
    page.click("#tab-maintenance")
    key_field = page.locator("#setting-llm_api_key")
    key_field.wait_for()
    assert key_field.get_attribute("type") == "password" and key_field.input_value() == "••••"
    page.fill("#setting-rrf_k", "55")
    page.click("#settings-save")
    page.wait_for_function("() => window.omoide.call('settings', {})"
                           ".then((s) => s.rrf_k === 55)", polling=200)
    assert engine_call(page, "settings")["llm_api_key"] == "••••"
    report = engine_call(page, "ingest", {"character": "rin", "messages": MESSAGES,
                                          "dry_run": False})
    assert report["path"] == "llm" and report["degraded"] is None
    assert chat_server.seen and chat_server.seen[0][0] == "/v1/chat/completions"
    assert chat_server.seen[0][1] == "Bearer sk-test"
    stored = [m["text"] for m in engine_call(page, "memories", {"character": "rin"})]
    assert "The user prefers TypeScript." in stored

    chat_server.mode = "500"
    report = engine_call(page, "ingest", {"character": "rin", "dry_run": False, "messages": [
        {"role": "user", "content": "I always commit before pushing."}]})
    assert report["path"] == "pattern"
    assert "500" in report["degraded"] and "pattern" in report["degraded"]
    keys = {m["key"] for m in engine_call(page, "memories", {"character": "rin"})}
    assert "pattern:commit_before_pushing" in keys  # the input was not lost

    code = page.evaluate("() => window.omoide.call('set_settings', {llm_endpoint: 'ftp://x'})"
                         ".then(() => null, e => e.name)")
    assert code == "INVALID_ARGUMENT"
