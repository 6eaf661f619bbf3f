"""English clause -> (kind, polarity, subject, meta), or None.

How a clause is read, in order (the first rule that matches wins):

1. cleaned: curly quotes straightened, letters repeated 3+ times cut to two ("sooo" ->
   "soo"), common apostrophe-less contractions restored ("im" -> "i'm"), quoted text removed
   ("'I love you' is a song" says nothing about the speaker), lead fillers dropped
   ("ok so", "honestly", "I think"), a leading time phrase moved to the end
   ("on weekends I usually go cycling" -> "I usually go cycling on weekends");
2. refused: questions, requests, wishes and hypotheticals, reported speech ("Tom said…",
   "apparently…", "I read that…");
3. facts about the user and their people ("my name is", "my sister's name is", "my dog is
   called", "I live in", "I work as/at", "I'm 34", "I'm from", "I'm allergic to", "my X is Y");
4. preferences: stance verbs with "I"/"we" (like, love, enjoy, prefer, hate, can't stand,
   "I'm into", "I'm a big fan of", "I'm a cat person", "I'd rather"), and stance predicates on
   a thing ("X is my favourite", "my favourite X is Y", "X is the best", "X isn't my thing",
   "X > Y", "X over Y any day");
5. decisions with an explicit future or resolution (will, going to, gonna, plan to, want to,
   decided, "my plan is", "no more", "I'm done with", "let's use", "going with");
6. habits: a first-person clause with a frequency or time expression (usually, always, every
   morning, twice a week, on Sundays, most nights, before bed, tend to, never, a lot);
7. other facts ("I have two cats", "I'm a nurse", "I speak", "I drive"…);
8. decisions as actions: starting or stopping something (started, quit, stopped, gave up,
   cancelled, switched to, signed up for, bought, booked, chose) and the present
   progressive ("we're getting a cat").

Clauses about someone else ("My sister loves horror movies", "Kenji decided…") match no rule
except the fact rules on the user's people ("my husband is a teacher"), so a third-person
report yields a fact about that person or nothing — never the user's own preference.
"""

from __future__ import annotations

import re
import unicodedata

from omoide.governance.keys import base_verb, normalize_subject, singular
from omoide.governance.polarity import USED_TO, negated

Found = tuple[str, str | None, str, dict[str, str]]

I = r"(?:i|we)"  # noqa: E741 - the pronoun
IM = r"(?:i'?m|i am|we'?re|we are)"
ADV = (r"(?:(?:really|just|absolutely|kind of|kinda|quite|so|soo|totally|definitely|"
       r"definately|honestly|still|actually|also|genuinely|seriously|truly|do|much|"
       r"pretty much|always|now|secretly|low ?key|lowkey)\s+)*")
REL = (r"(?:(?:older|younger|big|little|baby|twin|best|eldest|oldest|youngest|new)\s+)?"
       r"(?:(?:half|step)-?(?=(?:sister|brother|sis|bro)s?\b))?"
       r"(?:sister|brother|mother|mom|mum|father|dad|husband|wife|partner|boyfriend|"
       r"girlfriend|son|daughter|kid|kids|child|children|friend|boss|grandma|grandmother|"
       r"grandpa|grandfather|grandparent|in-laws|stepmom|stepdad|stepmother|stepfather|aunt|uncle|cousin|roommate|flatmate|neighbou?r|cat|dog|puppy|"
       r"kitten|pet|hamster|rabbit|bird|parrot|fish|goldfish|turtle|baby|fianc[eé]e?|"
       r"coworker|colleague|teacher|parents|family|sibling|siblings|niece|nephew|"
       r"grandson|granddaughter|manager|landlord|doctor|bro|sis|hubby|bestie|bff|granny|gran|"
       r"nan|nana|grandad|stepson|stepdaughter|fianc[eé]e?)")
WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"

_CONTRACTIONS = {
    "im": "i'm", "ive": "i've", "dont": "don't", "cant": "can't", "wont": "won't",
    "didnt": "didn't", "doesnt": "doesn't", "isnt": "isn't", "arent": "aren't",
    "ill": None,  # "ill" is a word: left alone
}
_CONTRACTION_RE = re.compile(r"\b(im|ive|dont|cant|wont|didnt|doesnt|isnt|arent)\b", re.I)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_LEAD = re.compile(
    r"^(?:(?:well|welp|ok|okay|so|actually|honestly|also|and|but|yeah|yes|yep|oh|btw|personally|"
    r"i think|i guess|i mean|to be honest|tbh|in general|generally|lol|haha|hmm|ugh|anyway|"
    r"fun fact|fyi|just so you know|for the record|oh and|ah|right|okay so|ok so|you know what|"
    r"ngl|tbf|lowkey|low key|it'?s official|update|news|big news|guess what|fwiw|imho|heads up|"
    r"for what it'?s worth|"
    r"i reckon|i suppose|i'?d say|i would say|i bet|first(?=[,:])|"
    # "be honest, should I …" is still a question; "I'll admit (that) …" still a statement
    r"be honest|be real|real talk|i'?ll admit(?: that)?|i (?:must|have to|gotta) admit(?: that)?|"
    r"i'?ll confess(?: that)?|admittedly|truth be told|"
    r"now|nowadays|these days|lately|currently)"
    r"[,!:.]*\s+)*",
    re.IGNORECASE,
)
_TIME_LEAD = re.compile(
    rf"^(?P<t>(?:on |every |each |after |before |in the |at |most |during |this |next |"
    rf"for (?:the|this|my|our) [\w-]+ |on (?:the|this|my|our) [\w-]+ )?"
    rf"(?:{WEEKDAY}s?(?: and {WEEKDAY}s?)?|weekends?|weekdays?|mornings?|evenings?|nights?|"
    rf"afternoons?|dinner|lunch|breakfast|work|my commute|the commute|years?|months?|weeks?|"
    rf"days?|project|app|team|dashboard|frontend|backend|site|trip|wedding|party)"
    rf"(?: (?:nights?|mornings?|evenings?))?),?\s+(?P<rest>(?:i|we)\b.*)$",
    re.IGNORECASE,
)
# After a time lead, how it went is a report, not a plan ("today was looong", "this week
# has been a lot"): the lead alone makes no decision of it.
# "after much back and forth, …": a deliberation ended, what follows is the decision (read
# before a time lead: it is no time of a habit)
_DELIBERATION_LEAD = re.compile(
    r"^after (?:much|a lot of|lots of|weeks of|months of|days of|years of|some|long|endless) "
    r"(?:back and forth|deliberation|deliberating|thought|thinking|debate|debating|agoni[sz]ing|"
    r"dithering|soul[- ]searching|consideration|going back and forth|umming and a+h+ing),?\s+",
    re.IGNORECASE,
)
_DECISION_TAIL = re.compile(
    r"(?:,|\s-|\s–|\s—)?\s+(?:and )?(?:that'?s final|it'?s final|final answer|end of story|"
    r"(?:and )?that'?s that|no going back|decision made)[.!]*$",
    re.IGNORECASE,
)
_PAST_REPORT = re.compile(r"^(?:was|were|has been|had been|have been|felt|went|turned out)\b",
                          re.IGNORECASE)
_DECISION_LEAD = re.compile(
    r"^(?:from now on|going forward|starting (?:on )?(?:today|tomorrow|tonight|now|next \w+|"
    r"this \w+|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|"
    r"june|july|august|september|october|november|december|\d+\w*)|as of (?:today|now|"
    r"this \w+)|from (?:today|tomorrow|next \w+)|this year|next year|this month|next month|"
    r"this week|next week|today|tomorrow|tonight|in the new year|from here on(?: out)?|"
    r"come (?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|spring|summer|autumn|fall|winter|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"the new year|next \w+)|this is (?:the|my) (?:year|month|summer|week)(?: that| when)?"
    # ("this is the year I ran my first marathon" tells what was)
    r"(?= (?:i|we)\b(?! (?:\w+ed|ran|did|went|made|got|had|was|were|took|won|met|became)\b))|"
    # "it's final: …": what follows is the decision
    r"(?:it'?s|that'?s) final|final decision|decision made),?:?\s+",
    re.IGNORECASE,
)

# -- refusals ---------------------------------------------------------------------------------

_QUESTION = re.compile(
    r"^(?:do|does|did|are|is|was|were|can(?!['’]t\b)|could(?! (?:eat|drink|watch|listen to|"
    r"live on|live off)\b)|would|will|should|shall|have|"
    r"has|had|may|might|am|what|what's|whats|who|who's|where|when'?s|when(?=\s+(?:do|does|did|"
    r"is|are|was|were|will|would|can|could|should|shall|has|have|had|am|you|u|r)\b|\s*$)|why|"
    r"how|which|whose|any|"
    r"wanna|want to|know any|got any|ever|can'?t (?:you|we|they|he|she|it|u)|cant (?:you|we|u))\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:please|pls|plz|tell me|remind me|let me|help me|show me|give me|teach me|translate|"
    r"ping me|text me|message me|dm me|nudge me|wake me|"
    r"summari[sz]e|write|imagine|pretend|explain|describe|recommend|suggest|list|find|"
    r"draft|proofread|rewrite|reword|paraphrase|spell|compose|outline|brainstorm|quiz me|"
    r"convert|calculate|generate|define|set (?:a|an|me a|up a) (?:reminder|alarm|timer)|"
    r"look up|make me|i'?d (?:like|love|want) (?:a|an|some|to|you)|i want you|can you|could "
    r"you|would you|i was wondering|i wonder|just kidding|let'?s (?:talk|chat|see|not|do "
    r"something))\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    # "maybe once a year": an estimate of how often, not a maybe
    # "would rather" is a preference, "wish me luck" a formula
    r"\b(?:if|would(?! rather\b)|wish(?! (?:me|us) luck\b)|someday|some day|"
    r"(?:maybe|perhaps)(?! (?:once|twice|\w+ times|\d+ ?x?)"
    r" (?:a|per|every)\b)|who knows|might)\b|"
    # "say I won the lottery, …", "suppose we moved abroad": a supposition
    r"^(?:say|suppose|supposing|imagine|assuming|what if|let'?s say|picture this,?) (?:i|we)\b|"
    r"\b(?:i|we)'d have (?:been|\w+ed|\w+en)\b|"
    # "with a spare million I'd totally open a ramen stall", "in case the power goes out
    # we'd have candles": what would be, after its condition ("I'd already eaten" had)
    r"^(?:with|given|in case|just in case|once|when|if)\b[^,]{2,60}?,? (?:i|we)['’]d "
    r"(?!rather\b|prefer\b|already\b|just\b|never\b|been\b|\w+ed\b|\w+en\b)|"
    r"^fingers crossed\b|^(?:i'?d|we'?d) "
    r"(?!rather\b|(?:always |still )?(?:pick|take|choose|go for)\b.+\b(?:over|every (?:single )?"
    r"time|any ?time|hands down)\b)",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said(?! (?:yes|no)\b)|(?<!\bi )said|says|(?:people|they|everyone|he|she|you) say|"
    r"told me|tells me|apparently|"
    r"heard|read that|according to|word is|the word is|rumou?r (?:is|has it)|"
    r"claims?|reckons)\b",
    re.IGNORECASE,
)
_OTHER_PERSON = re.compile(
    r"^(?:he|she|they|his|her|their|you|your|it|its|this|that|there|these|those|people|"
    r"everyone|everybody|someone|somebody|nobody|most|some|all|what|which|who)\b|'s\s",
    re.IGNORECASE,
)
_PRONOUN_SUBJECT = re.compile(r"^(?:it|them|that|this|those|these|they|one|ones)$", re.I)
# Objects that point into the conversation, not at a lasting subject ("I love you",
# "I like that idea", "I hate when that happens", "I usually do").
_DEICTIC_SUBJECT = re.compile(
    r"^(?:(?:you|your|yours|u|him|her|us|me|myself|that|this|what|when|how|where|who|"
    r"there|here|it all|everything|anything|nothing|something)\b|(?:do|so|it)$)", re.I)

# -- subject cleanup -------------------------------------------------------------------------

_TAIL_CUT = re.compile(
    r"\s*(?:,|\s-\s|\s(?:because|cuz|coz|since|as it|as they|but|though|although|"
    r"when i can|if i can|whenever (?:i can|possible)|if possible|which|so that|so i|irl|"
    r"so if|so when|"
    r"in real life|so sorry|sorry if|if that'?s|if (?:you|u) don'?t mind|and would|and i'?d|"
    r"especially|lol|haha|tbh|imo|in my opinion|and i|and it|and they|that's)\b).*$",
    re.IGNORECASE,
)
_TAIL_FILLER = re.compile(
    r"(?:\s+(?:a lot|a bunch|very much|so much|soo much|too|as well|anymore|any more|really|"
    r"these days|nowadays|lately|now|though|actually|honestly|instead|at all|most|"
    r"the most|for me|to me|tbh|imo|recently|any day|always|forever|for sure|myself|"
    r"either|haha|lol|again|[:;]-?[)(dp]|!+|\.+))+$",
    re.IGNORECASE,
)
_DECISION_TIME_TAIL = re.compile(
    r"(?:\s+(?:starting |from |as of |by |until |before |for |on |in |at )?(?:today|"
    r"tomorrow|tonight|yesterday|now|soon|finally|for now|from now on|"
    r"(?:next|this|last) (?:week|weekend|month|year|time|spring|summer|fall|autumn|winter|"
    r"morning|evening|semester|term|season|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|"
    r"the fall|the spring|the summer|the winter|\d{4}|january|february|march|"
    r"april|may|june|july|august|september|october|november|december|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|a while|good|once and for all|"
    r"(?:the )?(?:end|start|beginning) of \w+(?: \w+)?)(?:\s+\d+\w*)?)+$",
    re.IGNORECASE,
)
_LEAD_WORDS = re.compile(
    r"^(?:(?:the|a|an|my|our|some|to|using|working with|writing|coding in|more|eating|"
    r"drinking|having|doing)\s+)+",
    re.IGNORECASE,
)
_HABIT_ADVERBS = re.compile(
    r"\b(?:almost |nearly |pretty much |just about )?(?:usually|always|often|normally|"
    r"generally|typically|regularly|habitually|"
    r"frequently|constantly|tend to|tends to|make a point of|try to|try not to|still|"
    r"just|really)\s+",
    re.IGNORECASE,
)
_DECISION_VERBS = (
    r"(?:use|go with|adopt|pick|choose|switch to|stick with|move to|migrate to|try|"
    r"standardi[sz]e on|settle on|go for|get|buy|build (?:it |the \w+ )?(?:with|in|on))"
)
# the rival of a comparison: "X over Y", "X (way) better than Y", "X more than Y"
_RIVAL = r"over|rather than|instead of|(?:(?:much|way|far|a lot) )?(?:more|better) than|than"
_PREFER_SPLIT = re.compile(rf"\s+(?:{_RIVAL})\s+", re.I)
_PREFER_SPLIT_TO = re.compile(rf"\s+(?:{_RIVAL}|to)\s+", re.I)
# "a sucker for anything with peanut butter in it", "count me out of anything involving
# karaoke": the stance is on what is named after "anything with"
_ANYTHING_WITH = re.compile(
    r"^(?:anything|everything|any|all) (?:with|involving|containing|to do with|made with|"
    r"that (?:has|involves|contains))\s+(?=\w)|(?<=\w) in (?:it|them)$", re.IGNORECASE)


def _clean_subject(kind: str, raw: str, *, rival_split: re.Pattern[str] | None = None,
                   decision: bool = False) -> tuple[str, dict[str, str]]:
    meta: dict[str, str] = {}
    x = _TAIL_CUT.sub("", raw.strip())
    x = x.strip(" .!?;:~*")
    x = _TAIL_FILLER.sub("", x)
    if decision:
        x = _DECISION_TIME_TAIL.sub("", x)
        x = re.sub(r"^" + _DECISION_VERBS + r"\s+", "", x, flags=re.I)
        x = re.sub(r"^(?:i'?m|i am|we'?re|we are|i'?ll|we'?ll|i will|we will)\s+", "", x,
                   flags=re.I)
        # "pulling the trigger on that standing desk": the thing chosen, not a pointer
        x = re.sub(r"^(?:that|this|those|these)\s+(?=\w)", "", x, flags=re.I)
    if kind == "pattern":
        x = _HABIT_ADVERBS.sub("", x)
    if rival_split is not None:
        parts = rival_split.split(x, maxsplit=1)
        if len(parts) == 2 and parts[0].strip():
            # the rival as the subject is cut: "cats these days" is "cats"
            rival = _TAIL_FILLER.sub("", _TAIL_CUT.sub("", parts[1].strip()))
            x, meta["over"] = parts[0], rival.strip(" .!?;:~*,")
    x = _LEAD_WORDS.sub("", x.strip())
    x = _ANYTHING_WITH.sub("", x)
    x = _TAIL_FILLER.sub("", x).strip(" ,.!")
    if x:
        first, _, rest = x.partition(" ")
        x = (base_verb(first) + " " + rest).strip()
    return x, meta


def _leading_noun_phrase(clause: str) -> str | None:
    """What an earlier clause is about, for a later "it"/"them" ("pineapple on pizza is a
    crime, I hate it" -> "pineapple on pizza")."""
    match = re.match(
        r"^(?P<np>[\w' +#.-]{2,40}?)(?:,|\s(?:is|are|was|were|isn't|aren't|helps?|makes?|"
        r"hurts?|gets?|tastes?|seems?|looks?|sounds?|stress(?:es)?)\b)",
        clause.strip(), re.IGNORECASE,
    )
    if not match or _OTHER_PERSON.match(match.group("np")) or re.match(
            rf"^{I}\b", match.group("np"), re.I):
        return None
    return match.group("np")


# -- rules ------------------------------------------------------------------------------------

# a subject that is someone else's or a pointer, never a thing of the speaker's
_NOT_MINE = (r"(?:i|we|i'm|we're|he|she|they|his|her|their|your|you|it|its|that|this|those|"
             r"these|there|people|everyone|everybody|someone|somebody|nobody|the (?:city|"
             r"council|government|company|shop|store|restaurant|bank|office|school|weather|"
             r"train|trains|bus|buses|flight|news))")
# a time ahead: what is done then is a plan
_FUTURE = (rf"(?:tonight|tomorrow|this (?:weekend|week|month|year|summer|spring|autumn|fall|"
           rf"winter|evening|afternoon|{WEEKDAY})|next (?:week|weekend|month|year|{WEEKDAY})|"
           rf"on {WEEKDAY}|later today|by (?:the end of \w+|{WEEKDAY}|tonight|tomorrow)|"
           rf"(?:after|in|before|from) (?:january|february|march|april|may|june|july|august|"
           rf"september|october|november|december))")
