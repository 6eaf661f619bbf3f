"""Write-time dedup: same key, near-identical meaning, contradictions, exact duplicates."""

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
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


def test_same_key_merges_and_keeps_the_text():
    e = make_engine()
    first = ingest(e, "a", ["I like green tea"]).stored[0]
    before = e.get("a", first.memory_id)
    report = ingest(e, "a", ["I really love green tea!"])
    assert [i.action for i in report.items] == ["merged"]
    assert report.items[0].memory_id == first.memory_id
    assert report.items[0].reason.startswith("same key")
    after = e.get("a", first.memory_id)
    assert len(e.memories("a")) == 1
    assert after.text == "I like green tea"  # not a superset: the memory's text stays
    assert after.updated_at > before.updated_at and after.created_at == before.created_at
    assert after.importance == max(before.importance, 0.7) == 0.7
    assert after.meta["merges"] == 1
    # the merged words are kept, in the trash, pointing at the memory they were folded into
    [kept] = e.trash("a")
    assert kept.memory.text == "I really love green tea!"
    assert kept.memory.meta["merged_into"] == first.memory_id
    assert report.items[0].kept == kept.memory.id


def test_a_merge_of_other_words_keeps_them_a_repeat_does_not():
    """A merge folded a candidate into a memory on a cosine: "meeting with Ken on Tuesday"
    into "meeting with Tom on Monday" (e5 puts them above 0.92) left only a count; the
    candidate's words are now in the trash, restorable. The same words again (case and
    punctuation aside) add nothing there."""
    e = make_engine()
    first = ingest(e, "a", ["I like green tea"]).stored[0]
    ingest(e, "a", ["i like green tea."])
    assert e.trash("a") == []
    ingest(e, "a", ["I really like green tea"])
    [kept] = e.trash("a")
    assert kept.memory.meta["merged_into"] == first.memory_id
    e.restore("a", kept.memory.id)  # one key, one live memory: the other becomes history
    assert [m.text for m in e.memories("a")] == ["I really like green tea"]
    assert [t.memory.text for t in e.trash("a")] == ["I like green tea"]


def test_a_merge_that_grows_the_text_supersedes_and_keeps_the_old_text():
    e = make_engine()
    first = ingest(e, "a", ["I like green tea"]).stored[0]
    report = ingest(e, "a", ["I like green tea, especially sencha"])
    item = report.items[0]
    assert item.action == "merged" and item.supersedes == first.memory_id
    live = e.memories("a")
    assert [m.text for m in live] == ["I like green tea, especially sencha"]
    assert live[0].meta["supersedes"] == [first.memory_id] and live[0].meta["merges"] == 1
    [old] = e.trash("a")
    assert old.memory.text == "I like green tea"
    assert old.memory.meta["superseded_by"] == live[0].id
    # re-embedded for the new text: recall finds it by the new wording
    assert e.recall("a", "sencha", mode="fulltext")[0].memory.id == live[0].id


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


def test_contradiction_supersedes_and_keeps_the_old_one_in_history():
    e = make_engine()
    m_id = ingest(e, "a", ["I don't like Python"]).stored[0].memory_id
    report = ingest(e, "a", ["I love Python now"])
    item = report.items[0]
    assert item.action == "superseded" and "dislike -> like" in item.reason
    assert item.supersedes == m_id and item.memory_id != m_id
    [live] = e.memories("a")
    assert live.meta["polarity"] == "like" and live.text == "I love Python now"
    assert live.meta["supersedes"] == [m_id]
    assert [(t.memory.text, t.memory.meta["superseded_by"]) for t in e.trash("a")] == [
        ("I don't like Python", live.id)]
    ingest(e, "a", ["Pythonは嫌いです"])  # and back, in Japanese
    [now] = e.memories("a")
    assert now.meta["polarity"] == "dislike" and now.meta["lang"] == "ja"
    assert now.meta["supersedes"] == [live.id]
    assert sorted(t.memory.text for t in e.trash("a")) == ["I don't like Python",
                                                           "I love Python now"]


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
    assert len(tea) == 1 and tea[0].text == "I like tea" and tea[0].meta["merges"] == 2


