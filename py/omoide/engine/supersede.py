"""Supersede: a memory replaces live ones, which move to the trash as its history.

One key, one live memory: ``remember`` (and ``remember_many``) with a key that live memories
hold, ``update`` giving a memory such a key, and ``restore`` of a keyed memory all replace
the holders. An older statement never replaces a newer one: a memory dated (``at``) before
the holder was last said (``last_said``) is written as the holder's history instead.
Governance ingest uses the same step for a contradiction (same subject, the other polarity)
and for a merge whose text grows.

Order: the new record is written first, then each old one gets ``meta["superseded_by"]``,
``superseded_at`` and ``superseded_reason`` and moves to the trash, so a failed trash move
leaves the fact in two records, never in none. The new record lists what it replaced in
``meta["supersedes"]``. The old one keeps its vector in the trash: ``restore`` brings it back
(and, holding the key, retires the one that replaced it). Recall never ranks it: it is out
of the kernel and the text index, and ``recall_reviving`` never revives it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from omoide.engine.memory import Memory, TrashEntry
from omoide.engine.store import CharacterStore

SUPERSEDES = "supersedes"
SUPERSEDED_BY = "superseded_by"
MAX_LINKS = 50  # a slot rewritten every day keeps the last 50 ids it replaced
RETIRED_FIELDS = (SUPERSEDED_BY, "superseded_at", "superseded_reason")


def last_said(memory: Memory) -> float:
    """When the memory was last said: its own time, or a later repeat's (``meta.said_at``,
    set by a governance merge): a statement dated between the two ("doctor" in April, after
    "nurse" in January and again in October) changes nothing."""
    again = memory.meta.get("said_at")
    return max(memory.created_at, again) if isinstance(again, (int, float)) \
        and not isinstance(again, bool) else memory.created_at


def holders(store: CharacterStore, key: str | None, *, besides: str | None = None
            ) -> list[str]:
    """Live ids holding ``key`` (an index lookup, never a scan)."""
    if key is None:
        return []
    return [i for i in store.ids_with_key(key) if i != besides]


def held_links(meta: dict[str, Any]) -> list[str]:
    """The ids in ``meta["supersedes"]``: a list of strings as the engine writes it; a row
    stored before that was checked (a number, a text) links nothing, never a crash."""
    links = meta.get(SUPERSEDES)
    return [i for i in links if type(i) is str] if type(links) is list else []


def linked(memory: Memory, old_ids: Iterable[str]) -> Memory:
    """``memory`` with ``old_ids`` appended to ``meta["supersedes"]`` (no write)."""
    old_ids = list(old_ids)
    if not old_ids:
        return memory
    meta: dict[str, Any] = dict(memory.meta)
    links = [i for i in held_links(meta) if i not in old_ids] + old_ids
    meta[SUPERSEDES] = links[-MAX_LINKS:]
    return dataclasses.replace(memory, meta=meta)


def retire(store: CharacterStore, old_id: str, new_id: str, at: float, reason: str
           ) -> TrashEntry:
    """Move a live memory to the trash as history of ``new_id`` (already written)."""
    old = store.records[old_id]
    meta = {**old.meta, SUPERSEDED_BY: new_id, "superseded_at": at, "superseded_reason": reason}
    store.put(dataclasses.replace(old, meta=meta), None)
    return store.move_to_trash(old_id, at)


# Kept on a restored version: the one it had been replaced by (``forget.restore`` retires
# a live version only when the link is on both sides).
WAS_SUPERSEDED_BY = "was_superseded_by"


def unretired(memory: Memory) -> Memory:
    """A restored memory without the marks of its retirement (what replaced it is kept as
    ``was_superseded_by``)."""
    if not any(name in memory.meta for name in RETIRED_FIELDS):
        return memory
    meta = {k: v for k, v in memory.meta.items() if k not in RETIRED_FIELDS}
    if type(memory.meta.get(SUPERSEDED_BY)) is str:
        meta[WAS_SUPERSEDED_BY] = memory.meta[SUPERSEDED_BY]
    return dataclasses.replace(memory, meta=meta)


def is_superseded(memory: Memory) -> bool:
    return SUPERSEDED_BY in memory.meta


def settle_keys(store: CharacterStore, keys: Iterable[str | None], at: float,
                reason: str) -> list[str]:
    """Make each of ``keys`` held by one live memory again after a write that does not go
    through ``remember`` (an import adds records as they are): the newest holder (last
    ``updated_at``, then id) stays, it lists the others in ``supersedes``, and they go to
    the trash as its history. Returns the ids retired. Idempotent: a key already held once
    costs one index lookup."""
    retired: list[str] = []
    for key in dict.fromkeys(k for k in keys if k is not None):
        ids = holders(store, key)
        if len(ids) < 2:
            continue
        newest = max(ids, key=lambda i: (store.records[i].updated_at, i))
        older = [i for i in ids if i != newest]
        kept = linked(store.records[newest], older)
        store.put(kept, None)
        for old_id in older:
            retire(store, old_id, newest, at, reason)
        retired += older
    return retired
