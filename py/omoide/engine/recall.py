"""``recall``: vector, full-text or hybrid search inside ONE character's store.

Threshold semantics (never silently rescaled):
- ``vector``: minimum cosine in [0, 1]; hits below it are dropped.
- ``hybrid``: the same cosine floor, applied to each candidate's vector component before
  fusion; the fused score itself is never thresholded (its scale is per query).
- ``fulltext``: minimum BM25 score (>= 0), since there is no cosine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from omoide.embeddings.registry import default_fusion
from omoide.engine import validate
from omoide.engine.embedding import embed_query
from omoide.engine.fusion import (
    FUSIONS,
    head_spread,
    reciprocal_rank_fusion,
    standard_score_fusion,
)
from omoide.engine.memory import Hit, Memory
from omoide.engine.store import CharacterStore
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

MIN_CANDIDATES = 50  # per ranker in hybrid mode; fusion looks deeper than k
SPREAD_DEPTH = 10  # adaptive fusion: head spread measured from rank 1 to rank 10
SPREAD_FLOOR = 1.0  # adaptive fusion: every informative ranker keeps at least this weight


def recall(
    engine: MemoryEngine,
    character: str,
    query: str,
    *,
    k: int = 10,
    mode: str = "hybrid",
    threshold: float | None = None,
    rrf_k: float = 60,
    kinds: Iterable[str] | None = None,
    fusion: str | None = None,
    touch: bool = True,
) -> list[Hit]:
    character = validate.character_id(character)
    query = validate.text(query, engine.max_text_length)
    k = validate.k(k)
    mode = validate.mode(mode)
    floor = validate.threshold(threshold, mode)
    rrf_k = validate.positive("rrf_k", rrf_k)
    kind_filter = validate.kinds(kinds)
    if fusion is None:  # the selected model's recommendation (registry), else adaptive
        fusion = default_fusion(engine.embedder.model_id)
    if fusion not in FUSIONS:
        raise OmoideError.of("INVALID_ARGUMENT", name="fusion", reason=f"not in {FUSIONS}")
    store = engine.stores.get(character)
    if store is None:
        return []
    if mode != "fulltext":
        engine.check_model(store)
    allowed = None
    if kind_filter is not None:
        allowed = {i for i, m in store.records.items() if m.kind in kind_filter}
    if mode == "vector":
        hits = _vector_hits(engine, store, query, k, floor, allowed)
    elif mode == "fulltext":
        hits = _fulltext_hits(store, query, k, floor, allowed)
    else:
        hits = _hybrid_hits(engine, store, query, k, floor, allowed, fusion, rrf_k)
    return _touched(engine, store, hits) if touch else hits


def _vector_hits(engine, store: CharacterStore, query, k, floor, allowed) -> list[Hit]:
    vector = embed_query(engine.embedder, query)
    result = store.kernel.top_k(vector, k, allowed)
    hits = []
    for rank, (memory_id, cosine) in enumerate(zip(result.ids, result.scores, strict=True), 1):
        if floor is not None and cosine < floor:
            break  # best first: everything after is lower
        hits.append(Hit(store.records[memory_id], cosine, cosine, None, rank, None))
    return hits


def _fulltext_hits(store: CharacterStore, query, k, floor, allowed) -> list[Hit]:
    result = store.text_index.search(store.analyzer(query), k, allowed)
    hits = []
    for rank, (memory_id, score) in enumerate(zip(result.ids, result.scores, strict=True), 1):
        if floor is not None and score < floor:
            break
        hits.append(Hit(store.records[memory_id], score, None, score, None, rank))
    return hits


def _hybrid_hits(engine, store, query, k, floor, allowed, fusion, rrf_k) -> list[Hit]:
    depth = max(k, MIN_CANDIDATES)
    vector = embed_query(engine.embedder, query)
    terms = store.analyzer(query)
    by_vector = store.kernel.top_k(vector, depth, allowed)
    by_text = store.text_index.search(terms, depth, allowed)
    candidates = list(dict.fromkeys(by_vector.ids + by_text.ids))
    cosines = dict(zip(candidates, store.kernel.scores(vector, candidates), strict=True))
    bm25 = dict(zip(candidates, store.text_index.scores(terms, candidates), strict=True))
    if floor is not None:
        candidates = [i for i in candidates if cosines[i] >= floor]
    vector_rank = {i: r for r, i in enumerate(by_vector.ids, 1)}
    text_rank = {i: r for r, i in enumerate(by_text.ids, 1)}
    if fusion == "rrf":
        kept = set(candidates)
        fused = reciprocal_rank_fusion(
            [[i for i in by_vector.ids if i in kept], [i for i in by_text.ids if i in kept]],
            rrf_k,
        )
    else:
        weights = None
        if fusion == "adaptive":
            weights = [
                SPREAD_FLOOR + head_spread(by_vector.scores, by_vector.mean, by_vector.std,
                                           SPREAD_DEPTH),
                SPREAD_FLOOR + head_spread(by_text.scores, by_text.mean, by_text.std,
                                           SPREAD_DEPTH),
            ]
        fused = standard_score_fusion(
            [{i: cosines[i] for i in candidates}, {i: bm25[i] for i in candidates}],
            [(by_vector.mean, by_vector.std), (by_text.mean, by_text.std)],
            weights,
        )
    best = sorted(candidates, key=lambda i: (-fused.get(i, 0.0), i))[:k]
    return [
        Hit(store.records[i], fused.get(i, 0.0), cosines[i], bm25[i],
            vector_rank.get(i), text_rank.get(i))
        for i in best
    ]


def _touched(engine: MemoryEngine, store: CharacterStore, hits: list[Hit]) -> list[Hit]:
    """Count the recall on each returned memory (record-only change: no vector rewrite)."""
    now = engine.now()
    touched = []
    for hit in hits:
        memory: Memory = dataclasses.replace(
            hit.memory, last_recalled_at=now, recall_count=hit.memory.recall_count + 1
        )
        store.put(memory, None)
        touched.append(dataclasses.replace(hit, memory=memory))
    return touched