_JOB_NAMES = (
    r"nurse|chef|cook|doctor|student|pilot|lawyer|artist|engineer|"
    r"teacher|designer|developer|writer|freelancer|consultant|clerk|barista|vet|dentist|"
    r"carpenter|plumber|electrician|farmer|firefighter|officer|programmer|translator|"
    r"architect|scientist|researcher|professor|intern|secretary|model|actor|actress|"
    r"musician|athlete|coach|manager|accountant|analyst|editor|baker|butcher|driver|"
    r"mechanic|pharmacist|therapist|surgeon|paramedic|soldier|priest|monk|journalist|"
    r"photographer|illustrator|animator|streamer|housewife|homemaker|retiree")
# what a person runs or owns for a living ("we run a bakery", "my dad owns a bike shop")
_BUSINESS = (r"(?:business|shop|store|bakery|cafe|café|restaurant|company|bar|studio|salon|farm|"
             r"startup|laundromat|laundrette|diner|pub|deli|garage|clinic|practice|hotel|motel|"
             r"b&b|guesthouse|bookshop|bookstore|nursery|daycare|food truck|stall|workshop|agency|"
             r"firm|vineyard|winery|brewery|kiosk|boutique|pharmacy|pizzeria|takeaway|inn|hostel|"
             r"ranch|orchard|dairy|florist|butcher'?s|bakeshop|corner shop|dojo|gym)")
_JOB_WORDS = re.compile(rf"(?:er|or|ist|ian|ant|ent|{_JOB_NAMES})$", re.IGNORECASE)
# What "I'm a X" says with a job's suffix but is no job: a diet, a faith or outlook, a habit,
# a hobby, a standing. Keyed "job", "I'm a vegetarian" was retired by the next "I'm a nurse"
# (one job slot); keyed by its own noun, each stays. A job's own name wins ("a baker").
_NOT_JOBS = re.compile(
    r"(?:(?:vege|pesca|flexi|fruit)tarian|christian|buddhist|atheist|agnostic|"
    r"(?:opt|pess|perfection|minimal|real|ideal|femin|environmental|activ|pacif|nud|"
    r"natur|hedon|stoic|cycl|hobby)ist|"
    r"(?:non-?)?smoker|drinker|vaper|gamer|runner|jogger|swimmer|climber|hiker|walker|"
    r"reader|knitter|dreamer|believer|worrier|(?:over)?thinker|procrastinator|beginner|"
    r"foreigner|stranger|newcomer|survivor|patient|resident|parent|immigrant|migrant|"
    r"emigrant|descendant|dependent|tenant|renter|(?:home|dog|cat|pet|car)\s?owner|voter|"
    r"supporter|subscriber|member|learner|speaker|collector|lover|admirer|"
    r"introvert|extrovert|ambivert|left-?hander|right-?hander|early riser|sleeper|snorer|"
    r"insomniac|sufferer|diabetic|celiac|coeliac|vegan|carnivore|omnivore|teetotaler|"
    r"teetotaller|libertarian|vegetarian|civilian|veteran|grandparent|stepparent)$",
    re.IGNORECASE)
# A person of the user's named by a job only by a job's own name: "my daughter is a teenager"
# or "… a vegetarian" is no job (the suffixes above would say so), and a wrong "job" key
# lets the next job statement supersede it.
_JOB_TITLE = re.compile(rf"\b(?:{_JOB_NAMES})s?$", re.IGNORECASE)
# where one lives: a dwelling, a settlement
_DWELLING = (r"(?:flat|apartment|house|room|studio|bedroom|bed|bedsit|condo|cottage|loft|"
             r"bungalow|maisonette|townhouse|duplex|terrace|houseboat|narrowboat|caravan)")
_SETTLEMENT = r"(?:village|town|city|hamlet|suburb|island|farm|croft|estate)"
# an age in digits or in words ("thirty-five", "forty one")
AGE = (r"(?:\d{1,3}|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|"
       r"three|four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|"
       r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|a hundred)")
_AGE_VALUE = re.compile(r"^(?:\d{1,3}|[a-z]+(?:[- ][a-z]+)?) (?:years?|months?|weeks?) old\b",
                        re.IGNORECASE)

# (name, kind, polarity, pattern). Patterns see the cleaned clause; ``x`` is the subject,
# ``a`` an attribute (facts: the key is the attribute, the value stays in the text; an
# attribute that is no slot, "my daughter is allergic to peanuts", keeps its value in the
# key: ``_person_attribute``, ``_thing_attribute``).
Rule = tuple[str, str, str | None, re.Pattern[str]]


def _rules(specs: list[tuple[str, str, str | None, str]]) -> list[Rule]:
    return [(name, kind, pol, re.compile(body, re.IGNORECASE)) for name, kind, pol, body in specs]


# capitalised words that start a sentence but name nobody ("He passed away", "Everyone...")
_NOT_A_NAME = frozenset({"he", "she", "it", "they", "someone", "somebody", "everyone",
                         "everybody", "nobody", "who", "this", "that", "one", "i", "we", "you"})

# what makes a liking stronger, never a part of its subject ("a huge Arsenal fan")
_INTENSIFIER = (r"(?:big|huge|massive|great|total|die-?hard|major|absolute|complete|"
                r"serious|hardcore|avid|proper|giant|enormous|crazy|mega)")

_FACTS = _rules([
    ("name", "fact", None, r"^(?:my|the) name(?:'s| is)\s+(?P<v>.+)"),
    ("name", "fact", None, r"^(?:call me|people call me|(?:i'?m|i am) called)\s+(?P<v>\w+)"),
    ("rel_name", "fact", None,
     r"^my (?P<r>[a-z][\w -]{1,30}?)(?:'s|s'|s)? name(?:'s| is)\s+(?P<v>.+)"),
    ("rel_name", "fact", None, rf"^my (?P<r>{REL})(?:'s| is)\s+(?:called|named)\s+(?P<v>.+)"),
    # "my dog Max passed away", "our cat Luna was put down last week": one of the user's
    # people or pets died (``dedup``: the live facts naming them become history)
    ("died", "fact", None,
     rf"^(?:my|our) (?P<r>{REL})(?:,? (?P<n>[A-Z][a-z]+),?)? (?:just |sadly |finally )?"
     r"(?:passed away|passed on|died|was put down|was put to sleep|had to be put down|"
     r"crossed the rainbow bridge)\b"),
    # "Max passed away": a bare name, capitalised (checked in ``_fact``: the rules ignore
    # case); only a being can pass away, and a bare "X died" is also said of apps and cars
    ("died_name", "fact", None,
     r"^(?P<n>[a-z]+),? (?:just |sadly |finally )?(?:passed away|passed on|was put down|"
     r"was put to sleep|had to be put down|crossed the rainbow bridge)\b"),
    # "I sold my guitar", "my bike got stolen": a thing of the user's is no longer theirs
    # (``dedup``: the live fact that they have it becomes history). A sale, a riddance or a
    # gift is a decision made (as "sold my motorbike" was before), a theft a fact.
    ("parted", "decision", "dislike",
     rf"^{I} (?:just |finally |recently |eventually |had to |ended up )?(?:sold|got rid of|"
     r"gave away|donated|traded in|scrapped) (?:my|our) (?P<x>[\w' -]+?)"
     r"(?= (?:last|yesterday|today|this|on|to|for|at|in|after|because|since|and|but|so)\b|"
     r",|$)"),
    ("parted", "decision", "dislike",
     rf"^{I} (?:just |finally |recently |eventually |had to |ended up )?gave (?:my|our) "
     r"(?P<x>[\w' -]+?) away\b"),
    ("parted", "fact", None,
     r"^(?:my|our) (?P<x>[\w' -]+?) (?:got|was) (?:stolen|nicked|written off)\b"),
    ("parted", "fact", None, r"^(?:someone|somebody) stole (?:my|our) (?P<x>[\w' -]+?)(?= |,|$)"),
    ("rel_age", "fact", None,
     rf"^my (?P<r>{REL})(?:'s| is| just turned| turned| turns| is turning|'s turning| will turn)"
     rf"\s+(?P<v>{AGE})\b(?! (?:minutes?|hours?|times?|pages?|miles?|km|laps?|of|more|who|"
     rf"that|thing|way|step|in a|last time|big)\b)"),
    ("rel_home", "fact", None,
     rf"^my (?P<r>{REL}) (?:still )?(?:lives|lived|is living|live|are living)\s+"),
    ("rel_origin", "fact", None, rf"^my (?P<r>{REL})(?:'s| is) (?:originally )?from\s+"),
    ("rel_job", "fact", None, rf"^my (?P<r>{REL}) (?:works|is working|worked)\s+"),
    ("rel_job", "fact", None,
     rf"^my (?P<r>{REL})(?:'s| is) (?:a|an) (?P<v>[\w -]+?)(?: at [\w ]+)?[.!]*$"),
    ("home", "fact", None,
     rf"^{I} (?:currently |still |now )?(?:live|'m living|am living|are living|'re living)\b"),
    # a move done is the home's new value: moved to / into / out (of the parents' place) / in
    # with someone / back home ("I'm moving out next month" is still ahead: no match)
    ("home", "fact", None,
     rf"^{I} (?:just |recently |finally |already )?(?:moved|relocated) "
     r"(?:to|into|out\b(?! of the way)|in with|back (?:home|in with|to)\b)"),
    ("hometown", "fact", None,
     rf"^{I} (?:grew up|was born|were born)(?: and raised)? (?:in|near|on|at)\b"),
    ("rel_partner", "fact", None,
     rf"^i'?ve been (?:with|married to|dating|seeing) (?:my )?(?P<r>{REL})\b"),
    ("hometown", "fact", None, rf"^{IM} (?:originally )?from\s+"),
    ("job", "fact", None,
     r"^i(?: work|'m working| am working| currently work)(?: remotely| full[- ]time| "
     r"part[- ]time| freelance| from home| nights| days| weekends| evenings| mornings)? "
     r"(?:as|in)\b"),
    ("job", "fact", None, r"^i work (?:night|day|early|late|double)? ?shifts?\b"),
    ("job", "fact", None,
     r"^i (?:do|work|pull) (?:the )?(?:night|graveyard|early|late|day|double|morning|evening) "
     r"shifts?\b"),
    ("job", "fact", None,
     r"^i(?:'ve| have) been working (?:remotely |full[- ]time |part[- ]time |freelance )?"
     r"(?:as|in|at|for)\b"),
    ("employer", "fact", None,
     r"^i(?: work|'m working| am working)(?: part[- ]time| full[- ]time| remotely| nights| "
     r"weekends| evenings)? (?:at|for)\b"),
    # "I've been a widow for six years now": a marital status
    ("married", "fact", None,
     rf"^{I}(?:'ve| have) been (?:a )?(?P<x>widow(?:er|ed)?|married|divorced|separated|single)\b"),
    # "im in a kpop dance cover group", "I'm part of a community choir"
    ("member", "fact", None,
     rf"^{IM} (?:in|part of|a member of|on) (?:a|an|the|my|our) (?P<x>[\w' -]{{0,40}}?(?:band|"
     r"choir|group|team|club|league|crew|society|orchestra|squad|troupe|ensemble|guild|"
     r"union|committee|council|collective))\b(?=\s*$|[,.!;]| (?:at|in|for|with|that|since|"
     r"called|named|and|here|now|too|as)\b)"),
    # "got my license last month", "passed my driving test"
    ("licence", "fact", None,
     rf"^(?:{I} )?(?:just |finally |recently )?(?:got|passed) (?:my )?(?:driving |driver'?s |"
     r"drivers )?(?:licen[cs]e|driving test)\b"),
    # "I teach my little brother math on Sundays" is no job
    ("job", "fact", None,
     r"^i (?:teach|taught)\s+(?!my\b|him\b|her\b|them\b|myself\b|our\b|his\b)"),
    ("job", "fact", None, r"^i .{1,60}? for a living\b"),
    ("rel_job", "fact", None, rf"^my (?P<r>{REL}) .{{1,60}}? for a living\b"),
    ("job", "fact", None,
     r"^i'?m in (?:sales|marketing|finance|hr|it|tech|retail|healthcare|education|consulting|"
     r"banking|insurance|construction|hospitality|real estate|logistics|government|law|"
     r"medicine|publishing|advertising|media|research|accounting|engineering)\b"),
    ("home", "fact", None, rf"^{IM} (?:based|living|located|settled) in\b"),
    ("home", "fact", None, rf"^{I}\s*(?:'ve|have)? (?:lived|been living) in\b"),
    ("siblings", "fact", None,
     r"^i'?m (?:the )?(?:oldest|youngest|middle|eldest|only) (?:child|kid|one|of|sibling)\b"),
    ("languages", "fact", None,
     r"^i'?m (?:fluent in|a native (?:\w+ )?speaker|bilingual|trilingual)\b"),
    ("age", "fact", None,
     r"^(?:i )?(?:just )?turned (?P<v>\d{1,3}|(?:twenty|thirty|forty|fifty|sixty|seventy|"
     r"eighty|ninety)(?:[- ]\w+)?)\b"),
    ("age", "fact", None, rf"^{IM} (?:about to turn|turning) (?P<v>{AGE})\b"),
    ("married", "fact", None, rf"^{I} (?:just |recently )?got (?P<x>married|engaged|divorced)\b"),
    ("height", "fact", None, rf"^{IM} .{{0,30}}?\b(?P<v>\d{{2,3}}) ?cm\b"),
    ("studies", "fact", None, r"^i (?:graduated from|went to|studied at|dropped out of)\s+"),
    ("job", "fact", None,
     rf"^(?:i|we) (?:own|run) (?:a|an) (?:small |little |tiny )?(?:[\w-]+ )?{_BUSINESS}\b"),
    # "my dad runs a bike shop", "our family owns a small laundromat in Queens"
    ("rel_job", "fact", None,
     rf"^(?:my|our) (?P<r>{REL}) (?:runs|owns|manages|has run|has owned|took over|inherited) "
     rf"(?:a|an|the|his|her|their|our) (?:family |small |little |tiny |local |tiny little )?"
     rf"(?:[\w-]+ )?{_BUSINESS}\b"),
    ("age", "fact", None, rf"^{IM} (?P<v>\d{{1,3}})(?: years old| yo| y/o)?$"),
    # "I'm sixty-four, though most days I feel about eighty"
    ("age", "fact", None,
     r"^(?:i'?m|i am) (?P<v>(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
     r"(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?)(?: years old)?(?:$|,)"),
    # "I'm 34, born on Christmas Day": an age, then more about it after the comma
    ("age", "fact", None, r"^(?:i'?m|i am) (?P<v>\d{1,3})(?: years old| yo| y/o)?,"),
    # "I'm 6'5", "I'm only 5'2 so…": a height in feet and inches
    ("height", "fact", None,
     rf"^{IM} (?:only |just |about |nearly |almost |like )?(?P<v>[4-7]'\s?\d{{1,2}})(?![\w'])"),
    # "I rent a 1-bedroom above a shop", "we're renting a tiny cottage": where one lives
    ("home", "fact", None,
     rf"^{I}(?: share| rent|'m renting|'re renting| am renting| are renting) (?:a|an) "
     rf"(?:[\w-]+ ){{0,2}}?(?:\w+-)?{_DWELLING}\b"),
    # "home is a wee village near Perth", "home's a little flat above a bakery"
    ("home", "fact", None,
     rf"^home(?: for (?:me|us)| these days| now)?(?:'s| is) (?:a|an) (?:[\w'-]+ ){{0,3}}?"
     rf"(?:{_DWELLING}|{_SETTLEMENT})\b"),
    # "I'm doing a part-time masters in…", "slogging through year three of my law degree"
    ("studies", "fact", None,
     r"^(?:(?:i'?m|i am|we'?re) )?(?:currently |now |still )?(?:doing|studying for|working "
     r"(?:on|towards)|halfway through|in the middle of|slogging through|in|on) (?:a |an |my )?"
     r"(?:(?:first|second|third|fourth|final|last) year of (?:a |an |my )?|year (?:one|two|"
     r"three|four|five|\d) of (?:a |an |my )?)?(?:part[- ]time |full[- ]time |distance |"
     r"online |evening )?(?:[\w'-]+ ){0,3}?(?:masters?|master's|phd|degree|diploma|"
     r"bachelor'?s|mba|msc|bsc|apprenticeship|doctorate|pgce)\b"),
    ("height", "fact", None, rf"^{IM} (?P<v>\d+(?:\.\d+)?) ?(?:cm|m|ft|feet|foot)\b"),
    ("allergy", "fact", None, rf"^{IM} (?:very |really |super )?allergic to (?P<x>.+)"),
    # "amoxicillin gives me hives", "latex brings me out in a rash": a reaction of the body
    ("allergy", "fact", None,
     r"^(?P<x>(?!(?:it|that|this|he|she|they|you|there|what|which)\b)[\w' -]{2,40}?) "
     r"(?:gives? me|gave me|brings? me out in|brought me out in|makes? me break out in|"
     r"made me break out in) (?:hives|a rash|rashes|an allergic reaction|allergic reactions|"
     r"a reaction|anaphylaxis|welts|eczema)\b"),
    ("state", "fact", None,
     rf"^{IM} (?:now )?(?P<x>married|single|divorced|engaged|widowed|separated|pregnant|"
     rf"vegetarian|vegan|pescatarian|"
     rf"lactose intolerant|gluten intolerant|intolerant to \w+|"
     rf"left[- ]handed|right[- ]handed|retired|unemployed|self[- ]employed|a twin|twins|"
     rf"an only child|diabetic|colou?r[- ]?blind|deaf|blind|hard of hearing|partially (?:deaf|"
     rf"sighted)|dyslexic|autistic|epileptic|asthmatic|coeliac|celiac)\b"),
    # "turns out I'm O neg": a blood type said bare
    ("blood_type", "fact", None,
     rf"^(?:turns out |apparently )?{IM} (?:an? )?(?:a|b|ab|o)(?:[+-]|\s?(?:neg|pos|negative|"
     rf"positive))(?=$|[\s,.!])"),
    ("attribute", "fact", None,
     r"^(?:my|our) (?!(?:absolute |all[- ]time |very |most |number one )?(?:favou?rite|fav|fave)\b|"
     r"plan\b|goal\b|resolution\b|new\b|rule\b|"
     r"new year)(?P<a>[a-z][\w -]{1,30}?)(?:'s| is| are)\s+(?P<v>.+)"),
])

