"""The memory engine: per-character stores with vector, BM25 and hybrid recall.

Pure Python (numpy only through ``omoide.kernels``), so it runs unchanged in Pyodide.
One module per verb: ``remember``, ``recall``, ``update``, ``forget``, ``revectorize``,
``snapshot``; data structures in ``store``, ``bm25``, ``analyzer``; ``fusion`` for hybrid.
"""

from omoide.engine.core import MemoryEngine
from omoide.engine.listener import Change, ChangeListener, Journal
from omoide.engine.memory import KINDS, Hit, Memory, TrashEntry
from omoide.engine.revectorize import RevectorizeReport

__all__ = [
    "KINDS",
    "Change",
    "ChangeListener",
    "Hit",
    "Journal",
    "Memory",
    "MemoryEngine",
    "RevectorizeReport",
    "TrashEntry",
]
