"""Properties of recall that hold for any store and any query (Hypothesis).

Stores are small (at most 24 memories of a few words, English, Japanese, emoji and
punctuation, the same text often twice), so ties, an empty full-text index, one memory
and all-identical vectors come up; the embedder is the hashing one of the engine tests.
Ranking quality is measured by bench/, not here: these are invariants only.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.exchange import export_data
from omoide.engine.recall import MIN_CANDIDATES
from omoide.errors import OmoideError
from omoide.kernels import PureKernel
from omoide.kernels.base import top_k_by_id
from omoide.kernels.numpy_kernel import NumpyKernel
from tests.test_engine_embedder import HashingEmbedder

NOW = 1_700_000_000.0
DAY = 86_400.0
WORDS = ["tea", "green tea", "coffee", "cat", "the", "Postgres", "寿司", "東京", "猫が好き",
         "データベース", "🍣", "🙂", "!!", "。", "last week", "先週", "去年の夏", "in May 2023"]
KINDS = ["fact", "diary", "preference"]
MODES = [{"mode": "vector"}, {"mode": "fulltext"}, {"mode": "hybrid", "fusion": "adaptive"},
         {"mode": "hybrid", "fusion": "zscore"}, {"mode": "hybrid", "fusion": "rrf"}]
KERNELS = {"pure": PureKernel, "numpy": NumpyKernel,
           "int8": lambda dimension: NumpyKernel(dimension, mode="int8")}

PROPERTY = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
memory = st.fixed_dictionaries({
    "text": text, "kind": st.sampled_from(KINDS),
    "at": st.integers(0, 60).map(lambda days: NOW - days * DAY),
    "conversation": st.sampled_from([None, None, "chat-1", "chat-2"]),
})
store = st.lists(memory, min_size=1, max_size=24)
query = st.one_of(text, st.text(min_size=1, max_size=30))
kinds = st.none() | st.lists(st.sampled_from(KINDS), min_size=1, max_size=2)


def build(memories, trashed=(), kernel=None):
    """An engine holding ``memories`` for alice (those at ``trashed`` positions forgotten)
    and the same texts for bob; returns (engine, alice's live ids)."""
    engine = MemoryEngine(HashingEmbedder(32), kernel=kernel, clock=lambda: NOW)
    ids = [m.id for m in engine.remember_many("alice", memories)]
    engine.remember_many("bob", memories)
    for at in sorted(set(trashed)):
        if at < len(ids):
            engine.forget("alice", ids[at])
    return engine, [i for at, i in enumerate(ids) if at not in set(trashed)]


def recalled(engine, q, **arguments):
    """Recall with touch=False; None when refused as documented (INVALID_ARGUMENT)."""
    try:
        return engine.recall("alice", q, touch=False, **arguments)
    except OmoideError as error:
        assert error.code == "INVALID_ARGUMENT", error
        return None


def ids_of(hits):
    return [h.memory.id for h in hits]


@PROPERTY
@given(memories=store, trashed=st.lists(st.integers(0, 23), max_size=4), q=query,
       k=st.sampled_from([1, 3, 1000]), mode=st.sampled_from(MODES), kinds=kinds,
       cut=st.sampled_from([None, 0.0, 0.5]), use_time=st.booleans())
def test_hits_are_live_own_bounded_sorted_finite_and_change_nothing(
        memories, trashed, q, k, mode, kinds, cut, use_time):
    engine, live = build(memories, trashed)
    before = export_data(engine, with_vectors=True)
    arguments = dict(k=k, kinds=kinds, min_relevance=cut, use_time=use_time, **mode)
    hits = recalled(engine, q, **arguments)
    if hits is None:
        return
    assert export_data(engine, with_vectors=True) == before  # touch=False writes nothing
    found = ids_of(hits)
    assert len(found) <= k and len(set(found)) == len(found)
    assert set(found) <= set(live)  # never trashed, never bob's
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for hit in hits:
        assert 0.0 <= hit.relevance <= 1.0
        assert all(v is None or math.isfinite(v)
                   for v in (hit.score, hit.vector_cosine, hit.bm25, hit.relevance))
        assert kinds is None or hit.memory.kind in kinds
    assert ids_of(recalled(engine, q, **arguments)) == found  # deterministic
    for higher in (0.3, 0.6, 0.9, 1.0):  # raising min_relevance never adds a hit
        if cut is not None and higher >= cut:
            assert set(ids_of(recalled(engine, q, **{**arguments, "min_relevance": higher}))
                       ) <= set(found)


@PROPERTY
@given(memories=store, q=query, k=st.sampled_from([1, 5, 60]),
       fusion=st.sampled_from(["adaptive", "zscore", "rrf"]), kinds=kinds)
def test_hybrid_hits_come_from_the_two_rankers_candidates(memories, q, k, fusion, kinds):
    engine, _ = build(memories)
    hits = recalled(engine, q, k=k, fusion=fusion, kinds=kinds, min_relevance=0,
                    use_time=False)
    if hits is None:
        return
    store_ = engine.stores["alice"]
    allowed = None if kinds is None else store_.ids_of_kinds(kinds)
    depth = max(k, MIN_CANDIDATES)
    vector = engine.embedder.embed_queries([q])[0]
    by_vector = top_k_by_id(store_.kernel, vector, depth, allowed).ids
    by_text = store_.text_index.search(store_.analyzer(q), depth, allowed).ids
    assert set(ids_of(hits)) <= set(by_vector) | set(by_text)


@PROPERTY
@given(memories=store, q=query, k=st.sampled_from([1, 2, 5]), mode=st.sampled_from(MODES),
       kinds=kinds, victim=st.integers(0, 23))
def test_kernels_snapshots_and_an_unrelated_forget_change_no_result(
        memories, q, k, mode, kinds, victim):
    engine, live = build(memories)
    arguments = dict(k=k, kinds=kinds, min_relevance=0, **mode)
    first = recalled(engine, q, **arguments)
    if first is None:
        return
    other = live[victim % len(live)]
    engine.forget("alice", other)
    engine.restore("alice", other)
    assert ids_of(recalled(engine, q, **arguments)) == ids_of(first)
    index, records = engine.snapshot("alice")
    for name, factory in KERNELS.items():
        loaded = MemoryEngine(HashingEmbedder(32), kernel=factory, clock=lambda: NOW)
        loaded.load_snapshot("alice", index, records)
        # int8 ranks the same rows (its rerank is exact), but its moments are the int8
        # scores' (kernel/topk.c), which the hybrid fusion reads: vector and full-text only
        if name != "int8" or mode["mode"] != "hybrid":
            assert ids_of(recalled(loaded, q, **arguments)) == ids_of(first), name


@PROPERTY
@given(memories=store, q=text, mode=st.sampled_from(MODES))
def test_touch_changes_only_the_hits_recall_counts(memories, q, mode):
    engine, _ = build(memories)
    before = {m.id: m.to_dict() for m in engine.memories("alice")}
    hits = engine.recall("alice", q, k=3, min_relevance=0, **mode)
    after = {m.id: m.to_dict() for m in engine.memories("alice")}
    assert before.keys() == after.keys()
    for memory_id, old in before.items():
        new = dict(after[memory_id])
        if memory_id in ids_of(hits):
            assert new.pop("recall_count") == old["recall_count"] + 1
            assert new.pop("last_recalled_at") == NOW
            new = {**new, "recall_count": old["recall_count"],
                   "last_recalled_at": old["last_recalled_at"]}
        assert new == old


ODD_QUERIES_ENGINE, _ = build([{"text": f"{a} {b}", "at": NOW - n * DAY} for n, (a, b)
                               in enumerate(zip(WORDS, reversed(WORDS), strict=True))])


@settings(PROPERTY, max_examples=200)
@given(q=st.one_of(
    st.text(max_size=40),
    st.text(alphabet="!?.,;:…。、！？「」・ー〜—-_()[]#@&*%$ \n\t", min_size=1, max_size=20),
    st.lists(st.sampled_from(WORDS + ["99999999 days ago", "1000000週間前", "今日"]),
             min_size=1, max_size=8).map("".join),
    st.builds(lambda word, n: " ".join([word] * n), st.sampled_from(WORDS),
              st.integers(100, 2000)),
), mode=st.sampled_from(MODES))
def test_any_query_is_answered_or_refused_as_invalid(q, mode):
    engine = ODD_QUERIES_ENGINE
    hits = recalled(engine, q, k=5, **mode)
    if hits is None:  # only a blank, over-long or unpaired-surrogate query is refused
        assert not q.strip() or len(q) > engine.max_text_length or any(
            0xD800 <= ord(c) <= 0xDFFF for c in q)
        return
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)


@PROPERTY
@given(memories=store, topic=text,
       span=st.sampled_from(["last week", "in May 2023", "先週", "去年の夏", "3 days ago"]),
       mode=st.sampled_from([m for m in MODES if m["mode"] != "fulltext"]), kinds=kinds)
def test_time_words_exclude_nothing_when_time_is_off(memories, topic, span, mode, kinds):
    engine, live = build(memories)
    eligible = [i for i in live if kinds is None or engine.get("alice", i).kind in kinds]
    hits = recalled(engine, f"{topic} {span}", k=1000, kinds=kinds, min_relevance=0,
                    use_time=False, **mode)
    assert sorted(ids_of(hits)) == sorted(eligible)
    assert all(h.in_timeframe is None for h in hits)


@pytest.mark.parametrize("mode", MODES)
def test_a_store_of_one_memory_without_words(mode):
    engine, live = build([{"text": "🍣🍣 !!"}])
    hits = engine.recall("alice", "🍣", min_relevance=0, touch=False, **mode)
    assert ids_of(hits) in ([], live) and all(0.0 <= h.relevance <= 1.0 for h in hits)
