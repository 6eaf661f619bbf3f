"""``ingest``: the report (stored / merged / skipped and why), dry run, vetoed writes."""

import itertools

import pytest

from omoide.engine import Journal, MemoryEngine
from omoide.errors import OmoideError
from omoide.governance.ingest import ingest
from omoide.governance.log import AuditLog
from tests.test_engine_embedder import HashingEmbedder

DESIGN = ("I prefer TypeScript. We'll use Postgres for this project. "
          "I always commit before pushing. I don't like Python.")


def make_engine(**kw):
    counter = itertools.count()
    return MemoryEngine(HashingEmbedder(64), clock=lambda: 1_700_000_000.0 + next(counter), **kw)


def test_report_says_what_happened_to_every_message():
    e, log = make_engine(), AuditLog()
    report = ingest(e, "mika", [DESIGN, "nice weather", {"role": "assistant", "content": "ok"},
                                "I prefer TypeScript"], log=log)
    assert report.path == "pattern" and not report.dry_run and report.degraded is None
    assert [(i.action, i.source, i.key) for i in report.items] == [
        ("stored", 0, "preference:typescript"),
        ("stored", 0, "decision:postgres_for_this_project"),
        ("stored", 0, "pattern:commit_before_pushing"),
        ("stored", 0, "preference:python"),
        ("skipped", 1, None),
        ("merged", 3, "preference:typescript"),
    ]
    assert report.items[4].reason == "no preference, decision, habit or fact"
    assert report.count("stored") == 4 and len(report.merged) == 1 and len(report.skipped) == 1
    memories = {m.key: m for m in e.memories("mika")}
    assert set(memories) == {i.key for i in report.stored}
    ts = memories["preference:typescript"]
    assert ts.kind == "preference" and ts.type == "factual" and ts.meta["polarity"] == "like"
    assert memories["decision:postgres_for_this_project"].type == "episodic"
    assert memories["preference:python"].meta["polarity"] == "dislike"
    assert [ev.action for ev in log.events("mika")] == ["stored"] * 4 + ["merged"]
    as_dict = report.to_dict()
    assert as_dict["items"][0]["key"] == "preference:typescript"


def test_dry_run_is_the_plan_and_writes_nothing():
    journal = Journal()
    e = make_engine(listeners=[journal])
    ingest(e, "mika", ["I like tea"])
    writes = len(journal.changes)
    preview = ingest(e, "mika", [DESIGN, "I love tea", "I like tea"], dry_run=True)
    assert len(journal.changes) == writes and len(e.memories("mika")) == 1
    real = ingest(e, "mika", [DESIGN, "I love tea", "I like tea"])
    strip = lambda r: [(i.action, i.key, i.reason, i.tier) for i in r.items]  # noqa: E731
    assert strip(preview) == strip(real)
    assert preview.rebalance is None and real.rebalance is not None


def test_dry_run_for_a_new_character_creates_nothing():
    e = make_engine()
    report = ingest(e, "new", [DESIGN], dry_run=True)
    assert report.count("stored") == 4 and e.characters() == []


def test_tiers_are_assigned_at_write():
    e = make_engine()
    ingest(e, "mika", [DESIGN])
    tiers = {m.key: m.meta["tier"] for m in e.memories("mika")}
    assert tiers == {
        "preference:typescript": "hot", "pattern:commit_before_pushing": "hot",
        "preference:python": "hot", "decision:postgres_for_this_project": "cold",
    }


def test_extra_meta_goes_on_new_memories():
    e = make_engine()
    ingest(e, "mika", ["I like tea"], meta={"session": "s1"})
    assert e.memories("mika")[0].meta["session"] == "s1"


class Refuse:
    def __init__(self, text):
        self.text = text

    def on_change(self, change):
        if change.op == "put" and change.memory.text == self.text:
            raise RuntimeError("quota full")


def test_a_vetoed_write_is_reported_with_its_text_and_the_rest_is_written():
    e = make_engine(listeners=[Refuse("I hate YAML.")])
    log = AuditLog()
    report = ingest(e, "mika", ["I like tea. I hate YAML. I like TOML."], log=log)
    failed = [i for i in report.items if i.action == "failed"]
    assert [(i.text, i.reason) for i in failed] == [
        ("I hate YAML.", "write refused (RuntimeError: quota full)")]
    assert sorted(m.key for m in e.memories("mika")) == ["preference:tea", "preference:toml"]
    assert len(log.events("mika", "write_failed")) == 1


def test_model_mismatch_refuses_before_writing():
    e = make_engine()
    ingest(e, "mika", ["I like tea"])
    e.select_embedder(HashingEmbedder(64, seed=3))
    with pytest.raises(OmoideError) as info:
        ingest(e, "mika", ["I like coffee"])
    assert info.value.code == "MODEL_MISMATCH" and len(e.memories("mika")) == 1


def test_bad_character_is_refused():
    with pytest.raises(OmoideError) as info:
        ingest(make_engine(), " x ", ["I like tea"])
    assert info.value.code == "INVALID_CHARACTER_ID"


def test_empty_input_is_an_empty_report():
    report = ingest(make_engine(), "mika", [])
    assert report.items == [] and report.stored == []


@pytest.mark.parametrize(("messages", "field"), [
    ([1.5], "messages[0]"),
    (["I love tea.", None], "messages[1]"),
    ([{"role": 5, "content": "I love tea."}], "messages[0].role"),
    ([{"role": "user", "content": {"text": "I love tea."}}], "messages[0].content"),
    ([{"role": "user", "content": ["I love tea."]}], "messages[0].content"),
    ([{"role": "user", "content": [{"type": "text", "text": 7}]}], "messages[0].content"),
    ({"role": "user", "content": "I love tea."}, "messages"),
    (42, "messages"),
    # a 5 MB paste took the browser's engine out of memory and broke the chat app's bridge
    ("I love tea. " * 9_000, "messages"),
    (["hi", "I love tea. " * 9_000], "messages[1]"),
    ([{"role": "user", "content": "I love tea. " * 9_000}], "messages[0].content"),
    ([{"role": "user", "content": [{"type": "text", "text": "I love tea. " * 5_000}] * 2}],
     "messages[0].content"),
])
def test_a_message_of_another_shape_is_refused_by_name_and_nothing_is_written(messages, field):
    # a number among the messages was a crash (AttributeError: the page got "INTERNAL"), an
    # object as content was stored as its repr in the user's name
    e = make_engine()
    e.remember("a", "already here")
    with pytest.raises(OmoideError) as err:
        ingest(e, "a", messages)
    assert err.value.code == "INVALID_ARGUMENT" and err.value.fields["name"] == field
    assert [m.text for m in e.memories("a")] == ["already here"]


def test_content_parts_and_null_content_are_read():
    e = make_engine()
    report = ingest(e, "a", [{"role": "user", "content": [
        {"type": "text", "text": "I always drink green tea in the morning."},
        {"type": "image_url", "image_url": {"url": "data:,"}}]},
        {"role": "assistant", "content": None}])
    assert [i.action for i in report.items if i.source == 0] == ["stored"]
