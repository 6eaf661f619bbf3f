"""``revectorize``: switch the workspace to another embedding model, embedding every memory
again.

Resumable: after every batch the new vectors are saved in the workspace file
(``revectorize_staged``), so a run stopped by Ctrl-C (or a crash) continues where it left
off when the same command is run again; texts changed in between are embedded again. A
staged row goes with its memory: a purge (by any process) erases it, a rewrite drops it.
Each character switches in one SQLite transaction (its vectors, the workspace's model, the
end of its staging), so the file never holds a character half on one model. Ctrl-C is
honoured between batches: the run stops cleanly with exit code 130.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from omoide.backends.listener import BackendListener
from omoide.backends.sqlite import SQLiteBackend, pack, unpack
from omoide.cli.context import Context, model_label
from omoide.embeddings.registry import DEFAULT_DTYPE
from omoide.engine.embedding import embed_memories
from omoide.engine.listener import Change
from omoide.engine.revectorize import RevectorizeJob, source
from omoide.errors import OmoideError
from omoide.workspace import DTYPE_KEY, MODEL_KEY

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

STAGING = """
CREATE TABLE IF NOT EXISTS revectorize_staged (
    stamp TEXT NOT NULL,
    character_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    text TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (stamp, memory_id)
);
-- a staged row holds its memory's words: a purge (whoever writes) erases it with the memory,
-- and a row written anew (an edit is a REPLACE: its words may be new) drops it, to be
-- embedded again from the words it has now
CREATE INDEX IF NOT EXISTS revectorize_staged_by_memory ON revectorize_staged (memory_id);
CREATE TRIGGER IF NOT EXISTS revectorize_staged_purged AFTER DELETE ON memories BEGIN
    DELETE FROM revectorize_staged WHERE memory_id = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS revectorize_staged_rewritten AFTER INSERT ON memories BEGIN
    DELETE FROM revectorize_staged WHERE memory_id = NEW.id;
END;
-- purged before these triggers existed (a file staged by an older version)
DELETE FROM revectorize_staged WHERE memory_id NOT IN (SELECT id FROM memories);
"""
EXIT_CANCELLED = 130


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("revectorize", parents=[common],
                       help="switch the workspace to another model (resumable, Ctrl-C safe)")
    p.add_argument("--model", dest="target_model", required=True, help="the new model id")
    p.add_argument("--dtype", dest="target_dtype", default=None,
                   help=f"the new model's dtype (default: {DEFAULT_DTYPE})")
    p.add_argument("--character", default=None,
                   help="only this character (others stay blocked until re-vectorized)")
    p.add_argument("--batch-size", type=int, default=32, help="texts per embedder call")
    p.set_defaults(handler=revectorize, opens_own_model=True)


class Transaction:
    def __init__(self, backend: SQLiteBackend) -> None:
        self.db = backend.db

    def __enter__(self) -> Any:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


class Staging:
    """New vectors saved as they are made, keyed by the new model's stamp."""

    def __init__(self, backend: SQLiteBackend, stamp: str) -> None:
        self.backend, self.stamp = backend, stamp
        backend.db.executescript(STAGING)
        self.saved: dict[str, str] = {}  # memory id -> the text its saved vector is of

    def load(self) -> dict[str, dict[str, tuple[str, list[float]]]]:
        staged: dict[str, dict[str, tuple[str, list[float]]]] = {}
        rows = self.backend.db.execute(
            "SELECT character_id, memory_id, text, vector FROM revectorize_staged "
            "WHERE stamp = ?", (self.stamp,)).fetchall()
        for character, memory_id, text, blob in rows:
            staged.setdefault(character, {})[memory_id] = (text, unpack(blob) or [])
            self.saved[memory_id] = text
        return staged

    def save(self, job: RevectorizeJob) -> None:
        rows = [(self.stamp, character, memory_id, text, pack(vector))
                for character, items in job.staged.items()
                for memory_id, (text, vector) in items.items()
                if self.saved.get(memory_id) != text]
        if not rows:
            return
        with Transaction(self.backend) as db:
            db.executemany("INSERT OR REPLACE INTO revectorize_staged VALUES (?,?,?,?,?)", rows)
        self.saved.update((r[2], r[3]) for r in rows)


def readable(record: str) -> dict[str, Any] | None:
    """A stored row's record when it is a JSON object with a text, else None."""
    try:
        parsed = json.loads(record)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and isinstance(parsed.get("text"), str) else None


