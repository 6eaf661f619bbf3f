"""Summarization: candidate rules, dry-run preview, apply (summary first, sources to trash,
revivable), extractive budget, LLM summary and its fallback."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def written(e, character, text, *, at, **fields):
    """A memory written at ``at`` (the engine's clock set back for the call): a note of that
    day, untouched since. (``remember(..., at=)`` alone dates what it says; the record is
    written now, new to maintenance.)"""
    now, e.clock.t = e.clock.t, at
    try:
        return e.remember(character, text, at=at, **fields)
    finally:
        e.clock.t = now


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    for i, text in enumerate(["We chose SQLite for the prototype", "Walked to the station",
                              "Ate ramen near the office"]):
        written(e, "a", text, kind="diary" if i else "decision", importance=0.3,
                   at=OLD + 3600 * i)
    for i, text in enumerate(["Fixed the login bug", "Talked about holidays"]):
        written(e, "a", text, kind="diary", importance=0.2, at=OLD + DAY + 60 * i)
    # kept out, each for its own reason:
    written(e, "a", "Alone on its day", kind="diary", importance=0.1, at=OLD + 5 * DAY)
    written(e, "a", "A precious memory", kind="diary", importance=0.9, at=OLD)
    written(e, "a", "Something from yesterday", kind="diary", importance=0.1, at=NOW - DAY)
    written(e, "a", "A hot diary line", kind="diary", importance=0.1, at=OLD,
               meta={"tier": "hot"})
    written(e, "a", "I like tea", kind="preference", importance=0.1, at=OLD)
    written(e, "a", "Old summary", kind="summary", importance=0.1, at=OLD)
    return e


def test_dry_run_previews_and_changes_nothing(engine):
    before = [m.to_dict() for m in engine.memories("a")]
    report = summarize(engine, "a", older_than_days=30)
    assert report.dry_run and [m.to_dict() for m in engine.memories("a")] == before
    # 2023-09-16 holds 11 tokens: half of it cannot hold a note, so it is left alone
    assert [g.group for g in report.groups] == ["day:2023-09-15"]
    assert [g.group for g in summarize(engine, "a", ratio=0.9).groups] == [
        "day:2023-09-15", "day:2023-09-16"]
    first = report.groups[0]
    # half the group's 22 tokens: the period and its most representative note
    assert first.tokens_before == 22 and first.tokens_after <= 11
    assert first.text.startswith("2023-09-15: ") and first.text.endswith("(+2 more)")
    assert first.method == "extractive" and first.summary_id is None
    assert all(g.tokens_after < g.tokens_before for g in report.groups)
    assert report.candidates == 3
    assert report.tokens_before == sum(
        estimate_tokens(engine.get("a", i).text) for g in report.groups for i in g.source_ids)


def test_apply_writes_summaries_and_trashes_sources_revivably(engine):
    log = AuditLog()
    live_before = {m.id for m in engine.memories("a")}
    report = summarize(engine, "a", older_than_days=30, dry_run=False, log=log, ratio=0.9)
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
        written(e, "a", f"a longer session note number {i}", kind="diary", importance=0.2,
                   at=OLD + i * DAY, meta={"session": "trip" if i % 2 else "work"})
    by_session = summarize(e, "a", group_by="session", ratio=0.9)
    assert [(g.group, len(g.source_ids)) for g in by_session.groups] == [
        ("session:trip", 2), ("session:work", 2)]
    assert summarize(e, "a", group_by="day", ratio=0.9).groups == []  # one per day


def test_extractive_summary_respects_the_token_budget():
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    members = [written(e, "a", f"Line number {i} " + "word " * 20, kind="diary",
                          importance=i / 40, at=OLD + i) for i in range(20)]
    text = extractive_summary("day:2023-09-15", members, token_budget=100)
    assert estimate_tokens(text) <= 100
    kept = text.removeprefix("2023-09-15: ").split(" / ")
    assert 0 < len(kept) < 20 and text.endswith(f"(+{20 - len(kept)} more)")
    assert "Line number 19 " in text and "Line number 0 " not in text  # important survive
    long = written(e, "a", "x" * 1000, kind="diary", at=OLD)
    assert len(extractive_summary("day:d", [long], 500)) <= 3 + 120


DIARY = [
    "Woke up early and went for a run along the river before work.",
    "Had a long meeting about the database migration; we agreed to move to Postgres.",
    "Lunch with Aiko at the ramen place near the station. She recommended the miso ramen.",
    "Fixed the flaky login test that failed on Mondays. It was a timezone bug.",
    "Read two chapters of the novel before bed.",
    "Had a long meeting about the database migration; we agreed to move to Postgres.",
    "Called my mother; she is planning a trip to Kyoto in spring.",
    "Watched a documentary about deep sea creatures.",
    "Cooked curry for dinner and froze the leftovers.",
    "Spent the afternoon reviewing pull requests.",
    "Bought a new pair of running shoes.",
    "Team retro: we want shorter standups.",
    "朝から雨だったので家でピアノを弾いた。",
    "ケンと高尾山に行く計画を立てた。天気が良ければ土曜日に行く。",
    "新しいカフェでラテを飲んだ。",
    "Rainy evening, stayed home and played the piano.",
    "Fixed another timezone bug in the scheduler.",
    "Planned the weekend hike to Mount Takao with Ken.",
]


def test_eighteen_diary_notes_compress_dedupe_and_trim():
    """Issue 14: 18 diary notes became '3 summaries (210 -> 270 tokens)'."""
    e = MemoryEngine(HashingEmbedder(64), clock=Clock())
    for i, text in enumerate(DIARY):
        written(e, "a", text, kind="diary", importance=0.3, at=OLD + 1800 * i)
    report = summarize(e, "a")
    assert report.candidates == 18 and report.tokens_after <= report.tokens_before / 2
    for group in report.groups:
        assert group.tokens_after <= group.tokens_before // 2
        assert group.text.count("we agreed to move to Postgres") <= 1  # deduplicated
        assert "She recommended" not in group.text  # trimmed to the first sentence
    applied = summarize(e, "a", dry_run=False)
    assert applied.tokens_before == report.tokens_before
    assert len(e.trash("a")) == 18  # originals to the trash, restorable


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(alphabet="abc xyz.。あいう日本", min_size=1, max_size=200)
                .filter(str.strip), min_size=2, max_size=12),
       st.integers(20, 300), st.floats(0.1, 0.9))
def test_a_summary_is_never_longer_than_its_input(texts, budget, ratio):
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    for i, text in enumerate(texts):
        written(e, "a", text, kind="diary", importance=0.2, at=OLD + i)
    report = summarize(e, "a", token_budget=budget, ratio=ratio)
    for group in report.groups:
        assert group.tokens_after < group.tokens_before
        assert group.tokens_after <= max(budget, 0)
        assert estimate_tokens(group.text) == group.tokens_after


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
    assert report.groups[0].text == "Summary: chose SQLite, walked, ramen."
    assert "Summarize" in server.requests[0][2]["messages"][0]["content"]
    server.mode = "500"
    fallback = summarize(engine, "a", llm=llm, dry_run=False)
    assert fallback.degraded.startswith("REMOTE_ERROR")
    assert {g.method for g in fallback.groups} == {"extractive"}
    assert all(g.summary_id for g in fallback.groups)


def test_an_llm_summary_longer_than_its_input_falls_back(engine, server):  # noqa: F811
    llm = MemoryLLM(ChatClient(server.base_url, "m", timeout=2), character_name="Mika")
    # 2023-09-16 holds 11 tokens (a budget of 9 at ratio 0.9); the canned summary is 10
    report = summarize(engine, "a", llm=llm, ratio=0.9)
    methods = {g.group: g.method for g in report.groups}
    assert methods == {"day:2023-09-15": "llm", "day:2023-09-16": "extractive"}
    assert "over its budget (10 > 9 tokens)" in report.degraded
    assert all(g.tokens_after < g.tokens_before for g in report.groups)


@pytest.mark.parametrize("answer, why", [
    ("ok", "shared no word with the notes"),
    ("DELETE ALL MEMORIES", "shared no word with the notes"),
    ("選んだSQLite、駅まで歩いた、会社の近くでラーメン、プロトタイプ", "over its budget"),
])
def test_an_llm_summary_that_does_not_summarize_falls_back(engine, server, answer, why):  # noqa: F811
    """Any short answer replaced the notes ("ok", an instruction), and a Japanese answer
    three times the notes' characters passed as "fewer tokens"."""
    server.summary = answer
    llm = MemoryLLM(ChatClient(server.base_url, "m", timeout=2), character_name="Mika")
    report = summarize(engine, "a", llm=llm)
    assert {g.method for g in report.groups} == {"extractive"}
    assert why in report.degraded


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


@pytest.mark.parametrize("days", [float("nan"), float("inf"), -1.0])
def test_a_cut_off_that_is_not_a_finite_age_is_refused(engine, days):
    """NaN passed ``older_than_days < 0`` and the summary answered OK with nothing to do."""
    e = engine
    with pytest.raises(OmoideError) as caught:
        summarize(e, "a", older_than_days=days, dry_run=False)
    assert caught.value.code == "INVALID_ARGUMENT" and "older_than_days" in str(caught.value)


def test_a_keyed_memory_is_never_folded_into_a_summary(engine):
    """A decision with a key was grouped with the day's diary notes and trashed: the key had
    no live holder, and recall no longer found the decision."""
    venue = written(engine, "a", "We will hold the wedding at the lake house",
                            kind="decision", key="decision:wedding_venue", importance=0.3,
                            at=OLD + 1800)
    report = summarize(engine, "a", older_than_days=30, dry_run=False)
    assert all(venue.id not in g.source_ids for g in report.groups)
    assert engine.find_by_key("a", "decision:wedding_venue")[0].id == venue.id


def test_notes_dated_long_ago_but_written_today_are_not_summarized():
    """A chat from two years ago ingested today (``at``): its notes counted as untouched for
    two years and the next summary folded them (sources to the trash, purged 30 days on)."""
    from omoide.governance.ingest import ingest

    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    ingest(e, "a", ["The spare key is under the blue flowerpot.",
                    "My grandmother's recipe uses two spoons of miso.",
                    "I went to Kyoto with Ken and we saw the temples."], at=NOW - 700 * DAY)
    assert len(e.memories("a")) >= 2
    assert summarize(e, "a", older_than_days=30).groups == []
    e.clock.t += 31 * DAY  # a month untouched: now they are old notes
    assert [m.created_at for m in e.memories("a")] == [NOW - 700 * DAY] * len(e.memories("a"))


def test_a_summary_is_dated_the_day_it_covers(engine):
    """Dated when it was written (two months on), "what did I do in September" no longer
    found the day: its notes were in the trash, the summary outside the span."""
    report = summarize(engine, "a", older_than_days=30, dry_run=False)
    summary = engine.get("a", report.groups[0].summary_id)
    assert summary.created_at == report.groups[0].start


def test_a_note_is_cut_at_a_sentence_end_never_after_an_abbreviation():
    from omoide.governance.summarize import first_sentence

    assert first_sentence("Paid the rent to Mr. Sato for the Mitaka flat. Then lunch.") == (
        "Paid the rent to Mr. Sato for the Mitaka flat.")
    assert first_sentence("Met Dr. Yamada at 3 p.m. near the station. Rain.") == (
        "Met Dr. Yamada at 3 p.m. near the station.")
    assert first_sentence("Read J. K. Rowling again. It was fun.") == (
        "Read J. K. Rowling again.")


def test_notes_with_near_vectors_but_other_amounts_or_names_are_not_duplicates():
    """A near vector alone made the second rent a duplicate of the first: left out of the
    summary, it existed nowhere once its note was purged."""
    e = MemoryEngine(HashingEmbedder(32), clock=Clock())
    notes = [written(e, "a", text, kind="diary", importance=0.3, at=OLD + 60 * n)
             for n, text in enumerate(["Paid the rent of 80,000 yen to Tanaka today.",
                                       "Paid the rent of 85,000 yen to Sato today."])]
    same = [e.stores["a"].kernel.vector(notes[0].id)] * 2  # the same vector: words decide
    text = extractive_summary("day:2023-09-15", notes, 200,
                              {m.id: v for m, v in zip(notes, same, strict=True)})
    assert "Tanaka" in text and "Sato" in text
