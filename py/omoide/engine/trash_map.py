"""A store's trash: id -> ``TrashEntry``, counting its changes.

An index built from the trash (governance's re-ingest check looks up the messages trashed
memories heard) is kept with ``derived`` until the trash changes, instead of being made
again by every write that consults it: a write costs the trash nothing while the trash
stands still. Every way a dict is changed moves ``changes``; reads do not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from omoide.engine.memory import TrashEntry

T = TypeVar("T")


class TrashMap(dict[str, TrashEntry]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.changes = 0
        self._derived: dict[str, tuple[int, Any]] = {}

    def derived(self, name: str, build: Callable[[TrashMap], T]) -> T:
        """``build(self)``, made again only when the trash changed since it was last made
        under ``name`` (the result must depend on the trash alone)."""
        made = self._derived.get(name)
        if made is None or made[0] != self.changes:
            made = (self.changes, build(self))
            self._derived[name] = made
        return made[1]

    def __setitem__(self, key: str, value: TrashEntry) -> None:
        self.changes += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.changes += 1
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.changes += 1
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, TrashEntry]:
        self.changes += 1
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.changes += 1
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.changes += 1
        super().update(*args, **kwargs)

    def __ior__(self, other: Any) -> TrashMap:
        self.update(other)
        return self

    def clear(self) -> None:
        self.changes += 1
        super().clear()
