"""Write-time dedup: find the live memory a candidate repeats, or the one it contradicts.

A merge may only fold a candidate into a memory that SAYS THE SAME THING:
1. same key (``preference:typescript``) and the same polarity: the key is the identity;
2. no key on either side (diary notes, typed facts), passage vectors with cosine >=
   ``threshold`` (default 0.92) and the same polarity (``governance.polarity``). Two
   different keys, or a key and no key, are never merged on similarity: small models put
   "Java" and "JavaScript", or "I love spicy ramen" and "I don't like spicy ramen anymore",
   above 0.92, and a false merge silently loses a fact.

Same key, opposite polarity is a CONTRADICTION: the candidate supersedes the memory (a new
record; the old one goes to the trash as its history, ``engine.supersede``). A merge keeps
the memory's text unless the new text is a strict superset of it ("I like tea" ->
"I like tea with milk"); then the grown text supersedes the old record the same way, so
the previous text stays restorable. Either way importance is the max of both and
``meta["merges"]`` counts the repeats.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from omoide.engine.analyzer import analyze
from omoide.engine.memory import Memory
from omoide.engine.sentences import split_sentences
from omoide.engine.store import CharacterStore, as_float_list
from omoide.governance import activity, meta_fields
from omoide.governance.extract import Candidate, extract
from omoide.governance.keys import has_japanese, make_key, singular
from omoide.governance.polarity import stance

DEFAULT_THRESHOLD = 0.92
NEIGHBOURS = 16  # nearest rows looked at; a near-duplicate of the same kind is among them
MAX_HISTORY = 20


@dataclass(frozen=True)
class Match:
    memory_id: str
    reason: str  # "same key" | "near-identical"
    cosine: float | None


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def polarity_of(memory: Memory) -> str:
    """The polarity extraction gave it, else the one its text shows."""
    value = memory.meta.get("polarity")
    return value if value in ("like", "dislike") else stance(memory.text)


def candidate_polarity(candidate: Candidate) -> str:
    return candidate.polarity if candidate.polarity in ("like", "dislike") else stance(
        candidate.text)


def is_contradiction(memory: Memory, candidate: Candidate) -> bool:
    """Same key, opposite polarity."""
    return (memory.key is not None and memory.key == candidate.key
            and polarity_of(memory) != candidate_polarity(candidate))


def _plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


# a word of a spaced script, or one character of a script written without spaces: CJK
# (with the ideographs beyond the BMP), Thai, Lao, Myanmar, Khmer; their combining marks
# are units of their own (a containment test, not a segmentation)
_UNIT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                   r"\U00020000-\U0003134f\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"
                   r"|[^\W_]+|_")


def _units(text: str) -> list[str]:
    return _UNIT.findall(_plain(text))


def same_words(a: str, b: str) -> bool:
    """Whether two texts say the same words in the same order (case and punctuation
    aside): a repeat, which a merge may fold without keeping the new text."""
    return _units(a) == _units(b)


def says_nothing_more(a: str, b: str) -> bool:
    """Whether ``a`` says nothing ``b`` does not: each of its indexed words and each of its
    numbers and names is in ``b``. The rule for a text folded away into another (a note
    merged into a near-identical one, a cold duplicate): one differing word is the whole
    fact in a short note ("allergic to penicillin" / "... amoxicillin", "umbrella on the
    train" / "... bus": half their words shared, they were merged and, 30 days on,
    purged)."""
    x, y = set(analyze(a)), set(analyze(b))
    return x <= y and marked_words(a) <= marked_words(b)


def foldable(new: str, old: str) -> bool:
    """Whether ``new`` may fold into ``old``: it says nothing more, or all of it and more in
    one run (``is_strict_superset``: the caller then keeps the longer text)."""
    return says_nothing_more(new, old) or is_strict_superset(new, old)


# The words that tell two notes of the same wording apart: numbers (a rent, a date, a time),
# names (a capitalised word inside a sentence, a katakana word) and the people of a family
# ("Took Pochi / Hana to the vet", "paid 80,000 / 85,000 yen", "my sister's / brother's
# flight"). Two notes that differ in one are two notes, whatever else they share.
_SENTENCE = re.compile(r"[^.!?。！？\n]+")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_KATAKANA = re.compile(r"[ァ-ヴー]{2,}")
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'll", "i'd", "i’m", "i’ve", "i’ll", "i’d"})
_PEOPLE = re.compile(
    r"\b(?:sister|brother|mother|mom|mum|father|dad|son|daughter|wife|husband|boyfriend|"
    r"girlfriend|partner|grandma|grandpa|grandmother|grandfather|aunt|uncle|cousin|niece|"
    r"nephew|boss|friend|coworker|colleague|neighbou?r)s?\b|"
    r"姉|兄|妹|弟|母|父|夫|妻|息子|娘|彼氏|彼女|祖母|祖父|叔母|伯母|叔父|伯父|上司|友達|同僚",
    re.IGNORECASE)


def marked_words(text: str) -> frozenset[str]:
    text = unicodedata.normalize("NFKC", text)
    out = {n.replace(",", "") for n in _NUMBER.findall(text)}
    out.update(_KATAKANA.findall(text))
    out.update(m.group(0).lower().rstrip("s") for m in _PEOPLE.finditer(text))
    for sentence in _SENTENCE.findall(text):
        for n, word in enumerate(_EN_WORD.findall(sentence)):
            # the first word is capitalised anyway: a name there when possessive ("Hana's")
            possessive = re.search(r"['’]s$", word) is not None
            if (word[0].isupper() and (n or possessive)
                    and word.lower() not in _FIRST_PERSON):
                out.add(re.sub(r"['’]s$", "", word))
    return frozenset(out)


def is_strict_superset(new: str, old: str) -> bool:
    """Whether ``new`` says everything ``old`` says and more (ignoring case and
    punctuation): ``old``'s words appear in ``new`` in one run, whole, and ``new`` has more
    ("I like tea" -> "I like tea with milk"; never "I like teaching": a word is not a
    prefix of another). The only merge that may replace a memory's text."""
    a, b = _units(new), _units(old)
    if not b or len(a) <= len(b):
        return False
    first = b[0]
    return any(a[i:i + len(b)] == b for i, unit in enumerate(a[:len(a) - len(b) + 1])
               if unit == first)


