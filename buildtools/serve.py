"""Static servers on loopback: the app (dist/) and the chat demo (demo/, a second origin).

The app: COOP + COEP make the page cross-origin isolated (SharedArrayBuffer for
multi-threaded onnxruntime-web). Two files are meant for other origins: ``client.js`` (an ES
module other pages import: CORS) and ``bridge.html`` (the frame or window the client talks
to: no COOP, so the window a cross-site page opens keeps its ``opener``). ``no-cache`` makes
the browser revalidate, so a rebuilt file is never stale.

The demo (``build.py serve`` starts it on the next port) is an ordinary page of another
origin: no isolation headers; it serves its own copy of ``client.js`` as an app would.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from .paths import DIST, ROOT, WEB

DEMO = ROOT / "demo"
TYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".whl": "application/octet-stream",
    ".onnx": "application/octet-stream",
    ".zip": "application/zip",
}
FOR_OTHER_ORIGINS = {"/client.js", "/bridge.html"}


class AppHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}
    quiet = False
    isolated = True  # the app; False: a plain page (the demo)
    extra_files: dict[str, Path] = {}  # URL path -> file served from elsewhere

    def url_path(self) -> str:
        return urlsplit(self.path).path

    def translate_path(self, path: str) -> str:
        extra = self.extra_files.get(urlsplit(path).path)
        return str(extra) if extra is not None else super().translate_path(path)

    def end_headers(self) -> None:
        path = self.url_path()
        if self.isolated:
            if path != "/bridge.html":
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy",
                             "cross-origin" if path in FOR_OTHER_ORIGINS else "same-origin")
            if path == "/client.js":
                self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        if not self.quiet:
            super().log_message(format, *args)


class AppServer:
    """Serve ``root`` on ``host:port`` in a background thread (used by tests too).
    ``isolated=False`` serves a plain page of another origin (the demo); ``extra_files``
    maps URL paths to files outside ``root``."""

    def __init__(self, root: Path = DIST, host: str = "127.0.0.1", port: int = 0,
                 quiet: bool = True, *, isolated: bool = True,
                 extra_files: dict[str, Path] | None = None) -> None:
        handler = type("Handler", (AppHandler,), {"quiet": quiet, "isolated": isolated,
                                                  "extra_files": extra_files or {}})
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


def demo_server(host: str = "127.0.0.1", port: int = 0, quiet: bool = True) -> AppServer:
    """The memory-aware chat demo, with its own copy of the JS client."""
    return AppServer(DEMO, host, port, quiet, isolated=False,
                     extra_files={"/client.js": WEB / "client.js"})


def serve_forever(host: str, port: int) -> None:
    server = AppServer(DIST, host, port, quiet=False)
    print(f"Omoide is served at {server.url}  (Ctrl+C to stop)", flush=True)
    try:
        demo: AppServer | None = demo_server(host, port + 1, quiet=False).start()
        print(f"The chat demo (another origin) is at {demo.url}?omoide={server.url}", flush=True)
    except OSError as e:  # the next port is taken: the app still runs
        demo = None
        print(f"The chat demo is not served: port {port + 1}: {e.strerror}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        if demo is not None:
            demo.stop()
        server.httpd.server_close()
