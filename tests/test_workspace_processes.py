"""Two workspaces on one SQLite file never undo each other (issue 13 item 4).

In one process, two ``open_workspace`` calls on the same file are two SQLite connections,
exactly what two processes are to SQLite: each sees the other's commits before its next
verb, a stale engine never writes a whole record back, a recall counts atomically, and a
forgotten or purged memory stays so. The real two-process case (the MCP server and the CLI)
is in tests/test_mcp_cli_processes.py.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide.errors import OmoideError
from omoide.workspace import Workspace, open_workspace
from tests.test_engine_embedder import HashingEmbedder

FIXTURE = Path(__file__).parent / "fixtures" / "workspaces" / "workspace-v1.db"


def row(db: Path, memory_id: str) -> tuple:
    con = sqlite3.connect(db)
    try:
        import json

        found = con.execute("SELECT trashed_at, record FROM memories WHERE id = ?",
                            (memory_id,)).fetchone()
        return (found[0], json.loads(found[1])) if found else None
    finally:
        con.close()


@pytest.fixture
def pair(tmp_path):
    db = tmp_path / "shared.db"
    a = open_workspace(db, embedder=HashingEmbedder())
    b = open_workspace(db, embedder=HashingEmbedder())
    yield db, a, b
    a.close()
    b.close()


def ids(hits) -> list[str]:
    return [h.memory.id for h in hits]


def test_a_forget_elsewhere_is_not_reverted_by_a_recall(pair):
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    a.engine.remember("alice", "Alice hikes on Sundays")
    assert tea.id in ids(a.engine.recall("alice", "green tea"))  # a's engine holds it
    b.engine.forget("alice", tea.id)
    assert tea.id not in ids(a.engine.recall("alice", "green tea"))
    assert [e.memory.id for e in a.engine.trash("alice")] == [tea.id]
    trashed_at, record = row(db, tea.id)
    assert trashed_at is not None and record["recall_count"] == 1  # a's touch, before


def test_an_update_elsewhere_is_not_reverted_by_a_recall(pair):
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    a.engine.recall("alice", "tea")
    b.engine.update("alice", tea.id, text="Alice loves jasmine tea", importance=0.9)
    hits = a.engine.recall("alice", "jasmine tea")
    assert hits[0].memory.text == "Alice loves jasmine tea" and hits[0].memory.importance == 0.9
    assert hits[0].memory.recall_count == 2
    _, record = row(db, tea.id)
    assert (record["text"], record["importance"], record["recall_count"]) == (
        "Alice loves jasmine tea", 0.9, 2)


def test_memories_added_elsewhere_are_recalled(pair):
    _, a, b = pair
    a.engine.remember("alice", "Alice loves green tea")
    assert a.engine.characters() == ["alice"]
    new = b.engine.remember("alice", "Alice's cat is called Mochi")
    bob = b.engine.remember("bob", "Bob drinks black coffee")
    assert ids(a.engine.recall("alice", "Mochi the cat", k=1)) == [new.id]
    assert a.engine.characters() == ["alice", "bob"]
    assert ids(a.engine.recall("bob", "coffee")) == [bob.id]


def test_a_purge_elsewhere_disappears_here(pair):
    _, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    a.engine.forget("alice", tea.id)
    b.engine.purge_trash("alice")
    assert a.engine.trash("alice") == []
    with pytest.raises(OmoideError) as err:
        a.engine.restore("alice", tea.id)
    assert err.value.code == "UNKNOWN_MEMORY"


def test_a_restore_elsewhere_comes_back_here(pair):
    _, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    a.engine.forget("alice", tea.id)
    b.engine.restore("alice", tea.id)
    assert ids(a.engine.recall("alice", "green tea")) == [tea.id]
    assert a.engine.trash("alice") == []


def test_recalls_in_two_processes_both_count(pair):
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    b.engine.get("alice", tea.id)  # b holds it too
    for ws in (a, b, a, b, b):
        ws.engine.recall("alice", "green tea")
    assert row(db, tea.id)[1]["recall_count"] == 5
    assert a.engine.get("alice", tea.id).recall_count == 5
    assert b.engine.get("alice", tea.id).recall_count == 5


def late(ws: Workspace) -> None:
    """The next catch-up comes too early: another process commits between this process's
    catch-up and its first write (the engine decides on a state that is already old)."""
    follower, missed = ws.follower, []

    def catch_up() -> None:
        if not missed:
            missed.append(True)
            return
        follower()

    ws.engine.refreshers[:] = [catch_up if r is follower else r for r in ws.engine.refreshers]


def test_a_stale_touch_never_resurrects_a_forgotten_memory(pair):
    """The recall decided on the old state (the memory live) and its touch found the file
    changed: it ran again on the new state, in which the memory is forgotten."""
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    b.engine.forget("alice", tea.id)
    late(a)
    assert a.engine.recall("alice", "green tea") == []
    trashed_at, record = row(db, tea.id)
    assert trashed_at is not None and record["recall_count"] == 0  # not counted, not revived


def test_a_stale_update_of_a_forgotten_memory_writes_nothing(pair):
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    b.engine.forget("alice", tea.id)
    late(a)
    with pytest.raises(OmoideError) as err:
        a.engine.update("alice", tea.id, importance=0.9)
    assert err.value.code == "UNKNOWN_MEMORY" and tea.id in str(err.value)
    assert a.engine.trash("alice")[0].memory.importance == 0.5  # the engine is the file's
    trashed_at, record = row(db, tea.id)
    assert trashed_at is not None and record["importance"] == 0.5


def test_a_stale_restore_of_a_purged_memory_writes_nothing(pair):
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    a.engine.forget("alice", tea.id)
    b.engine.purge_trash("alice")
    late(a)
    with pytest.raises(OmoideError) as err:
        a.engine.restore("alice", tea.id)
    assert err.value.code == "UNKNOWN_MEMORY"
    assert row(db, tea.id) is None


def test_a_stale_update_keeps_the_edit_made_meanwhile(pair):
    db, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea", meta={"src": "chat"})
    b.engine.update("alice", tea.id, text="Alice loves jasmine tea")
    [green] = b.engine.trash("alice")  # the text b's edit replaced, kept as history
    late(a)
    a.engine.update("alice", tea.id, importance=0.8)  # decided on the old text, run again
    _, record = row(db, tea.id)
    assert (record["text"], record["importance"], record["meta"]) == (
        "Alice loves jasmine tea", 0.8, {"src": "chat", "supersedes": [green.memory.id]})
    memory = a.engine.get("alice", tea.id)
    assert (memory.text, memory.importance) == ("Alice loves jasmine tea", 0.8)
    assert ids(a.engine.recall("alice", "jasmine", mode="fulltext")) == [tea.id]


def test_own_writes_are_never_read_back(pair):
    _, a, b = pair
    read: list[int] = []
    changes_since = a.backend.changes_since

    def counting(seq):
        records, gone, high = changes_since(seq)
        read.append(len(records) + len(gone))
        return records, gone, high

    a.backend.changes_since = counting
    for i in range(20):
        a.engine.remember("alice", f"Alice memory number {i}")
    a.engine.recall("alice", "memory")  # 10 touches
    assert read == []  # nobody else committed: one PRAGMA per verb, no feed read
    b.engine.remember("alice", "one from b")
    a.engine.recall("alice", "memory")
    assert read == [1]  # only b's row, never a's 30 own writes
    assert a.follower.applied == 1


def test_a_character_re_vectorized_elsewhere_is_reloaded_whole(pair):
    _, a, b = pair
    tea = a.engine.remember("alice", "Alice loves green tea")
    rain = a.engine.remember("alice", "Alice hates rain")
    a.engine.forget("alice", rain.id)
    a.engine.remember("bob", "Bob drinks black coffee")
    other = HashingEmbedder(seed=1)
    b.engine.revectorize("alice", other)
    stats = a.engine.stats("alice")
    assert (stats["model"], stats["memories"], stats["trashed"]) == (other.stamp, 1, 1)
    assert stats["model_mismatch"]  # a still embeds with the old model: recall says so
    assert a.engine.stats("bob")["model"] == HashingEmbedder().stamp
    assert ids(a.engine.recall("alice", "green tea", mode="fulltext")) == [tea.id]
    assert a.engine.trash("alice")[0].memory.model == other.stamp


def test_a_version_1_file_gets_the_change_feed_and_is_followed(tmp_path):
    db = tmp_path / "old.db"
    shutil.copy(FIXTURE, db)
    a = open_workspace(db, embedder=HashingEmbedder())
    b = open_workspace(db, embedder=HashingEmbedder())
    con = sqlite3.connect(db)
    assert con.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("3",)
    assert con.execute("SELECT COUNT(*) FROM changes").fetchone() == (0,)
    con.close()
    old = a.engine.recall("alice", "green tea", touch=False)[0].memory
    assert old.id == "01HF7YAT00KY70X8DPQ5G8VVAF"  # a schema-1 row (no feed entry)
    b.engine.forget("alice", old.id)
    assert old.id not in ids(a.engine.recall("alice", "green tea"))
    assert row(db, old.id)[0] is not None
    a.close()
    b.close()
    assert open_workspace(db, embedder=HashingEmbedder()).loaded == {"alice": 2, "bob": 1}


def test_a_file_of_a_newer_schema_is_refused(tmp_path):
    db = tmp_path / "future.db"
    open_workspace(db, embedder=HashingEmbedder()).close()
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '99' WHERE name = 'schema'")
    con.commit()
    con.close()
    with pytest.raises(OmoideError) as err:
        open_workspace(db, embedder=HashingEmbedder())
    assert err.value.code == "UNSUPPORTED_SNAPSHOT"


# -- property: any interleaving of verbs in two workspaces, both always agree with the file --

TEXTS = ["green tea", "black coffee", "Mount Takao", "the violin", "猫が好き", "rainy days"]
OPS = st.lists(
    st.tuples(st.sampled_from("ab"),
              st.sampled_from(["remember", "forget", "restore", "update", "recall", "purge"]),
              st.sampled_from(["alice", "bob"]), st.integers(0, 50), st.sampled_from(TEXTS)),
    min_size=1, max_size=25,
)


def state(ws: Workspace) -> dict:
    with ws.engine.fresh():
        return {c: ({i: m.to_dict() for i, m in s.records.items()},
                    {i: (e.memory.to_dict(), e.trashed_at) for i, e in s.trash.items()},
                    sorted(s.kernel.ids()))
                for c, s in ws.engine.stores.items() if not s.is_empty()}


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_any_interleaving_leaves_both_engines_equal_to_the_file(tmp_path_factory, ops):
    db = tmp_path_factory.mktemp("prop") / "shared.db"
    both = {"a": open_workspace(db, embedder=HashingEmbedder()),
            "b": open_workspace(db, embedder=HashingEmbedder())}
    try:
        for who, op, character, pick, text in ops:
            engine = both[who].engine
            with engine.fresh():  # what this process sees as it acts
                store = engine.stores.get(character)
                live = sorted(store.records) if store else []
                trashed = sorted(store.trash) if store else []
                if op == "remember":
                    engine.remember(character, f"{character} likes {text} ({pick})")
                elif op == "forget" and live:
                    engine.forget(character, live[pick % len(live)])
                elif op == "restore" and trashed:
                    engine.restore(character, trashed[pick % len(trashed)])
                elif op == "update" and live:
                    engine.update(character, live[pick % len(live)], text=f"now {text}",
                                  importance=(pick % 10) / 10)
                elif op == "recall" and store:
                    engine.recall(character, text, k=3)
                elif op == "purge" and store:
                    engine.purge_trash(character)
        fresh = open_workspace(db, embedder=HashingEmbedder())
        try:
            assert state(both["a"]) == state(fresh) == state(both["b"])
        finally:
            fresh.close()
    finally:
        for ws in both.values():
            ws.close()


def test_the_change_feed_sees_every_writer_and_only_grows(tmp_path):
    from omoide.backends.sqlite import SQLiteBackend

    db = tmp_path / "feed.db"
    ws = open_workspace(db, embedder=HashingEmbedder())
    first = ws.engine.remember("alice", "Alice loves green tea")
    second = ws.engine.remember("alice", "Alice hikes on Sundays")
    ws.close()
    feed = SQLiteBackend(db)
    records, gone, start = feed.changes_since(0)
    assert [r["id"] for r in records] == [first.id, second.id] and gone == []
    other = sqlite3.connect(db)  # a writer that is not this code: the triggers catch it
    other.execute("UPDATE memories SET updated_at = 1 WHERE id = ?", (first.id,))
    other.commit()
    records, gone, after_update = feed.changes_since(start)
    assert [r["id"] for r in records] == [first.id] and after_update > start
    other.execute("DELETE FROM memories WHERE id = ?", (second.id,))
    other.commit()
    records, gone, after_delete = feed.changes_since(after_update)
    assert records == [] and gone == [(second.id, "alice")] and after_delete > after_update
    # one entry per memory: the earlier entries of a row are gone, the newest stays
    assert other.execute("SELECT id FROM changes ORDER BY seq").fetchall() == [
        (first.id,), (second.id,)]
    other.close()
    assert feed.changes_since(after_delete) == ([], [], after_delete)
    feed.shutdown()


def test_a_turn_written_elsewhere_and_forgotten_is_never_handed_out_again(pair):
    """The next turn of a conversation comes after its forgotten turns too; one written by
    the other process was not counted (this process's memo of the last turns did not see
    it), so once forgotten its turn was handed out again here: a restore then put two
    memories on one turn."""
    db, a, b = pair
    assert a.engine.remember("alice", "we adopted a cat", conversation="chat").turn == 0
    elsewhere = b.engine.remember("alice", "the cat is grey", conversation="chat")
    assert elsewhere.turn == 1
    a.engine.forget("alice", elsewhere.id)
    assert a.engine.remember("alice", "it sleeps all day", conversation="chat").turn == 2
