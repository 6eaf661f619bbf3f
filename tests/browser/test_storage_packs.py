"""Records packed per segment (Dexie schema 3, web/store/packs.js): an import writes its
records as packs; single writes (update, trash, restore) are rows that override the packed
copy; compaction packs the rows and rewrites a pack once more than half of it is stale. After
each step what the app holds survives a browser reload exactly."""

from __future__ import annotations

import json

from omoide.browser.packed import line_record

from .conftest import engine_call, wait_ready
from .faults import engine_worker
from .test_storage_import import IMPORT, MAKE, open_app
from .test_storage_purge import RAW

N, TRASHED = 600, 100  # two full segments (512 rows, one pack) and a tail of 88

# Compaction with ``force`` (every tail vector into a segment, every row into a pack), run in
# the engine worker on the app's own database module (the test reaches it; the app never
# calls it with force).
COMPACT = """async (character) => {
  const store = await import("./store/db.js");
  const db = store.openDatabase();
  await db.open();
  try { return await store.compact(db, character, { force: true }); } finally { db.close(); }
}"""


def state(page) -> tuple:
    live = engine_call(page, "memories", {"character": "umi"})
    trash = engine_call(page, "trash", {"character": "umi"})
    return (sorted(json.dumps(m, sort_keys=True) for m in live),
            sorted(json.dumps(t, sort_keys=True) for t in trash))


def records_of(pack: dict) -> list[dict]:
    """A pack's records (a checked pack: a head line, then one line per record: a JSON record
    in format 2, a JSON array of its values in format 3, read by Python's reader)."""
    if pack["format"] in (2, 3):
        return [line_record(line.encode()) for line in pack["json"].split("\n")[1:]]
    return json.loads(pack["json"])


def packs(page) -> list[dict]:
    """The record packs as stored: ids and the ids in the trash."""
    return [json.loads(row) for row in page.evaluate(RAW)["record_packs"]]


def reloaded(page) -> tuple:
    page.reload()
    wait_ready(page)
    return state(page)


