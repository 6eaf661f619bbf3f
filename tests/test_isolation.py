"""Isolation: no call ever returns, scores or touches another character's memories."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.kernels import PureKernel
from tests.test_engine_embedder import HashingEmbedder

CHARACTERS = ["alice", "bob", "キャラ"]
WORDS = ["tea", "coffee", "寿司", "東京", "cat", "dog", "rain", "music"]

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
operation = st.one_of(
    st.tuples(st.just("remember"), st.sampled_from(CHARACTERS), text),
    st.tuples(st.just("forget"), st.sampled_from(CHARACTERS), st.integers(0, 50)),
    st.tuples(st.just("restore"), st.sampled_from(CHARACTERS), st.integers(0, 50)),
    st.tuples(st.just("recall"), st.sampled_from(CHARACTERS), text),
)


class CountingKernel(PureKernel):
    """Records which character's kernel scored something (set by the factory)."""

    def __init__(self, dimension, owner_log):
        super().__init__(dimension)
        self.owner_log = owner_log
        self.owner = None

    def top_k(self, query, k, allowed=None):
        self.owner_log.append(self.owner)
        return super().top_k(query, k, allowed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=40))
def test_random_interleavings_never_cross_characters(operations):
    log: list[str | None] = []
    engine = MemoryEngine(HashingEmbedder(16), kernel=lambda d: CountingKernel(d, log))
    live = {c: set() for c in CHARACTERS}
    trashed = {c: [] for c in CHARACTERS}
    for op, character, arg in operations:
        if op == "remember":
            memory = engine.remember(character, arg)
            engine.stores[character].kernel.owner = character
            live[character].add(memory.id)
        elif op == "forget" and live[character]:
            victim = sorted(live[character])[arg % len(live[character])]
            engine.forget(character, victim)
            live[character].discard(victim)
            trashed[character].append(victim)
        elif op == "restore" and trashed[character]:
            back = trashed[character].pop(arg % len(trashed[character]))
            engine.restore(character, back)
            live[character].add(back)
        elif op == "recall":
            for mode in ("hybrid", "vector", "fulltext"):
                log.clear()
                hits = engine.recall(character, arg, mode=mode, k=50)
                assert {h.memory.id for h in hits} <= live[character]
                assert all(h.memory.character_id == character for h in hits)
                assert set(log) <= {character}  # only this character's kernel scored
                if mode == "vector":
                    assert len(hits) == len(live[character])  # all own, none foreign
    for character in CHARACTERS:
        if character in engine.stores:
            assert {m.id for m in engine.memories(character)} == live[character]
            assert {e.memory.id for e in engine.trash(character)} == set(trashed[character])


def test_same_text_for_two_characters_stays_separate():
    engine = MemoryEngine(HashingEmbedder(16))
    a = engine.remember("alice", "secret password is swordfish")
    b = engine.remember("bob", "secret password is swordfish")
    assert a.id != b.id
    assert [h.memory.id for h in engine.recall("alice", "swordfish")] == [a.id]
    engine.forget("bob", b.id)
    assert [h.memory.id for h in engine.recall("alice", "swordfish")] == [a.id]
    assert engine.recall("bob", "swordfish") == []
    assert engine.get("alice", a.id).recall_count == 2
