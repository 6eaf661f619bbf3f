"""How far issue 15's last recall goals are from what the two rankers can give.

    PYTHONPATH=py:. .venv/bin/python bench/recall_bounds.py [--models e5-q8 minilm-q8]

Two questions, on the dev sets of ``recall_quality.py`` (same loaders, same engine set-up):

1. **JSQuAD ranking ceilings.** Hybrid recall fuses two standard scores, the query's cosine
   and its BM25 score (with the best-sentence evidence), over the candidates of both rankers
   (depth 50). For every question this bench computes both components of every candidate as
   the engine does (``store.kernel``, ``store.text_index``: engine internals, as in
   ``recall_fusion.py``; the rows with weight 1 reproduce the engine's default hybrid row)
   and reports hit@1 / hit@10 of

   - each ranker alone and the default fusion (weight 1 on each standard score);
   - every fixed weight ``w`` of the vector score against the text score (a grid from 0.25
     to 4): the best any one setting gives, for every question alike;
   - the **per-question oracle**: the best rank the paragraph reaches under ANY pair of
     non-negative weights, chosen per question knowing the answer. No weighted-sum fusion
     (zscore, adaptive, any rule that picks weights from the scores) can do better;
   - the share of questions whose paragraph is among the candidates at all.

2. **Cut-off separability.** For each character (the three LoCoMo conversations with the
   ingest context, and JSQuAD) the best relevance among the hits of each question whose
   evidence is in its top 10 (no cut-off), and among each unrelated query's hits
   (``bench/data/unrelated_queries.json``), through the public API (``recall(...,
   min_relevance=0)``). Then keep / reject at every threshold of a grid: whether ANY one
   threshold meets keep >= 0.95 and reject >= 0.90 on that character. The cut-off works per
   query (``recall``: when no hit reaches ``min_relevance`` the query returns nothing, else
   its hits in rank order), so, as in ``recall_quality.cutoff_row``, a question with some
   evidence in its top 10 is kept at a threshold when its best hit reaches it, and an
   unrelated query is rejected when its best hit does not.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from bench import recall_quality as rq
from bench.common import CachedModel, machine_info, md_table, write_results
from omoide.engine.analyzer import query_weights
from omoide.engine.embedding import embed_query
from omoide.engine.recall import MIN_CANDIDATES
from omoide.engine.sentences import with_sentence_evidence
from omoide.kernels.base import top_k_by_id

WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 19))
KEEP_GOAL, REJECT_GOAL = 0.95, 0.90


def components(engine, corpus: rq.Corpus, labels: dict[str, str], query: rq.Query) -> dict:
    """Both standard scores of every candidate of one question, and which is the answer."""
    store = engine.stores[corpus.character]
    vector = embed_query(engine.embedder, query.text)
    terms = store.analyzer(query.text)
    weights = query_weights(terms)
    by_vector = top_k_by_id(store.kernel, vector, MIN_CANDIDATES, None)
    by_text = store.text_index.search(terms, MIN_CANDIDATES, None, weights)
    candidates = list(dict.fromkeys(by_vector.ids + by_text.ids))
    cosines = np.asarray(store.kernel.scores(vector, candidates), dtype=np.float64)
    bm25 = store.text_index.scores(terms, candidates, weights)
    text = np.asarray(with_sentence_evidence(store.text_index, store.analyzer, terms, weights,
                                             [store.records[i] for i in candidates], bm25),
                      dtype=np.float64)
    z_vector = (cosines - by_vector.mean) / max(by_vector.std, 1e-12)
    z_text = ((text - by_text.mean) / by_text.std if by_text.std > 1e-12
              else np.zeros_like(text))
    return {"ids": candidates, "z_vector": z_vector, "z_text": z_text,
            "gold": [n for n, i in enumerate(candidates) if labels[i] in query.gold]}


def rank_under(row: dict, a: float, b: float) -> int:
    """0-based rank of the best answer under ``a * z_vector + b * z_text`` (ties by id, as
    the engine breaks them); a large number when no candidate is an answer."""
    if not row["gold"]:
        return 10**6
    fused = a * row["z_vector"] + b * row["z_text"]
    order = sorted(range(len(fused)), key=lambda n: (-fused[n], row["ids"][n]))
    return min(order.index(g) for g in row["gold"])


def oracle_rank(row: dict) -> int:
    """The best rank an answer reaches under any non-negative weights ``(t, 1 - t)``: the
    number of candidates strictly above it changes only where two fused lines cross."""
    best = 10**6
    for g in row["gold"]:
        dv = row["z_vector"] - row["z_vector"][g]
        dt = row["z_text"] - row["z_text"][g]
        cuts = {0.0, 1.0}
        for a, b in zip(dv, dt, strict=True):
            if a != b:
                t = b / (b - a)
                if 0.0 < t < 1.0:
                    cuts.add(float(t))
        ordered = sorted(cuts)
        probes = ordered + [(x + y) / 2 for x, y in zip(ordered, ordered[1:], strict=False)]
        for t in probes:
            above = int(((t * dv + (1 - t) * dt) > 1e-12).sum())
            best = min(best, above)
    return best


def hits(ranks: list[int]) -> dict[str, float]:
    n = max(len(ranks), 1)
    return {"hit@1": sum(r < 1 for r in ranks) / n, "hit@10": sum(r < 10 for r in ranks) / n}


def jsquad_ceilings(model: CachedModel, log) -> dict:
    [corpus] = rq.load_jsquad(0)
    passages = rq.passage_vectors(model, corpus.docs)
    queries = model.embed("queries", [q.text for q in corpus.queries])
    engine, labels, _ = rq.build_engine(model, corpus, passages, queries)
    rows = [components(engine, corpus, labels, q) for q in corpus.queries]
    out = {"questions": len(rows),
           "vector": hits([rank_under(r, 1.0, 0.0) for r in rows]),
           "fulltext": hits([rank_under(r, 0.0, 1.0) for r in rows]),
           "fixed": {str(w): hits([rank_under(r, w, 1.0) for r in rows]) for w in WEIGHTS},
           "oracle": hits([oracle_rank(r) for r in rows]),
           "candidates_hold_answer": sum(bool(r["gold"]) for r in rows) / len(rows)}
    out["default"] = out["fixed"]["1.0"]
    out["best_fixed"] = {k: max(v[k] for v in out["fixed"].values()) for k in ("hit@1", "hit@10")}
    log(f"jsquad {model.name}: default {out['default']}, best fixed {out['best_fixed']}, "
        f"oracle {out['oracle']}")
    return out


def cutoff_sweep(model: CachedModel, log) -> dict:
    unrelated = rq.unrelated_queries()
    unrelated_vectors = model.embed("queries", unrelated)
    corpora = [(c, np.vstack([model.embed("passages", [d.text for d in c.docs]),
                              model.embed("passages", [d.context for d in c.docs])]))
               for c in rq.load_locomo("ingest-context")]
    [jsquad] = rq.load_jsquad(0)
    corpora.append((jsquad, rq.passage_vectors(model, jsquad.docs)))
    out = {}
    for corpus, rows in corpora:
        queries = model.embed("queries", [q.text for q in corpus.queries])
        engine, labels, _ = rq.build_engine(model, corpus, rows, queries,
                                            (unrelated, unrelated_vectors))

        def ask(text: str, engine=engine, corpus=corpus) -> list:
            return engine.recall(corpus.character, text, k=10, touch=False,
                                 min_relevance=0.0, now=corpus.now)

        evidence = []  # per question with evidence in its top 10: its best hit's relevance
        for q in corpus.queries:
            found = ask(q.text)
            if any(labels[h.memory.id] in q.gold for h in found):
                evidence.append(max(h.relevance for h in found))
        best_unrelated = [max((h.relevance for h in ask(t)), default=0.0) for t in unrelated]
        grid = {}
        for t in THRESHOLDS:
            grid[str(t)] = {"keep": sum(r >= t for r in evidence) / max(len(evidence), 1),
                            "reject": sum(r < t for r in best_unrelated) / len(unrelated)}
        meets = [t for t, v in grid.items()
                 if v["keep"] >= KEEP_GOAL and v["reject"] >= REJECT_GOAL]
        out[corpus.character] = {"questions_with_evidence_in_top10": len(evidence),
                                 "grid": grid, "thresholds_meeting_both": meets}
        log(f"cut-off {model.name} {corpus.character}: thresholds meeting both goals: "
            f"{meets or 'none'}")
    return out


def markdown(payload: dict) -> str:
    meta = payload["meta"]
    parts = [f"# Recall ceilings (issue 15)\n\ncommit {meta.get('git_commit')}, "
             f"{meta.get('date')}, {payload['meta'].get('wall_seconds')} s\n"]
    rows = []
    for name, r in payload["jsquad"].items():
        best = max(r["fixed"], key=lambda w: (r["fixed"][w]["hit@1"], float(w)))
        best10 = max(r["fixed"], key=lambda w: (r["fixed"][w]["hit@10"], -float(w)))
        rows.append([name, f"{r['vector']['hit@1']:.4f} / {r['vector']['hit@10']:.4f}",
                     f"{r['fulltext']['hit@1']:.4f} / {r['fulltext']['hit@10']:.4f}",
                     f"{r['default']['hit@1']:.4f} / {r['default']['hit@10']:.4f}",
                     f"{r['fixed'][best]['hit@1']:.4f} (w {best})",
                     f"{r['fixed'][best10]['hit@10']:.4f} (w {best10})",
                     f"{r['oracle']['hit@1']:.4f} / {r['oracle']['hit@10']:.4f}",
                     f"{r['candidates_hold_answer']:.4f}"])
    parts.append("## JSQuAD hit@1 / hit@10\n\n" + md_table(
        ["model", "vector", "full-text", "default fusion (w 1)", "best fixed w @1",
         "best fixed w @10", "per-question oracle", "answer among candidates"], rows))
    for name, chars in payload["cutoff"].items():
        header = ["threshold"] + [f"{c} keep / reject" for c in chars]
        grid_rows = []
        for t in THRESHOLDS:
            grid_rows.append([t] + [f"{c['grid'][str(t)]['keep']:.3f} / "
                                    f"{c['grid'][str(t)]['reject']:.3f}"
                                    for c in chars.values()])
        meets = ", ".join(f"{c}: {v['thresholds_meeting_both'] or 'none'}"
                          for c, v in chars.items())
        parts.append(f"## Cut-off, {name}: keep / reject by threshold\n\n"
                     f"Thresholds meeting keep >= {KEEP_GOAL} and reject >= {REJECT_GOAL}: "
                     f"{meets}\n\n" + md_table(header, grid_rows))
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["e5-q8", "minilm-q8"])
    parser.add_argument("--name", default="recall_bounds")
    args = parser.parse_args(argv)

    def log(line: str) -> None:
        print(line, flush=True)

    meta = machine_info()
    started = time.perf_counter()
    payload: dict = {"meta": meta, "jsquad": {}, "cutoff": {}}
    for name in args.models:
        model = CachedModel(name)
        payload["jsquad"][name] = jsquad_ceilings(model, log)
        payload["cutoff"][name] = cutoff_sweep(model, log)
    meta["wall_seconds"] = round(time.perf_counter() - started, 1)
    meta["load_average_at_end"] = list(os.getloadavg())
    json_path, md_path = write_results(args.name, payload, markdown(payload))
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
