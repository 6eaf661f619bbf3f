"""Trash policy: grace-period purge and revive-on-recall."""
import pytest

from omoide.engine import MemoryEngine
from omoide.governance.trash import purge_expired, recall_reviving
from tests.test_engine_embedder import HashingEmbedder

DAY = 86_400.0


class Clock:
    def __init__(self):
        self.t = 1_700_000_000.0

    def __call__(self):
        return self.t


def make():
    clock = Clock()
    return MemoryEngine(HashingEmbedder(64), clock=clock), clock


def test_grace_period_purge():
    e, clock = make()
    old = e.remember("a", "old note")
    young = e.remember("a", "young note")
    e.forget("a", old.id)
    clock.t += 20 * DAY
    e.forget("a", young.id)
    clock.t += 15 * DAY  # old: 35 days in the trash, young: 15
    assert purge_expired(e, "a") == [old.id]
    assert [t.memory.id for t in e.trash("a")] == [young.id]
    assert e.restore("a", young.id).text == "young note"


def test_a_strong_match_in_the_trash_is_revived():
    e, _ = make()
    gone = e.remember("a", "My sister's birthday is on March 3rd", kind="fact")
    e.remember("a", "The weather was nice today", kind="diary")
    e.forget("a", gone.id)
    result = recall_reviving(e, "a", "My sister's birthday is on March 3rd", k=3)
    assert result.revived == [gone.id] and result.revived_cosine >= 0.95
    assert result.hits[0].memory.id == gone.id and e.trash("a") == []


@pytest.mark.parametrize("bad", [{"k": 0}, {"mode": "sideways"}, {"threshold": 5},
                                 {"min_relevance": 7}, {"kinds": ["nope"]},
                                 {"fusion": "mean"}, {"rrf_k": 0},
                                 {"mode": "fulltext", "threshold": float("nan")}])
def test_a_refused_recall_revives_nothing(bad):
    """The restore came before recall checked its arguments: ``recall --k 0`` answered
    INVALID_ARGUMENT and had brought the memory back (written to the workspace)."""
    from omoide.errors import OmoideError

    e, _ = make()
    gone = e.remember("a", "My sister's birthday is on March 3rd", kind="fact")
    e.forget("a", gone.id)
    with pytest.raises(OmoideError) as caught:
        recall_reviving(e, "a", "My sister's birthday is on March 3rd", **bad)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert [t.memory.id for t in e.trash("a")] == [gone.id] and e.memories("a") == []


def test_weak_matches_or_disabled_revive_leave_the_trash_alone():
    e, _ = make()
    gone = e.remember("a", "My sister's birthday is on March 3rd", kind="fact")
    e.forget("a", gone.id)
    assert recall_reviving(e, "a", "weather forecast for Tokyo").revived == []
    assert recall_reviving(e, "a", "My sister's birthday is on March 3rd", revive=False).hits == []
    assert [t.memory.id for t in e.trash("a")] == [gone.id]


def test_a_better_live_match_wins_over_the_trash():
    e, _ = make()
    text = "My sister's birthday is on March 3rd"
    gone = e.remember("a", text, kind="fact")
    e.forget("a", gone.id)
    live = e.remember("a", text, kind="fact")
    result = recall_reviving(e, "a", text)
    assert result.revived == [] and result.hits[0].memory.id == live.id


def test_the_trash_kernel_holds_exactly_the_trashed_vectors():
    """Revive searches the trash's own kernel: it follows trash, restore, purge and swap."""
    e = MemoryEngine(HashingEmbedder(16))
    made = e.remember_many("t", [f"t note {i} on topic {i % 4}" for i in range(12)])
    store = e.stores["t"]
    for m in made[:6]:
        e.forget("t", m.id)
    e.restore("t", made[0].id)
    assert sorted(store.trash_kernel.ids()) == sorted(store.trash)
    for i in store.trash:
        assert store.trash_kernel.vector(i) == pytest.approx(store.trash[i].vector, abs=1e-6)
    e.revectorize("t", HashingEmbedder(16, seed=3))
    assert sorted(store.trash_kernel.ids()) == sorted(store.trash)
    e.purge_trash("t")
    assert store.trash_kernel.ids() == [] and not store.trash


def test_a_recall_without_a_revivable_match_scans_the_live_kernel_once():
    """The live kernel is asked for its best match only when a trashed one could be revived."""
    e, _ = make()
    gone = e.remember("a", "My sister's birthday is on March 3rd", kind="fact")
    e.remember("a", "The weather was nice today", kind="diary")
    e.forget("a", gone.id)
    store = e.stores["a"]
    scans = []
    top_k = store.kernel.top_k

    def counted(*args, **kwargs):
        scans.append(args)
        return top_k(*args, **kwargs)

    store.kernel.top_k = counted
    recall_reviving(e, "a", "weather forecast for Tokyo", mode="vector")
    assert len(scans) == 1  # the recall itself
    scans.clear()
    result = recall_reviving(e, "a", "My sister's birthday is on March 3rd", mode="vector")
    assert result.revived == [gone.id] and len(scans) == 2  # the revive check, then the recall


def test_a_recall_never_revives_a_memory_whose_key_another_holds_now():
    """Forget the green tea, remember black coffee under the same key, then ask with the
    green tea's words: the revive restored it and retired the coffee (one key, one live
    memory) on a read."""
    e, _ = make()
    tea = e.remember("a", "My favourite drink is green tea", key="favorite_drink")
    e.forget("a", tea.id)
    coffee = e.remember("a", "My favourite drink is black coffee", key="favorite_drink")
    result = recall_reviving(e, "a", "My favourite drink is green tea")
    assert result.revived == []
    assert [m.id for m in e.memories("a")] == [coffee.id]
    assert [t.memory.id for t in e.trash("a")] == [tea.id]


def test_purge_expired_with_an_infinite_grace_or_a_clock_near_1970_purges_nothing():
    now = [100.0]  # a reset real-time clock
    engine = MemoryEngine(HashingEmbedder(), clock=lambda: now[0])
    memory = engine.remember("a", "Walked Pochi in the park")
    engine.forget("a", memory.id)
    assert purge_expired(engine, "a") == []
    now[0] = 1_900_000_000.0
    assert purge_expired(engine, "a", grace_days=float("inf")) == []
    assert [t.memory.id for t in engine.trash("a")] == [memory.id]
    with pytest.raises(ValueError):
        purge_expired(engine, "a", grace_days=float("nan"))
