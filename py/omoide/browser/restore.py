"""Restore of one character at boot from what the worker read in IndexedDB, in slices.

The worker (``loadOne`` in web/engine-worker.js) has already appended every trusted vector
to two kernel stores (live, trash) in WebAssembly memory. It then calls, under the engine
lock and with nothing in between:

1. ``begin(header)``: what the records say (web/store/db.js ``recordsHeader``): the
   character's stamp, the ids its records call trashed (``trash_ids``: their records are made
   at once, their trash time is needed at ``finish``, even for one whose vector was lost), the
   recall counts (``recalls``, ``recalls_last``: the ``recalls`` table, folded into the
   records here);
2. ``add_records(character, slice, skip, format, crc)`` for each slice of records (JSON):
   each record pack's text as IndexedDB holds it (web/store/packs.js), with the ids a later
   copy overrides (``skip``) and the pack's format and CRC-32, then the override rows
   (``RECORD_SLICE`` in web/store/db.js). A *checked* pack (``format == PACK_FORMAT``: its
   records were checked by the record validator before the engine wrote them) whose CRC
   holds proves its text unchanged since: its rows become ``Memory`` objects directly
   (``trusted_memories``: the same Memory the validator's answer makes, tested by property).
   Every other row (the override rows, a migrated or damaged pack, a row with counted
   recalls folded in, anything that does not fit a Memory) goes through the one record
   validator (``validate.record``; a bad one is quarantined: skipped, kept in IndexedDB
   untouched, listed by ``audit``) and becomes a ``Memory`` in one keyword call
   (``Memory.from_record``). Only one slice's JSON text and dicts are alive at a time, never
   those of all 100,000 rows beside their Memory objects;
3. ``finish(character, live, trash, placement)``: what the placement of the vectors found
   (the ids of the stores' rows in order, the ids whose vector was lost: ``missing``, the
   damaged segments' count); the kernels are adopted with their ids, rows of
   quarantined records leave them, the store is filled without a change per memory
   (``CharacterStore.adopt``; BM25 analysis deferred), and memories whose vector was lost
   are re-embedded with the model of their own index (persisted: nothing is dropped).

Nothing is written back except the repairs.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import filterfalse, repeat
from operator import attrgetter
from typing import Any

from ..backends.listener import quarantine
from ..engine import MemoryEngine, validate
from ..engine.bulk import acyclic_bulk
from ..engine.embedding import embed_memories
from ..engine.memory import Memory, TrashEntry
from ..engine.store import TextGroup
from ..errors import OmoideError
from .embedder import BrowserEmbedder, parse_stamp
from .packed import floats_again, head_columns, line_record, packed, packed_with_head
from .session import KERNEL_OPTIONS, flush, session
from .wasm_kernel import WasmKernel


@dataclass
class Loading:
    """One character between ``begin`` and ``finish``."""

    header: dict[str, Any]
    memories: dict[str, Memory] = field(default_factory=dict)
    trashed_at: dict[str, float] = field(default_factory=dict)  # of trashed memories only
    rows: int = 0  # records received, good or bad
    trusted: int = 0  # of them, records of checked packs made without the validator
    # ids whose record a pack of lines must make at once: trashed, or with counted recalls
    now: set[str] = field(default_factory=set)
    # per record pack: its number, [CRC-32, size] of its text, the ids it provided
    sources: list[tuple[int, list[int], list[str]]] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)  # ids the override rows provided


LOADING: dict[str, Loading] = {}
_ID = attrgetter("id")


def begin(header_json: str) -> None:
    """Start restoring a character (forgets any restore of it left unfinished). ``trash_ids``
    of the header: the ids the records call trashed (or a superset): their records are made at
    once (their trash time is needed at ``finish``)."""
    header = json.loads(header_json)
    LOADING[header["character"]] = Loading(
        header, now=set(header["trash_ids"]) | set(header.get("recalls") or ()))


# The format of a record pack whose records the engine checked before writing them
# (``CHECKED`` of web/store/packs.js; a later record schema bumps both): one JSON text of
# every record (``PACK_FORMAT``: packs written before the lines), or a head line
# ``[ids, keys, kinds, created_at]`` (``[ids, keys]`` before the head columns:
# ``packed.head_columns``) and one line per record (``PACK_LINES``: its records made on use),
# each a record object, or (``PACK_COLUMNS``) an array of its values in
# ``packed.RECORD_FIELDS`` order (the field names are not repeated on every line: less to
# read, to check and to hold).
PACK_FORMAT = 1
PACK_LINES = 2
PACK_COLUMNS = 3
_OF_LINES = (PACK_LINES, PACK_COLUMNS)


def add_records(character: str, records_json: Any, skip_json: str = "", pack_format: int = 0,
                crc: int = 0, pack: int = -1) -> int:
    """Check one slice of the character's stored records (its JSON text's UTF-8 bytes, or
    the text), less the ids of ``skip_json`` (a JSON list: overridden by a later copy);
    returns how many passed. ``pack_format``, ``crc`` and ``pack`` (its number): the record
    pack's (0, 0, -1 for override rows). A pack's memories are indexed for full text as one
    group (``TextGroup``: its postings block, when one was persisted, is absorbed instead of
    analyzing them), stamped with the CRC-32 and size of the text they were read from."""
    loading = LOADING[character]
    memories, trashed_at = loading.memories, loading.trashed_at
    before = len(memories)
    text = as_bytes(records_json)
    actual = zlib.crc32(text) if pack >= 0 or pack_format else 0
    got: list[str] = []  # the ids this slice provides
    with acyclic_bulk():
        if pack_format in _OF_LINES:
            if actual == crc and add_packed(loading, text, skip_json, got):
                loading.sources.append((pack, [actual, len(text)], got))
                return len(memories) - before
            rows = lines_of(text)
        else:
            rows = json.loads(text)
        if skip_json:
            skip = set(json.loads(skip_json))
            rows = [r for r in rows if not (isinstance(r, dict) and r.get("id") in skip)]
        loading.rows += len(rows)
        engine = session().engine
        if pack_format == PACK_FORMAT and actual == crc:
            made, gone, rows = trusted_memories(rows, loading.header)
            loading.trusted += len(made)
            got.extend(map(_ID, made))
            memories.update(zip(got, made, strict=True))
            trashed_at.update(gone)
        for memory, at in checked_memories(engine, fold_recalls(rows, loading.header)):
            memories[memory.id] = memory
            got.append(memory.id)
            if at is not None:
                trashed_at[memory.id] = at
    if pack >= 0:
        loading.sources.append((pack, [actual, len(text)], got))
    else:
        loading.loose.extend(got)
    return len(memories) - before


def add_packed(loading: Loading, text: bytes, skip_json: str, got: list[str]) -> bool:
    """The records of an intact checked pack of lines as ``PackedMemory`` objects, made on
    use (``browser/packed.py``), less the skipped ids (the others' ids are added to ``got``);
    the trashed ones and those with counted recalls are made now (their trash time or counts
    are needed at ``finish``). False when the head does not describe the lines (the caller
    then validates every line)."""
    lines = text.split(b"\n")
    try:
        head = json.loads(lines[0])
        ids, keys = head[:2] if type(head) is list and len(head) in (2, 4) else (None, None)
    except (ValueError, TypeError):
        return False
    del lines[0]
    if not (type(ids) is list and type(keys) is list and len(ids) == len(keys) == len(lines)):
        return False
    columns = head_columns(head, len(ids))  # kinds and times, when the head holds them
    header = loading.header
    loading.rows += len(ids)
    skip = set(json.loads(skip_json)) if skip_json else set()
    now: list[Any] = []
    kinds, times = columns if columns is not None else (repeat(None), repeat(None))
    if not (loading.now.isdisjoint(ids) and skip.isdisjoint(ids)):  # rare: a loop per row
        kept: tuple[list, ...] = ([], [], [], [], [])
        for row in zip(ids, keys, lines, kinds, times, strict=False):  # kinds may repeat None
            if row[0] in skip:
                loading.rows -= 1
            elif row[0] in loading.now:
                now.append(parsed(row[2]))
            else:
                for column, value in zip(kept, row, strict=True):
                    column.append(value)
        ids, keys, lines, kinds, times = kept
    made = map(packed, ids, keys, lines) if columns is None \
        else map(packed_with_head, ids, keys, lines, kinds, times)
    loading.memories.update(zip(ids, made, strict=True))
    loading.trusted += len(ids)
    got.extend(ids)
    if now:
        made, gone, rest = trusted_memories(now, header)
        loading.trusted += len(made)
        got.extend(map(_ID, made))
        loading.memories.update(zip(map(_ID, made), made, strict=True))
        loading.trashed_at.update(gone)
        engine = session().engine
        for memory, at in checked_memories(engine, fold_recalls(rest, header)):
            loading.memories[memory.id] = memory
            got.append(memory.id)
            if at is not None:
                loading.trashed_at[memory.id] = at
    return True


def lines_of(text: bytes) -> list[Any]:
    """The records of a pack of lines whose text cannot be trusted, for the validator: each
    line parsed on its own; the head line is not a record."""
    return list(map(parsed, text.split(b"\n")[1:]))


def parsed(line: bytes) -> Any:
    """A line's record (``packed.line_record``); a line that is no JSON stays a text (which
    the validator refuses)."""
    try:
        return line_record(line)
    except ValueError:
        return line


def as_bytes(records: Any) -> bytes:
    """A slice's text as UTF-8 bytes: the worker sends a Uint8Array (Pyodide: a JsProxy
    copied with ``to_bytes``, ~10x cheaper than converting a JS string); a text (CPython
    callers) is encoded."""
    to_bytes = getattr(records, "to_bytes", None)
    if to_bytes is not None:
        return to_bytes()
    if isinstance(records, str):
        return records.encode()
    return bytes(records)


def trusted_memories(rows: list[Any], header: dict[str, Any]
                     ) -> tuple[list[Memory], dict[str, float], list[Any]]:
    """The rows of a checked, intact pack as Memory objects and the trashed ones' times:
    the Memory the validator's answer would make, without the validator (its one
    conversion: a time or importance that JavaScript's JSON wrote as a whole number becomes
    a float again). Also returns the rows left for ``checked_memories``: a row that is not
    such a record (not a dict, a field missing or unknown) or whose counted recalls must be
    folded in (numbers from another table)."""
    counted = header.get("recalls") or {}
    made: list[Memory] = []
    gone: dict[str, float] = {}
    odd: list[Any] = []
    for raw in rows:
        if type(raw) is not dict or (counted and raw.get("id") in counted):
            odd.append(raw)
            continue
        at = raw.pop("trashed_at", None)
        try:
            floats_again(raw)
            memory = Memory(**raw)
        except (KeyError, TypeError):
            raw["trashed_at"] = at
            odd.append(raw)
            continue
        made.append(memory)
        if at is not None:
            gone[memory.id] = float(at) if type(at) is int else at
    return made, gone, odd


def fold_recalls(rows: list[Any], header: dict[str, Any]) -> list[Any]:
    """Add each row's counted recalls (the ``recalls`` table) to its record, in place: a
    memory's counts are its record's plus its ``recalls`` row. Returns ``rows``."""
    counts = header.get("recalls") or {}
    if not counts:
        return rows
    lasts = header.get("recalls_last") or {}
    for raw in rows:
        if not isinstance(raw, dict):
            continue
        count = counts.get(raw.get("id"))
        if count is None:
            continue
        memory_id = raw["id"]
        before = raw.get("recall_count")
        raw["recall_count"] = (before if isinstance(before, int) else 0) + count
        last = raw.get("last_recalled_at")
        raw["last_recalled_at"] = max(last if isinstance(last, (int, float)) else 0,
                                      lasts.get(memory_id, 0))
    return rows


def checked_memories(engine: MemoryEngine, rows: list[Any]
                     ) -> Iterator[tuple[Memory, float | None]]:
    """The IndexedDB rows that pass the one record schema, as (Memory, trashed_at) (their
    vectors are in the kernel stores, checked by their segment's CRC); the others go to
    ``engine.quarantine`` (kept in IndexedDB untouched, reported by ``audit``)."""
    limit = engine.max_text_length
    for raw in rows:
        try:
            record = validate.record(raw, max_text_length=limit, stored=True)
        except OmoideError as e:
            quarantine(engine, raw, e)
            continue
        at = record["trashed_at"]
        yield Memory.from_record(record), at


def _own_ids(ids: list[str], memories: dict[str, Memory]) -> list[str]:
    """Each id as its memory's own string (an id without a memory as it is); C-level maps,
    no Python step per row."""
    return list(map(getattr, map(memories.get, ids), repeat("id"), ids))


def finish(character: str, live: Any, trash: Any, placement_json: str = "") -> dict[str, Any]:
    """Fill the character's store around the kernel stores the worker filled, then repair.
    ``placement_json``: what the worker's placement of the vectors found, when ``begin`` was
    given what the records say only: ``live_ids`` and ``trash_ids`` (the ids of the stores'
    rows in order), ``missing`` (no trusted vector: re-embedded) and ``corrupt_segments``."""
    loading = LOADING.pop(character)
    header, memories, trashed_at = loading.header, loading.memories, loading.trashed_at
    if placement_json:
        header.update(json.loads(placement_json))
    s = session()
    engine = s.engine
    engine.stores.pop(character, None)
    store = engine.new_store(character, stamp=header["stamp"], model_id=header["model_id"],
                             dimension=header["dimension"])
    engine.stores[character] = store
    # A memory's model names the index its vector is in: this store's stamp. (The worker's
    # re-vectorization wrote the old stamp into every record it moved until 2026-12, so a
    # record's own may be stale; set here, ``packed.load`` keeps it.)
    stamp = store.stamp
    for memory in memories.values():
        memory.model = stamp
    # the memories' own id strings (the header's are second copies parsed from its JSON):
    # one string per memory for the records, the kernels and the full-text index
    live_ids, trash_ids = _own_ids(header["live_ids"], memories), _own_ids(
        header["trash_ids"], memories)
    live_kernel = WasmKernel.adopt(live, live_ids, **KERNEL_OPTIONS)
    trash_kernel = WasmKernel.adopt(trash, trash_ids, **KERNEL_OPTIONS)
    # A quarantined record's vector row must not stay searchable without its memory.
    lost = list(filterfalse(memories.__contains__, live_ids))
    live_kernel.remove(lost)
    trash_kernel.remove([i for i in trash_ids if i not in memories])
    alive = [memories[i] for i in live_ids if i in memories] if lost \
        else list(map(memories.__getitem__, live_ids))
    trashed = [TrashEntry(memories[i], trash_kernel.vector(i), trashed_at[i])
               for i in trash_ids if i in memories]
    groups = [TextGroup(pack, source, [memories[i] for i in ids if i in memories])
              for pack, source, ids in loading.sources]
    store.adopt(live_kernel, trash_kernel, alive, trashed, text_groups=groups,
                ungrouped=loading.loose)
    s.recall_stats.loaded(character, header.get("recalls") or {})
    missing = [(memories[i], trashed_at.get(i)) for i in header["missing"] if i in memories]
    repaired = repair(store, missing)
    flush()
    return {"character": character, "loaded": len(memories) - len(missing),
            "repaired": repaired, "corrupt_segments": header["corrupt_segments"],
            "quarantined": loading.rows - len(memories), "trusted": loading.trusted}


def repair(store: Any, missing: list[tuple[Memory, float | None]]) -> int:
    """Re-embed memories whose vector was lost, with the model of their own index."""
    if not missing:
        return 0
    model, dtype, _ = parse_stamp(store.stamp)
    vectors = embed_memories(BrowserEmbedder(model, dtype),
                             [(m.text, m.context) for m, _ in missing])
    for (memory, at), vector in zip(missing, vectors, strict=True):
        store.put(memory, vector)  # persisted: the segment row is written again
        if at is not None:
            store.move_to_trash(memory.id, at)
    return len(missing)
