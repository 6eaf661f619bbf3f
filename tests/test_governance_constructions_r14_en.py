"""English constructions the rules read since round 14, found on the training splits'
out-of-fold errors (``bench/governance_extract_errors.py``; blind12 and blind13 are training
splits from this round on), each with the statements around it that must stay as they were:

- preferences: "my absolute / all-time favourite X is Y" is a favourite, not an attribute;
  "X makes my skin crawl / sets my teeth on edge" and "X = pure rage" are dislikes, "X =
  bliss" a like; "I've never been able to get into X" is a dislike; "count me out of
  anything involving X" is a dislike of X; "a sucker for anything with X" is a stance on X.
- decisions: "my resignation's in" leaves the job; "my car is up for sale" / "the flat's on
  the market" sells it; "X are bought" is done; "pulled the plug on X" stops X; "come May I
  …" and "this is the year I …" lead a plan; "the spare room's getting a coat of paint on
  Saturday" (the contracted 's).
- habits: "usually I'll …" / "I'll normally …" is a habit's will, not a plan; "most lunch
  breaks I …" and a weekday list "mon wed fri I …" lead a habit; "I can't V without X" is
  a habit; "my rule: …" / "house rule: …" is a standing rule.
- facts: "I'm 34, born in…" (an age before a comma), "I'm 6'1" (feet and inches), "I rent
  a 2-bed flat …" and "home is a little village …" (home), "I'm doing a part-time masters"
  (studies), "hubby works nights" (a person named without "my").
- no statement: "maybe" before a frequency is an estimate, not a maybe; "say I won…" is a
  supposition; "word is…" is a rumour; "quick q: …" labels a question; "my knee's sore
  today" is how it is today; ", which is great" after a statement is a remark, not a
  question.
"""

import pytest

from omoide.governance import extract_en
from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str | None, str]]:
    return [(c.kind, c.polarity, c.key) for c in extract(text)[0]]


def kinds(text: str) -> set[str]:
    return {c.kind for c in extract(text)[0]}


