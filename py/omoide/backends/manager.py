"""``BackendManager``: one primary backend and an ordered list of fallbacks, behind the same
``MemoryBackend`` interface.

Routing:
- ``create`` and ``list``: the primary only (the primary is the source of truth).
- ``get`` and ``search``: the primary; on a miss (None / no result) or an error, each fallback
  in order. Errors of every backend are reported together when nobody answers.
- ``update`` and ``delete``: the primary answers; the same change is then queued for every
  fallback and mirrored asynchronously with retry (exponential backoff). A mirrored update that
  finds no record on the fallback creates it from the primary's full record, so a fallback
  converges. A failed mirror stays queued — the queue is persisted (``QueueStore``) and
  survives a restart; it is never dropped.
- ``mirror(op)``: a change made on the primary outside this manager (the browser engine's own
  writes) is queued the same way. Besides ``update`` and ``delete`` an op may be ``upsert``:
  the fallback gets the primary's full record (with its vector) as it is when the op is
  applied, so the queue holds ids, not vectors; or ``name`` (its id a character's): the
  fallback gets the character's display name the primary holds then, and whether it is
  deleted (from a primary that keeps deletions: ``deleted_characters``).
- ``health``: every backend is checked (also periodically by ``start``); ``status`` shows each
  backend's state and the queue length (UI and API).
- Ops queued for a fallback no longer configured by that name (``adopt``) go only to the
  server they were queued for (``server_key``: the same URL written another way is the
  same server; the CPython workspace and the browser both give ``http.server_key``), and
  wait, shown by ``status`` (role ``waiting``), while it is not named; ``drop_waiting``
  drops them at the user's word. Sent to whichever server was named next (the browser did
  that), the one they were queued for never got them: a memory forgotten while it was
  down came back live from it on a restore, a deleted character too.

Under CPython ``start()`` runs the mirror pump and the health checks in a daemon thread; in
the browser (no threads) the engine worker calls ``pump()`` and ``check_health()`` on a timer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol, TypeVar

try:
    import fcntl
except ImportError:  # Windows, Pyodide
    fcntl = None  # type: ignore[assignment]

from omoide.backends.base import DEFAULT_PAGE, MemoryBackend
from omoide.backends.sync import deleted_at, upsert
from omoide.errors import OmoideError

T = TypeVar("T")
LOG = logging.getLogger("omoide.backends")
RETRY_BASE_S = 1.0
RETRY_MAX_S = 300.0
# A shared pump writes its results back to the queue file every SETTLE_EVERY ops or
# SETTLE_S seconds (and at its end), not after each op: a crash in between sends those
# ops again, in order, which converges (each op is idempotent).
SETTLE_EVERY = 256
SETTLE_S = 1.0


class QueueStore(Protocol):
    def load(self) -> list[dict[str, Any]]: ...

    def save(self, ops: list[dict[str, Any]]) -> None: ...


class MemoryQueueStore:
    """Keeps the queue in memory only (tests, throwaway managers)."""

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []

    def load(self) -> list[dict[str, Any]]:
        return [dict(op) for op in self.ops]

    def save(self, ops: list[dict[str, Any]]) -> None:
        self.ops = [dict(op) for op in ops]


class JsonFileQueueStore:
    """The queue as a JSON file, replaced atomically (write temp + fsync + rename).

    Several processes may share one (the CLI beside an MCP server on one workspace), so it
    is ``shared``: the manager re-reads it under ``locked()`` (an exclusive ``flock`` on a
    sidecar file) before every change and writes it before the lock is released, and only
    the process holding ``pumping()`` sends ops. Each process once kept its own copy and
    saved it whole: one process's save dropped the other's ops, and an op another had sent
    was replayed after later ones (an old update over a newer edit on the backup)."""

    shared = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._thread_lock = threading.Lock()  # not re-entrant, as a flock of a new fd is not
        self._serving: dict[str, int] = {}  # server_key -> fd of its shared lock (``serve``)
        self._sweep()

    def _sweep(self) -> None:
        """Remove the temporary files of processes that died between writing one and
        renaming it (a kill, a power cut): copies of an old queue, never read again."""
        if fcntl is None:  # no reliable liveness test of a pid here
            return
        for tmp in self.path.parent.glob(f"{self.path.name}.*.*.tmp"):
            pid = tmp.name[len(self.path.name) + 1:].split(".")[0]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                tmp.unlink(missing_ok=True)
            except OSError:  # alive, another user's
                continue

    def load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        try:
            ops = json.loads(self.path.read_text("utf-8"))
            if isinstance(ops, list) and all(isinstance(op, dict) for op in ops):
                return ops
        except (ValueError, UnicodeDecodeError):
            pass
        # a damaged file (a disk error, a hand edit) failed every command with a traceback:
        # it is set aside, kept for a look, and the backups are told to be copied again
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.time_ns()}")
        os.replace(self.path, aside)
        LOG.warning("The backup queue %s was damaged and is set aside as %s; the backups may "
                    "miss changes made before: run `omoide backup` to copy everything again.",
                    self.path, aside)
        return []

    @contextmanager
    def locked(self) -> Iterator[None]:
        with self._thread_lock, self._flock(".lock", blocking=True):
            yield

    @contextmanager
    def pumping(self) -> Iterator[bool]:
        """True while this process is the one that sends (others skip their pump)."""
        with self._flock(".pump.lock", blocking=False) as held:
            yield held

    @contextmanager
    def _flock(self, suffix: str, *, blocking: bool) -> Iterator[bool]:
        if fcntl is None:  # no inter-process lock here (Windows): one process per queue
            yield True
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + suffix), os.O_RDWR | os.O_CREAT,
                     0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # releases the lock

    def serve(self, servers: set[str]) -> None:
        """Say, while this store is open (until ``release``, or the process ends), that this
        process sends the ops of ``servers`` (``server_key``s): a shared ``flock`` on each
        one's sidecar file, which ``in_use`` tests from another process."""
        if fcntl is None:
            return
        for server in servers - set(self._serving):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self._server_lock(server), os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:  # a folder not writable: nothing is queued here either
                continue
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._serving[server] = fd

    def release(self) -> None:
        for fd in self._serving.values():
            os.close(fd)
        self._serving.clear()

    def in_use(self, server: str) -> bool:
        """Whether an open store (another process) sends the ops of ``server``."""
        path = self._server_lock(server)
        if fcntl is None or not path.exists():
            return False
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def _server_lock(self, server: str) -> Path:
        digest = hashlib.sha256(server.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return self.path.with_name(f"{self.path.name}.server-{digest}.lock")

    def save(self, ops: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a temporary name of this process and thread: two writers never share one
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private, as the db
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)  # a leftover temp file of another mode
        with open(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(ops, ensure_ascii=False))  # the C encoder (dump streams in Python)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class BackendState:
    def __init__(self, backend: MemoryBackend, role: str) -> None:
        self.backend = backend
        self.role = role
        self.ok: bool | None = None  # None: never checked
        self.last_error: str | None = None
        self.last_checked: float | None = None
        self.latency_ms: float | None = None

    def to_dict(self, queued: int, refused: int = 0) -> dict[str, Any]:
        return {"name": self.backend.name, "role": self.role, "ok": self.ok,
                "last_error": self.last_error, "last_checked": self.last_checked,
                "latency_ms": self.latency_ms, "queued": queued, "refused": refused}


class BackendManager:
    def __init__(self, primary: MemoryBackend, fallbacks: Sequence[MemoryBackend] = (), *,
                 queue_store: QueueStore | None = None, clock: Callable[[], float] = time.time,
                 health_interval: float = 30.0, pump_interval: float = 1.0,
                 server_key: Callable[[str], str] | None = None) -> None:
        """``server_key``: the server a backend's name points at (``http.server_key``);
        without it a name is its own server."""
        self.primary = primary
        self.fallbacks = list(fallbacks)
        self.name = f"manager:{primary.name}"
        self.states = {b.name: BackendState(b, "primary" if b is primary else "fallback")
                       for b in [primary, *self.fallbacks]}
        if len(self.states) != 1 + len(self.fallbacks):
            raise OmoideError.of("BACKEND_CONFIG", reason="backend names must be unique")
        self.queue_store = queue_store or MemoryQueueStore()
        self.clock = clock
        self.server_key: Callable[[str], str] = server_key or _own_name
        if hasattr(self.queue_store, "serve"):
            # another process's ``drop_waiting`` leaves the ops of these servers alone
            self.queue_store.serve({self.server_key(b.name) for b in self.fallbacks})
        # A restart retries at once: the backoff only spaces attempts within one run.
        loaded = self.queue_store.load()
        adopted = self.adopt(loaded)
        self.queue: list[dict[str, Any]] = [op | {"due": min(op["due"], clock())}
                                            for op in adopted]
        self.health_interval = health_interval
        self.pump_interval = pump_interval
        self._lock = threading.RLock()  # the queue and the states
        self._pump_lock = threading.Lock()  # one pump at a time (thread, close, browser timer)
        self._sending: set[int] = set()  # ids of the ops being sent right now (one process)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_pump_error: str | None = None
        now = clock()
        if getattr(self.queue_store, "shared", False) and (adopted != loaded or any(
                op["due"] > now for op in loaded if op["target"] in self.states)):
            # the file is what a shared pump reads: the adoption and the retry at once go there
            # (a read-only command over an up-to-date queue writes nothing)
            def restart(queue: list[dict[str, Any]]) -> None:
                queue[:] = [op | {"due": min(op["due"], now)} for op in self.adopt(queue)]

            self._edit(restart)

    # -- lifecycle ----------------------------------------------------------------------------

    def initialize(self) -> None:
        for state in self.states.values():
            self._attempt(state, state.backend.initialize)

    def shutdown(self) -> None:
        self.stop()
        for state in self.states.values():
            self._attempt(state, state.backend.shutdown)
        if hasattr(self.queue_store, "release"):
            self.queue_store.release()

    def start(self) -> None:
        """Mirror and health-check in a daemon thread (CPython)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="omoide-mirror", daemon=True)
            self._thread.start()

    def stop(self, wait: float = 10.0) -> bool:
        """End the mirror thread; False when it is still in a request after ``wait`` seconds
        (a daemon: it ends with the process; what it was sending stays queued on disk)."""
        if self._thread is None:
            return True
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=wait)
        ended = not self._thread.is_alive()
        self._thread = None
        return ended

    def _run(self) -> None:
        next_health = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() >= next_health:
                    self.check_health()
                    next_health = time.monotonic() + self.health_interval
                self.pump()
                self.last_pump_error = None
            except Exception as err:  # noqa: BLE001 - the queue file unwritable a moment:
                # the next round retries (the queue is never dropped); the thread lives on
                self.last_pump_error = str(err)
            self._wake.wait(self.pump_interval)
            self._wake.clear()

    def _attempt(self, state: BackendState, call: Callable[[], Any]) -> tuple[bool, Any]:
        try:
            result = call()
        except Exception as err:  # noqa: BLE001 - any failure marks the backend down
            state.ok, state.last_error = False, str(err)
            return False, err
        state.ok, state.last_error = True, None
        return True, result

    # -- routed verbs -------------------------------------------------------------------------

    def create(self, record: dict[str, Any]) -> dict[str, Any]:
        return self.primary.create(record)

    def list(self, *, character_id: str | None = None, kind: str | None = None,
             trashed: bool | None = False, limit: int = DEFAULT_PAGE, offset: int = 0,
             with_vectors: bool = False) -> dict[str, Any]:
        return self.primary.list(character_id=character_id, kind=kind, trashed=trashed,
                                 limit=limit, offset=offset, with_vectors=with_vectors)

    def get(self, memory_id: str, *, with_vector: bool = False) -> dict[str, Any] | None:
        return self._first("get", lambda b: b.get(memory_id, with_vector=with_vector),
                           lambda r: r is not None)

    def search(self, query: str, *, character_id: str, k: int = 10,
               vector: list[float] | None = None, model: str | None = None,
               kinds: list[str] | None = None) -> list[dict[str, Any]]:
        found = self._first(
            "search",
            lambda b: b.search(query, character_id=character_id, k=k, vector=vector,
                               model=model, kinds=kinds),
            bool)
        return found or []

    def _first(self, operation: str, call: Callable[[MemoryBackend], Any],
               hit: Callable[[Any], bool]) -> Any:
        """The first backend's answer that is a hit; the last miss if none; raise if all
        backends failed."""
        errors, miss, answered = [], None, False
        for state in self.states.values():
            ok, result = self._attempt(state, lambda s=state: call(s.backend))
            if not ok:
                errors.append(f"{state.backend.name}: {result}")
                continue
            if hit(result):
                return result
            answered, miss = True, result
        if not answered:
            raise OmoideError.of("BACKEND_UNAVAILABLE", operation=operation,
                                 reasons="; ".join(errors))
        return miss

    def update(self, memory_id: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        record = self.primary.update(memory_id, fields)
        if record is not None:
            self._enqueue({"op": "update", "id": memory_id, "fields": fields})
        return record

    def delete(self, memory_id: str) -> bool:
        deleted = self.primary.delete(memory_id)
        self._enqueue({"op": "delete", "id": memory_id})
        return deleted

    # -- mirroring ---------------------------------------------------------------------------

    def _edit(self, change: Callable[[list[dict[str, Any]]], T]) -> T:
        """Apply ``change`` to the queue and save it. A queue store other processes share
        (``shared``) is re-read under its lock first, so no process's ops are lost."""
        shared = getattr(self.queue_store, "shared", False)
        with self._lock, (self.queue_store.locked() if shared else nullcontext()):
            if shared:  # as written; ops for a backup another process names are left to it
                loaded = self.queue_store.load()
                # another process may name this server another way (``server_key``) and
                # have renamed its ops to that: they are this process's again, in order
                self.queue = self.adopt(loaded)
            result = change(self.queue)
            self.queue_store.save(self.queue)
        return result

    def _enqueue(self, op: dict[str, Any]) -> None:
        if not self.fallbacks:
            return
        now = self.clock()

        def append(queue: list[dict[str, Any]]) -> None:
            for backend in self.fallbacks:
                queue.append(op | {"target": backend.name, "attempts": 0, "due": now,
                                   "queued_at": now, "last_error": None})

        self._edit(append)
        self._wake.set()

    def mirror(self, op: dict[str, Any]) -> None:
        """Queue ``op`` (``{"op": "upsert"|"update"|"delete", "id", "fields"?}``) for every
        fallback (``mirror_many`` of one)."""
        self.mirror_many([op])

    def mirror_many(self, ops: list[dict[str, Any]]) -> None:
        """Queue ``ops`` for every fallback in ONE save of the queue (a verb's changes: an
        import of 10,000 memories saved the whole queue file 10,000 times). An op that the
        queue already covers is not added twice: an upsert or an update after a pending
        upsert of the same memory (the upsert copies the primary's latest state), and an
        update after a pending update (their fields are merged)."""
        if not self.fallbacks or not ops:
            return
        now = self.clock()

        def add(queue: list[dict[str, Any]]) -> None:
            last = {(q["target"], q["id"]): q for q in queue}  # each memory's latest op
            for op in ops:
                for backend in self.fallbacks:
                    key = (backend.name, op["id"])
                    if not self._coalesce(last.get(key), op):
                        entry = op | {"target": backend.name, "attempts": 0, "due": now,
                                      "queued_at": now, "last_error": None}
                        queue.append(entry)
                        last[key] = entry

        self._edit(add)
        self._wake.set()

    def _coalesce(self, last: dict[str, Any] | None, op: dict[str, Any]) -> bool:
        """Whether ``op`` merges into ``last``, the queue's latest op of its memory."""
        if op["op"] not in ("upsert", "update"):
            return False
        if last is not None and last["op"] not in ("upsert", "update", "delete"):
            return False  # a character's name op (its id may also be a memory's)
        if (last is None or last["op"] == "delete" or id(last) in self._sending
                or last.get("sending") or last.get("refused")):  # in flight, or refused
            return False
        if last["op"] == "upsert":
            return True
        if op["op"] == "update":
            last["fields"] = last["fields"] | op["fields"]
            return True
        return False

    def pump(self) -> int:
        """Apply every due mirror op in queue order; failed ops stay with a later due time.
        Ops of one target stay ordered: after a failure, that target's later ops wait.
        The network is used outside the queue lock, so engine writes never wait on a slow
        fallback; ops in flight are not merged into (``_coalesce``)."""
        if getattr(self.queue_store, "shared", False):
            return self._pump_shared()
        with self._pump_lock:
            with self._lock:
                batch = self._due()
                self._sending = {id(op) for op in batch}
            applied: set[int] = set()
            blocked: set[str] = set()
            try:
                for op in batch:
                    if op["target"] in blocked:
                        continue
                    if self._mirror(op):
                        applied.add(id(op))
                    elif not op.get("refused"):
                        blocked.add(op["target"])
            finally:
                with self._lock:
                    self.queue = [q for q in self.queue if id(q) not in applied]
                    self._sending = set()
                    self.queue_store.save(self.queue)
        return len(applied)

    def _pump_shared(self) -> int:
        """``pump`` for a queue other processes share: one process sends (the one holding
        the store's ``pumping`` lock); the ops it takes are marked ``sending`` in the file,
        so no process merges a change into an op already on its way; each result is
        written back under the lock (the op removed, or its retry time set)."""
        with self._pump_lock, self.queue_store.pumping() as mine:
            if not mine:
                return 0

            def take(queue: list[dict[str, Any]]) -> list[dict[str, Any]]:
                for op in queue:  # this process holds the pump: older marks are stale
                    op.pop("sending", None)
                batch = self._due(queue)
                for op in batch:
                    op["sending"] = True
                return [dict(op) for op in batch]

            batch = self._edit(take)
            done, blocked = 0, set()
            results: list[tuple[dict[str, Any], bool]] = []  # sent, not yet written back
            written = time.monotonic()
            try:
                for sent in batch:
                    if sent["target"] in blocked:
                        continue
                    ok = self._mirror(sent)
                    results.append((sent, ok))
                    if not ok and not sent.get("refused"):
                        blocked.add(sent["target"])
                    if len(results) >= SETTLE_EVERY or time.monotonic() - written >= SETTLE_S:
                        done += self._edit(lambda queue, r=results: _settled(queue, r))
                        results, written = [], time.monotonic()
            finally:
                def close(queue: list[dict[str, Any]]) -> int:
                    applied = _settled(queue, results)
                    for op in queue:
                        op.pop("sending", None)
                    return applied

                done += self._edit(close)
        return done

    def _due(self, queue: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        now, blocked, batch = self.clock(), set(), []
        for op in self.queue if queue is None else queue:
            if op["target"] in blocked or op["target"] not in self.states or op.get("refused"):
                continue
            if op["due"] > now:
                blocked.add(op["target"])
                continue
            batch.append(op)
        return batch

    def adopt(self, ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Ops queued for a fallback that is no longer configured by that name; none is
        ever dropped. Each goes to the fallback of its server only (``server_key``: the URL
        written another way), else it waits for that server. Sent to another one (the
        browser's manager did that: it had no ``server_key``), the server it was queued
        for never got the change (a forgotten memory, a deleted character came back live
        from it on a restore), and the other got ops for records it may never have had."""
        same = {self.server_key(b.name): b.name for b in reversed(self.fallbacks)}
        adopted: list[dict[str, Any]] = []
        for op in ops:
            target = None if op["target"] in self.states else same.get(
                self.server_key(op["target"]))
            adopted.append(op if target is None else op | {"target": target})
        return adopted

    def reload(self) -> None:
        """Read the queue again from its store (another tab or process may have pumped it)."""
        with self._lock:
            self.queue = self.adopt(self.queue_store.load())

    def _mirror(self, op: dict[str, Any]) -> bool:
        """Send one op. A failure retries later with backoff and holds that target's later
        ops (order kept); a refusal of this op itself (``refused``: the server answered
        and will answer the same) is kept in the queue, shown by ``status``, sent again
        only by ``retry``, and holds nothing up: one record a server refuses stopped every
        later change from reaching it."""
        state = self.states[op["target"]]
        ok, err = self._attempt(state, lambda: self._apply(state.backend, op))
        if not ok:
            op["attempts"] += 1
            op["last_error"] = str(err)
            op["due"] = self.clock() + min(RETRY_BASE_S * 2 ** (op["attempts"] - 1),
                                           RETRY_MAX_S)
            if refused(err):
                op["refused"] = True
                state.ok, state.last_error = True, None  # it answered: up, the op refused
        return ok

    def due_now(self, targets: set[str] | None = None, *, resend_refused: bool = False
                ) -> None:
        """Every queued op of ``targets`` (default: all) due now, saved to the queue store
        (a server that answers again gets its ops at once, not after their backoff). With
        ``resend_refused`` refused ones too, a refused update as an upsert (``retry``)."""
        now = self.clock()

        def due(queue: list[dict[str, Any]]) -> None:
            for op in queue:
                if targets is None or op["target"] in targets:
                    op["due"] = min(op["due"], now)
                    if (resend_refused and op.pop("refused", None)
                            and op["op"] == "update"):
                        op["op"] = "upsert"
                        op.pop("fields", None)

        self._edit(due)

    def retry(self, targets: set[str] | None = None) -> None:
        """Every queued op of ``targets`` (default: all) due now, refused ones too (the user
        asks to send everything again: "Back up now"). A refused update goes again as an
        upsert (the primary's record as it is when sent): later edits of its memory went
        on without it, and its old fields sent after them overwrote the newer ones."""
        self.due_now(targets, resend_refused=True)
        self._wake.set()

    def _apply(self, backend: MemoryBackend, op: dict[str, Any]) -> None:
        if op["op"] == "delete":
            backend.delete(op["id"])
            return
        if op["op"] == "name":  # the primary's name (and deletion) as it is now
            name = self.primary.character_names().get(op["id"])  # type: ignore[attr-defined]
            if name is not None:
                backend.set_character_name(  # type: ignore[attr-defined]
                    op["id"], name, deleted_at(self.primary, op["id"]))
            return
        if op["op"] == "upsert":
            record = self.primary.get(op["id"], with_vector=True)
            if record is not None:  # gone from the primary since: a later delete follows
                upsert(backend, record)
            return
        owner = self.primary.get(op["id"])  # the guard of ``sync.upsert``: see there
        fields = op["fields"] if owner is None else {**op["fields"],
                                                       "character_id": owner["character_id"]}
        if backend.update(op["id"], fields) is None:
            record = self.primary.get(op["id"], with_vector=True)
            if record is not None:  # gone from the primary since: a later delete follows
                backend.create(record)

    def drop_waiting(self, server: str | None = None) -> dict[str, int]:
        """Drop the ops that wait for a server not configured here (the user's choice: that
        server is gone for good, or will be filled again by a full copy): all of them, or
        those of ``server`` only (a ``server_key``, as ``status`` shows it). No memory is
        lost: the primary holds every one, and a full copy (``sync.copy_all``, the app's
        "Back up now") fills a server. Returns how many, by server name. The ops of a
        server another live process sends to (an MCP server beside the CLI:
        ``JsonFileQueueStore.in_use``) are kept: that backup would silently miss them."""
        in_use = getattr(self.queue_store, "in_use", None)
        live: dict[str, bool] = {}

        def gone(target: str) -> bool:
            if target in self.states:
                return False
            if server is not None and self.server_key(target) != server:
                return False
            if target not in live:
                live[target] = in_use is not None and in_use(self.server_key(target))
            return not live[target]

        def drop(queue: list[dict[str, Any]]) -> dict[str, int]:
            dropped: dict[str, int] = {}
            for op in queue:
                if gone(op["target"]):
                    dropped[op["target"]] = dropped.get(op["target"], 0) + 1
            queue[:] = [op for op in queue if not gone(op["target"])]
            return dropped

        return self._edit(drop)

    def flush(self, timeout: float = 30.0) -> bool:
        """Pump until nothing is queued for the configured fallbacks or ``timeout`` passes;
        True then (ops waiting for a server not configured are not counted)."""
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            left = any(op["target"] in self.states for op in self.queue)
            if not left or time.monotonic() >= deadline:
                return not left
            time.sleep(0.05)

    # -- health and state ----------------------------------------------------------------------

    def check_health(self) -> list[dict[str, Any]]:
        for state in self.states.values():
            ok, answer = self._attempt(state, state.backend.health)
            state.last_checked = self.clock()
            if ok and isinstance(answer, dict):
                state.latency_ms = answer.get("latency_ms")
                if answer.get("ok") is False:
                    state.ok, state.last_error = False, str(answer.get("error", "not ok"))
        return self.status()

    def health(self) -> dict[str, Any]:
        backends = self.check_health()
        return {"ok": bool(backends[0]["ok"]), "backend": self.name, "backends": backends,
                "queued": len(self.queue)}

    def status(self) -> list[dict[str, Any]]:
        """Each backend's state; ``queue_error``: why the mirror thread's last round failed
        (the queue file unreadable or unwritable: nothing is sent until it passes), else
        None. Then a ``waiting`` row for each server not configured that ops wait for (its
        name, ``server``: its ``server_key``, how many, their last error)."""
        with self._lock:
            waiting: dict[str, list[dict[str, Any]]] = {}
            for op in self.queue:
                waiting.setdefault(op["target"], []).append(op)
        rows = []
        for name, s in self.states.items():
            ops = waiting.pop(name, [])
            refusals = [op for op in ops if op.get("refused")]
            rows.append(s.to_dict(len(ops), len(refusals)) | {
                "queue_error": self.last_pump_error,
                # why the server refused (the newest refusal): each refused op is kept
                "refused_error": refusals[-1]["last_error"] if refusals else None})
        for name, ops in waiting.items():
            error = next((op["last_error"] for op in reversed(ops) if op.get("last_error")),
                         None)
            rows.append({"name": name, "server": self.server_key(name), "role": "waiting",
                         "ok": None, "last_error": error,
                         "last_checked": None, "latency_ms": None, "queued": len(ops),
                         "refused": 0, "refused_error": None,
                         "queue_error": self.last_pump_error})
        return rows


def _op_key(op: dict[str, Any]) -> tuple[Any, ...]:
    """What names a queued op, but its fields (compared only between ops with this key)."""
    return (op["target"], op["id"], op["op"], op.get("queued_at"))


# A server's answer that will be the same for this op whenever it is sent: the record or
# its fields are refused (400, 409 a conflict ``upsert`` could not settle, 413 too large,
# 422). Not 401/403 (the key: every op), 404 (a wrong prefix: every op), 408/429/5xx.
REFUSED_STATUS = frozenset({400, 409, 413, 422})
REFUSED_CODES = frozenset({"INVALID_RECORD", "INVALID_ARGUMENT", "BACKEND_CONFLICT"})


def refused(err: Exception) -> bool:
    if not isinstance(err, OmoideError):
        return False
    if err.code == "BACKEND_HTTP":
        return err.fields.get("status") in REFUSED_STATUS
    return err.code in REFUSED_CODES


def _settled(queue: list[dict[str, Any]], results: list[tuple[dict[str, Any], bool]]) -> int:
    """Write sent ops' results into the queue as re-read: each removed when applied, else
    given its attempts, error and next due time. One pass over the queue for any number of
    results. Returns how many were applied."""
    positions: dict[tuple[Any, ...], list[int]] = {}
    for n, op in enumerate(queue):
        positions.setdefault(_op_key(op), []).append(n)
    removed: set[int] = set()
    for sent, ok in results:
        found = positions.get(_op_key(sent), [])
        n = next((i for i in found if queue[i].get("fields") == sent.get("fields")), None)
        if n is None:
            continue
        found.remove(n)
        if ok:
            removed.add(n)
        else:
            queue[n].update(attempts=sent["attempts"], last_error=sent["last_error"],
                            due=sent["due"])
            if sent.get("refused"):
                queue[n]["refused"] = True
            queue[n].pop("sending", None)
    if removed:
        queue[:] = [op for n, op in enumerate(queue) if n not in removed]
    return sum(1 for _, ok in results if ok)


def _own_name(name: str) -> str:
    """A backend's name as its server (a manager given no ``server_key``)."""
    return name
