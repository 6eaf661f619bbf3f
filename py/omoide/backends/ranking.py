"""Search for backends that hold records but no engine: BM25 over the character's live
records (``TextIndex``, same analyzer as the engine, so Japanese works), or cosine when the
caller sends a query vector (``rank_by_vector``). Only one character's records are scored."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import BM25Index


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class TextIndex:
    """BM25 over one character's live records, built once and reused while the records do
    not change (``SQLiteBackend`` keeps one per character)."""

    def __init__(self, records: Iterable[dict[str, Any]]) -> None:
        self.records = {r["id"]: {f: v for f, v in r.items() if f != "vector"} for r in records}
        self.index = BM25Index()
        for memory_id, record in self.records.items():
            self.index.add(memory_id, analyze(record["text"]))

    def search(self, query: str, k: int, kinds: list[str] | None = None
               ) -> list[dict[str, Any]]:
        allowed = ({i for i, r in self.records.items() if r["kind"] in kinds}
                   if kinds else None)
        found = self.index.search(analyze(query), k, allowed)
        return [{"memory": dict(self.records[i]), "score": score}
                for i, score in zip(found.ids, found.scores, strict=True) if score > 0]


def rank_by_vector(records: Iterable[dict[str, Any]], vector: list[float], k: int
                   ) -> list[dict[str, Any]]:
    """``[{"memory": record without vector, "score": cosine}]``, best first, cosine > 0;
    records of another dimension are skipped (the caller keeps to one model's stamp)."""
    scored = [(cosine(vector, r["vector"]), r) for r in records
              if r.get("vector") and len(r["vector"]) == len(vector)]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]["id"]))[:k]
    return [{"memory": {f: v for f, v in r.items() if f != "vector"}, "score": score}
            for score, r in best]
