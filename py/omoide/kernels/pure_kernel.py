"""Pure-Python exact kernel: array('f') rows, one dot product per row.

Runs anywhere (Pyodide without numpy) and is the reference the other kernels are tested
against. Rows are stored as float32 like every other kernel, so scores agree to float32
precision across implementations.
"""

from __future__ import annotations

import heapq
import math
import operator
import sys
from array import array
from collections.abc import Iterable, Sequence

from omoide.kernels.base import KernelResult, Vector, moments


def _dot_fallback(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(map(operator.mul, a, b))


# math.sumprod (3.12+) is an exact-rounding C loop; older CPython falls back to map/sum.
_dot = getattr(math, "sumprod", _dot_fallback)


def _as_float32_row(vector: Vector, dimension: int) -> array:
    row = array("f", vector)
    if len(row) != dimension:
        raise ValueError(f"expected a {dimension}-d vector, got {len(row)}")
    return row


class PureKernel:
    """Exact brute-force top-k in pure Python."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._rows: dict[str, array] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._rows

    def add(self, ids: Sequence[str], vectors: Iterable[Vector]) -> None:
        for row_id, vector in zip(ids, vectors, strict=True):
            self._rows[row_id] = _as_float32_row(vector, self.dimension)

    def remove(self, ids: Iterable[str]) -> None:
        for row_id in ids:
            self._rows.pop(row_id, None)

    def ids(self) -> list[str]:
        return list(self._rows)

    def vector(self, row_id: str) -> list[float]:
        return self._rows[row_id].tolist()

    def scores(self, query: Vector, ids: Sequence[str]) -> list[float]:
        q = _as_float32_row(query, self.dimension)
        return [_dot(q, self._rows[row_id]) for row_id in ids]

    def top_k(self, query: Vector, k: int, allowed: Iterable[str] | None = None) -> KernelResult:
        q = _as_float32_row(query, self.dimension)
        if allowed is None:
            candidates = self._rows.items()
        else:
            candidates = [(i, self._rows[i]) for i in allowed if i in self._rows]
        scored = [(_dot(q, row), row_id) for row_id, row in candidates]
        # fsum: exact, so the moments do not depend on the order of ``allowed`` (a set,
        # whose order changes with each process's string hashes)
        total = math.fsum(s for s, _ in scored)
        total_sq = math.fsum(s * s for s, _ in scored)
        mean, std = moments(total, total_sq, len(scored))
        # Ties are broken by id here; the protocol leaves tie order to each kernel.
        best = heapq.nsmallest(k, scored, key=lambda pair: (-pair[0], pair[1]))
        return KernelResult(
            ids=[row_id for _, row_id in best],
            scores=[score for score, _ in best],
            mean=mean,
            std=std,
            count=len(scored),
        )

    def export_float32(self) -> tuple[list[str], bytes]:
        ids = list(self._rows)
        rows = array("f")
        for row_id in ids:
            rows.extend(self._rows[row_id])
        if sys.byteorder != "little":  # pragma: no cover - snapshots are little-endian
            rows.byteswap()
        return ids, rows.tobytes()
