"""Python starts from a memory snapshot after the first boot (issue 16: fast start).

The first boot in a browser takes a snapshot of the freshly started interpreter and keeps it
in Cache Storage; the next boot restores it, and the engine works as before (a memory
written before the reload is recalled, a new one is written). A snapshot Pyodide cannot use
is dropped: the engine boots afresh and takes a new one.
"""

from __future__ import annotations

from .conftest import engine_call, wait_ready

SNAPSHOTS = """async () => {
  const cache = await caches.open("omoide-pyodide-snapshot");
  return Promise.all((await cache.keys()).map(async (request) => [
    new URL(request.url).pathname,
    (await (await cache.match(request)).arrayBuffer()).byteLength]));
}"""
# What a damaged or foreign snapshot looks like to Pyodide: bytes without its magic number.
SPOIL = """async () => {
  const cache = await caches.open("omoide-pyodide-snapshot");
  const [request] = await cache.keys();
  await cache.put(request, new Response(new Uint8Array(4096).fill(7)));
}"""


def boot_marks(page) -> dict:
    return engine_call(page, "storage_info")["boot"]


def test_second_boot_restores_the_snapshot_and_a_bad_one_is_replaced(launch, app_url,
                                                                     tmp_path):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    assert boot_marks(page)["snapshot"] == "taken"
    engine_call(page, "create_character", {"name": "Yui"})
    engine_call(page, "remember", {"character": "yui", "text": "Yui keeps a diary."})
    # a function, not an expression: polled, an expression is eval'ed in the page, which
    # the app's CSP (script-src 'self') refuses
    page.wait_for_function(f"() => ({SNAPSHOTS})().then((s) => s.length === 1)",
                           timeout=60_000)
    [(path, size)] = page.evaluate(SNAPSHOTS)
    assert "pyodide-snapshot/" in path and size > 1_000_000

    page.reload()
    wait_ready(page)
    assert boot_marks(page)["snapshot"] == "restored"
    assert engine_call(page, "diagnostics")["platform"] == "emscripten"
    engine_call(page, "remember", {"character": "yui", "text": "Yui writes with a pen."})
    hits = engine_call(page, "recall", {"character": "yui", "query": "diary",
                                        "mode": "fulltext"})
    assert [h["memory"]["text"] for h in hits][0] == "Yui keeps a diary."

    page.evaluate(SPOIL)
    page.reload()
    wait_ready(page)
    assert boot_marks(page)["snapshot"] == "taken"  # dropped, started afresh, taken again
    hits = engine_call(page, "recall", {"character": "yui", "query": "pen",
                                        "mode": "fulltext"})
    assert [h["memory"]["text"] for h in hits][0] == "Yui writes with a pen."
    page.wait_for_function(f"""() => ({SNAPSHOTS})().then((s) => s.length === 1
      && s[0][1] > 1_000_000)""", timeout=60_000)
