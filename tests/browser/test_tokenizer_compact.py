"""e5's tokenizer is read from the compact form this device made of it, never from a stale or
damaged one.

The first set-up parses tokenizer.json and writes the vocabulary's compact form beside the
model's files (web/embed/unigram.js), tagged with its sha256 and naming the tokenizer.json
it came from; later set-ups build the tokenizer from it. Vectors are the same on both paths;
a compact form whose bytes changed on disk, or that was made from another tokenizer.json,
is not used (the tokenizer is built from tokenizer.json and the form written again).
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from buildtools.serve import AppServer

from .conftest import DIST, MODEL_FILE_DIR, engine_call, reload_warm, wait_ready

expect.set_options(timeout=60_000)
E5 = "omoide/multilingual-e5-small"
COMPACT = f"{E5}/tokenizer.compact"
TEXTS = ["I prefer green tea in the morning.", "毎朝コーヒーを飲むのが習慣です。",
         "Mio collects old maps ✨ and Ünïcödé", "x" * 300]

DIR = MODEL_FILE_DIR
# Under the origin-wide lock the embedding worker holds while it writes or reads a model file
# (web/embed/model-files.js `exclusive`): read without it, a tag being written again (by the
# other embedding worker's first set-up) was seen empty, a torn read no product reader makes.
LOCKED = "(path, job) => navigator.locks.request(`omoide-model-file:${path}`, job)"
# The compact form's size and tag, or nulls.
STORED = f"""async (path) => ({LOCKED})(path, async () => {{
  const {{ dir, name }} = await ({DIR})(path);
  const read = async (n) => {{
    try {{ return await (await dir.getFileHandle(n)).getFile(); }} catch {{ return null; }}
  }};
  const file = await read(name);
  const tag = await read(name + ".sha256");
  const digest = tag ? (await tag.text()) : null;
  const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
  const actual = file ? hex(await crypto.subtle.digest("SHA-256", await file.arrayBuffer())) : null;
  return {{ size: file?.size ?? null, digest, intact: digest !== null && actual === digest }};
}})"""
# Flip one byte in the middle of the file; its tag is left as it was.
DAMAGE = f"""async (path) => ({LOCKED})(path, async () => {{
  const {{ dir, name }} = await ({DIR})(path);
  const handle = await dir.getFileHandle(name);
  const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
  bytes[bytes.length >> 1] ^= 0xff;
  const w = await handle.createWritable(); await w.write(bytes); await w.close();
}})"""
EMBED = """async (texts) => Array.from((await window.omoide.embed(texts, { kind: "passage",
  model: "omoide/multilingual-e5-small", dtype: "q8" })).data)"""


def wait_stored(page: Page) -> dict:
    page.wait_for_function(f"async () => (await ({STORED})({COMPACT!r})).intact",
                           timeout=60_000)
    return page.evaluate(STORED, COMPACT)


def close(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5


def test_compact_tokenizer_is_made_once_used_and_never_trusted_when_damaged(launch, tmp_path):
    server = AppServer(DIST, port=27612).start()
    try:
        page = launch(tmp_path / "profile").new_page()
        page.goto(server.url)
        wait_ready(page)
        engine_call(page, "create_character", {"name": "Mio"})
        engine_call(page, "remember", {"character": "mio", "text": "Mio collects old maps."})
        first = page.evaluate("() => window.omoide.embedder.status()")["setup"]
        assert first["tokenizer_from"] == "json"
        stored = wait_stored(page)
        assert stored["size"] > 1_000_000 and len(stored["digest"]) == 64
        from_json = page.evaluate(EMBED, TEXTS)

        # The next set-up reads the compact form; the vectors are the same.
        assert reload_warm(page)["setup"]["tokenizer_from"] == "compact"
        assert close(page.evaluate(EMBED, TEXTS), from_json)

        # Bytes changed on disk under their tag: not used, made again from tokenizer.json.
        page.evaluate(DAMAGE, COMPACT)
        assert not page.evaluate(STORED, COMPACT)["intact"]
        assert reload_warm(page)["setup"]["tokenizer_from"] == "json"
        assert close(page.evaluate(EMBED, TEXTS), from_json)
        assert wait_stored(page) == stored
        assert reload_warm(page)["setup"]["tokenizer_from"] == "compact"
        hits = engine_call(page, "recall", {"character": "mio", "query": "old maps",
                                            "mode": "vector", "min_relevance": 0})
        assert hits and hits[0]["memory"]["text"] == "Mio collects old maps."
    finally:
        server.stop()
