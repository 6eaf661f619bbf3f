"""Hot/cold tiers: value formula, soft/hard overflow, cold-first moves, hot_context, context."""

import math

import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from omoide.governance.ingest import ingest
from omoide.governance.log import AuditLog
from omoide.governance.tiers import (
    DAY,
    TierPolicy,
    context,
    hot_context,
    hot_usage,
    line_cost,
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
