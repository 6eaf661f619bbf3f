"""English constructions read since round 14's second part, found on the out-of-fold errors
of train14a (older adults' reflective notes) and train14b (students' chat), each with the
statements around it that must stay as they were:

- no statement: "be honest, should I …" / "real talk, do I …" is still a question after the
  address to the listener; "I'm done in / shattered / worn out" is how the speaker feels now.
- preferences: "X is my idea of heaven / torture" is a stance on X (the speaker's own idea,
  not a habit from "X = …"); "there's nothing I hate / love more than X"; "I've never had
  much patience for X" / "I don't have much time for X" is a dislike; "I'll admit (that) …"
  leads a statement, no plan.
- decisions: "that was the last X I'll ever buy" is done with X.
- habits: "most evenings you'll find me in the shed" (a recurring time, or "you'll usually
  find me …") is where the speaker is as a rule.
- facts: "I work nights / weekends as a X" is a job.
"""

import pytest

from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str | None, str]]:
    return [(c.kind, c.polarity, c.key) for c in extract(text)[0]]


def kinds(text: str) -> set[str]:
    return {c.kind for c in extract(text)[0]}


@pytest.mark.parametrize("text,kind", [
    # preferences
    ("a long soak in the bath with a crime novel is my idea of heaven", "preference"),
    ("hiking in the pouring rain = my idea of torture", "preference"),
    ("crowded shopping centres on a Saturday are my idea of hell", "preference"),
    ("there's nothing I hate more than a squeaky door", "preference"),
    ("there is no smell in the world I love more than cut grass", "preference"),
    ("I've never had much patience for crossword puzzles", "preference"),
    ("I don't have much time for reality television", "preference"),
    # decisions
    ("that was the last scratch card I'll ever buy", "decision"),
    ("this is the last marathon we'll ever run, my knees are done", "decision"),
    # habits
    ("most evenings you'll find me in the garage fixing old radios", "pattern"),
    ("on Saturdays you'll usually find me at the farmers market", "pattern"),
    ("you'll always find us at the allotment after church", "pattern"),
    # facts
    ("I work nights as a security guard at the docks", "fact"),
    ("I work weekends as a lifeguard at the leisure centre", "fact"),
])
def test_english_constructions_are_read(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize("text,key", [
    ("I work nights as a security guard at the docks", "fact:job"),
    ("there's nothing I hate more than a squeaky door", "preference:squeaky_door"),
    ("I've never had much patience for crossword puzzles", "preference:crossword_puzzle"),
])
def test_english_their_keys(text, key):
    assert key in {k for _, _, k in found(text)}


@pytest.mark.parametrize("text,polarity", [
    ("a long soak in the bath with a crime novel is my idea of heaven", "like"),
    ("hiking in the pouring rain = my idea of torture", "dislike"),
    ("there's nothing I hate more than a squeaky door", "dislike"),
    ("there is no smell in the world I love more than cut grass", "like"),
    ("I don't have much time for reality television", "dislike"),
    ("that was the last scratch card I'll ever buy", "dislike"),
])
def test_english_their_polarity(text, polarity):
    assert polarity in {p for _, p, _ in found(text)}


@pytest.mark.parametrize("text", [
    # questions behind an address, someone else's idea or stance, one occasion, right now
    "be honest, should I sell the caravan or keep it",
    "real talk, do I text her back tonight",
    "be honest, is my cover letter any good",
    "I'm done in.",
    "honestly I'm absolutely shattered",
    "my dad's idea of heaven is eighteen holes of golf",
    "is that your idea of fun?",
    "there's nothing he loves more than a football match",
    "that was the last time I'll ever see him, I suppose",
    "this morning you'll find me at the dentist",
    "you'll find me at the bar if you need me",
    "where will you find me on Sunday?",
    "I'll admit I was wrong about that film",
])
def test_english_near_misses_state_nothing_of_the_speakers_own(text):
    assert not kinds(text) & {"preference", "decision", "pattern"}


@pytest.mark.parametrize("text", [
    "I'll admit that knitting has become a real passion of mine",
    "hiking in the pouring rain = my idea of torture",
])
def test_english_a_stance_is_no_plan_or_habit(text):
    assert not kinds(text) & {"decision", "pattern"}
