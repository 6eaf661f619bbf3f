"""``python -m omoide.mcp``: serve one Omoide workspace (a SQLite file) over MCP.

    python -m omoide.mcp --db memories.db                      # stdio (for desktop clients)
    python -m omoide.mcp --db memories.db --transport http     # http://127.0.0.1:8765/mcp

Everything but the protocol goes to stderr: on stdio, stdout carries only JSON-RPC.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from omoide.errors import OmoideError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from omoide.embeddings.registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID

    p = argparse.ArgumentParser(
        prog="python -m omoide.mcp",
        description="Serve the Omoide memory engine to MCP clients (tools: remember, "
        "store_fact, recall, ingest, forget, restore, audit, stats, summarize).",
    )
    p.add_argument("--db", metavar="PATH", default=None,
                   help="SQLite file of the workspace (default: the workspace default)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default) or streamable HTTP")
    p.add_argument("--host", default="127.0.0.1",
                   help="HTTP bind address (default 127.0.0.1; loopback only unless changed)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"HTTP port (default {DEFAULT_PORT}); the endpoint is /mcp")
    p.add_argument("--model", default=DEFAULT_MODEL_ID, help=f"embedding model id "
                   f"(default {DEFAULT_MODEL_ID})")
    p.add_argument("--dtype", default=DEFAULT_DTYPE,
                   help=f"model weights (default {DEFAULT_DTYPE})")
    p.add_argument("--log-level", default="WARNING",
                   choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
    return p.parse_args(argv)


def log(message: str) -> None:
    print(f"omoide.mcp: {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        from omoide.mcp.server import build_server
    except ImportError as e:  # the SDK is an optional extra
        log(f"the MCP SDK is not installed ({e}); pip install 'omoide[mcp]'")
        return 2
    from omoide.embeddings.auto import choose_embedder
    from omoide.workspace import open_workspace

    try:
        choice = choose_embedder(args.model, args.dtype)
        log(choice.reason)
        workspace = open_workspace(args.db, embedder=choice.embedder, model_id=args.model,
                                   dtype=args.dtype)
    except OmoideError as e:
        log(f"{e.code}: {e}")
        return 1
    try:
        server = build_server(workspace, log_level=args.log_level)
        if args.transport == "stdio":
            log(f"serving {workspace.path} on stdio")
            server.run("stdio")
        else:
            if args.host not in LOOPBACK:
                log(f"WARNING: binding {args.host}: the server has no authentication; anyone "
                    "who can reach this address can read and change the memories")
            log(f"serving {workspace.path} on http://{args.host}:{args.port}/mcp")
            server.run("streamable-http", host=args.host, port=args.port)
    except KeyboardInterrupt:
        pass
    finally:
        workspace.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
