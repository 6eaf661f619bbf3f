"""Argument checks shared by the verbs, and the ONE memory record schema (``record``) every
door uses: engine verbs, export/import, backends, snapshots, rows read back from SQLite or
IndexedDB. Each failure is an ``OmoideError`` with a stable code that names the field.

The record schema (a record is ``Memory.to_dict()`` + ``trashed_at`` + ``vector``):

| field | rule |
|---|---|
| ``id`` | 1..128 ASCII letters, digits, ``_`` or ``-`` (ULIDs by default) |
| ``character_id`` | 1..128 Unicode letters, marks, digits, ``_ - . @ + '``, inner spaces; |
|  | no ``..`` |
| ``text`` | a string with a visible character, at most the engine's limit (8000) |
| ``kind`` / ``type`` | one of ``KINDS``; ``type`` is the kind's type (filled in when absent) |
| ``key`` | null or a non-blank string of at most 256 characters |
| ``importance`` | a finite number in [0, 1] |
| ``created_at``, ``updated_at`` | seconds since the epoch, finite, in [0, 253402300799] |
| ``last_recalled_at``, ``trashed_at`` | null or such a time |
| ``recall_count`` | an integer in [0, 2**53) |
| ``model`` | "" or a stamp ``model@dtype#dimension`` of at most 256 characters |
| ``meta`` | a JSON object (string keys, finite numbers), depth <= 16: the app's keys at |
|  | most 64 KiB as JSON, with the engine's own fields at most 80 KiB (``meta_room``) |
| ``vector`` | null or a list of finite numbers, as long as the stamp's dimension; a given |
|  | one is not all zeros and is scaled to length 1 (``unit_length``) |
| ``context`` | null or a string within the text limit (blank means null) |
| ``conversation`` | null or a non-blank string of at most 256 characters |
| ``turn`` | null or an integer in [0, 2**53); only with a ``conversation`` |

New strings (``text``, ``key``, ``context``, ``conversation``, ``meta``'s keys and values)
hold no lone surrogate (``unicode_text``); a row read back from storage loads as it is, and an
import file's are replaced by U+FFFD first (``without_lone_surrogates``, counted).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Any

from omoide.engine import meta_room
from omoide.engine.memory import KIND_TYPES, KINDS, Memory
from omoide.errors import OmoideError

MAX_CHARACTER_ID = 128
MAX_MEMORY_ID = 128
MAX_CHARACTER_NAME = 80  # the web app's limit (web/store/characters.js)
MAX_KEY = 256
MAX_CONVERSATION = 256
MAX_TURN = 2**53 - 1  # a JSON number any reader keeps exact
MAX_COUNT = 2**53 - 1  # recall counts: the same bound
MAX_STAMP = 256
MAX_META_BYTES = meta_room.MAX_META_BYTES  # the app's keys; the engine's fields on top
MAX_RECORD_META_BYTES = meta_room.MAX_RECORD_META_BYTES
MAX_META_DEPTH = 16
MAX_TIME = 253_402_300_799.0  # 9999-12-31T23:59:59Z
MAX_TEXT_LENGTH = 8_000  # the engine's default limit
# Vectors are stored as float32 (SQLite, IndexedDB, snapshots): a finite number beyond this
# is infinite there, and the memory fails its next load (web/store/import-vectors.js agrees)
FLOAT32_MAX = 3.4028234663852886e38
# A given vector further than this from length 1 is scaled to length 1 (``unit_length``);
# float32 storage of a unit vector is off by ~1e-7, so the engine's own rows stay as they are
UNIT_TOLERANCE = 1e-3
MODES = ("hybrid", "vector", "fulltext")
MAX_K = 1000
RECORD_FIELDS = (*Memory.__dataclass_fields__, "trashed_at", "vector")
_MEMORY_ID = re.compile(r"[A-Za-z0-9_-]+")
_CHARACTER_PUNCTUATION = frozenset("_-.@+' ")


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
    if not all(c.isalnum() or c in _CHARACTER_PUNCTUATION or _is_mark(c) for c in value):
        raise OmoideError.of(
            "INVALID_CHARACTER_ID", character=value,
            reason="use letters, digits, inner spaces and _ - . @ + ' only",
        )
    if ".." in value:
        raise OmoideError.of("INVALID_CHARACTER_ID", character=value, reason="contains '..'")
    return value


# What a display name may not hold: control characters (a tab, a newline), line and
# paragraph separators, lone surrogates. The web app's ``checkName`` (web/store/characters.js)
# applies the same rule (and counts code points, as here): a name the app accepted was
# refused by an import (str.isprintable() also refused the joiner of "👩‍🚀", a no-break
# space, a soft hyphen), so a whole-origin backup could not be restored.
_NOT_IN_A_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def character_name(value: object, name: str = "name") -> str:
    """A character's display name: at most ``MAX_CHARACTER_NAME`` characters, not padded,
    none of them a control character, a line separator or a lone surrogate."""
    if not isinstance(value, str) or not value.strip() or value.strip() != value:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason="must be a non-empty string without padding")
    if len(value) > MAX_CHARACTER_NAME or _NOT_IN_A_NAME.search(value):
        raise OmoideError.of(
            "INVALID_ARGUMENT", name=name,
            reason=f"at most {MAX_CHARACTER_NAME} characters, no control characters",
        )
    return value


def repaired_character_name(value: str, fallback: str) -> str:
    """``value`` made a valid name: what ``character_name`` refuses becomes a space (a lone
    surrogate U+FFFD), cut to the limit, ``fallback`` when nothing is left. For names in a
    file a user holds (an export made before the rule held everywhere): a display name
    never makes a backup unusable."""
    cleaned = _NOT_IN_A_NAME.sub(
        lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff" else " ", value)
    cleaned = cleaned.strip()[:MAX_CHARACTER_NAME].strip()
    return cleaned or fallback


def _is_mark(c: str) -> bool:
    import unicodedata

    return unicodedata.category(c).startswith("M")


def memory_id(value: object, name: str = "id") -> str:
    if (not isinstance(value, str) or not 1 <= len(value) <= MAX_MEMORY_ID
            or not _MEMORY_ID.fullmatch(value)):
        raise OmoideError.of(
            "INVALID_ARGUMENT", name=name,
            reason=f"{_short(value)} is not 1..{MAX_MEMORY_ID} ASCII letters, digits, _ or -",
        )
    return value


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# A lone surrogate (U+D800..U+DFFF) is half of a UTF-16 pair, not a character: UTF-8 cannot
# encode it, so SQLite, a mirror or an export read by another program fails on it, after
# other rows were written. JSON's "\ud800" escapes and undecodable bytes read with
# ``surrogateescape`` make them. New text is refused; a row already stored (IndexedDB keeps
# such strings) still loads (``stored``), so no memory a user holds is quarantined for it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_text(value: str, name: str) -> str:
    """``value`` when it holds no lone surrogate; else INVALID_ARGUMENT naming ``name``."""
    if not value.isascii() and _SURROGATE.search(value) is not None:
        raise OmoideError.of(
            "INVALID_ARGUMENT", name=name,
            reason="holds a lone surrogate (U+D800-U+DFFF): not text that UTF-8 can store")
    return value


def without_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (JSON data) with every lone surrogate of its strings (keys too) replaced by
    U+FFFD, and how many were. For a file holding memories a user already has (a browser
    export: IndexedDB keeps such strings, and the app's own export writes them as escapes):
    refusing it would make the backup unusable over one broken character. A value without
    any (nearly every record: one ``isascii`` per string) is returned as it is."""
    if not _holds_lone_surrogate(value):
        return value, 0
    if isinstance(value, str):
        if value.isascii():
            return value, 0
        fixed, count = _SURROGATE.subn("\ufffd", value)
        return fixed, count
    if isinstance(value, list):
        out, total = [], 0
        for item in value:
            fixed, count = without_lone_surrogates(item)
            out.append(fixed)
            total += count
        return (out, total) if total else (value, 0)
    if isinstance(value, dict):
        pairs, total = [], 0
        for k, v in value.items():
            fixed_k, n_k = without_lone_surrogates(k)
            fixed_v, n_v = without_lone_surrogates(v)
            pairs.append((fixed_k, fixed_v))
            total += n_k + n_v
        return (dict(pairs), total) if total else (value, 0)
    return value, 0


