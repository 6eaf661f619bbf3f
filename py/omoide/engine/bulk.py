"""``acyclic_bulk()``: a block that makes many new objects and no reference cycles.

CPython's (and Pyodide's) cyclic collector runs every few hundred new containers and walks
the young objects, and from time to time the whole heap: while 100,000 parsed rows become
records and Memory objects, it costs about a third of a restore or an import check and
finds nothing (rows, records and Memory objects hold no cycles). Reference counting still
frees everything as usual; the collector is back on at the end of the block.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def acyclic_bulk() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
