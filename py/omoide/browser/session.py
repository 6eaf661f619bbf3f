"""The engine as the browser runs it: one ``MemoryEngine`` per worker, persisted to IndexedDB.

The worker starts a session with the selected model, feeds every stored character in
(``browser.restore``: records in slices, vectors straight into the kernels), and then calls
the rpc verbs registered here.
"""

from __future__ import annotations

import json
import time
from array import array
from dataclasses import replace
from typing import Any

from ..backends.http import HttpBackend, HttpConfig, server_key
from ..backends.manager import BackendManager
from ..embeddings.cache import CachedEmbedder, EmbeddingCache
from ..engine import MemoryEngine, exchange, validate
from ..engine.embedding import embed_memories
from ..engine.listener import Change
from ..engine.memory import Hit, Memory
from ..engine.revectorize import RevectorizeJob
from ..engine.supersede import settle_keys
from ..errors import OmoideError
from ..governance import Governor
from ..governance.llm import ChatClient, MemoryLLM
from ..keys import checked_endpoint
from . import (  # noqa: F401 - listing and revectorize_ahead register their verbs
    listing,
    revectorize_ahead,
    rpc,
)
from .backends import IndexedDBBackend, IndexedDBQueueStore, MirrorListener
from .embedder import BrowserEmbedder, parse_stamp
from .host import call_json, floats_from_js, to_js_floats
from .http import fetch_transport
from .persistence import IndexedDBListener
from .recall_stats import RecallStats
from .rpc import handler
from .wasm_bm25 import WasmScorer
from .wasm_kernel import wasm_kernel_factory

# User settings: name -> (default, minimum, maximum). Stored by the worker in IndexedDB.
SETTINGS: dict[str, tuple[float, float, float]] = {
    "dedup_threshold": (0.92, 0.5, 1.0),
    "hot_budget_chars": (5_000, 500, 200_000),
    # cold tier: above soft one maintenance pass (superseded entries and near-duplicates are
    # folded into the survivor and trashed), above hard passes until at or under soft
    # (governance.tiers.maintain_cold); soft must stay under hard
    "cold_soft_entries": (6_000, 100, 1_000_000),
    "cold_hard_entries": (10_000, 200, 2_000_000),
    "rrf_k": (60, 1, 1_000),
}
# The optional LLM (memory judge + refiner) of ingest: any OpenAI-compatible endpoint; and the
# user's own backup server (the reference server `python -m omoide.server` or compatible).
TEXT_SETTINGS = ("llm_endpoint", "llm_model", "llm_api_key", "backup_url", "backup_key")
URL_SETTINGS = ("llm_endpoint", "backup_url")
# Never shown back to the page in full (see ``masked``); the mask sent back keeps the key.
SECRET_SETTINGS = ("llm_api_key", "backup_key")
# int8 prefilter + exact rerank where it wins (wasm_kernel.INT8_FROM), exact below
KERNEL_OPTIONS: dict[str, Any] = {"mode": "auto"}


class Session:
    def __init__(self, model: str, dtype: str) -> None:
        self.recall_stats = RecallStats()
        self.listener = IndexedDBListener(self.recall_stats)
        self.mirror = MirrorListener()
        self.queue_store = IndexedDBQueueStore(load_queue, write_queue)
        self.backends: BackendManager | None = None
        self.backends_config: tuple[Any, ...] | None = None
        self.jobs: dict[str, dict[str, Any]] = {}  # backup / restore in steps
        # LRU + TTL cache keyed by (model stamp, query/passage, text): a repeated query (and
        # the revive check of recall) costs one embedding, and a model switch never reuses
        # another model's vector.
        self.cache = EmbeddingCache()
        self.engine = MemoryEngine(self.embedder(model, dtype),
                                   kernel=wasm_kernel_factory(**KERNEL_OPTIONS),
                                   bm25_scorer=WasmScorer(),
                                   listeners=[self.listener, self.mirror])
        self.listener.quarantined = self.quarantined
        self.governor = Governor(self.engine)
        self.settings: dict[str, Any] = {k: v[0] for k, v in SETTINGS.items()}
        self.settings |= dict.fromkeys(TEXT_SETTINGS)

    def quarantined(self, character: str) -> list[str]:
        return sorted(q["id"] for q in self.engine.quarantine.values()
                      if q["character_id"] == character)

    def embedder(self, model: str, dtype: str) -> CachedEmbedder:
        return CachedEmbedder(BrowserEmbedder(model, dtype), self.cache)


SESSION: Session | None = None


def session() -> Session:
    if SESSION is None:
        raise OmoideError.of("NOT_READY", what="the memory database")
    return SESSION


def start(model: str, dtype: str) -> None:
    global SESSION
    SESSION = Session(model, dtype)


