"""Export and import: one JSON format shared by the web app and the CLI.

Format version 2 (version 1 files are still read)::

    {"format": "omoide-export", "version": 2,
     "characters": [{"id", "name", "stamp" (null for a character without memories),
                     "memories": [Memory...] (oldest first),
                     "trash": [Memory + trashed_at...] (oldest deletion first),
                     "vectors"?: {id: [floats]} (live AND trashed memories, ids sorted)}]}

Characters are sorted by id and every character the caller names is listed, memories or not,
so export -> import -> export into a fresh workspace gives the same bytes.

Import validates the whole file first (every record through the one record schema,
``validate.record``) and writes nothing when any part is bad (``MALFORMED_IMPORT`` naming the
record and field). It skips ids the character already holds, but applies a later version
that says something else (the held one kept as history, as an edit keeps it) and finishes
a history copy an interrupted import left live (it moves it to the trash). It refuses ids
of another character, restores the trash with its ``trashed_at``, and reuses the export's
vectors only when its stamp is the selected model's (otherwise the texts are embedded
again). Last, each key of the file's live records is left with one live memory, the newest
(``settle_imported``). Display names
come back in the report (``names``); the caller stores them (IndexedDB or the SQLite
``characters`` table) for characters it did not know.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.bulk import acyclic_bulk
from omoide.engine.embedding import embed_memories
from omoide.engine.memory import Memory, new_memory_id
from omoide.engine.supersede import (
    SUPERSEDED_BY,
    held_links,
    linked,
    retire,
    settle_keys,
)
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.store import CharacterStore

EXPORT_FORMAT = "omoide-export"
EXPORT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MEMORY_FIELDS = frozenset(Memory.__dataclass_fields__)
IMPORT_FIELDS = MEMORY_FIELDS | {"trashed_at"}  # what a record of an export file may hold


def export_data(engine: MemoryEngine, characters: list[str] | None = None, *,
                with_vectors: bool = False, names: dict[str, str] | None = None
                ) -> dict[str, Any]:
    """Every character of the engine and of ``names`` (id -> display name; characters
    without memories are listed too), or only ``characters`` (an empty list: none)."""
    names = dict(names or {})
    if characters is not None:
        chosen = []
        for character in dict.fromkeys(characters):  # a name given twice is listed once
            if character not in names:
                engine.existing_store(character)  # UNKNOWN_CHARACTER
            chosen.append(character)
    else:
        chosen = sorted(set(engine.stores) | set(names))
    out = []
    for character in chosen:
        store = engine.stores.get(character)
        empty = store is None or store.is_empty()
        live = [] if empty else engine.memories(character)
        trash = [] if empty else engine.trash(character)
        entry: dict[str, Any] = {
            "id": character, "name": names.get(character, character),
            "stamp": None if empty else store.stamp,  # type: ignore[union-attr]
            "memories": [m.to_dict() for m in live],
            "trash": [e.memory.to_dict() | {"trashed_at": e.trashed_at} for e in trash],
        }
        if with_vectors:
            vectors = {e.memory.id: list(e.vector) for e in trash}
            vectors |= {m.id: store.kernel.vector(m.id) for m in live}  # type: ignore[union-attr]
            entry["vectors"] = dict(sorted(vectors.items()))
        out.append(entry)
    return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "characters": out}


@dataclass(frozen=True)
class PackedVectors:
    """A character's ``vectors`` taken out of the file as one binary block (the browser's
    worker packs them into a Float32Array): row n is the vector of ``ids[n]``, every row
    ``dimension`` long and finite (the packer guarantees both, or does not pack)."""

    ids: list[str]
    dimension: int


@dataclass
class CharacterImport:
    id: str
    name: str
    records: list[dict[str, Any]] = field(default_factory=list)  # validated, not yet held
    skipped: int = 0
    # id -> row of the packed block, for records whose vector is reused from it (their
    # ``vector`` is None: the rows stay binary, the caller adds them in bulk)
    packed_rows: dict[str, int] = field(default_factory=dict)
    # id -> trashed_at: records the file has in the trash that this store holds live and
    # unchanged, as an import interrupted between the two writes of a trashed record left
    # them (``import_data`` writes it live, then moves it); the re-run finishes the move
    unfinished: dict[str, float] = field(default_factory=dict)
    # the keys of the file's live records (held ones too) and of its newer versions that
    # stay live here: one live memory each after the import (``settle_imported``)
    keys: set[str] = field(default_factory=set)
    # live records the store holds live in an older, different version (the file's
    # ``updated_at`` is later): the file's version replaces it, the store's becomes history
    newer: list[dict[str, Any]] = field(default_factory=list)
    # id -> row of the packed block holding the vector of a ``newer`` record (the caller
    # fills the record's ``vector`` from it: a newer version is never embedded again)
    newer_rows: dict[str, int] = field(default_factory=dict)
    # of ``newer``: the ids this store holds in the trash (forgotten here, edited on the
    # other device): the file's version takes the trashed one's place, still in the trash
    newer_trashed: set[str] = field(default_factory=set)
    repaired: int = 0  # lone surrogates of its records replaced by U+FFFD


@dataclass
class ImportPlan:
    characters: list[CharacterImport]

    @property
    def to_embed(self) -> int:
        return sum(r["vector"] is None and r["id"] not in c.packed_rows
                   for c in self.characters for r in c.records)


def _bad(reason: str, field_name: str | None = None) -> OmoideError:
    return OmoideError.of("MALFORMED_IMPORT", reason=reason, field=field_name)


def owner_of(engine: MemoryEngine, memory_id: str) -> str | None:
    """The character holding ``memory_id`` (live or in the trash), if any."""
    for store in engine.stores.values():  # a few characters: no map of every id is built
        if memory_id in store.records or memory_id in store.trash:
            return store.character_id
    return None


# what a recall changes on a live memory, and the stamp its store sets: not what it says
_USE_FIELDS = frozenset({"recall_count", "last_recalled_at", "model"})


def _says_the_same(memory: Memory, record: dict[str, Any]) -> bool:
    held = memory.to_dict()
    wanted = Memory.from_dict(record).to_dict()
    return all(held[k] == v for k, v in wanted.items() if k not in _USE_FIELDS)


def _left_live(store: CharacterStore, record: dict[str, Any]) -> bool:
    """Whether the store holds ``record`` (a trashed one of the file) live, saying exactly
    what the file says, and retired (``superseded_by``): the first write of an interrupted
    import. A live memory never carries that mark otherwise (a restore removes it), so a
    memory the user restored after an import is never sent back; a plain forgotten one left
    live by an interruption stays live (nothing lost; forget it again)."""
    memory = store.records.get(record["id"])
    return (memory is not None and type(memory.meta.get(SUPERSEDED_BY)) is str
            and _says_the_same(memory, record))


# what a memory says, for ``_is_newer``: not when it changed, how often it was recalled,
# its stamp or the tier governance files it in (bookkeeping, not an edit)
_SAID_FIELDS = ("text", "context", "kind", "key", "importance", "created_at", "conversation",
                "turn")


def _held(store: CharacterStore, memory_id: str) -> Memory | None:
    """The store's memory of that id, live or in the trash."""
    memory = store.records.get(memory_id)
    if memory is None and memory_id in store.trash:
        memory = store.trash[memory_id].memory
    return memory


