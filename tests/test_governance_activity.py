"""What a habit or plan is the doing of (governance/activity.py): the activity an ending
ends, told from keys written by different rules."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.governance.activity import activity, ends, moved, times

SAME = [
    ("pattern:drink_coffee_every_day", "decision:coffee"),
    ("pattern:go_to_gym_every_monday", "decision:going_to_gym"),
    ("pattern:smoke_pack_day", "decision:smoke"),
    ("decision:learn_spanish", "decision:spanish"),
    ("pattern:毎週月曜_ジム_行", "decision:ジム_行"),
    ("pattern:朝_コーヒー_飲", "decision:コーヒー"),
    ("decision:スペイン語_勉強", "decision:スペイン語"),
]
OTHER = [
    ("pattern:drink_coffee_every_day", "decision:coffee_cake"),
    ("pattern:run_every_morning", "decision:sugar"),
    ("pattern:朝_走", "decision:ジム"),
    ("decision:smoke", "decision:coffee"),
]


@pytest.mark.parametrize("a, b", SAME)
def test_one_activity_under_two_keys(a, b):
    assert activity(a) == activity(b) != frozenset()


@pytest.mark.parametrize("a, b", OTHER)
def test_other_activities(a, b):
    assert activity(a) != activity(b)


@pytest.mark.parametrize("key", ["decision:drink", "pattern:go_every_day", "decision:行"])
def test_a_light_verb_alone_names_no_activity(key):
    assert activity(key) == frozenset()  # "I stopped drinking" ends no "drink coffee"


WHEN = ["every", "day", "morning", "mornings", "weekend", "monday", "last", "year", "毎朝",
        "週末", "月曜", "毎週月曜日"]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([a for a, _ in SAME]), st.lists(st.sampled_from(WHEN), max_size=3),
       st.integers(min_value=0, max_value=4))
def test_when_words_never_change_the_activity(key, when, at):
    kind, _, subject = key.partition(":")
    words = subject.split("_")
    at = min(at, len(words))
    longer = f"{kind}:" + "_".join(words[:at] + when + words[at:])
    assert activity(longer) == activity(key)


@pytest.mark.parametrize("text, key, of, ended", [
    ("I quit coffee", "decision:coffee", "pattern:drink_coffee_every_day", True),
    ("I don't go to the gym anymore", "pattern:go_to_gym", "pattern:go_to_gym_every_monday",
     True),
    ("I don't go to the gym on Mondays anymore", "pattern:go_to_gym_on_mondays",
     "pattern:go_to_gym_every_monday", True),  # the same time: all of it
    ("I no longer play tennis", "pattern:play_tennis", "pattern:play_tennis_on_weekend", True),
    ("ジムに行くのをやめた", "decision:ジム_行", "pattern:毎週月曜_ジム_行", True),
    ("もうテニスはしていない", "pattern:テニス", "pattern:週末_テニス", True),
    ("I don't run on weekends anymore", "pattern:run_on_weekend", "pattern:run_every_morning",
     False),  # a part of it
    ("毎朝はもう走らない", "pattern:毎朝_走", "pattern:夜_走", False),
    ("I drink coffee every day", "pattern:drink_coffee_every_day", "decision:coffee", False),
])
def test_what_ends_an_activity_as_a_whole(text, key, of, ended):
    assert ends(text, key, of) is ended


@pytest.mark.parametrize("key, when", [
    ("pattern:run_every_morning", {"morning"}), ("pattern:go_to_gym_on_fridays", {"friday"}),
    ("pattern:朝_ジョギング", {"朝"}), ("pattern:毎週月曜_ジム_行", {"毎週月曜"}),
    ("decision:coffee", set()), ("pattern:smoke_pack_day", set()),
])
def test_the_recurring_times_of_a_key(key, when):
    assert times(key) == when


@pytest.mark.parametrize("text, changed", [
    ("These days I run in the evening instead", True), ("I go to the gym on Fridays now", True),
    ("最近は夜にジョギングしている", True), ("今は金曜にジムに行っています", True),
    ("I run in the evening too now", False), ("I also run on weekends now", False),
    ("最近は夜もジョギングしている", False), ("I run in the evening", False),
])
def test_a_habit_said_as_changed(text, changed):
    assert moved(text) is changed
