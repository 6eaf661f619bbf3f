"""The reference server's REST app: the ``HttpBackend`` contract over a ``SQLiteBackend``.

An ASGI app (served by uvicorn, see runner.py). Every request passes, in order: the Host check
(DNS rebinding), the Origin check (only listed origins, never ``*``), the declared body size
(Content-Length required for a body, no chunked uploads, the limit before a byte is read), the
bearer key (constant-time compare), then the route. Writes need ``Content-Type:
application/json``, so a web page cannot send one as a "simple" cross-origin request. Every
refusal is a short JSON error ``{"error": {"code", "message"}}``; an ``OmoideError`` of the
backend keeps its code and message; anything else is a 500 without details (logged here).
"""

from __future__ import annotations

import json
import logging
import re
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from omoide import json_input
from omoide.backends.base import KEEP
from omoide.backends.sqlite import SQLiteBackend
from omoide.engine import validate
from omoide.errors import OmoideError
from omoide.server.policy import BodyRefused, ServerPolicy, read_body

log = logging.getLogger("omoide.server")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

# Backend errors that are not the client's fault; every other OmoideError is a 4xx.
ERROR_STATUS = {"BACKEND_CONFLICT": 409, "MEMORY_OWNER_CONFLICT": 409,
                "BACKEND_WRITE_FAILED": 503}
MEMORY_PATH = re.compile(r"^/memories/([^/]+)$")
CHARACTER_PATH = re.compile(r"^/characters/([^/]+)$")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ROUTES = ("/health", "/memories", "/memories/search", "/characters")
DRAIN_FACTOR = 16
FLAGS = {"1": True, "true": True, "0": False, "false": False, "any": None}


