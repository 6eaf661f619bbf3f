"""Sentence evidence: a memory of several sentences is also scored by its best sentence.

BM25 scores a long memory (a paragraph) as one bag of words: a question whose words meet in
ONE sentence of a paragraph ("1870年7月19日より始まった戦争") scores no higher than a paragraph
of the same article that scatters the same words over five sentences, and length
normalization cannot tell them apart. So the full-text score of a memory whose text has more
than one sentence is the mean of its whole-text BM25 and the BM25 of its best sentence (the
sentence's own term frequencies, the index's idfs and query weights, the index's ``k1``; no
length normalization: a sentence is short, and it is the unit being compared)::

    text_score(d) = (bm25(d) + max_s sum_t idf(t) * w(t) * tf(t,s) * (k1 + 1) / (tf(t,s) + k1)) / 2

A memory of one sentence keeps its BM25 (its best sentence is itself). A memory with an index
context (a conversation turn) keeps its BM25F: its evidence beyond its own words is its
neighbourhood (the context field, the window votes), and a best sentence of the text alone
would drop the context field's share (measured on LoCoMo: all@10 -1 point with e5).

Cost: recall rescores only the head of its ranking (``SENTENCE_DEPTH``, at least 2 x k),
analyzing each such memory's text once; the analyzed sentences of the last ``CACHE_SIZE``
texts are kept (keyed by the analyzer and the exact text, so a changed text is a new entry,
never a stale one). Measured in BENCHMARKS.md (Recall v2, session 9).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omoide.engine.bm25 import BM25Index
    from omoide.engine.memory import Memory

SENTENCE_DEPTH = 20  # recall rescores at least this many of its best candidates (and 2 x k)
CACHE_SIZE = 4096  # analyzed texts kept
# a sentence ends at 。！？!? (any script), at . or ; followed by white space, or at a line break
_BOUNDARY = re.compile(r"(?<=[。！？!?])|(?<=[.;])\s+|\n+")
_STOP = re.compile(r"[。！？!?.;\n]")  # a text without any of these is one sentence


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (empty and white-space-only pieces dropped)."""
    return [s for s in _BOUNDARY.split(text) if s.strip()]


@lru_cache(maxsize=CACHE_SIZE)
def sentence_terms(analyzer: Callable[[str], list[str]], text: str) -> tuple[Counter, ...]:
    """The term frequencies of each sentence of ``text`` (one Counter per sentence)."""
    return tuple(Counter(analyzer(sentence)) for sentence in split_sentences(text))


def best_sentence_score(index: BM25Index, terms: Sequence[str],
                        weights: Mapping[str, float] | None,
                        sentences: Sequence[Counter]) -> float:
    """The BM25 score of the best of ``sentences`` (no length normalization)."""
    k1 = index.k1
    idfs = {}
    for term in dict.fromkeys(terms):
        weight = weights.get(term, 1.0) if weights else 1.0
        if weight > 0.0:
            idfs[term] = index.idf(term) * weight
    best = 0.0
    for tf in sentences:
        score = 0.0
        for term, idf in idfs.items():
            count = tf.get(term, 0)
            if count:
                score += idf * count * (k1 + 1.0) / (count + k1)
        best = max(best, score)
    return best


def with_sentence_evidence(index: BM25Index, analyzer: Callable[[str], list[str]],
                           terms: Sequence[str], weights: Mapping[str, float] | None,
                           memories: Sequence[Memory], scores: Sequence[float]) -> list[float]:
    """The full-text score of each memory (see the module doc) from its BM25 ``scores``:
    equal to ``scores`` when no memory is rescored (the caller's order then stands)."""
    if len(memories) != len(scores):
        raise ValueError("one score per memory")
    out = list(scores)
    for at, memory in enumerate(memories):
        # cheapest tests first: most memories have a context or are one sentence
        if memory.context or out[at] <= 0.0 or not _several_sentences(memory.text):
            continue
        best = best_sentence_score(index, terms, weights, sentence_terms(analyzer, memory.text))
        out[at] = (out[at] + best) / 2.0
    return out


def _several_sentences(text: str) -> bool:
    """Cheap test before any analysis: does ``text`` hold a sentence boundary inside it?
    (The split is several times dearer than the search, and most short memories have no
    stop at all.)"""
    return _STOP.search(text) is not None and len(split_sentences(text)) > 1
