"""The web app's main paths in Chromium: characters, memories, paste a conversation, recall.

One page (one persistent profile, one engine boot) serves the whole module; every test uses
its own character so the tests do not depend on each other's data. Screenshots are saved to
test-results/ (git-ignored) as artifacts.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from .conftest import engine_call, module_server, open_app_offline, shot, tab, wait_ready

expect.set_options(timeout=20_000)
XSS_PROBE = """
window.__pwned = [];
window.addEventListener('securitypolicyviolation',
  e => window.__pwned.push('csp:' + e.violatedDirective));
"""
PAYLOADS = [
    '<img src=x onerror="window.__pwned.push(\'img\')">',
    "<script>window.__pwned.push('script')</script>",
    '<svg onload="window.__pwned.push(\'svg\')"></svg> & <b>bold?</b>',
]


server = module_server(27631)


@pytest.fixture(scope="module")
def page(browser_type, server, module_profile) -> Iterator[Page]:
    context, page = open_app_offline(browser_type, server, module_profile,
                                     init_script=XSS_PROBE)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    yield page
    context.close()


def create_character(page: Page, name: str) -> str:
    tab(page, "characters")
    page.fill("#create-character input", name)
    page.click("#create-character button[type=submit]")
    item = page.locator("#character-list li.card").filter(
        has=page.get_by_role("button", name=name, exact=True))
    expect(item).to_have_count(1)
    expect(page.locator("#current-character")).to_have_value(item.get_attribute("data-id"))
    return item.get_attribute("data-id")


def add_memory(page: Page, text: str, kind: str = "fact", importance: str = "0.5") -> None:
    tab(page, "memories")
    if not page.is_visible("#add-text"):
        page.click("#add-box summary")
    before = page.locator("#memory-list li.memory").count()
    page.fill("#add-text", text)
    page.select_option("#add-kind", kind)
    page.fill("#add-importance", importance)
    page.click("#add-memory button[type=submit]")
    try:
        expect(page.locator("#memory-list li.memory")).to_have_count(before + 1)
    except AssertionError:
        raise AssertionError(f"not added: {page.text_content('#notice')!r}") from None


def test_create_rename_delete_and_restore_a_character(page: Page) -> None:
    cid = create_character(page, "Hana")
    card = page.locator(f"#character-list li[data-id='{cid}']")
    expect(card).to_contain_text("0 memories")
    card.get_by_role("button", name="Rename Hana").click()
    page.fill(f"#character-list li[data-id='{cid}'] input", "Hana-chan")
    page.click(f"#character-list li[data-id='{cid}'] button[type=submit]")
    expect(page.locator(f"#character-list li[data-id='{cid}'] .name")).to_have_text("Hana-chan")
    assert any(c["name"] == "Hana-chan" for c in engine_call(page, "characters"))

    page.locator(f"#character-list li[data-id='{cid}']").get_by_role(
        "button", name="Delete Hana-chan (moves to trash)").click()
    expect(page.locator(f"#character-list li[data-id='{cid}']")).to_have_count(0)
    expect(page.locator(f"#trashed-characters li[data-id='{cid}']")).to_be_visible()
    assert all(c["id"] != cid for c in engine_call(page, "characters"))
    shot(page, "characters-trash")
    page.locator(f"#trashed-characters li[data-id='{cid}'] button").click()
    expect(page.locator(f"#character-list li[data-id='{cid}']")).to_be_visible()
    expect(page.locator(f"#trashed-characters li[data-id='{cid}']")).to_have_count(0)


FOCUSED = """() => { const el = document.activeElement;
  return [el.tagName, el.textContent.trim().slice(0, 40),
          el.closest('li')?.dataset.id ?? null]; }"""


def test_keyboard_focus_stays_in_the_list_after_rename_delete_and_forget(page: Page) -> None:
    """After a rename (saved or cancelled), a delete and a forget, keyboard focus fell to the
    page body: a keyboard or screen reader user was thrown back to the top of the page."""
    first = create_character(page, "Kaede")
    second = create_character(page, "Momiji")
    card = page.locator(f"#character-list li[data-id='{first}']")
    card.get_by_role("button", name="Rename Kaede").click()
    page.keyboard.type("Kaede-san")
    page.keyboard.press("Enter")
    expect(card.locator(".name")).to_have_text("Kaede-san")
    assert page.evaluate(FOCUSED) == ["BUTTON", "Rename", first]
    card.get_by_role("button", name="Rename Kaede-san").click()
    card.get_by_role("button", name="Cancel").click()
    assert page.evaluate(FOCUSED) == ["BUTTON", "Rename", first]

    card.get_by_role("button", name="Delete Kaede-san (moves to trash)").click()
    expect(card).to_have_count(0)
    focused = page.evaluate(FOCUSED)
    assert focused[0] == "BUTTON" and focused[2] is not None, focused  # the card now there
    page.locator(f"#trashed-characters li[data-id='{first}'] button").click()
    expect(card).to_be_visible()

    page.select_option("#current-character", second)
    add_memory(page, "Momiji likes maple leaves")
    add_memory(page, "Momiji walks in the evening")
    items = page.locator("#memory-list li.memory")
    items.first.get_by_role("button", name="Forget").click()
    expect(items).to_have_count(1)
    focused = page.evaluate(FOCUSED)
    assert focused[0] == "BUTTON" and focused[2] == items.first.get_attribute("data-id"), focused
    items.first.get_by_role("button", name="Forget").click()
    expect(items).to_have_count(0)
    assert page.evaluate(FOCUSED)[0] == "H2"  # the list's heading, the list being empty


def test_keyboard_focus_stays_on_its_row_when_a_change_redraws_the_lists(page: Page) -> None:
    """Every change (a remember in this tab or another, the change event of a forget) draws
    the lists again with new rows: focus on a row's button fell to the page body, and a forget
    whose own redraw lost the race to the change event's lost its focus too (the keyboard test
    above failed now and then). The same button of the same row keeps it."""
    cid = create_character(page, "Tsubaki")
    add_memory(page, "Tsubaki keeps a garden")
    add_memory(page, "Tsubaki hums when she reads")
    items = page.locator("#memory-list li.memory")
    target = items.last.get_attribute("data-id")
    items.last.get_by_role("button", name="Edit").focus()
    engine_call(page, "remember", {"character": cid, "text": "Tsubaki collects old maps"})
    expect(items).to_have_count(3)
    assert page.evaluate(FOCUSED) == ["BUTTON", "Edit", target]

    tab(page, "characters")
    card = page.locator(f"#character-list li[data-id='{cid}']")
    card.get_by_role("button", name="Rename Tsubaki").focus()
    cards = page.locator("#character-list li.card")
    before = cards.count()
    engine_call(page, "create_character", {"name": "Sazanka"})
    expect(cards).to_have_count(before + 1)
    assert page.evaluate(FOCUSED) == ["BUTTON", "Rename", cid]


def test_two_characters_with_one_name_are_told_apart(page: Page) -> None:
    """Two characters named alike were two identical lines in the picker and the list:
    which one a memory went to could not be seen. The id is shown beside a shared name."""
    tab(page, "characters")
    ids = []
    for _ in range(2):
        page.fill("#create-character input", "Twin")
        page.click("#create-character button[type=submit]")
        expect(page.locator("#character-list li.card")).to_have_count(
            len(engine_call(page, "characters")))
        ids.append(page.input_value("#current-character"))
    assert ids[0] != ids[1]
    labels = page.locator("#current-character option").all_text_contents()
    for cid in ids:
        assert any(label.startswith(f"Twin ({cid})") for label in labels), labels
        expect(page.locator(f"#character-list li[data-id='{cid}'] .name")).to_have_text(
            f"Twin ({cid})")


def test_untrusted_memory_text_is_rendered_as_text_only(page: Page) -> None:
    cid = create_character(page, "Mallory")
    for payload in PAYLOADS:
        add_memory(page, payload)
    texts = page.locator("#memory-list li.memory .text").all_text_contents()
    assert sorted(texts) == sorted(PAYLOADS)
    # Nothing from the memories became markup...
    assert page.locator("#memory-list img, #memory-list script, #memory-list svg, "
                        "#memory-list b").count() == 0
    # ...in the recall results and the ingest preview either.
    tab(page, "recall")
    page.fill("#recall-query", "window pwned img script")
    page.select_option("#recall-mode", "fulltext")
    page.click("#recall-search")
    expect(page.locator("#recall-results li.result")).not_to_have_count(0)
    markup = "#recall-results img, #recall-results script, #recall-results svg"
    assert page.locator(markup).count() == 0
    tab(page, "memories")
    if not page.is_visible("#paste-text"):
        page.click("#paste-box summary")
    page.fill("#paste-text", "user: I love <img src=x onerror=\"window.__pwned.push('p')\">")
    page.click("#paste-form button[type=submit]")
    expect(page.locator("#ingest-preview tbody tr")).not_to_have_count(0)
    assert page.locator("#ingest-preview img").count() == 0
    page.get_by_role("button", name="Cancel").first.click()
    page.wait_for_timeout(300)  # an onerror/onload would have fired by now
    assert page.evaluate("() => window.__pwned") == []
    assert page.dialogs == []  # type: ignore[attr-defined]
    stored = {m["text"] for m in engine_call(page, "memories", {"character": cid})}
    assert stored == set(PAYLOADS)
    shot(page, "memories-untrusted-text")


def test_add_edit_filter_forget_and_restore_from_trash(page: Page) -> None:
    cid = create_character(page, "Sora")
    add_memory(page, "Sora drinks green tea every morning", "preference", "0.9")
    add_memory(page, "Sora visited Kyoto in spring", "diary", "0.3")
    add_memory(page, "Sora's birthday is in May", "fact", "0.6")
    items = page.locator("#memory-list li.memory")
    expect(items.first).to_contain_text("importance")
    expect(page.locator("#memory-list .stamp").first).not_to_have_text("—")
    expect(page.locator("#memory-count")).to_have_text("Showing 3 of 3")

    page.select_option("#filter-kind", "diary")
    expect(items).to_have_count(1)
    expect(items).to_contain_text("Kyoto")
    page.select_option("#filter-kind", "")
    page.fill("#filter-text", "birthday")
    expect(items).to_have_count(1)
    page.fill("#filter-text", "")
    tiers = {m["id"]: (m["meta"].get("tier") == "hot") for m in
             engine_call(page, "memories", {"character": cid})}
    page.select_option("#filter-tier", "hot")
    expect(items).to_have_count(sum(tiers.values()))
    page.select_option("#filter-tier", "")
    # the filters' reloads settled before the edit (this edit lost its text, rarely, in full
    # suite runs: submitted unchanged, no update call; the cause is not found)
    expect(items).to_have_count(3)
    expect(page.locator("#memory-list")).not_to_have_attribute("aria-busy", "true")

    kyoto = page.locator("#memory-list li.memory", has_text="Kyoto")
    kyoto.get_by_role("button", name="Edit").click()
    textarea = page.locator("#memory-list li.memory form textarea")
    expect(textarea).to_have_value("Sora visited Kyoto in spring")
    textarea.fill("Sora visited Kyoto and Nara in spring")
    expect(textarea).to_have_value("Sora visited Kyoto and Nara in spring")
    page.click("#memory-list li.memory form button[type=submit]")
    try:  # the update embeds the new text: on a loaded 2-core box that can pass 5 s
        expect(page.locator("#memory-list li.memory", has_text="Nara")).to_have_count(
            1, timeout=20_000)
    except AssertionError:
        state = page.evaluate("""() => ({
          rows: [...document.querySelectorAll('#memory-list li.memory')].map((li) =>
            [li.dataset.id, li.textContent.slice(0, 60),
             li.querySelector('textarea')?.value ?? null]),
          busy: [...document.querySelectorAll('[aria-busy]')].map((e) => e.id || e.tagName)})""")
        raise AssertionError(f"not edited: {page.text_content('#notice')!r} {state}") from None
    expect(page.locator("#memory-list li.memory form")).to_have_count(0)
    texts = {m["text"] for m in engine_call(page, "memories", {"character": cid})}
    assert "Sora visited Kyoto and Nara in spring" in texts
    # the edit kept the text it replaced, in the trash
    [earlier] = engine_call(page, "trash", {"character": cid})
    assert earlier["memory"]["text"] == "Sora visited Kyoto in spring"

    page.locator("#memory-list li.memory", has_text="birthday").get_by_role(
        "button", name="Forget").click()
    expect(items).to_have_count(2)
    assert len(engine_call(page, "trash", {"character": cid})) == 2
    tab(page, "maintenance")
    trash = page.locator("#trash-list li.memory")
    expect(trash).to_have_count(2)
    birthday = trash.filter(has_text="birthday")
    expect(birthday.locator(".chip.history")).to_have_count(0)
    birthday.get_by_role("button").click()
    expect(trash).to_have_count(1)
    expect(trash).to_contain_text("Sora visited Kyoto in spring")
    expect(trash.locator(".chip.history")).to_have_text("the text before an edit")
    # restoring the earlier text undoes the edit: the edited text goes to the trash instead
    trash.get_by_role("button").click()
    expect(trash).to_have_count(1)
    expect(trash).to_contain_text("Sora visited Kyoto and Nara in spring")
    expect(trash.locator(".chip.history")).to_have_text("replaced by another memory")
    texts = {m["text"] for m in engine_call(page, "memories", {"character": cid})}
    assert "Sora visited Kyoto in spring" in texts and len(texts) == 3
    tab(page, "memories")
    expect(items).to_have_count(3)
    expect(page.locator("#memory-list li.memory", has_text="Nara")).to_have_count(0)


def test_changing_only_the_importance_leaves_the_text_as_it_is(page: Page) -> None:
    """The form compared the stored text with the textarea's (whose "\r\n" is "\n",
    trimmed): a memory with a Windows line break or padding was rewritten, re-embedded and
    given a history copy when only its importance changed."""
    cid = create_character(page, "Mio")
    stored = engine_call(page, "remember", {"character": cid,
                                            "text": "line one\r\nline two  "})
    tab(page, "memories")
    row = page.locator(f"#memory-list li.memory[data-id='{stored['id']}']")
    expect(row).to_have_count(1)
    row.get_by_role("button", name="Edit").click()
    form = page.locator("#memory-list li.memory form")
    form.locator("input[type=number]").fill("0.8")
    form.locator("button[type=submit]").click()
    expect(form).to_have_count(0)
    [memory] = engine_call(page, "memories", {"character": cid})
    assert (memory["id"], memory["text"], memory["importance"]) == (
        stored["id"], "line one\r\nline two  ", 0.8)
    assert engine_call(page, "trash", {"character": cid}) == []


def test_paste_a_conversation_previews_before_saving(page: Page) -> None:
    cid = create_character(page, "Ren")
    tab(page, "memories")
    if not page.is_visible("#paste-text"):
        page.click("#paste-box summary")
    page.fill("#paste-text", "user: I love green tea.\nassistant: Noted!\n"
              "user: I always go running at 6am.\nuser: ok")
    page.click("#paste-form button[type=submit]")
    rows = page.locator("#ingest-preview tbody tr")
    expect(rows).not_to_have_count(0)
    expect(page.locator("#ingest-preview")).to_contain_text("Preview (nothing saved yet)")
    actions = [r.get_attribute("data-action") for r in rows.all()]
    assert "stored" in actions and "skipped" in actions
    expect(page.locator("#ingest-preview tr[data-action='stored']").first).to_contain_text("tea")
    # A dry run writes nothing.
    assert engine_call(page, "memories", {"character": cid}) == []
    shot(page, "paste-conversation-preview")
    page.click("#ingest-save")
    expect(page.locator("#ingest-preview")).to_contain_text("Saved")
    stored = engine_call(page, "memories", {"character": cid})
    assert len(stored) == actions.count("stored")
    assert any("green tea" in m["text"] for m in stored)
    # Each memory is indexed with its context (the date and the turns around its message),
    # which the app keeps but does not show.
    [tea] = [m for m in stored if "green tea" in m["text"]]
    assert tea["context"].startswith("On ") and tea["context"].endswith(
        "user: I love green tea.\nassistant: Noted!")
    expect(page.locator("#memory-list li.memory")).to_have_count(len(stored))
    expect(page.locator("#memory-list")).not_to_contain_text("assistant: Noted!")


def test_recall_shows_relevance_time_and_only_the_rankers_that_ran(page: Page) -> None:
    cid = create_character(page, "Kai")
    add_memory(page, "Kai loves hot green tea with breakfast", "preference")
    add_memory(page, "Kai is afraid of thunderstorms", "fact")
    add_memory(page, "Kai's favourite city is Osaka", "fact")
    tab(page, "recall")
    page.fill("#recall-min-relevance", "0")  # every hit, however weak
    for mode in ["hybrid", "vector", "fulltext"]:
        page.fill("#recall-query", "green tea")
        page.select_option("#recall-mode", mode)
        expect(page.locator("#recall-fusion")).to_be_visible(visible=mode == "hybrid")
        page.click("#recall-search")
        first = page.locator("#recall-results li.result").first
        expect(first).to_contain_text("green tea")
        label = mode.replace("fulltext", "full-text")
        expect(page.locator("#recall-status")).to_contain_text(label)
        # relevance: a bar and a percentage, the same scale in every mode
        expect(first.locator(".relevance meter")).to_have_count(1)
        expect(first.locator(".relevance-value")).to_contain_text("% relevant")
        assert 0.5 <= float(first.get_attribute("data-relevance")) <= 1.0
        # when the memory happened
        expect(first.locator("time")).to_have_count(1)
        assert first.locator("time").get_attribute("datetime").endswith("Z")
        # raw scores for experts, behind a disclosure; only the rankers the mode ran
        first.locator("details.raw summary").click()
        scores = first.locator("details.raw .scores")
        expect(scores.locator(".fused")).to_contain_text("score")
        vector = scores.locator(".component", has_text="vector")
        fulltext = scores.locator(".component", has_text="full-text")
        expect(vector).to_have_count(0 if mode == "fulltext" else 1)
        expect(fulltext).to_have_count(0 if mode == "vector" else 1)
        if mode != "fulltext":
            expect(vector).to_contain_text("(#1)")
        if mode != "vector":
            expect(fulltext).to_contain_text("(#1)")
        if mode == "vector":  # vector mode never claims full-text ran and missed
            expect(page.locator("#recall-results")).not_to_contain_text("not matched")
        if mode == "hybrid":
            second = page.locator("#recall-results li.result").nth(1)
            expect(second.locator(".component", has_text="full-text")).to_contain_text(
                "not matched")
            shot(page, "recall-hybrid")
    page.fill("#recall-k", "1")
    page.select_option("#recall-mode", "vector")
    page.click("#recall-search")
    expect(page.locator("#recall-results li.result")).to_have_count(1)
    page.fill("#recall-threshold", "0.999")
    page.click("#recall-search")
    expect(page.locator("#recall-results li.empty")).to_have_count(1)
    page.fill("#recall-threshold", "")
    page.fill("#recall-k", "5")

    # A fuller character: the default cut-off answers an unrelated query with "no good
    # match"; a query naming a month marks the memories of that month.
    march = 1709251200  # 2024-03-01T00:00:00Z
    engine_call(page, "remember_many", {"character": cid, "items": [
        {"text": f"Kai cooked {dish} for dinner", "kind": "diary", "at": march + day * 86400}
        for day, dish in enumerate(["curry", "ramen", "udon", "tempura", "okonomiyaki",
                                    "gyoza", "sukiyaki", "oden", "karaage", "onigiri"])
    ] + [
        {"text": f"Kai went {place} with Mei", "kind": "diary", "at": march + (60 + n) * 86400}
        for n, place in enumerate(["hiking", "swimming", "skating", "to the zoo",
                                   "to the museum", "to a concert", "fishing", "camping",
                                   "to the beach", "to the library"])
    ]})
    page.fill("#recall-min-relevance", "")  # the default cut-off
    page.select_option("#recall-mode", "hybrid")
    page.fill("#recall-query", "torque specification for cylinder head bolts")
    page.click("#recall-search")
    expect(page.locator("#recall-results li.empty")).to_contain_text("No good match")
    page.fill("#recall-query", "Kai cooked dinner in March 2024")
    page.click("#recall-search")
    first = page.locator("#recall-results li.result").first
    expect(first).to_contain_text("Kai cooked")
    expect(first.locator(".chip.in-timeframe")).to_have_count(1)
    assert first.locator("time").get_attribute("datetime").startswith("2024-03")


def test_language_switch_and_keyboard_tabs(page: Page) -> None:
    page.locator("#tab-characters").click()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-memories")).to_be_focused()
    expect(page.locator("#tab-memories")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-memories")).to_be_visible()
    expect(page.locator("#panel-characters")).to_be_hidden()
    page.keyboard.press("End")
    expect(page.locator("#tab-maintenance")).to_be_focused()
    page.keyboard.press("ArrowRight")  # wraps around
    expect(page.locator("#tab-characters")).to_be_focused()
    assert [t.get_attribute("tabindex") for t in page.locator("[role=tab]").all()] == \
        ["0", "-1", "-1", "-1"]
    # Every form control in the app has a label.
    unlabelled = page.evaluate("""() => [...document.querySelectorAll(
        '#app input, #app select, #app textarea, header select')]
        .filter(el => !el.labels?.length && !el.getAttribute('aria-label')).map(el => el.id)""")
    assert unlabelled == []

    page.select_option("#lang", "ja")
    expect(page.locator("#tab-memories")).to_have_text("記憶")
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    assert page.evaluate("() => localStorage.getItem('omoide.lang')") == "ja"
    tab(page, "recall")
    expect(page.locator("#recall-search")).to_have_text("検索")
    shot(page, "japanese-ui")
    page.reload()
    wait_ready(page)
    page.wait_for_selector("#app[data-ready='true']")
    expect(page.locator("#tab-recall")).to_have_text("想起")
    page.select_option("#lang", "en")
    expect(page.locator("#tab-recall")).to_have_text("Recall")


def test_an_open_edit_follows_a_language_switch_and_keeps_its_choices(page: Page) -> None:
    """An edit left open during a language switch kept its kind list in the old language
    (its labels followed, its options did not)."""
    create_character(page, "Ayame")
    add_memory(page, "Ayame grows irises", "fact")
    row = page.locator("#memory-list li.memory", has_text="irises")
    row.get_by_role("button", name="Edit").click()
    form = page.locator("#memory-list li.memory form.edit")
    form.locator("select").select_option("diary")
    form.locator("textarea").fill("Ayame grows irises by the pond")
    page.select_option("#lang", "ja")
    try:
        expect(form.locator("label").first).to_have_text("テキスト")
        expect(form.locator("select option[value='fact']")).to_have_text("事実")
        expect(form.locator("select")).to_have_value("diary")  # the choice kept
        expect(form.locator("textarea")).to_have_value("Ayame grows irises by the pond")
    finally:
        page.select_option("#lang", "en")
    expect(form.locator("select option[value='fact']")).to_have_text("fact")
    form.get_by_role("button", name="Cancel").click()


def test_catalogues_cover_every_key_in_both_languages(page: Page) -> None:
    missing = page.evaluate(r"""async () => {
        const { CATALOGUES } = await import('./i18n.js');
        // A plural form (key.one, key.few...) needs its base message in the other language,
        // not the same form: Japanese has only one, English two.
        const plural = /\.(zero|one|two|few|many)$/;
        const base = (k) => k.replace(plural, '');
        const en = Object.keys(CATALOGUES.en), ja = Object.keys(CATALOGUES.ja);
        return [en.filter(k => !ja.includes(base(k))), ja.filter(k => !en.includes(base(k)))];
    }""")
    assert missing == [[], []]
    # No catalogue key leaks into the rendered UI (an untranslated key shows as itself).
    leaked = page.evaluate("""async () => {
        const { CATALOGUES } = await import('./i18n.js');
        const keys = new Set(Object.keys(CATALOGUES.en).filter(k => k.includes('.')));
        return [...document.querySelectorAll('#app *, header *')].filter(el =>
            el.children.length === 0 && keys.has(el.textContent.trim())).map(el => el.textContent);
    }""")
    assert leaked == []


def test_an_edit_keeps_its_focus_and_text_while_another_tab_changes_memories(
        page: Page) -> None:
    """The list was rebuilt on another tab's change: the form being edited was taken out
    of the page and put back, losing its focus; the next keys went nowhere. A blank
    importance was saved as 0 without a word."""
    cid = create_character(page, "Nao")
    kept = engine_call(page, "remember", {"character": cid, "text": "Nao likes tea"})
    other = engine_call(page, "remember", {"character": cid, "text": "Nao walks at dawn"})
    tab(page, "memories")
    row = page.locator(f"#memory-list li.memory[data-id='{kept['id']}']")
    row.get_by_role("button", name="Edit").click()
    textarea = row.locator("form textarea")
    textarea.click()
    page.keyboard.press("End")
    page.keyboard.type(" and")
    second = page.context.new_page()
    second.goto(page.url)
    wait_ready(second)
    changes = len(page.evaluate("window.omoide.events.filter(e => e.type === 'changed')"))
    engine_call(second, "update", {"character": cid, "id": other["id"], "importance": 0.9})
    # a function, not an expression: polled, an expression is eval'ed in the page, which the
    # app's CSP (script-src 'self') refuses (this failed whenever the first check was early)
    page.wait_for_function(f"() => window.omoide.events.filter(e => e.type === 'changed')"
                           f".length > {changes}")
    expect(page.locator("#memory-list li.memory .chip").filter(has_text="0.9")).to_have_count(1)
    page.keyboard.type(" cake")
    expect(textarea).to_have_value("Nao likes tea and cake")
    row.locator("form input[type=number]").fill("")
    row.locator("form button[type=submit]").click()  # refused by the form: nothing sent
    expect(row.locator("form")).to_have_count(1)
    row.locator("form input[type=number]").fill("0.7")
    row.locator("form button[type=submit]").click()
    expect(row.locator("form")).to_have_count(0)
    memory = engine_call(page, "get", {"character": cid, "id": kept["id"]})
    assert (memory["text"], memory["importance"]) == ("Nao likes tea and cake", 0.7)
    second.close()
