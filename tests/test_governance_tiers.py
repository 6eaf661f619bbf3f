"""Hot/cold tiers: value formula, soft/hard overflow, cold-first moves, hot_context, context."""

import dataclasses
import math

import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from omoide.governance.ingest import ingest
from omoide.governance.log import AuditLog
from omoide.governance.tiers import (
    DAY,
    TierPolicy,
    cold_count,
    context,
    hot_context,
    hot_ids,
    hot_usage,
    line_cost,
    maintain_cold,
    promote,
    rebalance,
    tier_of,
    value,
)
from tests.test_engine_embedder import HashingEmbedder

T0 = 1_700_000_000.0


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        return self.t


def make_engine(listeners=()):
    clock = Clock()
    return MemoryEngine(HashingEmbedder(32), clock=clock, listeners=listeners), clock


def hot(e, text, importance=0.5, **meta):
    return e.remember("a", text, kind="preference", importance=importance,
                      meta={"tier": "hot", **meta})


def lines_of(e):
    return {m.id for m in e.memories("a") if tier_of(m) == "hot"}


def test_value_formula():
    e, clock = make_engine()
    m = hot(e, "I like tea", importance=0.8)
    policy = TierPolicy(half_life_days=10)
    assert math.isclose(value(m, clock.t, policy), 0.6 * 0.8 + 0.25 * 1.0 + 0.15 * 0.0)
    recalled = e.recall("a", "tea")[0].memory  # recall_count 1, recalled now
    later = clock.t + 10 * DAY
    assert math.isclose(value(recalled, later, policy), 0.6 * 0.8 + 0.25 * 0.5 + 0.15 * 0.5)
    assert value(recalled, later + 30 * DAY, policy) < value(recalled, later, policy)
    assert value(hot(e, "rule", pinned=True), later, policy) == float("inf")


def test_policy_is_validated():
    with pytest.raises(OmoideError):
        TierPolicy(soft=0.3, target=0.4)
    with pytest.raises(OmoideError):
        TierPolicy(budget_chars=0)


def fill(e, n, text_len=80):
    out = []
    for i in range(n):
        out.append(hot(e, f"memory {i:03d} " + "x" * (text_len - 11), importance=i / (n * 2)))
    return out


def test_below_soft_nothing_moves():
    e, _ = make_engine()
    fill(e, 5)  # 5 * 96 chars = 480 < 600
    report = rebalance(e, "a", TierPolicy(budget_chars=1000))
    assert report.trigger == "none" and report.moved == [] and len(lines_of(e)) == 5


def test_above_soft_one_pass_moves_the_least_valuable_only():
    e, _ = make_engine()
    mems = fill(e, 7)  # 672 chars: above soft (600), below hard (800)
    log = AuditLog()
    report = rebalance(e, "a", TierPolicy(budget_chars=1000), log=log)
    assert report.trigger == "soft" and report.moved == [mems[0].id]
    assert report.before_chars == 7 * line_cost(mems[0]) and report.after_chars == 6 * 96
    moved = e.get("a", mems[0].id)
    assert tier_of(moved) == "cold" and moved.meta["cold"]["since"] == T0
    assert "soft" in moved.meta["cold"]["reason"]
    assert [ev.memory_ids for ev in log.events("a", "demoted")] == [(mems[0].id,)]


def test_above_hard_moves_until_under_target():
    e, _ = make_engine()
    mems = fill(e, 10)  # 960 chars > hard 800
    report = rebalance(e, "a", TierPolicy(budget_chars=1000))
    assert report.trigger == "hard"
    assert report.moved == [m.id for m in mems[:6]]  # 4 * 96 = 384 <= 400
    assert hot_usage(e, "a") == report.after_chars == 384
    assert len(e.memories("a")) == 10  # nothing left the store: cold is searchable
    assert {h.memory.id for h in e.recall("a", "memory 000", k=10)} >= {mems[0].id}


def test_recency_and_recall_protect_a_memory():
    e, clock = make_engine()
    policy = TierPolicy(budget_chars=1000)
    mems = fill(e, 7)
    clock.t += 60 * DAY
    for _ in range(3):
        e.recall("a", "memory 000", k=1)  # the least important one is used a lot, today
    report = rebalance(e, "a", policy)
    assert report.moved == [mems[1].id]


