"""Pattern extraction: conversation text -> memory candidates, English and Japanese.

No model, no dictionary download. Each user message is cut into sentences and clauses
(「…ですが、」, "…, but I…", "; "), and each clause is read by the rules of its language:
``extract_en`` and ``extract_ja`` (their docstrings list the phrasings). What comes out:

- preference (factual): likes, dislikes, favourites, comparisons ("X over Y", 〜派, 好み, 苦手);
- decision (episodic): plans and choices with or without "decide" (will, going to,
  started/stopped/quit/bought, ことにした, これからは, 決めた, 始めた, やめた);
- pattern (factual, a habit): frequency and time expressions (usually, every morning,
  twice a week, never … after, 毎朝, いつも, 〜のが習慣です, 〜ようにしている);
- fact (factual): the user and their people (names, relations, pets, places, jobs).

Questions, requests, wishes, hypotheticals and reported speech give nothing; a clause about
someone else gives a fact about that person or nothing, never the user's own preference.

Each candidate gets a polarity (``like`` / ``dislike``: "never", "don't like", 「嫌い」,
stopping something) and a key ``<kind>:<subject>`` (``omoide.governance.keys``) so that the
same statement made twice, or made in the other language, lands on the same key, which is
what write-time dedup and contradiction detection use. Facts key on the attribute ("My
sister's name is Yuki" -> ``fact:sister_name``), favourites on the category ("my favourite
drink is tea" -> ``preference:favorite_drink``), so a new value replaces the old one.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any, Protocol

from omoide.engine import validate
from omoide.engine.memory import KIND_TYPES
from omoide.errors import OmoideError
from omoide.governance.keys import (  # noqa: F401 - re-exported: the extractor's key API
    JA_GLOSSARY,
    MAX_SUBJECT,
    has_japanese,
    make_key,
    normalize_subject,
)
from omoide.governance.transcript import role_lines
from omoide.governance.when_words import time_words

MIN_CONTENT = 3
MAX_CONTENT = 500

Message = str | Mapping[str, Any]


@dataclass
class Candidate:
    """One memory a conversation suggests, before dedup decides whether it is new."""

    text: str  # the memory content, 3..500 characters
    kind: str
    key: str | None
    polarity: str | None  # "like" / "dislike" (None for notes without a stance)
    importance: float
    lang: str  # "en" / "ja"
    source: int  # index of the message it came from
    via: str = "pattern"  # "pattern" / "learned" or "prototype" (the embedding stage) / "llm"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return KIND_TYPES[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"type": self.type}


@dataclass(frozen=True)
class Unmatched:
    """A user message from which nothing was extracted (reported, never silently dropped)."""

    source: int
    reason: str


# -- message plumbing -----------------------------------------------------------------------


def checked_messages(messages: object) -> list[Message]:
    """The conversation ``ingest`` is given, as a list: one text, or texts and
    ``{"role", "content"}`` objects (content: a text, OpenAI's list of parts, or null).
    Anything else is refused naming the message (a number or an object as content was a
    crash, or its repr stored as the user's words)."""
    if isinstance(messages, str):
        _within_limit(messages, "messages")
        # a transcript as one text ("user: ... / assistant: ..."): the assistant's lines are
        # the character's, never the user's facts
        return list(role_lines(messages) or [messages])
    if isinstance(messages, Mapping) or not isinstance(messages, Iterable):
        raise OmoideError.of("INVALID_ARGUMENT", name="messages",
                             reason="must be a text or a list of messages")
    out = list(messages)
    for n, message in enumerate(out):
        if isinstance(message, str):
            validate.unicode_text(message, f"messages[{n}]")  # the tokenizer's crash
            _within_limit(message, f"messages[{n}]")
            continue
        if not isinstance(message, Mapping):
            raise OmoideError.of("INVALID_ARGUMENT", name=f"messages[{n}]",
                                 reason="must be a text or an object with role and content")
        if not isinstance(message.get("role", "user"), str):
            raise OmoideError.of("INVALID_ARGUMENT", name=f"messages[{n}].role",
                                 reason="must be a text")
        content = message.get("content")
        parts = content if isinstance(content, list) else None
        if not (content is None or isinstance(content, str) or parts is not None and all(
                isinstance(p, Mapping) and isinstance(p.get("text", ""), str) for p in parts)):
            raise OmoideError.of("INVALID_ARGUMENT", name=f"messages[{n}].content",
                                 reason="must be a text or a list of parts with text")
        for text in [content] if isinstance(content, str) else [
                p.get("text", "") for p in parts or ()]:
            validate.unicode_text(text, f"messages[{n}].content")
        _within_limit(" ".join([content] if isinstance(content, str) else [
            p.get("text", "") for p in parts or ()]), f"messages[{n}].content")
    return out


# One message of a chat: a pasted chapter fits, a 5 MB paste (50 s of extraction, then the
# worker out of memory and the bridge broken until the chat page reloads) does not.
MAX_MESSAGE_CHARS = 100_000


def _within_limit(text: str, name: str) -> None:
    if len(text) > MAX_MESSAGE_CHARS:
        raise OmoideError.of("INVALID_ARGUMENT", name=name,
                             reason=f"{len(text)} characters, the limit is {MAX_MESSAGE_CHARS}")


def message_text(message: Message) -> tuple[str, str]:
    """(role, text) of a message: a plain string counts as the user speaking. The role in
    lower case (``wanted_roles``), as a transcript's ``User:`` lines are read: a JSON
    message of role "User" was read as no one's, the user's words left out unsaid."""
    if isinstance(message, str):
        return "user", message
    content = message.get("content", "")
    if isinstance(content, list):  # OpenAI content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(message.get("role", "user")).strip().lower(), str(content or "")


def wanted_roles(roles: Iterable[str]) -> set[str]:
    """The roles whose messages are read, compared as ``message_text`` gives them."""
    return {str(role).strip().lower() for role in roles}


_PUNCTUATION = " \t\n。、．，.,!?！？…・〜ー~\u3000"
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？!?])|\n+")
# English: a new clause where a new first-person statement starts ("I hate YAML, but I love
# TOML"; "I don't eat mushrooms, I just don't like the texture"; "I used to love coffee, but
# now I prefer tea"); "..., and I still do" belongs to the clause it takes back.
_EN_CLAUSE_SPLIT = re.compile(
    # a question asked after a statement ("Lilies have always been my favourite, how did you
    # remember?"), and what someone else does after it ("I ring my gran every Sunday, and
    # tonight she told me …"): clauses of their own; "X vs Y, which is better?" asks about X
    # and Y and stays one
    r",\s*(?=(?:(?:(?:how|why|where|when|who|what)\s+)?(?:did|do|does|can|could|have|will|"
    r"would|are|were)\s+(?:you|u|ya)|(?:got )?any (?:recs|recommendations|ideas|tips|thoughts|"
    r"suggestions))\b[^,.!?]*\?\s*$)|"
    r",?\s+(?:and|but|so)\s+(?=(?:(?:then|now|today|tonight|yesterday),?\s+)?"
    r"(?:he|she|they)\b)|"
    # chat's laugh between two sentences ("you're right lol I'm a sucker for …")
    r"\s+(?:lol|lmao|lmfao|haha+|hehe+)[.!,]*\s+(?=(?:i|i'm|i've|my)\b)|"
    r"\s*(?:;|\s[-–—]\s|,?\s+(?:and|but|also|plus|so)(?=\s)|,)\s*"
    r"(?!(?:i|we) still (?:do|am|are|have|love|like|enjoy)\b)"
    # an aside between the joint and the speaker ("… again and ugh i honestly cant stand …",
    # "summarize this, and btw I'm colour-blind", "help me plan this, but first: I've …")
    r"(?=(?:(?:now|nowadays|these days|lately|ugh+|oh|honestly|btw|fyi|tbh|ngl|by the way|"
    r"anyway|anyways|first|actually|lol|haha)[,:!]?\s+)?"
    r"(?:i|we|let's|i'm|i've|i'll|my|no more|from now on)\b)",
    re.IGNORECASE,
)
# A predicate's last kana before a reason or list conjunction (「好きだから、」「行くし、」):
# から after a noun is "from" (「来月から、」), し after わた/あた is the speaker (「わたし、」).
_JA_PREDICATE_END = "[すたいだくるうつむぶぐぬ]"
_JA_NOT_SPEAKER = "(?<!わたし)(?<!あたし)"
# 「1型糖尿病なんで、」 (cut after its で): なんで after a noun and before more is なので (a
# reason), not "why"
_JA_NOUN_NANDE = "(?<=[\u4e00-\u9fffァ-ヴー])なんで"
_JA_CONJUNCTION_END = re.compile(
    rf"(?<=[すたいだ])(?:が|けど|けれども|けれど)$|(?:なので|ので)$|{_JA_NOUN_NANDE}$|"
    rf"(?<={_JA_PREDICATE_END})から$|(?<={_JA_PREDICATE_END})し{_JA_NOT_SPEAKER}$"
)
# Japanese: after 「…ですが、」「…けど、」, after a reason 「…から、」「…ので、」 or a list
# 「…し、」 (each side states its own thing: 「甘いの好きだし、毎日ケーキ食べてる」), before
# 「、そして」, after a te-form 「…て、」「…で、」 (but not the topic 「…では、」), and after a
# polite end 「…ません、」「…ます、」 (「肉は食べません、ヴィーガンなので」: two statements);
# not before 「今も」「まだ」 (「昔は好きだったけど今も好き」 takes back its past), nor after a
# topic with って (「…始めるのって、」「…人って、」): the topic and what is said of it are one
# clause (a question about it is asked of both).
_JA_CLAUSE_SPLIT = re.compile(
    r"(?<=[すたいだ]が)、|(?<=けど)(?!、?(?:今も|今でも|いまも|いまでも|まだ))、?|"
    r"(?<=けれども)、?|(?<=けれど)、|、(?=そして)|"
    rf"(?<={_JA_PREDICATE_END}から)、|(?<=ので)、|"
    rf"(?<={_JA_PREDICATE_END}し){_JA_NOT_SPEAKER}、|"
    r"(?<=[^は][てで])(?<!のって)(?<!人って)、|(?<=ません)、|(?<=ます)、"
)


