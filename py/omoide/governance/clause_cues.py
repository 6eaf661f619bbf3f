"""Surface cues the learned extraction stage reads beside a clause's vector.

A sentence vector says what a clause is about more than how it is said: "I go to the farmers
market on saturdays" sits near plans and outings (read as a decision, out of fold), "a hot
bath every night is non-negotiable for me" near preferences, although the recurrence marks
both as habits. A cue is a 0/1 feature of the clause's wording, appended to its vector; the
classifier learns how much each one weighs (``bench/governance_train.py`` keeps a cue set only
where the grouped cross-validation chooses it), so a cue is evidence, never a rule:
"I could eat sushi every day" stays a preference when the vector says so.

- ``recurrence``: a frequency or recurring time (every/each X, most days, Sundays, on
  weekends, usually, always, never, tend to, whenever, twice a week, daily; 毎朝, いつも,
  たいてい, 〜曜は, 週末は, 寝る前, 〜ようにしてる, 〜がち, 日課, 習慣);
- ``plan``: a change or intention (will, going to, from now on, starting next…, signed up,
  quit, switched to; つもり, 予定, ことにした, 決めた, これからは, 来月, 始める, やめた);
- ``recurrence_own`` (round 9): ``recurrence`` in an English clause with a first-person
  word only ("ugh, Mondays." has a weekday and no one doing anything);
- ``stance`` (round 9): liking, dislike, a favourite, a comparison (love, can't stand, fan of,
  nothing beats, X > Y; 好き, 苦手, 〜派, 推し, 一択, 無理);
- ``attribute`` (round 9): what the speaker is or has (years old, allergic, work as, speak,
  my sister, dog; 〜歳, 出身, 住んで, 飼って, アレルギー, 話せ, 兄/姉/母).

Small talk has none of them ("haha classic", "time flies", 「壁に蜘蛛いる」). Of the 121
English calibration negatives that reach the stage (``bench/governance_train.py``, round 9),
round 8's setting (the recurrence cue, 1 - p(none) >= 0.4) stores 29; these four cues with
the kind's probability >= 0.6, 3 (at >= 0.4, 7).

Pure regular expressions: they run in Pyodide as under CPython, one search per cue.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omoide.governance.keys import has_japanese

_EN_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_EN_RECURRENCE = re.compile(
    r"\b(?:every|each) (?:other |single )?\w+|"
    r"\b(?:most|some|many) (?:days|nights|mornings|evenings|afternoons|weekends|weeks)\b|"
    rf"\b{_EN_WEEKDAY}s\b|^{_EN_WEEKDAY} (?:is|=|means)\b|\b(?:weekends|weekdays|mornings|"
    r"evenings|nights|afternoons)\b|\b(?:daily|nightly|weekly|monthly|yearly|everyday)\b|"
    r"\b(?:usual|usually|always|never(?! mind)|often|normally|generally|typically|rarely|"
    r"sometimes|"
    r"regularly|constantly|religiously)\b|\btend to\b|\bwhenever\b|"
    r"\b(?:once|twice|thrice|\d+ times|\w+ times) (?:a|an|per|every) \w+|"
    r"(?<!\bwhat )(?<!\bsuch )\b(?:a|per) (?:day|night|week|month)\b|"
    r"\b(?:routine|ritual|habit)\b|\bwithout fail\b|"
    r"\b(?:before|after) (?:bed|work|school|lunch|dinner|breakfast)\b|\bfirst thing\b",
    re.IGNORECASE)
_JA_RECURRENCE = re.compile(
    r"毎(?:朝|晩|日|週|月|年|回|食|夜|度)|いつも|たいてい|大抵|だいたい|大体|普段|ふだん|"
    r"基本(?:的に)?|しょっちゅう|よく|必ず|欠かさず|欠かせない|決まって|お決まり|習慣|日課|"
    r"ルーティン|ようにして|がち|[月火水木金土日]曜(?:日)?(?:は|に|の|も)|週末は|平日は|"
    r"休みの日|週[一二三四五六七1-7１-７]|月[一二三1-9１-９]回|月イチ|日おき|寝る前|"
    r"起きたら|起きてすぐ|たびに|朝晩|朝は|夜は|夜な夜な")
_EN_PLAN = re.compile(
    r"\b(?:will|won't|going to|gonna|'ll|plan(?:ning)? to|intend to|decided|from now on|"
    r"starting (?:today|tomorrow|next|this|on|in|monday|from)|from (?:today|tomorrow|next)|"
    r"next (?:week|month|year|spring|summer|fall|autumn|winter)|this (?:spring|summer|fall|"
    r"autumn|winter|year|weekend)|signed up|sign up|booked|enrolled|applied|"
    r"switch(?:ed|ing)? to|quit|quitting|stopped|stopping|started|starting|giving up|"
    r"gave up|done with|no more|cancell?(?:ed|ing)|moving|about to)\b",
    re.IGNORECASE)
_JA_PLAN = re.compile(
    r"つもり|予定|ことにし|ことになっ|決め|決心|決意|これからは|今日から|明日から|来週|来月|"
    r"来年|今年(?:こそ|から|は)|[0-9０-９一二三四五六七八九十]+月から|始め(?:る|た|ます|まし)|"
    r"やめ(?:る|た|ます|まし)|辞め|申し込|申込|予約|買い替え|乗り換え|切り替え|"
    r"ようと思|にします|しよう")

# How the speaker stands towards a thing: liking, dislike, a favourite, a comparison
_EN_STANCE = re.compile(
    r"\b(?:love|loved|adore|hate|hated|loathe|despise|enjoy|prefer|favou?rite|fave|fan of|"
    r"can'?t stand|cannot stand|can'?t get enough|not my (?:thing|vibe|cup of tea)|my (?:thing|"
    r"jam|vibe)|obsessed|addicted|hooked|nothing beats|beats|better than|worse than|"
    r"the best|the worst|overrated|underrated|hard pass|no thanks|weakness|guilty pleasure|"
    r"go-to|happy place|can't live without|could live on|any day)\b|>|<3",
    re.IGNORECASE)
_JA_STANCE = re.compile(
    r"好き|すき|嫌い|きらい|キライ|苦手|ニガテ|大好物|好物|好み|派(?:です|だ|な|!|！|$)|推し|"
    r"最高|最強|至福|たまらな|たまらん|無理|ムリ|勘弁|合わな|ダメ|ハマ|はま(?:っ|る)|目がな|"
    r"に限る|一択|しか勝たん|に勝る|より(?:断然|やっぱ)?[^、。]*(?:がいい|が好き|派)|"
    r"受けつけ|受け付け|耐えられ|やみつき|病みつき|癒(?:し|やし)")
# What the user is or has: age, name, origin, home, job, health, languages, family, pets
_EN_ATTRIBUTE = re.compile(
    r"\b(?:years? old|\d+ (?:y/?o|yo)|turned \d+|born|grew up|raised|hometown|live in|"
    r"living in|based in|originally from|allergic|allergy|intolerant|diagnosed|"
    r"work (?:as|at|in|for)|job|career|nurse|teacher|engineer|developer|student|"
    r"name'?s|named|called|speak|fluent|bilingual|native|married|single|divorced|engaged|"
    r"kids?|son|daughter|wife|husband|partner|girlfriend|boyfriend|sister|brother|mom|mum|"
    r"dad|parents|grand(?:ma|pa|mother|father)|dog|cat|pet|height|tall|short|left-handed|"
    r"right-handed)\b",
    re.IGNORECASE)
_JA_ATTRIBUTE = re.compile(
    r"[0-9０-９一二三四五六七八九十]+(?:歳|才)|歳(?:です|だ|に)|出身|在住|住んで|住み|暮らし|"
    r"飼って|アレルギー|体質|持病|身長|血液型|仕事|職業|勤め|働いて|勤務|会社員|学生|社会人|"
    r"名前|っていいます|と申します|って言います|話せ|喋れ|しゃべれ|ペラペラ|生まれ|育ち|"
    r"[兄姉弟妹夫妻娘父母]|息子|子ども|子供|両親|祖父|祖母|彼氏|彼女|ペット|利き")
CUES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {  # name: (English, Japanese)
    "recurrence": (_EN_RECURRENCE, _JA_RECURRENCE),
    "recurrence_own": (_EN_RECURRENCE, _JA_RECURRENCE),
    "plan": (_EN_PLAN, _JA_PLAN),
    "stance": (_EN_STANCE, _JA_STANCE),
    "attribute": (_EN_ATTRIBUTE, _JA_ATTRIBUTE),
}
# ``recurrence_own``: the recurrence cue in an English clause with a first-person word only.
# A recurrence with no one doing it is about the world or the day ("ugh, Mondays.", "that
# place is always packed on weekends"), not the speaker's habit; Japanese drops the subject,
# so there the cue is ``recurrence``'s.
_EN_OWN = re.compile(r"\b(?:i|i'm|im|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|our|ours|us)\b",
                     re.IGNORECASE)


def cue_values(names: Sequence[str], clause: str) -> list[float]:
    """1.0 or 0.0 per named cue (``CUES``) for a clause, in the order of ``names``."""
    ja = has_japanese(clause)
    return [1.0 if CUES[name][ja].search(clause)
            and (ja or name != "recurrence_own" or _EN_OWN.search(clause)) else 0.0
            for name in names]