@pytest.mark.parametrize("text,kind", [
    # preferences
    ("my absolute favourite dessert is sticky toffee pudding", "preference"),
    ("my all-time favourite band is Blur, no question", "preference"),
    ("nails on a chalkboard make my skin crawl", "preference"),
    ("squeaky polystyrene sets my teeth on edge", "preference"),
    ("loud chewing on the train = pure rage", "preference"),
    ("a hot shower after a cold run = bliss", "preference"),
    ("I've never been able to get into opera", "preference"),
    ("I just can't get into true crime podcasts", "preference"),
    ("count me out of anything involving roller coasters", "preference"),
    ("I'm a sucker for anything with salted caramel", "preference"),
    # decisions
    ("my resignation's in, two more weeks and I'm free", "decision"),
    ("my notice is officially in", "decision"),
    ("my motorbike is up for sale", "decision"),
    ("our house is on the market now", "decision"),
    ("festival passes are bought, we're going", "decision"),
    ("pulled the plug on my gym membership this week", "decision"),
    ("come september I'm starting a pottery class", "decision"),
    ("this is the year I run a half marathon", "decision"),
    ("the kitchen's getting a fresh coat of paint next weekend", "decision"),
    # habits
    ("usually I'll cook a big pot of chilli so lunches are sorted", "pattern"),
    ("I'll normally grab a bagel on the way to work", "pattern"),
    ("most lunch breaks I read in the park", "pattern"),
    ("tues and thurs I do spin class at 6", "pattern"),
    ("mon wed fri we swim before work", "pattern"),
    ("I can't fall asleep without the fan on", "pattern"),
    ("can't leave the house without checking my keys twice", "pattern"),
    ("my rule: no email after dinner", "pattern"),
    ("house rule: shoes off at the door", "pattern"),
    ("I hardly ever eat meat, maybe twice a month", "pattern"),
    # facts
    ("I'm 41, born in a leap year", "fact"),
    ("I'm 6'1 so hotel beds are always too short", "fact"),
    ("I rent a 2-bed flat above a chippy, it's always warm", "fact"),
    ("we're renting a tiny cottage by the sea", "fact"),
    ("home is a little village outside Galway", "fact"),
    ("home's a small town near the border", "fact"),
    ("I'm doing a part-time masters in data science", "fact"),
    ("currently in my final year of a nursing degree", "fact"),
    ("hubby works nights at the hospital", "fact"),
    ("wife runs a flower shop in town", "fact"),
    ("I'm 29, which is young for my job", "fact"),
])
def test_english_constructions_are_read(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize("text,key", [
    ("my absolute favourite dessert is sticky toffee pudding", "preference:favorite_dessert"),
    ("I'm a sucker for anything with salted caramel", "preference:salted_caramel"),
    ("count me out of anything involving roller coasters", "preference:roller_coaster"),
    ("I'm 6'1 so hotel beds are always too short", "fact:height"),
    ("I rent a 2-bed flat above a chippy, it's always warm", "fact:home"),
    ("home is a little village outside Galway", "fact:home"),
    ("my notice is officially in", "decision:job"),
    ("I'm 41, born in a leap year", "fact:age"),
])
def test_english_their_keys(text, key):
    assert key in {k for _, _, k in found(text)}


@pytest.mark.parametrize("text,polarity", [
    ("nails on a chalkboard make my skin crawl", "dislike"),
    ("loud chewing on the train = pure rage", "dislike"),
    ("a hot shower after a cold run = bliss", "like"),
    ("my resignation's in, two more weeks and I'm free", "dislike"),
    ("my motorbike is up for sale", "dislike"),
    ("my rule: no email after dinner", "dislike"),
    ("I hardly ever eat meat, maybe twice a month", "dislike"),
])
def test_english_their_polarity(text, polarity):
    assert polarity in {p for _, p, _ in found(text)}


@pytest.mark.parametrize("text", [
    # questions, suppositions, rumours, someone else
    "say I won the lottery, I reckon I'd buy a farm",
    "suppose we moved to Spain, I'd learn the language",
    "word is the couple upstairs are moving to Leeds",
    "rumour has it my manager is quitting",
    "quick q: how long do you boil an egg",
    "quick question: roughly how many grams in a cup",
    "maybe once I've saved up I'll buy a van",
    "does the sound of chewing make your skin crawl?",
    "my brother can't get into jazz",
    "the house next door is up for sale",
    "I can't believe he left without saying goodbye",
    "I can't do this without you",
    "my knee's a bit sore today",
    "my back is killing me right now",
    "home is where the heart is",
    "home is a mess right now",
    "coffee or tea, which is better for focus",
    "is the flat still on the market?",
])
def test_english_near_misses_state_nothing_of_the_speakers_own(text):
    assert not kinds(text) & {"preference", "decision", "pattern"}
    assert "fact" not in kinds(text) or text.startswith(("my brother", "rumour"))


@pytest.mark.parametrize("text", [
    "say I won the lottery, I reckon I'd buy a farm",
    "word is the couple upstairs are moving to Leeds",
    "quick q: roughly how many grams in a cup",
    "coffee or tea, which is better for focus",
])
def test_english_refusals_never_reach_the_stage(text):
    assert all(extract_en.open_statement(part) is None
               for part in __import__("omoide.governance.extract",
                                      fromlist=["clauses"]).clauses(text))


@pytest.mark.parametrize("text", [
    "this is the year I ran my first marathon, what a ride",
    "my brother's getting a haircut tomorrow",
])
def test_english_no_plan_of_the_speakers_in_a_past_or_someone_elses_change(text):
    assert "decision" not in kinds(text)


@pytest.mark.parametrize("text", [
    "I unsubscribed from every mailing list this morning",
    "I deleted every game off my laptop yesterday",
    "we returned every gift last night",
])
def test_every_one_of_some_things_done_once_is_no_habit(text):
    """"every newsletter" is every one of them, not a recurring time: with a time that
    happened once the clause reports an event ("I walk every morning" stays a habit)."""
    assert "pattern" not in kinds(text)


@pytest.mark.parametrize("text", [
    "I walk every morning",
    "I read every review before I buy anything",
    "I cycle to work every day, but today I took the bus",
])
def test_every_recurring_time_stays_a_habit(text):
    assert "pattern" in kinds(text)
