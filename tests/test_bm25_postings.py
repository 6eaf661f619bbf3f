"""BM25F over array postings (``engine/bm25.py``) answers exactly like a dict-postings scorer,
through any history of adds, updates and removals, and the engine keeps the postings right
through every write (update, trash, restore, purge, re-vectorization, the lazy build after a
bulk load).

The oracle below is the former implementation (``BM25Index`` before the array postings:
dict postings, a Python loop per posting), which sums a document's terms in the query's
first-occurrence order (so exact ties stay exact), given a second field (the context) and
BM25F's formula written as the textbook has it. The WebAssembly scorer is checked against
``PureScorer`` in ``tests/test_bm25f.py`` (node) and in the browser
(``tests/browser/test_bm25_postings.py``).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import PURE_SCORER, STRIDE, BM25Index
from omoide.kernels.numpy_bm25 import NumpyScorer
from omoide.kernels.pure_kernel import PureKernel
from tests.test_engine_embedder import HashingEmbedder

TOLERANCE = 1e-5


class DictBM25:
    """The dict-postings BM25F the array postings replaced (the test's oracle)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, context_weight: float = 1.0,
                 context_b: float = 0.75) -> None:
        self.k1, self.b, self.context_weight, self.context_b = k1, b, context_weight, context_b
        self.postings: dict[str, dict[str, tuple[int, int]]] = {}
        self.doc_terms: dict[str, dict[str, tuple[int, int]]] = {}
        self.doc_length: dict[str, tuple[int, int]] = {}

    def add(self, doc_id: str, terms: list[str], context: tuple | list = ()) -> None:
        self.remove(doc_id)
        text_counts, context_counts = Counter(terms), Counter(context)
        counts = {t: (text_counts[t], context_counts[t])
                  for t in set(text_counts) | set(context_counts)}
        for term, tfs in counts.items():
            self.postings.setdefault(term, {})[doc_id] = tfs
        self.doc_terms[doc_id] = counts
        self.doc_length[doc_id] = (len(terms), len(context))

    def remove(self, doc_id: str) -> None:
        counts = self.doc_terms.pop(doc_id, None)
        if counts is None:
            return
        for term in counts:
            del self.postings[term][doc_id]
            if not self.postings[term]:
                del self.postings[term]
        del self.doc_length[doc_id]

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        n = len(self.doc_length)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def accumulate(self, terms, allowed):
        n = len(self.doc_length)
        if n == 0:
            return {}
        avg_text = sum(t for t, _ in self.doc_length.values()) / n or 1.0
        contexts = [c for _, c in self.doc_length.values() if c]
        avg_context = sum(contexts) / len(contexts) if contexts else 1.0
        k1, b, w, cb = self.k1, self.b, self.context_weight, self.context_b
        scores: dict[str, float] = {}
        for term in dict.fromkeys(terms):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = self.idf(term)
            for doc_id, (tf, ctf) in posting.items():
                if allowed is not None and doc_id not in allowed:
                    continue
                length, context_length = self.doc_length[doc_id]
                # the length norm as every scorer computes it, (1 - b) + (b / avg) * length:
                # b * length / avg differs in the last bit, and with k1 = 0 (a score of
                # idf * x / x) that bit decided a tie (found by this test)
                x = 0.0
                if tf:
                    x += tf / (1.0 - b + b / avg_text * length)
                if ctf:
                    x += w * ctf / (1.0 - cb + cb / avg_context * context_length)
                if x > 0:
                    scores[doc_id] = scores.get(doc_id, 0.0) + idf * x * (k1 + 1.0) / (x + k1)
        return scores

    def search(self, terms, k, allowed=None):
        scores = self.accumulate(terms, allowed)
        count = len(self.doc_length) if allowed is None else len(allowed & self.doc_length.keys())
        total = sum(scores.values())
        total_sq = sum(s * s for s in scores.values())
        mean = total / count if count else 0.0
        variance = max(total_sq / count - mean * mean, 0.0) if count else 0.0
        best = heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], item[0]))
        return [i for i, _ in best], [s for _, s in best], mean, variance**0.5, count

    def scores(self, terms, ids):
        scores = self.accumulate(terms, set(ids))
        return [scores.get(i, 0.0) for i in ids]


# Latin words and Japanese phrases (indexed as CJK bigrams), few enough that documents share
# terms, ties happen and queries match.
WORDS = ["tea", "violin", "osaka", "river", "chess", "sunday", "bread", "train", "cat", "fuji"]
PHRASES = ["東京", "京都", "緑茶", "大阪の川", "満員電車", "バイオリン", "チェス", "東京都"]
texts = st.lists(st.sampled_from(WORDS + PHRASES), min_size=0, max_size=8).map(" ".join)
documents = st.tuples(texts, st.one_of(st.none(), texts))  # (text, context)


