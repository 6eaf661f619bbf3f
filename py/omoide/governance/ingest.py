"""``ingest``: conversation -> extracted candidates -> write-time dedup -> store (or preview).

Path: with an ``llm`` (``MemoryLLM``), the memory judge decides what is worth keeping and the
refiner adds a diary note; if the endpoint fails, is slow or answers garbage, the same
messages go through the pattern path and the report says why (``degraded``). The pattern
path is ``extract`` with its second stage on the engine's embedding model
(``clause_model.classifier_for``): clauses no pattern matched are classified by the model.
Every input message ends up in the report: stored, merged into an existing memory that says
the same thing, superseding one it contradicts (same subject, the other polarity: the old one
goes to the trash as history, restorable), or skipped with a reason (among them a message an
earlier ingest already took, ``HeldMessages``: a chat ingested again changes nothing); a
write vetoed by a listener (quota) is reported as failed, with its text. An older statement
never replaces a newer one: said before the live memory, it becomes its history. Nothing is
ever lost on write: a merge keeps the memory's text unless the new one is a strict superset,
which then supersedes it.

The whole batch is planned first (one embedding call, dedup against the store AND against
earlier candidates of the batch), then written: a dry run is exactly the plan.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.context import turn_context, turn_line, window_text
from omoide.engine.embedding import embed_memories
from omoide.engine.memory import Memory, new_memory_id
from omoide.engine.meta_room import fitted
from omoide.engine.neighbourhood import claim_turn, next_turn
from omoide.engine.remember import build_memory
from omoide.engine.store import as_float_list
from omoide.engine.supersede import last_said, linked, retire
from omoide.errors import OmoideError
from omoide.governance import meta_fields
from omoide.governance.clause_model import classifier_for
from omoide.governance.dedup import (
    DEFAULT_THRESHOLD,
    GUESSED,
    NEIGHBOURS,
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


HEARD = "heard"  # meta: fingerprints of the messages a memory already accounts for
MAX_HEARD = 50  # a memory repeated or replaced every day keeps the last 50


def fingerprint(text: str, context: str | None, at: float) -> tuple[str, str] | None:
    """The message a memory was made of, as (dated, undated) marks: its text and the turns
    around it (its ``context`` without the date line), with the day (the date line) for
    the dated one. An ingest dated (``at``) looks for the dated mark: the same turns on
    another day are a repeat, which a merge counts; one without a date for the undated
    mark, whatever day the chat was first ingested on. A turn alone in its window (a chat
    app's single message) is told by its time too: said again later, it is a repeat, and
    without a date it is the newest statement. None without a context (a memory the user
    wrote)."""
    if context is None:
        return None
    window = window_text(context)
    parts = [text, window] if "\n" in window else [text, window, repr(float(at))]

    def digest(parts: list[str]) -> str:
        data = "\x1f".join(parts).encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).hexdigest()[:24]

    return digest([*parts, context[:len(context) - len(window)]]), digest(parts)


def fingerprints(memory: Memory) -> list[str]:
    """The marks of the messages ``memory`` accounts for, oldest first: those a merge
    folded into it or a version it replaced accounted for (``meta.heard``; of another
    shape, none), then its own."""
    own = fingerprint(memory.text, memory.context, memory.created_at)
    heard = [f for f in meta_fields.entries(memory.meta, HEARD) if type(f) is str]
    return list(dict.fromkeys([*heard, *(own or ())]))


def hearing(memory: Memory, heard: Iterable[str]) -> Memory:
    """``memory`` with the marks ``heard`` added to ``meta.heard`` (no write)."""
    old = [f for f in meta_fields.entries(memory.meta, HEARD) if type(f) is str]
    more = [f for f in dict.fromkeys(heard) if f not in old]
    if not more:
        return memory
    return dataclasses.replace(memory, meta={**memory.meta,
                                             HEARD: (old + more)[-MAX_HEARD:]})


@dataclass
class TrashedMessages:
    """What the trash holds of messages, built once per change of the trash (``TrashMap.
    derived``), not per ingest: each ``meta.heard`` mark with the first trashed memory (in
    trash order) holding it, and the trashed memories by text (a memory's own message and
    its session are told from its text, context and meta)."""

    heard: dict[str, tuple[int, Memory]]
    by_text: dict[str, list[tuple[int, Memory]]]

    @classmethod
    def of(cls, trash: Mapping[str, Any]) -> TrashedMessages:
        heard: dict[str, tuple[int, Memory]] = {}
        by_text: dict[str, list[tuple[int, Memory]]] = {}
        for position, entry in enumerate(trash.values()):
            memory = entry.memory
            if HEARD in memory.meta:  # most memories heard nothing but their own message
                for mark in meta_fields.entries(memory.meta, HEARD):
                    if type(mark) is str:
                        heard.setdefault(mark, (position, memory))
            by_text.setdefault(memory.text, []).append((position, memory))
        return cls(heard, by_text)


class HeldMessages:
    """Finds the memory a candidate's message already made (one rule for every ingest path:
    a chat imported, pasted or sent again, tagged with a session or not). A message is held
    when a memory of the store, live or in the trash, accounts for its fingerprint
    (``fingerprints``), or, for an import tagged with a session, has its text, session and
    source. Live memories are looked up by the candidate's key and among its nearest rows;
    the trash through its index of marks and texts as the ingest found it
    (``TrashedMessages``, made again only when the trash changed since the last ingest).
    Such a message changes nothing: it was taken into account when it first came (stored,
    merged, made history or replaced since), so a chat dated earlier or not at all never
    replays a change it made over a newer value, and what the user forgot from it stays
    forgotten."""

    def __init__(self, store: Any, wanted: set[str], texts: set[str],
                 extra_meta: Mapping[str, Any]):
        self.store = store
        self.wanted, self.texts = wanted, texts
        self.session = extra_meta.get("session")
        self.source = extra_meta.get("source")
        # the trash as this ingest found it (what it trashes itself is not a message held
        # before it), made again only if the trash changed since the last ingest
        self.trashed = (None if store is None
                        else store.trash.derived("held_messages", TrashedMessages.of))

    def _keys(self, memory: Memory) -> list[Any]:
        """What ``memory`` holds of this ingest's messages: their fingerprints, and its text
        when it came from the same tagged session and source."""
        keys: list[Any] = [f for f in meta_fields.entries(memory.meta, HEARD)
                           if type(f) is str and f in self.wanted]
        if memory.text in self.texts:  # its own message (the text is in the fingerprint)
            own = fingerprint(memory.text, memory.context, memory.created_at)
            keys += [f for f in own or () if f in self.wanted]
            if self._same_session(memory):
                keys.append(("session", memory.text))
        return keys

    def _same_session(self, memory: Memory) -> bool:
        return (self.session is not None and memory.meta.get("session") == self.session
                and memory.meta.get("source") == self.source)

    def find(self, candidate: Candidate, mark: str | None, vector: Sequence[float]
             ) -> Memory | None:
        if self.store is None:
            return None
        wanted = {k for k in (mark, ("session", candidate.text)) if k is not None}
        ids = list(self.store.ids_with_key(candidate.key)) if candidate.key else []
        if len(self.store.kernel):
            ids += self.store.kernel.top_k(as_float_list(vector), NEIGHBOURS).ids
        for memory_id in dict.fromkeys(ids):
            memory = self.store.records[memory_id]
            if wanted & set(self._keys(memory)):
                return memory
        return self._in_trash(mark, candidate.text)

    def _in_trash(self, mark: str | None, text: str) -> Memory | None:
        """The first trashed memory holding the message's mark (heard or its own), else the
        first with its text from this ingest's tagged session."""
        trashed = self.trashed
        same_text = trashed.by_text.get(text, ())
        if mark is not None:
            hits = [trashed.heard[mark]] if mark in trashed.heard else []
            hits += [(position, memory) for position, memory in same_text
                     if mark in (fingerprint(memory.text, memory.context, memory.created_at)
                                 or ())]
            if hits:
                return min(hits, key=lambda hit: hit[0])[1]
        return next((memory for _, memory in same_text if self._same_session(memory)), None)


