"""Query-term weighting in the full-text ranking: a junction bigram of a Japanese query (one
across scripts, 子の, る方: half word, half particle or ending) counts half
(``analyzer.query_weights``, ``BM25Index.search(..., weights)``); English is unaffected."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.analyzer import JUNCTION_WEIGHT, analyze, is_junction, query_weights
from omoide.engine.bm25 import BM25Index
from omoide.kernels.pure_kernel import PureKernel
from tests.test_bm25_postings import texts
from tests.test_engine_embedder import HashingEmbedder


def test_junctions_are_the_bigrams_across_scripts():
    terms = analyze("原子の質量はデータ本体")
    assert [t for t in terms if is_junction(t)] == ["子の", "の質", "量は", "はデ", "タ本"]
    assert query_weights(terms) == {t: JUNCTION_WEIGHT for t in
                                    ["子の", "の質", "量は", "はデ", "タ本"]}
    assert query_weights(analyze("Mel painted a lake in May 2023")) == {}
    assert query_weights(analyze("東京 データベース ありがとう")) == {}  # one script each


def test_question_terms_count_nothing_unless_the_query_has_nothing_else():
    assert query_weights(analyze("What did you paint in May 2023?")) == {
        "what": 0.0, "did": 0.0, "you": 0.0}
    assert query_weights(analyze("What did you do?")) == {}  # nothing else: kept
    weights = query_weights(analyze("東京タワーは何年に建った"))
    assert weights["何年"] == 0.0 and weights["は何"] == 0.0
    assert weights["ーは"] == JUNCTION_WEIGHT and "東京" not in weights


def test_recall_ranks_the_named_thing_above_a_question_turn():
    engine = MemoryEngine(HashingEmbedder(32), kernel=PureKernel)
    engine.remember_many("mel", [
        "Caroline: What did you do? What did you see?",  # shares only question words
        "Melanie: I paint the lake at sunrise",
        "Melanie: The weather was fine",
    ])
    hits = engine.recall("mel", "What did Melanie paint?", mode="fulltext", min_relevance=0,
                         touch=False)
    assert [h.memory.text for h in hits][:1] == ["Melanie: I paint the lake at sunrise"]


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, min_size=1, max_size=20), texts.filter(bool), st.floats(0.0, 3.0))
def test_a_weight_scales_the_terms_contribution(bodies, asked, weight):
    index = BM25Index()
    for n, body in enumerate(bodies):
        index.add(f"d{n}", analyze(body))
    terms = analyze(asked)
    ids = [f"d{n}" for n in range(len(bodies))]
    target = terms[0]
    rest = [t for t in dict.fromkeys(terms) if t != target]
    alone = index.scores([target], ids)
    others = index.scores(rest, ids) if rest else [0.0] * len(ids)
    got = index.scores(terms, ids, {target: weight})
    assert got == pytest.approx([weight * a + o for a, o in zip(alone, others, strict=True)],
                                abs=1e-9)
    searched = index.search(terms, len(ids), weights={target: weight})
    assert dict(zip(searched.ids, searched.scores, strict=True)) == pytest.approx(
        {i: s for i, s in zip(ids, got, strict=True) if s > 0}, abs=1e-9)


def test_recall_ranks_a_shared_word_above_shared_particles():
    engine = MemoryEngine(HashingEmbedder(32), kernel=PureKernel)
    engine.remember_many("mika", [
        "中性子の質量を測定した",  # shares the word 質量 (and the junction 子の)
        "電子の電荷と陽子の数と原子の軌道",  # shares junctions (子の) many times, no content word
        "今日は雨",
    ])
    hits = engine.recall("mika", "中性子の質量は", mode="fulltext", min_relevance=0,
                         touch=False)
    assert hits[0].memory.text == "中性子の質量を測定した"
    junction_only = engine.stores["mika"].text_index
    ids = [h.memory.id for h in hits]
    weighted = junction_only.scores(["子の"], ids, {"子の": JUNCTION_WEIGHT})
    plain = junction_only.scores(["子の"], ids)
    assert weighted == pytest.approx([JUNCTION_WEIGHT * s for s in plain])


def test_a_weight_too_small_to_count_leaves_its_term_out():
    # a weight whose product with the idf is 0 (5e-324) is a weight of 0: no document comes
    # back scoring exactly 0 through that term (hypothesis found it in the test above)
    index = BM25Index()
    for n, body in enumerate(["tea violin", "tea", "rain"]):
        index.add(f"d{n}", analyze(body))
    found = index.search(analyze("tea violin"), 3, weights={"tea": 5e-324})
    assert found.ids == ["d0"] and found.scores[0] > 0
