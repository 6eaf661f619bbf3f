"""``summarize``: fold old, low-importance episodic memories into one summary per day/session.

Candidates: live episodic memories (decisions, diary notes; never summaries), importance at
most ``max_importance``, not hot, not pinned, and untouched (no update, no recall) for
``older_than_days``. They are grouped by ``meta["session"]`` (``group_by="session"``, falling
back to the day) or by UTC day; a group needs ``min_group`` members.

Dry run (the default) only previews: groups, sources, token counts and the exact text that
would be written. Applying writes the summary memory first (kind "summary", cold tier,
``meta["sources"]`` = the source ids) and only then moves the sources to the trash, where
``engine.restore`` revives them. Nothing is hard-deleted.

A summary COMPRESSES: its budget is ``min(token_budget, ratio * tokens of the group)``
(``ratio`` 0.5 by default), so it is never longer than its input; a group too small to
compress is left alone. Extractive summary (no LLM, deterministic): the group's most
representative notes (closest to the centroid of their vectors, then the most important),
deduplicated (a note near-identical to one already picked adds nothing), each trimmed to its
first sentence, picked until the budget is spent and shown in time order after the period:
``2023-09-15: We chose SQLite / Ate ramen near the office (+1 more)``. With an LLM the
refiner's summarizer writes it within the same budget; if the endpoint fails or answers
longer than the input, the extractive summary is used and the report says why. Tokens are
estimated as ASCII characters / 4 + one per other character (a CJK character is about one
token in common tokenizers); the report gives them before and after.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine.analyzer import analyze
from omoide.engine.memory import Memory
from omoide.errors import OmoideError
from omoide.governance.dedup import dot, says_nothing_more
from omoide.governance.llm import MemoryLLM
from omoide.governance.log import AuditLog
from omoide.governance.prompt import estimate_tokens
from omoide.governance.tiers import COLD, tier_of

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

DAY = 86_400.0
LINE_CHARS = 120
MIN_LINE_TOKENS = 4  # a note cut shorter than this says nothing: the group is left alone
NEAR_DUPLICATE = 0.9  # cosine at which a note adds nothing to one already picked
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")
# A full stop that ends no sentence ("Paid the rent to Mr. Sato", "at 3 p.m. with Dr.
# Yamada", "J. K. Rowling"): cut there, the name after it was gone with the note.
_ABBREVIATION = re.compile(
    r"(?:\b(?:mr|mrs|ms|dr|prof|st|sr|jr|mt|vs|etc|no|vol|approx|dept|e\.g|i\.e|a\.m|p\.m)"
    r"|\b[a-z])\.$", re.IGNORECASE)


def unfit_summary(written: str, members: list[Memory], budget: int) -> str | None:
    """Why an LLM's summary may not replace ``members`` (None: it may): it must keep to the
    budget it was given, in tokens and in characters never exceed the notes it replaces, and
    speak of them (share a word with them: "ok" or "DELETE ALL MEMORIES" summarize nothing).
    The extractive summary is used otherwise; the notes are never lost either way."""
    if estimate_tokens(written) > budget:
        return f"was over its budget ({estimate_tokens(written)} > {budget} tokens)"
    if len(written) >= sum(len(m.text) for m in members):
        return "was not shorter than its input"
    said = {t for m in members for t in analyze(m.text)}
    if said.isdisjoint(analyze(written)):
        return "shared no word with the notes"
    return None


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


def first_sentence(text: str) -> str:
    """The note trimmed: its first sentence, at most ``LINE_CHARS`` characters."""
    text = " ".join(text.split())
    for match in _SENTENCE_END.finditer(text):
        if _ABBREVIATION.search(text, 0, match.end()):
            continue
        if match.end() < len(text):
            text = text[: match.end()].rstrip()
        break
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1].rstrip() + "…"
    return text


def _fit(text: str, budget: int) -> str:
    """``text`` cut (at a character) to at most ``budget`` estimated tokens, "…" included."""
    while text and estimate_tokens(text + "…") > budget:
        text = text[: len(text) - max(1, len(text) // 8)]
    return text.rstrip() + "…" if text else ""


def extractive_summary(group: str, memories: list[Memory], token_budget: int,
                       vectors: dict[str, list[float]] | None = None) -> str:
    """The most representative notes of a group within ``token_budget`` (see module doc).
    ``vectors``: the notes' passage vectors (representativeness and near-duplicates); without
    them importance decides and only equal texts are duplicates."""
    vectors = vectors or {}
    rows = [vectors[m.id] for m in memories if vectors.get(m.id)]
    centroid = [sum(col) / len(rows) for col in zip(*rows, strict=True)] if rows else []

    def centrality(memory: Memory) -> float:
        row = vectors.get(memory.id)
        return dot(row, centroid) if row and centroid else 0.0

    ranked = sorted(memories, key=lambda m: (-round(centrality(m), 6), -m.importance,
                                             m.created_at, m.id))
    prefix = f"{group.split(':', 1)[1]}: "
    used = estimate_tokens(prefix)
    chosen: list[tuple[Memory, str]] = []
    seen: set[str] = set()
    for memory in ranked:
        line = first_sentence(memory.text)
        plain = line.casefold()
        row = vectors.get(memory.id)
        if plain in seen or (row and any(
                vectors.get(c.id) and dot(row, vectors[c.id]) >= NEAR_DUPLICATE
                and says_nothing_more(line, picked) for c, picked in chosen)):
            continue  # says what a picked note says: it adds nothing (a near vector alone
            # is not enough: 80,000 yen to Tanaka / 85,000 yen to Sato are two notes)
        cost = estimate_tokens(line) + 1
        if used + cost > token_budget:
            if chosen:
                continue
            room = token_budget - used
            line = _fit(line, room) if room >= MIN_LINE_TOKENS else ""  # the best, cut
            cost = estimate_tokens(line)
            if not line:
                break
        seen.add(plain)
        chosen.append((memory, line))
        used += cost
    if not chosen:
        return ""  # not even the best note fits: the group is too small to compress
    chosen.sort(key=lambda pair: (pair[0].created_at, pair[0].id))
    text = prefix + " / ".join(line for _, line in chosen)
    more = f" (+{len(memories) - len(chosen)} more)"
    if len(chosen) < len(memories) and estimate_tokens(text + more) <= token_budget:
        text += more
    return text


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
            # a key the user gave (remember, the CLI, MCP; no ``via`` of an extractor) holds
            # its slot: folded into a summary it left the key with no live holder (a
            # decision on the wedding venue recalled by nothing); the keys ingest makes of
            # its notes ("decision:walked_to_river") do not keep them out
            and (m.key is None or "via" in m.meta)
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
    ratio: float = 0.5,
    dry_run: bool = True,
    llm: MemoryLLM | None = None,
    log: AuditLog | None = None,
) -> SummaryReport:
    if group_by not in ("day", "session"):
        raise OmoideError.of("INVALID_ARGUMENT", name="group_by", reason="'day' or 'session'")
    if (not 0 <= older_than_days < math.inf or token_budget < 20 or min_group < 2
            or not 0 < ratio < 1):  # NaN fails every comparison: refused, not read as "none"
        raise OmoideError.of("INVALID_ARGUMENT", name="summarize",
                             reason="0 <= older_than_days (finite), token_budget >= 20, "
                                    "min_group >= 2, 0 < ratio < 1")
    report = SummaryReport(character, dry_run, older_than_days)
    groups: dict[str, list[Memory]] = {}
    for memory in candidates(engine, character, older_than_days=older_than_days,
                             max_importance=max_importance, kinds=kinds):
        groups.setdefault(_group_of(memory, group_by), []).append(memory)
    store = engine.stores.get(character)
    for name, members in sorted(groups.items()):
        if len(members) < min_group:
            continue
        before = sum(estimate_tokens(m.text) for m in members)
        budget = min(token_budget, math.floor(before * ratio))
        vectors = {m.id: store.kernel.vector(m.id) for m in members} if store else {}
        text = extractive_summary(name, members, budget, vectors)
        method = "extractive"
        if not text or estimate_tokens(text) >= before:
            continue  # too small to compress: left as it is
        if llm is not None and report.degraded is None:
            try:
                written = llm.summarize([compress_line(m) for m in members], budget)
                refused = unfit_summary(written, members, budget)
                if refused:
                    report.degraded = (f"the LLM summary of {name} {refused}; used the "
                                       f"extractive summary")
                else:
                    text, method = written[: engine.max_text_length], "llm"
            except OmoideError as e:  # keep going without it, and say why
                report.degraded = f"{e.code}: {e}; used the extractive summary"
        report.groups.append(SummaryGroup(
            group=name, source_ids=[m.id for m in members],
            start=members[0].created_at, end=members[-1].created_at,
            tokens_before=before, text=text, tokens_after=estimate_tokens(text), method=method,
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
            character, group.text, kind="summary", at=group.start,  # the day it covers
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
