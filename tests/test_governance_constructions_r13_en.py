"""English constructions the rules read since round 13 (issue 14), found on the training
splits' out-of-fold errors (``bench/governance_extract_errors.py``; blind10 and blind11 are
training splits from this round on), each with the statements around it that must stay as
they were:

- preferences: "X drives me up the wall / round the bend / nuts", "X makes me itch / sneeze",
  "X gives me the creeps" are dislikes; "I always want to …" is a standing want, not a
  habit; "I …, it's my jam / anthem / go-to" is a favourite.
- decisions: "it's final: …" and "…, that's final" lead or close a decision; "after much back
  and forth, …" is a deliberation ended; "X is over for me / dead to me" gives X up; "X it
  is" picks X; "from here on" is "from now on", also for a thing ("car stays parked from here
  on"); "I'm keeping my X" keeps it; "my X won't get renewed" and "X gets deleted / a coat of
  paint" with a time ahead are what the speaker will do to a thing of theirs.
- habits: "I'm one of those people / the kind of person who V"; "every other / second
  <weekday> is X"; "<recurring time> (for me) means X"; "X closes at nine for me"; "…, strict
  policy of mine / that's my rule"; a leading situation in the plural ("on long drives I …",
  "before exams I …") recurs.
- facts: "turning thirty-five", "mum turns 60", ages in words for the user's people; "I …
  on the graveyard shift", "I pick up shifts at a bar" are jobs; "my dad / our family runs a
  <business>"; half- and step-siblings are the user's people; "X gives me hives", "one bite of
  X and my throat closes up", "X makes me sneeze…, allergic" are allergies.
- no statement: a reaction to something shown ("I'm dying, this clip is gold"), "lmao I'm
  wheezing", "got any … suggestions" (a question without its mark).
"""

import pytest

from omoide.governance import extract_en
from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str | None]]:
    return [(c.kind, c.polarity) for c in extract(text)[0]]


def kinds(text: str) -> set[str]:
    return {c.kind for c in extract(text)[0]}


@pytest.mark.parametrize("text,kind", [
    # preferences
    ("open-plan offices drive me round the bend", "preference"),
    ("slow walkers drive me up the wall", "preference"),
    ("mohair scarves make me itch so I avoid them", "preference"),
    ("porcelain dolls give me the creeps", "preference"),
    ("on buses I always want the window seat", "preference"),
    ("I always want to sit near the exit at gigs", "preference"),
    ("I belt out Dancing Queen at every wedding, it's my anthem", "preference"),
    ("I order the green curry every time, it's my go-to", "preference"),
    # decisions
    ("it's final: the old sofa isn't coming with us", "decision"),
    ("no lending my car out anymore, that's final", "decision"),
    ("after weeks of deliberation I'm taking the Lisbon job", "decision"),
    ("energy drinks are over for me", "decision"),
    ("dating apps are dead to me", "decision"),
    ("pho it is for dinner", "decision"),
    ("the bike stays in the shed from here on", "decision"),
    ("I'm keeping the old Volvo", "decision"),
    ("my streaming subscription won't get renewed", "decision"),
    ("the bedroom gets repainted next month", "decision"),
    ("instagram gets deleted tonight", "decision"),
    # habits
    ("I'm the kind of person who arrives twenty minutes early", "pattern"),
    ("I'm the sort of person who reads the manual first", "pattern"),
    ("every other sunday is brunch with the girls", "pattern"),
    ("friday night for me means takeaway and a film", "pattern"),
    ("sunday means a long walk with the dog", "pattern"),
    ("the laptop shuts at seven for me", "pattern"),
    ("phone stays in the hallway during dinner, strict rule of mine", "pattern"),
    ("no phones at the dinner table, house rule of ours", "pattern"),
    ("on long flights I wear compression socks", "pattern"),
    ("before exams I clean my whole flat", "pattern"),
    # facts
    ("turning forty-two next month", "fact"),
    ("dad turns seventy in august", "fact"),
    ("my son turns nine on friday", "fact"),
    ("I stack shelves on the night shift at a supermarket", "fact"),
    ("I pick up shifts at a cocktail bar downtown", "fact"),
    ("my aunt runs a bakery in Cork", "fact"),
    ("our family owns a small vineyard", "fact"),
    ("my younger half-sister lives in Perth", "fact"),
    ("penicillin gives me a rash", "fact"),
    ("a single bite of peanut and my lips swell up", "fact"),
    ("horses make me sneeze nonstop, allergic", "fact"),
])
def test_english_constructions_are_read(text, kind):
    assert kind in kinds(text)


@pytest.mark.parametrize("text,polarity", [
    ("open-plan offices drive me round the bend", "dislike"),
    ("energy drinks are over for me", "dislike"),
    ("no lending my car out anymore, that's final", "dislike"),
    ("my streaming subscription won't get renewed", "dislike"),
    ("it's final: my gym membership won't get renewed", "dislike"),
    ("no phones at the dinner table, house rule of ours", "dislike"),
    ("instagram gets deleted tonight", "dislike"),
    ("pho it is for dinner", "like"),
])
def test_english_their_polarity(text, polarity):
    assert polarity in {p for _, p in found(text)}


@pytest.mark.parametrize("text,kind", [
    ("I'm one of those people who can't stand small talk", "preference"),
    ("I'm the type who loves a good spreadsheet", "preference"),
])
def test_english_a_kind_of_person_with_a_stance_is_a_preference(text, kind):
    assert kinds(text) == {kind}


@pytest.mark.parametrize("text", [
    "my brother drives me up the wall", "my boss's rule is no phones",
    "my sister is one of those people who reads the ending first", "my boss runs a tight ship",
    "I'm keeping an eye on it", "I'm keeping my options open", "so it is",
    "on long drives I kept snacks in the car", "on this trip I met a guy", "it gives me hives",
    "it is what it is", "it's as good as it is",
])
def test_english_near_misses_state_nothing_of_the_speakers_own(text):
    assert not kinds(text) & {"preference", "decision", "pattern"}
    assert "fact" not in kinds(text) or text.startswith(("my sister", "my boss's"))


@pytest.mark.parametrize("text", [
    "the library closes at nine", "the pharmacy closes at six for me",
    "every monday is a nightmare", "success for me means freedom", "the party is over",
    "I'm keeping busy", "the trains get cancelled tomorrow", "my contract won't be renewed",
    "my brother runs a marathon every year", "I did a shift at the food bank yesterday",
    "my dad turns the heating off at ten", "does it drive you up the wall?",
])
def test_english_near_misses_give_no_pattern_candidate(text):
    assert found(text) == []


@pytest.mark.parametrize("text", [
    "im dying, this clip is gold", "I'm crying, that meme is too good",
    "screaming lol, the ending of that episode", "lmao I'm wheezing",
    "got any podcast suggestions for a long drive",
])
def test_english_reactions_and_bare_questions_never_reach_the_stage(text):
    assert found(text) == []
    assert extract_en.open_statement(text) is None


def test_english_a_reaction_lead_before_the_speakers_own_words_stays_open():
    assert extract_en.open_statement("I'm dead, I go to the gym every morning") is not None


@pytest.mark.parametrize("text", [
    "my grandma turned 88 last month", "my son turns seven next week",
])
def test_english_an_age_with_a_time_after_it_stays_a_fact(text):
    assert kinds(text) == {"fact"}
