"""``ingest``: extract memories from a conversation file (pattern path; write-time dedup).

The file is either plain text, one message per ``role: text`` line (``user:``,
``assistant:``, ``system:``; a line without a role continues the previous message, blank
lines are ignored), or JSON: a list of ``{"role", "content"}`` objects (or plain strings,
spoken by the user), or an object with such a list under ``"messages"``. Each memory keeps
an index context (the session date, ``--at``, and the turns around its message).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from omoide import json_input
from omoide.cli.context import Context, read_input
from omoide.cli.progress import ProgressEmbedder
from omoide.errors import OmoideError
from omoide.governance.transcript import first_line, role_lines


def add_parsers(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ingest", parents=[common],
                       help="extract memories from a conversation file")
    p.add_argument("character")
    p.add_argument("file", help="conversation (text or JSON); - reads standard input")
    p.add_argument("--dry-run", action="store_true", help="only show what would be stored")
    p.add_argument("--role", action="append", dest="roles",
                   help="roles whose messages are read (default: user; repeatable)")
    p.add_argument("--at", type=session_time, default=None,
                   help="when the conversation took place: an ISO date/time (UTC unless it "
                        "says) or seconds since 1970 (default now); each memory's time and "
                        "the date in its index context")
    p.add_argument("--conversation", default=None,
                   help="id of the conversation the messages continue (a chat app adding "
                        "one message at a time): new memories take the turns after its last "
                        "one; default: the file is a conversation of its own")
    p.set_defaults(handler=ingest)


def session_time(value: str) -> float:
    """``--at``: seconds since 1970, or an ISO 8601 date or date-time (UTC unless it says)."""
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a time (an ISO date such as 2023-05-07, or seconds since 1970)"
        ) from None
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()


def parse_conversation(text: str, path: str) -> list[dict[str, str]]:
    def bad(reason: str) -> OmoideError:
        return OmoideError.of("MALFORMED_CONVERSATION", path=path, reason=reason)

    stripped = text.strip()
    if not stripped:
        raise bad("it is empty")
    if stripped[0] in "[{":
        try:
            data: Any = json_input.loads(stripped)
        except json.JSONDecodeError as e:
            raise bad(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        if isinstance(data, dict):
            data = data.get("messages")
        if not isinstance(data, list):
            raise bad("JSON must be a list of messages (or {\"messages\": [...]})")
        messages = []
        for i, m in enumerate(data):
            if isinstance(m, str):
                m = {"role": "user", "content": m}
            if not isinstance(m, dict) or not isinstance(m.get("content"), str | list):
                raise bad(f"message {i} needs a string 'content'")
            if not isinstance(m.get("role", "user"), str):
                raise bad(f"message {i} has a role that is not a string")
            messages.append(m)
        if not messages:
            raise bad("it holds no messages")
        return messages
    messages = role_lines(text)
    if messages is None:
        raise bad(f"line {first_line(text)} does not start with 'user:' or 'assistant:'")
    return messages


def ingest(ctx: Context) -> int:
    a = ctx.args
    messages = parse_conversation(read_input(a.file), a.file)
    ws = ctx.workspace
    roles = tuple(a.roles or ("user",))
    with ctx.bar("embedding", total=0, unit="text") as bar:
        engine = ws.engine
        plain = engine.embedder
        engine.embedder = ProgressEmbedder(plain, bar, grow=True)
        try:
            report = ws.governor.ingest(a.character, messages, dry_run=a.dry_run, roles=roles,
                                        at=a.at, conversation=a.conversation)
        finally:
            engine.embedder = plain
    if ctx.json:
        ctx.emit(report.to_dict())
        return 0
    verb = "would store" if a.dry_run else "stored"
    ctx.out(f"{len(messages)} messages read; {verb} {report.count('stored')}, merged "
            f"{len(report.merged)}, skipped {len(report.skipped)}"
            + (f", failed {report.count('failed')}" if report.count("failed") else ""))
    if report.conversation is not None:
        ctx.out(f"conversation {report.conversation}")
    for item in report.items:
        what = item.text if item.text is not None else f"message {item.source}"
        turn = f" [turn {item.turn}]" if item.turn is not None else ""
        ctx.out(f"  {item.action:<13} {what}{turn}  ({item.reason})")
    if a.dry_run:
        ctx.out("dry run: nothing was written")
    return 0
