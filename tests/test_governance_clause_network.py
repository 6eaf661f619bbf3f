"""The learned stage's hidden layer (round 15): what the trainer fits is what the product
scores. ``ClauseWeights`` with a hidden layer gives the probabilities of the trainer's numpy
forward pass, the fit is deterministic and learns what it is shown, and weights whose layer
shapes disagree are refused when loaded rather than scored by truncation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.governance_train import LABELS, fit_network, probabilities, with_cues
from omoide.governance.clause_model import ClauseWeights


def weights_from(layers, cues=()) -> ClauseWeights:
    (w1, b1), (w2, b2) = layers
    return ClauseWeights(
        "toy", LABELS, tuple(tuple(map(float, row)) for row in w2.T), tuple(map(float, b2)),
        {"en": 0.5, "ja": 0.5}, cues=cues,
        hidden=tuple(tuple(map(float, row)) for row in w1.T), hidden_bias=tuple(map(float, b1)))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.sampled_from(["", "I plan to move",
                                                                       "every morning I run"]))
def test_a_hidden_layer_scores_as_the_trainer_computes(seed, units, text):
    rng = np.random.default_rng(seed)
    cues = ("plan", "recurrence_own")
    d = 6
    layers = [(rng.normal(0, 1, (d + len(cues), units)), rng.normal(0, 1, units)),
              (rng.normal(0, 1, (units, len(LABELS))), rng.normal(0, 1, len(LABELS)))]
    vector = rng.normal(0, 1, d)
    expected = probabilities(with_cues(vector[None, :], [text], cues), layers)[0]
    got = weights_from(layers, cues).probabilities(list(vector), text)
    assert list(got) == list(LABELS)
    for label, p in zip(LABELS, expected, strict=True):
        assert math.isclose(got[label], p, rel_tol=1e-9, abs_tol=1e-12)


def test_the_network_is_deterministic_and_learns_a_separable_set():
    rng = np.random.default_rng(7)
    centres = rng.normal(0, 1, (len(LABELS), 8))
    y = np.repeat(np.arange(len(LABELS)), 40)
    x = centres[y] + rng.normal(0, 0.2, (len(y), 8))
    layers = fit_network(x, y, hidden=16, l2=1.0, balanced=True)
    again = fit_network(x, y, hidden=16, l2=1.0, balanced=True)
    assert all(np.array_equal(a, b) for la, lb in zip(layers, again, strict=True)
               for a, b in zip(la, lb, strict=True))
    assert (probabilities(x, layers).argmax(1) == y).mean() > 0.95
    # the product's scoring agrees on the trained weights (the standardization folded in)
    scored = weights_from(layers)
    for row, label in zip(x[::37], y[::37], strict=True):
        p = scored.probabilities(list(row))
        assert max(p, key=p.__getitem__) == LABELS[label]


def test_no_hidden_units_is_the_softmax_regression():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (60, 4))
    y = np.arange(60) % len(LABELS)
    layers = fit_network(x, y, hidden=0, l2=10.0)
    assert len(layers) == 1 and layers[0][0].shape == (4, len(LABELS))


def test_weights_whose_layers_disagree_are_refused():
    ok_hidden = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0))
    rows = tuple((0.1, 0.2, 0.3) for _ in LABELS)
    ClauseWeights("toy", LABELS, rows, (0.0,) * 5, {"en": 0.5}, hidden=ok_hidden,
                  hidden_bias=(0.0,) * 3)
    with pytest.raises(ValueError, match="shapes"):  # a class row of 2 for 3 units
        ClauseWeights("toy", LABELS, tuple((0.1, 0.2) for _ in LABELS), (0.0,) * 5,
                      {"en": 0.5}, hidden=ok_hidden, hidden_bias=(0.0,) * 3)
    with pytest.raises(ValueError, match="shapes"):  # a unit without its bias
        ClauseWeights("toy", LABELS, rows, (0.0,) * 5, {"en": 0.5}, hidden=ok_hidden,
                      hidden_bias=(0.0,) * 2)
    with pytest.raises(ValueError, match="lengths"):
        ClauseWeights("toy", LABELS, ((0.1, 0.2),) * 4 + ((0.1,),), (0.0,) * 5, {"en": 0.5})
    weights = ClauseWeights("toy", LABELS, rows, (0.0,) * 5, {"en": 0.5}, hidden=ok_hidden,
                            hidden_bias=(0.0,) * 3)
    assert weights.dimension == 2
    with pytest.raises(ValueError, match="features"):  # a vector of another model's length
        weights.probabilities([0.5, 0.5, 0.5])
