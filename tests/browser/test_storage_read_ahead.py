"""Boot reads every character ahead while Pyodide starts (web/engine-worker.js
``readAhead``, ``store.readEverything``), and an intact checked pack's records are made on use
(omoide/browser/packed.py): after a reload the engine holds exactly what it held before, its
load says it came from the read ahead, and recall, listing, export and writes work on the
memories made on use."""

from __future__ import annotations

import json

from .conftest import engine_call, wait_ready
from .test_storage_import import IMPORT, MAKE, open_app
from .test_storage_packs import load_of, reloaded, state

N, TRASHED = 600, 100


def test_a_restart_uses_the_read_ahead_and_the_records_made_on_use(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, TRASHED, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == N
    engine_call(page, "update", {"character": "umi", "id": "i0007", "text": "a new text"})
    before = state(page)
    exported = engine_call(page, "export_data", {"characters": ["umi"], "with_vectors": True})
    page.reload()
    wait_ready(page)
    load = load_of(page)
    assert load["ahead"] is True
    assert (load["trusted"], load["quarantined"]) == (511, 0)  # the pack, less i0007's row
    boot = engine_call(page, "storage_info")["boot"]
    assert boot["read"] <= boot["placed"] <= boot["read_ahead"] <= boot["ready"]
    hits = engine_call(page, "recall", {"character": "umi", "query": "imported note 41",
                                        "mode": "fulltext", "k": 1, "count": False})
    assert hits[0]["memory"]["id"] == "i0041"
    assert engine_call(page, "export_data", {"characters": ["umi"],
                                             "with_vectors": True}) == exported
    assert state(page) == before
    # a write on a memory made on use, then a restart: it survives as written
    engine_call(page, "update", {"character": "umi", "id": "i0042", "importance": 0.9})
    after = state(page)
    assert after != before and reloaded(page) == after
    assert load_of(page)["ahead"] is True


def test_a_character_changed_by_another_tab_during_boot_is_read_again(launch, app_url,
                                                                      tmp_path):
    """The read ahead is kept only when the character's generation has not moved: a write
    committed between the read ahead and the engine lock is seen (here: a second tab that
    holds the engine lock while the first boots, and writes)."""
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, 0, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == N
    other = page.context.new_page()
    other.goto(page.url)
    wait_ready(other)
    # tab B takes the engine lock and keeps it until told; tab A reloads and reads ahead
    other.evaluate("""() => { window.__release = null;
      navigator.locks.request("omoide-engine", () => new Promise((ok) => {
        window.__release = ok; })); }""")
    other.wait_for_function("() => window.__release !== null")
    page.reload()
    # A reaches "engine" (Python started; the read ahead began before it, at the boot's
    # start) and then waits for the lock B holds; its read of 600 rows is done by then.
    page.wait_for_selector("#boot[data-boot-state='engine']", timeout=120_000)
    page.wait_for_timeout(2_000)
    # B writes straight to IndexedDB as a commit would (a record row + a generation bump)
    other.evaluate("""async () => {
      const store = await import("./store/db.js");
      const { packRecords } = await import("./store/packs.js");
      const db = store.openDatabase();
      await db.open();
      const row = await db.record_packs.where("character").equals("umi").first();
      const first = packRecords(row)[0];
      await db.transaction("rw", db.memories, db.generations, async () => {
        const g = await db.generations.get("umi");
        await db.memories.put({ character: "umi", id: first.id,
          record: { ...first, text: "changed while A booted", trashed_at: undefined },
          trashed_at: null, stamp: row.stamp, dimension: null,
          slot: { seg: row.slots[0], row: row.slots[1] }, vector: null });
        await db.generations.put({ character: "umi", generation: (g?.generation ?? 0) + 1 });
      });
      db.close();
      window.__release();
    }""")
    wait_ready(page)
    load = load_of(page)
    assert load["ahead"] is False
    live = engine_call(page, "memories", {"character": "umi"})
    assert "changed while A booted" in json.dumps(live)