class SwapWriter:
    """Stands in for the workspace's ``BackendListener`` while re-vectorizing: a swap is
    written in ONE transaction, with the workspace's new model and the end of its staging.

    Another process may write the character while its texts are embedded (a remember, an
    edit, an import): its rows are not in the swap, or their text is no longer the one the
    swap's vector is of. Inside the transaction (which holds the file's write lock, so none
    can arrive after this look) such rows are embedded with the new model too; every row of
    the character leaves it on the new model, with a vector of its own text. Every row's
    copy for the backups (``mirror``) is queued before the commit, late rows included: a
    kill right after the commit never leaves a backup on the old vectors."""

    def __init__(self, plain: BackendListener, backend: SQLiteBackend, model_id: str,
                 dtype: str, engine: MemoryEngine,
                 mirror: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self.plain, self.backend = plain, backend
        self.model_id, self.dtype = model_id, dtype
        self.engine = engine
        self.mirror = mirror

    def on_change(self, change: Change) -> None:
        if change.op != "swap":
            self.plain.on_change(change)
            return
        embedded = self.embedded_sources(change.character_id)
        with Transaction(self.backend) as db:
            rows = db.execute("SELECT id, record FROM memories WHERE character_id = ?",
                              (change.character_id,)).fetchall()
            # a damaged row (quarantined: never loaded) stays as it is, for the user to see
            # in the audit; it never blocks the switch (it made it fail on every try)
            records = {memory_id: parsed for memory_id, record in rows
                       if memory_id not in self.engine.quarantine
                       and (parsed := readable(record)) is not None}
            late = [memory_id for memory_id, record in records.items()
                    if memory_id not in change.vectors
                    or embedded.get(memory_id) != source(record["text"], record.get("context"))]
            vectors = dict(change.vectors)
            if late:
                made = embed_memories(self.engine.embedder, [
                    (records[i]["text"], records[i].get("context")) for i in late])
                vectors.update(zip(late, made, strict=True))
            for memory_id, record in records.items():
                record["model"] = change.stamp
                db.execute("UPDATE memories SET record = ?, vector = ? WHERE id = ?",
                           (json.dumps(record, ensure_ascii=False),
                            pack(list(vectors[memory_id])), memory_id))
            db.executemany("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)",
                           [(MODEL_KEY, self.model_id), (DTYPE_KEY, self.dtype)])
            db.execute("DELETE FROM revectorize_staged WHERE stamp = ? AND character_id = ?",
                       (change.stamp, change.character_id))
            if self.mirror is not None:
                self.mirror([{"op": "upsert", "id": i} for i in sorted(records)])

    def embedded_sources(self, character: str) -> dict[str, str]:
        """What each of the swap's vectors was embedded from: the memories (live and in the
        trash) as this process holds them."""
        held = [*self.engine.memories(character),
                *(entry.memory for entry in self.engine.trash(character))]
        return {m.id: source(m.text, m.context) for m in held}


class CtrlC:
    """Turns SIGINT into a flag polled between batches (main thread only)."""

    def __init__(self) -> None:
        self.pressed = False
        self.previous: Any = None

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self.handle)
        return self

    def handle(self, *_: Any) -> None:
        self.pressed = True

    def __exit__(self, *_: Any) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def revectorize(ctx: Context) -> int:
    a = ctx.args
    model_id, dtype = a.target_model, a.target_dtype or DEFAULT_DTYPE
    ctx.check_exists()  # a mistyped --db: never a new file said to be switched
    ws = ctx.open(model_id, dtype, record=False)
    engine, backend = ws.engine, ws.backend
    new = engine.embedder
    if a.character is not None:
        engine.existing_store(a.character)
        names = [a.character]
    else:
        names = engine.characters()
    targets = [c for c in names
               if engine.stores[c].stamp != new.stamp and not engine.stores[c].is_empty()]
    staging = Staging(backend, new.stamp)
    job = RevectorizeJob(new, staged=staging.load())
    resumed = sum(len(v) for v in job.staged.values())
    engine.revectorize_jobs[new.stamp] = job
    plain = next(x for x in engine.listeners if isinstance(x, BackendListener))
    writer = SwapWriter(plain, backend, model_id, dtype, engine,
                        ws.manager.mirror_many if ws.manager is not None else None)
    engine.listeners[engine.listeners.index(plain)] = writer
    sizes = {c: len(engine.stores[c].records) + len(engine.stores[c].trash) for c in targets}
    done_before = 0
    embedded = 0
    finished: list[str] = []
    try:
        with CtrlC() as ctrl_c, ctx.bar(f"re-embedding with {model_id}",
                                        total=sum(sizes.values())) as bar:
            for character in targets:
                offset = done_before

                def progress(done: int, total: int, offset: int = offset) -> None:
                    staging.save(job)
                    bar.n = offset + done
                    bar.refresh()

                report = engine.revectorize(character, new, batch_size=a.batch_size,
                                            progress=progress, cancel=lambda: ctrl_c.pressed)
                embedded += report.embedded
                finished.append(character)
                engine.revectorize_jobs[new.stamp] = job  # the swap ends the job; go on with it
                done_before += sizes[character]
            if not targets:  # nothing to embed: just select the model
                from omoide.workspace import save_model

                save_model(backend, model_id, dtype)
    except OmoideError as e:
        if e.code != "CANCELLED":
            raise
        staging.save(job)
        staged = sum(len(v) for v in job.staged.values())
        ctx.note(f"cancelled: {staged} new vectors are saved; run the same command again to "
                 f"resume ({len(finished)} of {len(targets)} characters switched)")
        if ctx.json:
            ctx.emit({"cancelled": True, "model": model_id, "dtype": dtype,
                      "characters": finished, "staged": staged})
        return EXIT_CANCELLED
    finally:
        if writer in engine.listeners:
            engine.listeners[engine.listeners.index(writer)] = plain
    still = engine.mismatched_characters()
    result = {"model": model_id, "dtype": dtype, "stamp": new.stamp, "characters": finished,
              "embedded": embedded, "resumed": resumed, "still_mismatched": still}
    if ctx.json:
        ctx.emit(result)
        return 0
    if finished:
        ctx.out(f"re-vectorized {', '.join(finished)} with {model_label(model_id, dtype)} "
                f"({embedded} texts embedded" + (f", {resumed} resumed" if resumed else "")
                + ")")
    else:
        ctx.out(f"nothing to re-embed; the workspace now uses {model_label(model_id, dtype)}")
    if still:
        ctx.out(f"still on another model: {', '.join(still)} (run revectorize again without "
                f"--character)")
    return 0
