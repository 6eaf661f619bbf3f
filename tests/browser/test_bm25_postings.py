"""The browser scores BM25 in WebAssembly (``kernel/bm25.c`` over the engine's array
postings) and answers full-text and hybrid recall exactly as the CPython engine does for the
same memories, after updates, deletions, restores and a purge, and again right after a
restart, while the index is still being built lazily."""

from __future__ import annotations

import random

import pytest

from omoide.engine import MemoryEngine

from .conftest import cpython_engine, engine_call, open_with_model, wait_ready

MODEL = "omoide/all-MiniLM-L6-v2"
WORDS = ["tea", "violin", "osaka", "river", "chess", "sunday", "bread", "train", "cat", "fuji",
         "umbrella", "sister", "morning", "spring", "garden", "letter"]
PHRASES = ["東京", "京都", "緑茶", "大阪の川", "満員電車", "バイオリン", "チェス", "日曜日", "祖父"]
QUERIES = ["tea in the morning", "violin spring", "osaka sister river", "チェス 祖父",
           "満員電車", "緑茶 東京", "cat umbrella", "bread sunday garden", "京都の日曜日",
           "letter", "fuji train", "バイオリン tea"]


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS + PHRASES) for _ in range(rng.randint(2, 7)))


def assert_recalls_match(page, engine: MemoryEngine, modes: tuple[str, ...]) -> int:
    """Every query in every mode: the same ids in the same order, the same BM25 scores."""
    matched = 0
    for query in QUERIES:
        for mode in modes:
            browser = engine_call(page, "recall", {"character": "mika", "query": query,
                                                   "k": 10, "mode": mode, "count": False})
            local = engine.recall("mika", query, k=10, mode=mode, touch=False)
            assert [h["memory"]["id"] for h in browser] == [h.memory.id for h in local], \
                (query, mode)
            for b, c in zip(browser, local, strict=True):
                assert b["bm25"] == pytest.approx(c.bm25, abs=1e-5), (query, mode)
                assert b["score"] == pytest.approx(c.score, abs=1e-3), (query, mode)
            matched += len(local)
    return matched


def test_wasm_bm25_recall_equals_cpython(launch, app_url, tmp_path):
    rng = random.Random(4)
    page = open_with_model(launch, app_url, tmp_path / "profile", MODEL)
    items = [{"text": text(rng), "context": text(rng)} if i % 4 == 0 else text(rng)
             for i in range(240)]
    ids = [m["id"] for m in engine_call(page, "remember_many",
                                        {"character": "mika", "items": items})]
    for memory_id in ids[:25]:
        engine_call(page, "update", {"character": "mika", "id": memory_id, "text": text(rng)})
    for memory_id in ids[25:60]:
        engine_call(page, "forget", {"character": "mika", "id": memory_id})
    for memory_id in ids[25:35]:
        engine_call(page, "restore", {"character": "mika", "id": memory_id})
    engine_call(page, "purge_trash", {"character": "mika"})
    assert engine_call(page, "bm25_info")["scorer"] == "wasm"

    exported = engine_call(page, "export_data", {"with_vectors": True})
    engine = cpython_engine(exported)
    assert len(engine.memories("mika")) == 240 - 25
    assert assert_recalls_match(page, engine, ("fulltext", "hybrid")) > 50  # real matches

    page.reload()  # a restart: the index is built lazily after ready
    wait_ready(page)
    assert assert_recalls_match(page, engine, ("fulltext",)) > 50
    assert engine_call(page, "bm25_info")["memory_bytes"] > 0
