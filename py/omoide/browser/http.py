"""HTTP for Python in the browser: transports over the worker's fetch.

``urllib`` has no network in Pyodide, so the engine worker's host function ``http_request``
does the request (CORS mode, with a timeout) and Python waits for it with ``run_sync``.
``fetch_request_transport`` is the one ``backends.http.HttpBackend`` takes (any method,
optional body); ``fetch_transport`` is the ``governance.llm`` one (POST).
"""

from __future__ import annotations

import json

from .host import host


def fetch_request_transport(method: str, url: str, headers: dict[str, str],
                            body: bytes | None, timeout: float) -> tuple[int, bytes]:
    """``HttpBackend``'s transport: (method, url, headers, body or None, timeout) ->
    (status, body). A timeout raises ``TimeoutError``, any other failure (refused connection,
    CORS, DNS) ``OSError``; ``HttpBackend`` maps them to BACKEND_TIMEOUT / BACKEND_UNREACHABLE."""
    from pyodide.ffi import JsException, run_sync

    text = None if body is None else body.decode("utf-8")
    try:
        reply = run_sync(host().http_request(method, url, text, json.dumps(headers), timeout))
    except JsException as err:
        if "TimeoutError" in str(err):
            raise TimeoutError(str(err)) from None
        raise OSError(str(err)) from None
    answer = json.loads(reply)
    return int(answer["status"]), answer["body"].encode("utf-8")


def fetch_transport(url: str, body: bytes, headers: dict[str, str], timeout: float
                    ) -> tuple[int, bytes]:
    """The ``governance.llm`` transport (a POST): same failures as above, which
    ``ChatClient`` maps to REMOTE_TIMEOUT / LLM_UNREACHABLE."""
    return fetch_request_transport("POST", url, headers, body, timeout)
