"""HTTP for Python in the browser: a ``governance.llm`` transport over the worker's fetch.

``urllib`` has no network in Pyodide, so the engine worker's host function ``http_post``
does the request (CORS mode, with a timeout) and Python waits for it with ``run_sync``.
Failures are raised as the exceptions ``ChatClient`` already maps to clear errors:
``TimeoutError`` (REMOTE_TIMEOUT) and ``OSError`` (LLM_UNREACHABLE).
"""

from __future__ import annotations

import json

from .host import host


def fetch_transport(url: str, body: bytes, headers: dict[str, str], timeout: float
                    ) -> tuple[int, bytes]:
    from pyodide.ffi import JsException, run_sync

    try:
        reply = run_sync(host().http_post(url, body.decode("utf-8"), json.dumps(headers),
                                          timeout))
    except JsException as err:
        if "TimeoutError" in str(err):
            raise TimeoutError(str(err)) from None
        raise OSError(str(err)) from None
    answer = json.loads(reply)
    return int(answer["status"]), answer["body"].encode("utf-8")
