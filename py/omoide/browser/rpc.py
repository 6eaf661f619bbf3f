"""The engine worker's entry point: one ``dispatch`` call per page request.

Requests and replies are JSON text, so nothing but strings crosses the JS/Python boundary
(no proxies to leak). Handlers are plain Python functions registered by name; the memory
engine's verbs register themselves here as they come.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import unicodedata
from collections.abc import Callable
from typing import Any

from .. import __version__
from .._compat import IN_PYODIDE, platform_name
from ..engine import validate
from ..errors import OmoideError
from . import phases

Handler = Callable[..., Any]
HANDLERS: dict[str, Handler] = {}
# Whether a call left something to commit (the session's listeners); the reply says so in
# ``commit``, and the worker skips its ``flush`` call when nothing is (most recalls).
COMMIT_CHECKS: list[Callable[[], bool]] = []
# The JSON text of the call being dispatched (``payload_holds_no_lone_surrogate``).
_payload = ""


def handler(name: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[name] = fn
        return fn

    return register


@handler("diagnostics")
def diagnostics() -> dict[str, Any]:
    """What runs the engine: shown on the maintenance tab and used by the smoke tests."""
    return {
        "omoide": __version__,
        "platform": sys.platform,
        "runtime": platform_name(),
        "python": sys.version.split()[0],
        "in_pyodide": IN_PYODIDE,
    }


@handler("normalize")
def normalize(text: str) -> dict[str, Any]:
    """NFKC + case folding, the first step of Omoide's analyzer, computed in Python."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return {"text": folded, "length": len(folded)}


def payload_holds_no_lone_surrogate() -> bool:
    """Whether the current call's parameters surely hold no lone surrogate, read off their
    JSON text (an import then skips its walk of every record for one)."""
    return validate.json_text_holds_no_lone_surrogate(_payload)


def error_reply(err: OmoideError) -> dict[str, Any]:
    return {"ok": False, "error": err.to_dict()}


def dispatch(method: str, payload: str) -> str:
    """Run handler ``method`` with the JSON object ``payload`` as keyword arguments.

    The reply also says whether the call left changes to commit (``commit``, see
    ``COMMIT_CHECKS``) and carries ``phases``: ms spent in the verb, its JSON reply and
    whatever the verb marked on the way (``phases.phase``, e.g. the query embedding)."""
    global _payload
    phases.reset()
    started = time.perf_counter()
    outer, _payload = _payload, payload or ""  # a call run while another waits on JS
    try:
        fn = HANDLERS.get(method)
        if fn is None:
            raise OmoideError.of("INVALID_ARGUMENT", name="method", reason=f"unknown {method!r}")
        params = json.loads(payload or "{}")
        if not isinstance(params, dict):
            raise OmoideError.of("INVALID_ARGUMENT", name="params", reason="not an object")
        reply: dict[str, Any] = {"ok": True, "result": fn(**params)}
    except OmoideError as err:
        reply = error_reply(err)
    except (TypeError, ValueError) as err:
        reply = error_reply(OmoideError.of("INVALID_ARGUMENT", name="params", reason=str(err)))
    except Exception as err:  # noqa: BLE001 - the page must get an answer, never a hang
        traceback.print_exc()
        reply = {"ok": False, "error": {"code": "INTERNAL", "message": repr(err), "fields": {}}}
    finally:
        _payload = outer
    reply["commit"] = not COMMIT_CHECKS or any(check() for check in COMMIT_CHECKS)
    phases.add("verb", (time.perf_counter() - started) * 1000)
    with phases.phase("json"):
        text = json.dumps(reply, ensure_ascii=False)
    # spliced in after the reply's own encoding, so that the encoding is timed too
    return f'{text[:-1]}, "phases": {json.dumps(phases.taken())}}}'