def _is_newer(store: CharacterStore, record: dict[str, Any]) -> bool:
    """Whether ``record`` (of the file, live or trashed) is a later version of a memory the
    store holds, live or in the trash: changed after it (``updated_at``) and saying something
    else (an edit made on another device since the last sync). A trashed one too: the edit
    made on the other device after this one forgot it was dropped, found nowhere."""
    memory = _held(store, record["id"])
    if memory is None or record["updated_at"] <= memory.updated_at:
        return False
    held, wanted = memory.to_dict(), Memory.from_dict(record).to_dict()
    return (any(held[k] != wanted[k] for k in _SAID_FIELDS)
            or _without_tier(held["meta"]) != _without_tier(wanted["meta"]))


def _without_tier(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k != "tier"}


def check_import(engine: MemoryEngine, data: Any,
                 packed: dict[str, PackedVectors] | None = None, *,
                 surrogate_free: bool = False) -> ImportPlan:
    """Validate the whole file against the engine's state; nothing is written.
    ``packed``: character id -> its ``vectors``, taken out of ``data`` as a binary block.
    ``surrogate_free``: the file's JSON text was found to hold no lone surrogate
    (``validate.json_text_holds_no_lone_surrogate``), so no record is walked for one."""
    with acyclic_bulk():  # a record per row, no cycles
        return _check_import(engine, data, packed, surrogate_free)


