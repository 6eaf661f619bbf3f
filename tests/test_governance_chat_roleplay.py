"""Character chat (issue 14, round 16): roleplay actions state nothing about the user, an
out-of-character note is the user speaking plainly, and the chatter around a statement in a
long message stores nothing.

Users of SillyTavern and RisuAI write what their persona does between asterisks ("*hands you
a cup of tea*", 「＊剣を抜く＊」) and talk to the other player in an OOC note ("(OOC: I love
slow-burn plots)", 「（中の人：社会人です）」, 「【PL】…」). A roleplay character's profile
(「海が大嫌いって設定です」) is the story's.
"""

import pytest

from omoide.governance.extract import clauses, extract, without_roleplay
from tests.test_governance_tails_and_asides import shape


@pytest.mark.parametrize(("text", "expected"), [
    ("*hands you a cup of tea* (OOC: I love slow-burn plots)", ["I love slow-burn plots"]),
    ("*sighs* I hate Mondays", ["I hate Mondays"]),
    ("I love you *smiles*", ["I love you"]),
    ("*剣を抜いて君の前に立つ*", []),
    ("＊紅茶を差し出す＊ ちなみに私はミルクティー派です", ["ちなみに私はミルクティー派です"]),
    ("（中の人：24歳の社会人です）", ["24歳の社会人です"]),
    ("【PL】明日から出張です", ["明日から出張です"]),
    ("OOC: I love slow-burn plots", ["I love slow-burn plots"]),
    # emphasis is no action: its words stay
    ("I *really* love tea", ["I really love tea"]),
    ("*Dune* is the best book", ["Dune is the best book"]),
    ("I *always* do that", ["I always do that"]),
    # markdown bold is emphasis in either language
    ("私は**猫**が好き", ["私は猫が好き"]),
    ("I **love** cats *sighs*", ["I love cats"]),
])
def test_actions_go_and_notes_stay(text, expected):
    assert clauses(text) == expected


def test_a_message_without_markup_is_untouched():
    text = "I cooked pl... whatever, ooh cool"
    assert without_roleplay(text) is text


@pytest.mark.parametrize(("text", "expected"), [
    ("*leans on the counter* honestly rainy evenings are my favorite",
     [("preference", "preference:rainy_evening")]),
    ("(OOC: fyi I really love slow-burn plots, so feel free to drag the tension out)",
     [("preference", "preference:slow-burn_plot")]),
    ("*stretches* starting tomorrow I'm going to run a 5k every weekend, hold me to it",
     [("decision", "decision:run_5k_every_weekend")]),
    ("（中の人：24歳の社会人です）", [("fact", "fact:仕事")]),
    ("I'm a nurse irl so sorry if I disappear mid-shift", [("fact", "fact:job")]),
])
def test_the_user_in_a_roleplay_message(text, expected):
    assert shape(text) == expected


@pytest.mark.parametrize("text", [
    "（うちの子は港町育ちで、海が大嫌いって設定です）",
    "*draws my sword and charges at the dragon*",
    "My brain is soup.",
    "My jaw is still on the floor.",
    "Got stung by a wasp at the picnic and my hand's swollen like a balloon.",
    "I'll definitely forget otherwise.",
    "I'll let you know when it's okay to share.",
    "Bought a ridiculously fancy sandwich to celebrate.",
    "Spilled an entire latte over the keyboard this morning.",
    "正式に決まったらちゃんと話すから",
    "今度お祝いしよう！",
    "帰ったらすぐお風呂入ろう",
    "外に出た瞬間に溶け始めた",
    "うちの旦那、最近ゴルフにハマってて、毎週末打ちっぱなしに行ってる",
    "インドア人です",
])
def test_chatter_and_other_peoples_doings_state_nothing_of_the_user(text):
    assert [kind for kind, _ in shape(text)] in ([], ["fact"])
    assert all(not key.startswith(("fact:brain", "fact:jaw", "fact:hand", "fact:国籍"))
               for _, key in shape(text))


@pytest.mark.parametrize(("text", "expected"), [
    ("my eyes are green", [("fact", "fact:eye_green")]),
    ("I bought a new bike", [("decision", "decision:new_bike")]),
    ("I'll start running next week", [("decision", "decision:start_running")]),
    ("picked tea over coffee", [("decision", "decision:tea_over_coffee")]),
    ("ブラジル人です", [("fact", "fact:国籍")]),
    ("明日から毎朝走ろう", [("decision", "decision:毎朝走ろう")]),
    ("とりあえずSQLiteでいこう", [("decision", "decision:とりあえずsqlite")]),
    ("ヨガを始めた", [("decision", "decision:ヨガ")]),
])
def test_what_the_narrowed_rules_still_read(text, expected):
    assert [kind for kind, _ in shape(text)] == [kind for kind, _ in expected]


@pytest.mark.parametrize(("text", "expected"), [
    ("Lilies have always been my absolute favourite, how did you remember?",
     [("preference", "preference:lilies")]),
    ("I despise phone calls generally and would rather send ten emails than make one.",
     [("preference", "preference:phone_call_generally")]),
    ("I've chosen to audition for the chamber group in spring, wish me luck.",
     [("decision", "decision:audition_for_chamber_group_in_spring")]),
    ("I journal every morning before work, even if it's only three lines",
     [("pattern", "pattern:journal_every_morning_before_work")]),
    ("I ring my gran every Sunday night, and tonight she casually told me she has taken up "
     "online poker.", [("pattern", "pattern:ring_gran_every_sunday_night")]),
    ("you're right lol I'm a sucker for mechanical keyboards, the loud clicky ones",
     [("preference", "preference:mechanical_keyboard")]),
    ("I prefer replies written in third person if that's ok, first person feels weird to me",
     [("preference", "preference:reply_written_in_third_person")]),
])
def test_a_statement_inside_a_chatty_message(text, expected):
    assert shape(text) == expected


@pytest.mark.parametrize("text", [
    "I've never been a morning person",
    "I've been partially deaf since childhood",
    "I've never been to Japan",
])
def test_what_the_speaker_has_always_been_is_no_habit(text):
    assert "pattern" not in [kind for kind, _ in shape(text)]


def test_a_question_about_a_comparison_stays_one_clause():
    assert clauses("violin vs fiddle, is there actually any difference?") == [
        "violin vs fiddle, is there actually any difference?"]
    assert clauses("brown rice vs quinoa, which has more protein?") == [
        "brown rice vs quinoa, which has more protein?"]


@pytest.mark.parametrize(("text", "expected"), [
    ("not renewing my lease, the landlord raised rent again",
     [("decision:lease", "dislike")]),
    ("I'm not going back to that gym", [("decision:gym", "dislike")]),
    ("I signed up to volunteer at the animal shelter",
     [("decision:volunteer_at_animal_shelter", "like")]),
    ("(OOC: I have ADHD so if I jump between topics that's why lol)", [("fact:adhd", None)]),
])
def test_a_change_declined_and_a_sign_up(text, expected):
    assert [(c.key, c.polarity) for c in extract([text])[0]] == expected
