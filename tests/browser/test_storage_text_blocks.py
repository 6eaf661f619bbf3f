"""Full-text postings persisted per record pack (``text_postings``): the import's lazy pass
writes one block per pack it wrote (a restore's, one per pack it analyzed); the next restart
absorbs it instead of analyzing the pack's texts, and full-text and hybrid recall answer
exactly as the CPython engine does for the same memories, with writes on top of the packs
(updates and trash as override rows). A purge rewrites the pack and deletes its block in the
same transaction: no term of the purged text is left in IndexedDB (read raw); the next
restart makes the block again without it."""

from __future__ import annotations

import random

from .conftest import cpython_engine, engine_call, open_with_model, wait_ready
from .test_bm25_postings import assert_recalls_match, text
from .test_storage_purge import block_heads, settled

MODEL = "omoide/all-MiniLM-L6-v2"
N = 700  # a pack of 512 (two full segments) + a tail of 188 rows
IMPORT = """async ([items, stamp, dim]) => {
  let seed = 7;
  const rand = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647 - 0.5; };
  const memories = [], vectors = {};
  items.forEach(([text, context], i) => {
    const id = `t${String(i).padStart(4, "0")}`;
    memories.push({ id, text, context, kind: "fact", key: null, importance: 0.5,
      created_at: 1.7e9 + i, updated_at: 1.7e9 + i, meta: {} });
    vectors[id] = Array.from({ length: dim }, rand);
  });
  const data = { format: "omoide-export", version: 1,
    characters: [{ id: "mika", stamp, memories, vectors }] };
  return (await window.omoide.call("import_data", { data })).imported;
}"""


def restart(page) -> dict:
    page.reload()
    wait_ready(page)
    return settled(page)


def test_a_restore_absorbs_its_packs_postings_and_answers_as_cpython(launch, app_url,
                                                                      tmp_path):
    rng = random.Random(12)
    page = open_with_model(launch, app_url, tmp_path / "profile", MODEL)
    stamp = engine_call(page, "model_state")["stamp"]
    items = [[text(rng), text(rng) if i % 4 == 0 else None] for i in range(N)]
    assert page.evaluate(IMPORT, [items, stamp, 384]) == N
    # the import analyzes after the call, its pack as one group: the pack's block is written
    settled(page)
    [head] = block_heads(page)
    assert len(head["ids"]) == 512 and "t0003" in head["ids"]
    imported = head

    # restart 1: the import's block is absorbed; only the tail is analyzed
    status = restart(page)
    assert status["left"] == 0 and (status["blocks"], status["absorbed"]) == (1, 1)
    assert block_heads(page) == [imported]
    engine = cpython_engine(engine_call(page, "export_data", {"with_vectors": True}))
    assert assert_recalls_match(page, engine, ("fulltext",)) > 50

    # writes over the pack: override rows (updates, trash)
    for i in range(3, 13):
        engine_call(page, "update", {"character": "mika", "id": f"t{i:04d}",
                                     "text": text(rng)})
    for i in range(20, 30):
        engine_call(page, "forget", {"character": "mika", "id": f"t{i:04d}"})

    # restart 2: the block is absorbed; the recall answers as CPython does
    status = restart(page)
    assert (status["blocks"], status["absorbed"]) == (1, 1)
    engine = cpython_engine(engine_call(page, "export_data", {"with_vectors": True}))
    assert len(engine.memories("mika")) == N - 10
    assert assert_recalls_match(page, engine, ("fulltext", "hybrid")) > 50
    calls = engine_call(page, "call_timings", {"method": "recall"})
    assert all("text_blocks_wait_ms" in c for c in calls)

    # a purge rewrites the pack: its block goes in the same transaction
    purged = "t0021"
    engine_call(page, "purge_trash", {"character": "mika"})
    assert block_heads(page) == []
    # restart 3: a new block of the rewritten pack, without the purged memory
    status = restart(page)
    assert status["absorbed"] == 0
    [head] = block_heads(page)
    # the pack's ids less the purged; its updated copies are overridden (no block entry)
    assert purged not in head["ids"] and len(head["ids"]) == 512 - 10 - 10
    restart(page)
    assert engine_call(page, "storage_info")["text_blocks"]["absorbed"] == 1
    engine = cpython_engine(engine_call(page, "export_data", {"with_vectors": True}))
    assert assert_recalls_match(page, engine, ("fulltext",)) > 50
