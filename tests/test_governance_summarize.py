"""Summarization: candidate rules, dry-run preview, apply (summary first, sources to trash,
revivable), extractive budget, LLM summary and its fallback."""

import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from omoide.governance.llm import ChatClient, MemoryLLM
from omoide.governance.log import AuditLog
from omoide.governance.summarize import estimate_tokens, extractive_summary, summarize
from tests.test_engine_embedder import HashingEmbedder
from tests.test_governance_llm import server  # noqa: F401  (the loopback chat endpoint)

DAY = 86_400.0
NOW = 1_700_000_000.0  # 2023-11-14 22:13 UTC
OLD = (NOW // DAY) * DAY - 60 * DAY + 600  # 2023-09-15 00:10 UTC


class Clock:
    def __init__(self):
        self.t = NOW

    def __call__(self):
        return self.t


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    for i, text in enumerate(["We chose SQLite for the prototype", "Walked to the station",
                              "Ate ramen near the office"]):
        e.remember("a", text, kind="diary" if i else "decision", importance=0.3,
                   at=OLD + 3600 * i)
    for i, text in enumerate(["Fixed the login bug", "Talked about holidays"]):
        e.remember("a", text, kind="diary", importance=0.2, at=OLD + DAY + 60 * i)
    # kept out, each for its own reason:
    e.remember("a", "Alone on its day", kind="diary", importance=0.1, at=OLD + 5 * DAY)
    e.remember("a", "A precious memory", kind="diary", importance=0.9, at=OLD)
    e.remember("a", "Something from yesterday", kind="diary", importance=0.1, at=NOW - DAY)
    e.remember("a", "A hot diary line", kind="diary", importance=0.1, at=OLD,
               meta={"tier": "hot"})
    e.remember("a", "I like tea", kind="preference", importance=0.1, at=OLD)
    e.remember("a", "Old summary", kind="summary", importance=0.1, at=OLD)
    return e


def test_dry_run_previews_and_changes_nothing(engine):
    before = [m.to_dict() for m in engine.memories("a")]
    report = summarize(engine, "a", older_than_days=30)
    assert report.dry_run and [m.to_dict() for m in engine.memories("a")] == before
    assert [g.group for g in report.groups] == ["day:2023-09-15", "day:2023-09-16"]
    first = report.groups[0]
    assert first.text == (
        "Summary of 2023-09-15 (3 memories):\n"
        "[decision] We chose SQLite for the prototype\n"
        "[diary] Walked to the station\n"
        "[diary] Ate ramen near the office"
    )
    assert first.method == "extractive" and first.summary_id is None
    assert report.candidates == 5
    assert report.tokens_before == sum(
        estimate_tokens(engine.get("a", i).text) for g in report.groups for i in g.source_ids)


def test_apply_writes_summaries_and_trashes_sources_revivably(engine):
    log = AuditLog()
    live_before = {m.id for m in engine.memories("a")}
    report = summarize(engine, "a", older_than_days=30, dry_run=False, log=log)
    sources = {i for g in report.groups for i in g.source_ids}
    summaries = [engine.get("a", g.summary_id) for g in report.groups]
    assert all(s.kind == "summary" and s.type == "episodic" for s in summaries)
    assert summaries[0].meta["sources"] == report.groups[0].source_ids
    assert summaries[0].meta["tier"] == "cold" and summaries[0].importance == 0.3
    assert {e.memory.id for e in engine.trash("a")} == sources
    assert {m.id for m in engine.memories("a")} == (live_before - sources) | {
        s.id for s in summaries}
    restored = engine.restore("a", report.groups[0].source_ids[0])
    assert restored.text == "We chose SQLite for the prototype"
    assert [ev.action for ev in log.events("a")] == ["summarized", "summarized"]
    # summaries are never summarized again, and the rest is not a group of two
    assert summarize(engine, "a", older_than_days=0).groups == []


def test_session_grouping(engine):
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    for i in range(4):
        e.remember("a", f"session note {i}", kind="diary", importance=0.2,
                   at=OLD + i * DAY, meta={"session": "trip" if i % 2 else "work"})
    by_session = summarize(e, "a", group_by="session")
    assert [(g.group, len(g.source_ids)) for g in by_session.groups] == [
        ("session:trip", 2), ("session:work", 2)]
    assert summarize(e, "a", group_by="day").groups == []  # one per day


def test_extractive_summary_respects_the_token_budget():
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    members = [e.remember("a", f"Line number {i} " + "word " * 20, kind="diary",
                          importance=i / 40, at=OLD + i) for i in range(20)]
    text = extractive_summary("day:2023-09-15", members, token_budget=100)
    assert estimate_tokens(text) <= 100 + estimate_tokens("(+99 more)")
    kept = [ln for ln in text.splitlines()[1:] if ln.startswith("[diary]")]
    assert 0 < len(kept) < 20 and text.splitlines()[-1] == f"(+{20 - len(kept)} more)"
    assert "Line number 19 " in text and "Line number 0 " not in text  # important survive
    long = e.remember("a", "x" * 1000, kind="diary", at=OLD)
    assert max(len(ln) for ln in extractive_summary("day:d", [long], 500).splitlines()) <= 168


def test_japanese_tokens_are_estimated_per_character():
    assert estimate_tokens("abcd") == 1 and estimate_tokens("お茶が好き") == 5


def test_arguments_are_validated(engine):
    with pytest.raises(OmoideError):
        summarize(engine, "a", group_by="week")
    with pytest.raises(OmoideError):
        summarize(engine, "a", token_budget=5)


def test_llm_summary_and_its_fallback(engine, server):  # noqa: F811
    llm = MemoryLLM(ChatClient(server.base_url, "m", timeout=2), character_name="Mika")
    report = summarize(engine, "a", llm=llm)
    assert {g.method for g in report.groups} == {"llm"} and report.degraded is None
    assert report.groups[0].text == "Summary: several decisions about the database."
    assert "Summarize" in server.requests[0][2]["messages"][0]["content"]
    server.mode = "500"
    fallback = summarize(engine, "a", llm=llm, dry_run=False)
    assert fallback.degraded.startswith("REMOTE_ERROR")
    assert {g.method for g in fallback.groups} == {"extractive"}
    assert all(g.summary_id for g in fallback.groups)


class FailOnTrash:
    def __init__(self):
        self.trashes = 0

    def on_change(self, change):
        if change.op == "trash":
            self.trashes += 1
            if self.trashes == 2:
                raise RuntimeError("quota")


def test_a_failure_while_trashing_keeps_the_remaining_sources_live(engine):
    engine.add_listener(FailOnTrash())
    report = summarize(engine, "a", dry_run=False)
    first = report.groups[0]
    assert first.summary_id and len(first.trashed) == 1 and "quota" in first.error
    for memory_id in first.source_ids[1:]:
        assert engine.get("a", memory_id)  # still live, nothing lost