# an answer that names no favourite ("fav movie? dunno tbh")
_NO_ANSWER = (r"(?:dunno|don'?t know|idk|no idea|not sure|unsure|hm+|um+|uh+|hard to say|"
              r"too many|can'?t (?:choose|pick|decide)|depends|it depends|good question|"
              r"no clue|nothing|none|no one|nobody|you|ur|your|what|which|who)\b")


_PREFERENCES = _rules([
    # "I find open-plan offices exhausting": a lasting judgement of a thing
    ("find_bad", "preference", "dislike",
     rf"^{I} (?:find|found) (?P<x>(?!it\b|that\b|this\b|him\b|her\b|them\b|you\b).+?) "
     rf"(?:so |really |super |kinda |kind of |pretty |incredibly |quite )?(?:exhausting|annoying|"
     rf"boring|tedious|draining|stressful|overwhelming|unbearable|gross|pointless)$"),
    ("find_good", "preference", "like",
     rf"^{I} (?:find|found) (?P<x>(?!it\b|that\b|this\b|him\b|her\b|them\b|you\b).+?) "
     rf"(?:so |really |super |kinda |kind of |pretty |incredibly |quite )?(?:relaxing|calming|"
     rf"soothing|therapeutic|fascinating|satisfying|comforting)$"),
    ("soft_spot", "preference", "like",
     rf"^{I}\s*(?:have|'ve got|have got|got|'ve) (?:a |an )?(?:real |huge |big |massive |"
     rf"serious |bit of a |major )?(?:soft spot|weakness|thing) for (?P<x>.+)"),
    ("no_patience", "preference", "dislike",
     rf"^{I}\s*(?:have|'ve got|have got|got) (?:zero|no|little|0) (?:patience|tolerance|time) "
     rf"for (?P<x>.+)"),
    # "I've never had much patience for X", "I don't have any time for X"
    ("no_patience", "preference", "dislike",
     rf"^{I}\s*(?:'ve never had|have never had|never had|'ve never got|don'?t have|do not "
     rf"have|haven'?t got|'ve not got|'ve never been one with) (?:much|any|a lot of|the) "
     rf"(?:patience|tolerance|time) for (?P<x>.+)"),
    # "on trains I always want to face forward": a standing want, not a habit
    ("always_want", "preference", "like",
     rf"^{I} (?:always|usually|generally|normally|invariably) (?:want|wanna) "
     rf"(?!(?:to )?(?:know|ask|say|go home|cry|scream|sleep|die|quit|kill)\b)(?:to )?"
     rf"(?P<x>.+?)(?:,? or (?:i|else|we)\b.*)?$"),
    ("pick_always", "preference", "like",
     r"^(?:i|we)'?d (?:always |still )?(?:pick|take|choose|go for) (?P<x>.+?),? (?:every "
     r"(?:single )?time|any ?time|hands down)\b"),
    ("favorite", "preference", "like",
     r"^my (?:absolute |all[- ]time |very |most )?(?:favou?rite|fav|fave|go-to) "
     r"(?P<a>[\w -]{1,40}?) (?:is|are|has to be|would be|'s)\s+(?P<v>.+)"),
    # "winter and i are not friends", "me and mornings don't get along": the thing, at odds
    # with the user (or at one with them: "coffee and I are best friends")
    ("at_odds", "preference", "dislike",
     r"^(?:me and (?P<x>[\w' -]{2,30}?)|(?P<y>[\w' -]{2,30}?) and (?:i|me)) (?:are|r|have) "
     r"(?:not|never been|never gonna be|not gonna be) (?:friends|mates|a match)\b|"
     r"^(?:me and (?P<z>[\w' -]{2,30}?)|(?P<w>[\w' -]{2,30}?) and (?:i|me)) (?:don'?t|do not|"
     r"never) (?:get along|mix|agree)\b"),
    ("at_one", "preference", "like",
     r"^(?:me and (?P<x>[\w' -]{2,30}?)|(?P<y>[\w' -]{2,30}?) and (?:i|me)) (?:are|r) "
     r"(?:best friends|besties|bffs|soulmates|inseparable)\b"),
    # "fav board game?? catan, no contest", "fave snack: crisps": the favourite asked and
    # answered by the user ("my" dropped)
    ("favorite", "preference", "like",
     r"^(?:my )?(?:absolute |all[- ]time |very |most )?(?:favou?rite|fav|fave|go-to) "
     rf"(?P<a>[\w -]{{1,40}}?)\s*(?:\?+|:|=)\s*(?=\S)(?!{_NO_ANSWER})(?P<v>[^?]+)$"),
    ("favorite_of", "preference", "like",
     r"^(?P<x>.+?) (?:is|are|'s|'re|(?:has|have|'ve) (?:always |long )?been) (?:\w+ ){0,2}?"
     r"my (?:absolute |all[- ]time |very |most |"
     r"number one |#1 )?(?:favou?rite|fav|fave|favs|go-to)(?: (?P<a>[\w -]+?))?\s*[!.]*$"),
    # "a long bath with a book is my idea of heaven", "X = my idea of torture": the speaker's
    # own idea (not "his idea of fun"), so a stance on X, no habit
    ("idea_of_good", "preference", "like",
     r"^(?P<x>(?!(?:i|we|it|that|this)\b).+?)\s*(?:is|are|'s|=) (?:my|our) (?:personal |own )?"
     r"idea of (?:heaven|bliss|paradise|perfection|fun|a (?:good|great|perfect|fun) "
     r"(?:time|day|night|evening|weekend|afternoon|morning))[.!]*$"),
    ("idea_of_bad", "preference", "dislike",
     r"^(?P<x>(?!(?:i|we|it|that|this)\b).+?)\s*(?:is|are|'s|=) (?:my|our) (?:personal |own )?"
     r"idea of (?:hell|torture|a nightmare|misery|purgatory)[.!]*$"),
    # "there's nothing I hate more than X", "there's no smell I love more than X"
    ("nothing_more_bad", "preference", "dislike",
     r"^there(?:'s| is) no(?:thing| [\w-]+(?: on earth| in the world)?) (?:that )?(?:i|we) "
     r"(?:hate|loathe|detest|dread|dislike|can'?t stand) more than (?P<x>.+)"),
    ("nothing_more_good", "preference", "like",
     r"^there(?:'s| is) no(?:thing| [\w-]+(?: on earth| in the world)?) (?:that )?(?:i|we) "
     r"(?:love|enjoy|like|adore|relish) (?:more|better) than (?P<x>.+)"),
    ("thing", "preference", "like",
     r"^(?P<x>.+?) (?:is|are|'s|'re) (?:\w+ ){0,2}?(?:my (?:\w+ )?(?:jam|thing|comfort food|"
     r"guilty pleasure|weakness|happy place|everything|obsession)|the best|the greatest|"
     r"amazing|awesome|so good|the way to go|life|everything|the peak of|the highlight of|"
     r"heaven|perfection|the dream|the \w+est (?:\w+ )?(?:i'?ve|i|we) (?:ever )?(?:own|owned|"
     r"bought|had|tried|eaten|ate|made))\b"),
    ("thing_not", "preference", "dislike",
     r"^(?P<x>.+?) (?:is|are|'s|'re) (?:\w+ ){0,2}?(?:not (?:really )?(?:my thing|for me|my "
     r"cup of tea|my vibe|my style|my scene|my jam)|the worst|gross|disgusting|a crime|"
     r"overrated|terrible|awful|horrible|nasty|my nightmare|my enemy|the bane of)\b"),
    ("not_enjoy", "preference", "dislike",
     r"^(?P<x>.+?) (?:isn'?t|aren'?t|is not|are not) (?:really |exactly )?(?:something|what|"
     r"a thing|anything) (?:i|we) (?:enjoy|like|love|want)\b"),
    ("get_along", "preference", "dislike",
     r"^(?P<x>.+?) and (?:i|me) (?:do not|don'?t|never) get along\b"),
    ("how_i_like", "preference", "like",
     r"^(?P<x>.+?),? (?:that'?s|that is) (?:how|the way) (?:i|we) like\b"),
    ("could_eat", "preference", "like",
     rf"^{I} could (?:eat|drink|watch|listen to|read|play|live on) (?P<x>.+?) (?:every "
     rf"(?:single )?day|all day|forever|nonstop|on repeat|for days)\b"),
    ("scared", "preference", "dislike",
     rf"^{IM} {ADV}(?:way |far |much )?(?:too )?(?:scared|afraid|terrified|sick|tired) of "
     rf"(?P<x>.+?)(?: to .*)?$"),
    ("thing_not", "preference", "dislike",
     r"^(?P<x>.+?) (?:isn'?t|aren'?t) (?:really |exactly )?(?:my thing|for me|my cup of tea|"
     r"my style|my jam)"),
    ("stress", "preference", "dislike",
     r"^(?P<x>(?!i\b|we\b).+?) (?:stress(?:es)? me out|annoys? me|bores? me|scares? me|"
     r"freaks? me out|grosses? me out|makes? me sick|drains? me|"
     r"drives? me (?:crazy|nuts|mad|insane|bonkers|bananas|batty|up the wall|up a wall|"
     r"(?:a)?round the bend|round the twist)|makes? my (?:skin crawl|blood boil|teeth itch)|"
     r"sets? my teeth on edge|makes? me see red|"
     r"makes? me (?:itch|itchy|sneeze|gag|queasy|"
     r"nauseous|bloated|break out)|gives? me the (?:creeps|ick|heebie-jeebies|willies)|"
     r"gets? on my nerves|bugs? me|irritates? me|makes? me (?:feel )?(?:sick|ill|bad|awful)|"
     r"tires? me out|wears? me out|makes? me want to (?:scream|cry|die|hurl)|"
     r"(?:tastes?|smells?|looks?|feels?) (?:weird|awful|bad|gross|terrible|"
     r"off|disgusting|horrible|nasty))"),
    # "I'd pick X over Y every time": a standing choice between two things, not a
    # hypothetical (the 'd of "I'd buy a boat" is refused)
    ("rather", "preference", "like",
     r"^(?:i|we)'?d (?:always |still )?(?:pick|take|choose|go for)\s+(?P<x>.+?) over "
     r"(?P<over>.+?)(?:,? (?:any ?time|every (?:single )?time|any day|hands down|tbh|lol))*$"),
    # "X > Y", not an arrow "X -> Y" (a routine's shorthand, ``_HABIT_EQUALS``)
    ("gt", "preference", "like", r"^(?P<x>[^<>]+?)\s*(?<!-)(?:>|>>)\s*(?P<over>.+)"),
    # "spilled a latte over the keyboard": a deed in the past is no comparison ("picked tea
    # over coffee" is a choice)
    ("over", "preference", "like",
     r"^(?!(?!(?:preferred|picked|chose|voted|opted|favou?red)\b)[a-z]+ed\b)"
     r"(?P<x>[\w .+#-]{2,30}?)(?<!\bis)(?<!\bare)(?<!\bwas)(?<!\bwere)(?<!\bit's) over "
     r"(?P<over>[\w .+#-]{2,30}?)(?: any day| always| every "
     r"time| for me|,.*)?[.!]*$"),
    ("always", "preference", "like",
     r"^(?P<x>[\w .+#-]{2,30}?),? (?:always|all the way|every time|any day|forever|for life)"
     r"(?: for [\w ]{2,20})?[.!]*$"),
    ("the_more", "preference", "like", r"^the \w+(?:er|r) (?:the )?(?P<x>.+?),? the better"),
    ("obsession", "preference", "like",
     r"^(?P<x>.+?) (?:is|are|'s|'re) (?:\w+ ){0,2}?(?:my (?:new |latest |biggest |current )?"
     r"(?:obsession|addiction|passion|weakness|comfort)|what keeps me (?:sane|going|happy|"
     r"alive)|the only \w+ i\b)"),
    ("better", "preference", "like",
     r"^(?P<x>[^,]+?) (?:is|are) (?:way |so much |much |far )?better than (?P<over>[^,]+)"),
    ("beats", "preference", "like", r"^(?P<x>[^,]+?) beats (?P<over>[^,]+)"),
    ("nothing_better", "preference", "like",
     r"^(?:there'?s |there is )?nothing (?:better than|beats|like|compares to|(?:relaxes|"
     r"calms|cheers|makes) me (?:up |down |happy |happier )?(?:like|more than|than)) "
     r"(?P<x>.+)"),
    ("give_me", "preference", "like", r"^give me (?P<x>.+?)(?: over (?P<over>.+))?$"),
    ("pick", "preference", "like",
     r"^(?:i|we)'?d (?:always |much rather |rather )?(?:pick|choose|take|go for) (?P<x>.+?) "
     r"over (?P<over>.+)"),
    ("what_i", "preference", "like",
     rf"^(?P<x>.+?) (?:is|are) (?:what|something|one thing|one of the things|a \w+|an \w+|"
     rf"the \w+)(?: that)? (?:i|we) {ADV}(?:prefer|like|love|enjoy|want|adore)\b"),
    ("no_thanks", "preference", "dislike", r"^(?P<x>.+?),? no thanks?\b"),
    # a stance held once and no more: "I used to love coffee" says the user does not now
    # (it retires a live "I love coffee", kept as its history)
    ("used_to", "preference", "dislike",
     rf"^{I} {ADV}used to {ADV}(?:like|love|enjoy|adore|be (?:really |so )?(?:into|a (?:big |"
     rf"huge )?fan of|obsessed with))\s+(?!.*\b(?:still|too)\b)(?P<x>.+)"),
    # a camp left: "I used to be a cat person", "I'm no longer a morning person" (the live
    # "I'm a cat person" becomes its history)
    ("used_to_person", "preference", "dislike",
     rf"^(?:{I} {ADV}used to be|{IM} no longer) (?:a |an )(?P<x>[\w-]+(?: [\w-]+)?) "
     r"(?:person|people|lover|fan|kind of (?:guy|girl|person))\b(?!.*\b(?:still|too)\b)"),
    # "I went from a cat person to a dog person": the camp now, and the one left (``was``)
    ("camp_switch", "preference", "like",
     rf"^{I} {ADV}(?:went|switched|converted|turned|changed) from (?:being )?(?:a |an )"
     r"(?P<was>[\w-]+(?: [\w-]+)?) (?:person|lover|fan) (?:to|into) (?:being )?(?:a |an )"
     r"(?P<x>[\w-]+(?: [\w-]+)?) (?:person|lover|fan)\b"),
    ("dont_like", "preference", "dislike",
     rf"^{I} {ADV}(?:don'?t|do not|never|didn'?t ever|no longer) {ADV}(?:like|love|enjoy|"
     rf"care for|dig|fancy)\s+(?P<x>.+)"),
    # "I've never been able to get into jazz", "I just can't get into podcasts"
    ("cant_get_into", "preference", "dislike",
     rf"^{I}\s*(?:'ve|have)? {ADV}(?:never been able to|could never|can never|never could|"
     rf"can'?t|cannot) {ADV}(?:get into|warm to|get on with|get behind)\s+(?P<x>.+)"),
    # "count me out of anything involving karaoke": a standing no to a kind of thing
    ("count_out", "preference", "dislike",
     r"^count (?:me|us) out (?:of|for|on|when it comes to) (?P<x>(?:anything|everything|"
     r"any|all)\b.+)"),
    # "the sound of someone chewing = pure rage", "a hot bath after a run = bliss"
    ("equals_bad", "preference", "dislike",
     r"^(?P<x>[^=<>]{2,60}?)\s*=\s*(?:pure |absolute |actual |literal |instant )?(?:rage|"
     r"torture|hell|misery|agony|nightmare fuel|my nightmare|my kryptonite)\b"),
    ("equals_good", "preference", "like",
     r"^(?P<x>[^=<>]{2,60}?)\s*=\s*(?:pure |absolute |actual |literal |instant )?(?:bliss|"
     r"heaven|joy|happiness|perfection|my happy place)\b"),
    ("hate", "preference", "dislike",
     rf"^{I} {ADV}(?:hate|dislike|detest|loathe|despise|can'?t stand|cannot stand|refuse to|"
     rf"can'?t handle|can'?t bear|can'?t tolerate|can'?t eat|can'?t drink|can'?t do|"
     rf"could never eat|am not into|'m not into)\s+(?P<x>.+)"),
    ("not_fan", "preference", "dislike",
     rf"^{IM} {ADV}not {ADV}(?:a |an )?(?:big |huge |great |massive )?(?:fans? of|into|big "
     rf"on|keen on|fond of|crazy about|a fan)\s+(?P<x>.+)"),
    ("not_person", "preference", "dislike",
     rf"^{IM} (?:really )?not (?:a|an|much of a) (?P<x>[\w-]+(?: [\w-]+)?) "
     rf"(?:person|fan|lover|kind of \w+)\b"),
    ("rather", "preference", "like",
     r"^(?:i|we)'?d (?:much |really )?rather\s+(?P<x>.+?)(?: than (?P<over>.+))?$"),
    ("prefer", "preference", "like",
     rf"^{I} {ADV}(?:prefer|like|love|adore|enjoy|dig|fancy|appreciate|cherish|relish|"
     rf"live for|devour|binge|can'?t get enough of|(?:have|'ve got|got) (?:a soft spot|"
     rf"a thing|a weakness) for)\s+(?P<x>.+)"),
    ("grown_to", "preference", "like",
     rf"^{I}\s*(?:'ve|have) (?:been |grown to |come to |always |really |started to |"
     rf"learned to |fallen in love with )*(?:loving|love|liked|like|enjoying|enjoyed|"
     rf"into)\s+(?P<x>.+)"),
    ("fan", "preference", "like",
     rf"^{IM} {ADV}(?:a |an )?(?:big |huge |massive |great |total |die-?hard |major )?"
     rf"(?:fans? of|into|obsessed with|addicted to|hooked on|fond of|crazy about|nuts about|"
     rf"(?:nerd|geek|snob|freak|fanatic) (?:about|for|when it comes to)|"
     rf"passionate about|a sucker for|weak for|in love with|all about|drawn to|partial to|"
     rf"attracted "
     rf"to)\s+(?P<x>.+)"),
    # "I'm a huge Arsenal fan", "a big coffee drinker": the intensifier is no part of the
    # subject (preference:huge_arsenal met no later "I can't stand Arsenal"); "a big reader"
    # names no thing, only the activity's doer
    ("person", "preference", "like",
     rf"^{IM} (?:more of |definitely |totally |such |really |kind of |kinda |sort of |a bit of "
     rf"|a little bit of |bit of )?(?:a |an )(?:{_INTENSIFIER} )?(?!{_INTENSIFIER} )"
     rf"(?P<x>[\w-]+"
     rf"(?: [\w-]+)?) (?:person|lover|fan|addict|nerd|geek|junkie|enthusiast|fanatic|snob|"
     rf"aficionado|buff|head|drinker|eater|reader|watcher|guy|girl|kind of (?:guy|girl|"
     rf"person))\b"),
    ("doer", "preference", "like",
     rf"^{IM} (?:such |really )?(?:a |an )(?:{_INTENSIFIER}) (?P<x>reader|eater|drinker|"
     r"walker|sleeper|talker|cook|traveller|traveler|gamer|napper|snacker|shopper)$"),
])

