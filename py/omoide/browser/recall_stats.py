"""Recall counts in the browser: a recall is a read, never a write of the memory store.

A recall bumps ``recall_count`` / ``last_recalled_at`` of its hits in memory only (no change is
announced, so nothing is persisted, mirrored or broadcast to other tabs). The worker keeps the
counts of each hit and adds them, in batches, to the IndexedDB table ``recalls`` (one additive
row per memory). A memory's counts are its stored record's plus its ``recalls`` row.

``counted`` remembers, per memory, how much of its in-memory ``recall_count`` came from the
``recalls`` table (loaded) or from this tab's recalls (flushed there later), so that a record
written back (an update) stores its base count only and nothing is counted twice.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..engine.memory import Hit


class RecallStats:
    def __init__(self) -> None:
        self.counted: dict[tuple[str, str], int] = {}

    def loaded(self, character: str, counts: dict[str, int]) -> None:
        """A character was (re)loaded with these ``recalls`` rows folded into its records."""
        self.counted = {k: v for k, v in self.counted.items() if k[0] != character}
        self.counted.update({(character, i): int(n) for i, n in counts.items()})

    def count(self, store: Any, hits: list[Hit], now: float) -> list[Hit]:
        """Count one recall on each hit, in memory only (the worker persists the counts)."""
        counted = []
        for hit in hits:
            last = hit.memory.last_recalled_at  # the later time (engine/recall._touched)
            memory = dataclasses.replace(
                hit.memory, last_recalled_at=now if last is None else max(last, now),
                recall_count=hit.memory.recall_count + 1)
            store.put(memory, None, emit=False)
            key = (store.character_id, memory.id)
            self.counted[key] = self.counted.get(key, 0) + 1
            counted.append(dataclasses.replace(hit, memory=memory))
        return counted

    def stored_record(self, character: str, record: dict[str, Any]) -> dict[str, Any]:
        """The record as IndexedDB keeps it: its recall count without the ``recalls`` rows."""
        extra = self.counted.get((character, record["id"]), 0)
        if not extra:
            return record
        return record | {"recall_count": max(0, record.get("recall_count", 0) - extra)}

    def purged(self, character: str, memory_id: str) -> None:
        self.counted.pop((character, memory_id), None)
