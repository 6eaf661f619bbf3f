"""The memories tab's list, one page at a time: filtered and ordered in the worker, so the
page renders at most ``limit`` rows whatever the character's size (and a remember re-fetches
one page, never the whole list)."""

from __future__ import annotations

from typing import Any

from ..engine.memory import Memory
from ..errors import OmoideError
from .rpc import handler

MAX_PAGE = 500
TIERS = ("hot", "cold")


def tier_of(memory: Memory) -> str:
    return "hot" if memory.meta.get("tier") == "hot" else "cold"


def checked_int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"must be a whole number from {low} to {high}")
    return value


def matcher(kind: str | None, tier: str | None, text: str | None):
    if tier is not None and tier not in TIERS:
        raise OmoideError.of("INVALID_ARGUMENT", name="tier", reason=f"not in {TIERS}")
    for name, value in (("kind", kind), ("text", text)):
        if value is not None and not isinstance(value, str):
            raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be a text")
    needle = (text or "").strip().lower()

    def matches(m: Memory) -> bool:
        if kind and m.kind != kind:
            return False
        if tier and tier_of(m) != tier:
            return False
        return not needle or needle in m.text.lower() or needle in (m.key or "").lower()

    return matches


@handler("memories_page")
def memories_page(character: str, offset: int = 0, limit: int = 50, kind: str | None = None,
                  tier: str | None = None, text: str | None = None) -> dict[str, Any]:
    """Live memories newest first, filtered by kind, tier and a text/key substring:
    ``{items, offset, matched, total}``."""
    from .session import session  # the session module registers this one

    offset = checked_int("offset", offset, 0, 10**9)
    limit = checked_int("limit", limit, 1, MAX_PAGE)
    matches = matcher(kind, tier, text)
    engine = session().engine
    store = engine.stores.get(character)
    if store is None:
        return {"items": [], "offset": offset, "matched": 0, "total": 0}
    found = [m for m in store.records.values() if matches(m)]
    found.sort(key=lambda m: (-m.created_at, m.id))
    return {"items": [m.to_dict() for m in found[offset:offset + limit]], "offset": offset,
            "matched": len(found), "total": len(store.records)}