# What the speaker says they will do in the conversation or will undergo, not a plan: "I'll
# let you know", "I'll keep you posted", "I'll definitely forget otherwise", "I'll see how it
# goes"
_NO_PLAN_WORDS = (
    r"(?:(?:definitely|probably|just|totally|prob|def|so|for sure|deffo) )?"
    r"(?:forget|let (?:you|u|ya) know|keep (?:you|u|ya) posted|get back to (?:you|u|ya)|"
    r"tell (?:you|u|ya)|text (?:you|u|ya)|message (?:you|u|ya)|ping (?:you|u|ya)|"
    r"call (?:you|u|ya)|update (?:you|u|ya)|report back|be right back|brb|"
    r"see (?:how|what|if|about)|think about it|regret it|miss (?:you|u|ya)|die|cry|"
    r"be late|lose it|pass out|explode|scream)\b")
_NO_PLAN = rf"(?!{_NO_PLAN_WORDS})"
_DECISIONS_STRONG = _rules([
    # "I'm not vegetarian anymore", "I'm no longer a nurse": what the user was, ended (a
    # diet, a faith, a habit or a job: ``_ended_identity``; "I'm not tired anymore" is none)
    ("no_longer_am", "decision", "dislike",
     rf"^{IM} not (?:a |an )?(?P<x>[\w-]+(?: [\w-]+)?) any ?more$"),
    ("no_longer_am", "decision", "dislike",
     rf"^{IM} no longer (?:a |an )?(?P<x>[\w-]+(?: [\w-]+)?)$"),
    ("decided_not", "decision", "dislike",
     rf"^(?:{I}(?:'ve| have)?\s+)?{ADV}(?:finally )?(?:decided|chose|resolved|vowed|promised "
     rf"myself|made up (?:my|our) minds?) not to\s+(?P<x>.+)"),
    ("decided", "decision", "like",
     rf"^(?:{I}(?:'ve| have)?\s+)?{ADV}(?:finally |officially )?(?:decided|made up (?:my|our) "
     rf"minds?|made the (?:call|decision)|resolved|vowed|promised myself)[:,]?\s+(?:that\s+)?"
     rf"(?:to\s+|on\s+)?(?P<x>.+)"),
    # "that was the last pack of crisps I'll ever buy": the speaker is done with it
    ("last_ever", "decision", "dislike",
     r"^(?:that|this|it)(?: was|'s| is| will be|'ll be) (?:the|my) (?:very )?last (?P<x>.+?) "
     r"(?:i|we)(?:'ll| will) ever (?:buy|smoke|drink|eat|order|book|wear|play|watch|use|do|"
     r"attend|go to|run|take)\b"),
    ("wont", "decision", "dislike",
     rf"^{I}\s*(?:won'?t|will not|shan'?t|are not going to|aren'?t going to|am not going to|"
     rf"'m not going to|'re not going to|'m not gonna|'re not gonna|am not gonna|don'?t plan "
     rf"to|do not plan to|'m not planning to|am not planning to)\s+(?P<x>.+)"),
    ("will", "decision", "like",
     rf"^(?:{I}\s*(?:'ll|will|shall|'m going to|am going to|'re going to|are going to|"
     rf"'m gonna|am gonna|'re gonna|are gonna|gonna|plan to|'m planning to|am planning to|"
     rf"'re planning to|are planning to|intend to|want to|wanna|'m hoping to|hope to|aim to|"
     rf"need to start|'ve got to start|'m aiming to|'m about to|am about to|'m trying to|"
     rf"am trying to|'re trying to|'m committing to|'m committed to|'ve committed to|"
     rf"commit to)|gonna|"
     rf"going to)\s+{_NO_PLAN}(?P<x>.+)"),
    ("plan", "decision", "like",
     r"^my (?:plan|goal|resolution|new year'?s resolution|new rule|new habit|rule) (?:is|"
     r"'s|for \w+(?: \w+)? is) (?:to )?(?P<x>.+)"),
    ("no_more", "decision", "dislike", r"^no more\s+(?P<x>.+)"),
    # "not renewing my lease", "I'm not going back to that gym": a change declined
    ("not_renewing", "decision", "dislike",
     rf"^{IM} not (?:renewing|extending|continuing(?: with)?|going back to|returning to|"
     rf"re-?signing|re-?joining|re-?subscribing(?: to)?|re-?applying(?: to| for)?|"
     rf"re-?enrolling(?: in)?|sticking with|staying (?:at|with|in|on))\s+(?P<x>.+)"),
    ("not_now", "decision", "dislike",
     rf"^{IM} not (?P<x>[a-z]+ing\b.*\b(?:this|next) (?:week|weekend|month|year|\w+day)\b.*)"),
    ("resolve_tail", "decision", "like",
     rf"^(?:{I}(?:'m|'re|'ll| am| are| will)?\s+|(?!{_NOT_MINE}\b))(?P<x>.+?),? (?:from now on|"
     rf"from here on(?: out)?|from this point on|going forward|"
     rf"starting (?:today|tomorrow|tonight|now|next \w+|this \w+))\b"),
    # "dating apps are over for me", "sugar is dead to me": a thing given up
    ("over_for_me", "decision", "dislike",
     rf"^(?!{_NOT_MINE}\b)(?P<x>[\w' -]{{2,40}}?) (?:is|are|'s|'re) (?:so |totally |officially |"
     rf"well and truly |completely )?(?:over for me|over for us|dead to me|done for me|a thing "
     rf"of the past(?: for me)?|out of my life)\b"),
    # "sushi it is", "tram it is for the commute": a choice made
    ("it_is", "decision", "like",
     r"^(?!(?:so|what|that|this|there|here|as|how|where|whatever|such|who|which|if|yes|no|"
     # "it is what it is", "as good as it is": a saying, no choice
     r"ok|okay|fine|well|it|it's)\b)(?!.*\b(?:what|as|how)\s+it is\b)"
     r"(?P<x>[\w' -]{2,30}?),? it is(?: then| for (?:the |my |our )?"
     r"[\w -]{2,30}?| from (?:now|here) on| going forward)?[.!]*$"),
    # "my gym pass won't get renewed", "the apps get uninstalled tonight", "this weekend the
    # hallway gets a coat of yellow": what the speaker will do to a thing of theirs
    ("thing_wont", "decision", "dislike",
     rf"^(?!{_NOT_MINE}\b)(?P<x>[\w' -]{{2,40}}?)(?<!contract)(?<!visa)(?<!permit)(?<!lease)"
     rf"(?<!scholarship)(?<!funding)(?<!grant) (?:won'?t|will not|isn'?t going to|is not going "
     rf"to|aren'?t going to) (?:get|be) (?:renewed|extended|replaced|repaired|used|reinstalled|"
     rf"reactivated|touched)\b"),
    ("thing_gone", "decision", "dislike",
     rf"^(?:(?P<t>{_FUTURE}),? )?(?P<x>(?!{_NOT_MINE}\b)[\w' -]{{2,40}}?)"
     rf"(?: gets?| get| is getting| are getting|'s getting|'re getting| 's getting) "
     rf"(?:deleted|uninstalled|cancell?ed|sold|donated|"
     rf"binned|dumped|ditched|returned|scrapped|recycled|thrown out|given away|listed)\b"
     rf"(?(t).*|(?=.*\b{_FUTURE}))"),
    ("thing_change", "decision", "like",
     rf"^(?:(?P<t>{_FUTURE}),? )?(?P<x>(?!{_NOT_MINE}\b)[\w' -]{{2,40}}?)"
     rf"(?: gets?| get| is getting| are getting|'s getting|'re getting| 's getting) "
     rf"(?:(?:a |an )?(?:fresh |new |second )?(?:coat|lick) "
     rf"of|a makeover|a deep clean|an overhaul|a refresh|(?:re)?painted|shaved|chopped|cut|dyed|"
     rf"replaced|upgraded|renovated)\b"
     rf"(?(t).*|(?=.*\b{_FUTURE}))"),
    ("done_with", "decision", "dislike", rf"^{IM} {ADV}(?:done|through|finished) with\s+(?P<x>.+)"),
    ("off", "decision", "dislike",
     rf"^{IM} {ADV}off (?P<x>.+?) (?:for good|for now|from now on|forever|starting \w+)\b"),
    # chat drops the copula: "tickets secured for easter", "honeymoon's locked in"
    ("secured", "decision", "like",
     r"^(?P<x>(?!it\b|that\b|this\b|his\b|her\b|their\b|your\b)[\w -]{2,40}?)(?:'s| is| are)? "
     r"(?:all |finally |officially |now )?(?:secured|locked in|submitted|handed in|reserved)\b"),
    ("getting_deleted", "decision", "dislike",
     r"^(?P<x>(?!it\b|that\b|this\b|his\b|her\b|their\b|your\b)[\w -]{2,40}?) (?:is|are|'s|'re) "
     r"(?:getting|being) (?:deleted|cancell?ed|sold|dumped|uninstalled|ditched|binned)\b"),
    ("booked", "decision", "like",
     r"^(?P<x>(?!it\b|that\b|this\b|i\b|we\b).+?) (?:is|are|'s) (?:all |finally |now )?"
     r"(?:booked|bought|"
     r"purchased|"
     r"scheduled|planned|set|confirmed|arranged|ordered|paid for|sorted|happening)\b"),
    ("put_up", "decision", "dislike",
     rf"^{I} (?:just |finally )?(?:put|are putting|'re putting|'m putting) (?P<x>.+?) "
     rf"(?:on the market|up for sale|up for adoption)\b"),
    # "my resignation's in", "notice is officially in": a job left
    ("bare_quit", "decision", "dislike",
     r"^(?:my|our) (?:resignation|notice)(?:'s| is) (?:officially |finally |now )?in\b(?P<x>)"),
    # "the flat's on the market as of today", "my car is up for sale": a thing of one's own
    # to be sold
    ("on_market", "decision", "dislike",
     rf"^(?:my|our|the) (?P<x>{_DWELLING}|home|place|car|bike|van|motorbike|boat)(?:'s| is) "
     r"(?:now |officially |finally )?(?:on the market|up for sale)\b"),
    ("bare_quit", "decision", "dislike",
     rf"^(?:{I}|{IM}) (?:just |finally |officially )?(?:quit|quitting|resigned|resigning)"
     # "I resigned last month": when, not what
     rf"(?P<x>)(?:,? (?:last|this|yesterday|today|recently|earlier|on) [\w ]{{0,20}}|"
     rf",? (?:a|an|one|two|three|\d+) (?:days?|weeks?|months?|years?) ago)?[!.]*$"),
    ("lets", "decision", "like", rf"^let'?s {_DECISION_VERBS}\s+(?P<x>.+)"),
    ("going_with", "decision", "like",
     rf"^(?:{IM} )?(?:going|goin'?) (?:with|for)\s+(?P<x>.+)"),
    ("settled", "decision", "like",
     rf"^(?:{I}(?:'ve| have)?\s+)?(?:decided|settled|landed) on\s+(?P<x>.+)"),
])

# "every app", "every page": every one of some things, not a recurring time; with a time
# that happened once ("yesterday", "this morning") the clause reports an event
_EVERY_THING = re.compile(
    r"ev(?:e)?ry (?!(?:day|night|morning|evening|afternoon|week|weekend|month|year|time|"
    r"single|other|\w+day|\w+days)\b)\w+", re.I)
_PROGRESSIVE = re.compile(r"^(?:i'?m|i am|we'?re|we are) (?:\w+ )?\w+ing\b", re.I)
_ONCE = re.compile(r"\b(?:yesterday|last night|this (?:morning|afternoon|evening)|today|"
                   r"tonight|just now|earlier)\b", re.I)

_HABIT_CUE = re.compile(
    rf"\b(?:usually|always|often|normally|generally|typically|regularly|habitually|"
    rf"frequently|constantly|daily|nightly|weekly|monthly|every ?day|ev(?:e)?ry \w+|"
    rf"each (?:morning|night|evening|day|week|weekend|month|year|{WEEKDAY})|"
    rf"most (?:days|nights|mornings|evenings|weekends|weeks|of the time)|(?:once|twice|"
    rf"\w+ times|\d+ ?x) (?:a|per|every) (?:day|week|month|year|night|morning)|a day\b|"
    rf"per day|a week\b|all day|on (?:the )?(?:weekends?|weekdays|{WEEKDAY}s)|{WEEKDAY}s\b|"
    rf"at night|in the (?:mornings?|evenings?|afternoons?)|before (?:bed|sleeping|work|"
    rf"breakfast|i sleep|going to bed)|after (?:work|dinner|lunch|breakfast|\d+\s*(?:am|pm)?|"
    rf"noon|midnight)|first thing|by \d+|around \d+\s*(?:am|pm)?|at \d+\s*(?:am|pm)|"
    rf"tend to|tends to|a lot\b|never|rarely|seldom|hardly ever|sometimes|make a point|"
    rf"religiously|without fail|on my commute|early riser|night owl|early bird|everywhere|"
    rf"whenever|every time|on (?:my|the) (?:lunch break|commute|way (?:to|home))|"
    rf"during lunch|at lunch|try not to|try to avoid|make sure to|make it a point|"
    rf"as soon as|when i (?:wake|get) up|when i get home|once i get home|between meals|"
    rf"\w+ (?:times|nights|days|mornings) out of (?:ten|\d+))",
    re.IGNORECASE,
)
_HABIT_NEGATIVE = re.compile(
    r"\b(?:never|rarely|seldom|hardly ever|don'?t|do not|try not to|avoid|make a point of "
    r"not|no longer)\b|" + USED_TO, re.IGNORECASE)  # "I used to run": a habit that ended
# Something the user did and does no more, said without a frequency ("I no longer go to
# the gym", "I don't play tennis anymore"): a habit ended, the other polarity of its slot. A
# state ("I don't know anymore", "I don't care anymore") or a stance (preferences) is none.
_HABIT_ENDED = re.compile(
    r"^(?:i|we) (?:just |really |honestly )?(?:no longer|(?:don'?t|do not)(?= .*\bany ?more\b))"
    r" (?!(?:know|think|care|understand|remember|mind|believe|feel|get|want|need|see|trust|"
    r"like|love|hate|enjoy|mean|recognize|recognise|have|do|exist|matter|bother|agree|"
    r"blame|expect|wonder|miss)\b)[a-z]+", re.IGNORECASE)
_HABIT_SUBJECT = re.compile(rf"^(?:{I}|{IM}|i'?ve|we'?ve)\s+(?P<x>.+)", re.IGNORECASE)
_HABIT_ROUTINE = re.compile(
    r"^(?P<x>.+?) (?:is|are|'s|'re) (?:\w+ ){0,2}?(?:part of my (?:\w+ )?(?:routine|day|"
    r"mornings?|evenings?)|my (?:\w+ )?(?:routine|ritual|habit)|my usual|a (?:daily|nightly|"
    r"weekly|morning|evening) (?:thing|ritual|habit)|non-negotiable|a must|essential)\b",
    re.IGNORECASE)
# Chat shorthand for a routine: a recurring time, "=", what happens then ("Mon, Wed and Fri =
# 40 lengths", "sat + sun = long rides", "commute = crossword time"). The left side must name
# a recurring time, so "2 + 2 = 4" and "X = Y" comparisons are not habits.
_HABIT_EQUALS = re.compile(r"^(?P<t>[^=<>]{2,40}?)\s*(?:=|->|→)\s*(?P<x>[^=<>]+)$")
_RECURRING_TIME = re.compile(
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mon|tue|tues|wed|thu|thur|thurs|fri|"
    r"sat|sun|weekends?|weeknights?|weekdays?|mornings?|evenings?|nights?|afternoons?|commute|"
    r"lunch ?breaks?|bedtime|every|each|daily|nightly|paydays?|pay ?days?|arvos?|lights out|"
    r"days? off|sick days?|rainy days?|road trips?|long drives?|flights?|holidays?|"
    r"christmas|birthdays?)\b",
    re.IGNORECASE)
_DAY_SHORT = rf"(?:{WEEKDAY}s?|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)"
_DAY_LIST = re.compile(rf"(?:{_DAY_SHORT}(?:,? (?:and |& |\+ )?|/)){{1,6}}{_DAY_SHORT}",
                       re.IGNORECASE)
_HABIT_FIRST_THING = re.compile(
    r"^(?:the )?(?:first|last) thing (?:i|we) do (?:every|each|in the|on) [\w ]{2,20}? is "
    r"(?:to )?(?P<x>.+)", re.IGNORECASE)
_TIME_LEAD_WIDE = re.compile(
    r"^(?P<t>(?:(?:every|each|most|on|after|before|during|around|when|whenever) (?:[\w']+ ){0,4}?"
    r"[\w']+)|"
    # "mon wed fri I …", "tues/thurs we …": a list of weekdays
    rf"{_DAY_LIST.pattern}|(?:once|twice|\w+ times|\d+ ?x) (?:a|per|every) \w+|"
    r"\w+ (?:times|nights|days|mornings) out of \w+),?\s+"
    r"(?P<rest>(?:i|we)\b.*)$", re.IGNORECASE)
# "when(ever) X, I Y" moved behind: the condition recurs ("when I'm stressed I bake"), unless
# the clause tells one past time ("when I was a kid I…", "when we got there I…")
_WHEN_LEAD = re.compile(r"^when(?:ever)?\b", re.IGNORECASE)
# "on long drives I …", "before exams I …": a situation in the plural recurs
_SITUATION_LEAD = re.compile(
    r"^(?:on|during|before|after) (?!the\b|my\b|our\b|this\b|that\b|these\b|those\b)"
    r"(?:[\w'-]+ ){0,3}?[\w'-]*[^s's]s$", re.IGNORECASE)
_IRREGULAR_PAST = re.compile(
    r"\b(?:kept|took|met|went|had|got|ate|drank|saw|made|bought|brought|left|found|spent|slept|"
    r"wore|sang|ran|swam|drove|read it|felt|lost|won|sat|stood|thought|told|wrote)\b", re.I)