def held_reason(memory: Memory, text: str, live: bool, extra_meta: Mapping[str, Any]) -> str:
    """The report's reason for a message (its memory's ``text``) already held by
    ``memory``."""
    came = (f"from session {extra_meta['session']}" if extra_meta.get("session") is not None
            else "in an earlier ingest")
    if live and memory.text != text:
        return (f"already taken {came}: a later statement replaced it ({memory.id}, "
                "its history in the trash): nothing replayed")
    if live:
        return f"already held {came}: nothing new"
    by = memory.meta.get("superseded_by")
    if isinstance(by, str):
        return (f"already held {came}, as the history of {by} (a later statement replaced "
                "it; in the trash, restorable): nothing replayed")
    return f"already brought {came}; its memory is in the trash (restore it there)"


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
    # each candidate's message, and the mark of it a memory that holds it has
    messages_heard = [fingerprint(c.text, context, session_at)
                      for c, context in zip(candidates, contexts, strict=True)]
    marks = [None if pair is None else pair[0 if at is not None else 1]
             for pair in messages_heard]
    held = HeldMessages(store, {m for m in marks if m is not None},
                        {c.text for c in candidates}, extra_meta)
    now = engine.now()
    planned_items: list[IngestItem] = []
    for candidate, context, vector, (conv, turn), mark, heard in zip(
            candidates, contexts, vectors, places, marks, messages_heard, strict=True):
        item = IngestItem(
            "stored", "new", text=candidate.text, kind=candidate.kind, key=candidate.key,
            polarity=candidate.polarity, source=candidate.source, via=candidate.via,
        )
        already = held.find(candidate, mark, vector)
        if already is not None:  # this message came before: nothing new, nothing replayed
            item.action, item.memory_id = "skipped", already.id
            item.reason = held_reason(already, candidate.text, already.id in store.records,
                                      extra_meta)
            report.items.append(item)  # nothing written: not in the audit log
            continue
        polarity = candidate_polarity(candidate)
        found = index.match(candidate.kind, candidate.key, vector, polarity,
                            text=candidate.text, guessed=candidate.via in GUESSED,
                            **{name: meta_fields.text_field(candidate.meta, name)
                               for name in ("over", "died", "was", "parted")})
        if found is None:
            tier = initial_tier(candidate.kind, candidate.importance, policy)
            memory_meta = fitted({**extra_meta, **candidate.meta, "via": candidate.via,
                                  "lang": candidate.lang, "tier": tier, "merges": 0})
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
        old_polarity = polarity_of(existing)
        contradiction = old_polarity != polarity
        # a new value of what the live memory holds: a comparison reversed, a camp left, a
        # habit moved to another time, a death of the one it names, a thing parted with, or a
        # new value of its key
        renewed = not contradiction and (
            found.reason in ("reversed comparison", "camp left", "habit moved", "died",
                             "parted with")
            or gives_a_new_value(existing, candidate))
        if contradiction or renewed:  # the candidate as a memory of its own
            # the user's pin is on the slot: the new value keeps it (and the hot tier)
            pinned = {"pinned": True, "tier": "hot"} if existing.meta.get("pinned") is True \
                else {}
            memory = build_memory(
                engine, character, candidate.text, kind=candidate.kind,
                importance=candidate.importance, key=candidate.key or existing.key,
                meta=fitted({**extra_meta, **candidate.meta, "via": candidate.via,
                             "lang": candidate.lang, "merges": 0, "polarity": polarity,
                             "tier": initial_tier(candidate.kind, candidate.importance,
                                                  policy),
                             **pinned}),
                at=session_at, context=context, conversation=conv, turn=turn)
        # the language model's reading never replaces what the user pinned (a judge told
        # "the user can eat peanuts" by a message superseded the pinned allergy)
        held_pin = candidate.via == "llm" and existing.meta.get("pinned") is True
        if (contradiction or renewed) and (session_at < last_said(existing) or held_pin):
            # said before the live memory (a conversation dated earlier, ingested later), or
            # a judged change of a pinned one: the live one stays the truth and the
            # candidate becomes its history, restorable
            index.plan(memory, vector)
            # the live one accounts for the message now: brought again after its history
            # copy is purged, it is still known
            index.plan(hearing(linked(existing, [memory.id]), heard or ()), None)
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
            # what the old version accounted for stays known once it is purged: its chat
            # brought again replays nothing
            memory = hearing(memory, fingerprints(existing))
        else:
            updated = hearing(merged(existing, candidate, now), heard or ())
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
                        meta=fitted({**extra_meta, **candidate.meta, "via": candidate.via,
                                     "lang": candidate.lang, "merged_into": existing.id}),
                        at=session_at, context=context, conversation=conv, turn=turn)
                    index.plan(kept, vector)
                    index.aside.add(kept.id)
                    item.kept = kept.id
                    item.reason += "; its own words are in the trash, restorable"
                planned_items.append(item)
                continue
            # The new text says all the old one did and more: a new record replaces it.
            memory = dataclasses.replace(
                hearing(updated, fingerprints(existing)), id=new_memory_id(now),
                context=context, conversation=conv, turn=turn)
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
