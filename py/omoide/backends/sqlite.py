"""``SQLiteBackend``: memories in one SQLite file (standard library ``sqlite3``, WAL mode).

Layout (schema version 3): ``memories(id PK, character_id, kind, trashed_at, updated_at,
record JSON, vector BLOB)``; the vector is little-endian float32, the record JSON holds every
other field. ``characters(id PK, name, deleted_at)``: display names, and when the user
deleted the character (schema 3; a schema-1 or 2 file gets the column in place when
opened). WAL lets a reader (the reference server, a CLI ``recall``) run while another
process writes; every call is one transaction, so a crash never leaves half a write.

The change feed (schema 2; a schema-1 file gets it in place when opened): triggers on
``memories`` append ``changes(seq, id, character_id)`` for every inserted, changed or deleted
row and drop that id's earlier entry, whoever writes (this code, the CLI's re-vectorization,
an older tool). A process that keeps an engine in memory reads only ``seq > last seen``
(``changes_since``) after SQLite's ``data_version`` says another connection committed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omoide.backends import ranking
from omoide.backends.base import (
    DEFAULT_PAGE,
    IMMUTABLE_FIELDS,
    KEEP,
    Keep,
    check_fields,
    check_owner,
    check_query_vector,
    check_record,
    page_args,
)
from omoide.engine import validate
from omoide.engine.listener import StaleState
from omoide.errors import OmoideError

SCHEMA_VERSION = 3
SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    character_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    trashed_at REAL,
    updated_at REAL NOT NULL,
    record TEXT NOT NULL,
    vector BLOB
);
CREATE INDEX IF NOT EXISTS memories_by_character ON memories (character_id, kind);
-- pages in id order and totals per kind without a sort or a table scan (added in place:
-- files made before them get them when opened)
CREATE INDEX IF NOT EXISTS memories_page ON memories (character_id, trashed_at, id);
CREATE INDEX IF NOT EXISTS memories_totals ON memories (character_id, trashed_at, kind);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
-- display names of characters (an export carries them; a character may have no memories);
-- deleted_at: when the user deleted the character (its memories kept, restorable), schema 3
CREATE TABLE IF NOT EXISTS characters (id TEXT PRIMARY KEY, name TEXT NOT NULL,
                                       deleted_at REAL);
"""
# Schema 3 on a file made before it (``_migrate``).
DELETED_AT_COLUMN = "ALTER TABLE characters ADD COLUMN deleted_at REAL;"
# The change feed (schema 2). Triggers, not code: every writer of the file takes part.
# ``seq`` is the rowid: a new entry gets the largest + 1; the entry it supersedes is deleted
# AFTER the insert, so the largest is never deleted and ``seq`` only grows. A row that is no
# longer in ``memories`` was deleted (the entry is its tombstone). One small row per change:
# the memory's own row (vector and all) is never written twice.
CHANGE_FEED = """
CREATE TABLE IF NOT EXISTS changes (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL, character_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_by_id ON changes (id);
CREATE TRIGGER IF NOT EXISTS memories_inserted AFTER INSERT ON memories BEGIN
    INSERT INTO changes (id, character_id) VALUES (NEW.id, NEW.character_id);
    DELETE FROM changes WHERE id = NEW.id AND seq < last_insert_rowid();
END;
CREATE TRIGGER IF NOT EXISTS memories_changed AFTER UPDATE ON memories BEGIN
    INSERT INTO changes (id, character_id) VALUES (NEW.id, NEW.character_id);
    DELETE FROM changes WHERE id = NEW.id AND seq < last_insert_rowid();
    INSERT INTO changes (id, character_id) SELECT OLD.id, OLD.character_id
        WHERE OLD.id <> NEW.id;
END;
CREATE TRIGGER IF NOT EXISTS memories_deleted AFTER DELETE ON memories BEGIN
    INSERT INTO changes (id, character_id) VALUES (OLD.id, OLD.character_id);
    DELETE FROM changes WHERE id = OLD.id AND seq < last_insert_rowid();
END;
"""
COLUMNS = "id, character_id, kind, trashed_at, updated_at, record, vector"
# A recall on a live row: count + n, last_recalled_at = the later of the stored one and ours.
TOUCH = """
UPDATE memories SET record = CASE
    WHEN COALESCE(json_extract(record, '$.last_recalled_at'), 0) < :at
    THEN json_set(record, '$.recall_count',
                  COALESCE(json_extract(record, '$.recall_count'), 0) + :count,
                  '$.last_recalled_at', json(:at_json))
    ELSE json_set(record, '$.recall_count',
                  COALESCE(json_extract(record, '$.recall_count'), 0) + :count)
    END
WHERE id = :id AND trashed_at IS NULL
"""
TEXT_INDEX_CACHE = 8  # characters whose BM25 index is kept between searches


