"""BM25F: a memory's text and its index context are two fields, each normalized by its own
length and average (``engine/bm25.py``).

- A store without contexts scores exactly as classic BM25 (JSQuAD-like stores rank as before
  the fields existed), whatever the context field's constants.
- A turn is not penalized for talkative neighbours: the length of its context does not
  change how its own text scores.
- The WebAssembly scorer (``kernel/bm25.c`` through ``web/kernel/vectors.js``, run here in
  node, both the SIMD and the scalar build) gives the same doubles as ``PureScorer`` for any
  history of adds, updates and removals (the browser repeats this end to end in
  ``tests/browser/test_bm25_postings.py``).
"""

from __future__ import annotations

import math
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import PURE_SCORER, BM25Index
from omoide.kernels.pure_kernel import PureKernel
from tests import node_kernel
from tests.test_bm25_postings import WORDS, index_terms, operations, queries, texts
from tests.test_engine_embedder import HashingEmbedder

CONSTANTS = st.tuples(st.sampled_from([0.0, 0.5, 1.2, 2.0]), st.sampled_from([0.0, 0.3, 0.75, 1.0]),
                      st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]),
                      st.sampled_from([0.0, 0.3, 0.75, 1.0]))


def classic_bm25(docs: dict[str, list[str]], query: list[str], k1: float, b: float) -> dict:
    """Textbook BM25 (one field): what a store without contexts must score."""
    n = len(docs)
    avgdl = sum(len(t) for t in docs.values()) / n or 1.0
    out = {}
    for doc_id, terms in docs.items():
        score = 0.0
        for term in dict.fromkeys(query):
            tf = terms.count(term)
            if tf:
                df = sum(term in t for t in docs.values())
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(terms) / avgdl))
        if score:
            out[doc_id] = score
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(texts, min_size=1, max_size=30), st.lists(texts.filter(bool), min_size=1,
                                                           max_size=4), CONSTANTS)
def test_a_store_without_contexts_scores_as_classic_bm25(bodies, asked, constants):
    k1, b, weight, context_b = constants
    index = BM25Index(k1=k1, b=b, context_weight=weight, context_b=context_b)
    docs = {f"d{n}": analyze(body) for n, body in enumerate(bodies)}
    for doc_id, terms in docs.items():
        index.add(doc_id, terms)
    for text in asked:
        terms = analyze(text)
        want = classic_bm25(docs, terms, k1, b)
        got = index.search(terms, len(docs))
        assert dict(zip(got.ids, got.scores, strict=True)) == pytest.approx(want, rel=1e-12)


def test_a_turn_is_not_penalized_for_talkative_neighbours():
    index = BM25Index()
    index.add("quiet", analyze("Mel: I bought a violin"), analyze("Jon: nice"))
    index.add("talkative", analyze("Mel: I bought a violin"),
              analyze("Jon: " + " ".join([w for w in WORDS if w != "violin"] * 6)))
    index.add("other", analyze("Jon: the river was cold"), analyze("Mel: brr"))
    quiet, talkative = index.scores(analyze("violin"), ["quiet", "talkative"])
    assert quiet == talkative > 0
    # a word of the context still finds the turn, below the turn that says it itself
    index = BM25Index()
    index.add("says-it", analyze("Jon: I love chess"), analyze("Mel: hi there"))
    index.add("hears-it", analyze("Mel: me too"), analyze("Jon: I love chess"))
    says, hears = index.scores(analyze("chess"), ["says-it", "hears-it"])
    assert says > hears > 0


def test_the_engine_indexes_text_and_context_as_two_fields():
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel, bm25_context_weight=0.25,
                          bm25_context_b=0.5)
    memory = engine.remember("mika", "Mel: I bought a violin", context="Jon: violin? nice")
    index = engine.stores["mika"].text_index
    assert index.term_frequencies(memory.id)["violin"] == (1, 1)
    assert index.document_length(memory.id) == (len(analyze("Mel: I bought a violin")),
                                                 len(analyze("Jon: violin? nice")))
    assert (index.context_weight, index.context_b) == (0.25, 0.5)


def test_bad_field_constants_are_refused():
    for bad in ({"context_weight": -0.1}, {"context_b": 1.5}, {"context_b": -0.1}):
        with pytest.raises(ValueError, match="context"):
            BM25Index(**bad)


# -- the WebAssembly scorer gives PureScorer's doubles ---------------------------------------

