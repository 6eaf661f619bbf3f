"""Time-aware recall: a span named in the query lifts and marks the memories inside it."""

import datetime as dt
import time

import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder

NOW = dt.datetime(2023, 7, 15, 12, 0, tzinfo=dt.UTC)
DAY = 86400.0


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(128))
    base = NOW.timestamp()
    e.remember_many("mika", [
        {"text": "We had ramen for dinner", "at": base - 40 * DAY, "kind": "diary"},
        {"text": "We had ramen for dinner", "at": base - 8 * DAY, "kind": "diary"},
        {"text": "We had sushi for dinner", "at": base - 200 * DAY, "kind": "diary"},
    ] + [{"text": f"note {n} about the garden", "at": base - n * DAY} for n in range(30)])
    return e


def test_a_named_span_lifts_and_marks_its_memories(engine):
    # the same text twice: only the time can tell them apart
    hits = engine.recall("mika", "ramen dinner last week", now=NOW, k=3, min_relevance=0)
    assert hits[0].memory.created_at == NOW.timestamp() - 8 * DAY  # last week
    assert hits[0].in_timeframe is True
    assert any(h.in_timeframe is False for h in hits)
    japanese = engine.recall("mika", "先週 ramen dinner", now=NOW, k=1, min_relevance=0)
    assert japanese[0].memory.created_at == NOW.timestamp() - 8 * DAY


def test_now_is_the_callers(engine):
    earlier = dt.datetime(2023, 6, 14, tzinfo=dt.UTC)  # its last week holds the older ramen
    hits = engine.recall("mika", "ramen dinner last week", now=earlier.timestamp(), k=2,
                         min_relevance=0)
    assert [h.memory.created_at for h in hits if h.in_timeframe] == [NOW.timestamp() - 40 * DAY]
    assert hits[0].memory.created_at == NOW.timestamp() - 40 * DAY


def test_no_span_no_flags_and_time_can_be_turned_off(engine):
    assert all(h.in_timeframe is None
               for h in engine.recall("mika", "ramen dinner", now=NOW, min_relevance=0))
    assert all(h.in_timeframe is None
               for h in engine.recall("mika", "ramen dinner last week", now=NOW,
                                      use_time=False, min_relevance=0))


@pytest.mark.parametrize("mode", ["vector", "fulltext"])
def test_other_modes_mark_but_keep_their_order(engine, mode):
    hits = engine.recall("mika", "ramen dinner last week", now=NOW, mode=mode, min_relevance=0)
    assert any(h.in_timeframe for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_bad_now_names_the_field(engine):
    with pytest.raises(OmoideError) as info:
        engine.recall("mika", "ramen last week", now="yesterday")
    assert info.value.code == "INVALID_ARGUMENT" and "now" in str(info.value)


def test_the_words_naming_a_span_do_not_count_against_relevance(engine):
    with_span = engine.recall("mika", "ramen dinner in July 2023", now=NOW, k=1,
                              min_relevance=0)[0]
    without = engine.recall("mika", "ramen dinner in July 2023", now=NOW, k=1,
                            min_relevance=0, use_time=False)[0]
    assert with_span.relevance > without.relevance
    assert engine.recall("mika", "ramen dinner in July 2023", now=NOW)  # a good match


@pytest.fixture
def tokyo_local_time(monkeypatch):
    """The process's local zone is Tokyo (UTC+9) for the test, then back."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is POSIX only")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_naive_now_is_local_time_as_a_naive_at_is(tokyo_local_time):
    # remember reads a naive `at` as local time (datetime.timestamp()); recall read a naive
    # `now` as UTC when it reckoned the span, so "yesterday" was the wrong day here
    e = MemoryEngine(HashingEmbedder(128))
    e.remember("mika", "We went hiking on Mount Takao", kind="diary",
               at=dt.datetime(2023, 7, 14, 3, 0))  # 3 am local: 18:00 UTC the day before
    hits = e.recall("mika", "what did we do yesterday", now=dt.datetime(2023, 7, 15, 1, 0),
                    min_relevance=0)
    assert [h.in_timeframe for h in hits] == [True]
    late = e.recall("mika", "what did we do yesterday", now=dt.datetime(2023, 7, 16, 1, 0),
                    min_relevance=0)
    assert [h.in_timeframe for h in late] == [False]
