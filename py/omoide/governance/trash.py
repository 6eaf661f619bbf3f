"""Trash policy on top of the engine's soft delete: a grace period, and revive on recall.

- ``purge_expired``: memories trashed more than ``grace_days`` (default 30) ago are purged;
  younger ones stay restorable with ``engine.restore``.
- ``recall_reviving``: a recall whose best match is a TRASHED memory with cosine at or above
  ``revive_threshold`` (default 0.95), better than every live match, restores it first and
  says so: the user clearly still needs it. A superseded memory (history of the one that
  replaced it, ``meta["superseded_by"]``) is never revived: it was replaced, not forgotten;
  nor is one whose key a live memory holds now (its restore would retire that one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.embedding import embed_query
from omoide.engine.memory import Hit, Memory
from omoide.engine.recall import checked_arguments
from omoide.engine.supersede import holders, is_superseded

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.store import CharacterStore

DAY = 86_400.0
REVIVE_CANDIDATES = 16  # trashed rows looked at: superseded history is skipped


def purge_expired(engine: MemoryEngine, character: str, *, grace_days: float = 30.0
                  ) -> list[str]:
    if not grace_days >= 0:  # NaN too
        raise ValueError("grace_days must be >= 0")
    before = engine.now() - grace_days * DAY
    if before <= 0:  # an infinite grace, or a clock near 1970 (a reset clock): nothing is due
        return []
    return engine.purge_trash(character, trashed_before=before)


@dataclass
class RecallResult:
    hits: list[Hit]
    revived: list[str] = field(default_factory=list)
    revived_cosine: float | None = None


def revivable(store: CharacterStore, memory: Memory) -> bool:
    """A trashed memory a recall may bring back: forgotten, not superseded, and its key held
    by no live memory (a restore would retire that holder: one key, one live memory; a read
    never replaces the current fact with one the user deleted)."""
    return not is_superseded(memory) and not holders(store, memory.key)


def recall_reviving(
    engine: MemoryEngine,
    character: str,
    query: str,
    *,
    revive: bool = True,
    revive_threshold: float = 0.95,
    **recall_args: Any,
) -> RecallResult:
    """``engine.recall`` that may first bring one trashed memory back (see module doc)."""
    # every argument checked before the restore: a refused recall changes nothing
    character = checked_arguments(engine, character, query, **recall_args).character
    store = engine.stores.get(character)
    result = RecallResult([])
    if revive and store is not None and store.trash:
        engine.check_model(store)
        q = embed_query(engine.embedder, validate.query(query, engine.max_text_length))
        # the trash has its own kernel: the best forgotten (not superseded) one near the top
        trashed = store.trash_kernel.top_k(q, min(len(store.trash), REVIVE_CANDIDATES))
        ranked = zip(trashed.ids, trashed.scores, strict=True)
        best_id, best = next(((i, float(s)) for i, s in ranked
                              if revivable(store, store.trash[i].memory)), (None, -2.0))
        # the live kernel is scanned only for a trashed match good enough to revive (most
        # recalls stop here); both are float32 kernels: a tie is not "better than live"
        if best >= revive_threshold and (
                not len(store.kernel) or best > store.kernel.top_k(q, 1).scores[0] + 1e-6):
            engine.restore(character, best_id)
            result.revived, result.revived_cosine = [best_id], round(best, 4)
    result.hits = engine.recall(character, query, **recall_args)
    return result