NODE_SERVER = """
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
const { loadKernel, createTextScorer } = await import(%(vectors)s);
const scorers = {};
for (const [name, file] of [["wasm-simd", "topk.wasm"], ["wasm", "topk-scalar.wasm"]]) {
  const bytes = readFileSync(new URL(file, %(kernel_dir)s));
  scorers[name] = createTextScorer(await loadKernel(name, { bytes: { [name]: bytes } }));
}
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const q = JSON.parse(line);
  const out = {};
  for (const [name, scorer] of Object.entries(scorers)) {
    const top = scorer.top(q.postings, q.offsets, q.idfs, q.lengths, q.contextLengths, q.table,
                           q.ordinals, q.subset, q.k, ...q.constants);
    const at = scorer.at(q.postings, q.offsets, q.idfs, q.lengths, q.contextLengths, q.table,
                         q.ordinals, q.wanted, ...q.constants);
    out[name] = { ordinals: Array.from(top.ordinals), scores: Array.from(top.scores),
                  total: top.total, totalSq: top.totalSq, at: Array.from(at) };
  }
  process.stdout.write(JSON.stringify(out) + "\\n");
}
"""


@pytest.fixture(scope="module")
def wasm_scorers(tmp_path_factory):
    """A node process answering queries with both WebAssembly builds of the scorer."""
    yield from node_kernel.serve(tmp_path_factory, "bm25f", NODE_SERVER)


def apply(index: BM25Index, ops) -> None:
    for op, n, doc in ops:
        if op == "add":
            index.add(f"d{n}", *index_terms(*doc))
        else:
            index.remove(f"d{n}")


def wasm_answers(wasm_scorers, query, ordinals: int, k: int, subset: array | None = None
                 ) -> dict:
    """Both WebAssembly builds' answers to ``query``: top k (within ``subset`` when given)
    and the scores of every ordinal."""
    postings, offsets = [], [0]
    for posting in query.postings:
        postings += posting.tolist()
        offsets.append(len(postings))
    return wasm_scorers({
        "postings": postings, "offsets": offsets, "idfs": query.idfs,
        "lengths": query.lengths.tolist(), "contextLengths": query.context_lengths.tolist(),
        "table": query.table, "ordinals": ordinals,
        "subset": None if subset is None else subset.tolist(), "k": k,
        "constants": list(query.constants()), "wanted": list(range(ordinals))})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations, queries, CONSTANTS)
def test_the_webassembly_scorer_gives_the_pure_scorers_doubles(wasm_scorers, ops, asked,
                                                               constants):
    k1, b, weight, context_b = constants
    index = BM25Index(k1=k1, b=b, context_weight=weight, context_b=context_b)
    index.renumber_floor = 3
    apply(index, ops)
    ordinals = len(index._id_at)
    for text, k, allowed_numbers in asked:
        query = index._query(analyze(text))
        subset = None if allowed_numbers is None else array(
            "i", sorted(o for o in allowed_numbers if o < ordinals))
        wanted = array("i", range(ordinals))
        pure = PURE_SCORER.top(query, ordinals, subset, k)
        pure_at = PURE_SCORER.at(query, ordinals, wanted)
        answers = wasm_answers(wasm_scorers, query, ordinals, k, subset)
        for name, got in answers.items():
            assert sorted(zip(got["ordinals"], got["scores"], strict=True)) == \
                sorted(zip(pure.ordinals, pure.scores, strict=True)), name
            assert (got["total"], got["totalSq"]) == (pure.total, pure.total_sq), name
            assert got["at"] == pure_at, name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([0, 0, 1]), operations, queries), min_size=2,
                max_size=6))
def test_the_scorers_copy_of_the_lengths_follows_an_index_that_changes(wasm_scorers, rounds):
    """The scorer keeps the length tables between queries and copies only the ordinals added
    since the last query of the same table: writes (new ordinals), removals and renumbering
    (a new table) between queries, and several indexes asking in turn, give the pure
    scorer's doubles."""
    indexes = [BM25Index(), BM25Index(k1=2.0, b=1.0)]
    for index in indexes:
        index.renumber_floor = 3
    for which, ops, asked in rounds:
        index = indexes[which]
        apply(index, ops)
        ordinals = len(index._id_at)
        for text, k, _ in asked:
            query = index._query(analyze(text))
            pure = PURE_SCORER.top(query, ordinals, None, k)
            pure_at = PURE_SCORER.at(query, ordinals, array("i", range(ordinals)))
            for name, got in wasm_answers(wasm_scorers, query, ordinals, k).items():
                assert sorted(zip(got["ordinals"], got["scores"], strict=True)) == \
                    sorted(zip(pure.ordinals, pure.scores, strict=True)), name
                assert got["at"] == pure_at, name
