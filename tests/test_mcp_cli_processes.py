"""The MCP server and the CLI as two real processes on one workspace (issue 13 item 4):
``python -m omoide.mcp`` runs (stdio, driven by the SDK's own client) while
``python -m omoide`` forgets, updates and remembers; then the other way round. Nothing one
does is reverted by the other, nothing is missing, and recalls in both are all counted.
Real model in both processes (``models`` marker)."""

from __future__ import annotations

import json
import sqlite3
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters

from tests.test_cli import run_cli
from tests.test_mcp import ROOT, child_env, data, need_model, run_stdio

DEADLINE = 300.0  # a server start and six CLI runs, each loading the model, on a busy machine


def stored(db: Path, memory_id: str) -> tuple[float | None, dict]:
    con = sqlite3.connect(db)
    try:
        trashed_at, record = con.execute(
            "SELECT trashed_at, record FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return trashed_at, json.loads(record)
    finally:
        con.close()


@pytest.mark.models
def test_mcp_server_and_cli_never_undo_each_other(tmp_path: Path) -> None:
    need_model()
    db = tmp_path / "shared.db"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "omoide.mcp", "--db", str(db)],
        env=child_env(), cwd=str(ROOT),
    )
    log = tmp_path / "server.log"

    async def cli(*argv: str) -> dict:
        out = await anyio.to_thread.run_sync(partial(run_cli, db, "--json", *argv))
        return json.loads(out)

    async def cli_hits(query: str) -> dict[str, str]:
        return {h["id"]: h["text"] for h in (await cli("recall", "alice", query))["hits"]}

    async def body(s: ClientSession) -> None:
        await s.initialize()

        async def tool(name: str, **args: object) -> dict:
            return data(await s.call_tool(name, {"character": "alice", **args}))

        async def mcp_hits(query: str) -> dict[str, str]:
            return {h["memory"]["id"]: h["memory"]["text"]
                    for h in (await tool("recall", query=query, k=10))["hits"]}

        tea = (await tool("remember", text="Alice loves green tea"))["id"]
        violin = (await tool("remember", text="Alice plays the violin on Sundays"))["id"]
        assert set(await mcp_hits("what does Alice drink?")) == {tea, violin}  # both held

        # the CLI forgets, updates and remembers while the server runs
        await cli("forget", "alice", tea)
        await cli("update", "alice", violin, "--text", "Alice plays the cello on Sundays")
        cat = (await cli("remember", "alice", "Alice's cat is called Mochi"))["id"]
        seen = await mcp_hits("what does Alice drink, play, and what is her cat called?")
        assert tea not in seen, "the server still recalls a memory the CLI forgot"
        assert seen[violin] == "Alice plays the cello on Sundays"
        assert seen[cat] == "Alice's cat is called Mochi"
        stats = await tool("stats")
        # trashed: the tea, and the violin text the update replaced (its history)
        assert (stats["memories"], stats["trashed"]) == (2, 2)
        # ... and the server's recall (it counted its hits) reverted nothing
        assert stored(db, tea)[0] is not None
        assert stored(db, violin)[1]["text"] == "Alice plays the cello on Sundays"
        after = await cli_hits("what does Alice drink, play, and what is her cat called?")
        assert tea not in after and after[violin] == "Alice plays the cello on Sundays"

        # the other way round: the server forgets and remembers, the CLI recalls
        await tool("forget", memory_id=cat)
        oolong = (await tool("remember", text="Alice drinks oolong tea in winter"))["id"]
        after = await cli_hits("what does Alice drink, and what is her cat called?")
        assert cat not in after and oolong in after
        assert stored(db, cat)[0] is not None
        # every recall that returned the cello memory counted, in either process: 2 + 2
        assert stored(db, violin)[1]["recall_count"] == 4

    run_stdio(params, log, body, DEADLINE)
