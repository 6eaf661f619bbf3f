"""The persistence seam: write-ahead change events, veto, and journal replay."""

import random

import pytest

from omoide.engine import Change, Journal, MemoryEngine
from tests.test_engine_embedder import HashingEmbedder


class QuotaFull(Exception):
    pass


class VetoingListener:
    def __init__(self):
        self.full = False
        self.seen: list[Change] = []

    def on_change(self, change):
        if self.full:
            raise QuotaFull(change.op)
        self.seen.append(change)


def state(engine):
    out = {}
    for character in engine.characters():
        store = engine.stores[character]
        out[character] = (
            store.stamp,
            {m.id: (m.to_dict(), [round(x, 6) for x in store.kernel.vector(m.id)])
             for m in engine.memories(character)},
            {e.memory.id: (e.memory.to_dict(), e.trashed_at) for e in engine.trash(character)},
        )
    return out


def test_every_operation_announces_one_change():
    journal = Journal()
    e = MemoryEngine(HashingEmbedder(8), listeners=[journal])
    m = e.remember("a", "tea")
    e.update("a", m.id, importance=0.9)
    e.forget("a", m.id)
    e.restore("a", m.id)
    e.forget("a", m.id)
    e.purge_trash("a")
    e.remember("a", "coffee")
    e.revectorize(None, HashingEmbedder(8, seed=1))
    ops = [c.op for c in journal.changes]
    assert ops == ["put", "put", "trash", "restore", "trash", "purge", "put", "swap"]
    first = journal.changes[0]
    assert first.memory.text == "tea" and len(first.vector) == 8 and first.stamp
    assert journal.changes[1].vector is None  # record-only change
    assert set(journal.changes[-1].vectors) == {m.id for m in e.memories("a")}


def test_a_vetoed_write_leaves_the_store_untouched():
    listener = VetoingListener()
    e = MemoryEngine(HashingEmbedder(8), listeners=[listener])
    kept = e.remember("a", "tea")
    before = state(e)
    listener.full = True
    with pytest.raises(QuotaFull):
        e.remember("a", "coffee")
    with pytest.raises(QuotaFull):
        e.forget("a", kept.id)
    with pytest.raises(QuotaFull):
        e.update("a", kept.id, text="green tea")
    with pytest.raises(QuotaFull):
        e.revectorize(None, HashingEmbedder(8, seed=2))
    assert state(e) == before
    assert e.recall("a", "tea", mode="fulltext", touch=False)[0].memory.id == kept.id
    assert e.recall("a", "coffee", mode="fulltext", touch=False) == []
    assert e.embedder.stamp == HashingEmbedder(8).stamp


def test_journal_replay_rebuilds_an_identical_engine_without_embedding():
    rng = random.Random(3)
    journal = Journal()
    e = MemoryEngine(HashingEmbedder(12), listeners=[journal])
    for step in range(120):
        character = rng.choice(["alice", "bob"])
        roll = rng.random()
        live = e.memories(character) if character in e.stores else []
        trash = e.trash(character) if character in e.stores else []
        if roll < 0.5 or not live:
            e.remember(character, f"note {step} " + rng.choice(["tea", "cats", "寿司"]))
        elif roll < 0.65:
            e.forget(character, rng.choice(live).id)
        elif roll < 0.75 and trash:
            e.restore(character, rng.choice(trash).memory.id)
        elif roll < 0.85:
            e.update(character, rng.choice(live).id, text=f"edited {step}")
        elif roll < 0.9 and trash:
            e.purge_trash(character)
        else:
            e.recall(character, "tea")
        if step == 80:
            e.revectorize(None, HashingEmbedder(12, seed=4))
    replica_embedder = HashingEmbedder(12, seed=4)
    replica = MemoryEngine(replica_embedder)
    journal.replay(replica)
    assert replica_embedder.calls == []
    assert state(replica) == state(e)
    for mode in ("hybrid", "vector", "fulltext"):
        a = e.recall("alice", "tea 寿司", mode=mode, touch=False)
        b = replica.recall("alice", "tea 寿司", mode=mode, touch=False)
        assert [h.memory.id for h in a] == [h.memory.id for h in b]


def test_listeners_can_be_added_and_removed():
    journal = Journal()
    e = MemoryEngine(HashingEmbedder(8))
    e.add_listener(journal)
    e.remember("a", "x")
    e.remove_listener(journal)
    e.remember("a", "y")
    assert len(journal.changes) == 1


def test_a_put_says_whether_the_store_ever_held_the_id():
    # ``fresh`` lets a storage layer skip reading an old row; it must never be claimed for
    # an id the store holds, live or trashed.
    listener = VetoingListener()
    engine = MemoryEngine(HashingEmbedder(8), listeners=[listener])
    memory = engine.remember("aoi", "a new memory")
    assert [(c.op, c.fresh) for c in listener.seen] == [("put", True)]
    engine.update("aoi", memory.id, importance=0.9)
    assert (listener.seen[-1].op, listener.seen[-1].fresh) == ("put", False)
    engine.forget("aoi", memory.id)
    store = engine.stores["aoi"]
    store.put(memory, [0.1] * 8)  # an id held in the trash is not fresh either
    assert (listener.seen[-1].op, listener.seen[-1].fresh) == ("put", False)
