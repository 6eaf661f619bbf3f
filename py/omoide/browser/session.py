"""The engine as the browser runs it: one ``MemoryEngine`` per worker, persisted to IndexedDB.

The worker starts a session with the selected model, feeds every stored character in with
``load_character`` (records + vectors read from IndexedDB), and then calls the rpc verbs
registered here. Memories whose vectors were lost (a damaged segment) are re-embedded with the
model of their own index, and reported as a notice; nothing is dropped silently.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

from ..embeddings.cache import CachedEmbedder, EmbeddingCache
from ..engine import MemoryEngine, exchange
from ..engine.listener import Change
from ..engine.memory import Hit, Memory, TrashEntry
from ..engine.revectorize import RevectorizeJob
from ..errors import OmoideError
from ..governance import Governor
from ..governance.llm import ChatClient, MemoryLLM
from .embedder import BrowserEmbedder, parse_stamp
from .host import call_json, floats_from_js
from .http import fetch_transport
from .persistence import IndexedDBListener
from .rpc import handler
from .wasm_kernel import wasm_kernel_factory

# User settings: name -> (default, minimum, maximum). Stored by the worker in IndexedDB.
SETTINGS: dict[str, tuple[float, float, float]] = {
    "dedup_threshold": (0.92, 0.5, 1.0),
    "hot_budget_chars": (5_000, 500, 200_000),
    "rrf_k": (60, 1, 1_000),
}
# The optional LLM (memory judge + refiner) of ingest: any OpenAI-compatible endpoint.
TEXT_SETTINGS = ("llm_endpoint", "llm_model", "llm_api_key")


class Session:
    def __init__(self, model: str, dtype: str) -> None:
        self.listener = IndexedDBListener()
        # LRU + TTL cache keyed by (model stamp, query/passage, text): a repeated query (and
        # the revive check of recall) costs one embedding, and a model switch never reuses
        # another model's vector.
        self.cache = EmbeddingCache()
        self.engine = MemoryEngine(self.embedder(model, dtype), kernel=wasm_kernel_factory(),
                                   listeners=[self.listener])
        self.governor = Governor(self.engine)
        self.staged_keys: set[tuple[str, str, str]] = set()
        self.settings: dict[str, Any] = {k: v[0] for k, v in SETTINGS.items()}
        self.settings |= dict.fromkeys(TEXT_SETTINGS)

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
    return asdict(hit)


def load_character(payload_json: str, vectors: Any) -> dict[str, Any]:
    """Rebuild one character from IndexedDB without writing anything back, then repair."""
    data = json.loads(payload_json)
    engine = session().engine
    character, dim = data["character"], data["dimension"]
    flat = floats_from_js(vectors)
    by_id = {i: flat[n * dim : (n + 1) * dim].tolist() for n, i in enumerate(data["ids"])}
    engine.stores.pop(character, None)
    store = engine.new_store(character, stamp=data["stamp"], model_id=data["model_id"],
                             dimension=dim)
    engine.stores[character] = store
    missing = [r for r in data["records"] if r["id"] not in by_id]
    live, trashed = [], []
    for record in data["records"]:
        if record["id"] not in by_id:
            continue
        trashed_at = record.pop("trashed_at", None)
        memory = Memory.from_dict(record)
        if trashed_at is None:
            live.append((memory, by_id[memory.id]))
        else:
            trashed.append(TrashEntry(memory, by_id[memory.id], trashed_at))
    store.load(live, trashed)
    repaired = repair(store, missing)
    flush()
    return {"character": character, "loaded": len(data["records"]) - len(missing),
            "repaired": repaired, "corrupt_segments": data["corrupt_segments"]}


def repair(store: Any, missing: list[dict[str, Any]]) -> int:
    """Re-embed memories whose vector was lost, with the model of their own index."""
    if not missing:
        return 0
    model, dtype, _ = parse_stamp(store.stamp)
    vectors = BrowserEmbedder(model, dtype).embed_passages([r["text"] for r in missing])
    for record, vector in zip(missing, vectors, strict=True):
        trashed_at = record.pop("trashed_at", None)
        memory = Memory.from_dict(record)
        store.put(memory, vector)  # persisted: the segment row is written again
        if trashed_at is not None:
            store.move_to_trash(memory.id, trashed_at)
    return len(missing)


@handler("flush")
def flush() -> int:
    """Commit the changes of the last call (the worker calls this after every call)."""
    return session().listener.flush() if SESSION is not None else 0


# -- rpc verbs: the memory engine ---------------------------------------------------------


@handler("remember")
def remember(character: str, text: str, kind: str = "fact", importance: float = 0.5,
             key: str | None = None, meta: dict | None = None) -> dict[str, Any]:
    memory = session().engine.remember(character, text, kind=kind, importance=importance,
                                       key=key, meta=meta)
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
           fusion: str = "adaptive", kinds: list[str] | None = None) -> list[dict[str, Any]]:
    """Recall; in vector and hybrid mode a trashed memory that matches the query almost
    exactly (cosine >= 0.95, better than any live one) is revived first and flagged."""
    s = session()
    args = {"k": k, "mode": mode, "threshold": threshold, "fusion": fusion, "kinds": kinds,
            "rrf_k": s.settings["rrf_k"] if rrf_k is None else rrf_k}
    if mode == "fulltext":
        hits, revived = s.engine.recall(character, query, **args), []
    else:
        result = s.governor.recall(character, query, **args)
        hits, revived = result.hits, result.revived
    return [hit_dict(h) | {"revived": h.memory.id in revived} for h in hits]


@handler("stats")
def stats(character: str) -> dict[str, Any]:
    return session().engine.stats(character)


@handler("engine_characters")
def engine_characters() -> list[dict[str, Any]]:
    engine = session().engine
    return [engine.stats(c) for c in engine.characters()]


# -- settings --------------------------------------------------------------------------------


def checked_text(name: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 2_000:
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be a short text")
    if name == "llm_endpoint" and not value.startswith(("http://", "https://")):
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be an http(s) URL")
    return value.strip()


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
    return dict(session().settings)


@handler("apply_settings")
def apply_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Validate every value first, then apply them all (never half of a change)."""
    s = session()
    checked = {name: checked_setting(name, value) for name, value in values.items()}
    s.settings.update(checked)
    s.governor.dedup_threshold = s.settings["dedup_threshold"]
    s.governor.policy = replace(s.governor.policy, budget_chars=s.settings["hot_budget_chars"])
    s.governor.llm = configured_llm(s.settings)
    return dict(s.settings)


