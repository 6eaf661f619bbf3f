"""Import with vectors given keeps them binary (the worker packs them into one Float32Array,
Python validates the records, the rows go straight into the kernels and into full segments):
the vectors come back bit for bit as float32, live and trashed, before and after a reload;
a bad vector is named and nothing is written; a refused commit keeps nothing of the chunk."""

from __future__ import annotations

import json

from .conftest import engine_call, wait_ready
from .faults import fail_writes
from .test_storage import call_error
from .test_storage_purge import RAW

N, TRASHED = 600, 100  # two full segments (512 rows) and a tail of 88

# A seeded export file (version 2) on window.__file; its vectors as float32 on window.__f32.
MAKE = """([n, trashed, stamp, dim]) => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  const memories = [], trash = [], vectors = {}, f32 = {};
  for (let i = 0; i < n; i++) {
    const id = `i${String(i).padStart(4, "0")}`;
    const m = { id, text: `imported note ${i} about the harbour`, kind: "fact", key: null,
      importance: 0.5, created_at: 1.7e9 + i, updated_at: 1.7e9 + i, meta: {} };
    if (i < n - trashed) memories.push(m); else trash.push({ ...m, trashed_at: 1.8e9 });
    const row = Array.from({ length: dim }, rand);
    const norm = Math.sqrt(row.reduce((sum, x) => sum + x * x, 0));
    vectors[id] = row.map((x) => x / norm); // a model's row: length 1, kept exactly
    f32[id] = Array.from(new Float32Array(vectors[id]));
  }
  window.__file = { format: "omoide-export", version: 2,
    characters: [{ id: "umi", name: "Umi", stamp, memories, trash, vectors }] };
  window.__f32 = f32;
  return n;
}"""
IMPORT = "() => window.omoide.call('import_data', { data: window.__file })"


def open_app(launch, app_url, profile):
    page = launch(profile).new_page()
    page.goto(app_url)
    wait_ready(page)
    stamp = engine_call(page, "model_state")["stamp"]
    return page, stamp, int(stamp.rsplit("#", 1)[1])


def exported_vectors(page) -> dict:
    data = engine_call(page, "export_data", {"characters": ["umi"], "with_vectors": True})
    return data["characters"][0]["vectors"]


def test_imported_vectors_come_back_exactly_and_survive_a_reload(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, TRASHED, stamp, dim])
    report = page.evaluate(IMPORT)
    assert (report["imported"], report["trashed"]) == (N, TRASHED)
    expected = page.evaluate("() => window.__f32")
    assert exported_vectors(page) == expected
    raw = page.evaluate(RAW)
    assert len(raw["segments"]) == 2  # written directly as full segments, no second write
    assert sum('"tail":1' in row for row in raw["memories"]) == N - 512
    # the records of the full segments are packed (one row), the tail is one row per memory
    assert len(raw["memories"]) == N - 512 and len(raw["record_packs"]) == 1
    assert raw["record_packs"][0].count('"i0') >= 2 * 512  # ids and records
    assert len(engine_call(page, "trash", {"character": "umi"})) == TRASHED
    page.reload()
    wait_ready(page)
    assert exported_vectors(page) == expected
    assert len(engine_call(page, "memories", {"character": "umi"})) == N - TRASHED
    hits = engine_call(page, "recall", {"character": "umi", "query": "imported note 42",
                                        "mode": "fulltext", "k": 1, "count": False})
    assert hits[0]["memory"]["id"] == "i0042"


def test_a_bulk_import_writes_segments_of_1024_rows_then_of_256(launch, app_url, tmp_path):
    """Boot reads fewer, larger values: 1,400 rows make one segment of 1,024 rows, one of
    256 and a tail of 120; a purge in the large one zeroes its row there and every other
    vector comes back exactly after a reload."""
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [1400, 0, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == 1400
    expected = page.evaluate("() => window.__f32")
    raw = page.evaluate(RAW)
    sizes = sorted(len(json.loads(row)["ids"]) for row in raw["segments"])
    assert sizes == [256, 1024] and len(raw["memories"]) == 120
    engine_call(page, "forget", {"character": "umi", "id": "i0007"})
    assert engine_call(page, "purge_trash", {"character": "umi"}) == ["i0007"]
    del expected["i0007"]
    big = next(json.loads(row) for row in page.evaluate(RAW)["segments"]
               if len(json.loads(row)["ids"]) == 1024)
    assert big["ids"][7] is None and set(bytes.fromhex(big["data"])[7 * dim * 4:8 * dim * 4]) \
        == {0}
    page.reload()
    wait_ready(page)
    assert exported_vectors(page) == expected


def test_a_bad_vector_is_named_and_nothing_is_written(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [20, 0, stamp, dim])
    page.evaluate("() => { window.__file.characters[0].vectors.i0003[5] = 'x'; }")
    code, message = page.evaluate(
        "() => window.omoide.call('import_data', { data: window.__file })"
        ".then(() => null, e => [e.name, e.message])")
    assert code == "MALFORMED_IMPORT" and "i0003" in message, message
    # a whole pack of another length: the record validator words it
    page.evaluate(MAKE, [20, 0, stamp, dim + 3])
    code, message = page.evaluate(
        "() => window.omoide.call('import_data', { data: window.__file })"
        ".then(() => null, e => [e.name, e.message])")
    assert code == "MALFORMED_IMPORT" and f"{dim + 3} numbers, {dim} expected" in message
    assert engine_call(page, "memories", {"character": "umi"}) == []
    assert page.evaluate(RAW)["memories"] == []


def test_a_refused_commit_keeps_nothing_of_the_chunk(launch, app_url, tmp_path):
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [300, 10, stamp, dim])
    fail_writes(page, 1)
    code, _ = call_error(page, "import_data", {"data": page.evaluate("() => window.__file")})
    assert code == "QUOTA_EXCEEDED"
    assert engine_call(page, "memories", {"character": "umi"}) == []
    raw = page.evaluate(RAW)
    assert raw["memories"] == [] and raw["segments"] == [] and raw["record_packs"] == []
    assert page.evaluate(IMPORT)["imported"] == 300  # the next try stores it all
    page.reload()
    wait_ready(page)
    assert len(engine_call(page, "memories", {"character": "umi"})) == 290


