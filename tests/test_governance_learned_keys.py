"""Keys of what the learned stage reads (issue 14, data safety): a key names the clause's
subject, never its lead, frame or verdict. A key such as ``preference:hard_pass``,
``decision:plan`` or ``fact:youngest`` was shared by statements about different things, and
the second merged into the first or replaced it as its "new value". A verdict on a thing
named alone ("horror movies? hard pass") is one clause the rules read."""

import importlib
import itertools

import pytest

from omoide.engine import MemoryEngine
from omoide.governance import extract_en
from omoide.governance.clause_model import KINDS, NONE, LearnedClauseClassifier
from omoide.governance.extract import clauses, extract
from omoide.governance.extract_en import names_something, open_subject
from omoide.governance.ingest import ingest
from tests.test_engine_embedder import HashingEmbedder
from tests.test_governance_clause_model import toy_weights

ingest_module = importlib.import_module("omoide.governance.ingest")


class KindEmbedder:
    """The toy stage's embedder: every clause it is shown reads as ``kind``."""

    model_id, dimension = "toy", 5

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def embed_queries(self, texts):
        labels = (*KINDS, NONE)
        return [[1.0 if label == self.kind else 0.0 for label in labels] for _ in texts]


def stage(kind: str) -> LearnedClauseClassifier:
    return LearnedClauseClassifier(KindEmbedder(kind), toy_weights())


@pytest.mark.parametrize(("kind", "clause", "subject"), [
    ("decision", "the plan is to repaint the kitchen in April", "repaint kitchen"),
    ("decision", "plan is to repaint the bedroom a soft green this weekend",
     "repaint bedroom a soft green"),
    ("pattern", "first thing I do when I wake up is check my email", "check my email"),
    ("pattern", "First thing after waking up, a big glass of water", "big glass of water"),
    ("preference", "whenever I can choose, it's thai food", "thai food"),
    ("pattern", "tuesdays and thursdays are my rowing-machine days", "rowing-machine days"),
    ("pattern", "lunch breaks are for the cryptic crossword", "cryptic crossword"),
    ("decision", "alright, entering the 10k trail race in the spring", "10k trail race"),
    ("decision", "ok I'm doing it, entering the half marathon in april", "half marathon"),
    ("fact", "our youngest, Ines, starts kindergarten in april", "youngest ines"),
    ("fact", "my youngest, Hana, is in her first year at nursery", "youngest hana"),
    ("fact", "Tomás and I have been mates since year 3", "tomás mate"),
])
def test_a_learned_key_names_the_subject_after_its_lead(kind, clause, subject):
    got = open_subject(kind, clause).casefold()
    assert all(word in got for word in subject.casefold().split()), got


@pytest.mark.parametrize(("kind", "clause"), [
    ("preference", "hard pass"),
    ("preference", "Not for me, thanks."),
    ("preference", "absolutely not."),
    ("decision", "I've made up my mind"),
    ("decision", "ok I'm doing it"),
    ("decision", "I'm in!"),
    ("fact", "my partner"),
])
def test_a_clause_that_names_nothing_gets_no_key(kind, clause):
    assert open_subject(kind, clause) == ""
    assert extract([clause], classifier=stage(kind))[0] == []


def test_names_something():
    assert not names_something("hard pass") and not names_something("made up mind")
    assert names_something("thai food") and names_something("youngest ines")


@pytest.mark.parametrize(("text", "key", "polarity"), [
    ("horror movies? hard pass", "preference:horror_movie", "dislike"),
    ("Reality TV? Not for me, thanks.", "preference:reality_television", "dislike"),
    ("mushy peas. absolutely not.", "preference:mushy_pea", "dislike"),
    ("horror movies? nope. not for me.", "preference:horror_movie", "dislike"),
    ("voice notes longer than 30 secs?? absolutely not. cant stand them",
     "preference:voice_note_longer_than_30_sec", "dislike"),
    ("me and okra? not happening. that slimy texture, ew", "preference:okra", "dislike"),
    ("mango? yes please", "preference:mango", "like"),
    ("spicy food? no thanks", "preference:spicy_food", "dislike"),
    ("spicy food? yes please, the hotter the better", "preference:spicy_food", "like"),
    ("fav board game?? catan, no contest", "preference:favorite_board_game", "like"),
    ("fave snack: crisps", "preference:favorite_snack", "like"),
])
def test_a_verdict_on_a_thing_named_alone_is_a_preference_that_keeps_the_thing(
        text, key, polarity):
    found, _ = extract([text])
    assert [(c.key, c.polarity, c.via) for c in found][:1] == [(key, polarity, "pattern")]
    assert found[0].text.startswith(text.split("?")[0].split(".")[0].split(":")[0])


