"""Export and import: one JSON format shared by the web app and the CLI.

``{"format": "omoide-export", "version": 1, "characters": [{"id", "name", "stamp",
"memories": [Memory...], "trash": [Memory + trashed_at...], "vectors"?: {id: [floats]}}]}``

Import skips ids the engine already holds, reuses the export's vectors only when its stamp is
the selected model's (otherwise every text is embedded again), and checks the whole file
before writing anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omoide.engine.embedding import embed_memories
from omoide.engine.memory import Memory
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

EXPORT_FORMAT = "omoide-export"


def export_data(engine: MemoryEngine, characters: list[str] | None = None, *,
                with_vectors: bool = False, names: dict | None = None) -> dict[str, Any]:
    out = []
    for character in characters or engine.characters():
        store = engine.existing_store(character)
        entry: dict[str, Any] = {
            "id": character, "name": (names or {}).get(character, character),
            "stamp": store.stamp,
            "memories": [m.to_dict() for m in engine.memories(character)],
            "trash": [e.memory.to_dict() | {"trashed_at": e.trashed_at}
                      for e in engine.trash(character)],
        }
        if with_vectors:
            entry["vectors"] = {i: store.kernel.vector(i) for i in store.records}
        out.append(entry)
    return {"format": EXPORT_FORMAT, "version": 1, "characters": out}


def check_import(data: Any) -> list[dict[str, Any]]:
    def bad(reason: str) -> OmoideError:
        return OmoideError.of("MALFORMED_IMPORT", reason=reason)

    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise bad(f"not an Omoide export (format must be {EXPORT_FORMAT!r})")
    if data.get("version") != 1:
        raise bad(f"unsupported version {data.get('version')!r}")
    characters = data.get("characters")
    if not isinstance(characters, list):
        raise bad("'characters' must be a list")
    for c in characters:
        if not isinstance(c, dict) or not isinstance(c.get("id"), str):
            raise bad("every character needs a string 'id'")
        if not isinstance(c.get("memories", []), list):
            raise bad(f"memories of {c['id']!r} must be a list")
        for m in c.get("memories", []):
            if not isinstance(m, dict) or not isinstance(m.get("text"), str):
                raise bad(f"a memory of {c['id']!r} has no text")
            if not isinstance(m.get("id"), str) or not m["id"]:
                raise bad(f"a memory of {c['id']!r} has no id")
    return characters


def import_data(engine: MemoryEngine, data: Any) -> dict[str, Any]:
    report: dict[str, Any] = {"imported": 0, "skipped": 0, "reembedded": 0, "characters": []}
    for c in check_import(data):
        character = c["id"]
        known = engine.stores.get(character)
        existing = set(known.records) | set(known.trash) if known else set()
        fresh = [m for m in c.get("memories", []) if m.get("id") not in existing]
        report["skipped"] += len(c.get("memories", [])) - len(fresh)
        reuse = c.get("stamp") == engine.embedder.stamp and isinstance(c.get("vectors"), dict)
        vectors = c["vectors"] if reuse else {}
        need = [m for m in fresh if m.get("id") not in vectors]
        embedded = dict(zip([m["id"] for m in need],
                            embed_memories(engine.embedder,
                                           [(m["text"], m.get("context")) for m in need]),
                            strict=True)) if need else {}
        store = engine.writable_store(character)
        for m in fresh:
            memory = Memory.from_dict(m | {"character_id": character,
                                           "model": engine.embedder.stamp})
            store.put(memory, vectors.get(m["id"]) or embedded[m["id"]])
        report["imported"] += len(fresh)
        report["reembedded"] += len(need)
        report["characters"].append(character)
    return report
