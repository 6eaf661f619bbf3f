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


def counts(recall, stage_recall, fp_rate, negatives, positives=1000, gated=None,
           stage_fp=None):
    """One language's counts on one round (``pipeline_counts``) from rates."""
    fps = round(fp_rate * negatives)
    return {"positives": positives, "negatives": negatives, "hits": round(recall * positives),
            "stage_hits": round(stage_recall * positives), "false_positives": fps,
            "gated_negatives": negatives if gated is None else gated,
            "stage_false_positives": fps if stage_fp is None else stage_fp}


def sweep_row(threshold, en_fp, en_recall, ja_fp=0.0, ja_recall=0.5, negatives=143):
    """A sweep entry whose counts are all on the ``dev`` round (the other rounds empty)."""
    from bench.governance_train import ROUNDS

    empty = counts(0.0, 0.0, 0.0, 0, positives=0)
    per_round = {name: {"en": empty, "ja": empty} for name in ROUNDS}
    per_round["dev"] = {"en": counts(0.99, en_recall, en_fp, negatives),
                        "ja": counts(0.99, ja_recall, ja_fp, negatives)}
    return {"l2": 1.0, "balanced": False, "cues": [], "accept": "kind",
            "threshold": threshold, "counts": per_round}


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


# -- round 9: a calibration round, and a ceiling over the negatives that reach the stage -----


def calibrated_row(threshold, dev_stage, calib_stage_fp, calib_gated=120, stage_recall_ja=0.5):
    """Dev: no false positive at any threshold, 40 of its 143 negatives reach the stage; the
    calibration round: ``calib_stage_fp`` of its ``calib_gated`` negatives that reach the
    stage stored by the stage (of 160)."""
    row = sweep_row(threshold, 0.0, dev_stage, ja_recall=stage_recall_ja)
    for lang in ("en", "ja"):  # as on the dev rounds: few negatives reach the stage
        row["counts"]["dev"][lang]["gated_negatives"] = 40
    row["counts"]["calib"] = {
        "en": counts(0.5, 0.5, calib_stage_fp / 160, 160, positives=40, gated=calib_gated,
                     stage_fp=calib_stage_fp),
        "ja": counts(0.5, 0.5, 0.0, 160, positives=40, gated=calib_gated, stage_fp=0)}
    return row


def test_the_calibration_round_holds_back_a_threshold_dev_alone_would_take():
    from bench.governance_train import ROUNDS, TRAIN_SPLITS

    sweep = [calibrated_row(0.3, 0.90, 30), calibrated_row(0.6, 0.85, 5),
             calibrated_row(0.9, 0.70, 1)]
    assert choose(sweep, 0.05, TRAIN_SPLITS)["threshold"]["en"] == 0.3  # dev sees nothing
    # 5 of 303 negatives is within the ceiling at 95 %; 5 of the 160 that reach the stage
    # is not, 1 of 160 is
    assert choose(sweep, 0.05, ROUNDS, "all")["threshold"]["en"] == 0.6
    assert choose(sweep, 0.05, ROUNDS, "gated")["threshold"]["en"] == 0.9


def test_the_gated_ceiling_counts_only_what_the_stage_adds():
    from bench.governance_train import ROUNDS

    # the patterns store 14 of 160 at every threshold (not the stage's doing); the stage adds
    # none at 0.3: the gated ceiling lets the stage work, the ceiling over all negatives
    # cannot be met by any threshold and switches the stage off
    sweep = [calibrated_row(t, r, 0) for t, r in ((0.3, 0.9), (0.6, 0.8))]
    for row in sweep:
        row["counts"]["calib"]["en"]["false_positives"] = 14
    assert choose(sweep, 0.05, ROUNDS, "gated")["threshold"]["en"] == 0.3
    assert choose(sweep, 0.05, ROUNDS, "all")["threshold"]["en"] > 1.0


def test_a_held_out_round_is_scored_with_the_setting_chosen_without_it():
    from bench.governance_train import ROUNDS, threshold_generalization

    sweep = [calibrated_row(0.3, 0.90, 30), calibrated_row(0.9, 0.70, 1)]
    patterns = {name: {lang: counts(0.5, 0.0, 0.0, 10) for lang in ("en", "ja")}
                for name in ROUNDS}
    got = {(g["choice"], g["held_out"], g["lang"]): g
           for g in threshold_generalization(sweep, 0.05, patterns)}
    # chosen on dev only, the threshold stores 30 of the calibration round's negatives
    dev_only = got[("dev-all", "calib", "en")]
    assert dev_only["threshold"] == 0.3 and dev_only["stage_false_positives"] == 30
    # with the calibration round, holding out a dev round keeps the stricter threshold
    calibrated = got[("calib-gated", "dev2", "en")]
    assert calibrated["threshold"] == 0.9


def test_the_sweeps_cached_extraction_equals_extract():
    from bench.governance_train import Lookup, extract_with
    from omoide.governance.extract import extract

    texts = ["a cold beer after a long hike hits different", "ugh, Mondays.",
             "I love ramen, but my sister hates it", "週末はだいたいパン焼いてる", "hello!"]
    probs = {}
    for text in texts:  # every clause the stage may be asked about: a statement, mostly
        for clause in (text, *text.split(", ")):
            probs[clause] = np.array([0.6, 0.1, 0.1, 0.1, 0.1])
    for threshold in (0.3, 0.7):
        stage = Lookup(probs, threshold, accept="kind")
        for text in texts:
            want = [(c.kind, c.key, c.via) for c in extract([text], classifier=stage)[0]]
            assert [(c.kind, c.key, c.via) for c in extract_with(text, stage)] == want
