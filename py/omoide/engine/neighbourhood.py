"""Neighbourhood evidence: memories from one stretch of a conversation share evidence at recall.

A turn alone is often elliptical, and the question that finds it may be about its
neighbours ("What did Caroline say about the adoption agency?" finds the turn after the one
that names the agency). A memory may record where it came from: ``conversation`` (an id the
caller or conversation ingest chooses) and ``turn`` (its place in it, 0, 1, ...; several
memories may share a turn: ingest extracts more than one from a message). At hybrid recall
every candidate from a conversation gets a *window vote*: the mean of the vector standard
scores (the query's cosine, on the same per-query scale the fusion uses) of the memories
within ``WINDOW`` turns of it, itself included, added to its fused score with the vector
ranker's weight. A window that matches the query lifts each of its turns; a turn that matches
alone in a window that does not is pulled back towards it.

Why this form (measured on LoCoMo dev, both models; BENCHMARKS.md, Recall v2, session 5):
the mean of standard scores needs only the cosines of the candidates' neighbours (one
kernel call over at most ``(2 * WINDOW + 1)`` ids per candidate: O(k x window) per query),
no second vector index and no pass over the store; it stays on the fusion's scale, so it
needs no weight of its own.

Memories without a conversation get no vote (0: the population's mean), so a store of
unrelated notes (JSQuAD paragraphs) ranks exactly as before. Only live memories of the same
character's store count (isolation: the index lives in the store).

The positions are a secondary index of the store (``CharacterStore.index``: kept current by
every write, built once on first use). A memory given a conversation without a turn (a chat
app remembering one message at a time) is placed after the conversation's last turn
(``next_turn``).
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from omoide.engine.memory import Memory

if TYPE_CHECKING:
    from omoide.engine.store import CharacterStore

WINDOW = 2  # turns on each side of a memory that share its evidence
_INDEX = "conversation turns"

# conversation -> the highest turn handed out or seen, per store (a hint: ``next_turn``
# checks the index, so a stale hint never places two turns on one place)
_last_turns: weakref.WeakKeyDictionary[CharacterStore, dict[str, int]] = (
    weakref.WeakKeyDictionary())


def _position(memory: Memory) -> Hashable:
    # both fields from one read of the line: an unmade memory stays unmade
    conversation, turn = memory.peek_many(("conversation", "turn"))
    if conversation is None or turn is None:
        return None
    return (conversation, turn)


def positions(store: CharacterStore) -> dict[Hashable, set[str]]:
    """(conversation, turn) -> ids of the live memories there (None groups the others)."""
    return store.index(_INDEX, _position)


def next_turn(store: CharacterStore, conversation: str) -> int:
    """The turn after the conversation's last one in this store, forgotten turns included
    (0 for a new conversation): a restored memory never shares its turn with a later one,
    and a reopened workspace hands out the turn this process would have (the hint was
    built from the live memories only, the memo of this process kept the forgotten ones).
    O(1) after the first call per store (one pass over the positions and the trash)."""
    groups = positions(store)
    last = _last_turns.get(store)
    if last is None:
        last = {}
        trashed = (_position(entry.memory) for entry in store.trash.values())
        for place in itertools.chain(groups, trashed):
            if place is not None and place[1] > last.get(place[0], -1):
                last[place[0]] = place[1]
        _last_turns[store] = last
    turn = last.get(conversation, -1) + 1
    while (conversation, turn) in groups:  # written by another path since the hint
        turn += 1
    return turn


def note_turn(store: CharacterStore, memory: Memory) -> None:
    """A memory another process wrote (``backends/follower.py``) counts in the memo of the
    last turns, as one written here does: forgotten later, its turn is never handed out
    again. A store without a memo yet builds it from its memories when first asked."""
    place = _position(memory)
    last = _last_turns.get(store)
    if place is not None and last is not None and place[1] > last.get(place[0], -1):
        last[place[0]] = place[1]


def claim_turn(store: CharacterStore, conversation: str, turn: int) -> None:
    """Note a turn handed out (before it is stored), so the next ``next_turn`` is after it."""
    next_turn(store, conversation)  # builds the hint
    last = _last_turns[store]
    if turn > last.get(conversation, -1):
        last[conversation] = turn


def window(store: CharacterStore, memory: Memory) -> list[str]:
    """Ids of the live memories within ``WINDOW`` turns of ``memory`` in its conversation
    (itself included when live); empty when it has no place."""
    if memory.conversation is None or memory.turn is None:
        return []
    groups = positions(store)
    ids: list[str] = []
    for turn in range(memory.turn - WINDOW, memory.turn + WINDOW + 1):
        ids.extend(sorted(groups.get((memory.conversation, turn), ())))
    return ids


def window_votes(store: CharacterStore, query_vector: Sequence[float],
                 candidates: Sequence[str], mean: float, std: float) -> dict[str, float]:
    """Each candidate's window vote: the mean standard score ``(cosine - mean) / std`` of
    the memories in its window; candidates without a conversation get none (absent).
    ``mean``/``std``: the vector ranker's moments over the whole store for this query."""
    if std <= 1e-12:
        return {}
    records = store.records
    windows: dict[str, list[str]] = {}
    groups = None
    for memory_id in candidates:  # ``window`` inlined: this runs for every candidate
        memory = records[memory_id]
        conversation, turn = memory.conversation, memory.turn
        if conversation is None or turn is None:
            continue
        if groups is None:
            groups = positions(store)
        ids: list[str] = []
        for place in range(turn - WINDOW, turn + WINDOW + 1):
            group = groups.get((conversation, place))
            if group:
                ids.extend(group)
        windows[memory_id] = ids
    if not windows:
        return {}
    needed = list({i for ids in windows.values() for i in ids})
    cosine = dict(zip(needed, store.kernel.scores(query_vector, needed), strict=True))
    return {memory_id: (sum([cosine[i] for i in ids]) / len(ids) - mean) / std
            for memory_id, ids in windows.items()}
