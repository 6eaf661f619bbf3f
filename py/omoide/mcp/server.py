"""The Omoide MCP tools, on the official SDK's ``MCPServer``.

``build_server(workspace)`` takes any object with ``.engine`` (``MemoryEngine``) and
``.governor`` (``Governor``), e.g. what ``omoide.workspace.open_workspace`` returns. Every tool
takes the ``character`` it works on and answers plain JSON data. An ``OmoideError`` becomes an
MCP tool error (``is_error``) whose text is ``CODE: message``, never a traceback.

The SDK runs plain (sync) tools in worker threads; the engine is not thread-safe, so every
call holds one lock.
"""

from __future__ import annotations

import functools
import importlib
import threading
import types
import typing
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, ValidationError

from omoide.engine.memory import Hit, TrashEntry
from omoide.errors import OmoideError

# ``omoide.governance`` re-exports the function ``audit`` under the submodule's name, so
# ``Governor.audit`` (which imports the package attribute) gets the function, not the module;
# the tool calls the submodule's function with the governor's configuration instead.
audit_module = importlib.import_module("omoide.governance.audit")

TOOL_NAMES = (
    "remember", "store_fact", "recall", "ingest", "forget", "restore", "audit", "stats",
    "summarize",
)

INSTRUCTIONS = (
    "Omoide is a long-term memory for characters. Every tool works on one `character` id; "
    "memories of one character are never visible to another. Use `remember` (or `store_fact`) "
    "to save one fact, `ingest` to extract memories from conversation messages, `recall` to "
    "find memories relevant to a query, `forget`/`restore` to trash or bring back a memory "
    "by id, `stats`/`audit` to inspect, `summarize` to fold old episodic memories "
    "(dry run unless dry_run=false)."
)

_T = TypeVar("_T")


class WorkspaceLike(Protocol):
    engine: Any
    governor: Any


class ToolServer(MCPServer):
    """The SDK's server with its tools' failures worded as the error table's
    ``CODE: message``: it put "Error executing tool <name>: " before ours, and a pydantic
    dump (with links) for arguments of the wrong type."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK answers it without its details
        except ToolError as e:
            return CallToolResult(content=[TextContent(type="text", text=tool_error_text(e))],
                                  is_error=True)


class NamedParams:
    """Server middleware: a request whose params the SDK refuses is answered -32602 naming
    each wrong field and what is wrong with it (``name: Field required``), never the value
    sent; the SDK answered "Invalid request parameters" and nothing more. A request before
    the client's ``initialize`` keeps the SDK's -32602 (the code its clients key off; the
    spec sets none) but says the session is not initialized and what to send first: the
    SDK's gate answered it with the same bare "Invalid request parameters"."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        try:
            return await call_next(ctx)
        except ValidationError as e:
            if ctx.request_id is None:  # a notification: nothing answers it
                raise
            why = OmoideError.of("INVALID_PARAMS", fields=field_problems(e.errors()))
            raise MCPError(code=INVALID_PARAMS, message=str(why)) from None
        except MCPError as e:
            if not is_init_gate(e, ctx):
                raise
            why = OmoideError.of("NOT_INITIALIZED", method=ctx.method)
            raise MCPError(code=INVALID_PARAMS, message=str(why)) from None


def is_init_gate(error: MCPError, ctx: Any) -> bool:
    """Whether ``error`` is the SDK's refusal of a request before ``initialize`` (its
    ``ServerRunner`` raises exactly this, with no data; malformed params come as a
    ``ValidationError``), on a session whose client has sent no ``initialize``."""
    sent = error.error
    return (sent.code == INVALID_PARAMS and sent.message == SDK_INVALID_PARAMS
            and not sent.data and ctx.method != "initialize"
            and getattr(ctx.session, "client_params", None) is None)


SDK_INVALID_PARAMS = "Invalid request parameters"  # the SDK's bare wording (mcp 2.3)


def field_problems(problems: list[Any], most: int = 5) -> str:
    """``field: problem`` of the first ``most`` problems, the field as a path in params."""
    named = [f"{field_path(p['loc'])}: {p['msg']}" for p in problems[:most]]
    return "; ".join(named + (["..."] if len(problems) > most else []))


def field_path(loc: tuple[Any, ...]) -> str:
    inside = loc[1:] if loc[:1] == ("params",) else loc  # the SDK's check wraps params
    return ".".join(str(part) for part in inside) or "params"