def merged(memory: Memory, candidate: Candidate, now: float) -> Memory:
    """The existing memory updated by a repeat of it: same text (unless the candidate's is a
    strict superset: then the caller supersedes the old record with this one), max
    importance, one more merge."""
    meta: dict[str, Any] = dict(memory.meta)
    meta["merges"] = meta_fields.count(meta, "merges") + 1
    meta["polarity"] = candidate_polarity(candidate)
    meta["lang"], meta["via"] = candidate.lang, candidate.via
    for name, item in candidate.meta.items():
        if name not in ("polarity", "tier", "merges", "history", "supersedes"):
            meta[name] = item
    grows = is_strict_superset(candidate.text, memory.text)
    return dataclasses.replace(
        memory,
        text=candidate.text if grows else memory.text,
        importance=max(memory.importance, candidate.importance),
        updated_at=now,
        key=memory.key or candidate.key,
        meta=meta,
    )


def keys_compatible(a: str | None, b: str | None) -> bool:
    """Whether two memories may merge on similarity: the same key, or neither has one. A
    key and no key never do (the keyless one may hold a subject through its text: that is
    the "same subject" rule, which asks for more than a cosine)."""
    return a == b


def says_one_thing(memory: Memory) -> bool:
    """A memory of one sentence: what a "same subject" supersede or merge may take the
    place of. A diary note of several sentences that mentions the subject in one of them
    also says other things, which a supersede would take out of the live set (and a merge
    would fold the candidate's text into)."""
    return len(split_sentences(memory.text)) <= 1


def subject_keys(memory: Memory) -> frozenset[str]:
    """The keys a memory is about: its own, else the ones extraction finds in its text (a
    memory typed without a key still has a subject: 「私は辛いラーメンが大好きです」 is about
    ``preference:辛いラーメン``)."""
    if memory.key is not None:
        return frozenset((memory.key,))
    found, _ = extract([memory.text], roles=("user",))
    return frozenset(c.key for c in found if c.key is not None)


