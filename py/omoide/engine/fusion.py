"""Hybrid fusion of the vector ranking and the BM25 ranking.

Three fusions are offered (``recall(..., fusion=...)``); ``"adaptive"`` is the default.

``"rrf"`` — plain Reciprocal Rank Fusion, ``RRF(d) = sum_i 1 / (rrf_k + rank_i(d))``; a
document absent from a list contributes nothing for it. Kept for comparison and as an option.

``"zscore"`` (default) — score fusion on a per-query standard scale:
``fused(d) = sum_i (s_i(d) - mean_i) / std_i`` where ``mean_i``/``std_i`` are the moments of
ranker i's scores over EVERY eligible memory of the character for this query (the kernel and
the BM25 index return them; BM25 counts non-matching memories as 0), and ``s_i(d)`` is the
exact score of d under ranker i (computed for every candidate of either list, so nobody is
"missing" from a list). Why this and not RRF:

- RRF throws the scores away. Ranks carry no confidence: rank 1 of a near-random cosine list
  weighs as much as rank 1 of an exact keyword match. With a weak vector model on Japanese,
  documents ranked ~10th by both lists beat the BM25 top hit, which the vector model put
  nowhere (measured: plain RRF hit@10 0.63 vs BM25 0.98).
- A standard score measures how far a memory stands out from this character's whole
  population for THIS query. A ranker that is noise for a query produces a compressed,
  near-normal score distribution whose maximum is only ~sqrt(2 ln N) standard deviations
  out; a ranker that truly found the memory puts it many deviations out. So the confident
  ranker dominates automatically, per query, with no trained weights, and the fusion falls
  back towards the better single ranker when the other one is noise.
- It is monotone in each component: if both rankers prefer d to e, so does the fusion.

``"adaptive"`` (default) — the z-score fusion with one weight per ranker and query,
``w_i = 1 + head_spread_i`` where ``head_spread_i = (s_i(top 1) - s_i(top 10)) / std_i``.
Plain z-scores still lose when a ranker's noise is a PLATEAU: BM25 on a query made of words
that a third of the memories share gives many memories the same high z, and one of them can
outrun the right memory by a little. A ranker that singles memories out has a steep head
(top 1 far above top 10); a plateau has none. The weight uses only the ranker's own scores for
this query (no labels, no training), never drops a ranker (floor 1), and leaves the fusion
monotone in each component.

What was tried (JSQuAD 4,442 questions / 1,145 paragraphs, and LoCoMo, with the hashing n-gram
test embedder as the weak vector model and with a pure-noise vector model; ``bench/`` re-runs
this with the real models): see FUSION_NOTES below, kept next to the code they justify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

FUSIONS = ("adaptive", "zscore", "rrf")

FUSION_NOTES = """
Measured with the engine itself (k=10, candidate depth 50 per ranker), weak vector models:

JSQuAD, 1,159 paragraphs, 800 random questions       hit@1   hit@10
  hashing char-n-gram embedder, 256-d   vector       0.586   0.780
                                        fulltext     0.891   0.981
                                        plain RRF    0.744   0.951
                                        zscore       0.886   0.978
                                        adaptive     0.890   0.978  (400 questions)
  pure-noise embedder, 64-d             vector       0.000   0.010
                                        plain RRF    0.096   0.971
                                        zscore       0.885   0.985

LoCoMo, 3 conversations, 383 questions (cat. 1-4), any-evidence@k, hashing embedder 256-d
                                        @1      @5      @10
                                        vector       0.157   0.277   0.366
                                        fulltext     0.279   0.507   0.590
                                        plain RRF    0.256   0.444   0.540
                                        zscore       0.298   0.533   0.606
                                        adaptive     0.282   0.517   0.601

Constructed corpus (tests/test_fusion.py), synonym-aware vector model right, BM25 seeing only
shared filler words: vector hit@1 1.000, zscore 0.925, adaptive >= 0.98. Head-spread depth 5
vs 10 and floor 0.25 vs 1.0 were within 1 point of each other on all three; depth 10 / floor 1
was kept as the most conservative. The adaptive weights cost ~1.5 points of LoCoMo @1 against
plain zscore and buy robustness to plateau noise; both stay at or above the best single mode.

Plain RRF loses 15 points of hit@1 to BM25 on JSQuAD even with a vector model that is merely
weak, and collapses to 0.10 with a noise model; z-score fusion stays within noise of the best
single ranker on JSQuAD and beats both on LoCoMo. tests/test_fusion.py pins the property on
constructed corpora where either ranker is noise.
"""


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], rrf_k: float = 60.0
) -> dict[str, float]:
    """``sum_i 1 / (rrf_k + rank_i)`` with 1-based ranks; absent ids contribute 0."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (rrf_k + rank)
    return fused


def head_spread(ranked_scores: Sequence[float], mean: float, std: float, depth: int) -> float:
    """How far a ranker's best score stands above its ``depth``-th best, in its own standard
    deviations: large when it singles out a few memories, ~0 when its head is a plateau."""
    if std <= 1e-12 or not ranked_scores:
        return 0.0
    tail = ranked_scores[min(depth, len(ranked_scores)) - 1]
    return (ranked_scores[0] - tail) / std


def standard_score_fusion(
    components: Sequence[Mapping[str, float]],
    moments: Sequence[tuple[float, float]],
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    """``sum_i (s_i(d) - mean_i) / std_i`` over the ids of the first component.

    Every component must hold a score for each id. A ranker whose scores do not vary
    (std 0: nothing matched, or a single memory) carries no information and is skipped.
    """
    ids = list(components[0])
    fused = dict.fromkeys(ids, 0.0)
    weights = weights or [1.0] * len(components)
    for scores, (mean, std), weight in zip(components, moments, weights, strict=True):
        if std <= 1e-12:
            continue
        for doc_id in ids:
            fused[doc_id] += weight * (scores[doc_id] - mean) / std
    return fused
