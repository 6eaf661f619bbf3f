"""When a statement says something happens: its time words, English and Japanese.

A plan's key is what is planned (``decision:married``, ``decision:ベルリン``), its date is
the value: "I'm getting married in June" then "... in October" is a new value, not a repeat
(``ingest.gives_a_new_value``). ``time_words(text)`` gives the time words of a text, each
folded to one spelling (NFKC, case folded, "Sat" = "saturday", 土曜 = 土曜日), so that two
wordings of one date compare equal and two dates compare unequal. Plain regular
expressions: the same code under Pyodide and CPython.
"""

from __future__ import annotations

import re
import unicodedata

_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december")
_SHORT_MONTHS = {m[:3]: m for m in _MONTHS.split("|")} | {"sept": "september"}
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_SHORT_DAYS = {d[:3]: d for d in _DAYS.split("|")} | {"tues": "tuesday", "thur": "thursday",
                                                      "thurs": "thursday"}
_EN = re.compile(
    rf"\b(?:(?P<month>{_MONTHS})|(?P<mon>jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?"
    rf"|(?P<day>{_DAYS})|(?P<dy>mon|tues|tue|wed|thurs|thur|thu|fri|sat|sun)\b\.?"
    r"|(?P<rel>today|tonight|tomorrow|yesterday|weekend|"
    r"(?:this|next|last) (?:week|month|year|spring|summer|autumn|fall|winter|weekend))"
    r"|(?P<season>spring|summer|autumn|fall|winter)"
    r"|(?P<clock>\d{1,2}(?::\d{2})? ?(?:am|pm)|\d{1,2}:\d{2})"
    r"|(?P<ord>\d{1,2})(?:st|nd|rd|th)\b"
    r"|(?P<year>(?:19|20)\d{2})\b)")
_JA = re.compile(
    r"(?P<jday>[月火水木金土日])曜(?:日)?"
    r"|(?P<jrel>今日|明日|明後日|あした|あさって|昨日|今夜|今晩|今週末|来週末|週末|今週|来週|"
    r"再来週|先週|今月|来月|再来月|先月|今年|来年|再来年|去年|昨年)"
    r"|(?P<jdate>\d{1,4}(?:年|月|日|時)(?:\d{1,2}(?:月|日|時|分))*)"
    r"|(?P<jseason>春|夏|秋|冬)(?:に|から|まで|の)")


def time_words(text: str) -> frozenset[str]:
    """The text's time words, one spelling each (see the module doc)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    found: set[str] = set()
    for m in _EN.finditer(folded):
        kind = m.lastgroup
        word = m.group(kind)
        if kind == "mon":
            word = _SHORT_MONTHS[word]
        elif kind == "dy":
            word = _SHORT_DAYS[word]
        elif kind == "season" and word == "fall":
            word = "autumn"
        elif kind == "rel":
            word = word.replace("fall", "autumn")
        elif kind == "clock":
            word = word.replace(" ", "")
        if kind == "month" and word == "may" and not _may_is_a_month(folded, m.start()):
            continue  # "I may move": a verb
        found.add(word)
    for m in _JA.finditer(folded):
        kind = m.lastgroup
        word = m.group(kind)
        if kind == "jday":
            word += "曜日"
        found.add(word)
    return frozenset(found)


def _may_is_a_month(text: str, at: int) -> bool:
    """"may" is the month after "in"/"on"/"of"/"since"/"until" or before a day number."""
    before = text[:at].rstrip().rsplit(" ", 1)[-1]
    after = text[at + 3:].lstrip()
    return before in ("in", "on", "of", "since", "until", "till", "by", "early", "late",
                      "mid", "next", "last", "this") or bool(re.match(r"\d", after))


def another_time(old: str, new: str) -> bool:
    """Whether both texts say when and say another time."""
    a, b = time_words(old), time_words(new)
    return bool(a) and bool(b) and a != b
