"""Incremental BM25F inverted index over one character's memories, with array postings.

A document has two fields: its text and an optional index context (``Memory.context``: the
neighbouring turns of a conversation, the session date). BM25F (Robertson, Zaragoza & Taylor
2004) normalizes each field by its OWN length and average, weights them, and saturates the
sum once::

    x(t,d) = tf_text / (1 - b + b * |text| / avg|text|)
           + w_context * tf_context / (1 - b_context + b_context * |context| / avg|context|)
    score(d, q) = sum_t idf(t) * x(t,d) * (k1 + 1) / (x(t,d) + k1)

with the non-negative Lucene idf ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (df: documents
holding the term in either field) and ``avg|context|`` over the documents that have one. A
document without a context scores exactly as classic BM25 (the text's weight is 1), so a
store without contexts ranks as before; a conversation turn is no longer penalized for
talkative neighbours (its text is normalized by its own length).

Layout (what a scorer reads, in any language): every document gets an *ordinal* when it is
added (0, 1, 2, ... in order of addition; a changed text is a new document with a new
ordinal). Each term's postings are ONE ``array('i')`` of ``(ordinal, tf_text, tf_context)``
triples (``STRIDE``) in ascending ordinal order; a document's two lengths are in two
per-ordinal tables (``array('i')``, append-only: a length never changes under one ordinal)
that every query hands the scorer with its postings, and a number naming the tables' contents
(``Query.table``: new for every index and every renumbering), so a scorer that keeps a copy
of them copies only the ordinals added since. Removing a document sets both its tfs to 0 in
each of its terms' postings (found by bisection: O(terms x log postings), no scan), and
``df`` per term stays exact; scorers skip a posting whose tfs are both 0. When the removed
ordinals outnumber the live documents, the postings are renumbered once (amortized O(1) per
write). Postings are built from the records (on write, or lazily after boot); the browser
keeps them per record pack as derived data, stamped with ``LAYOUT_VERSION``, so a change of
this layout needs no migration (stored blocks of another layout are refused and rebuilt).

Scoring is done by a ``PostingsScorer``: ``PureScorer`` below is the one formula in Python;
CPython's engine uses numpy's (``omoide.kernels.numpy_bm25``: the same doubles); the browser
passes the WebAssembly kernel's (``omoide.browser.wasm_bm25``: the same formula in
C, ``kernel/bm25.c``), which gets the query terms' postings as one block of int32 and loops
over them outside Python. Both evaluate ``x`` from the constants of ``Query`` in the same
order (text part, then context part, each only when its tf is positive), and every scorer
sums a document's term contributions in the same order (the query's distinct terms in
first-occurrence order), so their scores are the same doubles and ties stay ties; ties are
broken by document id, here, for every scorer.
"""

from __future__ import annotations

import heapq
import itertools
import math
import operator
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, pairwise, repeat
from operator import add, floordiv, mul, sub
from typing import Protocol

STRIDE = 3  # a posting is (ordinal, tf_text, tf_context)
# The layout a ``PostingsBlock`` holds (STRIDE and what each int means): a block of another
# layout is not absorbed (engine/postings_block.py checks it). 1: quintuples that carried both
# lengths in every posting (20 bytes a posting; 12 now, the lengths in per-ordinal tables).
LAYOUT_VERSION = 2
_tables = itertools.count(1)  # names of length tables' contents (``Query.table``)


@dataclass(frozen=True)
class BM25Result:
    """Top-k documents plus the moments of the scores of ALL documents (unmatched score 0)."""

    ids: list[str]
    scores: list[float]
    mean: float
    std: float
    count: int


@dataclass(frozen=True)
class Query:
    """What a scorer needs: per distinct query term with postings, its idf and postings (an
    ``array('i')`` of triples; read-only), the per-ordinal lengths of the text and of the
    context (read-only; ``table`` names their contents: the same number means the same
    lengths at the same ordinals, possibly more ordinals appended), and the constants of the
    formula: a field's normalizer is ``base + slope * length`` (``1 - b`` and
    ``b / average length``)."""

    idfs: list[float]
    postings: list[array]
    lengths: array
    context_lengths: array
    table: int
    k1: float
    text_base: float
    text_slope: float
    context_weight: float
    context_base: float
    context_slope: float

    def constants(self) -> tuple[float, float, float, float, float, float]:
        """The formula's constants in the order every scorer takes them."""
        return (self.k1, self.text_base, self.text_slope, self.context_weight,
                self.context_base, self.context_slope)


