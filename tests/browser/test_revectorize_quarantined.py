"""Re-vectorization with an invalid stored record: the record stays quarantined, kept on
disk as it was (its text is the user's), and every other memory, of its character and of
the others, moves to the new model's index."""

from __future__ import annotations

from .conftest import engine_call, wait_ready
from .test_storage import E5, MINILM, fill, open_page
from .test_storage_purge import everything

# Make one stored record of ``character`` invalid (an importance of 7.5), wherever it is
# stored (an override row or a record pack); answer its id and its text.
TAMPER = """async (character) => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open("omoide");
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  const all = (name) => new Promise((ok) => {
    const r = db.transaction(name).objectStore(name).getAll();
    r.onsuccess = () => ok(r.result); });
  const put = (name, value) => new Promise((ok) => {
    db.transaction(name, "readwrite").objectStore(name).put(value).onsuccess = ok; });
  const row = (await all("memories")).find((r) => r.character === character);
  let found;
  if (row) {
    row.record = { ...row.record, importance: 7.5 };
    await put("memories", row);
    found = [row.id, row.record.text];
  } else {
    const pack = (await all("record_packs")).find((p) => p.character === character);
    const before = pack.json;
    pack.json = pack.format === 3
      ? pack.json.replace(/,null,0\\.[0-9]+,/, ",null,7.5,")
      : pack.json.replace(/"importance":0\\.[0-9]+/, '"importance":7.5');
    if (pack.json === before) throw new Error("no importance to tamper with");
    await put("record_packs", pack);
    found = [pack.ids[0], null];
  }
  db.close();
  return found;
}"""


def test_an_invalid_record_does_not_block_re_vectorizing(launch, app_url, tmp_path):
    page = open_page(launch(tmp_path / "profile"), app_url)
    engine_call(page, "select_model", MINILM)
    fill(page, ["gin", "ran"], 12)
    bad_id, bad_text = page.evaluate(TAMPER, "gin")
    page.reload()
    wait_ready(page)
    assert engine_call(page, "storage_info")["loads"]["gin"]["quarantined"] == 1
    engine_call(page, "select_model", E5)
    engine_call(page, "revectorize_start", E5)
    page.wait_for_function("() => window.omoide.events.some(e => e.type === 'revectorize' "
                           "&& ['finished', 'failed'].includes(e.state))", timeout=180_000)
    ended = page.evaluate("() => window.omoide.events.filter(e => e.type === 'revectorize' "
                          "&& e.state).pop()")
    assert ended["state"] == "finished", ended
    state = engine_call(page, "model_state")
    assert state["mismatched"] == []
    for _ in range(2):  # in this tab, then read back from IndexedDB
        for character, count in (("gin", 11), ("ran", 12)):
            memories = engine_call(page, "memories", {"character": character})
            assert len(memories) == count
            assert {m["model"] for m in memories} == {state["stamp"]}
        page.reload()
        wait_ready(page)
    # still quarantined, listed by the audit, its record kept on disk as it was
    assert engine_call(page, "storage_info")["loads"]["gin"]["quarantined"] == 1
    audit = engine_call(page, "audit", {"character": "gin"})
    assert bad_id in [q["id"] for q in audit["quarantined"]]
    if bad_text is not None:
        assert bad_text in everything(page)
    assert bad_id not in [m["id"] for m in engine_call(page, "memories", {"character": "gin"})]
