"""Index context (``remember(..., context=...)``): indexed, never displayed; kept through
update, snapshot, export/import, trash and re-vectorization."""

import math

import pytest

from omoide.engine import MemoryEngine
from omoide.engine.exchange import export_data, import_data
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder

CONTEXT = "On 8 May 2023: Mika: we adopted a grey cat from the shelter"


def blend(embedder, text, context):
    a, b = embedder.embed_passages([text, context])
    total = [x + y for x, y in zip(a, b, strict=True)]
    norm = math.sqrt(sum(x * x for x in total))
    return [x / norm for x in total]


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(128))
    e.remember_many("mika", [
        {"text": "Mika: his name is Biscuit", "context": CONTEXT, "kind": "diary"},
        {"text": "Mika: the weather was nice", "kind": "diary"},
        "Mika likes green tea",
    ])
    return e


def memory_with_context(engine, character="mika"):
    return next(m for m in engine.memories(character) if m.context)


def test_the_vector_is_the_normalized_blend_of_text_and_context(engine):
    memory = memory_with_context(engine)
    assert memory.context == CONTEXT and memory.text == "Mika: his name is Biscuit"
    stored = engine.stores["mika"].kernel.vector(memory.id)
    expected = blend(engine.embedder, memory.text, memory.context)
    assert stored == pytest.approx(expected, abs=1e-5)


def test_full_text_finds_a_memory_by_its_context_and_ranks_own_words_higher(engine):
    hits = engine.recall("mika", "grey cat shelter", mode="fulltext", min_relevance=0)
    assert [h.memory.text for h in hits] == ["Mika: his name is Biscuit"]
    engine.remember("mika", "Mika: a grey cat sat on the wall")
    hits = engine.recall("mika", "grey cat", mode="fulltext", min_relevance=0)
    assert hits[0].memory.text == "Mika: a grey cat sat on the wall"  # own words weigh more


def test_remember_context_is_validated_and_nothing_is_written_on_error(engine):
    before = len(engine.memories("mika"))
    for bad in (42, ["x"], "x" * (engine.max_text_length + 1)):
        with pytest.raises(OmoideError) as info:
            engine.remember_many("mika", ["fine", {"text": "t", "context": bad}])
        assert info.value.code == "INVALID_ARGUMENT" and "context" in str(info.value)
    assert len(engine.memories("mika")) == before
    blank = engine.remember("mika", "no context really", context="   ")
    assert blank.context is None


def test_update_of_the_context_reembeds_and_reindexes(engine):
    memory = memory_with_context(engine)
    updated = engine.update("mika", memory.id, context="On 9 May 2023: a vet visit")
    stored = engine.stores["mika"].kernel.vector(memory.id)
    assert stored == pytest.approx(blend(engine.embedder, updated.text, updated.context),
                                   abs=1e-5)
    assert engine.recall("mika", "vet visit", mode="fulltext", min_relevance=0)
    assert not engine.recall("mika", "shelter", mode="fulltext", min_relevance=0)
    cleared = engine.update("mika", memory.id, context=None)
    assert cleared.context is None
    assert engine.stores["mika"].kernel.vector(memory.id) == pytest.approx(
        engine.embedder.embed_passages([memory.text])[0], abs=1e-5)


def test_snapshot_keeps_the_context(engine):
    index, records = engine.snapshot("mika")
    other = MemoryEngine(engine.embedder)
    other.load_snapshot("mika", index, records)
    assert memory_with_context(other).context == CONTEXT
    assert other.recall("mika", "shelter", mode="fulltext", min_relevance=0)


def test_export_and_import_keep_the_context_with_or_without_vectors(engine):
    for with_vectors in (True, False):
        data = export_data(engine, with_vectors=with_vectors)
        other = MemoryEngine(engine.embedder)
        import_data(other, data)
        memory = memory_with_context(other)
        assert memory.context == CONTEXT
        assert other.stores["mika"].kernel.vector(memory.id) == pytest.approx(
            blend(engine.embedder, memory.text, CONTEXT), abs=1e-5)


def test_trash_and_restore_keep_the_context_indexed(engine):
    memory = memory_with_context(engine)
    engine.forget("mika", memory.id)
    assert not engine.recall("mika", "shelter", mode="fulltext", min_relevance=0)
    engine.restore("mika", memory.id)
    assert engine.recall("mika", "shelter", mode="fulltext", min_relevance=0)


def test_revectorize_embeds_the_blend_with_the_new_model(engine):
    new = HashingEmbedder(128, seed=7)
    engine.revectorize("mika", new)
    engine.select_embedder(new)
    memory = memory_with_context(engine)
    assert engine.stores["mika"].kernel.vector(memory.id) == pytest.approx(
        blend(new, memory.text, CONTEXT), abs=1e-5)


def test_a_backend_keeps_the_context_and_refuses_a_bad_one(engine, tmp_path):
    from omoide.backends.base import memory_of, record_of
    from omoide.backends.sqlite import SQLiteBackend

    backend = SQLiteBackend(tmp_path / "m.db")
    backend.initialize()
    memory = memory_with_context(engine)
    backend.create(record_of(memory, engine.stores["mika"].kernel.vector(memory.id)))
    assert memory_of(backend.get(memory.id)).context == CONTEXT
    with pytest.raises(OmoideError) as info:
        backend.create(record_of(memory) | {"id": "other", "context": 42})
    assert info.value.code == "INVALID_RECORD" and "context" in str(info.value)
    assert backend.get("other") is None
    backend.shutdown()


def test_the_browser_backend_embeds_the_blend_when_it_embeds(engine):
    """``IndexedDBBackend`` (the browser's primary, under CPython here) embeds a record that
    comes without a usable vector, and re-embeds on a text or context change: the blend."""
    from omoide.backends.base import record_of
    from omoide.browser.backends import IndexedDBBackend

    backend = IndexedDBBackend(lambda: engine)
    kernel = engine.stores["mika"].kernel
    memory = memory_with_context(engine)
    created = backend.create(record_of(memory) | {"id": "01TESTID0000000000000000AA",
                                                  "vector": None})
    assert created["context"] == CONTEXT
    assert kernel.vector(created["id"]) == pytest.approx(
        blend(engine.embedder, memory.text, CONTEXT), abs=1e-5)
    backend.update(created["id"], {"context": "On 9 May 2023: a vet visit"})
    assert kernel.vector(created["id"]) == pytest.approx(
        blend(engine.embedder, memory.text, "On 9 May 2023: a vet visit"), abs=1e-5)
