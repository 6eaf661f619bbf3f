"""Text analyzer for BM25: one function from text to index terms, for English and Japanese.

- NFKC first (full-width ＡＢＣ１２３ → ABC123, half-width ｶﾀｶﾅ → カタカナ), then case folding.
- Latin letters and digits form words (``[^\\W_]`` minus CJK); a light English stopword list
  drops the words that match nearly every memory ("the", "is", ...).
  An English word then loses its inflection (``engine/stemmer.py``, Porter's step 1:
  painting, painted, paints -> paint), so a question meets the statement that answers it.
- Japanese has no spaces, so each run of Han/Hiragana/Katakana becomes overlapping character
  bigrams (東京都 → 東京, 京都); a run of one character is kept as a unigram. Bigrams need no
  dictionary, run identically in Pyodide and CPython, and were measured strong on JSQuAD.
- Each kanji or katakana segment of such a run is ALSO one whole term, marked ``#``
  (中性子の質量 → ..., #中性子, #質量): bigrams cannot tell 原子質量 from a text that holds
  原子 and 子質 and 質量 apart, nor see a lone kanji (車の); a whole segment matches only the
  same word written the same way. Measured on JSQuAD full-text hit@1 0.891 -> 0.899
  (BENCHMARKS.md, Recall v2). Hiragana segments are grammar and get no such term.
- Everything else (punctuation, symbols, emoji) separates tokens.

``query_words`` regroups a query's terms into the words they came from (what relevance
counts): a Latin word or a lone character is a word; overlapping bigrams of ONE script
(kanji 原子質量, katakana データベース) chain into a word; a bigram across scripts (子の, る方:
a noun meeting its particle) or in hiragana is grammar and belongs to no word.

``query_weights``: in the full-text ranking a *junction* bigram of the query (across scripts:
子の, る方) counts half: one of its characters is a particle or an ending, so a paragraph that
shares it shares half a word. Measured on JSQuAD (BENCHMARKS.md, Recall v2): full-text hit@1
0.900 -> 0.903, hybrid e5 0.917 -> 0.919, MiniLM 0.900 -> 0.905; English is unaffected.
A *question term* of the query (``QUESTION_WORDS``: what, when, did, you, her, ...; a
bigram holding 何 or 誰) counts 0 in the ranking, as it already did in relevance: it names
the kind of answer wanted, not the memory, and conversations are full of such words (a
question turn "What are you up to?" otherwise shares "what" and "you" with every question
asked). A query made only of question terms keeps them. Measured in BENCHMARKS.md (Recall
v2, session 9): with the stemmer, LoCoMo hybrid any@1 / any@10 / all@10 rise with both
models; without it, all@10 fell (so the two go together).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from omoide.engine.stemmer import stem

# Bumped by every change of what ``analyze`` returns for some text: persisted postings
# (engine/postings_block.py) made by another version are not used, the texts are analyzed.
ANALYZER_VERSION = 1
SEGMENT_MARK = "#"  # prefix of a whole-segment term; never part of a word (not alphanumeric)
# inside a CJK run: a katakana segment, or a segment of everything that is neither hiragana
# nor katakana (kanji, 々 〆 〇)
_SEGMENT = re.compile("[\u30a0-\u30ff\u31f0-\u31ff]+|[^\u3040-\u30ff\u31f0-\u31ff]+")
ENGLISH_STOPWORDS = frozenset(
    """a an and are as at be but by for from has have i if in into is it its of on or so
    that the their then there these they this to was were will with""".split()
)


# The characters of Japanese runs, one list read by ``is_cjk`` and by ``analyze``'s tokenizer.
_CJK_RANGES = (
    (0x3040, 0x30FF),  # Hiragana + Katakana (incl. ー U+30FC)
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3005, 0x3007),  # 々 〆 〇
    (0x20000, 0x2FA1F),  # extensions B.. and compatibility supplement
)
_CJK_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES)
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")


def is_cjk(char: str) -> bool:
    """Han (incl. extension A and compatibility), Hiragana, Katakana, and the prolonged mark."""
    return _CJK_CHAR.fullmatch(char) is not None


def script(char: str) -> str:
    """``"hiragana"``, ``"katakana"`` (with ー and ・), ``"han"`` (kanji, 々 〆 〇) or
    ``"other"`` (everything ``is_cjk`` rejects)."""
    code = ord(char)
    if 0x3040 <= code <= 0x309F:
        return "hiragana"
    if 0x30A0 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF:
        return "katakana"
    return "han" if is_cjk(char) else "other"


JUNCTION_WEIGHT = 0.5  # a bigram across scripts is half word, half grammar
# English question and pronoun words, as ``analyze`` emits them (case-folded, never stemmed;
# its stopwords are gone already): they say what kind of answer is wanted and who talks, not
# what it is about.
QUESTION_WORDS = frozenset(
    """what how when where who whom whose why which do does did done you your i me my we us
    our he she his her him they them"""
    .split()
)
# Japanese question kanji: a bigram holding one (何年, 何人, 誰か) asks, it does not name.
JAPANESE_QUESTION_CHARS = frozenset("何誰")


def is_junction(term: str) -> bool:
    """A bigram whose two characters are of different Japanese scripts (子の, る方, 本ア)."""
    return (len(term) == 2 and is_cjk(term[0]) and is_cjk(term[1])
            and script(term[0]) != script(term[1]))


def is_question_term(term: str) -> bool:
    """An English question or pronoun word, or a bigram holding a Japanese question kanji."""
    return term in QUESTION_WORDS or (len(term) == 2
                                      and not JAPANESE_QUESTION_CHARS.isdisjoint(term))


def query_weights(terms: Sequence[str]) -> dict[str, float]:
    """The weight of each query term in the full-text ranking that is not 1: question terms
    0 (unless the query has nothing else), junctions ``JUNCTION_WEIGHT``."""
    weights = {term: JUNCTION_WEIGHT for term in terms if is_junction(term)}
    asked = {term for term in terms if is_question_term(term)}
    if asked and len(asked) < len(set(terms)):
        weights.update(dict.fromkeys(asked, 0.0))
    return weights


@lru_cache(maxsize=65_536)
def _folded(word: str) -> str:
    """``word`` without its inflection, unless it is a question word or would fold into one
    (used, using -> us): question words are one exact list, never a stem's accident."""
    if word in QUESTION_WORDS:
        return word
    folded = stem(word)
    return word if folded in QUESTION_WORDS else folded


