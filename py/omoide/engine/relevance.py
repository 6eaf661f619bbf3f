"""``relevance``: one score in [0, 1] per recall hit that means the same for every query,
character and embedding model, and the default cut-off below which a hit is not a match.

Raw scores cannot be compared across queries or models: e5 puts every cosine between ~0.74
and ~0.89, MiniLM between ~0.1 and ~0.6; fused z-scores are unbounded and a nonsense query
can out-score a real one. Relevance is therefore built from two pieces of evidence that are
scale-free by construction:

- **Vector standout** ``s_v``: how many standard deviations the memory's cosine stands above
  the cosines of the character's OTHER memories for this query (leave-one-out moments from
  the kernel's population mean/std, so it is meaningful from a handful of memories up),
  minus what chance alone gives: the best of ``n`` noise scores sits near ``sqrt(2 ln n)``
  deviations. A model that only produces noise for a query (MiniLM on Japanese) never gets
  past chance, whatever its cosines look like.
- **Lexical coverage** ``c`` in [0, 1]: the idf-weighted share of the query's distinct terms
  that the memory contains (``BM25Index.coverage``), so 1 means every query word is present,
  a stray shared common word counts for its small share of the query only, and a query word
  no memory holds (a typo, a topic the character never met) counts fully against. Unlike the
  BM25 score it does not grow with term frequency or shrink with memory length. Question
  words ("what", "how", "did", ...) are left out of it: they say what kind of answer is
  wanted, not what it is about, and conversations are full of them; so are Japanese bigrams
  written only in hiragana (particles and endings: くらい, ですか) and those holding 何 or 誰
  (何年, 何人: the Japanese question words). Coverage counts bigrams, but chance is judged
  by WORDS (``lexical_shares``; ``analyzer.query_words``: a Latin word, or a chain of
  same-script bigrams such as データベース or 原子質量, junction bigrams like 子の not counted;
  ``BM25Index.matched_words``): a memory that holds only one word of a query of three
  words or more has no lexical evidence at all. One shared word is what chance gives a
  multi-word query in any large enough store ("Kubernetes liveness probe" meets a paragraph
  on space probes, "MySQLのデータベースをSQLiteに移行する" any paragraph on databases), however
  many bigrams the word spans; a memory the query is about shares two words or more, or,
  for a query of one or two words ("法華経成立史の著者は"), one of them.

``relevance = 1 - (1 - r_v) * (1 - r_t)`` with ``r_v = sigmoid(VECTOR_SLOPE * (s_v -
VECTOR_CENTER))`` and ``r_t = sigmoid(TEXT_SLOPE * (c - TEXT_CENTER))``: a memory is relevant
when either ranker found clear evidence for it, and a ranker that found nothing does not veto
the other (a paraphrase has no shared words; an exact name may be noise to the vector model).
A recall mode uses the evidence it computed (vector: ``r_v``, full-text: ``r_t``, hybrid:
both). The four constants are the method's only parameters, set once on the dev sets of
bench/ (both models, all characters pooled; bench/recall_quality.py measures the cut-off) and
never per set. ``DEFAULT_MIN_RELEVANCE`` is the cut-off recall applies unless the caller
passes ``min_relevance``: when no hit of a query reaches it, the query matched nothing
("no good match") and recall returns no hit; otherwise the hits come back in rank order, each
with its own relevance (a weaker hit below a strong one is still shown, marked by its score).
A character with fewer than ``DEFAULT_CUT_POPULATION`` memories gets no default cut-off: so
few memories cannot show what chance looks like.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from omoide.engine.analyzer import SEGMENT_MARK, is_question_term, query_words, script

if TYPE_CHECKING:
    from omoide.engine.bm25 import BM25Index

VECTOR_SLOPE = 1.0  # per standard deviation of standout beyond chance
VECTOR_CENTER = 2.0  # standout beyond chance that is, on its own, an even call
TEXT_SLOPE = 40.0  # per unit of lexical coverage
TEXT_CENTER = 0.2  # coverage that is, on its own, an even call
DEFAULT_MIN_RELEVANCE = 0.5
# The default cut-off needs a population to tell a standout from chance: below this many
# memories it is not applied (hits still carry relevance; an explicit min_relevance applies).
DEFAULT_CUT_POPULATION = 20
MIN_POPULATION = 3  # fewer memories than this: no vector standout can be measured
# a query of this many words or more needs two of them in a memory (see the module doc)
LONE_WORD_QUERY = 3


def _hiragana_only(term: str) -> bool:
    return all(script(char) == "hiragana" for char in term)


def content_terms(terms: list[str]) -> list[str]:
    """The query terms that say what the query is about: English question words,
    all-hiragana Japanese bigrams (particles, endings: どれくらいか, ですか) and Japanese
    question bigrams (何年, 誰が) left out, and the whole-segment terms (#原子質量: a ranking
    feature; coverage counts the segment's bigrams, calibrated without them)."""
    return [t for t in terms if not is_question_term(t) and not _hiragana_only(t)
            and not t.startswith(SEGMENT_MARK)]


def lexical_shares(index: BM25Index, terms: list[str], ids: list[str]) -> list[float] | None:
    """The lexical coverage of each memory of ``ids`` by the query's content ``terms``
    (``BM25Index.coverage``; None when the query has no term), 0 for a memory that holds
    fewer of the query's words than chance rules out (one word of three or more; none of
    one or two). A query with no word (only grammar bigrams: 蓮の花の色は) keeps its
    coverage. O(terms + memory terms) per memory."""
    shares = index.coverage(terms, ids)
    words = query_words(terms)
    if shares is None or not words:
        return shares
    needed = 2 if len(words) >= LONE_WORD_QUERY else 1
    matched = index.matched_words(words, ids)
    return [share if held >= needed else 0.0
            for share, held in zip(shares, matched, strict=True)]


def chance_level(count: int) -> float:
    """Where the best of ``count`` standard-normal noise scores lies (``sqrt(2 ln n)``)."""
    return math.sqrt(2.0 * math.log(count)) if count > 1 else 0.0


def vector_standout(cosine: float, mean: float, std: float, count: int) -> float | None:
    """Standard deviations by which ``cosine`` exceeds the other ``count - 1`` memories'
    cosines (leave-one-out moments), minus ``chance_level(count)``; None when the
    population is too small or flat to say."""
    if count < MIN_POPULATION:
        return None
    others = count - 1
    total = mean * count - cosine
    total_sq = (std * std + mean * mean) * count - cosine * cosine
    other_mean = total / others
    variance = total_sq / others - other_mean * other_mean
    if variance <= 1e-12:
        return None
    return (cosine - other_mean) / math.sqrt(variance) - chance_level(count)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def relevance(standout: float | None, coverage: float | None) -> float:
    """The calibrated score in [0, 1] (see the module doc); 0 with no evidence at all."""
    miss = 1.0
    if standout is not None:
        miss *= 1.0 - _sigmoid(VECTOR_SLOPE * (standout - VECTOR_CENTER))
    if coverage is not None:
        miss *= 1.0 - _sigmoid(TEXT_SLOPE * (coverage - TEXT_CENTER))
    return 1.0 - miss
