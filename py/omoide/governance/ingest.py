"""``ingest``: conversation -> extracted candidates -> write-time dedup -> store (or preview).

Path: with an ``llm`` (``MemoryLLM``), the memory judge decides what is worth keeping and the
refiner adds a diary note; if the endpoint fails, is slow or answers garbage, the same
messages go through the pattern path and the report says why (``degraded``). The pattern
path is ``extract`` with its second stage on the engine's embedding model
(``clause_model.classifier_for``): clauses no pattern matched are classified by the model.
Every input message ends up in the report: stored, merged into an existing memory that says the same
thing, superseding one it contradicts (same subject, the other polarity: the old one goes to
the trash as history, restorable), or skipped with a reason; a write vetoed by a listener
(quota) is reported as failed, with its text. Nothing is ever lost on write: a merge keeps
the memory's text unless the new one is a strict superset, which then supersedes it.

The whole batch is planned first (one embedding call, dedup against the store AND against
earlier candidates of the batch), then written: a dry run is exactly the plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.context import turn_context, turn_line
from omoide.engine.embedding import embed_memories
from omoide.engine.memory import Memory, new_memory_id
from omoide.engine.neighbourhood import claim_turn, next_turn
from omoide.engine.remember import build_memory
from omoide.engine.supersede import linked, retire
from omoide.errors import OmoideError
from omoide.governance.clause_model import classifier_for
from omoide.governance.dedup import (
    DEFAULT_THRESHOLD,
    DedupIndex,
    candidate_polarity,
    merged,
    polarity_of,
    same_words,
)
from omoide.governance.extract import (
    Candidate,
    Message,
    checked_messages,
    extract,
    has_japanese,
    message_text,
    wanted_roles,
)
from omoide.governance.llm import MemoryLLM
from omoide.governance.log import AuditLog
from omoide.governance.tiers import RebalanceReport, TierPolicy, initial_tier, rebalance
from omoide.governance.when_words import another_time

if TYPE_CHECKING:
    from omoide.engine.core import MemoryEngine

DIARY_IMPORTANCE = 0.5
MAX_JUDGED = 8  # the judge's memories taken per ingest, plus two per message judged


@dataclass
class IngestItem:
    action: str  # "stored" | "merged" | "superseded" | "skipped" | "failed"
    reason: str
    text: str | None = None
    kind: str | None = None
    key: str | None = None
    polarity: str | None = None
    source: int | None = None  # index of the message it came from
    memory_id: str | None = None  # the record written or merged into
    supersedes: str | None = None  # the record it replaced (now in the trash, restorable)
    cosine: float | None = None
    tier: str | None = None
    via: str | None = None  # "pattern" | "learned" / "prototype" (second stage) | "llm"
    turn: int | None = None  # the new memory's place in the report's conversation
    kept: str | None = None  # a merge of other words: the record keeping them, in the trash


@dataclass
class IngestReport:
    character: str
    dry_run: bool
    path: str  # "pattern" | "llm"
    degraded: str | None = None  # why the LLM path was not used, when one was configured
    # The conversation the new memories joined (the one named, or a batch's fresh id): a chat
    # app passes it back to continue it.
    conversation: str | None = None
    items: list[IngestItem] = field(default_factory=list)
    rebalance: RebalanceReport | None = None

    def count(self, action: str) -> int:
        return sum(1 for item in self.items if item.action == action)

    @property
    def stored(self) -> list[IngestItem]:
        return [i for i in self.items if i.action == "stored"]

    @property
    def merged(self) -> list[IngestItem]:
        return [i for i in self.items if i.action == "merged"]

    @property
    def superseded(self) -> list[IngestItem]:
        return [i for i in self.items if i.action == "superseded"]

    @property
    def skipped(self) -> list[IngestItem]:
        return [i for i in self.items if i.action == "skipped"]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _llm_candidates(llm: MemoryLLM, messages: Sequence[Message], roles: Iterable[str] = ("user",)
                    ) -> tuple[list[Candidate], str | None]:
    """(candidates, why nothing) from the judge + refiner; raises OmoideError on failure.

    The judge reads the messages of ``roles`` only (an assistant's or a system's lines were
    judged as the user's words), and its answer is input like any other: at most
    ``MAX_JUDGED`` memories plus two per message (a reply of 200 facts was stored whole)."""
    source = len(messages) - 1  # the memories' place: the conversation's last message
    wanted = wanted_roles(roles)
    messages = [m for m in messages if message_text(m)[0] in wanted]
    if not messages:
        return [], "no message of the roles asked for"
    judgement = llm.judge(messages)
    if not judgement.keep:
        return [], judgement.reason or "nothing worth keeping"
    note = llm.refine(messages, judgement)
    candidates = [
        Candidate(
            text=m.text, kind=m.kind, key=m.key, polarity=m.polarity, importance=m.importance,
            lang="ja" if has_japanese(m.text) else "en", source=source, via="llm",
            meta={"polarity": m.polarity} if m.polarity else {},
        )
        for m in judgement.memories[:MAX_JUDGED + 2 * len(messages)]
    ]
    candidates.append(Candidate(
        text=note, kind="diary", key=None, polarity=None, importance=DIARY_IMPORTANCE,
        lang="ja" if has_japanese(note) else "en", source=source, via="llm",
        meta={"refined": True, "judge_reason": judgement.reason},
    ))
    return candidates, None


def _contexts(engine: MemoryEngine, messages: Sequence[Message], candidates: list[Candidate],
              at: float) -> list[str | None]:
    """Each candidate's index context: the session date and the turns around the message it
    came from (``engine.context``, the one rule of every conversation ingest)."""
    turns = [turn_line(*message_text(m)) for m in messages]
    return [turn_context(turns, c.source, at, limit=engine.max_text_length)
            if 0 <= c.source < len(turns) else None for c in candidates]


def gives_a_new_value(existing: Memory, candidate: Candidate) -> bool:
    """Whether ``candidate`` gives the memory it matched a new value rather than repeating
    it: facts are keyed on their attribute (``fact:job``, ``fact:home``, a sister's name or
    age; what is no one-value slot keeps its value in the key, ``fact:daughter_married``:
    ``extract``), so a fact of the same key in other words is a new value ("I work as a
    nurse" -> "a doctor"); a favourite carries its value in ``meta["value"]``. Other
    statements of one key and polarity say the same thing (a preference about one subject,
    in any words or language) and merge."""
    if same_words(candidate.text, existing.text):
        return False
    if (candidate.kind == existing.kind == "fact" and candidate.key is not None
            and candidate.key == existing.key):
        return True
    if candidate.kind == existing.kind == "decision" and another_time(existing.text,
                                                                      candidate.text):
        return True  # a plan moved to another date: the date is its value
    old, new = existing.meta.get("value"), candidate.meta.get("value")
    return (isinstance(old, str) and isinstance(new, str)
            and not same_words(old, new))


def last_said(memory: Memory) -> float:
    """When the memory was last said: its own time, or a later repeat's (``meta.said_at``,
    set by a merge): a chat dated between the two ("doctor" in April, after "nurse" in
    January and again in October) changes nothing."""
    again = memory.meta.get("said_at")
    return max(memory.created_at, again) if isinstance(again, (int, float)) \
        and not isinstance(again, bool) else memory.created_at


def same_session_repeat(existing: Memory, candidate: Candidate,
                        extra_meta: Mapping[str, Any]) -> bool:
    """Whether ``candidate`` is a memory's own words brought again from the session that
    brought them (``meta["session"]`` and ``source`` equal): a chat imported twice, or one
    message sent twice. Said again in another session, the same words are a repeat, which
    a merge counts."""
    session = extra_meta.get("session")
    return (session is not None and existing.text == candidate.text
            and existing.meta.get("session") == session
            and existing.meta.get("source") == extra_meta.get("source"))


def trashed_from_session(store: Any, extra_meta: Mapping[str, Any]) -> dict[str, str]:
    """The texts this session brought whose memories are in the trash (text -> memory id):
    a chat imported again must not bring back what the user forgot from it, nor replay a
    change it made ("nurse", then "doctor": each import made new copies and more history,
    the earlier version being in the trash). One pass over the trash per ingest, only for a
    tagged session (an import names its day)."""
    session = extra_meta.get("session")
    if session is None or store is None:
        return {}
    return {entry.memory.text: entry.memory.id for entry in store.trash.values()
            if entry.memory.meta.get("session") == session
            and entry.memory.meta.get("source") == extra_meta.get("source")}


def _places(store: Any, conversation: str | None, count: int, candidates: list[Candidate],
            at: float) -> list[tuple[str | None, int | None]]:
    """Each candidate's (conversation, turn): its message's place after the conversation's
    last turn in the store; (None, None) without a conversation or a message."""
    if conversation is None and count > 1:
        conversation = "ingest-" + new_memory_id(at)
    if conversation is None:
        return [(None, None)] * len(candidates)
    base = 0 if store is None else next_turn(store, conversation)
    return [(conversation, base + c.source) if 0 <= c.source < count else (None, None)
            for c in candidates]


def ingest(
    engine: MemoryEngine,
    character: str,
    messages: Sequence[Message] | str,
    *,
    llm: MemoryLLM | None = None,
    dry_run: bool = False,
    dedup_threshold: float = DEFAULT_THRESHOLD,
    roles: Iterable[str] = ("user",),
    tier_policy: TierPolicy | None = None,
    rebalance_tiers: bool = True,
    meta: Mapping[str, Any] | None = None,
    log: AuditLog | None = None,
    at: Any = None,
    conversation: str | None = None,
) -> IngestReport:
    """Extract, dedup and write (or, with ``dry_run``, only say what would happen).

    ``meta`` is added to new memories (e.g. ``{"session": "2024-05-01#3"}``, which
    ``summarize`` can group by). ``at``: when the conversation took place (default now): the
    new memories' time and the date in their index ``context``, which also holds the turns
    around the message each came from (``engine/context.py``). ``conversation``: the id of the
    conversation the messages continue (a chat app sending one message at a time passes its
    chat's id): each new memory records it and its message's turn, after the conversation's
    last one (``engine/neighbourhood.py``). Without one, a batch of several messages is a
    conversation of its own (a fresh id); a single message has none."""
    character = validate.character_id(character)
    conversation = validate.conversation(conversation)  # refused before anything is done
    session_at = engine.now() if at is None else validate.timestamp(at)
    messages = checked_messages(messages)
    policy = tier_policy or TierPolicy()
    extra_meta = validate.meta(dict(meta) if meta is not None else None)
    report = IngestReport(character, dry_run, "pattern")

    candidates: list[Candidate] = []
    if llm is not None:
        try:
            candidates, nothing = _llm_candidates(llm, messages, roles)
            report.path = "llm"
            if nothing is not None:
                report.items.append(IngestItem("skipped", f"memory judge: {nothing}",
                                               source=len(messages) - 1, via="llm"))
        except OmoideError as e:
            # Degrade, never drop: the same messages go through the pattern path.
            report.degraded = f"{e.code}: {e}; used the pattern path"
            if log is not None and not dry_run:
                log.record(engine.now(), character, "degraded", [], report.degraded)
    if report.path == "pattern":
        # With a sentence model loaded, clauses no pattern matched go to the second stage.
        candidates, unmatched = extract(messages, roles=roles,
                                        classifier=classifier_for(engine.embedder))
        report.items.extend(
            IngestItem("skipped", u.reason, source=u.source, via="pattern") for u in unmatched
        )
    if not candidates:
        report.items.sort(key=lambda i: (i.source if i.source is not None else -1))
        return report

    store = engine.stores.get(character)
    if store is not None:
        engine.check_model(store)  # refuse before embedding: vectors of two models never mix
    contexts = _contexts(engine, messages, candidates, session_at)
    places = _places(store, conversation, len(messages), candidates, session_at)
    report.conversation = next((conv for conv, _ in places if conv is not None), None)
    # The stored rows are the blend of text and context; dedup compares like with like.
    vectors = embed_memories(engine.embedder, list(zip([c.text for c in candidates], contexts,
                                                       strict=True)))
    index = DedupIndex(store, dedup_threshold)
    trashed = trashed_from_session(store, extra_meta)
    now = engine.now()
    planned_items: list[IngestItem] = []
    for candidate, context, vector, (conv, turn) in zip(candidates, contexts, vectors, places,
                                                        strict=True):
        item = IngestItem(
            "stored", "new", text=candidate.text, kind=candidate.kind, key=candidate.key,
            polarity=candidate.polarity, source=candidate.source, via=candidate.via,
        )
        if candidate.text in trashed:  # forgotten (or set aside) since the first import
            item.action, item.memory_id = "skipped", trashed[candidate.text]
            item.reason = (f"already brought from session {extra_meta['session']}; its "
                           "memory is in the trash (restore it there)")
            report.items.append(item)  # nothing written: not in the audit log
            continue
        polarity = candidate_polarity(candidate)
        found = index.match(candidate.kind, candidate.key, vector, polarity,
                            text=candidate.text)
        if found is None:
            tier = initial_tier(candidate.kind, candidate.importance, policy)
            memory_meta = {**extra_meta, **candidate.meta, "via": candidate.via,
                           "lang": candidate.lang, "tier": tier, "merges": 0}
            memory = build_memory(engine, character, candidate.text, kind=candidate.kind,
                                  importance=candidate.importance, key=candidate.key,
                                  meta=memory_meta, at=session_at, context=context,
                                  conversation=conv, turn=turn)
            index.plan(memory, vector)
            item.memory_id, item.tier, item.turn = memory.id, tier, turn
            item.reason = f"new {candidate.kind}" + (f" {candidate.key}" if candidate.key else "")
            planned_items.append(item)
            continue
        existing = index.current(found.memory_id)
        how = found.reason + (f" (cosine {found.cosine})" if found.cosine is not None else "")
        if same_session_repeat(existing, candidate, extra_meta):
            # the same message brought again (a chat imported twice): not a repeat, and not
            # a change to replay (its later version is the live one)
            item.action, item.memory_id = "skipped", existing.id
            item.reason = f"already held from session {extra_meta['session']}"
            report.items.append(item)  # nothing written: not in the audit log
            continue
        old_polarity = polarity_of(existing)
        contradiction = old_polarity != polarity
        renewed = not contradiction and gives_a_new_value(existing, candidate)
        if contradiction or renewed:  # the candidate as a memory of its own
            # the user's pin is on the slot: the new value keeps it (and the hot tier)
            pinned = {"pinned": True, "tier": "hot"} if existing.meta.get("pinned") is True \
                else {}
            memory = build_memory(
                engine, character, candidate.text, kind=candidate.kind,
                importance=candidate.importance, key=candidate.key or existing.key,
                meta={**extra_meta, **candidate.meta, "via": candidate.via,
                      "lang": candidate.lang, "merges": 0, "polarity": polarity,
                      "tier": initial_tier(candidate.kind, candidate.importance, policy),
                      **pinned},
                at=session_at, context=context, conversation=conv, turn=turn)
        # the language model's reading never replaces what the user pinned (a judge told
        # "the user can eat peanuts" by a message superseded the pinned allergy)
        held_pin = candidate.via == "llm" and existing.meta.get("pinned") is True
        if (contradiction or renewed) and (session_at < last_said(existing) or held_pin):
            # said before the live memory (a conversation dated earlier, ingested later), or
            # a judged change of a pinned one: the live one stays the truth and the
            # candidate becomes its history, restorable
            index.plan(memory, vector)
            index.plan(linked(existing, [memory.id]), None)
            why = (f"{how}: the memory is pinned, the judged change kept as its history"
                   if held_pin else f"{how}: said before the live memory, kept as its history")
            index.retire(memory.id, existing.id, why)
            item.action, item.memory_id, item.supersedes = "superseded", existing.id, memory.id
            item.cosine, item.turn = found.cosine, turn
            item.reason = f"{why} (in the trash, restorable)"
            planned_items.append(item)
            continue
        if contradiction or renewed:
            # A contradiction or a new value: the candidate is the new truth, the old memory
            # its history (never folded away).
            why = (f"{how}: polarity {old_polarity} -> {polarity}" if contradiction
                   else f"{how}: a new value")
            item.action, item.tier = "superseded", memory.meta.get("tier")
        else:
            updated = merged(existing, candidate, now)
            if session_at > last_said(existing):  # said again later: still the truth then
                updated = dataclasses.replace(updated, meta={**updated.meta,
                                                             "said_at": session_at})
            if updated.text == existing.text:
                index.plan(updated, None)
                item.action, item.memory_id = "merged", existing.id
                item.cosine, item.tier = found.cosine, updated.meta.get("tier")
                item.reason = ("exact duplicate" if existing.text == candidate.text else how)
                if not same_words(candidate.text, existing.text):
                    # other words folded into the memory ("meeting with Ken on Tuesday"
                    # into "... Tom on Monday": e5 puts them above the threshold): they are
                    # kept in the trash, restorable, never only counted
                    kept = build_memory(
                        engine, character, candidate.text, kind=candidate.kind,
                        importance=candidate.importance, key=candidate.key,
                        meta={**extra_meta, **candidate.meta, "via": candidate.via,
                              "lang": candidate.lang, "merged_into": existing.id},
                        at=session_at, context=context, conversation=conv, turn=turn)
                    index.plan(kept, vector)
                    index.aside.add(kept.id)
                    item.kept = kept.id
                    item.reason += "; its own words are in the trash, restorable"
                planned_items.append(item)
                continue
            # The new text says all the old one did and more: a new record replaces it.
            memory = dataclasses.replace(updated, id=new_memory_id(now), context=context,
                                         conversation=conv, turn=turn)
            why = f"{how}: the text grew (a strict superset)"
            item.action, item.tier = "merged", updated.meta.get("tier")
        memory = linked(memory, [existing.id])
        index.plan(memory, vector)
        index.retire(existing.id, memory.id, why)
        item.memory_id, item.supersedes, item.cosine = memory.id, existing.id, found.cosine
        item.turn = turn
        item.reason = f"{why}; the old text is in the trash, restorable"
        planned_items.append(item)
    report.items.extend(planned_items)
    report.items.sort(key=lambda i: (i.source if i.source is not None else -1))
    if dry_run:
        return report

    store = engine.writable_store(character)
    for conv, turn in places:
        if conv is not None:
            claim_turn(store, conv, turn)
    failed: dict[str, str] = {}
    for memory_id, (memory, row) in index.planned.items():
        old = store.records.get(memory_id)
        try:
            store.put(memory, row if old is None or old.text != memory.text else None)
        except Exception as e:  # vetoed by a listener: keep going, report the text
            failed[memory_id] = f"write refused ({type(e).__name__}: {e})"
    for kept_id in index.aside:  # a merged candidate's words: written, then set aside
        if kept_id not in failed and kept_id in store.records:
            store.move_to_trash(kept_id, now)
    for old_id, (new_id, why) in index.retired.items():
        if new_id in failed or old_id not in store.records:
            continue  # the new record is not there (the old one stays live), or the old one
            # was this batch's own and was refused: nothing to retire
        try:  # only after the new record exists: the fact is never in no record
            retire(store, old_id, new_id, now, why)
        except Exception as e:  # both stay live: duplicated, never lost
            for item in planned_items:
                if item.memory_id == new_id:
                    item.reason += f" (old one still live: {type(e).__name__}: {e})"
    for item in planned_items:
        if item.memory_id in failed:
            item.action, item.reason = "failed", failed[item.memory_id]
        if log is not None:
            action = "write_failed" if item.action == "failed" else item.action
            ids = [i for i in (item.memory_id, item.supersedes, item.kept) if i]
            log.record(now, character, action, ids, item.reason, key=item.key, text=item.text)
    if rebalance_tiers:
        report.rebalance = rebalance(engine, character, policy, log=log,
                                     dedup_threshold=dedup_threshold)
    return report
