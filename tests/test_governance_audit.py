"""Audit: counts, hot entries with plans, duplicates, stale, contradictions, model state,
the governance log and its JSON export; and that the audit writes nothing."""

import dataclasses
import json

import pytest

from omoide.engine import Journal, MemoryEngine
from omoide.errors import OmoideError
from omoide.governance.audit import audit
from omoide.governance.ingest import ingest
from omoide.governance.log import AuditLog
from omoide.governance.tiers import TierPolicy, promote, rebalance
from tests.test_engine_embedder import HashingEmbedder

DAY = 86_400.0
T0 = 1_700_000_000.0


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        return self.t


@pytest.fixture
def setup():
    clock, journal, log = Clock(), Journal(), AuditLog()
    e = MemoryEngine(HashingEmbedder(64), clock=clock, listeners=[journal])
    ingest(e, "a", ["I prefer TypeScript. We'll use Postgres for this project. "
                    "I always commit before pushing. I don't like Python."], log=log)
    clock.t += DAY
    ingest(e, "a", ["I love Python now"], log=log)
    now, clock.t = clock.t, T0 - 100 * DAY  # two notes written 100 days ago
    e.remember("a", "We walked along the river", kind="diary", importance=0.2)
    clock.t += 60
    e.remember("a", "We walked along the river.", kind="diary", importance=0.2)
    clock.t = now
    return e, clock, journal, log


def test_counts_and_sections(setup):
    e, clock, _, log = setup
    report = audit(e, "a", log=log, stale_days=30)
    assert report.counts == {
        "live": 6, "trashed": 1,
        "by_kind": {"decision": 1, "diary": 2, "pattern": 1, "preference": 2},
        "by_type": {"episodic": 3, "factual": 3},
        "by_tier": {"cold": 3, "hot": 3},
    }
    assert report.hot_state == "under soft" and report.budget_chars == 5000
    assert report.cold == {"entries": 3, "soft": 6000, "hard": 10000, "state": "under soft"}
    small = TierPolicy(cold_soft_entries=2, cold_hard_entries=3)
    assert audit(e, "a", policy=small).cold["state"] == "above soft"
    smaller = TierPolicy(cold_soft_entries=1, cold_hard_entries=2)
    assert audit(e, "a", policy=smaller).cold["state"] == "above hard"
    assert {h.kind for h in report.hot} == {"preference", "pattern"}
    assert [h.plan for h in report.hot].count("next to sink") == 1
    assert all(h.age_days >= 0 and h.reason for h in report.hot)
    [python] = report.superseded  # "I love Python now" replaced "I don't like Python"
    assert python["old"]["text"] == "I don't like Python." and python["contradiction"] is True
    assert (python["old"]["polarity"], python["new"]["polarity"]) == ("dislike", "like")
    assert python["new"]["live"] and python["new"]["text"] == "I love Python now"
    assert "dislike -> like" in python["reason"]
    assert report.contradictions == []  # in-place history is only in data from before
    assert [d["reason"] for d in report.duplicates] == ["near-identical"]
    assert {s["kind"] for s in report.stale} == {"diary"} and len(report.stale) == 2
    assert report.summarizable == 2
    assert report.model == {"store": e.embedder.stamp, "selected": e.embedder.stamp,
                            "mismatch": False, "off_stamp_records": []}
    assert [ev["action"] for ev in report.events] == ["stored"] * 4 + ["superseded"]
    assert json.loads(report.to_json())["counts"]["live"] == 6


def test_audit_writes_nothing(setup):
    e, _, journal, _ = setup
    before = ([m.to_dict() for m in e.memories("a")], len(journal.changes))
    audit(e, "a")
    assert ([m.to_dict() for m in e.memories("a")], len(journal.changes)) == before


@pytest.mark.parametrize(("budget", "state", "n_sinking"),
                         [(150, "above soft", 1), (130, "above hard", 2), (200, "under soft", 0)])
def test_plans_follow_the_rebalance_rule(setup, budget, state, n_sinking):
    e, _, _, log = setup
    policy = TierPolicy(budget_chars=budget)
    report = audit(e, "a", policy=policy)
    assert report.hot_chars == 113  # three hot lines: 36 + 44 + 33
    sinking = {h.id for h in report.hot if h.plan == "sink now"}
    assert report.hot_state == state and len(sinking) == n_sinking
    moved = rebalance(e, "a", policy, log=log).moved
    assert set(moved) == sinking
    if moved:
        promote(e, "a", moved[0], pin=True)
        pinned = [h for h in audit(e, "a", policy=policy).hot if h.id == moved[0]]
        assert pinned[0].plan == "keep (pinned)" and pinned[0].value is None
        # strict JSON (no Infinity) for `audit --json` and MCP
        json.loads(json.dumps(dataclasses.asdict(audit(e, "a", policy=policy)),
                              allow_nan=False))


