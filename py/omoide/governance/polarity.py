"""Polarity of a statement, English and Japanese: does it say yes or no to its subject?

Write-time dedup may only fold a statement into a memory that says the same thing, so
"I love spicy ramen" and "I don't like spicy ramen anymore" (cosine ~0.9 in small models)
must never merge, and the second must supersede the first. Extraction gives its candidates
a polarity; this module gives one to any text (a memory typed into the app, an LLM's note).

Rule: ``stance = dislike`` when the text is negated XOR it uses a negative word.

- negation, English: not, n't, never, no (not the interjection "No,"), no longer,
  neither/nor; "anymore" alone ("I'm over spicy ramen anymore") also negates, but beside
  another negator it only stresses it. Two negators cancel ("I don't not like it").
- negation, Japanese: ない after a verb or adjective stem (じゃない, ではない, 好きくない,
  食べない; not inside 少ない or 危ない, which are words), ません, なかった, ず, もう〜ない.
- idioms of wanting more are no negation: can't get enough of, can't live without, can't
  wait, couldn't be happier, never thought I'd like; 〜ないと生きていけない, やめられない,
  たまらない, 待ちきれない.
- negative words: hate, dislike, detest, loathe, despise, can't stand, quit, stopped, gave up,
  sick of, tired of, used to (a habit that ended; not "I'm used to", "get used to");
  嫌い, きらい, 苦手, にがて, やめた/やめました/辞めた, 嫌だ/いやだ, and Japanese "used to": a
  clause led by 昔は/以前は/前は/かつては that ends in the past (「前は毎朝走ってた」
  「昔はコーヒーが好きだった」; not 昔から, still so, nor 「子供の頃は」, a period of life).

No dictionary and no model: it is a guard against false merges, not a sentiment classifier.
"""

from __future__ import annotations

import re
import unicodedata

LIKE, DISLIKE = "like", "dislike"

USED_TO = (r"(?<!\bam )(?<!'m )(?<!\bis )(?<!'s )(?<!\bare )(?<!'re )(?<!\bwas )"
            r"(?<!\bwere )(?<!\bbe )(?<!\bbeen )(?<!\bget )(?<!\bgot )(?<!\bgetting )"
            r"(?<!\bgets )\bused to\b")
_EN_NEGATIVE_WORDS = re.compile(
    r"\b(?:hate[sd]?|hating|dislike[sd]?|detest(?:s|ed)?|loathe[sd]?|despise[sd]?|"
    r"can'?t stand|cannot stand|couldn'?t stand|quit|quitting|stopped|gave up|given up|"
    r"sick of|tired of|fed up with|not a fan of|no fan of|over it)\b|"
    # "I used to run every morning": a habit or liking that ended (not "I'm used to it",
    # "get used to": accustomed)
    + USED_TO,
    re.IGNORECASE,
)
# Negative words that carry their own negator: counted once, as the word, not as negation.
_EN_WORD_WITH_NEGATOR = re.compile(
    r"\b(?:can'?t stand|cannot stand|couldn'?t stand|not a fan of|no fan of)\b", re.I
)
_EN_NEGATORS = re.compile(
    r"\b(?:not|never|no longer|neither|nor|no(?![,.!])|cannot|"
    r"(?:do|does|did|is|are|was|were|have|has|had|wo|ca|could|should|would|must|need|ai|"
    r"might|sha)n'?t)\b",
    re.IGNORECASE
)
_EN_ANYMORE = re.compile(r"\bany ?more\b", re.IGNORECASE)
# A negator inside an idiom of wanting more ("I can't get enough of jazz", "I can't live
# without coffee", "I never thought I'd love it"): a yes, never counted as negation (they
# read as dislikes, and a dislike supersedes the like it agrees with).
_LIKE_IDIOMS = re.compile(
    r"\b(?:can'?t|cannot|can never|could never|couldn'?t) (?:get enough|live without|wait|"
    r"stop (?:eating|drinking|listening|watching|playing|reading|thinking))\b|"
    r"\bcouldn'?t be (?:happier|more excited)\b|"
    r"\bnever (?:thought|knew|expected) i'?d (?:like|love|enjoy)\b|"
    r"ないと(?:生きて|いきて)いけない|なしで(?:は|も)?(?:生きられない|生きていけない)|"
    r"なしじゃ(?:生きられない|生きていけない)|やめられない|止められない|止まらない|たまらない|"
    r"待ちきれない|待ち切れない",
    re.IGNORECASE)

# Japanese "used to" (「前は毎朝走ってた」「昔はコーヒーが好きだった」): a lead that sets then
# against now, and a past end to its clause. A habit or liking that ended, like "used to".
# Not 「昔から」 (since long ago, still), not a period of life (「子供の頃は」: what was true
# then says nothing of now), not 「この前は」 (the other day). A negated one is the other
# way round, as "I didn't use to like it" (「前は好きじゃなかった」: negated XOR negative word).
JA_USED_TO_LEAD = r"(?:(?:昔|以前|かつて)(?:は|って|[、,])|前は)[、,]?"
_JA_PAST_END = (r"(?:ていた|てた|ていました|てました|でいた|でた|でいました|でました|だった|でした|"
                r"かった)")
_JA_USED_TO = re.compile(
    rf"(?:^|(?<=[。！!？?、,\s]))(?:{JA_USED_TO_LEAD})[^。！!？?、,]*?{_JA_PAST_END}"
    r"(?:んだ|んです|な|なあ|なー|よ|ね|わ)*(?=$|[。！!])")
_JA_NEGATIVE_WORDS = re.compile(
    r"嫌い|きらい|苦手|にがて|やめた|やめました|やめます|辞めた|辞めました|止めた|嫌だ|いやだ|嫌です|"
    r"いやです|うんざり"
)
# ない after a hiragana stem (食べない, 好きじゃない, 行かない) or a te/ku form; a kanji right
# before ない is a word of its own (少ない, 危ない), not a negation.
_JA_NEGATORS = re.compile(
    r"(?<=[\u3040-\u309f])(?:ない|なかった|なく)|(?<!す[みい])ません|(?<![必ま])ず(?:に|、|。|$)|ぬ(?:。|$)"
)
# 〜ないで (please don't) is a request, still a negation; 〜なければ (must) is not.
_JA_NOT_NEGATION = re.compile(r"なければ|なくては|なきゃ|ないと(?:いけない|だめ)")


def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("’", "'")


def negated(text: str) -> bool:
    """Whether the statement is negated (an odd number of negators)."""
    text = _LIKE_IDIOMS.sub(" ", _normalize(text))
    en = _EN_WORD_WITH_NEGATOR.sub(" ", text)
    count = len(_EN_NEGATORS.findall(en))
    if count == 0 and _EN_ANYMORE.search(en):
        count = 1
    ja = _JA_NOT_NEGATION.sub("", _JA_NEGATIVE_WORDS.sub("", text))
    count += len(_JA_NEGATORS.findall(ja))
    return count % 2 == 1


def negative_word(text: str) -> bool:
    text = _normalize(text)
    return bool(_EN_NEGATIVE_WORDS.search(text) or _JA_NEGATIVE_WORDS.search(text)
                or _JA_USED_TO.search(text))


def stance(text: str) -> str:
    """``"like"`` or ``"dislike"``: negated XOR a negative word."""
    return DISLIKE if negated(text) != negative_word(text) else LIKE


def same_stance(a: str, b: str) -> bool:
    return stance(a) == stance(b)
