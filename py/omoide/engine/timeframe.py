"""Time in recall queries: the span a query refers to, in English and Japanese.

``parse_timeframe(query, now)`` finds the first time expression of a query and returns the
span it names (``TimeFrame``: start inclusive, end exclusive, seconds since the Unix epoch),
reckoned from ``now`` in ``now``'s time zone (UTC for a plain timestamp). Understood:

- relative days/weeks/months/years: today, yesterday, this/last week|month|year, last
  weekend, "3 days ago", "two weeks ago"; 今日, 昨日, 一昨日, 今週, 先週, 先々週, 今月,
  先月, 今年, 去年/昨年, 一昨年, 3日前, 2週間前, 3か月前, 2年前;
- seasons (northern hemisphere: spring = Mar-May, summer = Jun-Aug, autumn = Sep-Nov,
  winter = Dec-Feb): "last summer", "in the spring of 2022", "this winter"; 去年の夏,
  今年の春, 2022年の秋, 夏に (the latest one that has begun);
- calendar dates: "in May 2023", "May 8, 2023", "8 May 2023", "on May 3" (the latest May 3
  not after ``now``), "in May", "in 2023"; 2023年5月8日, 2023年5月, 2023年, 5月3日, 5月に.

``asks_when(query)`` tells whether the query asks for a time ("when did", "how long ago",
いつ, 何月): such a question wants the memory's date shown, not a filter.

Rules are plain regular expressions over the NFKC-normalized, case-folded query (full-width
digits become ASCII), so the same code runs under Pyodide and CPython with no dictionary.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass

MONTHS = {name: n for n, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1)
    for name in names}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
           "春": 3, "夏": 6, "秋": 9, "冬": 12}  # first month of the season
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
                "twelve": 12, "a couple of": 2, "a few": 3, "few": 3, "several": 3}
KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
                "九": 9, "十": 10, "数": 3}

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_SEASON_EN = "spring|summer|autumn|fall|winter"
_COUNT = "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
_JA_NUM = r"\d+|[一二三四五六七八九十数]+"

WHEN_QUESTION = re.compile(
    r"\bwhen\b|\bhow long (?:ago|has|have|had|did|was)\b|\bwhat (?:year|month|day|date)\b"
    r"|\bwhich (?:year|month|day|date)\b|いつ|何年|何月|何日|何曜日|どのくらい前")


@dataclass(frozen=True)
class TimeFrame:
    """The span a query names: ``start <= at < end`` (seconds since the epoch)."""

    start: float
    end: float
    phrase: str  # the words of the query that named it

    def contains(self, at: float) -> bool:
        return self.start <= at < self.end


def normalize(query: str) -> str:
    return unicodedata.normalize("NFKC", query).casefold()


def asks_when(query: str) -> bool:
    return WHEN_QUESTION.search(normalize(query)) is not None


def _day(d: dt.date, tz: dt.tzinfo) -> dt.datetime:
    return dt.datetime(d.year, d.month, d.day, tzinfo=tz)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _month_span(year: int, month: int, months: int, tz: dt.tzinfo) -> tuple[dt.datetime,
                                                                           dt.datetime]:
    end_year, end_month = _add_months(year, month, months)
    return (dt.datetime(year, month, 1, tzinfo=tz), dt.datetime(end_year, end_month, 1, tzinfo=tz))


def _season_span(year: int, first_month: int, tz: dt.tzinfo):
    """The season starting in ``first_month`` of ``year`` (winter runs into the next year)."""
    return _month_span(year, first_month, 3, tz)


def _latest_season(now: dt.datetime, first_month: int, tz: dt.tzinfo):
    """The latest season of that name that has begun by ``now``."""
    year = now.year if (now.month, now.day) >= (first_month, 1) else now.year - 1
    return _season_span(year, first_month, tz)


def _count(word: str) -> int:
    word = word.strip()
    if word.isdigit():
        return int(word)
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    total = 0  # kanji numerals up to 99: 三, 十, 十二, 二十, 二十五
    if "十" in word:
        tens, _, ones = word.partition("十")
        total = (KANJI_DIGITS.get(tens, 1) if tens else 1) * 10
        return total + (KANJI_DIGITS.get(ones, 0) if ones else 0)
    return KANJI_DIGITS.get(word, 1)


def _ago(now: dt.datetime, amount: int, unit: str, tz: dt.tzinfo):
    """A span around "N units ago": the whole day / week / month / year it falls in."""
    today = now.date()
    if unit in ("day", "日"):
        start = _day(today - dt.timedelta(days=amount), tz)
        return start, start + dt.timedelta(days=1)
    if unit in ("week", "週", "週間"):
        monday = today - dt.timedelta(days=today.weekday() + 7 * amount)
        start = _day(monday, tz)
        return start, start + dt.timedelta(days=7)
    if unit in ("month", "か月", "ヶ月", "カ月", "ヵ月", "ケ月", "箇月", "月"):
        year, month = _add_months(now.year, now.month, -amount)
        return _month_span(year, month, 1, tz)
    return _month_span(now.year - amount, 1, 12, tz)  # years


def _latest_date(now: dt.datetime, month: int, day: int | None, tz: dt.tzinfo):
    """"in May" / "on May 3" without a year: the latest one that has begun by ``now``."""
    year = now.year
    if (month, day or 1) > (now.month, now.day):
        year -= 1
    if day is None:
        return _month_span(year, month, 1, tz)
    start = _day(dt.date(year, month, day), tz)
    return start, start + dt.timedelta(days=1)


def _date(year: int, month: int, day: int | None, tz: dt.tzinfo):
    if day is None:
        return _month_span(year, month, 1, tz)
    start = _day(dt.date(year, month, day), tz)
    return start, start + dt.timedelta(days=1)


def _rules(now: dt.datetime, tz: dt.tzinfo):
    """(pattern, span builder) pairs, most specific first."""
    today = _day(now.date(), tz)
    monday = today - dt.timedelta(days=now.weekday())

    def relative_unit(offset: int):
        return {
            "day": lambda: (today + dt.timedelta(days=offset),
                            today + dt.timedelta(days=offset + 1)),
            "week": lambda: (monday + dt.timedelta(days=7 * offset),
                             monday + dt.timedelta(days=7 * offset + 7)),
            "month": lambda: _month_span(*_add_months(now.year, now.month, offset), 1, tz),
            "year": lambda: _month_span(now.year + offset, 1, 12, tz),
        }

    def last_or_this(m: re.Match) -> tuple:
        offset = 0 if m["which"] == "this" else -1
        unit = m["unit"]
        if unit == "weekend":
            saturday = monday + dt.timedelta(days=5 + (7 * offset if offset else 0))
            if offset == -1 and now.weekday() == 6:  # on a Sunday "last weekend" is last week's
                saturday = monday - dt.timedelta(days=2)
            return saturday, saturday + dt.timedelta(days=2)
        return relative_unit(offset)[unit]()

    def season_en(m: re.Match):
        first = SEASONS[m["season"]]
        if m["year"]:
            return _season_span(int(m["year"]), first, tz)
        if m["which"] == "last":
            start, end = _latest_season(now, first, tz)
            if start <= now < end:  # "last summer" while it is summer: the previous one
                return _season_span(start.year - 1, first, tz)
            return start, end
        if m["which"] == "this":
            return _season_span(now.year if first != 12 or now.month == 12 else now.year - 1,
                                first, tz)
        return _latest_season(now, first, tz)

    def season_ja(m: re.Match):
        first = SEASONS[m["season"]]
        which = m["which"]
        if which and which[0].isdigit():
            return _season_span(int(which[:4]), first, tz)
        if which in ("去年", "昨年"):
            return _season_span(now.year - 1, first, tz)
        if which in ("一昨年", "おととし"):
            return _season_span(now.year - 2, first, tz)
        if which == "今年":
            return _season_span(now.year, first, tz)
        return _latest_season(now, first, tz)

    def ja_relative(m: re.Match):
        word = m[0]
        table = {
            "一昨日": relative_unit(-2)["day"], "おととい": relative_unit(-2)["day"],
            "昨日": relative_unit(-1)["day"], "きのう": relative_unit(-1)["day"],
            "今日": relative_unit(0)["day"], "きょう": relative_unit(0)["day"],
            "先々週": relative_unit(-2)["week"], "先週": relative_unit(-1)["week"],
            "今週": relative_unit(0)["week"], "先々月": relative_unit(-2)["month"],
            "先月": relative_unit(-1)["month"], "今月": relative_unit(0)["month"],
            "一昨年": relative_unit(-2)["year"], "おととし": relative_unit(-2)["year"],
            "去年": relative_unit(-1)["year"], "昨年": relative_unit(-1)["year"],
            "今年": relative_unit(0)["year"],
        }
        return table[word]()

    en_day = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
    return [
        # -- absolute dates, most specific first
        (rf"\b(?P<month>{_MONTH})\.? {en_day},? (?P<year>{_YEAR})\b",
         lambda m: _date(int(m["year"]), MONTHS[m["month"]], int(m["day"]), tz)),
        (rf"\b{en_day} (?:of )?(?P<month>{_MONTH})\.?,? (?P<year>{_YEAR})\b",
         lambda m: _date(int(m["year"]), MONTHS[m["month"]], int(m["day"]), tz)),
        (rf"\b(?P<month>{_MONTH})\.?,? (?P<year>{_YEAR})\b",
         lambda m: _date(int(m["year"]), MONTHS[m["month"]], None, tz)),
        (r"(?P<year>\d{4})年(?P<month>\d{1,2})月(?:(?P<day>\d{1,2})日)?",
         lambda m: _date(int(m["year"]), int(m["month"]), int(m["day"]) if m["day"] else None,
                         tz)),
        # -- seasons
        (rf"\b(?:(?P<which>last|this|in|during) (?:the )?)?(?P<season>{_SEASON_EN})"
         rf"(?: (?:of )?(?P<year>{_YEAR}))?\b",
         season_en),
        (r"(?:(?P<which>\d{4}年|去年|昨年|一昨年|おととし|今年)の?)?(?P<season>[春夏秋冬])"
         r"(?:に|の|は|休み|頃|ごろ)",
         season_ja),
        # -- relative spans
        (rf"\b(?P<amount>\d+|{_COUNT}) (?P<unit>day|week|month|year)s? ago\b",
         lambda m: _ago(now, _count(m["amount"]), m["unit"], tz)),
        (rf"(?P<amount>{_JA_NUM})(?P<unit>日|週間|週|か月|ヶ月|カ月|ヵ月|ケ月|箇月|年)前",
         lambda m: _ago(now, _count(m["amount"]), m["unit"], tz)),
        (r"\b(?P<which>last|this|past|previous) (?P<unit>week|weekend|month|year)\b",
         lambda m: last_or_this({"which": "this" if m["which"] == "this" else "last",
                                 "unit": m["unit"]})),
        (r"\bthe day before yesterday\b", lambda m: relative_unit(-2)["day"]()),
        (r"\byesterday\b", lambda m: relative_unit(-1)["day"]()),
        (r"\btoday\b|\btonight\b|\bthis morning\b", lambda m: relative_unit(0)["day"]()),
        (r"一昨日|おととい|昨日|きのう|今日|きょう|先々週|先週|今週|先々月|先月|今月|一昨年|おととし"
         r"|去年|昨年|今年", ja_relative),
        # -- month or day without a year, bare years
        (rf"\b(?:in|on|during|since) (?P<month>{_MONTH})\.? {en_day}\b",
         lambda m: _latest_date(now, MONTHS[m["month"]], int(m["day"]), tz)),
        (rf"\b(?:in|on|during|since) {en_day} (?:of )?(?P<month>{_MONTH})\b",
         lambda m: _latest_date(now, MONTHS[m["month"]], int(m["day"]), tz)),
        (rf"\b(?:in|during|since|of) (?P<month>{_MONTH})\b(?! \d)",
         lambda m: _latest_date(now, MONTHS[m["month"]], None, tz)),
        (r"(?<!\d)(?P<month>\d{1,2})月(?P<day>\d{1,2})日",
         lambda m: _latest_date(now, int(m["month"]), int(m["day"]), tz)),
        (r"(?<![\d年])(?P<month>\d{1,2})月(?:に|の|中|頃|ごろ|から|は)",
         lambda m: _latest_date(now, int(m["month"]), None, tz)),
        (rf"\b(?:in|during|of|since) (?P<year>{_YEAR})\b",
         lambda m: _month_span(int(m["year"]), 1, 12, tz)),
        (r"(?P<year>\d{4})年",
         lambda m: _month_span(int(m["year"]), 1, 12, tz)),
    ]


def parse_timeframe(query: str, now: float | dt.datetime) -> TimeFrame | None:
    """The span the query's most specific time expression names, or None (module doc)."""
    if isinstance(now, dt.datetime):
        # a naive one is local time, as datetime.timestamp() (and so remember's `at`) reads it
        moment = now if now.tzinfo else now.astimezone()
        tz = moment.tzinfo or dt.UTC
    else:
        tz = dt.UTC
        moment = dt.datetime.fromtimestamp(now, dt.UTC)
    text = normalize(query)
    for pattern, build in _rules(moment, tz):
        match = re.search(pattern, text)
        if match is None:
            continue
        try:
            span = build(match)
        except (ValueError, OverflowError):  # 31 February, month 13, a day before year 1
            continue  # or after 9999 ("99999999 days ago", "today" on 9999-12-31): not a date
        # the most specific rule wins (rules are ordered), not the leftmost match
        start, end = span
        return TimeFrame(start.timestamp(), end.timestamp(), match[0].strip())
    return None
