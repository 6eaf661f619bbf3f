"""Issue 14 in Chromium: the Remember form's same key replaces, a pasted negation supersedes
instead of merging, and the maintenance tab's audit shows superseded pairs (memory text as
text only, EN and JA) and restores from history; paste ingest runs the learned second
extraction stage on the worker's embedding model.

One page (one persistent profile, one engine boot with the real e5 model) for the module.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from .conftest import engine_call, module_server, open_app_offline, shot, tab

expect.set_options(timeout=20_000)
XSS_PROBE = "window.__pwned = [];"
HOSTILE = '<img src=x onerror="window.__pwned.push(\'img\')"> green tea & <b>milk</b>'


server = module_server(27633)


@pytest.fixture(scope="module")
def page(browser_type, server, module_profile) -> Iterator[Page]:
    context, page = open_app_offline(browser_type, server, module_profile,
                                     init_script=XSS_PROBE)
    yield page
    context.close()


def remember_in_form(page: Page, text: str, key: str = "") -> None:
    tab(page, "memories")
    if not page.is_visible("#add-text"):
        page.click("#add-box summary")
    page.fill("#add-text", text)
    page.fill("#add-key", key)
    page.click("#add-memory button[type=submit]")
    expect(page.locator("#add-text")).to_have_value("")  # cleared once stored


def test_same_key_replaces_negation_supersedes_and_the_audit_restores(page: Page) -> None:
    character = engine_call(page, "create_character", {"name": "Aoi"})["id"]
    page.evaluate("() => window.omoide.ui.refreshCharacters()")
    page.select_option("#current-character", character)

    # The Remember form: its hint says the same key replaces, and it does.
    remember_in_form(page, HOSTILE, "favorite_drink")
    remember_in_form(page, "Favourite drink: black coffee", "favorite_drink")
    expect(page.locator("#notice")).to_contain_text("replaced the memory with the same key")
    live = engine_call(page, "memories", {"character": character})
    assert [m["text"] for m in live] == ["Favourite drink: black coffee"]
    hits = engine_call(page, "recall", {"character": character, "query": "green tea milk"})
    assert [h["memory"]["text"] for h in hits] == ["Favourite drink: black coffee"]

    # A typed memory, then a pasted negation of it: never merged, the original is kept.
    remember_in_form(page, "私は辛いラーメンが大好きです")
    if not page.is_visible("#paste-text"):
        page.click("#paste-box summary")
    page.fill("#paste-text", "user: I love spicy ramen\nuser: I don't like spicy ramen anymore.")
    page.click("#paste-form button[type=submit]")
    expect(page.locator("#ingest-preview tbody tr[data-action='superseded']")).to_have_count(1)
    assert page.locator("#ingest-preview tbody tr[data-action='merged']").count() == 0
    page.click("#ingest-save")
    expect(page.locator("#ingest-preview")).to_contain_text("1 superseded")
    texts = {m["text"] for m in engine_call(page, "memories", {"character": character})}
    assert {"私は辛いラーメンが大好きです", "I don't like spicy ramen anymore."} <= texts
    assert "I love spicy ramen" not in texts

    # The audit: both superseded pairs, memory text as text, restore from history.
    tab(page, "maintenance")
    page.click("#audit-refresh")
    rows = page.locator("#audit-superseded li.memory")
    expect(rows).to_have_count(2)
    old_texts = page.locator("#audit-superseded li.memory .text.old").all_text_contents()
    assert sorted(old_texts) == sorted([HOSTILE, "I love spicy ramen"])
    assert page.locator("#audit-box img, #audit-box b").count() == 0
    expect(page.locator("#audit-superseded")).to_contain_text("contradiction")
    shot(page, "audit-superseded")
    tea = rows.filter(has_text="green tea")
    tea.get_by_role("button").click()
    expect(page.locator("#notice")).to_contain_text("Restored")
    live = engine_call(page, "memories", {"character": character})
    assert HOSTILE in {m["text"] for m in live}
    assert "Favourite drink: black coffee" not in {m["text"] for m in live}
    expect(page.locator("#audit-superseded li.memory").filter(
        has_text="black coffee")).to_have_count(1)  # now the replaced one, restorable too

    # Japanese strings.
    page.select_option("#lang", "ja")
    expect(page.locator("#audit-box-title")).to_have_text("監査")
    expect(page.locator("#audit-superseded h4")).to_contain_text("置き換えと矛盾")
    page.select_option("#lang", "en")
    page.wait_for_timeout(300)  # an onerror would have fired by now
    assert page.evaluate("() => window.__pwned") == []


def test_paste_ingest_classifies_what_no_pattern_caught_with_the_loaded_model(page: Page) -> None:
    # The worker's embedder (Transformers.js, e5 q8) feeds the learned second stage.
    character = engine_call(page, "create_character", {"name": "Mio"})["id"]
    report = engine_call(page, "ingest", {"character": character, "dry_run": False, "messages": [
        {"role": "user", "content": "pho on a rainy evening makes me so happy"},
        {"role": "user", "content": "Kenji always orders the spicy curry"}]})
    assert [(i["action"], i["kind"], i["via"]) for i in report["items"]] == [
        ("stored", "preference", "learned"), ("skipped", None, "pattern")]
    stored = engine_call(page, "memories", {"character": character})
    assert [m["text"] for m in stored] == ["pho on a rainy evening makes me so happy"]