_WHEN_PAST = re.compile(
    r"\b(?:was|were|had|did|got|went|came|saw|left|found|arrived|(?:i|we|it|he|she|they|you) "
    r"\w+ed)\b", re.IGNORECASE)
_HABIT_IMPLICIT = re.compile(
    rf"^(?P<t>(?:(?:every|each) (?:other |second |third |fourth |single |alternate )?)?"
    rf"(?:{WEEKDAY}|weekend|weekday)s?(?: (?:nights?|mornings?|evenings?|afternoons?|"
    rf"arvos?))?|"
    rf"(?!(?:last|first|next|this|that|the|my|our|every|big|a) )(?P<a>[\w ]{{2,20}}) day) "
    rf"(?:are|is|belong to) (?:for |on )?"
    # a judgement of the day is no habit ("every monday is a nightmare")
    rf"(?!(?:a |an |the |such a |so |too |always |just )?(?:nightmare|drag|struggle|mess|worst|"
    rf"best|hell|chaos|crazy|busy|hectic|long|rough|tough|hard|slow|awful|great|fun|boring)\b)"
    rf"(?P<x>.+)", re.IGNORECASE)
# "lights out for me means brown noise", "sunday means pancakes": what a recurring time holds
_HABIT_MEANS = re.compile(
    r"^(?P<t>[^=<>,]{2,40}?) (?:for (?:me|us) )?(?:always )?means "
    r"(?!(?:nothing|everything|a lot|so much|the world|little)\b)(?P<x>.+)", re.IGNORECASE)
# "the kitchen closes at nine for me", "screens go off by ten for us": a rule of one's own
_HABIT_CLOSES = re.compile(
    rf"^(?P<x>(?!(?:it|that|this|he|she|they|there|the (?:[\w-]+ )?{_BUSINESS}|the "
    rf"(?:library|pool|park|office|station|mall|bar|club|museum|post office))\b)"
    rf"[\w' -]{{2,30}}?) "
    r"(?:closes|shuts|shuts down|"
    r"stops|ends|goes off|go off|switches off|switch off|is off|are off|goes dark|go dark|"
    r"goes away|go away|gets put away|get put away) (?:at|by|after|around|before) "
    r"(?P<t>[\w:.]+(?: ?(?:am|pm|ish|sharp|o'clock))?) for (?:me|us)\b", re.IGNORECASE)
# "inbox stays closed till mid-morning, strict policy of mine", "…, that's my rule"
_HABIT_POLICY = re.compile(
    r"^(?P<head>.+?),?\s+(?:(?:it'?s |that'?s )?(?:a |my |one )?(?:(?:strict|firm|personal|"
    r"hard|golden|house|iron|unbreakable|non-negotiable|little|sacred) )*(?:policy|rule) of "
    r"(?:mine|ours)|(?:that'?s |it'?s )?(?:my|our) (?:(?:strict|firm|personal|hard|golden|"
    r"house|iron|one|little|sacred) )*(?:policy|rule))[.!]*$", re.IGNORECASE)
# "I'm one of those people who reads the last page first", "I'm the kind of person who…"
_KIND_OF_PERSON = re.compile(
    rf"^{IM} (?:one of those|one of the|(?:the|that) (?:kind|type|sort)(?: of)?|someone|"
    rf"somebody|a person|that person|the person)(?: (?:people|persons?|guys?|girls?|folks|"
    rf"weirdos|types?|\w+ people))? (?:who|that) (?P<v>.+)", re.IGNORECASE)
_STANCE_VERB = re.compile(
    r"^(?:really |just |genuinely |honestly )*(?:likes?|loves?|hates?|prefers?|enjoys?|adores?|"
    r"can'?t stand|dislikes?|detests?|loathes?|cannot stand)\b", re.IGNORECASE)

_FACTS_LATE = _rules([
    ("have", "fact", None,
     rf"^{I}\s*(?:have|'ve got|have got|got|own) (?!\w+ed\b|to\b|been\b|no\b|had\b|got\b|"
     rf"(?:a|an) (?:question|quick question|problem|meeting|idea|feeling|lot|good|great|nice|"
     rf"bad|long|busy|hard|rough|tough|headache|cold|few)\b|an idea|time\b|fun\b|plans\b|"
     rf"work\b|class\b|school\b|something\b|nothing\b|everything\b|enough\b|"
     # "three books overdue", "two days left", "five emails to answer": for now
     rf"[\w -]{{0,30}}?\b(?:overdue|left|to go|due|to do|to answer|to finish|to return|"
     rf"pending|waiting)\b)(?P<x>.+)"),
    ("i_am", "fact", None,
     rf"^{IM} (?:a|an) (?!(?:bit|little|lot|huge|big)\b)(?P<x>[\w -]+?)(?: at | in | for | "
     rf"from |,|$)"),
    ("nationality", "fact", None, r"^i'?m (?P<x>[A-Z][a-z]+(?:ian|ese|ish|ch|an|i))$"),
    ("have_not", "fact", None,
     rf"^{I} (?:don'?t|do not) (?:own|have) (?:a|an|any) (?P<x>car|bike|pets?|kids|children|"
     rf"tv|television|license|licence|driver'?s license|smartphone|siblings|partner)\b"),
    ("speak", "fact", None, r"^i (?:speak|can speak)\s+(?P<x>.+)"),
    ("car", "fact", None, r"^i (?:drive)\s+(?P<x>.+)"),
    ("instrument", "fact", None, r"^i (?:play) (?:the )\s*(?P<x>.+)"),
    ("studies", "fact", None,
     r"^i(?: studied| majored in| study|'m studying| am studying| graduated in| have a degree "
     r"in)\s+(?P<x>.+)"),
    ("wear", "fact", None, r"^i (?:wear)\s+(?P<x>.+)"),
    ("home", "fact", None, r"^i (?:share|rent) (?:a|an) (?:flat|apartment|house|room)\b"),
    ("commute", "fact", None, r"^i commute\b"),
    # "I pack orders on the graveyard shift at a depot", "I pick up shifts at a bar": a job
    ("job", "fact", None,
     r"^i (?!(?:did|was|had|got|took|worked|hate|love|like|dread|miss|prefer|enjoy|can'?t|"
     r"don'?t|never|just|once)\b)(?:(?:[\w'-]+ ){1,6}?(?:on|during|for) (?:the |a |my )?"
     r"(?:night|graveyard|early|late|day|morning|evening|overnight|swing|weekend|split|double|"
     r"back) shifts?|(?:[\w'-]+ ){0,5}?shifts? (?:at|in) (?:a|an|the|my)\b)"),
])

_STOP = (r"(?:quit|quitting|stopped|stopping|stop|gave up on|giving up on|give up on|gave up|"
         r"pulled the plug on|pulling the plug on|pull the plug on|"
         r"giving up|give up|dropped|dropping|"
         r"cancell?ed|cancell?ing|cancel|cut out|cutting out|cut back on|cutting back on|"
         r"cut down on|cutting down on|ditched|ditching|deleted|deleting|unsubscribed from|"
         r"sold|selling|left|leaving|retired from|broke up with|split up with|resigned from|"
         r"broke up w/?|split up w/?|"
         r"resigned|turned down|turning down|declined|declining|unfollowed|unfollowing|"
         r"stepped down from|stepping down from|pulled out of|pulling out of|dropped out of|"
         r"dropping out of|backed out of|backing out of|bowed out of|walked away from|"
         r"handed in (?:my )?(?:notice|resignation)|cutting|cut)")
# a treat bought or ordered once ("bought a ridiculously fancy sandwich to celebrate",
# "ordered pizza"): no decision
_CONSUMED = (r" (?:(?:a|an|some|the|another|two|three|us|me|myself|ourselves)\s+)*"
             r"(?:[\w-]+\s+){0,3}?(?:sandwich|sandwiches|coffees?|lattes?|teas?|pints?|beers?|"
             r"drinks?|snacks?|lunch|dinner|breakfast|brunch|cakes?|croissants?|donuts?|"
             r"doughnuts?|pizzas?|burgers?|chips|fries|takeaway|takeout|ice cream|sweets|"
             r"chocolates?|crisps|meal deal|round)\b")
_START = (r"(?:started|starting|start|began|beginning|took up|taking up|picked up|joined|"
          r"joining|signed up for|signing up for|signed up to|signing up to|signed|enrolled in|"
          r"enrolling in|registered "
          rf"for|applied for|applied to|booked|bought(?!{_CONSUMED})|ordered(?!{_CONSUMED})|"
          r"getting|adopted|adopting|"
          r"switched to|switching to|switched from|moved to|moving to|migrating to|migrated "
          r"to|moving|accepted|chose|chosen to|picked|went with|settled on|"
          r"ended up (?:buying|getting|"
          r"with|going with|choosing)?|became|become|changed|set|set up|subscribed to|"
          r"committed to|reserved|installed|upgraded to|hired|rented|entered|enrolled|"
          r"pulled the trigger on|pulling the trigger on|took the plunge on|went for|switched|"
          r"changed|registering for|said yes to|put (?:down )?(?:a )?deposit on|"
          r"put (?:a |the )?deposit down on|put in an offer "
          r"on|made an offer on|bringing home|brought home)")
_DECISIONS_LATE = _rules([
    ("stop", "decision", "dislike",
     rf"^{I}(?:'ve|'m|'re)?\s+{ADV}(?:have |am |are |just |finally |recently |officially |"
     rf"also )*{_STOP}\s+(?P<x>.+)"),
    ("start", "decision", "like",
     rf"^{I}(?:'ve|'m|'re)?\s+{ADV}(?:have |am |are |just |finally |recently |officially |"
     rf"also )*{_START}\s+(?P<x>.+)"),
    # the present progressive is a plan only for a change ("we're getting a cat") or with a
    # time ahead ("I'm seeing the dentist next week"), not for what is going on right now
    ("progressive", "decision", "like",
     rf"^{IM} (?:also |finally |officially |now |seriously |actually )?"
     rf"(?P<v>(?:getting|buying|selling|moving|switching|joining|learning|taking up|leaving|"
     rf"deleting|cancell?ing|dropping|putting|booking|ordering|unfollowing|unsubscribing|"
     rf"adopting|launching|starting|quitting|changing|applying|signing up|retiring|"
     rf"keeping(?= (?:my|our|the|this|that|both|all)\b)(?! (?:my |our |the )?(?:eyes?|fingers|"
     rf"head|options|cool|distance|mouth|word|promise|spirits|chin|hopes|fingers)\b)|"
     rf"training for|saving for|renovating|relocating|marrying|getting married)\b|"
     rf"[a-z]+ing\b(?=.*\b(?:next|tomorrow|tonight|this (?:week|weekend|month|year|spring|"
     rf"summer|fall|autumn|winter)|in (?:january|february|march|april|may|june|july|august|"
     rf"september|october|november|december|the (?:fall|spring|summer|winter))|on "
     rf"(?:mon|tues|wednes|thurs|fri|satur|sun)day|soon)\b))\s*(?P<x>.*)"),
    ("progressive_go", "decision", "like",
     rf"^{IM} (?:also |finally |officially |now )?going (?P<x>(?:back|fully|full|to|home to|"
     rf"abroad|vegan|vegetarian|remote|part-time|freelance)\b.*)"),
])


# "my X is Y" is no attribute fact when X is a go-to, a usual or a ritual ("my go-to comfort
# food is…", "my usual lunch is…", "my sunday ritual is…": a preference, a habit) or when Y
# is a stance ("my kettle is the best thing I ever bought")
# "my brain is soup", "my jaw is still on the floor", "my hand's swollen like a balloon": a
# body part as it is after something happened, not a lasting attribute ("my eyes are green",
# "my knees are bad" stay facts)
_BODY_STATE = (
    r"(?:brain|head|jaw|hands?|feet|foot|back|neck|eyes?|heart|stomach|tummy|legs?|arms?|"
    r"knees?|throat|nose|ears?|face|shoulders?|fingers?|toes?|body|mind)(?:'s| is| are) "
    r"(?:\w+ )?(?:still|now|already|literally|officially|so|like|basically|completely|"
    r"totally|soup|mush|fried|toast|jelly|on the floor|swollen|swelling|killing me|throbbing|"
    r"numb|shaking|racing|pounding|spinning|melting|gone|dead|done|broken)\b")
_NOT_ATTRIBUTE = re.compile(
    r"^(?:my|our) (?:(?:[\w-]+ ){0,3}?(?:go-to|usual|ritual|routine)\b|"
    r"[\w -]{1,30}?(?:'s| is| are) (?:\w+ ){0,2}?(?:the best|the worst|the greatest|"
    r"my favou?rite|my go-to|overrated|"
    r"the \w+est (?:\w+ )?(?:i'?ve|i|we) (?:ever )?(?:own|owned|bought|had|tried)|"
    r"(?:all |finally |officially |now )?(?:secured|locked in|booked|confirmed|submitted|"
    r"reserved|paid for|sorted))\b|"
    # a notice handed in, a home put on the market: decisions (``_DECISIONS_STRONG``)
    r"(?:resignation|notice)(?:'s| is) (?:officially |finally |now )?in\b|"
    r"[\w -]{1,30}?(?:'s| is) (?:now |officially |finally )?(?:on the market|up for sale)\b|"
    # "my head's a bit sore today", "my back is killing me right now": how it is today, not
    # a lasting attribute
    r"[\w -]{1,30}?(?:'s| is| are) .*\b(?:today|tonight|right now|rn|atm|at the moment|"
    r"this (?:morning|afternoon|evening))[.!]*$|"
    rf"{_BODY_STATE})",
    re.IGNORECASE)


# A home or a job in the past tense ("I lived in London as a student", "my dad worked as a
# taxi driver"): a fact of its own, keyed by its words, never the current value of the slot
# (it superseded "I live in Osaka"). "I've been living in" is the present, and so is the
# perfect with a span ("I've lived in Sapporo for ten years", "... since 2019").
_SLOT_RULES = frozenset({"home", "job", "employer", "rel_home", "rel_job"})
_MARITAL = frozenset({"married", "single", "divorced", "engaged", "widowed", "separated"})
_PAST_SLOT = re.compile(
    r"\b(?:lived|worked|taught|used to|(?:was|were) (?:living|working|teaching))\b", re.I)
_PERFECT_SPAN = re.compile(
    r"\b(?:'ve|have|has|'s) (?:lived|worked|taught)\b.*\b(?:for|since)\b", re.I)


def _past_slot(text: str, matched: str) -> bool:
    return bool(_PAST_SLOT.search(matched)) and not _PERFECT_SPAN.search(text)


def _fact_subject(name: str, match: re.Match[str]) -> str:
    groups = match.groupdict()
    rel = groups.get("r")
    if name == "name":
        return "name"
    if name == "rel_job" and groups.get("v"):  # "my <person> is a <noun>"
        return _person_attribute(rel, f"a {groups['v']}")
    if name.startswith("rel_"):
        return f"{rel} {name[4:]}"
    if name == "attribute" and re.fullmatch(REL, groups["a"], re.IGNORECASE):
        return _person_attribute(groups["a"], groups["v"])
    if name in ("home", "hometown", "job", "employer", "age", "height", "commute", "siblings",
                "languages"):
        return name
    if name == "licence":
        return "driving licence"
    if name == "blood_type":
        return "blood type"
    if name == "member":
        return "member of " + _clean_subject("fact", groups["x"])[0]
    if name == "married" or (name == "state" and groups["x"].lower() in _MARITAL):
        return "marital status"  # one slot: single, engaged, married, divorced
    if name == "allergy":
        return "allergy " + _clean_subject("fact", groups["x"])[0]
    if name in ("state", "speak", "car", "instrument", "studies", "wear"):
        if name in ("state", "wear", "instrument"):
            return _clean_subject("fact", groups["x"])[0]
        return {"speak": "languages", "car": "car", "studies": "studies"}[name]
    if name == "attribute":
        return _thing_attribute(groups["a"], groups["v"])
    if name == "nationality":
        return "nationality"
    if name == "i_am":
        noun = _clean_subject("fact", groups["x"])[0]
        return "job" if _is_job(noun) else noun
    if name == "have":
        named = re.search(r"\b(?:named|called) ([\w'-]+)", groups["x"], re.IGNORECASE)
        x = re.split(r"\s+(?:named|called|who|that|which|and|in|at|from|with|on|,)\b|,",
                     groups["x"], maxsplit=1, flags=re.I)[0]
        x = re.sub(r"^(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|some|"
                   r"several|many|a few|a couple of|the)\s+", "", x.strip(), flags=re.I)
        # "a brother named Ken", "a brother named Jun": two people, two facts
        return _clean_subject("fact", f"{x} {named.group(1)}" if named else x)[0]
    return _clean_subject("fact", groups.get("x") or name)[0]


# Nouns that name one attribute with one value at a time ("my blood type is A", "my car's
# colour is red"): a new value replaces the old. Any other "my X is Y" says one thing of many
# about X ("my phone is broken", "my phone is an iPhone": both true), so Y joins the subject.
# (Words that also take a judgement, "my job is stressful", "my schedule is packed", are not
# slots: "I work as a nurse" would supersede the judgement.)
_SLOT_NOUNS = frozenset(
    "birthday name nickname age height weight type sign major minor occupation profession "
    "address email e-mail number handle username pronoun hometown nationality religion "
    "size budget deadline salary rent wage income commute bedtime mbti gpa language "
    "color colour model brand breed".split())


def _thing_attribute(thing: str, value: str) -> str:
    value = _WHEN_WORDS.sub("", value.strip().rstrip(".!"))
    owned = re.match(r"(?P<a>[a-z][\w -]{0,30}?) (?:is|are|was|were) (?P<v>.+)", value,
                     re.IGNORECASE)
    if owned:  # "my car's colour is blue": the car's colour
        return _thing_attribute(f"{thing} {owned.group('a')}", owned.group("v"))
    words = thing.lower().split()
    if words and (words[-1] in _SLOT_NOUNS or singular(words[-1]) in _SLOT_NOUNS):
        return thing
    return f"{thing} {_clean_subject('fact', value)[0]}".strip()


# "now a lawyer", "a lawyer these days": when, not what
_WHEN_WORDS = re.compile(
    r"^(?:(?:now|currently|still|already|finally|officially|actually)\s+)+|"
    r"(?:\s+(?:now|these days|nowadays|currently|again|too))+$", re.IGNORECASE)