def test_pinned_memories_never_sink():
    e, _ = make_engine()
    mems = fill(e, 10)
    promote(e, "a", mems[0].id, pin=True)
    report = rebalance(e, "a", TierPolicy(budget_chars=1000))
    assert mems[0].id not in report.moved and tier_of(e.get("a", mems[0].id)) == "hot"


class FailOnColdFlag:
    """Vetoes the SECOND write of a move (the one that clears the hot flag)."""

    def __init__(self):
        self.armed = True

    def on_change(self, change):
        if (self.armed and change.op == "put" and change.memory is not None
                and change.memory.meta.get("tier") == "cold"):
            raise RuntimeError("disk full")


def test_a_failed_second_step_loses_nothing_and_is_finished_later():
    veto = FailOnColdFlag()
    e, _ = make_engine(listeners=[veto])
    mems = fill(e, 7)
    report = rebalance(e, "a", TierPolicy(budget_chars=1000))
    assert report.failed == "RuntimeError: disk full" and report.moved == []
    stuck = e.get("a", mems[0].id)
    assert tier_of(stuck) == "hot" and "cold" in stuck.meta  # in both tiers, never neither
    assert stuck.text in hot_context(e, "a", TierPolicy(budget_chars=1000))
    assert len(e.memories("a")) == 7
    veto.armed = False
    again = rebalance(e, "a", TierPolicy(budget_chars=1000))
    assert again.completed == [mems[0].id] and again.failed is None
    assert tier_of(e.get("a", mems[0].id)) == "cold"
    assert again.trigger == "none"  # 6 * 96 = 576 is under soft once the move is done


class FailEverything:
    def on_change(self, change):
        raise RuntimeError("read-only")


def test_a_failed_first_step_changes_nothing():
    e, _ = make_engine()
    mems = fill(e, 7)
    before = [m.to_dict() for m in e.memories("a")]
    e.add_listener(FailEverything())
    report = rebalance(e, "a", TierPolicy(budget_chars=1000))
    assert report.failed and report.moved == []
    assert [m.to_dict() for m in e.memories("a")] == before
    assert tier_of(e.get("a", mems[0].id)) == "hot"


def test_writes_are_never_refused_for_room():
    e, _ = make_engine()
    policy = TierPolicy(budget_chars=300)
    foods = ["tea", "coffee", "sushi", "ramen", "udon", "soba", "tempura", "natto", "miso",
             "curry", "pizza", "pasta"]
    for food in foods:
        report = ingest(e, "a", [f"I like {food} very much indeed"], tier_policy=policy)
        assert report.count("stored") == 1
        assert hot_usage(e, "a") <= policy.hard * policy.budget_chars
    assert len(e.memories("a")) == len(foods)


def test_hot_context_is_within_budget_and_most_valuable_first():
    e, _ = make_engine()
    low = hot(e, "I like tea", importance=0.1)
    high = hot(e, "I always write tests first", importance=0.9)
    e.remember("a", "a cold memory", kind="fact")
    text = hot_context(e, "a")
    assert text.splitlines() == [f"- [preference] {high.text}", f"- [preference] {low.text}"]
    tight = TierPolicy(budget_chars=line_cost(high) + 2)
    assert hot_context(e, "a", tight) == f"- [preference] {high.text}"
    assert hot_context(e, "nobody") == ""


def test_context_adds_recalled_cold_memories_without_repeats():
    e, _ = make_engine()
    h = hot(e, "I like green tea", importance=0.9)
    cold = e.remember("a", "We visited the tea farm in Shizuoka", kind="diary")
    e.remember("a", "The server runs on port 8080", kind="fact")
    block = context(e, "a", "tea farm", budget_chars=200, k=3)
    assert block.hot_ids == [h.id] and block.recalled_ids[0] == cold.id
    assert block.text.count("I like green tea") == 1
    assert block.chars <= 200 and len(block.text) <= 200
    small = context(e, "a", "tea farm", budget_chars=line_cost(h))
    assert small.recalled_ids == [] and small.hot_ids == [h.id]


def test_promote_moves_cold_to_hot():
    e, _ = make_engine()
    m = e.remember("a", "Never push to main", kind="fact")
    assert tier_of(m) == "cold"
    log = AuditLog()
    promoted = promote(e, "a", m.id, log=log)
    assert tier_of(promoted) == "hot" and "Never push to main" in hot_context(e, "a")
    assert log.events("a", "promoted")[0].memory_ids == (m.id,)