def test_rows_override_packs_and_compaction_packs_them(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, TRASHED, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == N
    [pack] = packs(page)
    assert len(pack["ids"]) == 512 and records_of(pack)[7]["id"] == "i0007"
    # single writes on packed memories: one row each, the pack is not rewritten (the update
    # also writes the text it replaced as a new memory, trashed: one more row)
    engine_call(page, "update", {"character": "umi", "id": "i0007", "text": "a new text"})
    engine_call(page, "forget", {"character": "umi", "id": "i0008"})
    engine_call(page, "forget", {"character": "umi", "id": "i0009"})
    engine_call(page, "restore", {"character": "umi", "id": "i0009"})
    assert packs(page) == [pack]
    assert len(page.evaluate(RAW)["memories"]) == N - 512 + 4
    before = state(page)
    assert reloaded(page) == before  # the rows win over their packed copies
    # compaction: the tail (with i0007's new vector and its earlier text's) into a segment,
    # the rows into a second pack; the first pack is 3/512 stale, so it stays as it is
    assert engine_worker(page).evaluate(COMPACT, "umi") == N - 512 + 2
    after = packs(page)
    assert len(after) == 2 and after[0] == pack
    assert len(after[1]["ids"]) == N - 512 + 4 and page.evaluate(RAW)["memories"] == []
    assert "a new text" in after[1]["json"]
    assert reloaded(page) == before


def test_a_pack_more_than_half_stale_is_rewritten(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, 0, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == N
    trashed = [f"i{i:04d}" for i in range(0, 512, 2)] + ["i0001"]  # 257 of 512: past half
    for memory_id in trashed:
        engine_call(page, "forget", {"character": "umi", "id": memory_id})
    before = state(page)
    engine_worker(page).evaluate(COMPACT, "umi")
    first, second = packs(page)
    assert len(first["ids"]) == 512 - 257
    assert not set(first["ids"]) & set(trashed)
    assert set(trashed) <= set(second["ids"]) and set(trashed) <= set(second["trashed"])
    assert reloaded(page) == before
    hits = engine_call(page, "recall", {"character": "umi", "query": "imported note 41",
                                        "mode": "fulltext", "k": 1, "count": False})
    assert hits[0]["memory"]["id"] == "i0041"


# Change one record's importance in the first pack's text on disk, keeping its CRC: the JSON
# stays valid, only the CRC tells.
TAMPER = """async () => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open("omoide");
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  const store = db.transaction("record_packs", "readwrite").objectStore("record_packs");
  const packs = await new Promise((ok) => { const r = store.getAll();
    r.onsuccess = () => ok(r.result); });
  const pack = packs[0];
  // the first record's importance (format 3: its values in RECORD_FIELDS order)
  pack.json = pack.format === 3 ? pack.json.replace(',"factual",null,0.5,', ',"factual",null,7.5,')
    : pack.json.replace('"importance":0.5', '"importance":7.5');
  await new Promise((ok) => { store.put(pack).onsuccess = ok; });
  db.close();
  return pack.ids[0];
}"""


def load_of(page) -> dict:
    return engine_call(page, "storage_info")["loads"]["umi"]


def test_a_checked_pack_skips_the_validator_unless_its_text_changed(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, TRASHED, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == N
    [pack] = packs(page)
    # format 3 (columns): the engine's records, every one with exactly RECORD_FIELDS
    assert pack["format"] == 3 and isinstance(pack["crc"], int)
    head = json.loads(pack["json"].split("\n")[0])
    # ids, keys, and the kinds and times the indexes read without parsing a line
    assert head == [pack["ids"], *([r[f] for r in records_of(pack)]
                                   for f in ("key", "kind", "created_at"))]
    engine_call(page, "update", {"character": "umi", "id": "i0007", "text": "a new text"})
    before = reloaded(page)
    # the import's pack is made without the validator (less i0007, overridden by its row);
    # the override rows are validated
    assert (load_of(page)["trusted"], load_of(page)["quarantined"]) == (511, 0)
    # rows the engine wrote are packed as checked too (JavaScript's CRC, Python's check)
    engine_worker(page).evaluate(COMPACT, "umi")
    assert [p["format"] for p in packs(page)] == [3, 3]
    assert reloaded(page) == before
    # i0007 in both packs: the older copy skipped; + the text the update replaced
    assert load_of(page)["trusted"] == N + 1
    # a text changed on disk: the pack is validated, its bad record quarantined, kept on
    # disk as it is and listed by audit; every other record loads
    changed = page.evaluate(TAMPER)
    page.reload()
    wait_ready(page)
    load = load_of(page)
    assert load["quarantined"] == 1 and load["trusted"] == N - 512 + 2
    live, trash = state(page)
    assert len(live) + len(trash) == N - 1 + 1  # one quarantined; the update's history
    assert changed not in json.dumps(live) + json.dumps(trash)
    audit = engine_call(page, "audit", {"character": "umi"})
    assert changed in json.dumps(audit)
    assert ',"factual",null,7.5,' in packs(page)[0]["json"]


# Flip one value of the segment holding ``id`` on disk: its checksum no longer holds, so boot
# re-embeds the memories of its rows from their records.
CORRUPT_SEGMENT_OF = """(id) => new Promise((resolve, reject) => {
  const open = indexedDB.open("omoide");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const tx = open.result.transaction("segments", "readwrite");
    tx.objectStore("segments").openCursor().onsuccess = (event) => {
      const cursor = event.target.result;
      if (!cursor) return;
      const seg = cursor.value;
      if (!seg.ids.includes(id)) { cursor.continue(); return; }
      const data = new Float32Array(seg.data);
      data[5] += 0.5;
      seg.data = data;
      cursor.update(seg);
      tx.oncomplete = () => { open.result.close(); resolve(seg.ids.filter(Boolean).length); };
    };
  };
})"""


def ids_of(page) -> tuple[list[str], list[str]]:
    live = engine_call(page, "memories", {"character": "umi"})
    trash = engine_call(page, "trash", {"character": "umi"})
    return sorted(m["id"] for m in live), sorted(t["memory"]["id"] for t in trash)


def test_trashed_memories_of_a_damaged_segment_are_repaired_into_the_trash(launch, app_url,
                                                                            tmp_path):
    # i0500..i0511 are trashed, packed (their trash state is in the pack, not in a row) and
    # their vectors are rows of the second segment: re-embedded, they stay in the trash
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, TRASHED, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == N
    [pack] = packs(page)
    assert {f"i{i:04d}" for i in range(500, 512)} <= set(pack["trashed"])
    before = ids_of(page)
    assert len(before[1]) == TRASHED
    assert page.evaluate(CORRUPT_SEGMENT_OF, "i0500") == 256
    page.reload()
    wait_ready(page)
    notices = page.evaluate("() => window.omoide.events.filter(e => e.type === 'notice')")
    assert any("256 memories re-embedded" in n["message"] for n in notices), notices
    assert ids_of(page) == before
    page.reload()  # written back as they are: the next boot finds the same
    wait_ready(page)
    assert ids_of(page) == before
