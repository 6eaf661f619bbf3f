"""Matryoshka truncation: keep the first ``dim`` components and renormalise.

Only valid for models trained for it (``ModelInfo.matryoshka_dims``); slicing a model that
was not would silently destroy retrieval quality, so anything else is refused. Neither shipped
model supports it today; the code path is ready (and tested) for one that does.
Pure Python for lists; numpy arrays (CPython) are sliced without leaving numpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import OmoideError
from .registry import ModelInfo


def check_dimension(model: ModelInfo, dim: int) -> int:
    if dim not in model.supported_dims():
        raise OmoideError.of(
            "UNSUPPORTED_DIMENSION",
            model=model.id,
            dim=dim,
            supported=", ".join(map(str, model.supported_dims())),
            hint="" if model.matryoshka_dims else " It is not a Matryoshka model.",
        )
    return dim


def truncate_renormalize(vectors: Any, dim: int) -> Any:
    """First ``dim`` components of each row, L2-normalised; rows of zeros stay zero."""
    if dim < 1:
        raise OmoideError.of("INVALID_ARGUMENT", name="dimension", reason=f"{dim} < 1")
    if hasattr(vectors, "shape"):  # numpy: stay vectorised
        cut = vectors[:, :dim]
        if cut.shape[1] != dim:
            raise OmoideError.of(
                "DIMENSION_MISMATCH", model="(input)", got=vectors.shape[1], expected=f">= {dim}"
            )
        # Scale by the largest component first: squares of tiny values underflow to 0.
        scale = abs(cut).max(axis=1, keepdims=True)
        scale[scale == 0] = 1.0
        cut = cut / scale
        norms = (cut * cut).sum(axis=1, keepdims=True) ** 0.5
        norms[norms == 0] = 1.0
        return cut / norms
    out: list[list[float]] = []
    for row in vectors:
        if len(row) < dim:
            raise OmoideError.of(
                "DIMENSION_MISMATCH", model="(input)", got=len(row), expected=f">= {dim}"
            )
        cut = [float(x) for x in row[:dim]]
        big = max(map(abs, cut), default=0.0) or 1.0
        cut = [x / big for x in cut]  # avoids underflow of tiny squares
        n = math.sqrt(math.fsum(x * x for x in cut)) or 1.0
        out.append([x / n for x in cut])
    return out


def slice_embeddings(model: ModelInfo, vectors: Sequence[Sequence[float]] | Any, dim: int) -> Any:
    """Reduce ``model``'s vectors to ``dim`` components; the full dimension is a no-op copy."""
    check_dimension(model, dim)
    return truncate_renormalize(vectors, dim)
