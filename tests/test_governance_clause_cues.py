"""Round 8 of the learned extraction stage: wording cues beside the clause vector
(``clause_cues``), an acceptance rule per language, and what the trainer does with both.
No model: toy weights over one-hot vectors show what a cue's weight does to a clause."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.governance.clause_cues import CUES, cue_values
from omoide.governance.clause_model import (
    KINDS,
    NONE,
    WEIGHTS_FILE,
    ClauseWeights,
    LearnedClauseClassifier,
    classifier_for,
    weights_for,
)
from tests.test_governance_train_criteria import sweep_row


@pytest.mark.parametrize("text", [
    "I go to the farmers market on saturdays", "most nights I read before bed",
    "I swim twice a week", "a hot bath every night is non-negotiable for me",
    "I tend to overthink things", "whenever it rains I stay in",
    "毎朝コーヒーを飲む", "日曜は実家に電話してる", "寝る前にストレッチ", "夜更かししがち",
])
def test_a_frequency_or_recurring_time_is_a_recurrence_cue(text):
    assert cue_values(("recurrence",), text) == [1.0]


@pytest.mark.parametrize("text", [
    "I'm a nurse", "I love spicy ramen", "we adopted a rescue dog yesterday",
    "夫はシェフです", "辛いものが好き",
])
def test_a_plain_statement_has_no_recurrence_cue(text):
    assert cue_values(("recurrence",), text) == [0.0]


@pytest.mark.parametrize("text", [
    "I'm going to learn the cello", "from now on no sugar", "signed up for a pottery class",
    "来月から自転車通勤にする", "禁酒することにした", "チェロを習うつもり",
])
def test_an_intention_or_a_change_is_a_plan_cue(text):
    assert cue_values(("plan",), text) == [1.0]
    assert cue_values(("recurrence", "plan"), text)[1] == 1.0  # in the order asked


def test_the_cue_table_knows_both_languages():
    assert all(len(pair) == 2 for pair in CUES.values())


def cue_weights(recurrence_to_pattern: float, threshold: float = 0.5) -> ClauseWeights:
    # 5-d one-hot vectors (axis i votes for label i), then the recurrence cue, which votes
    # for ``pattern`` with the given weight
    rows = tuple(tuple([4.0 if i == j else 0.0 for j in range(5)]
                       + [recurrence_to_pattern if KINDS[i:i + 1] == ("pattern",) else 0.0])
                 for i in range(5))
    return ClauseWeights("toy", (*KINDS, NONE), rows, (0.0,) * 5,
                         {"en": threshold, "ja": threshold}, cues=("recurrence",))


class HalfEmbedder:
    """Every clause sits halfway between ``decision`` and ``pattern``."""

    model_id, dimension = "toy", 5

    def embed_queries(self, texts):
        return [[0.0, 0.7071, 0.7071, 0.0, 0.0] for _ in texts]


def test_a_cue_moves_a_clause_its_vector_leaves_between_two_kinds():
    text = "I go to the farmers market on saturdays"
    plain = LearnedClauseClassifier(HalfEmbedder(), cue_weights(0.0))
    cued = LearnedClauseClassifier(HalfEmbedder(), cue_weights(3.0))
    p_plain = plain.probabilities([text])[0]
    p_cued = cued.probabilities([text])[0]
    assert p_plain["pattern"] == pytest.approx(p_plain["decision"])
    assert p_cued["pattern"] > 0.8 > p_cued["decision"]
    assert cued.classify([text]) == [("pattern", "like")]
    # the same vector without the wording is left alone by the cue
    assert cued.probabilities(["I went to the farmers market"])[0] == pytest.approx(p_plain)


@given(st.lists(st.floats(-5, 5), min_size=5, max_size=5), st.floats(-5, 5))
def test_a_cue_weight_only_ever_moves_mass_towards_its_kind(vector, weight):
    weights = cue_weights(weight)
    off = weights.probabilities(vector, "I read a book")
    on = weights.probabilities(vector, "I read every night")
    if weight >= 0:
        assert on["pattern"] >= off["pattern"] - 1e-12
    else:
        assert on["pattern"] <= off["pattern"] + 1e-12


def test_weights_with_cues_still_fit_an_embedder_of_the_vector_dimension(monkeypatch):
    import omoide.governance.clause_model as model

    weights = cue_weights(1.0)
    assert weights.dimension == 5 and len(weights.weights[0]) == 6
    monkeypatch.setattr(model, "_all_weights", lambda: {"toy": weights})
    assert isinstance(classifier_for(HalfEmbedder()), LearnedClauseClassifier)


def test_the_acceptance_rule_can_differ_per_language():
    # every clause is split between two kinds (pattern 2/7, fact 2/7, none 1/7): the kind
    # rule at 0.6 refuses it, the statement rule (1 - none = 6/7) accepts it
    weights = ClauseWeights("toy", (*KINDS, NONE), ((0.0,),) * 5,
                            (0.0, 0.0, 0.6931, 0.6931, 0.0), {"en": 0.6, "ja": 0.6},
                            accept={"en": "kind", "ja": "statement"})
    assert weights.accept_in("en") == "kind" and weights.accept_in("ja") == "statement"

    class One:
        model_id, dimension = "toy", 1

        def embed_queries(self, texts):
            return [[1.0] for _ in texts]

    stage = LearnedClauseClassifier(One(), weights)
    got = stage.classify(["I do the books at a clinic", "経理の仕事をしてます"])
    assert got[0] is None and got[1] is not None and got[1][0] in ("fact", "pattern")
    assert ClauseWeights("toy", (), (), (), {}, accept="statement").accept_in("ja") == (
        "statement")


@pytest.mark.parametrize("model", ["omoide/multilingual-e5-small", "omoide/all-MiniLM-L6-v2"])
def test_the_shipped_cues_and_rules_are_ones_the_classifier_knows(model):
    from omoide.governance.clause_model import ACCEPT_RULES

    entry = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))["models"][model]
    cues = entry.get("cues", [])
    assert set(cues) <= set(CUES)
    # the cues follow the vector in the first layer's rows (the hidden layer's, if any)
    first = entry["hidden"]["weights"] if "hidden" in entry else entry["weights"]
    assert {len(row) for row in first} == {384 + len(cues)}
    accept = entry.get("accept", "kind")
    rules = set(accept.values()) if isinstance(accept, dict) else {accept}
    assert rules <= set(ACCEPT_RULES)
    trained = weights_for(model)
    assert trained.cues == tuple(cues) and trained.dimension == 384


def test_the_trainer_chooses_the_rule_per_language():
    from bench.governance_train import choose

    def row(accept, t, en, ja):
        return dict(sweep_row(t, 0.0, en, ja_recall=ja, negatives=140), accept=accept)

    chosen = choose([row("kind", 0.3, 0.8, 0.5), row("statement", 0.7, 0.7, 0.6)], 0.05)
    assert chosen["accept"] == {"en": "kind", "ja": "statement"}
    assert chosen["threshold"] == {"en": 0.3, "ja": 0.7}


def test_the_trainer_keeps_a_cue_set_only_where_cross_validation_prefers_it():
    from bench.governance_train import choose

    def row(cues, en):
        return dict(sweep_row(0.5, 0.0, en, negatives=140), cues=cues)

    assert choose([row([], 0.8), row(["recurrence"], 0.7)], 0.05)["cues"] == []
    assert choose([row([], 0.7), row(["recurrence"], 0.8)], 0.05)["cues"] == ["recurrence"]


# -- round 9: the recurrence cue needs someone doing it; stance and attribute cues -----------


@pytest.mark.parametrize("text", [
    "ugh, Mondays.", "that place is always packed on weekends", "weekdays, so long",
])
def test_a_recurrence_nobody_does_is_no_recurrence_own_cue(text):
    # the plain cue still fires on the wording; the own cue needs a first-person word
    assert cue_values(("recurrence_own",), text) == [0.0]


@pytest.mark.parametrize("text", [
    "most days I skip breakfast", "Sundays mean pancakes in my house",
    "we hike every other weekend", "毎朝コーヒーを飲む",  # Japanese drops the subject
])
def test_a_recurrence_the_speaker_does_is_a_recurrence_own_cue(text):
    assert cue_values(("recurrence", "recurrence_own"), text) == [1.0, 1.0]


@pytest.mark.parametrize("text", ["what a day", "never mind", "such a week, honestly"])
def test_small_talk_that_only_sounds_like_a_frequency_is_no_recurrence(text):
    assert cue_values(("recurrence",), text) == [0.0]


@pytest.mark.parametrize(("text", "cue"), [
    ("nothing beats a cold beer after a hike", "stance"), ("ramen > udon", "stance"),
    ("カラオケは苦手", "stance"), ("断然ねこ派です", "stance"),
    ("I'm a nurse at the city hospital", "attribute"), ("turned 40 last week", "attribute"),
    ("三十歳になりました", "attribute"), ("大阪出身です", "attribute"),
])
def test_a_stance_or_an_attribute_of_the_speaker_is_a_cue(text, cue):
    assert cue_values((cue,), text) == [1.0]


@pytest.mark.parametrize("text", ["hello there", "brb", "おはよう", "了解です"])
def test_small_talk_has_no_stance_or_attribute_cue(text):
    assert cue_values(("stance", "attribute"), text) == [0.0, 0.0]