# -- cold tier maintenance ------------------------------------------------------------------

COLD_POLICY = TierPolicy(cold_soft_entries=4, cold_hard_entries=8, cold_recheck_entries=2)


def cold(e, text, kind="fact", key=None, importance=0.3, **meta):
    memory = e.remember("a", text, kind=kind, importance=importance,
                        meta={"tier": "cold", **meta})
    if key is None:
        return memory
    # A raw store write: remember would supersede the key's holder; several live holders of
    # one key exist only in data written before same-key supersede, which maintenance folds.
    keyed = dataclasses.replace(memory, key=key)
    e.stores["a"].put(keyed, None)
    return keyed


def live_ids(e):
    return {m.id for m in e.memories("a")}


def trash_ids(e):
    return {t.memory.id for t in e.trash("a")}


def test_cold_limits_are_validated_and_default_to_the_spec():
    assert (TierPolicy().cold_soft_entries, TierPolicy().cold_hard_entries) == (6_000, 10_000)
    with pytest.raises(OmoideError):
        TierPolicy(cold_soft_entries=10, cold_hard_entries=10)
    with pytest.raises(OmoideError):
        TierPolicy(cold_soft_entries=0)
    with pytest.raises(OmoideError):
        TierPolicy(cold_recheck_entries=-1)


def test_under_soft_maintenance_does_nothing():
    e, _ = make_engine()
    for i in range(4):
        cold(e, f"distinct note number {i} about topic {i * 7}")
    report = maintain_cold(e, "a", COLD_POLICY)
    assert report.trigger == "none" and report.passes == 0 and e.trash("a") == []


def test_superseded_entries_go_to_the_trash_with_their_polarity_in_history():
    e, clock = make_engine()
    old = cold(e, "I like Python", kind="preference", key="preference:python",
               polarity="like", importance=0.9)
    clock.t += DAY
    new = cold(e, "I don't like Python any more", kind="preference",
               key="preference:python", polarity="dislike", importance=0.4)
    older = cold(e, "We'll use MySQL", kind="decision", key="decision:db")
    clock.t += DAY
    newer = cold(e, "We'll use Postgres", kind="decision", key="decision:db")
    for i in range(3):
        cold(e, f"unrelated fact {i}: the {['cat', 'dog', 'bird'][i]} sleeps at {i} pm")
    log = AuditLog()
    report = maintain_cold(e, "a", COLD_POLICY, log=log)  # 7 cold > soft 4: one pass
    assert report.trigger == "soft" and report.passes == 1 and report.failed is None
    assert {(f["kept"], f["trashed"]) for f in report.superseded} == {
        (new.id, old.id), (newer.id, older.id)}
    assert trash_ids(e) == {old.id, older.id} and report.after == 5
    kept = e.get("a", new.id)
    assert kept.meta["polarity"] == "dislike" and kept.text == new.text
    assert kept.importance == 0.9 and kept.meta["merges"] == 1
    assert [(h["polarity"], h["text"]) for h in kept.meta["history"]] == [
        ("like", "I like Python")]
    assert kept.meta["folded"][0]["id"] == old.id
    assert "history" not in e.get("a", newer.id).meta  # content replaced, same polarity
    reasons = {f["trashed"]: f["reason"] for f in report.superseded}
    assert reasons == {old.id: "polarity like -> dislike", older.id: "content replaced"}
    assert {ev.memory_ids[0] for ev in log.events("a", "superseded")} == {old.id, older.id}
    assert log.events("a", "cold_maintenance")[0].memory_ids == tuple(report.trashed)
    # trashed, not deleted: restorable
    e.restore("a", old.id)
    assert old.id in live_ids(e)


