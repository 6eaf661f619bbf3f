"""The reference server: the ``HttpBackend`` REST contract over a ``SQLiteBackend`` file.

Standard library only (``http.server``), one thread per request; SQLite in WAL mode serialises
writes. Meant for one person's machine: binds 127.0.0.1 unless told otherwise, and with a key
every request must carry ``Authorization: Bearer <key>``. CORS is answered so the browser app
(another origin) can use it as a backup/fallback backend.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import re
import socket
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from omoide.backends.sqlite import SQLiteBackend
from omoide.errors import OmoideError

MAX_BODY = 4 * 1024 * 1024
ERROR_STATUS = {"BACKEND_CONFLICT": 409, "INVALID_RECORD": 400, "INVALID_ARGUMENT": 400}
MEMORY_PATH = re.compile(r"^/memories/([^/]+)$")


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def flag(value: str | None, default: bool | None) -> bool | None:
    if value is None:
        return default
    return {"1": True, "true": True, "0": False, "false": False, "any": None}.get(value.lower(),
                                                                                   default)


class ReferenceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], backend: SQLiteBackend, *,
                 api_key: str | None = None, cors_origin: str = "*") -> None:
        self.backend = backend
        self.api_key = api_key
        self.cors_origin = cors_origin
        self._connections: list[socket.socket] = []
        self._connections_lock = threading.Lock()
        backend.initialize()
        super().__init__(address, Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = super().get_request()
        with self._connections_lock:
            self._connections = [c for c in self._connections if c.fileno() != -1]
            self._connections.append(conn)
        return conn, address

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def server_close(self) -> None:
        """Stop listening AND drop kept-alive connections (their handler threads would go
        on answering otherwise), then close the database."""
        super().server_close()
        with self._connections_lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            self._connections.clear()
        self.backend.shutdown()


class Handler(BaseHTTPRequestHandler):
    server: ReferenceServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet by default; the CLI prints one line per start

    # -- answers -----------------------------------------------------------------------------

    def cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", self.server.cors_origin)
        self.send_header("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
        self.send_header("Access-Control-Max-Age", "600")
        # Let pages that are cross-origin isolated (COEP require-corp) read the answers.
        self.send_header("Cross-Origin-Resource-Policy", "cross-origin")

    def answer(self, status: int, payload: Any = None) -> None:
        body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.cors()
        if body:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def fail(self, status: int, message: str, code: str = "HTTP_ERROR") -> None:
        self.answer(status, {"error": {"code": code, "message": message}})

    # -- requests ----------------------------------------------------------------------------

    def do_OPTIONS(self) -> None:  # noqa: N802 - stdlib naming
        self.answer(HTTPStatus.NO_CONTENT)

    def do_GET(self) -> None:  # noqa: N802
        self.route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self.route("POST")

    def do_PATCH(self) -> None:  # noqa: N802
        self.route("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self.route("DELETE")

    def route(self, method: str) -> None:
        self.body_read = False
        try:
            self.authorize()
            self.dispatch(method)
        except HttpError as err:
            self.skip_body()
            self.fail(err.status, str(err))
        except OmoideError as err:
            self.skip_body()
            self.fail(ERROR_STATUS.get(err.code, 500), str(err), err.code)
        except Exception as err:  # noqa: BLE001 - the client gets a 500, the server lives on
            self.skip_body()
            self.fail(500, f"{type(err).__name__}: {err}")

    def skip_body(self) -> None:
        """A request refused before its body was read (401, 404...): read the body anyway,
        or the next request on this kept-alive connection would start inside it."""
        if self.body_read:
            return
        self.body_read = True
        left = int(self.headers.get("Content-Length") or 0)
        if left > 16 * MAX_BODY:
            self.close_connection = True
            return
        while left > 0 and (chunk := self.rfile.read(min(left, 65536))):
            left -= len(chunk)

    def authorize(self) -> None:
        key = self.server.api_key
        if not key:
            return
        given = self.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
            raise HttpError(401, "missing or wrong bearer key")

    def body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            # skip_body reads what was sent (up to a bound): the client sees the 413
            raise HttpError(413, f"body over {MAX_BODY} bytes")
        self.body_read = True
        try:
            return json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            raise HttpError(400, "body is not JSON") from None

    def dispatch(self, method: str) -> None:
        parts = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parts.query))
        backend, path = self.server.backend, parts.path.rstrip("/") or "/"
        match = MEMORY_PATH.match(path)
        if path == "/health" and method == "GET":
            self.answer(200, backend.health())
        elif path == "/memories" and method == "POST":
            self.answer(201, backend.create(self.body()))
        elif path == "/memories" and method == "GET":
            self.answer(200, backend.list(
                character_id=query.get("character_id"), kind=query.get("kind"),
                trashed=flag(query.get("trashed"), False), limit=query.get("limit", 100),
                offset=query.get("offset", 0), with_vectors=bool(flag(query.get("vectors"),
                                                                      False))))
        elif path == "/memories/search" and method == "POST":
            self.answer(200, {"results": self.search(self.body())})
        elif match:
            self.memory(method, urllib.parse.unquote(match.group(1)), query)
        else:
            raise HttpError(404 if method in ("GET", "POST", "PATCH", "DELETE") else 405,
                            f"no route {method} {path}")

    def memory(self, method: str, memory_id: str, query: dict[str, str]) -> None:
        backend = self.server.backend
        if method == "GET":
            found = backend.get(memory_id, with_vector=bool(flag(query.get("vectors"), False)))
        elif method == "PATCH":
            found = backend.update(memory_id, self.body())
        elif method == "DELETE":
            found = backend.delete(memory_id) or None
        else:
            raise HttpError(405, f"{method} is not allowed on a memory")
        if found is None:
            raise HttpError(404, f"no memory {memory_id!r}")
        self.answer(204) if found is True else self.answer(200, found)

    def search(self, body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("query", ""), str):
            raise HttpError(400, "search needs an object with 'query' and 'character_id'")
        return self.server.backend.search(
            body.get("query", ""), character_id=body.get("character_id"),
            k=int(body.get("k") or 10), vector=body.get("vector"), model=body.get("model"),
            kinds=body.get("kinds"))


def serve(db: str, host: str = "127.0.0.1", port: int = 8750, *, api_key: str | None = None,
          cors_origin: str = "*") -> ReferenceServer:
    """A started-but-not-serving server (call ``serve_forever`` or run it in a thread)."""
    return ReferenceServer((host, port), SQLiteBackend(db), api_key=api_key,
                           cors_origin=cors_origin)