def pack(vector: list[float] | None) -> bytes | None:
    if vector is None:
        return None
    data = array("f", vector)
    if sys.byteorder != "little":
        data.byteswap()
    return data.tobytes()


def unpack(blob: bytes | None) -> list[float] | None:
    if blob is None:
        return None
    data = array("f")
    data.frombytes(blob)
    if sys.byteorder != "little":
        data.byteswap()
    return data.tolist()


def unreadable(path: Path, err: BaseException) -> OmoideError:
    """A workspace file SQLite cannot open or read, as one clear error naming it."""
    reason = getattr(err, "strerror", None) or str(err) or type(err).__name__
    return OmoideError.of("FILE_UNREADABLE", path=str(path),
                          reason=f"not a usable SQLite workspace ({reason})")


def create_private(path: Path) -> None:
    """A new database file is created 0600 (memories are private); SQLite gives its -wal and
    -shm files the mode of the database file. An existing file keeps the mode it has."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def foreign_tables(db: sqlite3.Connection, path: Path) -> None:
    """Refuse another program's SQLite file (``--db`` naming a browser's history, an app's
    store): it got Omoide's tables and WAL mode for good. Ours is empty (new), or holds
    ``meta`` or ``memories``, a ``memories`` of our columns."""
    tables = {r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    columns = {r[1] for r in db.execute("PRAGMA table_info(memories)")}
    other_memories = "memories" in tables and not set(COLUMNS.split(", ")) <= columns
    if tables and (other_memories or not tables & {"meta", "memories"}):
        raise OmoideError.of("FILE_UNREADABLE", path=str(path),
                             reason=f"not an Omoide workspace (another program's tables: "
                                    f"{', '.join(sorted(tables))[:200]}); nothing was changed")


@dataclass
class VerbScope:
    """One verb's transaction (``SQLiteBackend.verb``)."""

    base_version: int
    began: bool = False
    before: int = 0  # the change feed's position when it began
    rolled_back: bool = False
    touched: set[str] = field(default_factory=set)  # characters written (``BackendListener``)
    thread: int = field(default_factory=threading.get_ident)  # the verb's; others wait


