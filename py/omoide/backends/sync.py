"""Copy every record of one backend to another (a full backup, or a restore): an update
where the target has the id, a create where it does not; then the characters' display
names and which of them the user deleted (memories kept). The only deletes: the target's
copies of memories the source purged (``deleted_ids``, a source that keeps them), which a
target set elsewhen never heard of."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from omoide.backends.base import KEEP, Keep, MemoryBackend
from omoide.engine import validate
from omoide.errors import OmoideError

PAGE = 500


def all_records(backend: MemoryBackend, *, character_id: str | None = None,
                with_vectors: bool = True) -> Iterator[dict[str, Any]]:
    """Live and trashed records (with their vectors unless told), page by page."""
    offset = 0
    while True:
        page = backend.list(character_id=character_id, trashed=None, limit=PAGE, offset=offset,
                            with_vectors=with_vectors)
        yield from page["items"]
        offset += len(page["items"])
        if not page["items"] or offset >= page["total"]:
            return


def upsert(target: MemoryBackend, record: dict[str, Any]) -> str:
    # the character goes along as a guard: a target holding the id under another character
    # refuses the update (MEMORY_OWNER_CONFLICT) instead of overwriting that memory
    fields = {k: v for k, v in record.items() if k != "id"}
    if target.update(record["id"], fields) is not None:
        return "updated"
    try:
        target.create(record)
    except OmoideError as err:
        # another writer (the mirror pump, another process's) created it since the update
        # found none: a 409 that failed a whole backup; the record is updated over it
        if err.code != "BACKEND_CONFLICT" or target.update(record["id"], fields) is None:
            raise
        return "updated"
    return "created"


def copy_all(source: MemoryBackend, target: MemoryBackend, *,
             character_id: str | None = None,
             progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Every record of ``source`` created or updated on ``target``. A stored record that
    breaks the one record schema (a damaged row, quarantined by the engine) is left out and
    named in ``invalid``: it never stops the copy of the others."""
    total = source.list(character_id=character_id, trashed=None, limit=0)["total"]
    counts: dict[str, Any] = {"created": 0, "updated": 0, "invalid": []}
    for done, record in enumerate(all_records(source, character_id=character_id), 1):
        try:
            validate.record(record, stored=True)
        except OmoideError:
            counts["invalid"].append(str(record.get("id")))
        else:
            counts[upsert(target, record)] += 1
        if progress:
            progress(done, total)
    counts["named"] = copy_names(source, target, character_id=character_id)
    counts["deleted"] = erase_purged(source, target, character_id=character_id)
    return counts


def erase_purged(source: Any, target: MemoryBackend, *, character_id: str | None = None
                 ) -> int:
    """Delete from ``target`` its copies of the memories ``source`` purged: a forget for good
    made while the target was not the backup server set (another one, or none) never
    reached it, and the forgotten text stayed there. The target's ids are listed once (only
    when the source purged anything), so an id it never had costs no request."""
    if not hasattr(source, "deleted_ids"):
        return 0
    gone = source.deleted_ids(character_id)
    if not gone:
        return 0
    held = {r["id"] for r in all_records(target, character_id=character_id,
                                         with_vectors=False)}
    return sum(1 for memory_id in sorted(gone & held) if target.delete(memory_id))


def copy_names(source: Any, target: Any, *, character_id: str | None = None) -> int:
    """The display names ``source`` holds (a character named by its id has none, unless
    it is deleted) given to ``target`` with whether each is deleted (``deleted_at``);
    backends that keep no names (``character_names``) are skipped."""
    if not hasattr(source, "character_names") or not hasattr(target, "set_character_name"):
        return 0
    deleted = source.deleted_characters() if hasattr(source, "deleted_characters") else {}
    names = {c: n for c, n in source.character_names().items()
             if (c != n or c in deleted) and character_id in (None, c)}
    given = 0
    for character, name in sorted(names.items()):
        state = deleted_at(source, character, deleted)
        given += target.set_character_name(character, name, state) is not None  # None: kept none
    return given


def deleted_at(source: Any, character: str,
               deleted: dict[str, float] | None = None) -> float | None | Keep:
    """What ``source`` says of ``character`` for ``set_character_name``: when it was
    deleted; None when it is live and ``source`` has a character trash (the app, or a
    backup server of it: live there means never deleted or restored); else KEEP (a CLI
    workspace cannot delete or restore a character: the target's state is left)."""
    if not hasattr(source, "deleted_characters"):
        return KEEP
    deleted = source.deleted_characters() if deleted is None else deleted
    if character in deleted:
        return deleted[character]
    return None if getattr(source, "has_character_trash", False) else KEEP
