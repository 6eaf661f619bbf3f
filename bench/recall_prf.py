"""Pseudo-relevance feedback (RM3-style query expansion) for BM25: a probe, not a feature.

    OMOIDE_BENCH_DATA=../shared/bench-data PYTHONPATH=py:. .venv/bin/python bench/recall_prf.py

Full-text only, so no embedding model is involved (the memories get random vectors). Each
LoCoMo turn is stored as conversation ingest stores it (``ingest-context`` of
bench/recall_quality.py: text + index context), each JSQuAD paragraph as it is. For every
question: the BM25 top ``m`` memories; their terms weighted by term frequency / length x the
memory's share of the top-m score; the best ``e`` new terms by weight x idf join the query
with weight ``lam`` x (their weight / the best one's), the query's own terms weight 1; then
BM25 again with the weighted query. Reported: any@1, any@10, all@10 with no feedback and for
each (m, e, lam) of a small grid of the usual RM3 settings (the same grid for both sets).

It reads the BM25 index's postings directly (``store.text_index``: an engine internal) to
score the weighted query; the engine's own search takes unweighted terms only.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools

import numpy as np

from bench import recall_quality as rq
from bench.common import PrecomputedEmbedder, machine_info, md_table, write_results
from omoide.engine import MemoryEngine
from omoide.engine.bm25 import PURE_SCORER

GRID = [(0, 0, 0.0)] + list(itertools.product((3, 5), (5, 10), (0.3, 0.5)))


def build(corpus: rq.Corpus) -> tuple[MemoryEngine, dict[str, str]]:
    stamp = "omoide/multilingual-e5-small@q8#384"
    embedder = PrecomputedEmbedder("omoide/multilingual-e5-small", "q8", 384, stamp)
    engine = MemoryEngine(embedder)
    rows = len(corpus.docs) + sum(1 for d in corpus.docs if d.context)
    vectors = np.random.default_rng(0).normal(size=(rows, 384)).astype(np.float32)
    embedder.stage(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    memories = engine.remember_many(corpus.character, [
        {"text": d.text, "at": d.at, "kind": corpus.kind}
        | ({"context": d.context} if d.context else {}) for d in corpus.docs])
    return engine, {m.id: d.label for m, d in zip(memories, corpus.docs, strict=True)}


def weighted_search(index, weights: dict[str, float], k: int) -> list[str]:
    """BM25F with each query term's idf scaled by its weight (the engine's formula)."""
    query = index._query(list(weights))
    kept = [t for t in dict.fromkeys(weights)
            if index._term_id.get(t) is not None and index._df[index._term_id[t]]]
    query = dataclasses.replace(
        query, idfs=[w * idf for w, idf in zip((weights[t] for t in kept), query.idfs,
                                                strict=True)])
    found = PURE_SCORER.top(query, len(index._id_at), None, k)
    best = sorted(zip(found.scores, (index._id_at[o] for o in found.ordinals), strict=True),
                  key=lambda item: (-item[0], item[1]))[:k]
    return [doc for _, doc in best]


def feedback_search(index, terms: list[str], k: int, m: int, e: int, lam: float) -> list[str]:
    if m == 0:
        return index.search(terms, k).ids
    first = index.search(terms, m)
    if not first.ids:
        return []
    own = set(terms)
    total = sum(first.scores) or 1.0
    weight: dict[str, float] = {}
    for doc, score in zip(first.ids, first.scores, strict=True):
        length = sum(index.document_length(doc))
        for term, (text_tf, context_tf) in index.term_frequencies(doc).items():
            tf = text_tf + context_tf
            if term not in own:
                weight[term] = weight.get(term, 0.0) + (tf / length) * (score / total)
    best = heapq.nlargest(e, weight.items(), key=lambda x: x[1] * index.idf(x[0]))
    query = dict.fromkeys(own, 1.0)
    if best:
        top = max(w * index.idf(t) for t, w in best)
        query.update({t: lam * w * index.idf(t) / top for t, w in best})
    return weighted_search(index, query, k)


def main() -> None:
    meta = machine_info()
    results = []
    for dataset in ("locomo", "jsquad"):
        corpora = rq.load_locomo("ingest-context") if dataset == "locomo" else rq.load_jsquad(0)
        ranked: dict[tuple, list[tuple[frozenset, list[str]]]] = {c: [] for c in GRID}
        for corpus in corpora:
            engine, labels = build(corpus)
            store = engine.stores[corpus.character]
            for query in corpus.queries:
                terms = store.analyzer(query.text)
                for config in GRID:
                    ids = feedback_search(store.text_index, terms, 10, *config)
                    ranked[config].append((query.gold, [labels[i] for i in ids]))
        for (m, e, lam), rows in ranked.items():
            n = len(rows)
            metrics = {"any@1": sum(bool(g & set(r[:1])) for g, r in rows) / n,
                       "any@10": sum(bool(g & set(r)) for g, r in rows) / n,
                       "all@10": sum(g <= set(r) for g, r in rows) / n}
            results.append({"dataset": dataset, "m": m, "e": e, "lam": lam, "questions": n,
                            "metrics": metrics})
            print(dataset, (m, e, lam), metrics, flush=True)
    meta["load_average_at_end"] = list(__import__("os").getloadavg())
    table = md_table(["dataset", "feedback (m, e, lam)", "any@1", "any@10", "all@10"],
                     [[r["dataset"], "none" if r["m"] == 0 else f"({r['m']}, {r['e']}, {r['lam']})",
                       r["metrics"]["any@1"], r["metrics"]["any@10"], r["metrics"]["all@10"]]
                      for r in results])
    write_results("recall_prf", {"meta": meta, "grid": GRID, "results": results},
                  f"# BM25 pseudo-relevance feedback (bench/recall_prf.py)\n\n{meta['date']}, "
                  f"git {meta['git_commit']}, load average at start "
                  f"{meta['load_average_at_start']}. Full-text only (model-free).\n\n{table}")


if __name__ == "__main__":
    main()
