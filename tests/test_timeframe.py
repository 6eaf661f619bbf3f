"""Time expressions in recall queries (engine/timeframe.py): EN + JA, relative to ``now``."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.engine.timeframe import asks_when, parse_timeframe

NOW = dt.datetime(2023, 7, 15, 12, 0, tzinfo=dt.UTC)  # a Saturday


def span(query, now=NOW):
    frame = parse_timeframe(query, now)
    if frame is None:
        return None
    tz = now.tzinfo if isinstance(now, dt.datetime) else dt.UTC
    return (dt.datetime.fromtimestamp(frame.start, tz).date().isoformat(),
            dt.datetime.fromtimestamp(frame.end, tz).date().isoformat())


@pytest.mark.parametrize(("query", "expected"), [
    ("what did we do last week", ("2023-07-03", "2023-07-10")),
    ("anything fun last weekend?", ("2023-07-08", "2023-07-10")),
    ("where did I go yesterday", ("2023-07-14", "2023-07-15")),
    ("what did I cook today", ("2023-07-15", "2023-07-16")),
    ("three days ago", ("2023-07-12", "2023-07-13")),
    ("2 weeks ago", ("2023-06-26", "2023-07-03")),
    ("last month", ("2023-06-01", "2023-07-01")),
    ("last year", ("2022-01-01", "2023-01-01")),
    ("a trip in May 2023", ("2023-05-01", "2023-06-01")),
    ("Who did Maria have dinner with on May 3, 2023?", ("2023-05-03", "2023-05-04")),
    ("the party on 8 May 2023", ("2023-05-08", "2023-05-09")),
    ("what happened in May", ("2023-05-01", "2023-06-01")),
    ("what happened in August", ("2022-08-01", "2022-09-01")),  # the latest August begun
    ("in 2021", ("2021-01-01", "2022-01-01")),
    ("last summer", ("2022-06-01", "2022-09-01")),  # now is summer: the one before
    ("in the spring of 2022", ("2022-03-01", "2022-06-01")),
    ("先週どこに行った", ("2023-07-03", "2023-07-10")),
    ("昨日の夕食", ("2023-07-14", "2023-07-15")),
    ("去年の夏に行った場所", ("2022-06-01", "2022-09-01")),
    ("5月に買ったもの", ("2023-05-01", "2023-06-01")),
    ("2023年5月8日の会議", ("2023-05-08", "2023-05-09")),
    ("２０２２年の秋に", ("2022-09-01", "2022-12-01")),  # full-width digits
    ("3日前", ("2023-07-12", "2023-07-13")),
    ("二週間前の話", ("2023-06-26", "2023-07-03")),
    ("先月の旅行", ("2023-06-01", "2023-07-01")),
    ("去年", ("2022-01-01", "2023-01-01")),
])
def test_time_expressions(query, expected):
    assert span(query) == expected


@pytest.mark.parametrize("query", [
    "I may go hiking", "the cat sleeps on the red sofa", "When did Caroline go?",
    "TypeScript or JavaScript", "東京都に住んでいます", "version 2 of the plan",
])
def test_no_time_expression(query):
    assert parse_timeframe(query, NOW) is None


def test_now_is_the_callers_and_its_zone_counts():
    tokyo = dt.timezone(dt.timedelta(hours=9))
    late = dt.datetime(2023, 7, 15, 23, 30, tzinfo=tokyo)  # 14:30 UTC, the same date
    assert span("yesterday", late) == ("2023-07-14", "2023-07-15")
    frame = parse_timeframe("yesterday", late)
    assert frame.start == dt.datetime(2023, 7, 14, tzinfo=tokyo).timestamp()
    as_float = parse_timeframe("yesterday", NOW.timestamp())
    assert as_float.start == dt.datetime(2023, 7, 14, tzinfo=dt.UTC).timestamp()


def test_impossible_dates_are_not_time():
    assert parse_timeframe("on February 31, 2023", NOW) is None or \
        span("on February 31, 2023") != ("2023-02-31", "2023-03-01")
    assert span("2023年13月") == ("2023-01-01", "2024-01-01")  # the year still stands


@pytest.mark.parametrize(("query", "now"), [
    ("what happened 99999999 days ago", NOW), ("3000000 weeks ago", NOW), ("1000000週間前", NOW),
    ("what did we eat today", dt.datetime(9999, 12, 31, 12, tzinfo=dt.UTC)),
    ("今日", dt.datetime(9999, 12, 31, tzinfo=dt.UTC)),
])
def test_a_span_beyond_the_calendar_is_not_time(query, now):
    # OverflowError ("date value out of range") came out of recall for such a query
    assert parse_timeframe(query, now) is None


@pytest.mark.parametrize(("query", "expected"), [
    ("When did Melanie paint a sunrise?", True), ("How long ago was her birthday?", True),
    ("What year did he move?", True), ("いつ引っ越した？", True), ("何月に行った", True),
    ("What does Alice drink?", False), ("寿司が好き", False),
])
def test_asks_when(query, expected):
    assert asks_when(query) is expected


@given(st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2090, 1, 1),
                    timezones=st.just(dt.UTC)),
       st.sampled_from(["yesterday", "last week", "last month", "last year", "last summer",
                        "in May", "3 days ago", "先週", "去年の冬に", "5月に", "今日",
                        "this week"]))
def test_relative_spans_are_nonempty_and_not_in_the_future(now, query):
    frame = parse_timeframe(query, now)
    assert frame is not None and frame.start < frame.end
    assert frame.start <= now.timestamp()
    if query not in ("今日", "this week"):
        assert not frame.contains(now.timestamp() + 86400 * 400)
