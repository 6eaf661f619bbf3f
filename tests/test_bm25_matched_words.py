"""``BM25Index.matched_words``: how many of a query's words a memory holds (the relevance
cut-off's evidence for Japanese and mixed queries), against a set-based oracle, through
adds, re-adds and removals, with ``analyzer.query_words`` grouping real analyzed text."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine.analyzer import analyze, query_words
from omoide.engine.bm25 import BM25Index

# A small alphabet of kanji, katakana, hiragana and Latin pieces, so that random texts share
# words, chains and junctions often.
PIECES = ["原子", "質量", "単位", "データ", "ベース", "の", "は", "を", "する", "方法", "linux",
          "probe", "カーネル", "東京", "都", " ", "、"]
texts = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)


def held_words(words: list[tuple[str, ...]], terms: set[str]) -> int:
    """The oracle: a one-term word is held with its term, a chain with two adjacent terms."""
    count = 0
    for word in words:
        if len(word) == 1:
            count += word[0] in terms
        else:
            count += any(a in terms and b in terms for a, b in pairwise(word))
    return count


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), texts, st.sets(st.integers(0, 5)))
def test_matched_words_counts_the_words_each_document_holds(docs, query, removed):
    index = BM25Index()
    ids = [f"d{n}" for n in range(len(docs))]
    for doc_id, text in zip(ids, docs, strict=True):
        index.add(doc_id, analyze(text))
    index.add(ids[0], analyze(docs[-1]))  # a re-add replaces the terms
    live = {doc_id: set(analyze(text)) for doc_id, text in zip(ids, docs, strict=True)}
    live[ids[0]] = set(analyze(docs[-1]))
    for n in removed:
        if n < len(ids):
            index.remove(ids[n])
            live.pop(ids[n], None)
    words = query_words(analyze(query))
    asked = [*ids, "unknown"]
    got = index.matched_words(words, asked)
    assert got == [held_words(words, live.get(doc_id, set())) for doc_id in asked]
    assert all(0 <= n <= len(words) for n in got)


@given(texts)
def test_a_document_holding_the_query_holds_every_word(text):
    index = BM25Index()
    index.add("same", analyze(text))
    words = query_words(analyze(text))
    assert index.matched_words(words, ["same"]) == [len(words)]


@given(texts, texts, texts)
def test_more_text_never_holds_fewer_words(query, doc, extra):
    index = BM25Index()
    index.add("short", analyze(doc))
    index.add("long", analyze(doc + "。" + extra))
    short, long = index.matched_words(query_words(analyze(query)), ["short", "long"])
    assert short <= long


def test_one_bigram_inside_a_longer_word_is_not_the_word():
    index = BM25Index()
    index.add("maine", analyze("メイン州の空港"))
    index.add("minecraft", analyze("マインクラフトのサーバー"))
    words = query_words(analyze("マインクラフト"))
    assert index.matched_words(words, ["maine", "minecraft"]) == [0, 1]