# Sentence ends inside a quoted title (『好きになるその瞬間を。』) do not end the sentence.
_QUOTE = re.compile(r"「[^」]*」|『[^』]*』")
_END_MARKS = str.maketrans("。！？!?", "\ue000\ue001\ue002\ue003\ue004")
_END_MARKS_BACK = str.maketrans("\ue000\ue001\ue002\ue003\ue004\ue005", "。！？!?.")
# The full stop of a title or an abbreviation ends no sentence: "My doctor is Dr. Sato" was
# stored as "My doctor is Dr.", and "I live in St. Paul now" merged into "I live in St.
# Louis" as the same words (both cut to "I live in St.").
_ABBREVIATION = re.compile(
    r"\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sr|Jr|St|Mt|Ft|Inc|Ltd|Co|Corp|Dept|Univ|Ave|Blvd|Rd|"
    r"vs|approx|e\.g|i\.e|a\.m|p\.m)\.(?=\s)", re.IGNORECASE)


def _with_me(parts: list[str]) -> list[str]:
    """"me and my sister facetime…": a lone "me" / "I" cut off before "and my …" is the
    speaker with them, one clause; so is "my partner" cut off before "and I …"."""
    out: list[str] = []
    for part in parts:
        if out and (re.fullmatch(r"(?:me|i)", out[-1], re.IGNORECASE) or (
                re.fullmatch(r"(?:my|our) [\w-]+(?: [\w-]+)?", out[-1], re.IGNORECASE)
                and re.match(r"(?:i|we)\b", part, re.IGNORECASE)) or (
                # "coffee and I are best friends": "I are" has the thing before it too
                re.fullmatch(r"[\w'-]+(?: [\w'-]+){0,2}", out[-1])
                and re.match(r"(?:i|me) (?:are|r|aren'?t|have been|don'?t|do not|never)\b",
                             part, re.IGNORECASE))):
            # "my twin bro and i are fraternal": the two of them, one clause too
            out[-1] = f"{out[-1]} and {part}"
        else:
            out.append(part)
    return out


