"""Japanese clauses that state nothing about the user, refused before the rules and before the
learned stage's gate (``extract_ja.open_statement``): a question asked without a question
mark (a question word with no か/も/でも after it, and no polite statement end), wondering
(〜んだろう), hearsay quoted with a bare って, a forecast about a thing (「駅ができる予定」),
people in general (みんな…, 日本人って…) and a state the speaker had in the past."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.governance import extract_ja
from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str]]:
    return [(c.kind, c.key) for c in extract(text)[0]]


@pytest.mark.parametrize("text", [
    "いつも何時に寝てる",  # habit words, but a question
    "週末どこ行く",
    "誰と住んでる",
    "なぜ毎朝走るの",
    "犬ってどうして散歩好きなんだろう",  # wondering
    "ニュースで毎年台風増えてるって",  # hearsay: a predicate + って
    "姉が来月から留学するって",
    "新しい駅ができる予定",  # a forecast about a thing
    "今年の冬は寒くなる予定",
    "みんなラーメン好きだよね",  # people in general
    "日本人って温泉好きだよね",
    "猫好きって毎日写真撮ってるよね",
    "子どもの頃はピーマン嫌いだった",  # then, not now
    "学生の時は毎朝走ってた",
])
def test_nothing_is_stored(text):
    assert found(text) == []
    # nor does the learned stage see it: the gate refuses it too
    assert extract_ja.open_statement(text) is None


@pytest.mark.parametrize(("text", "kind"), [
    ("誰とでもすぐ仲良くなれる", None),  # 誰とでも is not asked; states no kind we keep
    ("どこでも寝れるタイプ", None),
    ("どこに行っても必ずご当地ラーメンを食べます", "pattern"),  # 〜ても: not a question
    ("毎晩どこかで一杯飲んでる", "pattern"),
    ("来年から大学生になる予定", "decision"),  # the speaker becoming: a plan, no forecast
    ("昔からピーマンが嫌い", "preference"),  # since long ago and still
    ("誰にでも敬語で話すようにしています", "pattern"),
])
def test_the_same_words_in_a_statement_are_still_read(text, kind):
    kinds = {k for k, _ in found(text)}
    if kind is None:
        assert not extract_ja.refused(extract_ja._clean(text))
    else:
        assert kind in kinds


WORDS = st.sampled_from(["どこ", "誰", "何時", "どっち", "なぜ"])
AFTER = st.sampled_from(["か", "も", "でも", "とでも", "にでも", "からでも"])


@given(WORDS, AFTER)
def test_a_question_word_made_indefinite_is_never_asked(word, after):
    assert not extract_ja._ASKING_WORD.search(f"{word}{after}行ける")


@given(WORDS)
def test_a_question_word_before_a_plain_verb_is_asked(word):
    assert extract_ja.refused(f"{word}に行く")