def index_terms(text: str, context: str | None) -> tuple[list[str], list[str]]:
    """What the store indexes: the text's terms and the context's (two fields)."""
    return analyze(text), analyze(context) if context else []


operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 24), documents),  # a new id, or an update
        st.tuples(st.just("remove"), st.integers(0, 24), st.none()),
    ),
    max_size=80,
)
queries = st.lists(
    st.tuples(texts.filter(bool), st.integers(1, 12),
              st.one_of(st.none(), st.sets(st.integers(0, 26), max_size=12))),
    min_size=1, max_size=6,
)


def assert_same_search(index: BM25Index, oracle: DictBM25, terms, k, allowed) -> None:
    got = index.search(terms, k, allowed)
    ids, scores, mean, std, count = oracle.search(terms, k, allowed)
    assert got.ids == ids
    assert got.scores == pytest.approx(scores, abs=TOLERANCE)
    assert (got.mean, got.std, got.count) == pytest.approx((mean, std, count), abs=TOLERANCE)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations, queries, st.sampled_from([(1.2, 0.75, 0.5, 0.75), (2.0, 0.0, 1.0, 1.0),
                                             (0.5, 1.0, 0.0, 0.3), (0.0, 0.3, 2.0, 0.0)]))
@pytest.mark.parametrize("scorer", [PURE_SCORER, NumpyScorer()], ids=["pure", "numpy"])
def test_array_postings_score_like_the_dict_postings(scorer, ops, asked, params):
    k1, b, weight, context_b = params
    index = BM25Index(k1=k1, b=b, context_weight=weight, context_b=context_b, scorer=scorer)
    oracle = DictBM25(k1, b, weight, context_b)
    index.renumber_floor = 3  # renumber early, so histories of a few dozen writes reach it
    for op, n, doc in ops:
        if op == "add":
            terms = index_terms(*doc)
            index.add(f"d{n}", *terms)
            oracle.add(f"d{n}", *terms)
        else:
            index.remove(f"d{n}")
            oracle.remove(f"d{n}")
        assert len(index) == len(oracle.doc_length)
    for text, k, allowed_numbers in asked:
        terms = analyze(text)
        allowed = None if allowed_numbers is None else {f"d{n}" for n in allowed_numbers}
        assert_same_search(index, oracle, terms, k, allowed)
        ids = [f"d{n}" for n in range(27)]  # live, removed and never added
        assert index.scores(terms, ids) == pytest.approx(oracle.scores(terms, ids),
                                                         abs=TOLERANCE)
        for term in set(terms):
            assert index.idf(term) == pytest.approx(oracle.idf(term))
    assert index.term_count == len(oracle.postings)
    for doc_id, counts in oracle.doc_terms.items():
        assert index.term_frequencies(doc_id) == counts
        assert index.document_length(doc_id) == oracle.doc_length[doc_id]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations, queries, st.sampled_from([(1.2, 0.75, 0.5, 0.75), (0.0, 0.3, 2.0, 0.0)]))
def test_the_numpy_scorer_gives_the_pure_scorers_doubles(ops, asked, params):
    """CPython's default scorer (``kernels/numpy_bm25.py``) evaluates the formula in the
    same order: the same scores to the bit, the same ids at every k (ties by id)."""
    k1, b, weight, context_b = params
    pure = BM25Index(k1=k1, b=b, context_weight=weight, context_b=context_b)
    fast = BM25Index(k1=k1, b=b, context_weight=weight, context_b=context_b,
                     scorer=NumpyScorer())
    for index in (pure, fast):
        index.renumber_floor = 3
    for op, n, doc in ops:
        for index in (pure, fast):
            if op == "add":
                index.add(f"d{n}", *index_terms(*doc))
            else:
                index.remove(f"d{n}")
    for text, k, allowed_numbers in asked:
        terms = analyze(text)
        allowed = None if allowed_numbers is None else {f"d{n}" for n in allowed_numbers}
        want, got = pure.search(terms, k, allowed), fast.search(terms, k, allowed)
        assert (got.ids, got.scores, got.count) == (want.ids, want.scores, want.count)
        assert (got.mean, got.std) == pytest.approx((want.mean, want.std), rel=1e-12,
                                                    abs=1e-12)
        ids = [f"d{n}" for n in range(27)]
        assert fast.scores(terms, ids) == pure.scores(terms, ids)