# how a candidate whose key the learned stage made from its words arrived (``Candidate.via``)
GUESSED = frozenset(("learned", "prototype"))


class DedupIndex:
    """Matches candidates against a character's store plus the writes planned in this batch
    (so a batch that repeats itself also collapses, and a dry run sees what a real run would).
    ``retired``: ids a planned write supersedes (no longer matched).
    """

    def __init__(self, store: CharacterStore | None, threshold: float = DEFAULT_THRESHOLD):
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        self.store = store
        self.threshold = threshold
        self.planned: dict[str, tuple[Memory, list[float]]] = {}  # new or rewritten rows
        self.retired: dict[str, tuple[str, str]] = {}  # old id -> (new id, reason)
        # planned records to go to the trash once written (a merged candidate's own words)
        self.aside: set[str] = set()
        self._subjects: dict[tuple[str, str], frozenset[str]] = {}

    def current(self, memory_id: str) -> Memory:
        if memory_id in self.planned:
            return self.planned[memory_id][0]
        assert self.store is not None
        return self.store.records[memory_id]

    def plan(self, memory: Memory, vector: Sequence[float] | None) -> None:
        """Record a planned write (vector None: text unchanged, keep the stored row)."""
        if vector is None:
            vector = self.planned[memory.id][1] if memory.id in self.planned else None
        if vector is None and self.store is not None:
            vector = self.store.kernel.vector(memory.id)
        self.planned[memory.id] = (memory, as_float_list(vector) if vector is not None else [])

    def retire(self, old_id: str, new_id: str, reason: str) -> None:
        """Plan ``new_id`` superseding ``old_id`` (the new record is planned already)."""
        self.retired[old_id] = (new_id, reason)

    def _subjects_of(self, memory: Memory) -> frozenset[str]:
        cache_key = (memory.id, memory.text)
        if cache_key not in self._subjects:
            self._subjects[cache_key] = subject_keys(memory)
        return self._subjects[cache_key]

    def _near(self, row: list[float]) -> list[tuple[Memory, float]]:
        """Live (not retired, not set aside) memories near ``row``: planned ones first
        (scored here: only those cost a dot product), then the store's top-k."""
        out = [(m, dot(row, v)) for i, (m, v) in self.planned.items()
               if v and i not in self.retired and i not in self.aside]
        if self.store is not None and len(self.store.kernel):
            near = self.store.kernel.top_k(row, NEIGHBOURS)
            for i, cos in zip(near.ids, near.scores, strict=True):
                if i not in self.planned and i not in self.retired:
                    out.append((self.store.records[i], cos))
        return out

    def _same_key_holds(self, holder: str, guessed: bool, polarity: str | None,
                        text: str | None) -> bool:
        """Whether the live memory of a candidate's key is the candidate's subject. A key
        the rules made names its subject; one the learned stage made from a clause's words
        (``GUESSED``) may be shared by statements about different things (a rule's miss: its
        lead, a frame), so under it only a text that says the same thing merges, and an
        opposite polarity supersedes; any other text is a memory of its own."""
        memory = self.current(holder)
        if text is None or not (guessed or memory.meta.get("via") in GUESSED):
            return True
        if polarity is not None and polarity_of(memory) != polarity:
            return True
        return foldable(text, memory.text) or foldable(memory.text, text)

    def _holders(self, key: str) -> list[str]:
        """The live memories keyed ``key``: planned ones first, then the store's."""
        ids = [i for i, (m, _) in self.planned.items()
               if m.key == key and i not in self.retired and i not in self.aside]
        if self.store is not None:
            ids += [i for i in self.store.ids_with_key(key)
                    if i not in self.planned and i not in self.retired]
        return ids

    def ended_slot(self, key: str, polarity: str | None, text: str) -> str | None:
        """The live fact a slot-ending decision ends: the slots of ``activity.ENDED_SLOTS``
        ("I work as a nurse", then "I quit my job"), else the fact of the decision's own
        subject ("I'm vegan", then "I quit being vegan"; "I have a girlfriend", then "I broke
        up with my girlfriend"; 「ベジタリアンです」, then 「ベジタリアンをやめました」; both were
        left live, two kinds under one subject). Looked up by key (no scan). The newest,
        else None."""
        if polarity != "dislike" or not key.startswith("decision:") \
                or not activity.ends(text, key, key):
            return None
        slots = activity.ENDED_SLOTS.get(key) or (activity.ended_fact(key),)
        ids = [i for slot in slots if slot for i in self._holders(slot)]
        return self._newest_id(ids)

    def reversed_comparison(self, kind: str, key: str, over: str,
                            polarity: str | None) -> str | None:
        """The live comparison the candidate reverses with the same stance ("I prefer cats
        over dogs", then "dogs over cats now"; 「犬より猫が好き」, then 「猫より犬のほうが好き」):
        keyed by the candidate's rival, its own rival the candidate's subject. The newest,
        else None. Its key differs from the candidate's, so the same-key rule never saw it
        and both stayed live as the user's preference."""
        rival = make_key(kind, over)
        if rival is None or rival == key:
            return None
        ids = [i for i in self._holders(rival) if (m := self.current(i)).kind == kind
               and rival_key(kind, m) == key
               and (polarity is None or polarity_of(m) == polarity)]
        return self._newest_id(ids)

    def _newest_id(self, ids: Iterable[str]) -> str | None:
        """The most recently changed of the live memories ``ids``, else None."""
        return max(ids, key=lambda i: (self.current(i).updated_at, i), default=None)

    def left_camp(self, kind: str, key: str, was: str) -> str | None:
        """The live liking of the camp the candidate says the user left for its own
        (「コーヒー派から紅茶派になった」, "I went from a cat person to a dog person"): keyed by
        ``was``, of the same kind. The newest, else None. Both camps are named by the user,
        so no guess is made about which camps compete (a bare 「今は紅茶派」 retires nothing)."""
        old = make_key(kind, was)
        if old is None or old == key:
            return None
        ids = [i for i in self._holders(old) if (m := self.current(i)).kind == kind
               and polarity_of(m) == "like"]
        return self._newest_id(ids)

    def ended_activity(self, kind: str, key: str, polarity: str | None, text: str,
                       near: list[tuple[Memory, float]]) -> Match | None:
        """The live habit or plan of the same activity under another key that the candidate
        ends ("I drink coffee every day", then "I quit coffee") or takes up again ("I quit
        coffee", then "I drink coffee every morning again"): of the other polarity, the
        stopping side ending it as a whole (``activity.ends``). Looked for among the
        candidate's neighbours only (no scan of the store). The newest, else None."""
        doing = activity.activity(key)
        if kind not in activity.KINDS or not doing or polarity is None:
            return None
        found = [(m, cos) for m, cos in near
                 if m.kind in activity.KINDS and m.key is not None and m.key != key
                 and polarity_of(m) != polarity and activity.activity(m.key) == doing
                 and (activity.ends(text, key, m.key) if polarity == "dislike"
                      else activity.ends(m.text, m.key, key))]
        return _newest(found, "same activity")

    def moved_habit(self, kind: str, key: str, polarity: str | None, text: str,
                    near: list[tuple[Memory, float]]) -> Match | None:
        """The live habit of the same activity at another recurring time that the candidate
        says it changed ("I run every morning", then "These days I run in the evening
        instead"; ``activity.moved``): the habit's new value. Among the neighbours only;
        the newest, else None."""
        doing, when = activity.activity(key), activity.times(key)
        if kind != "pattern" or not doing or not when or not activity.moved(text):
            return None
        found = [(m, cos) for m, cos in near
                 if m.kind == "pattern" and m.key is not None and m.key != key
                 and polarity_of(m) == polarity and activity.activity(m.key) == doing
                 and activity.times(m.key) and activity.times(m.key) != when]
        return _newest(found, "habit moved")

    def died(self, name: str, near: list[tuple[Memory, float]]) -> Match | None:
        """The live fact naming the pet or person the candidate says died ("I have a dog
        named Max", then "my dog Max passed away"; 「犬のポチを飼っています」, then 「ポチが
        亡くなりました」): no longer so, it becomes history. Among the neighbours, by the
        name among the key's words; the newest, else None."""
        found = [(m, cos) for m, cos in near
                 if m.kind == "fact" and m.key is not None and "died" not in m.meta
                 and name in m.key.partition(":")[2].casefold().split("_")]
        return _newest(found, "died")

    def parted(self, thing: str, near: list[tuple[Memory, float]]) -> Match | None:
        """The live fact that the user has the thing the candidate says they parted with
        ("I have a guitar", then "I sold my guitar"; "I drive a Prius", then "I got rid of
        my old Prius"; 「ギターを持っています」, then 「ギターを売りました」): no longer so, it
        becomes history. Among the neighbours: a fact saying the user has, owns or drives
        something (``_HAS``), whose key or words name the thing's last word. The newest, else
        None."""
        head = thing.casefold().split("_")[-1]
        found = [(m, cos) for m, cos in near
                 if m.kind == "fact" and m.key is not None and "parted" not in m.meta
                 and "died" not in m.meta and _HAS.search(m.text)
                 and (head in m.key.partition(":")[2].casefold().split("_")
                      or head in _words(m.text) or (has_japanese(head) and head in m.text))]
        return _newest(found, "parted with")

    def match(self, kind: str, key: str | None, vector: Sequence[float],
              polarity: str | None = None, text: str | None = None,
              over: str | None = None, died: str | None = None,
              was: str | None = None, parted: str | None = None,
              guessed: bool = False) -> Match | None:
        """The live memory the candidate is about: a comparison it reverses (``over``: the
        candidate's rival, ``reversed_comparison``), else the camp it left (``was``,
        ``left_camp``), else same key (any kind, any polarity:
        the caller merges or supersedes), else the job fact a job given up ends
        (``ended_slot``), else a habit or plan it ends or takes up again under another key
        (``ended_activity``) or moves to another time (``moved_habit``), or the fact naming a
        pet or person it says died (``died``) or the thing it says the user parted with
        (``parted``), else a neighbour of
        the same kind with the same words as ``text`` under another key ("same words": a
        memory keyed by an earlier version of the key rules), else a keyless neighbour of one
        sentence whose text has that key as its only subject ("same subject"), else a
        near-identical memory of the same kind, the same key or none on both sides, and the
        same polarity (``polarity`` None: no polarity guard). A key the learned stage made
        (``guessed``, or the holder's ``meta["via"]``) is matched as the same key only when
        the two texts say the same thing or oppose each other (``_same_key_holds``)."""
        row = as_float_list(vector)
        if key is not None and over:
            flipped = self.reversed_comparison(kind, key, over, polarity)
            if flipped is not None:
                return Match(flipped, "reversed comparison", None)
        if key is not None and was:
            left = self.left_camp(kind, key, was)
            if left is not None:
                return Match(left, "camp left", None)
        if key is not None:
            ids = self._holders(key)
            best = self._newest_id(ids) if ids else None
            if best is not None and self._same_key_holds(best, guessed, polarity, text):
                return Match(best, "same key", None)
            if best is None and text is not None:
                ended = self.ended_slot(key, polarity, text)
                if ended is not None:
                    return Match(ended, "slot ended", None)
        near = self._near(row)
        if kind == "fact" and died:
            gone = self.died(died.casefold(), near)
            if gone is not None:
                return gone
        if parted:
            gone = self.parted(parted, near)
            if gone is not None:
                return gone
        if key is not None and text is not None:
            ended = (self.ended_activity(kind, key, polarity, text, near)
                     or self.moved_habit(kind, key, polarity, text, near))
            if ended is not None:
                return ended
        if text is not None:
            same = [(m, cos) for m, cos in near if m.kind == kind and same_words(m.text, text)]
            if same:
                memory, cos = max(same, key=lambda pair: pair[1])
                return Match(memory.id, "same words", round(cos, 4))
        # a keyed candidate: the keyless ones (its key's holders were looked up already)
        neighbours = [(m, cos) for m, cos in near
                      if (m.key is None if key is not None else m.kind == kind)]
        if key is not None:
            # a fact in other words is another value: never folded into a keyless memory
            # that states it among other things ("I live in Kobe with my wife Emi" ->
            # "I live in Osaka": merged, the new value was hidden in the trash; superseded,
            # the wife would be), so both stay live
            same_subject = [(m, cos) for m, cos in neighbours
                            if m.key is None and self._subjects_of(m) == {key}
                            and says_one_thing(m)
                            and not (kind == "fact" and text is not None
                                     and not foldable(text, m.text))]
            if same_subject:
                memory, cos = max(same_subject, key=lambda pair: pair[1])
                return Match(memory.id, "same subject", round(cos, 4))
        best_id, best_cos = None, -2.0
        for memory, cos in neighbours:
            if (memory.kind != kind or not keys_compatible(key, memory.key)
                    or (key is not None and self._subjects_of(memory) - {key})
                    or (polarity is not None and polarity_of(memory) != polarity)
                    or (text is not None and not foldable(text, memory.text))):
                continue
            if cos > best_cos:
                best_id, best_cos = memory.id, cos
        if best_id is not None and best_cos >= self.threshold:
            return Match(best_id, "near-identical", round(best_cos, 4))
        return None


