"""A memory whose meta is near the 64 KiB limit stays editable, exportable and importable
whatever the engine adds to it: the links between versions and governance's bookkeeping
(``supersedes``, ``superseded_by``, ``was_superseded_by``, ``merged_into``, ``history``,
``folded``...) have room on top of the app's 64 KiB (``engine/meta_room.py``), and the
engine never writes a record its own validator refuses (a stored record over the limit was
refused by the next edit that gave its meta back, quarantined at the next load, and its
export could not be imported)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import meta_room, validate
from omoide.engine.exchange import export_data, import_data
from omoide.errors import OmoideError
from omoide.governance.ingest import ingest
from omoide.governance.tiers import maintain_cold, promote
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_governance_tiers import COLD_POLICY, make_engine

LIMIT = meta_room.MAX_META_BYTES


def near_limit(slack: int = 0, **more) -> dict:
    """An app's meta of ``LIMIT - slack`` bytes as JSON (with ``more``, which the app's
    part of the limit does not count when they are the engine's fields)."""
    empty = meta_room.size({"blob": ""})
    meta = {"blob": "x" * (LIMIT - slack - empty)}
    assert meta_room.size(meta) == LIMIT - slack
    return {**meta, **more}


def every_record(e) -> list[dict]:
    out = []
    for character, store in e.stores.items():
        out += [m.to_dict() for m in store.records.values()]
        out += [{**t.memory.to_dict(), "trashed_at": t.trashed_at}
                for t in e.trash(character)]
    return out


def assert_sound(e) -> None:
    """Every record passes the record validator, keeps the app's blob whole, and the
    export imports into a fresh engine and exports the same again."""
    for record in every_record(e):
        validate.record(record)  # raises INVALID_RECORD naming meta before the fix
        if "blob" in record["meta"]:
            assert len(record["meta"]["blob"]) > LIMIT - 200  # the app's key is never cut
    data = json.loads(json.dumps(export_data(e, with_vectors=True)))
    fresh, _ = make_engine()
    import_data(fresh, data)
    assert json.loads(json.dumps(export_data(fresh, with_vectors=True))) == data


def test_an_edited_memory_near_the_limit_exports_and_imports_back():
    e, clock = make_engine()
    memory = e.remember("a", "Aki's cat is called Tama", meta=near_limit(12))
    clock.t += 60
    edited = e.update("a", memory.id, text="Aki's cat is called Mochi")  # supersedes: +ids
    assert meta_room.size(edited.meta) > LIMIT
    clock.t += 60
    # the app gives back the meta it read, with one change: not refused for the links
    again = e.update("a", memory.id, meta={**edited.meta, "seen": 1})
    assert again.meta["supersedes"] == edited.meta["supersedes"]
    [copy] = e.trash("a")
    clock.t += 60
    e.restore("a", copy.memory.id)  # was_superseded_by, superseded_by on the edited one
    assert_sound(e)


def test_a_near_limit_memory_survives_a_reopen_of_the_workspace(tmp_path):
    """Stored over the limit, the memory was quarantined at the next load."""
    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        memory = ws.engine.remember("a", "Aki's cat is called Tama", meta=near_limit(5))
        ws.engine.update("a", memory.id, text="Aki's cat is called Mochi")
    finally:
        ws.close()
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        assert [m.id for m in ws.engine.memories("a")] == [memory.id]
        assert ws.engine.quarantine == {}
    finally:
        ws.close()


def test_the_app_part_and_the_whole_are_refused_naming_meta():
    e, _ = make_engine()
    with pytest.raises(OmoideError) as error:
        e.remember("a", "too much", meta=near_limit(-1))
    assert error.value.code == "INVALID_ARGUMENT" and error.value.fields["name"] == "meta"
    assert "not counting the engine's own fields" in str(error.value)
    # the engine's fields have their room, not more
    e.remember("a", "fits", meta=near_limit(0, history=["y" * 1000]))
    with pytest.raises(OmoideError) as error:
        e.remember("a", "too much", meta=near_limit(0, history=["y" * 17_000]))
    assert error.value.fields["name"] == "meta"
    assert e.memories("a")[0].text == "fits" and len(e.memories("a")) == 1