def clauses(text: str) -> list[str]:
    out = []
    text = without_roleplay(text)
    masked = _QUOTE.sub(lambda m: m.group(0).translate(_END_MARKS), text)
    masked = _ABBREVIATION.sub(lambda m: m.group(0)[:-1] + "\ue005", masked)
    for sentence in _SENTENCE_SPLIT.split(masked):
        sentence = sentence.translate(_END_MARKS_BACK)
        sentence = sentence.strip()
        if not sentence:
            continue
        splitter = _JA_CLAUSE_SPLIT if has_japanese(sentence) else _EN_CLAUSE_SPLIT
        parts = [c.strip() for c in splitter.split(sentence) if c and c.strip()]
        if splitter is _EN_CLAUSE_SPLIT:
            parts = _with_me(parts)
        if splitter is _JA_CLAUSE_SPLIT and len(parts) > 1:
            # 「好きですが、」: the conjunction belongs to the split, not to the memory
            parts = [p for p in (_JA_CONJUNCTION_END.sub("", p) for p in parts) if p]
        # a part that is only punctuation (「…といいけど。」 cut after its conjunction) is none
        parts = [p for p in parts if p.strip(_PUNCTUATION)]
        out.extend(parts)
    if len(out) > 1:
        out = rules_for(has_japanese(text)).with_verdicts(out)
    return out


