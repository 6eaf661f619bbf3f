import itertools
import math

import pytest

from omoide.engine import MemoryEngine
from omoide.engine.memory import KIND_TYPES
from omoide.errors import OmoideError
from omoide.kernels import PureKernel
from tests.test_engine_embedder import HashingEmbedder, NumpyRowsEmbedder


def ticking_clock(start=1_700_000_000.0):
    counter = itertools.count()
    return lambda: start + next(counter)


@pytest.fixture
def engine():
    return MemoryEngine(HashingEmbedder(32), clock=ticking_clock())


def code_of(call) -> str:
    with pytest.raises(OmoideError) as info:
        call()
    return info.value.code


def test_remember_fills_every_field(engine):
    m = engine.remember("alice", "I prefer TypeScript", kind="preference", importance=0.9,
                        key="preference:typescript", meta={"source": "chat"})
    assert m.character_id == "alice" and m.kind == "preference" and m.type == "factual"
    assert m.importance == 0.9 and m.key == "preference:typescript"
    assert m.created_at == m.updated_at == 1_700_000_000.0
    assert m.last_recalled_at is None and m.recall_count == 0
    assert m.model == engine.embedder.stamp and m.meta == {"source": "chat"}
    assert engine.get("alice", m.id) == m
    assert engine.find_by_key("alice", "preference:typescript") == [m]


def test_kind_determines_type():
    assert KIND_TYPES["decision"] == "episodic" and KIND_TYPES["pattern"] == "factual"
    e = MemoryEngine(HashingEmbedder(8))
    assert e.remember("a", "we chose Postgres", kind="decision").type == "episodic"


def test_ids_are_unique_and_sortable_by_creation(engine):
    memories = [engine.remember("alice", f"note {i}") for i in range(50)]
    ids = [m.id for m in memories]
    assert len(set(ids)) == 50 and all(len(i) == 26 for i in ids)
    assert ids == sorted(ids)  # the clock ticks one second per call


def test_explicit_time_is_kept(engine):
    from datetime import UTC, datetime

    m = engine.remember("alice", "old diary", kind="diary", at=datetime(2020, 1, 1, tzinfo=UTC))
    assert m.created_at == datetime(2020, 1, 1, tzinfo=UTC).timestamp()


def test_a_datetime_before_1970_is_refused_naming_the_field(engine):
    # a naive datetime of year 1 (or one that no local time can read) raised the ValueError
    # of datetime.timestamp() instead of the refusal that names `at` / `now`
    from datetime import datetime

    assert code_of(lambda: engine.remember("alice", "x", at=datetime(1, 1, 1))) == (
        "INVALID_ARGUMENT")
    assert code_of(lambda: engine.remember_many("alice", [{"text": "x",
                                                           "at": datetime(1, 1, 1)}])) == (
        "INVALID_ARGUMENT")
    engine.remember("alice", "fine")
    assert code_of(lambda: engine.recall("alice", "x", now=datetime(1, 1, 1))) == (
        "INVALID_ARGUMENT")
    assert [m.text for m in engine.memories("alice")] == ["fine"]


def test_remember_many_embeds_in_one_call(engine):
    memories = engine.remember_many(
        "alice", ["one", {"text": "two", "kind": "diary"}, {"text": "three", "importance": 1}]
    )
    assert [m.text for m in memories] == ["one", "two", "three"]
    assert engine.embedder.calls == [("passage", 3)]
    assert engine.stats("alice")["memories"] == 3


def test_remember_many_validates_everything_before_writing(engine):
    assert code_of(lambda: engine.remember_many("alice", ["fine", ""])) == "EMPTY_TEXT"
    assert engine.characters() == []  # nothing written, no character created
    assert code_of(lambda: engine.remember_many("alice", [{"txt": "x"}])) == "INVALID_ARGUMENT"
    assert code_of(lambda: engine.remember_many("a", [{"text": "x", "bad": 1}])) == (
        "INVALID_ARGUMENT"
    )
    assert engine.remember_many("alice", []) == []


@pytest.mark.parametrize(
    "kwargs,code",
    [
        ({"text": ""}, "EMPTY_TEXT"),
        ({"text": "   \n"}, "EMPTY_TEXT"),
        ({"text": "x" * 8001}, "TEXT_TOO_LONG"),
        ({"text": "ok", "kind": "gossip"}, "INVALID_ARGUMENT"),
        ({"text": "ok", "importance": 1.5}, "INVALID_ARGUMENT"),
        ({"text": "ok", "importance": True}, "INVALID_ARGUMENT"),
        ({"text": "ok", "at": "yesterday"}, "INVALID_ARGUMENT"),
        ({"text": "ok", "meta": ["x"]}, "INVALID_ARGUMENT"),
        ({"text": "ok", "key": " "}, "INVALID_ARGUMENT"),
    ],
)
def test_validation_errors(engine, kwargs, code):
    assert code_of(lambda: engine.remember("alice", **kwargs)) == code


