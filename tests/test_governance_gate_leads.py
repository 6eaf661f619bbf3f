"""The English open-statement gate reads who a clause is about after a leading time
expression ("most days I skip breakfast" is the speaker's, not "most people"; "Saturday
mornings …" is not a person called Saturday), and keeps how the speaker feels right now
("ugh I'm so bored") away from the learned stage."""

import pytest

from omoide.governance import extract_en
from omoide.governance.extract import extract


@pytest.mark.parametrize("text", [
    "most days I skip breakfast", "On weekends I sleep until noon",
    "Saturday mornings are for cleaning the apartment",
    "Afternoon naps are a daily thing for me", "Sundays mean pancakes in my house",
])
def test_a_leading_time_expression_is_not_someone_else(text):
    assert extract_en.open_statement(text) == text


@pytest.mark.parametrize("text", [
    "most people love it", "On Sundays my dad cooks", "every morning she runs",
    "Mondays Tom goes fishing", "Kenji always orders the spicy curry",
])
def test_someone_else_after_a_time_expression_is_still_refused(text):
    assert extract_en.open_statement(text) is None


@pytest.mark.parametrize("text", [
    "ugh I'm so bored", "I'm a bit sleepy", "im so hungry rn", "I'm finally home",
    "feeling wiped out today", "I'm kinda stressed right now lol",
])
def test_how_the_speaker_feels_right_now_never_reaches_the_stage(text):
    assert extract_en.open_statement(text) is None

    class Accepting:
        via = "learned"

        def classify(self, clauses):
            return [("preference", "like")] * len(clauses)

    assert extract([text], classifier=Accepting())[0] == []


@pytest.mark.parametrize("text", [
    "I'm always tired after lunch", "I'm allergic to cats", "I'm a night owl",
    "I'm done with twitter", "I'm back in Osaka for good", "I'm vegetarian",
])
def test_lasting_states_and_changes_still_reach_the_stage(text):
    assert extract_en.open_statement(text)
