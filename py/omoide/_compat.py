"""Pick the Pyodide or the CPython implementation of platform services once.

Everything else in ``omoide`` imports from here instead of probing the platform itself, so
the same logic is exercised by plain pytest under CPython.
"""

from __future__ import annotations

import sys

IN_PYODIDE: bool = sys.platform == "emscripten"


def has_numpy() -> bool:
    """True when numpy can be imported (CPython with the ``cpython`` extra)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def platform_name() -> str:
    """A short name of the runtime, shown to users in diagnostics."""
    if IN_PYODIDE:
        return f"pyodide (Python {sys.version.split()[0]})"
    return f"cpython {sys.version.split()[0]}"