# Character chat: what the user's persona does in the story is written between asterisks
# ("*hands you a cup of tea*", 「＊剣を抜く＊」) and states nothing about the user; a note to the
# other player is marked out of character ("(OOC: I love slow-burn plots)",
# 「（中の人：社会人です）」, 「【PL】…」) and is the user speaking plainly. An action goes; a
# note's words stay, as a sentence of their own. Emphasis ("I *really* love tea", "*Dune* is
# the best") is no action: its words stay.
_BOLD = re.compile(r"(?:\*\*|＊＊)([^*＊\n]{1,300}?)(?:\*\*|＊＊)")
_ASTERISKED = re.compile(r"[*＊](?P<body>[^*＊\n]{1,300}?)[*＊]")
# an English action: its first word a verb in the third person ("*sits down next to you*",
# "*draws my sword*") or the listener in it ("*hands you a mug*"), two words at least
_EN_ACTION = re.compile(
    r"^(?=\S+\s+\S)(?:[a-z]+(?<!ss)s\b|.*\b(?:you|your|yours|u|ur)\b)|"
    # an emote alone ("*sighs*", "*grin*")
    r"^(?:sighs?|smiles?|laughs?|giggles?|nods?|grins?|blush(?:es)?|hugs?|winks?|shrugs?|"
    r"cries|cry|sobs?|pouts?|yawns?|gasps?|coughs?|facepalms?|waves?|chuckles?|snickers?|"
    r"smirks?|stares?|glares?|pats?|headpats?|cuddles?|kisses|kiss|bows?|stretch(?:es)?|"
    r"blinks?|squeals?|screams?|groans?|huffs?|hums?|shivers?|beams?|exhales?|inhales?|"
    r"sniffs?|gulps?|whispers?|mutters?|mumbles?|sips?|yells?|shouts?|wiggles?|stomps?)$",
    re.IGNORECASE)
_OOC_NOTE = re.compile(
    r"[(\[（【]{1,2}\s*(?:ooc|out of character|中の人|pl|ＰＬ)\s*(?:[:：\-]\s*|[)\]）】]\s*)"
    r"(?P<body>[^)\]）】]*)[)\]）】]{0,2}|"
    r"(?:^|(?<=\n))\s*(?:ooc|中の人)\s*[:：]\s*(?P<bare>[^\n]*)", re.IGNORECASE)


def without_roleplay(text: str) -> str:
    """A character-chat message without its roleplay actions, its out-of-character notes
    as plain sentences."""
    if "*" not in text and "＊" not in text and not _OOC_HINT.search(text):
        return text
    text = _OOC_NOTE.sub(lambda m: f"\n{m.group('body') or m.group('bare') or ''}\n", text)
    text = _BOLD.sub(r"\g<1>", text)  # 「私は**猫**が好き」: bold is emphasis, never an action

    def action_or_emphasis(match: re.Match[str]) -> str:
        body = match.group("body").strip()
        return "\n" if has_japanese(body) or _EN_ACTION.match(body) else body

    return _ASTERISKED.sub(action_or_emphasis, text)


