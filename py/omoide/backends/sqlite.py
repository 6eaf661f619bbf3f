"""``SQLiteBackend``: memories in one SQLite file (standard library ``sqlite3``, WAL mode).

Layout (schema version 1): ``memories(id PK, character_id, kind, trashed_at, updated_at,
record JSON, vector BLOB)``; the vector is little-endian float32, the record JSON holds every
other field. WAL lets a reader (the reference server, a CLI ``recall``) run while another
process writes; every call is one transaction, so a crash never leaves half a write.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omoide.backends import ranking
from omoide.backends.base import (
    DEFAULT_PAGE,
    IMMUTABLE_FIELDS,
    check_fields,
    check_query_vector,
    check_record,
    page_args,
)
from omoide.engine import validate
from omoide.errors import OmoideError

SCHEMA_VERSION = 1
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
-- display names of characters (an export carries them; a character may have no memories)
CREATE TABLE IF NOT EXISTS characters (id TEXT PRIMARY KEY, name TEXT NOT NULL);
"""
COLUMNS = "id, character_id, kind, trashed_at, updated_at, record, vector"
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


class SQLiteBackend:
    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        self.path = Path(path)
        self.name = name or f"sqlite:{self.path.name}"
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._writes = 0  # bumped by every write of this connection (search cache key)
        self._text_indexes: dict[str, tuple[tuple[int, int], ranking.TextIndex]] = {}

    # -- lifecycle ----------------------------------------------------------------------------

    def initialize(self) -> None:
        with self._lock:
            if self._db is not None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA busy_timeout = 10000")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(SCHEMA)
            version = db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
            if version is None:
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(version[0]) > SCHEMA_VERSION:
                db.close()
                raise OmoideError.of("UNSUPPORTED_SNAPSHOT", version=version[0],
                                     max=SCHEMA_VERSION)
            self._db = db

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
    def _writing(self) -> Iterator[None]:
        """One write: a locked or full database is a clear error and nothing is changed."""
        with self._lock:
            self._writes += 1
            try:
                yield
            except sqlite3.OperationalError as err:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise OmoideError.of("BACKEND_WRITE_FAILED", path=str(self.path),
                                     reason=str(err)) from None

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
        return full

    def _check_dimension(self, record: dict[str, Any]) -> None:
        """A new memory's vector must fit its character's index (one indexed row read)."""
        row = self.db.execute(
            "SELECT length(vector) / 4 FROM memories WHERE character_id = ? AND vector IS NOT "
            "NULL LIMIT 1", (record["character_id"],)).fetchone()
        if row is not None and row[0] != len(record["vector"]):
            raise validate.invalid_record(
                "vector", record["id"], f"vector: {len(record['vector'])} numbers, but the "
                f"index of {record['character_id']!r} has {row[0]}")

    def get(self, memory_id: str, *, with_vector: bool = False) -> dict[str, Any] | None:
        with self._lock:
            row = self.db.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?",
                                  (memory_id,)).fetchone()
        return self._record(row, with_vector) if row else None

    def update(self, memory_id: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        changes = check_fields(fields)
        with self._writing():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                current = self.get(memory_id, with_vector=True)
                if current is None:
                    self.db.execute("ROLLBACK")
                    return None
                changes = {k: v for k, v in changes.items() if k not in IMMUTABLE_FIELDS}
                merged = check_record(current | changes)
                self._write(merged, insert=False)
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
        return merged

    def delete(self, memory_id: str) -> bool:
        with self._writing():
            return self.db.execute("DELETE FROM memories WHERE id = ?",
                                   (memory_id,)).rowcount > 0

    def list(self, *, character_id: str | None = None, kind: str | None = None,
             trashed: bool | None = False, limit: int = DEFAULT_PAGE, offset: int = 0,
             with_vectors: bool = False) -> dict[str, Any]:
        limit, offset = page_args(limit, offset)
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
        records = [r for r in (self._record(row, True) for row in rows) if r["model"] == model]
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
                "SELECT record FROM memories WHERE character_id = ? AND trashed_at IS NULL",
                (character_id,)).fetchall()
            index = ranking.TextIndex(json.loads(r[0]) for r in rows)
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

    def all_records(self) -> list[dict[str, Any]]:
        """Every record with its vector, in id order (the engine is rebuilt from this)."""
        with self._lock:
            rows = self.db.execute(f"SELECT {COLUMNS} FROM memories ORDER BY id").fetchall()
        return [self._record(r, True) for r in rows]

    # -- character names (export / import) ---------------------------------------------------

    def character_names(self) -> dict[str, str]:
        """Display names by character id (characters named by an import, with or without
        memories); a character without a row is shown by its id."""
        with self._lock:
            return dict(self.db.execute("SELECT id, name FROM characters ORDER BY id"))

    def add_character_names(self, names: dict[str, str]) -> None:
        """Record the names of characters that have none yet (one transaction); a name
        already stored is kept."""
        with self._writing():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT OR IGNORE INTO characters (id, name) VALUES (?, ?)",
                                    sorted(names.items()))
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
