"""BM25F scoring over array postings with numpy: CPython's ``PostingsScorer``.

``PureScorer`` (engine/bm25.py) loops over every posting in Python: a term most of a
character's memories hold (its name, a topic it always talks about) costs ~75 ms per
20,000 memories, 0.4 s at 100,000. Here each term's postings are scored as arrays, with the
same formula evaluated in the same order per element (float64, no fused operations), and a
document's contributions are added term by term in the query's order, as ``PureScorer``
does: the scores are the same doubles. The sums of all scores (for the mean and deviation
of a hybrid recall) are numpy's pairwise sums, equal to the sequential ones within a few
units in the last place.
"""

from __future__ import annotations

from array import array

import numpy as np

from omoide.engine.bm25 import STRIDE, Matches, Query


def _accumulate(query: Query, ordinals: int,
                allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Every document's score (0 when unmatched) and which documents matched."""
    k1, text_base, text_slope, weight, context_base, context_slope = query.constants()
    k1_plus_1 = k1 + 1.0
    scores = np.zeros(ordinals, dtype=np.float64)
    matched = np.zeros(ordinals, dtype=bool)
    # copies (fancy indexing, .copy()): no numpy view outlives this call, so the engine's
    # arrays (append-only ``array('i')``) are never held against a resize
    lengths = np.frombuffer(query.lengths, dtype=np.int32).copy()
    context_lengths = np.frombuffer(query.context_lengths, dtype=np.int32).copy()
    for idf, posting in zip(query.idfs, query.postings, strict=True):
        triples = np.frombuffer(posting, dtype=np.int32).copy().reshape(-1, STRIDE)
        if allowed is not None:
            triples = triples[allowed[triples[:, 0]]]
        ords, tf, context_tf = triples[:, 0], triples[:, 1], triples[:, 2]
        x = np.zeros(len(ords), dtype=np.float64)
        text = tf > 0
        x[text] = tf[text] / (text_base + text_slope * lengths[ords[text]])
        context = context_tf > 0
        x[context] += weight * context_tf[context] / (
            context_base + context_slope * context_lengths[ords[context]])
        hit = x > 0.0
        ords, x = ords[hit], x[hit]
        scores[ords] += idf * x * k1_plus_1 / (x + k1)  # one posting per document per term
        matched[ords] = True
    return scores, matched


class NumpyScorer:
    """``PostingsScorer`` whose loop over postings is numpy's."""

    def top(self, query: Query, ordinals: int, allowed: array | None, k: int) -> Matches:
        mask = None
        if allowed is not None:
            mask = np.zeros(ordinals, dtype=bool)
            mask[np.frombuffer(allowed, dtype=np.int32).copy()] = True
        scores, matched = _accumulate(query, ordinals, mask)
        found = np.flatnonzero(matched)
        values = scores[found]
        total, total_sq = float(values.sum()), float((values * values).sum())
        if k <= 0:
            return Matches([], [], total, total_sq)
        if len(values) > k:
            floor = np.partition(values, len(values) - k)[len(values) - k]
            keep = values >= floor
            found, values = found[keep], values[keep]
        return Matches(found.tolist(), values.tolist(), total, total_sq)

    def at(self, query: Query, ordinals: int, wanted: array) -> list[float]:
        picked = np.frombuffer(wanted, dtype=np.int32).copy()
        mask = np.zeros(ordinals, dtype=bool)
        mask[picked] = True
        scores, _ = _accumulate(query, ordinals, mask)
        return scores[picked].tolist()
