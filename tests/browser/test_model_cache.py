"""The model cache holds the build the app ships, and the build optimized the graph once.

Every model file in the cache carries the sha256 it was checked against. A file of another
build under the same URL (an app update that changed the bytes) is replaced on the next load
when the server is there, and still used (as it is) when it is not; a file stored before
entries carried a digest is hashed once and tagged, without a download. The e5 graph was
optimized at build time, so the WebAssembly session does not optimize it again, except for
a file from another build.
"""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from buildtools.serve import AppServer

from .conftest import DIST, engine_call, go_offline, wait_ready

expect.set_options(timeout=60_000)
E5 = "omoide/multilingual-e5-small"
MODEL_FILE = f"models/{E5}/onnx/model_quantized.onnx"
MANIFEST = json.loads((DIST / "models" / "manifest.json").read_text())
SHA = MANIFEST["models"][E5]["files"]["onnx/model_quantized.onnx"]["sha256"]

# Page-side helpers on the app's own origin: read an entry's digest tag, and rewrite an
# entry with the same bytes and another tag (or none), as an older build would have left it.
ENTRY_TAG = """async (path) => {
  const cache = await caches.open("omoide-models-v1");
  const hit = await cache.match(new URL(path, location.href).href);
  return hit ? hit.headers.get("x-omoide-sha256") : "missing";
}"""
RETAG = """async ([path, tag]) => {
  const cache = await caches.open("omoide-models-v1");
  const url = new URL(path, location.href).href;
  const bytes = await (await cache.match(url)).arrayBuffer();
  const headers = { "content-type": "application/octet-stream" };
  if (tag) headers["x-omoide-sha256"] = tag;
  await cache.put(url, new Response(bytes, { headers }));
}"""


def reload_warm(page: Page) -> dict:
    page.reload()
    wait_ready(page)
    expect(page.locator("#model-warm")).to_have_attribute("data-state", "ready")
    return page.evaluate("() => window.omoide.embedder.status()")


def test_cache_entries_are_tagged_replaced_when_stale_and_used_offline(launch, tmp_path):
    server = AppServer(DIST, port=27643).start()
    try:
        context = launch(tmp_path / "profile")
        fetched: list[str] = []  # model file requests that reached the network (or server)
        context.on("request", lambda r: fetched.append(r.url) if r.url.endswith(
            MODEL_FILE) and r.method == "GET" else None)
        page = context.new_page()
        page.goto(server.url)
        wait_ready(page)
        engine_call(page, "create_character", {"name": "Mio"})
        engine_call(page, "remember", {"character": "mio", "text": "Mio collects old maps."})
        # Downloaded and checked: the entry carries the manifest's digest, and the graph
        # optimized at build time is not optimized again.
        assert page.evaluate(ENTRY_TAG, MODEL_FILE) == SHA
        assert page.evaluate("() => window.omoide.embedder.status()")["graph"] == "build"

        # An entry stored before entries were tagged: hashed once, tagged, not downloaded.
        page.evaluate(RETAG, [MODEL_FILE, None])
        fetched.clear()
        status = reload_warm(page)
        assert page.evaluate(ENTRY_TAG, MODEL_FILE) == SHA
        assert status["graph"] == "build" and fetched == []

        # Another build's file under the same URL: replaced by this build's on the next load.
        page.evaluate(RETAG, [MODEL_FILE, "0" * 64])
        fetched.clear()
        status = reload_warm(page)
        assert page.evaluate(ENTRY_TAG, MODEL_FILE) == SHA
        assert status["graph"] == "build" and len(fetched) == 1

        # Offline with another build's file: the model still works, optimized at set-up.
        page.evaluate(RETAG, [MODEL_FILE, "0" * 64])
        go_offline(page, server)
        status = reload_warm(page)
        assert status["loaded"] and status["model"] == E5 and status["graph"] == "session"
        assert page.evaluate(ENTRY_TAG, MODEL_FILE) == "0" * 64
        hits = engine_call(page, "recall", {"character": "mio", "query": "maps",
                                            "mode": "vector", "min_relevance": 0})
        assert hits and hits[0]["memory"]["text"] == "Mio collects old maps."
    finally:
        server.stop()
