"""Reading the fields governance keeps in a memory's ``meta`` (merges, history, folded,
superseded_by): ``meta`` is the user's JSON too (``remember(meta=...)``, an import), so such
a field may hold anything. A field of the wrong type reads as absent, never as a crash of
the audit or of an ingest that merges into the memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def count(meta: Mapping[str, Any], name: str) -> int:
    """An integer >= 0 kept under ``name``, else 0."""
    value = meta.get(name)
    return value if type(value) is int and value >= 0 else 0


def entries(meta: Mapping[str, Any], name: str) -> list[Any]:
    """A copy of the list kept under ``name``, else an empty list."""
    value = meta.get(name)
    return list(value) if type(value) is list else []


def text_field(meta: Mapping[str, Any], name: str) -> str | None:
    """The string kept under ``name``, else None."""
    value = meta.get(name)
    return value if type(value) is str else None
