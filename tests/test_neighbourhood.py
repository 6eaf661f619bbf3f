"""Neighbourhood evidence (``engine/neighbourhood.py``): a memory's conversation and turn,
kept through every path a record takes, and the window vote at hybrid recall."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.engine import MemoryEngine, validate
from omoide.engine.exchange import export_data, import_data
from omoide.engine.neighbourhood import WINDOW, next_turn, window, window_votes
from omoide.errors import OmoideError
from omoide.governance.ingest import ingest
from tests.test_engine_embedder import HashingEmbedder

CATS = ["we went to the animal shelter", "we adopted a grey cat there",
        "his name is Biscuit", "the shelter staff were kind to the cat",
        "cat food is expensive"]
MONEY = ["the stock market fell today", "my shares lost value",
         "his name is Biscuit", "the bank raised interest rates",
         "bonds are safer than stocks"]


@pytest.fixture
def engine():
    e = MemoryEngine(HashingEmbedder(128))
    e.remember_many("mika", [{"text": t, "conversation": "cats"} for t in CATS])
    e.remember_many("mika", [{"text": t, "conversation": "money"} for t in MONEY])
    e.remember_many("mika", ["Mika likes green tea", "Mika lives in Kyoto"])
    return e


def by_text(engine, character, text, conversation):
    return next(m for m in engine.memories(character)
                if m.text == text and m.conversation == conversation)


def places(engine, character="mika"):
    return {(m.conversation, m.turn, m.text) for m in engine.memories(character)}


def test_turns_are_numbered_in_order_and_continue_across_calls(engine):
    assert {(t, x) for c, t, x in places(engine) if c == "cats"} == set(enumerate(CATS))
    later = engine.remember("mika", "Biscuit sleeps all day", conversation="cats")
    assert later.turn == len(CATS)
    placed = engine.remember("mika", "an aside", conversation="cats", turn=2)
    assert placed.turn == 2  # a given turn is kept (two memories may share one)
    assert engine.remember("mika", "next", conversation="cats").turn == len(CATS) + 1
    loose = engine.remember("mika", "no conversation")
    assert loose.conversation is None and loose.turn is None


def test_bad_places_are_refused_by_name_and_nothing_is_written(engine):
    before = len(engine.memories("mika"))
    for item, name in (({"text": "t", "turn": 3}, "turn"),
                       ({"text": "t", "conversation": "c", "turn": -1}, "turn"),
                       ({"text": "t", "conversation": "c", "turn": 1.5}, "turn"),
                       ({"text": "t", "conversation": "c", "turn": True}, "turn"),
                       ({"text": "t", "conversation": 7}, "conversation"),
                       ({"text": "t", "conversation": "  "}, "conversation"),
                       ({"text": "t", "conversation": "x" * 257}, "conversation")):
        with pytest.raises(OmoideError) as info:
            engine.remember_many("mika", ["fine", item])
        assert info.value.code == "INVALID_ARGUMENT" and info.value.fields["name"] == name
    assert len(engine.memories("mika")) == before


def test_the_window_is_the_turns_around_a_memory_in_its_own_conversation(engine):
    store = engine.stores["mika"]
    middle = by_text(engine, "mika", "his name is Biscuit", "cats")
    ids = window(store, middle)
    assert sorted(store.records[i].text for i in ids) == sorted(CATS)  # turns 0..4
    first = by_text(engine, "mika", CATS[0], "cats")
    assert [store.records[i].text for i in window(store, first)] == CATS[: WINDOW + 1]
    loose = next(m for m in engine.memories("mika") if m.conversation is None)
    assert window(store, loose) == []


def test_the_window_never_crosses_characters():
    e = MemoryEngine(HashingEmbedder(64))
    e.remember_many("a", [{"text": t, "conversation": "shared id"} for t in CATS])
    lone = e.remember("b", "his name is Biscuit", conversation="shared id", turn=2)
    assert window(e.stores["b"], lone) == [lone.id]
    assert next_turn(e.stores["b"], "shared id") == 3


def test_the_vote_is_the_mean_standard_score_of_the_window(engine):
    store = engine.stores["mika"]
    vector = engine.embedder.embed_queries(["grey cat shelter"])[0]
    result = store.kernel.top_k(vector, 3)
    candidates = [m.id for m in engine.memories("mika")]
    votes = window_votes(store, vector, candidates, result.mean, result.std)
    loose = {m.id for m in engine.memories("mika") if m.conversation is None}
    assert set(votes) == set(candidates) - loose  # no conversation: no vote
    for memory_id, vote in votes.items():
        ids = window(store, store.records[memory_id])
        cosines = store.kernel.scores(vector, ids)
        expected = (sum(cosines) / len(cosines) - result.mean) / result.std
        assert vote == pytest.approx(expected)


def test_a_matching_window_lifts_its_turns(engine):
    query = "the grey cat from the shelter, his name"
    on = engine.recall("mika", query, min_relevance=0, touch=False, fusion="zscore")
    off = engine.recall("mika", query, min_relevance=0, touch=False, fusion="zscore",
                        use_neighbours=False)
    score = {(h.memory.conversation, h.memory.text): h.score for h in on}
    plain = {(h.memory.conversation, h.memory.text): h.score for h in off}
    same = "his name is Biscuit"
    # the same text in two conversations: equal alone, the cat window's copy wins with votes
    assert plain[("cats", same)] == pytest.approx(plain[("money", same)])
    assert score[("cats", same)] > score[("money", same)]


def test_memories_without_a_conversation_rank_as_before():
    e = MemoryEngine(HashingEmbedder(128))
    e.remember_many("mika", CATS + MONEY)
    for fusion in ("zscore", "adaptive", "rrf"):
        on = e.recall("mika", "grey cat", min_relevance=0, touch=False, fusion=fusion)
        off = e.recall("mika", "grey cat", min_relevance=0, touch=False, fusion=fusion,
                       use_neighbours=False)
        assert [(h.memory.id, h.score) for h in on] == [(h.memory.id, h.score) for h in off]


def test_a_removed_memory_leaves_the_window_and_a_restored_one_returns(engine):
    store = engine.stores["mika"]
    middle = by_text(engine, "mika", "his name is Biscuit", "cats")
    neighbour = by_text(engine, "mika", CATS[1], "cats")
    engine.forget("mika", neighbour.id)
    assert neighbour.id not in window(store, middle)
    engine.restore("mika", neighbour.id)
    assert neighbour.id in window(store, middle)


def test_snapshot_keeps_the_places_and_appending_continues(engine):
    index, records = engine.snapshot("mika")
    other = MemoryEngine(engine.embedder)
    other.load_snapshot("mika", index, records)
    assert places(other) == places(engine)
    assert other.remember("mika", "more", conversation="cats").turn == len(CATS)


def test_export_and_import_keep_the_places(engine):
    for with_vectors in (True, False):
        other = MemoryEngine(engine.embedder)
        import_data(other, export_data(engine, with_vectors=with_vectors))
        assert places(other) == places(engine)


def test_a_backend_keeps_the_places_and_refuses_bad_ones(engine, tmp_path):
    from omoide.backends.base import memory_of, record_of
    from omoide.backends.sqlite import SQLiteBackend

    backend = SQLiteBackend(tmp_path / "m.db")
    backend.initialize()
    memory = by_text(engine, "mika", "his name is Biscuit", "cats")
    backend.create(record_of(memory, engine.stores["mika"].kernel.vector(memory.id)))
    back = memory_of(backend.get(memory.id))
    assert (back.conversation, back.turn) == ("cats", 2)
    for bad, name in (({"turn": "2"}, "turn"), ({"conversation": None, "turn": 1}, "turn"),
                      ({"conversation": ["x"]}, "conversation")):
        with pytest.raises(OmoideError) as info:
            backend.create(record_of(memory) | {"id": "other"} | bad)
        assert info.value.code == "INVALID_RECORD" and info.value.fields["field"] == name
        assert backend.get("other") is None
    backend.shutdown()


def test_the_browser_load_path_keeps_the_places(engine):
    """The rows IndexedDB gives back at boot pass ``browser.restore.checked_memories``."""
    from omoide.backends.base import record_of
    from omoide.browser.restore import checked_memories

    rows = [record_of(m) for m in engine.memories("mika")]
    loaded = [m for m, _ in checked_memories(engine, rows)]
    assert {(m.conversation, m.turn, m.text) for m in loaded} == places(engine)


def test_old_records_without_places_still_load():
    record = validate.record({"id": "a1", "character_id": "mika", "text": "old row"})
    assert record["conversation"] is None and record["turn"] is None


def test_ingest_places_a_batch_in_one_conversation_and_continues_a_named_one():
    e = MemoryEngine(HashingEmbedder(128))
    messages = [{"role": "user", "content": "I love green tea."},
                {"role": "user", "content": "I live in Kyoto."},
                {"role": "user", "content": "I adopted a cat named Biscuit."}]
    report = ingest(e, "mika", messages)
    stored = [e.get("mika", i.memory_id) for i in report.items if i.action == "stored"]
    assert stored and len({m.conversation for m in stored}) == 1
    assert stored[0].conversation is not None
    assert all(m.turn == i.source for m, i in zip(
        stored, [i for i in report.items if i.action == "stored"], strict=True))
    first = ingest(e, "mika", [{"role": "user", "content": "I play the violin."}],
                   conversation="chat-1")
    second = ingest(e, "mika", [{"role": "user", "content": "I hate mornings."}],
                    conversation="chat-1")
    turns = [e.get("mika", r.items[0].memory_id).turn for r in (first, second)]
    assert turns == [0, 1]
    alone = ingest(e, "mika", [{"role": "user", "content": "I love hiking in the mountains."}])
    assert [i.action for i in alone.items] == ["stored"]
    assert e.get("mika", alone.items[0].memory_id).conversation is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]),
                          st.one_of(st.none(), st.integers(0, 12)),
                          st.booleans()), min_size=1, max_size=25))
def test_windows_and_new_turns_agree_with_a_scan_of_the_records(steps):
    """Whatever the order of appends, placed turns and forgets: a window is exactly the live
    memories of the same conversation within WINDOW turns, and an appended turn lands after
    every live turn of its conversation."""
    e = MemoryEngine(HashingEmbedder(16))
    for n, (conversation, turn, forget) in enumerate(steps):
        live = [m.turn for m in e.memories("p") if m.conversation == conversation] \
            if "p" in e.stores else []
        memory = e.remember("p", f"memory {n}", conversation=conversation, turn=turn)
        if turn is None:
            assert all(memory.turn > t for t in live)
        if forget:
            e.forget("p", memory.id)
    if "p" not in e.stores:
        return
    store = e.stores["p"]
    for memory in e.memories("p"):
        expected = {m.id for m in e.memories("p") if m.conversation == memory.conversation
                    and abs(m.turn - memory.turn) <= WINDOW}
        assert set(window(store, memory)) == expected


def test_a_forgotten_turn_is_never_handed_out_again_even_after_a_reopen(tmp_path):
    """The next turn came from the live memories plus a memo of this process: after a
    reopen a forgotten turn was handed out again, and its restore put two messages on one
    turn (the window a recall reads changed with the process's history)."""
    from omoide.workspace import open_workspace

    db = tmp_path / "w.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    ws.engine.remember("alice", "hello there", conversation="chat")
    second = ws.engine.remember("alice", "my cat is called Tama", conversation="chat")
    ws.engine.forget("alice", second.id)
    ws.close()
    ws = open_workspace(db, embedder=HashingEmbedder())
    try:
        third = ws.engine.remember("alice", "we adopted a dog", conversation="chat")
        assert third.turn == 2
        ws.engine.restore("alice", second.id)
        assert sorted(m.turn for m in ws.engine.memories("alice")) == [0, 1, 2]
    finally:
        ws.close()