def _person_attribute(person: str, value: str) -> str:
    """The subject of "my <person> is <value>": a person has many attributes at once (an age,
    a job, an allergy, a mood), so only an age or a job's own name is a slot that a new
    value replaces; any other value is part of the subject ("daughter allergic to peanuts"),
    so "my daughter is a doctor" never supersedes "my daughter is five years old"."""
    value = _WHEN_WORDS.sub("", value.strip().rstrip(".!"))
    if _AGE_VALUE.match(value) or re.match(r"(?:turning|just turned|turned) \d", value, re.I):
        return f"{person} age"
    # "my mum's birthday is in May": the person's own attribute, one slot
    owned = re.match(r"(?P<a>[a-z][\w -]{0,30}?) (?:is|are|was|were) ", value, re.IGNORECASE)
    if owned:
        return f"{person} {_clean_subject('fact', owned.group('a'))[0]}"
    noun = re.match(r"(?:a|an) ([\w -]+?)(?: (?:up |down |over |out )?(?:at|in|for|from) .+)?$",
                    value, re.IGNORECASE)
    if noun and _JOB_TITLE.search(noun.group(1)):
        return f"{person} job"
    return f"{person} {_clean_subject('fact', value)[0]}".strip()


def _clean(clause: str) -> str:
    text = unicodedata.normalize("NFKC", clause).replace("’", "'").replace("‘", "'")
    text = re.sub(r"([a-zA-Z])\1{2,}", r"\1\1", text)
    text = re.sub(r"\bnever,? ever\b", "never", text, flags=re.IGNORECASE)
    text = _CONTRACTION_RE.sub(lambda m: _CONTRACTIONS[m.group(1).lower()] or m.group(1), text)
    stripped = _QUOTED.sub(" ", text)
    text = " ".join(stripped.split()) if stripped.strip() else text
    text = _LEAD.sub("", text.strip())
    # a statement's closing stop: the rules anchored at the clause's end ("I'm a nurse",
    # "I'm 34") read "I'm a nurse." as nothing; a question mark stays (it refuses)
    text = _CLOSING_STOP.sub("", text)
    return _own_people(text.strip())


_CLOSING_STOP = re.compile(r"(?<=\w)\s*[.!…]+$")


# Chat names the user's people without "my" ("older sis is a vet", "the wife drives trams",
# "mum's birthday is…") and the speaker with one of them ("me and my brother play chess",
# "my partner and I go hiking"): "my …" and "we" put back, so the fact rules and the person
# gate read them as the user's people and the habit rules as the speaker.
_MY_DROPPED = re.compile(
    r"^(?:(?P<kin>(?:older|younger|big|little|baby|twin|eldest|youngest|lil) (?:bro|sis|"
    r"brother|sister))|the (?P<the>wife|hubby|husband|missus|kids|boyfriend|girlfriend|"
    r"in-laws)|(?P<parent>mum|mom|dad|mama|papa|grandma|grandpa|nan|gran|granny|hubby|wifey|"
    r"husband|wife|missus)(?='s\b|"
    r" (?:just )?(?:turns|turned|is turning|works|runs|owns|lives|teaches)\b))\b",
    re.IGNORECASE)
_WITH_ME = re.compile(
    rf"^(?:(?:me|i) and (?:my|our) {REL}s?|(?:my|our) {REL}s? and (?:i|me))\b", re.IGNORECASE)


def _own_people(text: str) -> str:
    text = _WITH_ME.sub("we", text, count=1)
    dropped = _MY_DROPPED.match(text)
    if dropped:
        name = dropped.group("kin") or dropped.group("the") or dropped.group("parent")
        text = f"my {name}{text[dropped.end():]}"
    return text


# Chat English drops the subject ("Just ordered a new bike!", "not a fan of crowds",
# "born and raised in Kobe"): the implied "I" is put back before the rules read the clause.
_PRO_DROP: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:just |finally |also |already )?(?:ordered|bought|booked|signed up|"
                r"started|stopped|quit|switched|joined|entered|registered|cancell?ed|deleted|"
                r"adopted|picked|chose|decided|moved|applied|enrolled|sold|gave up|pulled|"
                r"unsubscribed|turned down|declined|unfollowed|signed(?! up)|broke up|split up|"
                r"stepped down|pulled out|dropped out|backed out|"
                r"took|went for)\b", re.I),
     "I "),
    (re.compile(r"^not (?:renewing|extending|continuing|going back to|returning to|"
                r"re-?signing|re-?joining|re-?subscribing|re-?applying|re-?enrolling|"
                r"sticking with|staying (?:at|with|in|on))\b", re.I), "I'm "),
    (re.compile(r"^(?:deleting|putting|selling|moving|switching|quitting|starting|getting|"
                r"cancell?ing|dropping|booking|going|learning|joining|heading|cutting|"
                r"registering|signing up|pulling|ordering|applying|enrolling|adopting|"
                r"bringing|turning down|declining|stepping down|pulling out|dropping out|"
                r"unfollowing|"
                r"backing out|"
                # "leaving that discord server"; "leaving on the 14th" is a departure
                r"leaving(?! (?:on|at|for|in|from|tomorrow|tonight|today|next|this|soon|early|"
                r"late|now|after|before|around|by)\b))\b", re.I), "I'm "),
    (re.compile(r"^(?:could (?:eat|drink|watch|listen to|live on|live off)|put (?:down|in) (?:a|an"
                r"|the))\b", re.I), "I "),
    (re.compile(r"^(?:really |much )?rather\b", re.I), "I'd "),
    (re.compile(r"^(?:can'?t|cannot) (?:[\w'-]+ ){1,4}?without\b", re.I), "I "),
    (re.compile(r"^been (?:working|living|studying)\b", re.I), "I've "),
    (re.compile(rf"^(?:about to turn|turning) {AGE}\b", re.I), "I'm "),
    (re.compile(r"^(?:not (?:a (?:big |huge )?fan|into|big on|keen on|a \w+ person)|(?:a )?"
                r"(?:big |huge )?fan of|obsessed with|really into|crazy about|so into)\b",
                re.I), "I'm "),
    (re.compile(r"^(?:born|raised|born and raised)\b", re.I), "I was "),
    (re.compile(r"^(?:love|hate|can'?t stand|adore|enjoy|prefer|usually|never|often|rarely)\b",
                re.I), "I "),
]


# "usually I'll batch-cook on Sundays", "I'll normally walk": the will of a habit, no plan
_HABITUAL_WILL = re.compile(
    r"^(?:(?P<a>usually|normally|generally|typically|often|sometimes),? (?P<i>i|we)(?:'ll| will)"
    r"|(?P<i2>i|we)(?:'ll| will) (?P<a2>usually|normally|generally|typically|often|sometimes))"
    r"\b", re.IGNORECASE)


def _pro_drop(text: str) -> str:
    if _DECISION_LEAD.match(text):
        return text  # "starting tomorrow I'm going to …" drops no "I'm"
    will = _HABITUAL_WILL.match(text)
    if will:
        return f"{will.group('i') or will.group('i2')} {will.group('a') or will.group('a2')}" + (
            text[will.end():])
    for pattern, subject in _PRO_DROP:
        if pattern.match(text):
            return subject + text[0].lower() + text[1:]
    return text


_STANCE_REQUEST = re.compile(r"^give me .+\b(?:over|any day|every time|anytime|always)\b",
                             re.I)


# "quick q: roughly how many cups in a litre": a question labelled as one
_QUESTION_LABEL = re.compile(r"^(?:quick |random |silly |dumb |stupid |small |serious )?"
                             r"(?:q|qn|question)\s*:", re.IGNORECASE)


# "Crocs are hideous and I will die on this hill": a stance on what the clause before says,
# nothing by itself (it was the decision ``die_on_this_hill``: every such opinion merged)
_STANCE_ECHO = re.compile(
    rf"^(?:and |but )?{I}\s*(?:'ll|will|would)? (?:die on (?:this|that) hill|fight "
    r"(?:anyone|you|everyone|people) (?:on|over) (?:this|it|that)|defend (?:this|it|that) to "
    r"(?:the|my) death|stand by (?:this|it|that))\b[\s.!]*$", re.IGNORECASE)


_CONCESSION = re.compile(
    r",?\s*(?:whatever|no matter what|regardless of what|despite what|even if) [^,]{1,40}? "
    r"(?:says?|said|thinks?|thought|tells? me|told me)\b[^,]*$", re.IGNORECASE)


def refused(text: str) -> bool:
    """Questions, requests, wishes, hypotheticals and reported speech state nothing about
    the speaker ("give me X over Y" is a stance, not a request)."""
    if _STANCE_REQUEST.match(text):
        return False
    text = _CONCESSION.sub("", text)  # "…, whatever Karen says about it": no hearsay
    head = _head(text)
    return bool(
        text.endswith("?") or _QUESTION.match(text) or _REQUEST.match(text)
        or _STANCE_ECHO.match(text)
        or _QUESTION_LABEL.match(text)
        or _HYPOTHETICAL.search(head) or _REPORTED.search(head)
        or _QUESTION_TAIL.search(text)
    )


# A condition, guess or wish in a clause's tail ("I'm 34, if that matters", "I've decided to
# decline the promotion, as the travel would not suit my family", "im a pharmacist so sorry
# if i reply late") is not the clause's own mood: the hypothetical cues are read in its head,
# before a subordinate tail. "I'd move there, if I could" and "If I had a garden, I'd …" keep
# theirs in the head.
_SUBORDINATE_TAIL = re.compile(
    r"\s*,\s*(?:if|as|because|since|so|though|although|unless|cause|cuz|coz|which|"
    r"even (?:if|though|when))\b|"
    r"\s(?:because|since|cuz|coz|even (?:if|though|when))\s|\s(?:so )?sorry if\b|"
    r"\sso (?:if|when|whenever)\b|"
    r"\s(?:if that'?s (?:ok|okay|alright|fine|cool)|if (?:you|u) don'?t mind)\b",
    re.IGNORECASE)


def _head(text: str) -> str:
    tail = _SUBORDINATE_TAIL.search(text)
    return text[:tail.start()] if tail and tail.start() > 0 else text


# "brown rice vs quinoa, which has more protein": the question after a comma
# (", which is rubbish for presents" after a statement is a remark on it: "which is/are"
# asks only with a comparison after it)
_QUESTION_TAIL = re.compile(
    r",\s*(?:(?:which|what)(?:'s| is| are) (?:the )?(?:better|best|worse|worst|more|less|"
    r"most|least|\w+er|\w+est|right|correct|healthier|cheaper|preferable)\b|"
    r"(?:which|what|who|how|where|why|when)(?:'s)? (?:has|have|do|does|did|one|"
    r"should|would|can|could|of|gives?|makes?)\b|(?:who|how|where|why|when)(?:'s)? (?:is|are)\b)",
    re.IGNORECASE)


def _resolve(subject: str, previous: str | None) -> str | None:
    if not _PRONOUN_SUBJECT.match(subject.strip()):
        return None if _DEICTIC_SUBJECT.match(subject.strip()) else subject
    if previous is None:
        return None
    np = _leading_noun_phrase(_clean(previous))
    return _clean_subject("preference", np)[0] if np else None


# "one bite of shrimp and my throat closes up", "peanuts make my lips swell": an allergy
_SWELL = (r"(?:throat|airways?|face|lips|tongue|mouth|eyes) (?:closes? up|close up|swells? up|"
          r"swell|swells|starts? (?:to )?(?:swell|close)|puffs? up|puff up|tightens? up|"
          r"tighten up)")
_REACTION_MY = re.compile(rf"^my {_SWELL}\b", re.IGNORECASE)
_REACTION_THING = re.compile(
    rf"^(?P<x>(?!(?:it|that|this|he|she|they|you|there)\b)[\w' -]{{2,40}}?) (?:makes?|made) "
    rf"my {_SWELL}\b", re.IGNORECASE)
_ONE_BITE = re.compile(
    r"^(?:even )?(?:one|a single|a|just one|a tiny) (?:bite|sip|whiff|taste|drop|crumb|"
    r"spoonful|mouthful|nibble|lick|trace|sniff) of (?P<x>[\w' -]+?)(?:,? and\b.*)?[.!]*$",
    re.IGNORECASE)


def _plain_verb(word: str) -> str:
    """The verb of "I" for one of "someone who": "reads" -> "read", "watches" -> "watch"."""
    low = word.lower()
    if re.search(r"[^aeiou]ies$", low):
        return word[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|z|o)es$", low):
        return word[:-2]
    if low.endswith("s") and not low.endswith("ss") and low not in ("is", "has", "was", "does"):
        return word[:-1]
    return {"is": "am", "has": "have", "does": "do"}.get(low, word)


_ALLERGIC_TAIL = re.compile(
    r"^(?P<x>(?!(?:it|that|this|he|she|they|you|there)\b)[\w' -]{2,40}?) (?:makes?|made|gives?|"
    r"gave) me .{2,40}?,\s*(?:i'?m |i am )?(?:(?:super|very|really|badly|mildly|deathly|so|"
    r"seriously) )?allergic(?: to (?:them|it|those))?[.!]*$", re.IGNORECASE)


def _reaction(text: str, previous: str | None) -> Found | None:
    thing = _REACTION_THING.match(text) or _ALLERGIC_TAIL.match(text)
    if thing:
        return "fact", None, "allergy " + _clean_subject("fact", thing.group("x"))[0], {}
    if not _REACTION_MY.match(text):
        return None
    bite = _ONE_BITE.match(_clean(previous)) if previous else None
    if not bite:
        return None
    return "fact", None, "allergy " + _clean_subject("fact", bite.group("x"))[0], {}


# "I grab the mic for Total Eclipse of the Heart, it's my karaoke anthem": what the speaker
# does, then a stance on it after the comma (a favourite, not a habit)
_STANCE_TAIL = re.compile(
    r"^(?P<head>(?:i|we)\b[^,]+?),\s*(?:it'?s|that'?s|this is|they'?re|those are) (?:\w+ ){0,2}?"
    r"my (?:[\w-]+ ){0,2}?(?:anthem|jam|song|tune|go-to|favou?rite|fave|fav|guilty pleasure|"
    r"comfort food)\b", re.IGNORECASE)


# "horror movies? hard pass", "mushy peas. absolutely not.", "mango? yes please": a thing
# named alone, then a verdict on it. Cut apart, the verdict was a memory of its own ("hard
# pass", keyed ``preference:hard_pass``: every later "X? hard pass" merged into it) and the
# thing was lost; ``with_verdicts`` keeps them one clause, ``english`` reads it.
_VERDICT_DISLIKE = (
    r"(?:(?:a |an )?(?:hard|big|firm) (?:pass|no)|pass|nope+|nah+|no thanks?(?: you)?|"
    r"not for me|not my (?:thing|jam|vibe|scene|cup of tea)|absolutely not|hell no|heck no|"
    r"never again|no way|not a chance|not happening|ew+|yuck|gross|not a fan|"
    r"can'?t stand (?:it|them|em)|hate (?:it|them|em)|"
    r"(?:an? )?(?:absolute |total |pure |actual )?(?:hell|nightmare|torture)(?: for me)?)")
_VERDICT_LIKE = (
    r"(?:yes+ please|hell yes|heck yes|love (?:it|them|em)|always|every (?:single )?time|"
    r"obsessed|can'?t get enough|(?:absolute |pure )?(?:heaven|bliss)|count me in|"
    r"all day(?:,? every day)?|any day|yum+|big yes|sign me up|always a yes)")
_VERDICT_TAIL = (r"(?:[,.!~ ]+(?:for me|thanks?|thank you|lol|haha|honestly|tbh|ngl|though|"
                 r"tho|seriously|lmao|sorry|at all|any ?more|really|either|whatsoever|"
                 r"personally))*[.!~ ]*")
_VERDICT = re.compile(
    rf"^(?:{_VERDICT_DISLIKE}|{_VERDICT_LIKE}){_VERDICT_TAIL}(?:,\s+[^?]+)?$", re.I)
# "fav board game??", then its answer
_FAVORITE_ASKED = re.compile(
    r"^(?:my )?(?:absolute |all[- ]time )?(?:favou?rite|fav|fave|go-to) [\w -]{1,40}\?+$",
    re.IGNORECASE)
_VERDICT_IS_LIKE = re.compile(rf"^{_VERDICT_LIKE}\b", re.I)
# a thing named alone: no question word, no person, a few words, closed by "?" (or by "."
# when shorter still)
_TOPIC = re.compile(
    r"^(?!(?:what|which|who|whom|whose|where|when|why|how|do|does|did|is|are|was|were|can|"
    r"could|would|will|should|shall|have|has|had|any|anyone|anybody|you|u|ur|your|i|i'm|im|"
    r"we|my|our|it|that|this|so|and|but|or|ok|okay|lol|hey|hi|hello|wait|really|right|"
    r"yeah|yes|no|he|she|they|his|her|their)\b)"
    # "tired? nope", "ready? yes please": the listener's question on how the user is, echoed
    r"(?!(?:ready|tired|hungry|sleepy|bored|busy|free|done|sure|serious|awake|home|there|"
    r"back|finished|coming|in|alright|good|fine|same|again|now|today|tonight)\s*[?.]+$)"
    r"(?:(?P<q>[\w'&+-]+(?: [\w'&+-]+){0,7}\s*\?+)|[\w'&+-]+(?: [\w'&+-]+){0,3}\s*\.)$",
    re.IGNORECASE)
_TOPIC_VERDICT = re.compile(r"^(?P<topic>[^?.]+?)\s*[?.]+\s+(?P<verdict>.+)$")


def with_verdicts(parts: list[str]) -> list[str]:
    """The clauses of a message with each verdict kept on the thing named before it
    ("horror movies?", "nope.", "not for me." -> one clause)."""
    out: list[str] = []
    joinable = False
    for part in parts:
        if out and re.fullmatch(r"[?!.]+", part):
            out[-1] += part  # "voice notes longer than 30 secs??" was cut at each mark
            continue
        if out and _FAVORITE_ASKED.match(out[-1]) and not joinable and not re.match(
                _NO_ANSWER, part, re.IGNORECASE):
            out[-1] = f"{out[-1]} {part}"
            joinable = True
        elif out and (joinable or (_TOPIC.match(out[-1]) and not _VERDICT.match(out[-1]))) and (
                _VERDICT.match(part)):
            out[-1] = f"{out[-1]} {part}"
            joinable = True
        else:
            out.append(part)
            joinable = False
    return out


def _topic_verdict(text: str) -> Found | None:
    """A thing, then a verdict on it (``with_verdicts``): the user's preference."""
    match = _TOPIC_VERDICT.match(text)
    if not match or not _TOPIC.match(text[:match.start("verdict")].strip()) or not (
            _VERDICT.match(re.split(r"(?<=[.!?])\s+", match.group("verdict"))[0])):
        return None
    # "me and okra? not happening": the user faced with the thing
    topic = re.sub(r"^me (?:and|&|vs\.?|versus) ", "", match.group("topic"), flags=re.I)
    subject = _clean_subject("preference", topic)[0]
    if not subject:
        return None
    polarity = "like" if _VERDICT_IS_LIKE.match(match.group("verdict")) else "dislike"
    return "preference", polarity, subject, {}