@pytest.mark.parametrize("character", ["", " alice", "a\nb", "x" * 129, 42, None])
def test_invalid_character_ids(engine, character):
    assert code_of(lambda: engine.remember(character, "hi")) == "INVALID_CHARACTER_ID"


def test_text_limit_is_configurable():
    e = MemoryEngine(HashingEmbedder(8), max_text_length=10)
    e.remember("a", "x" * 10)
    err = pytest.raises(OmoideError, e.remember, "a", "x" * 11).value
    assert err.code == "TEXT_TOO_LONG" and err.fields == {"length": 11, "limit": 10}


def test_numpy_array_embedder_output_is_accepted_by_both_kernels():
    for kernel in (None, PureKernel):
        e = MemoryEngine(NumpyRowsEmbedder(16), kernel=kernel)
        e.remember_many("a", ["green tea", "black coffee"])
        assert e.recall("a", "green tea", mode="vector", k=1)[0].memory.text == "green tea"


class WrongDimensionEmbedder(HashingEmbedder):
    def embed_passages(self, texts):
        return [v[:-1] for v in super().embed_passages(texts)]


def test_embedder_returning_wrong_dimension_is_rejected():
    e = MemoryEngine(WrongDimensionEmbedder(8))
    assert code_of(lambda: e.remember("a", "hi")) == "DIMENSION_MISMATCH"
    assert e.stats("a")["memories"] == 0


class NaNQueryEmbedder(HashingEmbedder):
    def embed_queries(self, texts):
        return [[math.nan] * self.dimension for _ in texts]


class InfinitePassageEmbedder(HashingEmbedder):
    def embed_passages(self, texts):
        return [[math.inf] + v[1:] for v in super().embed_passages(texts)]


def test_embedder_returning_nan_or_infinity_is_refused():
    e = MemoryEngine(NaNQueryEmbedder(8))
    e.remember("a", "green tea")
    for mode in ("vector", "hybrid"):  # every cosine and relevance was NaN
        assert code_of(lambda m=mode: e.recall("a", "tea", mode=m)) == "EMBEDDING_FAILED"
    assert e.recall("a", "tea", mode="fulltext")[0].memory.text == "green tea"
    bad = MemoryEngine(InfinitePassageEmbedder(8))
    assert code_of(lambda: bad.remember("a", "hi")) == "EMBEDDING_FAILED"
    assert bad.stats("a")["memories"] == 0


def test_update_reembeds_only_when_text_changes(engine):
    m = engine.remember("alice", "likes tea")
    calls = len(engine.embedder.calls)
    same = engine.update("alice", m.id, importance=0.8, kind="preference", key="k")
    assert len(engine.embedder.calls) == calls
    assert same.importance == 0.8 and same.type == "factual" and same.updated_at > m.updated_at
    changed = engine.update("alice", m.id, text="likes coffee")
    assert engine.embedder.calls[-1] == ("passage", 1)
    assert engine.recall("alice", "coffee", mode="fulltext")[0].memory.id == m.id
    assert engine.recall("alice", "tea", mode="fulltext") == []
    assert changed.created_at == m.created_at
    assert engine.find_by_key("alice", "k")[0].id == m.id
    engine.update("alice", m.id, key=None)
    assert engine.find_by_key("alice", "k") == []


def test_update_and_get_errors(engine):
    engine.remember("alice", "x")
    assert code_of(lambda: engine.update("alice", "nope", text="y")) == "UNKNOWN_MEMORY"
    assert code_of(lambda: engine.get("alice", "nope")) == "UNKNOWN_MEMORY"
    assert code_of(lambda: engine.get("bob", "nope")) == "UNKNOWN_CHARACTER"
    assert code_of(lambda: engine.stats("bob")) == "UNKNOWN_CHARACTER"


def test_characters_and_stats(engine):
    engine.remember_many("bob", [{"text": "a", "kind": "diary"}, "b"])
    engine.remember("alice", "c")
    assert engine.characters() == ["alice", "bob"]
    stats = engine.stats("bob")
    assert stats["memories"] == 2 and stats["by_kind"] == {"diary": 1, "fact": 1}
    assert stats["model"] == engine.embedder.stamp and stats["model_mismatch"] is False
    assert [m.text for m in engine.memories("bob")] == ["a", "b"]
