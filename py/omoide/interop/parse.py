"""Any supported SillyTavern / RisuAI file -> an ``ImportPlan`` (nothing is written here).

Formats, from the projects' public documentation:
- character card V2 (``{"spec": "chara_card_v2", "data": {...}}``), V3 (``chara_card_v3``)
  and V1 (the fields at the top level); as JSON, or inside a PNG as a tEXt chunk ``chara``
  (V2) or ``ccv3`` (V3) holding the base64 of that JSON. Its ``description``,
  ``personality`` and ``scenario`` become facts; its ``character_book`` entries too.
- SillyTavern chat ``.jsonl``: line 1 is metadata (``user_name``, ``character_name``,
  ``create_date``), then one message per line (``name``, ``is_user``, ``is_system``,
  ``send_date``, ``mes``). RisuAI chat export: ``{"type": "risuChat", "data": {"name",
  "message": [{"role": "user"|"char", "data", "time"}]}}``.
- SillyTavern World Info: ``{"entries": {"0": {"key": [...], "keysecondary": [...],
  "comment", "content", "constant", "disable", ...}}}``; a card's ``character_book``
  (``"entries": [{"keys", "secondary_keys", "content", "comment", "enabled"}]``); RisuAI
  lorebook export ``{"type": "risu", "data": [{"key": "a, b", "secondkey", "comment",
  "content"}]}``. An entry switched off (``disable: true``, ``enabled: false``) is left
  out and named in ``ImportPlan.disabled``: the app never puts it in a prompt.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from omoide import json_input
from omoide.engine import validate
from omoide.errors import OmoideError
from omoide.governance import meta_fields
from omoide.governance.extract import MAX_MESSAGE_CHARS
from omoide.interop import png

CARD_FIELDS = ("description", "personality", "scenario")
CHUNK_CHARS = 1_000  # card fields are split at paragraphs into facts of about this size
MAX_FILE_BYTES = 32 * 1024 * 1024


@dataclass
class Fact:
    """A memory to store as it is (no extraction): a card field or a lorebook entry."""

    text: str
    key: str | None
    meta: dict[str, Any]
    kind: str = "fact"
    importance: float = 0.5
    at: float | None = None
    where: str = ""  # for error messages: "entry 3", "description"
    # an entry Omoide exported: the memory's index context and place in a conversation
    context: str | None = None
    conversation: str | None = None
    turn: int | None = None


@dataclass
class ChatMessage:
    role: str  # "user" | "assistant"
    text: str
    at: float | None


@dataclass
class ImportPlan:
    # card-v1 | card-v2 | card-v3 | st-chat | risu-chat | st-worldinfo | character-book |
    # risu-lorebook
    format: str
    name: str | None = None  # the character's name, when the file says it
    facts: list[Fact] = field(default_factory=list)
    messages: list[ChatMessage] = field(default_factory=list)
    undated: int = 0  # chat messages whose date was missing or unreadable
    path: str = ""  # the file it came from, for messages
    repaired: int = 0  # lone surrogates (JSON escapes) replaced by U+FFFD
    # lorebook entries the user switched off (``disable`` / ``enabled: false``): left out
    disabled: list[str] = field(default_factory=list)
    # those entries as facts, to find the live memories earlier versions made of them
    off: list[Fact] = field(default_factory=list)

    @property
    def character(self) -> str | None:
        """The id a new character gets (the web app's rule: NFKC, lower case, dashes)."""
        return slug(self.name) if self.name else None


def slug(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).lower()
    return re.sub(r"[\W_]+", "-", text).strip("-")[:40] or "character"


class Bad:
    """Raises ``MALFORMED_CHAT_DATA`` for one file; counts what ``loads`` repaired in it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.repaired = 0

    def __call__(self, what: str, reason: str) -> OmoideError:
        return OmoideError.of("MALFORMED_CHAT_DATA", path=self.path, what=what, reason=reason)

    def loads(self, text: str) -> Any:
        """JSON with every lone surrogate (a ``\\ud800`` escape: not text UTF-8 can store)
        replaced by U+FFFD, as an export's import does: the chat is the user's, refusing it
        over one broken character helps nobody, and such a message crashed the embedder
        after the file's earlier days were written."""
        value, repaired = validate.without_lone_surrogates(json_input.loads(text))
        self.repaired += repaired
        return value


def parse_file(data: bytes, path: str = "the file") -> ImportPlan:
    bad = Bad(path)
    plan = _parse(data, bad)
    plan.path, plan.repaired = path, bad.repaired
    return plan


def _parse(data: bytes, bad: Bad) -> ImportPlan:
    path = bad.path
    if not isinstance(data, bytes | bytearray) or not data:
        raise bad("file", "it is empty")
    if len(data) > MAX_FILE_BYTES:
        raise bad("file", f"it is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    if png.is_png(data):
        return card_from_png(bytes(data), bad)
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise bad("file", f"not UTF-8 text and not a PNG card (byte {e.start})") from None
    stripped = text.strip()
    if not stripped:
        raise bad("file", "it is empty")
    # a line ends at "\n" only: JSON.stringify writes U+2028, U+0085 and the like raw
    lines = [(n, line) for n, line in enumerate(stripped.split("\n"), 1) if line.strip()]
    if path.endswith(".jsonl") or (len(lines) > 1
                                   and all(_json_object_line(x) for _, x in lines[:2])):
        return st_chat(lines, bad)
    try:
        value = bad.loads(stripped)
    except json.JSONDecodeError as e:
        raise bad("file", f"not JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    return from_json(value, bad)


def _json_object_line(line: str) -> bool:
    try:
        return isinstance(json_input.loads(line), dict)
    except json.JSONDecodeError:
        return False


def from_json(value: Any, bad: Bad) -> ImportPlan:
    if not isinstance(value, dict):
        raise bad("file", "the JSON is not an object")
    spec = value.get("spec")
    if spec in ("chara_card_v2", "chara_card_v3"):
        if not isinstance(value.get("data"), dict):
            raise bad("character card", "'data' must be an object")
        return card(value["data"], "card-v3" if spec == "chara_card_v3" else "card-v2", bad)
    if spec is not None:
        raise bad("character card", f"unknown spec {spec!r}")
    if value.get("type") == "risuChat":
        return risu_chat(value.get("data"), bad)
    if value.get("type") == "risu":
        return lorebook(value.get("data"), "risu-lorebook", bad)
    if "entries" in value:
        kind = "character-book" if isinstance(value["entries"], list) else "st-worldinfo"
        return lorebook(value["entries"], kind, bad)
    if isinstance(value.get("name"), str) and any(f in value for f in (*CARD_FIELDS, "first_mes")):
        return card(value, "card-v1", bad)
    raise bad("file", "not a character card, chat or lorebook of SillyTavern or RisuAI")


# -- character cards --------------------------------------------------------------------------


def card_from_png(data: bytes, bad: Bad) -> ImportPlan:
    try:
        chunks = png.text_chunks(data)
    except ValueError as e:
        raise bad("PNG card", str(e)) from None
    raw = chunks.get("ccv3") or chunks.get("chara")
    if raw is None:
        raise bad("PNG card", "it has no 'chara' or 'ccv3' text chunk (a plain image?)")
    try:
        value = bad.loads(base64.b64decode(raw, validate=True).decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad("PNG card", f"the card chunk is not base64 JSON ({e})") from None
    return from_json(value, bad)


def card(data: dict[str, Any], fmt: str, bad: Bad) -> ImportPlan:
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise bad("character card", "it has no 'name'")
    name = name.strip()
    plan = ImportPlan(fmt, name=name)
    for name_of_field in CARD_FIELDS:
        value = data.get(name_of_field, "")
        if not isinstance(value, str):
            raise bad("character card", f"'{name_of_field}' must be text")
        text = with_name(value, name).strip()
        for n, part in enumerate(split_paragraphs(text), 1):
            plan.facts.append(Fact(part, f"card:{name_of_field}" + (f"#{n}" if n > 1 else ""),
                                   {"source": fmt, "field": name_of_field},
                                   importance=0.7, where=name_of_field))
    book = data.get("character_book")
    if book is not None:
        if not isinstance(book, dict) or not isinstance(book.get("entries"), list):
            raise bad("character book", "'character_book.entries' must be a list")
        embedded = lorebook(book["entries"], "character-book", bad, name=name)
        plan.facts += embedded.facts
        plan.disabled += embedded.disabled
        plan.off += embedded.off
    return plan


def with_name(text: str, name: str) -> str:
    """A card's text with ``{{char}}`` (``<BOT>``) as the character's name: the card names
    it (as it is: a backslash in it is no template). ``{{user}}`` stays: the user's name
    is not known here."""
    return re.sub(r"\{\{char\}\}|<BOT>", lambda _: name, text, flags=re.IGNORECASE)


def split_paragraphs(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """Paragraphs joined up to ``limit`` characters; a longer paragraph is cut at sentences."""
    parts: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text):
        pieces = [paragraph] if len(paragraph) <= limit else re.split(r"(?<=[.!?。！？])\s*",
                                                                       paragraph)
        for piece in pieces:
            piece = piece.strip()
            while len(piece) > limit:  # one sentence longer than the limit
                parts.append(piece[:limit])
                piece = piece[limit:]
            if not piece:
                continue
            if current and len(current) + 2 + len(piece) > limit:
                parts.append(current)
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current:
        parts.append(current)
    return parts


# -- lorebooks --------------------------------------------------------------------------------


def _keys(value: Any, where: str, bad: Bad) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):  # RisuAI: "a, b"
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise bad("lorebook", f"{where}: keys must be a list of text")
    return [k.strip() for k in value if k.strip()]


def lorebook(entries: Any, fmt: str, bad: Bad, *, name: str | None = None) -> ImportPlan:
    """``name``: the character of the card holding the lorebook; its ``{{char}}`` in the
    entries' text becomes that name, as in the card's own fields."""
    if isinstance(entries, dict):
        items = list(entries.items())
    elif isinstance(entries, list):
        items = [(str(i), e) for i, e in enumerate(entries)]
    else:
        raise bad("lorebook", "'entries' must be an object or a list")
    plan = ImportPlan(fmt)
    for label, entry in items:
        where = f"entry {label}"
        if not isinstance(entry, dict):
            raise bad("lorebook", f"{where} is not an object")
        content = entry.get("content")
        if not isinstance(content, str):
            raise bad("lorebook", f"{where} has no text 'content'")
        if not content.strip():
            continue  # an empty entry says nothing; ST writes them for new blank entries
        keys = _keys(entry.get("key", entry.get("keys")), where, bad)
        secondary = _keys(entry.get("keysecondary", entry.get("secondary_keys",
                                                              entry.get("secondkey"))), where, bad)
        comment = entry.get("comment", entry.get("name", ""))
        if not isinstance(comment, str):
            raise bad("lorebook", f"{where}: 'comment' must be text")
        yes = {name: flag(entry, name, "lorebook", where, bad)
               for name in ("disable", "enabled", "constant", "alwaysActive")}
        disabled = yes["disable"] or entry.get("enabled") is False
        constant = yes["constant"] or yes["alwaysActive"]
        meta: dict[str, Any] = {"source": fmt, "keys": keys}
        if secondary:
            meta["secondary_keys"] = secondary
        if comment:
            meta["comment"] = comment
        if constant:
            meta["constant"] = True
        if disabled:
            meta["disabled"] = True
        saved = (entry.get("extensions") or {}).get("omoide") if isinstance(
            entry.get("extensions"), dict) else None
        text = (content if name is None else with_name(content, name)).strip()
        fact = Fact(text, lore_key(keys, comment), meta, where=where)
        if disabled and not (isinstance(saved, dict) and isinstance(saved.get("meta"), dict)
                             and saved["meta"].get("disabled")):
            # switched off in SillyTavern / RisuAI: never in its prompts, so not a memory
            # to recall either; the report names it. (An entry Omoide exported from a
            # memory whose meta says "disabled" comes back as that memory was.)
            plan.disabled.append(where)
            plan.off.append(fact)
            continue
        if isinstance(saved, dict):  # written by export_world_info: the memory as it was
            fact.kind = saved.get("kind", fact.kind)
            fact.importance = saved.get("importance", fact.importance)
            fact.at = saved.get("created_at")
            fact.key = saved.get("key", fact.key)
            fact.context = saved.get("context")
            fact.conversation = saved.get("conversation")
            fact.turn = saved.get("turn")
            if isinstance(saved.get("meta"), dict):
                fact.meta = saved["meta"] | edited_entry_fields(saved, meta, fact.text)
                if not disabled and fact.meta.get("disabled"):  # switched on in the app
                    fact.meta = {k: v for k, v in fact.meta.items() if k != "disabled"}
        plan.facts.append(fact)
    return plan


def edited_entry_fields(saved: dict[str, Any], derived: dict[str, Any],
                        text: str) -> dict[str, Any]:
    """What the entry says beyond the memory it was exported from: the entry fields
    (``derived``: keys, comment, flags) that differ from what the export wrote for the
    saved memory, i.e. the user's edits in SillyTavern. A round trip adds nothing to
    ``meta``."""
    from omoide.interop.worldinfo import comment_for, keys_for

    meta, kind, key = saved["meta"], saved.get("kind", "fact"), saved.get("key")
    written = {"keys": keys_for(meta, key if isinstance(key, str) else None, text),
               "comment": comment_for(meta, str(kind), text),
               "secondary_keys": meta_fields.entries(meta, "secondary_keys"),
               "constant": meta.get("tier") == "hot" or bool(meta.get("constant")),
               "disabled": bool(meta.get("disabled"))}
    return {name: value for name, value in derived.items()
            if name != "source" and (name in meta or value != written.get(name))}


def lore_key(keys: list[str], comment: str) -> str | None:
    """``lore:<keys>``: entries triggered by the same words are about the same subject."""
    words = sorted({unicodedata.normalize("NFKC", k).casefold() for k in keys}) or (
        [unicodedata.normalize("NFKC", comment).casefold()] if comment.strip() else [])
    subject = re.sub(r"\s+", "_", ",".join(words)).strip("_")[:80]
    return f"lore:{subject}" if subject else None


# -- chats ------------------------------------------------------------------------------------

MONTH_FORMATS = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%b %d, %Y %I:%M%p",
                 "%B %d, %Y %H:%M", "%B %d, %Y")


def parse_date(value: Any) -> float | None:
    """Seconds since the epoch from what SillyTavern and RisuAI write: epoch milliseconds,
    ``"May 1, 2024 12:30pm"`` (ST's message dates), ``"2024-05-01@12h30m15s"`` (ST's file
    dates) or ISO 8601. Times without a zone are read as UTC. None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return in_range(value / 1000 if value > 1e11 else float(value))
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})@(\d{1,2})h(\d{1,2})m(\d{1,2})s(?:\s*\d+ms)?", text)
    candidates: list[datetime] = []
    if match:
        day, h, m, s = match.groups()
        text = f"{day}T{int(h):02d}:{int(m):02d}:{int(s):02d}"
    try:
        candidates.append(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        for fmt in MONTH_FORMATS:
            try:
                candidates.append(datetime.strptime(text.replace("  ", " "), fmt))
                break
            except ValueError:
                continue
    if not candidates:
        return None
    when = candidates[0]
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return in_range(when.timestamp())


def in_range(seconds: float) -> float | None:
    """``seconds`` when a memory can be dated so (after 1970, before 2286), else None (an
    undated message): a text date of 1900 failed the import half way, and one of year 9999
    in a zone east of UTC crashed it."""
    return seconds if 0 < seconds < 1e10 else None


def within_limit(text: str, what: str, where: str, bad: Bad) -> None:
    """A message longer than ingest takes is refused here, naming it: ingest refused it
    after the chat's earlier days were written."""
    if len(text) > MAX_MESSAGE_CHARS:
        raise bad(what, f"{where} is {len(text)} characters, the limit is {MAX_MESSAGE_CHARS}")


def flag(value: dict[str, Any], name: str, what: str, where: str, bad: Bad) -> bool:
    """A yes/no field of a chat message (``is_user``, ``is_system``) or a lorebook entry
    (``disable``, ``constant``, ``enabled``, ``alwaysActive``): true, false or absent (null,
    read as false). Any other value is refused, naming ``where`` and the field: ``"false"``
    (a converter's) read as true made the character's lines the user's facts, dropped what
    the user said, or switched a lorebook entry off or to always on."""
    got = value.get(name)
    if got is not None and not isinstance(got, bool):
        raise bad(what, f"{where}: '{name}' must be true or false, not "
                        f"{str(json.dumps(got))[:40]}")
    return bool(got)


def st_chat(lines: list[tuple[int, str]], bad: Bad) -> ImportPlan:
    """``lines``: (line number, text) of the file's non-blank lines."""
    try:
        head = bad.loads(lines[0][1])
    except json.JSONDecodeError as e:
        raise bad("SillyTavern chat", f"line 1 is not JSON ({e.msg})") from None
    if not isinstance(head, dict) or "mes" in head:
        raise bad("SillyTavern chat", "line 1 must be the chat's metadata "
                  "(user_name, character_name, create_date)")
    name = head.get("character_name")
    plan = ImportPlan("st-chat", name=name.strip() if isinstance(name, str) and name.strip()
                      else None)
    fallback = parse_date(head.get("create_date"))
    for n, line in lines[1:]:
        try:
            m = bad.loads(line)
        except json.JSONDecodeError as e:
            raise bad("SillyTavern chat", f"line {n} is not JSON ({e.msg})") from None
        if not isinstance(m, dict) or not isinstance(m.get("mes"), str):
            raise bad("SillyTavern chat", f"line {n} has no text 'mes'")
        is_user, is_system = (flag(m, name, "SillyTavern chat", f"line {n}", bad)
                             for name in ("is_user", "is_system"))
        if is_system or not m["mes"].strip():
            continue  # narrator / hidden system lines are not what anyone said
        within_limit(m["mes"], "SillyTavern chat", f"line {n}", bad)
        at = parse_date(m.get("send_date"))
        plan.undated += at is None
        fallback = at if at is not None else fallback
        plan.messages.append(ChatMessage("user" if is_user else "assistant",
                                         m["mes"], fallback))
    if not plan.messages:
        raise bad("SillyTavern chat", "it holds no messages")
    return plan


def risu_chat(data: Any, bad: Bad) -> ImportPlan:
    if not isinstance(data, dict) or not isinstance(data.get("message"), list):
        raise bad("RisuAI chat", "'data.message' must be a list")
    plan = ImportPlan("risu-chat")  # data.name is the chat's title, not the character
    last: float | None = None
    for n, m in enumerate(data["message"]):
        if not isinstance(m, dict) or not isinstance(m.get("data"), str):
            raise bad("RisuAI chat", f"message {n} has no text 'data'")
        if m.get("role") not in ("user", "char"):
            raise bad("RisuAI chat", f"message {n} has role {m.get('role')!r}, not user/char")
        if not m["data"].strip():
            continue
        within_limit(m["data"], "RisuAI chat", f"message {n}", bad)
        at = parse_date(m.get("time"))
        plan.undated += at is None
        last = at if at is not None else last
        plan.messages.append(ChatMessage("user" if m["role"] == "user" else "assistant",
                                         m["data"], last))
    if not plan.messages:
        raise bad("RisuAI chat", "it holds no messages")
    return plan
