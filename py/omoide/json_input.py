"""``loads``: ``json.loads`` for text that comes from outside (files, request bodies, cards).

Python's decoder recurses once per nested array or object and raises ``RecursionError``
past the interpreter's limit (about a thousand levels: a 2 KB file). That is not a
``JSONDecodeError``, so every caller's "not JSON" branch missed it and the CLI and the
reference server answered with a traceback. Here it is a ``JSONDecodeError`` like any
other malformed text."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes, **options: Any) -> Any:
    try:
        return json.loads(text, **options)
    except RecursionError:
        doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply", doc, 0) from None