def memory_dict(memory: Memory) -> dict[str, Any]:
    return memory.to_dict()


def hit_dict(hit: Hit) -> dict[str, Any]:
    return hit.to_dict()


@handler("memory_info")
def memory_info() -> dict[str, Any]:
    """Bytes of WebAssembly memory held by the vector kernels (live + trash), all characters."""
    total = 0
    for store in session().engine.stores.values():
        for kernel in (store.kernel, store.trash_kernel):
            total += int(getattr(kernel, "memory_bytes", 0))
    return {"kernel_bytes": total}


@handler("index_text_step")
def index_text_step(batch: int = 2_000, budget_ms: float | None = None) -> int:
    """Analyze up to ``batch`` texts left by the bulk load; with ``budget_ms``, as many as
    fit in that time instead (checked every 32 texts), so that a call waiting for the engine
    lock behind a step waits about that long at most. Returns how many are left."""
    if budget_ms is None:
        return _index_texts(batch)
    deadline = time.perf_counter() + budget_ms / 1000
    left = _index_texts(32)
    while left and time.perf_counter() < deadline:
        left = _index_texts(32)
    return left


def _index_texts(batch: int) -> int:
    left = 0
    for store in session().engine.stores.values():
        before = store.index_text(0)
        after = store.index_text(batch) if batch > 0 else before
        batch -= before - after
        left += after
    return left


def drop_character(character: str) -> None:
    """Forget a character's store (another tab removed its data); nothing is written."""
    session().engine.stores.pop(character, None)
    session().recall_stats.loaded(character, {})


def pending_commit() -> bool:
    """Whether ``flush`` has anything to write (changes, mirror ops, the mirror queue)."""
    s = SESSION
    return s is not None and bool(s.listener.pending or s.listener.pending_bulk
                                  or s.mirror.pending or s.queue_store.dirty is not None)


rpc.COMMIT_CHECKS.append(pending_commit)


@handler("flush")
def flush() -> int:
    """Commit the changes of the last call (the worker calls this after every call), with
    the mirror ops they make and the mirror queue, in one IndexedDB transaction."""
    if SESSION is None:
        return 0
    s = SESSION
    ops = s.mirror.take()
    if ops and s.backends is not None and s.backends.fallbacks:
        reload_queue(s)
        s.backends.mirror_many(ops)
    queue = s.queue_store.take_dirty()
    done = s.listener.flush(queue)
    if queue is not None:
        if done:
            s.queue_store.written(queue)
        else:
            s.queue_store.write(queue)
    return done


@handler("discard")
def discard() -> list[str]:
    """Drop what a failed call changed, uncommitted (the worker calls this instead of
    ``flush`` when a call fails): a failed call writes nothing. Answers the characters it
    touched, which the worker then reloads from IndexedDB (their memory is the disk's)."""
    if SESSION is None:
        return []
    s = SESSION
    touched = {c.character_id for c in s.listener.pending}
    touched |= {p["character"] for p in s.listener.pending_bulk if "character" in p}
    s.listener.discard()
    s.mirror.discard()
    s.queue_store.take_dirty()
    return sorted(touched)


# -- rpc verbs: the memory engine ---------------------------------------------------------


@handler("remember")
def remember(character: str, text: str, kind: str = "fact", importance: float = 0.5,
             key: str | None = None, meta: dict | None = None, context: str | None = None,
             conversation: str | None = None, turn: int | None = None) -> dict[str, Any]:
    memory = session().engine.remember(character, text, kind=kind, importance=importance,
                                       key=key, meta=meta, context=context,
                                       conversation=conversation, turn=turn)
    return memory_dict(memory)


@handler("remember_many")
def remember_many(character: str, items: list) -> list[dict[str, Any]]:
    return [memory_dict(m) for m in session().engine.remember_many(character, items)]


@handler("memories")
def memories(character: str) -> list[dict[str, Any]]:
    engine = session().engine
    if character not in engine.stores:
        return []
    return [memory_dict(m) for m in engine.memories(character)]


@handler("get")
def get(character: str, id: str) -> dict[str, Any]:  # noqa: A002 - the rpc field name
    return memory_dict(session().engine.get(character, id))


@handler("update")
def update(character: str, id: str, **fields: Any) -> dict[str, Any]:  # noqa: A002
    return memory_dict(session().engine.update(character, id, **fields))


@handler("forget")
def forget(character: str, id: str) -> dict[str, Any]:  # noqa: A002
    entry = session().engine.forget(character, id)
    return {"memory": memory_dict(entry.memory), "trashed_at": entry.trashed_at}


@handler("restore")
def restore(character: str, id: str) -> dict[str, Any]:  # noqa: A002
    return memory_dict(session().engine.restore(character, id))


