"""The full-text index of a restored store is completed after ready in steps
(``session.index_text_step``, called by web/engine-worker.js under the engine lock): a step of
a time budget gives the lock up after about that long, however many texts are left, and the
steps together index every text once, as the count-sized steps do."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.browser import session
from omoide.engine import MemoryEngine
from omoide.engine.analyzer import analyze
from omoide.engine.bm25 import BM25Index
from omoide.engine.memory import Memory
from omoide.kernels.pure_kernel import PureKernel
from tests.test_browser_restore import run, stored, worker  # noqa: F401
from tests.test_engine_embedder import HashingEmbedder
from tests.write_history import VERBS, apply_write

N = 700


def unindexed() -> int:
    return session.index_text_step(0)


def test_a_budgeted_step_stops_at_its_budget_and_reports_what_is_left():
    run(stored(N), slice_rows=250)
    assert unindexed() == N
    # no budget left: one slice of 32 texts, then the step returns
    assert session.index_text_step(budget_ms=0) == N - 32
    assert session.index_text_step(batch=100) == N - 132  # the count-sized step as before
    assert session.index_text_step(budget_ms=60_000) == 0  # room for everything


def test_budgeted_steps_index_every_text_as_one_pass_does(monkeypatch):
    # the kernel of a plain-JavaScript build: full-text scored by PureScorer
    monkeypatch.setattr(sys.modules["omoide_vectors"], "createTextScorer", lambda: None,
                        raising=False)
    run(stored(N), slice_rows=250)
    steps = 0
    while session.index_text_step(budget_ms=0):
        steps += 1
    assert steps == (N - 1) // 32
    store = session.session().engine.stores["aoi"]
    stepped = store.text_index.search(analyze("note 41 tea"), 20)
    run(stored(N), slice_rows=250)
    assert session.index_text_step(batch=N) == 0
    whole = session.session().engine.stores["aoi"].text_index.search(analyze("note 41 tea"), 20)
    assert (stepped.ids, stepped.scores) == (whole.ids, whole.scores)
    assert stepped.ids[0] == "m0041"


# -- writes during the lazy build ------------------------------------------------------------

WORDS = ["tea", "violin", "osaka", "river", "chess", "sunday", "bread", "train", "cat", "fuji",
         "東京", "緑茶", "大阪の川", "満員電車"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
# a write between two lazy steps: (verb, which memory, new text)
writes = st.lists(st.tuples(st.sampled_from([*VERBS, "step"]),
                            st.integers(0, 10_000), texts), max_size=25)


def adopted(records: list[Memory], dimension: int, engine: MemoryEngine, full) -> None:
    store = engine.new_store("mika", stamp=full.stamp, model_id=full.model_id,
                             dimension=dimension)
    kernel = PureKernel(dimension)
    kernel.add([m.id for m in records], [full.kernel.vector(m.id) for m in records])
    store.adopt(kernel, PureKernel(dimension), records, [])
    engine.stores["mika"] = store


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=1, max_size=30), writes)
def test_writes_during_the_lazy_build_leave_the_index_a_full_build_makes(start, plan):
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", start)
    full = source.stores["mika"]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    adopted(list(full.records.values()), full.dimension, engine, full)
    store = engine.stores["mika"]
    for verb, pick, text in plan:
        if not apply_write(engine, "mika", verb, pick, remember={"text": text},
                           update={"text": text}):
            store.index_text(3)  # "step"
    index = store.text_index  # completes the lazy build
    built = BM25Index(k1=index.k1, b=index.b, context_weight=index.context_weight,
                      context_b=index.context_b)
    for memory in store.records.values():
        built.add(memory.id, *store.index_terms(memory))
    assert len(index) == len(store.records) and all(i in index for i in store.records)
    for query in (["tea"], ["東京", "緑茶"], ["river", "cat", "fuji"]):
        ids = sorted(store.records)
        for got, want in zip(index.scores(query, ids), built.scores(query, ids), strict=True):
            assert abs(got - want) <= 1e-9 * max(1.0, abs(want))


def test_a_write_does_not_wait_for_the_lazy_build():
    source = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    source.remember_many("mika", [f"note {i} about tea" for i in range(300)])
    full = source.stores["mika"]
    engine = MemoryEngine(HashingEmbedder(16), kernel=PureKernel)
    adopted(list(full.records.values()), full.dimension, engine, full)
    store = engine.stores["mika"]
    first = sorted(store.records)[0]
    engine.remember("mika", "a violin lesson on sunday")
    engine.update("mika", first, text="bread from the river market")
    assert store.index_text(0) == 300  # nothing analyzed for them but their own texts
    hits = engine.recall("mika", "violin", k=3, mode="fulltext", touch=False)
    assert [h.memory.text for h in hits] == ["a violin lesson on sunday"]
    assert store.index_text(0) == 0  # the search completed the index first
    hits = engine.recall("mika", "river market bread", k=3, mode="fulltext", touch=False)
    assert hits[0].memory.id == first
