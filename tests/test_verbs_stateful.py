"""A state machine over the engine's public verbs, in memory and on a SQLite workspace.

Hypothesis drives remember / remember_many (context, at, meta, key, conversation, pinned,
importance), update, forget, restore, purge, pin, recall, snapshot and export/import
round trips into a fresh engine (and, on SQLite, reopening the file), across three
characters, beside a model of what each character holds. After every step:

- each character holds exactly the model's live memories and trash, field for field (what
  a memory says: its text, context, kind, importance, key, time, conversation, turn and
  the caller's meta; the supersede links and use counts are the engine's);
- no memory is held by two characters, no recall or list returns another's memory;
- a trashed memory keeps its ``trashed_at`` until purged; a purged one is gone.

Round trips must give back every field (the whole export, vectors, trash and display names
included), and a verb refused for a bad argument must leave the whole export as it was.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from omoide.engine import MemoryEngine, exchange
from omoide.engine import memory as memory_module
from omoide.engine.memory import KINDS, Memory
from omoide.errors import OmoideError
from omoide.governance import Governor
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder

CHARACTERS = ("alice", "bob", "さくら")
NAMES = ("Alice", "Bob the Builder", "さくらちゃん", "Zoë")
WORDS = ("tea", "coffee", "寿司", "東京", "cat", "dog", "rain", "music", "ramen", "Osaka")
# what the engine writes into meta itself: links between versions of a memory
LINKS = frozenset({"supersedes", "superseded_by", "superseded_at", "superseded_reason",
                   "was_superseded_by"})

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
contexts = st.none() | st.just("") | texts
keys = st.none() | st.sampled_from(("fact:job", "preference:drink", "pref:寿司"))
importances = st.sampled_from((0.0, 0.25, 0.5, 1.0))
times = st.none() | st.sampled_from((0.0, 1_600_000_000.0, 1_700_000_123.456))
metas = st.none() | st.fixed_dictionaries({}, optional={
    "mood": st.sampled_from(("happy", "雨")), "n": st.integers(-3, 3),
    "pinned": st.booleans(), "src": st.lists(st.sampled_from(("a", "b")), max_size=2)})
conversations = st.none() | st.sampled_from(("chat-1", "chat-2"))
indexes = st.integers(0, 10_000)


def item(text: str, **fields: Any) -> dict[str, Any]:
    return {"text": text, **{k: v for k, v in fields.items() if v is not None}}


items = st.builds(item, texts, kind=st.sampled_from(KINDS), importance=importances,
                  at=times, meta=metas, key=keys, context=contexts,
                  conversation=conversations)


def said(memory: Memory) -> dict[str, Any]:
    """What a memory says (no use counts, links, stamps or write times)."""
    return {"character_id": memory.character_id, "text": memory.text,
            "context": memory.context, "kind": memory.kind, "type": memory.type,
            "key": memory.key, "importance": memory.importance,
            "created_at": memory.created_at, "conversation": memory.conversation,
            "turn": memory.turn,
            "meta": {k: v for k, v in memory.meta.items() if k not in LINKS}}


def last_said(version: dict[str, Any]) -> float:
    """``supersede.last_said`` of a modelled memory: its time or a later ``meta.said_at``."""
    again = version["meta"].get("said_at")
    return max(version["created_at"], again) if isinstance(again, (int, float)) \
        and not isinstance(again, bool) else version["created_at"]


def words(version: dict[str, Any]) -> tuple[Any, Any]:
    return version.get("text"), version.get("context")


class Clock:
    def __init__(self) -> None:
        self.t = 1_750_000_000.0

    def __call__(self) -> float:
        self.t += 0.5
        return self.t


# A bad call: (what it should name in its error, the call). ``memory`` is a live id of the
# character, ``other`` a memory of another character (live or trashed), or None.
def _bad_calls(engine: MemoryEngine, c: str, memory: str | None, other: str | None,
               trashed: str | None) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = [
        ("empty", lambda: engine.remember(c, "   ")),
        ("kind", lambda: engine.remember(c, "tea", kind="bogus")),
        ("importance", lambda: engine.remember(c, "tea", importance=1.5)),
        ("importance", lambda: engine.remember(c, "tea", importance=math.nan)),
        ("at", lambda: engine.remember(c, "tea", at=math.inf)),
        ("at", lambda: engine.remember(c, "tea", at=-5)),
        ("meta", lambda: engine.remember(c, "tea", meta={"x": math.nan})),
        ("meta", lambda: engine.remember(c, "tea", meta=["x"])),
        ("key", lambda: engine.remember(c, "tea", key="  ")),
        ("context", lambda: engine.remember(c, "tea", context=7)),
        ("turn", lambda: engine.remember(c, "tea", turn=3)),
        ("turn", lambda: engine.remember(c, "tea", conversation="chat-1", turn=-1)),
        ("conversation", lambda: engine.remember(c, "tea", conversation=" ")),
        ("8000", lambda: engine.remember(c, "x" * 8001)),
        ("character", lambda: engine.remember(" padded", "tea")),
        ("importance", lambda: engine.remember_many(c, ["tea", {"text": "cat",
                                                              "importance": 2}])),
        ("item", lambda: engine.remember_many(c, ["tea", {"text": "cat", "colour": 1}])),
        ("item", lambda: engine.remember_many(c, ["tea", {"kind": "fact"}])),
        ("nobody", lambda: engine.forget("nobody", "01ABC")),
        ("before|no character", lambda: engine.purge_trash(c, trashed_before="yesterday")),
        ("mode", lambda: engine.recall(c, "tea", mode="psychic")),
        ("k", lambda: engine.recall(c, "tea", k=0)),
        ("query", lambda: engine.recall(c, "  ")),
        ("kind", lambda: engine.recall(c, "tea", kinds=["bogus"])),
        ("01NOSUCH|no character", lambda: engine.forget(c, "01NOSUCH")),
        ("01NOSUCH|no character", lambda: engine.restore(c, "01NOSUCH")),
        ("01NOSUCH|no character", lambda: engine.update(c, "01NOSUCH", text="tea")),
    ]
    if memory is not None:
        calls += [
            (memory, lambda: engine.restore(c, memory)),  # live, not in the trash
            ("empty", lambda: engine.update(c, memory, text="")),
            ("importance", lambda: engine.update(c, memory, text="new words",
                                                 importance=-0.1)),
            ("kind", lambda: engine.update(c, memory, text="new words", kind="nope")),
            ("meta", lambda: engine.update(c, memory, meta={"k": {1, 2}})),
            ("key", lambda: engine.update(c, memory, key="")),
            ("context", lambda: engine.update(c, memory, context=b"bytes")),
        ]
    if other is not None:  # another character's memory: never reachable through this one
        calls += [
            (other, lambda: engine.forget(c, other)),
            (other, lambda: engine.restore(c, other)),
            (other, lambda: engine.update(c, other, text="stolen")),
            (other, lambda: engine.get(c, other)),
        ]
    if trashed is not None:
        calls += [(trashed, lambda: engine.forget(c, trashed)),
                  (trashed, lambda: engine.update(c, trashed, importance=0.9))]
    return calls


class VerbsMachine(RuleBasedStateMachine):
    """The in-memory engine; ``SQLiteVerbsMachine`` runs the same rules on a workspace."""

    def __init__(self) -> None:
        super().__init__()
        # ids from a seeded generator: a run picks the same memories every time (a random
        # id order made hypothesis's replays differ)
        self.real_secrets = memory_module.secrets
        memory_module.secrets = SimpleNamespace(randbits=random.Random(0).getrandbits)
        self.clock = Clock()
        self.embedder = HashingEmbedder(16)
        self.engine = self.fresh_engine()
        self.display: dict[str, str] = {}
        self.live: dict[str, dict[str, dict[str, Any]]] = {c: {} for c in CHARACTERS}
        # id -> [what it says, trashed_at (None until first seen)]
        self.trashed: dict[str, dict[str, list[Any]]] = {c: {} for c in CHARACTERS}
        self.purged: set[str] = set()

    # -- the engine under test (overridden on SQLite) ------------------------------------

    def fresh_engine(self) -> MemoryEngine:
        return MemoryEngine(self.embedder, clock=self.clock)

    def names(self) -> dict[str, str]:
        return dict(self.display)

    def add_names(self, names: dict[str, str]) -> None:
        for c, name in names.items():
            self.display.setdefault(c, name)

    def dump(self) -> str:
        """Everything the engine holds, as a full export with vectors."""
        data = exchange.export_data(self.engine, names=self.names(), with_vectors=True)
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    # -- helpers ------------------------------------------------------------------------

    def pick(self, c: str, n: int) -> str:
        ids = sorted(self.live[c])
        return ids[n % len(ids)]

    def pick_trashed(self, c: str, n: int) -> str:
        ids = sorted(self.trashed[c])
        return ids[n % len(ids)]

    def retire(self, c: str, memory_id: str) -> None:
        self.trashed[c][memory_id] = [self.live[c].pop(memory_id), None]

    def holders(self, c: str, key: str | None, besides: str | None = None) -> list[str]:
        if key is None:
            return []
        return [i for i, m in self.live[c].items() if m["key"] == key and i != besides]

    def stored(self, c: str, memory: Memory, wanted: dict[str, Any]) -> None:
        """``memory`` was just written from ``wanted`` (an item): check and model it."""
        got = said(memory)
        context = wanted.get("context")
        expected = {"character_id": c, "text": wanted["text"],
                    "context": context if context and context.strip() else None,
                    "kind": wanted.get("kind", "fact"),
                    "importance": float(wanted.get("importance", 0.5)),
                    "key": wanted.get("key"), "meta": dict(wanted.get("meta") or {}),
                    "conversation": wanted.get("conversation")}
        assert {k: got[k] for k in expected} == expected
        if wanted.get("at") is not None:
            assert got["created_at"] == wanted["at"]
        assert (got["turn"] is None) == (wanted.get("conversation") is None)
        if got["conversation"] is not None:  # after the conversation's turns, forgotten too
            taken = [m["turn"] for m in [*self.live[c].values(),
                                         *(m for m, _ in self.trashed[c].values())]
                     if m["conversation"] == got["conversation"]]
            assert got["turn"] > max(taken, default=-1), (got["turn"], taken)
        holders = self.holders(c, memory.key)
        newest = max((last_said(self.live[c][i]) for i in holders), default=None)
        if wanted.get("at") is not None and newest is not None and got["created_at"] < newest:
            # said before the value the key holds: that value's history, never its successor
            self.trashed[c][memory.id] = [got, None]
            return
        for old in holders:
            self.retire(c, old)
        self.live[c][memory.id] = got

    # -- rules: writes ------------------------------------------------------------------

    @rule(c=st.sampled_from(CHARACTERS), it=items)
    def remember(self, c: str, it: dict[str, Any]) -> None:
        fields = {k: v for k, v in it.items() if k != "text"}
        memory = self.engine.remember(c, it["text"], **fields)
        self.stored(c, memory, it)

    @rule(c=st.sampled_from(CHARACTERS), batch=st.lists(items, min_size=1, max_size=4))
    def remember_many(self, c: str, batch: list[dict[str, Any]]) -> None:
        memories = self.engine.remember_many(c, batch)
        assert len(memories) == len(batch)
        for memory, it in zip(memories, batch, strict=True):
            self.stored(c, memory, it)

    @precondition(lambda self: any(self.live.values()))
    @rule(c=st.sampled_from(CHARACTERS), n=indexes, text=st.none() | texts,
          kind=st.none() | st.sampled_from(KINDS), importance=st.none() | importances,
          key=st.sampled_from(("unset", None, "fact:job", "fact:pet")), meta=metas,
          context=st.sampled_from(("unset", None, "", "rainy day", "tea time")))
    def update(self, c: str, n: int, text: str | None, kind: str | None,
               importance: float | None, key: Any, meta: dict | None, context: Any) -> None:
        if not self.live[c]:
            return
        memory_id = self.pick(c, n)
        fields: dict[str, Any] = {"text": text, "kind": kind, "importance": importance,
                                  "meta": meta}
        fields = {k: v for k, v in fields.items() if v is not None}
        if key != "unset":
            fields["key"] = key
        if context != "unset":
            fields["context"] = context
        before = set(self.engine.stores[c].trash)
        old = dict(self.live[c][memory_id])
        new = self.engine.update(c, memory_id, **fields)
        assert new.id == memory_id
        want = dict(old)
        if text is not None:
            want["text"] = text
        if kind is not None:
            want["kind"] = kind
            want["type"] = new.type
        if importance is not None:
            want["importance"] = importance
        if meta is not None:
            want["meta"] = dict(meta)
        if "key" in fields:
            want["key"] = key
        if "context" in fields:
            want["context"] = context if context and context.strip() else None
        assert said(new) == want
        copies = set(self.engine.stores[c].trash) - before - set(self.live[c])
        if (want["text"], want["context"]) != (old["text"], old["context"]):
            assert len(copies) == 1, "an edit keeps the version it replaced"
            self.trashed[c][copies.pop()] = [old, None]
        else:
            assert not copies, "an edit of the words only copies the version before"
        if want["key"] != old["key"]:
            for other in self.holders(c, want["key"], besides=memory_id):
                self.retire(c, other)
        self.live[c][memory_id] = want

    @precondition(lambda self: any(self.live.values()))
    @rule(c=st.sampled_from(CHARACTERS), n=indexes)
    def forget(self, c: str, n: int) -> None:
        if not self.live[c]:
            return
        memory_id = self.pick(c, n)
        entry = self.engine.forget(c, memory_id)
        assert said(entry.memory) == self.live[c][memory_id]
        self.retire(c, memory_id)

    @precondition(lambda self: any(self.trashed.values()))
    @rule(c=st.sampled_from(CHARACTERS), n=indexes)
    def restore(self, c: str, n: int) -> None:
        if not self.trashed[c]:
            return
        memory_id = self.pick_trashed(c, n)
        was = self.trashed[c][memory_id][0]
        live_before = set(self.live[c])
        back = self.engine.restore(c, memory_id)
        assert said(back) == was, "a restore brings back exactly what was forgotten"
        del self.trashed[c][memory_id]
        for other in self.holders(c, back.key):
            self.retire(c, other)
        self.live[c][memory_id] = was
        # a restore may also retire the version that replaced it (or an earlier one):
        # those go to the trash, never anywhere else
        store = self.engine.stores[c]
        for other in live_before - set(store.records):
            assert other in store.trash, f"{other} vanished on a restore"
            if other in self.live[c]:
                self.retire(c, other)

    @precondition(lambda self: any(self.live.values()))
    @rule(c=st.sampled_from(CHARACTERS), n=indexes)
    def pin(self, c: str, n: int) -> None:
        if not self.live[c]:
            return
        memory_id = self.pick(c, n)
        pinned = Governor(self.engine).promote(c, memory_id, pin=True)
        want = dict(self.live[c][memory_id])
        want["meta"] = {k: v for k, v in want["meta"].items() if k != "cold"} | {
            "tier": "hot", "pinned": True}
        assert said(pinned) == want
        self.live[c][memory_id] = want

    @rule(c=st.sampled_from(CHARACTERS), n=indexes, some=st.booleans())
    def purge(self, c: str, n: int, some: bool) -> None:
        if c not in self.engine.characters():
            return
        self.check()  # every trashed_at known
        cutoff = None
        if some and self.trashed[c]:
            cutoff = self.trashed[c][self.pick_trashed(c, n)][1]
        doomed = sorted(i for i, (_, at) in self.trashed[c].items()
                        if cutoff is None or at < cutoff)
        gone = self.engine.purge_trash(c, trashed_before=cutoff)
        assert sorted(gone) == doomed
        for memory_id in gone:
            del self.trashed[c][memory_id]
        self.purged.update(gone)

    @rule(c=st.sampled_from(CHARACTERS), name=st.sampled_from(NAMES))
    def name(self, c: str, name: str) -> None:
        self.add_names({c: name})

    # -- rules: reads -------------------------------------------------------------------

    @rule(c=st.sampled_from(CHARACTERS), query=texts,
          mode=st.sampled_from(("hybrid", "vector", "fulltext")),
          kinds=st.none() | st.lists(st.sampled_from(KINDS), min_size=1, max_size=2))
    def recall(self, c: str, query: str, mode: str, kinds: list[str] | None) -> None:
        if c not in self.engine.characters():
            assert self.engine.recall(c, query) == []  # an unknown one holds nothing
            return
        hits = self.engine.recall(c, query, mode=mode, k=50, kinds=kinds, min_relevance=0)
        for hit in hits:
            assert hit.memory.character_id == c
            assert said(hit.memory) == self.live[c][hit.memory.id]
            assert kinds is None or hit.memory.kind in kinds

    # -- rules: round trips -------------------------------------------------------------

    @rule()
    def snapshot_into_fresh_engine(self) -> None:
        before = self.dump()
        other = MemoryEngine(self.embedder, clock=self.clock)
        for c in self.engine.characters():
            index, records = self.engine.snapshot(c)
            other.load_snapshot(c, index, records)
        self.switch_to(other)
        assert self.dump() == before

    def switch_to(self, engine: MemoryEngine) -> None:
        self.engine = engine

    @rule(with_vectors=st.booleans())
    def export_into_fresh_engine(self, with_vectors: bool) -> None:
        data = exchange.export_data(self.engine, names=self.names(),
                                    with_vectors=with_vectors)
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        before = self.dump()
        other = MemoryEngine(self.embedder, clock=self.clock)
        report = exchange.import_data(other, json.loads(text))
        assert report["names"] == {c["id"]: c["name"] for c in data["characters"]}
        assert report["superseded"] == 0 and report["skipped"] == 0
        again = exchange.export_data(other, names=report["names"], with_vectors=with_vectors)
        assert json.dumps(again, ensure_ascii=False, allow_nan=False) == text
        self.switch_to(other)
        if with_vectors:
            assert self.dump() == before

    @rule()
    def backup(self) -> None:
        self.saved = json.dumps(exchange.export_data(self.engine, names=self.names(),
                                                     with_vectors=True))

    @precondition(lambda self: getattr(self, "saved", None) is not None)
    @rule()
    def import_backup(self) -> None:
        """An older backup imported over the present: what is held stays (a purged memory
        comes back as the backup had it); a key the backup holds live keeps one live
        memory, the others become history in the trash."""
        data = json.loads(self.saved)
        self.check()
        report = self.import_into_self(data)
        assert report.get("updated", 0) == 0  # nothing here is older than the backup
        in_file = {r["id"]: (c["id"], said(Memory.from_dict(r)), r.get("trashed_at"))
                   for c in data["characters"] for r in [*c["memories"], *c["trash"]]}
        file_keys = {(c["id"], r["key"]) for c in data["characters"] for r in c["memories"]}
        for c in CHARACTERS:
            if c not in self.engine.characters():
                continue
            store = self.engine.stores[c]
            live = {i: said(m) for i, m in store.records.items()}
            trash = {i: said(e.memory) for i, e in store.trash.items()}
            for memory_id, was in list(self.live[c].items()):
                now = live.get(memory_id, trash.get(memory_id))
                assert now == was, f"{memory_id} lost or changed by an import"
                if memory_id not in live:
                    assert (c, was["key"]) in file_keys, "an import never forgets"
                    self.retire(c, memory_id)
            for memory_id, (was, _) in self.trashed[c].items():
                assert trash.get(memory_id) == was, f"{memory_id} lost by an import"
            for memory_id in set(live) | set(trash):
                if memory_id in self.live[c] or memory_id in self.trashed[c]:
                    continue
                owner, was, trashed_at = in_file[memory_id]
                assert owner == c and memory_id in self.purged
                assert (live.get(memory_id) or trash.get(memory_id)) == was
                self.purged.discard(memory_id)
                if memory_id in live:
                    self.live[c][memory_id] = was
                else:
                    self.trashed[c][memory_id] = [was, None]
            # settling a key may retire a memory the backup brought back
            for memory_id in list(self.live[c]):
                if memory_id not in live:
                    self.retire(c, memory_id)

    def import_into_self(self, data: Any) -> dict[str, Any]:
        report = exchange.import_data(self.engine, data)
        self.add_names(report["names"])
        return report

    @rule()
    def import_own_export(self) -> None:
        """The engine's own export imported again changes nothing."""
        before = self.dump()
        report = self.import_into_self(json.loads(before))
        assert report["imported"] == 0 and report["superseded"] == 0
        assert self.dump() == before

    # -- rules: another device (a copy edited apart, then imported back) --------------

    @rule(with_vectors=st.booleans())
    def fork(self, with_vectors: bool) -> None:
        data = exchange.export_data(self.engine, names=self.names(),
                                    with_vectors=with_vectors)
        self.device = MemoryEngine(self.embedder, clock=self.clock)
        exchange.import_data(self.device, json.loads(json.dumps(data)))

    @precondition(lambda self: getattr(self, "device", None) is not None)
    @rule(c=st.sampled_from(CHARACTERS), n=indexes, text=texts,
          op=st.sampled_from(("text", "importance", "forget", "restore", "remember",
                              "key", "edit+forget", "purge")))
    def edit_on_device(self, c: str, n: int, text: str, op: str) -> None:
        device = self.device
        if c not in device.characters():
            return
        live = sorted(m.id for m in device.memories(c))
        trash = sorted(e.memory.id for e in device.trash(c))
        if op == "remember":
            device.remember(c, text, key="fact:job" if n % 2 else None)
        elif op == "restore" and trash:
            device.restore(c, trash[n % len(trash)])
        elif op == "purge":
            device.purge_trash(c)
        elif live:
            memory_id = live[n % len(live)]
            if op in ("text", "edit+forget"):
                device.update(c, memory_id, text=text + " (device)")
            elif op == "importance":
                device.update(c, memory_id, importance=0.75, meta={"device": True})
            elif op == "key":
                device.update(c, memory_id, key="fact:pet")
            if op in ("forget", "edit+forget"):
                device.forget(c, memory_id)

    @precondition(lambda self: getattr(self, "device", None) is not None)
    @rule(with_vectors=st.booleans())
    def import_from_device(self, with_vectors: bool) -> None:
        """The device's export imported here: nothing held here is lost (a version the
        file replaces stays as history in the trash), the file's later versions win, an
        import never forgets a live memory (unless the file holds its key live)."""
        self.check()
        data = json.loads(json.dumps(exchange.export_data(
            self.device, names=dict(self.display), with_vectors=with_vectors)))
        before = {c: self.held(c) for c in CHARACTERS}
        self.import_into_self(data)
        for section in data["characters"]:
            c = section["id"]
            after = self.held(c)
            was = before.get(c, {})
            keys = {r["key"] for r in section["memories"]}
            copies = [m for i, (m, _, _) in after.items() if i not in was]
            for memory_id, (version, state, _) in was.items():
                if memory_id in after and after[memory_id][0] == version:
                    now = after[memory_id][1]
                    assert (state, now) != ("live", "trash") or version["key"] in keys, \
                        f"an import forgot {memory_id}"
                elif not words(version) == words(after.get(memory_id, ({}, 0, 0))[0]):
                    # (a change of importance, kind, key or meta makes no copy, as an edit)
                    assert version in copies, f"{memory_id}'s version was lost"
            for record in [*section["memories"], *section["trash"]]:
                held = self.engine.get(c, record["id"]) if record["id"] in self.live_ids(c) \
                    else None
                if record["id"] not in was:
                    assert record["id"] in after, "a memory of the file was not imported"
                elif held is not None and record["updated_at"] > was[record["id"]][2]:
                    wanted = said(Memory.from_dict(record))
                    assert said(held) == wanted or record in section["trash"] \
                        or wanted["key"] != said(held)["key"], "the later version lost"
            self.adopt(c, after)

    def live_ids(self, c: str) -> set[str]:
        return set(self.engine.stores[c].records) if c in self.engine.stores else set()

    def held(self, c: str) -> dict[str, tuple[dict[str, Any], str, float]]:
        """id -> (what it says, live or trash, updated_at) of what ``c`` holds now."""
        store = self.engine.stores.get(c)
        if store is None:
            return {}
        out = {i: (said(m), "live", m.updated_at) for i, m in store.records.items()}
        out |= {i: (said(e.memory), "trash", e.memory.updated_at)
                for i, e in store.trash.items()}
        return out

    def adopt(self, c: str, after: dict[str, tuple[dict[str, Any], str, float]]) -> None:
        """The model takes the checked state of ``c`` (keeping known trash times)."""
        times = {i: at for i, (_, at) in self.trashed[c].items()}
        self.live[c] = {i: m for i, (m, state, _) in after.items() if state == "live"}
        self.trashed[c] = {i: [m, times.get(i)] for i, (m, state, _) in after.items()
                           if state == "trash"}
        self.purged -= set(after)

    # -- rules: refused calls -----------------------------------------------------------

    @rule(c=st.sampled_from(CHARACTERS), n=indexes, m=indexes)
    def refused(self, c: str, n: int, m: int) -> None:
        memory = self.pick(c, n) if self.live[c] else None
        others = sorted(i for d in CHARACTERS if d != c
                        for i in [*self.live[d], *self.trashed[d]])
        other = others[m % len(others)] if others else None
        trashed = self.pick_trashed(c, m) if self.trashed[c] else None
        calls = _bad_calls(self.engine, c, memory, other, trashed)
        named, call = calls[(n * 7 + m) % len(calls)]
        before = self.dump()
        with pytest.raises(OmoideError) as refused:
            call()
        message = str(refused.value).lower()
        if c not in self.engine.characters():
            named += "|no character"
        assert any(n.lower() in message for n in named.split("|")), (named, message)
        assert self.dump() == before, f"a refused call ({refused.value}) changed the state"

    @precondition(lambda self: any(self.live.values()) or any(self.trashed.values()))
    @rule(c=st.sampled_from(CHARACTERS), n=indexes,
          damage=st.sampled_from(("other character", "flipped byte", "records of another")))
    def refused_snapshot(self, c: str, n: int, damage: str) -> None:
        """A snapshot loaded under another character's name while its memories are here,
        or a damaged one, is refused and changes nothing."""
        if not (self.live[c] or self.trashed[c]):
            return
        index, records = self.engine.snapshot(c)
        target = next(d for d in CHARACTERS if d != c)
        if damage == "flipped byte":
            target = c
            spot = 8 + n % (len(index) - 8)
            index = index[:spot] + bytes([index[spot] ^ 0x10]) + index[spot + 1:]
        elif damage == "records of another":
            target = c
            records = records.replace(sorted(self.live[c] or self.trashed[c])[0], "01OTHER")
        before = self.dump()
        with pytest.raises(OmoideError, match="snapshot|belongs to another"):
            self.engine.load_snapshot(target, index, records)
        assert self.dump() == before

    @precondition(lambda self: any(self.live.values()))
    @rule(c=st.sampled_from(CHARACTERS), n=indexes,
          damage=st.sampled_from(("importance", "owner", "kind", "vector", "twice")))
    def refused_import(self, c: str, n: int, damage: str) -> None:
        """A file with one bad record changes nothing, whatever else it holds."""
        if not self.live[c]:
            return
        data = exchange.export_data(self.engine, names=self.names(), with_vectors=True)
        memory_id = self.pick(c, n)
        section = next(s for s in data["characters"] if s["id"] == c)
        record = next(r for r in section["memories"] if r["id"] == memory_id)
        fresh = {**record, "id": "01FRESH" + memory_id[7:], "text": "brand new words"}
        section["memories"].append(fresh)
        section["vectors"][fresh["id"]] = section["vectors"][memory_id]
        if damage == "importance":
            record["importance"] = 3
        elif damage == "kind":
            fresh["kind"] = "gossip"
        elif damage == "vector":
            section["vectors"][fresh["id"]] = [0.0] * 3
        elif damage == "twice":
            section["memories"].append(dict(fresh))
        else:  # the record filed under another character: a leak if taken
            thief = next(d for d in CHARACTERS if d != c)
            data["characters"].append({"id": thief, "name": thief, "stamp": section["stamp"],
                                       "memories": [dict(record, character_id=thief)],
                                       "trash": []})
            data["characters"].sort(key=lambda s: s["id"])
        before = self.dump()
        with pytest.raises(OmoideError, match="not valid"):
            exchange.import_data(self.engine, json.loads(json.dumps(data)))
        assert self.dump() == before

    # -- the invariants -----------------------------------------------------------------

    @invariant()
    def check(self) -> None:
        engine = self.engine
        held = set(engine.characters())
        seen: dict[str, str] = {}
        for c in CHARACTERS:
            if c not in held:
                assert not self.live[c] and not self.trashed[c], f"{c} was lost"
                continue
            memories = engine.memories(c)
            trash = engine.trash(c)
            live = {m.id: said(m) for m in memories}
            assert live == self.live[c]
            assert {e.memory.id for e in trash} == set(self.trashed[c])
            for entry in trash:
                model = self.trashed[c][entry.memory.id]
                assert said(entry.memory) == model[0]
                if model[1] is None:
                    model[1] = entry.trashed_at
                assert entry.trashed_at == model[1], "trashed_at changed"
            for memory_id in [*live, *(e.memory.id for e in trash)]:
                assert seen.setdefault(memory_id, c) == c, f"{memory_id} held by two"
                assert memory_id not in self.purged
        for c in held - set(CHARACTERS):
            assert not engine.memories(c) and not engine.trash(c)

    def teardown(self) -> None:
        memory_module.secrets = self.real_secrets


