"""``MemoryEngine``: the public object. It owns the per-character stores and the selected
embedding model, and delegates every verb to its own module."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from datetime import datetime
from typing import Any, TypeVar

from omoide.engine import forget as forget_module
from omoide.engine import recall as recall_module
from omoide.engine import remember as remember_module
from omoide.engine import revectorize as revectorize_module
from omoide.engine import snapshot as snapshot_module
from omoide.engine import update as update_module
from omoide.engine import validate
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import PostingsScorer
from omoide.engine.embedding import Embedder
from omoide.engine.listener import Change, ChangeListener, StaleState
from omoide.engine.memory import Hit, Memory, TrashEntry
from omoide.engine.revectorize import Progress, RevectorizeJob, RevectorizeReport
from omoide.engine.store import CharacterStore
from omoide.errors import OmoideError
from omoide.kernels import KernelFactory, default_kernel, default_scorer

DEFAULT_MAX_TEXT_LENGTH = validate.MAX_TEXT_LENGTH

_F = TypeVar("_F", bound=Callable[..., Any])
_T = TypeVar("_T")


# How often the outermost verb is run again when other processes keep committing between
# its catch-up and its first write (``StaleState``); then BACKEND_BUSY.
STALE_RETRIES = 8


def on_fresh_state(verb: _F) -> _F:
    """A public verb of an object with ``fresh()`` (the engine, the governor) runs on the
    freshest state: see ``MemoryEngine.fresh`` and ``MemoryEngine.run_fresh``."""

    @functools.wraps(verb)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        engine = self if isinstance(self, MemoryEngine) else self.engine
        return engine.run_fresh(lambda: verb(self, *args, **kwargs), self.fresh)

    return call  # type: ignore[return-value]


class MemoryEngine:
    def __init__(
        self,
        embedder: Embedder,
        *,
        kernel: KernelFactory | None = None,
        clock: Callable[[], float] | None = None,
        max_text_length: int = DEFAULT_MAX_TEXT_LENGTH,
        bm25_k1: float = 1.2,
        bm25_b: float = 0.5,
        bm25_context_weight: float = 0.75,
        bm25_context_b: float = 0.3,
        bm25_scorer: PostingsScorer | None = None,
        analyzer: Callable[[str], list[str]] = analyze,
        listeners: Iterable[ChangeListener] = (),
    ) -> None:
        self.embedder = embedder
        self.kernel_factory: KernelFactory = kernel or default_kernel()
        self.clock = clock or time.time
        self.max_text_length = max_text_length
        self.bm25_k1 = bm25_k1
        # BM25F (engine/bm25.py): the text field's b, the context field's weight (the text's
        # is 1) and b, chosen on pooled dev data by the rule of bench/recall_bm25f.py
        # (BENCHMARKS.md, Recall v2, BM25F)
        self.bm25_b = bm25_b
        self.bm25_context_weight = bm25_context_weight
        self.bm25_context_b = bm25_context_b
        # None: numpy's under CPython, else PureScorer (the browser passes the kernel's)
        self.bm25_scorer = bm25_scorer or default_scorer()
        self.analyzer = analyzer
        self.listeners: list[ChangeListener] = list(listeners)
        self.stores: dict[str, CharacterStore] = {}
        self.revectorize_jobs: dict[str, RevectorizeJob] = {}
        # Rows found invalid when loading from storage, by memory id: skipped (never crash a
        # verb), kept on disk untouched, reported by ``audit`` ({id, character_id, field,
        # reason}).
        self.quarantine: dict[str, dict[str, Any]] = {}
        # Run before a verb: e.g. a workspace catching up with what other processes
        # committed to its file (``backends/follower.py``).
        self.refreshers: list[Callable[[], None]] = []
        # Entered around the outermost verb, after the refreshers: e.g. a workspace's one
        # transaction for all of a verb's writes (``Follower.verb``).
        self.verb_guards: list[Callable[[], AbstractContextManager[None]]] = []
        self._verb_depth = 0

    # -- plumbing shared by the verb modules -----------------------------------------------

    def now(self) -> float:
        return float(self.clock())

    def new_store(
        self, character: str, *, stamp: str, model_id: str, dimension: int
    ) -> CharacterStore:
        return CharacterStore(
            character, stamp=stamp, model_id=model_id, dimension=dimension,
            kernel_factory=self.kernel_factory, analyzer=self.analyzer,
            bm25_k1=self.bm25_k1, bm25_b=self.bm25_b, bm25_scorer=self.bm25_scorer,
            bm25_context_weight=self.bm25_context_weight, bm25_context_b=self.bm25_context_b,
            listeners=self.listeners,
        )

    def existing_store(self, character: str) -> CharacterStore:
        store = self.stores.get(validate.character_id(character))
        if store is None:
            raise OmoideError.of("UNKNOWN_CHARACTER", character=character)
        return store

    def writable_store(self, character: str) -> CharacterStore:
        store = self.stores.get(character)
        if store is None:
            e = self.embedder
            store = self.new_store(character, stamp=e.stamp, model_id=e.model_id,
                                   dimension=e.dimension)
            self.stores[character] = store
        self.check_model(store)
        return store

    def check_model(self, store: CharacterStore) -> None:
        """Vectors of two models never meet: the store must be stamped with the selected
        model. An empty store (no live or trashed memory) is simply re-stamped."""
        e = self.embedder
        if store.stamp == e.stamp and store.dimension == e.dimension:
            return
        if store.is_empty():
            store.stamp, store.model_id, store.dimension = e.stamp, e.model_id, e.dimension
            store.kernel = store.kernel_factory(e.dimension)
            return
        raise OmoideError.of(
            "MODEL_MISMATCH", character=store.character_id, stored=store.stamp, selected=e.stamp
        )

    def select_embedder(self, embedder: Embedder) -> None:
        """Switch the selected model; characters on another one are blocked until
        re-vectorized (see ``mismatched_characters``)."""
        self.embedder = embedder

    def mismatched_characters(self) -> list[str]:
        return sorted(c for c, s in self.stores.items()
                      if s.stamp != self.embedder.stamp and not s.is_empty())

    def add_listener(self, listener: ChangeListener) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: ChangeListener) -> None:
        self.listeners.remove(listener)

    def add_refresher(self, refresher: Callable[[], None]) -> None:
        self.refreshers.append(refresher)

    @contextmanager
    def fresh(self) -> Iterator[None]:
        """Run the refreshers, then the body inside the verb guards. Every public verb runs
        inside this, and front ends (a governance verb, an MCP tool) can wrap several verbs
        in it: only the outermost level refreshes and is guarded, so the state never changes
        under a verb halfway through and its writes commit together."""
        if self._verb_depth > 0:
            self._verb_depth += 1
            try:
                yield
            finally:
                self._verb_depth -= 1
            return
        for refresh in self.refreshers:
            refresh()
        with ExitStack() as guards:
            for guard in self.verb_guards:
                guards.enter_context(guard())
            self._verb_depth += 1
            try:
                yield
            finally:
                self._verb_depth -= 1

    def run_fresh(self, body: Callable[[], _T],
                  fresh: Callable[[], AbstractContextManager[None]] | None = None) -> _T:
        """``body`` inside ``fresh()``; at the outermost level it runs again (on the state
        caught up anew) when a listener finds the state stale at the first write."""
        outermost = self._verb_depth == 0
        for _ in range(STALE_RETRIES if outermost else 1):
            try:
                with (fresh or self.fresh)():
                    return body()
            except StaleState:
                if not outermost:
                    raise
        raise OmoideError.of("BACKEND_BUSY", retries=STALE_RETRIES)

    # -- writes ------------------------------------------------------------------------------

    @on_fresh_state
    def remember(
        self,
        character: str,
        text: str,
        *,
        kind: str = "fact",
        importance: float = 0.5,
        at: Any = None,
        meta: dict | None = None,
        key: str | None = None,
        context: str | None = None,
        conversation: str | None = None,
        turn: int | None = None,
    ) -> Memory:
        return remember_module.remember(
            self, character, text, kind=kind, importance=importance, at=at, meta=meta, key=key,
            context=context, conversation=conversation, turn=turn,
        )

    @on_fresh_state
    def remember_many(
        self, character: str, items: Sequence[str | Mapping[str, Any]]
    ) -> list[Memory]:
        return remember_module.remember_many(self, character, items)

    @on_fresh_state
    def update(self, character: str, memory_id: str, **fields: Any) -> Memory:
        return update_module.update(self, character, memory_id, **fields)

    @on_fresh_state
    def forget(self, character: str, memory_id: str) -> TrashEntry:
        return forget_module.forget(self, character, memory_id)

    @on_fresh_state
    def restore(self, character: str, memory_id: str) -> Memory:
        return forget_module.restore(self, character, memory_id)

    @on_fresh_state
    def trash(self, character: str) -> list[TrashEntry]:
        return forget_module.trash(self, character)

    @on_fresh_state
    def purge_trash(self, character: str, *, trashed_before: float | None = None) -> list[str]:
        return forget_module.purge_trash(self, character, trashed_before=trashed_before)

    @on_fresh_state
    def revectorize(
        self,
        character: str | None,
        new_embedder: Embedder,
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> RevectorizeReport:
        return revectorize_module.revectorize(
            self, character, new_embedder, batch_size=batch_size, progress=progress,
            cancel=cancel,
        )

    # -- reads -------------------------------------------------------------------------------

    @on_fresh_state
    def recall(
        self,
        character: str,
        query: str,
        *,
        k: int = 10,
        mode: str = "hybrid",
        threshold: float | None = None,
        rrf_k: float = 60,
        kinds: Iterable[str] | None = None,
        fusion: str | None = None,
        touch: bool = True,
        min_relevance: float | None = None,
        now: float | datetime | None = None,
        use_time: bool = True,
        use_neighbours: bool = True,
    ) -> list[Hit]:
        return recall_module.recall(
            self, character, query, k=k, mode=mode, threshold=threshold, rrf_k=rrf_k,
            kinds=kinds, fusion=fusion, touch=touch, min_relevance=min_relevance, now=now,
            use_time=use_time, use_neighbours=use_neighbours,
        )

    @on_fresh_state
    def get(self, character: str, memory_id: str) -> Memory:
        store = self.existing_store(character)
        memory = store.records.get(memory_id)
        if memory is None:
            raise OmoideError.of("UNKNOWN_MEMORY", memory_id=memory_id, character=character)
        return memory

    @on_fresh_state
    def memories(self, character: str) -> list[Memory]:
        """Live memories of a character, oldest first."""
        store = self.existing_store(character)
        return sorted(store.records.values(), key=lambda m: (m.created_at, m.id))

    @on_fresh_state
    def find_by_key(self, character: str, key: str) -> list[Memory]:
        store = self.existing_store(character)
        return [store.records[i] for i in store.ids_with_key(key)]

    @on_fresh_state
    def characters(self) -> list[str]:
        return sorted(self.stores)

    @on_fresh_state
    def stats(self, character: str, *, by_kind: bool = True,
              missing_ok: bool = False) -> dict[str, Any]:
        """Counts and the index's model. ``by_kind=False`` leaves the per-kind counts out:
        the rest reads no memory (the browser's character list asks after every change,
        and a restored memory's kind is parsed from its stored line on first read).
        ``missing_ok``: a character the caller knows of (named, no memory yet) gets the
        counts of an empty store (no model) instead of UNKNOWN_CHARACTER."""
        if missing_ok and validate.character_id(character) not in self.stores:
            out: dict[str, Any] = {
                "character_id": character, "memories": 0, "trashed": 0, "model": None,
                "dimension": None, "model_mismatch": False, "indexed_terms": 0}
            return out | ({"by_kind": {}} if by_kind else {})
        store = self.existing_store(character)
        out = {
            "character_id": store.character_id,
            "memories": len(store.records),
            "trashed": len(store.trash),
            "model": store.stamp,
            "dimension": store.dimension,
            "model_mismatch": store.stamp != self.embedder.stamp and not store.is_empty(),
            "indexed_terms": store.indexed_terms,
        }
        if by_kind:
            out["by_kind"] = store.count_by_kind()
        return out

    # -- snapshots and persistence ------------------------------------------------------------

    @on_fresh_state
    def snapshot(self, character: str) -> tuple[bytes, str]:
        """(binary index snapshot, records JSON) of one character; see ``engine.snapshot``."""
        return snapshot_module.dump_character(self, character)

    def load_snapshot(
        self, character: str, index: bytes, records_json: str, *, emit: bool = False
    ) -> None:
        snapshot_module.load_character(self, character, index, records_json, emit=emit)

    def apply_change(self, change: Change) -> None:
        """Re-apply a change recorded by a listener (boot from a journal); never embeds and
        never re-announces the change."""
        store = self.stores.get(change.character_id)
        if change.op == "put":
            if store is None:
                store = self.new_store(
                    change.character_id, stamp=change.stamp or self.embedder.stamp,
                    model_id=change.model_id or "", dimension=change.dimension or 0,
                )
                self.stores[change.character_id] = store
            store.put(change.memory, change.vector, emit=False)
            return
        if store is None:
            raise OmoideError.of("UNKNOWN_CHARACTER", character=change.character_id)
        if change.op == "trash":
            store.move_to_trash(change.memory_id, change.at or self.now(), emit=False)
        elif change.op == "restore":
            store.restore(change.memory_id, emit=False)
        elif change.op == "purge":
            store.purge(change.memory_id, emit=False)
        elif change.op == "swap":
            kernel = store.kernel_factory(change.dimension)
            live = sorted(store.records)
            kernel.add(live, [change.vectors[i] for i in live])
            trash_vectors = {i: change.vectors[i] for i in store.trash}
            store.swap_index(change.stamp, change.model_id or "", change.dimension, kernel,
                             trash_vectors, emit=False)
        else:
            raise OmoideError.of("INVALID_ARGUMENT", name="change.op", reason=repr(change.op))
