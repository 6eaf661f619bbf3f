"""Calls from Python into the engine worker's JavaScript host (registered as ``omoide_host``).

The host functions are async (IndexedDB, the embedding worker). The worker enters Python
with ``callPromising``, so ``run_sync`` can wait for them here (JSPI) while the engine's own
API stays synchronous and identical to CPython's.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable
from typing import Any

from ..errors import OmoideError

HOST_MODULE = "omoide_host"


def host() -> Any:
    import importlib

    return importlib.import_module(HOST_MODULE)


def wait(promise: Any, failed: Callable[[Exception], OmoideError] | None = None) -> Any:
    """Block this Python call until a JS promise settles; JS errors become OmoideErrors:
    ``failed``'s, else a storage error (the host's other calls write or read IndexedDB)."""
    from pyodide.ffi import JsException, run_sync

    try:
        return run_sync(promise)
    except JsException as err:
        raise (failed or from_js_error)(err) from None


def from_js_error(err: Exception) -> OmoideError:
    text = str(err)
    if "QuotaExceeded" in text:
        return OmoideError.of("QUOTA_EXCEEDED", detail=text)
    return OmoideError.of("STORAGE_FAILED", reason=text)


def to_js_floats(values: Any) -> Any:
    """A Float32Array copy of a Python float sequence."""
    from pyodide.ffi import to_js

    rows = values if isinstance(values, array) and values.typecode == "f" else array("f", values)
    return to_js(memoryview(rows))


def to_js_ints(values: Any) -> Any:
    """An Int32Array copy of a Python int sequence."""
    from pyodide.ffi import to_js

    rows = values if isinstance(values, array) and values.typecode == "i" else array("i", values)
    return to_js(memoryview(rows))


def floats_from_js(typed_array: Any) -> array:
    rows = array("f")
    rows.frombytes(typed_array.to_bytes())
    return rows


def call_json(name: str, payload: Any, *extra: Any) -> Any:
    """Call host function ``name`` with a JSON payload; a JSON reply is decoded."""
    reply = wait(getattr(host(), name)(json.dumps(payload, ensure_ascii=False), *extra))
    return json.loads(reply) if isinstance(reply, str) else reply
