"""The model files on this device are the build the app ships, read fast, never lost.

Model files live in the origin private file system (web/embed/model-files.js), each with
the sha256 it was checked against. A file of another build (an app update that changed the
bytes) is replaced on the next load when the server is there and still used, as it is, when
it is not; a file without its digest is hashed once and tagged, without a download; a file
an earlier version kept in Cache Storage is moved over, without a download. The e5 graph was
optimized at build time, so the WebAssembly session does not optimize it again, except for a
file of another build.
"""

from __future__ import annotations

import json

from playwright.sync_api import expect

from buildtools.serve import AppServer

from .conftest import DIST, MODEL_FILE_DIR, engine_call, go_offline, reload_warm, wait_ready

expect.set_options(timeout=60_000)
E5 = "omoide/multilingual-e5-small"
FILE = f"{E5}/onnx/model_quantized.onnx"
MANIFEST = json.loads((DIST / "models" / "manifest.json").read_text())
SHA = MANIFEST["models"][E5]["files"]["onnx/model_quantized.onnx"]["sha256"]

# Page-side helpers on the app's own origin (the page uses OPFS's asynchronous API).
DIR = MODEL_FILE_DIR
STORED = f"""async (path) => {{
  const {{ dir, name }} = await ({DIR})(path);
  const text = async (n) => {{
    try {{ return await (await (await dir.getFileHandle(n)).getFile()).text(); }}
    catch {{ return null; }}
  }};
  let size = null;
  try {{ size = (await (await dir.getFileHandle(name)).getFile()).size; }} catch {{}}
  const legacy = await (await caches.open("omoide-models-v1")).match("/models/" + path);
  return {{ size, digest: await text(name + ".sha256"), legacy: Boolean(legacy) }};
}}"""
SET_DIGEST = f"""async ([path, digest]) => {{
  const {{ dir, name }} = await ({DIR})(path);
  if (digest === null) {{ await dir.removeEntry(name + ".sha256"); return; }}
  const w = await (await dir.getFileHandle(name + ".sha256", {{ create: true }})).createWritable();
  await w.write(digest); await w.close();
}}"""
# What an earlier version left: the file in Cache Storage (untagged), nothing in OPFS.
TO_LEGACY = f"""async (path) => {{
  const {{ dir, name }} = await ({DIR})(path);
  const bytes = await (await (await dir.getFileHandle(name)).getFile()).arrayBuffer();
  const cache = await caches.open("omoide-models-v1");
  await cache.put(new URL("/models/" + path, location.href).href, new Response(bytes,
    {{ headers: {{ "content-type": "application/octet-stream" }} }}));
  await dir.removeEntry(name); await dir.removeEntry(name + ".sha256");
}}"""



def test_model_files_are_checked_moved_replaced_and_used_offline(launch, tmp_path):
    server = AppServer(DIST, port=27643).start()
    try:
        context = launch(tmp_path / "profile")
        fetched: list[str] = []  # requests for the model file that reached the server
        context.on("request", lambda r: fetched.append(r.url) if r.url.endswith(
            FILE) and r.method == "GET" else None)
        page = context.new_page()
        page.goto(server.url)
        wait_ready(page)
        engine_call(page, "create_character", {"name": "Mio"})
        engine_call(page, "remember", {"character": "mio", "text": "Mio collects old maps."})
        size = MANIFEST["models"][E5]["files"]["onnx/model_quantized.onnx"]["size"]
        # Downloaded, checked, stored with its digest; the graph optimized at build time is
        # not optimized again.
        assert page.evaluate(STORED, FILE) == {"size": size, "digest": SHA, "legacy": False}
        assert page.evaluate("() => window.omoide.embedder.status()")["graph"] == "build"
        assert len(fetched) == 1

        # An earlier version's file in Cache Storage: moved here, not downloaded.
        page.evaluate(TO_LEGACY, FILE)
        assert page.evaluate(STORED, FILE) == {"size": None, "digest": None, "legacy": True}
        fetched.clear()
        status = reload_warm(page)
        assert page.evaluate(STORED, FILE) == {"size": size, "digest": SHA, "legacy": False}
        assert status["graph"] == "build" and fetched == []

        # A file without its digest: hashed once and tagged, not downloaded.
        page.evaluate(SET_DIGEST, [FILE, None])
        status = reload_warm(page)
        assert page.evaluate(STORED, FILE)["digest"] == SHA
        assert status["graph"] == "build" and fetched == []

        # Another build's file: replaced by this build's on the next load.
        page.evaluate(SET_DIGEST, [FILE, "0" * 64])
        status = reload_warm(page)
        assert page.evaluate(STORED, FILE)["digest"] == SHA
        assert status["graph"] == "build" and len(fetched) == 1

        # Offline with another build's file: the model still works, optimized at set-up.
        page.evaluate(SET_DIGEST, [FILE, "0" * 64])
        go_offline(page, server)
        status = reload_warm(page)
        assert status["loaded"] and status["model"] == E5 and status["graph"] == "session"
        assert page.evaluate(STORED, FILE) == {"size": size, "digest": "0" * 64,
                                               "legacy": False}
        hits = engine_call(page, "recall", {"character": "mio", "query": "maps",
                                            "mode": "vector", "min_relevance": 0})
        assert hits and hits[0]["memory"]["text"] == "Mio collects old maps."
    finally:
        server.stop()
