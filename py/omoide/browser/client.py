"""Verbs of the JS client (``web/client.js`` through the bridge page): what a chat app on
another origin needs beyond the engine's own verbs. The bridge checks the caller's origin and
character grant before any of these run."""

from __future__ import annotations

from typing import Any

from ..governance.prompt import prompt_context as build_context
from .rpc import handler
from .session import session


@handler("prompt_context")
def prompt_context(character: str, query: str | None = None, token_budget: int = 800,
                   k: int = 8) -> dict[str, Any]:
    return build_context(session().governor, character, query, token_budget, k=k)
