"""The MCP server over stdio, answering every line it cannot read.

The SDK's stdio transport hands a line that is not a JSON-RPC message (not JSON, a batch
array, another ``jsonrpc`` version, a request without a method) to the server as an
exception, which the server only logs, and reads a request whose ``id`` is not a string or an
integer as a notification, which it never answers: the client waited for ever.
``serve_stdio`` answers such a line with the JSON-RPC error it calls for (``envelope``: -32700
Parse error for a line that is not JSON, -32600 Invalid Request for JSON that is not one
message, with the request's id when it has a usable one) and serves the rest as the SDK does.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import anyio
from mcp.server import stdio as sdk_stdio
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from omoide.mcp.envelope import misread_request, parsed, unreadable_reply

# How long the end of stdin waits for the answers of requests still being served (an
# ingest embeds for a while); a client that closed stdin to stop the server waits for its
# exit, or stops it itself.
END_GRACE_S = 120.0


async def answer_unreadable(read: Any, forward: Any, write: Any, asked: set[Any]) -> None:
    """Pass every message from ``read`` to ``forward``; answer every unreadable line. At the
    end of stdin, wait for the answers of the requests passed (``asked``) before closing:
    the SDK cancelled what was in flight (``echo request | python -m omoide.mcp`` got no
    answer, a tool's writes done all the same)."""
    async with read, forward:
        async for item in read:
            if isinstance(item, Exception):
                await write.send(SessionMessage(unreadable_reply(item)))
                continue
            if isinstance(item.message, JSONRPCRequest):
                asked.add(item.message.id)
            await forward.send(item)
        with anyio.move_on_after(END_GRACE_S):
            while asked:
                await anyio.sleep(0.02)


async def pass_answers(answers: Any, write: Any, asked: set[Any]) -> None:
    """Write the server's messages, each answer crossing its request off ``asked``; stdout
    closes after the last."""
    async with answers, write:
        async for item in answers:
            if isinstance(item.message, JSONRPCResponse | JSONRPCError):
                asked.discard(item.message.id)
            await write.send(item)


class RequestIdCheck:
    """The lines of stdin for the SDK's reader, less each request whose id no answer can
    carry (``misread_request``): the SDK read it as a notification and never answered; it is
    answered here, on the SDK's write stream once that is open."""

    def __init__(self, lines: Any) -> None:
        self.lines = lines
        self.write: Any = None
        self.opened = anyio.Event()

    def open(self, write: Any) -> None:
        self.write = write
        self.opened.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            refused = misread_request(parsed(line))
            if refused is None:
                yield line
                continue
            await self.opened.wait()
            await self.write.send(SessionMessage(refused))


@contextmanager
def claimed_stdin() -> Iterator[Any]:
    """The process's stdin, opened as the SDK opens it when it is given none: read from a
    private duplicate while fd 0 points at the null device (nothing a tool runs can read a
    client's message), fd 0 back at the end. The SDK skips that claim for a stdin it is
    given, and ``serve_stdio`` gives it one, to see each line first."""
    claim = sdk_stdio._claim_fd  # noqa: SLF001 - the SDK's own claim, not a copy of it
    buffer, release = claim(0, sys.stdin, "rb", sdk_stdio._open_stdin_diversion)  # noqa: SLF001
    try:
        text = sdk_stdio._UnownedTextWrapper(buffer, encoding="utf-8", errors="replace")  # noqa: SLF001
        yield anyio.wrap_file(text)
    finally:
        if release is not None:
            release()


async def serve_stdio(server: MCPServer, stdin: Any = None, stdout: Any = None) -> None:
    """Serve ``server`` on stdin/stdout (or the given async text files) until stdin ends
    and every request read has its answer."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 - the SDK's run_stdio_async does this
    with claimed_stdin() if stdin is None else nullcontext(stdin) as lines:
        checked = RequestIdCheck(lines)
        async with sdk_stdio.stdio_server(checked, stdout) as (read, write):
            checked.open(write)
            forward, messages = anyio.create_memory_object_stream[Any](0)
            replies, answers = anyio.create_memory_object_stream[Any](0)
            asked: set[Any] = set()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable, read, forward, write, asked)
                tasks.start_soon(pass_answers, answers, write, asked)
                async with replies:
                    await lowlevel.run(messages, replies,
                                       lowlevel.create_initialization_options())
