"""Conversation ingest builds each memory's index context itself (``engine/context.py``):
the rule (date line, the turn's window), and every CPython ingest path storing it
(``governance.ingest``, the CLI, the MCP server). The app's paste ingest is covered in
tests/browser/test_ui_memories.py."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.cli import main
from omoide.engine import MemoryEngine
from omoide.engine.context import TURN_CHARS, date_line, turn_context, turn_line
from omoide.errors import OmoideError
from omoide.governance.ingest import ingest
from omoide.mcp import build_server
from omoide.workspace import open_workspace
from tests.test_engine_embedder import HashingEmbedder
from tests.test_mcp import data, run_with_client

MAY_7 = dt.datetime(2023, 5, 7, 15, 30, tzinfo=dt.UTC).timestamp()
CHAT = [
    {"role": "assistant", "content": "What do you drink in the morning?"},
    {"role": "user", "content": "I love green tea."},
    {"role": "assistant", "content": "Any favourite brand?"},
    {"role": "user", "content": "Not really."},
]


# -- the rule ----------------------------------------------------------------------------------


def test_date_line_in_english_and_japanese():
    assert date_line(MAY_7) == "On 7 May 2023:"
    assert date_line(MAY_7, japanese=True) == "2023年5月7日:"


def test_a_turn_has_the_date_and_its_neighbours_and_itself():
    turns = [turn_line("user", t) for t in ("one", "two", "three", "four")]
    assert turn_context(turns, 1, MAY_7, limit=8000) == (
        "On 7 May 2023:\nuser: one\nuser: two\nuser: three")
    assert turn_context(turns, 0, MAY_7, limit=8000) == "On 7 May 2023:\nuser: one\nuser: two"
    assert turn_context(turns, 3, None, limit=8000) == "user: three\nuser: four"
    ja = [turn_line("user", "猫が好きです"), turn_line("assistant", "いいですね")]
    assert turn_context(ja, 1, MAY_7, limit=8000).startswith("2023年5月7日:\n")
    with pytest.raises(IndexError):
        turn_context(turns, 4, MAY_7, limit=8000)


def test_a_turn_line_is_one_line_and_clipped():
    line = turn_line("user", "a\n\nb   c" + "x" * 2 * TURN_CHARS)
    assert "\n" not in line and line.startswith("user: a b c")
    assert len(line) == len("user: ") + TURN_CHARS and line.endswith("…")


@given(st.lists(st.text(max_size=40), min_size=1, max_size=8), st.data(),
       st.integers(min_value=1, max_value=200))
def test_a_context_holds_its_turn_and_stays_within_the_limit(texts, draw, limit):
    turns = [turn_line("user", t) for t in texts]
    index = draw.draw(st.integers(min_value=0, max_value=len(turns) - 1))
    context = turn_context(turns, index, MAY_7, limit=limit)
    assert len(context) <= limit
    full = turn_context(turns, index, MAY_7, limit=10_000)
    assert turns[index] in full.split("\n")
    assert context == full[:limit]


# -- governance ingest (every path goes through it) ------------------------------------------


def make_engine() -> MemoryEngine:
    return MemoryEngine(HashingEmbedder(), clock=lambda: MAY_7 + 86400 * 30)


def test_ingest_stores_the_context_of_each_memory():
    engine = make_engine()
    report = ingest(engine, "alice", CHAT, at=MAY_7)
    [item] = report.stored
    memory = engine.get("alice", item.memory_id)
    assert memory.context == ("On 7 May 2023:\nassistant: What do you drink in the morning?\n"
                              "user: I love green tea.\nassistant: Any favourite brand?")
    assert memory.created_at == MAY_7  # the conversation's time, not the ingest's
    # indexed: the neighbour's words find it, and recall shows the text, not the context
    [hit] = engine.recall("alice", "morning drink", mode="fulltext", min_relevance=0)
    assert hit.memory.id == memory.id and hit.memory.text == "I love green tea."


def test_ingest_without_a_time_dates_the_context_now():
    engine = make_engine()
    [item] = ingest(engine, "alice", CHAT).stored
    memory = engine.get("alice", item.memory_id)
    assert memory.context.startswith(date_line(engine.now()))
    assert memory.created_at == engine.now()


def test_a_bad_session_time_is_refused_and_nothing_written():
    engine = make_engine()
    with pytest.raises(OmoideError) as e:
        ingest(engine, "alice", CHAT, at="yesterday")
    assert e.value.code == "INVALID_ARGUMENT" and "at" in str(e.value)
    assert "alice" not in engine.stores


def test_a_message_alone_gets_its_date_and_itself():
    engine = make_engine()
    [item] = ingest(engine, "alice", "I love green tea.", at=MAY_7).stored
    assert engine.get("alice", item.memory_id).context == "On 7 May 2023:\nuser: I love green tea."


def test_a_repeat_merges_and_keeps_the_first_context():
    engine = make_engine()
    [first] = ingest(engine, "alice", CHAT, at=MAY_7).stored
    again = ingest(engine, "alice", [{"role": "user", "content": "I love green tea."}],
                   at=MAY_7 + 86400)
    assert [i.action for i in again.items] == ["merged"]
    assert engine.get("alice", first.memory_id).context.startswith("On 7 May 2023:")


# -- the CLI and the MCP server --------------------------------------------------------------


def test_cli_ingest_stores_the_context(tmp_path: Path, capsys):
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(CHAT), encoding="utf-8")
    db = tmp_path / "mem.db"
    code = main(["--db", str(db), "ingest", "carol", str(chat), "--at", "2023-05-07"],
                embedder_factory=lambda model_id, dtype: HashingEmbedder())
    assert code == 0, capsys.readouterr().err
    con = sqlite3.connect(db)
    try:
        [(record,)] = con.execute("SELECT record FROM memories").fetchall()
    finally:
        con.close()
    stored = json.loads(record)
    assert stored["text"] == "I love green tea."
    assert stored["context"].startswith("On 7 May 2023:\nassistant: What do you drink")


def test_cli_ingest_refuses_a_bad_time(tmp_path: Path, capsys):
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(CHAT), encoding="utf-8")
    code = main(["--db", str(tmp_path / "mem.db"), "ingest", "carol", str(chat), "--at", "soon"],
                embedder_factory=lambda model_id, dtype: HashingEmbedder())
    assert code == 2 and "argument --at: 'soon' is not a time" in capsys.readouterr().err
    assert not (tmp_path / "mem.db").exists() or _count(tmp_path / "mem.db") == 0


def _count(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM memories").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_mcp_ingest_stores_the_context(tmp_path: Path):
    workspace = open_workspace(tmp_path / "mem.db", embedder=HashingEmbedder())
    server = build_server(workspace)

    async def body(client) -> dict:
        return data(await client.call_tool("ingest", {"character": "alice", "messages": CHAT,
                                                      "at": MAY_7}))

    try:
        report = run_with_client(server, body)
        [item] = [i for i in report["items"] if i["action"] == "stored"]
        memory = workspace.engine.get("alice", item["memory_id"])
        assert memory.context.startswith("On 7 May 2023:\nassistant: What do you drink")
    finally:
        workspace.close()