def english(clause: str, previous: str | None = None) -> Found | None:
    """What one English clause states about the user, if anything (see the module doc)."""
    found = _english(clause, previous)
    if found is None or names_something(found[2]):
        return found
    # "I handed in my notice today" was keyed decision:today
    kind, polarity, subject, meta = found
    return kind, polarity, open_subject(kind, clause) or subject, meta


def _english(clause: str, previous: str | None) -> Found | None:
    text = _clean(clause)
    if not text:
        return None
    # "call me Ken" is the user's name, not a request
    for _, kind, polarity, pattern in _FACTS[:2]:
        if pattern.match(text):
            return kind, polarity, "name", {}
    verdict = _topic_verdict(text)
    if verdict:
        return verdict
    if previous and re.match(r"^(?:no|nope|nah),? thanks?(?: you)?\b", text, re.I) and (
            previous.rstrip().endswith("?")):
        subject = _clean_subject("preference", previous.rstrip(" ?"))[0]
        return ("preference", "dislike", subject, {}) if subject else None
    if refused(text):
        return None
    text = _pro_drop(text)
    deliberation = _DELIBERATION_LEAD.match(text)
    if deliberation:
        text = _pro_drop(text[deliberation.end():])
    time_lead = _TIME_LEAD.match(text) or _TIME_LEAD_WIDE.match(text)
    future_lead = habitual = False
    if time_lead:
        lead, rest = time_lead.group("t"), time_lead.group("rest")
        # "Next year I'm putting 10% of every paycheck aside": a plan, whatever recurs in it
        future_lead = re.match(r"(?:next|this coming)\b", lead, re.I) is not None
        habitual = not _WHEN_PAST.search(f"{lead} {' '.join(rest.split()[:3])}") and bool(
            _WHEN_LEAD.match(lead) or _SITUATION_LEAD.match(lead) and not _IRREGULAR_PAST.search(
                " ".join(rest.split()[:3])))
        habitual = habitual or bool(re.match(r"(?:most|every|each)\b", lead, re.I) and (
            _RECURRING_TIME.search(lead))) or bool(_DAY_LIST.fullmatch(lead))
        text = rest if future_lead else f"{rest} {lead}"
    decision_lead = _DECISION_LEAD.match(text) or deliberation
    if decision_lead and not deliberation:
        text = text[decision_lead.end():]
    decision_tail = _DECISION_TAIL.search(text)
    if decision_tail and decision_tail.start() > 0:
        text = text[:decision_tail.start()]

    reaction = _reaction(text, previous)
    if reaction:
        return reaction
    for name, kind, polarity, pattern in _FACTS:
        match = pattern.match(text)
        if match and not (name == "attribute" and _NOT_ATTRIBUTE.search(match.group(0))):
            if name in _SLOT_RULES and _past_slot(text, match.group(0)):
                return kind, polarity, _clean_subject("fact", text)[0], {}
            if name == "died":
                who = match.group("n") or ""
                return (kind, polarity, f"{match.group('r')} {who} died".replace("  ", " "),
                        {"died": normalize_subject(who)} if who else {})
            if name == "parted":
                thing = _clean_subject("fact", match.group("x"))[0]
                if not thing or thing.casefold() in ("soul", "time", "life", "self"):
                    continue
                said = thing if kind == "decision" else f"{thing} gone"
                return kind, polarity, said, {"parted": normalize_subject(thing)}
            if name == "died_name":
                who = match.group("n")
                if not who[0].isupper() or who.casefold() in _NOT_A_NAME:
                    continue
                # the key's form of the word ("Grandpa" is the ``grandfather`` of keys)
                return kind, polarity, f"{who} died", {"died": normalize_subject(who)}
            return kind, polarity, _fact_subject(name, match), {}
    if about_someone_else(text):  # their stance or plan: at most a fact about them
        return _late_fact(text)
    kind_of = _KIND_OF_PERSON.match(text)
    if kind_of:
        verb = kind_of.group("v")
        first, _, rest = verb.partition(" ")
        clause = f"I {_plain_verb(first)} {rest}".strip()
        if _STANCE_VERB.match(verb):
            found = _english(clause, None)
            if found and found[0] == "preference":
                return found
        polarity = "dislike" if _HABIT_NEGATIVE.search(verb) else "like"
        raw = re.sub(r"^(?:(?:don'?t|doesn'?t|do not|does not|never|always|rarely|can'?t)\s+)+",
                     "", verb, flags=re.I)
        first, _, rest = raw.partition(" ")
        subject = _clean_subject("pattern", f"{_plain_verb(first)} {rest}".strip())[0]
        if subject:
            return "pattern", polarity, subject, {}
    stance_tail = _STANCE_TAIL.match(text)
    if stance_tail:
        subject = _clean_subject("preference", _HABIT_SUBJECT.sub(
            r"\g<x>", _HABIT_ADVERBS.sub("", stance_tail.group("head"))))[0]
        if subject and not _DEICTIC_SUBJECT.match(subject):
            return "preference", "like", subject, {}
    for name, kind, polarity, pattern in _PREFERENCES:
        match = pattern.match(text)
        if not match:
            continue
        groups = match.groupdict()
        if name in ("thing", "favorite_of") and negated(text[match.end("x"):]):
            polarity = "dislike"  # "coffee is not my thing anymore", "no longer my favourite"
            groups["a"] = None  # no favourite named: the thing's stance
        if name == "favorite" or (name == "favorite_of" and groups.get("a")
                                  and len(groups["a"].split()) <= 3):
            subject = "favorite " + _clean_subject(kind, groups["a"])[0]
            return kind, polarity, subject, {"value": (groups.get("v") or groups["x"]).strip()}
        raw = groups["x"] or next((groups[n] for n in "yzw" if groups.get(n)), "")
        if name not in ("prefer", "dont_like", "hate", "grown_to", "fan", "not_fan",
                        "rather", "person", "not_person", "used_to_person", "camp_switch") and (
                _OTHER_PERSON.match(raw) or re.match(rf"(?:{I}|{IM}|i'\w+)\b", raw, re.I)):
            continue  # a stance predicate on a thing, not on a person or a clause
        prefer = name == "prefer" and re.search(r"\bprefer\b", text, re.I)
        splitter = None
        if name in ("prefer", "grown_to", "fan"):
            splitter = (_PREFER_SPLIT_TO if prefer and not re.match(r"to\s", raw, re.I)
                        else _PREFER_SPLIT)
        subject, meta = _clean_subject(kind, raw, rival_split=splitter)
        if groups.get("over"):
            meta["over"] = _clean_subject(kind, groups["over"])[0]
        if groups.get("was"):
            meta["was"] = _clean_subject(kind, groups["was"])[0]
        subject = _resolve(subject, previous) if subject else None
        if subject:
            return kind, polarity, subject, meta
    for name, kind, polarity, pattern in _DECISIONS_STRONG:
        match = pattern.match(text)
        if match and name == "no_longer_am":
            ended = _ended_identity(match.group("x"))
            if ended:
                return kind, polarity, ended, {}
            continue
        if match:
            negative = polarity == "dislike" or bool(
                re.match(r"(?:not|stop|quit|give up|cut|drop|cancel)\b", match.group("x"), re.I))
            subject, meta = _clean_subject(kind, match.group("x"), decision=True)
            subject = _strip_start_stop(subject) or ("job" if name == "bare_quit" else "")
            if subject and not _DEICTIC_SUBJECT.match(subject):
                return kind, "dislike" if negative else "like", subject, meta
    if (decision_lead or future_lead or decision_tail) and not _PAST_REPORT.match(text):
        subject, meta = _clean_subject("decision", _HABIT_SUBJECT.sub(r"\g<x>", text),
                                       decision=True)
        if subject:
            # "it's final: my gym pass won't get renewed", "no lending money anymore, that's
            # final": a no
            polarity = "dislike" if (decision_lead or decision_tail) and (
                negated(text) or re.match(r"no\b", text, re.I)) else "like"
            return "decision", polarity, _strip_start_stop(subject), meta
    habit = None if future_lead else _habit(text, habitual)
    if habit:
        return habit
    late = _late_fact(text)
    if late:
        return late
    for name, kind, polarity, pattern in _DECISIONS_LATE:
        match = pattern.match(text)
        if match:
            raw = match.group("x")
            if name == "progressive":
                raw = f"{match.group('v')} {raw}"
            subject, meta = _clean_subject(kind, raw, decision=True)
            from_to = re.match(r"^(?P<a>.+?) to (?P<b>.+)$", subject) if re.search(
                r"switched from|switching from", text, re.I) else None
            if from_to:
                subject, meta["over"] = from_to.group("b"), from_to.group("a")
            if subject and not _DEICTIC_SUBJECT.match(subject):
                return kind, polarity, subject, meta
    return None


def _ended_identity(noun: str) -> str | None:
    """The subject of an identity the user says is over: the job slot for a job ("I'm no
    longer a nurse"), "being X" for a diet, a faith, a habit ("I'm not vegan anymore": the
    key ``decision:being_vegan`` ends ``fact:vegan``, as "I quit being vegan" does), else
    None (a mood or a state: "I'm not tired anymore")."""
    noun = noun.strip().casefold()
    if _is_job(noun):
        return "job"
    if _NOT_JOBS.search(noun):
        return f"being {noun}"
    return None


def _is_job(noun: str) -> bool:
    """Whether "I'm a X" names a job: a job's own name ("a baker"), or a job's suffix on a
    noun that is not a diet, faith, habit or standing (``_NOT_JOBS``: "a vegetarian")."""
    last = noun.split()[-1] if noun.split() else noun
    return bool(_JOB_TITLE.search(last)
                or (_JOB_WORDS.search(last) and not _NOT_JOBS.search(noun)))


def _late_fact(text: str) -> Found | None:
    for name, kind, polarity, pattern in _FACTS_LATE:
        match = pattern.match(text)
        if match:
            subject = _fact_subject(name, match)
            if subject:
                return kind, polarity, subject, {}
    return None


def _strip_start_stop(subject: str) -> str:
    """A decision's subject without its start/stop verb, so that "I'm starting X" and
    "I stopped X" share a key (their polarity differs)."""
    stripped = re.sub(rf"^(?:{_STOP}|{_START}|start|stop|learn to|try to|try)\s+", "", subject,
                      flags=re.I)
    if stripped and stripped != subject:
        first, _, rest = stripped.partition(" ")
        return (base_verb(first) + " " + rest).strip()
    return subject


# "my usual lunch is a tuna sandwich", "my sunday night ritual is a long bath"
_HABIT_MY_USUAL = re.compile(
    r"^my (?:usual [\w-]+(?: [\w-]+)?|(?:[\w-]+ ){0,3}?(?:ritual|routine)) (?:is|are|=) (?P<x>.+)",
    re.IGNORECASE)
# "no caffeine past lunchtime for me", "no screens after 10": a standing rule, a habit
_HABIT_NO_AFTER = re.compile(
    r"^no (?P<x>[\w' -]{2,30}?) (?:after|past|before) (?:\w+ ?){1,3}?(?: for me)?(?:,.*)?[.!]*$",
    re.IGNORECASE)


# "can't leave the house without checking the hob", "I can't sleep without a fan on": what
# the speaker always does or needs for it
_CANT_WITHOUT = re.compile(
    r"^(?:i|we) (?:can'?t|cannot|could never|can never) (?!(?:believe|imagine|wait|think|"
    r"understand|say|tell|do (?:it|this|that))\b)(?:[\w'-]+ ){1,4}?without (?P<x>.+)",
    re.IGNORECASE)
# "my rule: no screens at the table", "house rule: shoes off at the door"
_HABIT_RULE_LEAD = re.compile(
    r"^(?:my|our|house|golden|one|family) (?:(?:golden|house|one|little|strict|personal|"
    r"iron|number one) )?rule\s*:\s*(?P<head>.+)", re.IGNORECASE)


# "most evenings you'll find me in the shed", "you'll usually find me at the allotment": where
# the speaker can be found at a recurring time, or as a rule, is a habit ("this morning you'll
# find me …" or a bare "you'll find me at the bar" is one occasion)
_FIND_ME = re.compile(
    r"^(?:(?P<t>[\w ]{3,30}?),? )?you(?:'ll| will| can) (?P<adv>(?:usually|always|normally|"
    r"generally|often|mostly|invariably) )?find (?:me|us) (?P<x>.+)", re.IGNORECASE)
_ONE_TIME_LEAD = re.compile(r"^(?:this|next|tomorrow|today|tonight|on the)\b", re.IGNORECASE)


def _found_at_a_recurring_time(text: str) -> str | None:
    """The place or doing of "… you'll find me X", when the time recurs."""
    found_me = _FIND_ME.match(text)
    if not found_me:
        return None
    time = found_me.group("t") or ""
    recurring = bool(time) and _RECURRING_TIME.search(time) and not _ONE_TIME_LEAD.match(time)
    if not (recurring or (found_me.group("adv") and not time)):
        return None
    return f"{found_me.group('x')} {time}".strip()


# "I've never been a morning person", "I've always been partially deaf", "I've never been to
# Japan": what the speaker is or has seen, not what they do
_STATE_SINCE = re.compile(
    rf"^{I}(?:'ve| have)? (?:always|never|ever|forever|long) been\b(?! (?:going|getting|"
    rf"doing|making|trying|using|eating|drinking|taking|reading|playing|walking|running|"
    rf"working)\b)", re.IGNORECASE)


def _habit(text: str, habitual: bool = False) -> Found | None:
    found_at = _found_at_a_recurring_time(text)
    if found_at:
        subject = _clean_subject("pattern", found_at)[0]
        if subject:
            return "pattern", "like", subject, {}
    without = _CANT_WITHOUT.match(text)
    if without:
        subject = _clean_subject("pattern", without.group("x"))[0]
        if subject and not _DEICTIC_SUBJECT.match(subject):
            return "pattern", "like", subject, {}
    rule = _HABIT_RULE_LEAD.match(text)
    if rule:
        head = rule.group("head")
        polarity = "dislike" if negated(head) or re.match(r"no\b", head, re.I) else "like"
        subject = _clean_subject("pattern", head)[0]
        return ("pattern", polarity, subject, {}) if subject else None
    means = _HABIT_MEANS.match(text)
    if means and _RECURRING_TIME.search(means.group("t")) and not _OTHER_PERSON.match(
            means.group("t")):
        subject = _clean_subject("pattern", f"{means.group('x')} {means.group('t')}")[0]
        if subject:
            return "pattern", "like", subject, {}
    closes = _HABIT_CLOSES.match(text)
    if closes:
        subject = _clean_subject("pattern", closes.group(0))[0]
        return ("pattern", "like", subject, {}) if subject else None
    policy = _HABIT_POLICY.match(text)
    if policy and not _OTHER_PERSON.match(policy.group("head")):
        head = policy.group("head")
        polarity = "dislike" if negated(head) or re.match(r"no\b", head, re.I) else "like"
        subject = _clean_subject("pattern", _HABIT_SUBJECT.sub(r"\g<x>", head))[0]
        return ("pattern", polarity, subject, {}) if subject else None
    usual = _HABIT_MY_USUAL.match(text)
    if usual:
        subject = _clean_subject("pattern", usual.group("x"))[0]
        return ("pattern", "like", subject, {}) if subject else None
    no_after = _HABIT_NO_AFTER.match(text)
    if no_after:
        subject = _clean_subject("pattern", no_after.group("x"))[0]
        return ("pattern", "dislike", subject, {}) if subject else None
    # "I'm cancelling my gym membership, never go anyway": the habit word is in a tail, the
    # clause is a change (``_DECISIONS_LATE``)
    head, comma, _ = text.partition(",")
    if comma and not _HABIT_CUE.search(head) and any(
            pattern.match(head) for _, _, _, pattern in _DECISIONS_LATE):
        return None
    equals = _HABIT_EQUALS.match(text)
    if equals and _RECURRING_TIME.search(equals.group("t")):
        subject = _clean_subject("pattern", equals.group("x"))[0]
        if subject:
            return "pattern", "like", subject, {}
    first = _HABIT_FIRST_THING.match(text)
    if first:
        subject = _clean_subject("pattern", first.group("x"))[0]
        return ("pattern", "like", subject, {}) if subject else None
    routine = _HABIT_ROUTINE.match(text)
    if routine and not _OTHER_PERSON.match(routine.group("x")):
        subject = _clean_subject("pattern", routine.group("x"))[0]
        return ("pattern", "like", subject, {}) if subject else None
    implicit = _HABIT_IMPLICIT.match(text)
    if implicit:
        if implicit.group("a"):
            subject = implicit.group("a")
        else:
            subject = f"{implicit.group('x')} {implicit.group('t')}"
        subject = _clean_subject("pattern", subject)[0]
        return ("pattern", "like", subject, {}) if subject else None
    match = _HABIT_SUBJECT.match(text)
    if not match or not (habitual or _HABIT_CUE.search(_head(text)) or _HABIT_ENDED.match(text)):
        return None
    if _STATE_SINCE.match(text):
        return None
    if not habitual and (_ONCE.search(text) or _PROGRESSIVE.match(text)) and not any(
            not _EVERY_THING.fullmatch(cue.group(0)) for cue in _HABIT_CUE.finditer(text)):
        # "I deleted every app yesterday", "I'm unfollowing every influencer": done once (or
        # being done now) to every one of them
        return None
    polarity = "dislike" if _HABIT_NEGATIVE.search(text) else "like"
    raw = re.sub(r"^(?:(?:don'?t|do not|never|rarely|seldom|hardly ever|try not to|make a "
                 r"point of not|no longer|not|used to)\s+)+", "",
                 _HABIT_ADVERBS.sub("", match.group("x")),
                 flags=re.I)
    subject = _clean_subject("pattern", raw)[0]
    if not subject or _DEICTIC_SUBJECT.match(subject):
        return None
    return "pattern", polarity, subject, {}


