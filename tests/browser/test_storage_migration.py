"""Real databases of every earlier layout open in the current app: Dexie upgrades them, and
every recall mode gives the results the app that made them gave. Every later layout must keep
passing this test for each fixture.

- v1 (tests/fixtures/indexeddb/v1.json, made at 0a82685): records, segments with holes, inline
  vectors, trash, recall counts written into records, staged vectors of a stopped
  re-vectorization.
- v2 (v2.json, made at 526ff9c): the same kinds of rows in layout 2: tail vectors
  (``tail: 1``), counted recalls in the ``recalls`` table, per-character generations.
- v3 (v3.json, made at 11bb828): layout 3, the same rows plus record packs (one JSON text a
  pack, format 1) written by an import of a third character, ``mio``; v3_lines.json (made at
  12c1299): layout 3 with packs of lines (format 2), as the app wrote them from then on.
- v4 (v4.json): layout 4, the same plus the stored full-text postings (``text_postings``,
  postings layout 1); v4_columns.json (made at 9bcff41): layout 4 with record packs in
  columns (format 3) and postings layout 2; v4_head.json (made at 80865a7): the same with
  each pack's head line holding the records' kinds and times (``[ids, keys, kinds,
  created_at]``), which a restore reads instead of the lines.
Each fixture is made by the app of its time (``tests/fixtures/indexeddb/make_v2.py``)."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from omoide.browser.packed import line_record
from omoide.engine.bm25 import LAYOUT_VERSION

from .conftest import engine_call, wait_ready
from .test_storage_purge import block_heads, settled

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "indexeddb"

# Recreate the database exactly as dumped (schema, keys, rows), before the app opens it.
RESTORE = """async (dump) => {
  const f32 = (b) => { const s = atob(b); const u = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i); return new Float32Array(u.buffer); };
  const typed = (name, b) => { const s = atob(b); const u = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return new self[name](u.buffer); };
  const dec = (v) => {
    if (Array.isArray(v)) return v.map(dec);
    if (v && typeof v === "object") return "$f32" in v ? f32(v.$f32)
      : "$typed" in v ? typed(v.$typed, v.b64)
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


def packed_records(stores: dict) -> list[dict]:
    """The records of the fixture's record packs (layout 3 on), oldest pack first, shaped like
    ``memories`` rows: a pack's text is one JSON list (formats 0 and 1) or a head line and a
    line per record (formats 2 and 3, web/store/packs.js), ``trashed_at`` folded into each
    record."""
    rows = []
    packs = sorted(stores.get("record_packs", {"rows": []})["rows"],
                   key=lambda p: (p["character"], p["pack"]))
    for pack in packs:
        text = pack["json"]
        entries = ([line_record(line.encode()) for line in text.split("\n")[1:]]
                   if pack.get("format") in (2, 3) else json.loads(text))
        for entry in entries:
            trashed_at = entry.pop("trashed_at", None)
            rows.append({"character": pack["character"], "id": entry["id"], "record": entry,
                         "trashed_at": trashed_at})
    return rows


def block_layout(row: dict) -> int:
    """The postings layout of a fixture's stored block (its head, decoded from the dump)."""
    data = base64.b64decode(row["data"]["b64"])
    (size,) = struct.unpack_from("<I", data, 12)
    return json.loads(data[16:16 + size])["layout"]


@pytest.mark.parametrize("layout", ["v1", "v2", "v3", "v3_lines", "v4", "v4_columns",
                                    "v4_head"])
def test_an_old_database_migrates_and_recalls_the_same(launch, app_url, tmp_path, layout):
    fixture = json.loads((FIXTURES / f"{layout}.json").read_text())
    heads = [len(json.loads(p["json"].split("\n")[0])) for p in fixture["database"]["stores"]
             .get("record_packs", {"rows": []})["rows"] if p.get("format") in (2, 3)]
    assert heads == ([4] if layout == "v4_head" else [2] if layout in ("v3_lines", "v4",
                                                                       "v4_columns") else [])
    context = launch(tmp_path / "profile")
    page = context.new_page()
    page.goto(app_url + "build-info.json")  # the app's origin, no app code running
    assert page.evaluate(RESTORE, fixture["database"]) == len(fixture["database"]["stores"])
    page.goto(app_url)
    wait_ready(page)
    stores = fixture["database"]["stores"]
    records = stores["memories"]["rows"]
    # a memory's recall count is its record's plus its ``recalls`` row (v2 on)
    counted = {(r["character"], r["id"]): r["count"] for r in stores.get("recalls",
                                                                        {"rows": []})["rows"]}
    # layout 3 on: a record's latest copy is its override row, else its newest pack's
    latest = {(r["character"], r["id"]): r for r in packed_records(stores)}
    latest.update({(r["character"], r["id"]): r for r in records})
    records = list(latest.values())
    for character in sorted({r["character"] for r in records}):
        mine = [r for r in records if r["character"] == character]
        live = engine_call(page, "memories", {"character": character})
        assert len(live) == sum(1 for r in mine if r["trashed_at"] is None)
        trash = engine_call(page, "trash", {"character": character})
        assert len(trash) == len(mine) - len(live)
        counts = {r["id"]: r["record"]["recall_count"] + counted.get((character, r["id"]), 0)
                  for r in mine}
        assert {m["id"]: m["recall_count"] for m in live} == {m["id"]: counts[m["id"]]
                                                             for m in live}
    for key, ids in fixture["expected"].items():
        character, query, mode = key.split("|")
        # The v1 app had no relevance cut-off: compare the ranking itself (v2's expected
        # answers were asked the same way).
        got = engine_call(page, "recall", {"character": character, "query": query,
                                           "mode": mode, "k": 10, "count": False,
                                           "min_relevance": 0})
        assert [h["memory"]["id"] for h in got] == ids, key
    # layout 4 on: stored postings of this engine's postings layout are absorbed; those of an
    # older one (v4.json: layout 1, the lengths in every posting) are read, refused (never
    # absorbed as something they are not), analyzed again and written back in this layout,
    # so the next start takes them (checked after the reload)
    blocks = stores.get("text_postings", {"rows": []})["rows"]
    if blocks:
        current = {block_layout(b) for b in blocks} == {LAYOUT_VERSION}
        status = settled(page)
        assert (status["blocks"], status["absorbed"]) == (len(blocks),
                                                          len(blocks) if current else 0)
        heads = block_heads(page)
        assert len(heads) >= len(blocks) and {h["layout"] for h in heads} == {LAYOUT_VERSION}
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
    if blocks:  # the blocks written back are taken as they are
        status = settled(page)
        assert (status["blocks"], status["absorbed"]) == (len(heads), len(heads))