def tool_error_text(error: ToolError) -> str:
    """``CODE: message`` of a tool's failure: ours as raised, the SDK's argument check as
    INVALID_ARGUMENT naming each field (never the value given), an unknown tool's as is."""
    cause = error.__cause__
    if isinstance(cause, ToolError):  # raised by ``guarded``: already CODE: message
        return str(cause)
    if isinstance(cause, ValidationError):
        fields = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                           for e in cause.errors())
        return f"INVALID_ARGUMENT: Invalid arguments ({fields})."
    return f"INVALID_ARGUMENT: {error}"


def hit_dict(hit: Hit) -> dict[str, Any]:
    return hit.to_dict()


def trash_dict(entry: TrashEntry) -> dict[str, Any]:
    """A trashed memory without its vector (restore never needs the client to send it)."""
    return {"memory": entry.memory.to_dict(), "trashed_at": entry.trashed_at}


def _report(value: Any) -> dict[str, Any]:
    return value.to_dict() if hasattr(value, "to_dict") else dict(value)


def build_server(
    workspace: WorkspaceLike,
    *,
    name: str = "omoide",
    log_level: str = "WARNING",
    translate: Callable[[OmoideError], OmoideError] | None = None,
) -> MCPServer:
    """The MCP server over ``workspace``. ``translate`` may reword an error for this front
    end (the CLI's turns the web app's MODEL_MISMATCH into a command to run)."""
    engine, governor = workspace.engine, workspace.governor
    lock = threading.Lock()

    def guarded(fn: Callable[..., _T]) -> Callable[..., _T]:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> _T:
            try:
                # fresh(): one catch-up with other processes' commits before the tool runs,
                # its writes in one transaction; run again when the state went stale
                with lock:
                    return engine.run_fresh(lambda: fn(*args, **kwargs))
            except OmoideError as e:
                shown = translate(e) if translate is not None else e
                raise ToolError(f"{shown.code}: {shown}") from e
            except ValueError as e:  # argument checks deeper down (e.g. negative days)
                raise ToolError(f"INVALID_ARGUMENT: {e}") from e

        return call

    server = ToolServer(name, instructions=INSTRUCTIONS, log_level=log_level,  # type: ignore[arg-type]
                        middleware=[NamedParams()])
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    def remember(character: str, text: str, kind: str = "fact", importance: float = 0.5,
                 key: str | None = None, meta: dict[str, Any] | None = None,
                 context: str | None = None, conversation: str | None = None,
                 turn: int | None = None) -> dict[str, Any]:
        return engine.remember(character, text, kind=kind, importance=importance, key=key,
                               meta=meta, context=context, conversation=conversation,
                               turn=turn).to_dict()

    remember_doc = (
        "Save one memory for `character`. kind: fact, preference, pattern, decision, diary or "
        "summary; importance 0..1; key: optional slot (e.g. 'favorite_drink') so a later fact "
        "with the same key can supersede it; meta: free JSON; context: words indexed with it "
        "but never shown (e.g. the turns around it); conversation: the id of the chat it comes "
        "from, turn: its place there (default: after the chat's last turn), so memories a few "
        "turns apart help each other at recall. Returns the stored memory."
    )
    server.add_tool(guarded(remember), name="remember", description=remember_doc,
                    annotations=writes)
    server.add_tool(guarded(remember), name="store_fact",
                    description="Alias of `remember`. " + remember_doc, annotations=writes)

    @server.tool(annotations=read_only)
    @guarded
    def recall(character: str, query: str, k: int = 5, mode: str = "hybrid",
               kinds: list[str] | None = None, threshold: float | None = None,
               min_relevance: float | None = None) -> dict[str, Any]:
        """Memories of `character` most relevant to `query`, best first. mode: hybrid
        (vector + BM25, default), vector or fulltext; kinds: only these kinds; threshold:
        minimum score. Every hit has `relevance` in [0, 1]; when no hit reaches
        `min_relevance` (default: the engine's cut-off; 0 = none) `hits` is empty: no good
        match. A trashed memory that matches almost exactly is restored and listed in
        `revived`."""
        result = governor.recall(character, query, k=k, mode=mode, kinds=kinds,
                                 threshold=threshold, min_relevance=min_relevance)
        return {"character": character, "query": query,
                "hits": [hit_dict(h) for h in result.hits],
                "revived": list(result.revived), "revived_cosine": result.revived_cosine}

    @server.tool(annotations=writes)
    @guarded
    def ingest(character: str, messages: str | list[str | dict[str, Any]],
               dry_run: bool = False, roles: list[str] | None = None,
               at: float | None = None, conversation: str | None = None) -> dict[str, Any]:
        """Extract memories from conversation `messages` (a text, or a list of strings or
        {"role", "content"} objects) and store them, deduplicated: a repeat is merged, a
        contradiction (same subject, other polarity) supersedes the old memory, which stays
        restorable in the trash. roles: whose messages to read (default ["user"]). dry_run:
        report what would be stored, store nothing. at: when the conversation took place
        (seconds since 1970, default now). Each memory is indexed with its context (the
        date and the turns around its message), so pass the whole conversation at once.
        conversation: the id of the chat the messages continue (one message at a time): new
        memories take the turns after its last one; the answer's `conversation` says which
        one they joined (without it, a batch of messages is a conversation of its own)."""
        return _report(governor.ingest(character, messages, dry_run=dry_run,
                                       roles=tuple(roles or ("user",)), at=at,
                                       conversation=conversation))

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False,
                                             open_world_hint=False))
    @guarded
    def forget(character: str, memory_id: str) -> dict[str, Any]:
        """Move one memory of `character` to the trash (restorable with `restore`)."""
        return trash_dict(engine.forget(character, memory_id))

    @server.tool(annotations=writes)
    @guarded
    def restore(character: str, memory_id: str) -> dict[str, Any]:
        """Bring a trashed memory of `character` back (a superseded version replaces the
        memory that holds its key now). Returns the memory."""
        return engine.restore(character, memory_id).to_dict()

    @server.tool(annotations=read_only)
    @guarded
    def audit(character: str) -> dict[str, Any]:
        """Health report of `character`'s memories: counts, hot and cold tiers, duplicates,
        stale entries, superseded versions (history, restorable) and contradictions, model,
        what could be summarized, recent events."""
        return _report(audit_module.audit(
            engine, character, policy=governor.policy, dedup_threshold=governor.dedup_threshold,
            log=governor.log))

    @server.tool(annotations=read_only)
    @guarded
    def stats(character: str) -> dict[str, Any]:
        """Counts for `character`: live and trashed memories, by kind, model, dimension."""
        return dict(engine.stats(character))

    @server.tool(annotations=writes)
    @guarded
    def summarize(character: str, older_than_days: float = 30.0,
                  dry_run: bool = True) -> dict[str, Any]:
        """Fold episodic memories of `character` older than `older_than_days` into summaries.
        dry_run (default true): only report the groups; false: write the summaries."""
        return _report(governor.summarize(character, older_than_days=older_than_days,
                                          dry_run=dry_run))

    strict_arguments(server)
    return server


