"""One character's memories: records, trash, a vector kernel and a BM25 index of its own.

Isolation is structural: the engine keeps one ``CharacterStore`` per character, and every
index lives inside it, so no query ever touches (or scores) another character's rows.
Every mutation goes through ``_commit``: listeners see the change first (write-ahead), then
it is applied; a listener that raises leaves the store untouched.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import compress, repeat
from operator import attrgetter, is_not, methodcaller
from typing import Any

from omoide.engine import meta_room
from omoide.engine.bm25 import BM25Index, PostingsBlock, PostingsScorer
from omoide.engine.listener import Change, ChangeListener
from omoide.engine.memory import Memory, TrashEntry
from omoide.engine.recency import NewestFirst, order_key
from omoide.engine.trash_map import TrashMap
from omoide.kernels.base import KernelFactory, VectorKernel

_ID, _KEY = attrgetter("id"), attrgetter("key")
_given = partial(is_not, None)
_kind_of = methodcaller("peek", "kind")  # an unmade memory stays unmade (``Memory.peek``)
_NOT_A_MEMBER = object()  # what no record is
DAY_SECONDS = 86_400


def _day_of(memory: Memory) -> int:
    """The UTC day (days since the epoch) a memory happened on: the key of the day index."""
    return int(memory.peek("created_at") // DAY_SECONDS)


def as_float_list(vector: Sequence[float]) -> list[float]:
    tolist = getattr(vector, "tolist", None)
    return [float(x) for x in (tolist() if tolist else vector)]


@dataclass
class TextGroup:
    """Memories whose texts are indexed together after a bulk load (``adopt``): the records
    of one stored unit (the browser: one record pack), whose postings can be absorbed from
    a block made earlier (``absorb_text_block``) or are analyzed into a block of their own
    (then offered in ``CharacterStore.built_blocks`` for the caller to persist). ``source``
    is the caller's identity of what the memories were read from (stamped on the block)."""

    key: Hashable
    source: Any
    members: list[Memory]
    done: int = 0  # members analyzed into ``local`` so far
    local: BM25Index | None = None


@dataclass
class BuiltBlock:
    """A block the lazy build made from a ``TextGroup`` (its key and source)."""

    key: Hashable
    source: Any
    block: PostingsBlock = field(repr=False)


