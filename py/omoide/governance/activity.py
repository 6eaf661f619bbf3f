"""What a habit or a plan is the doing of, told from its key: the activity that ending it
("I quit coffee", 「ジムに行くのをやめた」) or taking it up again ends or resumes.

A habit's key keeps its when and its verb (``pattern:drink_coffee_every_day``,
``pattern:毎週月曜_ジム_行``), a plan's or an ending's often neither (``decision:coffee``,
``decision:ジム_行``), so the same-key rule never meets them. ``activity(key)`` is the key's
words less the words of when and how often, of how much, and the light verbs that say
"doing" (go, drink, learn; 行, 飲, 勉強): ``{coffee}`` and ``{ジム}`` on both sides.

``moved(text)`` with ``times(key)``: a habit said as changed (instead, now, these days;
最近は, 今は; not "too", "also", 「夜も」) at another recurring time than the live one
("I run every morning", then "These days I run in the evening instead") is the habit's new
value; said without a change, both times may hold.

``ends(text, key, of)``: a statement that stops the activity of ``of`` as a whole: a stop
word (quit, stopped, gave up, no longer, anymore, used to; やめた, もう〜ない, なくなった)
and no recurring time of its own in the key, or the same times as ``of`` ("I don't go to
the gym on Mondays anymore" ends "I go to the gym every Monday"), done: an ending ahead,
wished or weighed ("I'm going to quit my job", "I want to quit coffee", 「やめようかな」)
ends nothing yet. "I don't run on weekends anymore" ends a part of "I run every morning",
not all of it, so it ends nothing here.

Plain word sets and regular expressions: the same code under Pyodide and CPython.
"""

from __future__ import annotations

import re

from omoide.governance.when_words import time_words

# When it recurs: a key holding one of these says when the activity happens.
_EN_RECURRING = frozenset(
    "every each daily nightly weekly monthly morning mornings evening evenings night nights "
    "afternoon afternoons weekend weekends weekday weekdays".split()) | frozenset(
    day + s for day in "monday tuesday wednesday thursday friday saturday sunday".split()
    for s in ("", "s"))
# When once, how much or how often, and the words around them: never the activity.
_EN_OTHER = frozenset(
    "day days week weeks month months year years last ago yesterday today tonight recently "
    "again now anymore once twice time times per a an on in at pack packs cup cups glass "
    "glasses bottle bottles can cans hour hours minute minutes mile miles".split())
# Verbs that say "doing": the activity is their object ("drink coffee", "go to the gym").
_EN_LIGHT = frozenset(
    "go going goes went to drink drinking drank eat eating ate have having do doing did "
    "play playing take taking get getting learn learning study studying practice "
    "practicing practise practising".split())
_JA_RECURRING = re.compile(
    r"(?:毎|週末|平日|休日|週|朝|夜|晩|昼|夕方|夕|寝る前|[月火水木金土日]曜日?|いつも|よく|たまに)+")
_JA_LIGHT = frozenset("行 飲 食 し 勉強 練習".split())

_ENDS = re.compile(
    r"\b(?:quit|quitting|stopped|gave up|given up|giving up|no longer|any ?more|used to|"
    r"dropped|ditched|cut out|resigned|resigning|left|broke up|split up)\b|"
    r"(?:やめ|辞め|止め|別れ)(?:た|ました|て|ちゃ)|もう.*(?:ない|ません)|なくなった|なくなりました",
    re.IGNORECASE)

# A habit said as changed ("These days I run in the evening instead", 「最近は夜に…」), not
# added to ("too", "also", 「夜も」).
_CHANGED = re.compile(
    r"\b(?:instead|now|these days|nowadays|lately|switched|moved)\b|^(?:最近|今|いま|この頃|"
    r"近頃)(?:は|、)|代わりに|に変えた|に変更", re.IGNORECASE)
_ADDED = re.compile(
    r"\b(?:too|also|as well|additionally)\b|(?:朝|夜|晩|昼|週末|平日|曜日?|日)も", re.IGNORECASE)

# An ending ahead, wished or weighed ("I'm going to quit my job next month", "I want to quit
# coffee", 「辞めるつもり」「やめようかな」): the activity goes on until it is done.
_NOT_YET = re.compile(
    r"\b(?:(?:'m|am|'re|are|is|'s) going to (?!(?:the|a|an|my|our|his|her|their|bed|work|"
    r"school|church|class|gym|office)\b)|gonna|will|'ll|want to|wanna|plan(?:ning)? to|"
    r"thinking (?:about|of)|"
    r"might|(?<!in )(?<!since )(?<!of )may|should|could|would like to|'d like to|hope to|"
    r"hoping to|trying to|try to|"
    r"about to|considering|tomorrow|next (?:week|month|year|\w+day)|soon|someday|one day)\b|"
    r"つもり|予定|(?<=[ぁ-ゖ])たい(?!てい|へん|せつ)|(?:よう|ろう|おう)(?:かな|と思|と考え)|明日|"
    r"来週|来月|来年|そのうち|いつか",
    re.IGNORECASE)

KINDS = frozenset(("pattern", "decision"))  # what is done; a liking is no activity

# A job given up ("I quit my job", 「仕事を辞めました」: decision:job, decision:仕事) ends the
# job the user held: the job slot's facts.
ENDED_SLOTS: dict[str, tuple[str, ...]] = {
    "decision:job": ("fact:job", "fact:employer"),
    "decision:仕事": ("fact:仕事", "fact:勤務先"),
    "decision:会社": ("fact:仕事", "fact:勤務先"),
}


def ended_fact(key: str) -> str | None:
    """The key of the fact an ending decision keyed ``key`` ends, by its subject: "quit
    being vegan" (``decision:being_vegan``) ends ``fact:vegan``, 「ベジタリアンをやめました」
    (``decision:ベジタリアン``) ``fact:ベジタリアン``."""
    kind, _, subject = key.partition(":")
    subject = subject.removeprefix("being_")
    return f"fact:{subject}" if kind == "decision" and subject else None


def _words(key: str) -> list[str]:
    return key.partition(":")[2].split("_")


def _recurring(word: str) -> bool:
    return word in _EN_RECURRING or (
        not word.isascii() and _JA_RECURRING.fullmatch(word) is not None)


def activity(key: str) -> frozenset[str]:
    """The key's words that name what is done (see the module doc); empty when none do."""
    return frozenset(w for w in _words(key)
                     if w and not _recurring(w) and w not in _EN_OTHER
                     and w not in _EN_LIGHT and w not in _JA_LIGHT and not time_words(w))


def ends(text: str, key: str, of: str) -> bool:
    """Whether the statement ``text`` (keyed ``key``) stops the activity of the memory keyed
    ``of`` as a whole: a stop word, and no recurring time of its own, or the same times."""
    if _ENDS.search(text) is None or _NOT_YET.search(text) is not None:
        return False
    when = times(key)
    return not when or when == times(of)


def times(key: str) -> frozenset[str]:
    """The recurring times a key names, one spelling each (morning, monday; 毎朝, 夜, 金曜):
    "every Monday" and "on Mondays" name one time."""
    return frozenset(w.removesuffix("s") if w.isascii() else w for w in _words(key)
                     if _recurring(w) and w not in ("every", "each", "daily"))


def moved(text: str) -> bool:
    """Whether the habit ``text`` is said as a change of time rather than one more time."""
    return _CHANGED.search(text) is not None and _ADDED.search(text) is None
