"""The ``Embedder`` protocol every provider implements (pure Python: imports in Pyodide).

Contract, shared by all providers (local ONNX, remote HTTP, the cache wrapper and the
browser's Transformers.js bridge):

* ``embed_passages(texts)`` / ``embed_queries(texts)`` take a list of strings and return a
  ``list[list[float]]`` with one L2-normalised row of ``dimension`` floats per text, in order.
  Always plain lists, on every runtime: the engine can store, JSON-encode or hand them to
  ``numpy.asarray`` without caring who produced them; converting a batch of 384-d float32
  rows to lists costs microseconds next to the milliseconds of inference. CPython callers
  that want the raw float32 matrix use ``OnnxEmbedder.embed_*_array`` instead.
* The provider adds the model's prefixes (``query: ``/``passage: `` for e5); callers pass raw
  text. An empty list gives an empty list.
* ``stamp`` names the vector space (``"<model id>@<dtype>#<dimension>"``): vectors are only
  comparable with vectors of the same stamp, so the engine stores it with every index.
* Failures raise ``OmoideError`` (codes ``EMBEDDING_FAILED``, ``REMOTE_*``,
  ``DIMENSION_MISMATCH``) and never return partial results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import OmoideError


@runtime_checkable
class Embedder(Protocol):
    model_id: str
    dtype: str
    dimension: int
    stamp: str

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to be stored (memories)."""
        ...

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Embed search queries."""
        ...


def check_texts(texts: list[str]) -> list[str]:
    """Reject a bare string (a classic bug: it would embed each character)."""
    if isinstance(texts, str):
        raise TypeError("embed_* take a list of strings, not a str")
    return list(texts)


def checked_rows(embedder: Embedder, texts: list[str], rows: Any) -> list[Sequence[float]]:
    """``rows`` as the embedder's answer for ``texts``, refused (``EMBEDDING_FAILED``,
    ``DIMENSION_MISMATCH``) unless it is one finite row of ``dimension`` floats per text."""
    rows = list(rows)
    if len(rows) != len(texts):
        raise OmoideError.of(
            "EMBEDDING_FAILED",
            provider=embedder.model_id,
            reason=f"{len(rows)} vectors for {len(texts)} texts",
        )
    for row in rows:
        if len(row) != embedder.dimension:
            raise OmoideError.of(
                "DIMENSION_MISMATCH", model=embedder.model_id, got=len(row),
                expected=embedder.dimension,
            )
        if not finite(row):
            # a NaN row made every cosine, score and relevance of a recall NaN, and a
            # remembered one was stored though a record's vector must be finite
            raise OmoideError.of("EMBEDDING_FAILED", provider=embedder.model_id,
                                 reason="a vector holds NaN or an infinity")
    return rows


def finite(row: Any) -> bool:
    """Every number of ``row`` (a numpy array or a sequence of floats) is finite, in one C
    loop: numpy's own check for an array; for a sequence its sum, since a NaN or an
    infinity makes the sum NaN or infinite (only a non-finite sum, one of those or finite
    numbers adding past the float range, is checked number by number). The element-wise
    check took 19 us a numpy row, 11 % of a bulk import with vectors given; now ~1.5 us."""
    if hasattr(row, "dtype"):  # a numpy array: numpy is loaded already
        import numpy as np

        return bool(np.isfinite(row).all())
    return math.isfinite(sum(row)) or all(map(math.isfinite, row))
