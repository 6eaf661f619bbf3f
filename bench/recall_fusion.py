"""Hybrid fusion probes on LoCoMo: per-query confidence weights and window votes.

    OMOIDE_BENCH_DATA=../shared/bench-data PYTHONPATH=py:. .venv/bin/python bench/recall_fusion.py

A probe, not a feature: it rebuilds the engine's hybrid ranking from the engine's own parts
(``store.kernel``, ``store.text_index``: engine internals) and changes one thing at a time.
Every LoCoMo turn is stored as conversation ingest stores it (``ingest-context`` of
bench/recall_quality.py), with the real models' cached vectors (bench/common.py). Candidates
are the engine's (top 50 of each ranker); no time boost (LoCoMo questions rarely name a span).

Fusions (``fused(d) = sum_i w_i * z_i(d)``, z = standard score over all memories):

- ``zscore``: w = 1, 1 (the engine's ``zscore``).
- ``adaptive``: w_i = 1 + head spread of ranker i (the engine's ``adaptive``).
- ``confidence``: w_i = 0.5 + the calibrated relevance (engine/relevance.py) of ranker i's own
  best hit: a ranker that found nothing it can vouch for weighs less for this query.
- ``+window``: a third ranker, the *window* level: every turn's window (turns i-2 .. i+2 of
  its session) is summarized by the normalized sum of the window's stored vectors; the
  query's cosine with a turn's window, as a standard score over all memories, joins the
  fusion with weight 1. A window that matches votes for every turn in it.
- ``+session``: the same with the whole session as the window.

Window votes computed from the candidates' neighbours only (what an engine can afford per
query: one kernel call over at most 5 ids per candidate, no pass over the store), each a third
component already on the standard scale (weight 1, or ``...w``: the vector ranker's weight):

- ``+mean`` / ``+meanw``: the mean of the vector standard scores of the window's turns (the
  turn included); ``+meanw`` is what the engine does (``omoide.engine.neighbourhood``).
- ``+stouffer`` / ``+stoufferw``: their sum over the square root of their number (Stouffer).
- ``+others``: the mean over the window without the turn itself.
- ``+wincos``: the window-sum cosine of ``+window`` on the turns' scale (their moments).
- ``+meanw+text``: ``+meanw`` plus the same vote from the full-text ranker's standard scores
  (with its weight).

Reported: any@1, any@10, all@10 per model and fusion, 3 conversations, 385 questions.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from bench import recall_quality as rq
from bench.common import CachedModel, machine_info, md_table, write_results
from omoide.engine.embedding import embed_query
from omoide.engine.fusion import head_spread, standard_score_fusion
from omoide.engine.relevance import content_terms, relevance, vector_standout

FUSIONS = tuple(os.environ.get("PROBE_FUSIONS", "zscore zscore+window zscore+stouffer "
                               "zscore+mean zscore+others zscore+wincos adaptive "
                               "adaptive+window adaptive+stouffer adaptive+mean "
                               "adaptive+others adaptive+wincos").split())
WINDOW = 2  # turns on each side of a turn in its window
DEPTH = 50  # candidates per ranker, as the engine


def locomo_engines(model: CachedModel) -> list:
    corpora = rq.load_locomo("ingest-context")
    queries = model.embed("queries", [q.text for c in corpora for q in c.queries])
    out, at = [], 0
    for corpus in corpora:
        rows = np.vstack([model.embed("passages", [d.text for d in corpus.docs]),
                          model.embed("passages", [d.context for d in corpus.docs])])
        engine, labels, _ = rq.build_engine(model, corpus, rows,
                                            queries[at: at + len(corpus.queries)])
        out.append((engine, labels, corpus))
        at += len(corpus.queries)
    return out


def group_vectors(store, labels: dict[str, str]) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Row of every memory, and per level (window, session) the normalized sum of the stored
    vectors of each memory's group (LoCoMo labels ``D<session>:<turn>`` give the order)."""
    ids = sorted(labels, key=lambda i: tuple(int(x) for x in labels[i][1:].split(":")))
    vectors = np.array([store.kernel.vector(i) for i in ids], dtype=np.float32)
    session = [labels[i].split(":")[0] for i in ids]
    levels = {"window": np.zeros_like(vectors), "session": np.zeros_like(vectors)}
    members: dict[str, list[int]] = {}
    for row, name in enumerate(session):
        members.setdefault(name, []).append(row)
    for rows in members.values():
        total = vectors[rows].sum(axis=0)
        levels["session"][rows] = total / np.linalg.norm(total)
    for row in range(len(ids)):
        rows = [j for j in range(row - WINDOW, row + WINDOW + 1)
                if 0 <= j < len(ids) and session[j] == session[row]]
        total = vectors[rows].sum(axis=0)
        levels["window"][row] = total / np.linalg.norm(total)
    levels["ids"] = ids
    levels["members"] = [[j for j in range(row - WINDOW, row + WINDOW + 1)
                          if 0 <= j < len(ids) and session[j] == session[row]]
                         for row in range(len(ids))]
    return {i: n for n, i in enumerate(ids)}, levels


