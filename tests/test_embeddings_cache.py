"""LRU + TTL embedding cache: hits, misses, expiry, eviction, keys that can never go stale."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.embeddings.base import Embedder
from omoide.embeddings.cache import CachedEmbedder, EmbeddingCache
from omoide.engine.embedding import embed_query
from omoide.errors import OmoideError


class CountingEmbedder:
    """Deterministic vectors that depend on model, kind and text; records every call."""

    def __init__(self, model_id: str = "test/a", dtype: str = "q8") -> None:
        self.model_id, self.dtype, self.dimension = model_id, dtype, 3
        self.stamp = f"{model_id}@{dtype}#3"
        self.calls: list[tuple[str, list[str]]] = []

    def _vec(self, kind: str, t: str) -> list[float]:
        return [float(len(t)), float(kind == "query"), float(sum(map(ord, self.stamp)) % 97)]

    def embed_passages(self, texts):
        self.calls.append(("passage", list(texts)))
        return [self._vec("passage", t) for t in texts]

    def embed_queries(self, texts):
        self.calls.append(("query", list(texts)))
        return [self._vec("query", t) for t in texts]


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_defaults_and_protocol():
    c = CachedEmbedder(CountingEmbedder())
    assert isinstance(c, Embedder)
    assert (c.cache.max_entries, c.cache.ttl_seconds) == (1000, 300.0)
    assert (c.model_id, c.dtype, c.dimension, c.stamp) == ("test/a", "q8", 3, "test/a@q8#3")


def test_hits_return_identical_vectors_without_calling_the_model():
    inner = CountingEmbedder()
    c = CachedEmbedder(inner)
    first = c.embed_queries(["hello", "world"])
    second = c.embed_queries(["world", "hello"])
    assert second == [first[1], first[0]]
    assert inner.calls == [("query", ["hello", "world"])]
    assert (c.stats.hits, c.stats.misses) == (2, 2)


def test_one_inner_call_for_the_misses_of_a_batch_each_text_once():
    inner = CountingEmbedder()
    c = CachedEmbedder(inner)
    c.embed_passages(["a"])
    out = c.embed_passages(["a", "bb", "bb", "ccc"])
    assert inner.calls[-1] == ("passage", ["bb", "ccc"])
    assert [v[0] for v in out] == [1.0, 2.0, 2.0, 3.0]


def test_query_and_passage_are_different_keys():
    inner = CountingEmbedder()
    c = CachedEmbedder(inner)
    q = c.embed_queries(["same"])
    p = c.embed_passages(["same"])
    assert q != p and len(inner.calls) == 2


def test_a_shared_cache_never_returns_another_models_vector():
    shared = EmbeddingCache()
    a, b = CountingEmbedder("test/a"), CountingEmbedder("test/b")
    b_q8 = CountingEmbedder("test/a", dtype="fp32")
    va = CachedEmbedder(a, shared).embed_queries(["x"])
    vb = CachedEmbedder(b, shared).embed_queries(["x"])
    vc = CachedEmbedder(b_q8, shared).embed_queries(["x"])
    assert len(a.calls) == len(b.calls) == len(b_q8.calls) == 1
    assert va != vb and va != vc
    assert len(shared) == 3


def test_entries_expire_after_the_ttl():
    clock = Clock()
    inner = CountingEmbedder()
    c = CachedEmbedder(inner, EmbeddingCache(ttl_seconds=10, clock=clock))
    c.embed_queries(["t"])
    clock.t += 9.9
    c.embed_queries(["t"])
    assert len(inner.calls) == 1
    clock.t += 0.2  # 10.1 s after it was stored
    c.embed_queries(["t"])
    assert len(inner.calls) == 2
    assert c.stats.expirations == 1 and c.stats.hits == 1 and c.stats.misses == 2


def test_least_recently_used_is_evicted_first():
    inner = CountingEmbedder()
    c = CachedEmbedder(inner, EmbeddingCache(max_entries=2))
    c.embed_queries(["a", "b"])
    c.embed_queries(["a"])  # a is now more recent than b
    c.embed_queries(["c"])  # evicts b
    assert c.stats.evictions == 1 and len(c.cache) == 2
    n = len(inner.calls)
    c.embed_queries(["a", "c"])
    assert len(inner.calls) == n
    c.embed_queries(["b"])
    assert inner.calls[-1] == ("query", ["b"])


def test_mutating_a_result_does_not_corrupt_the_cache():
    c = CachedEmbedder(CountingEmbedder())
    v = c.embed_queries(["abc"])[0]
    v[0] = -1.0
    assert c.embed_queries(["abc"])[0][0] == 3.0


def test_invalid_settings_and_bad_inner_answers():
    with pytest.raises(OmoideError):
        EmbeddingCache(max_entries=0)
    with pytest.raises(OmoideError):
        EmbeddingCache(ttl_seconds=0)

    class Short(CountingEmbedder):
        def embed_queries(self, texts):
            return super().embed_queries(texts)[:-1]

    with pytest.raises(OmoideError) as e:
        CachedEmbedder(Short()).embed_queries(["a", "b"])
    assert e.value.code == "EMBEDDING_FAILED"
    with pytest.raises(TypeError):
        CachedEmbedder(CountingEmbedder()).embed_queries("a string")


class Recovering(CountingEmbedder):
    """A provider whose first answer is refused (``bad``: a NaN or a short row), then sound."""

    def __init__(self, bad: list[float]) -> None:
        super().__init__()
        self.bad: list[float] | None = bad

    def embed_queries(self, texts):
        rows = super().embed_queries(texts)
        if self.bad is not None:
            rows[0], self.bad = self.bad, None
        return rows


@pytest.mark.parametrize("bad, code", [
    ([float("nan"), 0.0, 1.0], "EMBEDDING_FAILED"),
    ([0.0, float("inf"), 1.0], "EMBEDDING_FAILED"),
    ([1.0, 0.0], "DIMENSION_MISMATCH"),
])
def test_a_refused_answer_is_never_cached(bad, code):
    """The cache kept the provider's answer before it was checked: a NaN row was refused
    (EMBEDDING_FAILED) and then served from the cache for the whole TTL after the provider
    had recovered. Only checked rows are kept; the next call asks the provider again."""
    inner = Recovering(bad)
    c = CachedEmbedder(inner)
    with pytest.raises(OmoideError) as e:
        embed_query(c, "tea")
    assert e.value.code == code
    assert len(c.cache) == 0
    assert embed_query(c, "tea") == inner._vec("query", "tea")
    assert len(inner.calls) == 2
    assert embed_query(c, "tea") == inner._vec("query", "tea") and len(inner.calls) == 2


finite_rows = st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=40)


@given(finite_rows)
def test_the_finite_check_answers_as_the_check_of_every_number(values):
    """``finite`` sums the row first (one C loop) and checks number by number only when the
    sum is not finite: it must answer exactly as the element-wise check, for lists and
    float32 arrays, NaN, infinities and sums past the float range included."""
    import math

    import numpy as np

    from omoide.embeddings.base import finite

    expected = all(map(math.isfinite, values))
    assert finite(values) is expected
    assert finite(np.array(values, dtype=np.float32)) is expected
    assert finite([*values, 1.7e308, 1.7e308]) is expected  # a sum past the range