@dataclass(frozen=True)
class Matches:
    """A scorer's answer: ``ordinals``/``scores`` hold every matched document better than the
    k-th best score plus every one equal to it (ties are the caller's to break), in any
    order; ``total``/``total_sq`` are the sums of all matched scores and of their squares."""

    ordinals: list[int]
    scores: list[float]
    total: float
    total_sq: float


class PostingsScorer(Protocol):
    def top(self, query: Query, ordinals: int, allowed: array | None, k: int) -> Matches:
        """The best k documents of ``query`` (see ``Matches``); ``ordinals`` bounds every
        ordinal in the postings; ``allowed``: ``array('i')`` of the only ordinals to score."""

    def at(self, query: Query, ordinals: int, wanted: array) -> list[float]:
        """The score of each ordinal in ``wanted`` (``array('i')``), 0.0 when unmatched."""


class PureScorer:
    """The BM25 formula in Python: a loop over the postings (CPython, and the reference)."""

    @staticmethod
    def _accumulate(query: Query, allowed: set[int] | None) -> dict[int, float]:
        k1, text_base, text_slope, weight, context_base, context_slope = query.constants()
        k1_plus_1 = k1 + 1.0
        lengths, context_lengths = query.lengths, query.context_lengths
        scores: dict[int, float] = {}
        for idf, posting in zip(query.idfs, query.postings, strict=True):
            p = iter(posting)
            for ordinal, tf, context_tf in zip(p, p, p, strict=True):
                if allowed is not None and ordinal not in allowed:
                    continue
                x = tf / (text_base + text_slope * lengths[ordinal]) if tf > 0 else 0.0
                if context_tf > 0:
                    x += weight * context_tf / (context_base
                                                + context_slope * context_lengths[ordinal])
                if x > 0.0:
                    scores[ordinal] = scores.get(ordinal, 0.0) + idf * x * k1_plus_1 / (x + k1)
        return scores

    def top(self, query: Query, ordinals: int, allowed: array | None, k: int) -> Matches:
        scores = self._accumulate(query, None if allowed is None else set(allowed))
        total = sum(scores.values())
        total_sq = sum(s * s for s in scores.values())
        if k <= 0:
            return Matches([], [], total, total_sq)
        if len(scores) > k:
            floor = heapq.nlargest(k, scores.values())[-1]
            scores = {o: s for o, s in scores.items() if s >= floor}
        return Matches(list(scores), list(scores.values()), total, total_sq)

    def at(self, query: Query, ordinals: int, wanted: array) -> list[float]:
        scores = self._accumulate(query, set(wanted))
        return [scores.get(o, 0.0) for o in wanted]


PURE_SCORER = PureScorer()


@dataclass(frozen=True)
class PostingsBlock:
    """The postings of some documents as one self-contained index (``BM25Index.block``):
    the documents have local ordinals 0..n-1 (``ids`` order); ``terms[t]``'s postings are
    ``postings[term_ends[t-1]:term_ends[t]]`` (triples, as in ``BM25Index``, local
    ordinals); document ``d``'s distinct terms (indices into ``terms``) are
    ``doc_terms[doc_term_ends[d-1]:doc_term_ends[d]]``. What a store absorbs in array
    operations instead of analyzing each text again (persisted by the browser per record
    pack)."""

    ids: list[str]
    terms: list[str]
    lengths: array
    context_lengths: array
    term_ends: array
    postings: array
    doc_term_ends: array
    doc_terms: array