@pytest.mark.parametrize(("text", "key", "polarity"), [
    ("ホラー映画？絶対ムリ", "preference:ホラー映画", "dislike"),
    ("パクチー？無理。", "preference:パクチー", "dislike"),
    ("納豆？大好き！", "preference:納豆", "like"),
    ("辛いの好き？大好き！", "preference:辛", "like"),
])
def test_a_japanese_verdict_on_a_thing_named_alone_is_a_preference(text, key, polarity):
    found, _ = extract([text])
    assert [(c.key, c.polarity, c.text) for c in found] == [(key, polarity, text)]


@pytest.mark.parametrize("text", ["それって何？無理", "仕事終わった？まだ", "行く？無理かも"])
def test_a_japanese_question_answered_is_no_preference(text):
    assert extract([text])[0] == []


@pytest.mark.parametrize(("clause", "subject"), [
    ("決めた。", ""), ("よし、決めた！", ""), ("絶対ムリ", ""), ("そうします", ""),
    ("もう決めました、車を売ります", "車を売ります"),
])
def test_a_japanese_learned_key_leaves_out_the_decision_made(clause, subject):
    from omoide.governance.extract_ja import open_subject as ja_open_subject

    assert ja_open_subject("decision", clause) == subject


@pytest.mark.parametrize("text", [
    "You coming? nope", "what do you think? hard pass", "Is it raining? absolutely not",
    "Ready? yes please", "tired? nope", "Done? absolutely not", "fav movie? dunno tbh",
    "favourite colour? you tell me",
])
def test_a_question_answered_is_no_preference(text):
    assert extract([text])[0] == []


def test_a_question_is_still_cut_from_its_answer_and_a_list_of_verdicts_stays_apart():
    assert clauses("Did you eat? yes. I had pasta") == ["Did you eat?", "yes.", "I had pasta"]
    assert clauses("hard pass. absolutely not.") == ["hard pass.", "absolutely not."]


@pytest.mark.parametrize("text", [
    "Crocs are hideous and I will die on this hill",
    "vinyl sounds warmer than streaming and I'll die on that hill",
])
def test_an_idiom_of_conviction_is_no_decision(text):
    found, _ = extract([text])
    assert "decision" not in {c.kind for c in found}


@pytest.mark.parametrize(("kind", "first", "second"), [
    ("preference", "horror movies? hard pass", "cold showers? hard pass"),
    ("preference", "Reality TV? Not for me, thanks.", "Musicals? not my thing at all"),
    ("decision", "the plan is to repaint the kitchen in April",
     "plan is to repaint the bedroom a soft green this weekend"),
    ("fact", "our youngest, Ines, starts kindergarten in april",
     "my youngest, Hana, is in her first year at nursery"),
    ("pattern", "first thing I do when I wake up is check my email",
     "first thing I do when I wake up is feed the fish"),
    ("decision", "I've made up my mind, I'm selling the car",
     "I've made up my mind, I'm adopting a rescue dog"),
    ("preference", "ホラー映画？絶対ムリ", "パクチー？絶対ムリ"),
    ("decision", "決めた。来月から禁煙する", "決めた。春に引っ越す"),
])
def test_two_statements_about_different_things_both_stay_live(monkeypatch, kind, first, second):
    """Before: the second merged into the first (its words only in the trash) or replaced
    it as a new value of the shared key."""
    monkeypatch.setattr(ingest_module, "classifier_for", lambda embedder: stage(kind))
    counter = itertools.count()
    engine = MemoryEngine(HashingEmbedder(64), clock=lambda: 1_700_000_000.0 + next(counter))
    ingest(engine, "a", [first])
    items = ingest(engine, "a", [second]).items
    assert {i.action for i in items} <= {"stored"}, [(i.action, i.reason) for i in items]
    live = " | ".join(m.text for m in engine.memories("a"))
    assert first.split(",")[0].split("?")[0].split("。")[-1] in live or "made up my mind" in first
    assert engine.trash("a") == []


def test_a_key_the_stage_made_merges_only_the_same_statement(monkeypatch):
    """A learned key that still names the lead (a rule's miss, made here by keying every
    clause alike) is no identity on its own: another statement under it is a memory of its
    own, the same statement again merges, the opposite polarity supersedes."""
    monkeypatch.setattr(ingest_module, "classifier_for", lambda embedder: stage("pattern"))
    monkeypatch.setattr(extract_en, "open_subject", lambda kind, text: "saturday morning")
    counter = itertools.count()
    engine = MemoryEngine(HashingEmbedder(64), clock=lambda: 1_700_000_000.0 + next(counter))
    first = "Saturday mornings the allotment gets my full attention"
    ingest(engine, "a", [first])
    other = ingest(engine, "a", ["Saturday mornings the dog park with Rex and a flask"]).items
    assert [i.action for i in other] == ["stored"]
    again = ingest(engine, "a", [first]).items
    assert [i.action for i in again] in (["merged"], ["skipped"])
    assert sorted(m.key for m in engine.memories("a")) == ["pattern:saturday_morning"] * 2
    assert engine.trash("a") == []
