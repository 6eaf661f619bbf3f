"""Re-vectorization embeds ahead, outside the engine lock.

The worker asks for the strings of the next step (``revectorize_upcoming``, a quick call
under the lock), embeds them with the embedding worker without holding the lock, keeps the
rows by text, and then runs ``revectorize_step``, whose embedding call finds them all: the
lock is held for the bookkeeping and the staging write, not for the model. Recall and writes
from the page wait at most one short step."""

from __future__ import annotations

from ..engine.revectorize import upcoming
from .embedder import BrowserEmbedder
from .listing import checked_int
from .rpc import handler


@handler("revectorize_upcoming")
def revectorize_upcoming(model: str, dtype: str, character: str | None = None,
                         limit: int = 64) -> list[str]:
    from .session import session, staging

    s = session()
    target = BrowserEmbedder(model, dtype)
    staging(s, target.stamp)
    return upcoming(s.engine, character, target, checked_int("limit", limit, 1, 4_096))
