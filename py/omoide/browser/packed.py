"""Memories of an intact checked record pack, made on use (``PackedMemory``).

A checked pack of lines (``PACK_COLUMNS``: web/store/packs.js writes one JSON array of a
record's values per line, in ``RECORD_FIELDS`` order, after a head line
``[ids, keys, kinds, created_at]`` (``[ids, keys]`` before the head columns), all under one
CRC-32; ``PACK_LINES``, as before the columns: one JSON record per line) holds
records the engine checked before it wrote them, and its CRC proves the text unchanged
since. Restore therefore keeps
each record's line as it is (its UTF-8 bytes) and makes a ``PackedMemory`` holding only its
id, its key (what the store's indexes need at once), its kind and time when the head holds
them (``head_columns``: the kinds, days and newest-first indexes) and the line: no
``json.loads`` of
every record and no Memory built per row on the way to ready. The first read of any other
field parses the line into the instance (``load``), after which it is an ordinary
``Memory`` (the same fields, equal to the Memory the validator's answer makes:
``tests/test_packed_memory.py``), and the line is dropped. Recall hits, listing,
governance and export load what they touch; the BM25 pass after ready reads the text and
context from the line and leaves the memory unmade (``indexed_texts``).

The line was checked before it was written, so it loads without the validator; a line that
still does not fit a Memory (a later schema must bump ``PACK_COLUMNS``) goes through the one
record validator, and a line the validator refuses raises its error (naming the field)
where the memory is first read: never a silently changed memory.
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING
from json.encoder import c_encode_basestring, c_make_encoder  # type: ignore[attr-defined]
from operator import itemgetter
from typing import Any

from ..engine import validate
from ..engine.memory import KIND_TYPES, Memory

# The record fields of a pack in columns (``PACK_COLUMNS``: each line is a JSON array of the
# values in this order): ``RECORD_FIELDS`` of web/store/packs.js, the same list
# (tests/test_packed_memory.py compares them). A later record schema bumps the format.
RECORD_FIELDS = ("id", "character_id", "text", "kind", "type", "key", "importance",
                 "created_at", "updated_at", "last_recalled_at", "recall_count", "model",
                 "meta", "context", "conversation", "turn", "trashed_at")
_FIELD_COUNT = len(RECORD_FIELDS)
_FIELD_SET = frozenset(RECORD_FIELDS)
_MEMORY_FIELDS = frozenset(Memory.__dataclass_fields__)
# the fields a packed memory may hold before it is loaded: its kind and time from the pack's
# head line (``head_columns``) and its model, the store's stamp (``restore.finish``)
_SET_FIELDS = frozenset(("kind", "created_at", "model"))
# the fields ``load`` makes floats again (``floats_again``: JSON writes 3.0 as 3)
_FLOAT_FIELDS = frozenset(("importance", "created_at", "updated_at", "last_recalled_at"))
# what a line needs to make a Memory without the validator (``load``)
_REQUIRED = frozenset(name for name, f in Memory.__dataclass_fields__.items()
                      if f.default is MISSING and f.default_factory is MISSING)


_memory_columns = itemgetter(*RECORD_FIELDS[:-1])  # a Memory's fields; trashed_at comes last
_ascii_line_of = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


# JSON.stringify's separators, non-ASCII as it is, no NaN; the C encoder called directly (an
# import writes one line per record: ``JSONEncoder.encode`` adds two Python calls to each)
_line_encoder = None if c_make_encoder is None else c_make_encoder(
    None, _refuse, c_encode_basestring, None, ":", ",", False, False, False)


def _line_of(values: list) -> str:
    if _line_encoder is None:  # a Python without the _json accelerator
        return json.dumps(values, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "".join(_line_encoder(values, 0))


def column_lines(records: list[dict[str, Any]], trashed_at: list[float | None]) -> list[str]:
    """The ``PACK_COLUMNS`` line of each checked record (exactly a Memory's fields, as
    ``validate.record`` answered them) and its ``trashed_at``: what web/store/packs.js stores
    as the pack's text, so an import hands its records over as lines and the worker builds
    no object per record to write them again. A text holding a lone surrogate (valid in a
    Python or JS string, not as UTF-8) is written escaped (``\\udc80``), as JSON.stringify
    writes it."""
    lines = [_line_of([*_memory_columns(record), at])
             for record, at in zip(records, trashed_at, strict=True)]
    try:
        "\n".join(lines).encode()  # one check in C for the whole batch
    except UnicodeEncodeError:
        lines = [line if _utf8(line) else _ascii_line_of(json.loads(line)) for line in lines]
    return lines


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def line_record(line: bytes) -> Any:
    """A stored line's JSON: a record object (``PACK_LINES``), or the record a line of
    values makes (``PACK_COLUMNS``: an array of exactly ``RECORD_FIELDS``' length); anything
    else as parsed (the validator refuses it). ValueError when the line is no JSON."""
    value = json.loads(line)
    if type(value) is list and len(value) == _FIELD_COUNT:
        return dict(zip(RECORD_FIELDS, value, strict=True))
    return value


class _Unloaded:
    """Shadows a Memory field's class default on ``PackedMemory``: until the instance is
    loaded it has no such attribute, so reading it reaches ``__getattr__`` (and loads)
    instead of the dataclass default. A non-data descriptor: once loaded, the instance's
    own attribute wins, at the usual cost."""

    __slots__ = ()

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        raise AttributeError


class PackedMemory(Memory):
    """A ``Memory`` whose fields other than ``id`` and ``key`` are parsed from its stored
    line on first use (see the module)."""

    # The stored line until loaded, None once loaded: a slot, not an attribute in the
    # instance's dict, so that a loaded instance keeps the compact attribute storage of an
    # ordinary Memory (an 17th attribute in the dict made it 2.4x larger under Pyodide).
    __slots__ = ("_line",)

    def __getattr__(self, name: str) -> Any:  # only for attributes not set yet
        if name == "_line" or name.startswith("__"):
            raise AttributeError(name)
        line = self._line  # AttributeError when not made by ``packed`` (``replace``)
        if line is None:
            raise AttributeError(name)
        load(self, line)
        return getattr(self, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Memory):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in Memory.__dataclass_fields__)

    __hash__ = None  # type: ignore[assignment]  # mutable, like Memory

    def _unmade_record(self) -> dict[str, Any] | None:
        """The record of the line while the memory is unmade, when it has the fields a
        Memory is made of (the shape ``load`` makes one from without the validator)."""
        line = getattr(self, "_line", None)
        if line is None:
            return None
        record = line_record(line)
        if type(record) is dict and _REQUIRED <= record.keys() <= _FIELD_SET:
            return record
        return None

    def indexed_texts(self) -> tuple[str, str | None]:
        """The text and context read from the line without making the memory: the full-text
        pass after a restore reads every text, and a made memory holds every field as its
        own object (much more than its line), so it stays unmade until something else reads
        it. A line that would not make a Memory as it is (fields missing or unknown, a text
        or context not a string) makes the memory: the validator names what is wrong."""
        record = self._unmade_record()
        if record is not None:
            text, context = record["text"], record.get("context")
            if type(text) is str and (context is None or type(context) is str):
                return text, context
        return super().indexed_texts()

    def peek(self, name: str) -> Any:
        """Field ``name`` read from the line without making the memory (``Memory.peek``),
        as ``load`` would set it (a whole-number float a float again, a field the line does
        not hold its default); a line that would not make a Memory as it is makes the memory
        (and the validator speaks)."""
        if name in _SET_FIELDS:  # set at restore, or made
            try:  # not ``self.__dict__``: that makes an instance its own dict (Python 3.13 on)
                return _attribute(self, name)
            except AttributeError:  # an unset field: ``_Unloaded``, no ``__getattr__`` here
                pass
        record = self._unmade_record()
        if record is None or name not in Memory.__dataclass_fields__:
            return getattr(self, name)
        return _field(record, name)

    def peek_many(self, names: tuple[str, ...]) -> tuple[Any, ...]:
        """``peek`` of each of ``names`` from ONE parse of the line (an index keyed by two
        fields parsed every line twice)."""
        record = self._unmade_record()
        if record is None or not _MEMORY_FIELDS.issuperset(names):
            return super().peek_many(names)
        return tuple(self._set_field(name, record) if name in _SET_FIELDS
                     else _field(record, name) for name in names)

    def _set_field(self, name: str, record: dict[str, Any]) -> Any:
        """A field set at restore (``_SET_FIELDS``), else as the line's ``record`` holds it."""
        try:
            return _attribute(self, name)
        except AttributeError:
            return _field(record, name)

    @property
    def loaded(self) -> bool:
        return getattr(self, "_line", None) is None


def _field(record: dict[str, Any], name: str) -> Any:
    """Field ``name`` of a line's record as ``load`` sets it: a whole-number float a float
    again, a field the line does not hold (written before it) its default."""
    if name not in record:
        default = Memory.__dataclass_fields__[name]
        return default.default_factory() if default.default is MISSING \
            else default.default  # type: ignore[misc]
    value = record[name]
    if type(value) is int and name in _FLOAT_FIELDS:
        return float(value)
    return value


for _name in Memory.__dataclass_fields__:
    if _name in Memory.__dict__:  # a field with a plain default: a class attribute of Memory
        setattr(PackedMemory, _name, _Unloaded())

_new = object.__new__
_attribute = object.__getattribute__


def packed(memory_id: str, key: str | None, line: bytes) -> PackedMemory:
    """A memory of a checked pack, not parsed yet."""
    memory = _new(PackedMemory)
    memory.id = memory_id
    memory.key = key
    memory._line = line
    return memory


def packed_with_head(memory_id: str, key: str | None, line: bytes, kind: str,
                     created_at: float) -> PackedMemory:
    """A memory of a checked pack whose head line also holds each record's kind and time
    (``head_columns``): set now, so the indexes over every memory (kinds, days, newest
    first) read them without parsing the line. The instance's attribute storage already has
    room for every field (``_size_attributes``): the float is the only new object."""
    memory = _new(PackedMemory)
    memory.id = memory_id
    memory.key = key
    memory.kind = kind
    memory.created_at = created_at
    memory._line = line
    return memory


# a kind as one shared string (the head's JSON makes a string per record)
_KIND_OF = {kind: kind for kind in KIND_TYPES}


def head_columns(head: list[Any], count: int) -> tuple[list[str], list[float]] | None:
    """The kinds and times a pack's head line holds after its ids and keys
    (``[ids, keys, kinds, created_at]``, web/store/packs.js), checked as the record validator
    checks those fields, times as floats; None for a head without them (written before
    them) or with any that does not pass (the lines are read instead)."""
    if len(head) != 4:
        return None
    kinds, times = head[2], head[3]
    if not (type(kinds) is list and type(times) is list and len(kinds) == len(times) == count):
        return None
    try:
        kinds = list(map(_KIND_OF.__getitem__, kinds))
    except (KeyError, TypeError):  # not a kind (TypeError: not hashable)
        return None
    if not set(map(type, times)) <= {int, float} or not _finite(times) or (
            times and not (0 <= min(times) and max(times) <= validate.MAX_TIME)):
        return None
    return kinds, list(map(float, times))


def _finite(numbers: list[int | float]) -> bool:
    try:
        return math.isfinite(math.fsum(numbers))
    except (OverflowError, ValueError):
        return False


def _size_attributes() -> None:
    """Give the class's shared attribute keys every field now, in the order a load sets
    them: CPython sizes an instance's compact attribute storage by the class's keys when
    the instance is made, and restore makes every instance before any is loaded, so without
    this each load would overflow it into a dict of its own (~2x the memory)."""
    memory = packed("", None, b"")
    Memory.__init__(memory, **dict.fromkeys(Memory.__dataclass_fields__))


def floats_again(record: dict[str, Any]) -> None:
    """The fields a Memory holds as floats, floats again in ``record``: JavaScript's JSON
    writes a whole-number float as an integer. A KeyError when one is missing (not a record
    as the engine writes it). Unrolled: it runs for every row of a restore."""
    value = record["importance"]
    if type(value) is int:
        record["importance"] = float(value)
    value = record["created_at"]
    if type(value) is int:
        record["created_at"] = float(value)
    value = record["updated_at"]
    if type(value) is int:
        record["updated_at"] = float(value)
    value = record["last_recalled_at"]
    if type(value) is int:
        record["last_recalled_at"] = float(value)


def load(memory: PackedMemory, line: bytes) -> None:
    """Parse ``line`` into ``memory`` (the trusted conversion of ``restore.trusted_memories``:
    a whole-number float becomes a float again); a line that is no such record goes through
    the record validator, whose error, if any, is raised."""
    try:  # the store's stamp, set at restore: the line's may predate a re-vectorization
        model = _attribute(memory, "model")
    except AttributeError:
        model = None
    record = line_record(line)
    if type(record) is dict and record.get("id") == memory.id:
        # keep the one id string the store's maps hold
        record["id"] = memory.id
    try:
        record.pop("trashed_at", None)
        floats_again(record)
        Memory.__init__(memory, **record)
    except (AttributeError, KeyError, TypeError):  # not a record as the engine writes it
        checked = validate.record(line_record(line), stored=True)
        checked.pop("trashed_at", None)
        checked.pop("vector", None)
        Memory.__init__(memory, **checked)
    if model is not None:
        memory.model = model
    memory._line = None


_size_attributes()
