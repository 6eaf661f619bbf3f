"""Constructions the rules read since round 10 (issue 14), each named for what it is, with the
statements around it that must still be found:

- English: "can't stand X" without a subject is a dislike, not a question ("can't you…" still
  asks); "I'd pick X over Y every time" is a standing choice, not a hypothetical; after a
  time lead, how it went ("today was long") is no decision; a recurring time "=" what
  happens then is a habit ("tue + thu = climbing gym"); an assistant's task (draft, proofread,
  spell…) is a request; "I'd have been X" is a counterfactual;
- Japanese: someone's favourite (「田中さんのお気に入りは…」), a neighbour named as such
  (お向かいさん) and a person word whose particle chat dropped before a frequency word
  (「隣の人いつも…」) are someone else's; words quoted and then said (「『…』って言って」),
  news (「…ってニュースで見た」) and hearsay ends followed by a remark's particles
  (「…ってよく言うよね」) are reported speech; a wish ending in 〜たらなあ; after a time word,
  an adjective's or the copula's past (「今週しんどかった」) is a report, not a plan."""

import pytest

from omoide.governance import extract_en, extract_ja
from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str | None]]:
    return [(c.kind, c.polarity) for c in extract(text)[0]]


@pytest.mark.parametrize("text,want", [
    ("can't stand cilantro in anything", ("preference", "dislike")),
    ("can\u2019t stand waiting in queues", ("preference", "dislike")),
    ("I'd pick trains over planes every time", ("preference", "like")),
    ("id choose a quiet pub over a club any day", ("preference", "like")),
    ("we'd take the mountains over the beach", ("preference", "like")),
])
def test_english_stances_the_gate_used_to_refuse(text, want):
    assert want in found(text)


@pytest.mark.parametrize("text", [
    "can't you just pick one", "I'd buy a house in Kyoto", "I'd love to see that",
    "today was sooo long", "this week has been a lot", "yesterday felt endless",
])
def test_english_questions_hypotheticals_and_reports_stay_empty(text):
    assert found(text) == []


@pytest.mark.parametrize("text", ["can't you just pick one", "I'd buy a house in Kyoto"])
def test_english_questions_and_hypotheticals_never_reach_the_stage(text):
    assert extract_en.open_statement(text) is None


@pytest.mark.parametrize("text,want", [
    ("tomorrow I start my new job", ("decision", "like")),
    ("starting monday I'm cycling to work", ("decision", "like")),
])
def test_english_plans_after_a_time_lead_are_still_decisions(text, want):
    assert want in found(text)


@pytest.mark.parametrize("text", [
    "佐藤さんのお気に入りの店は駅前のラーメン屋",  # someone's favourite
    "お隣さんは毎晩ピアノ弾いてる",
    "隣の人毎朝ラジオ体操してる",  # the particle dropped before a frequency word
    "近所の人よく庭でバーベキューしてる",
])
def test_japanese_other_people_give_no_preference_or_habit_of_the_user(text):
    assert not {kind for kind, _ in found(text)} & {"preference", "pattern", "decision"}


@pytest.mark.parametrize("text", [
    "母が『もう寝る』って言って部屋に戻った",  # quoted, then said
    "『急がば回れ』ってよく言うよね",
    "来月から電気代上がるってネットで見た",  # news
    "ガソリン高くなるってテレビで聞いた",
    "毎日昼まで寝てられたらなあ",  # a wish
    "今週ほんと忙しかったね",  # how it went, after a time word
    "今日は雨だった",
])
def test_japanese_reports_and_wishes_are_refused(text):
    assert found(text) == []


@pytest.mark.parametrize("text", [
    "母が『もう寝る』って言って部屋に戻った", "『急がば回れ』ってよく言うよね",
    "来月から電気代上がるってネットで見た", "毎日昼まで寝てられたらなあ",
])
def test_japanese_reports_and_wishes_never_reach_the_stage(text):
    assert extract_ja.open_statement(text) is None


@pytest.mark.parametrize("text,kind", [
    ("明日からジム通う", "decision"), ("今日からダイエット始めた", "decision"),
    ("毎朝コーヒー飲む", "pattern"), ("辛いものが好きなんだよね", "preference"),
    ("来月から自炊する", "decision"),
    ("っていうか、ラーメン好き", "preference"),  # a filler, not someone's words
])
def test_japanese_statements_around_them_are_still_found(text, kind):
    assert kind in {k for k, _ in found(text)}


@pytest.mark.parametrize("text", [
    "tue + thu = climbing gym after work", "weeknights = leftovers and a podcast",
    "every other saturday -> brunch with my aunt", "lunch breaks = a walk round the block",
])
def test_english_a_recurring_time_equals_an_activity_is_a_habit(text):
    assert ("pattern", "like") in found(text)


@pytest.mark.parametrize("text", ["2 + 2 = 4", "coffee = life", "cats > dogs = facts"])
def test_english_an_equation_without_a_recurring_time_is_no_habit(text):
    assert "pattern" not in {k for k, _ in found(text)}


@pytest.mark.parametrize("text", [
    "proofread my cover letter please", "spell 'accommodate' for me",
    "brainstorm names for a bakery", "in a parallel universe I'd have been a chef",
])
def test_english_requests_and_counterfactuals_never_reach_the_stage(text):
    assert found(text) == []
    assert extract_en.open_statement(text) is None


def test_english_a_past_tense_of_those_verbs_still_reaches_the_stage():
    assert extract_en.open_statement("drafted my resignation letter today") is not None
