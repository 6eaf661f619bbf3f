"""Engine changes as mirror ops for a ``BackendManager``'s fallbacks (CPython workspace and
browser alike): put -> upsert (the fallback gets the primary's full record, vector included,
as it is when the op is sent) or, when only fields changed (recall counters, importance),
an update of just the fields that differ from the record replaced; trash/restore -> update
of ``trashed_at``; purge -> delete; swap (re-vectorization) -> upsert of every memory; a
display name given to a character (an import, a card) -> name."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from omoide.backends.base import IMMUTABLE_FIELDS
from omoide.engine.listener import Change

if TYPE_CHECKING:
    from omoide.backends.manager import BackendManager


def mirror_ops(change: Change) -> list[dict[str, Any]]:
    if change.op == "put":
        if change.vector is not None:  # new text or vector: copy the whole record later
            return [{"op": "upsert", "id": change.memory_id}]
        assert change.memory is not None
        fields = {k: v for k, v in change.memory.to_dict().items() if k not in IMMUTABLE_FIELDS}
        if change.previous is not None and change.previous is not change.memory:
            old = change.previous.to_dict()  # only what changed: never a stale field
            fields = {k: v for k, v in fields.items() if old.get(k) != v}
        return [{"op": "update", "id": change.memory_id, "fields": fields}] if fields else []
    if change.op == "trash":
        return [{"op": "update", "id": change.memory_id, "fields": {"trashed_at": change.at}}]
    if change.op == "restore":
        return [{"op": "update", "id": change.memory_id, "fields": {"trashed_at": None}}]
    if change.op == "purge":
        return [{"op": "delete", "id": change.memory_id}]
    if change.op == "swap":
        return [{"op": "upsert", "id": i} for i in sorted(change.vectors)]
    return []


class ManagerMirror:
    """An engine listener placed AFTER the primary's ``BackendListener``: a change the
    primary refused never reaches it; an accepted one is queued for every fallback.

    Inside a verb (``verb``, an engine verb guard placed after the primary's, so it ends
    before the primary commits) the verb's ops are queued together at its end, in one save
    of the queue, still before the commit: a crash between the two leaves an op for a
    change that was never committed (applying it finds nothing to copy), never a committed
    change the backup will not get. A verb that fails queues nothing."""

    def __init__(self, manager: BackendManager) -> None:
        self.manager = manager
        self._pending = threading.local()  # this thread's open verb's ops

    def on_change(self, change: Change) -> None:
        ops = mirror_ops(change)
        pending = getattr(self._pending, "ops", None)
        if pending is not None:
            pending += ops
        elif ops:
            self.manager.mirror_many(ops)

    def named(self, characters: list[str]) -> None:
        """Characters given display names: each backup gets the primary's name when the op
        is sent (``BackendManager._apply``), with the verb's other ops."""
        ops = [{"op": "name", "id": c} for c in characters]
        pending = getattr(self._pending, "ops", None)
        if pending is not None:
            pending += ops
        elif ops:
            self.manager.mirror_many(ops)

    @contextmanager
    def verb(self) -> Iterator[None]:
        if getattr(self._pending, "ops", None) is not None:  # nested: the outer verb's
            yield
            return
        self._pending.ops = []
        try:
            yield
            ops = self._pending.ops
        finally:
            self._pending.ops = None
        self.manager.mirror_many(ops)