def test_near_identical_duplicates_are_merged_and_a_hot_twin_survives():
    e, clock = make_engine()
    a = cold(e, "We walked along the river and talked about books", kind="diary",
             importance=0.7)
    e.recall("a", "river books", k=1)
    clock.t += 60  # the same day (two days' notes stay two: test_governance_cold_folds)
    b = cold(e, "We walked along the river and talked about books.", kind="diary",
             importance=0.2)
    h = e.remember("a", "I always stretch before running", kind="pattern",
                   meta={"tier": "hot"})
    c = cold(e, "I always stretch before running!", kind="pattern")
    other_kind = cold(e, "We walked along the river and talked about books!", kind="fact")
    for i in range(2):
        cold(e, f"completely different {i}: the server {i} reboots nightly at {i + 2} am")
    report = maintain_cold(e, "a", COLD_POLICY, dedup_threshold=0.9)
    merged = {(f["kept"], f["trashed"]) for f in report.merged}
    assert merged == {(b.id, a.id), (h.id, c.id)}  # newer survives; hot survives
    assert all(f["cosine"] >= 0.9 for f in report.merged)
    assert trash_ids(e) == {a.id, c.id} and other_kind.id in live_ids(e)
    kept = e.get("a", b.id)
    assert kept.importance == 0.7 and kept.recall_count == 1 and kept.meta["merges"] == 1
    assert tier_of(e.get("a", h.id)) == "hot"


def test_hard_limit_runs_passes_until_under_soft():
    e, clock = make_engine()
    # a chain: each pass folds what is left of 10 same-key entries; under hard after one
    for i in range(10):
        clock.t += 1
        cold(e, f"version {i} of the deploy rule", kind="fact", key="fact:deploy_rule")
    report = maintain_cold(e, "a", COLD_POLICY)
    assert report.trigger == "hard" and report.before == 10 and report.after == 1
    assert len(report.superseded) == 9 and len(trash_ids(e)) == 9
    assert report.passes == 1  # at or under soft after the first pass: done


def distinct(e, n):
    return [cold(e, f"distinct {i}: {'abcdefghij'[i] * 5} {i * 13} unrelated words here")
            for i in range(n)]


def test_hard_limit_passes_again_after_progress_and_stops_when_nothing_is_left():
    e, clock = make_engine()
    distinct(e, 10)
    report = maintain_cold(e, "a", COLD_POLICY)  # nothing to fold: one pass, all kept
    assert report.trigger == "hard" and report.passes == 1 and report.after == 10
    assert e.trash("a") == []
    old = cold(e, "rule one", kind="fact", key="fact:rule")
    clock.t += 1
    cold(e, "rule two", kind="fact", key="fact:rule")
    report = maintain_cold(e, "a", COLD_POLICY)  # 12 > 8: pass, 11 > soft: pass, no progress
    assert report.passes == 2 and report.trashed == [old.id] and report.after == 11


def test_soft_limit_runs_exactly_one_pass():
    e, clock = make_engine()
    distinct(e, 4)
    old = cold(e, "rule one", kind="fact", key="fact:rule")
    clock.t += 1
    cold(e, "rule two", kind="fact", key="fact:rule")
    report = maintain_cold(e, "a", COLD_POLICY)
    assert report.trigger == "soft" and report.passes == 1 and report.trashed == [old.id]


def test_hot_entries_are_never_trashed_by_maintenance():
    e, clock = make_engine()
    old = e.remember("a", "I like tea", kind="preference", key="preference:tea",
                     meta={"tier": "hot"})
    clock.t += 1
    cold(e, "I love tea", kind="preference", key="preference:tea")
    for i in range(4):
        cold(e, f"filler {i}: {i * 17} different words about {['x', 'y', 'z', 'w'][i]}")
    report = maintain_cold(e, "a", COLD_POLICY)
    assert report.superseded == [] and report.skipped[0]["id"] == old.id
    assert old.id in live_ids(e) and e.trash("a") == []


def test_forced_pass_runs_under_soft():
    e, clock = make_engine()
    old = cold(e, "v1", kind="fact", key="fact:x")
    clock.t += 1
    cold(e, "v2", kind="fact", key="fact:x")
    assert maintain_cold(e, "a", COLD_POLICY).trigger == "none"
    report = maintain_cold(e, "a", COLD_POLICY, force=True)
    assert report.trigger == "forced" and report.trashed == [old.id]