class BM25Index:
    # removed ordinals tolerated before renumbering: max(live documents, this)
    renumber_floor = 1024

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, context_weight: float = 1.0,
                 context_b: float = 0.75, scorer: PostingsScorer | None = None) -> None:
        if k1 < 0 or not 0 <= b <= 1 or not 0 <= context_b <= 1 or context_weight < 0:
            raise ValueError("BM25 needs k1 >= 0, 0 <= b <= 1, 0 <= context_b <= 1 and "
                             "context_weight >= 0")
        self.k1 = k1
        self.b = b
        self.context_weight = context_weight
        self.context_b = context_b
        self.scorer: PostingsScorer = scorer or PURE_SCORER
        self._term_id: dict[str, int] = {}
        self._terms: list[str] = []  # term id -> term
        self._live_terms = 0  # terms with df > 0
        self._df = array("i")  # term id -> live documents holding it
        self._postings: list[array] = []  # term id -> triples (see STRIDE)
        self._ordinal: dict[str, int] = {}  # live document id -> ordinal
        self._id_at: list[str | None] = []  # ordinal -> document id (None: removed)
        self._length = array("i")  # ordinal -> length of the text
        self._context_length = array("i")  # ordinal -> length of the context (0: none)
        self._table = next(_tables)  # names the two length tables' contents (Query.table)
        self._doc_terms: dict[str, array] = {}  # live document id -> its distinct term ids
        # absorbed blocks' documents keep their term lists in the block (``_terms_of``):
        # (first ordinal, doc_term_ends, doc_terms, block term -> term id), by first ordinal
        self._blocks: list[tuple[int, array, array, array]] = []
        self._block_bases = array("i")
        self._total_length = 0  # of the live texts
        self._total_context_length = 0  # of the live contexts
        self._with_context = 0  # live documents with a context

    def __len__(self) -> int:
        return len(self._ordinal)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._ordinal

    @property
    def term_count(self) -> int:
        """Distinct terms held by at least one live document."""
        return self._live_terms

    def add(self, doc_id: str, terms: Sequence[str], context: Sequence[str] = ()) -> None:
        """Index (or re-index) a document: the terms of its text and of its context."""
        self.remove(doc_id)
        ordinal = len(self._id_at)
        length, context_length = len(terms), len(context)
        text_tf, context_tf = Counter(terms), Counter(context)
        ids = array("i")
        for term in (text_tf | context_tf) if context else text_tf:
            term_id = self._term_id.get(term)
            if term_id is None:
                term_id = self._term_id[term] = len(self._postings)
                self._terms.append(term)
                self._postings.append(array("i"))
                self._df.append(0)
            self._postings[term_id].extend((ordinal, text_tf[term], context_tf[term]))
            self._df[term_id] += 1
            self._live_terms += self._df[term_id] == 1
            ids.append(term_id)
        self._ordinal[doc_id] = ordinal
        self._id_at.append(doc_id)
        self._length.append(length)
        self._context_length.append(context_length)
        self._doc_terms[doc_id] = ids
        self._total_length += length
        self._total_context_length += context_length
        self._with_context += context_length > 0

    def remove(self, doc_id: str) -> None:
        ordinal = self._ordinal.pop(doc_id, None)
        if ordinal is None:
            return
        terms = self._doc_terms.pop(doc_id, None)
        for term_id in self._block_terms(ordinal) if terms is None else terms:
            self._df[term_id] -= 1
            posting = self._postings[term_id]
            if self._df[term_id] == 0:
                del posting[:]  # every posting left is a removed document's
                self._live_terms -= 1
                continue
            with memoryview(posting) as view, view[::STRIDE] as ordinals:
                at = bisect_left(ordinals, ordinal) * STRIDE
            posting[at + 1] = posting[at + 2] = 0
        self._id_at[ordinal] = None
        self._total_length -= self._length[ordinal]
        context_length = self._context_length[ordinal]
        self._total_context_length -= context_length
        self._with_context -= context_length > 0
        if len(self._id_at) - len(self._ordinal) > max(len(self._ordinal), self.renumber_floor):
            self._renumber()

    def _renumber(self) -> None:
        """Give the live documents ordinals 0..n-1 (in their order) and drop the removed
        documents' postings: O(postings), once the removed outnumber the live."""
        new_of = array("i", [-1]) * len(self._id_at)
        live = [doc_id for doc_id in self._id_at if doc_id is not None]
        for doc_id in live:  # the absorbed blocks' term lists, before their ordinals move
            if doc_id not in self._doc_terms:
                self._doc_terms[doc_id] = self._block_terms(self._ordinal[doc_id])
        self._blocks.clear()
        del self._block_bases[:]
        lengths, context_lengths = array("i"), array("i")
        for new, doc_id in enumerate(live):
            old = self._ordinal[doc_id]
            new_of[old] = new
            lengths.append(self._length[old])
            context_lengths.append(self._context_length[old])
            self._ordinal[doc_id] = new
        for term_id, posting in enumerate(self._postings):
            if not posting:
                continue
            kept = array("i")
            p = iter(posting)
            for ordinal, tf, context_tf in zip(p, p, p, strict=True):
                if tf or context_tf:
                    kept.extend((new_of[ordinal], tf, context_tf))
            self._postings[term_id] = kept
        self._id_at = list(live)
        self._length = lengths
        self._context_length = context_lengths
        self._table = next(_tables)  # the lengths moved: a scorer's copy is stale

    def block(self) -> PostingsBlock:
        """This index as a ``PostingsBlock`` (an index that only ever added documents: its
        ordinals are 0..n-1 and every term has a posting)."""
        if len(self._ordinal) != len(self._id_at) or self._live_terms != len(self._terms):
            raise ValueError("only an index without removals makes a block")
        ids: list[str] = self._id_at  # type: ignore[assignment]  # none removed
        doc_terms = list(map(self._terms_of, ids))
        return PostingsBlock(
            ids=list(ids), terms=list(self._terms), lengths=array("i", self._length),
            context_lengths=array("i", self._context_length),
            term_ends=array("i", accumulate(map(len, self._postings))),
            postings=array("i", b"".join(map(array.tobytes, self._postings))),
            doc_term_ends=array("i", accumulate(map(len, doc_terms))),
            doc_terms=array("i", b"".join(map(array.tobytes, doc_terms))))

    def absorb(self, block: PostingsBlock, drop: Collection[str] = ()) -> None:
        """Add the documents of ``block`` as ``add`` would have, less those of ``drop`` and
        those this index already holds (their postings are added, then removed: ``drop`` is
        meant to be small). No Python step per posting or per document term: the block's
        ordinals are shifted past this index's in one big-integer addition, each term's
        postings appended in one copy, the counts updated in C-level maps; a document's term
        list stays in the block until something asks for it (``_terms_of``)."""
        n = len(block.ids)
        if not n:
            return
        base = len(self._id_at)
        postings = _shifted(block.postings, base)
        term_id, all_postings, df = self._term_id, self._postings, self._df
        found = list(map(term_id.get, block.terms))
        if None in found:  # terms new to this index (most of them only in a first block)
            for at, term in enumerate(block.terms):
                if found[at] is None:
                    found[at] = term_id[term] = len(all_postings)
                    self._terms.append(term)
                    all_postings.append(array("i"))
                    df.append(0)
        ends = block.term_ends
        counts = array("i", map(sub, ends, chain((0,), ends[:-1])))
        width = postings.itemsize
        raw = memoryview(postings).cast("B")
        spans = map(slice, map(mul, chain((0,), ends[:-1]), repeat(width)),
                    map(mul, ends, repeat(width)))
        deque(map(array.frombytes, map(all_postings.__getitem__, found),
                  map(raw.__getitem__, spans)), maxlen=0)
        self._live_terms += sum(map(operator.not_, map(df.__getitem__, found)))
        deque(map(df.__setitem__, found, map(add, map(df.__getitem__, found),
                                             map(floordiv, counts, repeat(STRIDE)))),
              maxlen=0)
        self._blocks.append((base, block.doc_term_ends, block.doc_terms, array("i", found)))
        self._block_bases.append(base)
        ids = list(block.ids)
        held = self._ordinal.keys() & ids
        gone = set(drop).intersection(ids) | held
        if gone:  # placeholders, removed below: an id held already keeps its own document
            ids = [object() if i in gone else i for i in ids]  # type: ignore[misc]
        self._ordinal.update(zip(ids, range(base, base + n), strict=True))
        self._id_at.extend(ids)
        self._length.extend(block.lengths)
        self._context_length.extend(block.context_lengths)
        self._total_length += sum(block.lengths)
        self._total_context_length += sum(block.context_lengths)
        self._with_context += n - block.context_lengths.count(0)
        for placeholder in filter(_is_placeholder, ids):
            self.remove(placeholder)  # type: ignore[arg-type]

    def _terms_of(self, doc_id: str) -> array | None:
        """A live document's distinct term ids (None: no such document)."""
        terms = self._doc_terms.get(doc_id)
        if terms is None:
            ordinal = self._ordinal.get(doc_id)
            if ordinal is not None:
                terms = self._block_terms(ordinal)
        return terms

    def _block_terms(self, ordinal: int) -> array:
        """The term ids of an absorbed document, from its block."""
        base, ends, local, global_ids = self._blocks[bisect_right(self._block_bases, ordinal)
                                                     - 1]
        at = ordinal - base
        return array("i", map(global_ids.__getitem__,
                              local[ends[at - 1] if at else 0:ends[at]]))

    def idf(self, term: str) -> float:
        term_id = self._term_id.get(term)
        df = 0 if term_id is None else self._df[term_id]
        n = len(self._ordinal)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _query(self, terms: Sequence[str], weights: Mapping[str, float] | None = None) -> Query:
        """The query's distinct terms that have postings, in first-occurrence order (every
        scorer sums in this order), each idf times its weight in ``weights`` (default 1; a
        term weighted 0 or less is left out), with the formula's constants for the index as
        it is."""
        n = len(self._ordinal)
        average = (self._total_length / n if n else 0.0) or 1.0
        context_average = (self._total_context_length / self._with_context
                           if self._with_context else 0.0) or 1.0
        idfs, postings = [], []
        for term in dict.fromkeys(terms):
            term_id = self._term_id.get(term)
            if term_id is None or not self._df[term_id]:
                continue
            weight = weights.get(term, 1.0) if weights else 1.0
            weighted = self.idf(term) * weight if weight > 0.0 else 0.0
            if not weighted > 0.0:
                # a weight of 0 leaves the term out (scorers need positive idfs), and so does
                # one so small that the product is 0: its documents would score exactly 0
                continue
            postings.append(self._postings[term_id])
            idfs.append(weighted)
        return Query(idfs, postings, self._length, self._context_length, self._table,
                     self.k1, 1.0 - self.b, self.b / average,
                     self.context_weight, 1.0 - self.context_b, self.context_b / context_average)

    def search(
        self, terms: Sequence[str], k: int, allowed: set[str] | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> BM25Result:
        """The best k documents for ``terms`` (each weighted by ``weights``, default 1)."""
        if allowed is None:
            count, subset = len(self._ordinal), None
        else:
            subset = array("i", [o for o in map(self._ordinal.get, allowed) if o is not None])
            count = len(subset)
        query = self._query(terms, weights)
        if not query.postings or count == 0:
            return BM25Result([], [], 0.0, 0.0, count)
        found = self.scorer.top(query, len(self._id_at), subset, k)
        mean = found.total / count
        variance = max(found.total_sq / count - mean * mean, 0.0)
        id_at = self._id_at
        # best first, ties by id; nsmallest compares the tuples in C (a term every memory
        # holds ties thousands of documents at the k-th score)
        best = heapq.nsmallest(max(k, 0), zip(map(operator.neg, found.scores),
                                              map(id_at.__getitem__, found.ordinals),
                                              strict=True))
        return BM25Result(
            ids=[doc_id for _, doc_id in best],
            scores=[-score for score, _ in best],
            mean=mean,
            std=variance**0.5,
            count=count,
        )

    def coverage(self, terms: Sequence[str], ids: Sequence[str]) -> list[float] | None:
        """Per document, the idf-weighted share of the query's distinct terms it contains
        (1.0: every term); None when the query has no term. O(terms) per document.

        Japanese is indexed as overlapping bigrams, so one shared bigram inside a longer
        query word (イン of マインクラフト) is mostly chance: a bigram of a longer run counts
        only when a neighbouring bigram of the same run is present too (a 3+ character match).
        """
        weights = {term: self.idf(term) for term in set(terms)}
        total = sum(weights.values())
        if total <= 0.0:
            return None
        runs = _bigram_runs(terms)
        term_id = {t: self._term_id.get(t, -1) for t in weights}
        out = []
        for doc_id in ids:
            held = self._terms_of(doc_id)
            present = {t for t, i in term_id.items() if held is not None and i in held}
            matched = set()
            for run in runs:
                for i, term in enumerate(run):
                    if term in present and (len(run) == 1 or (i > 0 and run[i - 1] in present)
                                            or (i + 1 < len(run) and run[i + 1] in present)):
                        matched.add(term)
            out.append(sum(weights[t] for t in matched) / total)
        return out

    def matched_words(self, words: Sequence[Sequence[str]], ids: Sequence[str]) -> list[int]:
        """Per document, how many of the query's ``words`` it holds (a word: its terms in
        order, ``analyzer.query_words``). A one-term word is held with its term; a longer one
        (a chain of overlapping bigrams) with two ADJACENT terms of it, i.e. a shared run of
        3+ characters: one bigram inside a longer word is mostly chance (イン of
        マインクラフト). O(document terms + query terms) per document; 0 for an unknown id."""
        wanted = [[self._term_id.get(t, -1) for t in word] for word in words]
        out = []
        for doc_id in ids:
            held_ids = self._terms_of(doc_id)
            held = set(held_ids) if held_ids is not None else set()
            count = 0
            for word in wanted:
                if len(word) == 1:
                    count += word[0] in held
                else:
                    count += any(a in held and b in held for a, b in pairwise(word))
            out.append(count)
        return out

    def scores(self, terms: Sequence[str], ids: Sequence[str],
               weights: Mapping[str, float] | None = None) -> list[float]:
        """BM25F of the given documents (0 for no match or unknown id)."""
        known = [i for i in ids if i in self._ordinal]
        query = self._query(terms, weights)
        if not known or not query.postings:
            return [0.0] * len(ids)
        wanted = array("i", [self._ordinal[i] for i in known])
        found = dict(zip(known, self.scorer.at(query, len(self._id_at), wanted), strict=True))
        return [found.get(i, 0.0) for i in ids]

    def term_frequencies(self, doc_id: str) -> dict[str, tuple[int, int]]:
        """The terms of one live document with their frequencies in its text and in its
        context (benchmarks, tests)."""
        ordinal = self._ordinal[doc_id]
        out = {}
        for term_id in self._terms_of(doc_id):  # type: ignore[union-attr]
            posting = self._postings[term_id]
            with memoryview(posting) as view, view[::STRIDE] as ordinals:
                at = bisect_left(ordinals, ordinal) * STRIDE
            out[self._terms[term_id]] = (posting[at + 1], posting[at + 2])
        return out

    def document_length(self, doc_id: str) -> tuple[int, int]:
        """The lengths (in terms) of one live document's text and context."""
        ordinal = self._ordinal[doc_id]
        return self._length[ordinal], self._context_length[ordinal]


def _shifted(postings: array, base: int) -> array:
    """A copy of ``postings`` with ``base`` added to every ordinal (each triple's first
    int), in one big-integer addition over the bytes (C speed, no step per posting): every
    int is non-negative and every shifted ordinal stays below 2**31, so no addition carries
    out of its own 32 bits."""
    shifted = array("i", postings)
    if not base or not shifted:
        return shifted
    if sys.byteorder != "little":
        shifted.byteswap()
    width = shifted.itemsize
    step = base.to_bytes(width, "little") + bytes(width * (STRIDE - 1))
    total = int.from_bytes(shifted.tobytes(), "little") + int.from_bytes(
        step * (len(shifted) // STRIDE), "little")
    shifted = array("i", total.to_bytes(len(shifted) * width, "little"))
    if sys.byteorder != "little":
        shifted.byteswap()
    return shifted


def _is_placeholder(doc_id: object) -> bool:
    return type(doc_id) is object


def _bigram_runs(terms: Sequence[str]) -> list[list[str]]:
    """Terms grouped into runs: consecutive overlapping two-character terms (``東京``, ``京都``)
    form one run, every other term is a run of its own."""
    runs: list[list[str]] = []
    for term in terms:
        if (runs and len(term) == 2 and len(runs[-1][-1]) == 2
                and runs[-1][-1][1] == term[0] and not term.isascii()):
            runs[-1].append(term)
        else:
            runs.append([term])
    return runs
