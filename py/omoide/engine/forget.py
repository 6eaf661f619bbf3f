"""``forget`` (soft delete into the character's trash), ``restore``, ``purge_trash``.

A forgotten memory leaves recall at once but keeps its vector in the trash, so ``restore``
needs no embedder call. Governance (grace periods, revive on recall) builds on these.
Restoring a keyed memory (say, history of a superseded one) replaces the live memory that
holds its key now, which goes to the trash in its place: one key, one live memory. Restoring
history also retires the live memory that replaced it (``superseded_by``, when that one
still lists it in ``supersedes``): an edit or a contradiction undone, whatever the keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omoide.engine import validate
from omoide.engine.memory import Memory, TrashEntry
from omoide.engine.supersede import (
    SUPERSEDED_BY,
    SUPERSEDES,
    holders,
    linked,
    retire,
    unretired,
)
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine


def forget(engine: MemoryEngine, character: str, memory_id: str) -> TrashEntry:
    store = engine.existing_store(character)
    if memory_id not in store.records:
        raise OmoideError.of("UNKNOWN_MEMORY", memory_id=memory_id, character=character)
    return store.move_to_trash(memory_id, engine.now())


def restore(engine: MemoryEngine, character: str, memory_id: str) -> Memory:
    store = engine.existing_store(character)
    if memory_id not in store.trash:
        raise OmoideError.of("UNKNOWN_MEMORY", memory_id=memory_id, character=character)
    engine.check_model(store)  # a trashed vector must match the live space it rejoins
    memory = store.restore(memory_id)
    reasons = dict.fromkeys(holders(store, memory.key, besides=memory_id),
                            f"restored {memory_id} (same key)")
    successor = memory.meta.get(SUPERSEDED_BY)  # meta is the user's JSON: any type
    if type(successor) is str and successor in store.records and successor not in reasons:
        links = store.records[successor].meta.get(SUPERSEDES)
        if type(links) is list and memory_id in links:
            reasons[successor] = f"restored {memory_id} (the version it replaced)"
    fresh = linked(unretired(memory), reasons)
    if fresh is not memory:
        store.put(fresh, None)
    for other, reason in reasons.items():
        retire(store, other, memory_id, engine.now(), reason)
    return fresh


def trash(engine: MemoryEngine, character: str) -> list[TrashEntry]:
    """Trashed memories, oldest deletion first."""
    store = engine.existing_store(character)
    return sorted(store.trash.values(), key=lambda e: (e.trashed_at, e.memory.id))


def purge_trash(
    engine: MemoryEngine, character: str, *, trashed_before: float | None = None
) -> list[str]:
    """Delete trashed memories for good (all, or those trashed before a time); returns ids."""
    store = engine.existing_store(character)
    cutoff = None if trashed_before is None else validate.timestamp(trashed_before, "before")
    doomed = [
        e.memory.id for e in trash(engine, character) if cutoff is None or e.trashed_at < cutoff
    ]
    for memory_id in doomed:
        store.purge(memory_id)
    return doomed