class SQLiteVerbsMachine(VerbsMachine):
    """The same rules on a SQLite workspace, whose file must hold it all: reopening it
    gives back the same export, and a fresh workspace imports it whole."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="omoide-stateful-"))
        self.files = 0
        self.workspaces: list[Any] = []
        super().__init__()

    def fresh_engine(self) -> MemoryEngine:
        return self.open_new().engine

    def open_new(self) -> Any:
        self.files += 1
        return self.open(self.folder / f"ws{self.files}.db")

    def open(self, path: Path) -> Any:
        ws = open_workspace(path, embedder=self.embedder)
        ws.engine.clock = self.clock
        self.ws = ws
        self.workspaces.append(ws)
        return ws

    def names(self) -> dict[str, str]:
        return self.ws.backend.character_names()

    def add_names(self, names: dict[str, str]) -> None:
        self.ws.backend.add_character_names(names)

    def import_into_self(self, data: Any) -> dict[str, Any]:
        engine = self.engine
        report = engine.run_fresh(lambda: exchange.import_data(engine, data))
        self.add_names(report["names"])
        return report

    @rule()
    def another_process(self) -> None:
        """A second process opening the same file sees exactly this one's state."""
        before = self.dump()
        ws = open_workspace(self.ws.path, embedder=self.embedder)
        try:
            ws.engine.clock = self.clock
            data = exchange.export_data(ws.engine, names=ws.backend.character_names(),
                                        with_vectors=True)
            assert json.dumps(data, ensure_ascii=False, sort_keys=True) == before
        finally:
            ws.close()
        assert self.dump() == before

    @rule(c=st.sampled_from(CHARACTERS), n=indexes, text=texts,
          op=st.sampled_from(("remember", "forget", "update", "restore", "purge")))
    def another_process_writes(self, c: str, n: int, text: str, op: str) -> None:
        """A second process on the same file changes a memory: this one's next verb
        sees the change (the model follows it)."""
        ws = open_workspace(self.ws.path, embedder=self.embedder)
        try:
            ws.engine.clock = self.clock
            other = ws.engine
            if op == "remember":
                wanted = {"text": text, "key": "fact:job" if n % 3 == 0 else None,
                          "conversation": "chat-1" if n % 2 else None}
                memory = other.remember(c, text, key=wanted["key"],
                                        conversation=wanted["conversation"])
                self.stored(c, memory, wanted)
            elif op == "restore" and self.trashed[c]:
                # only a plainly forgotten one: what else a restore retires is checked above
                trash = self.engine.stores[c].trash
                plain = sorted(i for i, (m, _) in self.trashed[c].items()
                               if m["key"] is None and not trash[i].memory.meta)
                if plain:
                    memory_id = plain[n % len(plain)]
                    other.restore(c, memory_id)
                    self.live[c][memory_id] = self.trashed[c].pop(memory_id)[0]
            elif op == "purge" and c in other.characters():
                self.check()
                gone = other.purge_trash(c)
                assert sorted(gone) == sorted(self.trashed[c])
                self.trashed[c].clear()
                self.purged.update(gone)
            elif self.live[c]:
                memory_id = self.pick(c, n)
                if op == "forget":
                    other.forget(c, memory_id)
                    self.retire(c, memory_id)
                elif op == "update":
                    other.update(c, memory_id, importance=0.125)
                    self.live[c][memory_id]["importance"] = 0.125
        finally:
            ws.close()

    @rule()
    def reopen(self) -> None:
        before = self.dump()
        path = self.ws.path
        self.ws.close()
        self.workspaces.remove(self.ws)
        self.engine = self.open(path).engine
        assert self.dump() == before

    @rule(with_vectors=st.booleans())
    def export_into_fresh_engine(self, with_vectors: bool) -> None:
        data = exchange.export_data(self.engine, names=self.names(),
                                    with_vectors=with_vectors)
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        before = self.dump()
        ws = self.open_new()
        report = ws.engine.run_fresh(lambda: exchange.import_data(ws.engine, json.loads(text)))
        ws.backend.add_character_names(report["names"])
        again = exchange.export_data(ws.engine, names=self.names(), with_vectors=with_vectors)
        assert json.dumps(again, ensure_ascii=False, allow_nan=False) == text
        self.engine = ws.engine
        if with_vectors:
            assert self.dump() == before

    @rule()
    def snapshot_into_fresh_engine(self) -> None:
        """A snapshot of the workspace's engine loads whole into a plain one (the
        workspace itself goes on)."""
        data = exchange.export_data(self.engine, names=self.names(), with_vectors=True)
        other = MemoryEngine(self.embedder, clock=self.clock)
        for c in self.engine.characters():
            index, records = self.engine.snapshot(c)
            other.load_snapshot(c, index, records)
        assert exchange.export_data(other, names=self.names(), with_vectors=True) == data

    def teardown(self) -> None:
        for ws in self.workspaces:
            ws.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        super().teardown()


# sized for the normal suite (~10 s); OMOIDE_STATEFUL_EXAMPLES=500 (random seeds, and
# OMOIDE_STATEFUL_STEPS=100) explores further
EXAMPLES = int(os.environ.get("OMOIDE_STATEFUL_EXAMPLES", "0"))
STEPS = int(os.environ.get("OMOIDE_STATEFUL_STEPS", "40"))
SETTINGS = settings(max_examples=EXAMPLES or 60, stateful_step_count=STEPS, deadline=None,
                    derandomize=not EXAMPLES, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])

TestVerbs = VerbsMachine.TestCase
TestVerbs.settings = SETTINGS
TestSQLiteVerbs = SQLiteVerbsMachine.TestCase
TestSQLiteVerbs.settings = SETTINGS
