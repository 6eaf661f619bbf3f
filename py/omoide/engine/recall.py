"""``recall``: vector, full-text or hybrid search inside ONE character's store.

Threshold semantics (never silently rescaled):
- ``vector``: minimum cosine in [0, 1]; hits below it are dropped.
- ``hybrid``: the same cosine floor, applied to each candidate's vector component before
  fusion; the fused score itself is never thresholded (its scale is per query).
- ``fulltext``: minimum BM25 score (>= 0), since there is no cosine.

Every hit also carries ``relevance`` in [0, 1] (``engine/relevance.py``: the same meaning for
every query, character and model). When no hit reaches ``min_relevance`` (default
``DEFAULT_MIN_RELEVANCE``; 0 keeps everything) the query is "no good match" and recall returns
nothing, so a query unrelated to every memory returns nothing (the default applies from
``DEFAULT_CUT_POPULATION`` memories on); otherwise the hits come back
in rank order with their relevance. The ranking itself is the fused score's.

Time (``engine/timeframe.py``): when the query names a span ("last week", "in May 2023",
先週, 去年の夏), reckoned from ``now`` (default: the engine's clock), hybrid mode adds the
memories whose time (``created_at``) lies in it to the candidates and lifts their fused score
by ``TIME_BOOST`` standard deviations; vector and full-text mode keep their own order. The
words naming the span stay in the full-text query (measured: removing them cost any@10).
Every hit says whether it lies in the span (``in_timeframe``; None when the query named none).

Languages (``embeddings/scripts.py``): hybrid asks the vector ranker only about a query the
model reads. A query mostly in scripts an English-only model was not trained on (Japanese
asked of MiniLM) is answered by the full-text ranker alone, as in full-text mode; vector mode
still asks the model, as the caller chose.

Neighbourhood (``engine/neighbourhood.py``): in hybrid mode with a score fusion, a candidate
from a conversation also gets its window's vote (the mean vector standard score of the
memories within a few turns of it), weighted as the vector ranker; ``use_neighbours=False``
turns it off. Memories without a conversation rank as without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from omoide.embeddings.registry import default_fusion, reads_query
from omoide.engine import validate
from omoide.engine.analyzer import query_weights
from omoide.engine.embedding import embed_query
from omoide.engine.fusion import (
    FUSIONS,
    head_spread,
    reciprocal_rank_fusion,
    standard_score_fusion,
)
from omoide.engine.memory import Hit, Memory
from omoide.engine.neighbourhood import window_votes
from omoide.engine.relevance import (
    DEFAULT_CUT_POPULATION,
    DEFAULT_MIN_RELEVANCE,
    content_terms,
    lexical_shares,
    relevance,
    vector_standout,
)
from omoide.engine.sentences import SENTENCE_DEPTH, with_sentence_evidence
from omoide.engine.store import CharacterStore
from omoide.engine.timeframe import TimeFrame, parse_timeframe
from omoide.errors import OmoideError
from omoide.kernels.base import top_k_by_id

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

MIN_CANDIDATES = 50  # per ranker in hybrid mode; fusion looks deeper than k
SPREAD_DEPTH = 10  # adaptive fusion: head spread measured from rank 1 to rank 10
SPREAD_FLOOR = 1.0  # adaptive fusion: every informative ranker keeps at least this weight
TIME_BOOST = 1.0  # hybrid: fused bonus (in standard deviations) of a memory in the query's span


@dataclasses.dataclass(frozen=True)
class RecallArguments:
    """A recall's arguments, each checked (``checked_arguments``)."""

    character: str
    query: str
    k: int
    mode: str
    floor: float | None
    rrf_k: float
    kinds: frozenset[str] | None
    fusion: str
    touch: bool
    cut: float | None
    reference: float
    now: float | datetime | None
    use_time: bool
    use_neighbours: bool


