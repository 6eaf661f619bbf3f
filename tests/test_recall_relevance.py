"""Recall relevance (engine/relevance.py): a score in [0, 1] on every hit, and the default
cut-off that answers an unrelated query with nothing while related queries keep their hits."""

import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import BM25Index
from omoide.engine.relevance import (
    DEFAULT_MIN_RELEVANCE,
    chance_level,
    content_terms,
    lexical_shares,
    relevance,
    vector_standout,
)
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder

TOPICS = ["tea", "rain", "piano", "garden", "train", "soup", "chess", "river", "kite", "snow",
          "bread", "violin", "lantern", "harbor", "cactus", "pottery", "falcon", "meadow",
          "castle", "comet"]
PLACES = ["Kyoto", "Lisbon", "Oslo", "Lima", "Hanoi", "Quito", "Tunis", "Perth"]


def diary(seed: int = 0) -> list[str]:
    """60 short diary lines about everyday topics (no two alike)."""
    rng = random.Random(seed)
    lines = []
    for n in range(60):
        topic, other = rng.sample(TOPICS, 2)
        lines.append(f"Day {n}: I talked about {topic} and {other} with Mika in "
                     f"{rng.choice(PLACES)}")
    return lines


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(256))
    e.remember_many("mika", [{"text": t, "kind": "diary"} for t in diary()])
    e.remember("mika", "Mika adopted a grey cat named Biscuit from the shelter")
    return e


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fulltext"])
def test_every_hit_carries_a_relevance_in_the_unit_interval(engine, mode):
    hits = engine.recall("mika", "grey cat Biscuit shelter", mode=mode, k=20, min_relevance=0)
    assert len(hits) == (1 if mode == "fulltext" else 20)  # full-text: only matching ones
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    assert hits[0].memory.text.startswith("Mika adopted")
    assert hits[0].relevance >= DEFAULT_MIN_RELEVANCE
    assert hits[0].relevance > max((h.relevance for h in hits[1:]), default=0.0)


def test_an_unrelated_query_returns_nothing_by_default(engine):
    for query in ["torque spec for cylinder head bolts", "量子色力学の格子ゲージ理論",
                  "zzzz unrelated qwerty"]:
        assert engine.recall("mika", query) == []
        weak = engine.recall("mika", query, min_relevance=0, touch=False)
        assert weak and all(h.relevance < DEFAULT_MIN_RELEVANCE for h in weak)


def test_related_queries_keep_every_hit_not_only_the_strong_ones(engine):
    hits = engine.recall("mika", "when did Mika adopt the cat", k=5)
    assert hits[0].memory.text.startswith("Mika adopted")
    assert len(hits) == 5  # the query matched: weaker hits come along, each with its score
    assert any(h.relevance < DEFAULT_MIN_RELEVANCE for h in hits[1:])


def test_min_relevance_is_the_callers_cut(engine):
    top = engine.recall("mika", "grey cat Biscuit", touch=False)[0]
    assert engine.recall("mika", "grey cat Biscuit", min_relevance=1.0, touch=False) == [] \
        or top.relevance == 1.0
    assert engine.recall("mika", "grey cat Biscuit", min_relevance=top.relevance,
                         touch=False)[0].memory.id == top.memory.id
    with pytest.raises(OmoideError) as info:
        engine.recall("mika", "cat", min_relevance=1.5)
    assert info.value.code == "INVALID_ARGUMENT" and "min_relevance" in str(info.value)


def test_no_good_match_touches_nothing(engine):
    before = {m.id: m.recall_count for m in engine.memories("mika")}
    assert engine.recall("mika", "zzzz unrelated qwerty") == []
    assert {m.id: m.recall_count for m in engine.memories("mika")} == before


def test_vector_standout_is_the_leave_one_out_z_beyond_chance():
    rng = np.random.default_rng(1)
    cosines = rng.normal(0.8, 0.03, 500)
    cosines[7] = 0.95
    standout = vector_standout(float(cosines[7]), float(cosines.mean()), float(cosines.std()),
                               len(cosines))
    others = np.delete(cosines, 7)
    expected = (cosines[7] - others.mean()) / others.std() - math.sqrt(2 * math.log(500))
    assert standout == pytest.approx(expected, rel=1e-6)
    assert vector_standout(0.9, 0.8, 0.0, 500) is None  # a flat population says nothing
    assert vector_standout(0.9, 0.8, 0.1, 2) is None  # nor does a population of two


def test_chance_level_grows_like_sqrt_two_log_n():
    assert chance_level(1) == 0.0
    assert chance_level(1000) == pytest.approx(math.sqrt(2 * math.log(1000)))


def test_coverage_is_the_idf_share_of_the_query_terms_present():
    index = BM25Index()
    index.add("a", ["green", "tea", "tea", "morning"])
    index.add("b", ["black", "coffee"])
    index.add("c", ["green", "garden"])
    cov = index.coverage(["green", "tea", "unknownword"], ["a", "b", "c", "missing"])
    idf = {t: index.idf(t) for t in ("green", "tea", "unknownword")}
    total = sum(idf.values())
    assert cov == pytest.approx([(idf["green"] + idf["tea"]) / total, 0.0,
                                 idf["green"] / total, 0.0])
    assert index.coverage([], ["a"]) is None


def test_question_words_do_not_count_as_content():
    assert content_terms(["what", "did", "mika", "adopt"]) == ["mika", "adopt"]
    assert content_terms(["音速", "どれ", "れく", "くら"]) == ["音速"]  # hiragana: grammar