def test_model_mismatch_is_reported(setup):
    e, _, _, _ = setup
    e.select_embedder(HashingEmbedder(64, seed=9))
    model = audit(e, "a").model
    assert model["mismatch"] is True and model["selected"] != model["store"]


def test_unknown_character(setup):
    e, _, _, _ = setup
    with pytest.raises(OmoideError) as info:
        audit(e, "nobody")
    assert info.value.code == "UNKNOWN_CHARACTER"


def test_a_character_the_app_names_before_its_first_memory_gets_an_empty_audit(
        monkeypatch):
    """The app lists a character from its name on; its audit tab said 'Unknown character'
    until the first memory. The browser's audit of it is an empty report, and the reading
    leaves the engine without a store for it."""
    from omoide.browser import rpc, session
    from omoide.kernels import default_kernel

    s = session.Session("omoide/all-MiniLM-L6-v2", "q8")
    s.engine.kernel_factory = default_kernel()  # the worker's is WebAssembly
    monkeypatch.setattr(session, "SESSION", s)
    reply = json.loads(rpc.dispatch("audit", json.dumps({"character": "new-one"})))
    assert reply["ok"], reply
    report = reply["result"]
    assert report["character"] == "new-one" and report["hot"] == [] and report["stale"] == []
    assert report["counts"]["live"] == 0 and report["budget_chars"] > 0
    assert "new-one" not in s.engine.stores
    refused = json.loads(rpc.dispatch("audit", json.dumps({"character": " bad id"})))
    assert refused["error"]["code"] == "INVALID_CHARACTER_ID"


def test_a_character_the_app_names_before_its_first_memory_gets_empty_stats(monkeypatch):
    """Its audit was an empty report, its stats still 'No character with id'. Now empty
    counts (no model yet), no store registered; a bad id is still refused naming it."""
    from omoide.browser import rpc, session
    from omoide.kernels import default_kernel

    s = session.Session("omoide/all-MiniLM-L6-v2", "q8")
    s.engine.kernel_factory = default_kernel()  # the worker's is WebAssembly
    monkeypatch.setattr(session, "SESSION", s)
    reply = json.loads(rpc.dispatch("stats", json.dumps({"character": "new-one"})))
    assert reply["ok"], reply
    assert reply["result"] == {"character_id": "new-one", "memories": 0, "trashed": 0,
                               "model": None, "dimension": None, "model_mismatch": False,
                               "indexed_terms": 0, "by_kind": {}}
    assert "new-one" not in s.engine.stores
    refused = json.loads(rpc.dispatch("stats", json.dumps({"character": " bad id"})))
    assert refused["error"]["code"] == "INVALID_CHARACTER_ID"


def test_log_json_round_trip_and_bound():
    log = AuditLog(max_events=3)
    for i in range(5):
        log.record(T0 + i, "a" if i % 2 else "b", "merged", [f"id{i}"], f"r{i}", cosine=0.95)
    assert len(log) == 3 and [e.reason for e in log.events()] == ["r2", "r3", "r4"]
    again = AuditLog.from_json(log.to_json())
    assert again.events() == log.events()
    assert [e.reason for e in AuditLog.from_json(log.to_json("a")).events()] == ["r3"]
    with pytest.raises(ValueError):
        log.record(T0, "a", "exploded")


def test_the_governor_verbs_call_the_audit_and_summarize_functions():
    # Regression: governor.py once imported the package's re-exported function ``audit``
    # where it expected the module, so Governor.audit always raised AttributeError.
    from omoide.engine import MemoryEngine
    from omoide.governance import Governor
    from tests.test_engine_embedder import HashingEmbedder

    engine = MemoryEngine(HashingEmbedder())
    engine.remember("alice", "Alice loves green tea")
    governor = Governor(engine)
    assert governor.audit("alice").to_dict()["counts"]["live"] == 1
    assert governor.summarize("alice").to_dict()["dry_run"] is True