@handler("trash")
def trash(character: str) -> list[dict[str, Any]]:
    engine = session().engine
    if character not in engine.stores:
        return []
    return [{"memory": memory_dict(e.memory), "trashed_at": e.trashed_at}
            for e in engine.trash(character)]


@handler("purge_trash")
def purge_trash(character: str) -> list[str]:
    return session().engine.purge_trash(character)


@handler("recall")
def recall(character: str, query: str, k: int = 10, mode: str = "hybrid",
           threshold: float | None = None, rrf_k: float | None = None,
           fusion: str | None = None, kinds: list[str] | None = None,
           count: bool = True, min_relevance: float | None = None,
           now: float | None = None, revive: bool | None = None) -> list[dict[str, Any]]:
    """Recall; in vector and hybrid mode, with ``revive`` (default: ``count``), a trashed
    memory that matches the query almost exactly (cosine >= 0.95, better than any live
    one) is revived first and flagged.

    A recall writes nothing: with ``count`` its hits' recall counts go up in memory and the
    worker adds them to the ``recalls`` table later (``recall_stats``); without it (the
    recall playground) nothing about the memories changes, and nothing comes back from the
    trash. Another app's recall (``web/bridge.js``) never revives: only the user brings back
    what the user forgot."""
    s = session()
    args = {"k": k, "mode": mode, "threshold": threshold, "fusion": fusion, "kinds": kinds,
            "min_relevance": min_relevance, "now": now,
            "rrf_k": s.settings["rrf_k"] if rrf_k is None else rrf_k, "touch": False}
    if mode == "fulltext" or not (count if revive is None else revive):
        hits, revived = s.engine.recall(character, query, **args), []
    else:
        result = s.governor.recall(character, query, **args)
        hits, revived = result.hits, result.revived
    if count and hits:
        store = s.engine.stores[hits[0].memory.character_id]
        hits = s.recall_stats.count(store, hits, s.engine.now())
    return [hit_dict(h) | {"revived": h.memory.id in revived} for h in hits]


@handler("stats")
def stats(character: str) -> dict[str, Any]:
    # a character the app names before its first memory: empty counts, as its audit
    return session().engine.stats(character, missing_ok=True)


@handler("engine_characters")
def engine_characters() -> list[dict[str, Any]]:
    engine = session().engine
    # after every change the page lists the characters: counts only, no memory read
    return [engine.stats(c, by_kind=False) for c in engine.characters()]


# -- settings --------------------------------------------------------------------------------


