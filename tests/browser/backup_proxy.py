"""A fault proxy in front of the reference backup server, for the browser's backup tests.

A ``ThreadingHTTPServer`` on loopback that forwards every request to the upstream server,
except those a test's ``rule(method, path, n)`` picks (``n``: how many requests of that
method were seen, from 1): it answers ``("status", code)``, ``("garbage", None)`` (200, not
JSON), ``("drop", None)`` (closes the connection unanswered), ``("drop_after", None)``
(forwards, then closes unanswered: the server did the work, the client never hears),
``("delay", seconds)`` (then forwards). Injected answers carry the CORS headers so the page
reads them (a fetch without them is a network error, not the status).
"""

from __future__ import annotations

import http.client
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Rule = Callable[[str, str, int], "tuple[str, Any] | None"]


class FaultProxy:
    def __init__(self, port: int, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.rule: Rule | None = None
        self.seen: Counter[str] = Counter()
        self.log: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _cors(self) -> None:
                origin = self.headers.get("Origin")
                if origin:
                    self.send_header("Access-Control-Allow-Origin", origin)
                    self.send_header("Vary", "Origin")

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self._cors()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _drop(self) -> None:
                self.close_connection = True
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass

            def _forward(self) -> tuple[int, list[tuple[str, str]], bytes]:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=60)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "connection", "content-length")}
                conn.request(self.command, self.path, body=body, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
                conn.close()
                return reply.status, reply.getheaders(), data

            def _handle(self) -> None:
                fault = None
                if self.command != "OPTIONS":
                    proxy.seen[self.command] += 1
                    proxy.log.append((self.command, self.path))
                    if proxy.rule is not None:
                        fault = proxy.rule(self.command, self.path, proxy.seen[self.command])
                kind, arg = fault if fault else (None, None)
                if kind == "status":
                    length = int(self.headers.get("Content-Length") or 0)
                    if length:
                        self.rfile.read(length)
                    return self._answer(int(arg), b'{"detail": "injected failure"}')
                if kind == "garbage":
                    return self._answer(200, b"<html>not json</html>")
                if kind == "drop":
                    return self._drop()
                if kind == "delay":
                    time.sleep(float(arg))
                status, headers, data = self._forward()
                if kind == "drop_after":
                    return self._drop()
                self.send_response(status)
                for key, value in headers:
                    if key.lower() not in ("connection", "transfer-encoding", "content-length",
                                           "date", "server"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FaultProxy:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