def test_the_engine_scores_with_numpy_under_cpython():
    engine = MemoryEngine(HashingEmbedder())
    assert isinstance(engine.bm25_scorer, NumpyScorer)
    engine.remember("alice", "Alice loves green tea")
    assert engine.recall("alice", "green tea", mode="fulltext", k=1)[0].memory.text == (
        "Alice loves green tea")


def test_removed_documents_do_not_grow_the_postings_for_ever():
    rng = random.Random(5)
    index = BM25Index()
    index.renumber_floor = 16
    for round_ in range(40):  # every document rewritten 40 times
        for n in range(50):
            index.add(f"d{n}", [rng.choice(WORDS) for _ in range(rng.randint(1, 6))])
        assert len(index._id_at) <= 2 * len(index) + index.renumber_floor + 1, round_
    stored = sum(len(p) for p in index._postings) // STRIDE
    live = sum(len(index.term_frequencies(f"d{n}")) for n in range(50))
    assert stored <= live + (len(index) + index.renumber_floor + 1) * 6  # <= 6 terms a doc


def test_exact_ties_are_broken_by_id_at_the_kth_place():
    index, oracle = BM25Index(), DictBM25()
    for n in (7, 3, 9, 1, 5):  # the same text: the same score, ids out of order
        index.add(f"d{n}", ["tea", "cat"])
        oracle.add(f"d{n}", ["tea", "cat"])
    index.add("other", ["river"])
    oracle.add("other", ["river"])
    for k in range(1, 7):
        assert index.search(["tea"], k).ids == oracle.search(["tea"], k)[0] == \
            ["d1", "d3", "d5", "d7", "d9"][:k]


# -- the engine keeps the postings right through its writes ---------------------------------


def assert_index_matches_the_records(engine: MemoryEngine, character: str) -> None:
    """The store's index answers like an oracle built from its live records now."""
    store = engine.stores[character]
    index = store.text_index
    oracle = DictBM25(index.k1, index.b, index.context_weight, index.context_b)
    for memory in store.records.values():
        oracle.add(memory.id, *store.index_terms(memory))
    for text in ["tea violin", "東京 緑茶", "river cat chess", "満員電車 osaka", "fuji"]:
        terms = analyze(text)
        assert_same_search(store.text_index, oracle, terms, 10, None)
        assert_same_search(store.text_index, oracle, terms, 5, set(list(store.records)[::2]))


def test_engine_writes_keep_the_postings_right():
    rng = random.Random(11)
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)

    def text() -> str:
        return " ".join(rng.choice(WORDS + PHRASES) for _ in range(rng.randint(1, 6)))

    memories = engine.remember_many("mika", [{"text": text(), "context": text()}
                                             if i % 3 == 0 else text() for i in range(120)])
    ids = [m.id for m in memories]
    assert_index_matches_the_records(engine, "mika")
    for memory_id in ids[:30]:
        engine.update("mika", memory_id, text=text())
    for memory_id in ids[30:40]:
        engine.update("mika", memory_id, context=text())
    for memory_id in ids[40:70]:
        engine.forget("mika", memory_id)
    assert_index_matches_the_records(engine, "mika")
    for memory_id in ids[40:50]:
        engine.restore("mika", memory_id)
    engine.purge_trash("mika")
    assert_index_matches_the_records(engine, "mika")
    engine.revectorize(None, HashingEmbedder(16, seed=3), batch_size=16)
    assert_index_matches_the_records(engine, "mika")
    hits = engine.recall("mika", "tea 緑茶", k=10, mode="fulltext", touch=False)
    store = engine.stores["mika"]
    assert [h.memory.id for h in hits] == \
        store.text_index.search(analyze("tea 緑茶"), 10).ids[:len(hits)]


def test_a_bulk_loaded_store_answers_completely_before_and_during_its_lazy_build():
    rng = random.Random(12)
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [" ".join(rng.choice(WORDS + PHRASES) for _ in range(4))
                                  for _ in range(300)])
    full = source.stores["mika"]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    store = engine.new_store("mika", stamp=full.stamp, model_id=full.model_id,
                             dimension=full.dimension)
    kernel = PureKernel(full.dimension)
    records = list(full.records.values())
    kernel.add([m.id for m in records], [full.kernel.vector(m.id) for m in records])
    store.adopt(kernel, PureKernel(full.dimension), records, [])
    engine.stores["mika"] = store
    assert store.index_text(100) == 200  # part of the texts analyzed, as after a boot step
    for text in ["tea violin", "東京 緑茶", "river cat"]:
        terms = analyze(text)
        want = full.text_index.search(terms, 10)
        got = store.text_index.search(terms, 10)  # completes the index first
        assert (got.ids, got.scores) == (want.ids, want.scores)
