"""A real v1 database (tests/fixtures/indexeddb/v1.json: records, segments with holes, inline
vectors, trash, recall counts written into records, staged vectors of a stopped
re-vectorization) opens in the current app: Dexie upgrades it, and every recall mode gives
the results v1 gave. Every later layout must keep passing this test."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import engine_call, wait_ready

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "indexeddb" / "v1.json"

# Recreate the database exactly as dumped (schema, keys, rows), before the app opens it.
RESTORE = """async (dump) => {
  const f32 = (b) => { const s = atob(b); const u = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i); return new Float32Array(u.buffer); };
  const dec = (v) => {
    if (Array.isArray(v)) return v.map(dec);
    if (v && typeof v === "object") return "$f32" in v ? f32(v.$f32)
      : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, dec(x)]));
    return v;
  };
  const db = await new Promise((ok, fail) => {
    const r = indexedDB.open("omoide", dump.version);
    r.onupgradeneeded = () => {
      for (const [name, s] of Object.entries(dump.stores)) {
        const store = r.result.createObjectStore(name, { keyPath: s.keyPath,
          autoIncrement: s.autoIncrement });
        for (const i of s.indexes) store.createIndex(i.name, i.keyPath,
          { unique: i.unique, multiEntry: i.multiEntry });
      }
    };
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error);
  });
  const names = Object.keys(dump.stores);
  await new Promise((ok, fail) => {
    const tx = db.transaction(names, "readwrite");
    for (const name of names) {
      const s = dump.stores[name];
      s.rows.forEach((row) => tx.objectStore(name).put(dec(row)));
    }
    tx.oncomplete = ok; tx.onerror = () => fail(tx.error);
  });
  db.close();
  return names.length;
}"""


def test_a_v1_database_migrates_and_recalls_the_same(launch, app_url, tmp_path):
    fixture = json.loads(FIXTURE.read_text())
    context = launch(tmp_path / "profile")
    page = context.new_page()
    page.goto(app_url + "build-info.json")  # the app's origin, no app code running
    assert page.evaluate(RESTORE, fixture["database"]) == len(fixture["database"]["stores"])
    page.goto(app_url)
    wait_ready(page)
    records = fixture["database"]["stores"]["memories"]["rows"]
    for character in ("ayu", "ren"):
        mine = [r for r in records if r["character"] == character]
        live = engine_call(page, "memories", {"character": character})
        assert len(live) == sum(1 for r in mine if r["trashed_at"] is None)
        trash = engine_call(page, "trash", {"character": character})
        assert len(trash) == len(mine) - len(live)
        counts = {r["id"]: r["record"]["recall_count"] for r in mine}
        assert {m["id"]: m["recall_count"] for m in live} == {m["id"]: counts[m["id"]]
                                                             for m in live}
    for key, ids in fixture["expected"].items():
        character, query, mode = key.split("|")
        # The v1 app had no relevance cut-off: compare the ranking itself.
        got = engine_call(page, "recall", {"character": character, "query": query,
                                           "mode": mode, "k": 10, "count": False,
                                           "min_relevance": 0})
        assert [h["memory"]["id"] for h in got] == ids, key
    # the stopped re-vectorization resumes from its staged vectors
    staged = len(fixture["database"]["stores"]["staging"]["rows"])
    assert staged > 0
    assert [j["staged"] for j in engine_call(page, "model_state")["jobs"]] == [staged]
    # and the migrated database keeps working: a write, a reload, the same answer
    engine_call(page, "remember", {"character": "ren", "text": "ren bought a new violin bow"})
    page.reload()
    wait_ready(page)
    got = engine_call(page, "recall", {"character": "ren", "query": "violin bow",
                                       "mode": "fulltext", "count": False})
    assert got[0]["memory"]["text"] == "ren bought a new violin bow"