def test_duplicate_pairs_lists_what_slipped_through():
    e = make_engine(128)
    a = e.remember("a", "We walked along the river and talked about books", kind="diary")
    b = e.remember("a", "We walked along the river and talked about books.", kind="diary")
    e.remember("a", "Completely different: the cat knocked over a vase", kind="diary")
    k1 = e.remember("a", "I like tea", kind="preference", key="preference:tea")
    # two live holders of one key: only data from before same-key supersede can hold them
    k2 = dataclasses.replace(k1, id="legacy-tea", text="I adore tea")
    e.stores["a"].put(k2, e.embedder.embed_passages([k2.text])[0])
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
# a merge's words kept aside were taken for the key's holder by the next candidate (found
# by this test: the second run ended on "I love Python")
@example(messages=["Pythonは好きではありません", "I love Python", "I don't like Python"])
def test_ingesting_the_same_messages_twice_stores_nothing_new(messages):
    e = make_engine(32)
    first = ingest(e, "a", messages)

    def state():
        live = e.memories("a") if "a" in e.characters() else []
        return {m.key: (m.meta.get("polarity"), m.text) for m in live}, len(live)

    (by_key, count) = state()
    assert len(by_key) == count  # one record per key, whatever the order
    written = {i.memory_id for i in first.items if i.action != "skipped"}
    assert written >= ({m.id for m in e.memories("a")} if count else set())
    second = ingest(e, "a", messages)
    assert second.stored == []
    assert state() == (by_key, count)  # the same truths, whatever churned on the way
    # every write was kept: nothing ever leaves except to the trash as history
    trashed = e.trash("a") if count else []
    assert all(t.memory.meta.get("superseded_by") or t.memory.meta.get("merged_into")
               for t in trashed)


def test_dedup_runs_on_the_pure_python_kernel_as_in_pyodide():
    from omoide.kernels import PureKernel

    e = MemoryEngine(HashingEmbedder(128), kernel=PureKernel, clock=ticking())
    note = e.remember("a", "We walked along the river and talked about books", kind="diary")
    vec = e.embedder.embed_passages(["We walked along the river and talked about books."])[0]
    match = DedupIndex(e.stores["a"], threshold=0.9).match("diary", None, vec)
    assert match is not None and match.memory_id == note.id
    report = ingest(e, "a", ["I like tea", "I like tea", "I hate YAML"])
    assert [i.action for i in report.items] == ["stored", "merged", "stored"]


def test_duplicate_pairs_never_pair_a_note_with_its_negation():
    e = make_engine(128)
    yes = e.remember("a", "We went to the new ramen place and I loved it", kind="diary")
    no = e.remember("a", "We went to the new ramen place and I didn't love it", kind="diary")
    again = e.remember("a", "We went to the new ramen place and I loved it!", kind="diary")
    pairs = {(p[0], p[1]) for p in duplicate_pairs(e.stores["a"], threshold=0.5)}
    assert tuple(sorted((yes.id, again.id))) in pairs
    assert all(no.id not in pair for pair in pairs)


def test_the_same_words_under_a_key_of_earlier_rules_merge():
    """A memory keyed by an earlier version of the key rules (fact:daughter, now
    fact:daughter_job) was not found by its words said again: a second copy was stored."""
    e = make_engine()
    old = e.remember("a", "My daughter is a doctor.", kind="fact", key="fact:daughter",
                     meta={"via": "pattern"})
    [item] = ingest(e, "a", ["my daughter is a doctor"]).items
    assert (item.action, item.memory_id) == ("merged", old.id), item
    assert [m.id for m in e.memories("a")] == [old.id]


def test_near_identical_vectors_of_other_words_are_not_a_duplicate():
    """Two notes on one topic sit above the threshold with e5 while saying different things:
    the second merged into the first, its words in the trash until a purge. Here the vectors
    are the same (cosine 1), the words not."""
    e = make_engine()
    note = e.remember("a", "Pochi has been sick since yesterday.", kind="diary")
    vector = e.stores["a"].kernel.vector(note.id)
    index = DedupIndex(e.stores["a"])
    assert index.match("diary", None, vector, text="Pochi has recovered and is eating again.",
                       ) is None
    same = index.match("diary", None, vector, text="Pochi has been sick since yesterday!")
    assert same is not None and same.memory_id == note.id


@pytest.mark.parametrize(("old", "new"), [
    ("Took Pochi to the vet today; he has a mild fever.",
     "Took Hana to the vet today; he has a mild fever."),
    ("Paid 80,000 yen rent today.", "Paid 85,000 yen rent today."),
    ("Pochi's vet appointment is on May 3.", "Hana's vet appointment is on May 3."),
    ("Mika's birthday is on June 12.", "Mika's birthday is on June 15."),
    ("My sister's flight lands at 3pm on Sunday.", "My brother's flight lands at 3pm on Sunday."),
    ("今日はミカと渋谷でランチした。", "今日はケンと渋谷でランチした。"),
    ("ポチの予防接種は5月3日", "ポチの予防接種は5月13日"),
])
def test_notes_that_differ_in_a_name_or_a_number_are_two_notes(old, new):
    """Same words but a name, a number or a person: another dog's visit, another month's
    rent. Merged, the second note went to the trash and was purged 30 days on. The vectors
    here are the same (cosine 1): only the words decide."""
    e = make_engine()
    note = e.remember("a", old, kind="diary")
    vector = e.stores["a"].kernel.vector(note.id)
    index = DedupIndex(e.stores["a"])
    assert index.match("diary", None, vector, text=new) is None
    assert index.match("diary", None, vector, text=old + "!") is not None  # a repeat