def _check_import(engine: MemoryEngine, data: Any,
                  packed: dict[str, PackedVectors] | None,
                  surrogate_free: bool) -> ImportPlan:
    check_format(data)
    stamp, dimension = engine.embedder.stamp, engine.embedder.dimension
    seen_ids: set[str] = set()
    plans: list[CharacterImport] = []
    seen_characters: set[str] = set()
    for n, c in enumerate(data["characters"]):
        where = f"characters[{n}]"
        if not isinstance(c, dict):
            raise _bad(f"{where} must be an object")
        unknown = sorted(set(c) - {"id", "name", "stamp", "memories", "trash", "vectors"})
        if unknown:
            raise _bad(f"{where} has unknown field(s) {', '.join(map(str, unknown))[:200]}",
                       str(unknown[0]))
        try:
            character = validate.character_id(c.get("id"))
        except OmoideError as e:
            raise _bad(f"{where}.id: {str(e).rstrip('.')}", "id") from None
        if character in seen_characters:
            raise _bad(f"character {character!r} appears twice", "id")
        seen_characters.add(character)
        where = f"character {character!r}"
        given = c.get("name", character)
        if not isinstance(given, str):
            raise _bad(f"{where}: name: must be a string", "name")
        name = validate.repaired_character_name(given, character)  # see its doc
        file_stamp = c.get("stamp")
        if file_stamp is not None:
            try:
                validate.stamp_dimension(file_stamp, "stamp")
            except OmoideError as e:
                raise _bad(f"{where}: {str(e).rstrip('.')}", "stamp") from None
        vectors = c.get("vectors")
        if vectors is not None and not isinstance(vectors, dict):
            raise _bad(f"{where}: vectors must be an object of id -> numbers", "vectors")
        pack = (packed or {}).get(character) if vectors is None else None
        pack_rows = {i: n for n, i in enumerate(pack.ids)} if pack is not None else {}
        reuse = (vectors is not None or pack is not None) and file_stamp == stamp
        plan = CharacterImport(character, name)
        store = engine.stores.get(character)
        ids_here: set[str] = set()
        for section in ("memories", "trash"):
            rows = c.get(section, [])
            if not isinstance(rows, list):
                raise _bad(f"{where}: {section} must be a list", section)
            trash = section == "trash"
            for i, m in enumerate(rows):
                at = f"{where} {section}[{i}]"
                if not isinstance(m, dict):
                    raise _bad(f"{at} must be an object", section)
                trashed_at = m.get("trashed_at")
                if trash and trashed_at is None:
                    raise _bad(f"{at}: trashed_at: missing", "trashed_at")
                if not trash and trashed_at is not None:
                    raise _bad(f"{at}: a live memory has a trashed_at", "trashed_at")
                if not surrogate_free:
                    m, repaired = validate.without_lone_surrogates(m)  # see its doc
                    plan.repaired += repaired
                if not m.keys() <= IMPORT_FIELDS:  # in C, no set made; sorted only when any
                    unknown = sorted(str(k) for k in m.keys() - IMPORT_FIELDS)
                    raise _bad(f"{at}: unknown field(s) {', '.join(unknown)[:200]}", unknown[0])
                if "character_id" in m and m["character_id"] != character:
                    # a record of another character in this one's section: refused, never
                    # filed under the section's character
                    raise _bad(f"{at}: character_id {str(m['character_id'])[:64]!r} is not "
                               f"the section's {character!r}", "character_id")
                memory_id = m.get("id")
                vector = vectors.get(memory_id) if reuse and vectors is not None \
                    and isinstance(memory_id, str) else None
                in_pack = reuse and pack is not None and memory_id in pack_rows
                if in_pack and pack.dimension != dimension:  # type: ignore[union-attr]
                    # the one validator words the error (only the length matters here)
                    vector = [1.0] * pack.dimension  # type: ignore[union-attr]
                try:
                    record = validate.record(
                        m, given={"character_id": character, "model": stamp,
                                  "trashed_at": trashed_at, "vector": vector},
                        max_text_length=engine.max_text_length, dimension=dimension)
                except OmoideError as e:
                    raise _bad(f"{at}: {str(e).rstrip('.')}", e.fields.get("field")) from None
                memory_id = record["id"]
                if not trash and record["key"] is not None:
                    plan.keys.add(record["key"])
                if memory_id in seen_ids:
                    raise _bad(f"{at}: memory id {memory_id!r} appears twice", "id")
                seen_ids.add(memory_id)
                ids_here.add(memory_id)
                if store is not None and (memory_id in store.records
                                          or memory_id in store.trash):  # held: no copy
                    if trash and _left_live(store, record):
                        plan.unfinished[memory_id] = trashed_at
                    elif _is_newer(store, record):
                        # (one the file has in the trash too: edited there, then forgotten;
                        # it keeps this store's state, as an import never forgets)
                        plan.newer.append(record)  # its vector: the file's, or embedded
                        if memory_id in store.trash:
                            plan.newer_trashed.add(memory_id)
                        elif record["key"] is not None:  # live here in the file's version
                            plan.keys.add(record["key"])
                        if in_pack:
                            plan.newer_rows[memory_id] = pack_rows[memory_id]
                    else:
                        plan.skipped += 1
                    continue
                owner = owner_of(engine, memory_id)
                if owner is not None:
                    raise _bad(f"{at}: memory id {memory_id!r} already belongs to "
                               f"{owner!r}", "id")
                if memory_id in engine.quarantine:
                    raise _bad(f"{at}: memory id {memory_id!r} is held by a quarantined "
                               f"row (see audit)", "id")
                if in_pack:
                    plan.packed_rows[memory_id] = pack_rows[memory_id]
                plan.records.append(record)
        for memory_id in pack_rows:
            if memory_id not in ids_here:
                raise _bad(f"{where}: a vector for {str(memory_id)[:64]!r}, which is not "
                           f"one of its memories", "vectors")
        for memory_id, vector in (vectors or {}).items():
            if memory_id not in ids_here:
                raise _bad(f"{where}: a vector for {str(memory_id)[:64]!r}, which is not "
                           f"one of its memories", "vectors")
            if not reuse:  # another model's vectors: checked, then embedded again
                try:
                    validate.vector(vector, name=f"vectors[{memory_id!r}]")
                except OmoideError as e:
                    raise _bad(f"{where}: {str(e).rstrip('.')}", "vectors") from None
        if (plan.records or plan.newer or plan.unfinished) and store is not None:
            engine.check_model(store)  # every write of the file is refused up front
        plans.append(plan)
    return ImportPlan(plans)


