"""Incremental BM25 inverted index over one character's memories.

``score(d, q) = sum_t idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))``
with the non-negative Lucene idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``.
Add and remove are O(terms of the document); statistics (N, avgdl, df) are always current.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BM25Result:
    """Top-k documents plus the moments of the scores of ALL documents (unmatched score 0)."""

    ids: list[str]
    scores: list[float]
    mean: float
    std: float
    count: int


class BM25Index:
    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError("BM25 needs k1 >= 0 and 0 <= b <= 1")
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[str, int]] = {}  # term -> {doc id: tf}
        self._doc_terms: dict[str, Counter[str]] = {}
        self._doc_length: dict[str, int] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._doc_length)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_length

    def add(self, doc_id: str, terms: Sequence[str]) -> None:
        self.remove(doc_id)
        counts = Counter(terms)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[doc_id] = tf
        self._doc_terms[doc_id] = counts
        self._doc_length[doc_id] = len(terms)
        self._total_length += len(terms)

    def remove(self, doc_id: str) -> None:
        counts = self._doc_terms.pop(doc_id, None)
        if counts is None:
            return
        for term in counts:
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term]
        self._total_length -= self._doc_length.pop(doc_id)

    def idf(self, term: str) -> float:
        df = len(self._postings.get(term, ()))
        n = len(self._doc_length)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _accumulate(self, terms: Iterable[str], allowed: set[str] | None) -> dict[str, float]:
        n = len(self._doc_length)
        if n == 0:
            return {}
        avgdl = self._total_length / n or 1.0
        k1, b = self.k1, self.b
        scores: dict[str, float] = {}
        for term in set(terms):
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = self.idf(term)
            for doc_id, tf in posting.items():
                if allowed is not None and doc_id not in allowed:
                    continue
                norm = k1 * (1.0 - b + b * self._doc_length[doc_id] / avgdl)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
        return scores

    def search(
        self, terms: Sequence[str], k: int, allowed: set[str] | None = None
    ) -> BM25Result:
        scores = self._accumulate(terms, allowed)
        count = len(self._doc_length) if allowed is None else len(allowed & self._doc_length.keys())
        total = sum(scores.values())
        total_sq = sum(s * s for s in scores.values())
        mean = total / count if count else 0.0
        variance = max(total_sq / count - mean * mean, 0.0) if count else 0.0
        best = heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], item[0]))
        return BM25Result(
            ids=[doc_id for doc_id, _ in best],
            scores=[score for _, score in best],
            mean=mean,
            std=variance**0.5,
            count=count,
        )

    def coverage(self, terms: Sequence[str], ids: Sequence[str]) -> list[float] | None:
        """Per document, the idf-weighted share of the query's distinct terms it contains
        (1.0: every term); None when the query has no term. O(terms) per document.

        Japanese is indexed as overlapping bigrams, so one shared bigram inside a longer
        query word (イン of マインクラフト) is mostly chance: a bigram of a longer run counts
        only when a neighbouring bigram of the same run is present too (a 3+ character match).
        """
        weights = {term: self.idf(term) for term in set(terms)}
        total = sum(weights.values())
        if total <= 0.0:
            return None
        runs = _bigram_runs(terms)
        out = []
        for doc_id in ids:
            present = self._doc_terms.get(doc_id, {})
            matched = set()
            for run in runs:
                for i, term in enumerate(run):
                    if term in present and (len(run) == 1 or (i > 0 and run[i - 1] in present)
                                            or (i + 1 < len(run) and run[i + 1] in present)):
                        matched.add(term)
            out.append(sum(weights[t] for t in matched) / total)
        return out

    def scores(self, terms: Sequence[str], ids: Sequence[str]) -> list[float]:
        """BM25 of the given documents (0 for no match or unknown id)."""
        scores = self._accumulate(terms, set(ids))
        return [scores.get(doc_id, 0.0) for doc_id in ids]


def _bigram_runs(terms: Sequence[str]) -> list[list[str]]:
    """Terms grouped into runs: consecutive overlapping two-character terms (``東京``, ``京都``)
    form one run, every other term is a run of its own."""
    runs: list[list[str]] = []
    for term in terms:
        if (runs and len(term) == 2 and len(runs[-1][-1]) == 2
                and runs[-1][-1][1] == term[0] and not term.isascii()):
            runs[-1].append(term)
        else:
            runs.append([term])
    return runs
