"""The one HTTP transport seam of the package.

Every HTTP client here (``backends.http.HttpBackend``, ``governance.llm.ChatClient``,
``embeddings.remote.RemoteEmbedder``) sends its requests through a ``Transport``:

    (method, url, headers, body or None, timeout seconds) -> Reply(status, body, headers)

Invariants every transport keeps, so that each client maps failures the same way:
- any HTTP status (2xx, 4xx, 5xx) is a ``Reply``, never an exception;
- no answer in time raises ``TimeoutError``; any other network failure (refused, DNS,
  CORS, reset) raises ``OSError`` with a short reason.

``urllib_transport`` is the CPython one; the Pyodide worker's is
``omoide.browser.http.fetch_transport`` (urllib has no network there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple


class Reply(NamedTuple):
    status: int
    body: bytes
    headers: Mapping[str, str] = {}  # noqa: RUF012 - read-only default of a NamedTuple


Transport = Callable[[str, str, dict[str, str], bytes | None, float], Reply]

SECRET_MASK = "••••"


def reply_detail(body: bytes, secret: str | None, limit: int) -> str:
    """The start of a refused reply, for an error message. A server that echoes the request
    (its headers) would put the API key there: it is masked in the whole body BEFORE the
    cut, so no prefix of it survives either."""
    text = body.decode("utf-8", "replace")
    if secret:
        text = text.replace(secret, SECRET_MASK)
    return text.strip()[:limit]


def urllib_transport(method: str, url: str, headers: dict[str, str], body: bytes | None,
                     timeout: float) -> Reply:
    # Imported here: http.client + email cost ~0.6 s of a Pyodide boot that never uses them.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return Reply(reply.status, reply.read(), dict(reply.headers.items()))
    except urllib.error.HTTPError as err:
        return Reply(err.code, err.read(), dict(err.headers.items()) if err.headers else {})
    except urllib.error.URLError as err:
        if isinstance(err.reason, TimeoutError):
            raise TimeoutError(str(err.reason)) from None
        raise OSError(str(err.reason)) from None
