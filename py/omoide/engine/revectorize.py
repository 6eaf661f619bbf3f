"""``revectorize``: move characters to a new embedding model without a gap in recall.

The new vectors are staged beside the live index (a ``RevectorizeJob`` per target model), in
batches of ``batch_size`` texts per embedder call. Recall keeps using the old index and the
selected model throughout. ``cancel()`` is polled before every batch; when it returns True
the call raises CANCELLED and the job (everything staged so far) stays in
``engine.revectorize_jobs``, so calling ``revectorize`` again with the same model resumes.
Writes that happen between calls are caught up at the end: a staged vector whose text has
changed since it was embedded is embedded again, deleted memories are dropped.

The swap is synchronous (no await point, no embedder call inside it): every target store gets
its new kernel and stamp, then the engine selects the new model. The engine has ONE selected
model, so characters that were not re-vectorized are blocked (MODEL_MISMATCH) until they are;
``revectorize(None, ...)`` does every character in one job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from omoide.engine import validate
from omoide.engine.embedding import Embedder, embed_memories
from omoide.engine.memory import Memory
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.store import CharacterStore

Progress = Callable[[int, int], None]


@dataclass
class RevectorizeJob:
    """Vectors of the new model staged so far: character -> memory id -> (text, vector).

    ``queue[cursor:]`` is the work left of the current pass. It is kept across calls, so a
    job run one batch per call (the browser) computes the pending list once per pass, not
    once per batch: the whole job stays linear in the number of memories. ``fresh`` (when
    not None) collects the (character, id) pairs staged since its owner last emptied it."""

    embedder: Embedder
    staged: dict[str, dict[str, tuple[str, list[float]]]] = field(default_factory=dict)
    queue: list[tuple[str, str, str]] = field(default_factory=list)
    cursor: int = 0
    fresh: list[tuple[str, str]] | None = None

    @property
    def stamp(self) -> str:
        return self.embedder.stamp


@dataclass(frozen=True)
class RevectorizeReport:
    stamp: str
    characters: list[str]
    embedded: int  # texts embedded by this call (resumed work is not counted twice)
    still_mismatched: list[str]  # characters left on another model


def source(text: str, context: str | None) -> str:
    """What a staged vector was embedded from, as its staging key: the text, and the index
    context when there is one (the vector is their blend: a new context alone needs a new
    vector too)."""
    return text if not context else f"{text}\x1f{context}"


def _memories(store: CharacterStore) -> dict[str, Memory]:
    memories = dict(store.records)
    memories.update({i: e.memory for i, e in store.trash.items()})
    return memories


def _pending(job: RevectorizeJob, stores: list[CharacterStore]) -> list[tuple[str, str, str]]:
    """(character, memory id, text) still to embed, in a stable order: not staged, or
    staged from another text or context."""
    pending = []
    for store in stores:
        staged = job.staged.get(store.character_id, {})
        for memory_id, memory in sorted(_memories(store).items()):
            if (memory_id not in staged
                    or staged[memory_id][0] != source(memory.text, memory.context)):
                pending.append((store.character_id, memory_id, memory.text))
    return pending


def _held(engine: MemoryEngine, character: str, memory_id: str) -> bool:
    store = engine.stores.get(character)
    return store is not None and (memory_id in store.records or memory_id in store.trash)


def _context(engine: MemoryEngine, character: str, memory_id: str) -> str | None:
    """The memory's index context (its vector is the blend of text and context)."""
    store = engine.stores[character]
    memory = store.records.get(memory_id)
    return (memory if memory is not None else store.trash[memory_id].memory).context


def _targets(engine: MemoryEngine, character: str | None) -> list[CharacterStore]:
    if character is None:
        return [engine.stores[c] for c in sorted(engine.stores)]
    return [engine.existing_store(validate.character_id(character))]


def upcoming(engine: MemoryEngine, character: str | None, new_embedder: Embedder,
             limit: int) -> list[str]:
    """The strings (texts, then contexts) the next ``revectorize`` batch of ``limit`` will
    embed, so that a caller can embed them ahead, outside its lock, into a cache that batch
    then reads (the browser worker). Computes the pass's work list when it is used up, as
    ``revectorize`` would; changes nothing else."""
    job = engine.revectorize_jobs.setdefault(new_embedder.stamp, RevectorizeJob(new_embedder))
    if job.cursor >= len(job.queue):
        job.queue, job.cursor = _pending(job, _targets(engine, character)), 0
    texts: list[str] = []
    contexts: list[str] = []
    for char, memory_id, text in job.queue[job.cursor : job.cursor + limit]:
        store = engine.stores.get(char)
        if store is None or (memory_id not in store.records and memory_id not in store.trash):
            continue  # deleted since the list was made; revectorize drops it
        texts.append(text)
        context = _context(engine, char, memory_id)
        if context:
            contexts.append(context)
    return texts + contexts


def revectorize(
    engine: MemoryEngine,
    character: str | None,
    new_embedder: Embedder,
    *,
    batch_size: int = 64,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RevectorizeReport:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise OmoideError.of("INVALID_ARGUMENT", name="batch_size", reason="must be >= 1")
    job = engine.revectorize_jobs.setdefault(new_embedder.stamp, RevectorizeJob(new_embedder))
    job.embedder = new_embedder
    embedded = 0
    while True:  # a later pass only catches up writes made since the queue was computed
        stores = _targets(engine, character)
        if job.cursor >= len(job.queue):
            job.queue, job.cursor = _pending(job, stores), 0
            if not job.queue:
                break
        total = sum(len(s.records) + len(s.trash) for s in stores)
        done = max(0, total - (len(job.queue) - job.cursor))
        if progress:
            progress(done, total)
        while job.cursor < len(job.queue):
            if cancel is not None and cancel():
                raise OmoideError.of("CANCELLED", operation="Re-vectorization")
            taken = job.queue[job.cursor : job.cursor + batch_size]
            # a memory purged since the list was made is dropped (the pass after catches up)
            batch = [(char, memory_id, text, _context(engine, char, memory_id))
                     for char, memory_id, text in taken if _held(engine, char, memory_id)]
            vectors = embed_memories(new_embedder, [(text, context)
                                                    for _, _, text, context in batch])
            for (char, memory_id, text, context), vector in zip(batch, vectors, strict=True):
                row = vector.tolist() if hasattr(vector, "tolist") else list(vector)
                job.staged.setdefault(char, {})[memory_id] = (source(text, context), row)
                if job.fresh is not None:
                    job.fresh.append((char, memory_id))
            job.cursor += len(taken)
            embedded += len(batch)
            done = min(total, done + len(taken))
            if progress:
                progress(done, total)
    _swap(engine, job, stores)
    return RevectorizeReport(
        stamp=job.stamp,
        characters=[s.character_id for s in stores],
        embedded=embedded,
        still_mismatched=sorted(
            c for c, s in engine.stores.items() if s.stamp != job.stamp and not s.is_empty()
        ),
    )


def _swap(engine: MemoryEngine, job: RevectorizeJob, stores: list[CharacterStore]) -> None:
    """Install the staged vectors (no embedder call, no yield point: atomic for readers)."""
    dimension = job.embedder.dimension
    for store in stores:
        staged = job.staged.get(store.character_id, {})
        live = sorted(store.records)
        kernel = store.kernel_factory(dimension)
        kernel.add(live, [staged[i][1] for i in live])
        trash_vectors = {i: staged[i][1] for i in store.trash}
        store.swap_index(job.stamp, job.embedder.model_id, dimension, kernel, trash_vectors)
    engine.select_embedder(job.embedder)
    del engine.revectorize_jobs[job.stamp]
