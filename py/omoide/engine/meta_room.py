"""Room in a memory's ``meta`` for the engine's own fields.

``meta`` is the app's JSON (``remember(meta=...)``, an update, an import) and also where the
engine keeps its bookkeeping: the links between versions (``supersedes``, ``superseded_by``,
``was_superseded_by``, ``merged_into``), governance's counters and lists (``merges``,
``history``, ``folded``, ``cold``...) and what extraction found (``polarity``, ``value``).
The bookkeeping is added to records that already hold the app's meta, so one limit for the
whole made a memory whose meta was near it uneditable and its export un-importable once a
supersede or a fold added a few bytes.

The rule (``validate.meta``, at every door, records included): the app's own keys (every key
but ``ENGINE_KEYS``) at most ``MAX_META_BYTES`` (64 KiB) as JSON, and the whole meta at most
``MAX_RECORD_META_BYTES`` (64 KiB + ``META_RESERVE``). The engine never writes more than
that: ``CharacterStore.put`` passes every record through ``fitted``, which, only when the
whole is over, drops the engine's fields largest first (the oldest entry of a list, or a
whole field), never the app's keys and never a link between versions, which are small. The
app's part is at most 64 KiB, the links and tier marks a few hundred bytes each, so what
is left always fits.
"""

from __future__ import annotations

import json
from typing import Any

MAX_META_BYTES = 64 * 1024  # the app's own keys
META_RESERVE = 16 * 1024  # room for the engine's fields on top of them
MAX_RECORD_META_BYTES = MAX_META_BYTES + META_RESERVE

# Fields the engine writes (engine/supersede.py, governance: dedup, ingest and its marks of
# the messages it took, tiers,
# extraction's candidate meta, the lorebook import's switched_off)
LINKS = frozenset({
    "supersedes", "superseded_by", "superseded_at", "was_superseded_by", "merged_into",
    "tier", "pinned", "cold", "switched_off",
})
ENGINE_KEYS = LINKS | frozenset({
    "superseded_reason", "merged_reason", "history", "folded", "merges", "said_at", "heard",
    "polarity", "over", "value", "lang", "via", "refined", "judge_reason",
})
# a link kept whatever happens is one of this size at most (an id, a time, a tier; the
# ``cold`` mark with its reason); one the app filled with more is dropped like the rest
MAX_LINK_BYTES = 512
# lists that lose their oldest entries first (the records they name are in the trash; the
# marks of messages ingest heard, governance/ingest.py)
LISTS = ("history", "folded", "supersedes", "heard")


def size(meta: dict[str, Any]) -> int:
    """Bytes of ``meta`` as JSON (UTF-8, non-ASCII as it is), as the limit counts them."""
    if not meta:
        return 2
    return len(json.dumps(meta, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def own_size(meta: dict[str, Any]) -> int:
    """Bytes of the app's part of ``meta`` (every key but ``ENGINE_KEYS``)."""
    return size({k: v for k, v in meta.items() if k not in ENGINE_KEYS})


def fitted(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` within ``MAX_RECORD_META_BYTES``: itself when it is; else a copy without the
    largest of the engine's droppable fields (a list's oldest entry, a whole field) one by
    one until it is. The app's keys and the links are kept (see the module doc)."""
    if not meta or ENGINE_KEYS.isdisjoint(meta):
        return meta
    total = size(meta)
    if total <= MAX_RECORD_META_BYTES:
        return meta
    out = dict(meta)
    while total > MAX_RECORD_META_BYTES:
        units: list[tuple[int, str, bool]] = []  # (bytes, field, a list's oldest entry)
        for name in ENGINE_KEYS.intersection(out):
            value = out[name]
            if name in LISTS and type(value) is list and value:
                units.append((size({"": value[0]}), name, True))
            elif name in LINKS and size({"": value}) <= MAX_LINK_BYTES:
                continue
            else:
                units.append((size({"": value}), name, False))
        if not units:
            break  # only the app's keys and small links: at most 64 KiB + a few hundred
        _, name, entry = max(units)
        if entry:
            out[name] = out[name][1:]
        else:
            del out[name]
        total = size(out)
    return out
