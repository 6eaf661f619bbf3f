"""Write-time dedup: same key, near-identical meaning, contradictions, exact duplicates."""

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine
from omoide.governance.dedup import DedupIndex, duplicate_pairs
from omoide.governance.ingest import ingest
from tests.test_engine_embedder import HashingEmbedder


def ticking(start=1_700_000_000.0, step=1.0):
    counter = itertools.count()
    return lambda: start + step * next(counter)


def make_engine(dim=64):
    return MemoryEngine(HashingEmbedder(dim), clock=ticking())


def test_same_key_updates_instead_of_inserting():
    e = make_engine()
    first = ingest(e, "a", ["I like green tea"]).stored[0]
    before = e.get("a", first.memory_id)
    report = ingest(e, "a", ["I really love green tea!"])
    assert [i.action for i in report.items] == ["merged"]
    assert report.items[0].memory_id == first.memory_id and report.items[0].reason == "same key"
    after = e.get("a", first.memory_id)
    assert len(e.memories("a")) == 1
    assert after.text == "I really love green tea!"  # newest phrasing wins
    assert after.updated_at > before.updated_at and after.created_at == before.created_at
    assert after.importance == max(before.importance, 0.7) == 0.7
    assert after.meta["merges"] == 1
    # re-embedded for the new text: recall finds it by the new wording
    assert e.recall("a", "really love", mode="fulltext")[0].memory.id == first.memory_id


def test_importance_never_drops_on_merge():
    e = make_engine()
    m = ingest(e, "a", ["I really love green tea"]).stored[0]
    ingest(e, "a", ["I like green tea"])
    assert e.get("a", m.memory_id).importance == 0.7


def test_exact_duplicate_is_merged_not_stored():
    e = make_engine()
    ingest(e, "a", ["I hate YAML"])
    report = ingest(e, "a", ["I hate YAML"])
    assert [(i.action, i.reason) for i in report.items] == [("merged", "exact duplicate")]
    assert len(e.memories("a")) == 1 and e.memories("a")[0].meta["merges"] == 1


def test_contradiction_replaces_polarity_and_keeps_history():
    e = make_engine()
    m_id = ingest(e, "a", ["I don't like Python"]).stored[0].memory_id
    report = ingest(e, "a", ["I love Python now"])
    item = report.items[0]
    assert item.action == "contradiction" and "dislike -> like" in item.reason
    m = e.get("a", m_id)
    assert m.meta["polarity"] == "like" and m.text == "I love Python now"
    assert [(h["polarity"], h["text"]) for h in m.meta["history"]] == [
        ("dislike", "I don't like Python")]
    ingest(e, "a", ["Pythonは嫌いです"])  # and back, in Japanese
    m = e.get("a", m_id)
    assert m.meta["polarity"] == "dislike" and m.meta["lang"] == "ja"
    assert [h["polarity"] for h in m.meta["history"]] == ["dislike", "like"]
    assert len(e.memories("a")) == 1


def test_near_identical_without_key_merges_above_threshold_only():
    e = make_engine(128)
    note = e.remember("a", "Today we walked along the river and talked about books",
                      kind="diary")
    vec = e.embedder.embed_passages(["Today we walked along the river and talked about books!"])[0]
    strict = DedupIndex(e.stores["a"], threshold=0.999).match("diary", None, vec)
    assert strict is None
    match = DedupIndex(e.stores["a"], threshold=0.9).match("diary", None, vec)
    assert match is not None and match.memory_id == note.id and match.reason == "near-identical"
    assert match.cosine >= 0.9
    # same meaning, other kind: never merged
    assert DedupIndex(e.stores["a"], threshold=0.5).match("fact", None, vec) is None


def test_different_keys_are_never_merged_on_similarity():
    e = make_engine()
    report = ingest(e, "a", ["I like Java", "I like JavaScript"], dedup_threshold=0.3)
    assert [i.action for i in report.items] == ["stored", "stored"]
    assert len(e.memories("a")) == 2


def test_characters_never_share_dedup():
    e = make_engine()
    ingest(e, "alice", ["I like tea"])
    report = ingest(e, "bob", ["I like tea"])
    assert [i.action for i in report.items] == ["stored"]


def test_repeats_inside_one_batch_collapse():
    e = make_engine()
    report = ingest(e, "a", ["I like tea", "I like tea", "I love tea", "Tea？", "お茶が好きです"])
    actions = [i.action for i in report.items]
    assert actions.count("stored") == 2  # tea, お茶 (different words, different keys)
    assert actions.count("merged") == 2 and actions.count("skipped") == 1
    tea = e.find_by_key("a", "preference:tea")
    assert len(tea) == 1 and tea[0].text == "I love tea" and tea[0].meta["merges"] == 2


def test_duplicate_pairs_lists_what_slipped_through():
    e = make_engine(128)
    a = e.remember("a", "We walked along the river and talked about books", kind="diary")
    b = e.remember("a", "We walked along the river and talked about books.", kind="diary")
    e.remember("a", "Completely different: the cat knocked over a vase", kind="diary")
    k1 = e.remember("a", "I like tea", kind="preference", key="preference:tea")
    k2 = e.remember("a", "I adore tea", kind="preference", key="preference:tea")
    pairs = duplicate_pairs(e.stores["a"], threshold=0.9)
    assert (min(a.id, b.id), max(a.id, b.id)) in {(p[0], p[1]) for p in pairs}
    assert (min(k1.id, k2.id), max(k1.id, k2.id), "same key", None) in pairs
    assert len(pairs) == 2


STATEMENTS = [
    "I prefer TypeScript", "I don't like Python", "I love Python", "We'll use Postgres",
    "I always commit before pushing", "I never deploy on Fridays", "TypeScriptが好きです",
    "Pythonは好きではありません", "Reactにしました", "いつもプッシュする前にコミットします",
    "hello there", "What do you think?", "I hate YAML, but I love TOML", "I like tea",
    "I like teas", "I usually drink green tea in the morning",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=3).map(" ".join),
                min_size=1, max_size=8))
def test_ingesting_the_same_messages_twice_stores_nothing_new(messages):
    e = make_engine(32)
    first = ingest(e, "a", messages)
    ids = {m.id for m in e.memories("a")} if "a" in e.characters() else set()
    keys = [m.key for m in e.memories("a")] if ids else []
    assert len(keys) == len(set(keys))  # one record per key, whatever the order
    assert ids == {i.memory_id for i in first.stored}
    second = ingest(e, "a", messages)
    assert second.stored == []
    after = {m.id for m in e.memories("a")} if ids else set()
    assert after == ids
    assert e.trash("a") == [] if ids else True


def test_dedup_runs_on_the_pure_python_kernel_as_in_pyodide():
    from omoide.kernels import PureKernel

    e = MemoryEngine(HashingEmbedder(128), kernel=PureKernel, clock=ticking())
    note = e.remember("a", "We walked along the river and talked about books", kind="diary")
    vec = e.embedder.embed_passages(["We walked along the river and talked about books."])[0]
    match = DedupIndex(e.stores["a"], threshold=0.9).match("diary", None, vec)
    assert match is not None and match.memory_id == note.id
    report = ingest(e, "a", ["I like tea", "I like tea", "I hate YAML"])
    assert [i.action for i in report.items] == ["stored", "merged", "stored"]
