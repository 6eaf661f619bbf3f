"""TrashMap: a store's trash counts its changes, so an index built from it (``derived``) is
made again exactly when the trash changed, and always equals one made from scratch."""

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.engine.trash_map import TrashMap
from tests.test_engine_embedder import HashingEmbedder

IDS = st.sampled_from(["a", "b", "c", "d"])
OPS = st.lists(st.one_of(
    st.tuples(st.just("set"), IDS), st.tuples(st.just("del"), IDS),
    st.tuples(st.just("pop"), IDS), st.tuples(st.just("setdefault"), IDS),
    st.tuples(st.just("update"), IDS), st.tuples(st.just("ior"), IDS),
    st.tuples(st.just("popitem"), IDS), st.tuples(st.just("clear"), IDS),
    st.tuples(st.just("read"), IDS)), max_size=40)


def entry(memory_id: str, n: int) -> SimpleNamespace:
    """A stand-in trash entry (a TrashMap holds whatever it is given)."""
    return SimpleNamespace(memory=SimpleNamespace(text=f"{memory_id} {n}"))


def apply(target: dict, op: str, key: str, n: int) -> None:
    if op == "set":
        target[key] = entry(key, n)
    elif op == "del" and key in target:
        del target[key]
    elif op == "pop":
        target.pop(key, None)
    elif op == "setdefault":
        target.setdefault(key, entry(key, n))
    elif op == "update":
        target.update({key: entry(key, n)})
    elif op == "ior":
        target |= {key: entry(key, n)}
    elif op == "popitem" and target:
        target.popitem()
    elif op == "clear":
        target.clear()
    elif op == "read":
        _ = (target.get(key), key in target, list(target.items()), len(target))


def texts(trash: dict) -> list[str]:
    return [e.memory.text for e in trash.values()]


@given(OPS)
def test_derived_is_made_again_exactly_when_the_trash_changed(ops):
    """A change of the contents always moves ``changes`` (a move without one only costs a
    rebuild); ``derived`` equals a build from scratch and is made once per move."""
    trash, plain, builds = TrashMap(), {}, []
    last = None  # ``changes`` when derived was last made

    def build(t: dict) -> list[str]:
        builds.append(t.changes)
        return texts(t)

    for n, (op, key) in enumerate(ops):
        before, changes = texts(trash), trash.changes
        apply(trash, op, key, n)
        apply(plain, op, key, n)
        assert trash == plain and texts(trash) == texts(plain)
        if texts(trash) != before:
            assert trash.changes > changes
        made = len(builds)
        assert trash.derived("texts", build) == texts(plain)
        assert trash.derived("texts", build) == texts(plain)  # kept while unchanged
        assert len(builds) - made == (0 if trash.changes == last else 1)
        last = trash.changes


def test_every_store_change_of_the_trash_is_counted():
    engine = MemoryEngine(HashingEmbedder(16))
    memory = engine.remember("c", "a note to forget")
    store = engine.stores["c"]
    assert isinstance(store.trash, TrashMap)
    seen = [store.trash.changes]
    for step in (lambda: engine.forget("c", memory.id), lambda: engine.restore("c", memory.id),
                 lambda: engine.forget("c", memory.id), lambda: engine.purge_trash("c")):
        step()
        assert store.trash.changes > seen[-1]
        seen.append(store.trash.changes)
