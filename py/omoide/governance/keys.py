"""Memory keys: ``<kind>:<subject>``, the same for the same statement however it is worded,
in English or Japanese. Write-time dedup and contradiction detection compare keys.

The subject rule (both languages):

1. NFKC + case folded; filler adverbs and intensifiers are not part of a subject
   (really, anymore, still, just, もう, 本当に, すごく, あまり, 昔から, ずっと, …);
2. English: articles and possessives out (a, an, the, my, our), each word singular ("cats"
   -> "cat", "movies" -> "movie", "tomatoes" -> "tomato"; -ss/-us/-is/-ics words and a short
   list like "news", "glasses" kept), a few synonyms and spellings folded ("favourite" ->
   "favorite", "mum"/"mom" -> "mother", "postgresql" -> "postgres");
3. Japanese: words stay whole. Words are found at script boundaries: a case particle
   (は が を に で と へ も の) is only a particle where it follows a non-hiragana character;
   polite and plain verb endings come off by a suffix list (ます, ました, ている, …), and a
   verb's own okurigana only when it is a known inflection (飲みます / 飲む -> 飲, 食べる -> 食),
   never a noun's hiragana (辛いもの stays 辛いもの); context phrases become their English tail
   (「このプロジェクトでは」 -> "for this project", 「仕事では」 -> "at work");
   「AするまえにB」 / 「AしたあとでB」 -> "B before A-ing" / "B after A-ing"; a small glossary
   of katakana developer words maps to English (コミット -> commit, パイソン -> python);
4. words joined with "_" (letters, digits, "+", "#" and inner "." kept), at most 80
   characters, cut at a word boundary.
"""

from __future__ import annotations

import re
import unicodedata

MAX_SUBJECT = 80


def has_japanese(text: str) -> bool:
    return any(
        "\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf"
        for c in text
    )


# -- English words ------------------------------------------------------------------------

# Words that say how much or when, not what: never part of a subject.
EN_FILLER = frozenset(
    "a an the my our really anymore still just actually honestly also very so "
    "too much quite totally absolutely definitely definately literally lately nowadays "
    "basically kinda sorta pretty soo almost nearly".split()
)
# Folded to one spelling (British/US, short forms, family words).
EN_SYNONYMS: dict[str, str] = {
    "favourite": "favorite", "fav": "favorite", "fave": "favorite", "favs": "favorite",
    "colour": "color", "flavour": "flavor", "theatre": "theater", "grey": "gray",
    "mum": "mother", "mom": "mother", "mommy": "mother", "dad": "father", "daddy": "father",
    "grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather",
    "hubby": "husband", "bf": "boyfriend", "gf": "girlfriend", "kid": "child",
    "film": "movie", "tv": "television", "telly": "television",
    "postgresql": "postgres", "k8s": "kubernetes", "js": "javascript", "ts": "typescript",
    "golang": "go", "lofi": "lo-fi",
}
EN_IRREGULAR_PLURALS: dict[str, str] = {
    "movies": "movie", "cookies": "cookie", "children": "child", "kids": "child",
    "people": "person", "men": "man", "women": "woman", "mice": "mouse", "feet": "foot",
    "teeth": "tooth", "knives": "knife", "leaves": "leaf", "wives": "wife", "lives": "life",
    "shoes": "shoe", "tomatoes": "tomato", "potatoes": "potato", "heroes": "hero",
    "mangoes": "mango", "echoes": "echo", "fries": "fries", "series": "series",
}
_KEEP_S = frozenset(
    "news species glasses physics economics mathematics politics yes this his its is was has "
    "does always sometimes perhaps less chess bus gas plus lens christmas analysis tennis "
    "thanks pants jeans us whereas dumbbells aws ios macos windows rails express".split()
)


