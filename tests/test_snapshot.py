import json
import struct
import zlib
from pathlib import Path

import pytest

from omoide.engine import MemoryEngine
from omoide.engine.snapshot import FORMAT_VERSION, MAGIC, decode_index, encode_index
from omoide.errors import OmoideError
from omoide.kernels import PureKernel
from tests.test_engine_embedder import HashingEmbedder

FIXTURES = Path(__file__).parent / "fixtures" / "snapshots"


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(16))
    e.remember_many("alice", ["green tea", {"text": "東京都に住んでいます", "kind": "diary"},
                              {"text": "likes TypeScript", "key": "preference:ts"}, "old news"])
    e.forget("alice", e.recall("alice", "old news", mode="fulltext")[0].memory.id)
    e.recall("alice", "tea")  # touch counters so they must survive
    return e


def code_of(call) -> str:
    with pytest.raises(OmoideError) as info:
        call()
    return info.value.code


def test_header_layout(engine):
    index, _ = engine.snapshot("alice")
    magic, version, checksum, dtype, _, s_len, m_len, dim, count = struct.unpack_from(
        "<7sBIBBHHII", index
    )
    assert magic == MAGIC and version == FORMAT_VERSION == 1 and dtype == 1
    assert (dim, count) == (16, 4)  # live + trashed
    assert index[26 : 26 + s_len].decode() == engine.embedder.stamp
    assert index[26 + s_len : 26 + s_len + m_len].decode() == engine.embedder.model_id
    assert checksum == zlib.crc32(index[:8] + index[12:])


@pytest.mark.parametrize("kernel", [None, PureKernel])
def test_round_trip_keeps_records_trash_and_recall(engine, kernel):
    index, records = engine.snapshot("alice")
    fresh = MemoryEngine(HashingEmbedder(16), kernel=kernel)
    fresh.load_snapshot("alice", index, records)
    assert fresh.memories("alice") == engine.memories("alice")
    assert [(t.memory, t.trashed_at) for t in fresh.trash("alice")] == [
        (t.memory, t.trashed_at) for t in engine.trash("alice")
    ]
    for mode in ("hybrid", "vector", "fulltext"):
        a = engine.recall("alice", "tea 東京", mode=mode, touch=False)
        b = fresh.recall("alice", "tea 東京", mode=mode, touch=False)
        assert [h.memory.id for h in a] == [h.memory.id for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)
    trashed = fresh.trash("alice")[0]
    fresh.restore("alice", trashed.memory.id)  # the trashed vector came through the snapshot
    assert fresh.recall("alice", "old news", mode="vector")[0].vector_cosine > 0.99
    assert fresh.find_by_key("alice", "preference:ts")[0].text == "likes TypeScript"


def test_loading_into_another_character_name_rescopes_records(engine):
    index, records = engine.snapshot("alice")
    fresh = MemoryEngine(HashingEmbedder(16))
    fresh.load_snapshot("alice-copy", index, records)
    assert {m.character_id for m in fresh.memories("alice-copy")} == {"alice-copy"}


def test_a_snapshot_whose_ids_another_character_holds_is_refused(engine):
    """Loaded beside the character it was taken of, every memory id was held by two
    characters at once (a forget by id, a backup or an export then met the wrong one)."""
    index, records = engine.snapshot("alice")
    before = {m.id for m in engine.memories("alice")}
    assert code_of(lambda: engine.load_snapshot("alice-copy", index, records)) == (
        "MEMORY_OWNER_CONFLICT")
    assert "alice-copy" not in engine.characters()
    assert {m.id for m in engine.memories("alice")} == before
    engine.load_snapshot("alice", index, records)  # its own character: replaced, as before
    assert {m.id for m in engine.memories("alice")} == before


def test_every_truncation_is_rejected(engine):
    index, records = engine.snapshot("alice")
    for cut in range(len(index)):
        assert code_of(lambda c=cut: decode_index(index[:c])) == "CORRUPT_SNAPSHOT"


