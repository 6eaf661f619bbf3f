"""``Follower``: keeps an engine loaded from a SQLite file up to date with what other
processes (the CLI, an MCP server, the reference server, a second workspace) commit to it.

Installed as an engine refresher, it runs before every verb:
1. ``PRAGMA data_version`` (one cheap call): unchanged -> no other connection committed,
   nothing to do.
2. Otherwise the rows of the change feed after the last position seen
   (``SQLiteBackend.changes_since``: changed rows and tombstones, through the ``seq`` indexes)
   are applied to the stores without listeners: a row equal to what the engine holds is
   skipped, a character whose model stamp changed (re-vectorized elsewhere) is reloaded whole,
   a deleted row is dropped.
This process's own commits advance the position directly (``SQLiteBackend.on_commit``) when
nothing foreign came in between, so it never reads its own writes back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from omoide.backends.base import memory_of
from omoide.backends.listener import checked_records, load_engine
from omoide.engine.neighbourhood import note_turn

if TYPE_CHECKING:
    from omoide.backends.sqlite import SQLiteBackend
    from omoide.engine.core import MemoryEngine
    from omoide.engine.memory import Memory
    from omoide.engine.store import CharacterStore


class Follower:
    def __init__(self, engine: MemoryEngine, backend: SQLiteBackend) -> None:
        """Fill ``engine`` (empty) from ``backend`` and follow the file from there on."""
        self.engine, self.backend = engine, backend
        # data_version first: a commit landing after it is seen by the first refresh
        self.version = backend.data_version()
        records, self.seen = backend.records_at()
        # memories per character; named characters without memories get an empty store
        self.loaded = load_engine(engine, records, backend.character_names())
        self.applied = 0  # rows taken over from other processes (tests, diagnostics)
        self.skipped = 0  # rows that could not be applied (e.g. a vector of another size)

    def committed(self, before: int, after: int) -> None:
        """``SQLiteBackend.on_commit``: our own write moved the feed from ``before`` to
        ``after``; when we had seen everything up to ``before``, we have seen it all."""
        if before == self.seen:
            self.seen = after

    @contextmanager
    def verb(self) -> Iterator[None]:
        """The guard of the outermost engine verb (``MemoryEngine.verb_guards``): its writes
        in one transaction of the file, based on the state this follower caught up to. A
        verb that fails after some writes is rolled back; the characters it wrote are then
        read again, so the engine holds what the file holds."""
        scope = None
        try:
            with self.backend.verb(self.version) as scope:
                yield
        except BaseException:
            if scope is not None and scope.rolled_back:
                self.reload(sorted(scope.touched))
            raise

    def reload(self, characters: list[str]) -> None:
        for character in characters:
            self.engine.stores.pop(character, None)
            load_engine(self.engine, self.backend.all_records(character))

    def __call__(self) -> None:
        version = self.backend.data_version()  # before reading: a later commit shows next time
        if version == self.version:
            return
        records, gone, high = self.backend.changes_since(self.seen)
        self.apply(records, gone)
        self.seen, self.version = max(self.seen, high), version

    def apply(self, records: list[dict[str, Any]], gone: list[tuple[str, str]]) -> None:
        engine = self.engine
        records = checked_records(engine, records)  # the record schema; bad rows quarantined
        for memory_id, character in gone:
            store = engine.stores.get(character)
            if store is not None:
                store.drop(memory_id)
        restamped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            character = record["character_id"]
            store = engine.stores.get(character)
            if store is None or (record["model"] and record["model"] != store.stamp):
                restamped[character].append(record)
                continue
            memory, trashed_at = memory_of(record), record["trashed_at"]
            held = self._held(store, memory.id)
            if held is not None and held == (memory, trashed_at):
                continue  # e.g. our own write, seen again after a foreign one
            # a vector changes only with its text or model: otherwise keep the one held
            same_vector = held is not None and (held[0].text, held[0].model) == (
                memory.text, memory.model)
            try:
                store.sync(memory, None if same_vector else record["vector"], trashed_at)
                note_turn(store, memory)
                self.applied += 1
            except (KeyError, TypeError, ValueError):
                self.skipped += 1
        for character in sorted(restamped):  # new here, or re-vectorized elsewhere
            engine.stores.pop(character, None)
            load_engine(engine, self.backend.all_records(character))
            self.applied += len(restamped[character])

    @staticmethod
    def _held(store: CharacterStore, memory_id: str) -> tuple[Memory, float | None] | None:
        """(record, trashed_at) the engine holds for ``memory_id``, or None."""
        memory = store.records.get(memory_id)
        if memory is not None:
            return memory, None
        entry = store.trash.get(memory_id)
        return (entry.memory, entry.trashed_at) if entry is not None else None
