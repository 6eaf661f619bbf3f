"""MCP server exposing the Omoide engine (``python -m omoide.mcp``).

Needs the ``mcp`` extra (``pip install omoide[mcp]``); importing this package without it
works, building the server does not.
"""

from __future__ import annotations

from omoide.mcp.server import TOOL_NAMES, build_server

__all__ = ["TOOL_NAMES", "build_server"]
