"""Persisted full-text postings, one block per record pack (web/store/db.js ``text_postings``).

A restore groups each record pack's memories (``TextGroup``, keyed by the pack's number,
stamped with its text's CRC-32 and size). After ready the worker reads the character's
blocks and hands each to ``absorb``: a block made from that very pack text (and by this
analyzer, in this layout, its own CRC intact: ``engine.postings_block``) is absorbed in
array operations instead of parsing and analyzing the pack's texts; any other is ignored and
the lazy pass analyzes them as before. A pack analyzed by the lazy pass (or by a search that
completed the index) yields a block of its own, which the worker takes (``take``) and writes
only while the pack's CRC is still the one it was made from (web/store/db.js
``writeTextBlocks``); every rewrite or deletion of a pack deletes its block in the same
transaction (a purge leaves no term of the purged text on disk). An import's memories are
grouped the same way once its packs are written (``group_written``), so its first restart
absorbs blocks too instead of analyzing every text it brought.
"""

from __future__ import annotations

import json
from typing import Any

from ..engine import postings_block
from ..engine.bulk import acyclic_bulk
from .restore import as_bytes
from .session import session


def absorb(character: str, pack: int, data: Any) -> bool:
    """Index the group of pack ``pack`` of ``character`` from a stored block (bytes, or a
    Uint8Array); False when the block was not used (nothing changed)."""
    store = session().engine.stores.get(character)
    group = store and store.text_group(pack)
    if group is None:
        return False
    try:
        block = postings_block.from_bytes(as_bytes(data), group.source)
    except (ValueError, KeyError, TypeError):
        return False
    with acyclic_bulk():  # ~100,000 small arrays and dict entries, no cycles
        return store.absorb_text_block(pack, group.source, block)


def group_written(packs_json: str) -> int:
    """Group the memories an import added by the record packs its commit wrote (a JSON list
    of ``[character, pack, crc, size, ids]``: the pack's number, its text's CRC-32 and UTF-8
    size, the ids it holds), so the lazy pass makes one block per pack (``take``); returns
    how many groups were made (a pack whose memories are not all waiting makes none)."""
    by_character: dict[str, list[tuple[int, list[int], list[str]]]] = {}
    for character, pack, crc, size, ids in json.loads(packs_json):
        by_character.setdefault(character, []).append((pack, [crc, size], ids))
    stores = session().engine.stores
    return sum(stores[c].group_unindexed(packs) for c, packs in by_character.items()
               if c in stores)


def take() -> list[list[Any]]:
    """The blocks the lazy build made since the last call, as ``[character, pack, crc,
    bytes]`` (``crc``: the pack text's CRC-32 the block was made from)."""
    out = []
    for character, store in session().engine.stores.items():
        built, store.built_blocks = store.built_blocks, []
        for b in built:
            out.append([character, b.key, b.source[0], postings_block.to_bytes(b.block, b.source)])
    return out
