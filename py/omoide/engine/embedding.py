"""Calling the embedder (duck-typed, see ``omoide.embeddings``) and checking what it returns.

An embedder has ``model_id``, ``dtype``, ``dimension``, ``stamp`` and ``embed_passages`` /
``embed_queries`` returning L2-normalized rows (lists, or a 2-D numpy array under CPython).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from omoide.embeddings.base import checked_rows


class Embedder(Protocol):
    model_id: str
    dtype: str
    dimension: int
    stamp: str

    def embed_passages(self, texts: list[str]) -> Any: ...

    def embed_queries(self, texts: list[str]) -> Any: ...


def embed_passages(embedder: Embedder, texts: list[str]) -> list[Sequence[float]]:
    if not texts:
        return []
    return checked_rows(embedder, texts, embedder.embed_passages(list(texts)))


def embed_memories(embedder: Embedder,
                   items: Sequence[tuple[str, str | None]]) -> list[Sequence[float]]:
    """One vector per (text, context): the text's vector, or with a context the normalized
    sum of the text's and the context's vectors. One batched embedding call for all."""
    texts = [text for text, _ in items]
    contexts = [context for _, context in items if context]
    rows = embed_passages(embedder, texts + contexts)
    out: list[Sequence[float]] = []
    extra = len(texts)
    for n, (_, context) in enumerate(items):
        if not context:
            out.append(rows[n])
            continue
        blend = [float(a) + float(b) for a, b in zip(rows[n], rows[extra], strict=True)]
        extra += 1
        norm = math.sqrt(sum(x * x for x in blend)) or 1.0
        out.append([x / norm for x in blend])
    return out


def embed_query(embedder: Embedder, text: str) -> Sequence[float]:
    return checked_rows(embedder, [text], embedder.embed_queries([text]))[0]