# A JSON escape that decodes to half of a UTF-16 pair ("\ud800".."\udfff", either case).
# An escaped backslash before "ud8.." matches too: the check errs toward the full walk only.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def json_text_holds_no_lone_surrogate(text: str) -> bool:
    """Whether the JSON ``text`` surely decodes to values without any lone surrogate: it holds
    none itself and no escape that makes one (a pair written as two escapes counts as one:
    the caller then walks the values). One pass over the text in C instead of a look at
    every string of every record (an import's 100,000 records)."""
    if not text.isascii() and _SURROGATE.search(text) is not None:
        return False
    return "\\u" not in text or _SURROGATE_ESCAPE.search(text) is None


def _holds_lone_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` holds one: a regular expression only for a string
    that is not ASCII, nested objects and lists only when not empty (a record's meta)."""
    kind = type(value)
    if kind is str:
        return not value.isascii() and _SURROGATE.search(value) is not None
    if kind is dict:
        for key, item in value.items():
            if type(key) is str and not key.isascii() and _SURROGATE.search(key):
                return True
            item_kind = type(item)
            if item_kind is str:
                if not item.isascii() and _SURROGATE.search(item):
                    return True
            elif (item_kind is dict or item_kind is list) and item \
                    and _holds_lone_surrogate(item):
                return True
        return False
    if kind is list:
        return any(_holds_lone_surrogate(item) for item in value)
    return False


# Nothing a person can see: spaces and the zero-width and format characters (a text of
# "\u200b\u200b" was a memory no one could read or find). A stored text is held to the old
# rule (spaces only), so a memory accepted before is never quarantined by this one.
_INVISIBLE = re.compile(
    r"[\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u2064\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]*")


def text(value: object, limit: int, *, stored: bool = False) -> str:
    if not isinstance(value, str):
        raise OmoideError.of("INVALID_ARGUMENT", name="text", reason="must be a string")
    if not value.strip() or (not stored and _INVISIBLE.fullmatch(value)):
        raise OmoideError.of("EMPTY_TEXT")
    if len(value) > limit:
        raise OmoideError.of("TEXT_TOO_LONG", length=len(value), limit=limit)
    return value if stored else unicode_text(value, "text")


def query(value: object, limit: int) -> str:
    """A recall's query, named ``query`` when refused (it was "Memory text is empty")."""
    return _bounded_text(value, "query", limit)


def _bounded_text(value: object, name: str, limit: int, *, stored: bool = False) -> str:
    """A non-blank string of at most ``limit`` characters, refused naming ``name``."""
    if not isinstance(value, str) or not value.strip():
        raise OmoideError.of("INVALID_ARGUMENT", name=name, reason="must be a non-empty string")
    if len(value) > limit:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"{len(value)} characters, the limit is {limit}")
    return value if stored else unicode_text(value, name)


def kind(value: object) -> str:
    if not isinstance(value, str) or value not in KINDS:
        raise OmoideError.of("INVALID_ARGUMENT", name="kind", reason=f"{value!r} not in {KINDS}")
    return value  # type: ignore[return-value]


def kinds(values: Iterable[str] | None) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    return frozenset(kind(v) for v in values)


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def _finite_numbers(values: list | tuple) -> bool:
    """Every item a finite int or float (not a bool). Runs at every load of every stored
    vector, so the common case stays in C: the types in one pass, then one sum."""
    if not set(map(type, values)) <= {float, int}:
        return False
    try:
        if math.isfinite(math.fsum(values)):
            return True
    except (OverflowError, ValueError):
        pass
    return all(map(_is_number, values))  # a huge but finite sum, or a real offender


def unit_interval(name: str, value: object) -> float:
    if not _is_number(value) or not 0 <= value <= 1:  # type: ignore[operator]
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"{_short(value)} not in [0, 1]")
    return float(value)  # type: ignore[arg-type]


def count(name: str, value: object) -> int:
    """An integer in [0, 2**53): JSON readers and SQLite's increment keep it exact (a count
    beyond it came back from SQLite as a float, and the memory failed its next load)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"{_short(value)} is not an integer in [0, 2**53)")
    return value


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
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value < 0):
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="threshold",
                reason=f"{value!r}: fulltext needs a finite BM25 score >= 0"
            )
        return float(value)
    return unit_interval("threshold", value)


def timestamp(value: object, name: str = "at") -> float:
    from datetime import datetime

    seconds = value
    if isinstance(value, datetime):
        try:
            seconds = value.timestamp()
        except (ValueError, OverflowError, OSError):  # naive, read as local time: year 1
            seconds = None
    if not _is_number(seconds) or not 0 <= seconds <= MAX_TIME:  # type: ignore[operator]
        raise OmoideError.of(
            "INVALID_ARGUMENT", name=name,
            reason=f"{_short(value)} is not a time (seconds since 1970, up to year 9999)",
        )
    return float(seconds)  # type: ignore[arg-type]


def optional_timestamp(value: object, name: str) -> float | None:
    return None if value is None else timestamp(value, name)


def _json_safe(value: object, depth: int, stored: bool = False) -> bool:
    """JSON data within the depth limit, finite numbers; strings without lone surrogates
    unless ``stored`` (a row read back loads as it is, see ``_SURROGATE``)."""
    if depth > MAX_META_DEPTH:
        return False
    if value is None or isinstance(value, bool | int):
        return True
    if isinstance(value, str):
        return stored or value.isascii() or _SURROGATE.search(value) is None
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_safe(v, depth + 1, stored) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(k, depth, stored)
                   and _json_safe(v, depth + 1, stored) for k, v in value.items())
    return False


def meta(value: object, *, stored: bool = False) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OmoideError.of("INVALID_ARGUMENT", name="meta", reason="must be an object")
    if not value:
        return {}
    if not _json_safe(value, 1, stored):
        raise OmoideError.of(
            "INVALID_ARGUMENT", name="meta",
            reason=f"must be JSON data (string keys, finite numbers, depth <= {MAX_META_DEPTH},"
                   " no lone surrogates)",
        )
    size = meta_room.size(value)
    if size > MAX_META_BYTES:
        # the engine's own fields (links between versions, governance's bookkeeping) have
        # room on top of the app's 64 KiB: what the engine adds never makes it refused
        if size > MAX_RECORD_META_BYTES:
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="meta",
                reason=f"{size} bytes as JSON, the limit is {MAX_RECORD_META_BYTES} with the"
                       f" engine's own fields ({MAX_META_BYTES} without them)")
        own = meta_room.own_size(value)
        if own > MAX_META_BYTES:
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="meta",
                reason=f"{own} bytes as JSON (not counting the engine's own fields), the"
                       f" limit is {MAX_META_BYTES}")
    return dict(value)


def key(value: object, *, stored: bool = False) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise OmoideError.of("INVALID_ARGUMENT", name="key", reason="must be a non-empty string")
    if len(value) > MAX_KEY:
        raise OmoideError.of("INVALID_ARGUMENT", name="key",
                             reason=f"{len(value)} characters, the limit is {MAX_KEY}")
    return value if stored else unicode_text(value, "key")


def context(value: object, limit: int, *, stored: bool = False) -> str | None:
    """Optional index context: a string (empty means none) within the text limit."""
    if not isinstance(value, str):
        raise OmoideError.of("INVALID_ARGUMENT", name="context", reason="must be a string")
    if len(value) > limit:
        raise OmoideError.of("INVALID_ARGUMENT", name="context",
                             reason=f"longer than {limit} characters")
    if not stored:
        unicode_text(value, "context")
    return value if value.strip() else None


def conversation(value: object, *, stored: bool = False) -> str | None:
    """Optional conversation id: a non-blank string of at most ``MAX_CONVERSATION``."""
    if value is None:
        return None
    return _bounded_text(value, "conversation", MAX_CONVERSATION, stored=stored)


def turn(value: object) -> int | None:
    """Optional place in a conversation: an integer in [0, ``MAX_TURN``]."""
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= MAX_TURN:
        raise OmoideError.of("INVALID_ARGUMENT", name="turn",
                             reason=f"must be an integer in [0, {MAX_TURN}]")
    return value


def stamp_dimension(value: object, name: str = "model") -> int | None:
    """The dimension a model stamp ``model@dtype#dimension`` names; None for ""."""
    if not isinstance(value, str) or len(value) > MAX_STAMP:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"must be a model stamp of at most {MAX_STAMP} characters")
    dimension = _stamp_dimension(value)
    if dimension == 0:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"{_short(value)} is not a stamp model@dtype#dimension")
    return dimension


@functools.lru_cache(maxsize=64)  # a workspace holds a handful of stamps
def _stamp_dimension(value: str) -> int | None:
    """The stamp's dimension, None for "", 0 when it is not a stamp."""
    if value == "":
        return None
    model, _, rest = value.partition("@")
    _, _, dimension = rest.partition("#")
    if not model or not dimension.isdigit() or not 0 < int(dimension) <= 65_536:
        return 0
    return int(dimension)


def vector(value: object, dimension: int | None = None, name: str = "vector", *,
           stored: bool = False) -> list[float]:
    """A list of finite numbers a float32 can hold (``dimension`` long when given), as
    floats of length 1 (``unit_length``). ``stored``: a list decoded from float32 storage
    (floats by construction; only finiteness is checked, with one sum: float32 values cannot
    overflow it; kept as it was written)."""
    if not isinstance(value, list | tuple) or not value:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason="must be a non-empty list of numbers")
    if stored and isinstance(value, list) and math.isfinite(sum(value)):
        pass
    elif not _finite_numbers(value):
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason="must hold finite numbers only")
    elif max(value) > FLOAT32_MAX or min(value) < -FLOAT32_MAX:  # two passes in C
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"must hold numbers within +-{FLOAT32_MAX:.7g} (float32)")
    if dimension is not None and len(value) != dimension:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"has {len(value)} numbers, {dimension} expected")
    if stored:  # the engine's own row as it was written: kept as it is
        return value if isinstance(value, list) else [float(x) for x in value]
    return unit_length(value, name)


def unit_length(value: list | tuple, name: str = "vector") -> list[float]:
    """A given vector as floats of length 1 (its direction is all a cosine reads): every
    kernel scores by dot product, so one row of another length skewed every score of its
    character (a row of 1e30s made the standard scores of every other memory equal). A
    vector within ``UNIT_TOLERANCE`` of length 1 (every model's output, stored as float32)
    keeps its exact numbers; an all-zero one has no direction and is refused.
    web/store/import-vectors.js applies the same rule to the rows it packs."""
    norm = math.hypot(*value)  # in float64: squares of float32 numbers cannot overflow it
    if norm == 0.0:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason="is all zeros (a vector needs a direction)")
    if abs(norm - 1.0) <= UNIT_TOLERANCE:
        return [float(x) for x in value]
    return [x / norm for x in value]


# -- the record schema ------------------------------------------------------------------------

RECORD_DEFAULTS: dict[str, Any] = {
    "kind": "fact", "key": None, "importance": 0.5, "created_at": 0.0, "updated_at": 0.0,
    "last_recalled_at": None, "recall_count": 0, "model": "", "meta": {},
    "trashed_at": None, "vector": None, "context": None, "conversation": None, "turn": None,
}


def _type(value: object) -> str:
    if not isinstance(value, str) or value not in KIND_TYPES.values():
        raise OmoideError.of("INVALID_ARGUMENT", name="type",
                             reason=f"{_short(value)} is not factual or episodic")
    return value


def _record_meta(value: object, stored: bool) -> dict:
    if value is None:
        raise OmoideError.of("INVALID_ARGUMENT", name="meta", reason="must be an object")
    return meta(value, stored=stored)


def _model(value: object) -> str:
    stamp_dimension(value)
    return value  # type: ignore[return-value]


# field -> check(value, max_text_length, stored); one table, so a record costs one lookup
# per field (every stored row passes here at load)
_FIELD_CHECKS: dict[str, Any] = {
    "id": lambda v, n, s: memory_id(v),
    "character_id": lambda v, n, s: character_id(v),
    "text": lambda v, n, s: text(v, n, stored=s),
    "kind": lambda v, n, s: kind(v),
    "type": lambda v, n, s: _type(v),
    "key": lambda v, n, s: key(v, stored=s),
    "importance": lambda v, n, s: unit_interval("importance", v),
    "created_at": lambda v, n, s: timestamp(v, "created_at"),
    "updated_at": lambda v, n, s: timestamp(v, "updated_at"),
    "last_recalled_at": lambda v, n, s: optional_timestamp(v, "last_recalled_at"),
    "trashed_at": lambda v, n, s: optional_timestamp(v, "trashed_at"),
    "recall_count": lambda v, n, s: count("recall_count", v),
    "model": lambda v, n, s: _model(v),
    "meta": lambda v, n, s: _record_meta(v, s),
    "vector": lambda v, n, s: None if v is None else vector(v, stored=s),
    "context": lambda v, n, s: None if v is None else context(v, n, stored=s),
    "conversation": lambda v, n, s: conversation(v, stored=s),
    "turn": lambda v, n, s: turn(v),
}


def invalid_record(field_name: str, memory_id: str, reason: str) -> OmoideError:
    """INVALID_RECORD naming the field (``fields["field"]``) and, when known, the record."""
    where = f" (memory {memory_id!r})" if memory_id != "?" else ""
    return OmoideError.of("INVALID_RECORD", field=field_name, memory_id=memory_id,
                          reason=reason + where)


def _bad_record(error: OmoideError, field_name: str, record_id: object) -> OmoideError:
    reason = error.fields.get("reason") or str(error).rstrip(".")
    shown = record_id if isinstance(record_id, str) and len(record_id) <= 64 else "?"
    return invalid_record(field_name, shown, f"{field_name}: {reason}")


def record_fields(fields: object, *, max_text_length: int = MAX_TEXT_LENGTH,
                  record_id: object = None, stored: bool = False) -> dict[str, Any]:
    """Some fields of a record (an update), each checked; unknown names are refused."""
    if not isinstance(fields, dict):
        raise invalid_record("record", "?", "must be an object")
    out = {}
    for name, value in fields.items():
        check = _FIELD_CHECKS.get(name) if isinstance(name, str) else None
        if check is None:
            raise invalid_record(str(name)[:64], "?", f"unknown field {_short(name)}")
        try:
            out[name] = check(value, max_text_length, stored)
        except OmoideError as e:
            raise _bad_record(e, name, record_id if record_id is not None
                              else fields.get("id")) from None
    return out


_known_character_ids: set[str] = set()  # ids already checked: a restore repeats one id


def _time(value: object) -> bool:
    return (type(value) is float or type(value) is int) and 0 <= value <= MAX_TIME


# every key ``record`` puts in ``full`` before ``type`` (the defaults and the three required
# fields): with ``type``, exactly the field table's keys
_ALWAYS_PRESENT = frozenset(RECORD_DEFAULTS) | {"id", "character_id", "text"}
assert _ALWAYS_PRESENT | {"type"} == _FIELD_CHECKS.keys()
_KINDS = frozenset(KINDS)
_TYPES = frozenset(KIND_TYPES.values())


def _plain_fields(full: dict[str, Any], limit: int, stored: bool) -> dict[str, Any] | None:
    """``record_fields(full)`` for the common row, checked in one straight line with the
    same rules (every stored row passes here at each load, every imported one at import).
    ``full`` is ``record``'s own copy: on success it is the answer, its numbers made floats
    in place (no second copy of the record). None sends anything unusual to
    ``record_fields``, which names the bad field; ``full`` is untouched until every check
    passed."""
    if len(full) != len(_FIELD_CHECKS) or "type" not in full:  # an unknown field
        return None
    rid = full["id"]
    if type(rid) is not str or len(rid) > MAX_MEMORY_ID or not _MEMORY_ID.fullmatch(rid):
        return None
    cid = full["character_id"]
    if type(cid) is not str:
        return None
    if cid not in _known_character_ids:
        try:
            character_id(cid)
        except OmoideError:
            return None
        if len(_known_character_ids) < 4096:
            _known_character_ids.add(cid)
    txt = full["text"]
    if type(txt) is not str or len(txt) > limit or not txt.strip():
        return None
    if not stored and not txt.isascii() and (_SURROGATE.search(txt) is not None
                                             or _INVISIBLE.fullmatch(txt)):
        return None
    kind_, type_ = full["kind"], full["type"]
    if type(kind_) is not str or kind_ not in _KINDS or type(type_) is not str \
            or type_ not in _TYPES:
        return None
    key_ = full["key"]
    if key_ is not None and (type(key_) is not str or not key_.strip() or len(key_) > MAX_KEY
                             or not (stored or key_.isascii() or not _SURROGATE.search(key_))):
        return None
    imp, created, updated = full["importance"], full["created_at"], full["updated_at"]
    recalled, trashed = full["last_recalled_at"], full["trashed_at"]
    if not ((type(imp) is float or type(imp) is int) and 0 <= imp <= 1
            and (type(created) is float or type(created) is int) and 0 <= created <= MAX_TIME
            and (type(updated) is float or type(updated) is int) and 0 <= updated <= MAX_TIME):
        return None
    if (recalled is not None and not _time(recalled)) or (trashed is not None
                                                           and not _time(trashed)):
        return None
    count_, model, meta_ = full["recall_count"], full["model"], full["meta"]
    if type(count_) is not int or not 0 <= count_ <= MAX_COUNT:
        return None
    if type(model) is not str or len(model) > MAX_STAMP or _stamp_dimension(model) == 0:
        return None
    if type(meta_) is not dict or meta_:
        return None
    ctx = full["context"]
    if ctx is not None and (type(ctx) is not str or len(ctx) > limit
                            or not (stored or ctx.isascii() or not _SURROGATE.search(ctx))):
        return None
    conv, turn_ = full["conversation"], full["turn"]
    if conv is not None and (type(conv) is not str or not conv.strip()
                             or len(conv) > MAX_CONVERSATION
                             or not (stored or conv.isascii() or not _SURROGATE.search(conv))):
        return None
    if turn_ is not None and (type(turn_) is not int or not 0 <= turn_ <= MAX_TURN):
        return None
    vec = full["vector"]
    if vec is not None:
        try:
            vec = vector(vec, stored=stored)
        except OmoideError:
            return None
        full["vector"] = vec
    # every check passed: the conversions record_fields makes, in place (a fresh meta:
    # never the caller's nor RECORD_DEFAULTS' dict)
    full["meta"] = {}
    if type(imp) is int:
        full["importance"] = float(imp)
    if type(created) is int:
        full["created_at"] = float(created)
    if type(updated) is int:
        full["updated_at"] = float(updated)
    if type(recalled) is int:
        full["last_recalled_at"] = float(recalled)
    if type(trashed) is int:
        full["trashed_at"] = float(trashed)
    if ctx is not None and not ctx.strip():
        full["context"] = None
    return full


def record(data: object, *, max_text_length: int = MAX_TEXT_LENGTH,
           dimension: int | None = None, require_vector: bool = False,
           stored: bool = False, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """A complete record: defaults filled in, every field checked, ``type`` agreeing with
    ``kind``, a vector as long as its stamp's dimension (and ``dimension``, when given).
    ``stored``: the vector was decoded from float32 storage (see ``vector``). ``given``:
    fields that override ``data``'s (``data | given`` without a copy of its own: an import
    adds the character, the stamp and the vector to every row).
    Raises INVALID_RECORD with ``field`` and ``memory_id``."""
    if not isinstance(data, dict):
        raise invalid_record("record", "?", "must be an object")
    # one new dict (never data | given, then the defaults' copy); the defaults hold no id,
    # character_id, text or type, so ``full`` says whether the caller gave them
    full = {**RECORD_DEFAULTS, **data, **given} if given else RECORD_DEFAULTS | data
    if "id" not in full or "character_id" not in full or "text" not in full:
        for name in ("id", "character_id", "text"):
            if name not in full:
                raise invalid_record(name, "?", f"{name}: missing")
    if "type" not in full and isinstance(full.get("kind"), str) and full["kind"] in KIND_TYPES:
        full["type"] = KIND_TYPES[full["kind"]]
    out = _plain_fields(full, max_text_length, stored)
    if out is None:
        out = record_fields(full, max_text_length=max_text_length, record_id=full.get("id"),
                            stored=stored)
    rid = out["id"]
    if out["turn"] is not None and out["conversation"] is None:
        raise invalid_record("turn", rid, "turn: only with a conversation")
    if out["type"] != KIND_TYPES[out["kind"]]:
        raise invalid_record("type", rid,
                             f"type: {out['type']!r} does not match kind {out['kind']!r}")
    vec = out["vector"]
    if vec is None:
        if require_vector:
            raise invalid_record("vector", rid, "vector: missing")
        return out
    stamped = stamp_dimension(out["model"])
    if stamped is None:
        raise invalid_record("model", rid,
                             "model: a vector needs the stamp of the model that made it")
    for expected in (stamped, dimension):
        if expected is not None and len(vec) != expected:
            raise invalid_record("vector", rid,
                                 f"vector: has {len(vec)} numbers, {expected} expected")
    return out
