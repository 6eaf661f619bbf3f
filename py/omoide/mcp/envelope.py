"""The JSON-RPC answers to a message that is not one request, notification or response.

The SDK reads each message with ``jsonrpc_message_adapter``. What it cannot read it only logs
(stdio) or answers -32602 Invalid params with a pydantic dump (HTTP); and a request whose
``id`` no answer can carry (``true``, ``1.5``, ``null``, an object) it reads as a
notification, which it never answers: the client waited for ever. These are the answers the
transports give instead: -32700 Parse error for what is not JSON, -32600 Invalid Request,
naming what is wrong, for the rest (with the request's id where it has a usable one).
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from omoide.errors import OmoideError


def unreadable_reply(error: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a message the transport could not read."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    if not problems or any(p["type"] == "json_invalid" for p in problems):
        why = OmoideError.of("MALFORMED_MESSAGE", reason="it is not JSON (one UTF-8 JSON "
                             "object per line; lone surrogates are refused)")
        return JSONRPCError(jsonrpc="2.0", id=None,
                            error=ErrorData(code=PARSE_ERROR, message=str(why)))
    sent = whole_message(problems)
    return invalid_request(invalid_reason(sent, problems), usable_id(sent))


def misread_request(sent: Any) -> JSONRPCError | None:
    """-32600 for a request (an object with a ``method`` and an ``id``) whose id is not a
    string or an integer, which the SDK would take for a notification and never answer;
    None for anything else."""
    if not isinstance(sent, dict) or "method" not in sent or "id" not in sent:
        return None
    if usable_id(sent) is not None:
        return None
    return invalid_request('its "id" is not a string or an integer', None)


def invalid_request(reason: str, request_id: str | int | None) -> JSONRPCError:
    why = OmoideError.of("MALFORMED_MESSAGE", reason=reason)
    return JSONRPCError(jsonrpc="2.0", id=request_id,
                        error=ErrorData(code=INVALID_REQUEST, message=str(why)))


def whole_message(problems: list[Any]) -> Any:
    """The parsed message, from a problem about the whole of it (None when there is none)."""
    for p in problems:
        if p["type"] == "missing" or (p["type"] == "model_type" and len(p["loc"]) == 1):
            return p.get("input")
    return None


def invalid_reason(sent: Any, problems: list[Any]) -> str:
    if isinstance(sent, list):
        return "batches (JSON arrays) are not supported; send one message at a time"
    if not isinstance(sent, dict):
        return "it is not one JSON-RPC object"
    if sent.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" is not "2.0"'
    # a message without an id is a notification: its own fields, not a request's missing id
    kind = "JSONRPCRequest" if "id" in sent else "JSONRPCNotification"
    fields = [p for p in problems if len(p["loc"]) > 1 and p["loc"][0] == kind]
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


def parsed(text: str | bytes) -> Any:
    """The JSON value of ``text`` as the SDK parses it (strict JSON, no lone surrogates), or
    ``NOT_JSON``."""
    try:
        return pydantic_core.from_json(text)
    except ValueError:
        return NOT_JSON


NOT_JSON = object()


def refused_body(body: bytes) -> JSONRPCError | None:
    """The -32600 answer to an HTTP body that is JSON but not one message the SDK would
    serve as sent; None to leave it to the SDK (one message, or not JSON: its -32700)."""
    sent = parsed(body)
    if sent is NOT_JSON:
        return None
    try:
        jsonrpc_message_adapter.validate_python(sent, by_name=False)
    except ValidationError as error:
        return unreadable_reply(error)
    return misread_request(sent)
