import math
import random

import pytest

from omoide.engine.bm25 import BM25Index


def reference_bm25(docs: dict[str, list[str]], query: list[str], k1=1.2, b=0.75):
    n = len(docs)
    avgdl = sum(len(t) for t in docs.values()) / n
    out = {}
    for doc_id, terms in docs.items():
        score = 0.0
        for term in set(query):
            df = sum(term in t for t in docs.values())
            tf = terms.count(term)
            if tf == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if score:
            out[doc_id] = score
    return out


def random_docs(rng, n):
    vocab = [f"w{i}" for i in range(30)]
    return {f"d{i}": [rng.choice(vocab) for _ in range(rng.randint(1, 12))] for i in range(n)}


@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (2.0, 0.0), (0.5, 1.0)])
def test_scores_match_the_formula(k1, b):
    rng = random.Random(1)
    docs = random_docs(rng, 40)
    index = BM25Index(k1=k1, b=b)
    for doc_id, terms in docs.items():
        index.add(doc_id, terms)
    query = ["w1", "w2", "w3", "w1"]
    expected = reference_bm25(docs, query, k1, b)
    result = index.search(query, 100)
    assert dict(zip(result.ids, result.scores, strict=True)) == pytest.approx(expected)
    assert result.scores == sorted(result.scores, reverse=True)


def test_incremental_removal_equals_rebuild():
    rng = random.Random(2)
    docs = random_docs(rng, 60)
    index = BM25Index()
    for doc_id, terms in docs.items():
        index.add(doc_id, terms)
    for doc_id in list(docs)[::3]:
        index.remove(doc_id)
        del docs[doc_id]
    rebuilt = BM25Index()
    for doc_id, terms in docs.items():
        rebuilt.add(doc_id, terms)
    query = ["w4", "w7"]
    a, r = index.search(query, 100), rebuilt.search(query, 100)
    assert a.ids == r.ids and a.scores == pytest.approx(r.scores)
    assert (a.mean, a.std, a.count) == pytest.approx((r.mean, r.std, r.count))
    assert index.term_count == rebuilt.term_count


def test_moments_count_unmatched_documents_as_zero():
    index = BM25Index()
    for i in range(9):
        index.add(f"d{i}", ["filler"])
    index.add("hit", ["needle"])
    result = index.search(["needle"], 5)
    s = result.scores[0]
    assert result.count == 10
    assert result.mean == pytest.approx(s / 10)
    assert result.std == pytest.approx(math.sqrt(s * s / 10 - (s / 10) ** 2))


def test_allowed_restricts_candidates_and_scores_of_unknown_are_zero():
    index = BM25Index()
    index.add("a", ["x"])
    index.add("b", ["x", "x"])
    assert index.search(["x"], 5, allowed={"a"}).ids == ["a"]
    assert index.scores(["x"], ["a", "zzz"])[1] == 0.0


def test_re_adding_a_document_replaces_it():
    index = BM25Index()
    index.add("a", ["old"])
    index.add("a", ["new"])
    assert index.search(["old"], 5).ids == [] and index.search(["new"], 5).ids == ["a"]
    assert len(index) == 1


def test_invalid_parameters_are_rejected():
    with pytest.raises(ValueError):
        BM25Index(b=1.5)