def checked_arguments(
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
    min_relevance: float | None = None,
    now: float | datetime | None = None,
    use_time: bool = True,
    use_neighbours: bool = True,
) -> RecallArguments:
    """Every argument of ``recall`` checked, nothing read or written: a caller that changes
    something before its recall (``governance.trash.recall_reviving``) checks them first,
    so a refused recall changes nothing."""
    character = validate.character_id(character)
    query = validate.query(query, engine.max_text_length)
    mode = validate.mode(mode)
    cut = None if min_relevance is None else validate.unit_interval("min_relevance",
                                                                     min_relevance)
    reference = engine.now() if now is None else validate.timestamp(now, "now")
    if fusion is None:  # the selected model's recommendation (registry), else adaptive
        fusion = default_fusion(engine.embedder.model_id)
    if fusion not in FUSIONS:
        raise OmoideError.of("INVALID_ARGUMENT", name="fusion", reason=f"not in {FUSIONS}")
    return RecallArguments(
        character, query, validate.k(k), mode, validate.threshold(threshold, mode),
        validate.positive("rrf_k", rrf_k), validate.kinds(kinds), fusion, bool(touch), cut,
        reference, now, bool(use_time), bool(use_neighbours))


def recall(engine: MemoryEngine, character: str, query: str, **arguments: Any) -> list[Hit]:
    """The hits of ``query`` among ``character``'s memories (arguments: see
    ``checked_arguments``)."""
    a = checked_arguments(engine, character, query, **arguments)
    character, query, k, mode, floor, rrf_k = (a.character, a.query, a.k, a.mode, a.floor,
                                               a.rrf_k)
    kind_filter, fusion, cut, reference, now = a.kinds, a.fusion, a.cut, a.reference, a.now
    store = engine.stores.get(character)
    if store is None:
        return []
    if mode != "fulltext":
        engine.check_model(store)
    allowed = None
    if kind_filter is not None:
        allowed = store.ids_of_kinds(kind_filter)
    frame = None
    if a.use_time:
        frame = parse_timeframe(query, now if isinstance(now, datetime) else reference)
    if mode == "vector":
        hits = _vector_hits(engine, store, query, k, floor, allowed, frame)
    elif mode == "fulltext":
        hits = _fulltext_hits(store, query, k, floor, allowed, frame)
    elif not reads_query(engine.embedder.model_id, query):
        # the model does not read the query's language (Japanese asked of the English-only
        # MiniLM): its ranking would be noise, so hybrid answers from full text alone; the
        # cosine floor has no cosine to apply to
        hits = _fulltext_hits(store, query, k, None, allowed, frame)
    else:
        hits = _hybrid_hits(engine, store, query, k, floor, allowed, fusion, rrf_k, frame,
                            a.use_neighbours)
    if cut is None and len(store.records) >= DEFAULT_CUT_POPULATION:
        cut = DEFAULT_MIN_RELEVANCE
    if cut is not None and not any(h.relevance >= cut for h in hits):
        hits = []  # no good match: nothing the query names stands out among the memories
    return _touched(engine, store, hits) if a.touch else hits


def _in_frame(store: CharacterStore, frame: TimeFrame | None,
              allowed: set[str] | None) -> set[str] | None:
    """Ids of the live memories whose time lies in the span (None: no span)."""
    if frame is None:
        return None
    ids = store.ids_created_between(frame.start, frame.end)
    return ids if allowed is None else ids & allowed


def _flag(frame: TimeFrame | None, memory: Memory) -> bool | None:
    return None if frame is None else frame.contains(memory.created_at)


def _coverage(store: CharacterStore, terms: list[str], ids: list[str],
              frame: TimeFrame | None) -> list[float | None]:
    """Lexical coverage of the query by each memory (None: the query has no indexable term).
    The words naming a time span are left out: a memory meets them by its time, not its text."""
    if frame is not None:
        time_words = set(store.analyzer(frame.phrase))
        terms = [t for t in terms if t not in time_words]
    shares = lexical_shares(store.text_index, content_terms(terms), ids)
    return [None] * len(ids) if shares is None else list(shares)


def _vector_hits(engine, store: CharacterStore, query, k, floor, allowed, frame) -> list[Hit]:
    vector = embed_query(engine.embedder, query)
    result = top_k_by_id(store.kernel, vector, k, allowed)
    hits = []
    for rank, (memory_id, cosine) in enumerate(zip(result.ids, result.scores, strict=True), 1):
        if floor is not None and cosine < floor:
            break  # best first: everything after is lower
        memory = store.records[memory_id]
        standout = vector_standout(cosine, result.mean, result.std, result.count)
        hits.append(Hit(memory, cosine, cosine, None, rank, None,
                        relevance(standout, None), _flag(frame, memory)))
    return hits


