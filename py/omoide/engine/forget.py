"""``forget`` (soft delete into the character's trash), ``restore``, ``purge_trash``.

A forgotten memory leaves recall at once but keeps its vector in the trash, so ``restore``
needs no embedder call. Governance (grace periods, revive on recall) builds on these.
Restoring a keyed memory (say, history of a superseded one) replaces the live memory that
holds its key now, which goes to the trash in its place: one key, one live memory. Restoring
history also retires the live memory that replaced it (``superseded_by``, when that one
still lists it in ``supersedes``): an edit or a contradiction undone, whatever the keys.
When that one is itself history now (an older version was restored in between), the line
is followed through the trash to its live version, each step checked the same way: one
version of a memory is live, whichever of its versions is restored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omoide.engine import validate
from omoide.engine.memory import Memory, TrashEntry
from omoide.engine.supersede import (
    MAX_LINKS,
    SUPERSEDED_BY,
    SUPERSEDES,
    WAS_SUPERSEDED_BY,
    holders,
    linked,
    retire,
    unretired,
)
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.store import CharacterStore


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
    successor, steps = _live_successor(store, memory)
    if successor is not None and successor not in reasons:
        reasons[successor] = (f"restored {memory_id} (the version it replaced)" if steps == 1
                              else f"restored {memory_id} (an earlier version of it)")
    for earlier in _live_predecessors(store, memory):
        reasons.setdefault(earlier, f"restored {memory_id} (a later version of it)")
    fresh = linked(unretired(memory), reasons)
    if fresh is not memory:
        fresh = store.put(fresh, None)
    for other, reason in reasons.items():
        retire(store, other, memory_id, engine.now(), reason)
    return fresh


def _live_predecessors(store: CharacterStore, memory: Memory) -> list[str]:
    """The live versions ``memory`` replaced: those its ``supersedes`` lists, followed
    through the trash (a restored earlier version is live without its mark, so a later
    version restored after it would be live beside it). Any other shape ends a line."""
    live, seen = [], {memory.id}
    line = [memory]
    for _ in range(MAX_LINKS):
        if not line:
            break
        links = line.pop().meta.get(SUPERSEDES)
        for earlier in links if type(links) is list else []:
            if type(earlier) is not str or earlier in seen:
                continue
            seen.add(earlier)
            if earlier in store.records:
                if _links_back(store.records[earlier], seen):
                    live.append(earlier)
            elif earlier in store.trash:
                line.append(store.trash[earlier].memory)
    return live


def _links_back(memory: Memory, line: set[str]) -> bool:
    """Whether a live memory is a version of the line: restored, it retired the later one
    and lists it (``supersedes``) or was replaced by one (``was_superseded_by``), or it is
    still marked as replaced by one. A link that
    only one side holds (``meta`` written by an app: ``{"supersedes": [any id]}``) retires
    nothing: a restore moved an unrelated memory to the trash."""
    links = memory.meta.get(SUPERSEDES)
    marks = (memory.meta.get(SUPERSEDED_BY), memory.meta.get(WAS_SUPERSEDED_BY))
    return (any(type(mark) is str and mark in line for mark in marks)
            or (type(links) is list and any(i in line for i in links if type(i) is str)))


def _live_successor(store: CharacterStore, memory: Memory) -> tuple[str | None, int]:
    """The live version that replaced ``memory``, and how many links led there: its
    ``superseded_by``, followed through the trash while each version still lists the one
    before it in ``supersedes`` (meta is the user's JSON too: any other shape, a cycle or
    a missing record ends the line, and nothing is retired)."""
    previous, successor = memory.id, memory.meta.get(SUPERSEDED_BY)
    seen = {memory.id}
    for steps in range(1, MAX_LINKS + 1):
        if type(successor) is not str or successor in seen:
            return None, 0
        seen.add(successor)
        live = store.records.get(successor)
        entry = store.trash.get(successor) if live is None else None
        version = live if live is not None else (entry.memory if entry else None)
        if version is None:
            return None, 0
        links = version.meta.get(SUPERSEDES)
        if type(links) is not list or previous not in links:
            return None, 0
        if live is not None:
            return successor, steps
        previous, successor = successor, version.meta.get(SUPERSEDED_BY)
    return None, 0


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
