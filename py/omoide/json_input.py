"""``loads``: ``json.loads`` for text that comes from outside (files, request bodies, cards).

Python's decoder recurses once per nested array or object and raises ``RecursionError``
past the interpreter's limit (about a thousand levels: a 2 KB file). That is not a
``JSONDecodeError``, so every caller's "not JSON" branch missed it and the CLI and the
reference server answered with a traceback. Here it is a ``JSONDecodeError`` like any
other malformed text. So is an integer of more digits than Python converts (4,300 by
default: its ``ValueError`` too went past every "not JSON" branch)."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes, **options: Any) -> Any:
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", _doc(text), 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as err:  # int() past sys.get_int_max_str_digits()
        raise json.JSONDecodeError(f"a number too long ({err})"[:120], _doc(text), 0) from None


def _doc(text: str | bytes) -> str:
    return text if isinstance(text, str) else text.decode("utf-8", "replace")
