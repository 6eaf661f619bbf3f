"""Recall latency and insert throughput of ``MemoryEngine`` in ONE character.

    PYTHONPATH=py:. .venv/bin/python bench/recall_latency.py [--sizes 1000 10000 100000]

Synthetic data (latency does not depend on meaning, so no model is needed for the sweep):

- vectors: 384-d standard normal, L2-normalized, float32 (the models' dimension); a query is
  a stored vector plus noise of the same size, renormalized, so every query has a true
  nearest neighbour and the top of the cosine list is not a flat tie;
- texts: 8-24 words drawn from a Zipf(1.0) vocabulary of 50,000 words whose 30 most frequent
  words are the analyzer's English stopwords (dropped, as in real English); queries are 4
  words drawn the same way. So BM25 posting lists have realistic, skewed lengths.

Per size and kernel (numpy exact = brute-force float32 top-k, the baseline; numpy int8 =
int8 prefilter + exact rerank; pure Python, at 1k and 10k only) it measures the engine's
``recall`` (public API, default ``touch=True``, k=10) in every mode: p50/p95 over the queries,
after warm-up, in ``--rounds`` interleaved rounds (default 3) of which the one with the lowest
p50 is reported (all rounds' p50 are in the JSON): the machine is shared, and another job's busy
spell should not pass for the engine's latency. The query embedding is NOT included
(vectors are precomputed; the real models' query latency is measured separately below).
With ``--conversation-turns N`` every memory is a turn of a conversation of N turns, so hybrid
recall also computes the window votes (``omoide.engine.neighbourhood``).
Insert throughput is ``remember_many`` in batches of 1,000 with precomputed vectors
(validation, ids, records, vector kernel, BM25 index), i.e. without the embedding; embedding
throughput of the real models is reported separately (``--models``), since it dominates a
real insert.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

import numpy as np

from bench.common import (
    MODELS,
    PrecomputedEmbedder,
    machine_info,
    md_table,
    percentile_ms,
    write_results,
)
from omoide.engine import MemoryEngine
from omoide.engine.analyzer import ENGLISH_STOPWORDS
from omoide.kernels import PureKernel
from omoide.kernels.numpy_kernel import NumpyKernel

DIMENSION = 384
K = 10
VOCABULARY = 50_000
MODES = (("vector", "vector", "adaptive"), ("fulltext", "fulltext", "adaptive"),
         ("hybrid adaptive", "hybrid", "adaptive"), ("hybrid zscore", "hybrid", "zscore"),
         ("hybrid rrf", "hybrid", "rrf"))
KERNELS = {
    "numpy exact": functools.partial(NumpyKernel, mode="exact"),
    "numpy int8": functools.partial(NumpyKernel, mode="int8"),
    "pure python": PureKernel,
}
NO_VOTES = " no votes"  # --conversation-turns: also time hybrid without the window votes
VOTELESS = (("hybrid adaptive, no votes", "hybrid", "adaptive" + NO_VOTES),
            ("hybrid zscore, no votes", "hybrid", "zscore" + NO_VOTES))
PURE_MAX = 10_000
BATCH = 1_000


class Corpus:
    """Deterministic synthetic vectors and texts (same seed -> same data)."""

    def __init__(self, size: int, queries: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        vectors = rng.standard_normal((size, DIMENSION), dtype=np.float32)
        self.vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        targets = rng.integers(0, size, queries)
        noisy = self.vectors[targets] + rng.standard_normal(
            (queries, DIMENSION), dtype=np.float32) / np.sqrt(DIMENSION)
        self.query_vectors = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(
            np.float32)
        words = sorted(ENGLISH_STOPWORDS)[:30]
        words += [_word(i) for i in range(VOCABULARY - len(words))]
        weights = 1.0 / np.arange(1, VOCABULARY + 1)
        weights /= weights.sum()
        lengths = rng.integers(8, 25, size)
        drawn = rng.choice(VOCABULARY, size=int(lengths.sum()), p=weights)
        self.texts = []
        at = 0
        for n in lengths.tolist():
            self.texts.append(" ".join(words[i] for i in drawn[at : at + n]))
            at += n
        # Query i is text i (unique); its vector is looked up by text by the embedder.
        self.query_texts = [
            f"q{i} " + " ".join(words[j] for j in rng.choice(VOCABULARY, size=4, p=weights))
            for i in range(queries)
        ]


def _word(i: int) -> str:
    letters = "bcdfghjklmnpqrstvwxz"
    vowels = "aeiou"
    out = []
    i += 1
    while i:
        i, r = divmod(i, 100)
        out.append(letters[r // 5] + vowels[r % 5])
    return "".join(out)


def build(corpus: Corpus, kernel_factory, turns: int = 0) -> tuple[MemoryEngine, float]:
    """The engine holding the corpus; ``turns`` > 0: memory i is turn i % turns of
    conversation i // turns (``omoide.engine.neighbourhood``: hybrid recall adds window
    votes)."""
    embedder = PrecomputedEmbedder("bench/synthetic", "fp32", DIMENSION,
                                   "bench/synthetic@fp32#384")
    embedder.add_queries(corpus.query_texts, corpus.query_vectors)
    engine = MemoryEngine(embedder, kernel=kernel_factory)
    start = time.perf_counter()
    for at in range(0, len(corpus.texts), BATCH):
        embedder.stage(corpus.vectors[at : at + BATCH])
        texts = corpus.texts[at : at + BATCH]
        items = texts if not turns else [
            {"text": t, "conversation": f"c{(at + i) // turns}"} for i, t in enumerate(texts)]
        engine.remember_many("bench", items)
    return engine, time.perf_counter() - start


def measure(engine: MemoryEngine, corpus: Corpus, mode: str, fusion: str, queries: int,
            warmup: int) -> tuple[list[float], list[list[str]]]:
    texts = corpus.query_texts
    extra = {}
    if fusion.endswith(NO_VOTES):  # the same recall without neighbourhood evidence
        fusion, extra = fusion.removesuffix(NO_VOTES), {"use_neighbours": False}
    for text in texts[:warmup]:
        engine.recall("bench", text, k=K, mode=mode, fusion=fusion, **extra)
    samples, results = [], []
    for text in texts[warmup : warmup + queries]:
        start = time.perf_counter()
        hits = engine.recall("bench", text, k=K, mode=mode, fusion=fusion, **extra)
        samples.append(time.perf_counter() - start)
        results.append([h.memory.id for h in hits])
    return samples, results


def model_rows(names: list[str], queries: int) -> list[dict]:
    """Real models: query embedding latency (one short query per call) and passage
    embedding throughput (batches of 64 dialogue-length texts)."""
    from omoide.embeddings.onnx_provider import OnnxEmbedder

    query_texts = [f"What did Caroline say about her {w} last week?" for w in
                   ("garden", "job", "sister", "trip", "painting", "dog", "exam", "car")]
    passages = [f"Melanie: I finally finished the {w} I told you about, it took me {i} "
                "weekends but I am really proud of how it turned out!"
                for i, w in enumerate(["painting", "quilt", "bookshelf", "garden bed"] * 64)]
    rows = []
    for name in names:
        model_id, dtype = MODELS[name]
        embedder = OnnxEmbedder.from_model_id(model_id, dtype)
        for text in query_texts[:3]:
            embedder.embed_queries_array([text])
        samples = []
        for i in range(queries):
            start = time.perf_counter()
            embedder.embed_queries_array([query_texts[i % len(query_texts)]])
            samples.append(time.perf_counter() - start)
        start = time.perf_counter()
        for at in range(0, len(passages), 64):
            embedder.embed_passages_array(passages[at : at + 64])
        seconds = time.perf_counter() - start
        rows.append({"model": name, "stamp": embedder.stamp,
                     "query_p50_ms": percentile_ms(samples, 50),
                     "query_p95_ms": percentile_ms(samples, 95),
                     "passages_per_s": len(passages) / seconds})
        print(f"model {name}: query p50 {rows[-1]['query_p50_ms']:.1f} ms, "
              f"{rows[-1]['passages_per_s']:.0f} passages/s", flush=True)
    return rows


def markdown(payload: dict) -> str:
    meta = payload["meta"]
    out = ["# Recall latency (bench/recall_latency.py)\n\n",
           f"{meta['date']}, {meta['cpu']} ({meta['cpus']} CPUs, shared), "
           f"git {meta['git_commit']}, load average at start "
           f"{', '.join(f'{x:.1f}' for x in meta['load_average_at_start'])}"
           + (f", {meta['thread_env']}" if meta["thread_env"] else "")
           + f". One character, k={K}, 384-d, synthetic vectors and "
           "texts (see the script); query embedding excluded; best of "
           f"{payload['rounds']} interleaved rounds by p50.\n\n"]
    header = ["memories", "kernel", "mode", "p50 ms", "p95 ms", "queries"]
    out.append(md_table(header, [
        [f"{r['memories']:,}", r["kernel"], r["mode"], f"{r['p50_ms']:.2f}",
         f"{r['p95_ms']:.2f}", r["queries"]] for r in payload["recall"]]))
    out.append("\nInsert (`remember_many`, batches of 1,000, vectors precomputed) and vector "
               "recall@10 of the kernel against numpy exact on the same queries:\n\n")
    out.append(md_table(["memories", "kernel", "memories/s", "recall@10 vs exact"], [
        [f"{r['memories']:,}", r["kernel"], f"{r['insert_per_s']:,.0f}",
         "" if r["recall_vs_exact"] is None else f"{r['recall_vs_exact']:.3f}"]
        for r in payload["insert"]]))
    if payload["models"]:
        out.append("\nReal models (ONNX Runtime, CPU): one query per call, passages in "
                   "batches of 64:\n\n")
        out.append(md_table(["model", "query p50 ms", "query p95 ms", "passages/s"], [
            [r["model"], f"{r['query_p50_ms']:.1f}", f"{r['query_p95_ms']:.1f}",
             f"{r['passages_per_s']:.0f}"] for r in payload["models"]]))
    return "".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1_000, 10_000, 100_000])
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    parser.add_argument("--queries", type=int, default=100, help="timed queries per case")
    parser.add_argument("--pure-queries", type=int, default=20,
                        help="timed queries per case for the pure Python kernel")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3,
                        help="timed rounds per case; the round with the lowest p50 is kept")
    parser.add_argument("--models", nargs="*", default=["e5-q8", "minilm-q8"],
                        choices=sorted(MODELS), help="real models to time (none: skip)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--name", default="recall_latency", help="results file name")
    parser.add_argument("--conversation-turns", type=int, default=0,
                        help="store the memories as conversations of this many turns")
    args = parser.parse_args(argv)

    meta = machine_info()
    started = time.perf_counter()
    recall_rows, insert_rows = [], []
    for size in args.sizes:
        corpus = Corpus(size, args.warmup + max(args.queries, args.pure_queries), args.seed)
        exact_results = None
        for kernel in args.kernels:
            if kernel == "pure python" and size > PURE_MAX:
                continue
            queries = args.pure_queries if kernel == "pure python" else args.queries
            engine, seconds = build(corpus, KERNELS[kernel], args.conversation_turns)
            recall_vs_exact = None
            modes = MODES + (VOTELESS if args.conversation_turns else ())
            rounds: dict[str, list[list[float]]] = {label: [] for label, _, _ in modes}
            for _ in range(args.rounds):  # interleaved, so a busy spell hits one round
                for label, mode, fusion in modes:
                    samples, results = measure(engine, corpus, mode, fusion, queries,
                                               args.warmup)
                    rounds[label].append(samples)
                    if mode == "vector" and len(rounds[label]) == 1:
                        if kernel == "numpy exact":
                            exact_results = texts_and_ids(engine, results)
                        elif exact_results is not None:
                            recall_vs_exact = overlap(exact_results,
                                                      texts_and_ids(engine, results))
            for label, _, _ in modes:
                p50s = [percentile_ms(r, 50) for r in rounds[label]]
                best = rounds[label][int(np.argmin(p50s))]
                row = {"memories": size, "kernel": kernel, "mode": label,
                       "p50_ms": percentile_ms(best, 50), "p95_ms": percentile_ms(best, 95),
                       "mean_ms": 1000.0 * float(np.mean(best)), "queries": len(best),
                       "round_p50_ms": p50s, "load_average": list(os.getloadavg())}
                recall_rows.append(row)
                print(f"{size:>7} {kernel:12} {label:16} p50 {row['p50_ms']:8.2f} ms  "
                      f"p95 {row['p95_ms']:8.2f} ms  (round p50s "
                      + ", ".join(f"{p:.2f}" for p in p50s) + ")", flush=True)
            insert_rows.append({"memories": size, "kernel": kernel, "insert_s": seconds,
                                "insert_per_s": size / seconds,
                                "recall_vs_exact": recall_vs_exact})
            print(f"{size:>7} {kernel:12} insert {size / seconds:,.0f}/s"
                  + ("" if recall_vs_exact is None else f", recall@10 vs exact "
                     f"{recall_vs_exact:.3f}"), flush=True)
            del engine
    models = model_rows(args.models, args.queries) if args.models else []
    meta["wall_seconds"] = round(time.perf_counter() - started, 1)
    meta["load_average_at_end"] = list(os.getloadavg())
    payload = {"meta": meta, "rounds": args.rounds, "k": K, "dimension": DIMENSION,
               "seed": args.seed, "conversation_turns": args.conversation_turns,
               "data": "synthetic (see bench/recall_latency.py docstring)",
               "recall": recall_rows, "insert": insert_rows, "models": models}
    json_path, md_path = write_results(args.name, payload, markdown(payload))
    print(f"wrote {json_path} and {md_path} in {meta['wall_seconds']} s", file=sys.stderr)


def texts_and_ids(engine: MemoryEngine, results: list[list[str]]) -> list[list[str]]:
    """Results as texts: ids differ between engines, the synthetic texts identify rows
    (duplicates are vanishingly unlikely at 8-24 words from 50,000)."""
    return [[engine.get("bench", i).text for i in ids] for ids in results]


def overlap(reference: list[list[str]], other: list[list[str]]) -> float:
    """Share of the exact top-k found, over the queries both ran (the same first queries)."""
    pairs = list(zip(reference, other, strict=False))
    total = sum(len(r) for r, _ in pairs)
    return sum(len(set(r) & set(o)) for r, o in pairs) / total


if __name__ == "__main__":
    main()