_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|our|us)\b", re.I)
_LISTENER = re.compile(r"\b(?:you|your|yours|you're|u|ur)\b", re.I)
# Someone else acting: a person or group with a verb of their own ("Tom quits", "Kenji
# always orders", "my dad hates", "the team chose", "Emi can't stand"), or a name's
# possession ("Ken's favourite food"). A copula or "has" stays open: "my wife is a dentist",
# "my sister has two kids" are facts about the user's people.
_ACTOR_VERB = (
    r"(?:(?:always|never|usually|often|just|really|also|still|finally|sometimes|totally|"
    r"absolutely) )?(?!(?:is|was|has|are|were)\b)(?:\w+(?:s|ed)|can'?t|cannot|can|could|won'?t|"
    r"will|would|should|must|doesn'?t|didn'?t|does|did|got|went|made|took|left|quit|chose|"
    r"bought|sold|ran|began|became|found|came|thought|kept|felt|grew|met|paid|sent|spent|"
    r"wrote|drove|ate|drank|saw|gave|won|lost|hate|love|like|want)\b"
)
_GROUP = r"(?:team|company|class|school|club|band|group|office|staff|government|kids|family)"
_OTHER_START = re.compile(
    rf"^(?:my|our|the|his|her|their) (?:{REL}|{_GROUP})s? {_ACTOR_VERB}", re.IGNORECASE)
# A capitalised first word that is not a dropped-subject verb or an adverb ("Booked it",
# "Finally quit") reads as a name.
_NAMED_OTHER = re.compile(
    r"^(?!(?i:just|finally|also|already|officially|honestly|really|totally|literally|today|"
    r"yesterday|recently|lately|still|now|so|well|ok|okay|actually|seriously|basically|"
    rf"never|always|usually)\b)[A-Z][a-z]+(?<!ed)(?<!ing)(?: {_ACTOR_VERB}|'s (?!name\b))")
# A name with "is" and what only a person is ("Lucas is obsessed with…", "Raj is really into
# cricket"): someone else's stance ("Pizza is life" is not a person).
_NAMED_STANCE = re.compile(
    rf"^(?!{WEEKDAY}\b)[A-Z][a-z]+ (?:is|was|'s) (?:\w+ ){{0,2}}?(?:obsessed|into|addicted|hooked|"
    rf"crazy about|mad about|nuts about|in love|a (?:\w+ )?fan|scared|afraid|terrified|"
    rf"allergic|an? (?:[\w+#-]+ ){{1,4}}?(?:person|lover|fan|addict|nerd|geek|fanatic|snob))\b")
# A message that quotes someone by a label ("Dad: jazz > rock"): their words, not the user's
_SPEAKER_LABEL = re.compile(
    rf"^(?!(?i:me|i|note|notes|update|edit|ps|fyi|btw|tldr|reminder|todo|also|fact|today|"
    rf"tonight|q|a|re|answer|plan|goal|rule|summary)\s*:)"
    rf"(?:(?i:(?:my |our )?{REL})|[A-Z][a-z]+)\s*:\s")
# A name that likes, picks or does something ("Tom prefers…", "Emi always orders…"); a
# capitalised thing with a verb ("Coffee beats tea") is a stance of the user's
_NAMED_CHOOSER = re.compile(
    r"^[A-Z][a-z]+ (?:(?:always|never|usually|often|really|also|still|just|totally|"
    r"absolutely) )?(?:prefers|likes|loves|hates|adores|enjoys|wants|picks|chooses|orders|"
    r"swears by|can'?t stand|cannot stand|goes for|drinks|eats|plays|watches|listens to|"
    r"reads|decided|chose|picked|switched|started|quit|stopped)\b")
# Someone else as the subject: a pronoun or a name's possession ("Ken's favourite")
_OTHER_SUBJECT = re.compile(
    r"^(?:(?i:he|she|they|his|her|their|people|everyone|everybody|someone|somebody|nobody)\b|"
    r"[A-Z][a-z]+'s\s)")
# A city, a council, a shop doing something ("the city is banning cars…"): not the user's plan
_GROUP_DOING = re.compile(
    r"^the (?:city|council|government|company|school|university|landlord|building|shop|store|"
    r"restaurant|bank|gym|library|museum|station|hospital|town|mayor|airline|club|team|office|"
    r"neighbou?rs?|police) (?:is|are|'s|'re|was|were) (?:\w+ )?\w+ing\b", re.IGNORECASE)
# The weather out there, said with no one in it ("bit grey and drizzly out today")
_WEATHER = re.compile(
    r"^(?!.*\b(?:i|i'm|i've|my|me|we|our|us)\b).*\b(?:grey|gray|drizzly|drizzling|rainy|raining|"
    r"pouring|sunny|cloudy|overcast|windy|foggy|snowy|snowing|humid|muggy|chilly|freezing|"
    r"scorching|boiling)\b.*\b(?:out|outside|today|tonight|this morning|again|all day|all week|"
    r"lately|rn)\b", re.IGNORECASE)
# A stance at the head of a clause the embedding stage read as a preference: what it is a
# stance on follows ("come to loathe", "find (that) I genuinely dislike", "can't bear").
_OPEN_STANCE = re.compile(
    rf"^(?:(?:find|found)(?: that)? (?:i|we)(?:'ve| have)? {ADV})?"
    rf"(?:(?:come|grown|learned|learnt|started|begun|got) to {ADV})?{ADV}"
    r"(?:loathe|hate|detest|despise|dislike|love|adore|like|enjoy|prefer|appreciate|"
    r"can'?t stand|cannot stand|can'?t bear|cannot bear|can'?t abide|treasure|relish)\s+"
    r"(?:it (?=when|if|whenever)|(?:those|these|that|this|the) )?", re.IGNORECASE)

_FIRST_PERSON_LEAD = re.compile(
    r"^(?:i|we)(?:'m|'ve|'ll|'d|'re| am| are| have| will| just| also| really)*\s+", re.I)


# A leading time expression ("most days", "On weekends", "Saturday mornings", "Afternoon
# naps"): what follows it says who the clause is about, not the time word ("most" is not
# "most people", a capitalised weekday is not a name).
_GATE_TIME_LEAD = re.compile(
    rf"^(?:(?:on|every|each|after|before|during|most|some|at|in the) )?"
    rf"(?:{WEEKDAY}s?|weekends?|weekdays?|mornings?|afternoons?|evenings?|nights?|days?|"
    rf"lunchtimes?|bedtime)(?: (?:nights?|mornings?|evenings?|afternoons?))?\b,?\s*",
    re.IGNORECASE)


# How the speaker feels right now ("ugh I'm so bored", "I'm a bit sleepy", "feeling wiped
# rn"): small talk, not a lasting fact or preference. Only the whole clause, with no
# frequency word ("I'm always tired after lunch" is a habit the stage may read).
_TRANSIENT_STATE = re.compile(
    r"^(?:(?:ugh+|uh+|man|omg|oh|ah+|lol+|lmf?ao+|haha+|ha|wow|welp|well|ok|okay|so|yeah|phew|"
    r"meh|bro|dude),?\s+)*"
    r"(?:i'm|i am|im|feeling|i feel|i'm feeling|i am feeling)\s+"
    r"(?:(?:so+|a bit|a little|a little bit|really|kinda|kind of|sort of|super|pretty|very|"
    r"totally|literally|just|too|quite|bit|getting|now|finally|still)\s+)*"
    r"(?:tired|sleepy|bored|hungry|starving|exhausted|stressed(?: out)?|full|stuffed|cold|"
    r"freezing|hot|sweaty|sore|home|back|late|excited|nervous|sad|happy|confused|lost|"
    r"annoyed|wiped(?: out)?|beat|knackered|drained|done in|shattered|worn out|pooped|zonked|"
    r"grumpy|cranky|sick|ill|fine|good|great|"
    r"ok|okay|alright|awake|up|ready|busy|free|done|crying|dying|dead|screaming|wheezing)"
    r"(?:\s+(?:today|tonight|now|rn|right now|atm|at the moment|lol|haha|again|already))*"
    r"[\s.!~]*$", re.IGNORECASE)


# "im crying, that meme is too good", "dead 💀 this video": a reaction to something shown,
# no statement about the speaker
_REACTION_LEAD = re.compile(
    r"^(?:(?:omg|lol|lmao|haha|ok|okay|bro|literally|actually)[,!.]*\s+)*(?:i'?m |im |i am )?"
    r"(?:so |literally |actually |lowkey |deadass )*(?:crying|dying|dead|screaming|wheezing|"
    r"howling|cackling|deceased|in tears|weak|losing it)(?:\s+(?:lol|lmao|haha|rn|omg))*"
    r"[,.!:]+\s*(?P<rest>.+)$", re.IGNORECASE)
_SHOWN = re.compile(
    r"^(?:that|this|the|ur|your|these|those) (?:meme|memes|video|vid|clip|tweet|post|pic|photo|"
    r"gif|joke|episode|ep|scene|ending|reel|tiktok|thread|comment|edit|trailer|caption|reply|"
    r"cat|dog|song|bit|line|story)\b", re.IGNORECASE)
_SPEAKER_START = re.compile(r"^(?:i|we|let'?s|let us)\b", re.IGNORECASE)


def about_someone_else(text: str) -> bool:
    """Whether a cleaned clause is about someone else acting or standing for something
    ("My wife prefers Vim over Emacs", "Tom always orders the ramen", "Dad: jazz > rock"):
    no rule may read it as the user's preference, decision or habit."""
    after_time = _GATE_TIME_LEAD.sub("", text, count=1) or text
    if _SPEAKER_START.match(after_time):
        return False  # "We won't use MongoDB", "Let's go with Vite"
    return bool(_OTHER_SUBJECT.match(after_time) or _OTHER_START.match(after_time)
                or _NAMED_CHOOSER.match(after_time) or _NAMED_STANCE.match(after_time)
                or _SPEAKER_LABEL.match(after_time))


# What the rules read as no statement, kept from the stage too: what the speaker will do in
# the conversation ("I'll let you know"), a body part after something happened ("my brain is
# soup")
_NO_STATEMENT = re.compile(
    rf"^(?:{I}\s*(?:'ll|will|'m going to|'m gonna|gonna)\s+{_NO_PLAN_WORDS}|"
    rf"(?:my|our) {_BODY_STATE})", re.IGNORECASE)


def open_statement(clause: str) -> str | None:
    """The cleaned clause when no rule refuses it and it is not about someone else, else
    None: what the second, embedding stage may classify. A clause without a first-person
    word counts as the speaker's when it drops its subject ("Just ordered a new bike") or its
    subject is a thing ("a good bowl of ramen fixes everything"): the stage's classifier,
    trained with small talk and reports as ``none``, decides whether it states anything.
    Who it is about is read after a leading time expression (``_GATE_TIME_LEAD``); how the
    speaker feels right now is small talk (``_TRANSIENT_STATE``)."""
    text = _clean(clause)
    if not text or refused(text) or _TRANSIENT_STATE.match(text) or _NO_STATEMENT.match(text):
        return None
    reaction = _REACTION_LEAD.match(text)
    if reaction and (_SHOWN.match(reaction.group("rest")) or not _FIRST_PERSON.search(
            reaction.group("rest"))):
        return None
    after_time = _GATE_TIME_LEAD.sub("", text, count=1) or text
    if (_OTHER_PERSON.match(after_time) or _NAMED_OTHER.match(after_time)
            or about_someone_else(text) or _GROUP_DOING.match(after_time)
            or _WEATHER.match(text)):
        return None
    if not _FIRST_PERSON.search(text) and _LISTENER.search(text):
        return None  # "Good luck with your exam!": about the listener
    return text


# "my wife and I …" is the speaker too
_OWN_PERSON = re.compile(rf"^(?:my|our) {REL}s?\b(?!,? and (?:i|me|we)\b)", re.IGNORECASE)


def asked_about(clause: str, following: str) -> bool:
    """False: an English question keeps what it asks about in its own clause ("brown rice
    vs quinoa, which has more protein": ``_QUESTION_TAIL``); ``extract_ja.asked_about`` is the
    Japanese one."""
    return False


def carried_person(clause: str, previous: str) -> str | None:
    """None: an English clause names its own subject ("my sister sold the house and moved to
    Okinawa" is one clause), so no person is carried over from the clause before
    (``extract_ja.carried_person`` is the Japanese one)."""
    return None


def open_person(clause: str) -> str | None:
    """The cleaned clause when it is about one of the user's people or pets ("my wife works
    at a hospital", "our dog is scared of thunder") and no rule refuses it, else None. The
    embedding stage may read it as a fact about them and as nothing else: what someone else
    does or likes is never the user's preference, decision or habit."""
    text = _clean(clause)
    if not text or refused(text) or not _OWN_PERSON.match(text):
        return None
    return text


# What a clause the stage classified may say before its subject: assent or a filler ("fine,
# teal curtains then"), a condition ("whenever I can choose, it's thai food"), a frame ("the
# plan is to repaint the kitchen", "first thing I do when I wake up is check my email"), a
# time that is not the subject ("Mondays and Fridays are gym days"). Keyed on them, every
# "the plan is to X" was one key: the next plan superseded the first as its new value.
_OPEN_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|right|fine|so|well|yeah|yep|yup|anyway|anyways|honestly|"
    r"ugh|welp|lol|haha|oh|hmm+|ngl|tbh|look|listen)\b[,!.:]*\s+)+", re.IGNORECASE)
_OPEN_CONDITION = re.compile(
    r"^(?:whenever|when|if|once|as soon as|after|before|every time|any ?time)\b[^,]{1,60},"
    r"\s*(?:it'?s |it is |that'?s |then )?(?P<rest>.+)$", re.IGNORECASE)
_OPEN_FROM = re.compile(
    rf"^(?:starting|from|as of|beginning|effective) (?:today|tomorrow|tonight|now|{WEEKDAY}|"
    r"next \w+|this \w+|the \w+ of \w+|\w+ \d{1,2}(?:st|nd|rd|th)?)\b,?\s*(?P<x>.+)$",
    re.IGNORECASE)
_OPEN_FRAME = re.compile(
    r"^(?:(?:the|my|our) )?(?:plan|idea|goal|aim)(?: for [\w ]{1,20}?)? (?:is|'s|=) "
    r"(?:to )?(?P<a>.+)$|"
    r"^(?:the )?first thing\b[^,]*?\b(?:is|=)\s+(?:to )?(?P<b>.+)$|"
    r"^(?:the )?first thing\b[^,]*,\s*(?P<c>.+)$", re.IGNORECASE)
_OPEN_TIME_SUBJECT = re.compile(
    rf"^(?:(?:on |every |most |some )?(?:(?:{WEEKDAY}|weekend|weekday|saturday|sunday)s? )?"
    rf"(?:{WEEKDAY}|weekend|weekday|morning|afternoon|evening|night|lunch ?break|lunchtime|"
    rf"bedtime)s?(?:,? (?:and|&) |, |/)?)+(?: (?:is|are) (?:(?:for|my|the|when) )*|, )"
    rf"(?P<x>.+)$", re.IGNORECASE)
# Words that name nothing on their own: a key made of them alone ("hard_pass", "plan",
# "made_up_mind", "it") holds no subject, and every later clause of the same words would
# merge into it or replace it.
_NAMES_NOTHING = frozenset((
    "a an the it its this that these those them they i me my mine we us our you your to of "
    "for in on at by with from up out off is are was were be been being am do does did done "
    "doing have has had will would can could should shall not no nope nah yes yeah yep ok "
    "okay alright fine so just really very too absolutely totally definitely hard pass "
    "thanks thank please way thing things stuff one mind made make making decided decide "
    "decision plan plans final happening again now then here there today tonight tomorrow "
    "hell never always ever sure course what which who how all any some more most also "
    "still even only well right good great deal idea go going gonna get got time").split())


_ONLY_A_PERSON = re.compile(rf"^(?:my|our) {REL}s?[\s.!]*$", re.IGNORECASE)


def names_something(subject: str) -> bool:
    """Whether a key subject holds a word that names something (``_NAMES_NOTHING``)."""
    return any(word not in _NAMES_NOTHING for word in re.findall(r"[\w']+", subject.casefold()))


def open_subject(kind: str, text: str) -> str:
    """A key subject for a clause the embedding stage classified, or "" when the clause
    names nothing on its own ("hard pass", "I've made up my mind": it stores nothing). Its
    lead (``_OPEN_FILLER``, ``_OPEN_CONDITION``, ``_OPEN_FRAME``, ``_OPEN_TIME_SUBJECT``) is
    cut first. A fact keys on all it says ("our youngest, Ines, starts kindergarten" ->
    ``youngest_ine_start_kindergarten``, not ``youngest``): the stage knows no slot, and two
    facts of one key are a new value replacing the old. A clause about a thing keys on its
    leading noun phrase ("pho on a rainy evening makes me happy" -> "pho on a rainy
    evening"); else on the clause without its first-person lead, cleaned like a pattern
    subject."""
    text = _OPEN_FILLER.sub("", text) or text
    for lead in (_OPEN_FROM, _OPEN_CONDITION, _OPEN_FRAME, _OPEN_TIME_SUBJECT):
        match = lead.match(text)
        if match:
            text = next(group for group in match.groups() if group)
    if _OWN_PERSON.match(text) or kind == "fact":
        if _ONLY_A_PERSON.match(text):
            return ""  # "my partner" cut off before "and I …": the person, nothing said
        said = _FIRST_PERSON_LEAD.sub("", re.sub(r"^(?:my|our)\s+", "", text, flags=re.I))
        if len(said.partition(",")[0].split()) == 1:
            said = said.replace(",", " ")  # "our youngest, Ines, starts …": one fact
        # "Tomás and I have been mates since year 3": all of it, not the name alone
        said = re.sub(r"\b(and|&) i\b", r"\1 me", said, flags=re.IGNORECASE)
        subject = _clean_subject(kind, said)[0]
        return subject if names_something(subject) else ""
    subject = _open_subject(kind, text)
    if not names_something(subject) and "," in text:
        # "ok I'm doing it, entering the half marathon in april": what it is comes after
        subject = _open_subject(kind, text.partition(",")[2].strip())
    return subject if names_something(subject) else ""


def _open_subject(kind: str, text: str) -> str:
    subject = None
    if not text:
        return ""
    if not _FIRST_PERSON_LEAD.match(text):
        phrase = _leading_noun_phrase(text)
        if phrase:
            subject = _clean_subject(kind, phrase)[0]
    if subject is None:
        rest = _FIRST_PERSON_LEAD.sub("", text)
        if kind == "preference":
            # "I've come to loathe those phone menus", "I find I genuinely dislike the smell
            # of X": the stance the stage read is not the subject (it keyed
            # come_to_loathe_..., find_i_genuinely_dislike_..., so a later contradiction met
            # no key)
            rest = _OPEN_STANCE.sub("", rest)
        subject = _clean_subject(kind, rest, decision=kind == "decision")[0]
    return subject
