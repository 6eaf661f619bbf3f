"""Model stamping and re-vectorization."""

import pytest

from omoide.engine import MemoryEngine
from omoide.errors import OmoideError
from tests.test_engine_embedder import HashingEmbedder

OLD, NEW = HashingEmbedder(16), HashingEmbedder(16, seed=7)  # same dimension, other space


def code_of(call) -> str:
    with pytest.raises(OmoideError) as info:
        call()
    return info.value.code


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(16))
    e.remember_many("alice", [f"alice note {i} about tea" for i in range(10)])
    e.remember_many("bob", [f"bob note {i} about cats" for i in range(5)])
    e.forget("alice", e.memories("alice")[0].id)
    return e


def test_other_model_with_same_dimension_is_a_mismatch(engine):
    engine.select_embedder(HashingEmbedder(16, seed=7))
    assert code_of(lambda: engine.remember("alice", "x")) == "MODEL_MISMATCH"
    assert code_of(lambda: engine.recall("alice", "tea", mode="vector")) == "MODEL_MISMATCH"
    assert code_of(lambda: engine.recall("alice", "tea", mode="hybrid")) == "MODEL_MISMATCH"
    alice_live = engine.memories("alice")[0]
    assert code_of(lambda: engine.update("alice", alice_live.id, text="new")) == (
        "MODEL_MISMATCH"
    )
    assert code_of(lambda: engine.restore("alice", engine.trash("alice")[0].memory.id)) == (
        "MODEL_MISMATCH"
    )
    assert engine.recall("alice", "tea", mode="fulltext")  # no vectors involved
    assert engine.stats("alice")["model_mismatch"] is True
    assert engine.mismatched_characters() == ["alice", "bob"]
    engine.remember("carol", "a new character starts on the selected model")
    assert engine.stats("carol")["model"] == engine.embedder.stamp


def test_empty_store_is_restamped_instead_of_blocked():
    e = MemoryEngine(HashingEmbedder(16))
    m = e.remember("a", "x")
    e.forget("a", m.id)
    e.purge_trash("a")
    e.select_embedder(HashingEmbedder(8, seed=3))
    e.remember("a", "y")
    assert e.stats("a")["dimension"] == 8


def test_revectorize_all_swaps_and_selects_the_new_model(engine):
    progress = []
    report = engine.revectorize(None, NEW, batch_size=4, progress=lambda d, t: progress.append(
        (d, t)))
    assert report.characters == ["alice", "bob"] and report.embedded == 15
    assert report.still_mismatched == []
    assert progress[0] == (0, 15) and progress[-1] == (15, 15)
    assert all(b - a <= 4 for (a, _), (b, _) in zip(progress, progress[1:], strict=False))
    assert engine.embedder is NEW and engine.revectorize_jobs == {}
    assert {m.model for m in engine.memories("alice")} == {NEW.stamp}
    top = engine.recall("alice", "alice note 3 about tea", mode="vector")[0]
    assert top.memory.text == "alice note 3 about tea" and top.vector_cosine > 0.99
    trashed = engine.trash("alice")[0]
    assert trashed.vector == pytest.approx(NEW.embed_passages([trashed.memory.text])[0],
                                           abs=1e-6)
    engine.restore("alice", trashed.memory.id)  # trash moved to the new space too


def test_recall_uses_the_old_index_until_the_swap(engine):
    seen = []

    def progress(done, total):
        if 0 < done < total:
            hit = engine.recall("alice", "alice note 5 about tea", mode="vector", touch=False)[0]
            seen.append((hit.memory.text, hit.memory.model, round(hit.vector_cosine, 4)))

    engine.revectorize("alice", NEW, batch_size=3, progress=progress)
    assert seen and all(s == ("alice note 5 about tea", OLD.stamp, 1.0) for s in seen)


def test_cancel_keeps_progress_and_resume_finishes(engine):
    calls = {"n": 0}

    def cancel_after_two_batches():
        calls["n"] += 1
        return calls["n"] > 2

    with pytest.raises(OmoideError) as info:
        engine.revectorize(None, NEW, batch_size=3, cancel=cancel_after_two_batches)
    assert info.value.code == "CANCELLED"
    assert engine.embedder.stamp == OLD.stamp  # nothing swapped
    assert engine.recall("alice", "tea", mode="vector")  # still on the old index
    staged = sum(len(v) for v in engine.revectorize_jobs[NEW.stamp].staged.values())
    assert staged == 6
    report = engine.revectorize(None, NEW, batch_size=3)
    assert report.embedded == 15 - 6  # resumed, not restarted
    assert engine.embedder is NEW


def test_writes_between_runs_are_caught_up(engine):
    with pytest.raises(OmoideError):
        engine.revectorize(None, NEW, batch_size=5, cancel=iter([False, True]).__next__)
    first = engine.memories("alice")[0]
    engine.update("alice", first.id, text="rewritten after staging")
    added = engine.remember("bob", "a late memory")
    engine.forget("bob", engine.memories("bob")[0].id)
    engine.revectorize(None, NEW, batch_size=5)
    for text in ("rewritten after staging", "a late memory"):
        top = engine.recall(
            "alice" if text.startswith("rewritten") else "bob", text, mode="vector"
        )[0]
        assert top.memory.text == text and top.vector_cosine > 0.99
    assert added.id in {m.id for m in engine.memories("bob")}


