"""The records the engine stores and returns: ``Memory``, ``Hit``, ``TrashEntry``."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, fields
from typing import Any

KIND_TYPES: dict[str, str] = {
    # Lasting truths about the character or user are factual; things that happened are episodic.
    "preference": "factual",
    "pattern": "factual",
    "fact": "factual",
    "decision": "episodic",
    "diary": "episodic",
    "summary": "episodic",
}
KINDS = tuple(KIND_TYPES)
TYPES = ("factual", "episodic")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_memory_id(at_seconds: float) -> str:
    """A 26-character ULID: 48-bit millisecond time + 80 random bits, sortable by creation."""
    value = (int(at_seconds * 1000) & ((1 << 48) - 1)) << 80 | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


@dataclass
class Memory:
    id: str
    character_id: str
    text: str
    kind: str
    type: str
    key: str | None
    importance: float
    created_at: float  # seconds since the Unix epoch
    updated_at: float
    last_recalled_at: float | None = None
    recall_count: int = 0
    model: str = ""  # stamp of the vector space its vector lives in
    meta: dict[str, Any] = field(default_factory=dict)
    # Indexed, never displayed: words around the memory (a conversation turn's session date and
    # neighbouring turns) that help recall find it. Embedded as the normalized blend of the
    # text's and the context's vectors; BM25F indexes text and context as two fields.
    context: str | None = None
    # Where the memory came from in a conversation (``engine/neighbourhood.py``): an id the
    # caller or conversation ingest chooses, and the turn's place in it (0, 1, ...). Memories
    # a few turns apart share evidence at recall. None: not from a conversation.
    conversation: str | None = None
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field, ``meta`` copied (what ``dataclasses.asdict`` gives, without its
        recursion into every field: 8x cheaper, and every recall reply makes k of them)."""
        data = {name: getattr(self, name) for name in _MEMORY_FIELDS}
        data["meta"] = _copied(self.meta)
        return data

    def peek(self, name: str) -> Any:
        """The value of field ``name``. A memory made on use (``browser/packed.py``) reads it
        from its stored line without making itself: an index over every memory (kinds, days,
        the newest-first order, tiers) reads one field of each, and a made memory holds every
        field as its own object."""
        return getattr(self, name)

    def peek_many(self, names: tuple[str, ...]) -> tuple[Any, ...]:
        """``peek`` of each of ``names`` (a memory made on use parses its line once)."""
        return tuple(getattr(self, name) for name in names)

    def indexed_texts(self) -> tuple[str, str | None]:
        """The text and the index context: what full-text search indexes (a memory made on
        use reads them without making itself: ``browser/packed.py``)."""
        return self.text, self.context

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Memory:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Memory:
        """The Memory of a record ``validate.record`` answered (its fields exactly
        ``Memory``'s + ``trashed_at`` + ``vector``) in one keyword call: ``trashed_at`` and
        ``vector`` are removed from ``record`` (which then holds exactly the Memory's
        fields). 7x cheaper than ``from_dict``, which picks field by field; an instance made
        by ``__init__`` keeps its attributes compact (a dict taken over as ``__dict__``
        would cost ~300 more bytes per memory)."""
        record.pop("trashed_at", None)
        record.pop("vector", None)
        try:
            return cls(**record)
        except TypeError:  # not a checked record: field by field
            return cls.from_dict(record)


def _copied(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, tuples as lists' kin, scalars shared), so a
    caller that edits a returned dict never edits the stored memory."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_copied(v) for v in value)
    return value


_MEMORY_FIELDS = tuple(f.name for f in fields(Memory))


@dataclass(frozen=True)
class Hit:
    """One recall result. ``score`` is the fused score in hybrid mode, the cosine in vector
    mode, the BM25 score in fulltext mode. Components are None where not computed; ranks are
    1-based positions in that ranker's own candidate list (None: outside it). ``relevance`` is
    the calibrated score in [0, 1] (``engine/relevance.py``); ``in_timeframe`` says whether the
    memory's time lies in the span the query named (None: the query named none)."""

    memory: Memory
    score: float
    vector_cosine: float | None
    bm25: float | None
    vector_rank: int | None
    fulltext_rank: int | None
    relevance: float = 0.0
    in_timeframe: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """The hit as plain data, its memory as ``Memory.to_dict``."""
        return {"memory": self.memory.to_dict(), "score": self.score,
                "vector_cosine": self.vector_cosine, "bm25": self.bm25,
                "vector_rank": self.vector_rank, "fulltext_rank": self.fulltext_rank,
                "relevance": self.relevance, "in_timeframe": self.in_timeframe}


@dataclass
class TrashEntry:
    """A forgotten memory, kept with its vector so it can be restored without re-embedding."""

    memory: Memory
    vector: list[float]
    trashed_at: float
