"""Recall is a read and tabs stay coherent at low cost: a recall writes no record, moves no
generation and makes no other tab reload; its counts reach the ``recalls`` table in a batch;
a write reloads, in another tab, only the character it changed."""

from __future__ import annotations

from .conftest import engine_call, wait_ready

MINILM = {"model": "omoide/all-MiniLM-L6-v2", "dtype": "q8"}

# Reads an IndexedDB object store of the app's database as it is on disk (raw, not Dexie).
READ_STORE = """async (name) => {
  const db = await new Promise((ok, fail) => {
    const req = indexedDB.open("omoide");
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  try {
    return await new Promise((ok, fail) => {
      const req = db.transaction(name).objectStore(name).getAll();
      req.onsuccess = () => ok(req.result.map((r) => {
        const { vector, data, ...rest } = r; return rest; }));
      req.onerror = () => fail(req.error);
    });
  } finally { db.close(); }
}"""


def open_page(context, url: str):
    page = context.new_page()
    page.goto(url)
    wait_ready(page)
    return page


def raw(page, name: str) -> list[dict]:
    return page.evaluate(READ_STORE, name)


def test_recalls_write_nothing_and_other_tabs_do_not_reload(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    a = open_page(context, app_url)
    engine_call(a, "select_model", MINILM)
    texts = [f"hana remembers the {w} of day {i}" for i, w in
             enumerate(["tea", "rain", "moonlight", "trains", "violin", "bread"] * 4)]
    engine_call(a, "remember_many", {"character": "hana", "items": texts})
    engine_call(a, "remember", {"character": "kei", "text": "kei likes chess"})
    b = open_page(context, app_url)
    engine_call(b, "recall", {"character": "hana", "query": "tea", "mode": "fulltext",
                              "count": False})  # B counts nothing here
    before = engine_call(b, "storage_info")
    generations = raw(a, "generations")
    records = {r["id"]: r["record"]["recall_count"] for r in raw(a, "memories")}

    queries = ["tea", "rain at night", "a violin", "trains"]
    hits = 0
    for i in range(200):
        found = engine_call(a, "recall", {"character": "hana", "query": queries[i % 4], "k": 3,
                                          "mode": ["vector", "hybrid", "fulltext"][i % 3]})
        hits += len(found)
    assert hits > 0
    # Nothing a recall did is a write: same generations, same stored records, no change event.
    assert raw(a, "generations") == generations
    assert {r["id"]: r["record"]["recall_count"] for r in raw(a, "memories")} == records
    engine_call(b, "recall", {"character": "hana", "query": "tea", "mode": "fulltext",
                              "count": False})  # B counts nothing here
    assert engine_call(b, "storage_info")["reloads"] == before["reloads"]
    assert not b.evaluate("window.omoide.events.some(e => e.type === 'changed' && e.remote)")

    # The counts are batched into the recalls table, and a reload sees them.
    assert engine_call(a, "flush_recalls") == {"pending_recalls": 0}
    counted = raw(a, "recalls")
    assert sum(r["count"] for r in counted) == hits
    assert all(r["character"] == "hana" for r in counted)
    by_id = {r["id"]: r["count"] for r in counted}
    a.reload()
    wait_ready(a)
    live = {m["id"]: m["recall_count"] for m in engine_call(a, "memories",
                                                            {"character": "hana"})}
    assert {i: n for i, n in live.items() if n} == by_id

    # The recall playground's preview counts nothing.
    engine_call(a, "recall", {"character": "hana", "query": "tea", "count": False})
    assert engine_call(a, "storage_info")["pending_recalls"] == 0

    # A write in A is seen by B's next recall, and B reloads that character only.
    engine_call(a, "remember", {"character": "hana", "text": "hana saw a comet over Nagano"})
    found = engine_call(b, "recall", {"character": "hana", "query": "comet Nagano",
                                      "mode": "fulltext"})
    assert found[0]["memory"]["text"] == "hana saw a comet over Nagano"
    after = engine_call(b, "storage_info")["reloads"]
    assert after.get("hana", 0) == before["reloads"].get("hana", 0) + 1
    assert after.get("kei", 0) == before["reloads"].get("kei", 0)


def test_an_update_keeps_counts_once(launch, app_url, tmp_path):
    """A record written back after recalls stores its base count: nothing counted twice."""
    context = launch(tmp_path / "profile")
    page = open_page(context, app_url)
    engine_call(page, "select_model", MINILM)
    made = engine_call(page, "remember", {"character": "ito", "text": "ito grows tomatoes"})
    for _ in range(3):
        engine_call(page, "recall", {"character": "ito", "query": "tomatoes",
                                     "mode": "fulltext"})
    engine_call(page, "flush_recalls")
    for _ in range(2):
        engine_call(page, "recall", {"character": "ito", "query": "tomatoes",
                                     "mode": "fulltext"})
    engine_call(page, "update", {"character": "ito", "id": made["id"], "importance": 0.9})
    engine_call(page, "flush_recalls")
    assert engine_call(page, "get", {"character": "ito", "id": made["id"]})["recall_count"] == 5
    page.reload()
    wait_ready(page)
    again = engine_call(page, "get", {"character": "ito", "id": made["id"]})
    assert (again["recall_count"], again["importance"]) == (5, 0.9)
    # a purge leaves no count behind
    engine_call(page, "forget", {"character": "ito", "id": made["id"]})
    engine_call(page, "purge_trash", {"character": "ito"})
    assert raw(page, "recalls") == []


def test_recall_counts_of_a_closing_tab_are_kept(launch, app_url, tmp_path):
    """Recall counts are written in batches, at most every 2 s: a tab closed before its
    batch lost the counts of its last recalls, always when the engine lock was held then (a
    long call of another tab: a closing page's worker is never granted the lock) and often
    when it was not. A tab hidden or going away now journals them at once (one put, no
    lock), and the next load adds them to the ``recalls`` table."""
    context = launch(tmp_path / "profile")
    keeper = open_page(context, app_url)  # keeps the profile's browser running
    engine_call(keeper, "select_model", MINILM)
    made = engine_call(keeper, "remember", {"character": "ito", "text": "ito grows tomatoes"})
    expected = 0
    for busy in (False, True, False, True):
        tab = open_page(context, app_url)
        for _ in range(3):
            engine_call(tab, "recall", {"character": "ito", "query": "tomatoes",
                                        "mode": "fulltext"})
        expected += 3
        assert engine_call(tab, "storage_info")["pending_recalls"] == 1
        if busy:  # another tab's long call holds the engine lock while this one closes
            keeper.evaluate("() => { navigator.locks.request('omoide-engine', "
                            "() => new Promise((done) => setTimeout(done, 3000))); }")
        tab.close()
        keeper.wait_for_timeout(3_500 if busy else 500)
        keeper.reload()
        wait_ready(keeper)
        memory = engine_call(keeper, "get", {"character": "ito", "id": made["id"]})
        assert memory["recall_count"] == expected, busy
        # folded into the recalls table by the load: no journal is left behind
        assert [r["count"] for r in raw(keeper, "recalls")] == [expected]
        assert not [r for r in raw(keeper, "settings") if "recall" in r["key"]]
