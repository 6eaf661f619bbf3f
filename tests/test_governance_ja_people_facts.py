"""Japanese facts about the user's people and pets, stated plainly: the person may be the topic
(兄は) or the subject (兄が, 兄って), chat drops を/として before the verb (「八百屋やってる」),
and a person's attribute may be named (「兄の仕事は…」). A fact about a person keys on that
person and never becomes the user's own preference, decision or habit."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.governance.extract import extract


def found(text: str) -> list[tuple[str, str]]:
    return [(c.kind, c.key) for c in extract(text)[0]]


@pytest.mark.parametrize("particle", ["は", "が", "って"])
@pytest.mark.parametrize(("rest", "key"), [
    ("名古屋に住んでる", "fact:弟_住まい"),
    ("銀行で働いてます", "fact:弟_仕事"),
    ("大工をやってる", "fact:弟_仕事"),
    ("京都出身", "fact:弟_出身"),
])
def test_a_relation_as_topic_or_subject_gives_the_same_fact(particle, rest, key):
    assert found(f"弟{particle}{rest}") == [("fact", key)]


def test_a_dropped_particle_before_the_verb_needs_a_job_word():
    assert found("叔父が八百屋やってる") == [("fact", "fact:叔父_仕事")]
    assert found("友達が病院で看護師やってる") == [("fact", "fact:友達_仕事")]
    assert found("保健所で獣医してます") == [("fact", "fact:仕事")]
    # what someone does that is no job word: no job fact (and never the user's habit)
    assert all(kind == "fact" and "仕事" not in key
               for kind, key in found("弟がゲームやってる"))
    assert found("公園でサッカーしてる") == []


def test_an_attribute_named_after_the_person():
    assert found("兄の仕事は消防士") == [("fact", "fact:兄_仕事")]
    assert found("父の出身は熊本") == [("fact", "fact:父_出身")]
    assert found("職場は渋谷です") == [("fact", "fact:職場")]


def test_where_one_lives_said_as_sumi():
    assert found("東京住みです") == [("fact", "fact:住まい")]
    assert found("姉が仙台住み") == [("fact", "fact:姉_住まい")]


def test_pets_kept_with_the_particle_dropped_or_in_kana():
    assert found("インコ飼ってます") == [("fact", "fact:インコ")]
    assert found("うさぎかってる") == [("fact", "fact:うさぎ")]
    assert found("犬を飼い始めて五年") == [("fact", "fact:犬")]
    # かって without a pet is not keeping one (買って, 勝って)
    assert all(key != "fact:服" for _, key in found("服かってる"))


def test_kinship_words_of_chat_are_someone_else():
    # 兄貴 / 親父 are people: their habits are not the user's
    assert found("兄貴はいつも朝五時に起きてる") == []
    assert found("親父が毎晩晩酌してる") == []


RELATIONS = st.sampled_from(["兄", "姉", "弟", "妹", "母", "父", "夫", "妻", "兄貴", "親父",
                             "友達", "同僚", "息子", "娘", "祖母"])
PARTICLES = st.sampled_from(["は", "が", "って"])
PREDICATES = st.sampled_from([
    "コーヒーが大好き", "毎朝走ってる", "来月から転職するつもり", "辛いものが苦手",
    "寝る前に本を読むのが習慣", "ジムに通い始めた", "横浜に住んでる", "看護師をしてる"])


@given(RELATIONS, PARTICLES, PREDICATES)
def test_whatever_is_said_about_a_relation_is_at_most_a_fact(relation, particle, predicate):
    kinds = {kind for kind, _ in found(f"{relation}{particle}{predicate}")}
    assert kinds <= {"fact"}
