"""Where one rpc call's time goes: named phases in ms, reset per call, sent with its reply.

``rpc.dispatch`` resets them, code on the way adds to them (``with phase("embed"):``) and the
reply carries them as ``phases``; the engine worker keeps them with its own marks (lock,
catch-up, commit) so a benchmark can read a verb's time without its query embedding.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

_taken: dict[str, float] = {}


def reset() -> None:
    _taken.clear()


def add(name: str, ms: float) -> None:
    _taken[name] = _taken.get(name, 0.0) + ms


@contextmanager
def phase(name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        add(name, (time.perf_counter() - started) * 1000)


def taken() -> dict[str, float]:
    return dict(_taken)
