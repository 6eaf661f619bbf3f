"""One step of a random history of writes (remember, update, forget, restore), for the
property tests that hold an index the store keeps against a rebuild or a scan."""

from __future__ import annotations

from typing import Any

from omoide.engine import MemoryEngine

VERBS = ("remember", "update", "forget", "restore")


def apply_write(engine: MemoryEngine, character: str, verb: str, pick: int, *,
                remember: dict[str, Any], update: dict[str, Any]) -> bool:
    """Run ``verb`` on the character (``pick`` chooses the live or trashed memory, by
    position in id order); False when ``verb`` is not one of ``VERBS``. An update, forget
    or restore with nothing to act on does nothing."""
    store = engine.stores[character]
    live, trashed = sorted(store.records), sorted(store.trash)
    if verb == "remember":
        engine.remember(character, **remember)
    elif verb == "update" and live:
        engine.update(character, live[pick % len(live)], **update)
    elif verb == "forget" and live:
        engine.forget(character, live[pick % len(live)])
    elif verb == "restore" and trashed:
        engine.restore(character, trashed[pick % len(trashed)])
    return verb in VERBS