def configured_llm(values: dict[str, Any]) -> MemoryLLM | None:
    """The memory judge when an endpoint and a model are set; ingest degrades to the pattern
    path (with the reason in its report) whenever it fails."""
    if not values.get("llm_endpoint") or not values.get("llm_model"):
        return None
    client = ChatClient(values["llm_endpoint"], values["llm_model"],
                        api_key=values.get("llm_api_key"), transport=fetch_transport)
    return MemoryLLM(client)


# -- governance --------------------------------------------------------------------------


@handler("ingest")
def ingest(character: str, messages: list | str, dry_run: bool = True) -> dict[str, Any]:
    return session().governor.ingest(character, messages, dry_run=dry_run).to_dict()


@handler("summarize")
def summarize(character: str, dry_run: bool = True,
              older_than_days: float = 30.0) -> dict[str, Any]:
    report = session().governor.summarize(character, dry_run=dry_run,
                                          older_than_days=older_than_days)
    return report.to_dict()


@handler("audit")
def audit(character: str) -> dict[str, Any]:
    return session().governor.audit(character).to_dict()


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
    s = session()
    s.engine.select_embedder(s.embedder(model, dtype))
    return model_state()


@handler("revectorize_step")
def revectorize_step(model: str, dtype: str, character: str | None = None, batches: int = 1,
                     batch_size: int = 16) -> dict[str, Any]:
    """Embed up to ``batches`` batches, persist them as staged, and swap when all are done.

    One step is one rpc call, so recall and writes interleave with a long re-vectorization
    (the worker runs steps in a loop until ``finished`` or cancelled)."""
    s = session()
    target = BrowserEmbedder(model, dtype)
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
    s.staged_keys = {k for k in s.staged_keys if k[0] != target.stamp}
    return state | {"finished": True, "selected": target.stamp}


def persist_staged(s: Session, stamp: str) -> None:
    job = s.engine.revectorize_jobs.get(stamp)
    if job is None:
        return
    items = [(c, i, text, vector) for c, rows in job.staged.items()
             for i, (text, vector) in rows.items() if (stamp, c, i) not in s.staged_keys]
    if not items:
        return
    payload = [{"character": c, "id": i, "text": text, "vector": vector}
               for c, i, text, vector in items]
    call_json("stage", {"stamp": stamp, "items": payload})
    s.staged_keys.update((stamp, c, i) for c, i, _, _ in items)


def load_staged(stamp: str, items_json: str) -> int:
    """Resume a re-vectorization after a reload from the vectors staged in IndexedDB."""
    s = session()
    model, dtype, _ = parse_stamp(stamp)
    job = s.engine.revectorize_jobs.setdefault(stamp, RevectorizeJob(BrowserEmbedder(model,
                                                                                     dtype)))
    items = json.loads(items_json)
    for item in items:
        job.staged.setdefault(item["character"], {})[item["id"]] = (item["text"], item["vector"])
        s.staged_keys.add((stamp, item["character"], item["id"]))
    return len(items)


# -- export / import (the same JSON as the CLI: omoide.engine.exchange) -----------------------


@handler("export_data")
def export_data(characters: list[str] | None = None, with_vectors: bool = False,
                names: dict | None = None) -> dict[str, Any]:
    return exchange.export_data(session().engine, characters, with_vectors=with_vectors,
                                names=names)


@handler("import_data")
def import_data(data: Any) -> dict[str, Any]:
    return exchange.import_data(session().engine, data)


def apply_change(change: Change) -> None:  # re-exported for tests of the seam
    session().engine.apply_change(change)
