"""The browser's BM25 scorer: ``PostingsScorer`` over the WebAssembly kernel (kernel/bm25.c).

Pyodide runs Python loops several times slower than CPython, and a query's postings at
100,000 memories are tens of thousands of postings: ``PureScorer`` spent ~25 ms there per
recall. Here Python only joins the query terms' postings (``array.extend``: a copy, no loop
over postings) and hands them, with each term's idf, the index's length tables (the scorer
keeps its copy and takes only the ordinals added since) and the BM25F constants
(``Query.constants()``), to ``createTextScorer()`` of
``kernel/vectors.js``, which copies them into its own WebAssembly memory and runs the same
formula (same evaluation order, so the same doubles as ``PureScorer``) in C.
"""

from __future__ import annotations

from array import array
from typing import Any

from ..engine.bm25 import PURE_SCORER, STRIDE, Matches, PostingsScorer, Query
from .rpc import handler
from .wasm_kernel import js_vectors


def _block(query: Query) -> tuple[array, array, array, array, array, int]:
    """The scorer's inputs: the postings joined, each term's start, the idfs, and the length
    tables with their name (the scorer keeps them: it copies only the ordinals added since)."""
    postings, offsets = array("i"), array("i", [0])
    for posting in query.postings:
        postings.extend(posting)
        offsets.append(len(postings))
    return (postings, offsets, array("d", query.idfs), query.lengths, query.context_lengths,
            query.table)


class WasmScorer:
    """``PostingsScorer`` whose loop over postings runs in WebAssembly. The kernel's scorer
    is made on first use (the engine is built before any query, and under CPython in tests);
    where the kernel is plain JavaScript it scores with ``PureScorer``."""

    def __init__(self) -> None:
        self._scorer: Any = None
        self._fallback: PostingsScorer | None = None

    def _kernel(self) -> Any:
        if self._scorer is None and self._fallback is None:
            self._scorer = js_vectors().createTextScorer()
            if self._scorer is None:
                self._fallback = PURE_SCORER
        return self._scorer

    @property
    def implementation(self) -> str:
        """"wasm" or "python" (plain-JavaScript kernel)."""
        return "python" if self._kernel() is None else "wasm"

    def top(self, query: Query, ordinals: int, allowed: array | None, k: int) -> Matches:
        scorer = self._kernel()
        if scorer is None:
            return PURE_SCORER.top(query, ordinals, allowed, k)
        found = scorer.top(*_block(query), ordinals, allowed, max(k, 0), *query.constants())
        return Matches(found.ordinals.to_py().tolist(), found.scores.to_py().tolist(),
                       float(found.total), float(found.totalSq))

    def at(self, query: Query, ordinals: int, wanted: array) -> list[float]:
        scorer = self._kernel()
        if scorer is None:
            return PURE_SCORER.at(query, ordinals, wanted)
        return scorer.at(*_block(query), ordinals, wanted,
                         *query.constants()).to_py().tolist()


@handler("bm25_info")
def bm25_info() -> dict[str, Any]:
    """Which BM25 scorer the engine uses ("wasm", or "python" on a plain-JavaScript kernel)
    and the bytes of WebAssembly memory it holds (0 before its first query)."""
    from .session import session  # session imports this module: resolved at call time

    scorer = session().engine.bm25_scorer
    if not isinstance(scorer, WasmScorer):
        return {"scorer": "python", "memory_bytes": 0}
    kernel = scorer._kernel()
    return {"scorer": scorer.implementation,
            "memory_bytes": 0 if kernel is None else int(kernel.memoryBytes)}


@handler("bm25_bench")
def bm25_bench(character: str, queries: list[str], k: int = 10) -> dict[str, Any]:
    """Time the engine's recall in Python (the verb without the JSON and lock around it),
    full-text and hybrid (and BM25's top 50 alone), with the Python scorer and with the
    WebAssembly one, alternating
    query by query on the character's own index (bench/bm25_browser.py). Query embeddings
    are cached by a first pass, so the figures exclude them. Also says whether both scorers
    gave the same hits and how many postings a query read (median)."""
    import statistics
    import time

    from ..engine.analyzer import analyze
    from .session import session

    engine = session().engine
    store = engine.existing_store(character)
    index = store.text_index  # completes a lazy build first
    scorers = {"python": PURE_SCORER, "wasm": engine.bm25_scorer}
    for query in queries:  # the query embeddings into the cache
        engine.recall(character, query, k=k, mode="hybrid", touch=False)
    times: dict[str, dict[str, list[float]]] = {
        n: {"fulltext": [], "hybrid": [], "bm25_top50": []} for n in scorers}
    same = True
    try:
        for query in queries:
            terms = store.analyzer(query)
            for name, scorer in scorers.items():  # BM25 alone, at hybrid's depth
                index.scorer = scorer
                started = time.perf_counter()
                index.search(terms, 50)
                times[name]["bm25_top50"].append((time.perf_counter() - started) * 1000)
            for mode in ("fulltext", "hybrid"):
                answers = []
                for name, scorer in scorers.items():
                    index.scorer = scorer
                    started = time.perf_counter()
                    hits = engine.recall(character, query, k=k, mode=mode, touch=False)
                    times[name][mode].append((time.perf_counter() - started) * 1000)
                    answers.append([(h.memory.id, round(h.score, 9)) for h in hits])
                same = same and answers[0] == answers[1]
    finally:
        index.scorer = engine.bm25_scorer
    postings = [sum(len(p) // STRIDE for p in index._query(analyze(q)).postings)
                for q in queries]

    def summary(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        return {"p50_ms": statistics.median(ordered),
                "p95_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]}

    return {"rows": len(store.records), "queries": len(queries), "same_answers": same,
            "postings_p50": statistics.median(postings),
            **{name: {mode: summary(v) for mode, v in by_mode.items()}
               for name, by_mode in times.items()}}
