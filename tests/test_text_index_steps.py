"""The full-text index of a restored store is completed after ready in steps
(``session.index_text_step``, called by web/engine-worker.js under the engine lock): a step of
a time budget gives the lock up after about that long, however many texts are left, and the
steps together index every text once, as the count-sized steps do."""

from __future__ import annotations

import sys

from omoide.browser import session
from omoide.engine.analyzer import analyze
from tests.test_browser_restore import run, stored, worker  # noqa: F401

N = 700


def unindexed() -> int:
    return session.index_text_step(0)


def test_a_budgeted_step_stops_at_its_budget_and_reports_what_is_left():
    run(stored(N), slice_rows=250)
    assert unindexed() == N
    # no budget left: one slice of 32 texts, then the step returns
    assert session.index_text_step(budget_ms=0) == N - 32
    assert session.index_text_step(batch=100) == N - 132  # the count-sized step as before
    assert session.index_text_step(budget_ms=60_000) == 0  # room for everything


def test_budgeted_steps_index_every_text_as_one_pass_does(monkeypatch):
    # the kernel of a plain-JavaScript build: full-text scored by PureScorer
    monkeypatch.setattr(sys.modules["omoide_vectors"], "createTextScorer", lambda: None,
                        raising=False)
    run(stored(N), slice_rows=250)
    steps = 0
    while session.index_text_step(budget_ms=0):
        steps += 1
    assert steps == (N - 1) // 32
    store = session.session().engine.stores["aoi"]
    stepped = store.text_index.search(analyze("note 41 tea"), 20)
    run(stored(N), slice_rows=250)
    assert session.index_text_step(batch=N) == 0
    whole = session.session().engine.stores["aoi"].text_index.search(analyze("note 41 tea"), 20)
    assert (stepped.ids, stepped.scores) == (whole.ids, whole.scores)
    assert stepped.ids[0] == "m0041"
