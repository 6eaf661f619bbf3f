"""The engine on a ``MemoryBackend``: ``BackendListener`` writes every engine change to the
backend (write-ahead: a backend that raises vetoes the change, the engine stays unchanged),
and ``load_engine`` rebuilds the engine's stores from the backend's records at start.

Another process may have changed the same rows since this engine last looked, so a change
of an existing memory writes only the fields that differ from the record it replaces, and
only while the row is live (a row another process trashed or deleted is a MEMORY_CONFLICT,
never resurrected); a recall counts with an atomic increment (``SQLiteBackend.touch``)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from omoide.backends.base import IMMUTABLE_FIELDS, memory_of, record_of
from omoide.embeddings.registry import parse_stamp
from omoide.engine import validate
from omoide.engine.listener import Change
from omoide.engine.memory import TrashEntry
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.backends.sqlite import SQLiteBackend
    from omoide.engine.core import MemoryEngine

# What a recall changes (``engine/recall.py``): counted, not overwritten.
TOUCH_FIELDS = frozenset({"recall_count", "last_recalled_at"})


class BackendListener:
    def __init__(self, backend: SQLiteBackend) -> None:
        self.backend = backend

    def on_change(self, change: Change) -> None:
        backend = self.backend
        scope = backend.current_verb
        if scope is not None:  # a rolled back verb: these characters are read again
            scope.touched.add(change.character_id)
        if change.op == "put":
            self.put(change)
        elif change.op == "trash":
            self.require(backend.update(change.memory_id, {"trashed_at": change.at}),
                         change.memory_id)
        elif change.op == "restore":
            self.require(backend.update(change.memory_id, {"trashed_at": None}),
                         change.memory_id)
        elif change.op == "purge":
            backend.delete(change.memory_id)
        elif change.op == "swap":
            for memory_id, vector in change.vectors.items():
                backend.update(memory_id, {"vector": vector, "model": change.stamp})

    @staticmethod
    def require(written: dict[str, Any] | None, memory_id: str | None) -> None:
        if written is None:  # another process deleted it for good
            raise OmoideError.of("MEMORY_CONFLICT", memory_id=memory_id, what="deleted")

    def put(self, change: Change) -> None:
        assert change.memory is not None and change.memory_id is not None
        previous, memory_id = change.previous, change.memory_id
        record = record_of(change.memory, change.vector)
        if previous is None or previous is change.memory:  # new (or changed in place)
            if previous is None:  # a new memory always comes with its vector
                try:
                    self.backend.create(record)
                    return
                except OmoideError as err:
                    if err.code != "BACKEND_CONFLICT":
                        raise
            fields = {k: v for k, v in record.items() if k not in IMMUTABLE_FIELDS
                      and k != "trashed_at" and (k != "vector" or v is not None)}
            self.backend.update(memory_id, fields, only_live=True)
            return
        old = previous.to_dict()
        fields = {k: v for k, v in record.items()
                  if k not in IMMUTABLE_FIELDS and k in old and old[k] != v}
        if change.vector is not None:
            fields["vector"] = change.vector
        if not fields:
            return
        added = change.memory.recall_count - previous.recall_count
        if fields.keys() <= TOUCH_FIELDS and added > 0:
            # a recall of a memory another process forgot meanwhile: not counted, not revived
            self.backend.touch(memory_id, change.memory.last_recalled_at or 0.0, added)
            return
        self.backend.update(memory_id, fields, only_live=True)


def checked_records(engine: MemoryEngine,
                    records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored records that pass the record schema (with a vector); every other one is
    put in ``engine.quarantine`` (kept on disk untouched, reported by ``audit``)."""
    good = []
    for raw in records:
        try:
            good.append(validate.record(raw, max_text_length=engine.max_text_length,
                                        require_vector=True, stored=True))
            if engine.quarantine:
                engine.quarantine.pop(raw["id"], None)  # repaired since (another process)
        except OmoideError as e:
            quarantine(engine, raw, e)
    return good


def quarantine(engine: MemoryEngine, raw: Any, error: OmoideError) -> None:
    row = raw if isinstance(raw, dict) else {}
    memory_id = row.get("id") if isinstance(row.get("id"), str) else repr(row.get("id"))
    character = row.get("character_id")
    engine.quarantine[memory_id] = {
        "id": memory_id, "character_id": character if isinstance(character, str) else None,
        "field": error.fields.get("field"), "reason": str(error),
    }


def mixed_stamp(stamp: str, rows: list[dict[str, Any]]) -> str:
    """``stamp``, or, when some rows hold another model's vectors of the same length (a
    backup server or another device wrote them after a switch), a stamp no model has: the
    character is then blocked as another model's (MODEL_MISMATCH: no recall compares the
    two models' vectors) until ``revectorize`` embeds every row again with one model. They
    were loaded into one index and ranked together."""
    others = sorted({r["model"] for r in rows} - {stamp})
    return stamp if not others else "mixed:" + "+".join([stamp, *others])


def load_engine(engine: MemoryEngine, records: list[dict[str, Any]],
                characters: Iterable[str] = ()) -> dict[str, int]:
    """Fill ``engine`` with stored records (every one with its vector); no listener fires.
    A record that breaks the schema, or whose vector does not fit its character's index (the
    dimension of the selected model's stamp when the character has rows of it, else of its
    most common stamp), is quarantined, never loaded.
    ``characters``: ids known without memories (e.g. named by an import).
    Answers the number of memories loaded per character."""
    by_character: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in checked_records(engine, records):
        by_character[record["character_id"]].append(record)
    loaded = {}
    for character, rows in sorted(by_character.items()):
        stamps = Counter(r["model"] for r in rows)
        stamp = (engine.embedder.stamp if engine.embedder.stamp in stamps
                 else stamps.most_common(1)[0][0])
        model_id, _, dimension = parse_stamp(stamp)
        fitting = []
        for r in rows:
            if len(r["vector"]) == dimension:
                fitting.append(r)
            else:
                quarantine(engine, r, validate.invalid_record(
                    "vector", r["id"],
                    f"vector: {len(r['vector'])} numbers in an index of {dimension}"))
        store = engine.new_store(character, stamp=mixed_stamp(stamp, fitting),
                                 model_id=model_id, dimension=dimension)
        live = [(memory_of(r), r["vector"]) for r in fitting if r["trashed_at"] is None]
        trashed = [TrashEntry(memory_of(r), r["vector"], r["trashed_at"])
                   for r in fitting if r["trashed_at"] is not None]
        store.load(live, trashed)
        engine.stores[character] = store
        loaded[character] = len(fitting)
    # characters without a loadable row: named ones (an import) and those whose every row
    # is quarantined get an empty store, so they are listed, audited and recalled (nothing)
    named = [q["character_id"] for q in engine.quarantine.values()] + list(characters)
    for character in named:
        if character is None or character in engine.stores:
            continue
        try:
            validate.character_id(character)
        except OmoideError:
            continue
        engine.writable_store(character)  # empty: listed, audited, never written by this
        loaded[character] = 0
    return loaded
