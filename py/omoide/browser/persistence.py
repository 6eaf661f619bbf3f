"""Write-ahead persistence of engine changes into IndexedDB (the browser's storage layer).

``IndexedDBListener`` is an engine change listener: it hands each change to the worker's
Dexie layer (``web/store/db.js``) and waits until its transaction committed. A refused write
(quota, a closed database) raises, which vetoes the change: the engine is left as it was.
So ``remember`` returns only once its record and vector are on disk.
"""

from __future__ import annotations

from typing import Any

from ..engine.listener import Change
from .host import call_json, to_js_floats


def change_payload(change: Change) -> dict[str, Any]:
    return {
        "op": change.op,
        "character": change.character_id,
        "memory_id": change.memory_id,
        "memory": change.memory.to_dict() if change.memory else None,
        "at": change.at,
        "stamp": change.stamp,
        "model_id": change.model_id,
        "dimension": change.dimension,
    }


class IndexedDBListener:
    def __init__(self) -> None:
        self.enabled = True

    def on_change(self, change: Change) -> None:
        if not self.enabled:
            return
        if change.op == "swap":
            ids = sorted(change.vectors)
            flat = [x for i in ids for x in change.vectors[i]]
            call_json("swap", change_payload(change) | {"ids": ids}, to_js_floats(flat))
            return
        vector = to_js_floats(change.vector) if change.vector is not None else None
        call_json("persist", change_payload(change), vector)