class HttpError(Exception):
    """A refusal: status, short message; ``close`` when the connection cannot be reused (the
    body was not read and may be large, or its framing is unknown)."""

    def __init__(self, status: int, message: str, *, close: bool = False,
                 headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        super().__init__(message)
        self.status, self.close, self.headers = status, close, headers


def flag(query: dict[str, str], name: str, default: bool | None) -> bool | None:
    value = query.get(name)
    if value is None:
        return default
    if value.lower() not in FLAGS:
        raise HttpError(400, f"{name} must be one of {', '.join(FLAGS)}")
    return FLAGS[value.lower()]


def no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class Request:
    """The parts of one ASGI request the routes read."""

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.method: str = scope["method"]
        self.receive = receive
        self.body_read = False
        raw_path = scope.get("raw_path") or scope["path"].encode()
        # as sent: "/memories/" is not "/memories" (an empty id read as the listing)
        self.path = raw_path.decode("latin-1")
        self.headers: dict[str, list[str]] = {}
        for name, value in scope["headers"]:
            self.headers.setdefault(name.decode("latin-1").lower(), []).append(
                value.decode("latin-1"))
        try:
            # blank values kept: "character_id=" is a filter that matches nothing, not none
            self.query = dict(urllib.parse.parse_qsl(scope["query_string"].decode("latin-1"),
                                                     keep_blank_values=True,
                                                     errors="strict", max_num_fields=32))
        except (ValueError, UnicodeDecodeError):
            self.query = None  # refused once the caller is known to be allowed

    def header(self, name: str) -> str | None:
        values = self.headers.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise HttpError(400, f"more than one {name} header", close=True)
        return values[0]


class RestApp:
    def __init__(self, backend: SQLiteBackend, policy: ServerPolicy) -> None:
        self.backend = backend
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan is off and websockets are not served
            return
        request = Request(scope, receive)
        cors: tuple[tuple[bytes, bytes], ...] = ()
        try:
            cors = self.admit(request)
            status, payload, extra = await self.handle(request)
        except HttpError as err:
            status, payload = err.status, error_body("HTTP_ERROR", str(err))
            close = err.close or not await self.drain(request)
            extra = err.headers + ((b"connection", b"close"),) * close
        except OmoideError as err:
            status, payload, extra = ERROR_STATUS.get(err.code, 400), error_body(
                err.code, str(err)), ()
        except Exception:  # a bug: logged here, never shown to the client
            log.exception("internal error on %s %s", request.method, request.path)
            status, payload, extra = 500, error_body("INTERNAL", "internal server error"), ()
        await answer(send, status, payload, cors + extra)

    # -- checks before any route -------------------------------------------------------------

    def admit(self, request: Request) -> tuple[tuple[bytes, bytes], ...]:
        """Host, Origin, body framing; returns the CORS headers of an allowed origin."""
        if not self.policy.host_allowed(request.header("host")):
            raise HttpError(421, "Host not allowed (start the server with --allow-host NAME "
                            "to serve that name)", close=True)
        origin = request.header("origin")
        cors: tuple[tuple[bytes, bytes], ...] = ()
        if origin is not None:
            if not self.policy.origin_allowed(origin):
                raise HttpError(403, "Origin not allowed (start the server with --cors-origin "
                                "ORIGIN to allow that app)", close=True)
            cors = ((b"access-control-allow-origin", origin.encode("latin-1")),)
        if request.header("transfer-encoding") is not None:
            raise HttpError(411, "send the body with a Content-Length, not chunked",
                            close=True, headers=cors)
        length = request.header("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.policy.max_body):
            # h11 has already refused a malformed length; this is the size limit. Up to
            # DRAIN_FACTOR times the limit the body is read and dropped before the answer
            # (``drain``: closing while the client still sends would reset the connection
            # before it reads the 413); beyond, the connection is closed at once.
            drain = length.isdigit() and int(length) <= DRAIN_FACTOR * self.policy.max_body
            raise HttpError(413, f"body over {self.policy.max_body} bytes", close=not drain,
                            headers=cors)
        return cors

    def authorize(self, request: Request) -> None:
        if not self.policy.key_accepted(request.header("authorization")):
            raise HttpError(401, "missing or wrong bearer key",
                            headers=((b"www-authenticate", b"Bearer"),))

    async def drain(self, request: Request) -> bool:
        """Read (and drop) the body of a refused request before answering: a client still
        sending when the connection closes gets a reset instead of the answer. False when it
        does not arrive in time (the connection is then closed)."""
        if request.body_read:
            return True
        request.body_read = True
        try:
            with anyio.fail_after(self.policy.body_timeout):
                while (await request.receive()).get("more_body", False):
                    pass
        except TimeoutError:
            return False
        return True

    async def body(self, request: Request) -> Any:
        media = (request.header("content-type") or "").split(";")[0].strip().lower()
        if media != "application/json":
            raise HttpError(415, "the body must be Content-Type: application/json")
        if request.header("content-length") is None:
            raise HttpError(411, "a body needs a Content-Length", close=True)
        request.body_read = True
        try:
            raw = await read_body(request.receive, self.policy)
        except BodyRefused as refused:
            raise HttpError(refused.status, refused.message, close=True) from None
        try:
            return json_input.loads(raw.decode("utf-8"),
                                    parse_constant=no_constants)
        except (ValueError, UnicodeDecodeError):
            raise HttpError(400, "the body is not JSON (UTF-8, no NaN/Infinity)") from None

    # -- routes ------------------------------------------------------------------------------

    async def handle(self, request: Request) -> tuple[int, Any, tuple[tuple[bytes, bytes], ...]]:
        if request.method == "OPTIONS":  # a CORS preflight: no key (browsers send none)
            return 204, None, preflight_headers(request)
        self.authorize(request)
        if request.query is None:
            raise HttpError(400, "the query string is not valid")
        path, method, query = request.path, request.method, request.query
        run = self.run
        if method not in METHODS:
            raise HttpError(405, f"{method} is not allowed",
                            headers=((b"allow", ", ".join(METHODS).encode()),))
        if path == "/health" and method == "GET":
            return 200, await run(self.backend.health), ()
        if path == "/memories" and method == "POST":
            record = object_body(await self.body(request), "a memory record")
            return 201, await run(self.backend.create, record), ()
        if path == "/memories" and method == "GET":
            character = query.get("character_id")
            args = {"character_id": None if character is None
                    else validate.character_id(character),
                    "kind": query.get("kind"),
                    "trashed": flag(query, "trashed", False),
                    "limit": query.get("limit", 100), "offset": query.get("offset", 0),
                    "with_vectors": bool(flag(query, "vectors", False))}
            return 200, await run(lambda: self.backend.list(**args)), ()
        if path == "/memories/search" and method == "POST":
            args = search_args(object_body(await self.body(request), "a search"))
            results = await run(lambda: self.backend.search(**args))
            return 200, {"results": results}, ()
        if path == "/characters" and method == "GET":
            return 200, {"names": await run(self.backend.character_names),
                         "deleted": await run(self.backend.deleted_characters)}, ()
        match = CHARACTER_PATH.match(path)
        if match is not None:
            if method != "PUT":
                raise HttpError(405, f"{method} is not allowed on a character")
            body = object_body(await self.body(request), "a character's name")
            character = validate.character_id(path_id(match, "character id"))
            name = validate.character_name(body.get("name"))
            # absent: the character stays as deleted or live as it is here
            deleted_at = (validate.optional_timestamp(body["deleted_at"], "deleted_at")
                          if "deleted_at" in body else KEEP)
            return 200, await run(self.backend.set_character_name, character, name,
                                  deleted_at), ()
        match = MEMORY_PATH.match(path)
        if match is None and path in ROUTES:
            raise HttpError(405, f"{method} is not allowed on {path}")
        if match is None:
            raise HttpError(404, "no such route")
        memory_id = path_id(match, "memory id")
        found: Any
        if method == "GET":
            with_vector = bool(flag(query, "vectors", False))
            found = await run(lambda: self.backend.get(memory_id, with_vector=with_vector))
        elif method == "PATCH":
            fields = object_body(await self.body(request), "the fields to change")
            found = await run(lambda: self.backend.update(memory_id, fields))
        elif method == "DELETE":
            found = await run(lambda: self.backend.delete(memory_id)) or None
        else:
            raise HttpError(405, f"{method} is not allowed on a memory")
        if found is None:
            raise HttpError(404, "no such memory")
        return (204, None, ()) if found is True else (200, found, ())

    @staticmethod
    async def run(call: Callable[..., Any], *args: Any) -> Any:
        """The backend's blocking SQLite work on a worker thread (bounded pool)."""
        return await anyio.to_thread.run_sync(call, *args)


def path_id(match: re.Match[str], what: str) -> str:
    try:
        return urllib.parse.unquote(match.group(1), errors="strict")
    except UnicodeDecodeError:
        raise HttpError(400, f"the {what} is not UTF-8") from None


def object_body(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise HttpError(400, f"the body must be a JSON object ({what})")
    return body


def search_args(body: dict[str, Any]) -> dict[str, Any]:
    """The search body checked with the engine's own validators (one validator)."""
    query, vector, model, kinds = (body.get(n) for n in ("query", "vector", "model", "kinds"))
    if not isinstance(query if query is not None else "", str):
        raise OmoideError.of("INVALID_ARGUMENT", name="query", reason="must be a string")
    if model is not None and not isinstance(model, str):
        raise OmoideError.of("INVALID_ARGUMENT", name="model", reason="must be a string")
    if vector is not None and not isinstance(vector, list):
        raise OmoideError.of("INVALID_ARGUMENT", name="vector", reason="must be a list")
    if kinds is not None and not isinstance(kinds, list):
        raise OmoideError.of("INVALID_ARGUMENT", name="kinds", reason="must be a list")
    return {"query": query or "", "character_id": validate.character_id(body.get("character_id")),
            "k": validate.k(body.get("k", 10)), "vector": vector, "model": model,
            "kinds": sorted(validate.kinds(kinds)) if kinds is not None else None}


def preflight_headers(request: Request) -> tuple[tuple[bytes, bytes], ...]:
    if request.header("origin") is None:
        return ((b"allow", ", ".join(METHODS).encode()),)
    headers = [(b"access-control-allow-headers", b"Authorization, Content-Type, Accept"),
               (b"access-control-allow-methods", b"GET, POST, PUT, PATCH, DELETE, OPTIONS"),
               (b"access-control-max-age", b"600")]
    if request.header("access-control-request-private-network") == "true":
        # Chromium's Private Network Access: an app served from elsewhere may call loopback
        # only when the server says so (the origin is already on the list).
        headers.append((b"access-control-allow-private-network", b"true"))
    return tuple(headers)


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


async def answer(send: Send, status: int, payload: Any,
                 extra: tuple[tuple[bytes, bytes], ...]) -> None:
    body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode()
    headers = [(b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store"),
               (b"x-content-type-options", b"nosniff"), (b"vary", b"Origin"),
               # pages that are cross-origin isolated (COEP require-corp) may read the answer
               (b"cross-origin-resource-policy", b"cross-origin"), *extra]
    if body:
        headers.append((b"content-type", b"application/json; charset=utf-8"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
