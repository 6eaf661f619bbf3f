"""Hot and cold tiers: what is always in the character's context, and what waits for recall.

Every memory lives in the character's store, which is the cold tier: indexed, searchable by
``recall``. The hot tier is the small set that is ALWAYS put into the prompt (preferences,
habits, rules, anything important); membership is ``meta["tier"] == "hot"``. The store's
``tier`` index (``CharacterStore.index``) keeps the hot ids, so counting either tier on a
write never scans the store.

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

Cold tier maintenance (``maintain_cold``): the cold tier has entry limits per character,
``cold_soft_entries`` (default 6,000) and ``cold_hard_entries`` (10,000). Above soft, one
maintenance pass; above hard, passes until the cold count is at or under soft (or a pass
finds nothing more to fold). A pass

1. drops SUPERSEDED entries: of the live memories sharing a kind and key, the most recently
   updated one is the current truth; each older cold one is folded into it (a polarity that
   changed goes to its ``meta["history"]`` as a contradiction; otherwise the merge counter
   grows) and moved to the trash as its history (``engine.supersede``: ``superseded_by``);
2. merges DUPLICATES: near-identical pairs ``dedup.duplicate_pairs`` lists (same kind,
   compatible keys, cosine >= the dedup threshold); the survivor is the hot one if there is
   one, else the more recently updated one; it takes the max importance, the summed recall
   count and merge counters, and the folded id; the other goes to the trash as its history.

Survivor first, trash second: if the trash move fails the fact is in two records, never in
none. Nothing is hard-deleted (``purge_expired`` decides when the trash is emptied), a hot
entry is never trashed by maintenance, and every fold is in the audit log. ``rebalance``
runs the pass automatically when the cold count is above soft and has grown by at least
``cold_recheck_entries`` since the last pass on that store (so a tier with nothing to fold
is not rescanned on every write).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine.memory import Memory
from omoide.engine.supersede import linked, retire
from omoide.errors import OmoideError
from omoide.governance import meta_fields
from omoide.governance.dedup import (
    DEFAULT_THRESHOLD,
    MAX_HISTORY,
    duplicate_pairs,
    says_nothing_more,
)
from omoide.governance.log import AuditLog

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine
    from omoide.engine.store import CharacterStore

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
    cold_soft_entries: int = 6_000  # above: one maintenance pass
    cold_hard_entries: int = 10_000  # above: passes until at or under soft
    cold_recheck_entries: int = 250  # growth needed before rebalance rescans the cold tier

    def __post_init__(self) -> None:
        if self.budget_chars <= 0 or not 0 < self.target < self.soft < self.hard <= 1:
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="tier policy",
                reason="need budget_chars > 0 and 0 < target < soft < hard <= 1",
            )
        if not 0 < self.cold_soft_entries < self.cold_hard_entries or (
                self.cold_recheck_entries < 0):
            raise OmoideError.of(
                "INVALID_ARGUMENT", name="tier policy",
                reason="need 0 < cold_soft_entries < cold_hard_entries and "
                       "cold_recheck_entries >= 0",
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
    cold: ColdReport | None = None  # the cold maintenance pass, when one ran

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def tier_of(memory: Memory) -> str:
    return HOT if memory.peek("meta").get("tier") == HOT else COLD  # the memory stays unmade


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


def hot_ids(store: CharacterStore) -> set[str]:
    """The hot tier's ids from the store's tier index (kept by every write: no scan)."""
    return store.index("tier", tier_of).get(HOT, set())


def hot_memories(engine: MemoryEngine, character: str) -> list[Memory]:
    """The hot tier, oldest first."""
    store = engine.stores.get(character)
    if store is None:
        return []
    return sorted((store.records[i] for i in hot_ids(store)),
                  key=lambda m: (m.created_at, m.id))


def hot_usage(engine: MemoryEngine, character: str) -> int:
    return sum(line_cost(m) for m in hot_memories(engine, character))


def _sink_order(memories: list[Memory], now: float, policy: TierPolicy) -> list[Memory]:
    """Least valuable first; ties: least recently updated, then id (deterministic)."""
    return sorted(memories, key=lambda m: (value(m, now, policy), m.updated_at, m.id))


def _put_meta(engine: MemoryEngine, character: str, memory: Memory, meta: dict) -> Memory:
    new = dataclasses.replace(memory, meta=meta)
    return engine.existing_store(character).put(new, None)  # record-only: no re-embedding


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
    dedup_threshold: float = DEFAULT_THRESHOLD,
) -> RebalanceReport:
    """Hot overflow (see the module doc), then the cold maintenance pass when it is due."""
    policy = policy or TierPolicy()
    report = _overflow_hot(engine, character, policy, log)
    store = engine.stores.get(character)
    if report.failed is None and store is not None and _cold_due(store, policy):
        report.cold = maintain_cold(engine, character, policy, log=log,
                                    dedup_threshold=dedup_threshold)
    return report


def _overflow_hot(
    engine: MemoryEngine, character: str, policy: TierPolicy, log: AuditLog | None
) -> RebalanceReport:
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


# -- cold tier maintenance -----------------------------------------------------------------

# Per store, (cold count left by the last maintenance, when it started): this process only;
# a restarted app does one full scan at its first maintenance, which is harmless.
_LAST_COLD: weakref.WeakKeyDictionary[CharacterStore, tuple[int, float]] = (
    weakref.WeakKeyDictionary())


@dataclass
class ColdReport:
    character: str
    trigger: str  # "none" | "soft" | "hard" | "forced"
    before: int  # live cold entries
    after: int
    soft: int
    hard: int
    passes: int = 0
    superseded: list[dict[str, Any]] = field(default_factory=list)  # kept, trashed, key, why
    merged: list[dict[str, Any]] = field(default_factory=list)  # kept, trashed, cosine
    skipped: list[dict[str, Any]] = field(default_factory=list)  # folds refused (hot entries)
    failed: str | None = None  # why a pass stopped (nothing lost; see the module doc)

    @property
    def trashed(self) -> list[str]:
        return [f["trashed"] for f in self.superseded + self.merged]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"trashed": self.trashed}


def cold_count(engine: MemoryEngine, character: str) -> int:
    store = engine.stores.get(character)
    if store is None:
        return 0
    return len(store.records) - len(hot_ids(store))


def _cold_due(store: CharacterStore, policy: TierPolicy) -> bool:
    count = len(store.records) - len(hot_ids(store))
    if count <= policy.cold_soft_entries:
        return False
    last = _LAST_COLD.get(store)
    return last is None or count >= last[0] + policy.cold_recheck_entries


def maintain_cold(
    engine: MemoryEngine,
    character: str,
    policy: TierPolicy | None = None,
    *,
    log: AuditLog | None = None,
    dedup_threshold: float = DEFAULT_THRESHOLD,
    force: bool = False,
) -> ColdReport:
    """The cold maintenance pass (see the module doc). Runs when the cold count is above
    ``cold_soft_entries`` (one pass) or ``cold_hard_entries`` (passes until at or under
    soft); ``force``: one pass whatever the count, with a full scan.

    Superseded entries are looked for in the whole store every pass (a dict by key). The
    near-identical scan is incremental: from the entries written or moved to cold since the
    previous maintenance of this store (the first one in a process, and a forced one, scan
    everything), and in a further pass from the survivors the previous pass changed."""
    policy = policy or TierPolicy()
    count = cold_count(engine, character)
    report = ColdReport(character, "none", count, count, policy.cold_soft_entries,
                        policy.cold_hard_entries)
    if count > policy.cold_hard_entries:
        report.trigger = "hard"
    elif count > policy.cold_soft_entries:
        report.trigger = "soft"
    elif force:
        report.trigger = "forced"
    else:
        return report
    store = engine.existing_store(character)
    now = engine.now()
    last = _LAST_COLD.get(store)
    scan: set[str] | None = None
    if last is not None and not force:
        scan = {m.id for m in store.records.values() if m.updated_at >= last[1]
                or (m.meta.get("cold") or {}).get("since", float("-inf")) >= last[1]}
    while True:
        report.passes += 1
        try:
            scan = _cold_pass(engine, character, store, now, dedup_threshold, report, log,
                              scan)
            folded = len(scan)
        except Exception as e:  # a vetoed write: stop, lose nothing, say why
            report.failed = f"{type(e).__name__}: {e}"
            if log is not None:
                log.record(now, character, "tier_failed", [], f"cold maintenance: {report.failed}")
            break
        report.after = cold_count(engine, character)
        if report.trigger != "hard" or not folded or report.after <= policy.cold_soft_entries:
            break
    report.after = cold_count(engine, character)
    _LAST_COLD[store] = (report.after, now)
    if log is not None:
        log.record(now, character, "cold_maintenance", report.trashed,
                   f"cold tier at {report.before} entries ({report.trigger}: soft "
                   f"{policy.cold_soft_entries}, hard {policy.cold_hard_entries}); "
                   f"{len(report.superseded)} superseded, {len(report.merged)} duplicates "
                   f"merged, {report.after} left",
                   passes=report.passes, failed=report.failed)
    return report


def _until(entry: Any) -> float:
    """When a history entry ended (0 for an entry the user wrote in another shape)."""
    until = entry.get("until") if isinstance(entry, dict) else None
    return float(until) if type(until) in (int, float) else 0.0


def _day(memory: Memory) -> int:
    return int(memory.created_at // 86_400)


def _fold(engine: MemoryEngine, character: str, kept: Memory, gone: Memory, now: float,
          *, contradiction: bool, reason: str, duplicate: bool = False) -> None:
    """Survivor first (record-only write), then the other record to the trash as its
    history (``engine.supersede``: restorable, listed by the audit). ``duplicate``: a
    near-identical note, not a replaced version: it goes to the trash as merged into the
    survivor (``merged_into``, as an ingest merge), so restoring it leaves both live (as a
    version, its restore retired the survivor, whose text was then purged)."""
    meta: dict[str, Any] = dict(kept.meta)
    meta["merges"] = (meta_fields.count(meta, "merges") + 1
                      + meta_fields.count(gone.meta, "merges"))
    if contradiction:
        history = meta_fields.entries(meta, "history")
        history.append({"polarity": gone.meta.get("polarity"), "text": gone.text,
                        "since": gone.updated_at, "until": kept.updated_at})
        history.sort(key=_until)
        meta["history"] = history[-MAX_HISTORY:]
    folded = meta_fields.entries(meta, "folded")
    folded.append({"id": gone.id, "text": gone.text, "at": now})
    meta["folded"] = folded[-MAX_HISTORY:]
    last = [t for t in (kept.last_recalled_at, gone.last_recalled_at) if t is not None]
    store = engine.existing_store(character)
    survivor = dataclasses.replace(
        kept,
        importance=max(kept.importance, gone.importance),
        recall_count=kept.recall_count + gone.recall_count,
        last_recalled_at=max(last) if last else None,
        key=kept.key or gone.key,
        meta=meta,
    )
    if duplicate:
        store.put(survivor, None)
        store.put(dataclasses.replace(gone, meta={**gone.meta, "merged_into": kept.id,
                                                  "merged_reason": reason}), None)
        store.move_to_trash(gone.id, now)
        return
    store.put(linked(survivor, [gone.id]), None)
    retire(store, gone.id, kept.id, now, reason)


def _cold_pass(engine: MemoryEngine, character: str, store: CharacterStore, now: float,
               threshold: float, report: ColdReport, log: AuditLog | None,
               scan: set[str] | None) -> set[str]:
    """One pass; returns the ids of the survivors it changed (empty: nothing folded)."""
    changed: set[str] = set()
    # 1. superseded: older entries of a (kind, key) whose newest entry replaced them
    groups: dict[tuple[str, str], list[Memory]] = {}
    for memory in store.records.values():
        if memory.key is not None:
            groups.setdefault((memory.kind, memory.key), []).append(memory)
    for (_, key), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        members.sort(key=lambda m: (m.updated_at, m.id))
        newest = members[-1]
        for old in members[:-1]:
            if tier_of(old) == HOT:
                report.skipped.append({"id": old.id, "kept": newest.id,
                                       "reason": f"superseded on {key} but hot"})
                continue
            kept = store.records[newest.id]
            flipped = (old.meta.get("polarity") is not None
                       and kept.meta.get("polarity") is not None
                       and old.meta["polarity"] != kept.meta["polarity"])
            why = (f"polarity {old.meta['polarity']} -> {kept.meta['polarity']}" if flipped
                   else "content replaced")
            _fold(engine, character, kept, old, now, contradiction=flipped,
                  reason=f"cold maintenance: {key}: {why}")
            changed.add(kept.id)
            report.superseded.append({"kept": kept.id, "trashed": old.id, "key": key,
                                      "reason": why})
            if log is not None:
                log.record(now, character, "superseded", [old.id, kept.id],
                           f"{key}: {why}; older entry to the trash", text=old.text)
    # 2. near-identical duplicates (same kind, compatible keys, cosine >= threshold)
    pairs = duplicate_pairs(store, threshold, limit=4 * len(store.records) + 1,
                            only=None if scan is None else scan | changed)
    for a_id, b_id, reason, cosine in pairs:
        if reason != "near-identical" or a_id not in store.records or b_id not in store.records:
            continue  # same-key pairs were step 1; a record already folded this pass
        a, b = store.records[a_id], store.records[b_id]
        hot_a, hot_b = tier_of(a) == HOT, tier_of(b) == HOT
        if hot_a and hot_b:
            continue  # the hot tier is not maintenance's business
        if a.meta.get("pinned") is True or b.meta.get("pinned") is True:
            continue  # the user's pin, whatever the tier
        if a.kind == b.kind == "diary" and _day(a) != _day(b):
            continue  # the same walk on two days: two days (a fold lost the older date)
        if hot_a != hot_b:
            kept, gone = (a, b) if hot_a else (b, a)
        else:
            gone, kept = sorted((a, b), key=lambda m: (m.updated_at, m.id))
            if not says_nothing_more(gone.text, kept.text):
                kept, gone = gone, kept  # the one that says more survives
        if not says_nothing_more(gone.text, kept.text):
            continue  # each says something the other does not: two notes
        _fold(engine, character, kept, gone, now, contradiction=False,
              reason=f"cold maintenance: near-identical (cosine {cosine})", duplicate=True)
        changed.add(kept.id)
        report.merged.append({"kept": kept.id, "trashed": gone.id, "cosine": cosine})
        if log is not None:
            log.record(now, character, "cold_merged", [gone.id, kept.id],
                       f"near-identical (cosine {cosine}); duplicate to the trash",
                       text=gone.text)
    return changed


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
    line: Callable[[Memory], str] = format_line,
    cost: Callable[[str], int] = len,
) -> ContextBlock:
    """What a chat app injects each turn: the hot block, then the best recalled memories not
    already in it, all within ``budget_chars``. ``line`` formats a memory; ``cost`` measures a
    line in the budget's unit (characters by default; tokens for ``governance.prompt``)."""
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
        text = line(memory)
        spent = cost(text) + 1  # + newline
        if used + spent <= budget_chars and memory.text not in seen_text:
            lines.append(text)
            hot_ids.append(memory.id)
            seen_text.add(memory.text)
            used += spent
    if query and query.strip() and character in engine.stores:
        for hit in engine.recall(character, query, k=k):
            memory = hit.memory
            if tier_of(memory) == HOT or memory.text in seen_text:
                continue  # deduplicated: already in the block
            text = line(memory)
            spent = cost(text) + 1
            if used + spent > budget_chars:
                continue
            lines.append(text)
            recalled.append(memory.id)
            seen_text.add(memory.text)
            used += spent
    return ContextBlock("\n".join(lines), hot_ids, recalled, used)
