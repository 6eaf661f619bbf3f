"""The MCP server over streamable HTTP, closed by default like the reference REST server.

The rules are the reference server's (``omoide.server.policy.ServerPolicy``): a bearer key is
required (``--no-key`` is an explicit choice that pins loopback; another address needs
``--public`` and a key), the ``Host`` header must name this machine (no DNS rebinding), and a
request body is limited. MCP clients are programs, not web pages: a request that carries an
``Origin`` header is refused unless that origin was allowed. Request heads must arrive within
the reference server's deadline, and bodies within its body deadline (the gate reads the body
before the SDK does: the SDK waits for a declared body for ever); idle sessions expire (the
SDK's session idle timeout).

``PolicyGate`` applies the policy in front of the SDK's Starlette app; ``serve_http`` runs it.
"""

from __future__ import annotations

import json
from typing import Any

from omoide.mcp.envelope import refused_body
from omoide.server.policy import BodyRefused, ServerPolicy, read_body

Scope = dict[str, Any]


class PolicyGate:
    """ASGI middleware: answers 421 (Host), 403 (Origin) or 401 (key) before the app runs,
    408/413 for a body that is late or too big, and 400 with a JSON-RPC -32600 for a body
    that is JSON but not one message the SDK would serve as sent (``refused_body``: a batch,
    a request whose id is not a string or an integer, another ``jsonrpc``)."""

    def __init__(self, app: Any, policy: ServerPolicy) -> None:
        self.app = app
        self.policy = policy

    def refusal(self, headers: dict[str, str]) -> tuple[int, str] | None:
        if not self.policy.host_allowed(headers.get("host")):
            return 421, "Host not allowed (start the server with --allow-host NAME)"
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin):
            return 403, "Origin not allowed (web pages cannot reach this server)"
        if not self.policy.key_accepted(headers.get("authorization")):
            return 401, "missing or wrong bearer key"
        return None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts there
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", ())}
        refused = self.refusal(headers)
        if refused is not None:
            await self.answer(send, *refused)
            return
        try:
            body = await read_body(receive, self.policy)
        except BodyRefused as late:
            await self.answer(send, late.status, late.message)
            return
        invalid = refused_body(body) if scope.get("method") == "POST" else None
        if invalid is not None:
            await self.answer_json(send, 400, invalid.model_dump_json(
                by_alias=True, exclude_unset=True).encode())
            return
        await self.app(scope, self.replay(body, receive), send)

    @staticmethod
    def replay(body: bytes, receive: Any) -> Any:
        """The whole request body (read under the body deadline and size limit by
        ``read_body``), handed to the app as one message; later receives (a client's
        disconnect) go to the server."""
        whole = {"type": "http.request", "body": body, "more_body": False}
        handed = False

        async def replay() -> dict[str, Any]:
            nonlocal handed
            if handed:
                return await receive()
            handed = True
            return whole

        return replay

    @classmethod
    async def answer(cls, send: Any, status: int, message: str) -> None:
        body = json.dumps({"error": {"code": "HTTP_ERROR", "message": message}}).encode()
        extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
        await cls.answer_json(send, status, body, extra)

    @staticmethod
    async def answer_json(send: Any, status: int, body: bytes,
                          extra: list[tuple[bytes, bytes]] | None = None) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json; charset=utf-8"),
            (b"content-length", str(len(body)).encode()), (b"connection", b"close"),
            *(extra or [])]})
        await send({"type": "http.response.body", "body": body})


def gated_app(server: Any, host: str, policy: ServerPolicy) -> PolicyGate:
    """The SDK's streamable HTTP app (endpoint ``/mcp``) behind ``PolicyGate``. The SDK's own
    Host/Origin check is off: it would allow every loopback origin on any port, and
    ``PolicyGate`` already applies the stricter rules."""
    from mcp.server.transport_security import TransportSecuritySettings

    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host, max_request_body_size=policy.max_body)
    return PolicyGate(app, policy)


def http_server(server: Any, host: str, port: int, policy: ServerPolicy) -> tuple[Any, Any]:
    """(uvicorn server, bound socket): bound up front, so a port in use is a clear error
    before anything is served; ``run(sockets=[sock])`` serves, ``should_exit`` stops."""
    import uvicorn

    from omoide.server.runner import KEEP_ALIVE_TIMEOUT, DeadlineH11Protocol, bind

    sock = bind(host, port)
    config = uvicorn.Config(
        gated_app(server, host, policy), http=DeadlineH11Protocol, ws="none", lifespan="on",
        log_config=None, access_log=False, proxy_headers=False, server_header=False,
        timeout_keep_alive=int(KEEP_ALIVE_TIMEOUT), timeout_graceful_shutdown=2)
    return uvicorn.Server(config), sock


def serve_http(server: Any, host: str, port: int, policy: ServerPolicy) -> None:
    """Serve until interrupted (blocking)."""
    http, sock = http_server(server, host, port, policy)
    try:
        http.run(sockets=[sock])
    finally:
        sock.close()
