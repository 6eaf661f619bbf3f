"""The MCP server over stdio, answering every line it cannot read.

The SDK's stdio transport hands a line that is not a JSON-RPC message (not JSON, a batch
array, another ``jsonrpc`` version, a request without a method) to the server as an
exception, which the server only logs: the client got no answer and waited for ever.
``serve_stdio`` answers such a line with the JSON-RPC error it calls for (-32700 Parse error
for a line that is not JSON, -32600 Invalid Request for JSON that is not one message, with the
request's id when it has a usable one) and serves the rest as the SDK does.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

from omoide.errors import OmoideError


def unreadable_reply(error: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read as a message."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    if not problems or any(p["type"] == "json_invalid" for p in problems):
        why = OmoideError.of("MALFORMED_MESSAGE", reason="it is not JSON (one UTF-8 JSON "
                             "object per line; lone surrogates are refused)")
        return JSONRPCError(jsonrpc="2.0", id=None,
                            error=ErrorData(code=PARSE_ERROR, message=str(why)))
    sent = whole_message(problems)
    why = OmoideError.of("MALFORMED_MESSAGE", reason=invalid_reason(sent, problems))
    return JSONRPCError(jsonrpc="2.0", id=usable_id(sent),
                        error=ErrorData(code=INVALID_REQUEST, message=str(why)))


def whole_message(problems: list[Any]) -> Any:
    """The parsed line, from a problem about the whole of it (None when there is none)."""
    for p in problems:
        if p["type"] == "missing" or (p["type"] == "model_type" and len(p["loc"]) == 1):
            return p.get("input")
    return None


def invalid_reason(sent: Any, problems: list[Any]) -> str:
    if isinstance(sent, list):
        return "a batch (JSON array) is not supported; send one object per line"
    if not isinstance(sent, dict):
        return "it is not one JSON-RPC object"
    if sent.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" is not "2.0"'
    fields = [p for p in problems if len(p["loc"]) > 1 and p["loc"][0] == "JSONRPCRequest"]
    if "method" in sent and fields:
        return f'its "{fields[0]["loc"][1]}" is not valid ({fields[0]["msg"]})'
    return "it is not a JSON-RPC request, notification or response"


def usable_id(sent: Any) -> str | int | None:
    """The id of a request (not of a client's response) that a reply can carry: a string or
    an integer."""
    found = sent.get("id") if isinstance(sent, dict) and "method" in sent else None
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    return None


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


async def serve_stdio(server: MCPServer, stdin: Any = None, stdout: Any = None) -> None:
    """Serve ``server`` on stdin/stdout (or the given async text files) until stdin ends
    and every request read has its answer."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 - the SDK's run_stdio_async does this
    async with stdio_server(stdin, stdout) as (read, write):
        forward, messages = anyio.create_memory_object_stream[Any](0)
        replies, answers = anyio.create_memory_object_stream[Any](0)
        asked: set[Any] = set()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_unreadable, read, forward, write, asked)
            tasks.start_soon(pass_answers, answers, write, asked)
            async with replies:
                await lowlevel.run(messages, replies, lowlevel.create_initialization_options())
