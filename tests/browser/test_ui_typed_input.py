"""What the user is typing survives what happens around it: a save still in flight, another
tab's change, a language switch, a switch of character. And a memory being edited is never
shown (or saved) under another character.

One page (one persistent profile, one engine boot) serves the whole module; every
test uses its own characters.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from .conftest import engine_call, module_server, open_app_offline, tab, wait_ready

expect.set_options(timeout=20_000)
# Every call of `method` answers `ms` later (a model loading, a busy machine).
SLOW_CALL = """([method, ms]) => {
  const call = window.omoide.call;
  window.omoide.call = async (m, p) => {
    if (m === method) await new Promise((r) => setTimeout(r, ms));
    return call(m, p);
  };
}"""


server = module_server(31310)


@pytest.fixture(scope="module")
def page(browser_type, server, module_profile) -> Iterator[Page]:
    context, page = open_app_offline(browser_type, server,
                                     module_profile)
    yield page
    context.close()


@pytest.fixture
def fresh(page: Page) -> Page:
    """The page reloaded (no call wrapped by an earlier test), in English."""
    page.evaluate("() => localStorage.setItem('omoide.lang', 'en')")
    page.reload()
    wait_ready(page)
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    return page


def select(page: Page, character: str) -> None:
    page.select_option("#current-character", character)
    tab(page, "memories")
    expect(page.locator("#panel-memories")).to_have_attribute(
        "data-loaded", f"{character}:" + str(engine_call(
            page, "memories_page", {"character": character, "offset": 0, "limit": 1})["total"]))


def new_character(page: Page, name: str) -> str:
    made = engine_call(page, "create_character", {"name": name})
    page.evaluate("() => window.omoide.ui.refreshCharacters()")
    return made["id"]


def test_an_edit_is_never_shown_or_saved_under_another_character(fresh: Page) -> None:
    page = fresh
    hana = new_character(page, "Hana edit")
    zed = new_character(page, "Zed edit")
    memory = engine_call(page, "remember", {"character": hana, "text": "I love green tea"})
    engine_call(page, "remember", {"character": zed, "text": "I have a red bicycle"})
    select(page, hana)
    row = page.locator(f"#memory-list li[data-id='{memory['id']}']")
    row.get_by_role("button", name="Edit").click()
    row.locator("form.edit textarea").fill("I love green tea a lot")

    select(page, zed)
    expect(page.locator("#panel-memories h2")).to_have_text("Memories of Zed edit")
    # Hana's memory (its form, its text) is not in Zed's list
    expect(page.locator("#memory-list li.memory")).to_have_count(1)
    expect(page.locator("#memory-list")).not_to_contain_text("green tea")
    expect(page.locator("#memory-list form.edit")).to_have_count(0)
    # nothing was changed on either side
    assert engine_call(page, "get", {"character": hana, "id": memory["id"]})["text"] == \
        "I love green tea"


def test_what_is_typed_while_a_memory_saves_stays_in_the_form(fresh: Page) -> None:
    page = fresh
    who = new_character(page, "Typist")
    select(page, who)
    page.evaluate(SLOW_CALL, ["remember", 1500])
    page.click("#add-box summary")
    page.fill("#add-text", "My cat is called Pochi")
    page.click("#add-memory button[type=submit]")
    expect(page.locator("#add-memory button[type=submit]")).to_be_disabled()
    # the next memory, typed while the first one saves
    page.fill("#add-text", "My dog is called Shiro")
    expect(page.locator("#memory-list li.memory")).to_have_count(1)
    expect(page.locator("#memory-list")).to_contain_text("Pochi")
    expect(page.locator("#add-text")).to_have_value("My dog is called Shiro")


def test_a_memory_typed_for_a_character_another_tab_deletes_is_not_added_to_another(
        fresh: Page) -> None:
    """Another tab deleted the character a memory was being typed for: the picker moved to
    another character and Add stored the memory there (only the heading changed)."""
    page = fresh
    gone = new_character(page, "Gone soon")
    other = new_character(page, "Still here")
    select(page, gone)
    page.click("#add-box summary")
    page.fill("#add-text", "My sister lives in Osaka")
    engine_call(page, "delete_character", {"character": gone})  # as another tab would
    page.evaluate("() => window.omoide.ui.refreshCharacters()")
    expect(page.locator("#current-character")).not_to_have_value(gone)
    page.click("#add-memory button[type=submit]")
    expect(page.locator("#notice")).to_contain_text("Gone soon")
    expect(page.locator("#add-text")).to_have_value("My sister lives in Osaka")
    for character in (other, page.locator("#current-character").input_value()):
        assert not any("Osaka" in m["text"]
                       for m in engine_call(page, "memories", {"character": character}))
    page.click("#add-memory button[type=submit]")  # asked again: the character shown
    shown = page.locator("#current-character").input_value()
    expect(page.locator("#memory-list")).to_contain_text("Osaka")
    assert any("Osaka" in m["text"] for m in engine_call(page, "memories", {"character": shown}))


def test_a_rename_being_typed_survives_another_tabs_change_and_a_language_switch(
        fresh: Page) -> None:
    page = fresh
    who = new_character(page, "Rena")
    tab(page, "characters")
    card = page.locator(f"#character-list li[data-id='{who}']")
    card.get_by_role("button", name="Rename Rena").click()
    page.keyboard.press("End")  # the name is selected on open
    page.keyboard.type(" Sakura")
    other = page.context.new_page()
    other.goto(page.url)
    wait_ready(other)
    engine_call(other, "create_character", {"name": "Made elsewhere"})
    other.close()
    expect(page.locator("#character-list")).to_contain_text("Made elsewhere")
    expect(card.locator("form.rename input")).to_have_value("Rena Sakura")
    expect(card.locator("form.rename input")).to_be_focused()
    page.select_option("#lang", "ja")
    expect(card.locator("form.rename input")).to_have_value("Rena Sakura")
    card.locator("form.rename input").press("Enter")
    expect(card.locator("form.rename")).to_have_count(0)
    expect(card).to_contain_text("Rena Sakura")
    names = {c["id"]: c["name"] for c in engine_call(page, "characters")}
    assert names[who] == "Rena Sakura"


def test_a_language_switch_keeps_what_is_typed_in_the_settings(fresh: Page) -> None:
    page = fresh
    tab(page, "maintenance")
    page.fill("#setting-dedup_threshold", "0.95")
    page.fill("#backup-key", "typed-secret-key")
    page.fill("#backup-url", "http://127.0.0.1:8750")
    page.select_option("#lang", "ja")
    expect(page.locator("label[for='setting-dedup_threshold']")).to_have_text(
        "重複判定のしきい値（コサイン）")
    expect(page.locator("#setting-dedup_threshold")).to_have_value("0.95")
    expect(page.locator("#backup-url")).to_have_value("http://127.0.0.1:8750")
    expect(page.locator("#backup-key")).to_have_value("typed-secret-key")
    page.click("#settings-save")
    expect(page.locator("#notice .text")).to_have_text("設定を保存しました。")
    assert engine_call(page, "settings")["dedup_threshold"] == 0.95


def test_a_blank_k_in_the_recall_form_is_asked_for_not_sent_as_zero(fresh: Page) -> None:
    page = fresh
    who = new_character(page, "Kei")
    engine_call(page, "remember", {"character": who, "text": "Kei drinks oolong tea"})
    page.select_option("#current-character", who)
    tab(page, "recall")
    page.fill("#recall-query", "tea")
    page.fill("#recall-k", "")
    page.click("#recall-search")
    # the browser asks for the field; nothing was sent, nothing claims the user typed 0
    assert page.eval_on_selector("#recall-k", "(el) => el.validity.valueMissing")
    expect(page.locator("#recall-status")).to_have_text("")
    page.fill("#recall-k", "3")
    page.click("#recall-search")
    expect(page.locator("#recall-results li.result")).to_have_count(1)