def test_every_flipped_byte_is_rejected(engine):
    index, _ = engine.snapshot("alice")
    for position in range(len(index)):
        if position == 7:
            continue  # the version byte: covered below
        damaged = bytearray(index)
        damaged[position] ^= 0x41
        assert code_of(lambda d=bytes(damaged): decode_index(d)) == "CORRUPT_SNAPSHOT"


def test_trailing_garbage_is_rejected(engine):
    index, _ = engine.snapshot("alice")
    assert code_of(lambda: decode_index(index + b"\0\0\0\0")) == "CORRUPT_SNAPSHOT"


def test_future_version_is_unsupported_and_version_zero_corrupt(engine):
    index, _ = engine.snapshot("alice")
    future = index[:7] + bytes([2]) + index[8:]
    assert code_of(lambda: decode_index(future)) == "UNSUPPORTED_SNAPSHOT"
    zero = index[:7] + bytes([0]) + index[8:]
    assert code_of(lambda: decode_index(zero)) == "CORRUPT_SNAPSHOT"
    assert code_of(lambda: decode_index(b"PNG....")) == "CORRUPT_SNAPSHOT"


def test_records_that_do_not_match_the_index_are_rejected(engine):
    index, records = engine.snapshot("alice")
    fresh = MemoryEngine(HashingEmbedder(16))
    doc = json.loads(records)
    doc["memories"].pop()
    assert code_of(lambda: fresh.load_snapshot("a", index, json.dumps(doc))) == (
        "CORRUPT_SNAPSHOT"
    )
    doc = json.loads(records) | {"stamp": "other"}
    assert code_of(lambda: fresh.load_snapshot("a", index, json.dumps(doc))) == (
        "CORRUPT_SNAPSHOT"
    )
    doc = json.loads(records) | {"format": 9}
    assert code_of(lambda: fresh.load_snapshot("a", index, json.dumps(doc))) == (
        "UNSUPPORTED_SNAPSHOT"
    )
    assert code_of(lambda: fresh.load_snapshot("a", index, "{not json")) == "CORRUPT_SNAPSHOT"
    assert fresh.characters() == []  # nothing half-loaded


def test_encode_rejects_inconsistent_payload():
    with pytest.raises(ValueError):
        encode_index(stamp="s", model_id="m", dimension=2, ids=["a"], float32_le=b"\0" * 4)


def test_committed_v1_fixture_still_loads():
    """Format v1 files written by earlier releases must load forever (migrations start here)."""
    index = (FIXTURES / "v1-alice.index").read_bytes()
    records = (FIXTURES / "v1-alice.records.json").read_text(encoding="utf-8")
    embedder = HashingEmbedder(16)
    snap = decode_index(index)
    assert (snap.version, snap.stamp, snap.dimension, snap.dtype) == (
        1, embedder.stamp, 16, "float32"
    )
    assert snap.ids[0] == "01HZ0000000000000000000001"
    assert snap.row(0) == pytest.approx(embedder.embed_passages(["I prefer TypeScript"])[0],
                                        abs=1e-6)
    engine = MemoryEngine(embedder)
    engine.load_snapshot("alice", index, records)
    assert engine.stats("alice")["memories"] == 2 and engine.stats("alice")["trashed"] == 1
    assert engine.recall("alice", "東京", mode="hybrid")[0].memory.id == snap.ids[1]


def test_loaded_snapshot_of_another_model_blocks_vector_recall():
    index = (FIXTURES / "v1-alice.index").read_bytes()
    records = (FIXTURES / "v1-alice.records.json").read_text(encoding="utf-8")
    engine = MemoryEngine(HashingEmbedder(16, seed=5))
    engine.load_snapshot("alice", index, records)
    assert code_of(lambda: engine.recall("alice", "TypeScript", mode="vector")) == (
        "MODEL_MISMATCH"
    )
    assert engine.recall("alice", "TypeScript", mode="fulltext")[0].memory.text == (
        "I prefer TypeScript"
    )
    assert engine.mismatched_characters() == ["alice"]
