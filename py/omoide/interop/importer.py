"""Write an ``ImportPlan``: facts as they are, chats through conversation ingest.

Everything is checked before the first write (the character id, every fact through the same
validation as ``remember``, the model of the character's index). Facts whose text the
character already holds are skipped, so importing a file twice adds nothing. Chat messages
are ingested one day at a time at that day's last message (ingest's ``at``), so what they
yield carries the date it was said (and ``meta.session`` = that day), while what the import
does on this machine has this machine's time: a fact a later day replaced goes to the trash
now, so the trash's grace period runs from the import (under the engine's clock set to the
chat's day, history of 2024 was purged as soon as it was imported).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from omoide.engine import snapshot, validate
from omoide.engine.remember import build_memory
from omoide.engine.validate import MAX_CHARACTER_ID
from omoide.errors import OmoideError
from omoide.interop.parse import ChatMessage, ImportPlan, parse_file
from omoide.interop.switched import SWITCHED_OFF, clear_switched_on, retire_switched_off

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.governance import Governor


def import_file(governor: Governor, data: bytes, path: str = "the file", *,
                character: str | None = None, dry_run: bool = False,
                names: Mapping[str, str] | None = None) -> dict[str, Any]:
    return apply_plan(governor, parse_file(data, path), character=character, dry_run=dry_run,
                      names=names)


def day_of(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def sessions(messages: list[ChatMessage]) -> list[tuple[str | None, list[ChatMessage]]]:
    """Consecutive messages of the same (UTC) day, in chat order."""
    out: list[tuple[str | None, list[ChatMessage]]] = []
    for m in messages:
        day = day_of(m.at)
        if out and out[-1][0] == day:
            out[-1][1].append(m)
        else:
            out.append((day, [m]))
    return out


def target_character(plan: ImportPlan, character: str | None,
                     names: Mapping[str, str] | None = None) -> str:
    """The character ``plan`` goes to: the one chosen, else the id made of the file's name.
    ``names`` (id -> display name of the characters that exist, deleted ones too): an id
    whose character has another name is another character ("Aqua" and "AQUA!", "🌸" and "🌙"
    make one id): the file's goes to the next free id (``aqua-2``), or to the one of that
    id already holding its name, so importing it again lands in the same place."""
    chosen = character or plan.character
    if chosen is None:
        raise OmoideError.of("INVALID_ARGUMENT", name="character",
                             reason=f"a {plan.format} file does not name its character; "
                                    "choose one")
    if character is None and names and plan.name:
        base, n = chosen, 1
        while not _same_character(names.get(chosen), chosen, plan.name):
            n += 1
            chosen = f"{base[:MAX_CHARACTER_ID - len(str(n)) - 1]}-{n}"
    return validate.character_id(chosen)


def _same_character(held: str | None, character: str, name: str) -> bool:
    """Whether the character ``character`` (display name ``held``; None: no such character,
    or one never named) is the one a file names ``name``."""
    return held is None or held in (character, name.strip())


def distinct_keys(facts: list[Any]) -> list[str | None]:
    """Each fact's key, the second and later facts of the file under one key numbered
    (``lore:alice``, ``lore:alice#2``): two lorebook entries with the same trigger words
    are two facts, and one key holds one live memory, so the second replaced the first (and
    a second import of the file swapped them back). Numbered in file order with the first
    number no key of the file takes (an entry exported as ``lore:alice#2`` keeps it), so the
    same file gives the same keys."""
    taken = {fact.key for fact in facts if fact.key is not None}
    seen: set[str] = set()
    keys: list[str | None] = []
    for fact in facts:
        key = fact.key
        if key is not None and key in seen:
            n = 2
            while f"{key}#{n}" in taken:
                n += 1
            key = f"{key}#{n}"
            taken.add(key)
        if key is not None:
            seen.add(key)
        keys.append(key)
    return keys


def rehearsal(governor: Governor, character: str) -> Governor:
    """A throw-away governor whose engine holds a copy of ``character``'s store (live
    memories and trash, through the snapshot format) and nothing else: no listener, no
    verb guard, so nothing it does reaches storage or the real store. Same embedder, clock,
    LLM, tier policy and dedup threshold; its own audit log."""
    from omoide.governance import Governor

    engine = governor.engine
    scratch: MemoryEngine = copy.copy(engine)
    scratch.stores, scratch.listeners, scratch.refreshers, scratch.verb_guards = {}, [], [], []
    scratch.revectorize_jobs, scratch.quarantine, scratch._verb_depth = {}, {}, 0
    if character in engine.stores:
        snapshot.load_character(scratch, character,
                                *snapshot.dump_character(engine, character))
    return Governor(scratch, llm=governor.llm, policy=governor.policy,
                    dedup_threshold=governor.dedup_threshold)


def apply_plan(governor: Governor, plan: ImportPlan, *, character: str | None = None,
               dry_run: bool = False, names: Mapping[str, str] | None = None
               ) -> dict[str, Any]:
    engine = governor.engine
    target = target_character(plan, character, names)
    store = engine.stores.get(target)
    if store is not None:
        engine.check_model(store)  # refused before anything is embedded or written
    if dry_run:
        # The real import on a copy of the character: a chat's later days see what its
        # earlier days (and the file's facts) would store. Each day previewed against the
        # store alone said "would store 4, merged 0" for the same sentence on two days
        # where the import stores 2 and merges 2.
        return apply_plan(rehearsal(governor, target), plan, character=target) | {
            "dry_run": True}
    held = set()
    if store is not None:
        sources = {fact.meta.get("source") for fact in plan.facts}
        # a fact the user forgot (in the trash) stays forgotten when the file comes again;
        # one an import trashed because its entry was switched off comes back switched on
        held = {m.text for m in engine.memories(target)} | {
            e.memory.text for e in engine.trash(target)
            if e.memory.meta.get("source") in sources and not e.memory.meta.get(SWITCHED_OFF)}
    fresh, seen = [], set(held)
    for fact, key in zip(plan.facts, distinct_keys(plan.facts), strict=True):
        try:
            memory = build_memory(engine, target, fact.text, kind=fact.kind,
                                  importance=fact.importance, at=fact.at, meta=fact.meta,
                                  key=key, context=fact.context,
                                  conversation=fact.conversation, turn=fact.turn)
        except OmoideError as e:
            raise OmoideError.of("MALFORMED_CHAT_DATA", path=plan.path or plan.format,
                                 what=fact.where, reason=str(e).rstrip(".")) from None
        if memory.text in seen:
            continue
        seen.add(memory.text)
        fresh.append({"text": memory.text, "kind": memory.kind, "key": memory.key,
                      "importance": memory.importance, "meta": memory.meta,
                      **({"at": fact.at} if fact.at is not None else {}),
                      **{name: value for name, value in (
                          ("context", memory.context), ("conversation", memory.conversation),
                          ("turn", memory.turn)) if value is not None}})
    report: dict[str, Any] = {
        "format": plan.format, "character": target, "name": plan.name, "dry_run": dry_run,
        "facts": len(fresh), "facts_skipped": len(plan.facts) - len(fresh),
        "messages": len(plan.messages), "undated": plan.undated, "repaired": plan.repaired,
        "disabled": len(plan.disabled), "disabled_entries": list(plan.disabled),
        "sessions": [],
        "stored": 0, "merged": 0, "skipped": 0,
    }
    # memories an earlier version made of entries still switched off: to the trash
    report["disabled_trashed"] = retire_switched_off(engine, target, plan.off)
    # and the mark of those switched on again
    report["enabled_again"] = clear_switched_on(engine, target, plan.facts)
    if fresh:
        engine.remember_many(target, fresh)
    for day, group in sessions(plan.messages):
        meta = {"source": plan.format} | ({"session": day} if day else {})
        ingested = governor.ingest(target, [{"role": m.role, "content": m.text}
                                            for m in group], meta=meta, at=group[-1].at)
        stored, merged = ingested.count("stored"), len(ingested.merged)
        report["sessions"].append({"day": day, "messages": len(group), "stored": stored,
                                   "merged": merged})
        report["stored"] += stored
        report["merged"] += merged
        report["skipped"] += len(ingested.skipped)
    return report
