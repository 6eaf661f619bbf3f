"""The persistence seam: every state change of a character store is announced BEFORE it is
applied (write-ahead). A listener that raises (e.g. the browser's IndexedDB layer hitting its
quota) vetoes the change: the in-memory store is left exactly as it was, so a failed write is
never half-applied.

Changes:
- ``put``: a memory record was inserted or replaced; ``vector`` is its vector, or None when
  only the record changed (recall counters, importance, meta); ``previous`` is the live
  record it replaces (None for a new one), so a store shared with other processes can write
  only the fields that changed (``backends/listener.py``).
- ``trash`` / ``restore``: a memory moved into / out of the character's trash (the vector
  moves with it; no re-embedding).
- ``purge``: a trashed memory is gone for good.
- ``swap``: the character's whole index was replaced (re-vectorization); ``vectors`` holds
  every new vector (live and trashed), ``stamp`` the new model stamp.

``Journal`` is the simplest real listener: it records changes and can replay them into
another engine, which is how a persistence layer restores a store at boot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from omoide.engine.memory import Memory

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

ChangeOp = Literal["put", "trash", "restore", "purge", "swap"]


@dataclass(frozen=True)
class Change:
    op: ChangeOp
    character_id: str
    memory_id: str | None = None
    memory: Memory | None = None
    vector: list[float] | None = None
    at: float | None = None
    stamp: str | None = None
    model_id: str | None = None
    dimension: int | None = None
    vectors: dict[str, list[float]] = field(default_factory=dict)
    previous: Memory | None = None
    # a put of an id the store held neither live nor trashed: a storage layer need not read
    # an old row first
    fresh: bool = False


class ChangeListener(Protocol):
    def on_change(self, change: Change) -> None: ...


class StaleState(Exception):  # noqa: N818 - a signal to run the verb again, not an error
    """Raised by a storage listener at a verb's first write when another process committed
    after the verb's catch-up: the verb decided on an old state, so nothing is written and
    the outermost verb runs again on fresh state (``MemoryEngine.run_fresh``)."""


class Journal:
    """Records every change (deep enough copies that later mutations do not leak in)."""

    def __init__(self) -> None:
        self.changes: list[Change] = []

    def on_change(self, change: Change) -> None:
        memory = Memory.from_dict(change.memory.to_dict()) if change.memory else None
        vector = list(change.vector) if change.vector is not None else None
        self.changes.append(
            Change(
                op=change.op,
                character_id=change.character_id,
                memory_id=change.memory_id,
                memory=memory,
                vector=vector,
                at=change.at,
                stamp=change.stamp,
                model_id=change.model_id,
                dimension=change.dimension,
                vectors={i: list(v) for i, v in change.vectors.items()},
            )
        )

    def replay(self, engine: MemoryEngine) -> None:
        """Apply the recorded changes to ``engine`` without calling any embedder."""
        for change in self.changes:
            engine.apply_change(change)
