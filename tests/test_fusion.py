"""Hybrid fusion: the default must not be clearly worse than the best single ranker, even
when the other ranker is pure noise for the corpus; plain RRF stays available."""

import math
import random

import pytest

from omoide.engine import MemoryEngine
from omoide.engine.fusion import head_spread, reciprocal_rank_fusion, standard_score_fusion
from tests.test_engine_embedder import HashingEmbedder


class NoiseEmbedder(HashingEmbedder):
    """A vector model that knows nothing: a pseudo-random unit vector per text."""

    def _vector(self, text):
        rng = random.Random(f"noise:{text}")
        v = [rng.gauss(0, 1) for _ in range(self.dimension)]
        n = math.sqrt(sum(x * x for x in v))
        return [x / n for x in v]


class ConceptEmbedder(HashingEmbedder):
    """A vector model that understands synonyms: tokens 'wN' and 'uN' mean concept N."""

    def _vector(self, text):
        v = [0.0] * self.dimension
        for token in text.split():
            if token[0] in "wu" and token[1:].isdigit():
                rng = random.Random(f"concept:{token[1:]}")
                for i in range(self.dimension):
                    v[i] += rng.gauss(0, 1)
        n = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / n for x in v]


def corpus(rng, size=250):
    fillers = [f"f{i}" for i in range(12)]  # words shared by many memories: BM25 noise
    docs = []
    for _ in range(size):
        concepts = rng.sample(range(3000), 5)
        docs.append((concepts, " ".join([f"w{c}" for c in concepts] + rng.sample(fillers, 4))))
    return docs, fillers


def hit_rates(engine, queries, truth, k):
    out = {}
    for name, kwargs in [("vector", {"mode": "vector"}), ("fulltext", {"mode": "fulltext"}),
                         ("rrf", {"fusion": "rrf"}), ("zscore", {"fusion": "zscore"}),
                         ("adaptive", {})]:
        hits = 0
        for query, expected in zip(queries, truth, strict=True):
            got = [h.memory.id for h in engine.recall("c", query, k=k, touch=False, **kwargs)]
            hits += expected in got
        out[name] = hits / len(queries)
    return out


def build(embedder, docs):
    engine = MemoryEngine(embedder)
    memories = engine.remember_many("c", [text for _, text in docs])
    return engine, [m.id for m in memories]


def test_noise_vector_model_does_not_drag_hybrid_below_bm25():
    rng = random.Random(11)
    docs, fillers = corpus(rng)
    engine, ids = build(NoiseEmbedder(48), docs)
    picks = rng.sample(range(len(docs)), 120)
    # exact words of the target (BM25 is right), plus filler words
    queries = [" ".join([f"w{docs[i][0][0]}", f"w{docs[i][0][1]}"] + rng.sample(fillers, 2))
               for i in picks]
    rates = hit_rates(engine, queries, [ids[i] for i in picks], k=1)
    assert rates["fulltext"] >= 0.95 and rates["vector"] < 0.1
    assert rates["zscore"] >= rates["fulltext"] - 0.02
    assert rates["adaptive"] >= rates["fulltext"] - 0.02
    assert rates["rrf"] < rates["fulltext"] - 0.2  # why plain RRF is not the default


def test_keyword_noise_does_not_drag_hybrid_below_vector():
    rng = random.Random(12)
    docs, fillers = corpus(rng)
    engine, ids = build(ConceptEmbedder(64), docs)
    picks = rng.sample(range(len(docs)), 120)
    # synonyms only (no shared words except fillers): the vector model is right, BM25 is noise
    queries = [" ".join([f"u{c}" for c in docs[i][0][:3]] + rng.sample(fillers, 3))
               for i in picks]
    rates = hit_rates(engine, queries, [ids[i] for i in picks], k=1)
    assert rates["vector"] >= 0.95 and rates["fulltext"] < 0.1
    assert rates["adaptive"] >= rates["vector"] - 0.02
    # plain z-scores are hurt by the filler plateau: the reason for the adaptive weights
    assert rates["zscore"] < rates["adaptive"]


def test_hybrid_beats_both_when_each_ranker_knows_half():
    """Queries with one exact word and one synonym: each ranker alone is ambiguous."""
    rng = random.Random(13)
    docs, _ = corpus(rng)
    # make ambiguity: every concept appears in two memories
    engine, ids = build(ConceptEmbedder(64), docs)
    picks = rng.sample(range(len(docs)), 120)
    queries = [f"w{docs[i][0][0]} u{docs[i][0][1]} u{docs[i][0][2]}" for i in picks]
    rates = hit_rates(engine, queries, [ids[i] for i in picks], k=1)
    assert rates["adaptive"] >= max(rates["vector"], rates["fulltext"]) - 0.02


def test_reciprocal_rank_fusion_formula():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "c"]], rrf_k=60)
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})


def test_standard_score_fusion_formula_and_constant_rankers():
    fused = standard_score_fusion(
        [{"a": 0.9, "b": 0.5}, {"a": 0.0, "b": 4.0}], [(0.5, 0.2), (1.0, 2.0)]
    )
    assert fused == pytest.approx({"a": 2.0 - 0.5, "b": 0.0 + 1.5})
    only_first = standard_score_fusion([{"a": 1.0}, {"a": 3.0}], [(0.0, 1.0), (3.0, 0.0)])
    assert only_first == {"a": 1.0}


def test_head_spread():
    assert head_spread([5.0, 1.0, 1.0], 1.0, 2.0, 10) == 2.0
    assert head_spread([3.0] * 12, 0.0, 1.0, 10) == 0.0
    assert head_spread([], 0.0, 1.0, 10) == 0.0 and head_spread([1.0], 0.0, 0.0, 10) == 0.0


def test_standard_score_fusion_is_monotone():
    rng = random.Random(14)
    for _ in range(200):
        ids = ["x", "y"]
        comps = [{i: rng.random() for i in ids}, {i: rng.random() * 5 for i in ids}]
        fused = standard_score_fusion(comps, [(0.3, 0.1), (1.0, 0.7)], [rng.random() + 1, 2.0])
        if all(c["x"] >= c["y"] for c in comps):
            assert fused["x"] >= fused["y"]


def test_recall_without_a_fusion_uses_the_models_recommendation():
    """fusion=None: zscore for e5 (better on every e5 benchmark row), adaptive for MiniLM and
    for models the registry does not know."""
    from omoide.embeddings.registry import E5_SMALL, MINILM, default_fusion
    from omoide.engine import MemoryEngine

    assert (default_fusion(E5_SMALL.id), default_fusion(MINILM.id)) == ("zscore", "adaptive")
    assert default_fusion("someone/else") == "adaptive"
    texts = [f"note {i} about tea and {w}" for i, w in enumerate(
        ["rain", "cats", "green tea", "coffee", "mountains", "tea ceremony", "trains"])]
    for model_id, expected in ((E5_SMALL.id, "zscore"), (MINILM.id, "adaptive"),
                               ("test/unknown", "adaptive")):
        embedder = NoiseEmbedder()
        embedder.model_id = model_id
        engine = MemoryEngine(embedder)
        engine.remember_many("alice", texts)

        def scores(fusion, engine=engine):
            hits = engine.recall("alice", "green tea", fusion=fusion, touch=False)
            return [(h.memory.id, round(h.score, 9)) for h in hits]

        assert scores(None) == scores(expected), model_id
        assert scores("zscore") != scores("adaptive")  # so the check above can tell
