"""Sentence evidence (``engine/sentences.py``): a memory of several sentences is also scored
by its best sentence; one-sentence memories and memories with an index context keep BM25."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import BM25Index
from omoide.engine.memory import Memory
from omoide.engine.sentences import (
    best_sentence_score,
    sentence_terms,
    split_sentences,
    with_sentence_evidence,
)
from omoide.kernels.pure_kernel import PureKernel
from tests.test_engine_embedder import HashingEmbedder

WORDS = ["apple", "river", "castle", "moon", "violin", "garden", "train", "paper"]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


def test_sentences_end_at_japanese_and_latin_stops_and_line_breaks():
    assert split_sentences("東京に行った。雨だった！本当？ はい") == [
        "東京に行った。", "雨だった！", "本当？", " はい"]
    assert split_sentences("Mr. Smith came. He left; it rained\nthen 3.5 cm fell") == [
        "Mr.", "Smith came.", "He left;", "it rained", "then 3.5 cm fell"]
    assert split_sentences("one sentence only") == ["one sentence only"]
    assert split_sentences("  \n\n ") == []


def _memory(text: str, context: str | None = None) -> Memory:
    return Memory(id="m", character_id="c", text=text, kind="fact", type="", key=None,
                  importance=0.5, created_at=0.0, updated_at=0.0, context=context)


def test_the_best_sentence_is_scored_as_bm25_without_length_normalization():
    index = BM25Index()
    for n, text in enumerate(["apple river", "castle moon", "apple apple garden", "paper"]):
        index.add(f"d{n}", analyze(text))
    k1 = index.k1
    sentences = [Counter(["apple", "apple", "moon"]), Counter(["river"])]
    expected = max(index.idf("apple") * 2 * (k1 + 1) / (2 + k1)
                   + index.idf("moon") * 1 * (k1 + 1) / (1 + k1),
                   index.idf("river") * (k1 + 1) / (1 + k1))
    assert best_sentence_score(index, ["apple", "moon", "river"], None, sentences) == \
        pytest.approx(expected)
    weighted = best_sentence_score(index, ["apple", "moon"], {"apple": 0.0}, sentences)
    assert weighted == pytest.approx(index.idf("moon") * (k1 + 1) / (1 + k1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(sentence, min_size=1, max_size=4), min_size=1, max_size=6),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), st.booleans())
def test_only_a_memory_of_several_sentences_without_context_is_rescored(bodies, asked,
                                                                       with_context):
    index = BM25Index()
    texts = [". ".join(body) for body in bodies]
    for n, text in enumerate(texts):
        index.add(f"d{n}", analyze(text))
    terms = analyze(" ".join(asked))
    ids = [f"d{n}" for n in range(len(texts))]
    scores = index.scores(terms, ids)
    memories = [_memory(t, "the river bank" if with_context else None) for t in texts]
    got = with_sentence_evidence(index, analyze, terms, None, memories, scores)
    for body, text, score, value in zip(bodies, texts, scores, got, strict=True):
        if with_context or len(body) == 1 or score == 0.0:
            assert value == score
        else:
            best = best_sentence_score(index, terms, None, sentence_terms(analyze, text))
            assert value == pytest.approx((score + best) / 2)


def test_recall_prefers_the_paragraph_whose_sentence_holds_the_question():
    # Both paragraphs hold the same words the same number of times, so their BM25 is equal;
    # only one says them together, in one sentence.
    together = "Violin built Cremona. Garden river. Rain fell."
    apart = "Violin garden. Built river. Cremona rain fell."
    engine = MemoryEngine(HashingEmbedder(32), kernel=PureKernel)
    # ``apart`` first: it wins ties (ids are time-ordered), so only the evidence can lift
    # ``together`` above it
    engine.remember_many("c", [apart, together] + [f"note {w} {n}" for n in range(3)
                                                     for w in WORDS])
    index = engine.stores["c"].text_index
    ids = {m.text: i for i, m in engine.stores["c"].records.items()}
    terms = analyze("violin built Cremona")
    bm25 = index.scores(terms, [ids[together], ids[apart]])
    assert bm25[0] == pytest.approx(bm25[1])
    for mode in ("fulltext", "hybrid"):
        hits = engine.recall("c", "violin built Cremona", mode=mode, min_relevance=0,
                             touch=False)
        assert hits[0].memory.text == together, mode
