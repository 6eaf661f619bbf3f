"""A purge really erases: after a permanent forget, the memory's text and vector bytes are
nowhere in IndexedDB (read raw, not through the app: the record pack that held it is
rewritten, and its stored full-text postings, which hold the text's terms, deleted); a
segment with too many holes is dissolved into the tail, and everything left still loads and
recalls."""

from __future__ import annotations

import json
import struct

from .conftest import engine_call, wait_ready

N = 300  # one full segment (256 rows) + a tail of 44
IMPORT = """async ([n, stamp, dim]) => {
  const memories = [], vectors = {};
  const rand = () => Math.random() - 0.5; // every vector distinct (a byte search must not
  // find another memory's copy)
  for (let i = 0; i < n; i++) {
    const id = `p${String(i).padStart(4, "0")}`;
    memories.push({ id, text: `secret number ${i} of piko`, kind: "fact",
      key: null, importance: 0.5, created_at: 1.7e9 + i, updated_at: 1.7e9 + i, meta: {} });
    vectors[id] = Array.from({ length: dim }, rand);
  }
  const data = { format: "omoide-export", version: 1,
    characters: [{ id: "piko", stamp, memories, vectors }] };
  return (await window.omoide.call("import_data", { data })).imported;
}"""

# Every row of every object store as raw JSON text, typed arrays as their bytes (hex).
RAW = """async () => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open("omoide");
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  const hex = (v) => Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength),
    (x) => x.toString(16).padStart(2, "0")).join("");
  const out = {};
  for (const name of db.objectStoreNames) {
    out[name] = await new Promise((ok) => {
      const r = db.transaction(name).objectStore(name).getAll();
      r.onsuccess = () => ok(r.result.map((row) => JSON.stringify(row,
        (k, v) => (ArrayBuffer.isView(v) ? hex(v) : v))));
    });
  }
  db.close();
  return out;
}"""


def block_heads(page) -> list[dict]:
    """The head (ids, terms, source) of every stored block, decoded from IndexedDB raw."""
    heads = []
    for row in page.evaluate(RAW)["text_postings"]:
        data = bytes.fromhex(json.loads(row)["data"])
        (size,) = struct.unpack_from("<I", data, 12)
        heads.append(json.loads(data[16:16 + size]))
    return heads


def settled(page) -> dict:
    """The full-text index once complete and its new blocks written."""
    for _ in range(600):
        status = engine_call(page, "text_index_status")
        if status["left"] == 0:
            return engine_call(page, "text_index_status")  # its blocks written since
        page.wait_for_timeout(100)
    raise AssertionError(f"the full-text index is not complete: {status}")


def vector_hex(page, memory_id: str) -> str:
    vector = engine_call(page, "export_data", {"characters": ["piko"], "with_vectors": True})[
        "characters"][0]["vectors"][memory_id]
    return page.evaluate("(v) => Array.from(new Uint8Array(new Float32Array(v).buffer), "
                         "(x) => x.toString(16).padStart(2, '0')).join('')", vector)


def everything(page) -> str:
    return "\n".join(row for rows in page.evaluate(RAW).values() for row in rows)


def purge(page, ids: list[str]) -> None:
    for memory_id in ids:
        engine_call(page, "forget", {"character": "piko", "id": memory_id})
    assert sorted(engine_call(page, "purge_trash", {"character": "piko"})) == sorted(ids)


def test_a_purge_erases_text_and_vector_bytes(launch, app_url, tmp_path):
    context = launch(tmp_path / "profile")
    page = context.new_page()
    page.goto(app_url)
    wait_ready(page)
    stamp = engine_call(page, "model_state")["stamp"]
    assert page.evaluate(IMPORT, [N, stamp, int(stamp.rsplit("#", 1)[1])]) == N
    # a restart: the lazy pass stores the pack's full-text postings (its terms: the texts')
    page.reload()
    wait_ready(page)
    settled(page)
    [head] = block_heads(page)
    assert "p0010" in head["ids"] and "10" in head["terms"]
    # one in a segment, one in the tail
    victims = ["p0010", "p0290"]
    secrets = {i: (f"secret number {int(i[1:])} of piko", vector_hex(page, i)) for i in victims}
    before = everything(page)
    for text, vector in secrets.values():
        assert text in before and vector in before
    # the one in a segment is in a record pack (which the purge must rewrite)
    assert any(secrets["p0010"][0] in row for row in page.evaluate(RAW)["record_packs"])
    engine_call(page, "recall", {"character": "piko", "query": "secret number 10",
                                 "mode": "fulltext"})
    engine_call(page, "flush_recalls")
    purge(page, victims)
    after = everything(page)
    for head in block_heads(page):  # the pack's postings went with its old text
        assert "p0010" not in head["ids"] and "10" not in head["terms"]
    for memory_id, (text, vector) in secrets.items():
        assert text not in after, memory_id
        assert vector not in after, memory_id
        assert f'"{memory_id}"' not in after, memory_id

    # past half of a segment in holes, the segment is dissolved into the tail
    purge(page, [f"p{i:04d}" for i in range(20, 160)])
    assert page.evaluate(RAW)["segments"] == []  # 115 rows left of 256: back in the tail
    page.reload()
    wait_ready(page)
    left = engine_call(page, "memories", {"character": "piko"})
    assert len(left) == N - 2 - 140
    hits = engine_call(page, "recall", {"character": "piko", "query": "secret number 200 of piko",
                                        "mode": "fulltext", "k": 1, "count": False})
    assert hits[0]["memory"]["id"] == "p0200"
    probe = engine_call(page, "export_data", {"characters": ["piko"], "with_vectors": True})
    assert len(probe["characters"][0]["vectors"]) == N - 142


