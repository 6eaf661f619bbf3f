"""``summarize``: fold old, low-importance episodic memories into one summary per day/session.

Candidates: live episodic memories (decisions, diary notes; never summaries), importance at
most ``max_importance``, not hot, not pinned, and untouched (no update, no recall) for
``older_than_days``. They are grouped by ``meta["session"]`` (``group_by="session"``, falling
back to the day) or by UTC day; a group needs ``min_group`` members.

Dry run (the default) only previews: groups, sources, token counts and the exact text that
would be written. Applying writes the summary memory first (kind "summary", cold tier,
``meta["sources"]`` = the source ids) and only then moves the sources to the trash, where
``engine.restore`` revives them. Nothing is hard-deleted.

Extractive summary (no LLM, deterministic): a header, then one ``[kind] text`` line per
source, most important first chosen to fit ``token_budget``, shown in time order, each line
compressed to 160 characters; ``(+N more)`` says what did not fit. With an LLM the refiner's
summarizer writes it; if the endpoint fails, the extractive summary is used and the report
says why. Tokens are estimated as ASCII characters / 4 + one per other character (a CJK
character is about one token in common tokenizers).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine.memory import Memory
from omoide.errors import OmoideError
from omoide.governance.llm import MemoryLLM
from omoide.governance.log import AuditLog
from omoide.governance.tiers import COLD, tier_of

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

DAY = 86_400.0
LINE_CHARS = 160


def estimate_tokens(text: str) -> int:
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def compress_line(memory: Memory) -> str:
    text = " ".join(memory.text.split())
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1].rstrip() + "…"
    return f"[{memory.kind}] {text}"


@dataclass
class SummaryGroup:
    group: str  # "day:2023-11-14" or "session:<id>"
    source_ids: list[str]
    start: float
    end: float
    tokens_before: int
    text: str
    tokens_after: int
    method: str  # "extractive" | "llm"
    summary_id: str | None = None  # set when applied
    trashed: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class SummaryReport:
    character: str
    dry_run: bool
    older_than_days: float
    groups: list[SummaryGroup] = field(default_factory=list)
    degraded: str | None = None  # why the LLM summary was not used

    @property
    def candidates(self) -> int:
        return sum(len(g.source_ids) for g in self.groups)

    @property
    def tokens_before(self) -> int:
        return sum(g.tokens_before for g in self.groups)

    @property
    def tokens_after(self) -> int:
        return sum(g.tokens_after for g in self.groups)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {
            "candidates": self.candidates, "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        }


def extractive_summary(group: str, memories: list[Memory], token_budget: int) -> str:
    header = f"Summary of {group.split(':', 1)[1]} ({len(memories)} memories):"
    used = estimate_tokens(header)
    chosen: list[Memory] = []
    seen: set[str] = set()
    for memory in sorted(memories, key=lambda m: (-m.importance, m.created_at, m.id)):
        line = compress_line(memory)
        if line in seen:
            chosen.append(memory)  # an exact repeat costs nothing and hides nothing
            continue
        cost = estimate_tokens(line) + 1
        if used + cost > token_budget and seen:
            continue
        seen.add(line)
        chosen.append(memory)
        used += cost
    lines, emitted = [header], set()
    for memory in sorted(chosen, key=lambda m: (m.created_at, m.id)):
        line = compress_line(memory)
        if line not in emitted:
            lines.append(line)
            emitted.add(line)
    missing = len(memories) - len(chosen)
    if missing:
        lines.append(f"(+{missing} more)")
    return "\n".join(lines)


def candidates(
    engine: MemoryEngine,
    character: str,
    *,
    older_than_days: float,
    max_importance: float,
    kinds: Iterable[str] | None = None,
) -> list[Memory]:
    store = engine.stores.get(character)
    if store is None:
        return []
    cutoff = engine.now() - older_than_days * DAY
    wanted = set(kinds) if kinds is not None else None
    return sorted(
        (
            m for m in store.records.values()
            if m.type == "episodic" and m.kind != "summary"
            and (wanted is None or m.kind in wanted)
            and m.importance <= max_importance
            and tier_of(m) == COLD and not m.meta.get("pinned")
            and max(m.updated_at, m.last_recalled_at or 0.0) < cutoff
        ),
        key=lambda m: (m.created_at, m.id),
    )


def _group_of(memory: Memory, group_by: str) -> str:
    session = memory.meta.get("session")
    if group_by == "session" and isinstance(session, str) and session:
        return f"session:{session}"
    return "day:" + time.strftime("%Y-%m-%d", time.gmtime(memory.created_at))


def summarize(
    engine: MemoryEngine,
    character: str,
    *,
    older_than_days: float = 30.0,
    max_importance: float = 0.5,
    kinds: Iterable[str] | None = None,
    group_by: str = "day",
    min_group: int = 2,
    token_budget: int = 200,
    dry_run: bool = True,
    llm: MemoryLLM | None = None,
    log: AuditLog | None = None,
) -> SummaryReport:
    if group_by not in ("day", "session"):
        raise OmoideError.of("INVALID_ARGUMENT", name="group_by", reason="'day' or 'session'")
    if older_than_days < 0 or token_budget < 20 or min_group < 2:
        raise OmoideError.of("INVALID_ARGUMENT", name="summarize",
                             reason="older_than_days >= 0, token_budget >= 20, min_group >= 2")
    report = SummaryReport(character, dry_run, older_than_days)
    groups: dict[str, list[Memory]] = {}
    for memory in candidates(engine, character, older_than_days=older_than_days,
                             max_importance=max_importance, kinds=kinds):
        groups.setdefault(_group_of(memory, group_by), []).append(memory)
    for name, members in sorted(groups.items()):
        if len(members) < min_group:
            continue
        text, method = extractive_summary(name, members, token_budget), "extractive"
        if llm is not None and report.degraded is None:
            try:
                written = llm.summarize([compress_line(m) for m in members], token_budget)
                text, method = written[: engine.max_text_length], "llm"
            except OmoideError as e:  # keep going without it, and say why
                report.degraded = f"{e.code}: {e}; used the extractive summary"
        report.groups.append(SummaryGroup(
            group=name, source_ids=[m.id for m in members],
            start=members[0].created_at, end=members[-1].created_at,
            tokens_before=sum(estimate_tokens(m.text) for m in members),
            text=text, tokens_after=estimate_tokens(text), method=method,
        ))
    if dry_run:
        return report
    for group in report.groups:
        _apply(engine, character, group, log)
    return report


def _apply(engine: MemoryEngine, character: str, group: SummaryGroup,
           log: AuditLog | None) -> None:
    members = [engine.get(character, i) for i in group.source_ids]
    try:
        summary = engine.remember(
            character, group.text, kind="summary",
            importance=max(m.importance for m in members),
            meta={"sources": list(group.source_ids), "period": [group.start, group.end],
                  "group": group.group, "method": group.method, "tier": COLD},
        )
    except Exception as e:  # nothing written, nothing trashed
        group.error = f"summary not written ({type(e).__name__}: {e}); sources kept"
        return
    group.summary_id = summary.id
    try:
        for memory_id in group.source_ids:  # only after the summary exists
            engine.forget(character, memory_id)
            group.trashed.append(memory_id)
    except Exception as e:  # the rest stay live: duplicated in the summary, never lost
        group.error = f"stopped trashing sources ({type(e).__name__}: {e})"
    if log is not None:
        log.record(engine.now(), character, "summarized", [summary.id, *group.trashed],
                   f"{len(group.trashed)} old low-importance memories of {group.group}",
                   tokens_before=group.tokens_before, tokens_after=group.tokens_after,
                   method=group.method)
