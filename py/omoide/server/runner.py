"""The reference server process: uvicorn (h11) serving ``RestApp`` on a socket bound up front.

h11 frames every message (a malformed, negative or doubled Content-Length is a 400 before the
app runs, and an unread body is skipped by its length, never parsed as the next request).
Connections are asyncio protocols, not threads: a stalled client holds no thread, and one that
has not sent a whole request head within ``header_timeout`` seconds is closed (trickling bytes
does not extend it); a body must arrive within the policy's ``body_timeout``. SQLite work runs
on anyio's bounded worker threads.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from omoide.backends.sqlite import SQLiteBackend
from omoide.errors import OmoideError
from omoide.server.app import RestApp, error_body
from omoide.server.policy import ServerPolicy

DEFAULT_PORT = 8750
HEADER_TIMEOUT = 10.0
KEEP_ALIVE_TIMEOUT = 5.0


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus a deadline for each request head: armed when the connection
    opens and after each response, it closes the connection unless a new request has started."""

    header_timeout = HEADER_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None
    _armed_for: Any = None

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._armed_for = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout, self._expire)

    def _expire(self) -> None:
        self._deadline = None
        if self.cycle is self._armed_for and not self.transport.is_closing():
            self.transport.close()  # no whole request head in time

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        self._arm()  # before super(): a pipelined request starts a new cycle inside it
        super().on_response_complete()

    def send_400_response(self, msg: str) -> None:
        """h11 refused the request itself (a malformed head, a negative, non-numeric or doubled
        Content-Length...): answer with the app's JSON error shape, then close."""
        body = json.dumps(error_body("HTTP_ERROR", "malformed HTTP request (request line, "
                                     "headers or Content-Length)")).encode()
        headers = [(b"content-type", b"application/json; charset=utf-8"),
                   (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise OmoideError.of("SERVER_CONFIG", reason=f"cannot listen on {host}:{port}: "
                             f"{err.strerror or err}") from None
    sock.setblocking(False)
    return sock


class ReferenceServer:
    """Bound and ready on construction; ``serve_forever`` (blocking, e.g. in a thread) serves
    until ``shutdown``; ``server_close`` stops it if needed, drops open connections and closes
    the database. ``app`` may be wrapped (another URL layout) before serving."""

    def __init__(self, db: str | Path, host: str, port: int, policy: ServerPolicy, *,
                 header_timeout: float = HEADER_TIMEOUT) -> None:
        self.backend = SQLiteBackend(db)
        self.backend.initialize()
        try:
            self.socket = bind(host, port)
        except OmoideError:
            self.backend.shutdown()
            raise
        self.policy = policy
        self.app: Any = RestApp(self.backend, policy)
        protocol = type("ReferenceH11Protocol", (DeadlineH11Protocol,),
                        {"header_timeout": header_timeout})
        self._config = uvicorn.Config(
            self.app, http=protocol, ws="none", lifespan="off", log_config=None,
            access_log=False, proxy_headers=False, server_header=False,
            timeout_keep_alive=int(KEEP_ALIVE_TIMEOUT), timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(self._config)
        self._done = threading.Event()
        self._serving = False
        self._closed = False

    @property
    def url(self) -> str:
        host, port = self.socket.getsockname()[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def serve_forever(self) -> None:
        if self._closed or self._serving:
            return
        self._serving = True
        self._config.app = self.app
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._done.set()

    def shutdown(self) -> None:
        self._server.should_exit = True
        if self._serving:
            self._done.wait(timeout=15)

    def server_close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.shutdown()
        self.socket.close()
        self.backend.shutdown()


def serve(db: str | Path, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
          api_key: str | None = None, no_key: bool = False, public: bool = False,
          origins: list[str] | tuple[str, ...] | None = None,
          allow_hosts: list[str] | tuple[str, ...] = (), header_timeout: float = HEADER_TIMEOUT,
          **limits: Any) -> ReferenceServer:
    """A bound-but-not-serving server (call ``serve_forever`` or run it in a thread). Refuses
    (SERVER_CONFIG) to start without a key unless ``no_key``, and off loopback unless
    ``public``; ``limits``: ``max_body``, ``body_timeout`` (see ``ServerPolicy``)."""
    policy = ServerPolicy.build(host, api_key=api_key, no_key=no_key, public=public,
                                origins=origins, allow_hosts=allow_hosts, **limits)
    return ReferenceServer(db, host, port, policy, header_timeout=header_timeout)
