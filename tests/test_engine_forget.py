import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder


@pytest.fixture
def engine():
    now = iter(range(1000, 10**6, 10))
    e = MemoryEngine(HashingEmbedder(32), clock=lambda: float(next(now)))
    e.remember_many("alice", ["green tea every morning", "hates loud music", "lives in Osaka"])
    return e


def ids_of(hits):
    return {h.memory.id for h in hits}


def test_forget_removes_from_every_mode_at_once(engine):
    tea = engine.recall("alice", "green tea", mode="fulltext")[0].memory
    entry = engine.forget("alice", tea.id)
    assert entry.memory.id == tea.id and len(entry.vector) == 32
    for mode in ("hybrid", "vector", "fulltext"):
        assert tea.id not in ids_of(engine.recall("alice", "green tea", mode=mode))
    assert engine.stats("alice")["trashed"] == 1 and engine.stats("alice")["memories"] == 2
    with pytest.raises(OmoideError):
        engine.get("alice", tea.id)


def test_restore_brings_it_back_without_reembedding(engine):
    tea = engine.recall("alice", "green tea", mode="fulltext")[0].memory
    engine.forget("alice", tea.id)
    calls = list(engine.embedder.calls)
    restored = engine.restore("alice", tea.id)
    assert engine.embedder.calls == calls
    assert restored.id == tea.id
    vector_hit = engine.recall("alice", tea.text, mode="vector")[0]
    assert vector_hit.memory.id == tea.id and vector_hit.vector_cosine > 0.99


def test_trash_listing_and_purge(engine):
    ids = [m.id for m in engine.memories("alice")]
    first = engine.forget("alice", ids[0])
    engine.forget("alice", ids[1])
    assert [e.memory.id for e in engine.trash("alice")] == ids[:2]
    assert engine.purge_trash("alice", trashed_before=first.trashed_at + 1) == [ids[0]]
    assert [e.memory.id for e in engine.trash("alice")] == [ids[1]]
    assert engine.purge_trash("alice") == [ids[1]] and engine.trash("alice") == []
    with pytest.raises(OmoideError) as info:
        engine.restore("alice", ids[0])
    assert info.value.code == "UNKNOWN_MEMORY"


def test_forget_errors(engine):
    with pytest.raises(OmoideError) as info:
        engine.forget("alice", "missing")
    assert info.value.code == "UNKNOWN_MEMORY"
    with pytest.raises(OmoideError) as info:
        engine.forget("bob", "missing")
    assert info.value.code == "UNKNOWN_CHARACTER"


def test_forgotten_key_is_no_longer_found(engine):
    m = engine.remember("alice", "likes TypeScript", key="preference:typescript")
    engine.forget("alice", m.id)
    assert engine.find_by_key("alice", "preference:typescript") == []
    engine.restore("alice", m.id)
    assert [x.id for x in engine.find_by_key("alice", "preference:typescript")] == [m.id]


@pytest.mark.parametrize("key", [None, "preference:drink"])
def test_restoring_a_later_version_after_an_earlier_one_leaves_one_live(key):
    """Edit, forget, restore the history copy, then restore the edited memory: both were
    live, the later one listing the earlier as what it replaced (a keyless memory has no
    key holder to retire)."""
    now = iter(range(1000, 10**6, 10))
    e = MemoryEngine(HashingEmbedder(32), clock=lambda: float(next(now)))
    m = e.remember("u", "I drink green tea every morning", kind="pattern", key=key)
    edited = e.update("u", m.id, text="I drink black coffee every morning")
    (earlier,) = edited.meta["supersedes"]
    e.forget("u", m.id)
    e.restore("u", earlier)
    assert [x.id for x in e.memories("u")] == [earlier]
    e.restore("u", m.id)
    assert [x.text for x in e.memories("u")] == ["I drink black coffee every morning"]
    history = {t.memory.id: t.memory for t in e.trash("u")}
    assert history[earlier].meta["superseded_by"] == m.id
    e.restore("u", earlier)  # and back again: still one
    assert [x.id for x in e.memories("u")] == [earlier]


def test_a_link_only_one_side_holds_retires_nothing_on_a_restore(engine):
    """An app wrote ``{"supersedes": [G]}`` into a note's meta (meta is the caller's JSON),
    then forgot the note: the user's restore of it moved G, unrelated, to the trash as its
    "history"."""
    g = next(m for m in engine.memories("alice") if m.text == "lives in Osaka")
    note = engine.remember("alice", "a harmless looking note", meta={"supersedes": [g.id]})
    engine.forget("alice", note.id)
    engine.restore("alice", note.id)
    assert g.id in {m.id for m in engine.memories("alice")}
    assert engine.trash("alice") == []