_OOC_HINT = re.compile(r"ooc|out of character|中の人|[(\[（【]\s*(?:pl|ＰＬ)\b", re.IGNORECASE)


# -- the extractor ----------------------------------------------------------------------------


def rules_for(ja: bool) -> ModuleType:
    """``extract_ja`` or ``extract_en``, imported on first use: compiling their patterns is
    most of the cost of importing the governance package, and the browser engine's boot
    imports it without extracting anything (``python -X importtime``)."""
    return importlib.import_module(_JA_RULES if ja else _EN_RULES)


_EN_RULES = "omoide.governance.extract_en"
_JA_RULES = "omoide.governance.extract_ja"

BASE_IMPORTANCE = {"preference": 0.6, "pattern": 0.6, "decision": 0.7, "fact": 0.5}


def clamp_content(text: str) -> str | None:
    """Content within 3..500 characters: collapse spaces, cut long text at a word boundary."""
    text = " ".join(text.split()).strip(" ,;")
    if len(text) < MIN_CONTENT:
        return None
    if len(text) > MAX_CONTENT:
        cut = text[: MAX_CONTENT - 1]
        space = cut.rfind(" ")
        text = (cut[:space] if space > MAX_CONTENT // 2 else cut) + "…"
    return text


_AGAIN = re.compile(r"\b(?:again|another|once more)\b|また|もう一度|再び|今度も", re.I)
_EN_STRONG = re.compile(r"\b(?:really|love|hate|never|absolutely|definitely)\b", re.I)
_JA_STRONG = re.compile(r"大好き|大嫌い|必ず|絶対|決して|本当に|とても|すごく")


def extract_clause(
    clause: str, source: int = 0, *, previous: str | None = None
) -> Candidate | None:
    """The candidate one clause states, or None. ``previous`` is the clause before it in the
    same message (what "it" / 「本当に好き」 refer to)."""
    ja = has_japanese(clause)
    rules = rules_for(ja)
    found = rules.japanese(clause, previous) if ja else rules.english(clause, previous)
    if found is None:
        return None
    kind, polarity, subject, meta = found
    when = time_words(clause) if kind == "decision" and _AGAIN.search(clause) else None
    if when:
        # "heading to Tokyo again in August": a second trip, not the first one moved (its
        # date is in its key; ``ingest.gives_a_new_value``)
        subject = f"{subject} {' '.join(sorted(when))}"
    key = make_key(kind, subject)
    content = clamp_content(clause)
    if key is None or content is None:
        return None
    strong = (_JA_STRONG if ja else _EN_STRONG).search(clause) is not None
    importance = min(1.0, BASE_IMPORTANCE[kind] + (0.1 if strong else 0.0))
    meta = dict(meta)
    if polarity:
        meta["polarity"] = polarity
    return Candidate(
        text=content, kind=kind, key=key, polarity=polarity, importance=importance,
        lang="ja" if ja else "en", source=source, meta=meta,
    )


class ClauseClassifier(Protocol):
    """The second stage (``clause_model.classifier_for(embedder)``: the learned classifier of
    the loaded model, or ``prototypes.PrototypeClassifier`` for a model without weights).
    ``via`` names it on the candidates it finds."""

    via: str

    def classify(self, clauses: Sequence[str]) -> list[tuple[str, str] | None]: ...


class ReviewingClassifier(ClauseClassifier, Protocol):
    """A second stage that may also veto what a pattern rule matched
    (``clause_model.LearnedClauseClassifier``): ``review(open, matched)`` answers the open
    clauses' verdicts and, per matched clause, whether to drop its candidate."""

    def review(self, open_clauses: Sequence[str], matched_clauses: Sequence[str]
               ) -> tuple[list[tuple[str, str] | None], list[bool]]: ...


def extract(
    messages: Sequence[Message] | str,
    *,
    roles: Iterable[str] = ("user",),
    classifier: ClauseClassifier | None = None,
) -> tuple[list[Candidate], list[Unmatched]]:
    """Candidates from the messages spoken by ``roles`` (plain strings count as "user"),
    in order, plus the messages nothing was found in (with why). With a ``classifier``,
    clauses no pattern matched (and no rule refused) go through it in one batch, those
    about the user's people (``open_person``) for a fact about them only; one with
    ``review`` (the learned stage) also sees the open clauses a rule matched and may veto
    them."""
    if isinstance(messages, str):
        messages = [messages]
    wanted = wanted_roles(roles)
    found: dict[int, list[tuple[int, Candidate]]] = {}
    texts: dict[int, str] = {}
    # (message, clause, clause text, open text, about one of the user's people: facts only)
    pending: list[tuple[int, int, str, str, bool]] = []
    # pattern candidates the stage may veto (a classifier with ``review``), with the open text
    matched: list[tuple[Candidate, str]] = []
    can_veto = hasattr(classifier, "review")
    for index, message in enumerate(messages):
        role, text = message_text(message)
        if role not in wanted:
            continue
        texts[index] = text
        found[index] = []
        parts = clauses(text)
        for i, part in enumerate(parts):
            module = rules_for(has_japanese(part))
            if i + 1 < len(parts) and module.asked_about(part, parts[i + 1]):
                continue  # what the question after it asks about
            candidate = extract_clause(part, index, previous=parts[i - 1] if i else None)
            if candidate:
                found[index].append((i, candidate))
                # a fact about someone else (the gate refuses the clause) is never vetoed
                opened = module.open_statement(part) if can_veto else None
                if opened:
                    matched.append((candidate, opened))
            elif classifier is not None:
                # who the clause is about comes first: "my grandparents run a ryokan" has no
                # verb the open-statement gate knows as someone else's
                person = module.open_person(part)
                if person is None and i:
                    # 「妹は家を売って、沖縄に移ると決めた」: the sister's, as 「妹は…」 would be
                    person = module.carried_person(part, parts[i - 1])
                opened = person or module.open_statement(part)
                if opened:
                    pending.append((index, i, part, opened, person is not None))
    review = getattr(classifier, "review", None)
    if review is not None and (pending or matched):
        verdicts, vetoed = review([p[3] for p in pending], [m[1] for m in matched])
        dropped = {id(candidate) for (candidate, _), no in zip(matched, vetoed, strict=True)
                   if no}
        for index in found:
            found[index] = [item for item in found[index] if id(item[1]) not in dropped]
    elif pending and classifier is not None:
        verdicts = classifier.classify([p[3] for p in pending])
    if pending and classifier is not None:
        for (index, i, part, opened, person), verdict in zip(pending, verdicts, strict=True):
            if person and verdict is not None and verdict[0] != "fact":
                continue  # what someone else does or likes is not the user's
            candidate = _classified(part, opened, index, verdict, classifier.via)
            if candidate:
                found[index].append((i, candidate))
    candidates: list[Candidate] = []
    unmatched: list[Unmatched] = []
    for index, items in found.items():
        candidates.extend(c for _, c in sorted(items, key=lambda item: item[0]))
        if not items:
            reason = ("empty message" if not texts[index].strip()
                      else "no preference, decision, habit or fact")
            unmatched.append(Unmatched(index, reason))
    return candidates, unmatched


def _classified(clause: str, opened: str, source: int,
                verdict: tuple[str, str] | None, via: str) -> Candidate | None:
    if verdict is None:
        return None
    kind, polarity = verdict
    ja = has_japanese(clause)
    subject = rules_for(ja).open_subject(kind, opened)
    key = make_key(kind, subject)
    content = clamp_content(clause)
    if key is None or content is None:
        return None
    polarity_or_none = None if kind == "fact" else polarity
    return Candidate(
        text=content, kind=kind, key=key, polarity=polarity_or_none,
        importance=BASE_IMPORTANCE[kind], lang="ja" if ja else "en", source=source,
        via=via, meta={"polarity": polarity_or_none} if polarity_or_none else {},
    )
