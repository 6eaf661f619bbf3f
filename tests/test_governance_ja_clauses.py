"""Japanese clause splitting at a reason (〜から、〜ので、) or a list (〜し、): each side states
its own thing, so each is read on its own; から after a noun ("from": 来月から、) and the
speaker's わたし、 are not conjunctions, and a leading 私、 is the speaker, not a subject."""

from hypothesis import given
from hypothesis import strategies as st

from omoide.governance.extract import clauses, extract


def kinds(text: str) -> list[str]:
    return [c.kind for c in extract(text)[0]]


def test_a_reason_clause_and_its_consequence_are_two_statements():
    assert clauses("猫が好きだから、毎日会いに行く") == ["猫が好きだ", "毎日会いに行く"]
    assert kinds("猫が好きだから、毎日会いに行く") == ["preference", "pattern"]
    assert clauses("寒いので、鍋にした") == ["寒い", "鍋にした"]


def test_a_wish_given_as_the_reason_does_not_hide_the_plan_after_it():
    # 「…たいので、」: the wish is refused, the plan is still read
    assert clauses("海外で働きたいので、転職活動はじめます") == [
        "海外で働きたい", "転職活動はじめます"]
    assert kinds("海外で働きたいので、転職活動はじめます") == ["decision"]


def test_a_list_of_reasons_is_cut_at_each_shi():
    assert clauses("高いし、遠いし、行かない") == ["高い", "遠い", "行かない"]
    assert clauses("甘いの好きだし、毎日ケーキ食べてる") == ["甘いの好きだ", "毎日ケーキ食べてる"]


def test_kara_after_a_noun_and_the_speakers_watashi_are_no_conjunction():
    assert clauses("来月から、ジム通う") == ["来月から、ジム通う"]
    assert clauses("朝から、ずっと雨") == ["朝から、ずっと雨"]
    assert clauses("わたし、猫好き") == ["わたし、猫好き"]
    assert clauses("あたし、コーヒー派") == ["あたし、コーヒー派"]
    assert clauses("少し、疲れた") == ["少し、疲れた"]


def test_the_speaker_before_a_comma_is_not_part_of_the_subject():
    found, _ = extract("わたし、猫好き")
    assert [(c.kind, c.key) for c in found] == [("preference", "preference:猫")]


PIECES = ["猫が好きだ", "寒い", "行く", "毎朝走る", "来月", "わたし", "少し", "高いです", "朝"]
JOINTS = ["から、", "ので、", "し、", "けど、", "、"]


@given(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(JOINTS)), min_size=1,
                max_size=5), st.sampled_from(PIECES))
def test_clauses_only_cut_never_invent_or_reorder(pairs, last):
    text = "".join(p + j for p, j in pairs) + last
    parts = clauses(text)
    assert parts and all(parts)
    at = 0
    for part in parts:  # each part is a piece of the text, in order
        found = text.find(part, at)
        assert found >= 0, (text, parts)
        at = found + len(part)
