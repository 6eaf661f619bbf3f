"""Persistence of engine changes into IndexedDB (the browser's storage layer).

``IndexedDBListener`` is an engine change listener. It collects the changes of one rpc call
and the worker commits them with ``flush`` in ONE IndexedDB transaction before the call
answers: ``remember`` resolves only once its record and vector are on disk, ``remember_many``
is all-or-nothing. A recall announces no change (see ``recall_stats``). When the commit is
refused (quota, a closed database), nothing of the call is on disk and the worker reloads the
engine from IndexedDB, so memory and disk never disagree.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable
from typing import Any

from ..engine.listener import Change
from .host import call_json, to_js_floats
from .recall_stats import RecallStats


def change_payload(change: Change, stats: RecallStats | None = None) -> dict[str, Any]:
    memory = change.memory.to_dict() if change.memory else None
    if memory is not None and stats is not None:
        memory = stats.stored_record(change.character_id, memory)
    return {
        "op": change.op,
        "character": change.character_id,
        "memory_id": change.memory_id,
        "memory": memory,
        "at": change.at,
        "stamp": change.stamp,
        "model_id": change.model_id,
        "dimension": change.dimension,
        "fresh": change.fresh,
    }


class IndexedDBListener:
    def __init__(self, stats: RecallStats | None = None) -> None:
        self.pending: list[Change] = []
        # new memories added in bulk whose vectors the worker holds (``op: import``, see
        # ``browser.importer``): committed first, in the same transaction as the changes
        self.pending_bulk: list[dict[str, Any]] = []
        self.stats = stats  # records are stored without the counts of the ``recalls`` table
        # the ids of a character's quarantined records (a swap keeps them as they are stored)
        self.quarantined: Callable[[str], list[str]] = lambda character: []

    def on_change(self, change: Change) -> None:
        self.pending.append(change)

    def add_bulk(self, payload: dict[str, Any], *, first: bool = False) -> None:
        """``first``: before the others (an import's names, written before a row of theirs
        would be made with the id as the name)."""
        if first:
            self.pending_bulk.insert(0, payload)
        else:
            self.pending_bulk.append(payload)

    def discard(self) -> None:
        self.pending = []
        self.pending_bulk = []

    def flush(self, queue: list[dict[str, Any]] | None = None) -> int:
        """Commit every pending change in one transaction; return how many there were.
        ``queue`` (the mirror queue, see ``browser.backends``) is written in the same
        transaction; with no change it is not written here."""
        changes, self.pending = self.pending, []
        payloads, self.pending_bulk = self.pending_bulk, []
        if not changes and not payloads:
            return 0
        flat = array("f")
        for change in changes:
            payload = change_payload(change, self.stats)
            if change.op == "purge" and self.stats is not None and change.memory_id:
                self.stats.purged(change.character_id, change.memory_id)
            if change.op == "swap":
                ids = sorted(change.vectors)
                payload |= {"ids": ids, "vectors_at": len(flat),
                            "kept": self.quarantined(change.character_id)}
                for i in ids:
                    flat.extend(change.vectors[i])
            elif change.vector is not None:
                payload["vector_at"] = len(flat)
                flat.extend(change.vector)
            payloads.append(payload)
        extra = () if queue is None else (json.dumps(queue, ensure_ascii=False),)
        call_json("persist_many", payloads, to_js_floats(flat), *extra)
        return len(payloads)
