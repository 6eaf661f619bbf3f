"""An edit never loses what it replaced: ``update`` with a new text or context keeps the
version before it in the trash as history of the memory, restorable; restoring it undoes the
edit (the edited version goes to the trash in its place). Through the engine, the SQLite
workspace (a reopen), an export and import, and the CLI."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.exchange import export_data, import_data
from omoide.governance.ingest import ingest
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_governance_supersede import make_engine, trashed


def live_texts(e: MemoryEngine, character: str = "a") -> list[str]:
    return sorted(m.text for m in e.memories(character))


def test_an_edited_text_keeps_the_version_it_replaced_in_the_trash():
    e = make_engine()
    memory = e.remember("a", "Aki's cat is called Tama", importance=0.7)
    edited = e.update("a", memory.id, text="Aki's cat is called Mochi")
    assert edited.id == memory.id and live_texts(e) == ["Aki's cat is called Mochi"]
    [(copy_id, copy)] = trashed(e).items()
    assert copy_id != memory.id and copy.text == "Aki's cat is called Tama"
    assert copy.importance == 0.7 and copy.created_at == memory.created_at
    assert copy.meta["superseded_by"] == memory.id
    assert copy.meta["superseded_reason"] == "edited"
    assert edited.meta["supersedes"] == [copy_id]
    # with its own vector: a twin of the old text, forgotten, holds the same one
    twin = e.remember("b", "Aki's cat is called Tama")
    e.forget("b", twin.id)
    assert list(e.trash("a")[0].vector) == list(e.trash("b")[0].vector)
    # recall never ranks the old version
    hits = e.recall("a", "Aki's cat is called Tama", mode="fulltext", min_relevance=0)
    assert [h.memory.id for h in hits] == [memory.id]


def test_restoring_the_previous_version_undoes_the_edit():
    e = make_engine()
    memory = e.remember("a", "I moved to Osaka in 2019")
    e.update("a", memory.id, text="I moved to Kyoto in 2019")
    [copy_id] = trashed(e)
    restored = e.restore("a", copy_id)
    assert live_texts(e) == ["I moved to Osaka in 2019"]
    assert "superseded_by" not in restored.meta
    assert restored.meta["supersedes"] == [memory.id]
    edited = trashed(e)[memory.id]
    assert edited.text == "I moved to Kyoto in 2019"
    assert edited.meta["superseded_by"] == copy_id
    assert "restored" in edited.meta["superseded_reason"]
    # and back again: restoring the edit retires the restored version
    e.restore("a", memory.id)
    assert live_texts(e) == ["I moved to Kyoto in 2019"]
    assert sorted(m.text for m in trashed(e).values()) == ["I moved to Osaka in 2019"]


def test_a_keyed_memory_edited_keeps_one_live_memory_per_key():
    e = make_engine()
    memory = e.remember("a", "Favourite drink: green tea", key="favorite_drink")
    e.update("a", memory.id, text="Favourite drink: hojicha")
    assert [m.id for m in e.find_by_key("a", "favorite_drink")] == [memory.id]
    [copy_id] = trashed(e)
    e.restore("a", copy_id)
    assert [m.text for m in e.find_by_key("a", "favorite_drink")] == [
        "Favourite drink: green tea"]
    assert list(trashed(e)) == [memory.id]


@pytest.mark.parametrize("fields", [{"importance": 0.9}, {"kind": "preference"},
                                    {"key": "pet"}, {"meta": {"note": 1}},
                                    {"text": "Aki's cat is called Tama"}])
def test_an_edit_that_keeps_the_text_and_context_makes_no_copy(fields):
    e = make_engine()
    memory = e.remember("a", "Aki's cat is called Tama")
    e.update("a", memory.id, **fields)
    assert e.trash("a") == [] and [m.id for m in e.memories("a")] == [memory.id]


def test_a_new_context_keeps_the_version_before_it():
    e = make_engine()
    memory = e.remember("a", "It rained all day", context="2023-05-01\nuser: how was Kyoto?")
    e.update("a", memory.id, context="2023-05-02\nuser: how was Nara?")
    [copy] = trashed(e).values()
    assert copy.context == "2023-05-01\nuser: how was Kyoto?"
    assert copy.text == "It rained all day"


def test_a_restore_retires_only_a_successor_that_still_lists_it():
    # meta is the user's JSON: a superseded_by that names a memory which never replaced it
    # (or is not even a string) retires nothing
    e = make_engine()
    e.remember("a", "one")
    two = e.remember("a", "two")
    lure = e.remember("a", "three", meta={"superseded_by": two.id})
    odd = e.remember("a", "four", meta={"superseded_by": ["not", "an", "id"]})
    e.forget("a", lure.id)
    e.forget("a", odd.id)
    e.restore("a", lure.id)
    e.restore("a", odd.id)
    assert live_texts(e) == ["four", "one", "three", "two"] and e.trash("a") == []


def test_a_superseded_contradiction_without_keys_is_undone_by_its_restore():
    e = make_engine()
    typed = e.remember("a", "I love natto")
    [item] = ingest(e, "a", ["I can't stand natto anymore"], dedup_threshold=0.05).items
    assert item.action == "superseded" and item.supersedes == typed.id
    e.restore("a", typed.id)
    assert live_texts(e) == ["I love natto"]


def test_the_history_of_an_edit_survives_a_reopen_and_an_export(tmp_path):
    path = tmp_path / "mem.db"
    workspace = open_workspace(path, embedder=HashingEmbedder())
    try:
        memory = workspace.engine.remember("aoi", "Aoi plays the cello")
        workspace.engine.update("aoi", memory.id, text="Aoi plays the viola")
    finally:
        workspace.close()
    workspace = open_workspace(path, embedder=HashingEmbedder())
    try:
        e = workspace.engine
        [copy] = trashed(e, "aoi").values()
        assert copy.text == "Aoi plays the cello" and copy.meta["superseded_by"] == memory.id
        exported = json.loads(json.dumps(export_data(e, with_vectors=True)))
    finally:
        workspace.close()
    other = MemoryEngine(HashingEmbedder())
    import_data(other, exported)
    assert live_texts(other, "aoi") == ["Aoi plays the viola"]
    [copy_id] = trashed(other, "aoi")
    other.restore("aoi", copy_id)
    assert live_texts(other, "aoi") == ["Aoi plays the cello"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["tea", "coffee", "cocoa", "juice"]), min_size=1,
                max_size=6))
def test_every_text_a_memory_ever_held_stays_live_or_in_the_trash(texts):
    e = make_engine()
    memory = e.remember("a", "water")
    held = {"water"}
    for text in texts:
        e.update("a", memory.id, text=text)
        held.add(text)
        kept = set(live_texts(e)) | {m.text for m in trashed(e).values()}
        assert held <= kept
    assert len(e.memories("a")) == 1


def test_restoring_each_older_version_in_turn_leaves_one_live_version():
    """v1 -> v2 -> v3, restore v1, then v2: the restore of v2 found its successor (the
    memory, now history of v1) in the trash and retired nothing: v1 and v2 both live."""
    e = make_engine()
    m = e.remember("a", "v1 I live in Osaka")
    e.update("a", m.id, text="v2 I live in Kyoto")
    e.update("a", m.id, text="v3 I live in Nara")
    copies = {t.memory.text: t.memory.id for t in e.trash("a")}
    e.restore("a", copies["v1 I live in Osaka"])
    assert live_texts(e) == ["v1 I live in Osaka"]
    e.restore("a", copies["v2 I live in Kyoto"])
    assert live_texts(e) == ["v2 I live in Kyoto"]
    e.restore("a", m.id)  # and back to the edited memory itself
    assert live_texts(e) == ["v3 I live in Nara"]
    assert sorted(t.memory.text for t in e.trash("a")) == [
        "v1 I live in Osaka", "v2 I live in Kyoto"]


def test_a_new_meta_keeps_the_link_to_the_version_before_an_edit():
    """``update(meta=...)`` replaced the whole meta, ``supersedes`` with it: restoring the
    version before the edit then left both live."""
    e = make_engine()
    m = e.remember("a", "Aki's cat is Tama")
    e.update("a", m.id, text="Aki's cat is Mochi")
    e.update("a", m.id, meta={"note": "checked"})
    assert e.get("a", m.id).meta["note"] == "checked"
    [copy] = e.trash("a")
    e.restore("a", copy.memory.id)
    assert live_texts(e) == ["Aki's cat is Tama"]


def test_a_line_of_versions_the_user_broke_retires_nothing():
    """Links are user JSON too: a successor that no longer lists the restored version (or
    a cycle) ends the walk; nothing is retired on a guess."""
    e = make_engine()
    m = e.remember("a", "v1")
    e.update("a", m.id, text="v2")
    [copy] = e.trash("a")
    e.update("a", m.id, meta={"supersedes": []})  # the user's own list wins
    e.restore("a", copy.memory.id)
    assert sorted(live_texts(e)) == ["v1", "v2"]
