"""A character's live memories newest first (``created_at`` descending, then id), kept in
order by every write: a page of the memories list is a slice of it, not a sort of the store.

``CharacterStore.newest_first`` builds one on first use (one read of every memory's time)
and keeps it current through the store's index hooks; an insert or a removal is a binary
search and one list move (C speed, no Python step per memory).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Collection, Iterable

from omoide.engine.memory import Memory


def order_key(memory: Memory) -> tuple[float, str]:
    return (-memory.peek("created_at"), memory.id)  # an unmade memory stays unmade


class NewestFirst:
    def __init__(self, memories: Iterable[Memory]) -> None:
        self._keys = sorted(map(order_key, memories))

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, memory: Memory) -> None:
        insort(self._keys, order_key(memory))

    def drop(self, memory: Memory) -> None:
        key = order_key(memory)
        at = bisect_left(self._keys, key)
        if at < len(self._keys) and self._keys[at] == key:
            del self._keys[at]

    def ids(self, offset: int, limit: int, allowed: Collection[str] | None = None
            ) -> list[str]:
        """The ids of ``limit`` memories from ``offset`` on, among ``allowed`` when given."""
        if allowed is None:
            return [memory_id for _, memory_id in self._keys[offset:offset + limit]]
        out: list[str] = []
        for _, memory_id in self._keys:  # walks until the page is full
            if memory_id in allowed:
                if offset:
                    offset -= 1
                    continue
                out.append(memory_id)
                if len(out) == limit:
                    break
        return out