class CharacterStore:
    def __init__(
        self,
        character_id: str,
        *,
        stamp: str,
        model_id: str,
        dimension: int,
        kernel_factory: KernelFactory,
        analyzer: Callable[[str], list[str]],
        bm25_k1: float,
        bm25_b: float,
        bm25_context_weight: float,
        bm25_context_b: float,
        listeners: list[ChangeListener],
        bm25_scorer: PostingsScorer | None = None,
    ) -> None:
        self.character_id = character_id
        self.stamp = stamp
        self.model_id = model_id
        self.dimension = dimension
        self.kernel_factory = kernel_factory
        self.kernel: VectorKernel = kernel_factory(dimension)
        # the trashed vectors, searchable like the live ones (revive on recall scans no list)
        self.trash_kernel: VectorKernel = kernel_factory(dimension)
        self.analyzer = analyzer
        self._text_index = BM25Index(k1=bm25_k1, b=bm25_b, context_weight=bm25_context_weight,
                                     context_b=bm25_context_b, scorer=bm25_scorer)
        # ids of live memories whose text is not analyzed yet (``adopt``: boot does not
        # analyze every text); the index is completed before any search (``text_index``).
        # Writes do not wait for it: they index (or unindex) their own memory in
        # ``_text_index`` at once, and the lazy pass skips what is indexed or gone; BM25's
        # statistics are sums, so the complete index is the same whatever the order.
        self._unindexed: list[str] = []
        # groups of adopted memories indexed as a unit (``TextGroup``), before ``_unindexed``
        self._text_groups: dict[Hashable, TextGroup] = {}
        self.built_blocks: list[BuiltBlock] = []  # for the caller to persist; it takes them
        self._text_params = dict(k1=bm25_k1, b=bm25_b, context_weight=bm25_context_weight,
                                 context_b=bm25_context_b)
        self.records: dict[str, Memory] = {}
        self.trash = TrashMap()  # counts its changes: indexes built from it are kept
        self._ids_by_key: dict[str, set[str]] = {}
        # secondary indexes of the live records (``index``): name -> (key of a record, groups)
        self._indexes: dict[str, tuple[Callable[[Memory], Hashable],
                                       dict[Hashable, set[str]]]] = {}
        self._newest: NewestFirst | None = None  # ``newest_first``, made on first use
        self._listeners = listeners

    # -- reads ----------------------------------------------------------------------------

    @property
    def text_index(self) -> BM25Index:
        """The BM25 index, complete: texts left by ``adopt`` are analyzed first."""
        while self._unindexed or self._text_groups:  # a group may leave members to _unindexed
            self.index_text(self.unindexed_count())
        return self._text_index

    def unindexed_count(self) -> int:
        """Texts left by ``adopt`` not indexed yet (some may be gone or indexed since)."""
        return len(self._unindexed) + sum(len(g.members) - g.done
                                          for g in self._text_groups.values())

    def index_text(self, limit: int) -> int:
        """Analyze up to ``limit`` texts left by ``adopt`` (the groups' first); returns how
        many are left."""
        while self._text_groups:
            group = next(iter(self._text_groups.values()))
            if limit <= 0 and group.done < len(group.members):
                break
            # a group with nothing left (none of its members is this store's any more, or
            # all are analyzed) is finished whatever the limit: ``text_index`` asks for
            # ``unindexed_count()`` texts, 0 for such a group, and must still make progress
            if group.local is None:
                group.local = BM25Index(**self._text_params)
            end = min(group.done + max(limit, 0), len(group.members))
            for memory in group.members[group.done:end]:
                if self.records.get(memory.id) is memory:  # still the stored copy's memory
                    group.local.add(memory.id, *self.index_terms(memory))
            limit -= end - group.done
            group.done = end
            if end == len(group.members):
                del self._text_groups[group.key]
                block = group.local.block()
                self._absorb(group, block)
                self.built_blocks.append(BuiltBlock(group.key, group.source, block))
        # Taken from the front in place: a new list of the rest per step copied it whole.
        batch = self._unindexed[:limit]
        del self._unindexed[:limit]
        for memory_id in batch:
            memory = self.records.get(memory_id)
            # gone since (trashed, dropped), or indexed by a write meanwhile: nothing to do
            if memory is not None and memory_id not in self._text_index:
                self._text_index.add(memory_id, *self.index_terms(memory))
        return self.unindexed_count()

    def _absorb(self, group: TextGroup, block: PostingsBlock) -> None:
        """The block's documents into the index, less those that are not the group's
        memories now (overridden by a later copy since the block was made; replaced,
        trashed, dropped since) or indexed already; a live member left unindexed (not in
        the block, or replaced by a record its write did not index: the same text) is
        analyzed later, one by one."""
        members = {m.id: m for m in group.members}
        # the index keeps the members' own id strings, not the copies parsed from the block
        # (one string per memory instead of two: ~5 MB at 100,000); C-level maps, no loop
        own = dict(zip(members, members, strict=True))
        block = replace(block, ids=list(map(own.get, block.ids, block.ids)))
        stale = map(is_not, map(self.records.get, block.ids),
                    map(members.get, block.ids, repeat(_NOT_A_MEMBER)))
        index, records = self._text_index, self.records
        index.absorb(block, drop=list(compress(block.ids, stale)))
        self._unindexed.extend(i for i in members if i not in index and i in records)

    def group_unindexed(self, groups: Sequence[tuple[Hashable, Any, Sequence[str]]]) -> int:
        """Make ``TextGroup``s, ``(key, source, ids)``, of memories ``add_loaded`` left to be
        analyzed one by one, so that the lazy build makes a block of each (``built_blocks``):
        the browser's import, whose record packs hold exactly the memories it added. A group
        whose key waits already, or any of whose live memories is indexed or not waiting
        (analyzed, written, replaced since), is not made: its memories stay as they were.
        Returns how many groups were made."""
        waiting = set(self._unindexed)
        taken: set[str] = set()
        made = 0
        records, index = self.records, self._text_index
        for key, source, ids in groups:
            live = [i for i in ids if i in records]
            if key in self._text_groups or not live or not all(
                    i in waiting and i not in taken and i not in index for i in live):
                continue
            self._text_groups[key] = TextGroup(key, source, list(map(records.__getitem__, live)))
            taken.update(live)
            made += 1
        if taken:
            self._unindexed = [i for i in self._unindexed if i not in taken]
        return made

    def text_group(self, key: Hashable) -> TextGroup | None:
        """The group ``key`` while it waits for its texts to be indexed."""
        return self._text_groups.get(key)

    def absorb_text_block(self, key: Hashable, source: Any, block: PostingsBlock) -> bool:
        """Index a group's memories from ``block`` (made from ``source`` earlier) instead of
        analyzing their texts; members the block lacks are analyzed later, one by one, and
        its documents that are not members now are left out. False (nothing changed) when
        there is no such group waiting, its source is another, or its build has begun."""
        group = self._text_groups.get(key)
        if group is None or group.local is not None or group.source != source:
            return False
        del self._text_groups[key]
        self._absorb(group, block)
        return True

    @property
    def indexed_terms(self) -> int:
        """Distinct terms indexed so far (no analysis is forced)."""
        return self._text_index.term_count

    def is_empty(self) -> bool:
        return not self.records and not self.trash

    def ids_with_key(self, key: str) -> list[str]:
        return sorted(self._ids_by_key.get(key, ()))

    def index(self, name: str, key_of: Callable[[Memory], Hashable]) -> dict[Hashable, set[str]]:
        """The live records grouped by ``key_of(record)``, kept up to date by every write
        (built once, on first use): a caller that counts or lists a group (governance: the
        hot tier) never scans the store. ``key_of`` must depend on the record's fields only;
        the groups are read-only for the caller."""
        if name not in self._indexes:
            groups: dict[Hashable, set[str]] = {}
            for memory in self.records.values():
                groups.setdefault(key_of(memory), set()).add(memory.id)
            self._indexes[name] = (key_of, groups)
        return self._indexes[name][1]

    def newest_first(self, offset: int, limit: int, allowed: set[str] | None = None
                     ) -> list[str]:
        """Ids of live memories newest first (``created_at`` descending, then id): ``limit``
        of them from ``offset`` on, among ``allowed`` when given. The order is kept by every
        write once made (one read of every memory's time, on first use)."""
        if allowed is not None and len(allowed) * 8 < len(self.records):
            # a small group (one kind, the hot tier): sorting it reads only its memories
            records = self.records
            chosen = sorted(order_key(records[i]) for i in allowed)
            return [memory_id for _, memory_id in chosen[offset:offset + limit]]
        if self._newest is None:
            self._newest = NewestFirst(self.records.values())
        return self._newest.ids(offset, limit, allowed)

    def _index_add(self, memory: Memory, *, order: bool = True) -> None:
        if order and self._newest is not None:
            self._newest.add(memory)
        for key_of, groups in self._indexes.values():
            groups.setdefault(key_of(memory), set()).add(memory.id)

    def _index_drop(self, memory: Memory, *, order: bool = True) -> None:
        if order and self._newest is not None:
            self._newest.drop(memory)
        for key_of, groups in self._indexes.values():
            ids = groups.get(key_of(memory))
            if ids is not None:
                ids.discard(memory.id)
                if not ids:
                    del groups[key_of(memory)]

    def ids_of_kinds(self, kinds: Iterable[str]) -> set[str]:
        """Ids of the live memories of these kinds (the kind index: a recall with a kind
        filter scans no records)."""
        groups = self.index("kind", _kind_of)
        return set().union(*(groups.get(kind, ()) for kind in kinds))

    def count_by_kind(self) -> dict[str, int]:
        """How many live memories of each kind (the kind index: no scan once it exists)."""
        return {kind: len(ids) for kind, ids in sorted(self.index("kind", _kind_of).items())}

    def ids_created_between(self, start: float, end: float) -> set[str]:
        """Ids of the live memories with ``start <= created_at < end``, from the index of
        days: the cost is the span's days (or the store's distinct days, when fewer) and the
        memories in it, not the store (a recall naming "last week" scanned every record)."""
        groups = self.index("day", _day_of)
        if math.isfinite(start) and math.isfinite(end):
            # the end is exclusive: a span ending at midnight does not reach the next day
            first, last = math.floor(start / DAY_SECONDS), math.ceil(end / DAY_SECONDS) - 1
        else:
            first, last = -math.inf, math.inf
        if last - first + 1 <= len(groups):
            days = [(day, groups[day]) for day in range(first, last + 1) if day in groups]
        else:
            days = [(day, ids) for day, ids in groups.items() if first <= day <= last]
        found: set[str] = set()
        records = self.records
        for day, ids in days:
            if start <= day * DAY_SECONDS and (day + 1) * DAY_SECONDS <= end:
                found |= ids  # the whole day lies in the span
            else:  # a day the span cuts: each memory's own time decides
                found.update([i for i in ids if start <= records[i].created_at < end])
        return found

    def index_terms(self, memory: Memory) -> tuple[list[str], list[str]]:
        """What BM25F indexes: the terms of the text and of the context, two fields."""
        text, context = memory.indexed_texts()
        return self.analyzer(text), self.analyzer(context) if context else []

    # -- writes ---------------------------------------------------------------------------

    def _commit(self, change: Change, apply: Callable[[], None], emit: bool) -> None:
        if emit:
            for listener in self._listeners:
                listener.on_change(change)
        apply()

    def put(self, memory: Memory, vector: Sequence[float] | None, *,
            emit: bool = True) -> Memory:
        """Insert or replace a live record; ``vector=None`` keeps the stored vector. Returns
        the record as stored: its meta within the record limit (``meta_room.fitted``: the
        engine's bookkeeping never makes a record its own validator refuses)."""
        if vector is None and memory.id not in self.records:
            raise KeyError(memory.id)
        meta = meta_room.fitted(memory.meta)
        if meta is not memory.meta:
            memory = replace(memory, meta=meta)
        row = as_float_list(vector) if vector is not None else None
        if row is not None and len(row) != self.dimension:
            raise ValueError(f"vector has {len(row)} dimensions, index has {self.dimension}")
        change = Change(
            "put", self.character_id, memory.id, memory, row,
            stamp=self.stamp, model_id=self.model_id, dimension=self.dimension,
            previous=self.records.get(memory.id),
            fresh=memory.id not in self.records and memory.id not in self.trash,
        )

        def apply() -> None:
            old = self.records.get(memory.id)
            if row is not None:
                self.kernel.add([memory.id], [row])
            if old is None or old.text != memory.text or old.context != memory.context:
                self._text_index.add(memory.id, *self.index_terms(memory))
            if old is not None and old.key is not None:
                self._drop_key(old.key, memory.id)
            if memory.key is not None:
                self._ids_by_key.setdefault(memory.key, set()).add(memory.id)
            # a recall's count or an edit keeps the memory's place in the newest-first
            # order: only a new memory or a new time moves it (a list move each)
            moved = old is None or old.created_at != memory.created_at
            if old is not None:
                self._index_drop(old, order=moved)
            self._index_add(memory, order=moved)
            self.records[memory.id] = memory

        self._commit(change, apply, emit)
        return memory

    def load(self, live: Sequence[tuple[Memory, Sequence[float]]],
             trashed: Sequence[TrashEntry]) -> None:
        """Fill an empty store from persisted state in one kernel call (boot; no listeners:
        the state came from storage)."""
        if not self.is_empty():
            raise ValueError("load() fills an empty store only")
        self.kernel.add([m.id for m, _ in live], [as_float_list(v) for _, v in live])
        for memory, _ in live:
            self.text_index.add(memory.id, *self.index_terms(memory))
            if memory.key is not None:
                self._ids_by_key.setdefault(memory.key, set()).add(memory.id)
            self._index_add(memory)
            self.records[memory.id] = memory
        if trashed:
            self.trash_kernel.add([e.memory.id for e in trashed],
                                  [as_float_list(e.vector) for e in trashed])
        for entry in trashed:
            self.trash[entry.memory.id] = entry

    def adopt(self, kernel: VectorKernel, trash_kernel: VectorKernel, live: Sequence[Memory],
              trashed: Sequence[TrashEntry], *, text_groups: Sequence[TextGroup] = (),
              ungrouped: Sequence[str] | None = None) -> None:
        """Fill an empty store around kernels that already hold its vectors (the browser
        loads them in bulk: ``kernel`` holds exactly the live ids, ``trash_kernel`` the
        trashed ones). No listener hears it; texts are analyzed later (``index_text``).
        ``text_groups``: memories indexed as units (``TextGroup``); then ``ungrouped`` names
        every live memory in no group (indexed one by one)."""
        if not self.is_empty():
            raise ValueError("adopt() fills an empty store only")
        if len(kernel) != len(live) or len(trash_kernel) != len(trashed):
            raise ValueError("the kernels do not hold exactly this store's memories")
        self.kernel, self.trash_kernel = kernel, trash_kernel
        self.add_loaded(live, trashed)
        if text_groups:
            if ungrouped is None:
                raise ValueError("adopt() with text groups needs the ungrouped ids")
            self._unindexed = list(ungrouped)
            self._text_groups = {g.key: g for g in text_groups}

    def add_loaded(self, live: Sequence[Memory], trashed: Sequence[TrashEntry]) -> None:
        """Add memories new to this store whose vectors the caller already appended to
        ``kernel`` / ``trash_kernel`` in bulk (``adopt``, the browser's import). No listener
        hears it (the caller persists them); texts are analyzed later (``index_text``)."""
        ids = list(map(_ID, live))
        for memory in compress(live, map(_given, map(_KEY, live))):  # keyed ones only
            self._ids_by_key.setdefault(memory.key, set()).add(memory.id)
        if self._indexes or self._newest is not None:
            for memory in live:
                self._index_add(memory)
        self.records.update(zip(ids, live, strict=True))  # a map, not a Python loop per memory
        self._unindexed.extend(ids)
        for entry in trashed:
            self.trash[entry.memory.id] = entry

    def sync(self, memory: Memory, vector: Sequence[float] | None,
             trashed_at: float | None) -> None:
        """Make this store hold exactly the stored state of one memory (live, or trashed at
        ``trashed_at``) that another process committed; ``vector`` None: unchanged, the one
        this store holds. No listeners: it came from storage."""
        entry = self.trash.pop(memory.id, None)
        if entry is not None:
            self.trash_kernel.remove([memory.id])
        if vector is None and entry is not None:
            vector = entry.vector
        if trashed_at is None:
            self.put(memory, vector, emit=False)
            return
        if vector is None:
            vector = self.kernel.vector(memory.id)
        row = as_float_list(vector)
        if len(row) != self.dimension:
            raise ValueError(f"vector has {len(row)} dimensions, index has {self.dimension}")
        self.drop(memory.id)
        self.trash[memory.id] = TrashEntry(memory, row, trashed_at)
        self.trash_kernel.add([memory.id], [row])

    def drop(self, memory_id: str) -> None:
        """Forget a live or trashed memory that another process deleted (no listeners)."""
        if self.trash.pop(memory_id, None) is not None:
            self.trash_kernel.remove([memory_id])
            return
        memory = self.records.pop(memory_id, None)
        if memory is None:
            return
        self.kernel.remove([memory_id])
        self._text_index.remove(memory_id)
        if memory.key is not None:
            self._drop_key(memory.key, memory_id)
        self._index_drop(memory)

    def move_to_trash(self, memory_id: str, at: float, *, emit: bool = True) -> TrashEntry:
        memory = self.records[memory_id]
        entry = TrashEntry(memory, self.kernel.vector(memory_id), at)

        def apply() -> None:
            self.kernel.remove([memory_id])
            self._text_index.remove(memory_id)
            if memory.key is not None:
                self._drop_key(memory.key, memory_id)
            self._index_drop(memory)
            del self.records[memory_id]
            self.trash[memory_id] = entry
            self.trash_kernel.add([memory_id], [entry.vector])

        self._commit(Change("trash", self.character_id, memory_id, at=at), apply, emit)
        return entry

    def restore(self, memory_id: str, *, emit: bool = True) -> Memory:
        entry = self.trash[memory_id]

        def apply() -> None:
            del self.trash[memory_id]
            self.trash_kernel.remove([memory_id])
            self.kernel.add([memory_id], [entry.vector])
            self._text_index.add(memory_id, *self.index_terms(entry.memory))
            if entry.memory.key is not None:
                self._ids_by_key.setdefault(entry.memory.key, set()).add(memory_id)
            self._index_add(entry.memory)
            self.records[memory_id] = entry.memory

        self._commit(Change("restore", self.character_id, memory_id), apply, emit)
        return entry.memory

    def purge(self, memory_id: str, *, emit: bool = True) -> None:
        if memory_id not in self.trash:
            raise KeyError(memory_id)
        def apply() -> None:
            self.trash.pop(memory_id)
            self.trash_kernel.remove([memory_id])

        self._commit(Change("purge", self.character_id, memory_id), apply, emit)

    def swap_index(
        self,
        stamp: str,
        model_id: str,
        dimension: int,
        kernel: VectorKernel,
        trash_vectors: dict[str, list[float]],
        *,
        emit: bool = True,
    ) -> None:
        """Replace the vector space in one step (re-vectorization). ``kernel`` must hold
        exactly the live ids; ``trash_vectors`` exactly the trashed ids."""
        live = set(self.records)
        if set(kernel.ids()) != live or set(trash_vectors) != set(self.trash):
            raise ValueError("the new index does not cover exactly this store's memories")
        # as float32, as the live ones come out of their kernel (an export, a mirror, the
        # trash entries below): full doubles made an export differ from its re-import
        trash_vectors = {i: array("f", v).tolist() for i, v in trash_vectors.items()}
        vectors = {i: kernel.vector(i) for i in live} | trash_vectors
        change = Change(
            "swap", self.character_id, stamp=stamp, model_id=model_id, dimension=dimension,
            vectors=vectors,
        )

        trash_kernel = self.kernel_factory(dimension)
        trash_ids = sorted(trash_vectors)
        trash_kernel.add(trash_ids, [trash_vectors[i] for i in trash_ids])

        def apply() -> None:
            self.kernel = kernel
            self.trash_kernel = trash_kernel
            self.stamp = stamp
            self.model_id = model_id
            self.dimension = dimension
            for memory in self.records.values():
                memory.model = stamp
            for memory_id, entry in self.trash.items():
                entry.vector = trash_vectors[memory_id]
                entry.memory.model = stamp
            self._indexes.clear()  # records changed in place: rebuilt on next use

        self._commit(change, apply, emit)

    def _drop_key(self, key: str, memory_id: str) -> None:
        ids = self._ids_by_key.get(key)
        if ids is not None:
            ids.discard(memory_id)
            if not ids:
                del self._ids_by_key[key]