class SQLiteBackend:
    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or f"sqlite:{self.path.name}"
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._writes = 0  # bumped by every write of this connection (search cache key)
        self._text_indexes: dict[str, tuple[tuple[int, int], ranking.TextIndex]] = {}
        # Told (seq before, seq after) of every write this connection commits, so a follower
        # of the change feed can skip its own writes (``backends/follower.py``).
        self.on_commit: Callable[[int, int], None] | None = None
        self._scope: VerbScope | None = None  # the open verb's writes (``verb``)
        self._erased = False  # a row deleted since the last commit: checkpoint after it
        # Told the ids of characters given names (``add_character_names``): the workspace
        # queues them for its backups (``ManagerMirror.named``)
        self.on_names: Callable[[list[str]], None] | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def initialize(self) -> None:
        try:
            self._open()
        except (sqlite3.DatabaseError, OSError) as err:  # not a database, a folder, no access
            raise unreadable(self.path, err) from None

    def _open(self) -> None:
        with self._lock:
            if self._db is not None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            create_private(self.path)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            try:
                foreign_tables(db, self.path)  # before anything is written to it
            except BaseException:
                db.close()
                raise
            db.execute("PRAGMA busy_timeout = 10000")
            # a purge erases: freed pages are zeroed (a default of some builds only, e.g.
            # Debian's; not python.org's), and the WAL is checkpointed after it (_erased)
            db.execute("PRAGMA secure_delete = ON")
            db.execute("PRAGMA journal_mode = WAL")
            # FULL: a commit is synced before the verb returns (NORMAL, in WAL mode, lost
            # the last commits at a power cut: a memory acknowledged, then gone)
            db.execute("PRAGMA synchronous = FULL")
            db.executescript(SCHEMA)
            version = db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
            if version is not None and int(version[0]) > SCHEMA_VERSION:
                db.close()
                raise OmoideError.of("UNSUPPORTED_SNAPSHOT", version=version[0],
                                     max=SCHEMA_VERSION)
            if version is None or int(version[0]) < SCHEMA_VERSION:
                try:
                    self._migrate(db)
                except BaseException:
                    db.close()
                    raise
            self._db = db

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        """Schema 1 or 2 -> 3 in place, in one transaction (two processes opening the file
        at once are safe: the one that finds the column added by the other tries again):
        the change feed (schema 2), the characters' ``deleted_at`` (schema 3) and the
        version. Rows already there have no change-feed entry: the engine that opens the
        file loads them all anyway."""
        for attempt in range(2):
            columns = {row[1] for row in db.execute("PRAGMA table_info(characters)")}
            alter = "" if "deleted_at" in columns else DELETED_AT_COLUMN
            try:
                db.executescript(f"BEGIN IMMEDIATE; {CHANGE_FEED} {alter} INSERT OR REPLACE "
                                 f"INTO meta VALUES ('schema', '{SCHEMA_VERSION}'); COMMIT;")
                return
            except sqlite3.OperationalError as err:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if attempt or "duplicate column" not in str(err):
                    raise
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def shutdown(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.initialize()
        assert self._db is not None
        return self._db

    # -- rows -------------------------------------------------------------------------------

    @staticmethod
    def _record(row: tuple, with_vector: bool) -> dict[str, Any]:
        """A row as a record. An unreadable row (damaged outside Omoide) comes back with what
        can be read, so the record schema names what is wrong and the loader quarantines it."""
        try:
            record = json.loads(row[5])
        except (TypeError, ValueError):
            record = None
        if not isinstance(record, dict):
            record = {"id": row[0], "character_id": row[1]}
        record["trashed_at"] = row[3]
        try:
            record["vector"] = unpack(row[6]) if with_vector else None
        except (TypeError, ValueError):
            record["vector"] = None
        return record

    @contextmanager
    def verb(self, base_version: int) -> Iterator[VerbScope]:
        """The writes of one engine verb in ONE transaction, begun at its first write and
        committed when the verb ends (rolled back when it fails): a verb of another process
        never lands between two of its writes, and a verb that fails half way writes nothing.
        ``base_version``: the ``data_version`` its state was caught up to; a commit of another
        connection since then is found at the first write (``StaleState``: the verb runs
        again on fresh state) and none can come after, as the transaction holds the file's
        write lock. Reads of other threads wait until the verb ends."""
        if self.current_verb is not None:  # nested: the outer verb's transaction
            yield self._scope
            return
        scope = self._scope = VerbScope(base_version)
        try:
            yield scope
            if scope.began:
                after = self._seq()
                self.db.execute("COMMIT")
                self._checkpoint_if_erased()
                if self.on_commit is not None and after != scope.before:
                    self.on_commit(scope.before, after)
        except sqlite3.OperationalError as err:  # the COMMIT: a full disk
            self._end(scope)
            raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(self.path),
                                 reason=str(err)) from None
        except BaseException:
            self._end(scope)
            raise
        finally:
            if scope.began:
                self._lock.release()
            self._scope = None

    @property
    def current_verb(self) -> VerbScope | None:
        """The open verb of the calling thread, if any."""
        scope = self._scope
        return scope if scope is not None and scope.thread == threading.get_ident() else None

    def _end(self, scope: VerbScope) -> None:
        if scope.began and self.db.in_transaction:
            self.db.execute("ROLLBACK")
            scope.rolled_back = True

    def _begin_scope(self, scope: VerbScope) -> None:
        """The verb's first write: its transaction begins, if its state is still the file's."""
        self._lock.acquire()  # held until the verb ends (``verb``)
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            self._lock.release()
            raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(self.path),
                                 reason=str(err)) from None
        if self.db.execute("PRAGMA data_version").fetchone()[0] != scope.base_version:
            self.db.execute("ROLLBACK")
            self._lock.release()
            raise StaleState
        scope.began, scope.before = True, self._seq()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write, one IMMEDIATE transaction: a locked or full database is a clear error
        and nothing is changed. ``on_commit`` hears the change-feed range it wrote. Inside a
        verb (``verb``) it is one write of the verb's transaction."""
        scope = self.current_verb
        if scope is not None:
            if not scope.began:
                self._begin_scope(scope)
            self._writes += 1
            try:
                yield
            except sqlite3.OperationalError as err:
                raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(self.path),
                                     reason=str(err)) from None
            return
        with self._lock:
            self._writes += 1
            db = self.db
            try:
                db.execute("BEGIN IMMEDIATE")
                before = self._seq()
                yield
                after = self._seq()
                db.execute("COMMIT")
                self._checkpoint_if_erased()
            except sqlite3.OperationalError as err:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(self.path),
                                     reason=str(err)) from None
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            if self.on_commit is not None and after != before:
                self.on_commit(before, after)

    def _checkpoint_if_erased(self) -> None:
        """After a commit that deleted rows (a purge: "forget for good"), the WAL still held
        the deleted text until a checkpoint, which a long-running server may not reach for
        a long time; copy the WAL into the file (whose freed pages ``secure_delete`` zeroes)
        and truncate it. Best effort: a reader of another process may hold it a moment."""
        if not self._erased:
            return
        self._erased = False
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            pass  # busy: the next commit's checkpoint (or SQLite's own) gets it

    def _seq(self) -> int:
        """The change feed's position: its largest ``seq`` (one b-tree seek)."""
        return self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM changes").fetchone()[0]

    def _write(self, record: dict[str, Any], *, insert: bool) -> None:
        body = {k: v for k, v in record.items() if k not in ("trashed_at", "vector")}
        values = (record["id"], record["character_id"], record["kind"], record["trashed_at"],
                  float(record["updated_at"]),
                  json.dumps(body, ensure_ascii=False, allow_nan=False),
                  pack(record["vector"]))
        verb = "INSERT" if insert else "REPLACE"
        self.db.execute(f"{verb} INTO memories ({COLUMNS}) VALUES (?,?,?,?,?,?,?)", values)

    # -- verbs ------------------------------------------------------------------------------

    def create(self, record: dict[str, Any]) -> dict[str, Any]:
        full = check_record(record)
        with self._writing():
            self._check_dimension(full)
            try:
                self._write(full, insert=True)
            except sqlite3.IntegrityError:
                raise OmoideError.of("BACKEND_CONFLICT", backend=self.name,
                                     memory_id=full["id"]) from None
            # the character exists from its first memory on, also once every memory of it
            # is purged (it was gone after a reopen, listed before it); named by its id
            # until a name comes (``add_character_names``)
            self.db.execute("INSERT OR IGNORE INTO characters (id, name) VALUES (?, ?)",
                            (full["character_id"], full["character_id"]))
        return full

    def _check_dimension(self, record: dict[str, Any], *, other_than: str | None = None) -> None:
        """A vector must fit the index of its character's rows of the same model (one row
        read, the first of the character's that matches). Rows of another model are another
        index (a re-vectorization half way, or a row the engine quarantines): compared with
        one of them, one odd row (a PATCH) refused every later memory of the character."""
        row = self.db.execute(
            "SELECT length(vector) / 4 FROM memories WHERE character_id = ? AND id IS NOT ? "
            "AND vector IS NOT NULL AND json_extract(record, '$.model') IS ? LIMIT 1",
            (record["character_id"], other_than, record.get("model"))).fetchone()
        if row is not None and row[0] != len(record["vector"]):
            raise validate.invalid_record(
                "vector", record["id"], f"vector: {len(record['vector'])} numbers, but the "
                f"index of {record['character_id']!r} has {row[0]}")

    def get(self, memory_id: str, *, with_vector: bool = False) -> dict[str, Any] | None:
        with self._lock:
            row = self.db.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?",
                                  (memory_id,)).fetchone()
        return self._record(row, with_vector) if row else None

    def update(self, memory_id: str, fields: dict[str, Any], *,
               only_live: bool = False) -> dict[str, Any] | None:
        """Change only ``fields`` of the stored row (read and written in one transaction, so
        a field another process changed meanwhile is kept). ``only_live``: the engine's
        change of a live memory; a row another process trashed or deleted is a
        MEMORY_CONFLICT and nothing is written (never a resurrection)."""
        changes = check_fields(fields)
        with self._writing():
            current = self.get(memory_id, with_vector=True)
            if current is None or (only_live and current["trashed_at"] is not None):
                if only_live:
                    raise OmoideError.of("MEMORY_CONFLICT", memory_id=memory_id,
                                         what="deleted" if current is None else "forgotten")
                return None
            check_owner(changes, current["character_id"], memory_id)
            if changes.get("id", memory_id) != memory_id:  # was dropped without a word
                raise validate.invalid_record("id", memory_id, "id: a memory's id never "
                                              "changes")
            changes = {k: v for k, v in changes.items() if k not in IMMUTABLE_FIELDS}
            if "vector" not in changes and any(
                    name in changes and changes[name] != current.get(name)
                    for name in ("text", "context")):
                # the stored vector is of the old words: recall would score the memory by them
                raise validate.invalid_record(
                    "vector", memory_id, "vector: a new text or context needs the vector of "
                    "the new words (its model's embedding), in the same change")
            merged = check_record(current | changes)
            if "vector" in changes:  # a PATCH's vector of another size broke the index
                self._check_dimension(merged, other_than=memory_id)
            self._write(merged, insert=False)
        return merged

    def touch(self, memory_id: str, at: float, count: int = 1) -> bool:
        """Count ``count`` recalls at ``at`` on a live memory with one atomic SQL increment
        (two processes recalling it both count; no stale record is written back). False,
        and nothing written, when the memory is trashed or gone."""
        # The time goes in as JSON text (json(?)): a REAL rendered by SQLite's JSON keeps
        # only 15 digits, and a later load would not equal what this engine holds.
        with self._writing():
            return self.db.execute(TOUCH, {"id": memory_id, "count": int(count),
                                           "at": float(at),
                                           "at_json": json.dumps(float(at))}).rowcount > 0

    def delete(self, memory_id: str) -> bool:
        with self._writing():
            deleted = self.db.execute("DELETE FROM memories WHERE id = ?",
                                      (memory_id,)).rowcount > 0
            self._erased = self._erased or deleted
            return deleted

    def list(self, *, character_id: str | None = None, kind: str | None = None,
             trashed: bool | None = False, limit: int = DEFAULT_PAGE, offset: int = 0,
             with_vectors: bool = False) -> dict[str, Any]:
        limit, offset = page_args(limit, offset)
        if kind is not None:
            validate.kind(kind)  # an unknown kind was an empty page, never an error
        where, args = self._where(character_id, trashed)
        with self._lock:
            totals = dict(self.db.execute(
                f"SELECT kind, COUNT(*) FROM memories {where} GROUP BY kind", args).fetchall())
            if kind is not None:
                where += (" AND" if where else "WHERE") + " kind = ?"
                args = (*args, kind)
            total = self.db.execute(f"SELECT COUNT(*) FROM memories {where}", args).fetchone()[0]
            columns = COLUMNS if with_vectors else COLUMNS.replace("vector", "NULL")
            rows = self.db.execute(
                f"SELECT {columns} FROM memories {where} ORDER BY id LIMIT ? OFFSET ?",
                (*args, limit, offset)).fetchall()
        return {"items": [self._record(r, with_vectors) for r in rows], "total": total,
                "totals_by_kind": dict(sorted(totals.items()))}

    @staticmethod
    def _where(character_id: str | None, trashed: bool | None) -> tuple[str, tuple]:
        clauses, args = [], []
        if character_id is not None:
            clauses.append("character_id = ?")
            args.append(character_id)
        if trashed is not None:
            clauses.append("trashed_at IS NOT NULL" if trashed else "trashed_at IS NULL")
        return ("WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)

    def search(self, query: str, *, character_id: str, k: int = 10,
               vector: list[float] | None = None, model: str | None = None,
               kinds: list[str] | None = None) -> list[dict[str, Any]]:
        if not isinstance(character_id, str) or not character_id:
            raise OmoideError.of("INVALID_ARGUMENT", name="character_id",
                                 reason="search needs a character")
        vector = check_query_vector(vector, model)
        if vector is None:
            return self._text_index(character_id).search(query, k, kinds)
        with self._lock:
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM memories WHERE character_id = ? AND trashed_at IS NULL",
                (character_id,)).fetchall()
        records = [r for r in _readable(self._record(row, True) for row in rows)
                   if r["model"] == model]
        if kinds:
            records = [r for r in records if r["kind"] in kinds]
        return ranking.rank_by_vector(records, vector, k)

    def _text_index(self, character_id: str) -> ranking.TextIndex:
        """The character's BM25 index, rebuilt only after a write: ours (``_writes``) or
        another connection's (SQLite's ``data_version``, e.g. the CLI writing the file the
        reference server serves)."""
        with self._lock:
            version = (self.db.execute("PRAGMA data_version").fetchone()[0], self._writes)
            cached = self._text_indexes.get(character_id)
            if cached is not None and cached[0] == version:
                return cached[1]
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM memories WHERE character_id = ? AND trashed_at IS NULL",
                (character_id,)).fetchall()
            index = ranking.TextIndex(_readable(self._record(r, False) for r in rows))
            if len(self._text_indexes) >= TEXT_INDEX_CACHE:
                self._text_indexes.pop(next(iter(self._text_indexes)))
            self._text_indexes[character_id] = (version, index)
            return index

    def health(self) -> dict[str, Any]:
        started = time.perf_counter()
        with self._lock:
            count = self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        return {"ok": True, "backend": self.name, "memories": count,
                "latency_ms": round((time.perf_counter() - started) * 1000, 3)}

    # -- bulk (used by the workspace at boot) --------------------------------------------------

    def all_records(self, character_id: str | None = None) -> list[dict[str, Any]]:
        """Every record (of one character) with its vector, in id order (the engine is
        rebuilt from this)."""
        return self.records_at(character_id)[0]

    def records_at(self, character_id: str | None = None
                   ) -> tuple[list[dict[str, Any]], int]:
        """(every record of ``all_records``, the change-feed position they are as of), read
        in one transaction."""
        where, args = self._where(character_id, None)
        with self._reading() as db:
            seq = self._seq()
            rows = db.execute(f"SELECT {COLUMNS} FROM memories {where} ORDER BY id",
                              args).fetchall()
        return [self._record(r, True) for r in rows], seq

    # -- the change feed (other processes' commits) ---------------------------------------------

    def data_version(self) -> int:
        """SQLite's ``data_version``: it changes when ANOTHER connection commits."""
        with self._lock:
            return self.db.execute("PRAGMA data_version").fetchone()[0]

    def changes_since(self, seq: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]], int]:
        """(records with vectors changed after ``seq``, (id, character) of rows deleted after
        it, the position they are as of), read in one transaction from the feed's entries
        after ``seq``: the cost follows the number of changes, not the size of the file."""
        columns = ", ".join(f"m.{c}" for c in COLUMNS.split(", "))
        with self._reading() as db:
            high = self._seq()
            rows = db.execute(
                f"SELECT {columns}, c.id, c.character_id FROM changes c "
                "LEFT JOIN memories m ON m.id = c.id WHERE c.seq > ? ORDER BY c.seq",
                (seq,)).fetchall()
        width = len(COLUMNS.split(", "))
        records = [self._record(r[:width], True) for r in rows if r[0] is not None]
        gone = [(r[width], r[width + 1]) for r in rows if r[0] is None]
        return records, gone, high

    def deleted_ids(self, character_id: str | None = None) -> set[str]:
        """The ids of the memories deleted from this file (purged): the change feed keeps
        one entry per id, which stays as the tombstone of a deleted row (the id and its
        character, never its text). ``copy_all`` erases them from a backup target."""
        where = " AND c.character_id = ?" if character_id is not None else ""
        with self._reading() as db:
            rows = db.execute("SELECT c.id FROM changes c LEFT JOIN memories m ON m.id = c.id "
                              f"WHERE m.id IS NULL{where}",
                              (character_id,) if character_id is not None else ()).fetchall()
        return {r[0] for r in rows}

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """Several reads as of one moment (a deferred transaction: a WAL read snapshot)."""
        with self._lock:
            db = self.db
            own = not db.in_transaction
            if own:
                db.execute("BEGIN")
            try:
                yield db
            finally:
                if own and db.in_transaction:
                    db.execute("COMMIT")

    # -- character names (export / import) ---------------------------------------------------

    def character_names(self) -> dict[str, str]:
        """Display names by character id (characters named by an import, with or without
        memories); a character without a row is shown by its id."""
        with self._lock:
            return dict(self.db.execute("SELECT id, name FROM characters ORDER BY id"))

    def add_character_names(self, names: dict[str, str]) -> None:
        """Record the names of characters that have none yet (one transaction): a name
        already stored is kept; a character named by its id only takes the name given."""
        with self._writing():
            self.db.executemany(
                "INSERT INTO characters (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE "
                "SET name = excluded.name WHERE characters.name = characters.id",
                sorted(names.items()))
        if self.on_names is not None:
            self.on_names(sorted(names))

    def deleted_characters(self) -> dict[str, float]:
        """When each deleted character was deleted, by id (its memories are kept: a backup
        server holds the app's character trash, so a restore does not bring one back)."""
        with self._lock:
            return dict(self.db.execute(
                "SELECT id, deleted_at FROM characters WHERE deleted_at IS NOT NULL ORDER BY id"))

    def set_character_name(self, character: str, name: str,
                           deleted_at: float | None | Keep = KEEP) -> dict[str, Any]:
        """A character's display name as given, a character without memories too (a backup
        server takes the primary's name: a rename there replaces the one it held), and
        whether it is deleted (``deleted_at``: a time, or None for a live character; left as
        stored when not given)."""
        character = validate.character_id(character)
        name = validate.character_name(name)
        if isinstance(deleted_at, Keep):
            with self._writing():
                self.db.execute("INSERT INTO characters (id, name) VALUES (?, ?) ON CONFLICT "
                                "(id) DO UPDATE SET name = excluded.name", (character, name))
            return {"id": character, "name": name}
        deleted_at = validate.optional_timestamp(deleted_at, "deleted_at")
        with self._writing():
            self.db.execute("INSERT INTO characters (id, name, deleted_at) VALUES (?, ?, ?) "
                            "ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
                            "deleted_at = excluded.deleted_at", (character, name, deleted_at))
        return {"id": character, "name": name, "deleted_at": deleted_at}


def _readable(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The records the record schema accepts as stored: a row damaged outside Omoide (no
    text, not JSON) is left out of a search, as the engine quarantines it; one such row
    made every text search of its character an HTTP 500."""
    for record in records:
        try:
            yield validate.record(record, stored=True)
        except OmoideError:
            continue
