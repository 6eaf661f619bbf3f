"""The memories tab's list, one page at a time: filtered and ordered in the worker, so the
page renders at most ``limit`` rows whatever the character's size (and a remember re-fetches
one page, never the whole list)."""

from __future__ import annotations

from typing import Any

from ..engine.memory import Memory
from ..engine.recency import order_key
from ..engine.store import CharacterStore
from ..errors import OmoideError
from ..governance.tiers import tier_of
from .rpc import handler

MAX_PAGE = 500
TIERS = ("hot", "cold")


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

    # fields peeked: a text filter reads every memory, and an unmade one stays unmade
    # (``Memory.peek``: a made memory holds every field as its own object)
    def matches(m: Memory) -> bool:
        if kind and m.peek("kind") != kind:
            return False
        if tier and tier_of(m) != tier:
            return False
        return (not needle or needle in m.indexed_texts()[0].lower()
                or needle in (m.key or "").lower())

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
    if text is not None and text.strip():  # a text search reads every text it filters
        found = [m for m in store.records.values() if matches(m)]
        found.sort(key=order_key)
        page, matched = found[offset:offset + limit], len(found)
    else:  # the store's indexes: a page costs its rows, not a sort of the store
        allowed = group(store, kind, tier)
        matched = len(store.records) if allowed is None else len(allowed)
        page = [store.records[i] for i in store.newest_first(offset, limit, allowed)]
    return {"items": [m.to_dict() for m in page], "offset": offset,
            "matched": matched, "total": len(store.records)}


def group(store: CharacterStore, kind: str | None, tier: str | None) -> set[str] | None:
    """Ids of the live memories of this kind and tier (None: no filter), from the store's
    kind and tier indexes."""
    allowed = store.ids_of_kinds([kind]) if kind else None
    if tier:
        in_tier = store.index("tier", tier_of).get(tier, set())
        allowed = set(in_tier) if allowed is None else allowed & in_tier
    return allowed
