"""The model is warm before it is needed, and the picker knows what works offline.

After a reload the selected model initialises in the background (its files are cached), the
picker marks each model build as downloaded or not, and offline a switch to a model that was
never downloaded is refused with the real reason while the current model keeps working.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Page, expect

from buildtools.serve import AppServer

from .conftest import DIST, engine_call, go_offline, wait_ready


@contextmanager
def app_page(launch, tmp_path, port: int) -> Iterator[tuple[AppServer, Page]]:
    """This test's own server (its own origin) and a page of a fresh profile, engine ready;
    the server is stopped at the end whatever happened."""
    server = AppServer(DIST, port=port).start()
    try:
        page = launch(tmp_path / "profile").new_page()
        page.goto(server.url)
        wait_ready(page)
        yield server, page
    finally:
        server.stop()


expect.set_options(timeout=30_000)


def wait_until(check, timeout_s: float = 30.0) -> None:
    """Poll `check` (a worker has no `expect`) until it is true."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


E5 = "omoide/multilingual-e5-small"
# Installed in the embedding worker: every WebAssembly start waits for `release()`;
# `held` says one is waiting.
HOLD_WASM_START = """() => {
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  self.omoideHold = { held: false, release };
  for (const name of ["instantiate", "instantiateStreaming"]) {
    const original = WebAssembly[name].bind(WebAssembly);
    WebAssembly[name] = async (...args) => {
      self.omoideHold.held = true;
      await gate;
      return original(...args);
    };
  }
}"""
MINILM = "omoide/all-MiniLM-L6-v2"


def test_warm_model_offline_picker_and_refused_switch(launch, tmp_path):
    with app_page(launch, tmp_path, 27641) as (server, page):
        # First visit: the default model was never downloaded, so nothing is fetched for it
        # at boot; the line says it loads on first use.
        warm = page.locator("#model-warm")
        expect(warm).to_have_attribute("data-state", "absent")
        engine_call(page, "create_character", {"name": "Yui"})
        engine_call(page, "remember", {"character": "yui", "text": "Yui keeps a diary."})
        assert page.evaluate("() => window.omoide.embedder.availability()")[
            f"{E5}@q8"]["cached"] is True

        # A reload: the selected model warms up by itself, before any remember or recall.
        page.reload()
        wait_ready(page)
        expect(warm).to_have_attribute("data-state", "ready")
        status = page.evaluate("() => window.omoide.embedder.status()")
        assert status["loaded"] and status["model"] == E5
        expect(page.locator("#panel-characters")).to_contain_text("1 memory")
        expect(page.locator("#panel-characters")).not_to_contain_text("1 memories")

        # The picker marks which builds are downloaded.
        page.click("#tab-maintenance")
        page.select_option("#model-select", E5)
        page.select_option("#dtype-select", "q8")
        expect(page.locator("#model-offline")).to_have_attribute("data-available", "true")
        page.select_option("#model-select", MINILM)
        page.select_option("#dtype-select", "q8")
        expect(page.locator("#model-offline")).to_have_attribute("data-available", "false")
        expect(page.locator("#model-download")).to_be_visible()

        # Offline, switching to it is refused with the reason; the current model stays.
        go_offline(page, server)
        page.click("#model-apply")
        notice = page.locator("#notice")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("not available")
        expect(notice).to_contain_text(MINILM)
        state = engine_call(page, "model_state")
        assert state["selected"]["model"] == E5 and state["mismatched"] == []
        hits = engine_call(page, "recall", {"character": "yui", "query": "diary",
                                            "mode": "vector"})
        assert hits and hits[0]["memory"]["text"] == "Yui keeps a diary."


def test_warm_up_can_be_cancelled_and_the_next_remember_loads_the_model(launch, tmp_path):
    with app_page(launch, tmp_path, 27642) as (server, page):
        engine_call(page, "create_character", {"name": "Aki"})
        engine_call(page, "remember", {"character": "aki", "text": "Aki grows tomatoes."})

        # The warm-up starts during the boot (once Python is up), so it is cancelled from
        # the boot screen, before or after ready. The model's set-up takes about a second:
        # the embedding worker's WebAssembly start is held until the click has reached the
        # worker, so the cancel cannot arrive after a finished set-up on a busy machine.
        with page.expect_worker(lambda w: "embed-worker" in w.url) as created:
            page.reload()
        embedder = created.value
        embedder.evaluate(HOLD_WASM_START)
        warm = page.locator("#model-warm")
        expect(warm).to_have_attribute("data-state", "loading")
        wait_until(lambda: embedder.evaluate("() => self.omoideHold.held"))
        cancel = page.locator("#model-warm-cancel")
        cancel.click()
        expect(cancel).to_be_disabled()
        # A round trip on the worker's channel: the cancel message, sent first, is handled.
        assert page.evaluate("() => window.omoide.embedder.status()")["warming"] is True
        embedder.evaluate("() => self.omoideHold.release()")
        expect(warm).to_have_attribute("data-state", "cancelled")
        wait_ready(page)
        status = page.evaluate("() => window.omoide.embedder.status()")
        assert status["loaded"] is False and status["warming"] is False
        # The app stays usable: full-text recall needs no model, and the next remember
        # loads the model itself.
        hits = engine_call(page, "recall", {"character": "aki", "query": "tomatoes",
                                            "mode": "fulltext"})
        assert hits and hits[0]["memory"]["text"] == "Aki grows tomatoes."
        engine_call(page, "remember", {"character": "aki", "text": "Aki waters them daily."})
        status = page.evaluate("() => window.omoide.embedder.status()")
        assert status["loaded"] and status["model"] == E5
        hits = engine_call(page, "recall", {"character": "aki", "query": "watering plants",
                                            "mode": "vector", "min_relevance": 0})
        assert {h["memory"]["text"] for h in hits} == {"Aki grows tomatoes.",
                                                       "Aki waters them daily."}
