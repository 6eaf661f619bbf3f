"""Shared helpers for the backend tests: records, and the reference server in a thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from omoide.engine.memory import new_memory_id
from omoide.server import ReferenceServer, serve

_counter = [0]


def make_record(character: str, text: str, *, kind: str = "fact", vector=None,
                **fields) -> dict:
    _counter[0] += 1
    now = 1_700_000_000.0 + _counter[0]
    return {"id": new_memory_id(now), "character_id": character, "text": text, "kind": kind,
            "created_at": now, "updated_at": now, "model": "test@f32#3",
            "vector": vector if vector is not None else [1.0, 0.0, 0.0], **fields}


@contextmanager
def running_server(db, port: int, *, api_key: str | None = None,
                   wrap_app: Callable[[Any], Any] | None = None,
                   **options: Any) -> Iterator[ReferenceServer]:
    """The reference server on loopback in a thread: with ``api_key`` or else keyless
    (``no_key``, loopback only); ``wrap_app`` wraps its ASGI app (another URL layout)."""
    server = serve(str(db), "127.0.0.1", port, api_key=api_key, no_key=api_key is None,
                   **options)
    if wrap_app is not None:
        server.app = wrap_app(server.app)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