def singular(word: str) -> str:
    """English singular of one lower-case word, by rule plus a short irregular list."""
    if word in EN_IRREGULAR_PLURALS:
        return EN_IRREGULAR_PLURALS[word]
    if len(word) <= 3 or word in _KEEP_S or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    if word.endswith(("ss", "us", "is", "ics")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


_NOT_GERUNDS = frozenset(
    "thing something nothing everything anything morning evening spring string king ring "
    "wing ceiling wedding pudding sibling sing bring sting swing during ping building "
    "painting clothing ending feeling meeting dumpling darling icing stuffing filling "
    "earring offspring duckling seedling lightning ceiling".split()
)


def base_verb(word: str) -> str:
    """Base form of an -ing word ("watching" -> "watch", "running" -> "run",
    "baking" -> "bake"); other words unchanged."""
    low = word.lower()
    if not low.endswith("ing") or len(low) <= 5 or low in _NOT_GERUNDS:
        return word
    stem = low[:-3]
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lszaeiou":
        return stem[:-1]  # running, swimming, quitting
    if (len(stem) <= 4 and re.search(r"[^aeiou][aeiou][^aeiouwxy]$", stem)
            and not stem.endswith(("en", "er", "it", "et", "ow"))):
        return stem + "e"  # baking, making, writing, hiking
    if re.search(r"(?:[^aeiou]l|[cv])$", stem) and not stem.endswith("ll"):
        return stem + "e"  # cycling, dancing, moving
    return stem


def _en_word(word: str) -> str:
    word = EN_SYNONYMS.get(word, word)
    return EN_SYNONYMS.get(singular(word), singular(word))


# -- Japanese words -----------------------------------------------------------------------

JA_FILLER = re.compile(
    r"^(?:もう|まだ|本当に|ほんとに|ほんと|すごく|めっちゃ|とても|あまり|あんまり|ちょっと|"
    r"結構|けっこう|やっぱり|やっぱ|全然|一番|特に|最近|今でも|今は|実は|正直|かなり|すっかり|"
    r"ついに|やっと|とうとう|ああいう|こういう|そういう|ああゆう|こうゆう|そうゆう|"
    # the topic particle between two fillers (「最近はすっかり」)
    r"は(?=すっかり|ついに|やっと|とうとう|もう|まだ|ずっと|かなり|ちょっと)|"
    r"そんなに|それほど|今(?![日年月週度朝夜晩回後頃更])|いま(?!さら|だに)|いまだに|未だに|今だに|現在|"
    # since when a liking or a habit has lasted (「昔からコーヒーが好き」「前からずっと走って
    # る」): the same slot as 「コーヒーが好き」, still so
    r"(?:昔|前|以前|ずっと前)から|ずっと)+"
)
# the topic or addition particle a filler leaves in front (「最近は夜にジョギング」 -> 「は夜に
# ジョギング」): cut when the word after it is not kana-led (「最近はまってる」 keeps はまってる)
_JA_LEAD_PARTICLE = re.compile(r"^(?:では|には|は|も)[、,]?(?=[^\u3040-\u309f])")
_JA_CONTEXT: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?:この|今回の|今の)プロジェクト(?:では|で|には|に|は)?[、,]?"),
     "for this project"),
    (re.compile(r"(?:仕事|職場|会社)(?:では|で)[、,]?"), "at work"),
    (re.compile(r"(?:家|自宅)(?:では|で)[、,]?"), "at home"),
]
# Polite and plain endings, suffix list; longest first through the alternation order.
_JA_ENDINGS = re.compile(
    r"(?:ようにしています|ようにしてる|ようにする|ことにしています|ことにしてる|しています|"
    r"してます|している|してる|しませんでした|しません|しなかった|しない|します|しました|"
    r"する|した|でした|です|だ|ています|てます|ている|てる|"
    # the voiced te-form (飲んでいます, 読んでる): 飲ん, whose ん the verb tail takes
    r"(?<=ん)(?:でいます|でます|でいる|でる)|ます|ました|ません|ない|んだ|"
    r"なんです|なんだ|んです|ね|よ|な|笑)+$"
)
# Inflections a verb's okurigana can end in (dictionary form, masu stem, ichidan stem).
_JA_VERB_TAIL = re.compile(
    r"(?<=[\u4e00-\u9fff])(?:[うくすつぬぶむるぐいきしちにびみりぎっんかさたまらわがば]|べる|べ|える|え|ける|け|"
    r"める|め|れる|れ|きる|じる|ちる|びる|りる|いる|せる|てる|げる|げ|せ)$"
)
# The nominalizer の after a verb or adjective (「観るのが好き」): not part of the subject.
_JA_NOMINALIZER = re.compile(r"(?<=[うくすつぬふむゆるぐずづぶぷいた])の$")
_JA_BEFORE = re.compile(r"^(?P<a>.+?)(?:する|した|の)?(?:前に|まえに|前は)[、,]?(?P<b>.+)$")
_JA_AFTER = re.compile(r"^(?P<a>.+?)(?:した|の)?(?:後で|あとで|後に|あとに|後は)[、,]?(?P<b>.+)$")

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
# A particle (compound ones first) where it follows a non-hiragana character; followed by
# hiragana only for は/が/を/には/では, which are never a word's own okurigana.
_JA_PARTICLE_SPLIT = re.compile(
    r"(?<=[^\u3040-\u309f\s])(?:(?:には|では|とは|へは|からは|までは|にも|でも|とも|から|まで|"
    r"より|での|への|との|[はがをにでとへもの])(?=[^\u3040-\u309f]|$)|(?:には|では|[はがを]))"
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


def _ja_strip(text: str) -> str:
    text = _JA_ENDINGS.sub("", text.strip(" 、,。!！")).strip(" 、,")
    return _JA_NOMINALIZER.sub("", text)


def ja_subject(raw: str) -> str:
    """A Japanese subject phrase as space-separated key words (rule 3 of the module doc)."""
    text = unicodedata.normalize("NFKC", raw)
    context = ""
    for pattern, english in _JA_CONTEXT:
        if pattern.search(text):
            text, context = pattern.sub("", text, count=1), english
            break
    text = _JA_LEAD_PARTICLE.sub("", JA_FILLER.sub("", _ja_strip(text)))
    for template, word in ((_JA_BEFORE, "before"), (_JA_AFTER, "after")):
        match = template.match(text)
        if match:
            a, b = _ja_strip(match.group("a")), _ja_strip(match.group("b"))
            text = f"{_ja_words(b)} {word} {_gerund(_ja_words(a))}"
            break
    words = _ja_words(text)
    return f"{words} {context}".strip()


def _ja_words(text: str) -> str:
    text = _JA_PARTICLE_SPLIT.sub(" ", text)  # before the glossary: it needs the katakana
    words = []
    for word in text.split():
        word = JA_FILLER.sub("", word) or word
        if has_japanese(word):
            word = _JA_VERB_TAIL.sub("", _ja_strip(word)) or word
        words.append(word)
    text = _GLOSSARY_RE.sub(lambda m: " " + JA_GLOSSARY[m.group(0)][0] + " ", " ".join(words))
    return " ".join(text.split())


# -- keys -----------------------------------------------------------------------------------


def normalize_subject(subject: str) -> str:
    """The subject part of a key (see the module docstring for the rule)."""
    text = unicodedata.normalize("NFKC", subject).replace("'", "").replace("’", "")
    words = re.findall(r"[^\W_]+(?:[.+#-][^\W_]+)*[+#]*|[+#]+", text)
    # "have been cooking at home" is "cook at home": the perfect progressive's auxiliaries
    # lead no key (a habit said with "lately I've been ..." and one said plainly agree)
    lead = [w.casefold() for w in words[:3]]
    if lead[:2] in (["have", "been"], ["has", "been"], ["ve", "been"]) and len(lead) > 2 \
            and lead[2].endswith("ing"):
        words = words[2:]
    elif lead[:2] == ["used", "to"] and len(lead) > 2:  # a habit that ended: the same slot
        words = words[2:]
    out: list[str] = []
    length = 0
    for original in words:
        word = original.casefold()
        if word.isascii():
            if word in EN_FILLER:
                continue
            if not out:
                word = base_verb(word)  # "I love hiking" and "I love to hike" agree
            if original == original.casefold():
                word = _en_word(word)
            else:  # names and products keep their form ("Postgres", "Kubernetes")
                word = EN_SYNONYMS.get(word, word)
        if out and length + 1 + len(word) > MAX_SUBJECT:
            break
        out.append(word[:MAX_SUBJECT])
        length += len(word) + (1 if len(out) > 1 else 0)
    return "_".join(out)


def make_key(kind: str, subject: str) -> str | None:
    """``kind:subject`` for any subject text, English or Japanese (the pattern and the LLM
    paths both use it, so they agree on keys)."""
    if has_japanese(subject):
        subject = ja_subject(subject)
    normalized = normalize_subject(subject)
    return f"{kind}:{normalized}" if normalized else None