KEYED = """() => {
  const [first, last] = [window.__file.characters[0].memories[1],
                         window.__file.characters[0].memories[480]];
  first.key = "favorite_place"; last.key = "favorite_place";  // the later one is newer
  return [first.id, last.id];
}"""


def test_an_import_holding_one_key_twice_keeps_the_newest_live_after_a_reload(
        launch, app_url, tmp_path):
    """One key, one live memory after an import, also for rows that go straight into full
    segments: the older holder is retired in the same commit as the import and stays
    history (in the trash, restorable) after a reload."""
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [N, TRASHED, stamp, dim])
    older, newer = page.evaluate(KEYED)
    report = page.evaluate(IMPORT)
    assert (report["imported"], report["superseded"]) == (N, 1)
    for _ in range(2):
        live = engine_call(page, "memories", {"character": "umi"})
        assert [m["id"] for m in live if m["key"] == "favorite_place"] == [newer]
        trash = {e["memory"]["id"]: e["memory"]
                 for e in engine_call(page, "trash", {"character": "umi"})}
        assert len(trash) == TRASHED + 1
        assert trash[older]["meta"]["superseded_by"] == newer
        page.reload()
        wait_ready(page)


def test_a_newer_version_in_a_file_takes_its_packed_vector_without_embedding(
        launch, app_url, tmp_path):
    """A file's later version of a held memory (an edit made on another device) replaces
    it with the file's own vector: it was embedded again, one model run per edited memory."""
    page, stamp, dim = open_app(launch, app_url, tmp_path / "profile")
    page.evaluate(MAKE, [20, 0, stamp, dim])
    assert page.evaluate(IMPORT)["imported"] == 20
    page.evaluate("""([dim]) => {
      const c = window.__file.characters[0];
      const m = c.memories[3];
      m.text = "an edit made on the other device"; m.updated_at += 100;
      const row = Array.from({ length: dim }, (_, i) => (i % 7) - 3);
      const norm = Math.sqrt(row.reduce((s, x) => s + x * x, 0));
      c.vectors[m.id] = row.map((x) => x / norm);
      window.__edited = Array.from(new Float32Array(c.vectors[m.id]));
    }""", [dim])
    report = page.evaluate(IMPORT)
    assert (report["updated"], report["reembedded"]) == (1, 0), report
    for _ in range(2):
        assert exported_vectors(page)["i0003"] == page.evaluate("() => window.__edited")
        live = {m["id"]: m["text"] for m in engine_call(page, "memories", {"character": "umi"})}
        assert live["i0003"] == "an edit made on the other device"
        page.reload()
        wait_ready(page)
        page.evaluate(MAKE, [20, 0, stamp, dim])  # the page's own data is gone after a reload
        page.evaluate("""([dim]) => {
          const row = Array.from({ length: dim }, (_, i) => (i % 7) - 3);
          const norm = Math.sqrt(row.reduce((s, x) => s + x * x, 0));
          window.__edited = Array.from(new Float32Array(row.map((x) => x / norm)));
        }""", [dim])


def test_an_import_into_a_deleted_character_says_where_its_memories_went(launch, app_url,
                                                                        tmp_path):
    """The report said "imported" while the memories went into a character in the character
    trash, out of sight, with no word of it."""
    page, _, _ = open_app(launch, app_url, tmp_path / "profile")
    engine_call(page, "remember", {"character": "hana", "text": "Hana likes plums"})
    engine_call(page, "delete_character", {"character": "hana"})
    data = {"format": "omoide-export", "version": 1, "characters": [
        {"id": "hana", "memories": [{"id": "h0001", "text": "Hana grows tomatoes",
                                     "kind": "fact", "created_at": 1.7e9,
                                     "updated_at": 1.7e9}]},
        {"id": "kei", "memories": [{"id": "k0001", "text": "Kei runs", "kind": "fact",
                                    "created_at": 1.7e9, "updated_at": 1.7e9}]}]}
    report = engine_call(page, "import_data", {"data": data})
    assert report["imported"] == 2 and report["in_character_trash"] == ["hana"]
