"""Dedup with the real multilingual-e5-small model (the ``e5`` fixture of conftest: skipped
when the build has not produced dist/models, or ONNX Runtime is not installed): the default
threshold merges paraphrases, keeps distinct days apart, and the key guard prevents a false
merge e5 would make."""

import pytest

from omoide.engine import MemoryEngine
from omoide.governance import DEFAULT_THRESHOLD, DedupIndex, ingest

pytestmark = pytest.mark.models


def test_paraphrased_notes_merge_and_distinct_ones_do_not(e5):
    engine = MemoryEngine(e5)
    note = engine.remember("a", "Today we walked along the river and talked about books.",
                           kind="diary")
    index = DedupIndex(engine.stores["a"])
    paraphrase, other = e5.embed_passages([
        "Today we walked by the river and talked about books.",
        "Today we cooked curry and watched a movie.",
    ])
    match = index.match("diary", None, paraphrase)
    assert match is not None and match.memory_id == note.id
    assert match.cosine >= DEFAULT_THRESHOLD
    assert index.match("diary", None, other) is None


def test_the_key_guard_prevents_a_false_merge_e5_would_make(e5):
    a, b = e5.embed_passages(["I prefer TypeScript", "I prefer JavaScript"])
    cosine = sum(x * y for x, y in zip(a, b, strict=True))
    assert cosine >= DEFAULT_THRESHOLD  # similarity alone would merge two different facts
    engine = MemoryEngine(e5)
    report = ingest(engine, "a", ["I prefer TypeScript", "I prefer JavaScript"])
    assert [i.action for i in report.items] == ["stored", "stored"]


def test_design_example_in_both_languages_lands_on_four_records(e5):
    engine = MemoryEngine(e5)
    ingest(engine, "a", ["I prefer TypeScript. We'll use Postgres for this project. "
                         "I always commit before pushing. I don't like Python."])
    report = ingest(engine, "a", ["TypeScriptが好きです。このプロジェクトではPostgresを使います。"
                                  "いつもプッシュする前にコミットします。Pythonは好きではありません。"])
    assert [i.action for i in report.items] == ["merged"] * 4
    assert len(engine.memories("a")) == 4


def test_a_negation_e5_finds_near_identical_never_merges(e5):
    """Issue 14: a typed 「私は辛いラーメンが大好きです」 and a pasted
    「もう辛いラーメンは好きじゃない。」 were 'merged — near-identical (cosine 0.95)' and
    the original text was gone."""
    love, not_anymore = "私は辛いラーメンが大好きです", "もう辛いラーメンは好きじゃない。"
    a, b = e5.embed_passages([love, not_anymore])
    assert sum(x * y for x, y in zip(a, b, strict=True)) >= DEFAULT_THRESHOLD
    engine = MemoryEngine(e5)
    typed = engine.remember("a", love)
    [item] = ingest(engine, "a", [not_anymore]).items
    assert item.action in ("stored", "superseded") and item.memory_id != typed.id
    texts = [m.text for m in engine.memories("a")] + [t.memory.text for t in engine.trash("a")]
    assert sorted(texts) == sorted([love, not_anymore])
    engine = MemoryEngine(e5)
    ingest(engine, "a", ["I love spicy ramen"])
    [item] = ingest(engine, "a", ["I don't like spicy ramen anymore."]).items
    assert item.action == "superseded"
    assert [t.memory.text for t in engine.trash("a")] == ["I love spicy ramen"]


def test_notes_on_one_topic_that_say_different_things_are_kept_apart(e5):
    """e5 puts a passport's and a driving licence's expiry above the merge threshold: the
    cold pass folded one into the other, its words purged 30 days on. (The ingest side:
    ``test_governance_dedup``.)"""
    from omoide.governance.dedup import duplicate_pairs

    engine = MemoryEngine(e5)
    a, b = (engine.remember("a", text, kind="fact") for text in (
        "My passport expires in March 2027.", "My driver's license expires in August 2029."))
    store = engine.stores["a"]
    cosine = sum(x * y for x, y in zip(store.kernel.vector(a.id), store.kernel.vector(b.id),
                                       strict=True))
    assert cosine >= DEFAULT_THRESHOLD
    assert duplicate_pairs(store) == []
