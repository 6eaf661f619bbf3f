"""Write-time dedup: find the live memory a candidate repeats, and merge into it.

A candidate matches an existing memory of the same character and kind when
1. they share a key (``preference:typescript``): the key is the identity, or
2. their passage vectors have cosine >= ``threshold`` (default 0.92) AND at most one of them
   has a key. Two different keys are never merged on similarity alone: hashed or small
   models put "Java" and "JavaScript" close, and a false merge silently loses a fact.

Merging updates the existing record: the newest phrasing becomes the content, ``updated_at``
is now, importance is the max of both, ``meta["merges"]`` counts the repeats. A polarity
flip on the same key (like -> dislike) is a contradiction: the new polarity wins and the old
one (with its text and when it ended) is appended to ``meta["history"]``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from omoide.engine.memory import Memory
from omoide.engine.store import CharacterStore, as_float_list
from omoide.governance.extract import Candidate

DEFAULT_THRESHOLD = 0.92
NEIGHBOURS = 16  # nearest rows looked at; a near-duplicate of the same kind is among them
MAX_HISTORY = 20


@dataclass(frozen=True)
class Match:
    memory_id: str
    reason: str  # "same key" | "near-identical"
    cosine: float | None


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def keys_compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def is_contradiction(memory: Memory, candidate: Candidate) -> bool:
    old = memory.meta.get("polarity")
    return (memory.key is not None and memory.key == candidate.key and old is not None
            and candidate.polarity is not None and old != candidate.polarity)


def merged(memory: Memory, candidate: Candidate, now: float) -> Memory:
    """The existing memory updated by a repeat (or contradiction) of it."""
    meta: dict[str, Any] = dict(memory.meta)
    meta["merges"] = int(meta.get("merges", 0)) + 1
    if is_contradiction(memory, candidate):
        history = list(meta.get("history", []))
        history.append({"polarity": memory.meta.get("polarity"), "text": memory.text,
                        "since": memory.updated_at, "until": now})
        meta["history"] = history[-MAX_HISTORY:]
    if candidate.polarity is not None:
        meta["polarity"] = candidate.polarity
    meta["lang"], meta["via"] = candidate.lang, candidate.via
    for name, item in candidate.meta.items():
        if name not in ("polarity", "tier", "merges", "history"):
            meta[name] = item
    return dataclasses.replace(
        memory,
        text=candidate.text,
        importance=max(memory.importance, candidate.importance),
        updated_at=now,
        key=memory.key or candidate.key,
        meta=meta,
    )


class DedupIndex:
    """Matches candidates against a character's store plus the writes planned in this batch
    (so a batch that repeats itself also collapses, and a dry run sees what a real run would).
    """

    def __init__(self, store: CharacterStore | None, threshold: float = DEFAULT_THRESHOLD):
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        self.store = store
        self.threshold = threshold
        self.planned: dict[str, tuple[Memory, list[float]]] = {}  # new or rewritten rows

    def current(self, memory_id: str) -> Memory:
        if memory_id in self.planned:
            return self.planned[memory_id][0]
        assert self.store is not None
        return self.store.records[memory_id]

    def plan(self, memory: Memory, vector: Sequence[float] | None) -> None:
        """Record a planned write (vector None: text unchanged, keep the stored row)."""
        if vector is None:
            vector = self.planned[memory.id][1] if memory.id in self.planned else None
        if vector is None and self.store is not None:
            vector = self.store.kernel.vector(memory.id)
        self.planned[memory.id] = (memory, as_float_list(vector) if vector is not None else [])

    def match(self, kind: str, key: str | None, vector: Sequence[float]) -> Match | None:
        if key is not None:
            ids = [i for i, (m, _) in self.planned.items() if m.key == key and m.kind == kind]
            if self.store is not None:
                ids += [i for i in self.store.ids_with_key(key)
                        if i not in self.planned and self.store.records[i].kind == kind]
            if ids:
                best = max(ids, key=lambda i: (self.current(i).updated_at, i))
                return Match(best, "same key", None)
        best_id, best_cos = None, -2.0
        row = as_float_list(vector)
        for memory_id, (memory, planned_row) in self.planned.items():
            if memory.kind == kind and keys_compatible(key, memory.key) and planned_row:
                cos = dot(row, planned_row)
                if cos > best_cos:
                    best_id, best_cos = memory_id, cos
        if self.store is not None and len(self.store.kernel):
            near = self.store.kernel.top_k(row, NEIGHBOURS)
            for memory_id, cos in zip(near.ids, near.scores, strict=True):
                if memory_id in self.planned:
                    continue  # scored above with its planned vector
                memory = self.store.records[memory_id]
                if memory.kind == kind and keys_compatible(key, memory.key) and cos > best_cos:
                    best_id, best_cos = memory_id, cos
        if best_id is not None and best_cos >= self.threshold:
            return Match(best_id, "near-identical", round(best_cos, 4))
        return None


def duplicate_pairs(
    store: CharacterStore,
    threshold: float = DEFAULT_THRESHOLD,
    limit: int = 100,
    only: Iterable[str] | None = None,
) -> list[tuple[str, str, str, float | None]]:
    """Live pairs that dedup would have merged (same key, or near-identical with compatible
    keys): ``(older_id, newer_id, reason, cosine)``. Read-only; used by the audit and the
    cold maintenance. ``only``: near-identical pairs are looked for from these records only
    (each against the whole store), for an incremental scan."""
    pairs: dict[tuple[str, str], tuple[str, float | None]] = {}
    by_key: dict[tuple[str, str], list[str]] = {}
    for memory in store.records.values():
        if memory.key is not None:
            by_key.setdefault((memory.kind, memory.key), []).append(memory.id)
    for ids in by_key.values():
        ids.sort()
        for other in ids[1:]:
            pairs[(ids[0], other)] = ("same key", None)
    scanned = (store.records.values() if only is None
               else [store.records[i] for i in only if i in store.records])
    for memory in scanned:
        if len(pairs) >= limit:
            break
        near = store.kernel.top_k(store.kernel.vector(memory.id), 4)
        for other_id, cos in zip(near.ids, near.scores, strict=True):
            other = store.records[other_id]
            if (other_id == memory.id or cos < threshold or other.kind != memory.kind
                    or not keys_compatible(memory.key, other.key)):
                continue
            pair = tuple(sorted((memory.id, other_id)))
            pairs.setdefault(pair, ("near-identical", round(cos, 4)))  # type: ignore[arg-type]
    return [(a, b, reason, cos) for (a, b), (reason, cos) in sorted(pairs.items())][:limit]
