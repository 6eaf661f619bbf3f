"""HTTP for Python in the browser: the transport over the worker's fetch.

``urllib`` has no network in Pyodide, so the engine worker's host function ``http_request``
does the request (CORS mode, with a timeout) and Python waits for it with ``run_sync``.
``fetch_transport`` is the package's ``omoide.transport.Transport`` in the browser: the one
``backends.http.HttpBackend`` and ``governance.llm.ChatClient`` take.
"""

from __future__ import annotations

import json

from ..transport import Reply
from .host import host


def fetch_transport(method: str, url: str, headers: dict[str, str], body: bytes | None,
                    timeout: float) -> Reply:
    """(method, url, headers, body or None, timeout) -> Reply. A timeout raises
    ``TimeoutError``, any other failure (refused connection, CORS, DNS) ``OSError``."""
    from pyodide.ffi import JsException, run_sync

    text = None if body is None else body.decode("utf-8")
    try:
        reply = run_sync(host().http_request(method, url, text, json.dumps(headers), timeout))
    except JsException as err:
        if "TimeoutError" in str(err):
            raise TimeoutError(str(err)) from None
        raise OSError(str(err)) from None
    answer = json.loads(reply)
    return Reply(int(answer["status"]), answer["body"].encode("utf-8"))