def test_a_vetoed_trash_move_loses_nothing():
    e, clock = make_engine()
    old = cold(e, "v1 of the rule", kind="fact", key="fact:rule")
    clock.t += 1
    new = cold(e, "v2 of the rule", kind="fact", key="fact:rule")
    for i in range(4):
        cold(e, f"filler {i}: {i * 17} different words about {['x', 'y', 'z', 'w'][i]}")

    class VetoTrash:
        def on_change(self, change):
            if change.op != "put":
                raise RuntimeError("quota")

    e.add_listener(VetoTrash())
    report = maintain_cold(e, "a", COLD_POLICY)
    assert report.failed == "RuntimeError: quota" and report.trashed == []
    assert {old.id, new.id} <= live_ids(e) and e.trash("a") == []
    assert e.get("a", new.id).meta["folded"][0]["text"] == "v1 of the rule"  # in both


def test_rebalance_runs_maintenance_when_due_and_not_again_until_the_tier_grows():
    e, clock = make_engine()
    log = AuditLog()
    for i in range(5):
        clock.t += 1
        cold(e, f"rule text {i}", kind="fact", key="fact:rule")
    report = rebalance(e, "a", COLD_POLICY, log=log)
    assert report.cold is not None and report.cold.trigger == "soft"
    assert len(report.cold.superseded) == 4 and len(live_ids(e)) == 1
    for i in range(4):
        cold(e, f"another distinct memory {i} {'pqrs'[i] * 4} {i * 31}")
    assert rebalance(e, "a", COLD_POLICY).cold is not None  # 5 > soft, grew by 4 >= 2
    assert rebalance(e, "a", COLD_POLICY).cold is None  # nothing new: not rescanned
    assert len(log.events("a", "cold_maintenance")) == 1


def test_ingest_triggers_cold_maintenance_through_rebalance():
    e, clock = make_engine()
    policy = TierPolicy(hot_kinds=(), hot_importance=1.1, cold_soft_entries=2,
                        cold_hard_entries=3, cold_recheck_entries=0)
    first = cold(e, "We'll use Postgres", kind="decision", key="decision:postgres").id
    clock.t += 1
    # two live records on one key (data from before same-key supersede): the older goes
    second = cold(e, "We will use Postgres", kind="decision", key="decision:postgres").id
    report = ingest(e, "a", ["I decided to learn Rust"], tier_policy=policy)
    assert report.rebalance.cold is not None
    assert report.rebalance.cold.trashed == [first]
    assert trash_ids(e) == {first} and second in live_ids(e)


def test_the_near_identical_scan_is_incremental_after_the_first_maintenance():
    e, clock = make_engine()
    old_a = cold(e, "We walked along the river and talked about books", kind="diary")
    clock.t += 1
    old_b = cold(e, "We walked along the river and talked about books.", kind="diary")
    distinct(e, 4)
    clock.t += 1
    first = maintain_cold(e, "a", COLD_POLICY, dedup_threshold=0.999)  # full scan, no merge
    assert first.trashed == []
    clock.t += 1
    new_a = cold(e, "The cat knocked the blue vase off the shelf", kind="diary")
    clock.t += 1
    new_b = cold(e, "The cat knocked the blue vase off the shelf!", kind="diary")
    second = maintain_cold(e, "a", COLD_POLICY, dedup_threshold=0.9)
    assert {(f["kept"], f["trashed"]) for f in second.merged} == {(new_b.id, new_a.id)}
    assert {old_a.id, old_b.id} <= live_ids(e)  # unchanged since the last pass: not rescanned
    forced = maintain_cold(e, "a", COLD_POLICY, dedup_threshold=0.9, force=True)
    assert {(f["kept"], f["trashed"]) for f in forced.merged} == {(old_b.id, old_a.id)}


def test_the_tier_index_follows_every_write_and_a_model_swap():
    e, clock = make_engine()
    a = hot(e, "I like tea")
    b = cold(e, "a cold fact")
    store = e.stores["a"]
    assert hot_ids(store) == {a.id} and cold_count(e, "a") == 1
    e.update("a", b.id, meta={"tier": "hot"})
    assert hot_ids(e.stores["a"]) == {a.id, b.id} and cold_count(e, "a") == 0
    e.forget("a", a.id)
    assert hot_ids(store) == {b.id}
    e.restore("a", a.id)
    assert hot_ids(store) == {a.id, b.id}
    e.revectorize("a", HashingEmbedder(32, seed=3))
    assert hot_ids(e.stores["a"]) == {a.id, b.id} and cold_count(e, "a") == 0
