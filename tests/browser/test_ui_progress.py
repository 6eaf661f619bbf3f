"""Long actions show their progress: import and paste preview say what they are doing and,
while they embed, count / total, from the engine's own progress events.

A recorder on the page keeps every state the progress line showed (the line is hidden again
when the call ends), so these tests fail if no progress event reaches the page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from buildtools.serve import AppServer

from .conftest import CHROMIUM, CHROMIUM_ARGS, DIST, engine_call, wait_ready

expect.set_options(timeout=60_000)
E5 = "omoide/multilingual-e5-small"
STAMP = f"{E5}@q8#384"

RECORD = """(id) => {
  const line = document.getElementById(id);
  window.__seen = window.__seen || {};
  const seen = window.__seen[id] = [];
  const note = () => seen.push({hidden: line.hidden, stage: line.dataset.stage ?? null,
    done: line.dataset.done ? Number(line.dataset.done) : null,
    total: line.dataset.total ? Number(line.dataset.total) : null,
    text: line.textContent});
  new MutationObserver(note).observe(line, {attributes: true, childList: true,
    subtree: true, characterData: true});
}"""


@pytest.fixture(scope="module")
def page(browser_type, module_profile) -> Iterator[Page]:
    server = AppServer(DIST, port=27651).start()
    context = browser_type.launch_persistent_context(
        str(module_profile), executable_path=CHROMIUM,
        headless=True, args=CHROMIUM_ARGS, viewport={"width": 1100, "height": 900},
        locale="en-US")
    page = context.new_page()
    page.goto(server.url)
    wait_ready(page)
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    page.evaluate(f"() => window.omoide.loadModel({{model: '{E5}', dtype: 'q8'}})")
    yield page
    context.close()
    server.stop()


def seen(page: Page, line_id: str) -> list[dict]:
    return page.evaluate("(id) => window.__seen[id]", line_id)


def embedding_counts(states: list[dict], total: int) -> list[int]:
    return [s["done"] for s in states if s["stage"] == "embedding" and s["total"] == total]


def export_file(tmp_path: Path, character: str, n: int) -> Path:
    """An export (format 2) of ``n`` memories without vectors: the import embeds them all."""
    memories = [{
        "id": f"prog-{i:04d}", "character_id": character,
        "text": f"On day {i} we talked about the garden, the weather and plan number {i}.",
        "kind": "diary", "type": "episodic", "key": None, "importance": 0.5,
        "created_at": 1_700_000_000.0 + i, "updated_at": 1_700_000_000.0 + i,
        "last_recalled_at": None, "recall_count": 0, "model": STAMP, "meta": {},
    } for i in range(n)]
    data = {"format": "omoide-export", "version": 2, "characters": [
        {"id": character, "name": "Progress", "stamp": STAMP, "memories": memories,
         "trash": []}]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data))
    return path


def test_import_shows_stage_and_count_of_total(page: Page, tmp_path: Path) -> None:
    n = 80
    path = export_file(tmp_path, "progress", n)
    page.click("#tab-maintenance")
    page.evaluate(RECORD, "import-progress")
    page.set_input_files("#import-file", str(path))
    page.click("#import-button")
    expect(page.locator("#import-report")).to_have_attribute("data-state", "done")
    expect(page.locator("#import-progress")).to_be_hidden()
    states = seen(page, "import-progress")
    counts = embedding_counts(states, n)
    # count / total moved while it ran: some batches in between, then all of them
    assert any(0 < c < n for c in counts), states
    assert counts == sorted(counts) and counts[-1] == n, counts
    assert any(f"{n} / {n} texts" in s["text"] for s in states if s["stage"] == "embedding")
    assert "saving" in {s["stage"] for s in states}
    assert len(engine_call(page, "memories", {"character": "progress"})) == n


def test_paste_preview_shows_progress_and_saves_nothing(page: Page) -> None:
    engine_call(page, "create_character", {"name": "Paste"})
    page.evaluate("() => window.omoide.ui.refreshCharacters()")
    page.select_option("#current-character", "paste")
    page.click("#tab-memories")
    if not page.is_visible("#paste-text"):
        page.click("#paste-box summary")
    page.evaluate(RECORD, "ingest-progress")
    foods = ["green tea", "miso soup", "natto", "ramen", "udon", "soba", "tempura", "sushi",
             "curry", "onigiri", "mochi", "yakitori", "gyoza", "okonomiyaki", "takoyaki",
             "tofu", "edamame", "sashimi", "karaage", "oden", "matcha", "dango", "taiyaki"]
    lines = [f"user: I love {food}.\nassistant: Noted!" for food in foods]
    page.fill("#paste-text", "\n".join(lines))
    page.click("#paste-form button[type=submit]")
    expect(page.locator("#ingest-preview")).to_contain_text("Preview (nothing saved yet)")
    states = seen(page, "ingest-progress")
    stages = [s["stage"] for s in states]
    assert stages and stages[0] == "working", states
    embedding = [s for s in states if s["stage"] == "embedding"]
    assert embedding, states
    total = embedding[-1]["total"]
    assert total >= len(foods) and embedding[-1]["done"] == total
    assert any(0 < s["done"] < s["total"] for s in embedding), embedding
    expect(page.locator("#ingest-progress")).to_be_hidden()
    assert engine_call(page, "memories", {"character": "paste"}) == []
