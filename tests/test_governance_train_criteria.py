"""How the trainer of the learned extraction stage chooses (bench/governance_train.py): the
false-positive ceiling holds at 95 % confidence over the dev negatives, not as a point
estimate, and the pattern veto is kept only where it removes a false positive on dev within
its recall budget (a veto that only costs recall and embedding time is switched off)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from bench.governance_train import (
    LABELS,
    choose,
    choose_veto,
    false_positive_bound,
)


@given(st.integers(1, 2000), st.data())
def test_the_bound_is_a_ceiling_above_the_measured_rate(negatives, data):
    count = data.draw(st.integers(0, negatives))
    rate = count / negatives
    bound = false_positive_bound(rate, negatives)
    assert rate <= bound <= 1.0
    # more evidence for the same rate gives a tighter bound
    assert false_positive_bound(rate, negatives * 4) <= bound + 1e-12


def test_on_140_negatives_two_false_positives_pass_the_goal_and_three_do_not():
    assert false_positive_bound(2 / 143, 143) <= 0.05 < false_positive_bound(3 / 143, 143)
    assert false_positive_bound(0.0, 0) == 1.0  # no negatives: no evidence


def sweep_row(threshold, en_fp, en_recall, ja_fp=0.0, ja_recall=0.5, negatives=143):
    return {"l2": 1.0, "balanced": False, "accept": "kind", "threshold": threshold,
            "en_recall": 0.99, "en_false_positive_rate": en_fp, "en_stage_recall": en_recall,
            "en_negatives": negatives, "ja_recall": 0.99, "ja_false_positive_rate": ja_fp,
            "ja_stage_recall": ja_recall, "ja_negatives": negatives}


def test_the_threshold_with_more_recall_loses_when_its_false_positives_are_not_sure():
    sweep = [sweep_row(0.3, 4 / 143, 0.85), sweep_row(0.5, 2 / 143, 0.80),
             sweep_row(0.7, 0.0, 0.60)]
    # 4 of 143 (0.028) was within a 0.03 point ceiling; its 95 % bound is not within 0.05
    assert choose(sweep, 0.05)["threshold"]["en"] == 0.5
    # a small dev set cannot show a rate that low: the stage is off rather than unsure
    few = [sweep_row(t, 0.0, r, negatives=20) for t, r in ((0.3, 0.9), (0.5, 0.8))]
    assert choose(few, 0.05)["threshold"]["en"] > 1.0


def probabilities(none: float) -> np.ndarray:
    rest = (1.0 - none) / (len(LABELS) - 1)
    return np.array([rest] * (len(LABELS) - 1) + [none])


def row(text, kind, negative=None):
    return {"id": text, "lang": "en", "text": text, "kind": kind, "negative": negative}


def test_a_veto_that_removes_no_false_positive_on_dev_is_not_kept():
    rows = [row("I love pizza", "preference"), row("I always walk to work", "pattern"),
            row("hello there", None, "smalltalk")]
    # the stage is sure the first statement states nothing: vetoing costs a true statement
    probs = {"I love pizza": probabilities(0.95), "I always walk to work": probabilities(0.1)}
    chosen, sweep = choose_veto(rows, probs, {"en": 0.5, "ja": 1.01}, budget=0.5)
    assert chosen == {}
    assert sweep and all(s["false_positive_rate"] == 0.0 for s in sweep)


def test_a_veto_that_removes_a_false_positive_within_budget_is_kept():
    # a negative a rule matches (labelled so here): the veto removes it at level 0.9
    rows = [row("I love pizza", None, "other"), row("I always walk to work", "pattern"),
            row("I play chess every sunday", "pattern")]
    probs = {"I love pizza": probabilities(0.95), "I always walk to work": probabilities(0.1),
             "I play chess every sunday": probabilities(0.2)}
    chosen, _ = choose_veto(rows, probs, {"en": 0.5, "ja": 1.01}, budget=0.0)
    assert chosen == {"en": 0.5}  # the lowest level that still costs no recall


def test_split_folds_hold_out_one_round_each_and_keep_prototypes_in_training():
    from bench.governance_train import TRAIN_SPLITS, fold_of

    split_of = {"en-1": "dev", "en-2": "dev3", "ja-9": "dev2"}
    assert [fold_of(g, split_of) for g in split_of] == [
        TRAIN_SPLITS.index(s) for s in split_of.values()]
    assert fold_of("proto:none:3", split_of) == -1


def test_the_acceptance_rule_is_chosen_with_l2_by_held_out_stage_recall():
    # the statement rule finds more at the same false positives in both languages: it wins
    # in both (each language's rule and threshold are chosen for it, round 8)
    kind = [sweep_row(0.5, 0.0, 0.80, ja_recall=0.70), sweep_row(0.3, 0.05, 0.86)]
    statement = [dict(sweep_row(0.8, 0.007, 0.83, ja_recall=0.74), accept="statement"),
                 dict(sweep_row(0.6, 0.0, 0.70, ja_recall=0.78), accept="statement")]
    chosen = choose(kind + statement, max_fp=0.05)
    assert chosen["accept"] == {"en": "statement", "ja": "statement"}
    assert chosen["threshold"] == {"en": 0.8, "ja": 0.6}
    assert choose(kind, max_fp=0.05)["accept"] == {"en": "kind", "ja": "kind"}
