"""Near-duplicate check for a new extraction split: for each row of the split, the closest row
of every other split by character n-gram Jaccard (3-grams English, 2-grams Japanese, after
case folding and dropping punctuation and spaces). Prints only the score and the other row's
split, never its text, so a new split can be checked against the blind splits without reading
them. Rows at or above ``--threshold`` should be rewritten before the split is committed.

    PYTHONPATH=py:. .venv/bin/python bench/governance_extract_overlap.py blind5
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
GRAM = {"en": 3, "ja": 2}


def grams(text: str, n: int) -> frozenset[str]:
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded
                   if not unicodedata.category(ch).startswith(("P", "Z", "S")))
    return frozenset(kept[i:i + n] for i in range(max(1, len(kept) - n + 1)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def nearest(split: str, lang: str) -> list[tuple[float, str, str]]:
    """(score, other row's split, this row's text) per row of ``split``, closest first."""
    rows = [json.loads(line) for line in (DATA / f"extraction_{lang}.jsonl").open(encoding="utf-8")]
    others = [(grams(r["text"], GRAM[lang]), r["split"]) for r in rows if r["split"] != split]
    found = []
    for row in (r for r in rows if r["split"] == split):
        mine = grams(row["text"], GRAM[lang])
        score, where = max(((jaccard(mine, g), s) for g, s in others), default=(0.0, "-"))
        found.append((score, where, row["text"]))
    return sorted(found, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split")
    parser.add_argument("--threshold", type=float, default=0.37)
    args = parser.parse_args()
    for lang in GRAM:
        close = [f for f in nearest(args.split, lang) if f[0] >= args.threshold]
        print(f"{lang}: {len(close)} rows of {args.split} at or above {args.threshold}")
        for score, where, text in close:
            print(f"  {score:.2f} (nearest in {where}) {text}")


if __name__ == "__main__":
    main()
