"""Import with the vectors kept binary (the browser's worker packs each character's
``vectors`` into one Float32Array): ``exchange.check_import`` validates every record with the
one record validator, maps reused vectors to rows of the pack instead of Python lists, and
names the field of anything wrong exactly as for a file with JSON vectors; a store adds such
memories in bulk (``add_loaded``) and indexes their texts, context included, later."""

from __future__ import annotations

import pytest

from omoide.engine import MemoryEngine, exchange
from omoide.engine.memory import Memory
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder


def engine() -> MemoryEngine:
    return MemoryEngine(HashingEmbedder(8))


def export_file(e: MemoryEngine, n: int, stamp: str | None = None,
                trashed: int = 0) -> tuple[dict, exchange.PackedVectors]:
    memories = [{"id": f"m{i:04d}", "text": f"note {i} about tea", "kind": "fact",
                 "created_at": 1.0 + i, "updated_at": 1.0 + i} for i in range(n)]
    trash = [m | {"trashed_at": 50.0} for m in memories[n - trashed:]]
    data = {"format": "omoide-export", "version": 2, "characters": [
        {"id": "aoi", "stamp": stamp or e.embedder.stamp, "memories": memories[:n - trashed],
         "trash": trash}]}
    ids = [m["id"] for m in reversed(memories)]  # any order: rows are looked up by id
    return data, exchange.PackedVectors(ids, e.embedder.dimension)


def test_packed_vectors_are_reused_by_row_not_embedded() -> None:
    e = engine()
    data, pack = export_file(e, 5, trashed=2)
    plan = exchange.check_import(e, data, {"aoi": pack})
    [c] = plan.characters
    assert c.packed_rows == {f"m{i:04d}": 4 - i for i in range(5)}
    assert all(r["vector"] is None for r in c.records)
    assert plan.to_embed == 0
    assert [r["trashed_at"] for r in c.records] == [None, None, None, 50.0, 50.0]


def test_another_models_pack_is_embedded_again() -> None:
    e = engine()
    data, pack = export_file(e, 3, stamp="other/model@fp32#8")
    plan = exchange.check_import(e, data, {"aoi": pack})
    assert plan.characters[0].packed_rows == {} and plan.to_embed == 3


def test_a_pack_of_the_wrong_dimension_is_named_by_the_record_validator() -> None:
    e = engine()
    data, pack = export_file(e, 2)
    with pytest.raises(OmoideError) as err:
        exchange.check_import(e, data, {"aoi": exchange.PackedVectors(pack.ids, 7)})
    assert err.value.code == "MALFORMED_IMPORT"
    assert err.value.fields["field"] == "vector"
    assert "has 7 numbers, 8 expected" in str(err.value)
    # the same words as a file whose JSON vectors are 7 long
    data["characters"][0]["vectors"] = {i: [0.5] * 7 for i in pack.ids}
    with pytest.raises(OmoideError) as json_err:
        exchange.check_import(e, data)
    assert str(json_err.value) == str(err.value)


def test_a_packed_vector_of_no_memory_is_refused() -> None:
    e = engine()
    data, pack = export_file(e, 2)
    with pytest.raises(OmoideError) as err:
        exchange.check_import(e, data, {"aoi": exchange.PackedVectors([*pack.ids, "ghost"],
                                                                       8)})
    assert err.value.fields["field"] == "vectors" and "ghost" in str(err.value)


def test_a_bad_record_beside_a_pack_is_named_and_nothing_is_planned() -> None:
    e = engine()
    data, pack = export_file(e, 3)
    data["characters"][0]["memories"][1]["importance"] = 7
    with pytest.raises(OmoideError) as err:
        exchange.check_import(e, data, {"aoi": pack})
    assert err.value.fields["field"] == "importance" and "memories[1]" in str(err.value)
    assert "aoi" not in e.stores


def test_ids_held_elsewhere_are_refused_and_held_ones_skipped() -> None:
    e = engine()
    e.remember("ben", "a note of ben")
    held = e.memories("ben")[0].id
    data, pack = export_file(e, 2)
    data["characters"][0]["memories"][0]["id"] = held
    pack = exchange.PackedVectors([held, "m0001"], 8)
    with pytest.raises(OmoideError) as err:
        exchange.check_import(e, data, {"aoi": pack})
    assert "already belongs to 'ben'" in str(err.value)
    data["characters"][0]["id"] = "ben"  # its own memory: skipped, not refused
    plan = exchange.check_import(e, data, {"ben": pack})
    assert plan.characters[0].skipped == 1 and plan.characters[0].packed_rows == {"m0001": 1}


def test_add_loaded_adds_in_bulk_and_indexes_text_and_context_later() -> None:
    e = engine()
    e.remember("aoi", "an ordinary first memory")
    store = e.stores["aoi"]
    memory = Memory.from_dict({"id": "m-new", "character_id": "aoi",
                               "text": "the violin lesson", "context": "music school",
                               "kind": "fact", "type": "factual", "key": None,
                               "importance": 0.5, "created_at": 1.0,
                               "updated_at": 1.0, "model": e.embedder.stamp})
    store.kernel.add([memory.id], [e.embedder.embed_passages([memory.text])[0]])
    store.add_loaded([memory], [])
    assert store.index_text(0) == 1  # not analyzed yet
    hits = e.recall("aoi", "music school", mode="fulltext", min_relevance=0)
    assert [h.memory.id for h in hits] == ["m-new"]  # the index completed itself first
    assert store.index_text(0) == 0
