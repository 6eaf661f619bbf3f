"""``update``: change fields of a live memory; a new text is re-embedded and re-indexed.
Giving it a key other live memories hold replaces them (``engine.supersede``).

An edit never loses what it replaced: a new text or context keeps the version before it as
a copy under a new id, retired to the trash as history of the memory (``superseded_by`` it,
reason "edited"; the memory lists the copy in ``supersedes``). Restoring the copy brings the
previous version back and retires the edited one in its place (``forget.restore``). The
copy is written before the edit, so a failure in between leaves the text in two records,
never in none."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.embedding import embed_memories
from omoide.engine.memory import KIND_TYPES, Memory, new_memory_id
from omoide.engine.supersede import SUPERSEDES, holders, linked, retire
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

_UNSET: Any = object()


def kept_links(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A new ``meta`` keeps the old one's ``supersedes`` unless it sets its own: the list is
    how a restored version finds the memory that replaced it (replacing the meta dropped it,
    and restoring the version before an edit left both live)."""
    if SUPERSEDES in new or SUPERSEDES not in old:
        return new
    return {**new, SUPERSEDES: old[SUPERSEDES]}


def update(
    engine: MemoryEngine,
    character: str,
    memory_id: str,
    *,
    text: str | None = None,
    kind: str | None = None,
    importance: float | None = None,
    key: Any = _UNSET,
    meta: dict | None = None,
    context: Any = _UNSET,
) -> Memory:
    store = engine.existing_store(character)
    old = store.records.get(memory_id)
    if old is None:
        raise OmoideError.of("UNKNOWN_MEMORY", memory_id=memory_id, character=character)
    changes: dict[str, Any] = {"updated_at": engine.now()}
    if text is not None:
        changes["text"] = validate.text(text, engine.max_text_length)
    if kind is not None:
        changes["kind"] = validate.kind(kind)
        changes["type"] = KIND_TYPES[kind]
    if importance is not None:
        changes["importance"] = validate.unit_interval("importance", importance)
    if key is not _UNSET:
        changes["key"] = validate.key(key)
    if meta is not None:
        changes["meta"] = kept_links(old.meta, validate.meta(meta))
    if context is not _UNSET:
        changes["context"] = (None if context is None
                              else validate.context(context, engine.max_text_length))
    new = dataclasses.replace(old, **changes)
    vector = None
    previous = None
    if new.text != old.text or new.context != old.context:
        engine.check_model(store)
        vector = embed_memories(engine.embedder, [(new.text, new.context)])[0]
        previous = dataclasses.replace(old, id=new_memory_id(changes["updated_at"]))
        store.put(previous, store.kernel.vector(memory_id))
    replaced = holders(store, new.key, besides=memory_id) if new.key != old.key else []
    new = linked(new, ([previous.id] if previous is not None else []) + replaced)
    new = store.put(new, vector)
    if previous is not None:
        retire(store, previous.id, memory_id, engine.now(), "edited")
    for other in replaced:
        retire(store, other, memory_id, engine.now(), f"same key {new.key}")
    return new