def strict_arguments(server: MCPServer) -> None:
    """Every tool refuses an argument it does not take and a value of another type, naming
    it, as the engine and the REST server do. The SDK's argument models ignored unknown
    names and coerced types: ``remember(Key="favorite_drink", importance_level=0.9)`` stored
    a memory with no key and importance 0.5 (the old value of the key stayed live beside
    it), ``turn=true`` was stored as 1, ``importance="0.9"`` as a number."""
    for tool in server._tool_manager.list_tools():  # noqa: SLF001 - no public hook for it
        loose = tool.fn_metadata.arg_model
        tool.fn_metadata = StringsAsGiven(**{
            name: getattr(tool.fn_metadata, name) for name in FuncMetadata.model_fields})
        tool.fn_metadata.arg_model = type(loose.__name__, (loose,), {
            "model_config": ConfigDict(**loose.model_config, extra="forbid", strict=True)})
        tool.parameters["additionalProperties"] = False  # what a client reads says so too


class StringsAsGiven(FuncMetadata):
    """The SDK reads a string argument as JSON when it parses (a client that sends a list as
    JSON text): ``key="null"`` stored a memory with no key, ``context="null"`` none, and a
    context that was JSON text (``'["turn one", "turn two"]'``) was refused as "not a valid
    string". A field that takes a string keeps the string it was given, unless the text is
    a list or an object that the field takes too (``messages`` sent as JSON text)."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        fields = self.arg_model.model_fields
        return {name: data[name] if name in fields and keeps_string(
                    fields[name].annotation, parsed[name]) else value
                for name, value in parsed.items()}


def keeps_string(annotation: Any, parsed: Any) -> bool:
    takes = accepted_types(annotation)
    return str in takes and (parsed is None or type(parsed) not in takes)


def accepted_types(annotation: Any) -> set[Any]:
    """The outer types an annotation accepts: ``str | list[str] | None`` -> str, list,
    NoneType."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(accepted_types(a) for a in typing.get_args(annotation)))
    return {typing.get_origin(annotation) or annotation}
