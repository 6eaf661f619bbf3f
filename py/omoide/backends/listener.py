"""The engine on a ``MemoryBackend``: ``BackendListener`` writes every engine change to the
backend (write-ahead: a backend that raises vetoes the change, the engine stays unchanged),
and ``load_engine`` rebuilds the engine's stores from the backend's records at start."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from omoide.backends.base import MemoryBackend, memory_of, record_of
from omoide.embeddings.registry import parse_stamp
from omoide.engine.listener import Change
from omoide.engine.memory import TrashEntry

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine


class BackendListener:
    def __init__(self, backend: MemoryBackend) -> None:
        self.backend = backend

    def on_change(self, change: Change) -> None:
        backend = self.backend
        if change.op == "put":
            self.put(change)
        elif change.op == "trash":
            backend.update(change.memory_id, {"trashed_at": change.at})
        elif change.op == "restore":
            backend.update(change.memory_id, {"trashed_at": None})
        elif change.op == "purge":
            backend.delete(change.memory_id)
        elif change.op == "swap":
            for memory_id, vector in change.vectors.items():
                backend.update(memory_id, {"vector": vector, "model": change.stamp})

    def put(self, change: Change) -> None:
        record = record_of(change.memory, change.vector)
        fields = {k: v for k, v in record.items()
                  if k not in ("id", "character_id") and (k != "vector" or v is not None)}
        if self.backend.update(change.memory_id, fields) is None:
            self.backend.create(record)


def load_engine(engine: MemoryEngine, records: list[dict[str, Any]]) -> dict[str, int]:
    """Fill ``engine`` with stored records (every one with its vector); no listener fires.
    Answers the number of memories loaded per character."""
    by_character: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_character[record["character_id"]].append(record)
    loaded = {}
    for character, rows in sorted(by_character.items()):
        stamp = rows[0]["model"] or engine.embedder.stamp
        model_id, _, dimension = parse_stamp(stamp)
        store = engine.new_store(character, stamp=stamp, model_id=model_id,
                                 dimension=dimension)
        live = [(memory_of(r), r["vector"]) for r in rows if r["trashed_at"] is None]
        trashed = [TrashEntry(memory_of(r), r["vector"], r["trashed_at"])
                   for r in rows if r["trashed_at"] is not None]
        store.load(live, trashed)
        engine.stores[character] = store
        loaded[character] = len(rows)
    return loaded