# a fact that the user has something: have, own, drive, ride; 持って, 飼って, 乗って
_HAS = re.compile(r"\b(?:have|has|had|'ve got|own|owns|drive|drives|ride|rides|got)\b|"
                  r"持って|飼って|乗って", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return {singular(w) for w in re.findall(r"[\w'-]+", text.casefold())}


def rival_key(kind: str, memory: Memory) -> str | None:
    """The key of what ``memory`` compares its subject against (``meta.over``), if any."""
    over = memory.meta.get("over")
    return make_key(kind, over) if isinstance(over, str) and over.strip() else None


def duplicate_pairs(
    store: CharacterStore,
    threshold: float = DEFAULT_THRESHOLD,
    limit: int = 100,
    only: Iterable[str] | None = None,
) -> list[tuple[str, str, str, float | None]]:
    """Live pairs that dedup would have merged (same key and polarity, or near-identical
    with compatible keys and the same polarity): ``(older_id, newer_id, reason, cosine)``.
    Read-only; used by the audit and the cold maintenance. ``only``: near-identical pairs
    are looked for from these records only (each against the whole store), for an
    incremental scan."""
    pairs: dict[tuple[str, str], tuple[str, float | None]] = {}
    by_key: dict[tuple[str, str, str], list[str]] = {}
    for memory in store.records.values():
        if memory.key is not None:
            by_key.setdefault((memory.kind, memory.key, polarity_of(memory)), []).append(
                memory.id)
    for ids in by_key.values():
        ids.sort()
        for other in ids[1:]:
            pairs[(ids[0], other)] = ("same key", None)
    scanned = (store.records.values() if only is None
               else [store.records[i] for i in only if i in store.records])
    for memory in scanned:
        if len(pairs) >= limit:
            break
        near = store.kernel.top_k(store.kernel.vector(memory.id), 4)
        for other_id, cos in zip(near.ids, near.scores, strict=True):
            other = store.records[other_id]
            if (other_id == memory.id or cos < threshold or other.kind != memory.kind
                    or not keys_compatible(memory.key, other.key)
                    or polarity_of(memory) != polarity_of(other)
                    or not (says_nothing_more(memory.text, other.text)
                            or says_nothing_more(other.text, memory.text))):
                continue
            pair = tuple(sorted((memory.id, other_id)))
            pairs.setdefault(pair, ("near-identical", round(cos, 4)))  # type: ignore[arg-type]
    return [(a, b, reason, cos) for (a, b), (reason, cos) in sorted(pairs.items())][:limit]


def _newest(found: list[tuple[Memory, float]], reason: str) -> Match | None:
    """The most recently changed of ``found`` (neighbours with their cosine) as the match,
    else None."""
    if not found:
        return None
    memory, cos = max(found, key=lambda pair: (pair[0].updated_at, pair[0].id))
    return Match(memory.id, reason, round(cos, 4))