def ranked(fusion: str, engine, store, query: str, rows: dict[str, int],
           levels: dict[str, np.ndarray]) -> list[str]:
    vector = embed_query(engine.embedder, query)
    terms = store.analyzer(query)
    by_vector = store.kernel.top_k(vector, DEPTH, None)
    by_text = store.text_index.search(terms, DEPTH, None)
    candidates = list(dict.fromkeys(by_vector.ids + by_text.ids))
    cosines = dict(zip(candidates, store.kernel.scores(vector, candidates), strict=True))
    bm25 = dict(zip(candidates, store.text_index.scores(terms, candidates), strict=True))
    components = [{i: cosines[i] for i in candidates}, {i: bm25[i] for i in candidates}]
    moments = [(by_vector.mean, by_vector.std), (by_text.mean, by_text.std)]
    base, _, level = fusion.partition("+")
    level, textvote = level.removesuffix("+text"), level.endswith("+text")
    weights = [1.0, 1.0]
    if base == "adaptive":
        weights = [1.0 + head_spread(by_vector.scores, by_vector.mean, by_vector.std, 10),
                   1.0 + head_spread(by_text.scores, by_text.mean, by_text.std, 10)]
    elif base == "confidence":
        standout = (vector_standout(by_vector.scores[0], by_vector.mean, by_vector.std,
                                    by_vector.count) if by_vector.ids else None)
        shares = store.text_index.coverage(content_terms(terms), by_text.ids[:10])
        weights = [0.5 + relevance(standout, None),
                   0.5 + max((relevance(None, s) for s in shares or []), default=0.0)]
    if level in ("stouffer", "mean", "others", "wincos", "meanw", "stoufferw"):
        near = {i: [j for j in levels["members"][rows[i]]] for i in candidates}
        need = sorted({levels["ids"][j] for js in near.values() for j in js})
        cos = dict(zip(need, store.kernel.scores(vector, need), strict=True))
        mu, sd = by_vector.mean, by_vector.std
        z = {i: (c - mu) / sd for i, c in cos.items()}
        extra = {}
        for i in candidates:
            ids_ = [levels["ids"][j] for j in near[i]]
            if level in ("stouffer", "stoufferw"):
                extra[i] = sum(z[j] for j in ids_) / len(ids_) ** 0.5
            elif level in ("mean", "meanw"):
                extra[i] = sum(z[j] for j in ids_) / len(ids_)
            elif level == "others":
                others = [j for j in ids_ if j != i]
                extra[i] = sum(z[j] for j in others) / len(others) if others else 0.0
            else:
                window_cosine = levels["window"][rows[i]] @ np.asarray(vector, dtype=np.float32)
                extra[i] = (float(window_cosine) - mu) / sd
        components.append(extra)
        moments.append((0.0, 1.0))
        weights.append(weights[0] if level.endswith("w") else 1.0)
        if textvote:  # the same vote from the full-text ranker's standard scores
            bm = dict(zip(need, store.text_index.scores(terms, need), strict=True))
            tz = {i: (b - by_text.mean) / by_text.std if by_text.std > 1e-12 else 0.0
                  for i, b in bm.items()}
            components.append({i: sum(tz[levels["ids"][j]] for j in near[i]) / len(near[i])
                               for i in candidates})
            moments.append((0.0, 1.0))
            weights.append(weights[1])
    elif level:
        group = levels[level] @ np.asarray(vector, dtype=np.float32)
        components.append({i: float(group[rows[i]]) for i in candidates})
        moments.append((float(group.mean()), float(group.std())))
        weights.append(1.0)
    fused = standard_score_fusion(components, moments, weights)
    return sorted(candidates, key=lambda i: (-fused[i], i))[:10]


def main(argv: list[str] | None = None) -> None:
    models = (argv if argv is not None else sys.argv[1:]) or ["minilm-q8", "e5-q8"]
    meta = machine_info()
    results = []
    for name in models:
        model = CachedModel(name)
        engines = locomo_engines(model)
        prepared = [(e, labels, c, *group_vectors(e.stores[c.character], labels))
                    for e, labels, c in engines]
        for fusion in FUSIONS:
            rows = []
            for engine, labels, corpus, positions, levels in prepared:
                store = engine.stores[corpus.character]
                for query in corpus.queries:
                    ids = ranked(fusion, engine, store, query.text, positions, levels)
                    rows.append((query.gold, [labels[i] for i in ids]))
            n = len(rows)
            metrics = {"any@1": sum(bool(g & set(r[:1])) for g, r in rows) / n,
                       "any@10": sum(bool(g & set(r)) for g, r in rows) / n,
                       "all@10": sum(g <= set(r) for g, r in rows) / n}
            results.append({"model": name, "fusion": fusion, "questions": n,
                            "metrics": metrics})
            print(name, fusion, {k: round(v, 3) for k, v in metrics.items()}, flush=True)
    meta["load_average_at_end"] = list(os.getloadavg())
    table = md_table(["model", "fusion", "any@1", "any@10", "all@10"],
                     [[r["model"], r["fusion"], r["metrics"]["any@1"], r["metrics"]["any@10"],
                       r["metrics"]["all@10"]] for r in results])
    write_results("recall_fusion", {"meta": meta, "window": WINDOW, "results": results},
                  f"# Hybrid fusion probes on LoCoMo (bench/recall_fusion.py)\n\n"
                  f"{meta['date']}, git {meta['git_commit']}, load average at start "
                  f"{meta['load_average_at_start']}, at end {meta['load_average_at_end']}. "
                  f"Ingest-context memories, candidates = the engine's (top {DEPTH} of each "
                  f"ranker), window = turns i-{WINDOW}..i+{WINDOW} of the session.\n\n{table}")


if __name__ == "__main__":
    main()