def test_single_character_revectorize_leaves_others_blocked(engine):
    report = engine.revectorize("alice", NEW)
    assert report.still_mismatched == ["bob"]
    assert engine.recall("alice", "tea", mode="vector")
    assert code_of(lambda: engine.recall("bob", "cats", mode="vector")) == "MODEL_MISMATCH"
    engine.revectorize("bob", NEW)
    assert engine.mismatched_characters() == []


def test_revectorize_to_another_dimension(engine):
    wide = HashingEmbedder(32, seed=9)
    engine.revectorize(None, wide)
    assert engine.stats("alice")["dimension"] == 32
    assert engine.recall("bob", "bob note 1 about cats", mode="vector")[0].vector_cosine > 0.99


def test_revectorize_arguments(engine):
    assert code_of(lambda: engine.revectorize(None, NEW, batch_size=0)) == "INVALID_ARGUMENT"
    assert code_of(lambda: engine.revectorize("nobody", NEW)) == "UNKNOWN_CHARACTER"


def test_a_job_run_one_batch_per_call_computes_its_work_list_once_per_pass(engine,
                                                                           monkeypatch):
    """Linear: the pending list is computed at the start of a pass and once more to catch up
    writes, never once per batch (that made a batch-per-call job quadratic)."""
    from omoide.engine import revectorize as module

    calls = []
    original = module._pending
    monkeypatch.setattr(module, "_pending", lambda job, stores: calls.append(1)
                        or original(job, stores))
    steps = 0
    while True:
        left = [1]

        def cancel(left=left) -> bool:
            left[0] -= 1
            return left[0] < 0

        try:
            engine.revectorize(None, NEW, batch_size=2, cancel=cancel)
            break
        except OmoideError as err:
            assert err.code == "CANCELLED"
            steps += 1
            if steps == 3:  # a write in the middle is caught up by the last pass
                engine.remember("alice", "alice note written during the job")
    assert steps >= 8
    assert len(calls) == 3  # the first pass, the catch-up pass, the empty check
    assert engine.embedder.stamp == NEW.stamp
    assert engine.recall("alice", "alice note written during the job", mode="vector")


class RecordingEmbedder(HashingEmbedder):
    """NEW's model, keeping every passage list it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(16, seed=7)
        self.passages: list[list[str]] = []

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        self.passages.append(list(texts))
        return super().embed_passages(texts)


def test_upcoming_names_exactly_what_the_next_batch_embeds(engine):
    from omoide.engine.revectorize import upcoming

    engine.remember("bob", "bob keeps a garden", context="talking about weekends")
    recorder = RecordingEmbedder()
    while True:
        ahead = upcoming(engine, None, recorder, 4)
        before = len(recorder.passages)
        try:
            engine.revectorize(None, recorder, batch_size=4,
                               cancel=iter([False, True]).__next__)
            finished = True
        except OmoideError as err:
            assert err.code == "CANCELLED"
            finished = False
        # the one batch this call embedded is exactly what upcoming named (the swap, none)
        assert [sorted(b) for b in recorder.passages[before:]] == (
            [sorted(ahead)] if ahead else [])
        if finished:
            break
    assert "talking about weekends" in {t for batch in recorder.passages for t in batch}
    assert engine.embedder is recorder and engine.mismatched_characters() == []


def test_a_memory_purged_between_batches_is_dropped_and_the_job_resumes(engine):
    """The leftover work list named a purged memory: every later step raised KeyError and
    the job could not finish (the browser runs one batch per call)."""
    with pytest.raises(OmoideError):
        engine.revectorize(None, NEW, batch_size=3, cancel=iter([False, True]).__next__)
    job = engine.revectorize_jobs[NEW.stamp]
    char, doomed, _ = job.queue[job.cursor]  # the next batch's first memory
    if doomed in engine.stores[char].records:
        engine.forget(char, doomed)
    engine.purge_trash(char)
    engine.revectorize(None, NEW, batch_size=3)
    assert engine.embedder is NEW
    assert doomed not in {m.id for c in ("alice", "bob") for m in engine.memories(c)}


def test_a_new_context_alone_is_embedded_again(engine):
    """Staged vectors were keyed by the text only: an ``update(context=...)`` between the
    staging and the swap left the vector of the old context."""
    from omoide.engine.embedding import embed_memories

    memory = engine.memories("alice")[0]
    with pytest.raises(OmoideError):
        engine.revectorize(None, NEW, batch_size=14, cancel=iter([False, True]).__next__)
    assert memory.id in engine.revectorize_jobs[NEW.stamp].staged["alice"]
    engine.update("alice", memory.id, context="said while planning the Kyoto trip")
    engine.revectorize(None, NEW, batch_size=20)
    [want] = embed_memories(NEW, [(memory.text, "said while planning the Kyoto trip")])
    got = engine.stores["alice"].kernel.vector(memory.id)
    assert sum(a * b for a, b in zip(want, got, strict=True)) > 0.999


def test_trashed_vectors_are_float32_after_a_switch_as_the_live_ones_are():
    """The trash kept the new model's vectors as doubles: an export differed from its own
    re-import (and from the same workspace's export after a reopen)."""
    import json

    from omoide.engine.exchange import export_data, import_data

    e = MemoryEngine(HashingEmbedder(32))
    forgotten = e.remember("alice", "green tea every morning")
    e.remember("alice", "a walk at dawn")
    e.forget("alice", forgotten.id)
    e.revectorize(None, HashingEmbedder(32, seed=1))
    first = json.dumps(export_data(e, with_vectors=True))
    other = MemoryEngine(HashingEmbedder(32, seed=1))
    import_data(other, json.loads(first))
    assert json.dumps(export_data(other, with_vectors=True)) == first