def check_format(data: Any) -> None:
    """The envelope only (format, version, a list of characters): cheap, before a workspace
    is even opened."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise _bad(f"not an Omoide export (format must be {EXPORT_FORMAT!r})", "format")
    version = data.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:  # true == 1
        raise _bad(f"unsupported version {data.get('version')!r} (readable: "
                   f"{', '.join(map(str, READABLE_VERSIONS))})", "version")
    if not isinstance(data.get("characters"), list):
        raise _bad("'characters' must be a list", "characters")


def import_data(engine: MemoryEngine, data: Any,
                plan: ImportPlan | None = None) -> dict[str, Any]:
    """Import a checked file (``plan`` from ``check_import``, computed when not given)."""
    plan = plan or check_import(engine, data)
    report: dict[str, Any] = {"imported": 0, "trashed": 0, "skipped": 0, "reembedded": 0,
                              "characters": [], "names": {}}
    # every character's texts are embedded before anything is written: an embedding that
    # fails (the model, the worker's memory) leaves no character half imported
    needs = {c.id: _to_embed(engine, c) for c in plan.characters}
    flat = [r for need in needs.values() for r in need]
    embedded = dict(zip([r["id"] for r in flat],
                        embed_memories(engine.embedder,
                                       [(r["text"], r.get("context")) for r in flat]),
                        strict=True)) if flat else {}
    for c in plan.characters:
        report["characters"].append(c.id)
        report["names"][c.id] = c.name
        report["skipped"] += c.skipped
        if c.repaired:
            report["repaired"] = report.get("repaired", 0) + c.repaired
        if c.id not in engine.stores:
            engine.writable_store(c.id)  # listed from now on, memories or not
        if c.unfinished:
            store = engine.writable_store(c.id)
            for memory_id, at in c.unfinished.items():
                store.move_to_trash(memory_id, at)
            report["trashed"] += len(c.unfinished)
            report["finished"] = report.get("finished", 0) + len(c.unfinished)
        if not c.records and not c.newer:
            continue
        store = engine.writable_store(c.id)
        for r in c.newer:
            vector = r["vector"] if r["vector"] is not None else embedded.get(r["id"])
            if r["id"] in c.newer_trashed:  # replaced as a live one, then forgotten again
                forgotten_at = store.trash[r["id"]].trashed_at
                store.restore(r["id"])
                _replace_with_newer(engine, store, r, vector)
                store.move_to_trash(r["id"], forgotten_at)
            else:
                _replace_with_newer(engine, store, r, vector)
        report["updated"] = report.get("updated", 0) + len(c.newer)
        for r in c.records:
            memory = Memory.from_dict(r)
            store.put(memory, r["vector"] if r["vector"] is not None else embedded[r["id"]])
            if r["trashed_at"] is not None:
                store.move_to_trash(memory.id, r["trashed_at"])
                report["trashed"] += 1
        report["imported"] += len(c.records)
        report["reembedded"] += len(needs[c.id])
    report["superseded"] = settle_imported(engine, plan)
    return report


def _to_embed(engine: MemoryEngine, c: CharacterImport) -> list[dict[str, Any]]:
    """The records of ``c`` without a vector: new ones, and newer versions whose text or
    context changed (a held memory's stored vector stays otherwise)."""
    store = engine.stores.get(c.id)
    return [r for r in c.records if r["vector"] is None] + [
        r for r in c.newer if r["vector"] is None and store is not None and _new_text(store, r)]


def _new_text(store: CharacterStore, record: dict[str, Any]) -> bool:
    old = _held(store, record["id"])
    assert old is not None  # a ``newer`` record's memory is held
    return old.text != record["text"] or old.context != record.get("context")


def _replace_with_newer(engine: MemoryEngine, store: CharacterStore,
                        record: dict[str, Any], vector: list[float] | None) -> None:
    """The file's later version of a held memory replaces it, as an edit does
    (``engine.update``): the held version is first written as a copy under a new id, then
    the memory takes the file's version (``vector`` None: text and context unchanged, the
    stored vector stays), and the copy goes to the trash as its history, restorable."""
    old = store.records[record["id"]]
    # the recalls counted here are this device's use of the memory: never fewer after it
    newer = dataclasses.replace(
        Memory.from_dict(record), recall_count=max(old.recall_count,
                                                   record.get("recall_count") or 0),
        last_recalled_at=max(old.last_recalled_at or 0.0,
                             record.get("last_recalled_at") or 0.0) or None)
    if newer.text == old.text and newer.context == old.context:
        # the same words (importance, kind, key or meta changed): no copy, as an edit of
        # those makes none; the stored vector stays
        store.put(linked(newer, held_links(old.meta)) if held_links(old.meta) else newer, None)
        return
    at = engine.now()
    copy = dataclasses.replace(old, id=new_memory_id(at))
    store.put(copy, store.kernel.vector(old.id))
    # the held version's own history stays linked (a restore of it finds this memory)
    links = held_links(old.meta)
    store.put(linked(newer, [*links, copy.id]), vector)
    retire(store, copy.id, old.id, at, "replaced by a newer version (import)")


def settle_imported(engine: MemoryEngine, plan: ImportPlan) -> int:
    """One live memory per key after an import: where the file and the workspace (or two
    records of the file) hold one key live, the newest stays and the others become its
    history (``supersede.settle_keys``: in the trash, restorable). Returns how many."""
    retired = 0
    for c in plan.characters:
        store = engine.stores.get(c.id)
        if store is not None and c.keys:
            retired += len(settle_keys(store, sorted(c.keys), engine.now(),
                                       "same key (imported)"))
    return retired