def query_words(terms: Sequence[str]) -> list[tuple[str, ...]]:
    """The distinct words of an analyzed query, each as its terms in order (see the module
    doc): ``["原子", "子質", "質量", "量は", "ok"]`` -> ``[("原子", "子質", "質量"), ("ok",)]``.
    Works on any subsequence of ``analyze``'s output: a dropped term ends its chain."""
    words: list[tuple[str, ...]] = []
    chain: list[str] = []

    def flush() -> None:
        if chain:
            words.append(tuple(chain))
            chain.clear()

    for term in terms:
        if term.startswith(SEGMENT_MARK):
            flush()  # the whole segment is the word its bigrams chain into
            continue
        if len(term) != 2 or not (is_cjk(term[0]) and is_cjk(term[1])):
            flush()
            words.append((term,))
            continue
        kind = script(term[0])
        if kind == "hiragana" or script(term[1]) != kind:
            flush()  # grammar: a particle, an ending, a noun meeting its particle
            continue
        if chain and chain[-1][1] != term[0]:
            flush()
        chain.append(term)
    flush()
    return list(dict.fromkeys(words))


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def segment_terms(run: str) -> list[str]:
    """The kanji and katakana segments of a CJK run, each as one marked term (one regular
    expression: the analyzer is on the boot path)."""
    return [SEGMENT_MARK + segment for segment in _SEGMENT.findall(run)]


# A run of ``_CJK_RANGES`` is one CJK run; a run of the other alphanumerics (``[^\W_]`` is
# exactly ``str.isalnum``) is one word; anything else separates. One regular expression finds
# the runs in order, what a loop over characters did one Python step a character (3x slower
# on the boot and import path).
_RUNS = re.compile(f"([{_CJK_CLASS}]+)|[^\\W_{_CJK_CLASS}]+")


def analyze(text: str, *, stopwords: frozenset[str] = ENGLISH_STOPWORDS) -> list[str]:
    """Index terms of ``text`` in order (duplicates kept: BM25 needs term frequencies)."""
    terms: list[str] = []
    for match in _RUNS.finditer(normalize(text)):
        run = match[1]
        if run is None:
            token = match[0]
            if token not in stopwords:
                terms.append(_folded(token))
        else:
            terms.extend(cjk_terms(run))
            terms.extend(segment_terms(run))
    return terms