def checked_text(name: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 2_000:
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be a short text")
    value = value.strip()
    if name in URL_SETTINGS and not checked_url(value):
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be an http(s) URL")
    if name == "llm_endpoint" and value:  # shown back in full, and in every LLM error
        checked_endpoint(value, name)
    if name == "backup_url" and value:
        try:  # the backend's own rules: no user, password or token in it (shown in full)
            HttpConfig(value)
        except OmoideError as err:
            raise OmoideError.of("INVALID_ARGUMENT", name=name,
                                 reason=str(err.fields.get("reason"))) from None
    return value or None


def checked_url(value: str) -> bool:
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and " " not in value


def masked(value: str | None) -> str | None:
    """A secret as shown back: set or not, and at most its last 4 characters."""
    if not value:
        return None
    return "••••" + (value[-4:] if len(value) >= 12 else "")


def public_settings(values: dict[str, Any]) -> dict[str, Any]:
    return values | {k: masked(values.get(k)) for k in SECRET_SETTINGS}


def checked_setting(name: str, value: Any) -> Any:
    if name in TEXT_SETTINGS:
        return checked_text(name, value)
    if name not in SETTINGS:
        raise OmoideError.of("INVALID_ARGUMENT", name="setting", reason=f"unknown {name!r}")
    default, low, high = SETTINGS[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"must be a number from {low} to {high}")
    return int(value) if isinstance(default, int) else float(value)


@handler("settings")
def settings() -> dict[str, Any]:
    """The settings as the page sees them: secrets masked."""
    return public_settings(session().settings)


@handler("apply_settings")
def apply_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Validate every value first, then apply them all (never half of a change). Answers
    every setting in full: the worker stores this, the page gets ``settings``."""
    s = session()
    values = {k: v for k, v in values.items()
              if not (k in SECRET_SETTINGS and v is not None
                      and v == masked(s.settings.get(k)))}  # the mask sent back: unchanged
    checked = {name: checked_setting(name, value) for name, value in values.items()}
    if "backup_url" in checked and checked["backup_url"] is None:
        checked["backup_key"] = None  # no server, no key for it
    merged = s.settings | checked
    policy = replace(s.governor.policy, budget_chars=merged["hot_budget_chars"],
                     cold_soft_entries=merged["cold_soft_entries"],
                     cold_hard_entries=merged["cold_hard_entries"])  # raises: nothing applied
    s.settings.update(checked)
    s.governor.dedup_threshold = s.settings["dedup_threshold"]
    s.governor.policy = policy
    s.governor.llm = configured_llm(s.settings)
    configure_backends(s)
    return dict(s.settings)


def configured_llm(values: dict[str, Any]) -> MemoryLLM | None:
    """The memory judge when an endpoint and a model are set; ingest degrades to the pattern
    path (with the reason in its report) whenever it fails."""
    if not values.get("llm_endpoint") or not values.get("llm_model"):
        return None
    client = ChatClient(values["llm_endpoint"], values["llm_model"],
                        api_key=values.get("llm_api_key"), transport=fetch_transport)
    return MemoryLLM(client)


# -- backends: IndexedDB (primary) and the user's backup server (mirror) --------------------

BACKUP_TIMEOUT_S = 10.0  # the worker holds the engine lock while it waits
BACKUP_PAGE = 500


def load_queue() -> list[dict[str, Any]]:
    return call_json("queue_load", {})


def write_queue(ops: list[dict[str, Any]]) -> None:
    call_json("queue_save", ops)


def reload_queue(s: Session) -> BackendManager:
    """The queue as IndexedDB holds it now (another tab may have pumped it since)."""
    manager = backends(s)
    manager.reload()
    return manager


def configure_backends(s: Session) -> None:
    """(Re)build the manager when the backup server's URL or key changed: IndexedDB first,
    the server as the fallback every change is mirrored to. Ops queued for another server
    (the URL changed) wait for that one (``server_key``, as under CPython; the maintenance
    tab shows them and can drop them): they followed the new server, and the one they were
    queued for never got them (a memory forgotten while it was down came back live from
    it on a restore)."""
    url, key = s.settings.get("backup_url"), s.settings.get("backup_key")
    if s.backends is not None and s.backends_config == (url, key):
        return
    fallbacks = []
    if url:
        config = HttpConfig(url, api_key=key, timeout=BACKUP_TIMEOUT_S)
        fallbacks.append(HttpBackend(config, transport=fetch_transport,
                                     name=f"server:{url}"))
    primary = IndexedDBBackend(lambda: s.engine,
                               characters=lambda: call_json("character_names", {}))
    s.backends = BackendManager(primary, fallbacks, queue_store=s.queue_store,
                                server_key=server_key)
    s.backends_config = (url, key)


def backends(s: Session) -> BackendManager:
    if s.backends is None:
        configure_backends(s)
    assert s.backends is not None
    return s.backends


def server(s: Session) -> HttpBackend:
    manager = backends(s)
    if not manager.fallbacks:
        raise OmoideError.of("BACKEND_CONFIG", reason="no backup server is set (backup_url)")
    return manager.fallbacks[0]  # type: ignore[return-value]


@handler("backends_status")
def backends_status() -> list[dict[str, Any]]:
    """Each backend: name, role, ok (None: not checked yet), last_error, last_checked,
    latency_ms and queued (mirror ops waiting for it)."""
    manager = reload_queue(session())
    primary = manager.states[manager.primary.name]
    if primary.last_checked is None:  # local and cheap: never shown as unknown
        ok, answer = manager._attempt(primary, manager.primary.health)
        primary.last_checked = manager.clock()
        primary.latency_ms = answer.get("latency_ms") if ok else None
    return manager.status()


@handler("backends_drop_waiting")
def backends_drop_waiting(server: str) -> dict[str, Any]:
    """Drop the changes waiting for ``server`` (a ``waiting`` row's ``server``: a backup
    server no longer set here), at the user's word: that server will not get them (a full
    "Back up now" to it later fills it); every memory stays here. Answers how many were
    dropped and the new status."""
    if not isinstance(server, str) or not server:
        raise OmoideError.of("INVALID_ARGUMENT", name="server", reason="not a server")
    manager = reload_queue(session())
    dropped = manager.drop_waiting(server)
    return {"dropped": sum(dropped.values()), "backends": manager.status()}


@handler("backends_check")
def backends_check() -> list[dict[str, Any]]:
    """Health of every backend now; a server that answers again gets its queue at once."""
    manager = reload_queue(session())
    status = manager.check_health()
    due_now({b["name"] for b in status if b["role"] == "fallback" and b["ok"]})
    return status


def due_now(targets: set[str]) -> None:
    """The queued ops of ``targets`` due now, saved (written at the call's commit): set in
    memory only, they were read back from IndexedDB by the next call with their backoff,
    and a server that answered again waited up to 5 minutes for its changes."""
    manager = session().backends
    if manager is not None and targets:
        manager.due_now(targets)


@handler("put_character")
def put_character(row: dict[str, Any]) -> dict[str, Any]:
    """A character's row of IndexedDB ``characters`` (a new character, a rename, a deletion
    or a restore), written at this call's commit with the backup server's ``name`` op (sent
    by the pump with the name and deletion IndexedDB holds then) in ONE transaction: both
    or neither. The op was queued by a call of its own after the row was stored, and only
    logged when that failed: the server kept the old name, or held a deleted character
    live, and a restore from it brought that back."""
    if not isinstance(row, dict):
        raise OmoideError.of("INVALID_ARGUMENT", name="row", reason="not an object")
    character = validate.character_id(row.get("id"))
    if not isinstance(row.get("name"), str):
        raise OmoideError.of("INVALID_ARGUMENT", name="name", reason="not a string")
    row = dict(row) | {"deleted_at": validate.optional_timestamp(row.get("deleted_at"),
                                                                 "deleted_at")}
    s = session()
    s.listener.add_bulk({"op": "character", "character": character, "row": row})
    if backends(s).fallbacks:
        reload_queue(s).mirror({"op": "name", "id": character})
    return row


@handler("backends_pump")
def backends_pump(force: bool = False) -> dict[str, Any]:
    """Mirror the due queued changes (``force``: every queued change, backoff or not)."""
    manager = reload_queue(session())
    if force:  # refused ones too: the user asks to send everything again
        manager.retry({b.name for b in manager.fallbacks})
    done = manager.pump()
    return {"mirrored": done, "queued": len(manager.queue), "backends": manager.status()}


def mark(s: Session, backend: Any, err: Exception | None) -> None:
    state = backends(s).states.get(backend.name)
    if state is not None:
        state.ok, state.last_error = err is None, None if err is None else str(err)


def server_ids(backend: HttpBackend, character: str | None, with_vectors: bool = False
               ) -> list[dict[str, Any]]:
    """Every record the server holds (of one character, or all), page by page."""
    out: list[dict[str, Any]] = []
    while True:
        page = backend.list(character_id=character, trashed=None, limit=BACKUP_PAGE,
                            offset=len(out), with_vectors=with_vectors) or {}
        items = page.get("items") or []
        out += items
        if not items or len(out) >= int(page.get("total") or 0):
            return out


def names_unsupported(err: OmoideError) -> bool:
    """A server without the display-name routes (an older or another server): its memories
    are backed up and restored all the same, the names are said to be left out."""
    return err.code == "BACKEND_HTTP" and err.fields.get("status") in (404, 405)


def send_names(backend: HttpBackend, names: dict[str, str] | None,
               deleted: dict[str, float] | None = None) -> dict[str, Any]:
    """The app's display names (its IndexedDB ``characters``, which the worker passes) to
    the server, each with whether the user deleted it (``deleted``: id -> when); a live
    character named by its id has none to send, unless the server holds it as deleted
    (restored in the app since)."""
    deleted = deleted or {}
    try:
        undeleted = set(backend.deleted_characters()) - set(deleted)
        given = {c: n for c, n in (names or {}).items()
                 if c != n or c in deleted or c in undeleted}
        for character, name in sorted(given.items()):
            backend.set_character_name(character, name, deleted.get(character))
    except OmoideError as err:
        if not names_unsupported(err):
            raise
        return {"named": 0, "names_error": str(err)}
    return {"named": len(given)}


def server_names(backend: HttpBackend, characters: list[str] | None,
                 job: dict[str, Any]) -> dict[str, tuple[str, float | None]]:
    """The server's display names of the restored characters, and when each deleted one
    was deleted (a character the user deleted comes back deleted, its memories kept, as
    it was; each name and time checked as input)."""
    try:
        names, deleted = backend.character_names(), backend.deleted_characters()
    except OmoideError as err:
        if not names_unsupported(err):
            raise
        job["errors"].append(f"display names: {err}")
        return {}
    out = {}
    for character, name in names.items():
        try:
            when = deleted.get(character)
            out[validate.character_id(character)] = (
                validate.character_name(name),
                None if when is None else validate.timestamp(when, "deleted_at"))
        except OmoideError:
            continue
    return {c: (n, when) for c, (n, when) in out.items()
            if (c != n or when is not None) and (not characters or c in characters)}


@handler("backup_step")
def backup_step(cursor: int = 0, batch: int = 100, names: dict[str, str] | None = None,
                deleted: dict[str, float] | None = None) -> dict[str, Any]:
    """``backup_now`` in steps (the worker loops; other calls run between steps): every
    local memory of every character, live and trashed, is upserted to the server; at the
    last step the characters' display names (``names``, by id) and which the user deleted
    (``deleted``, id -> when)."""
    s = session()
    backend, primary = server(s), backends(s).primary
    job = s.jobs.get("backup")
    try:
        if cursor == 0 or job is None:
            ids = [i for c in s.engine.characters()
                   for i in sorted([*s.engine.stores[c].records, *s.engine.stores[c].trash])]
            on_server = {r["id"] for r in server_ids(backend, None)}
            job = {"ids": ids, "on_server": on_server, "created": 0, "updated": 0,
                   "erased": sorted(on_server & forgotten_ids())}
            s.jobs["backup"] = job
        for memory_id in job["ids"][cursor:cursor + batch]:
            record = primary.get(memory_id, with_vector=True)
            if record is None:  # gone since the backup started
                continue
            # the character goes along: a server holding the id under another one refuses
            fields = {k: v for k, v in record.items() if k != "id"}
            if memory_id in job["on_server"] and backend.update(memory_id, fields) is not None:
                job["updated"] += 1
                continue
            try:
                backend.create(record)
                job["created"] += 1
            except OmoideError as err:
                # mirrored since the first step read the server's ids (the pump runs between
                # steps, in any tab): the server holds it now, so it is an update
                if err.code != "BACKEND_CONFLICT" or backend.update(memory_id, fields) is None:
                    raise
                job["updated"] += 1
        done = min(cursor + batch, len(job["ids"]))
        finished = done >= len(job["ids"])
        named = send_names(backend, names, deleted) if finished else {}
        if finished:
            job["deleted"] = erase_forgotten(s, backend, job["erased"])
    except OmoideError as err:
        mark(s, backend, err)
        raise
    mark(s, backend, None)
    if finished:
        s.jobs.pop("backup", None)
        # every memory went as it is now: the changes the server refused (kept in the
        # queue, holding nothing up) go again at the next pump
        reload_queue(s).retry()
    return {"done": done, "total": len(job["ids"]), "created": job["created"],
            "updated": job["updated"], "deleted": job.get("deleted", 0),
            "finished": finished, **named}


def forgotten_ids() -> set[str]:
    """The ids of the memories purged in this browser (IndexedDB keeps each id, never its
    text, from the purge's own transaction on): a server set when the purge's delete went
    elsewhere still holds the memory."""
    return set(call_json("forgotten_ids", {}))


def erase_forgotten(s: Session, backend: HttpBackend, ids: list[str]) -> int:
    """Delete from the server its copies of memories purged here, unless the id is held here
    again (imported since): a forget for good is one on every server "Back up now" reaches,
    not only on the one set when it was made."""
    held = held_ids(s)
    return sum(1 for memory_id in ids if memory_id not in held and backend.delete(memory_id))


def held_ids(s: Session) -> set[str]:
    """Every memory id this browser holds, live or in the trash, of every character."""
    return {i for st in s.engine.stores.values() for i in (*st.records, *st.trash)}


@handler("restore_step")
def restore_step(cursor: int = 0, batch: int = 64,
                 characters: list[str] | None = None) -> dict[str, Any]:
    """``backup_restore`` in steps: the server's records (with vectors) of the given
    characters (default: all) that the browser lacks are imported. A vector is reused only
    when its stamp is the selected model's; otherwise the text is embedded again."""
    s = session()
    backend = server(s)
    job = s.jobs.get("restore")
    try:
        if cursor == 0 or job is None:
            records = []
            for character in characters or [None]:
                records += server_ids(backend, character, with_vectors=True)
            records.sort(key=lambda r: (str(r.get("character_id")), str(r.get("id"))))
            # What the browser holds now: one of these gone by a later step was forgotten
            # for good meanwhile (here or in another tab), never brought back from the
            # server's list of the first step (a purged secret came back, browser-only).
            held = held_ids(s)
            # and what was purged here while the server was unreachable: its delete is still
            # queued, the server's copy is stale (a purged secret came back live); one queued
            # while another server was set waits for this one (``adopt``) and counts too
            held |= {op["id"] for op in reload_queue(s).queue if op.get("op") == "delete"}
            # and every memory purged here: its delete went to the server set then, which may
            # not be this one (the backup URL changed since), whose copy is stale
            held |= forgotten_ids()
            job = {"records": records, "held": held, "imported": 0, "reused": 0,
                   "reembedded": 0, "skipped": 0, "failed": 0, "errors": [],
                   "characters": []}
            # the names first, in this step's transaction: a character restored here is
            # made with its name, not its id; a name this browser holds is kept
            job["named"] = server_names(backend, characters, job)
            for character, (name, deleted_at) in sorted(job["named"].items()):
                s.listener.add_bulk({"op": "name", "character": character, "name": name,
                                     "deleted_at": deleted_at}, first=True)
            s.jobs["restore"] = job
    except OmoideError as err:
        mark(s, backend, err)
        raise
    mark(s, backend, None)
    chunk = job["records"][cursor:cursor + batch]
    by_character: dict[str, list[dict[str, Any]]] = {}
    for record in chunk:
        character = record.get("character_id")
        if not isinstance(character, str):  # checked with its record below, where it has one
            job["failed"] += 1
            job["errors"].append(f"{record.get('id')!s:.40}: invalid character_id")
            continue
        by_character.setdefault(character, []).append(record)
    reused_ids: set[str] = set()
    for character, records in by_character.items():
        try:
            reused_ids |= restore_records(s, job, character, records)
        except OmoideError as err:
            job["failed"] += len(records)
            job["errors"].append(f"{character}: {err}")
    # A memory restored with the server's own vector is exactly what the server holds:
    # nothing to mirror back. A re-embedded one is (its new vector and stamp).
    s.mirror.pending = [op for op in s.mirror.pending if op.get("id") not in reused_ids]
    done = min(cursor + batch, len(job["records"]))
    finished = done >= len(job["records"])
    if finished:
        s.jobs.pop("restore", None)
    return {"done": done, "total": len(job["records"]), "finished": finished,
            "named": len(job["named"]),
            **{k: job[k] for k in ("imported", "reused", "reembedded", "skipped", "failed",
                                   "errors", "characters")}}


def _elsewhere(engine: MemoryEngine, character: str, memory_id: str,
               job: dict[str, Any]) -> bool:
    """A backup record whose id another character holds (or a quarantined row): never put
    under this one as well (an id names one memory); counted as failed."""
    owner = exchange.owner_of(engine, memory_id)
    if (owner is not None and owner != character) or memory_id in engine.quarantine:
        job["failed"] += 1
        return True
    return False


def restore_records(s: Session, job: dict[str, Any], character: str,
                    records: list[dict[str, Any]]) -> set[str]:
    engine = s.engine
    checked = []
    for r in records:  # the server's records are input like any other: the record schema
        try:
            checked.append(validate.record(r | {"character_id": character},
                                           max_text_length=engine.max_text_length))
        except OmoideError:
            job["failed"] += 1
    known = engine.stores.get(character)
    existing = set(known.records) | set(known.trash) if known else set()
    records = [r for r in checked if not _elsewhere(engine, character, r["id"], job)]
    fresh = [r for r in records
             if r["id"] not in existing and r["id"] not in job.get("held", ())]
    job["skipped"] += len(records) - len(fresh)
    if not fresh:
        return set()
    store = engine.writable_store(character)  # MODEL_MISMATCH: re-vectorize it first
    stamp = engine.embedder.stamp

    def reusable(r: dict[str, Any]) -> bool:
        v = r.get("vector")
        return r.get("model") == stamp and isinstance(v, list) and len(v) == store.dimension

    need = [r for r in fresh if not reusable(r)]
    embedded = dict(zip([r["id"] for r in need],
                        embed_memories(engine.embedder,
                                       [(r["text"], r.get("context")) for r in need]),
                        strict=True)) if need else {}
    for r in fresh:
        memory = Memory.from_dict({k: v for k, v in r.items()
                                   if k in Memory.__dataclass_fields__}
                                  | {"character_id": character, "model": stamp})
        store.put(memory, r["vector"] if r["id"] not in embedded else embedded[r["id"]])
        if r.get("trashed_at") is not None:
            store.move_to_trash(memory.id, float(r["trashed_at"]))
    # one key, one live memory: the newest holder stays, the others are its history (the
    # restore left the backup's holder live beside this browser's, as an import does not)
    job["superseded"] = job.get("superseded", 0) + len(settle_keys(
        store, [r["key"] for r in fresh if r.get("trashed_at") is None], engine.now(),
        "same key (restored from the backup)"))
    job["imported"] += len(fresh)
    job["reembedded"] += len(need)
    job["reused"] += len(fresh) - len(need)
    if character not in job["characters"]:
        job["characters"].append(character)
    return {r["id"] for r in fresh} - set(embedded)


# -- governance --------------------------------------------------------------------------


@handler("ingest")
def ingest(character: str, messages: list | str, dry_run: bool = True, at: Any = None,
           conversation: str | None = None) -> dict[str, Any]:
    return session().governor.ingest(character, messages, dry_run=dry_run, at=at,
                                     conversation=conversation).to_dict()


@handler("summarize")
def summarize(character: str, dry_run: bool = True,
              older_than_days: float = 30.0) -> dict[str, Any]:
    report = session().governor.summarize(character, dry_run=dry_run,
                                          older_than_days=older_than_days)
    return report.to_dict()


@handler("audit")
def audit(character: str) -> dict[str, Any]:
    # the app lists a character from its first name, before its first memory
    return session().governor.audit(character, missing_ok=True).to_dict()


@handler("hot_context")
def hot_context(character: str) -> str:
    return session().governor.hot_context(character)


# -- the model: stamp state and re-vectorization -------------------------------------------


@handler("model_state")
def model_state() -> dict[str, Any]:
    engine = session().engine
    e = engine.embedder
    jobs = [{"stamp": s, "staged": sum(len(v) for v in j.staged.values())}
            for s, j in engine.revectorize_jobs.items()]
    return {"selected": {"model": e.model_id, "dtype": e.dtype}, "stamp": e.stamp,
            "mismatched": engine.mismatched_characters(), "jobs": jobs}


@handler("select_model")
def select_model(model: str, dtype: str) -> dict[str, Any]:
    """Select a model. A re-vectorization to any other model is abandoned: its staged
    vectors go (here and, in the same call, from IndexedDB: ``store.selectModel``), or they
    were kept for good, loaded at every start and never shown (the tab shows the job of the
    selected model only)."""
    s = session()
    s.engine.select_embedder(s.embedder(model, dtype))
    stamp = s.engine.embedder.stamp
    for other in [k for k in s.engine.revectorize_jobs if k != stamp]:
        del s.engine.revectorize_jobs[other]
    return model_state()


@handler("revectorize_step")
def revectorize_step(model: str, dtype: str, character: str | None = None, batches: int = 1,
                     batch_size: int = 16) -> dict[str, Any]:
    """Embed up to ``batches`` batches, persist them as staged, and swap when all are done.

    One step is one rpc call, so recall and writes interleave with a long re-vectorization
    (the worker runs steps in a loop until ``finished`` or cancelled)."""
    s = session()
    target = BrowserEmbedder(model, dtype)
    staging(s, target.stamp)
    left = [batches]
    state = {"done": 0, "total": 0}

    def cancel() -> bool:
        left[0] -= 1
        return left[0] < 0

    def progress(done: int, total: int) -> None:
        state.update(done=done, total=total)
        if done > 0:
            persist_staged(s, target.stamp)

    try:
        s.engine.revectorize(character, target, batch_size=batch_size, progress=progress,
                             cancel=cancel)
    except OmoideError as err:
        if err.code != "CANCELLED":
            raise
        return state | {"finished": False}
    return state | {"finished": True, "selected": target.stamp}


def staging(s: Session, stamp: str) -> RevectorizeJob:
    """The job of ``stamp``, collecting what it stages so that each batch is persisted."""
    model, dtype, _ = parse_stamp(stamp)
    job = s.engine.revectorize_jobs.setdefault(stamp, RevectorizeJob(BrowserEmbedder(model,
                                                                                     dtype)))
    if job.fresh is None:
        job.fresh = []
    return job


def persist_staged(s: Session, stamp: str) -> None:
    """Stage the vectors embedded since the last call in IndexedDB: ids and texts as JSON,
    the vectors as one Float32Array (O(batch), whatever the size of the job)."""
    job = s.engine.revectorize_jobs.get(stamp)
    if job is None or not job.fresh:
        return
    fresh, job.fresh = job.fresh, []
    flat = array("f")
    items = []
    for character, memory_id in fresh:
        text, vector = job.staged[character][memory_id]
        items.append({"character": character, "id": memory_id, "text": text})
        flat.extend(vector)
    call_json("stage", {"stamp": stamp, "dimension": len(flat) // len(items), "items": items},
              to_js_floats(flat))


def load_staged(stamp: str, items_json: str, vectors: Any) -> int:
    """Resume a re-vectorization after a reload from the vectors staged in IndexedDB
    (``items``: character, id, text; ``vectors``: their rows, one Float32Array)."""
    job = staging(session(), stamp)
    items = json.loads(items_json)
    flat = floats_from_js(vectors)
    dim = len(flat) // len(items) if items else 0
    for n, item in enumerate(items):
        row = flat[n * dim:(n + 1) * dim].tolist()
        job.staged.setdefault(item["character"], {})[item["id"]] = (item["text"], row)
    return len(items)


# -- export / import (the same JSON as the CLI: omoide.engine.exchange) -----------------------


@handler("export_data")
def export_data(characters: list[str] | None = None, with_vectors: bool = False,
                names: dict | None = None) -> dict[str, Any]:
    return exchange.export_data(session().engine, characters, with_vectors=with_vectors,
                                names=names)


def apply_change(change: Change) -> None:  # re-exported for tests of the seam
    session().engine.apply_change(change)
