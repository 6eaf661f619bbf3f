"""Backends in the browser: the session's engine as a ``MemoryBackend`` (IndexedDB is what the
engine persists), and the mirror of every engine change to the user's own server.

- ``IndexedDBBackend``: get/list/search read the engine's stores (they hold exactly what
  IndexedDB holds); create/update/delete go through the engine, so the ``IndexedDBListener``
  persists them like any other write (and the ``MirrorListener`` mirrors them).
- ``MirrorListener``: an engine change listener. It turns the changes of one rpc call into
  mirror ops (put -> upsert, trash/restore -> update of ``trashed_at``, purge -> delete, swap
  -> upsert of every re-vectorized memory); after the call's IndexedDB commit the session
  hands them to ``BackendManager.mirror``.
- ``IndexedDBQueueStore``: the manager's persisted queue, in the Dexie ``settings`` table under
  ``mirror_queue``. ``save`` only records the new queue; the session writes it at the end of
  the call, in the same IndexedDB transaction as the call's memory changes when there are
  any, so a change and its mirror op are committed together or not at all.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import TYPE_CHECKING, Any

from ..backends.base import (
    DEFAULT_PAGE,
    IMMUTABLE_FIELDS,
    check_fields,
    check_owner,
    check_query_vector,
    check_record,
    memory_of,
    page_args,
    record_of,
)
from ..backends.mirror import mirror_ops
from ..engine.embedding import embed_memories
from ..engine.listener import Change
from ..engine.memory import Memory
from ..errors import OmoideError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..engine.core import MemoryEngine
    from ..engine.store import CharacterStore

QUEUE_KEY = "mirror_queue"


class IndexedDBBackend:
    """The ``MemoryBackend`` contract over the browser session's engine."""

    has_character_trash = True  # the app deletes and restores characters: ``sync.deleted_at``

    def __init__(self, engine: Callable[[], MemoryEngine], *, name: str = "indexeddb",
                 characters: Callable[[], dict[str, Any]] | None = None) -> None:
        self._engine = engine
        # IndexedDB ``characters`` (a host call): {"names": {id: name}, "deleted": {id: when}}
        self._characters = characters
        self.name = name

    def character_names(self) -> dict[str, str]:
        """The display names as IndexedDB holds them now, by character id (a ``name``
        mirror op sends the one it names)."""
        return self._part("names")

    def deleted_characters(self) -> dict[str, float]:
        """The characters the user deleted (memories kept), by id: when."""
        return self._part("deleted")

    def _part(self, part: str) -> dict[str, Any]:
        found = self._characters() if self._characters else None
        found = found.get(part) if isinstance(found, dict) else None
        return dict(found) if isinstance(found, dict) else {}

    @property
    def engine(self) -> MemoryEngine:
        return self._engine()

    def initialize(self) -> None:  # the worker opens IndexedDB and loads the engine
        pass

    def shutdown(self) -> None:
        pass

    # -- lookups -----------------------------------------------------------------------------

    def _find(self, memory_id: str) -> tuple[CharacterStore, Memory, float | None] | None:
        for store in self.engine.stores.values():
            if memory_id in store.records:
                return store, store.records[memory_id], None
            entry = store.trash.get(memory_id)
            if entry is not None:
                return store, entry.memory, entry.trashed_at
        return None

    @staticmethod
    def _vector(store: CharacterStore, memory_id: str) -> list[float]:
        entry = store.trash.get(memory_id)
        vector = entry.vector if entry is not None else store.kernel.vector(memory_id)
        return [float(x) for x in vector]

    def _record(self, store: CharacterStore, memory: Memory, trashed_at: float | None,
                with_vector: bool) -> dict[str, Any]:
        vector = self._vector(store, memory.id) if with_vector else None
        return record_of(memory, vector, trashed_at)

    def _records(self, character_id: str | None, trashed: bool | None, with_vectors: bool
                 ) -> list[dict[str, Any]]:
        stores = self.engine.stores
        chosen = [stores[character_id]] if character_id in stores else (
            [] if character_id is not None else [stores[c] for c in sorted(stores)])
        out = []
        for store in chosen:
            if trashed is not True:
                out += [self._record(store, m, None, with_vectors)
                        for m in store.records.values()]
            if trashed is not False:
                out += [self._record(store, e.memory, e.trashed_at, with_vectors)
                        for e in store.trash.values()]
        return sorted(out, key=lambda r: r["id"])

    # -- the contract --------------------------------------------------------------------------

    def get(self, memory_id: str, *, with_vector: bool = False) -> dict[str, Any] | None:
        found = self._find(memory_id)
        return self._record(*found, with_vector) if found else None

    def list(self, *, character_id: str | None = None, kind: str | None = None,
             trashed: bool | None = False, limit: int = DEFAULT_PAGE, offset: int = 0,
             with_vectors: bool = False) -> dict[str, Any]:
        limit, offset = page_args(limit, offset)
        records = self._records(character_id, trashed, False)
        totals: dict[str, int] = {}
        for record in records:
            totals[record["kind"]] = totals.get(record["kind"], 0) + 1
        if kind is not None:
            records = [r for r in records if r["kind"] == kind]
        page = records[offset:offset + limit]
        if with_vectors:
            page = [self.get(r["id"], with_vector=True) or r for r in page]
        return {"items": page, "total": len(records),
                "totals_by_kind": dict(sorted(totals.items()))}

    def search(self, query: str, *, character_id: str, k: int = 10,
               vector: list[float] | None = None, model: str | None = None,
               kinds: list[str] | None = None) -> list[dict[str, Any]]:
        """Engine recall in the character's own store: hybrid from the text, or plain vector
        search with a given query vector (no embedding)."""
        if not isinstance(character_id, str) or not character_id:
            raise OmoideError.of("INVALID_ARGUMENT", name="character_id",
                                 reason="search needs a character")
        engine = self.engine
        store = engine.stores.get(character_id)
        if store is None or not store.records:
            return []
        vector = check_query_vector(vector, model)
        if vector is None:
            hits = engine.recall(character_id, query, k=k, kinds=kinds, touch=False)
            return [{"memory": record_of(h.memory), "score": h.score} for h in hits]
        if model != store.stamp:  # another model's space, even at the same dimension
            return []
        if len(vector) != store.dimension:
            raise OmoideError.of("INVALID_ARGUMENT", name="vector",
                                 reason=f"the index has {store.dimension} dimensions")
        allowed = store.ids_of_kinds(kinds) if kinds else None
        result = store.kernel.top_k([float(x) for x in vector], k, allowed)
        return [{"memory": record_of(store.records[i]), "score": s}
                for i, s in zip(result.ids, result.scores, strict=True) if s > 0]

    def create(self, record: dict[str, Any]) -> dict[str, Any]:
        full = check_record(record, require_vector=False)  # embedded here when absent
        if self._find(full["id"]) is not None:
            raise OmoideError.of("BACKEND_CONFLICT", backend=self.name, memory_id=full["id"])
        engine = self.engine
        store = engine.writable_store(full["character_id"])
        memory = memory_of(full)
        vector = full["vector"]
        if memory.model != store.stamp or vector is None or len(vector) != store.dimension:
            vector = embed_memories(engine.embedder, [(memory.text, memory.context)])[0]
            memory.model = store.stamp
        store.put(memory, vector)
        if full["trashed_at"] is not None:
            store.move_to_trash(memory.id, full["trashed_at"])
        return self.get(memory.id, with_vector=True) or full

    def update(self, memory_id: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        checked = check_fields(fields)
        changes = {k: v for k, v in checked.items() if k not in IMMUTABLE_FIELDS}
        found = self._find(memory_id)
        if found is None:
            return None
        store, memory, trashed_at = found
        check_owner(checked, memory.character_id, memory_id)
        record_fields = {k: v for k, v in changes.items() if k in Memory.__dataclass_fields__}
        new = dataclasses.replace(memory, **record_fields)
        vector = changes.get("vector")
        if vector is not None and (len(vector) != store.dimension
                                   or changes.get("model", memory.model) != store.stamp):
            vector = None  # another model's vector never enters this index
        if vector is None and (new.text, new.context) != (memory.text, memory.context):
            engine = self.engine
            engine.check_model(store)
            vector = embed_memories(engine.embedder, [(new.text, new.context)])[0]
        new.model = store.stamp
        target = changes.get("trashed_at", trashed_at)
        if new != memory or vector is not None:
            if trashed_at is not None:
                store.restore(memory_id)
                trashed_at = None
            store.put(new, vector)
        if target is None and trashed_at is not None:
            store.restore(memory_id)
        elif target is not None and trashed_at != target:
            if trashed_at is not None:  # a new trash time: restore, then trash again
                store.restore(memory_id)
            store.move_to_trash(memory_id, float(target))
        return self.get(memory_id)

    def delete(self, memory_id: str) -> bool:
        found = self._find(memory_id)
        if found is None:
            return False
        store, _, trashed_at = found
        if trashed_at is None:
            store.move_to_trash(memory_id, self.engine.now())
        store.purge(memory_id)
        return True

    def health(self) -> dict[str, Any]:
        started = time.perf_counter()
        stores = self.engine.stores.values()
        count = sum(len(s.records) + len(s.trash) for s in stores)
        return {"ok": True, "backend": self.name, "memories": count,
                "latency_ms": round((time.perf_counter() - started) * 1000, 3)}


class MirrorListener:
    """Collects the mirror ops of one call's engine changes (see the module docstring)."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []

    def on_change(self, change: Change) -> None:
        self.pending += mirror_ops(change)

    def take(self) -> list[dict[str, Any]]:
        ops, self.pending = self.pending, []
        return ops

    def discard(self) -> None:
        self.pending = []


class IndexedDBQueueStore:
    """The mirror queue in IndexedDB (``settings.mirror_queue``); writes are deferred to the
    end of the call (``take_dirty``), see the module docstring. ``load`` and ``write`` are
    the host calls (injected, so the class runs under CPython too)."""

    def __init__(self, load: Callable[[], Any] | None = None,
                 write: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self._load = load
        self._write = write
        self.dirty: list[dict[str, Any]] | None = None
        self.last: str | None = None  # the queue as last read or written, as JSON

    def load(self) -> list[dict[str, Any]]:
        ops = self._load() if self._load else None
        ops = [dict(op) for op in ops] if isinstance(ops, list) else []
        self.last = json.dumps(ops, sort_keys=True)
        return ops

    def save(self, ops: list[dict[str, Any]]) -> None:
        self.dirty = [dict(op) for op in ops]

    def take_dirty(self) -> list[dict[str, Any]] | None:
        """The queue to write at the end of the call, or None when it did not change."""
        ops, self.dirty = self.dirty, None
        if ops is None or json.dumps(ops, sort_keys=True) == self.last:
            return None
        return ops

    def written(self, ops: list[dict[str, Any]]) -> None:
        self.last = json.dumps(ops, sort_keys=True)

    def write(self, ops: list[dict[str, Any]]) -> None:
        if self._write is not None:
            self._write(ops)
        self.written(ops)
