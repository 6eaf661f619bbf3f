"""The memories tab's pages (``omoide.browser.listing.memories_page``) under CPython: newest
first, filtered in the engine, bad arguments refused with the field named."""

from __future__ import annotations

import pytest

from omoide.browser import listing, session
from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder


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
