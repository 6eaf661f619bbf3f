"""Versioned binary snapshot of one character's vector index, records as JSON beside it.

Index snapshot, format version 1 (all integers little-endian)::

    offset  size  field
    0       7     magic b"OMOIDE\\0"
    7       1     u8   format version (1)
    8       4     u32  CRC-32 of the whole file with these 4 bytes taken out
                       (zlib.crc32(data[:8] + data[12:])): any flipped byte is detected
    12      1     u8   vector dtype code (1 = float32)
    13      1     u8   reserved, 0
    14      2     u16  S = byte length of the model stamp
    16      2     u16  M = byte length of the model id
    18      4     u32  D = dimension
    22      4     u32  N = number of vectors
    26      S     model stamp, UTF-8 (identifies the vector space)
    26+S    M     model id, UTF-8
    ...           N ids, each u16 byte length + UTF-8 bytes
    ...           N * D float32, row-major, row i belongs to id i
    (end of file; trailing bytes are corruption)

It covers live AND trashed memories (a restore must not need the embedder). The records
(every ``Memory`` field plus ``trashed_at``) are a JSON document beside it. Both decode with
``struct``/``array``/``zlib``/``json`` only, so they load in Pyodide without numpy.
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.memory import Memory
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

MAGIC = b"OMOIDE\0"
FORMAT_VERSION = 1
RECORDS_FORMAT = 1
DTYPE_CODES = {1: "float32"}
_FIXED = struct.Struct("<7sBIBBHHII")  # through N; 26 bytes


@dataclass(frozen=True)
class IndexSnapshot:
    version: int
    stamp: str
    model_id: str
    dimension: int
    dtype: str
    ids: list[str]
    vectors: array  # float32, N * D, native order

    def row(self, position: int) -> list[float]:
        d = self.dimension
        return self.vectors[position * d : (position + 1) * d].tolist()


def encode_index(
    *, stamp: str, model_id: str, dimension: int, ids: list[str], float32_le: bytes
) -> bytes:
    if len(float32_le) != 4 * dimension * len(ids):
        raise ValueError("vector bytes do not match ids x dimension")
    stamp_bytes, model_bytes = stamp.encode(), model_id.encode()
    head = _FIXED.pack(
        MAGIC, FORMAT_VERSION, 0, 1, 0, len(stamp_bytes), len(model_bytes), dimension, len(ids)
    )
    parts = [head, stamp_bytes, model_bytes]
    for memory_id in ids:
        encoded = memory_id.encode()
        parts.append(struct.pack("<H", len(encoded)) + encoded)
    parts.append(float32_le)
    data = bytearray(b"".join(parts))
    struct.pack_into("<I", data, 8, zlib.crc32(bytes(data[:8] + data[12:])))
    return bytes(data)


def _corrupt(reason: str) -> OmoideError:
    return OmoideError.of("CORRUPT_SNAPSHOT", reason=reason)


def decode_index(data: bytes) -> IndexSnapshot:
    data = bytes(data)
    if len(data) < 8 or data[:7] != MAGIC:
        raise _corrupt("not an Omoide index snapshot (bad magic)")
    version = data[7]
    if version > FORMAT_VERSION:
        raise OmoideError.of("UNSUPPORTED_SNAPSHOT", version=version, max=FORMAT_VERSION)
    if version < 1:
        raise _corrupt(f"format version {version}")
    if len(data) < _FIXED.size:
        raise _corrupt("truncated header")
    _, _, checksum, dtype_code, _, s_len, m_len, dimension, count = _FIXED.unpack_from(data)
    if zlib.crc32(data[:8] + data[12:]) != checksum:
        raise _corrupt("checksum mismatch")
    if dtype_code not in DTYPE_CODES:
        raise _corrupt(f"unknown dtype code {dtype_code}")
    offset = _FIXED.size
    try:
        stamp = data[offset : offset + s_len].decode()
        model_id = data[offset + s_len : offset + s_len + m_len].decode()
        offset += s_len + m_len
        ids = []
        for _ in range(count):
            (length,) = struct.unpack_from("<H", data, offset)
            ids.append(data[offset + 2 : offset + 2 + length].decode())
            offset += 2 + length
    except (struct.error, UnicodeDecodeError) as error:
        raise _corrupt(f"bad id table ({error})") from None
    if offset + 4 * dimension * count != len(data):
        raise _corrupt("vector payload has the wrong size")
    vectors = array("f")
    vectors.frombytes(data[offset:])
    if sys.byteorder != "little":  # pragma: no cover
        vectors.byteswap()
    if len(set(ids)) != len(ids):
        raise _corrupt("duplicate ids")
    return IndexSnapshot(version, stamp, model_id, dimension, DTYPE_CODES[dtype_code], ids, vectors)


# -- one character: index bytes + records JSON ------------------------------------------------


def dump_character(engine: MemoryEngine, character: str) -> tuple[bytes, str]:
    store = engine.existing_store(character)
    ids, blob = store.kernel.export_float32()
    trash_ids = sorted(store.trash)
    extra = array("f")
    for memory_id in trash_ids:
        extra.extend(store.trash[memory_id].vector)
    if sys.byteorder != "little":  # pragma: no cover
        extra.byteswap()
    index = encode_index(
        stamp=store.stamp, model_id=store.model_id, dimension=store.dimension,
        ids=ids + trash_ids, float32_le=blob + extra.tobytes(),
    )
    memories: list[dict[str, Any]] = []
    for memory_id in sorted(store.records):
        memories.append(store.records[memory_id].to_dict() | {"trashed_at": None})
    for memory_id in trash_ids:
        entry = store.trash[memory_id]
        memories.append(entry.memory.to_dict() | {"trashed_at": entry.trashed_at})
    records = {
        "format": RECORDS_FORMAT,
        "character_id": store.character_id,
        "stamp": store.stamp,
        "memories": memories,
    }
    return index, json.dumps(records, ensure_ascii=False, sort_keys=True)


def _check_owners(engine: MemoryEngine, character: str, ids: set[str]) -> None:
    """Every memory belongs to one character: an id another character holds here (the
    snapshot loaded beside the one it was taken of) refuses the whole snapshot."""
    for store in engine.stores.values():
        if store.character_id == character:
            continue
        taken = ids & store.records.keys() or ids & store.trash.keys()
        if taken:
            raise OmoideError.of("MEMORY_OWNER_CONFLICT", memory_id=min(taken),
                                 character=character)


def _parse_records(records_json: str) -> dict[str, Any]:
    try:
        records = json.loads(records_json)
    except ValueError as error:
        raise _corrupt(f"records are not JSON ({error})") from None
    if not isinstance(records, dict) or not isinstance(records.get("memories"), list):
        raise _corrupt("records document has no memories list")
    if records.get("format") != RECORDS_FORMAT:
        raise OmoideError.of(
            "UNSUPPORTED_SNAPSHOT", version=records.get("format"), max=RECORDS_FORMAT
        )
    return records


def load_character(
    engine: MemoryEngine,
    character: str,
    index: bytes,
    records_json: str,
    *,
    emit: bool = False,
) -> None:
    """Replace ``character``'s store with the snapshot (everything is checked first).

    The store keeps the snapshot's model stamp; when it differs from the selected model,
    vector recall raises MODEL_MISMATCH until the character is re-vectorized.
    ``emit=False`` (boot from persistence) does not re-announce the loaded rows.
    """
    character = validate.character_id(character)
    snapshot = decode_index(index)
    records = _parse_records(records_json)
    if records.get("stamp") != snapshot.stamp:
        raise _corrupt("records and index carry different model stamps")
    position = {memory_id: p for p, memory_id in enumerate(snapshot.ids)}
    memories = []
    for n, m in enumerate(records["memories"]):
        if not isinstance(m, dict) or m.get("id") not in position:
            raise _corrupt(f"memories[{n}] is not a record of an id in the index")
        try:  # the one record schema, with the vector the index holds for it
            record = validate.record(
                m | {"character_id": character, "vector": snapshot.row(position[m["id"]])},
                max_text_length=engine.max_text_length, dimension=snapshot.dimension)
        except OmoideError as error:
            raise _corrupt(f"memories[{n}]: {str(error).rstrip('.')}") from None
        memories.append((Memory.from_dict(record), record["trashed_at"], record["vector"]))
    if sorted(m.id for m, _, _ in memories) != sorted(snapshot.ids):
        raise _corrupt("records and index hold different memory ids")
    _check_owners(engine, character, set(snapshot.ids))
    store = engine.new_store(
        character, stamp=snapshot.stamp, model_id=snapshot.model_id, dimension=snapshot.dimension
    )
    for memory, trashed_at, vector in memories:
        store.put(memory, vector, emit=emit)
        if trashed_at is not None:
            store.move_to_trash(memory.id, trashed_at, emit=emit)
    engine.stores[character] = store
