"""The one HTTP transport seam of the package.

Every HTTP client here (``backends.http.HttpBackend``, ``governance.llm.ChatClient``,
``embeddings.remote.RemoteEmbedder``) sends its requests through a ``Transport``:

    (method, url, headers, body or None, timeout seconds) -> Reply(status, body, headers)

Invariants every transport keeps, so that each client maps failures the same way:
- any HTTP status (2xx, 4xx, 5xx) is a ``Reply``, never an exception;
- no answer in time raises ``TimeoutError``; any other network failure (refused, DNS,
  CORS, reset, an answer over ``MAX_REPLY_BYTES``) raises ``OSError`` with a short reason;
- a redirect is never followed (a 3xx is the reply): the key stays with the host it was
  given for.

``urllib_transport`` is the CPython one; the Pyodide worker's is
``omoide.browser.http.fetch_transport`` (urllib has no network there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple


class Reply(NamedTuple):
    status: int
    body: bytes
    headers: Mapping[str, str] = {}  # noqa: RUF012 - read-only default of a NamedTuple


Transport = Callable[[str, str, dict[str, str], bytes | None, float], Reply]

SECRET_MASK = "••••"
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
# An answer longer than this is cut and refused: a hostile or broken server never fills the
# client's memory (a page of the backup listing with vectors is a few MiB).
MAX_REPLY_BYTES = 256 << 20


def _written(char: str) -> str:
    """A pattern for ``char`` as a reply may write it: itself or, when it is not a letter
    or a digit, escaped the way JSON (``\\/``, ``\\u0026``) or HTML (``&amp;``, ``&#38;``)
    writes it."""
    if char.isalnum():
        return re.escape(char)
    code = ord(char)
    forms = [re.escape(char), re.escape("\\" + char), rf"\\u{code:04x}", f"&#0*{code};",
             rf"&#x0*{code:x};", _HTML.get(char, "")]
    return "(?i:" + "|".join(f for f in forms if f) + ")"


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with every copy of ``secret`` masked, also one a server wrote escaped: an
    echo of the request in JSON writes "a/b&c" as "a\\/b\\u0026c" (PHP, Go), an HTML page
    as "a/b&amp;c". Keys are printable ASCII (``keys.checked_key``)."""
    if not secret:
        return text
    if secret.isalnum():
        return text.replace(secret, SECRET_MASK)
    return re.sub("".join(_written(c) for c in secret), SECRET_MASK, text)


def reply_detail(body: bytes, secret: str | None, limit: int) -> str:
    """The start of a refused reply, for an error message. A server that echoes the request
    (its headers) would put the API key there: it is masked in the whole body BEFORE the
    cut, so no prefix of it survives either."""
    return mask_secret(body.decode("utf-8", "replace"), secret).strip()[:limit]


def urllib_transport(method: str, url: str, headers: dict[str, str], body: bytes | None,
                     timeout: float) -> Reply:
    """``timeout`` bounds the whole request: a server that trickles its reply (a byte at a
    time, each within a socket timeout) is cut at the deadline. The request runs on a
    daemon thread, closed when the deadline passes, so the caller never waits longer."""
    import threading

    connection: list[Any] = []
    outcome: list[Any] = []

    def request() -> None:
        try:
            outcome.append(_urllib_request(method, url, headers, body, timeout, connection))
        except BaseException as err:  # noqa: BLE001 - handed to the caller below
            outcome.append(err)

    worker = threading.Thread(target=request, name="omoide-http", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        for reply in connection:
            _shut(reply)
        raise TimeoutError(f"no complete answer within {timeout} s")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _opener() -> Any:
    """urllib without redirects: a 3xx is the answer (an error to every client here). A
    redirect followed sent the key (``Authorization``) to whatever host it named, and turned
    a POST into a GET that "succeeded"."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirect)


def _read(reply: Any) -> bytes:
    data = reply.read(MAX_REPLY_BYTES + 1)
    if len(data) > MAX_REPLY_BYTES:
        raise OSError(f"the answer is larger than {MAX_REPLY_BYTES >> 20} MiB")
    return data


def _shut(reply: Any) -> None:
    """End a reply another thread is reading: its socket is shut down, which ends the
    read at once (``close`` would wait for the read's lock, i.e. for the whole trickle)."""
    import socket

    sock = getattr(getattr(getattr(reply, "fp", None), "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _urllib_request(method: str, url: str, headers: dict[str, str], body: bytes | None,
                    timeout: float, connection: list[Any]) -> Reply:
    # Imported here: http.client + email cost ~0.6 s of a Pyodide boot that never uses them.
    import http.client
    import urllib.error
    import urllib.request

    try:
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        with _opener().open(request, timeout=timeout) as reply:
            connection.append(reply)
            return Reply(reply.status, _read(reply), dict(reply.headers.items()))
    except urllib.error.HTTPError as err:
        return Reply(err.code, _read(err), dict(err.headers.items()) if err.headers else {})
    except urllib.error.URLError as err:
        if isinstance(err.reason, TimeoutError):
            raise TimeoutError(str(err.reason)) from None
        raise OSError(str(err.reason)) from None
    except http.client.HTTPException as err:  # a status line or body that is not HTTP
        raise OSError(f"not an HTTP answer ({type(err).__name__})") from None
    except ValueError:  # a header value or URL http.client refuses: its text holds the value
        raise OSError("the request could not be sent (an invalid URL or header)") from None
