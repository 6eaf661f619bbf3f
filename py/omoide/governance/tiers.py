"""Hot and cold tiers: what is always in the character's context, and what waits for recall.

Every memory lives in the character's store, which is the cold tier: indexed, searchable by
``recall``. The hot tier is the small set that is ALWAYS put into the prompt (preferences,
habits, rules, anything important); membership is ``meta["tier"] == "hot"``.

Budget (characters of the formatted hot block, default 5,000): above ``soft`` (60%) one
overflow pass demotes the single least valuable hot memory; above ``hard`` (80%) overflow
continues until usage is at or under ``target`` (40%). A write is never refused for room.

Value of a hot memory (lower sinks first; pinned memories never sink)::

    value = 0.60 * importance
          + 0.25 * 0.5 ** (age_days / half_life_days)   # recency, age since last update/recall
          + 0.15 * (1 - 1 / (1 + recall_count))         # 0, .5, .67, .75 ... saturating use

Demotion is two record writes, cold first: (1) write the cold record (``meta["cold"]`` with
when/why/value) while the memory is still hot, (2) only then clear the hot flag. If (2) fails
the memory is in both tiers, never in neither; the next ``rebalance`` finishes the move.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine.memory import Memory
from omoide.errors import OmoideError
from omoide.governance.log import AuditLog

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

HOT, COLD = "hot", "cold"
DAY = 86_400.0


@dataclass(frozen=True)
class TierPolicy:
    budget_chars: int = 5_000
    soft: float = 0.6
    hard: float = 0.8
    target: float = 0.4
    half_life_days: float = 30.0
    w_importance: float = 0.60
    w_recency: float = 0.25
    w_recall: float = 0.15
    hot_kinds: tuple[str, ...] = ("preference", "pattern")
    hot_importance: float = 0.8  # any kind at or above this starts hot (rules, key facts)

    def __post_init__(self) -> None:
        if self.budget_chars <= 0 or not 0 < self.target < self.soft < self.hard <= 1:
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="tier policy",
                reason="need budget_chars > 0 and 0 < target < soft < hard <= 1",
            )


@dataclass
class RebalanceReport:
    character: str
    trigger: str  # "none" | "soft" | "hard"
    before_chars: int
    after_chars: int
    budget_chars: int
    moved: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)  # half-done moves finished first
    failed: str | None = None  # why a move stopped half-way (nothing lost; see module doc)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def tier_of(memory: Memory) -> str:
    return HOT if memory.meta.get("tier") == HOT else COLD


def initial_tier(kind: str, importance: float, policy: TierPolicy) -> str:
    return HOT if kind in policy.hot_kinds or importance >= policy.hot_importance else COLD


def value(memory: Memory, now: float, policy: TierPolicy) -> float:
    """See the module docstring; pinned memories are worth +inf."""
    if memory.meta.get("pinned"):
        return float("inf")
    last = max(memory.updated_at, memory.last_recalled_at or 0.0)
    age_days = max(0.0, now - last) / DAY
    recency = 0.5 ** (age_days / policy.half_life_days)
    use = 1.0 - 1.0 / (1.0 + memory.recall_count)
    return (policy.w_importance * memory.importance + policy.w_recency * recency
            + policy.w_recall * use)


def format_line(memory: Memory) -> str:
    return f"- [{memory.kind}] {memory.text}"


def line_cost(memory: Memory) -> int:
    return len(format_line(memory)) + 1  # + newline


def hot_memories(engine: MemoryEngine, character: str) -> list[Memory]:
    store = engine.stores.get(character)
    if store is None:
        return []
    return [m for m in store.records.values() if tier_of(m) == HOT]


def hot_usage(engine: MemoryEngine, character: str) -> int:
    return sum(line_cost(m) for m in hot_memories(engine, character))


def _sink_order(memories: list[Memory], now: float, policy: TierPolicy) -> list[Memory]:
    """Least valuable first; ties: least recently updated, then id (deterministic)."""
    return sorted(memories, key=lambda m: (value(m, now, policy), m.updated_at, m.id))


def _put_meta(engine: MemoryEngine, character: str, memory: Memory, meta: dict) -> Memory:
    new = dataclasses.replace(memory, meta=meta)
    engine.existing_store(character).put(new, None)  # record-only: no re-embedding
    return new


def demote(
    engine: MemoryEngine,
    character: str,
    memory: Memory,
    *,
    reason: str,
    now: float,
    policy: TierPolicy,
) -> Memory:
    """Hot -> cold in two writes, cold first (raises whatever a write raised)."""
    if "cold" not in memory.meta:
        cold = {"since": now, "reason": reason, "value": round(value(memory, now, policy), 4)}
        memory = _put_meta(engine, character, memory, {**memory.meta, "cold": cold})
    return _put_meta(engine, character, memory, {**memory.meta, "tier": COLD})


def promote(
    engine: MemoryEngine,
    character: str,
    memory_id: str,
    *,
    pin: bool = False,
    log: AuditLog | None = None,
) -> Memory:
    """Cold -> hot (``pin``: never sinks). The overflow rules apply at the next rebalance."""
    memory = engine.get(character, memory_id)
    meta = {k: v for k, v in memory.meta.items() if k != "cold"}
    meta["tier"] = HOT
    if pin:
        meta["pinned"] = True
    memory = _put_meta(engine, character, memory, meta)
    if log is not None:
        log.record(engine.now(), character, "promoted", [memory_id],
                   "pinned by the user" if pin else "promoted by the user")
    return memory


def rebalance(
    engine: MemoryEngine,
    character: str,
    policy: TierPolicy | None = None,
    *,
    log: AuditLog | None = None,
) -> RebalanceReport:
    policy = policy or TierPolicy()
    now = engine.now()
    hot = hot_memories(engine, character)
    before = sum(line_cost(m) for m in hot)
    report = RebalanceReport(character, "none", before, before, policy.budget_chars)
    try:
        # A move interrupted between its two writes is finished before anything else.
        for memory in [m for m in hot if "cold" in m.meta]:
            demote(engine, character, memory, reason=memory.meta["cold"]["reason"], now=now,
                   policy=policy)
            report.completed.append(memory.id)
            report.after_chars -= line_cost(memory)
        usage = report.after_chars
        budget = policy.budget_chars
        if usage > policy.hard * budget:
            report.trigger, goal = "hard", policy.target * budget
        elif usage > policy.soft * budget:
            report.trigger, goal = "soft", None
        else:
            return report
        remaining = [m for m in hot if m.id not in report.completed]
        for memory in _sink_order(remaining, now, policy):
            if memory.meta.get("pinned"):
                break  # sorted last: nothing below can sink either
            reason = (f"hot tier at {usage}/{budget} chars (> {report.trigger} "
                      f"{getattr(policy, report.trigger):.0%}); least valuable")
            demote(engine, character, memory, reason=reason, now=now, policy=policy)
            usage -= line_cost(memory)
            report.moved.append(memory.id)
            report.after_chars = usage
            if log is not None:
                log.record(now, character, "demoted", [memory.id], reason,
                           value=round(value(memory, now, policy), 4))
            if goal is None or usage <= goal:
                break
    except Exception as e:  # a vetoed write (quota, I/O): stop, lose nothing, say why
        report.failed = f"{type(e).__name__}: {e}"
        report.after_chars = hot_usage(engine, character)
        if log is not None:
            log.record(now, character, "tier_failed", [], report.failed)
    return report


def hot_context(engine: MemoryEngine, character: str, policy: TierPolicy | None = None) -> str:
    """The hot block for a prompt: most valuable first, never longer than the budget."""
    policy = policy or TierPolicy()
    lines, used = [], 0
    now = engine.now()
    for memory in sorted(hot_memories(engine, character),
                         key=lambda m: (-value(m, now, policy), m.created_at, m.id)):
        cost = line_cost(memory)
        if used + cost > policy.budget_chars:
            continue  # a smaller, less valuable line may still fit
        lines.append(format_line(memory))
        used += cost
    return "\n".join(lines)


@dataclass
class ContextBlock:
    text: str
    hot_ids: list[str]
    recalled_ids: list[str]
    chars: int


def context(
    engine: MemoryEngine,
    character: str,
    query: str | None,
    budget_chars: int = 6_000,
    *,
    k: int = 8,
    policy: TierPolicy | None = None,
) -> ContextBlock:
    """What a chat app injects each turn: the hot block, then the best recalled memories not
    already in it, all within ``budget_chars``."""
    policy = policy or TierPolicy()
    now = engine.now()
    lines: list[str] = []
    hot_ids: list[str] = []
    recalled: list[str] = []
    used = 0
    hot = sorted(hot_memories(engine, character),
                 key=lambda m: (-value(m, now, policy), m.created_at, m.id))
    seen_text = set()
    for memory in hot:
        cost = line_cost(memory)
        if used + cost <= budget_chars and memory.text not in seen_text:
            lines.append(format_line(memory))
            hot_ids.append(memory.id)
            seen_text.add(memory.text)
            used += cost
    if query and query.strip() and character in engine.stores:
        for hit in engine.recall(character, query, k=k):
            memory = hit.memory
            if tier_of(memory) == HOT or memory.text in seen_text:
                continue  # deduplicated: already in the block
            cost = line_cost(memory)
            if used + cost > budget_chars:
                continue
            lines.append(format_line(memory))
            recalled.append(memory.id)
            seen_text.add(memory.text)
            used += cost
    return ContextBlock("\n".join(lines), hot_ids, recalled, used)
