"""Pattern extraction: conversation text -> memory candidates, English and Japanese.

No model, no dictionary download: a handful of anchored regular expressions per language,
run on each clause of each user message. What a pattern recognises:

- preference (factual): "I prefer/like/love/enjoy X", "I don't like X", "I hate X",
  「Xが好きです」「Xは好きではありません」「Xが嫌いです」「Xが苦手です」
- decision (episodic): "I'll/we'll use X", "I decided to X", "we're going with X",
  "let's use X", "we won't use X", 「Xを使います」「Xにしました」「Xに決めました」
- pattern (factual, a habit): "I usually/always/never X", "I tend to X",
  「いつもX」「必ずX」「普段はX」「決してXません」

Each candidate gets a polarity (``like`` / ``dislike``: "never", "don't like", 「嫌い」 are
dislikes) and a normalized key ``<kind>:<subject>`` so that the same statement made twice,
or made in the other language, lands on the same key (which is what write-time dedup and
contradiction detection use).

Key rule (both languages): ``kind + ":" + subject`` where the subject is
1. NFKC + case folded; a leading article/possessive dropped; clause tails after
   "because/but/since/…" and trailing intensifiers ("a lot", "very much", "too") dropped;
   decisions drop their leading verb ("use", "go with", "switch to": "I decided to use
   Postgres" and "We'll use Postgres" share ``decision:postgres``);
2. Japanese only: context phrases become their English tail (「このプロジェクトでは」 ->
   "for this project", 「仕事では」 -> "at work", 「家では」 -> "at home"); 「AするまえにB」 /
   「AしたあとでB」 become "B before A-ing" / "B after A-ing"; a small glossary of katakana
   developer words maps to English (コミット -> commit, プッシュ -> push, パイソン -> python);
   polite verb endings (します/です/ます/…) are dropped; ASCII words are kept as they are;
   any other Japanese stays Japanese, split at the case particles は が を に で と へ も の
   where they follow a non-hiragana character;
3. the remaining words are joined with "_" (letters, digits, "+", "#" and inner "." kept;
   other punctuation dropped), at most 80 characters, cut at a word boundary.

So "I prefer TypeScript" and 「TypeScriptが好きです」 both give ``preference:typescript``,
"We'll use Postgres for this project" and 「このプロジェクトではPostgresを使います」 both give
``decision:postgres_for_this_project``, "I always commit before pushing" and
「いつもプッシュする前にコミットします」 both give ``pattern:commit_before_pushing``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from omoide.engine.memory import KIND_TYPES

MIN_CONTENT = 3
MAX_CONTENT = 500
MAX_SUBJECT = 80

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
    via: str = "pattern"  # "pattern" / "llm"
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


def message_text(message: Message) -> tuple[str, str]:
    """(role, text) of a message: a plain string counts as the user speaking."""
    if isinstance(message, str):
        return "user", message
    content = message.get("content", "")
    if isinstance(content, list):  # OpenAI content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(message.get("role", "user")), str(content or "")


def has_japanese(text: str) -> bool:
    return any(
        "\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf"
        for c in text
    )


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？!?])|\n+")
_EN_CLAUSE_SPLIT = re.compile(
    r"\s*(?:;|,?\s+(?:and|but|also|plus)(?=\s)|,)\s*(?=(?:i|we|let's)\b)",
    re.IGNORECASE,
)
_JA_CONJUNCTION_END = re.compile(r"(?<=[すたい])(?:が|けど|けれども)$")
_JA_CLAUSE_SPLIT = re.compile(r"(?<=[すたい]が)、|(?<=けど)、?|(?<=けれども)、?|、(?=そして)")


def clauses(text: str) -> list[str]:
    out = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        splitter = _JA_CLAUSE_SPLIT if has_japanese(sentence) else _EN_CLAUSE_SPLIT
        parts = [c.strip() for c in splitter.split(sentence) if c and c.strip()]
        if splitter is _JA_CLAUSE_SPLIT and len(parts) > 1:
            # 「好きですが、」: the conjunction belongs to the split, not to the memory
            parts = [_JA_CONJUNCTION_END.sub("", p) for p in parts]
        out.extend(parts)
    return out


# -- English ------------------------------------------------------------------------------

_EN_LEAD = (
    r"^(?:(?:well|ok|okay|so|actually|honestly|also|and|but|yeah|yes|oh|btw|personally|"
    r"i think|i guess|to be honest|in general|generally)[,!]?\s+)*"
)
_WE = r"(?:i|we)"
_SUBJECT = r"(?P<x>.+)"
_DECISION_VERBS = (
    r"(?:use|go with|adopt|pick|choose|switch to|stick with|move to|migrate to|try|"
    r"standardi[sz]e on|settle on)"
)

# (kind, polarity, compiled pattern); the first match wins, so negations come first.
_EN_PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    (k, p, re.compile(_EN_LEAD + body, re.IGNORECASE))
    for k, p, body in [
        ("preference", "dislike",
         rf"{_WE}\s+(?:really\s+|just\s+)?(?:don'?t|do not|never)\s+(?:really\s+)?"
         rf"(?:like|love|enjoy|care for)\s+{_SUBJECT}"),
        ("preference", "dislike",
         rf"{_WE}\s+(?:really\s+|absolutely\s+|kind of\s+)?(?:hate|dislike|detest|loathe|"
         rf"despise|can'?t stand|cannot stand)\s+{_SUBJECT}"),
        ("preference", "dislike", rf"(?:i'?m|i am|we'?re|we are)\s+not\s+(?:a\s+)?fans?\s+of\s+"
                                  rf"{_SUBJECT}"),
        ("preference", "like",
         rf"{_WE}\s+(?:really\s+|do\s+|just\s+|absolutely\s+|kind of\s+|quite\s+|much\s+|"
         rf"definitely\s+|still\s+)?(?:prefer|like|love|enjoy|adore)\s+{_SUBJECT}"),
        ("preference", "like", rf"(?:i'?m|i am|we'?re|we are)\s+(?:a\s+)?(?:big\s+|huge\s+)?"
                               rf"fans?\s+of\s+{_SUBJECT}"),
        ("decision", "dislike",
         rf"{_WE}\s*(?:won'?t|will not|shan'?t|are not going to|aren'?t going to|"
         rf"am not going to|'?m not going to)\s+{_DECISION_VERBS}\s+{_SUBJECT}"),
        ("decision", "dislike", rf"{_WE}\s+(?:have\s+|'ve\s+)?decided\s+not\s+to\s+{_SUBJECT}"),
        ("decision", "like",
         rf"{_WE}\s*(?:'ll|will|shall|are going to|'re going to|am going to|'m going to|"
         rf"'re gonna|'m gonna)\s+{_DECISION_VERBS}\s+{_SUBJECT}"),
        ("decision", "like",
         rf"{_WE}\s+(?:have\s+|'ve\s+)?(?:decided|chose|have chosen|'ve chosen|picked)\s+"
         rf"(?:to\s+|on\s+)?{_SUBJECT}"),
        ("decision", "like", rf"(?:we'?re|we are|i'?m|i am)\s+going\s+with\s+{_SUBJECT}"),
        ("decision", "like", rf"{_WE}\s+(?:have\s+|'ve\s+)?settled\s+on\s+{_SUBJECT}"),
        ("decision", "like", rf"let'?s\s+{_DECISION_VERBS}\s+{_SUBJECT}"),
        ("pattern", "dislike", rf"{_WE}\s+(?:never|rarely|seldom|hardly ever)\s+{_SUBJECT}"),
        ("pattern", "like",
         rf"{_WE}\s+(?:usually|always|often|generally|normally|typically|tend to|"
         rf"make a point of|habitually)\s+{_SUBJECT}"),
    ]
]

# "always" ~ いつも (plain habit); "never" ~ 決して (emphatic): both languages score alike.
_EN_STRONG = re.compile(r"\b(?:really|love|hate|never|absolutely|definitely)\b", re.I)
_EN_TAIL_CUT = re.compile(
    r"\s*(?:,|\s(?:because|since|as it|as they|but|though|although|when i can|if i can|"
    r"whenever possible|if possible|which|so that)\b).*$",
    re.IGNORECASE,
)
_EN_TAIL_FILLER = re.compile(
    r"(?:\s+(?:a lot|a bunch|very much|so much|too|as well|anymore|any more|really|"
    r"these days|nowadays|lately|now|though|actually|honestly|instead|at all|most|"
    r"the most|better|more))+$",
    re.IGNORECASE,
)
_EN_LEAD_WORDS = re.compile(
    r"^(?:(?:the|a|an|my|our|some|to|using|working with|writing|coding in)\s+)+", re.I
)
_EN_DECISION_LEAD = re.compile(r"^(?:" + _DECISION_VERBS + r")\s+", re.IGNORECASE)
_EN_PREFER_SPLIT = re.compile(r"\s+(?:over|rather than|instead of|more than|to)\s+", re.I)


def _en_subject(kind: str, raw: str, verb_used_prefer: bool) -> tuple[str, dict[str, str]]:
    meta: dict[str, str] = {}
    x = _EN_TAIL_CUT.sub("", raw.strip())
    x = x.rstrip(" .!?;:")
    x = _EN_TAIL_FILLER.sub("", x)
    if kind == "decision":
        x = _EN_DECISION_LEAD.sub("", x)
    if verb_used_prefer:
        splitter = _EN_PREFER_SPLIT
        if re.match(r"to\s", x, re.IGNORECASE):  # "prefer to listen to music": verb, not rival
            splitter = re.compile(_EN_PREFER_SPLIT.pattern.replace("|to)", ")"), re.IGNORECASE)
        parts = splitter.split(x, maxsplit=1)
        if len(parts) == 2 and parts[0].strip():
            x, meta["over"] = parts[0], parts[1].strip()
    x = _EN_LEAD_WORDS.sub("", x.strip())
    return x, meta


def _extract_en(clause: str) -> tuple[str, str, str, dict[str, str]] | None:
    for kind, polarity, pattern in _EN_PATTERNS:
        match = pattern.match(clause)
        if match:
            prefer = bool(re.search(r"\bprefer\b", clause[: match.start("x")], re.I))
            subject, meta = _en_subject(kind, match.group("x"), prefer)
            if subject:
                return kind, polarity, subject, meta
    return None


# -- Japanese ----------------------------------------------------------------------------------

_JA_LEAD = re.compile(
    r"^(?:(?:えっと|あの|実は|ちなみに|正直|正直に言うと|個人的には|やっぱり|まあ|でも|あと|"
    r"それと|そして)[、,]?\s*)*(?:(?:私|わたし|僕|ぼく|俺|おれ|自分|私たち|僕たち|うち|我々)"
    r"(?:は|も|が)[、,]?\s*)?"
)
_JA_CONTEXT: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?:この|今回の|今の)プロジェクト(?:では|で|には|に|は)?[、,]?"),
     "for this project"),
    (re.compile(r"(?:仕事|職場|会社)(?:では|で|は)[、,]?"), "at work"),
    (re.compile(r"(?:家|自宅)(?:では|で|は)[、,]?"), "at home"),
]
_JA_EN_CONTEXT = re.compile(r"\s+(for this project|at work|at home)$", re.IGNORECASE)

_X = r"(?P<x>.+?)"
_JA_PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    (k, p, re.compile(body))
    for k, p, body in [
        ("preference", "dislike",
         rf"^{_X}(?:の方|のほう)?(?:は|が|も)(?:あまり|あんまり|そんなに|それほど)?"
         r"(?:好き|すき)(?:では|じゃ)(?:ありません|ない|なかった)"),
        ("preference", "dislike", rf"^{_X}(?:は|が|も)(?:大|だい)?(?:嫌い|きらい|苦手|にがて)"),
        ("preference", "like",
         rf"^{_X}(?:の方|のほう)?(?:が|は|も)(?:大|だい|とても|すごく|本当に|一番)?"
         r"(?:好き|すき)(?!(?:では|じゃ))"),
        ("preference", "like", rf"^{_X}を(?:好み|好む|好んで)"),
        ("preference", "like", rf"^{_X}(?:の方|のほう)がいい"),
        ("decision", "dislike",
         rf"^{_X}(?:は|を)(?:使いません|使わない|使用しません|採用しません)"),
        ("decision", "like",
         rf"^{_X}を(?:使い|使う|使用し|使用する|採用し|採用する)"
         r"(?:ます|ました|ことにしました|ことにします|ことに決めました)"),
        ("decision", "like", rf"^{_X}に(?:しました|します|決めました|決定しました|決めた|した)"),
    ]
]
_JA_HABIT = re.compile(
    r"^(?P<pre>.*?)(?P<adv>いつも|必ず|常に|毎回|普段は|普段|たいてい|大抵|決して|絶対に|絶対)"
    r"[、,]?\s*(?P<x>.+)$"
)
_JA_NEGATIVE_END = re.compile(r"(?:しません|ません|しない|ない|ません。)$")
_JA_ENDINGS = re.compile(
    r"(?:ようにしています|ようにしてる|ようにする|ことにしています|しています|してます|している|"
    r"しませんでした|しません|しなかった|しない|します|しました|する|した|でした|です|だ|ています|てます|ている|ます|ました|ません|"
    r"ない|ね|よ|の)+$"
)
_JA_STRONG = re.compile(r"大好き|大嫌い|必ず|絶対|決して|本当に|とても|すごく")
_JA_BEFORE = re.compile(
    r"^(?P<a>.+?)(?:する|した|の)?(?:前に|まえに|前は)[、,]?(?P<b>.+)$"
)
_JA_AFTER = re.compile(
    r"^(?P<a>.+?)(?:した|の)?(?:後で|あとで|後に|あとに|後は)[、,]?(?P<b>.+)$"
)

# Katakana developer words -> (English word, its -ing form). Small on purpose: the key only
# needs to agree with the English one for words both languages write differently.
JA_GLOSSARY: dict[str, tuple[str, str]] = {
    "コミット": ("commit", "committing"),
    "プッシュ": ("push", "pushing"),
    "プル": ("pull", "pulling"),
    "マージ": ("merge", "merging"),
    "リベース": ("rebase", "rebasing"),
    "テスト": ("test", "testing"),
    "デプロイ": ("deploy", "deploying"),
    "レビュー": ("review", "reviewing"),
    "ビルド": ("build", "building"),
    "リリース": ("release", "releasing"),
    "リファクタリング": ("refactor", "refactoring"),
    "タイプスクリプト": ("typescript", "typescript"),
    "ジャバスクリプト": ("javascript", "javascript"),
    "パイソン": ("python", "python"),
    "ポスグレ": ("postgres", "postgres"),
    "ポストグレス": ("postgres", "postgres"),
    "ラズベリーパイ": ("raspberry pi", "raspberry pi"),
}
_GLOSSARY_RE = re.compile("|".join(sorted(map(re.escape, JA_GLOSSARY), key=len, reverse=True)))
_JA_PARTICLE_SPLIT = re.compile(
    r"(?<=[^\u3040-\u309f\s])[はがをにでとへもの](?=[^\u3040-\u309f]|$)"
)


def _gerund(phrase: str) -> str:
    """-ing form of a short verb phrase: glossary first, else the plain English rule."""
    phrase = phrase.strip()
    if phrase in JA_GLOSSARY:
        return JA_GLOSSARY[phrase][1]
    match = re.fullmatch(r"([a-z]+)(\b.*)", phrase, re.IGNORECASE)
    if not match:
        return phrase
    verb, rest = match.groups()
    if verb.endswith("ie"):
        verb = verb[:-2] + "ying"
    elif verb.endswith("e") and not verb.endswith("ee") and len(verb) > 2:
        verb = verb[:-1] + "ing"
    elif not verb.endswith("ing"):
        verb += "ing"
    return verb + rest


def _ja_subject(raw: str) -> str:
    x = _JA_ENDINGS.sub("", raw.strip(" 、,。")).strip(" 、,")
    for template, word in ((_JA_BEFORE, "before"), (_JA_AFTER, "after")):
        match = template.match(x)
        if match:
            a = _JA_ENDINGS.sub("", match.group("a"))
            b = _JA_ENDINGS.sub("", match.group("b"))
            x = f"{_ja_words(b)} {word} {_gerund(_ja_words(a))}"
            break
    return _ja_words(x)


def _ja_words(text: str) -> str:
    text = _JA_PARTICLE_SPLIT.sub(" ", text)  # before the glossary: it needs the katakana
    text = _GLOSSARY_RE.sub(lambda m: " " + JA_GLOSSARY[m.group(0)][0] + " ", text)
    return " ".join(text.split())


def _extract_ja(clause: str) -> tuple[str, str, str, dict[str, str]] | None:
    body = clause.rstrip("。.!！?？ ")
    body = _JA_LEAD.sub("", body)
    context = ""
    for pattern, english in _JA_CONTEXT:
        if pattern.search(body):
            body = pattern.sub("", body, count=1)
            context = english
            break
    found: tuple[str, str, str] | None = None
    for kind, polarity, pattern in _JA_PATTERNS:
        match = pattern.match(body)
        if match:
            found = (kind, polarity, match.group("x"))
            break
    if found is None:
        match = _JA_HABIT.match(body)
        if match:
            x = (match.group("pre") + match.group("x")).strip(" 、,")
            negative = bool(_JA_NEGATIVE_END.search(x))
            if match.group("adv") == "決して" or negative:
                polarity = "dislike"
            else:
                polarity = "like"
            found = ("pattern", polarity, x)
    if found is None:
        return None
    kind, polarity, raw = found
    subject = _ja_subject(raw)
    if context:
        subject = f"{subject} {context}"
    return (kind, polarity, subject, {}) if subject else None


# -- keys ------------------------------------------------------------------------------------


def normalize_subject(subject: str) -> str:
    """The subject part of a key (see the module docstring for the rule)."""
    text = unicodedata.normalize("NFKC", subject).casefold().replace("'", "").replace("’", "")
    words = re.findall(r"[^\W_]+(?:[.+#][^\W_]+)*[+#]*|[+#]+", text)
    out: list[str] = []
    length = 0
    for word in words:
        if out and length + 1 + len(word) > MAX_SUBJECT:
            break
        out.append(word[:MAX_SUBJECT])
        length += len(word) + (1 if len(out) > 1 else 0)
    return "_".join(out)


def make_key(kind: str, subject: str) -> str | None:
    """``kind:subject`` for any subject text, English or Japanese (used by the LLM path
    too, so both paths agree on keys)."""
    if has_japanese(subject):
        subject = _ja_subject(subject)
    normalized = normalize_subject(subject)
    return f"{kind}:{normalized}" if normalized else None


# -- the extractor ----------------------------------------------------------------------------

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


def extract_clause(clause: str, source: int = 0) -> Candidate | None:
    """The candidate one clause states, or None."""
    if clause.rstrip().endswith(("?", "？")) or re.search(r"か[?？。]?$", clause.rstrip()):
        return None  # questions state nothing about the speaker
    ja = has_japanese(clause)
    found = _extract_ja(clause) if ja else _extract_en(clause)
    if found is None:
        return None
    kind, polarity, subject, meta = found
    key = make_key(kind, subject) if ja else (
        f"{kind}:{normalize_subject(subject)}" if normalize_subject(subject) else None
    )
    content = clamp_content(clause)
    if key is None or content is None:
        return None
    strong = (_JA_STRONG if ja else _EN_STRONG).search(clause) is not None
    importance = min(1.0, BASE_IMPORTANCE[kind] + (0.1 if strong else 0.0))
    meta = dict(meta)
    meta["polarity"] = polarity
    return Candidate(
        text=content, kind=kind, key=key, polarity=polarity, importance=importance,
        lang="ja" if ja else "en", source=source, meta=meta,
    )


def extract(
    messages: Sequence[Message] | str, *, roles: Iterable[str] = ("user",)
) -> tuple[list[Candidate], list[Unmatched]]:
    """Candidates from the messages spoken by ``roles`` (plain strings count as "user"),
    in order, plus the messages nothing was found in (with why)."""
    if isinstance(messages, str):
        messages = [messages]
    wanted = set(roles)
    candidates: list[Candidate] = []
    unmatched: list[Unmatched] = []
    for index, message in enumerate(messages):
        role, text = message_text(message)
        if role not in wanted:
            continue
        found = [c for c in (extract_clause(cl, index) for cl in clauses(text)) if c]
        candidates.extend(found)
        if not found:
            reason = "empty message" if not text.strip() else "no preference, decision or habit"
            unmatched.append(Unmatched(index, reason))
    return candidates, unmatched