def test_fitted_drops_the_engines_largest_fields_never_the_apps_keys_nor_the_links():
    meta = near_limit(0, superseded_by="01ABC", merged_into="01DEF", tier="cold",
                      supersedes=[f"id{i}" for i in range(50)],
                      folded=[{"id": f"f{i}", "text": "z" * 3000} for i in range(20)],
                      value="v" * 5000)
    out = meta_room.fitted(meta)
    assert meta_room.size(out) <= meta_room.MAX_RECORD_META_BYTES
    assert out["blob"] == meta["blob"]
    assert {k: out[k] for k in ("superseded_by", "merged_into", "tier")} == {
        "superseded_by": "01ABC", "merged_into": "01DEF", "tier": "cold"}
    assert out["supersedes"] == meta["supersedes"]  # small entries go last
    assert "value" not in out  # the largest went first
    assert out["folded"] == meta["folded"][-len(out["folded"]):]  # oldest entries first
    small = {"blob": "x", "folded": []}
    assert meta_room.fitted(small) is small


WORDS = [f"word{i:04d}" for i in range(700)]  # a long diary note (about 6,300 characters)
LONG = " ".join(WORDS)

OPS = st.sampled_from(["fold", "edit_text", "edit_meta", "take_key", "lose_key", "restore",
                       "forget", "promote", "pin", "ingest_like", "ingest_hate",
                       "ingest_grow"])


def _target(e, kind=None):
    live = [m for m in e.memories("a") if "blob" in m.meta and kind in (None, m.kind)]
    return max(live, key=lambda m: (m.updated_at, m.id)) if live else None


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(0, 64), st.booleans(), st.lists(OPS, min_size=1, max_size=10))
def test_governance_on_a_near_limit_memory_leaves_records_that_export_and_import_back(
        slack, marks, ops):
    e, clock = make_engine()
    extra = {"history": [{"text": "h" * 4000}], "merged_reason": "r" * 4000} if marks else {}
    e.remember("a", LONG, kind="diary", meta={**near_limit(slack, **extra), "tier": "cold"})
    for n, op in enumerate(ops):
        clock.t += 60
        target = _target(e)
        diary = _target(e, "diary")
        if op == "fold" and diary is not None:  # a note the long one says all of
            cut = len(diary.text.split()) - 1 - n
            e.remember("a", " ".join(diary.text.split()[:cut]), kind="diary",
                       meta={**near_limit(slack), "tier": "cold"})
            maintain_cold(e, "a", COLD_POLICY, force=True, dedup_threshold=0.1)
        elif op == "edit_text" and target is not None:
            e.update("a", target.id, text=target.text + f" more{n}")
        elif op == "edit_meta" and target is not None:
            e.update("a", target.id, meta={**target.meta, "blob": target.meta["blob"][:-12],
                                           "seen": n})
        elif op == "take_key" and target is not None:
            e.remember("a", f"The slot holds {n}", key=f"slot{n}")
            e.update("a", target.id, key=f"slot{n}")
        elif op == "lose_key" and target is not None and target.key is not None:
            e.remember("a", f"Another note {n}", key=target.key)
        elif op == "restore":
            trashed = [t.memory for t in e.trash("a") if "blob" in t.memory.meta]
            if trashed:
                e.restore("a", trashed[-1].id)
        elif op == "forget" and target is not None:
            e.forget("a", target.id)
        elif op in ("promote", "pin") and target is not None:
            promote(e, "a", target.id, pin=op == "pin")
        elif op.startswith("ingest"):
            text = {"ingest_like": "I love spicy ramen", "ingest_hate": "I hate spicy ramen",
                    "ingest_grow": "I love spicy ramen with extra garlic"}[op]
            ingest(e, "a", text, meta=near_limit(slack, **extra))
        assert_sound(e)
