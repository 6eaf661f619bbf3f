"""Import in the browser (rpc verb ``import_data``): the export format of
``omoide.engine.exchange``, with the vectors kept binary.

The worker takes each character's ``vectors`` out of the file before the call and packs them
into one Float32Array (``packed``: character -> ids and dimension; a file whose vectors are
not all finite numbers of one length is passed on as it is, and the one record validator
names what is wrong). The whole file is checked first by ``exchange.check_import`` (every
record through ``validate.record``; nothing is written when any part is bad). The reused rows
then go from the worker's array straight into the character's kernels
(``WasmKernel.add_rows``), the records into the store without a change per memory
(``CharacterStore.add_loaded``; BM25 analysis deferred as at boot), and one ``import``
payload commits them with the call's other changes in ONE IndexedDB transaction
(``persist_many``: full segments written directly, the rest to the tail). Records without a
reusable vector (another model's file, none given) take the usual path: embedded, then
``store.put``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..engine import exchange
from ..engine.bulk import acyclic_bulk
from ..engine.memory import Memory, TrashEntry
from .host import host, to_js_ints, wait
from .packed import column_lines
from .rpc import handler, payload_holds_no_lone_surrogate
from .session import session


@handler("import_data")
def import_data(data: Any, packed: dict[str, Any] | None = None) -> dict[str, Any]:
    with acyclic_bulk():  # records and Memory objects per row, no cycles
        return _import_data(data, packed)


def _import_data(data: Any, packed: dict[str, Any] | None) -> dict[str, Any]:
    s = session()
    engine = s.engine
    packs = {str(c): exchange.PackedVectors([str(i) for i in p["ids"]], int(p["dimension"]))
             for c, p in (packed or {}).items()}
    plan = exchange.check_import(engine, data, packs,
                                 surrogate_free=payload_holds_no_lone_surrogate())
    for c in plan.characters:
        if c.newer_rows:
            add_newer_vectors(c)
    # what must be embedded first: an embedding that fails leaves no packed row added
    rest = exchange.ImportPlan([replace(c, records=[r for r in c.records
                                                    if r["id"] not in c.packed_rows],
                                        packed_rows={}) for c in plan.characters])
    report = exchange.import_data(engine, data, plan=rest)
    for c in plan.characters:
        if c.packed_rows:
            imported, trashed = add_packed(c)
            report["imported"] += imported
            report["trashed"] += trashed
    report["superseded"] += exchange.settle_imported(engine, plan)  # the packed rows' keys
    for character, name in report["names"].items():
        # in the import's own transaction: a tab closed right after the commit keeps them
        s.listener.add_bulk({"op": "name", "character": character, "name": name}, first=True)
    return report


def add_newer_vectors(plan: exchange.CharacterImport) -> None:
    """The packed vectors of the file's newer versions of held memories, set on their
    records (a few edits made on another device: one small block, read as numbers)."""
    records = [r for r in plan.newer if r["id"] in plan.newer_rows]
    rows = [plan.newer_rows[r["id"]] for r in records]
    block = wait(host().import_rows(plan.id, to_js_ints(rows))).to_py()
    d = len(block) // len(rows)
    for n, record in enumerate(records):
        record["vector"] = list(block[n * d:(n + 1) * d])


def add_packed(plan: exchange.CharacterImport) -> tuple[int, int]:
    """Add a character's records whose vectors are rows of the worker's packed block;
    returns how many were imported and how many of them went to the trash."""
    s = session()
    store = s.engine.writable_store(plan.id)  # MODEL_MISMATCH: re-vectorize it first
    records = [r for r in plan.records if r["id"] in plan.packed_rows]
    live = [r for r in records if r["trashed_at"] is None]
    gone = [r for r in records if r["trashed_at"] is not None]
    ordered = live + gone
    rows = to_js_ints([plan.packed_rows[r["id"]] for r in ordered])
    # the worker gathers these rows (live first) into one block and keeps it for the commit
    block = wait(host().import_rows(plan.id, rows))
    d = store.dimension
    store.kernel.add_rows([r["id"] for r in live], block.subarray(0, len(live) * d))
    store.trash_kernel.add_rows([r["id"] for r in gone],
                                block.subarray(len(live) * d, len(ordered) * d))
    trashed_at = [r["trashed_at"] for r in ordered]
    ids = [r["id"] for r in ordered]
    # one keyword call per Memory; the records then hold exactly its fields: the payload
    memories = [Memory.from_record(r) for r in ordered]
    trashed = [TrashEntry(m, store.trash_kernel.vector(m.id), at)
               for m, at in zip(memories[len(live):], trashed_at[len(live):], strict=True)]
    store.add_loaded(memories[:len(live)], trashed)
    # each record as the line its record pack stores (the worker writes the lines as they are)
    s.listener.add_bulk({
        "op": "import", "character": plan.id, "stamp": store.stamp,
        "model_id": store.model_id, "dimension": d, "ids": ids,
        "keys": [r["key"] for r in ordered], "kinds": [r["kind"] for r in ordered],
        "created_at": [r["created_at"] for r in ordered],
        "lines": column_lines(ordered, trashed_at),
        "trashed_at": trashed_at,
    })
    # what ``mirror_ops`` makes of a new record with its vector: the whole record, later
    s.mirror.pending += [{"op": "upsert", "id": i} for i in ids]
    return len(ordered), len(gone)
