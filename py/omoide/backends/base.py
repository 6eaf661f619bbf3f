"""``MemoryBackend``: the one small interface every storage backend implements.

A *record* is a memory as plain JSON data: the fields of ``Memory.to_dict()`` plus
``trashed_at`` (None while live) and ``vector`` (a list of floats, or None when the backend was
asked not to return vectors). Ids are ULIDs, unique across characters.

Invariants every backend keeps (the contract suite in tests/test_backend_contract.py checks
them against SQLite and HTTP alike):
- ``create`` refuses an id it already holds (BACKEND_CONFLICT); nothing is overwritten.
- ``get``/``update`` answer None and ``delete`` answers False for an unknown id (HTTP 404).
- ``list`` and ``search`` never return another character's memory when a character is given;
  ``search`` always needs one.
- A query ``vector`` comes with the stamp of the ``model`` that made it and is compared with
  that model's vectors only (two models of the same dimension never meet); a vector without
  its model is refused.
- ``list`` returns ``{"items", "total", "totals_by_kind"}``; totals ignore limit/offset.
- ``update`` changes only the fields it is given; ``id`` and ``character_id`` never change.

Backends that keep characters (SQLite, HTTP, the browser's IndexedDB) also answer
``character_names() -> {id: name}``, ``deleted_characters() -> {id: deleted_at}`` (the
characters the user deleted, memories kept) and ``set_character_name(id, name,
deleted_at=KEEP)`` (``deleted_at`` a time, None for live, ``KEEP`` leaves it as stored).
"""

from __future__ import annotations

from typing import Any, Protocol

from omoide.engine import validate
from omoide.engine.memory import KIND_TYPES, Memory
from omoide.errors import OmoideError

RECORD_FIELDS = validate.RECORD_FIELDS
IMMUTABLE_FIELDS = ("id", "character_id")
DEFAULT_PAGE = 100
MAX_PAGE = 10_000
MAX_OFFSET = 2**53 - 1  # SQLite's OFFSET takes a 64-bit integer; larger was an internal error


class Keep:
    """The type of ``KEEP``: a field not given, so the stored value stays."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = Keep()


class MemoryBackend(Protocol):
    name: str

    def initialize(self) -> None: ...

    def shutdown(self) -> None: ...

    def create(self, record: dict[str, Any]) -> dict[str, Any]: ...

    def get(self, memory_id: str, *, with_vector: bool = False) -> dict[str, Any] | None: ...

    def update(self, memory_id: str, fields: dict[str, Any]) -> dict[str, Any] | None: ...

    def delete(self, memory_id: str) -> bool: ...

    def list(self, *, character_id: str | None = None, kind: str | None = None,
             trashed: bool | None = False, limit: int = DEFAULT_PAGE, offset: int = 0,
             with_vectors: bool = False) -> dict[str, Any]: ...

    def search(self, query: str, *, character_id: str, k: int = 10,
               vector: list[float] | None = None, model: str | None = None,
               kinds: list[str] | None = None) -> list[dict[str, Any]]: ...

    def health(self) -> dict[str, Any]: ...


def check_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields of an update, checked by the one record schema (``validate.record_fields``);
    a new ``kind`` brings its ``type`` along."""
    out = validate.record_fields(fields)
    if "kind" in out and "type" not in out:
        out["type"] = KIND_TYPES[out["kind"]]
    return out


def check_owner(fields: dict[str, Any], stored_character: str, memory_id: str) -> None:
    """An update may name the memory's character (``character_id``, never changed): a store
    where that id belongs to another character refuses it. Two workspaces can hold one id
    under two characters (an export edited and imported): a backup server's update of one
    overwrote the other's memory."""
    claimed = fields.get("character_id")
    if claimed is not None and claimed != stored_character:
        raise OmoideError.of("MEMORY_OWNER_CONFLICT", memory_id=memory_id, character=claimed)


def check_record(record: Any, *, require_vector: bool = True) -> dict[str, Any]:
    """A complete record for ``create``: defaults filled in, every field checked by the one
    record schema (``validate.record``). A backend that cannot embed needs the vector."""
    return validate.record(record, require_vector=require_vector)


def check_query_vector(vector: Any, model: Any) -> list[float] | None:
    if vector is None:
        return None
    if not isinstance(model, str) or not model:
        raise OmoideError.of("INVALID_ARGUMENT", name="model",
                             reason="a query vector needs the stamp of the model that made it")
    checked = validate.vector(vector, name="vector")
    dimension = validate.stamp_dimension(model, "model")
    if dimension is not None and len(checked) != dimension:  # was a page of no results
        raise OmoideError.of("INVALID_ARGUMENT", name="vector",
                             reason=f"{len(checked)} numbers; the model {model[:80]!r} "
                                    f"makes {dimension}")
    return checked


def record_of(memory: Memory, vector: list[float] | None = None,
              trashed_at: float | None = None) -> dict[str, Any]:
    return memory.to_dict() | {"trashed_at": trashed_at, "vector": vector}


def memory_of(record: dict[str, Any]) -> Memory:
    return Memory.from_dict({k: v for k, v in record.items() if k in Memory.__dataclass_fields__})


def page_args(limit: Any, offset: Any) -> tuple[int, int]:
    try:
        limit, offset = int(limit), int(offset)
    except (TypeError, ValueError):
        raise OmoideError.of("INVALID_ARGUMENT", name="limit/offset",
                             reason="must be integers") from None
    if not 0 <= limit <= MAX_PAGE or not 0 <= offset <= MAX_OFFSET:
        raise OmoideError.of("INVALID_ARGUMENT", name="limit/offset",
                             reason=f"limit 0..{MAX_PAGE}, offset 0..2**53-1")
    return limit, offset
