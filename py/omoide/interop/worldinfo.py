"""A character's memories as SillyTavern World Info JSON (one entry per live memory).

Entry keys are the ones the memory was imported with (``meta.keys``); otherwise the subject
of its ``key`` (``preference:green_tea`` -> ``green tea``), otherwise its three longest words.
Hot-tier memories are ``constant`` (always in the prompt, as Omoide's hot block is). Each
entry keeps the memory under ``extensions.omoide``, so a re-import restores kind,
importance, key, date, meta, index context and conversation place; SillyTavern keeps
unknown entry fields. The trash is not exported (World Info has no place for it: use the
Omoide export for a full backup).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from omoide.engine.memory import Memory
from omoide.governance import meta_fields

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

DEPTH = 4


def entry_keys(memory: Memory) -> list[str]:
    return keys_for(memory.meta, memory.key, memory.text)


def keys_for(meta: dict[str, Any], key: str | None, text: str) -> list[str]:
    """The trigger words of an entry: ``meta.keys``, else the key's subject, else the
    text's three longest words."""
    keys = meta.get("keys")
    if isinstance(keys, list) and keys:
        return [str(k) for k in keys]
    if key and ":" in key and not key.startswith(("card:", "lore:")):
        return [key.split(":", 1)[1].replace("_", " ")]
    words = sorted(set(re.findall(r"[^\W\d_]{4,}", text)), key=lambda w: (-len(w), w))
    return words[:3]


def comment_for(meta: dict[str, Any], kind: str, text: str) -> str:
    """The entry's title: ``meta.comment``, else the kind and the text's start."""
    return meta_fields.text_field(meta, "comment") or f"{kind}: {text[:40]}"


def export_world_info(engine: MemoryEngine, character: str, *,
                      name: str | None = None) -> dict[str, Any]:
    engine.existing_store(character)  # UNKNOWN_CHARACTER
    entries: dict[str, dict[str, Any]] = {}
    memories = sorted(engine.memories(character), key=lambda m: (m.created_at, m.id))
    for uid, memory in enumerate(memories):
        secondary = meta_fields.entries(memory.meta, "secondary_keys")
        entries[str(uid)] = {
            "uid": uid, "key": entry_keys(memory), "keysecondary": list(secondary),
            "comment": comment_for(memory.meta, memory.kind, memory.text),
            "content": memory.text,
            "constant": memory.meta.get("tier") == "hot" or bool(memory.meta.get("constant")),
            "selective": bool(secondary), "selectiveLogic": 0, "addMemo": True,
            "order": round(memory.importance * 100), "position": 0,
            "disable": bool(memory.meta.get("disabled")), "excludeRecursion": False,
            "probability": 100, "useProbability": True, "depth": DEPTH, "group": "",
            "displayIndex": uid,
            "extensions": {"omoide": {"id": memory.id, "kind": memory.kind,
                                      "importance": memory.importance, "key": memory.key,
                                      "created_at": memory.created_at, "meta": memory.meta,
                                      "context": memory.context,
                                      "conversation": memory.conversation,
                                      "turn": memory.turn}},
        }
    return {"name": name or character, "entries": entries}