def test_a_lone_bigram_inside_a_longer_japanese_word_is_chance():
    index = BM25Index()
    index.add("minecraft", analyze("マインクラフトのサーバー"))
    index.add("maine", analyze("メイン州の空港"))  # shares only イン with マインクラフト
    index.add("filler", analyze("東京都の天気"))
    query = analyze("マインクラフト")
    chained, lone, _ = index.coverage(query, ["minecraft", "maine", "filler"])
    assert chained == pytest.approx(1.0)
    assert lone == 0.0
    assert index.coverage(content_terms(analyze("東京")), ["filler"]) == [pytest.approx(1.0)]


def test_a_memory_holding_one_of_several_query_words_has_no_lexical_evidence():
    index = BM25Index()
    index.add("probe", ["space", "probe", "landed", "comet"])
    index.add("both", ["liveness", "probe", "failed"])
    index.add("filler", ["green", "tea"])
    query = ["kubernetes", "liveness", "probe"]
    one, two, none = lexical_shares(index, query, ["probe", "both", "filler"])
    assert (one, none) == (0.0, 0.0)
    assert two == pytest.approx(index.coverage(query, ["both"])[0]) and two > 0
    assert lexical_shares(index, ["probe"], ["probe"]) == [pytest.approx(1.0)]  # one-word query
    assert lexical_shares(index, [], ["probe"]) is None
    # Japanese: a shared run of 3+ characters is two bigrams, so it counts
    index.add("ja", analyze("データベースの設計"))
    assert lexical_shares(index, analyze("データベース移行"), ["ja"])[0] > 0


def test_one_shared_rare_word_no_longer_passes_the_default_cut(engine):
    engine.remember("mika", "The probe flew past the comet at dawn")
    query = "What does a Kubernetes liveness probe do?"
    assert engine.recall("mika", query, mode="fulltext") == []
    weak = engine.recall("mika", query, mode="fulltext", min_relevance=0, touch=False)
    assert weak and weak[0].memory.text.startswith("The probe")
    assert weak[0].relevance < DEFAULT_MIN_RELEVANCE
    hits = engine.recall("mika", "the probe and the comet", mode="fulltext", touch=False)
    assert hits and hits[0].memory.text.startswith("The probe")


WORDS = ["tea", "rain", "piano", "garden", "train", "soup", "chess", "river"]


@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=2,
                max_size=8),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
def test_lexical_shares_is_coverage_except_for_too_few_words(docs, query):
    index = BM25Index()
    ids = [f"d{n}" for n in range(len(docs))]
    for doc_id, terms in zip(ids, docs, strict=True):
        index.add(doc_id, terms)
    coverage = index.coverage(query, ids)
    for terms, share, full in zip(docs, lexical_shares(index, query, ids), coverage,
                                  strict=True):
        held = set(query) & set(terms)
        if len(held) == 1 and len(set(query)) >= 3:
            assert share == 0.0
        else:
            assert share == full


def test_japanese_question_bigrams_do_not_count_as_content():
    assert content_terms(analyze("西山朝は何年から")) == ["西山", "山朝", "朝は", "年か"]
    assert content_terms(analyze("誰が")) == []


def test_a_shared_katakana_word_is_one_word_however_long():
    index = BM25Index()
    index.add("db", analyze("データベースの正規化について"))
    index.add("filler", analyze("東京都の天気"))
    query = content_terms(analyze("MySQLのデータベースをSQLiteに移行する"))
    assert lexical_shares(index, query, ["db"]) == [0.0]  # one word of four
    query = content_terms(analyze("データベースの正規化"))  # two words, both held
    assert lexical_shares(index, query, ["db"])[0] > 0.5


def test_one_of_two_words_is_evidence():
    index = BM25Index()
    index.add("sutra", analyze("法華経成立史は法華経の成立を論じた本である"))
    index.add("filler", analyze("東京都の天気"))
    query = content_terms(analyze("法華経成立史の著者は"))
    assert lexical_shares(index, query, ["sutra"])[0] > 0


def test_a_query_of_grammar_bigrams_only_keeps_its_coverage():
    index = BM25Index()
    index.add("lotus", analyze("蓮の花の色は白い"))
    index.add("filler", analyze("東京都の天気"))
    query = content_terms(analyze("蓮の花の色は"))
    assert lexical_shares(index, query, ["lotus"]) == index.coverage(query, ["lotus"])


unit = st.floats(0, 1)
standouts = st.floats(-10, 10)


@given(standouts, standouts, unit)
def test_relevance_is_monotone_in_the_vector_evidence(a, b, coverage):
    low, high = sorted((a, b))
    assert relevance(low, coverage) <= relevance(high, coverage)


@given(unit, unit, st.one_of(st.none(), standouts))
def test_relevance_is_monotone_in_coverage_and_bounded(a, b, standout):
    low, high = sorted((a, b))
    assert 0.0 <= relevance(standout, low) <= relevance(standout, high) <= 1.0


@given(st.one_of(st.none(), standouts), st.one_of(st.none(), unit))
def test_missing_evidence_never_vetoes_the_other(standout, coverage):
    both = relevance(standout, coverage)
    assert both >= relevance(standout, None) - 1e-12
    assert both >= relevance(None, coverage) - 1e-12
    assert relevance(None, None) == 0.0


def test_a_small_store_gets_no_default_cut_but_still_a_relevance():
    e = MemoryEngine(HashingEmbedder(64))
    e.remember_many("new", ["green tea in the morning", "black coffee at work"])
    hits = e.recall("new", "zzzz unrelated qwerty", touch=False)
    assert hits and all(0.0 <= h.relevance < DEFAULT_MIN_RELEVANCE for h in hits)
    assert e.recall("new", "zzzz unrelated qwerty", min_relevance=0.5) == []
