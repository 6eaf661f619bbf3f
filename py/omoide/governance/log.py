"""The governance audit log: what was stored, merged, moved or summarized, and why.

Kept in memory (bounded; oldest events drop first) with a JSON export/import, so the UI can
show it and a persistence layer can save it next to the store.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

ACTIONS = (
    "stored", "merged", "contradiction", "demoted", "promoted", "tier_failed",
    "summarized", "degraded", "write_failed", "superseded", "cold_merged", "cold_maintenance",
)


@dataclass(frozen=True)
class AuditEvent:
    at: float
    character: str
    action: str
    memory_ids: tuple[str, ...]
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["memory_ids"] = list(self.memory_ids)
        return data


class AuditLog:
    def __init__(self, max_events: int = 10_000) -> None:
        self._events: deque[AuditEvent] = deque(maxlen=max_events)

    def __len__(self) -> int:
        return len(self._events)

    def record(
        self,
        at: float,
        character: str,
        action: str,
        memory_ids: tuple[str, ...] | list[str] = (),
        reason: str = "",
        **details: Any,
    ) -> AuditEvent:
        if action not in ACTIONS:
            raise ValueError(f"unknown audit action {action!r}")
        event = AuditEvent(float(at), character, action, tuple(memory_ids), reason, details)
        self._events.append(event)
        return event

    def events(self, character: str | None = None, action: str | None = None
               ) -> list[AuditEvent]:
        return [
            e for e in self._events
            if (character is None or e.character == character)
            and (action is None or e.action == action)
        ]

    def to_json(self, character: str | None = None) -> str:
        return json.dumps([e.to_dict() for e in self.events(character)], ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, max_events: int = 10_000) -> AuditLog:
        log = cls(max_events)
        for item in json.loads(text):
            log._events.append(AuditEvent(
                float(item["at"]), item["character"], item["action"],
                tuple(item.get("memory_ids", ())), item.get("reason", ""),
                dict(item.get("details", {})),
            ))
        return log
