"""``python -m omoide.mcp``: serve one Omoide workspace (a SQLite file) over MCP.

    python -m omoide.mcp --db memories.db                      # stdio (for desktop clients)
    OMOIDE_MCP_KEY=... python -m omoide.mcp --db memories.db --transport http
                                                    # http://127.0.0.1:8765/mcp, bearer key

Everything but the protocol goes to stderr: on stdio, stdout carries only JSON-RPC.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from omoide.errors import OmoideError

DEFAULT_PORT = 8765


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from omoide.embeddings.registry import DEFAULT_DTYPE, DEFAULT_MODEL_ID
    from omoide.server.policy import add_policy_arguments

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
                   help="HTTP bind address (default 127.0.0.1; any other needs --public and "
                   "a key)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"HTTP port (default {DEFAULT_PORT}); the endpoint is /mcp")
    add_policy_arguments(p, "OMOIDE_MCP_KEY")  # HTTP only
    p.add_argument("--model", default=None, help="embedding model id (default: the one the "
                   f"workspace was created with; {DEFAULT_MODEL_ID} for a new one)")
    p.add_argument("--dtype", default=None, help="model weights (default: the workspace's; "
                   f"{DEFAULT_DTYPE} for a new one)")
    p.add_argument("--backup", metavar="URL", default=os.environ.get("OMOIDE_BACKUP_URL"),
                   help="backup server (python -m omoide.server) every change is mirrored to; "
                   "$OMOIDE_BACKUP_URL")
    p.add_argument("--backup-key", metavar="KEY", default=None,
                   help="its bearer key (visible in the process list: prefer "
                   "$OMOIDE_BACKUP_KEY or --backup-key-file)")
    p.add_argument("--backup-key-file", metavar="PATH", default=None,
                   help="a file holding the backup server's key")
    p.add_argument("--log-level", default="WARNING",
                   choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
    return p.parse_args(argv)


def log(message: str) -> None:
    print(f"omoide.mcp: {message}", file=sys.stderr, flush=True)


def open_with_model(args: argparse.Namespace) -> tuple[Any, Any]:
    """(workspace, error translator), the workspace opened as the CLI opens it, with its own
    recorded model: --model/--dtype pick the model of a new workspace (and are recorded); a
    different one for an existing workspace is refused (WORKSPACE_MODEL_MISMATCH: switching
    is ``python -m omoide revectorize``'s job)."""
    from omoide.cli.context import Context
    from omoide.embeddings.auto import choose_embedder
    from omoide.workspace import default_path

    def embedder(model_id: str, dtype: str) -> Any:
        choice = choose_embedder(model_id, dtype)
        log(choice.reason)
        return choice.embedder

    cli_args = argparse.Namespace(db=str(args.db or default_path()), model=args.model,
                                  dtype=args.dtype, json=False, progress="off",
                                  backup=args.backup, backup_key=args.backup_key,
                                  backup_key_file=args.backup_key_file)
    context = Context(cli_args, embedder, stdout=sys.stderr, stderr=sys.stderr)
    return context.open(), context.translate


def http_policy(args: argparse.Namespace) -> Any:
    """The HTTP transport's rules (the reference server's): a key unless --no-key (which pins
    loopback), --public for another address, no browser origin."""
    from omoide.keys import resolve_key
    from omoide.server.policy import ServerPolicy

    key = resolve_key(args.key, args.key_file, "OMOIDE_MCP_KEY")
    return ServerPolicy.build(args.host, api_key=key, no_key=args.no_key, public=args.public,
                              origins=(), allow_hosts=args.allow_host, key_env="OMOIDE_MCP_KEY")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        from omoide.mcp.server import build_server
    except ImportError as e:  # the SDK is an optional extra
        log(f"the MCP SDK is not installed ({e}); pip install 'omoide[mcp]'")
        return 2
    try:
        policy = http_policy(args) if args.transport == "http" else None
    except OmoideError as e:
        log(f"{e.code}: {e}")
        return 2
    try:
        workspace, translate = open_with_model(args)
    except OmoideError as e:
        log(f"{e.code}: {e}")
        return 1
    try:
        server = build_server(workspace, log_level=args.log_level, translate=translate)
        if args.transport == "stdio":
            import anyio

            from omoide.mcp.stdio import serve_stdio

            log(f"serving {workspace.path} on stdio")
            anyio.run(serve_stdio, server)
        else:
            from omoide.mcp.http import serve_http

            log(f"serving {workspace.path} on http://{args.host}:{args.port}/mcp "
                f"({'bearer key required' if policy.api_key else 'NO KEY (loopback only)'})")
            serve_http(server, args.host, args.port, policy)
    except KeyboardInterrupt:
        pass
    finally:
        workspace.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
