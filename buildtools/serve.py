"""A static server for dist/ on loopback with the headers the app needs.

COOP + COEP make the page cross-origin isolated (SharedArrayBuffer for multi-threaded
onnxruntime-web). ``no-cache`` makes the browser revalidate, so a rebuilt file is never stale.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .paths import DIST

TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".whl": "application/octet-stream",
    ".onnx": "application/octet-stream",
    ".zip": "application/zip",
}


class AppHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}
    quiet = False

    def end_headers(self) -> None:
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        if not self.quiet:
            super().log_message(format, *args)


class AppServer:
    """Serve ``root`` on ``host:port`` in a background thread (used by tests too)."""

    def __init__(self, root: Path = DIST, host: str = "127.0.0.1", port: int = 0,
                 quiet: bool = True) -> None:
        handler = type("Handler", (AppHandler,), {"quiet": quiet})
        self.httpd = ThreadingHTTPServer((host, port), functools.partial(handler, directory=root))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> AppServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def serve_forever(host: str, port: int) -> None:
    server = AppServer(DIST, host, port, quiet=False)
    print(f"Omoide is served at {server.url}  (Ctrl+C to stop)", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        server.httpd.server_close()
