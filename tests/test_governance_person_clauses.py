"""Clauses about the user's people and pets reach the learned stage for a fact about them and
nothing else: "my wife works at a hospital" is a fact no pattern may have been written for,
"my brother is going to quit his job" is never the user's decision. One detector
(``open_person`` of each language) decides who the clause is about, for the stage as for the
rules' gate."""

import pytest

from omoide.engine import MemoryEngine
from omoide.governance import extract_en, extract_ja
from omoide.governance.extract import extract
from omoide.governance.ingest import ingest
from tests.test_engine_embedder import HashingEmbedder


class Answering:
    """A second stage that answers every clause with one verdict; records what it saw."""

    via = "learned"

    def __init__(self, kind):
        self.kind, self.seen = kind, []

    def classify(self, clauses):
        self.seen.extend(clauses)
        return [(self.kind, "like")] * len(clauses)


@pytest.mark.parametrize("text", [
    "my wife volunteers at the animal shelter", "My brother is going to quit his job",
    "our dog gets scared of thunder", "my grandparents run an onsen ryokan",
    "妻は病院で看護助手をしてます", "うちの犬は雷がこわい", "兄が来月結婚する", "父、昔は漁師",
])
def test_the_stage_sees_a_clause_about_the_users_people_and_keeps_only_a_fact(text):
    for kind in ("preference", "decision", "pattern"):
        stage = Answering(kind)
        found, unmatched = extract([text], classifier=stage)
        if stage.seen:  # no rule matched it: the stage's verdict is not the user's
            assert found == [] and [u.source for u in unmatched] == [0]
    stage = Answering("fact")
    found, _ = extract([text], classifier=stage)
    assert found and all(c.kind == "fact" for c in found)


@pytest.mark.parametrize("text", [
    "my sister says she hates sushi",         # reported speech
    "is my cat too fat?",                     # a question
    "if my boss quits I'd take over",         # a hypothetical
    "Kenji always orders the spicy curry",    # a named person, not "my"
    "his brother plays bass",                 # someone else's people
])
def test_the_english_person_gate_refuses_what_is_not_stated_about_the_users_people(text):
    assert extract_en.open_person(text) is None
    assert not extract([text], classifier=Answering("fact"))[0]


@pytest.mark.parametrize("text", [
    "姉がカナダに住みたいって言ってた",  # hearsay
    "母は何時に寝てるんだろう",          # wondering
    "あの人は毎朝走ってる",              # a pointed-at person, not the user's
    "みんな猫が好き",                    # people in general
    "同僚がサウナにハマってるらしい",    # hearsay
])
def test_the_japanese_person_gate_refuses_what_is_not_stated_about_the_users_people(text):
    assert extract_ja.open_person(text) is None


def test_a_clause_open_as_the_speakers_own_is_not_restricted_to_facts():
    stage = Answering("preference")
    found, _ = extract(["a good bowl of ramen fixes everything"], classifier=stage)
    assert [(c.kind, c.via) for c in found] == [("preference", "learned")]
    assert extract_en.open_person("a good bowl of ramen fixes everything") is None
    assert extract_ja.open_person("ラーメンは醤油一択") is None


def test_my_partner_and_i_is_the_speaker():
    stage = Answering("decision")
    found, _ = extract(["my wife and I are moving the studio to the countryside"],
                       classifier=stage)
    assert extract_en.open_person("my wife and I are moving to Osaka") is None
    assert [c.kind for c in found] == ["decision"]


def test_two_facts_about_the_same_person_get_two_keys():
    # a shared key would make the second supersede the first
    for texts in (["our dog gets scared of thunder", "our dog loves the beach"],
                  ["my wife volunteers at the animal shelter", "my wife plays the cello"],
                  ["うちの犬は雷がこわい", "うちの犬は毎朝五時に起こしてくる"]):
        keys = [c.key for c in extract(texts, classifier=Answering("fact"))[0]]
        assert len(keys) == 2 and len(set(keys)) == 2, keys


@pytest.mark.parametrize("text", [
    "My wife prefers Vim over Emacs.", "Tom prefers tea over coffee.",
    "Sarah prefers cats over dogs", "My dad prefers jazz over rock.", "Dad: jazz > rock.",
    "Alice is a Vim over Emacs person", "Emi always orders the ramen",
])
def test_someone_elses_comparison_is_never_the_users_preference(text):
    """The comparison rules ("X over Y", "X > Y") read any clause's X as the user's: "My
    wife prefers Vim over Emacs" became the user's preference, and could replace the user's
    own "I don't like Vim"."""
    candidates, _ = extract([text])
    assert [c for c in candidates if c.kind != "fact"] == [], candidates


def test_the_users_own_comparisons_are_still_read():
    for text, key in [("I prefer Vim over Emacs.", "preference:vim"),
                      ("Vim over Emacs any day", "preference:vim"),
                      ("Coffee beats tea", "preference:coffee")]:
        candidates, _ = extract([text])
        assert [c.key for c in candidates] == [key], text


def test_a_named_persons_only_choice_does_not_take_the_users_key():
    """「ケンはラーメン一択」 was the user's preference:ラーメン and superseded the user's own
    「私はラーメンが嫌いです」."""
    e = MemoryEngine(HashingEmbedder(64))
    mine = ingest(e, "u", ["私はラーメンが嫌いです。"]).stored[0]
    ingest(e, "u", ["ケンはラーメン一択。"])
    assert mine.memory_id in {m.id for m in e.memories("u")}
    (ken,) = extract(["ケンはラーメン一択。"])[0]
    assert ken.key != mine.key
    (tea,) = extract(["紅茶はアールグレイ一筋です"])[0]  # a kind of thing as the topic
    assert tea.key == "preference:アールグレイ"