def test_emptying_the_trash_after_an_edit_erases_the_text_before_it(launch, app_url,
                                                                     tmp_path):
    """An edit keeps the text before it as a trashed copy (another id); emptying the trash
    must erase that text from disk. The edited memory's own line in its record pack (and the
    pack's postings, which hold the old terms) outlived the purge: only the vector went."""
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    stamp = engine_call(page, "model_state")["stamp"]
    assert page.evaluate(IMPORT, [N, stamp, int(stamp.rsplit("#", 1)[1])]) == N
    page.reload()
    wait_ready(page)
    settled(page)  # p0010's pack has stored postings
    secret = "secret number 10 of piko"
    assert any(secret in row for row in page.evaluate(RAW)["record_packs"])
    engine_call(page, "update", {"character": "piko", "id": "p0010",
                                 "text": "a harmless replacement sentence"})
    [copy] = engine_call(page, "trash", {"character": "piko"})
    assert copy["memory"]["text"] == secret
    assert engine_call(page, "purge_trash", {"character": "piko"}) == [copy["memory"]["id"]]
    assert secret not in everything(page)
    for head in block_heads(page):
        assert "p0010" not in head["ids"] or "10" not in head["terms"]
    page.reload()  # the edited memory and its pack's neighbours still load and recall
    wait_ready(page)
    assert engine_call(page, "get", {"character": "piko", "id": "p0010"})["text"] == (
        "a harmless replacement sentence")
    hits = engine_call(page, "recall", {"character": "piko", "query": "secret number 11 of piko",
                                        "mode": "fulltext", "k": 1, "count": False})
    assert hits[0]["memory"]["id"] == "p0011"
    assert len(engine_call(page, "memories", {"character": "piko"})) == N


STAGE = """async (rows) => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open("omoide");
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  await new Promise((ok, fail) => {
    const tx = db.transaction("staging", "readwrite");
    for (const row of rows) {
      tx.objectStore("staging").put({ ...row, dimension: 4, vector: new Float32Array(4) });
    }
    tx.oncomplete = ok; tx.onerror = () => fail(tx.error);
  });
  db.close();
}"""


def test_a_purge_or_a_new_text_erases_what_a_re_vectorization_staged(launch, app_url,
                                                                   tmp_path):
    """A re-vectorization stages each memory's text with its new vector, per model: a purge
    erased the staged row of the current target model only (a cancelled run to another
    model kept the purged text on disk for good), and an edit none (the old words stayed)."""
    page = launch(tmp_path / "profile").new_page()
    page.goto(app_url)
    wait_ready(page)
    stamp = engine_call(page, "model_state")["stamp"]
    assert page.evaluate(IMPORT, [N, stamp, int(stamp.rsplit("#", 1)[1])]) == N
    staged = [{"stamp": s, "character": "piko", "id": i, "text": f"secret number {n} of piko"}
              for s in ("cancelled/model@q8#4", "other/model@fp32#4")
              for i, n in (("p0020", 20), ("p0030", 30))]
    page.evaluate(STAGE, staged)
    purge(page, ["p0020"])
    engine_call(page, "update", {"character": "piko", "id": "p0030",
                                 "text": "a harmless replacement sentence"})
    engine_call(page, "purge_trash", {"character": "piko"})  # the edit's history copy too
    raw = everything(page)
    assert "secret number 20 of piko" not in raw and "secret number 30 of piko" not in raw
    assert "secret number 21 of piko" in raw  # the others stay
