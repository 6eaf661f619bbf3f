"""A character's memories as SillyTavern World Info JSON (one entry per live memory).

Entry keys are the ones the memory was imported with (``meta.keys``); otherwise the subject
of its ``key`` (``preference:green_tea`` -> ``green tea``), otherwise its three longest words.
Hot-tier memories are ``constant`` (always in the prompt, as Omoide's hot block is). Each
entry keeps the memory under ``extensions.omoide``, so a re-import restores kind,
importance, date and meta; SillyTavern keeps unknown entry fields.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from omoide.engine.memory import Memory

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

DEPTH = 4


def entry_keys(memory: Memory) -> list[str]:
    keys = memory.meta.get("keys")
    if isinstance(keys, list) and keys:
        return [str(k) for k in keys]
    if memory.key and ":" in memory.key and not memory.key.startswith(("card:", "lore:")):
        return [memory.key.split(":", 1)[1].replace("_", " ")]
    words = sorted(set(re.findall(r"[^\W\d_]{4,}", memory.text)), key=lambda w: (-len(w), w))
    return words[:3]


def export_world_info(engine: MemoryEngine, character: str, *,
                      name: str | None = None) -> dict[str, Any]:
    engine.existing_store(character)  # UNKNOWN_CHARACTER
    entries: dict[str, dict[str, Any]] = {}
    memories = sorted(engine.memories(character), key=lambda m: (m.created_at, m.id))
    for uid, memory in enumerate(memories):
        secondary = memory.meta.get("secondary_keys") or []
        entries[str(uid)] = {
            "uid": uid, "key": entry_keys(memory), "keysecondary": list(secondary),
            "comment": memory.meta.get("comment") or f"{memory.kind}: {memory.text[:40]}",
            "content": memory.text,
            "constant": memory.meta.get("tier") == "hot" or bool(memory.meta.get("constant")),
            "selective": bool(secondary), "selectiveLogic": 0, "addMemo": True,
            "order": round(memory.importance * 100), "position": 0,
            "disable": bool(memory.meta.get("disabled")), "excludeRecursion": False,
            "probability": 100, "useProbability": True, "depth": DEPTH, "group": "",
            "displayIndex": uid,
            "extensions": {"omoide": {"id": memory.id, "kind": memory.kind,
                                      "importance": memory.importance, "key": memory.key,
                                      "created_at": memory.created_at, "meta": memory.meta}},
        }
    return {"name": name or character, "entries": entries}
