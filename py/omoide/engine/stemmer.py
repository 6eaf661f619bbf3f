"""English suffix folding for the full-text index: step 1 of Porter's stemmer (Porter 1980,
"An algorithm for suffix stripping"), plurals, -ed, -ing and a final y, and the final e of
a long stem (step 5a for m > 1).

Without it a question and the memory that answers it miss each other by a suffix ("What did
Melanie paint?" / "we love painting together"; "research" / "Researching adoption agencies";
"volunteering" / "volunteer"). Step 1 only: it folds the inflections that a question and a
statement about the same thing differ by, and leaves derivations alone (Porter's later steps
merge "general" with "generous"-like pairs and cost precision). Applied by ``analyze`` to
ASCII Latin words after the stopword test, so index and query fold the same way (terms are
rebuilt from the records on write and after boot and stored nowhere). Words of 1-2 letters,
and words with digits or non-ASCII letters, are kept as they are. Measured in BENCHMARKS.md
(Recall v2, session 9).
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")


def _consonant(word: str, i: int) -> bool:
    """Porter's consonant: not a vowel, and y only after a vowel (or first)."""
    char = word[i]
    if char in _VOWELS:
        return False
    if char == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem``."""
    count, after_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        if not vowel and after_vowel:
            count += 1
        after_vowel = vowel
    return count


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    """Consonant-vowel-consonant, the last not w, x or y (hop, fil: an e was dropped)."""
    n = len(word)
    return (n >= 3 and _consonant(word, n - 3) and not _consonant(word, n - 2)
            and _consonant(word, n - 1) and word[-1] not in "wxy")


def stem(word: str) -> str:
    """Porter step 1 (1a plurals, 1b -eed/-ed/-ing, 1c y -> i) and the long-stem half of
    step 5a (a final e goes when the stem before it has m > 1, so ``receive`` and
    ``received`` meet at ``receiv``, ``created`` and ``create`` at ``creat``) of a lower-case
    word: ``painting``, ``painted``, ``paints`` -> ``paint``; ``studies``, ``study`` ->
    ``studi``."""
    if len(word) <= 2 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = word[: -len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _ends_double_consonant(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _ends_cvc(word):
                    word += "e"
                break
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    if word.endswith("e") and _measure(word[:-1]) > 1:  # step 5a, long stems only
        word = word[:-1]
    return word
