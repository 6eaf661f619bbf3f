"""The memories tab's pages (``omoide.browser.listing.memories_page``) under CPython: newest
first, filtered in the engine, bad arguments refused with the field named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.browser import listing, session
from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder
from tests.write_history import VERBS, apply_write


class FakeSession:
    def __init__(self, engine: MemoryEngine) -> None:
        self.engine = engine


@pytest.fixture
def engine(monkeypatch):
    e = MemoryEngine(HashingEmbedder(8))
    clock = iter(range(1_000, 2_000))
    e.now = lambda: float(next(clock))  # type: ignore[method-assign]
    for i in range(120):
        e.remember("c", f"note {i} about {'tea' if i % 2 else 'rain'}",
                   kind="diary" if i % 10 == 0 else "fact")
    monkeypatch.setattr(session, "SESSION", FakeSession(e))
    return e


def test_pages_are_newest_first_and_cover_everything_once(engine):
    seen = []
    for offset in range(0, 150, 50):
        page = listing.memories_page("c", offset=offset, limit=50)
        assert (page["matched"], page["total"]) == (120, 120)
        seen += [m["text"] for m in page["items"]]
    assert seen == [f"note {i} about {'tea' if i % 2 else 'rain'}" for i in range(119, -1, -1)]


def test_filters_run_in_the_engine(engine):
    page = listing.memories_page("c", kind="diary", text="NOTE 1")
    assert [m["text"] for m in page["items"]] == ["note 110 about rain", "note 100 about rain",
                                                  "note 10 about rain"]
    assert page["matched"] == 3
    assert listing.memories_page("c", tier="hot")["matched"] == 0
    assert listing.memories_page("nobody")["items"] == []


@pytest.mark.parametrize(("args", "field"), [({"limit": 0}, "limit"), ({"limit": 501}, "limit"),
                                             ({"offset": -1}, "offset"), ({"limit": "5"}, "limit"),
                                             ({"tier": "warm"}, "tier"), ({"text": 3}, "text")])
def test_bad_arguments_name_the_field(engine, args, field):
    with pytest.raises(OmoideError) as info:
        listing.memories_page("c", **args)
    assert info.value.code == "INVALID_ARGUMENT"
    assert field in str(info.value)


# -- pages from the store's order, by property ----------------------------------------------

BASE = 1_700_000_000.0
plans = st.lists(st.tuples(st.sampled_from([*VERBS, "page"]),
                           st.integers(0, 10_000), st.floats(BASE, BASE + 50.0),
                           st.sampled_from(["fact", "diary", "preference"])),
                 min_size=1, max_size=40)
queries = st.tuples(st.integers(0, 12), st.integers(1, 7),
                    st.sampled_from([None, "fact", "diary", "decision"]),
                    st.sampled_from([None, "hot", "cold"]), st.sampled_from([None, "", "1"]))


def scanned(store, offset, limit, kind, tier, text) -> tuple[list[str], int]:
    """The page a scan and a sort of every live memory gives (the listing before the order)."""
    matches = listing.matcher(kind, tier, text)
    found = sorted((m for m in store.records.values() if matches(m)),
                   key=lambda m: (-m.created_at, m.id))
    return [m.id for m in found[offset:offset + limit]], len(found)


@settings(max_examples=60, deadline=None)
@given(plans, st.lists(queries, min_size=1, max_size=5))
def test_pages_from_the_kept_order_equal_a_scan_and_sort(plan, asked):
    e = MemoryEngine(HashingEmbedder(8))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(session, "SESSION", FakeSession(e))
        check_pages(e, plan, asked)


def check_pages(e: MemoryEngine, plan, asked) -> None:
    e.remember("c", "first", at=BASE + 25.0)
    store = e.stores["c"]
    for n, (verb, pick, at, kind) in enumerate(plan):
        # equal times too (at rounded to 10 s): the id breaks the tie
        new = {"text": f"note {n}", "at": float(int(at) // 10 * 10), "kind": kind,
               "importance": 0.9 if pick % 3 == 0 else 0.5}
        if not apply_write(e, "c", verb, pick, remember=new, update={"kind": kind}):
            # "page": the order exists from here on and is kept by what follows
            listing.memories_page("c", offset=0, limit=3)
    for offset, limit, kind, tier, text in asked:
        page = listing.memories_page("c", offset=offset, limit=limit, kind=kind, tier=tier,
                                     text=text)
        assert ([m["id"] for m in page["items"]], page["matched"]) == scanned(
            store, offset, limit, kind, tier, text)
        assert page["total"] == len(store.records)


def test_memories_added_in_bulk_join_a_kept_order(engine):
    # the browser's import adds records in bulk (``add_loaded``) after the list was shown
    listing.memories_page("c", offset=0, limit=5)
    source = MemoryEngine(HashingEmbedder(8))
    for i in range(30):
        source.remember("c", f"imported {i}", at=500.0 + i * 100)
    store, new = engine.stores["c"], list(source.stores["c"].records.values())
    store.kernel.add([m.id for m in new], [source.stores["c"].kernel.vector(m.id) for m in new])
    store.add_loaded(new, [])
    page = listing.memories_page("c", offset=110, limit=40)
    assert ([m["id"] for m in page["items"]], page["matched"]) == scanned(store, 110, 40, None,
                                                                           None, None)
    assert page["items"][-1]["text"] == "imported 0"
