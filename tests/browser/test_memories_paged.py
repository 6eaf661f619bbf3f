"""The memories tab at 10,000 memories: it shows one page (never every row), filters and
pages in the worker, a remember re-fetches one page, and a hidden tab does no work."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import engine_call, wait_ready

N = 10_000
PAGE = 50
# An export of N memories with vectors of the selected model, built in the page (random unit
# vectors: the list does not care what they mean) and imported without embedding anything.
IMPORT = """async ([n, stamp, dim]) => {
  const memories = [], vectors = {};
  for (let i = 0; i < n; i++) {
    const id = `m${String(i).padStart(5, "0")}`;
    memories.push({ id, text: `mari's note ${i} about ${["tea", "rain", "cats"][i % 3]}`,
      kind: i % 10 === 0 ? "diary" : "fact", key: null, importance: 0.5,
      created_at: 1.7e9 + i, updated_at: 1.7e9 + i, meta: {} });
    const v = Array.from({ length: dim }, () => Math.round((Math.random() - 0.5) * 1e4) / 1e4);
    vectors[id] = v;
  }
  const data = { format: "omoide-export", version: 1,
    characters: [{ id: "mari", stamp, memories, vectors }] };
  return (await window.omoide.call("import_data", { data })).imported;
}"""


def test_ten_thousand_memories_open_in_pages(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    page = context.new_page()
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(app_url)
    wait_ready(page)
    page.wait_for_selector("#app[data-ready='true']", timeout=60_000)
    stamp = engine_call(page, "model_state")["stamp"]
    assert page.evaluate(IMPORT, [N, stamp, int(stamp.rsplit("#", 1)[1])]) == N

    page.wait_for_function("() => [...document.querySelectorAll('#current-character option')]"
                           ".some(o => o.value === 'mari')")
    page.select_option("#current-character", "mari")
    page.click("#tab-memories")
    rows = page.locator("#memory-list li.memory")
    expect(rows).to_have_count(PAGE, timeout=30_000)
    expect(page.locator("#memory-count")).to_have_text(f"Showing {N} of {N}")
    expect(rows.first.locator(".text")).to_have_text(f"mari's note {N - 1} about tea")
    # the whole panel stays small: one page of rows, not 10,000
    assert page.evaluate("document.querySelectorAll('#panel-memories *').length") < 2_000

    page.click("#memory-older")
    expect(rows.first.locator(".text")).to_have_text(f"mari's note {N - 1 - PAGE} about rain")
    expect(page.locator("#memory-page")).to_contain_text(f"51–100 of {N:,}".replace(",", ""))

    page.fill("#filter-text", "note 12")  # 12, 120-129, 1200-1299
    expect(page.locator("#memory-count")).to_have_text(f"Showing 111 of {N}")
    expect(rows).to_have_count(PAGE)
    expect(page.locator("#memory-newer")).to_be_disabled()
    page.select_option("#filter-kind", "diary")  # 120, 1200, 1210, ... 1290
    expect(page.locator("#memory-count")).to_have_text(f"Showing 11 of {N}")
    expect(rows).to_have_count(11)
    expect(page.locator("#memory-pager")).to_be_hidden()
    page.select_option("#filter-kind", "")
    page.fill("#filter-text", "")
    expect(rows).to_have_count(PAGE)

    # A remember re-fetches one page: the new memory on top, still PAGE rows.
    page.click("#add-box summary")
    page.fill("#add-text", "mari found a four-leaf clover")
    page.click("#add-memory button[type=submit]")
    expect(rows.first.locator(".text")).to_have_text("mari found a four-leaf clover",
                                                     timeout=60_000)
    expect(page.locator("#memory-count")).to_have_text(f"Showing {N + 1} of {N + 1}")
    expect(rows).to_have_count(PAGE)

    # Hidden, the tab does no work: a change elsewhere leaves its rows alone until shown.
    page.click("#tab-recall")
    page.evaluate("document.querySelector('#memory-list li.memory').__kept = true")
    engine_call(page, "remember", {"character": "mari", "text": "mari waters the garden"})
    page.wait_for_function("() => window.omoide.events.some(e => e.type === 'changed')")
    page.wait_for_timeout(500)
    assert page.evaluate("document.querySelector('#memory-list li.memory').__kept === true")
    page.click("#tab-memories")
    expect(rows.first.locator(".text")).to_have_text("mari waters the garden")
    expect(page.locator("#memory-count")).to_have_text(f"Showing {N + 2} of {N + 2}")
