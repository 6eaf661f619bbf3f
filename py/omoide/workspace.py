"""A persistent engine for CPython (CLI, MCP server, your own agent): the engine's state
lives in one SQLite file through ``BackendListener``; optional fallback backends (e.g. the
reference server over HTTP) are routed by a ``BackendManager``.

    ws = open_workspace("memories.db")
    ws.engine.remember("alice", "Alice loves green tea")
    ws.governor.recall("alice", "what does alice drink")
    ws.close()

Several processes may hold one file at once (an MCP server, the CLI, your agent): before
every verb the engine takes over what the others committed (``backends/follower.py``), and
its own writes change only what they change (``backends/listener.py``).

Default file: ``$OMOIDE_HOME/omoide.db``, else ``$XDG_DATA_HOME/omoide/omoide.db``, else
``~/.local/share/omoide/omoide.db``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from omoide.backends.base import MemoryBackend
from omoide.backends.follower import Follower
from omoide.backends.http import server_key
from omoide.backends.listener import BackendListener
from omoide.backends.manager import BackendManager, JsonFileQueueStore
from omoide.backends.mirror import ManagerMirror
from omoide.backends.sqlite import SQLiteBackend, unreadable
from omoide.embeddings.registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID, parse_stamp
from omoide.engine import MemoryEngine
from omoide.engine.embedding import Embedder
from omoide.governance import Governor


def default_path() -> Path:
    if os.environ.get("OMOIDE_HOME"):
        return Path(os.environ["OMOIDE_HOME"]) / "omoide.db"
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "omoide" / "omoide.db"


# The selected embedding model of a workspace, in the SQLite file's ``meta`` table.
MODEL_KEY, DTYPE_KEY = "model", "dtype"


def stored_model(path: str | Path) -> tuple[str, str] | None:
    """(model id, dtype) the workspace file at ``path`` was stamped with, without creating
    or changing anything: the ``meta`` rows when present, else the model of a stored memory
    (a file written before the model was recorded); None for a new or empty file."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return _stored_model(path)
    except (sqlite3.DatabaseError, OSError) as err:  # not a database, no access
        raise unreadable(path, err) from None


def _stored_model(path: Path) -> tuple[str, str] | None:
    db = sqlite3.connect(path)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" in tables:
            meta = dict(db.execute("SELECT name, value FROM meta WHERE name IN (?, ?)",
                                   (MODEL_KEY, DTYPE_KEY)).fetchall())
            if MODEL_KEY in meta and DTYPE_KEY in meta:
                return meta[MODEL_KEY], meta[DTYPE_KEY]
        if "memories" in tables:
            for (record,) in db.execute("SELECT record FROM memories LIMIT 100"):
                try:  # a damaged row (quarantined at load) says nothing about the model
                    stamp = json.loads(record).get("model")
                    model_id, dtype, _ = parse_stamp(stamp)
                except (TypeError, ValueError, AttributeError):
                    continue
                return model_id, dtype
    finally:
        db.close()
    return None


def save_model(backend: SQLiteBackend, model_id: str, dtype: str) -> None:
    """Record the workspace's selected model (one transaction)."""
    db = backend.db
    with backend._lock:
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
                           [(MODEL_KEY, model_id), (DTYPE_KEY, dtype)])
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise


@dataclass
class Workspace:
    path: Path
    engine: MemoryEngine
    governor: Governor
    backend: SQLiteBackend
    manager: BackendManager | None = None
    loaded: dict[str, int] = field(default_factory=dict)
    follower: Follower | None = None  # catches up with other processes before every verb

    def close(self) -> None:
        if self.manager is not None:
            # One last attempt for what is due; what fails stays in the queue file for the
            # next run (never a wait on a server that is down). A thread still in a request
            # after a few seconds means a server that does not answer: no last attempt to
            # wait on as well (a command was held for 40 s).
            if self.manager.stop(wait=CLOSE_WAIT):
                self.manager.pump()
            self.manager.shutdown()
        else:
            self.backend.shutdown()


CLOSE_WAIT = 3.0  # seconds a closing workspace waits for its mirror thread


def open_workspace(
    path: str | Path | None = None,
    *,
    embedder: Embedder | None = None,
    model_id: str = DEFAULT_MODEL_ID,
    dtype: str = DEFAULT_DTYPE,
    fallbacks: Sequence[MemoryBackend] = (),
) -> Workspace:
    """Open (or create) the SQLite file and rebuild the engine from it. Without an
    ``embedder`` the best local one is chosen (``embeddings.auto``)."""
    path = Path(path) if path is not None else default_path()
    if embedder is None:
        from omoide.embeddings.auto import choose_embedder

        embedder = choose_embedder(model_id, dtype).embedder
    backend = SQLiteBackend(path)
    backend.initialize()
    engine = MemoryEngine(embedder)
    try:
        follower = Follower(engine, backend)  # loads the engine; then other processes' commits
    except sqlite3.DatabaseError as err:  # damaged inside (its first pages read): a traceback
        backend.shutdown()
        raise unreadable(path, err) from None
    manager = None
    if fallbacks:
        # one file for every server; each op names its server (``target``) and goes there
        # only: ops of a server not named in this run wait for it (``status``: "waiting")
        queue = JsonFileQueueStore(path.with_name(path.name + ".mirror-queue.json"))
        manager = BackendManager(backend, fallbacks, queue_store=queue, server_key=server_key)
        manager.initialize()
        manager.start()
    backend.on_commit = follower.committed
    engine.add_refresher(follower)
    engine.verb_guards.append(follower.verb)  # a verb's writes: one transaction of the file
    engine.add_listener(BackendListener(backend))  # write-ahead: a refusal vetoes the change
    if manager is not None:
        mirror = ManagerMirror(manager)
        engine.add_listener(mirror)  # then queued for every fallback
        engine.verb_guards.append(mirror.verb)  # a verb's ops in one save, before its commit
        backend.on_names = mirror.named  # display names reach the backups too
    return Workspace(path, engine, Governor(engine), backend, manager, follower.loaded,
                     follower)
