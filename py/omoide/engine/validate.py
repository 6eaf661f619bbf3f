"""Argument checks shared by the verbs; each failure is an ``OmoideError`` with a stable code."""

from __future__ import annotations

import math
from collections.abc import Iterable

from omoide.engine.memory import KINDS
from omoide.errors import OmoideError

MAX_CHARACTER_ID = 128
MODES = ("hybrid", "vector", "fulltext")
MAX_K = 1000


def character_id(value: object) -> str:
    if not isinstance(value, str):
        raise OmoideError.of("INVALID_CHARACTER_ID", character=value, reason="not a string")
    if not value or value.strip() != value:
        raise OmoideError.of(
            "INVALID_CHARACTER_ID", character=value, reason="empty or padded with whitespace"
        )
    if len(value) > MAX_CHARACTER_ID:
        raise OmoideError.of(
            "INVALID_CHARACTER_ID", character=value, reason=f"longer than {MAX_CHARACTER_ID}"
        )
    if not value.isprintable():
        raise OmoideError.of(
            "INVALID_CHARACTER_ID", character=value, reason="contains control characters"
        )
    return value


def text(value: object, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OmoideError.of("EMPTY_TEXT")
    if len(value) > limit:
        raise OmoideError.of("TEXT_TOO_LONG", length=len(value), limit=limit)
    return value


def kind(value: object) -> str:
    if value not in KINDS:
        raise OmoideError.of("INVALID_ARGUMENT", name="kind", reason=f"{value!r} not in {KINDS}")
    return value  # type: ignore[return-value]


def kinds(values: Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    return frozenset(kind(v) for v in values)


def unit_interval(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason=f"{value!r} not in [0, 1]")
    return float(value)


def k(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise OmoideError.of("INVALID_ARGUMENT", name="k", reason=f"{value!r} not in 1..{MAX_K}")
    return value


def mode(value: object) -> str:
    if value not in MODES:
        raise OmoideError.of("INVALID_ARGUMENT", name="mode", reason=f"{value!r} not in {MODES}")
    return value  # type: ignore[return-value]


def positive(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason=f"{value!r} is not > 0")
    return float(value)


def threshold(value: object, search_mode: str) -> float | None:
    """Vector and hybrid: a cosine in [0, 1]. Fulltext: a minimum BM25 score >= 0."""
    if value is None:
        return None
    if search_mode == "fulltext":
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="threshold", reason=f"{value!r}: fulltext needs BM25 >= 0"
            )
        return float(value)
    return unit_interval("threshold", value)


def timestamp(value: object, name: str = "at") -> float:
    from datetime import datetime

    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason=f"{value!r} is not a time")
    return float(value)


def meta(value: object) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OmoideError.of("INVALID_ARGUMENT", name="meta", reason="must be a dict")
    return dict(value)


def key(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise OmoideError.of("INVALID_ARGUMENT", name="key", reason="must be a non-empty string")
    return value


def context(value: object, limit: int) -> str | None:
    """Optional index context: a string (empty means none) within the text limit."""
    if not isinstance(value, str):
        raise OmoideError.of("INVALID_ARGUMENT", name="context", reason="must be a string")
    if len(value) > limit:
        raise OmoideError.of("INVALID_ARGUMENT", name="context",
                             reason=f"longer than {limit} characters")
    return value if value.strip() else None
