"""The offline app shell: Pyodide in a module worker, service worker, loopback only."""

from __future__ import annotations

from urllib.parse import urlparse

from buildtools.serve import AppServer

from .conftest import DIST, engine_call, wait_ready

LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}


def test_engine_answers_from_pyodide(launch, app_url, tmp_path):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    diag = engine_call(page, "diagnostics")
    assert diag["platform"] == "emscripten"
    assert diag["in_pyodide"] is True
    assert diag["python"].startswith("3.")
    # Computed by Python's unicodedata inside Pyodide: NFKC folds full-width and half-width.
    assert engine_call(page, "normalize", {"text": "ＡＢＣ ｶﾀｶﾅ"})["text"] == "abc カタカナ"


def test_engine_errors_are_clear(launch, app_url, tmp_path):
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    error = page.evaluate(
        "() => window.omoide.call('no_such_verb', {}).then(() => null, e => [e.name, e.message])"
    )
    assert error[0] == "INVALID_ARGUMENT"
    assert "no_such_verb" in error[1]


def test_boots_offline_after_first_visit(launch, tmp_path):
    profile = tmp_path / "profile"
    server = AppServer(DIST, port=27614).start()
    url = server.url
    try:
        context = launch(profile)
        page = context.new_page()
        page.goto(url)
        wait_ready(page)
        # A first use of the engine caches the model it needs.
        engine_call(page, "select_model", {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"})
        engine_call(page, "remember", {"character": "yui", "text": "Yui keeps a diary."})
        # The service worker has precached everything once it is active.
        page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
        page.wait_for_function("() => navigator.serviceWorker.controller !== null",
                               timeout=60_000)
        context.close()
    finally:
        server.stop()
    # The HTTP server is gone: a restarted browser on the same profile must boot from cache.
    context = launch(profile)
    page = context.new_page()
    page.goto(url)
    wait_ready(page)
    assert engine_call(page, "diagnostics")["platform"] == "emscripten"
    # Memories and the model work offline too: write, then recall in every mode.
    engine_call(page, "remember", {"character": "yui", "text": "Yui writes with a fountain pen."})
    for mode in ("vector", "fulltext", "hybrid"):
        hits = engine_call(page, "recall", {"character": "yui", "query": "diary", "mode": mode})
        assert "Yui keeps a diary." in [h["memory"]["text"] for h in hits]


def test_no_request_leaves_loopback(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    page = context.new_page()
    page.goto(app_url)
    wait_ready(page)
    engine_call(page, "diagnostics")
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=60_000)
    # Resource timing of the page sees requests made by the page and its workers too.
    urls += page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    remote = [u for u in urls if urlparse(u).scheme in {"http", "https", "ws", "wss"}
              and urlparse(u).hostname not in LOOPBACK]
    assert urls, "no request was recorded at all"
    assert remote == []


RESPONSIVENESS_PROBE = """
window.__ticks = 0; window.__maxGap = 0; window.__longTasks = [];
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  window.__maxGap = Math.max(window.__maxGap, now - last);
  last = now; window.__ticks += 1;
}, 20);
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longTasks.push(e.duration);
}).observe({ type: "longtask", buffered: true });
"""


def test_main_thread_stays_responsive_while_pyodide_boots(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    context.add_init_script(RESPONSIVENESS_PROBE)
    page = context.new_page()
    page.goto(app_url)
    wait_ready(page)
    ticks, long_tasks = page.evaluate("() => [window.__ticks, window.__longTasks]")
    # Pyodide's boot takes seconds; a timer on the page kept firing all along.
    assert ticks >= 20
    assert max(long_tasks, default=0) < 300, long_tasks
