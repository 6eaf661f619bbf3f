"""``remember`` / ``remember_many``: validate, embed (one batched call), store.

A memory may say where it came from in a conversation (``conversation``, ``turn``;
``engine/neighbourhood.py``); given a conversation without a turn, it is placed after the
conversation's last turn, in the order of the items.

A memory with a key replaces the live memories holding that key (``engine.supersede``): they
move to the trash as its history, restorable, and recall only ranks the new one. One dated
(``at``) before the holder was last said is the older statement: it is written as the
holder's history (in the trash, restorable) and the holder stays live."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.embedding import embed_memories
from omoide.engine.memory import KIND_TYPES, Memory, new_memory_id
from omoide.engine.neighbourhood import claim_turn, next_turn
from omoide.engine.supersede import holders, last_said, linked, retire
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

ITEM_FIELDS = frozenset({"text", "kind", "importance", "at", "meta", "key", "context",
                         "conversation", "turn"})


def build_memory(
    engine: MemoryEngine,
    character: str,
    text: str,
    *,
    kind: str = "fact",
    importance: float = 0.5,
    at: Any = None,
    meta: Any = None,
    key: Any = None,
    context: Any = None,
    conversation: Any = None,
    turn: Any = None,
) -> Memory:
    """A validated, not yet stored memory (its vector comes from the caller). A ``turn``
    needs a ``conversation``; a conversation without one is placed by ``remember_many``."""
    text = validate.text(text, engine.max_text_length)
    kind = validate.kind(kind)
    when = engine.now() if at is None else validate.timestamp(at)
    return Memory(
        id=new_memory_id(when),
        character_id=character,
        text=text,
        kind=kind,
        type=KIND_TYPES[kind],
        key=validate.key(key),
        importance=validate.unit_interval("importance", importance),
        created_at=when,
        # when the record was written: a note dated two years back (``at``) is new to the
        # store, so maintenance (summaries, tiers, the cold pass's scan) treats it as such
        updated_at=max(when, engine.now()) if at is not None else when,
        model=engine.embedder.stamp,
        meta=validate.meta(meta),
        context=None if context is None else validate.context(context, engine.max_text_length),
        conversation=validate.conversation(conversation),
        turn=_turn(conversation, turn),
    )


def _turn(conversation: Any, turn: Any) -> int | None:
    if turn is not None and conversation is None:
        raise OmoideError.of("INVALID_ARGUMENT", name="turn", reason="only with a conversation")
    return validate.turn(turn)


def _item_arguments(item: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, str):
        return {"text": item}
    if not isinstance(item, Mapping) or "text" not in item:
        raise OmoideError.of("INVALID_ARGUMENT", name="item", reason="needs a 'text' field")
    unknown = set(item) - ITEM_FIELDS
    if unknown:
        raise OmoideError.of(
            "INVALID_ARGUMENT", name="item", reason=f"unknown fields {sorted(unknown)}"
        )
    return dict(item)


def remember_many(
    engine: MemoryEngine, character: str, items: Sequence[str | Mapping[str, Any]]
) -> list[Memory]:
    """Store several memories with ONE embedding call; all are validated before any write."""
    character = validate.character_id(character)
    arguments = [_item_arguments(i) for i in items]
    memories = [build_memory(engine, character, **a) for a in arguments]
    if not memories:
        return []
    store = engine.writable_store(character)
    vectors = embed_memories(engine.embedder, [(m.text, m.context) for m in memories])
    stored = []
    for memory, vector, given in zip(memories, vectors, arguments, strict=True):
        if memory.conversation is not None:  # place it (a turn given) or append it
            if memory.turn is None:
                memory.turn = next_turn(store, memory.conversation)
            claim_turn(store, memory.conversation, memory.turn)
        replaced = holders(store, memory.key)
        newest = max(replaced, key=lambda i: (last_said(store.records[i]), i), default=None)
        if (newest is not None and given.get("at") is not None
                and memory.created_at < last_said(store.records[newest])):
            # dated before the value the key holds was said: an older statement never
            # replaces a newer one; it is that value's history (a file of January imported
            # after March's value sent March's to the trash, purged 30 days on)
            store.put(memory, vector)
            store.put(linked(store.records[newest], [memory.id]), None)
            retire(store, memory.id, newest, engine.now(),
                   f"same key {memory.key}: said before the live memory, kept as its history")
            stored.append(store.trash[memory.id].memory)
            continue
        memory = linked(memory, replaced)
        store.put(memory, vector)
        for old_id in replaced:
            retire(store, old_id, memory.id, engine.now(), f"same key {memory.key}")
        stored.append(memory)
    return stored


def remember(engine: MemoryEngine, character: str, text: str, **fields: Any) -> Memory:
    return remember_many(engine, character, [{"text": text, **fields}])[0]
