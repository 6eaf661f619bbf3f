"""Which writing systems a model reads: recall asks the vector ranker only about text the
model was trained to read.

A model's ``languages`` (``registry.ModelInfo``) name the scripts it was trained on. A query
whose letters are mostly in other scripts (Japanese asked of the English-only MiniLM) gets
a ranking that is noise: MiniLM's vector hit@1 on JSQuAD is 0.20 against BM25's 0.91, and
every fusion of that noise with BM25 stays below BM25 alone (BENCHMARKS.md, "Session 23").
The script of a letter is the first word of its Unicode name, after NFKC (so full-width
Latin is Latin and half-width katakana is katakana); digits, spaces and punctuation have no
script and never count.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

_LATIN = frozenset({"LATIN"})
_JAPANESE = frozenset({"HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "CJK", "IDEOGRAPHIC"})
# The scripts each language of the registry is written in. A language missing here makes
# the model read everything (nothing is taken from a model for want of a table entry).
LANGUAGE_SCRIPTS: dict[str, frozenset[str]] = {
    "en": _LATIN, "de": _LATIN, "fr": _LATIN, "es": _LATIN, "pt": _LATIN, "it": _LATIN,
    "ja": _JAPANESE,
    "zh": frozenset({"CJK", "IDEOGRAPHIC"}),
    "ko": frozenset({"HANGUL", "CJK", "IDEOGRAPHIC"}),
    "ru": frozenset({"CYRILLIC"}),
    "ar": frozenset({"ARABIC"}),
    "hi": frozenset({"DEVANAGARI"}),
}


def letter_script(char: str) -> str:
    """The script of one letter: the first word of its Unicode name ("" when unnamed)."""
    return unicodedata.name(char, "").split(" ", 1)[0]


def reads(languages: Iterable[str], text: str) -> bool:
    """Whether a model trained on ``languages`` reads ``text``: False only when more than
    half of its letters are in scripts none of those languages is written in."""
    scripts: set[str] = set()
    for language in languages:
        known = LANGUAGE_SCRIPTS.get(language)
        if known is None:
            return True
        scripts |= known
    letters = foreign = 0
    for char in unicodedata.normalize("NFKC", text):
        if char.isalpha():
            letters += 1
            foreign += letter_script(char) not in scripts
    return 2 * foreign <= letters
