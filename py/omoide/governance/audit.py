"""``audit``: a read-only health report of one character's memory.

- counts per kind, type and tier (live) and the trash size; the cold tier's entry count
  against its soft/hard maintenance limits (see ``tiers.maintain_cold``);
- every hot entry with its type, age, value (see ``tiers``), characters, and its plan:
  ``keep (pinned)``, ``sink now`` (the next rebalance moves it to cold), ``next to sink``
  (the least valuable one while under the soft limit) or ``keep``, with the reason;
- duplicate candidates dedup would merge (same key, or near-identical with compatible keys);
- stale memories: not recalled (or, never recalled, not created) for ``stale_days``;
- superseded: each memory in the trash as the history of the one that replaced it (same
  key, a contradiction, a merge that grew the text), with the reason, whether the polarity
  flipped, and the memory that replaced it (restorable with ``restore``);
- contradictions: memories whose polarity flipped in place, with their ``meta["history"]``
  (data from before supersede);
- model stamp state: the store's stamp vs the selected model, and records off-stamp;
- how many memories ``summarize`` would fold, and the governance log for the character;
- quarantined rows: stored records of the character that break the record schema, skipped
  at load and kept on disk untouched (``engine.quarantine``).

Nothing is written: no recall counters are touched, no listener hears anything.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.supersede import SUPERSEDED_BY
from omoide.governance import meta_fields
from omoide.governance.dedup import DEFAULT_THRESHOLD, duplicate_pairs, polarity_of
from omoide.governance.log import AuditLog
from omoide.governance.summarize import candidates as summary_candidates
from omoide.governance.tiers import (
    DAY,
    HOT,
    TierPolicy,
    line_cost,
    tier_of,
    value,
)

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.memory import Memory


@dataclass
class HotEntry:
    id: str
    kind: str
    type: str
    text: str
    age_days: float
    value: float | None  # None: pinned
    chars: int
    plan: str
    reason: str


@dataclass
class AuditReport:
    character: str
    at: float
    counts: dict[str, Any]
    hot: list[HotEntry]
    hot_chars: int
    budget_chars: int
    hot_state: str  # "under soft" | "above soft" | "above hard"
    cold: dict[str, Any] = field(default_factory=dict)  # entries, soft, hard, state
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    stale: list[dict[str, Any]] = field(default_factory=list)
    superseded: list[dict[str, Any]] = field(default_factory=list)
    contradictions: list[dict[str, Any]] = field(default_factory=list)
    model: dict[str, Any] = field(default_factory=dict)
    summarizable: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _counts(memories: list[Memory], trashed: int) -> dict[str, Any]:
    def tally(values: list[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in values:
            out[v] = out.get(v, 0) + 1
        return dict(sorted(out.items()))

    return {
        "live": len(memories),
        "trashed": trashed,
        "by_kind": tally([m.kind for m in memories]),
        "by_type": tally([m.type for m in memories]),
        "by_tier": tally([tier_of(m) for m in memories]),
    }


def _sink_now(hot: list[Memory], usage: int, now: float, policy: TierPolicy) -> list[str]:
    """The ids the next ``rebalance`` would move (same rule, simulated)."""
    budget = policy.budget_chars
    if usage > policy.hard * budget:
        goal: float | None = policy.target * budget
    elif usage > policy.soft * budget:
        goal = None
    else:
        return []
    out = []
    for memory in sorted(hot, key=lambda m: (value(m, now, policy), m.updated_at, m.id)):
        if memory.meta.get("pinned"):
            break
        out.append(memory.id)
        usage -= line_cost(memory)
        if goal is None or usage <= goal:
            break
    return out


def _store_of(engine: MemoryEngine, character: str, missing_ok: bool) -> Any:
    if not missing_ok or validate.character_id(character) in engine.stores:
        return engine.existing_store(character)
    e = engine.embedder  # an empty store, never registered: reading writes nothing
    return engine.new_store(character, stamp=e.stamp, model_id=e.model_id,
                            dimension=e.dimension)


def audit(
    engine: MemoryEngine,
    character: str,
    *,
    policy: TierPolicy | None = None,
    stale_days: float = 90.0,
    dedup_threshold: float = DEFAULT_THRESHOLD,
    summarize_after_days: float = 30.0,
    summarize_max_importance: float = 0.5,
    log: AuditLog | None = None,
    max_listed: int = 100,
    missing_ok: bool = False,
) -> AuditReport:
    """The character's tiers, duplicates, stale and superseded memories, and log events.
    ``missing_ok``: a character the caller knows of but the engine holds no memory of (the
    app names a character before its first one) gets the report of an empty store instead
    of UNKNOWN_CHARACTER."""
    policy = policy or TierPolicy()
    store = _store_of(engine, character, missing_ok)
    now = engine.now()
    memories = sorted(store.records.values(), key=lambda m: (m.created_at, m.id))
    hot = [m for m in memories if tier_of(m) == HOT]
    usage = sum(line_cost(m) for m in hot)
    budget = policy.budget_chars
    state = ("above hard" if usage > policy.hard * budget else
             "above soft" if usage > policy.soft * budget else "under soft")
    cold_entries = len(memories) - len(hot)
    cold = {"entries": cold_entries, "soft": policy.cold_soft_entries,
            "hard": policy.cold_hard_entries,
            "state": ("above hard" if cold_entries > policy.cold_hard_entries else
                      "above soft" if cold_entries > policy.cold_soft_entries else
                      "under soft")}
    sinking = set(_sink_now(hot, usage, now, policy))
    ranked = sorted(hot, key=lambda m: (value(m, now, policy), m.updated_at, m.id))
    next_to_sink = next((m.id for m in ranked if not m.meta.get("pinned")), None)

    entries = []
    for memory in sorted(hot, key=lambda m: (-value(m, now, policy), m.created_at, m.id)):
        v = value(memory, now, policy)
        why = (f"importance {memory.importance:.2f}, last used "
               f"{(now - max(memory.updated_at, memory.last_recalled_at or 0)) / DAY:.1f} "
               f"days ago, recalled {memory.recall_count}x")
        if memory.meta.get("pinned"):
            plan, reason = "keep (pinned)", "pinned: never sinks"
        elif memory.id in sinking:
            plan, reason = "sink now", f"hot tier {state} and among the least valuable ({why})"
        elif memory.id == next_to_sink:
            plan, reason = "next to sink", f"least valuable hot entry ({why})"
        else:
            plan, reason = "keep", why
        entries.append(HotEntry(
            id=memory.id, kind=memory.kind, type=memory.type, text=memory.text,
            age_days=round((now - memory.created_at) / DAY, 2),
            # pinned (worth +inf): null, as JSON has no infinity ("Infinity" broke every
            # strict reader of `audit --json` and of MCP's audit); its plan says pinned
            value=round(v, 4) if v != float("inf") else None, chars=line_cost(memory),
            plan=plan, reason=reason,
        ))

    stale = []
    for memory in memories:
        last_use = memory.last_recalled_at or memory.created_at
        days = (now - last_use) / DAY
        if days > stale_days:
            stale.append({"id": memory.id, "kind": memory.kind, "tier": tier_of(memory),
                          "text": memory.text,
                          "days_since_use": round(days, 1),
                          "never_recalled": memory.last_recalled_at is None})
    stale.sort(key=lambda s: -s["days_since_use"])

    superseded = []
    for entry in sorted(store.trash.values(), key=lambda t: (-t.trashed_at, t.memory.id)):
        old = entry.memory
        new_id = meta_fields.text_field(old.meta, SUPERSEDED_BY)
        if new_id is None:
            continue
        new = store.records.get(new_id)
        new_trashed = store.trash.get(new_id)
        current = new or (new_trashed.memory if new_trashed is not None else None)
        superseded.append({
            "old": {"id": old.id, "text": old.text, "kind": old.kind, "key": old.key,
                    "polarity": polarity_of(old), "trashed_at": entry.trashed_at},
            "new": {"id": new_id, "text": current.text if current else None,
                    "key": current.key if current else None,
                    "polarity": polarity_of(current) if current else None,
                    "live": new is not None},
            "reason": meta_fields.text_field(old.meta, "superseded_reason"),
            "contradiction": current is not None and polarity_of(current) != polarity_of(old),
        })
        if len(superseded) >= max_listed:
            break
    contradictions = [
        {"id": m.id, "key": m.key, "polarity": m.meta.get("polarity"),
         "history": meta_fields.entries(m.meta, "history")}
        for m in memories if meta_fields.entries(m.meta, "history")
    ]
    off_stamp = [m.id for m in memories if m.model != store.stamp]
    model = {
        "store": store.stamp,
        "selected": engine.embedder.stamp,
        "mismatch": store.stamp != engine.embedder.stamp and not store.is_empty(),
        "off_stamp_records": off_stamp[:max_listed],
    }
    duplicates = [
        {"ids": [a, b], "texts": [store.records[a].text, store.records[b].text],
         "reason": reason, "cosine": cos}
        for a, b, reason, cos in duplicate_pairs(store, dedup_threshold, max_listed)
    ]
    foldable = summary_candidates(engine, character, older_than_days=summarize_after_days,
                                  max_importance=summarize_max_importance)
    return AuditReport(
        character=character, at=now, counts=_counts(memories, len(store.trash)),
        hot=entries, hot_chars=usage, budget_chars=budget, hot_state=state, cold=cold,
        duplicates=duplicates, stale=stale[:max_listed], superseded=superseded,
        contradictions=contradictions,
        model=model, summarizable=len(foldable),
        events=[e.to_dict() for e in log.events(character)] if log is not None else [],
        quarantined=sorted((q for q in engine.quarantine.values()
                            if q["character_id"] == character), key=lambda q: q["id"]),
    )
