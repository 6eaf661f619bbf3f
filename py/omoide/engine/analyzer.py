"""Text analyzer for BM25: one function from text to index terms, for English and Japanese.

- NFKC first (full-width ＡＢＣ１２３ → ABC123, half-width ｶﾀｶﾅ → カタカナ), then case folding.
- Latin letters and digits form words (``[^\\W_]`` minus CJK); a light English stopword list
  drops the words that match nearly every memory ("the", "is", ...).
- Japanese has no spaces, so each run of Han/Hiragana/Katakana becomes overlapping character
  bigrams (東京都 → 東京, 京都); a run of one character is kept as a unigram. Bigrams need no
  dictionary, run identically in Pyodide and CPython, and were measured strong on JSQuAD.
- Everything else (punctuation, symbols, emoji) separates tokens.
"""

from __future__ import annotations

import unicodedata

ENGLISH_STOPWORDS = frozenset(
    """a an and are as at be but by for from has have i if in into is it its of on or so
    that the their then there these they this to was were will with""".split()
)


def is_cjk(char: str) -> bool:
    """Han (incl. extension A and compatibility), Hiragana, Katakana, and the prolonged mark."""
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # Hiragana + Katakana (incl. ー U+30FC)
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0x31F0 <= code <= 0x31FF  # Katakana phonetic extensions
        or 0x3005 <= code <= 0x3007  # 々 〆 〇
        or 0x20000 <= code <= 0x2FA1F  # extensions B.. and compatibility supplement
    )


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def analyze(text: str, *, stopwords: frozenset[str] = ENGLISH_STOPWORDS) -> list[str]:
    """Index terms of ``text`` in order (duplicates kept: BM25 needs term frequencies)."""
    terms: list[str] = []
    word: list[str] = []
    run: list[str] = []

    def flush_word() -> None:
        if word:
            token = "".join(word)
            if token not in stopwords:
                terms.append(token)
            word.clear()

    def flush_run() -> None:
        if run:
            terms.extend(cjk_terms("".join(run)))
            run.clear()

    for char in normalize(text):
        if is_cjk(char):
            flush_word()
            run.append(char)
        elif char.isalnum():
            flush_run()
            word.append(char)
        else:
            flush_word()
            flush_run()
    flush_word()
    flush_run()
    return terms
