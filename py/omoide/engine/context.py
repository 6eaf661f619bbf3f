"""Index context for a conversation turn: the session date and the turns around it.

A turn alone is often elliptical ("Yeah, it was great!"); its neighbours say what it is about
and the session date says when. Every conversation ingest (app paste, CLI, MCP, the JS client
and the server, all through ``governance.ingest``) and the recall benchmark build a turn's
``context`` here, so there is one rule:

- the date line (``On 7 May 2023:``, or ``2023年5月7日:`` when the window is Japanese),
- then the turns ``index - 1``, ``index`` and ``index + 1`` of the batch, as ``role: text``.

The turn itself is part of its window (measured on LoCoMo: it keeps the turn's own words
from being outweighed by its neighbours in the blended vector). A turn that arrives alone
(a chat app ingests each message as it is sent) gets what came before it in the batch only:
it is not re-indexed when its successor arrives (measured: about one point of any@10 for a
second embedding of every turn; BENCHMARKS.md, Recall v2).

Each turn is clipped to ``TURN_CHARS`` and the whole to the engine's text limit, so a context
is always valid.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

BEFORE = 1  # turns before the turn in its window
AFTER = 1  # turns after it
TURN_CHARS = 500  # a long neighbour is clipped: the window is about the turn

_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def date_line(at: float, japanese: bool = False) -> str:
    """The session date as the context's first line (UTC calendar date of ``at``)."""
    day = dt.datetime.fromtimestamp(at, dt.UTC)
    if japanese:
        return f"{day.year}年{day.month}月{day.day}日:"
    return f"On {day.day} {day:%B} {day.year}:"


def turn_line(role: str, text: str) -> str:
    """One turn as it appears in a context: ``role: text``, clipped."""
    text = " ".join(text.split())
    if len(text) > TURN_CHARS:
        text = text[: TURN_CHARS - 1] + "…"
    return f"{role}: {text}" if role else text


# the date line ``date_line`` writes, in either language, at the head of a context
_DATE_LINE = re.compile(r"(?:On \d{1,2} [A-Za-z]+ \d+|\d+年\d{1,2}月\d{1,2}日):\n")


def window_text(context: str) -> str:
    """The turns of a context ``turn_context`` wrote, without its date line: what a message
    was said among, whatever day it was ingested on."""
    head = _DATE_LINE.match(context)
    return context[head.end():] if head else context


def turn_context(turns: Sequence[str], index: int, at: float | None, *, limit: int) -> str:
    """The index context of ``turns[index]`` (turns already rendered by ``turn_line``):
    the date of ``at`` (None: no date line) and the window around the turn, at most
    ``limit`` characters."""
    if not 0 <= index < len(turns):
        raise IndexError(index)
    window = list(turns[max(index - BEFORE, 0): index + AFTER + 1])
    lines = ([] if at is None
             else [date_line(at, any(_JAPANESE.search(t) for t in window))]) + window
    return "\n".join(lines)[:limit]


def conversation_contexts(turns: Sequence[str], at: float | None, *, limit: int) -> list[str]:
    """``turn_context`` of every turn of a conversation, in order."""
    return [turn_context(turns, i, at, limit=limit) for i in range(len(turns))]
