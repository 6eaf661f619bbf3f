"""``prompt_context``: the block a chat app puts in its system prompt each turn, measured in
tokens (what a model's context is counted in), with the date of each memory.

Tokens are estimated without a tokenizer, on the safe side for both scripts Omoide
extracts: ASCII runs cost one token per 4 characters (rounded up), every other character
(kana, kanji, accented letters) one token each, which over-counts rather than overflows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from omoide.engine import validate
from omoide.engine.memory import Memory
from omoide.errors import OmoideError
from omoide.governance import tiers

if TYPE_CHECKING:
    from omoide.governance.governor import Governor

MAX_TOKEN_BUDGET = 32_000


def estimate_tokens(text: str) -> int:
    ascii_chars = sum(1 for c in text if c < "\x80")
    return -(-ascii_chars // 4) + (len(text) - ascii_chars)


def dated_line(memory: Memory) -> str:
    day = datetime.fromtimestamp(memory.created_at, UTC).strftime("%Y-%m-%d")
    return f"- ({day}, {memory.kind}) {memory.text}"


def memory_summary(memory: Memory) -> dict[str, Any]:
    return {"id": memory.id, "text": memory.text, "kind": memory.kind, "key": memory.key,
            "created_at": memory.created_at}


def prompt_context(governor: Governor, character: str, query: str | None,
                   token_budget: int = 800, *, k: int = 8) -> dict[str, Any]:
    """{text, tokens, hot, recalled}: the hot memories (most valuable first), then the best
    recalled ones not already there, one dated line each, never over ``token_budget``."""
    character = validate.character_id(character)
    if (isinstance(token_budget, bool) or not isinstance(token_budget, int)
            or not 1 <= token_budget <= MAX_TOKEN_BUDGET):
        raise OmoideError.of("INVALID_ARGUMENT", name="tokenBudget",
                             reason=f"{token_budget!r} not in 1..{MAX_TOKEN_BUDGET}")
    if query is not None and not isinstance(query, str):
        raise OmoideError.of("INVALID_ARGUMENT", name="query", reason="must be text")
    block = tiers.context(governor.engine, character, query, token_budget, k=validate.k(k),
                          policy=governor.policy, line=dated_line, cost=estimate_tokens)
    get = governor.engine.get
    return {"text": block.text, "tokens": block.chars,
            "hot": [memory_summary(get(character, i)) for i in block.hot_ids],
            "recalled": [memory_summary(get(character, i)) for i in block.recalled_ids]}
