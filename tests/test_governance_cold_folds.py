"""The cold maintenance pass folds a note away only when the survivor says all it says
(issue 14: never lose a memory to a merge). It runs by itself after an ingest once the cold
tier is over its limit, so a wrong fold was a memory purged 30 days later, unasked.
Found with e5 (cosine 0.96 for "allergic to penicillin" / "... amoxicillin"); here the
threshold is low so that the words alone decide."""

from __future__ import annotations

import pytest

from omoide.governance.tiers import maintain_cold
from tests.test_governance_tiers import COLD_POLICY, DAY, cold, live_ids, make_engine, trash_ids


@pytest.mark.parametrize(("older", "newer"), [
    ("I'm allergic to penicillin.", "I'm allergic to amoxicillin."),
    ("Left my umbrella on the train.", "Left my umbrella on the bus."),
    ("Forgot to take my medicine.", "Remembered to take my medicine."),
    ("My daughter is allergic to peanuts.", "My daughter is allergic to walnuts."),
])
def test_two_notes_that_each_say_something_the_other_does_not_stay_live(older, newer):
    e, clock = make_engine()
    a = cold(e, older)
    clock.t += 60
    b = cold(e, newer)
    report = maintain_cold(e, "a", COLD_POLICY, force=True, dedup_threshold=0.1)
    assert report.merged == [] and {a.id, b.id} <= live_ids(e)


def test_a_note_the_survivor_says_all_of_is_folded_and_restoring_it_keeps_both():
    e, clock = make_engine()
    short = cold(e, "Walked Pochi in the park.", kind="diary")
    clock.t += 60
    full = cold(e, "Walked Pochi in the park after lunch.", kind="diary")
    report = maintain_cold(e, "a", COLD_POLICY, force=True, dedup_threshold=0.1)
    assert [(f["kept"], f["trashed"]) for f in report.merged] == [(full.id, short.id)]
    # a duplicate, not a replaced version: its restore retired the survivor (then purged)
    e.restore("a", short.id)
    assert {short.id, full.id} <= live_ids(e) and trash_ids(e) == set()


def test_the_same_note_on_two_days_is_two_notes():
    """Folded, the older day's note was gone: nothing was dated that day any more."""
    e, clock = make_engine()
    first = cold(e, "Walked Pochi in the park.", kind="diary")
    clock.t += 3 * DAY
    second = cold(e, "Walked Pochi in the park.", kind="diary")
    report = maintain_cold(e, "a", COLD_POLICY, force=True, dedup_threshold=0.1)
    assert report.merged == [] and {first.id, second.id} <= live_ids(e)


def test_a_pinned_cold_memory_is_never_folded():
    e, clock = make_engine()
    pinned = cold(e, "Walked Pochi in the park.", kind="diary", pinned=True)
    clock.t += 60
    other = cold(e, "Walked Pochi in the park after lunch.", kind="diary")
    report = maintain_cold(e, "a", COLD_POLICY, force=True, dedup_threshold=0.1)
    assert report.merged == [] and {pinned.id, other.id} <= live_ids(e)
