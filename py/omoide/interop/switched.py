"""Lorebook entries switched off or on in SillyTavern / RisuAI, against the memories an
earlier import made of them.

Before lorebook imports left switched-off entries out, such an entry became a live memory
marked ``meta.disabled``. Importing the file again with the entry still off moves that
memory to the trash (restorable; ``meta.switched_off`` says why), so text the app never
prompts with leaves recall. An entry switched on again clears the mark on the memory it
matches (imported again, it is skipped as already held). A memory matches an entry when
it is live, marked disabled, and has the entry's text and ``meta.source``: a memory of the
user's own (no lorebook source) is never touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omoide.engine import validate
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.memory import Memory
    from omoide.interop.parse import Fact

# set on a memory the import moved to the trash because its entry is switched off
SWITCHED_OFF = "switched_off"


def _marked(engine: MemoryEngine, character: str, facts: list[Fact]) -> list[Memory]:
    """The live memories marked disabled that one of ``facts`` matches (text and source)."""
    wanted = set()
    for fact in facts:
        try:
            wanted.add((validate.text(fact.text, engine.max_text_length),
                        fact.meta.get("source")))
        except OmoideError:
            continue  # no memory holds a text that is refused
    return [m for m in engine.memories(character)
            if m.meta.get("disabled") and (m.text, m.meta.get("source")) in wanted]


def retire_switched_off(engine: MemoryEngine, character: str, off: list[Fact]) -> list[str]:
    """Move the live memories of switched-off entries to the trash; their ids."""
    if character not in engine.stores:
        return []
    moved = []
    for memory in _marked(engine, character, off):
        engine.update(character, memory.id, meta={**memory.meta, SWITCHED_OFF: True})
        engine.forget(character, memory.id)
        moved.append(memory.id)
    return moved


def clear_switched_on(engine: MemoryEngine, character: str, facts: list[Fact]) -> list[str]:
    """Drop ``meta.disabled`` from the live memories of entries switched on again; their
    ids. Only the meta changes: nothing is replaced."""
    if character not in engine.stores:
        return []
    on = [fact for fact in facts if not fact.meta.get("disabled")]
    cleared = []
    for memory in _marked(engine, character, on):
        engine.update(character, memory.id,
                      meta={k: v for k, v in memory.meta.items() if k != "disabled"})
        cleared.append(memory.id)
    return cleared
