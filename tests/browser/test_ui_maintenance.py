"""The maintenance tab in Chromium: export / import round trip, storage, summarization
preview, and switching the embedding model with a mismatch banner, then re-vectorizing with
progress, cancelling half-way and resuming.

One page (one persistent profile, one engine boot) for the module. Screenshots go to
test-results/ (git-ignored).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import E5, engine_call, module_server, open_app_offline, shot, tab, wait_ready

expect.set_options(timeout=20_000)
MINILM = "omoide/all-MiniLM-L6-v2"
PROGRESS_PROBE = """() => {
  window.__progress = [];
  const bar = document.getElementById('revectorize-progress');
  new MutationObserver(() => window.__progress.push([bar.value, bar.max]))
    .observe(bar, { attributes: true });
}"""


server = module_server(27632)


@pytest.fixture(scope="module")
def page(browser_type, server, module_profile) -> Iterator[Page]:
    # The model switch test needs MiniLM too: cache it on this first visit; e5 stays selected.
    context, page = open_app_offline(browser_type, server, module_profile,
                                     models=(MINILM, E5), accept_downloads=True)
    yield page
    context.close()


def create_character(page: Page, name: str, texts: list[str]) -> str:
    character = engine_call(page, "create_character", {"name": name})["id"]
    if texts:
        engine_call(page, "remember_many", {"character": character,
                                            "items": [{"text": t, "kind": "fact"} for t in texts]})
    page.evaluate("() => window.omoide.ui.refreshCharacters()")
    page.select_option("#current-character", character)
    return character


def test_export_then_import_round_trip(page: Page, tmp_path: Path) -> None:
    texts = ["Mio plays the violin", "Mio's cat is called Tama", "Mio hates natto"]
    character = create_character(page, "Mio", texts)
    tab(page, "maintenance")
    page.select_option("#export-scope", character)
    page.check("#export-vectors")
    with page.expect_download() as info:
        page.click("#export-button")
    exported = tmp_path / info.value.suggested_filename
    info.value.save_as(exported)
    assert exported.name.startswith("omoide-Mio-") and exported.suffix == ".json"
    data = json.loads(exported.read_text())
    assert data["format"] == "omoide-export"
    [entry] = data["characters"]
    assert entry["id"] == character and entry["name"] == "Mio"
    assert sorted(m["text"] for m in entry["memories"]) == sorted(texts)
    assert len(entry["vectors"]) == 3

    # Lose one memory for good (forget, empty the trash), then import the export.
    lost = next(m for m in engine_call(page, "memories", {"character": character})
                if "natto" in m["text"])
    engine_call(page, "forget", {"character": character, "id": lost["id"]})
    page.click("#trash-box-title")  # keep the page in view; the trash box refreshes below
    page.evaluate("() => window.omoide.ui.emit('changed', {})")
    expect(page.locator("#trash-list li.memory")).to_have_count(1)
    page.click("#trash-empty")
    page.click("#trash-confirm")
    expect(page.locator("#trash-list li.memory")).to_have_count(0)
    assert engine_call(page, "trash", {"character": character}) == []
    assert len(engine_call(page, "memories", {"character": character})) == 2

    page.set_input_files("#import-file", str(exported))
    page.click("#import-button")
    report = page.locator("#import-report")
    expect(report).to_have_attribute("data-state", "done")
    expect(report.locator("dd[data-key='imported']")).to_have_text("1")
    expect(report.locator("dd[data-key='skipped']")).to_have_text("2")
    back = {m["text"]: m for m in engine_call(page, "memories", {"character": character})}
    assert sorted(back) == sorted(texts)
    assert back["Mio hates natto"]["id"] == lost["id"]
    tab(page, "memories")
    expect(page.locator("#memory-list li.memory")).to_have_count(3)

    # A file that is not an export is refused with a clear message, and nothing changes.
    bogus = tmp_path / "bogus.json"
    bogus.write_text(json.dumps({"hello": "world"}))
    tab(page, "maintenance")
    page.set_input_files("#import-file", str(bogus))
    page.click("#import-button")
    expect(report).to_contain_text("Not a valid export")
    assert len(engine_call(page, "memories", {"character": character})) == 3


def test_storage_and_summary_preview(page: Page) -> None:
    create_character(page, "Nao", ["Nao keeps a diary"])
    tab(page, "maintenance")
    expect(page.locator("#storage-text")).to_contain_text("used of")
    usage = page.evaluate("() => [document.getElementById('storage-meter').value, "
                          "document.getElementById('storage-meter').max]")
    assert usage[0] > 0 and usage[1] > usage[0]
    page.click("#summarize-preview")
    # Nothing is 30 days old yet: the preview says so and offers nothing to apply.
    expect(page.locator("#summarize-out")).to_contain_text("Preview: 0 summaries")
    expect(page.locator("#summarize-apply")).to_be_hidden()


def test_switch_model_then_revectorize_with_progress_cancel_and_resume(page: Page) -> None:
    texts = [f"Memory number {i}: Yui noted something about topic {i % 7}" for i in range(160)]
    character = create_character(page, "Yui", texts)
    tab(page, "maintenance")
    expect(page.locator("#model-select option")).to_have_count(2)
    expect(page.locator("#mismatch-banner")).to_be_hidden()
    page.select_option("#model-select", MINILM)
    page.select_option("#dtype-select", "q8")
    page.click("#model-apply")
    banner = page.locator("#mismatch-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Yui")
    expect(page.locator("#model-stamp")).to_contain_text("all-MiniLM-L6-v2")
    shot(page, "model-mismatch-banner")
    # Recall is blocked with a clear reason until the memories are re-vectorized.
    tab(page, "recall")
    page.fill("#recall-query", "topic 3")
    page.click("#recall-search")
    expect(page.locator("#recall-status")).to_contain_text("Model mismatch")

    banner.get_by_role("button").click()
    expect(page.locator("#panel-maintenance")).to_be_visible()
    page.evaluate(PROGRESS_PROBE)
    page.click("#revectorize-start")
    box = page.locator("#revectorize-box")
    page.wait_for_function("() => document.getElementById('revectorize-progress').value > 0")
    expect(page.locator("#revectorize-text")).to_contain_text("per second")
    page.click("#revectorize-cancel")
    expect(box).to_have_attribute("data-state", "cancelled")
    stopped = page.evaluate("() => document.getElementById('revectorize-progress').value")
    total = page.evaluate("() => document.getElementById('revectorize-progress').max")
    assert 0 < stopped < total, (stopped, total)
    expect(page.locator("#revectorize-start")).to_have_text("Resume")
    expect(banner).to_be_visible()
    shot(page, "revectorize-cancelled")
    # after a reload the paused job is said so (it said "Nothing to do" beside "Resume")
    page.reload()
    wait_ready(page)
    tab(page, "maintenance")
    expect(page.locator("#revectorize-text")).to_contain_text("Paused:")
    expect(page.locator("#revectorize-start")).to_have_text("Resume")
    page.evaluate(PROGRESS_PROBE)

    page.click("#revectorize-start")
    expect(box).to_have_attribute("data-state", "finished", timeout=120_000)
    expect(banner).to_be_hidden()
    progress = page.evaluate("() => window.__progress")
    assert progress[-1][0] == progress[-1][1] == total
    assert any(0 < value < total for value, _ in progress)
    state = engine_call(page, "model_state")
    assert state["mismatched"] == [] and state["selected"]["model"] == MINILM
    stamps = {m["model"] for m in engine_call(page, "memories", {"character": character})}
    assert stamps == {state["stamp"]}

    tab(page, "recall")
    page.fill("#recall-query", "Memory number 42")
    page.select_option("#recall-mode", "vector")
    # 160 memories alike but for their numbers: none stands out past the default cut-off.
    page.fill("#recall-min-relevance", "0")
    page.click("#recall-search")
    expect(page.locator("#recall-results li.result").first).to_be_visible()
    expect(page.locator("#recall-status")).not_to_contain_text("mismatch")