def _fulltext_hits(store: CharacterStore, query, k, floor, allowed, frame) -> list[Hit]:
    terms = store.analyzer(query)
    weights = query_weights(terms)
    result = store.text_index.search(terms, max(k, SENTENCE_DEPTH), allowed, weights)
    text_scores = with_sentence_evidence(store.text_index, store.analyzer, terms, weights,
                                         [store.records[i] for i in result.ids], result.scores)
    ranked = list(zip(result.ids, text_scores, result.scores, strict=True))
    if text_scores != result.scores:  # a long memory was rescored: rank again
        ranked.sort(key=lambda item: (-item[1], item[0]))
    # else: no memory of the head was, and the search's order (score, then id) stands
    ranked = ranked[:k]
    coverage = _coverage(store, terms, [i for i, _, _ in ranked], frame)
    hits = []
    for rank, (memory_id, score, raw) in enumerate(ranked, 1):
        if floor is not None and score < floor:
            break
        memory = store.records[memory_id]
        hits.append(Hit(memory, score, None, raw, None, rank,
                        relevance(None, coverage[rank - 1]), _flag(frame, memory)))
    return hits


def _hybrid_hits(engine, store, query, k, floor, allowed, fusion, rrf_k, frame,
                 neighbourhood) -> list[Hit]:
    depth = max(k, MIN_CANDIDATES)
    vector = embed_query(engine.embedder, query)
    terms = store.analyzer(query)
    term_weights = query_weights(terms)
    by_vector = top_k_by_id(store.kernel, vector, depth, allowed)
    by_text = store.text_index.search(terms, depth, allowed, term_weights)
    in_frame = _in_frame(store, frame, allowed)
    extra: list[str] = []
    if in_frame:  # the span's best memories compete even when neither ranker's head has them
        extra = top_k_by_id(store.kernel, vector, depth, in_frame).ids
    candidates = list(dict.fromkeys(by_vector.ids + by_text.ids + extra))
    cosines = dict(zip(candidates, store.kernel.scores(vector, candidates), strict=True))
    bm25 = dict(zip(candidates, store.text_index.scores(terms, candidates, term_weights),
                    strict=True))
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
        if neighbourhood:  # a matching stretch of a conversation lifts each of its turns
            vote_weight = weights[0] if weights else 1.0
            votes = window_votes(store, vector, candidates, by_vector.mean, by_vector.std)
            for i, vote in votes.items():
                fused[i] += vote_weight * vote
        if by_text.std > 1e-12:  # a long memory's best sentence: the head is rescored
            text_weight = weights[1] if weights else 1.0
            head = sorted(candidates, key=lambda i: (-fused[i], i))[:max(2 * k,
                                                                          SENTENCE_DEPTH)]
            rescored = with_sentence_evidence(store.text_index, store.analyzer, terms,
                                              term_weights, [store.records[i] for i in head],
                                              [bm25[i] for i in head])
            for i, score in zip(head, rescored, strict=True):
                fused[i] += text_weight * (score - bm25[i]) / by_text.std
    if in_frame and fusion != "rrf":
        for i in candidates:
            if i in in_frame:
                fused[i] = fused.get(i, 0.0) + TIME_BOOST
    best = sorted(candidates, key=lambda i: (-fused.get(i, 0.0), i))[:k]
    coverage = _coverage(store, terms, best, frame)
    hits = []
    for i, share in zip(best, coverage, strict=True):
        memory = store.records[i]
        standout = vector_standout(cosines[i], by_vector.mean, by_vector.std, by_vector.count)
        hits.append(Hit(memory, fused.get(i, 0.0), cosines[i], bm25[i], vector_rank.get(i),
                        text_rank.get(i), relevance(standout, share), _flag(frame, memory)))
    return hits


def _touched(engine: MemoryEngine, store: CharacterStore, hits: list[Hit]) -> list[Hit]:
    """Count the recall on each returned memory (record-only change: no vector rewrite)."""
    now = engine.now()
    touched = []
    for hit in hits:
        # the later time: a clock set back (a device's wrong date) never makes a memory
        # used today look unused for months (summaries take such ones first)
        last = hit.memory.last_recalled_at
        memory: Memory = dataclasses.replace(
            hit.memory, last_recalled_at=now if last is None else max(last, now),
            recall_count=hit.memory.recall_count + 1)
        store.put(memory, None)
        touched.append(dataclasses.replace(hit, memory=memory))
    return touched
