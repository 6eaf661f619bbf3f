import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder

NOTES = [
    ("I prefer TypeScript over JavaScript", "preference"),
    ("We decided to use Postgres for this project", "decision"),
    ("She always commits before pushing", "pattern"),
    ("東京都に住んでいます", "fact"),
    ("今日は寿司を食べました", "diary"),
    ("The cat sleeps on the red sofa", "fact"),
]


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(128))
    e.remember_many("alice", [{"text": t, "kind": k} for t, k in NOTES])
    return e


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fulltext"])
def test_each_mode_finds_the_obvious_memory(engine, mode):
    hits = engine.recall("alice", "TypeScript or JavaScript", mode=mode, k=3)
    assert hits[0].memory.text.startswith("I prefer TypeScript")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_japanese_fulltext_uses_bigrams(engine):
    hits = engine.recall("alice", "寿司", mode="fulltext")
    assert [h.memory.text for h in hits] == ["今日は寿司を食べました"]


def test_components_per_mode(engine):
    v = engine.recall("alice", "Postgres", mode="vector", k=2)[0]
    assert v.score == v.vector_cosine and v.bm25 is None and v.vector_rank == 1
    assert v.fulltext_rank is None
    f = engine.recall("alice", "Postgres", mode="fulltext")[0]
    assert f.score == f.bm25 and f.vector_cosine is None and f.fulltext_rank == 1
    h = engine.recall("alice", "Postgres", mode="hybrid")[0]
    assert h.vector_cosine == pytest.approx(v.vector_cosine, abs=1e-6)
    assert h.bm25 == pytest.approx(f.bm25) and h.fulltext_rank == 1 and h.vector_rank == 1


def test_hybrid_gives_every_candidate_both_components(engine):
    for hit in engine.recall("alice", "sushi 寿司 cat", mode="hybrid"):
        assert hit.vector_cosine is not None and hit.bm25 is not None


def test_k_limits_and_unknown_character_is_empty(engine):
    assert len(engine.recall("alice", "the", mode="vector", k=2, min_relevance=0)) == 2
    assert engine.recall("nobody", "anything") == []


def test_vector_threshold_is_a_cosine_floor(engine):
    all_hits = engine.recall("alice", "TypeScript", mode="vector", k=6, touch=False,
                             min_relevance=0)
    floor = (all_hits[0].score + all_hits[1].score) / 2
    kept = engine.recall("alice", "TypeScript", mode="vector", k=6, threshold=floor,
                         min_relevance=0)
    assert [h.memory.id for h in kept] == [all_hits[0].memory.id]


def test_hybrid_threshold_applies_to_the_cosine_component(engine):
    floor = 0.3
    hits = engine.recall("alice", "TypeScript 寿司", mode="hybrid", k=6, threshold=floor)
    assert hits and all(h.vector_cosine >= floor for h in hits)
    unfiltered = engine.recall("alice", "TypeScript 寿司", mode="hybrid", k=6, min_relevance=0)
    assert any(h.vector_cosine < floor for h in unfiltered)  # the floor really removed some


def test_fulltext_threshold_is_a_minimum_bm25(engine):
    hits = engine.recall("alice", "Postgres project cat", mode="fulltext", k=6)
    cut = hits[0].bm25 - 1e-9
    assert len(engine.recall("alice", "Postgres project cat", mode="fulltext", threshold=cut)) == 1
    assert engine.recall("alice", "Postgres", mode="fulltext", threshold=5.0 + hits[0].bm25) == []


def test_kinds_filter_in_all_modes(engine):
    for mode in ("hybrid", "vector", "fulltext"):
        hits = engine.recall("alice", "TypeScript Postgres 寿司", mode=mode, kinds=["diary"],
                             min_relevance=0)
        assert hits and {h.memory.kind for h in hits} == {"diary"}
    assert engine.recall("alice", "x", kinds="summary") == []


def test_recall_counts_touches_unless_disabled(engine):
    first = engine.recall("alice", "Postgres", mode="fulltext")[0]
    assert first.memory.recall_count == 1 and first.memory.last_recalled_at is not None
    engine.recall("alice", "Postgres", mode="fulltext", touch=False)
    assert engine.get("alice", first.memory.id).recall_count == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0}, {"k": 1001}, {"k": 2.5}, {"mode": "semantic"}, {"threshold": 1.5},
        {"threshold": -0.1}, {"mode": "fulltext", "threshold": -1}, {"rrf_k": 0},
        {"kinds": ["gossip"]}, {"fusion": "max"},
    ],
)
def test_invalid_recall_arguments(engine, kwargs):
    with pytest.raises(OmoideError) as info:
        engine.recall("alice", "x", **kwargs)
    assert info.value.code == "INVALID_ARGUMENT"


def test_empty_query_is_rejected(engine):
    with pytest.raises(OmoideError) as info:
        engine.recall("alice", "  ")
    assert info.value.code == "INVALID_ARGUMENT" and "query" in str(info.value)


def test_rrf_option_scores_are_reciprocal_ranks(engine):
    hits = engine.recall("alice", "Postgres", fusion="rrf", rrf_k=10, touch=False)
    for h in hits:
        expected = sum(1 / (10 + r) for r in (h.vector_rank, h.fulltext_rank) if r is not None)
        assert h.score == pytest.approx(expected)


def test_a_clock_set_back_never_rewinds_when_a_memory_was_last_recalled():
    now = [1_800_000_000.0]
    engine = MemoryEngine(HashingEmbedder(), clock=lambda: now[0])
    memory = engine.remember("a", "Walked Pochi in the park")
    engine.recall("a", "Pochi park", k=1)
    now[0] -= 400 * 86_400  # a device's wrong date
    engine.recall("a", "Pochi park", k=1)
    assert engine.get("a", memory.id).last_recalled_at == 1_800_000_000.0


@pytest.mark.parametrize("kwargs", [{"mode": "vector"}, {"fusion": "rrf"}])
def test_equal_scores_rank_by_id_whatever_the_kernels_row_order(kwargs):
    # numpy's kernel moves its last row into a forgotten one's place: two memories of the
    # same vector swapped and the k=1 hit changed after an unrelated forget + restore
    engine = MemoryEngine(HashingEmbedder(32))
    other = engine.remember("alice", "the red sofa").id
    twins = sorted(m.id for m in engine.remember_many("alice", ["green tea", "green tea"]))

    def recalled():
        hits = engine.recall("alice", "green tea", k=2, touch=False, min_relevance=0, **kwargs)
        return [(h.memory.id, h.vector_rank) for h in hits]

    before = recalled()
    engine.forget("alice", other)
    engine.restore("alice", other)
    assert recalled() == before == [(twins[0], 1), (twins[1], 2)]
