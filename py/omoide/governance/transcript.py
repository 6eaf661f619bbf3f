"""A conversation pasted as one text: "user: ..." / "assistant: ..." lines.

The one reader of that form (the CLI's text files, ``ingest`` given one text by MCP or the
API): a line that names no role continues the message before it; a line ends at "\\n"
only (U+2028 and the like stay inside it). The assistant's lines are the character's, never
the user's facts.
"""

from __future__ import annotations

import re

ROLE_LINE = re.compile(r"^\s*(user|assistant|system|tool)\s*[:：]\s?(.*)$", re.IGNORECASE)


def role_lines(text: str) -> list[dict[str, str]] | None:
    """The messages of ``text``, or None when its first line names no role (one message)."""
    messages: list[dict[str, str]] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        match = ROLE_LINE.match(line)
        if match:
            messages.append({"role": match.group(1).lower(), "content": match.group(2).strip()})
        elif messages:
            messages[-1]["content"] += "\n" + line.strip()
        else:
            return None
    return messages or None


def first_line(text: str) -> int:
    """The number of the first line that is not blank (1-based)."""
    return next((n for n, line in enumerate(text.split("\n"), 1) if line.strip()), 1)
