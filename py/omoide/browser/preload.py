"""What the engine worker imports before it takes its Python memory snapshot.

The first boot of a build imports the engine's boot modules right after the interpreter
starts, then snapshots the interpreter (web/engine-worker.js ``startPython``); later boots
restore that snapshot and find these modules already imported. Only pure Python may run
before the snapshot: none of these modules touches JavaScript at import time (the JS modules
``omoide_vectors`` / ``omoide_host`` and ``pyodide.ffi`` are imported on first use), which
``tests/test_boot_imports.py`` checks under CPython.
"""

from __future__ import annotations

import importlib
import random

# The modules engine-worker.js needs before it reports "ready" (the extraction rules are
# not among them: they load on the first extraction).
BOOT_MODULES = (
    "omoide.browser.rpc",
    "omoide.browser.wasm_kernel",
    "omoide.browser.client",
    "omoide.browser.importer",
    "omoide.browser.tavern",
    "omoide.browser.session",
    "omoide.browser.restore",
)


def import_boot_modules() -> None:
    for name in BOOT_MODULES:
        importlib.import_module(name)


def after_restore() -> None:
    """Undo what a snapshot would otherwise repeat on every boot: the state of ``random``
    (seeded when first imported, before the snapshot) is drawn afresh from the OS."""
    random.seed()
